/* counters_qp: a flow's queue pairs bound to an RDMA counter of their own over RDMA netlink
 * (engine/counters/rdmanl.h), read through a counter set fed with the kernel's values so the
 * semantics table applies (mlx5's per-QP Q counters are 32-bit and wrap), and unbound at
 * the end. Every way it can be refused ends in one line of why; see ctr_rdmanl.c for what
 * the kernel answers and when. */
#include "engine/counters/counters_qp.h"

#include <errno.h>
#include <pthread.h>
#include <rdma/rdma_netlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/counters/rdmanl.h"
#include "engine/flow/flow.h"

struct counters_qp {
    char dev[64], driver[32], provider[32], label[32];
    int port;
    uint32_t qpns[RDMANL_MAX_QPS];
    int nqps;
    struct rdmanl nl;
    uint32_t dev_index;
    bool bound;
    uint32_t counter;
    int nbound; /* qpns[0 .. nbound) are bound */
    char why[512], brief[96];
    const char *errname;
    struct counters_set *set; /* fed with the counter's readings; NULL until the first */
    bool marked, listed_checked;
    int read_rc; /* the last read's status */
    bool unbound;
    int unbind_rc;
    char unbind_err[256];
    uint64_t next_ns; /* flow ticks: next reading */
    struct rdmanl_counter cur;
};

/* mlx5_core -> mlx5 (the semantics table's provider), rdma_rxe -> rxe. */
static void provider_of(const char *driver, const char *dev, char *out, size_t len)
{
    if (!strncmp(driver, "mlx5", 4) || !strncmp(dev, "mlx5", 4))
        snprintf(out, len, "mlx5");
    else if (!strncmp(driver, "mlx4", 4) || !strncmp(dev, "mlx4", 4))
        snprintf(out, len, "mlx4");
    else if (!strcmp(driver, "rdma_rxe") || !strncmp(dev, "rxe", 3))
        snprintf(out, len, "rxe");
    else
        snprintf(out, len, "%s", driver);
}

static bool soft_driver(const struct counters_qp *q)
{
    return !strcmp(q->provider, "rxe") || !strcmp(q->provider, "siw");
}

static void refuse(struct counters_qp *q, int err, const char *brief, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void refuse(struct counters_qp *q, int err, const char *brief, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(q->why, sizeof(q->why), fmt, ap);
    va_end(ap);
    if (q->nl.ext[0] && n > 0 && (size_t)n < sizeof(q->why))
        snprintf(q->why + n, sizeof(q->why) - (size_t)n, "; the kernel said: %s", q->nl.ext);
    snprintf(q->brief, sizeof(q->brief), "%s", brief);
    q->errname = err ? rdmanl_errno_name(err) : NULL;
}

static const char *ename(int err)
{
    const char *n = rdmanl_errno_name(err);
    return n ? n : "error";
}

/* Why the first bind failed, from the kernel's answer (nldev.c, counters.c). */
static void bind_refused(struct counters_qp *q, int rc)
{
    uint32_t qpn = q->qpns[0];
    const char *d = q->dev;
    int p = q->port;
    switch (-rc) {
    case EPERM:
        refuse(q, rc, "binding needs CAP_NET_ADMIN",
               "binding QP %u on %s port %d to a counter needs CAP_NET_ADMIN "
               "(RDMA_NLDEV_CMD_STAT_SET is an admin command; the kernel answered EPERM): run "
               "fabtop as root or with cap_net_admin",
               qpn, d, p);
        break;
    case ENOMEM:
        if (soft_driver(q))
            refuse(q, rc, "no per-QP counters in this driver",
                   "%s has no per-QP counters: the driver implements no counter_alloc_stats/"
                   "counter_bind_qp, so the kernel's rdma_counter_bind_qpn_alloc() fails and "
                   "answers ENOMEM (not a memory shortage) to binding QP %u on %s port %d",
                   q->driver, qpn, d, p);
        else if (!strcmp(q->provider, "mlx5"))
            refuse(q, rc, "no free Q counter on the NIC",
                   "the kernel answered ENOMEM to binding QP %u on %s port %d: the NIC had no "
                   "free Q counter set for a new counter (`rdma statistic qp show` lists those "
                   "in use) or memory ran out",
                   qpn, d, p);
        else
            refuse(q, rc, "no per-QP counter (ENOMEM)",
                   "the kernel answered ENOMEM to binding QP %u on %s port %d: the driver (%s) "
                   "has no per-QP counters (rdma_counter_bind_qpn_alloc() reports that as "
                   "ENOMEM) or no counter could be allocated",
                   qpn, d, p, q->driver);
        break;
    case EOPNOTSUPP:
        refuse(q, rc, "the port has no hw counters",
               "%s port %d has no hw counters at all (driver %s offers no "
               "alloc_hw_port_stats): the kernel answered EOPNOTSUPP to binding QP %u",
               d, p, q->driver, qpn);
        break;
    case EINVAL:
        refuse(q, rc, "QP already bound, or auto mode",
               "the kernel answered EINVAL to binding QP %u on %s port %d: the QP is bound to "
               "a counter already, uses another port, or the port went to auto mode",
               qpn, d, p);
        break;
    case ENOENT:
        refuse(q, rc, "the kernel knows no such QP",
               "the kernel knows no QP %u on %s (ENOENT to RDMA_NLDEV_CMD_STAT_SET)", qpn, d);
        break;
    case ETIMEDOUT:
        refuse(q, rc, "no answer from the kernel",
               "no answer from the kernel to binding QP %u on %s port %d "
               "(RDMA_NLDEV_CMD_STAT_SET) within the timeout",
               qpn, d, p);
        break;
    default:
        refuse(q, rc, "binding refused",
               "binding QP %u on %s port %d (RDMA_NLDEV_CMD_STAT_SET) failed: %s (%s)", qpn, d, p,
               strerror(-rc), ename(rc));
    }
}

static void setup_fail(struct counters_qp *q, int rc, const char *what, const char *req)
{
    refuse(q, rc, what, "%s (%s) failed: %s (%s)", what, req, strerror(-rc), ename(rc));
}

static const char *mode_mask_str(uint32_t mask)
{
    switch (mask & (RDMA_COUNTER_MASK_QP_TYPE | RDMA_COUNTER_MASK_PID)) {
    case RDMA_COUNTER_MASK_QP_TYPE:
        return "type";
    case RDMA_COUNTER_MASK_PID:
        return "pid";
    case RDMA_COUNTER_MASK_QP_TYPE | RDMA_COUNTER_MASK_PID:
        return "type,pid";
    default:
        return "?";
    }
}

/* The kernel's index of the device and its port's counter mode: manual binding works in
 * mode none (the first binding switches the port to manual) and manual. */
static bool port_ready(struct counters_qp *q)
{
    int rc = rdmanl_dev_index(&q->nl, q->dev, &q->dev_index);
    if (rc == -ENODEV) {
        refuse(q, rc, "device not on RDMA netlink",
               "RDMA netlink lists no device %s (in another network namespace, with the RDMA "
               "subsystem in exclusive mode?)",
               q->dev);
        return false;
    }
    if (rc < 0) {
        setup_fail(q, rc, "listing the RDMA devices", "RDMA_NLDEV_CMD_GET");
        return false;
    }
    uint32_t mode = 0, mask = 0;
    rc = rdmanl_get_mode(&q->nl, q->dev_index, (uint32_t)q->port, &mode, &mask);
    if (rc == -EINVAL || rc == -EOPNOTSUPP) {
        refuse(q, rc, "no per-QP counters in this kernel",
               "this kernel has no per-QP counters: RDMA_NLDEV_CMD_STAT_GET for %s port %d "
               "answered %s (they came with Linux 5.3)",
               q->dev, q->port, ename(rc));
        return false;
    }
    if (rc < 0) {
        setup_fail(q, rc, "reading the port's counter mode", "RDMA_NLDEV_CMD_STAT_GET");
        return false;
    }
    if (mode == RDMA_COUNTER_MODE_AUTO) {
        refuse(q, 0, "the port is in auto mode",
               "%s port %d binds QPs to counters automatically (`rdma statistic qp set link "
               "%s/%d auto %s on`): the kernel refuses manual binding, and this test's QPs "
               "share an automatic counter with others",
               q->dev, q->port, q->dev, q->port, mode_mask_str(mask));
        return false;
    }
    return true;
}

static void unbind_from(struct counters_qp *q, int upto, int *first_rc)
{
    for (int i = 0; i < upto; i++) {
        int rc = rdmanl_unbind(&q->nl, q->dev_index, (uint32_t)q->port, q->qpns[i], q->counter);
        if (rc < 0 && first_rc && !*first_rc) {
            *first_rc = rc;
            snprintf(
                q->unbind_err, sizeof(q->unbind_err),
                "unbinding QP %u from counter %u (RDMA_NLDEV_CMD_STAT_DEL) failed: %s (%s)%s%s",
                q->qpns[i], q->counter, strerror(-rc), ename(rc), q->nl.ext[0] ? ": " : "",
                q->nl.ext);
        }
    }
}

static void bind_all(struct counters_qp *q)
{
    for (int i = 0; i < q->nqps; i++) {
        uint32_t c = q->counter;
        int rc = rdmanl_bind(&q->nl, q->dev_index, (uint32_t)q->port, q->qpns[i], i == 0, &c);
        if (rc == 0 && i > 0 && c != q->counter)
            rc = -EPROTO; /* joined some other counter: never, unless the kernel changes */
        if (rc < 0) {
            if (i == 0) {
                bind_refused(q, rc);
            } else {
                char ext[sizeof(q->nl.ext)]; /* the kernel's words on the bind, not the unbind */
                snprintf(ext, sizeof(ext), "%s", q->nl.ext);
                unbind_from(q, i, NULL);
                snprintf(q->nl.ext, sizeof(q->nl.ext), "%s", ext);
                refuse(q, rc, "binding a later QP failed",
                       "binding QP %u to counter %u (QP %d of %d) failed: %s (%s); the QPs "
                       "bound before it were unbound: all of the flow's QPs or none",
                       q->qpns[i], q->counter, i + 1, q->nqps, strerror(-rc), ename(rc));
            }
            return;
        }
        if (i == 0)
            q->counter = c;
        q->nbound = i + 1;
    }
    q->bound = true;
}

struct counters_qp *counters_qp_bind(const struct counters_qp_opts *o)
{
    struct counters_qp *q = xalloc_zero(1, sizeof(*q));
    q->nl.fd = -1;
    snprintf(q->dev, sizeof(q->dev), "%s", o->dev ? o->dev : "");
    snprintf(q->driver, sizeof(q->driver), "%s", o->driver && *o->driver ? o->driver : "unknown");
    snprintf(q->label, sizeof(q->label), "%s", o->label ? o->label : "");
    provider_of(q->driver, q->dev, q->provider, sizeof(q->provider));
    q->port = o->port;
    q->nqps = o->nqps < RDMANL_MAX_QPS ? o->nqps : RDMANL_MAX_QPS;
    for (int i = 0; i < q->nqps; i++)
        q->qpns[i] = o->qpns[i];
    if (o->nl_fd >= 0) {
        rdmanl_attach(&q->nl, o->nl_fd);
    } else {
        int rc = rdmanl_open(&q->nl);
        if (rc < 0) {
            refuse(q, rc, "no RDMA netlink", "socket(AF_NETLINK, NETLINK_RDMA) failed: %s (%s)%s",
                   strerror(-rc), ename(rc),
                   rc == -EPROTONOSUPPORT ? ": no RDMA core (ib_core) in this kernel" : "");
            return q;
        }
    }
    if (o->timeout_ms > 0)
        q->nl.timeout_ms = o->timeout_ms;
    if (!q->dev[0] || q->port < 1 || q->nqps < 1) {
        refuse(q, -EINVAL, "nothing to bind", "nothing to bind: device %s port %d, %d QPs",
               q->dev[0] ? q->dev : "?", q->port, q->nqps);
        return q;
    }
    if (!port_ready(q))
        return q;
    bind_all(q);
    if (q->bound)
        counters_qp_sample(q);
    return q;
}

bool counters_qp_bound(const struct counters_qp *q)
{
    return q && q->bound;
}

const char *counters_qp_why(const struct counters_qp *q)
{
    return q->why;
}

const char *counters_qp_brief(const struct counters_qp *q)
{
    return q->brief;
}

const char *counters_qp_errname(const struct counters_qp *q)
{
    return q->errname;
}

uint32_t counters_qp_counter_id(const struct counters_qp *q)
{
    return q->counter;
}

static void qpn_list(const uint32_t *qpns, int n, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && k < len; i++) {
        int w = snprintf(buf + k, len - k, "%s%u", i ? ", " : "", qpns[i]);
        if (w < 0)
            break;
        k += (size_t)w;
    }
}

static void make_set(struct counters_qp *q)
{
    char qpns[256], scope[640], obj[160];
    qpn_list(q->qpns, q->nqps, qpns, sizeof(qpns));
    snprintf(scope, sizeof(scope),
             "this test's queue pairs: QP%s %s%s%s on %s port %d, bound to RDMA counter %u of "
             "their own (manual mode, as `rdma statistic qp bind`); deltas from the binding "
             "(after the connection, before the first work request) to the end; the peer's "
             "queue pairs are not counted here",
             q->nqps > 1 ? "s" : "", qpns, q->label[0] ? " of flow " : "", q->label, q->dev,
             q->port, q->counter);
    q->set = counters_set_new_fed(scope);
    snprintf(obj, sizeof(obj), "%s/%d counter %u (RDMA counter bound to QP%s %s, %s)", q->dev,
             q->port, q->counter, q->nqps > 1 ? "s" : "", qpns, q->provider);
    counters_set_add_object(q->set, obj);
}

static int find_or_add(struct counters_qp *q, const char *name)
{
    int n;
    const struct counters_value *v = counters_set_values(q->set, &n);
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].name, name))
            return i;
    char obj[96];
    snprintf(obj, sizeof(obj), "%s%s%s/%d counter %u", q->label, q->label[0] ? ": " : "", q->dev,
             q->port, q->counter);
    return counters_set_fed_add(q->set, COUNTERS_SRC_QP, q->provider, obj, name);
}

int counters_qp_sample(struct counters_qp *q)
{
    if (!q || !q->bound)
        return -ENOTCONN;
    if (!q->set)
        make_set(q);
    int rc = rdmanl_counter_get(&q->nl, q->dev_index, (uint32_t)q->port, q->counter, &q->cur);
    if (rc == 0 && q->cur.id != q->counter)
        rc = -EPROTO;
    if (rc == 0) {
        for (int i = 0; i < q->cur.nstats; i++)
            counters_set_fed_put(q->set, find_or_add(q, q->cur.stats[i].name),
                                 q->cur.stats[i].value);
        if (q->cur.stats_truncated && !q->listed_checked)
            counters_set_add_note(q->set,
                                  "counter %u has more than %d hw stats: the rest are not read",
                                  q->counter, RDMANL_MAX_STATS);
        if (!q->listed_checked) {
            /* The kernel's own list of the counter's QPs must be ours. */
            int missing = 0;
            for (int i = 0; i < q->nqps; i++) {
                bool in = false;
                for (int k = 0; k < q->cur.nqps && k < RDMANL_MAX_QPS; k++)
                    in |= q->cur.qpns[k] == q->qpns[i];
                missing += !in;
            }
            if (missing || q->cur.nqps != q->nqps)
                counters_set_add_note(
                    q->set,
                    "the kernel lists %d QP%s on counter %u, %d of this flow's %d "
                    "missing",
                    q->cur.nqps, q->cur.nqps == 1 ? "" : "s", q->counter, missing, q->nqps);
            q->listed_checked = true;
        }
    } else if (q->read_rc == 0) {
        counters_set_add_note(
            q->set, "reading counter %u (RDMA_NLDEV_CMD_STAT_GET) failed: %s (%s)%s%s", q->counter,
            strerror(-rc), ename(rc), q->nl.ext[0] ? ": " : "", q->nl.ext);
    }
    q->read_rc = rc;
    counters_set_sample_all(q->set);
    if (rc == 0 && !q->marked) {
        counters_set_mark(q->set);
        q->marked = true;
    }
    return rc;
}

const struct counters_value *counters_qp_values(const struct counters_qp *q, int *n)
{
    if (!q || !q->set) {
        *n = 0;
        return NULL;
    }
    return counters_set_values(q->set, n);
}

int counters_qp_unbind(struct counters_qp *q)
{
    if (!q || !q->bound || q->unbound)
        return q ? q->unbind_rc : 0;
    int rc = 0;
    unbind_from(q, q->nbound, &rc);
    q->unbound = true;
    q->unbind_rc = rc;
    return rc;
}

cJSON *counters_qp_report(const struct counters_qp *q)
{
    cJSON *o;
    if (q->set) {
        o = counters_set_report_json(q->set, true);
    } else {
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "scope",
                                "this test's queue pairs: not bound to a counter of their own "
                                "(see reason); only the port-wide counters cover them");
        cJSON_AddArrayToObject(o, "objects");
        cJSON_AddArrayToObject(o, "notes");
        cJSON_AddArrayToObject(o, "counters");
    }
    cJSON_AddStringToObject(o, "status", q->bound ? "bound" : "not bound");
    if (q->bound) {
        cJSON_AddNullToObject(o, "reason");
        cJSON_AddNullToObject(o, "errno");
    } else {
        cJSON_AddStringToObject(o, "reason", q->why);
        if (q->errname)
            cJSON_AddStringToObject(o, "errno", q->errname);
        else
            cJSON_AddNullToObject(o, "errno");
    }
    cJSON_AddStringToObject(o, "device", q->dev);
    cJSON_AddNumberToObject(o, "port", q->port);
    cJSON_AddStringToObject(o, "driver", q->driver);
    if (q->bound)
        cJSON_AddNumberToObject(o, "counter_id", q->counter);
    else
        cJSON_AddNullToObject(o, "counter_id");
    cJSON *a = cJSON_AddArrayToObject(o, "qpns");
    for (int i = 0; i < q->nqps; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(q->qpns[i]));
    cJSON_AddStringToObject(o, "binding",
                            "manual: RDMA_NLDEV_CMD_STAT_SET over RDMA netlink, as `rdma "
                            "statistic qp bind`; only this side's queue pairs");
    if (q->bound) {
        cJSON_AddBoolToObject(o, "unbound", q->unbound && q->unbind_rc == 0);
        if (q->unbind_rc)
            cJSON_AddStringToObject(o, "unbind_error", q->unbind_err);
    }
    return o;
}

void counters_qp_free(struct counters_qp *q)
{
    if (!q)
        return;
    counters_qp_unbind(q);
    counters_set_close(q->set);
    rdmanl_close(&q->nl);
    free(q);
}

/* ---- for transports ---- */

static void publish(struct flow_rt *f, const struct counters_qp *q)
{
    int n;
    const struct counters_value *v = counters_qp_values(q, &n);
    pthread_mutex_lock(&f->lock);
    if (n > f->nown)
        f->own = xalloc_resize(f->own, (size_t)n * sizeof(*v));
    if (n)
        memcpy(f->own, v, (size_t)n * sizeof(*v));
    f->nown = n;
    pthread_mutex_unlock(&f->lock);
}

struct counters_qp *counters_qp_flow_bind(struct flow_rt *f, const struct counters_qp_opts *o)
{
    struct counters_qp_opts oo = *o;
    if (!oo.label)
        oo.label = f->spec->name;
    struct counters_qp *q = counters_qp_bind(&oo);
    if (q->bound) {
        char qpns[100];
        qpn_list(q->qpns, q->nqps, qpns, sizeof(qpns));
        flow_event(f, "QP%s %s bound to RDMA counter %u on %s/%d (this test's queue pairs)",
                   q->nqps > 1 ? "s" : "", qpns, q->counter, q->dev, q->port);
        publish(f, q);
    } else {
        flow_event(f, "QP counter not bound (%s%s%s): see qp_counters.reason", q->brief,
                   q->errname ? ", " : "", q->errname ? q->errname : "");
    }
    q->next_ns = flow_now_ns() + 1000000000ull;
    return q;
}

void counters_qp_flow_tick(struct flow_rt *f, struct counters_qp *q, double period_s)
{
    if (!q || !q->bound || q->unbound)
        return;
    uint64_t now = flow_now_ns();
    if (now < q->next_ns)
        return;
    counters_qp_sample(q);
    publish(f, q);
    q->next_ns = now + (uint64_t)((period_s > 0 ? period_s : 1.0) * 1e9);
}

void counters_qp_flow_finish(struct flow_rt *f, struct counters_qp *q)
{
    if (!q)
        return;
    if (q->bound) {
        counters_qp_sample(q);
        publish(f, q);
        if (counters_qp_unbind(q) < 0)
            flow_event(f, "QP counter %u: unbinding failed: %s", q->counter,
                       rdmanl_errno_name(q->unbind_rc) ? rdmanl_errno_name(q->unbind_rc) : "error");
    }
    cJSON *rep = counters_qp_report(q);
    pthread_mutex_lock(&f->lock);
    cJSON_Delete(f->own_report);
    f->own_report = rep;
    pthread_mutex_unlock(&f->lock);
    counters_qp_free(q);
}
