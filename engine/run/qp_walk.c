/* qp_walk: the queue-pair walk of `fabtop doctor` on the verbs transport's own lane
 * (verbs_drill.h: set-up as a run makes it, one ping-pong at a time with a deadline). */
#include "engine/run/qp_walk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "engine/flow/flow.h"
#include "engine/flow/mix.h"
#include "engine/xport/verbs/verbs_drill.h"

/* The path MTU a try runs at: as asked, else the smaller active MTU (0: unknown). */
static int effective_mtu(const struct qp_walk_want *w, const struct qp_walk_try *t)
{
    if (t->path_mtu_used)
        return t->path_mtu_used;
    return t->path_mtu ? t->path_mtu : w->smaller_active_mtu;
}

static bool tried_before(const struct qp_walk_want *w, const struct qp_walk *walk, int mtu, int gid)
{
    for (int i = 0; i < walk->ntries; i++) {
        const struct qp_walk_try *t = &walk->tries[i];
        if (effective_mtu(w, t) == mtu && t->gid_index == gid)
            return true;
    }
    return false;
}

int qp_walk_next(const struct qp_walk_want *w, const struct qp_walk *tried,
                 const struct qp_walk_try *t, struct qp_walk_try *next)
{
    memset(next, 0, sizeof(*next));
    int mtu = effective_mtu(w, t);
    /* Set-up failed before RTS with a GID index given: the one the port's GIDs give. */
    if (!t->setup_ok && strcmp(t->reached, "RTS") && t->gid_index >= 0 &&
        !tried_before(w, tried, mtu, -1)) {
        next->path_mtu = t->path_mtu;
        next->gid_index = -1;
        return 1;
    }
    /* The queue pair got to RTS and its messages (or the return path's) failed: a smaller
     * path MTU, first the smaller of the ports' active MTUs, then by halves down to 256. */
    if (!strcmp(t->reached, "RTS") && mtu > 256) {
        int cand = w->smaller_active_mtu > 0 && w->smaller_active_mtu < mtu ? w->smaller_active_mtu
                                                                            : mtu / 2;
        for (; cand >= 256; cand /= 2)
            if (!tried_before(w, tried, cand, t->gid_index)) {
                next->path_mtu = cand;
                next->gid_index = t->gid_index;
                return 1;
            }
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One try: the lane's set-up, then w->messages ping-pongs of the path MTU's size. */
static void one_try(struct channel_conn *ctl, const char *peer_desc, const struct qp_walk_want *w,
                    struct qp_walk_try *t)
{
    t->gid_used = -1;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "format", "fabtop-mix");
    cJSON_AddNumberToObject(doc, "version", 1);
    cJSON_AddStringToObject(doc, "name", "qp-walk");
    cJSON *fl = cJSON_AddArrayToObject(doc, "flows");
    cJSON *f = cJSON_CreateObject();
    cJSON_AddItemToArray(fl, f);
    cJSON_AddStringToObject(f, "name", "qp-walk");
    cJSON_AddStringToObject(f, "transport", "verbs");
    cJSON_AddStringToObject(f, "op", "pingpong");
    /* The buffer fits the largest path MTU; each message is the try's path MTU. */
    cJSON_AddNumberToObject(f, "size", 4096);
    char rdma[DOCTOR_NAME + 8];
    snprintf(rdma, sizeof(rdma), "%s:%d", w->dev, w->port);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(f, "local"), "rdma", rdma);
    cJSON *p = cJSON_AddObjectToObject(f, "params");
    cJSON_AddStringToObject(p, "verb", "write");
    cJSON_AddStringToObject(p, "latency", "pingpong");
    cJSON_AddNumberToObject(p, "timeout", w->timeout);
    cJSON_AddNumberToObject(p, "retry_cnt", w->retry_cnt);
    cJSON_AddNumberToObject(p, "gid_index", t->gid_index);
    cJSON_AddNumberToObject(p, "dscp", w->dscp);
    if (t->path_mtu)
        cJSON_AddNumberToObject(p, "path_mtu", t->path_mtu);
    struct mix *m = calloc(1, sizeof(*m));
    struct ft_err e = {0};
    int rc = m ? mix_from_json(doc, "the doctor's queue-pair walk", m, &e)
               : ft_err_set(&e, -ENOMEM, "out of memory");
    cJSON_Delete(doc);
    struct verbs_drill *l = NULL;
    struct verbs_drill_setup st = {.gid_index = -1};
    if (rc == 0)
        rc = verbs_drill_open(ctl, peer_desc, m, 0, &l, &st, &e);
    snprintf(t->reached, sizeof(t->reached), "%s", st.qp_state);
    t->path_mtu_used = st.path_mtu;
    t->gid_used = st.gid_index;
    if (rc < 0) {
        snprintf(t->error, sizeof(t->error), "%s", e.msg);
        snprintf(t->cause, sizeof(t->cause), "%s", e.msg);
        goto out;
    }
    t->setup_ok = true;
    double timeout_s;
    t->bound_s = verbs_drill_bound_s(l, &timeout_s);
    /* Long enough that the queue pair's own completion status decides (twice its retry
     * bound and a second), not the walk's clock. */
    if (timeout_s < 2 * t->bound_s + 1)
        timeout_s = 2 * t->bound_s + 1;
    int timeout_ms = (int)(timeout_s * 1000);
    int n = w->messages > 0 ? w->messages : 5;
    double *rtt = calloc((size_t)n, sizeof(*rtt));
    int size = t->path_mtu_used > 0 ? t->path_mtu_used : 4096;
    for (int i = 0; i < n && rtt; i++) {
        uint64_t t0 = flow_now_ns(), ns = 0;
        t->sent++;
        rc = verbs_drill_op(l, (uint64_t)size, timeout_ms, &ns, &e);
        if (rc < 0) {
            t->failed_after_s = (flow_now_ns() - t0) / 1e9;
            /* No completion at all, past the retry bound: a packet dropped before it could count
             * as a retry (rdma_rxe on Linux 6.1 resends a packet its netdev refuses, above the
             * netdev's MTU, without end: rxe_req.c rolls back on -EAGAIN from rxe_xmit_packet). */
            if (rc == -ETIMEDOUT)
                snprintf(t->cause, sizeof(t->cause),
                         "no completion within %.2f s, past its retry bound of %.2f s",
                         t->failed_after_s, t->bound_s);
            else
                snprintf(t->cause, sizeof(t->cause), "%s", e.msg);
            if (rc == -ETIMEDOUT)
                snprintf(t->error, sizeof(t->error),
                         "message %d of %d (%d bytes): no completion within %.2f s, past the "
                         "queue pair's retry bound of %.2f s: dropped where no retry counts it "
                         "(a netdev or link that takes no frame this large)",
                         i + 1, n, size, t->failed_after_s, t->bound_s);
            else
                snprintf(t->error, sizeof(t->error),
                         "message %d of %d (%d bytes) failed after %.2f s: %s", i + 1, n, size,
                         t->failed_after_s, e.msg);
            break;
        }
        rtt[t->delivered++] = ns / 1e3;
    }
    if (t->delivered) {
        qsort(rtt, (size_t)t->delivered, sizeof(*rtt), cmp_double);
        t->rtt_p50_us = rtt[(t->delivered - 1) / 2]; /* nearest rank */
    }
    free(rtt);
out:
    verbs_drill_close(l);
    if (m)
        mix_free(m);
    free(m);
}

int qp_walk_run(struct channel_conn *ctl, const char *peer_desc, const struct qp_walk_want *w,
                struct qp_walk *out, struct ft_err *err)
{
    memset(out, 0, sizeof(*out));
    out->works = -1;
    if (!w->dev[0])
        return ft_err_set(err, -EINVAL, "the queue-pair walk needs an RDMA device (--device)");
    struct qp_walk_try next = {.path_mtu = w->path_mtu, .gid_index = w->gid_index};
    while (out->ntries < QP_WALK_MAX_TRIES) {
        struct qp_walk_try *t = &out->tries[out->ntries++];
        *t = next;
        one_try(ctl, peer_desc, w, t);
        if (!t->error[0]) {
            out->works = out->ntries - 1;
            break;
        }
        if (!qp_walk_next(w, out, t, &next))
            break;
    }
    return 0;
}

static void attrs(const struct qp_walk_want *w, const struct qp_walk_try *t, char *buf, size_t len)
{
    char gid[24];
    int g = t->gid_used >= 0 ? t->gid_used : t->gid_index;
    if (g >= 0)
        snprintf(gid, sizeof(gid), "%d", g);
    else
        snprintf(gid, sizeof(gid), "chosen");
    int mtu = effective_mtu(w, t);
    if (mtu)
        snprintf(buf, len, "path MTU %d, GID index %s", mtu, gid);
    else
        snprintf(buf, len, "path MTU of the ports, GID index %s", gid);
}

int qp_walk_finding(const struct qp_walk_want *w, const struct qp_walk *walk,
                    struct doctor_finding *f)
{
    if (walk->ntries == 0 || walk->works == 0)
        return 0;
    const struct qp_walk_try *a = &walk->tries[0];
    memset(f, 0, sizeof(*f));
    f->sev = DOCTOR_ERROR;
    snprintf(f->rule, sizeof(f->rule), "qp-walk");
    snprintf(f->attr, sizeof(f->attr), "queue pair");
    attrs(w, a, f->local, sizeof(f->local));
    char what[300], fix[210] = "";
    if (!a->setup_ok)
        snprintf(what, sizeof(what), "a queue pair with %s did not get past %s: %.190s", f->local,
                 a->reached[0] ? a->reached : "its device", a->cause);
    else
        snprintf(what, sizeof(what),
                 "a queue pair with %s reached RTS (%s accepted it), but %d of %d messages of "
                 "%d bytes went through: %.150s",
                 f->local, w->dev, a->delivered, a->sent, effective_mtu(w, a), a->cause);
    if (walk->works > 0) {
        const struct qp_walk_try *b = &walk->tries[walk->works];
        attrs(w, b, f->peer, sizeof(f->peer));
        int ma = effective_mtu(w, a), mb = effective_mtu(w, b);
        char use[120] = "";
        if (mb != ma)
            snprintf(use, sizeof(use), "path MTU %d%s", mb,
                     mb == w->smaller_active_mtu ? " (the smaller active MTU of both ports)" : "");
        if (b->gid_used != a->gid_used && b->gid_used >= 0)
            snprintf(use + strlen(use), sizeof(use) - strlen(use), "%sGID index %d",
                     use[0] ? " and " : "", b->gid_used);
        snprintf(fix, sizeof(fix),
                 "; proven with %s: %d of %d messages, round trip p50 %.0f us: "
                 "use %s",
                 f->peer, b->delivered, b->sent, b->rtt_p50_us, use[0] ? use : "those values");
    } else {
        snprintf(f->peer, sizeof(f->peer), "none worked");
        snprintf(fix, sizeof(fix),
                 "; no smaller path MTU or other GID worked either: check the "
                 "link, the peer's port and the facts above");
    }
    snprintf(f->msg, sizeof(f->msg), "%s%s", what, fix);
    return 1;
}

void qp_walk_text(const struct qp_walk *walk, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    struct qp_walk_want none = {0};
    for (int i = 0; i < walk->ntries && o < len; i++) {
        const struct qp_walk_try *t = &walk->tries[i];
        char a[96];
        attrs(&none, t, a, sizeof(a));
        int n;
        if (!t->setup_ok)
            n = snprintf(buf + o, len - o, "queue-pair walk %d: %s: stopped at %s: %s\n", i + 1, a,
                         t->reached[0] ? t->reached : "the device", t->error);
        else if (t->error[0])
            n = snprintf(buf + o, len - o,
                         "queue-pair walk %d: %s: INIT -> RTR -> RTS, %d of %d messages: %s\n",
                         i + 1, a, t->delivered, t->sent, t->error);
        else
            n = snprintf(buf + o, len - o,
                         "queue-pair walk %d: %s: INIT -> RTR -> RTS, %d of %d messages of %d "
                         "bytes, round trip p50 %.0f us\n",
                         i + 1, a, t->delivered, t->sent, t->path_mtu_used, t->rtt_p50_us);
        if (n < 0)
            break;
        o += (size_t)n;
    }
}

cJSON *qp_walk_json(const struct qp_walk *walk)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(o, "tries");
    for (int i = 0; i < walk->ntries; i++) {
        const struct qp_walk_try *t = &walk->tries[i];
        cJSON *x = cJSON_CreateObject();
        jsonutil_add_num_or_null(x, "path_mtu_asked_bytes", t->path_mtu, t->path_mtu);
        cJSON_AddNumberToObject(x, "gid_index_asked", t->gid_index);
        cJSON_AddStringToObject(x, "reached", t->reached);
        jsonutil_add_num_or_null(x, "path_mtu_bytes", t->path_mtu_used, t->path_mtu_used);
        jsonutil_add_num_or_null(x, "gid_index", t->gid_used >= 0, t->gid_used);
        cJSON_AddBoolToObject(x, "setup_ok", t->setup_ok);
        cJSON_AddNumberToObject(x, "messages_sent", t->sent);
        cJSON_AddNumberToObject(x, "messages_delivered", t->delivered);
        jsonutil_add_num_or_null(x, "rtt_p50_us", t->delivered, t->rtt_p50_us);
        jsonutil_add_num_or_null(x, "retry_bound_s", t->setup_ok, t->bound_s);
        jsonutil_add_num_or_null(x, "failed_after_s", t->error[0] && t->setup_ok,
                                 t->failed_after_s);
        if (t->error[0])
            cJSON_AddStringToObject(x, "error", t->error);
        else
            cJSON_AddNullToObject(x, "error");
        cJSON_AddItemToArray(arr, x);
    }
    jsonutil_add_num_or_null(o, "works", walk->works >= 0, walk->works);
    return o;
}
