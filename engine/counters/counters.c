/* counters: counter sets: discovery of the counters under a sys/proc root (or live over
 * netlink and ethtool), files kept open and read with pread, and the arithmetic that turns
 * raw readings into values, rates and deltas with each counter's real semantics
 * (ctr_sem.c): saturation, wrap at the counter's width, resets, gauges, n/a. */
#include "engine/counters/counters.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <netdb.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/counters/counters_kernel.h"
#include "engine/counters/counters_sem.h"
#include "engine/flow/mix.h"
#include "topology/topo_ibcounters.h"
#include "topology/topo_model.h"

#define SYSFS_MAGIC_NR 0x62656572 /* SYSFS_MAGIC in linux/magic.h */

/* How an entry is read (RD_FED: the caller supplies each reading, counters_set_fed_put). */
enum rd_kind { RD_FILE = 0, RD_ETH, RD_QDISC, RD_SNMP, RD_FED };

/* qdisc fields, in the order entries are made. */
enum { QF_BYTES = 0, QF_PACKETS, QF_DROPS, QF_OVERLIMITS, QF_REQUEUES, QF_BACKLOG, QF_QLEN, QF_N };
static const char *const qf_names[QF_N] = {"bytes",    "packets", "drops", "overlimits",
                                           "requeues", "backlog", "qlen"};

/* Per-counter reading state beside its public counters_value. */
struct ent {
    enum rd_kind rd;
    int fd;         /* RD_FILE: kept open; -1 closed (gone, or too many open files) */
    char *path;     /* RD_FILE: to reopen */
    bool transient; /* RD_FILE: open, read and close each time (no fd to spare) */
    /* RD_ETH: netdev, statistic; RD_QDISC: qdisc, field; RD_SNMP: file, position;
     * RD_FILE: aux is its directory in dirs */
    int aux, aux2;
    bool slow;
    uint8_t width0;    /* width from the table */
    uint8_t ext_width; /* IB: 64 when the same file may hold the extended counter */
    uint8_t scale;
    bool have_prev;
    uint64_t prev, t_prev;
    bool mark_ok;  /* the delta since the mark is known */
    uint64_t acc;  /* growth since the mark, raw counts */
    bool read_ok;  /* this sample's reading (fresh) */
    bool fed;      /* RD_FED: a reading was put since the last sample */
    uint64_t raw;  /* this sample's reading */
    bool negative; /* gauges: the reading was -raw */
};

struct eth_obj {
    struct counters_kernel_eth e;
    uint64_t *vals;
    int rc; /* this sample's read status */
};

struct qd_obj {
    int ifindex;
    uint32_t handle;
    bool seen; /* in this sample's dump */
    struct counters_kernel_qdisc_stats st;
};

struct snmp_file {
    int fd;
    int first, count; /* its entries, contiguous and in file order */
};

struct counters_set {
    struct counters_opts o;
    char sys_root[1024], proc_root[1024];
    int n, cap;
    struct ent *ents;
    struct counters_value *vals;
    /* Not sysfs (a captured tree): files deleted under us keep reading through an open
     * descriptor. A directory whose mtime moved gets its files fstat()ed until every one
     * of them has been read again (slow ones included). */
    bool check_nlink;
    int ndirs;
    struct dir_watch {
        char *path;
        struct timespec mtime;
        bool dirty;
    } * dirs;
    uint64_t period_slow_ns, last_slow_ns;
    /* ethtool */
    int eth_sock;
    int neth;
    struct eth_obj *eths;
    /* qdisc */
    int nl_fd;
    uint32_t nl_seq;
    int nqd;
    struct qd_obj *qds;
    bool qd_ok; /* this sample's dump worked */
    /* snmp */
    struct snmp_file snmp[2];
    char *snmp_buf;
    size_t snmp_cap;
    /* description */
    int nobjects, nnotes;
    char **objects, **notes;
    char *scope; /* fed sets: replaces the port-wide scope */
};

/* ---- small helpers ---- */

static uint64_t mono_ns(void *arg)
{
    (void)arg;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(const struct counters_set *s)
{
    return s->o.clock_ns ? s->o.clock_ns(s->o.clock_arg) : mono_ns(NULL);
}

static void add_str(char ***list, int *n, const char *text)
{
    *list = xalloc_resize(*list, (size_t)(*n + 1) * sizeof(**list));
    (*list)[(*n)++] = xalloc_strdup(text);
}

static void note(struct counters_set *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(struct counters_set *s, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    add_str(&s->notes, &s->nnotes, buf);
}

static uint64_t width_mask(int w)
{
    return w >= 64 ? UINT64_MAX : w <= 0 ? 0 : (UINT64_C(1) << w) - 1;
}

/* Parse a sysfs/procfs number: decimal, optional leading '-', trailing white space only. */
static bool parse_num(const char *p, uint64_t *out, bool *neg)
{
    while (*p == ' ' || *p == '\t')
        p++;
    *neg = false;
    if (*p == '-') {
        *neg = true;
        p++;
    }
    if (*p < '0' || *p > '9')
        return false;
    uint64_t v = 0;
    while (*p >= '0' && *p <= '9') {
        uint64_t d = (uint64_t)(*p++ - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p)
        return false;
    *out = v;
    return true;
}

/* ---- entries ---- */

static int add_entry(struct counters_set *s, enum counters_source src, const char *provider,
                     const char *object, const char *name, enum rd_kind rd, bool slow)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->ents = xalloc_resize(s->ents, (size_t)s->cap * sizeof(*s->ents));
        s->vals = xalloc_resize(s->vals, (size_t)s->cap * sizeof(*s->vals));
    }
    struct ent *e = &s->ents[s->n];
    struct counters_value *v = &s->vals[s->n];
    memset(e, 0, sizeof(*e));
    memset(v, 0, sizeof(*v));
    e->rd = rd;
    e->fd = -1;
    e->slow = slow;
    struct counters_info info;
    v->known = counters_info_get(src, provider, name, &info);
    v->source = src;
    snprintf(v->object, sizeof(v->object), "%s", object);
    snprintf(v->name, sizeof(v->name), "%s", name);
    v->group = info.group;
    v->kind = info.kind;
    v->setting = info.setting;
    v->behaviour = info.behaviour;
    v->width = info.width;
    v->unit = info.unit;
    v->error_like = info.error_like;
    e->width0 = info.width;
    e->ext_width = info.ext_width;
    e->scale = info.scale ? info.scale : 1;
    return s->n++;
}

/* Every counter file in a directory (hw_counters' "lifespan" is a setting, not a counter). */
static int add_dir(struct counters_set *s, enum counters_source src, const char *provider,
                   const char *object, const char *rel, bool slow)
{
    char **names;
    int nn = fsutil_list(s->sys_root, rel, &names);
    if (nn <= 0)
        return nn;
    int added = 0;
    s->dirs = xalloc_resize(s->dirs, (size_t)(s->ndirs + 1) * sizeof(*s->dirs));
    struct dir_watch *dw = &s->dirs[s->ndirs];
    char dpath[2048];
    fsutil_path(dpath, sizeof(dpath), s->sys_root, rel);
    dw->path = xalloc_strdup(dpath);
    struct stat st;
    dw->mtime = stat(dpath, &st) == 0 ? st.st_mtim : (struct timespec){0, 0};
    dw->dirty = false;
    for (int i = 0; i < nn; i++) {
        if (!strcmp(names[i], "lifespan"))
            continue;
        char path[2048];
        snprintf(path, sizeof(path), "%s/%s/%s", s->sys_root, rel, names[i]);
        int k = add_entry(s, src, provider, object, names[i], RD_FILE, slow);
        struct ent *e = &s->ents[k];
        e->path = xalloc_strdup(path);
        e->aux = s->ndirs;
        e->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (e->fd < 0 && (errno == EMFILE || errno == ENFILE))
            e->transient = true;
        added++;
    }
    fsutil_free_list(names);
    s->ndirs++;
    return added;
}

/* ---- the semantics: one reading -> value, rate, delta ---- */

static void update(struct ent *e, struct counters_value *v, uint64_t now)
{
    v->reset = false;
    if (!e->read_ok) {
        /* Vanished or unreadable: n/a, never 0; the growth while it was away is unknown. */
        v->valid = 0;
        v->saturated = false;
        e->have_prev = false;
        e->mark_ok = false;
        return;
    }
    uint64_t raw = e->raw;
    unsigned keep = v->valid & (COUNTERS_V_PEAK);
    v->valid = COUNTERS_V_VALUE;
    if (v->kind == COUNTERS_GAUGE) {
        v->value = e->negative ? -(double)raw : (double)raw * e->scale;
        if (e->mark_ok) {
            if (!(keep & COUNTERS_V_PEAK) || v->value > v->peak)
                v->peak = v->value;
            v->valid |= COUNTERS_V_PEAK;
        }
        e->have_prev = true;
        e->prev = raw;
        e->t_prev = now;
        return;
    }
    v->value = (double)raw * e->scale;
    /* Width actually in force: the table's, the extended one when the value proves it, or
     * unknown when the value is wider than documented (then no wrap is assumed). */
    if (e->width0 && raw > width_mask(e->width0)) {
        if (e->ext_width && raw <= width_mask(e->ext_width)) {
            v->width = e->ext_width;
        } else {
            v->width = 0;
            v->behaviour = COUNTERS_WIDTH_UNKNOWN;
        }
    }
    bool sat = false;
    if (v->behaviour == COUNTERS_SATURATES && e->width0)
        sat = raw == width_mask(e->width0) || (e->ext_width && raw == width_mask(e->ext_width));
    v->saturated = sat;
    if (sat)
        e->mark_ok = false; /* the true count is unknown until the next mark */
    if (e->have_prev) {
        uint64_t d;
        bool rate_ok = !sat;
        if (raw >= e->prev) {
            d = raw - e->prev;
        } else if (v->behaviour == COUNTERS_WRAPS && v->width &&
                   e->prev - raw > width_mask(v->width) / 2) {
            d = (raw - e->prev) & width_mask(v->width); /* wrapped past 2^width */
        } else {
            /* A decrease: someone cleared it (perfquery -R, driver reload). Count from
             * zero; no rate for this interval rather than a negative or huge one. */
            d = raw;
            v->reset = true;
            v->reset_since_mark = true;
            rate_ok = false;
        }
        double dt = (double)(now - e->t_prev) / 1e9;
        if (rate_ok && now > e->t_prev) {
            v->rate = (double)d * e->scale / dt;
            v->valid |= COUNTERS_V_RATE;
        }
        if (e->mark_ok)
            e->acc += d;
    }
    if (e->mark_ok) {
        v->delta = (double)e->acc * e->scale;
        v->valid |= COUNTERS_V_DELTA;
    }
    e->have_prev = true;
    e->prev = raw;
    e->t_prev = now;
}

/* ---- reading ---- */

static void read_file(struct counters_set *s, struct ent *e)
{
    char buf[64];
    e->read_ok = false;
    if (e->fd < 0) {
        e->fd = open(e->path, O_RDONLY | O_CLOEXEC);
        if (e->fd < 0)
            return;
    }
    ssize_t n = pread(e->fd, buf, sizeof(buf) - 1, 0);
    bool gone = n < 0;
    if (!gone && s->check_nlink && s->dirs[e->aux].dirty) {
        struct stat st;
        gone = fstat(e->fd, &st) < 0 || st.st_nlink == 0;
    }
    if (gone || e->transient) {
        close(e->fd);
        e->fd = -1;
    }
    if (n <= 0 || gone)
        return;
    buf[n] = '\0';
    e->read_ok = parse_num(buf, &e->raw, &e->negative);
}

static void read_eths(struct counters_set *s, bool slow_due)
{
    for (int i = 0; i < s->neth; i++) {
        struct eth_obj *x = &s->eths[i];
        bool slow = !strcmp(x->e.driver, "mlx5_core");
        if (slow && !slow_due) {
            x->rc = 1; /* not read now */
            continue;
        }
        x->rc = x->e.n > 0 ? counters_kernel_eth_read(s->eth_sock, &x->e, x->vals) : -ESTALE;
    }
}

static void qd_cb(const struct counters_kernel_qdisc_stats *q, void *arg)
{
    struct counters_set *s = arg;
    for (int i = 0; i < s->nqd; i++)
        if (s->qds[i].ifindex == q->ifindex && s->qds[i].handle == q->handle) {
            s->qds[i].st = *q;
            s->qds[i].seen = true;
        }
}

static void read_qdiscs(struct counters_set *s)
{
    for (int i = 0; i < s->nqd; i++)
        s->qds[i].seen = false;
    s->qd_ok = s->nl_fd >= 0 && counters_kernel_nl_qdisc_dump(s->nl_fd, &s->nl_seq, qd_cb, s) >= 0;
}

static bool qd_field(const struct qd_obj *q, int f, uint64_t *v)
{
    const struct counters_kernel_qdisc_stats *st = &q->st;
    switch (f) {
    case QF_BYTES:
        *v = st->bytes;
        return st->have_basic;
    case QF_PACKETS:
        *v = st->packets;
        return st->have_basic;
    case QF_DROPS:
        *v = st->drops;
        return st->have_queue;
    case QF_OVERLIMITS:
        *v = st->overlimits;
        return st->have_queue;
    case QF_REQUEUES:
        *v = st->requeues;
        return st->have_queue;
    case QF_BACKLOG:
        *v = st->backlog;
        return st->have_queue;
    default:
        *v = st->qlen;
        return st->have_queue;
    }
}

/* Read /proc/net/snmp or netstat whole. Returns its length or -1. */
static ssize_t read_snmp_file(struct counters_set *s, int f)
{
    if (s->snmp[f].fd < 0)
        return -1;
    for (;;) {
        ssize_t n = pread(s->snmp[f].fd, s->snmp_buf, s->snmp_cap - 1, 0);
        if (n < 0)
            return -1;
        if ((size_t)n < s->snmp_cap - 1) {
            s->snmp_buf[n] = '\0';
            return n;
        }
        s->snmp_cap *= 2;
        s->snmp_buf = xalloc_resize(s->snmp_buf, s->snmp_cap);
    }
}

/* Walk "Prefix: name name ..." / "Prefix: value value ..." line pairs, calling cb with the
 * prefix, the name, its position in the file and the value text. Edits text in place. */
static void snmp_walk(char *text,
                      void (*cb)(const char *pfx, const char *name, int pos, const char *val,
                                 void *arg),
                      void *arg)
{
    int pos = 0;
    char *save = NULL;
    char *hdr = strtok_r(text, "\n", &save);
    while (hdr) {
        char *vals = strtok_r(NULL, "\n", &save);
        if (!vals)
            break;
        char *c1 = strchr(hdr, ':'), *c2 = strchr(vals, ':');
        if (c1 && c2 && c1 - hdr == c2 - vals && !strncmp(hdr, vals, (size_t)(c1 - hdr))) {
            *c1 = '\0';
            char *s1 = NULL, *s2 = NULL;
            char *nm = strtok_r(c1 + 1, " ", &s1), *vl = strtok_r(c2 + 1, " ", &s2);
            while (nm && vl) {
                cb(hdr, nm, pos++, vl, arg);
                nm = strtok_r(NULL, " ", &s1);
                vl = strtok_r(NULL, " ", &s2);
            }
        }
        hdr = strtok_r(NULL, "\n", &save);
    }
}

struct snmp_ctx {
    struct counters_set *s;
    int file;
};

static void snmp_open_cb(const char *pfx, const char *name, int pos, const char *val, void *arg)
{
    struct snmp_ctx *c = arg;
    (void)val;
    int k = add_entry(c->s, COUNTERS_SRC_SNMP, pfx, pfx, name, RD_SNMP, false);
    c->s->ents[k].aux = c->file;
    c->s->ents[k].aux2 = pos;
}

static bool snmp_is(const struct counters_set *s, int i, const char *pfx, const char *name)
{
    return !strcmp(s->vals[i].name, name) && !strcmp(s->vals[i].object, pfx);
}

static void snmp_read_cb(const char *pfx, const char *name, int pos, const char *val, void *arg)
{
    struct snmp_ctx *c = arg;
    struct counters_set *s = c->s;
    const struct snmp_file *f = &s->snmp[c->file];
    int i = f->first + pos;
    /* Same layout as at open (the usual case), else look it up: IcmpMsg grows new
     * columns as new ICMP types are seen; columns that appear later are not followed. */
    if (pos >= f->count || !snmp_is(s, i, pfx, name)) {
        for (i = f->first; i < f->first + f->count; i++)
            if (snmp_is(s, i, pfx, name))
                break;
        if (i == f->first + f->count)
            return;
    }
    s->ents[i].read_ok = parse_num(val, &s->ents[i].raw, &s->ents[i].negative);
}

static int sample(struct counters_set *s, bool all)
{
    uint64_t now = now_ns(s);
    bool slow_due = all || !s->last_slow_ns || now - s->last_slow_ns >= s->period_slow_ns;
    if (slow_due)
        s->last_slow_ns = now;
    for (int d = 0; s->check_nlink && d < s->ndirs; d++) {
        struct stat st;
        struct dir_watch *dw = &s->dirs[d];
        bool same = stat(dw->path, &st) == 0 && st.st_mtim.tv_sec == dw->mtime.tv_sec &&
                    st.st_mtim.tv_nsec == dw->mtime.tv_nsec;
        if (!same) {
            dw->dirty = true;
            dw->mtime = st.st_mtim;
        }
    }
    if (s->neth)
        read_eths(s, slow_due);
    if (s->nqd)
        read_qdiscs(s);
    for (int f = 0; f < 2; f++) {
        if (s->snmp[f].fd < 0)
            continue;
        for (int i = 0; i < s->n; i++)
            if (s->ents[i].rd == RD_SNMP && s->ents[i].aux == f)
                s->ents[i].read_ok = false;
        if (read_snmp_file(s, f) < 0)
            continue;
        struct snmp_ctx c = {s, f};
        snmp_walk(s->snmp_buf, snmp_read_cb, &c);
    }
    int good = 0;
    for (int i = 0; i < s->n; i++) {
        struct ent *e = &s->ents[i];
        if (e->slow && !slow_due) {
            good += (s->vals[i].valid & COUNTERS_V_VALUE) != 0;
            continue;
        }
        switch (e->rd) {
        case RD_FILE:
            read_file(s, e);
            break;
        case RD_ETH: {
            struct eth_obj *x = &s->eths[e->aux];
            if (x->rc == 1) { /* slow, not due */
                good += (s->vals[i].valid & COUNTERS_V_VALUE) != 0;
                continue;
            }
            e->read_ok = x->rc == 0;
            e->raw = e->read_ok ? x->vals[e->aux2] : 0;
            break;
        }
        case RD_QDISC: {
            struct qd_obj *q = &s->qds[e->aux];
            e->read_ok = s->qd_ok && q->seen && qd_field(q, e->aux2, &e->raw);
            break;
        }
        case RD_SNMP:
            break; /* read above */
        case RD_FED:
            e->read_ok = e->fed;
            e->fed = false;
            break;
        }
        update(e, &s->vals[i], now);
        good += e->read_ok;
    }
    for (int d = 0; slow_due && d < s->ndirs; d++)
        s->dirs[d].dirty = false; /* every file was read (and checked) this time */
    return good > 0 || s->n == 0 ? 0 : -EIO;
}

int counters_set_sample(struct counters_set *s)
{
    return sample(s, false);
}

int counters_set_sample_all(struct counters_set *s)
{
    return sample(s, true);
}

void counters_set_mark(struct counters_set *s)
{
    for (int i = 0; i < s->n; i++) {
        struct ent *e = &s->ents[i];
        struct counters_value *v = &s->vals[i];
        e->acc = 0;
        v->reset_since_mark = false;
        v->valid &= ~(COUNTERS_V_DELTA | COUNTERS_V_PEAK);
        e->mark_ok = (v->valid & COUNTERS_V_VALUE) && !v->saturated;
        if (!e->mark_ok)
            continue;
        if (v->kind == COUNTERS_GAUGE) {
            v->peak = v->value;
            v->valid |= COUNTERS_V_PEAK;
        } else {
            v->delta = 0;
            v->valid |= COUNTERS_V_DELTA;
        }
    }
}

const struct counters_value *counters_set_values(const struct counters_set *s, int *n)
{
    *n = s->n;
    return s->vals;
}

/* ---- discovery ---- */

/* Is this object (an RDMA device and port, or a netdev) selected? Marks what matched. */
static bool selected(const struct counters_opts *o, bool *matched, const char *dev,
                     const char *port)
{
    if (!o->only)
        return true;
    bool any = false;
    for (int i = 0; i < o->nonly; i++) {
        const char *w = o->only[i];
        size_t dl = strlen(dev);
        bool hit;
        if (!port)
            hit = !strcmp(w, dev);
        else
            hit = !strcmp(w, dev) || (!strncmp(w, dev, dl) && (w[dl] == ':' || w[dl] == '/') &&
                                      !strcmp(w + dl + 1, port));
        if (hit) {
            matched[i] = true;
            any = true;
        }
    }
    return any;
}

static void rdma_provider(const struct counters_set *s, const char *dev, char *out, size_t len)
{
    char rel[512], drv[64] = "";
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/device/driver", dev);
    fsutil_link_base(s->sys_root, rel, drv, sizeof(drv));
    if (!strncmp(dev, "mlx5", 4) || !strcmp(drv, "mlx5_core")) {
        snprintf(out, len, "mlx5");
        return;
    }
    if (!strncmp(dev, "mlx4", 4) || !strcmp(drv, "mlx4_core")) {
        snprintf(out, len, "mlx4");
        return;
    }
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/1/hw_counters/ack_deferred", dev);
    if (!strncmp(dev, "rxe", 3) || fsutil_exists(s->sys_root, rel) > 0) {
        snprintf(out, len, "rxe");
        return;
    }
    snprintf(out, len, "%s", drv);
}

static void open_rdma(struct counters_set *s, bool *matched)
{
    char **devs;
    int nd = fsutil_list(s->sys_root, "sys/class/infiniband", &devs);
    for (int d = 0; d < nd; d++) {
        const char *dev = devs[d];
        char prov[32], rel[512];
        rdma_provider(s, dev, prov, sizeof(prov));
        /* Software providers count in memory; the rest ask the firmware (a MAD or a
         * command per read), so they are read at the slow period. */
        bool hw_slow = strcmp(prov, "rxe") && strcmp(prov, "siw");
        char **ports;
        snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports", dev);
        int np = fsutil_list(s->sys_root, rel, &ports);
        bool any = false;
        for (int p = 0; p < np; p++) {
            if (!selected(&s->o, matched, dev, ports[p]))
                continue;
            char obj[48];
            snprintf(obj, sizeof(obj), "%s/%s", dev, ports[p]);
            int before = s->n;
            snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/%s/counters", dev, ports[p]);
            add_dir(s, COUNTERS_SRC_IB, prov, obj, rel, true);
            snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/%s/counters_ext", dev,
                     ports[p]);
            add_dir(s, COUNTERS_SRC_IB, prov, obj, rel, true);
            snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/%s/hw_counters", dev,
                     ports[p]);
            add_dir(s, COUNTERS_SRC_HW, prov, obj, rel, hw_slow);
            char desc[128];
            snprintf(desc, sizeof(desc), "%s (RDMA port%s%s)", obj, prov[0] ? ", " : "", prov);
            add_str(&s->objects, &s->nobjects, desc);
            if (s->n == before)
                note(s, "%s: no counters (no counters/ or hw_counters/ directory)", obj);
            any = true;
        }
        if (np > 0)
            fsutil_free_list(ports);
        /* Device-wide hw_counters (mlx5 in switchdev mode keeps its counters here). */
        snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/hw_counters", dev);
        if ((any || selected(&s->o, matched, dev, NULL)) && fsutil_exists(s->sys_root, rel) > 0) {
            if (add_dir(s, COUNTERS_SRC_HW, prov, dev, rel, hw_slow) > 0) {
                char desc[128];
                snprintf(desc, sizeof(desc), "%s (RDMA device)", dev);
                add_str(&s->objects, &s->nobjects, desc);
            }
        }
    }
    if (nd > 0)
        fsutil_free_list(devs);
}

static void open_ethtool(struct counters_set *s, const char *ifname)
{
    if (s->eth_sock < 0) {
        s->eth_sock = counters_kernel_eth_socket();
        if (s->eth_sock < 0) {
            note(s, "ethtool: no socket: %s", strerror(-s->eth_sock));
            return;
        }
    }
    struct counters_kernel_eth e;
    int rc = counters_kernel_eth_open(s->eth_sock, ifname, &e);
    if (rc < 0) {
        note(s, "%s: no ethtool statistics (%s)", ifname,
             rc == -EOPNOTSUPP ? "the driver has none" : strerror(-rc));
        return;
    }
    s->eths = xalloc_resize(s->eths, (size_t)(s->neth + 1) * sizeof(*s->eths));
    struct eth_obj *x = &s->eths[s->neth];
    x->e = e;
    x->vals = xalloc_zero((size_t)e.n, sizeof(uint64_t));
    x->rc = -EAGAIN;
    bool slow = !strcmp(e.driver, "mlx5_core");
    for (int i = 0; i < e.n; i++) {
        int k = add_entry(s, COUNTERS_SRC_ETHTOOL, e.driver, ifname, e.names[i], RD_ETH, slow);
        s->ents[k].aux = s->neth;
        s->ents[k].aux2 = i;
    }
    s->neth++;
}

struct qd_open_ctx {
    struct counters_set *s;
    int ifindex;
    const char *ifname;
};

static void qd_open_cb(const struct counters_kernel_qdisc_stats *q, void *arg)
{
    struct qd_open_ctx *c = arg;
    struct counters_set *s = c->s;
    if (q->ifindex != c->ifindex || !strcmp(q->kind, "noqueue"))
        return;
    s->qds = xalloc_resize(s->qds, (size_t)(s->nqd + 1) * sizeof(*s->qds));
    struct qd_obj *x = &s->qds[s->nqd];
    memset(x, 0, sizeof(*x));
    x->ifindex = q->ifindex;
    x->handle = q->handle;
    char obj[48];
    snprintf(obj, sizeof(obj), "%s qdisc %x: %s", c->ifname, q->handle >> 16, q->kind);
    for (int f = 0; f < QF_N; f++) {
        int k = add_entry(s, COUNTERS_SRC_QDISC, NULL, obj, qf_names[f], RD_QDISC, false);
        s->ents[k].aux = s->nqd;
        s->ents[k].aux2 = f;
        if (f == QF_PACKETS && q->pkt64) {
            s->vals[k].width = 64;
            s->ents[k].width0 = 64;
        }
    }
    char desc[96], parent[24] = "root";
    if (q->parent != 0xffffffffu) /* TC_H_ROOT */
        snprintf(parent, sizeof(parent), "parent %x:%x", q->parent >> 16, q->parent & 0xffff);
    snprintf(desc, sizeof(desc), "%s (qdisc, %s)", obj, parent);
    add_str(&s->objects, &s->nobjects, desc);
    s->nqd++;
}

static void open_qdiscs(struct counters_set *s, const char *ifname)
{
    if (s->nl_fd < 0) {
        s->nl_fd = counters_kernel_nl_open();
        if (s->nl_fd < 0) {
            note(s, "qdisc: no rtnetlink socket: %s", strerror(-s->nl_fd));
            return;
        }
    }
    struct qd_open_ctx c = {s, (int)if_nametoindex(ifname), ifname};
    if (!c.ifindex) {
        note(s, "%s: no interface index for qdisc statistics", ifname);
        return;
    }
    int before = s->nqd;
    int rc = counters_kernel_nl_qdisc_dump(s->nl_fd, &s->nl_seq, qd_open_cb, &c);
    if (rc < 0)
        note(s, "%s: qdisc dump failed: %s", ifname, strerror(-rc));
    else if (s->nqd == before)
        note(s, "%s: no queueing qdisc (noqueue): nothing can wait there", ifname);
}

static void open_netdevs(struct counters_set *s, bool *matched, bool live)
{
    char **devs;
    int nd = fsutil_list(s->sys_root, "sys/class/net", &devs);
    for (int d = 0; d < nd; d++) {
        const char *dev = devs[d];
        if (!selected(&s->o, matched, dev, NULL))
            continue;
        char rel[512];
        snprintf(rel, sizeof(rel), "sys/class/net/%s/statistics", dev);
        int k = add_dir(s, COUNTERS_SRC_NETDEV, NULL, dev, rel, false);
        char desc[96];
        snprintf(desc, sizeof(desc), "%s (netdev)", dev);
        add_str(&s->objects, &s->nobjects, desc);
        if (k <= 0)
            note(s, "%s: no statistics directory", dev);
        if (live && s->o.with_ethtool)
            open_ethtool(s, dev);
        if (live && s->o.with_qdisc)
            open_qdiscs(s, dev);
    }
    if (nd > 0)
        fsutil_free_list(devs);
}

static void open_snmp(struct counters_set *s)
{
    static const char *const rels[2] = {"proc/net/snmp", "proc/net/netstat"};
    s->snmp_cap = 16384;
    s->snmp_buf = xalloc(s->snmp_cap);
    for (int f = 0; f < 2; f++) {
        char path[2048];
        s->snmp[f].first = s->n;
        fsutil_path(path, sizeof(path), s->proc_root, rels[f]);
        s->snmp[f].fd = open(path, O_RDONLY | O_CLOEXEC);
        if (s->snmp[f].fd < 0) {
            note(s, "%s: %s", path, strerror(errno));
            continue;
        }
        if (read_snmp_file(s, f) < 0)
            continue;
        struct snmp_ctx c = {s, f};
        snmp_walk(s->snmp_buf, snmp_open_cb, &c);
        s->snmp[f].count = s->n - s->snmp[f].first;
    }
    add_str(&s->objects, &s->nobjects,
            "Ip Tcp Udp TcpExt IpExt ... (snmp: /proc/net/snmp and netstat of this network "
            "namespace, host-wide)");
}

static bool is_live(const char *root)
{
    return !strcmp(root, "/");
}

int counters_set_open(const struct counters_opts *o, struct counters_set **out, struct ft_err *err)
{
    *out = NULL;
    struct counters_set *s = xalloc_zero(1, sizeof(*s));
    s->o = *o; /* only/nonly are used while opening, then dropped */
    snprintf(s->sys_root, sizeof(s->sys_root), "%s", o->sys_root ? o->sys_root : "/");
    snprintf(s->proc_root, sizeof(s->proc_root), "%s", o->proc_root ? o->proc_root : "/");
    s->period_slow_ns = (uint64_t)((o->slow_period_s > 0 ? o->slow_period_s : 1.0) * 1e9);
    s->eth_sock = s->nl_fd = -1;
    s->snmp[0].fd = s->snmp[1].fd = -1;
    /* Files deleted from a captured tree keep reading through an open descriptor; sysfs
     * returns an error instead. Only the former needs the extra fstat per read. */
    char path[2048];
    struct statfs sf;
    fsutil_path(path, sizeof(path), s->sys_root, "sys");
    s->check_nlink = !(statfs(path, &sf) == 0 && (unsigned long)sf.f_type == SYSFS_MAGIC_NR);
    bool *matched = xalloc_zero((size_t)(o->nonly > 0 ? o->nonly : 1), sizeof(bool));
    open_rdma(s, matched);
    bool live = is_live(s->sys_root);
    if (!live && (o->with_qdisc || o->with_ethtool))
        note(s, "qdisc and ethtool statistics are read live only (not from %s)", s->sys_root);
    open_netdevs(s, matched, live);
    if (o->with_snmp)
        open_snmp(s);
    s->o.only = NULL;
    s->o.nonly = 0;
    int rc = 0;
    for (int i = 0; i < o->nonly && rc == 0; i++)
        if (!matched[i])
            rc = ft_err_set(err, -ENOENT,
                            "no RDMA port, RDMA device or netdev named '%s' under %s (see "
                            "sys/class/infiniband and sys/class/net)",
                            o->only[i], s->sys_root);
    free(matched);
    if (rc == 0 && s->n == 0)
        rc = ft_err_set(err, -ENOENT, "no counters found under %s%s", s->sys_root,
                        o->with_snmp ? " or proc/net" : "");
    if (rc < 0) {
        counters_set_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void counters_set_close(struct counters_set *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++) {
        if (s->ents[i].fd >= 0)
            close(s->ents[i].fd);
        free(s->ents[i].path);
    }
    free(s->ents);
    free(s->vals);
    for (int d = 0; d < s->ndirs; d++)
        free(s->dirs[d].path);
    free(s->dirs);
    for (int i = 0; i < s->neth; i++) {
        counters_kernel_eth_close(&s->eths[i].e);
        free(s->eths[i].vals);
    }
    free(s->eths);
    free(s->qds);
    if (s->eth_sock >= 0)
        close(s->eth_sock);
    if (s->nl_fd >= 0)
        close(s->nl_fd);
    for (int f = 0; f < 2; f++)
        if (s->snmp[f].fd >= 0)
            close(s->snmp[f].fd);
    free(s->snmp_buf);
    for (int i = 0; i < s->nobjects; i++)
        free(s->objects[i]);
    for (int i = 0; i < s->nnotes; i++)
        free(s->notes[i]);
    free(s->objects);
    free(s->notes);
    free(s->scope);
    free(s);
}

/* ---- sets fed by the caller ---- */

struct counters_set *counters_set_new_fed(const char *scope)
{
    struct counters_set *s = xalloc_zero(1, sizeof(*s));
    snprintf(s->sys_root, sizeof(s->sys_root), "/");
    snprintf(s->proc_root, sizeof(s->proc_root), "/");
    s->period_slow_ns = 1000000000ull;
    s->eth_sock = s->nl_fd = -1;
    s->snmp[0].fd = s->snmp[1].fd = -1;
    s->scope = xalloc_strdup(scope ? scope : "");
    return s;
}

int counters_set_fed_add(struct counters_set *s, enum counters_source src, const char *provider,
                         const char *object, const char *name)
{
    return add_entry(s, src, provider, object, name, RD_FED, false);
}

void counters_set_fed_put(struct counters_set *s, int idx, uint64_t raw)
{
    if (idx < 0 || idx >= s->n || s->ents[idx].rd != RD_FED)
        return;
    s->ents[idx].raw = raw;
    s->ents[idx].negative = false;
    s->ents[idx].fed = true;
}

void counters_set_add_object(struct counters_set *s, const char *desc)
{
    add_str(&s->objects, &s->nobjects, desc);
}

void counters_set_add_note(struct counters_set *s, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    add_str(&s->notes, &s->nnotes, buf);
}

int counters_set_objects(const struct counters_set *s, const char *const **names)
{
    *names = (const char *const *)s->objects;
    return s->nobjects;
}

int counters_set_notes(const struct counters_set *s, const char *const **notes)
{
    *notes = (const char *const *)s->notes;
    return s->nnotes;
}

/* ---- JSON ---- */

bool counters_value_interesting(const struct counters_value *v)
{
    if (v->known || v->source == COUNTERS_SRC_IB || v->source == COUNTERS_SRC_HW ||
        v->source == COUNTERS_SRC_NETDEV || v->source == COUNTERS_SRC_QDISC ||
        v->source == COUNTERS_SRC_QP)
        return true;
    return ((v->valid & COUNTERS_V_RATE) && v->rate != 0) ||
           ((v->valid & COUNTERS_V_DELTA) && v->delta != 0);
}

static cJSON *value_json(const struct counters_value *v, bool deltas_only)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "source", counters_source_str(v->source));
    cJSON_AddStringToObject(o, "object", v->object);
    cJSON_AddStringToObject(o, "name", v->name);
    cJSON_AddStringToObject(o, "group", counters_group_str(v->group));
    cJSON_AddStringToObject(o, "kind", counters_kind_str(v->kind));
    cJSON_AddStringToObject(o, "unit", v->unit);
    if (v->kind == COUNTERS_COUNTER) {
        if (v->width)
            cJSON_AddNumberToObject(o, "width", v->width);
        else
            cJSON_AddNullToObject(o, "width");
        cJSON_AddStringToObject(o, "behaviour", counters_behaviour_str(v->behaviour));
    }
    cJSON_AddBoolToObject(o, "known", v->known);
    cJSON_AddBoolToObject(o, "error_like", v->error_like);
    if (!deltas_only) {
        if (v->valid & COUNTERS_V_VALUE)
            cJSON_AddNumberToObject(o, "value", v->value);
        else
            cJSON_AddNullToObject(o, "value");
    }
    if (v->kind == COUNTERS_GAUGE) {
        if (v->valid & COUNTERS_V_PEAK)
            cJSON_AddNumberToObject(o, "peak", v->peak);
        else
            cJSON_AddNullToObject(o, "peak");
        if (deltas_only) {
            if (v->valid & COUNTERS_V_VALUE)
                cJSON_AddNumberToObject(o, "last", v->value);
            else
                cJSON_AddNullToObject(o, "last");
        }
    } else {
        if (!deltas_only) {
            if (v->valid & COUNTERS_V_RATE)
                cJSON_AddNumberToObject(o, "rate", v->rate);
            else
                cJSON_AddNullToObject(o, "rate");
        }
        if (v->valid & COUNTERS_V_DELTA)
            cJSON_AddNumberToObject(o, "delta", v->delta);
        else
            cJSON_AddNullToObject(o, "delta");
        cJSON_AddBoolToObject(o, "saturated", v->saturated);
        cJSON_AddBoolToObject(o, "reset", deltas_only ? v->reset_since_mark : v->reset);
    }
    return o;
}

cJSON *counters_set_json(const struct counters_set *s, bool deltas_only)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < s->n; i++)
        cJSON_AddItemToArray(a, value_json(&s->vals[i], deltas_only));
    return a;
}

cJSON *counters_set_report_json(const struct counters_set *s, bool deltas_only)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "scope",
                            s->scope ? s->scope
                                     : "port-wide: these counters include all traffic on the "
                                       "ports and netdevs, not only the test's; snmp counters "
                                       "cover the whole network namespace");
    cJSON *ob = cJSON_AddArrayToObject(o, "objects");
    for (int i = 0; i < s->nobjects; i++)
        cJSON_AddItemToArray(ob, cJSON_CreateString(s->objects[i]));
    cJSON *nt = cJSON_AddArrayToObject(o, "notes");
    for (int i = 0; i < s->nnotes; i++)
        cJSON_AddItemToArray(nt, cJSON_CreateString(s->notes[i]));
    cJSON *a = cJSON_AddArrayToObject(o, "counters");
    for (int i = 0; i < s->n; i++)
        if (!deltas_only || counters_value_interesting(&s->vals[i]))
            cJSON_AddItemToArray(a, value_json(&s->vals[i], deltas_only));
    return o;
}

/* ---- attribution to a test ---- */

static bool in_list(char **l, int n, const char *x)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(l[i], x))
            return true;
    return false;
}

static void add_unique(char ***l, int *n, const char *x)
{
    if (x && *x && !in_list(*l, *n, x))
        add_str(l, n, x);
}

static void free_list(char **l, int n)
{
    for (int i = 0; i < n; i++)
        free(l[i]);
    free(l);
}

static int for_test(const struct counters_opts *base, const struct topo_model *m,
                    const char *const *netdevs, int nnetdevs, const char *const *rdma_ports,
                    int nports, char **pre_notes, int npre, struct counters_set **out,
                    struct ft_err *err)
{
    struct counters_opts o = {.with_snmp = true, .with_qdisc = true, .with_ethtool = true};
    if (base)
        o = *base;
    const char *sys = o.sys_root ? o.sys_root : "/";
    char **want = NULL, **missing = NULL;
    int nwant = 0, nmissing = 0;
    for (int i = 0; i < nnetdevs; i++)
        add_unique(&want, &nwant, netdevs[i]);
    for (int i = 0; i < nports; i++)
        add_unique(&want, &nwant, rdma_ports[i]);
    /* From the topology: the RDMA ports on those netdevs (RoCE), the netdevs of those ports. */
    for (int p = 0; m && p < m->nports; p++) {
        const struct topo_port *pt = &m->ports[p];
        if (pt->nic < 0 || pt->nic >= m->nnics || !m->nics[pt->nic].rdma_dev[0])
            continue;
        const char *dev = m->nics[pt->nic].rdma_dev;
        char pname[96];
        snprintf(pname, sizeof(pname), "%s:%d", dev, pt->num);
        const char *nd =
            pt->netdev >= 0 && pt->netdev < m->nnetdevs ? m->netdevs[pt->netdev].name : NULL;
        bool port_wanted = false;
        for (int i = 0; i < nports; i++)
            port_wanted |= !strcmp(rdma_ports[i], pname) || !strcmp(rdma_ports[i], dev);
        if (nd && in_list(want, nwant, nd))
            add_unique(&want, &nwant, pname);
        if (port_wanted && nd)
            add_unique(&want, &nwant, nd);
    }
    /* Keep what this root has; say what it lacks. */
    char **have = NULL;
    int nhave = 0;
    for (int i = 0; i < nwant; i++) {
        char dev[96], rel[256];
        snprintf(dev, sizeof(dev), "%s", want[i]);
        char *c = strpbrk(dev, ":/");
        if (c) {
            *c = '\0';
            snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/%s", dev, c + 1);
        } else {
            snprintf(rel, sizeof(rel), "sys/class/net/%s", dev);
            if (fsutil_exists(sys, rel) <= 0)
                snprintf(rel, sizeof(rel), "sys/class/infiniband/%s", dev);
        }
        if (fsutil_exists(sys, rel) > 0)
            add_unique(&have, &nhave, want[i]);
        else
            add_unique(&missing, &nmissing, want[i]);
    }
    int rc;
    if (nhave == 0 && !o.with_snmp) {
        rc = ft_err_set(err, -ENOENT, "no port or netdev of the test was found to watch");
    } else {
        o.only = (const char *const *)have;
        o.nonly = nhave;
        if (nhave == 0) {
            /* Nothing port-specific (a non-NULL empty list): the snmp counters only. */
            static const char *const none[] = {""};
            o.only = none;
            o.nonly = 0;
        }
        rc = counters_set_open(&o, out, err);
    }
    if (rc == 0) {
        for (int i = 0; i < npre; i++)
            note(*out, "%s", pre_notes[i]);
        for (int i = 0; i < nmissing; i++)
            note(*out, "%s: not found under %s; its counters are not watched", missing[i], sys);
    }
    free_list(want, nwant);
    free_list(have, nhave);
    free_list(missing, nmissing);
    return rc;
}

int counters_set_for_test(const struct counters_opts *base, const struct topo_model *m,
                          const char *const *netdevs, int nnetdevs, const char *const *rdma_ports,
                          int nports, struct counters_set **out, struct ft_err *err)
{
    return for_test(base, m, netdevs, nnetdevs, rdma_ports, nports, NULL, 0, out, err);
}

int counters_route_netdev(const char *peer_host, const char *local_ip, char *ifname, int len,
                          struct ft_err *err)
{
    if (local_ip && *local_ip) {
        int rc = counters_kernel_netdev_of_addr(local_ip, ifname, (size_t)len);
        return rc < 0 ? ft_err_set(err, rc, "no netdev holds the local address %s", local_ip) : 0;
    }
    if (!peer_host || !*peer_host || !strcmp(peer_host, "loopback")) {
        snprintf(ifname, (size_t)len, "lo");
        return 0;
    }
    /* HOST, HOST:PORT, [V6]:PORT or a bare IPv6 address. */
    char host[256];
    snprintf(host, sizeof(host), "%s", peer_host);
    if (host[0] == '[') {
        char *e = strchr(host, ']');
        if (e)
            *e = '\0';
        memmove(host, host + 1, strlen(host));
    } else {
        char *c = strchr(host, ':');
        if (c && !strchr(c + 1, ':'))
            *c = '\0';
    }
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *ai;
    int g = getaddrinfo(host, "9", &hints, &ai);
    if (g != 0)
        return ft_err_set(err, -EHOSTUNREACH, "%s: %s", host, gai_strerror(g));
    int rc = ft_err_set(err, -EHOSTUNREACH, "%s: no route to it from any local address", host);
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        int fd = socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        char ip[INET6_ADDRSTRLEN] = "";
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
            getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
            const void *ad = ss.ss_family == AF_INET
                                 ? (const void *)&((struct sockaddr_in *)&ss)->sin_addr
                                 : (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr;
            inet_ntop(ss.ss_family, ad, ip, sizeof(ip));
        }
        close(fd);
        if (ip[0] && counters_kernel_netdev_of_addr(ip, ifname, (size_t)len) == 0) {
            if (err && err->code == -EHOSTUNREACH)
                ft_err_clear(err);
            rc = 0;
            break;
        }
    }
    freeaddrinfo(ai);
    return rc;
}

int counters_set_for_mix(const struct mix *mix, const char *peer_override, counters_port_fn port_of,
                         const struct topo_model *m, struct counters_set **out, struct ft_err *err)
{
    /* Simulated flows touch nothing on this host: their counters are the simulated
     * fabric's (struct runner_snapshot.fabric). */
    if (mix_all_simulated(mix))
        return ft_err_set(err, -ENOENT,
                          "every flow is simulated: no host counters; the simulated fabric's "
                          "come with the run");
    char **nds = NULL, **ports = NULL, **notes = NULL;
    int nnd = 0, nports = 0, nnotes = 0;
    for (int i = 0; i < mix->nflows; i++) {
        const struct mix_flow *f = &mix->flows[i];
        bool by_route = !strcmp(f->transport, "tcp");
        /* No RDMA port named: the one the transport will choose (verbs: verbs_res_open's). */
        char rdma[96] = "", nd[64] = "";
        struct ft_err pe = {0};
        int prc =
            !f->local_rdma[0] && port_of ? port_of(f, rdma, sizeof(rdma), nd, sizeof(nd), &pe) : 1;
        if (prc != 1) {
            if (prc < 0) {
                char buf[600];
                snprintf(buf, sizeof(buf), "flow %s: RDMA port unknown (%s)", f->name, pe.msg);
                add_str(&notes, &nnotes, buf);
            } else {
                add_unique(&ports, &nports, rdma);
                if (!f->local_netdev[0])
                    add_unique(&nds, &nnd, nd);
                by_route = !rdma[0] && !nd[0];
            }
        }
        add_unique(&ports, &nports, f->local_rdma);
        if (f->local_netdev[0]) {
            add_unique(&nds, &nnd, f->local_netdev);
            continue;
        }
        if (!by_route)
            continue;
        const char *peer = f->peer;
        if (!strcmp(peer, "loopback") && peer_override)
            peer = peer_override;
        char ifn[64];
        struct ft_err e = {0};
        if (counters_route_netdev(peer, f->local_ip, ifn, sizeof(ifn), &e) == 0) {
            add_unique(&nds, &nnd, ifn);
        } else {
            char buf[600];
            snprintf(buf, sizeof(buf), "flow %s: netdev unknown (%s)", f->name, e.msg);
            add_str(&notes, &nnotes, buf);
        }
    }
    int rc = for_test(NULL, m, (const char *const *)nds, nnd, (const char *const *)ports, nports,
                      notes, nnotes, out, err);
    free_list(nds, nnd);
    free_list(ports, nports);
    free_list(notes, nnotes);
    return rc;
}
