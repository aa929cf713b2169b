/* counters: counter sets: files kept open and read with pread (or fed by the caller), and
 * the arithmetic that turns raw readings into values, rates and deltas with each counter's
 * real semantics (counters_sem.c): saturation, wrap at the counter's width, resets, gauges,
 * n/a; the JSON of a set. Opening a set (discovery under a sys/proc root, or live over
 * netlink and ethtool) is in counters_discover.c, the counters of a test in counters_attrib.c. */
#include "engine/counters/counters_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* How an entry is read (RD_FED: the caller supplies each reading, counters_set_fed_put). */

/* qdisc fields, in the order entries are made. */
const char *const counters_qf_names[QF_N] = {"bytes",    "packets", "drops", "overlimits",
                                             "requeues", "backlog", "qlen"};

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

void counters_add_str(char ***list, int *n, const char *text)
{
    *list = xalloc_resize(*list, (size_t)(*n + 1) * sizeof(**list));
    (*list)[(*n)++] = xalloc_strdup(text);
}

void counters_note(struct counters_set *s, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    counters_add_str(&s->notes, &s->nnotes, buf);
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

int counters_add_entry(struct counters_set *s, enum counters_source src, const char *provider,
                       const char *object, const char *name, enum rd_kind rd, bool slow)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->ents = xalloc_resize(s->ents, (size_t)s->cap * sizeof(*s->ents));
        s->vals = xalloc_resize(s->vals, (size_t)s->cap * sizeof(*s->vals));
    }
    struct counters_ent *e = &s->ents[s->n];
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
int counters_add_dir(struct counters_set *s, enum counters_source src, const char *provider,
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
        int k = counters_add_entry(s, src, provider, object, names[i], RD_FILE, slow);
        struct counters_ent *e = &s->ents[k];
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

static void update(struct counters_ent *e, struct counters_value *v, uint64_t now)
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

static void read_file(struct counters_set *s, struct counters_ent *e)
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
        struct counters_eth *x = &s->eths[i];
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

static bool qd_field(const struct counters_qd *q, int f, uint64_t *v)
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
ssize_t counters_read_snmp_file(struct counters_set *s, int f)
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
void counters_snmp_walk(char *text,
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

void counters_snmp_open_cb(const char *pfx, const char *name, int pos, const char *val, void *arg)
{
    struct counters_snmp_ctx *c = arg;
    (void)val;
    int k = counters_add_entry(c->s, COUNTERS_SRC_SNMP, pfx, pfx, name, RD_SNMP, false);
    c->s->ents[k].aux = c->file;
    c->s->ents[k].aux2 = pos;
}

static bool snmp_is(const struct counters_set *s, int i, const char *pfx, const char *name)
{
    return !strcmp(s->vals[i].name, name) && !strcmp(s->vals[i].object, pfx);
}

static void snmp_read_cb(const char *pfx, const char *name, int pos, const char *val, void *arg)
{
    struct counters_snmp_ctx *c = arg;
    struct counters_set *s = c->s;
    const struct counters_snmp_file *f = &s->snmp[c->file];
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
        if (counters_read_snmp_file(s, f) < 0)
            continue;
        struct counters_snmp_ctx c = {s, f};
        counters_snmp_walk(s->snmp_buf, snmp_read_cb, &c);
    }
    int good = 0;
    for (int i = 0; i < s->n; i++) {
        struct counters_ent *e = &s->ents[i];
        if (e->slow && !slow_due) {
            good += (s->vals[i].valid & COUNTERS_V_VALUE) != 0;
            continue;
        }
        switch (e->rd) {
        case RD_FILE:
            read_file(s, e);
            break;
        case RD_ETH: {
            struct counters_eth *x = &s->eths[e->aux];
            if (x->rc == 1) { /* slow, not due */
                good += (s->vals[i].valid & COUNTERS_V_VALUE) != 0;
                continue;
            }
            e->read_ok = x->rc == 0;
            e->raw = e->read_ok ? x->vals[e->aux2] : 0;
            break;
        }
        case RD_QDISC: {
            struct counters_qd *q = &s->qds[e->aux];
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
        struct counters_ent *e = &s->ents[i];
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
    return counters_add_entry(s, src, provider, object, name, RD_FED, false);
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
    counters_add_str(&s->objects, &s->nobjects, desc);
}

void counters_set_add_note(struct counters_set *s, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    counters_add_str(&s->notes, &s->nnotes, buf);
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
