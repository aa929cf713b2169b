/* compare: two results documents side by side: the conditions that decide whether the
 * comparison is fair (each with its weight and why it matters), then every flow and size
 * point with p50/p99/p99.9 in microseconds, goodput in Gb/s and B/A ratios. */
#include "engine/results/compare.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/results/results.h"

/* Neighbour throughputs within this factor of each other count as the same load. */
#define NEIGHBOUR_TOLERANCE 1.25

#define NA "n/a"

static const char *const sev_names[] = {"same", "info", "caution", "unfair"};

const char *compare_severity_str(enum compare_severity s)
{
    return s >= COMPARE_SAME && s <= COMPARE_UNFAIR ? sev_names[s] : "?";
}

const char *compare_metric_str(int m)
{
    static const char *const names[] = {"p50 us", "p99 us", "p99.9 us", "Gb/s"};
    return m >= 0 && m < COMPARE_NMETRICS ? names[m] : "?";
}

/* ---- building the lists ---- */

struct builder {
    struct compare_result *r;
    int ccap, rcap;
};

/* Copy a value for display: tabs and newlines become spaces, NULL becomes n/a. */
static void copy_val(char *dst, size_t len, const char *s)
{
    snprintf(dst, len, "%s", s ? s : NA);
    for (char *p = dst; *p; p++)
        if (*p == '\t' || *p == '\n')
            *p = ' ';
}

/* Add a condition whose sameness is decided by the caller. */
static struct compare_cond *add_cond_same(struct builder *b, const char *group, const char *field,
                                          const char *va, const char *vb, bool same,
                                          enum compare_severity weight, const char *why)
{
    struct compare_result *r = b->r;
    if (r->nconds == b->ccap) {
        b->ccap = b->ccap ? 2 * b->ccap : 64;
        r->conds = xalloc_resize(r->conds, (size_t)b->ccap * sizeof(*r->conds));
    }
    struct compare_cond *c = &r->conds[r->nconds++];
    memset(c, 0, sizeof(*c));
    snprintf(c->group, sizeof(c->group), "%s", group);
    snprintf(c->field, sizeof(c->field), "%s", field);
    copy_val(c->a, sizeof(c->a), va);
    copy_val(c->b, sizeof(c->b), vb);
    c->same = same;
    c->weight = weight;
    c->why = why;
    if (same) {
        c->severity = COMPARE_SAME;
    } else {
        /* Unknown on one side is not proof of a difference: at most a caution. */
        bool one_unknown = !va || !vb || !strcmp(c->a, NA) || !strcmp(c->b, NA);
        c->severity = one_unknown && weight > COMPARE_CAUTION ? COMPARE_CAUTION : weight;
        r->ndiff[c->severity]++;
        if (c->severity > r->worst)
            r->worst = c->severity;
    }
    return c;
}

static struct compare_cond *add_cond(struct builder *b, const char *group, const char *field,
                                     const char *va, const char *vb, enum compare_severity weight,
                                     const char *why)
{
    const char *x = va ? va : NA, *y = vb ? vb : NA;
    return add_cond_same(b, group, field, va, vb, !strcmp(x, y), weight, why);
}

static struct compare_row *add_row(struct builder *b)
{
    struct compare_result *r = b->r;
    if (r->nrows == b->rcap) {
        b->rcap = b->rcap ? 2 * b->rcap : 32;
        r->rows = xalloc_resize(r->rows, (size_t)b->rcap * sizeof(*r->rows));
    }
    struct compare_row *w = &r->rows[r->nrows++];
    memset(w, 0, sizeof(*w));
    return w;
}

/* ---- rendering values ---- */

static void bytes_text(double v, char *buf, size_t len)
{
    int64_t b;
    if (!jsonutil_whole(v, 0, INT64_MAX, &b)) /* results_load refuses such sizes */
        snprintf(buf, len, NA);
    else if (b >= 1048576 && b % 1048576 == 0)
        snprintf(buf, len, "%lldMiB", (long long)(b / 1048576));
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%lldKiB", (long long)(b / 1024));
    else
        snprintf(buf, len, "%lldB", (long long)b);
}

/* A mix size: a number, {"sweep": {from, to, factor}} or {"dist": [[size, weight], ...]}. */
static void size_text(const cJSON *s, char *buf, size_t len)
{
    char x[24], y[24];
    if (cJSON_IsNumber(s)) {
        bytes_text(s->valuedouble, buf, len);
        return;
    }
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(s, "sweep");
    double from, to, f;
    if (sw && jsonutil_num(sw, "from", &from) && jsonutil_num(sw, "to", &to)) {
        bytes_text(from, x, sizeof(x));
        bytes_text(to, y, sizeof(y));
        if (jsonutil_num(sw, "factor", &f))
            snprintf(buf, len, "%s..%s x%g", x, y, f);
        else
            snprintf(buf, len, "%s..%s", x, y);
        return;
    }
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(s, "dist");
    if (cJSON_IsArray(d)) {
        struct strbuf sb;
        strbuf_init(&sb);
        const cJSON *pair;
        cJSON_ArrayForEach(pair, d)
        {
            const cJSON *sz = cJSON_GetArrayItem(pair, 0), *w = cJSON_GetArrayItem(pair, 1);
            bytes_text(cJSON_IsNumber(sz) ? sz->valuedouble : -1, x, sizeof(x));
            strbuf_printf(&sb, "%s%s:%g", sb.len ? " " : "", x,
                          cJSON_IsNumber(w) ? w->valuedouble : 0);
        }
        snprintf(buf, len, "%s", sb.s);
        strbuf_free(&sb);
        return;
    }
    snprintf(buf, len, NA);
}

/* Whole numbers in full (buffer sizes), others in %g. */
static void num_fmt(double v, const char *unit, char *buf, size_t len)
{
    int64_t i;
    if (jsonutil_whole(v, -999999999999999LL, 999999999999999LL, &i))
        snprintf(buf, len, "%lld%s", (long long)i, unit);
    else
        snprintf(buf, len, "%g%s", v, unit);
}

/* Any JSON value as text; numbers get the unit their key's suffix names. */
static void value_text(const char *key, const cJSON *v, char *buf, size_t len)
{
    if (!v || cJSON_IsNull(v)) {
        snprintf(buf, len, NA);
    } else if (cJSON_IsString(v)) {
        snprintf(buf, len, "%s", v->valuestring);
    } else if (cJSON_IsBool(v)) {
        snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "yes" : "no");
    } else if (cJSON_IsNumber(v)) {
        static const struct {
            const char *suffix, *unit;
        } units[] = {{"_bytes", " bytes"}, {"_ms", " ms"},     {"_us", " us"},
                     {"_s", " s"},         {"_gbps", " Gb/s"}, {"_mbps", " Mb/s"}};
        const char *unit = "";
        size_t kl = key ? strlen(key) : 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t sl = strlen(units[i].suffix);
            if (kl > sl && !strcmp(key + kl - sl, units[i].suffix)) {
                unit = units[i].unit;
                break;
            }
        }
        num_fmt(v->valuedouble, unit, buf, len);
    } else {
        char *t = cJSON_PrintUnformatted(v);
        snprintf(buf, len, "%s", t ? t : "?");
        cJSON_free(t);
    }
}

static const char *num_text(const cJSON *o, const char *key, const char *unit, char *buf,
                            size_t len)
{
    double v;
    if (!jsonutil_num(o, key, &v))
        return NULL;
    num_fmt(v, unit, buf, len);
    return buf;
}

/* "loopback agent 127.0.0.1:46691": the in-process agent's port changes every run. */
static void peer_text(const char *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s", p ? p : NA);
    if (p && !strncmp(p, "loopback agent", 14)) {
        char *colon = strrchr(buf, ':');
        if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1))
            *colon = '\0';
    }
}

/* ---- run, hosts, versions, host conditions ---- */

static bool uses_transport(const cJSON *doc, const char *t)
{
    const cJSON *f;
    cJSON_ArrayForEach(
        f, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "mix"), "flows"))
    {
        const char *x = jsonutil_str(f, "transport");
        if (x && !strcmp(x, t))
            return true;
    }
    return false;
}

static void phases_text(const cJSON *doc, char *buf, size_t len)
{
    struct strbuf sb;
    strbuf_init(&sb);
    const cJSON *ph;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(doc, "phases"))
    {
        const char *n = jsonutil_str(ph, "name");
        strbuf_printf(&sb, "%s%s", sb.len ? ", " : "", n ? n : "?");
    }
    snprintf(buf, len, "%s", sb.len ? sb.s : "none");
    strbuf_free(&sb);
}

static void compare_run(struct builder *b, const cJSON *A, const cJSON *B)
{
    char x[128], y[128];
    const cJSON *ma = cJSON_GetObjectItemCaseSensitive(A, "mix"),
                *mb = cJSON_GetObjectItemCaseSensitive(B, "mix");
    add_cond(b, "run", "mix", jsonutil_str(ma, "name"), jsonutil_str(mb, "name"), COMPARE_INFO,
             "a name only; the flows below say what was run");
    phases_text(A, x, sizeof(x));
    phases_text(B, y, sizeof(y));
    add_cond(b, "run", "phases", x, y, COMPARE_CAUTION,
             "compare phase with phase: a quiet phase has no neighbours, a loaded one has");
    add_cond(b, "run", "interrupted",
             cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(A, "interrupted")) ? "yes" : "no",
             cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(B, "interrupted")) ? "yes" : "no",
             COMPARE_UNFAIR, "an interrupted run holds partial points measured for less time");

    const cJSON *ha = cJSON_GetObjectItemCaseSensitive(A, "hosts"),
                *hb = cJSON_GetObjectItemCaseSensitive(B, "hosts");
    add_cond(b, "hosts", "local host", jsonutil_str(ha, "local"), jsonutil_str(hb, "local"),
             COMPARE_CAUTION,
             "another machine has its own PCIe placement, CPUs and NUMA layout; say which "
             "one is under test");
    const cJSON *pa = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ha, "peers"), 0),
                *pb = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(hb, "peers"), 0);
    peer_text(cJSON_IsString(pa) ? pa->valuestring : NULL, x, sizeof(x));
    peer_text(cJSON_IsString(pb) ? pb->valuestring : NULL, y, sizeof(y));
    add_cond(b, "hosts", "peer", x, y, COMPARE_CAUTION,
             "another peer means another path: its NIC, switch ports and distance");

    /* Versions: the union of both documents' keys. */
    const cJSON *va = cJSON_GetObjectItemCaseSensitive(A, "versions"),
                *vb = cJSON_GetObjectItemCaseSensitive(B, "versions");
    const cJSON *v;
    for (int pass = 0; pass < 2; pass++)
        cJSON_ArrayForEach(v, (pass ? vb : va))
        {
            if (pass && cJSON_GetObjectItemCaseSensitive(va, v->string))
                continue;
            bool kernel = !strcmp(v->string, "kernel"), self = !strcmp(v->string, "fabtop");
            add_cond(b, "versions", v->string, jsonutil_str(va, v->string),
                     jsonutil_str(vb, v->string), kernel || self ? COMPARE_CAUTION : COMPARE_INFO,
                     kernel ? "the kernel's network stack, drivers and RDMA core change "
                              "latency and throughput"
                     : self ? "another fabtop may measure differently (see its changelog)"
                            : "a library version; it seldom changes the numbers");
        }

    const cJSON *ca = cJSON_GetObjectItemCaseSensitive(A, "conditions"),
                *cb = cJSON_GetObjectItemCaseSensitive(B, "conditions");
    bool tcp = uses_transport(A, "tcp") || uses_transport(B, "tcp");
    add_cond(b, "host", "TCP congestion control", jsonutil_str(ca, "tcp_congestion_control"),
             jsonutil_str(cb, "tcp_congestion_control"), tcp ? COMPARE_UNFAIR : COMPARE_INFO,
             "congestion control decides how queues build under load (bbr and cubic differ "
             "most in the loaded tail)");
    add_cond(b, "host", "TCP ECN", jsonutil_str(ca, "tcp_ecn"), jsonutil_str(cb, "tcp_ecn"),
             tcp ? COMPARE_CAUTION : COMPARE_INFO,
             "with ECN the switch marks instead of dropping: fewer retransmissions under load");
    add_cond(b, "host", "tcp_rmem (bytes)", jsonutil_str(ca, "tcp_rmem"),
             jsonutil_str(cb, "tcp_rmem"), tcp ? COMPARE_CAUTION : COMPARE_INFO,
             "socket buffer limits bound the bytes in flight, hence stream throughput");
    add_cond(b, "host", "tcp_wmem (bytes)", jsonutil_str(ca, "tcp_wmem"),
             jsonutil_str(cb, "tcp_wmem"), tcp ? COMPARE_CAUTION : COMPARE_INFO,
             "socket buffer limits bound the bytes in flight, hence stream throughput");
}

/* ---- the topology of the ports used ---- */

#define MAX_NAMES 16
#define MAX_PORTS 64

struct endpoints {
    int n;
    char name[MAX_NAMES][48]; /* netdev names and "rdma_dev[:port]" */
};

static void endpoints_add(struct endpoints *e, const char *s)
{
    if (!s || !*s || e->n == MAX_NAMES)
        return;
    for (int i = 0; i < e->n; i++)
        if (!strcmp(e->name[i], s))
            return;
    snprintf(e->name[e->n++], sizeof(e->name[0]), "%s", s);
}

/* The local endpoints the flows named (mix) or used (the flows' recorded conditions). */
static void endpoints_of(const cJSON *doc, struct endpoints *rdma, struct endpoints *net)
{
    memset(rdma, 0, sizeof(*rdma));
    memset(net, 0, sizeof(*net));
    const cJSON *f;
    cJSON_ArrayForEach(
        f, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "mix"), "flows"))
    {
        const cJSON *lo = cJSON_GetObjectItemCaseSensitive(f, "local");
        endpoints_add(rdma, jsonutil_str(lo, "rdma"));
        endpoints_add(net, jsonutil_str(lo, "netdev"));
    }
    const cJSON *ph;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(doc, "phases"))
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(ph, "flows"))
    {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(f, "conditions");
        endpoints_add(net, jsonutil_str(c, "local_netdev"));
        endpoints_add(rdma, jsonutil_str(c, "local_rdma"));
    }
}

static const cJSON *topo_item(const cJSON *doc, const char *array, const cJSON *idx)
{
    if (!cJSON_IsNumber(idx) || idx->valueint < 0)
        return NULL;
    const cJSON *topo = cJSON_GetObjectItemCaseSensitive(doc, "topology");
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(topo, array), idx->valueint);
}

/* Indices of the ports used: those the flows name, or every port when none is named. */
static int used_ports(const cJSON *doc, int *out, bool *all)
{
    struct endpoints rdma, net;
    endpoints_of(doc, &rdma, &net);
    *all = rdma.n == 0 && net.n == 0;
    const cJSON *ports = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "topology"), "ports");
    int n = 0, i = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, ports)
    {
        int idx = i++;
        if (n == MAX_PORTS)
            break;
        if (*all) {
            out[n++] = idx;
            continue;
        }
        const cJSON *nic = topo_item(doc, "nics", cJSON_GetObjectItemCaseSensitive(p, "nic"));
        const cJSON *nd = topo_item(doc, "netdevs", cJSON_GetObjectItemCaseSensitive(p, "netdev"));
        const char *dev = jsonutil_str(nic, "rdma_dev"), *ndn = jsonutil_str(nd, "name");
        int64_t num = 1;
        jsonutil_int_in(p, "num", 0, 255, &num);
        bool hit = false;
        for (int k = 0; k < rdma.n && !hit; k++) {
            char want[48];
            snprintf(want, sizeof(want), "%s", rdma.name[k]);
            char *colon = strchr(want, ':');
            int wport = colon ? atoi(colon + 1) : 0;
            if (colon)
                *colon = '\0';
            hit = dev && !strcmp(dev, want) && (!wport || wport == (int)num);
        }
        for (int k = 0; k < net.n && !hit; k++)
            hit = ndn && !strcmp(ndn, net.name[k]);
        if (hit)
            out[n++] = idx;
    }
    return n;
}

static void port_name(const cJSON *doc, const cJSON *p, char *buf, size_t len)
{
    const cJSON *nic = topo_item(doc, "nics", cJSON_GetObjectItemCaseSensitive(p, "nic"));
    const char *dev = jsonutil_str(nic, "rdma_dev");
    int64_t num = 1;
    jsonutil_int_in(p, "num", 0, 255, &num);
    snprintf(buf, len, "%s/%d", dev && *dev ? dev : "?", (int)num);
}

/* The GID types a port offers ("RoCE v2", "RoCE v1+RoCE v2", "IB"). */
static void gid_types_text(const cJSON *p, char *buf, size_t len)
{
    const cJSON *gids = cJSON_GetObjectItemCaseSensitive(p, "gids");
    if (!cJSON_IsArray(gids)) {
        snprintf(buf, len, NA);
        return;
    }
    static const char *const types[] = {"IB", "RoCE v1", "RoCE v2"};
    bool seen[3] = {false, false, false}, any = false;
    const cJSON *g;
    cJSON_ArrayForEach(g, gids)
    {
        const char *t = jsonutil_str(g, "type");
        for (int k = 0; t && k < 3; k++)
            if (!strcmp(t, types[k]))
                seen[k] = any = true;
    }
    buf[0] = '\0';
    for (int k = 0; k < 3; k++)
        if (seen[k])
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "+" : "", types[k]);
    if (!any)
        snprintf(buf, len, cJSON_GetArraySize(gids) ? "types unknown" : "no GIDs");
}

struct port_facts {
    char ll[24], state[24], rate[40], mtu[24], fw[64], model[64], gid[40];
};

static void port_facts(const cJSON *doc, const cJSON *p, struct port_facts *f)
{
    const cJSON *nic = topo_item(doc, "nics", cJSON_GetObjectItemCaseSensitive(p, "nic"));
    const cJSON *ad = topo_item(doc, "adapters", cJSON_GetObjectItemCaseSensitive(nic, "adapter"));
    copy_val(f->ll, sizeof(f->ll), jsonutil_str(p, "link_layer"));
    copy_val(f->state, sizeof(f->state), jsonutil_str(p, "state"));
    double v;
    if (jsonutil_num(p, "rate_gbps", &v)) {
        const char *sp = jsonutil_str(p, "speed");
        snprintf(f->rate, sizeof(f->rate), "%g Gb/s%s%s%s", v, sp && *sp ? " (" : "",
                 sp && *sp ? sp : "", sp && *sp ? ")" : "");
    } else {
        snprintf(f->rate, sizeof(f->rate), NA);
    }
    if (jsonutil_num(p, "active_mtu", &v))
        snprintf(f->mtu, sizeof(f->mtu), "%g bytes", v);
    else
        snprintf(f->mtu, sizeof(f->mtu), NA);
    const char *fw = jsonutil_str(nic, "fw_ver");
    copy_val(f->fw, sizeof(f->fw), fw && *fw ? fw : NULL);
    const char *model = jsonutil_str(ad, "model");
    copy_val(f->model, sizeof(f->model), model && *model ? model : NULL);
    gid_types_text(p, f->gid, sizeof(f->gid));
}

static void compare_ports(struct builder *b, const cJSON *A, const cJSON *B)
{
    int ia[MAX_PORTS], ib[MAX_PORTS];
    bool alla, allb;
    int na = used_ports(A, ia, &alla), nb = used_ports(B, ib, &allb);
    char x[64], y[64];
    snprintf(x, sizeof(x), "%d%s", na, alla ? " (none named: all)" : "");
    snprintf(y, sizeof(y), "%d%s", nb, allb ? " (none named: all)" : "");
    add_cond_same(b, "ports", "RDMA ports used", x, y, na == nb, COMPARE_CAUTION,
                  "a path with RDMA ports on one side only is a different fabric");
    const cJSON *pa_arr = cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(A, "topology"), "ports"),
                *pb_arr = cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(B, "topology"), "ports");
    int n = na > nb ? na : nb;
    for (int k = 0; k < n; k++) {
        const cJSON *pa = k < na ? cJSON_GetArrayItem(pa_arr, ia[k]) : NULL,
                    *pb = k < nb ? cJSON_GetArrayItem(pb_arr, ib[k]) : NULL;
        char an[40] = "none", bn[40] = "none", group[40];
        if (pa)
            port_name(A, pa, an, sizeof(an));
        if (pb)
            port_name(B, pb, bn, sizeof(bn));
        if (!strcmp(an, bn))
            snprintf(group, sizeof(group), "port %s", an);
        else
            snprintf(group, sizeof(group), "port %s|%s", an, bn);
        struct port_facts fa, fb;
        memset(&fa, 0, sizeof(fa));
        memset(&fb, 0, sizeof(fb));
        if (pa)
            port_facts(A, pa, &fa);
        if (pb)
            port_facts(B, pb, &fb);
        const char *absent = "absent";
#define SIDE(f, field) ((f) ? (field) : absent)
        add_cond(b, group, "link layer", SIDE(pa, fa.ll), SIDE(pb, fb.ll), COMPARE_UNFAIR,
                 "InfiniBand and Ethernet (RoCE) differ in switches, congestion control and "
                 "loss handling: another fabric, not a setting");
        add_cond(b, group, "state", SIDE(pa, fa.state), SIDE(pb, fb.state), COMPARE_UNFAIR,
                 "a port that is not ACTIVE carries nothing; traffic took another path");
        add_cond(b, group, "rate", SIDE(pa, fa.rate), SIDE(pb, fb.rate), COMPARE_UNFAIR,
                 "the signalling rate caps throughput and sets serialisation delay");
        add_cond(b, group, "active MTU", SIDE(pa, fa.mtu), SIDE(pb, fb.mtu), COMPARE_UNFAIR,
                 "a smaller MTU cuts each message into more packets: more headers and "
                 "per-packet work, lower throughput, other latency");
        add_cond(b, group, "GID types", SIDE(pa, fa.gid), SIDE(pb, fb.gid), COMPARE_UNFAIR,
                 "RoCE v1 stays in one L2 domain; RoCE v2 is routed UDP/IP with ECN: "
                 "different congestion behaviour");
        add_cond(b, group, "adapter", SIDE(pa, fa.model), SIDE(pb, fb.model), COMPARE_UNFAIR,
                 "another adapter has other pipelines, offloads and congestion control");
        add_cond(b, group, "firmware", SIDE(pa, fa.fw), SIDE(pb, fb.fw), COMPARE_CAUTION,
                 "firmware changes congestion control (DCQCN), timers and offloads; compare "
                 "on one version unless it is what is tested");
#undef SIDE
    }
}

/* Netdev MTUs: of the netdevs the flows name, else of every netdev that is up. */
static bool netdev_up(const cJSON *doc, const char *name)
{
    const cJSON *nd;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "topology"), "netdevs");
    if (!cJSON_IsArray(list))
        return true; /* no topology: cannot tell, keep it */
    cJSON_ArrayForEach(nd, list)
    {
        const char *n = jsonutil_str(nd, "name"), *op = jsonutil_str(nd, "operstate");
        if (n && !strcmp(n, name))
            return !op || !strcmp(op, "up") || !strcmp(op, "unknown");
    }
    return false;
}

static void compare_netdevs(struct builder *b, const cJSON *A, const cJSON *B)
{
    struct endpoints ra, na, rb, nb, names = {0};
    endpoints_of(A, &ra, &na);
    endpoints_of(B, &rb, &nb);
    for (int i = 0; i < na.n; i++)
        endpoints_add(&names, na.name[i]);
    for (int i = 0; i < nb.n; i++)
        endpoints_add(&names, nb.name[i]);
    bool named = names.n > 0;
    const cJSON *ma = cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(A, "conditions"), "netdev_mtu"),
                *mb = cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(B, "conditions"), "netdev_mtu");
    if (!named) {
        const cJSON *e;
        for (int pass = 0; pass < 2; pass++)
            cJSON_ArrayForEach(e, (pass ? mb : ma))
            {
                if (netdev_up(A, e->string) || netdev_up(B, e->string))
                    endpoints_add(&names, e->string);
            }
    }
    for (int i = 0; i < names.n; i++) {
        char group[48], x[32], y[32];
        snprintf(group, sizeof(group), "netdev %s", names.name[i]);
        add_cond(b, group, "MTU", num_text(ma, names.name[i], " bytes", x, sizeof(x)),
                 num_text(mb, names.name[i], " bytes", y, sizeof(y)),
                 named ? COMPARE_UNFAIR : COMPARE_CAUTION,
                 named ? "the netdev MTU sets TCP's segment size (and RoCE's ceiling): more "
                         "packets per message when smaller"
                       : "no flow names a netdev and this one is up, so it may carry the "
                         "traffic; its MTU sets TCP's segment size");
    }
}

/* ---- flows: pairing and their parameters ---- */

struct pair {
    const cJSON *a, *b; /* mix flows; one may be NULL */
};

static bool is_fg(const cJSON *f)
{
    const char *r = jsonutil_str(f, "role");
    return r && !strcmp(r, "foreground");
}

/* Same name first, then foregrounds with foregrounds and neighbours with neighbours in
 * order; the rest stand alone. */
static int pair_flows(const cJSON *A, const cJSON *B, struct pair *out, int max)
{
    const cJSON *fa = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(A, "mix"),
                                                       "flows"),
                *fb = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(B, "mix"),
                                                       "flows");
    int na = cJSON_GetArraySize(fa), nb = cJSON_GetArraySize(fb), n = 0;
    bool *used_a = xalloc_zero((size_t)na + 1, 1), *used_b = xalloc_zero((size_t)nb + 1, 1);
    for (int i = 0; i < na && n < max; i++) {
        const cJSON *x = cJSON_GetArrayItem(fa, i);
        const char *name = jsonutil_str(x, "name");
        for (int k = 0; name && k < nb; k++) {
            const cJSON *y = cJSON_GetArrayItem(fb, k);
            const char *nm = jsonutil_str(y, "name");
            if (!used_b[k] && nm && !strcmp(name, nm)) {
                used_a[i] = used_b[k] = true;
                out[n++] = (struct pair){x, y};
                break;
            }
        }
    }
    for (int fg = 1; fg >= 0; fg--)
        for (int i = 0; i < na && n < max; i++) {
            const cJSON *x = cJSON_GetArrayItem(fa, i);
            if (used_a[i] || is_fg(x) != fg)
                continue;
            for (int k = 0; k < nb; k++) {
                const cJSON *y = cJSON_GetArrayItem(fb, k);
                if (!used_b[k] && is_fg(y) == fg) {
                    used_a[i] = used_b[k] = true;
                    out[n++] = (struct pair){x, y};
                    break;
                }
            }
        }
    for (int i = 0; i < na && n < max; i++)
        if (!used_a[i])
            out[n++] = (struct pair){cJSON_GetArrayItem(fa, i), NULL};
    for (int k = 0; k < nb && n < max; k++)
        if (!used_b[k])
            out[n++] = (struct pair){NULL, cJSON_GetArrayItem(fb, k)};
    free(used_a);
    free(used_b);
    return n;
}

static void pair_label(const struct pair *p, char *buf, size_t len)
{
    const char *x = p->a ? jsonutil_str(p->a, "name") : NULL,
               *y = p->b ? jsonutil_str(p->b, "name") : NULL;
    if (x && y && strcmp(x, y))
        snprintf(buf, len, "%s|%s", x, y);
    else
        snprintf(buf, len, "%s", x ? x : y ? y : "?");
}

/* The flow of that name in the results' phases: the last phase it ran in. */
static const cJSON *result_flow(const cJSON *doc, const char *phase, const char *name)
{
    const cJSON *ph, *f, *found = NULL;
    if (!name)
        return NULL;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(doc, "phases"))
    {
        const char *pn = jsonutil_str(ph, "name");
        if (phase && (!pn || strcmp(pn, phase)))
            continue;
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(ph, "flows"))
        {
            const char *n = jsonutil_str(f, "name");
            if (n && !strcmp(n, name))
                found = f;
        }
    }
    return found;
}

/* The worst status of a flow over the phases it ran in. */
static const char *flow_status(const cJSON *doc, const char *name)
{
    static const char *const order[] = {"ok", "not run", "running", "stopped", "failed"};
    int worst = -1;
    const cJSON *ph, *f;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(doc, "phases"))
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(ph, "flows"))
    {
        const char *n = jsonutil_str(f, "name"), *s = jsonutil_str(f, "status");
        if (!n || !name || strcmp(n, name) || !s)
            continue;
        for (int k = 0; k < 5; k++)
            if (!strcmp(s, order[k]) && k > worst)
                worst = k;
    }
    return worst < 0 ? NULL : order[worst];
}

static void endpoint_text(const cJSON *f, char *buf, size_t len)
{
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(f, "local");
    struct strbuf sb;
    strbuf_init(&sb);
    static const char *const keys[] = {"ip", "netdev", "rdma"};
    for (int k = 0; k < 3; k++) {
        const char *v = jsonutil_str(lo, keys[k]);
        if (v && *v)
            strbuf_printf(&sb, "%s%s %s", sb.len ? ", " : "", keys[k], v);
    }
    double g;
    if (jsonutil_num(lo, "gpu", &g))
        strbuf_printf(&sb, "%sGPU%g", sb.len ? ", " : "", g);
    snprintf(buf, len, "%s", sb.len ? sb.s : "default route");
    strbuf_free(&sb);
}

static void measure_text(const cJSON *f, char *buf, size_t len)
{
    double d = 0, it = 0;
    jsonutil_num(f, "duration_s", &d);
    jsonutil_num(f, "iterations", &it);
    if (d > 0)
        snprintf(buf, len, "%g s per size", d);
    else if (it > 0)
        snprintf(buf, len, "%g operations per size", it);
    else
        snprintf(buf, len, "as long as the phase");
}

/* Recorded per-flow conditions (transport specific), known keys with their weight. */
static const struct {
    const char *key, *label;
    enum compare_severity weight;
    const char *why;
} flow_keys[] = {
    {"congestion_control", "congestion control", COMPARE_UNFAIR,
     "congestion control decides how queues build under load"},
    {"mss_bytes", "TCP MSS", COMPARE_CAUTION,
     "the segment size follows the path MTU: more segments per message when smaller"},
    {"so_sndbuf_bytes", "send buffer", COMPARE_CAUTION,
     "socket buffers bound the bytes in flight: throughput, and queueing on short paths"},
    {"so_rcvbuf_bytes", "receive buffer", COMPARE_CAUTION,
     "socket buffers bound the bytes in flight: throughput, and queueing on short paths"},
    {"tcp_nodelay", "TCP_NODELAY", COMPARE_CAUTION, "Nagle's algorithm holds back small messages"},
    {"local_address", "local address", COMPARE_CAUTION,
     "another address can mean another interface and path"},
    {"peer_address", "peer address", COMPARE_CAUTION,
     "another address can mean another interface and path"},
    {"worker_cpus", "worker CPUs", COMPARE_CAUTION,
     "workers pinned near the NIC avoid cross-socket hops; unpinned ones wander"},
    {"tcp_user_timeout_ms", "TCP user timeout", COMPARE_INFO,
     "how fast a dead peer is detected; not a speed"},
    /* verbs (xport_verbs.c, verbs_res.c) */
    {"verb", "RDMA operation", COMPARE_UNFAIR, "WRITE, SEND and READ take different paths"},
    {"latency_method", "latency method", COMPARE_UNFAIR,
     "polling memory, completions and round trips time different things"},
    {"memory", "buffer memory", COMPARE_UNFAIR,
     "GPU memory adds PCIe peer traffic to every message"},
    {"path_mtu", "RDMA path MTU", COMPARE_UNFAIR, "more packets per message when smaller"},
    {"gid_type", "GID type", COMPARE_UNFAIR,
     "RoCE v1 and v2 are routed and classified differently"},
    {"link_layer", "link layer", COMPARE_UNFAIR, "InfiniBand and RoCE are different fabrics"},
    {"queue_pairs", "queue pairs", COMPARE_UNFAIR, "more QPs spread load and contend for the NIC"},
    {"queue_depth", "outstanding requests", COMPARE_CAUTION,
     "the window bounds throughput on long paths"},
    {"max_inline_bytes", "inline data", COMPARE_CAUTION,
     "inline sends skip a DMA read: small-message latency"},
    {"traffic_class", "traffic class", COMPARE_CAUTION,
     "another DSCP can mean another priority, queue and PFC"},
    {"dcb", "DCB (trust, PFC)", COMPARE_CAUTION, "PFC and trust mode change loss and queueing"},
    {"rdma_device", "RDMA device", COMPARE_CAUTION, "another device can mean another path"},
    {"connection", "connection set-up", COMPARE_INFO, "how QPs were connected; not a speed"},
    {"qp_timeout", "QP timeout", COMPARE_INFO, "how fast a dead peer is detected; not a speed"},
    {"qp_retry_cnt", "QP retry count", COMPARE_INFO, "how fast a dead peer is detected"},
    {"setup_s", NULL, COMPARE_INFO, NULL}, /* set-up timings differ every run */
    {"buffer_bytes", NULL, COMPARE_INFO, NULL},
    {"qp_timeout_bound_s", NULL, COMPARE_INFO, NULL},
    {"peer_loss_detect_bound_s", NULL, COMPARE_INFO, NULL},
    {"liveness_probe_after_s", NULL, COMPARE_INFO, NULL},
    {"local_netdev", NULL, COMPARE_INFO, NULL}, /* shown as the local endpoint */
    {"local_ip", NULL, COMPARE_INFO, NULL},
};

static void compare_flow_conditions(struct builder *b, const char *group, const cJSON *fa,
                                    const cJSON *fb)
{
    const cJSON *ca = cJSON_GetObjectItemCaseSensitive(fa, "conditions"),
                *cb = cJSON_GetObjectItemCaseSensitive(fb, "conditions");
    const cJSON *e;
    for (int pass = 0; pass < 2; pass++)
        cJSON_ArrayForEach(e, (pass ? cb : ca))
        {
            if (!e->string || (pass && cJSON_GetObjectItemCaseSensitive(ca, e->string)))
                continue;
            const char *label = e->string, *why = "recorded by the transport";
            enum compare_severity w = COMPARE_INFO;
            bool skip = false;
            for (size_t k = 0; k < sizeof(flow_keys) / sizeof(flow_keys[0]); k++)
                if (!strcmp(flow_keys[k].key, e->string)) {
                    skip = !flow_keys[k].label;
                    label = flow_keys[k].label;
                    w = flow_keys[k].weight;
                    why = flow_keys[k].why;
                }
            if (skip)
                continue;
            char x[96], y[96];
            const cJSON *xa = cJSON_GetObjectItemCaseSensitive(ca, e->string),
                        *xb = cJSON_GetObjectItemCaseSensitive(cb, e->string);
            value_text(e->string, xa, x, sizeof(x));
            value_text(e->string, xb, y, sizeof(y));
            add_cond(b, group, label, xa ? x : NULL, xb ? y : NULL, w, why);
        }
}

static void compare_flows(struct builder *b, const cJSON *A, const cJSON *B,
                          const struct pair *pairs, int np)
{
    for (int i = 0; i < np; i++) {
        const struct pair *p = &pairs[i];
        char label[64], group[72], x[96], y[96];
        pair_label(p, label, sizeof(label));
        snprintf(group, sizeof(group), "flow %s", label);
        if (!p->a || !p->b) {
            bool fg = is_fg(p->a ? p->a : p->b);
            add_cond(b, group, fg ? "flow present" : "neighbour present", p->a ? "yes" : "absent",
                     p->b ? "yes" : "absent", COMPARE_UNFAIR,
                     fg ? "a foreground flow measured on one side only has nothing to compare"
                        : "a neighbour on one side only adds load the other side did not see");
            continue;
        }
        add_cond(b, group, "role", jsonutil_str(p->a, "role"), jsonutil_str(p->b, "role"),
                 COMPARE_UNFAIR, "a foreground flow is measured; a neighbour is load");
        add_cond(b, group, "transport", jsonutil_str(p->a, "transport"),
                 jsonutil_str(p->b, "transport"), COMPARE_UNFAIR,
                 "TCP, RDMA verbs and NCCL are different stacks; compare them only on purpose");
        add_cond(b, group, "operation", jsonutil_str(p->a, "op"), jsonutil_str(p->b, "op"),
                 COMPARE_UNFAIR, "ping-pong, stream and request/response measure different things");
        add_cond(b, group, "direction", jsonutil_str(p->a, "direction"),
                 jsonutil_str(p->b, "direction"), COMPARE_UNFAIR,
                 "sending, receiving and both load different queues");
        add_cond(b, group, "latency kind", jsonutil_str(p->a, "latency_kind"),
                 jsonutil_str(p->b, "latency_kind"), COMPARE_UNFAIR,
                 "a half round trip is about half a round trip: never compare across kinds");
        size_text(cJSON_GetObjectItemCaseSensitive(p->a, "size"), x, sizeof(x));
        size_text(cJSON_GetObjectItemCaseSensitive(p->b, "size"), y, sizeof(y));
        add_cond(b, group, "sizes", x, y, COMPARE_UNFAIR,
                 "latency and throughput depend on the message size");
        const cJSON *ra = cJSON_GetObjectItemCaseSensitive(p->a, "response_size"),
                    *rb = cJSON_GetObjectItemCaseSensitive(p->b, "response_size");
        if (ra || rb) {
            size_text(ra, x, sizeof(x));
            size_text(rb, y, sizeof(y));
            add_cond(b, group, "response size", ra ? x : "none", rb ? y : "none", COMPARE_UNFAIR,
                     "a larger response lengthens every round trip");
        }
        add_cond(b, group, "concurrency", num_text(p->a, "concurrency", "", x, sizeof(x)),
                 num_text(p->b, "concurrency", "", y, sizeof(y)), COMPARE_UNFAIR,
                 "more operations in flight raise throughput and queueing delay");
        double r;
        if (jsonutil_num(p->a, "rate_gbps", &r))
            snprintf(x, sizeof(x), r > 0 ? "%g Gb/s" : "unlimited", r);
        if (jsonutil_num(p->b, "rate_gbps", &r))
            snprintf(y, sizeof(y), r > 0 ? "%g Gb/s" : "unlimited", r);
        add_cond(b, group, "rate limit",
                 cJSON_GetObjectItemCaseSensitive(p->a, "rate_gbps") ? x : NULL,
                 cJSON_GetObjectItemCaseSensitive(p->b, "rate_gbps") ? y : NULL, COMPARE_UNFAIR,
                 "a paced flow offers less load");
        measure_text(p->a, x, sizeof(x));
        measure_text(p->b, y, sizeof(y));
        add_cond(b, group, "measured", x, y, COMPARE_CAUTION,
                 "a longer measurement sees more rare events: p99.9 and max grow with samples");
        add_cond(b, group, "warm-up", num_text(p->a, "warmup_s", " s", x, sizeof(x)),
                 num_text(p->b, "warmup_s", " s", y, sizeof(y)), COMPARE_CAUTION,
                 "without warm-up the first operations pay for cold caches and connection setup");
        add_cond(b, group, "start offset", num_text(p->a, "start_s", " s", x, sizeof(x)),
                 num_text(p->b, "start_s", " s", y, sizeof(y)), COMPARE_CAUTION,
                 "a later start overlaps the other flows differently");
        endpoint_text(p->a, x, sizeof(x));
        endpoint_text(p->b, y, sizeof(y));
        add_cond(b, group, "local endpoint", x, y, COMPARE_CAUTION,
                 "another local address, netdev or RDMA port is another path");
        const cJSON *pa = cJSON_GetObjectItemCaseSensitive(p->a, "params"),
                    *pb = cJSON_GetObjectItemCaseSensitive(p->b, "params");
        if (pa || pb) {
            value_text(NULL, pa, x, sizeof(x));
            value_text(NULL, pb, y, sizeof(y));
            add_cond(b, group, "transport settings", pa ? x : "none", pb ? y : "none",
                     COMPARE_CAUTION, "transport-specific settings change how the flow runs");
        }
        const cJSON *fa = result_flow(A, NULL, jsonutil_str(p->a, "name")),
                    *fb = result_flow(B, NULL, jsonutil_str(p->b, "name"));
        peer_text(jsonutil_str(fa, "peer"), x, sizeof(x));
        peer_text(jsonutil_str(fb, "peer"), y, sizeof(y));
        add_cond(b, group, "peer", fa ? x : NULL, fb ? y : NULL, COMPARE_CAUTION,
                 "another peer means another path: its NIC, switch ports and distance");
        add_cond(b, group, "status", flow_status(A, jsonutil_str(p->a, "name")),
                 flow_status(B, jsonutil_str(p->b, "name")), COMPARE_UNFAIR,
                 "a failed or stopped flow's numbers end at the failure");
        compare_flow_conditions(b, group, fa, fb);
    }
}

/* ---- neighbour load ---- */

/* Background flows of a phase and their goodput (Gb/s), summed over the last measured point
 * of each. */
static int neighbours(const cJSON *ph, double *gbps, bool *gbps_valid)
{
    int n = 0;
    *gbps = 0;
    *gbps_valid = true;
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(ph, "flows"))
    {
        if (is_fg(f))
            continue;
        n++;
        const cJSON *pt, *last = NULL;
        cJSON_ArrayForEach(pt, cJSON_GetObjectItemCaseSensitive(f, "points"))
        {
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pt, "measured")))
                last = pt;
        }
        double g;
        bool sim;
        if (last && results_goodput(f, last, &g, &sim))
            *gbps += g;
        else
            *gbps_valid = false;
    }
    return n;
}

static const cJSON *phase_named(const cJSON *doc, const char *name)
{
    const cJSON *ph;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(doc, "phases"))
    {
        const char *n = jsonutil_str(ph, "name");
        if (n && name && !strcmp(n, name))
            return ph;
    }
    return NULL;
}

static void neighbour_text(int n, double g, bool gv, char *buf, size_t len)
{
    if (n == 0)
        snprintf(buf, len, "none");
    else if (gv)
        snprintf(buf, len, "%d flow%s, %.2f Gb/s", n, n == 1 ? "" : "s", g);
    else
        snprintf(buf, len, "%d flow%s, n/a Gb/s", n, n == 1 ? "" : "s");
}

/* Neighbours per phase, for the phases both ran (a phase on one side only is the phases
 * condition's business). */
static void compare_neighbours(struct builder *b, const cJSON *A, const cJSON *B)
{
    const cJSON *pa;
    cJSON_ArrayForEach(pa, cJSON_GetObjectItemCaseSensitive(A, "phases"))
    {
        const char *name = jsonutil_str(pa, "name");
        const cJSON *pb = phase_named(B, name);
        if (!name || !pb)
            continue;
        char group[48], x[64], y[64];
        snprintf(group, sizeof(group), "phase %s", name);
        double ga = 0, gb = 0;
        bool gva = false, gvb = false;
        int na = neighbours(pa, &ga, &gva), nb = neighbours(pb, &gb, &gvb);
        neighbour_text(na, ga, gva, x, sizeof(x));
        neighbour_text(nb, gb, gvb, y, sizeof(y));
        bool same = na == nb;
        if (same && na > 0 && gva && gvb) {
            double lo = ga < gb ? ga : gb, hi = ga < gb ? gb : ga;
            same = hi <= lo * NEIGHBOUR_TOLERANCE || hi - lo < 0.01;
        }
        add_cond_same(b, group, "neighbours", x, y, same, COMPARE_UNFAIR,
                      "neighbour load decides queueing on shared links and ports (within 25% "
                      "counts as the same load)");
    }
}

/* ---- outcome ---- */

static void point_size_text(const cJSON *pt, char *buf, size_t len)
{
    double s;
    if (jsonutil_num(pt, "size_bytes", &s))
        bytes_text(s, buf, len);
    else
        snprintf(buf, len, "mixed");
}

static void fill_side(const cJSON *fl, const cJSON *pt, bool *valid, double *v, bool *sim,
                      char *status, size_t slen)
{
    const cJSON *lat = cJSON_GetObjectItemCaseSensitive(pt, "latency");
    valid[COMPARE_P50] = jsonutil_num(lat, "p50", &v[COMPARE_P50]);
    valid[COMPARE_P99] = jsonutil_num(lat, "p99", &v[COMPARE_P99]);
    valid[COMPARE_P999] = jsonutil_num(lat, "p99.9", &v[COMPARE_P999]);
    valid[COMPARE_GBPS] = results_goodput(fl, pt, &v[COMPARE_GBPS], sim);
    const char *s = jsonutil_str(fl, "status");
    snprintf(status, slen, "%s", s ? s : NA);
}

static int measured_points(const cJSON *fl, const cJSON **out, int max)
{
    int n = 0;
    const cJSON *pt;
    cJSON_ArrayForEach(pt, cJSON_GetObjectItemCaseSensitive(fl, "points"))
    {
        if (n < max && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pt, "measured")))
            out[n++] = pt;
    }
    return n;
}

static bool same_size(const cJSON *x, const cJSON *y)
{
    double a, b;
    bool ha = jsonutil_num(x, "size_bytes", &a), hb = jsonutil_num(y, "size_bytes", &b);
    return ha == hb && (!ha || a == b);
}

#define MAX_POINTS 64

static void outcome_flow(struct builder *b, const char *phase, const char *label, const cJSON *fa,
                         const cJSON *fb)
{
    const cJSON *pa[MAX_POINTS], *pb[MAX_POINTS];
    int na = fa ? measured_points(fa, pa, MAX_POINTS) : 0;
    int nb = fb ? measured_points(fb, pb, MAX_POINTS) : 0;
    bool used_b[MAX_POINTS] = {false};
    const char *kind = jsonutil_str(fa ? fa : fb, "latency_kind");
    for (int i = 0; i < na; i++) {
        int k = -1;
        if (na == 1 && nb == 1)
            k = 0; /* one point each: put them side by side (sizes are compared above) */
        for (int j = 0; j < nb && k < 0; j++)
            if (!used_b[j] && same_size(pa[i], pb[j]))
                k = j;
        struct compare_row *w = add_row(b);
        snprintf(w->phase, sizeof(w->phase), "%s", phase);
        snprintf(w->flow, sizeof(w->flow), "%s", label);
        snprintf(w->latency_kind, sizeof(w->latency_kind), "%s", kind ? kind : NA);
        char x[24], y[24];
        point_size_text(pa[i], x, sizeof(x));
        w->in_a = true;
        fill_side(fa, pa[i], w->valid_a, w->a, &w->sim_a, w->status_a, sizeof(w->status_a));
        if (k >= 0) {
            used_b[k] = true;
            point_size_text(pb[k], y, sizeof(y));
            w->in_b = true;
            fill_side(fb, pb[k], w->valid_b, w->b, &w->sim_b, w->status_b, sizeof(w->status_b));
        }
        if (k >= 0 && strcmp(x, y))
            snprintf(w->point, sizeof(w->point), "%s|%s", x, y);
        else
            snprintf(w->point, sizeof(w->point), "%s", x);
    }
    for (int j = 0; j < nb; j++) {
        if (used_b[j])
            continue;
        struct compare_row *w = add_row(b);
        snprintf(w->phase, sizeof(w->phase), "%s", phase);
        snprintf(w->flow, sizeof(w->flow), "%s", label);
        snprintf(w->latency_kind, sizeof(w->latency_kind), "%s", kind ? kind : NA);
        point_size_text(pb[j], w->point, sizeof(w->point));
        w->in_b = true;
        fill_side(fb, pb[j], w->valid_b, w->b, &w->sim_b, w->status_b, sizeof(w->status_b));
    }
}

static void outcome(struct builder *b, const cJSON *A, const cJSON *B, const struct pair *pairs,
                    int np)
{
    const cJSON *ph;
    for (int pass = 0; pass < 2; pass++)
        cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(pass ? B : A, "phases"))
        {
            const char *name = jsonutil_str(ph, "name");
            if (!name || (pass && phase_named(A, name)))
                continue;
            for (int i = 0; i < np; i++) {
                char label[64];
                pair_label(&pairs[i], label, sizeof(label));
                const cJSON *fa =
                    pairs[i].a ? result_flow(A, name, jsonutil_str(pairs[i].a, "name")) : NULL;
                const cJSON *fb =
                    pairs[i].b ? result_flow(B, name, jsonutil_str(pairs[i].b, "name")) : NULL;
                if (fa || fb)
                    outcome_flow(b, name, label, fa, fb);
            }
        }
}

bool compare_ratio(const struct compare_row *r, int m, double *ratio)
{
    if (m < 0 || m >= COMPARE_NMETRICS || !r->in_a || !r->in_b || !r->valid_a[m] ||
        !r->valid_b[m] || r->a[m] <= 0 || (m == COMPARE_GBPS && r->sim_a != r->sim_b))
        return false;
    *ratio = r->b[m] / r->a[m];
    return true;
}

/* ---- the whole comparison ---- */

static void label_of(const cJSON *doc, char *buf, size_t len)
{
    const char *mix = jsonutil_str(cJSON_GetObjectItemCaseSensitive(doc, "mix"), "name");
    const char *at = jsonutil_str(doc, "started_at");
    const char *host = jsonutil_str(cJSON_GetObjectItemCaseSensitive(doc, "hosts"), "local");
    snprintf(buf, len, "%s, %s, host %s", mix ? mix : "?", at ? at : "?", host ? host : "?");
}

static void verdict(struct compare_result *r)
{
    enum compare_severity w = r->worst;
    if (w <= COMPARE_INFO) {
        snprintf(r->verdict, sizeof(r->verdict),
                 "Comparable: every condition that changes the numbers is the same%s.",
                 r->ndiff[COMPARE_INFO] ? " (informational differences only)" : "");
        return;
    }
    struct strbuf sb;
    strbuf_init(&sb);
    int listed = 0;
    bool more = false;
    for (int i = 0; i < r->nconds; i++) {
        const struct compare_cond *c = &r->conds[i];
        if (c->severity != w)
            continue;
        bool dup = false;
        for (int k = 0; k < i && !dup; k++)
            dup = r->conds[k].severity == w && !strcmp(r->conds[k].field, c->field);
        if (dup)
            continue;
        if (listed == 4) {
            more = true;
            break;
        }
        strbuf_printf(&sb, "%s%s", listed ? ", " : "", c->field);
        listed++;
    }
    bool one = r->ndiff[w] == 1;
    if (w == COMPARE_UNFAIR)
        snprintf(r->verdict, sizeof(r->verdict),
                 "Not like for like: %d condition%s that change%s the numbers by %s (%s%s).",
                 r->ndiff[w], one ? " differs" : "s differ", one ? "s" : "",
                 one ? "itself" : "themselves", sb.s, more ? ", ..." : "");
    else
        snprintf(r->verdict, sizeof(r->verdict),
                 "Comparable with care: %d condition%s that may change the numbers (%s%s).",
                 r->ndiff[w], one ? " differs" : "s differ", sb.s, more ? ", ..." : "");
    strbuf_free(&sb);
}

static bool is_results(const cJSON *d)
{
    const char *f = jsonutil_str(d, "format");
    return cJSON_IsObject(d) && f && !strcmp(f, RESULTS_FORMAT);
}

int compare_results(const cJSON *a, const cJSON *b, struct compare_result *out, struct ft_err *err)
{
    memset(out, 0, sizeof(*out));
    if (!is_results(a) || !is_results(b))
        return ft_err_set(err, -EINVAL, "compare: %s is not a fabtop results document",
                          is_results(a) ? "the second" : "the first");
    struct builder bl = {.r = out};
    label_of(a, out->label_a, sizeof(out->label_a));
    label_of(b, out->label_b, sizeof(out->label_b));
    struct pair pairs[2 * 64];
    int np = pair_flows(a, b, pairs, (int)(sizeof(pairs) / sizeof(pairs[0])));
    compare_run(&bl, a, b);
    compare_ports(&bl, a, b);
    compare_netdevs(&bl, a, b);
    compare_flows(&bl, a, b, pairs, np);
    compare_neighbours(&bl, a, b);
    outcome(&bl, a, b, pairs, np);
    verdict(out);
    return 0;
}

void compare_free(struct compare_result *r)
{
    free(r->conds);
    free(r->rows);
    memset(r, 0, sizeof(*r));
}

static cJSON *side_json(const struct compare_row *w, bool b)
{
    if (b ? !w->in_b : !w->in_a)
        return cJSON_CreateNull();
    const bool *valid = b ? w->valid_b : w->valid_a;
    const double *v = b ? w->b : w->a;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "status", b ? w->status_b : w->status_a);
    jsonutil_add_num_or_null(o, "p50_us", valid[COMPARE_P50], v[COMPARE_P50]);
    jsonutil_add_num_or_null(o, "p99_us", valid[COMPARE_P99], v[COMPARE_P99]);
    jsonutil_add_num_or_null(o, "p99.9_us", valid[COMPARE_P999], v[COMPARE_P999]);
    jsonutil_add_num_or_null(o, "goodput_gbps", valid[COMPARE_GBPS], v[COMPARE_GBPS]);
    if (b ? w->sim_b : w->sim_a)
        cJSON_AddStringToObject(o, "goodput_time", "simulated");
    return o;
}

cJSON *compare_to_json(const struct compare_result *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "format", "fabtop-compare");
    cJSON_AddNumberToObject(doc, "version", 1);
    cJSON_AddStringToObject(doc, "a", r->label_a);
    cJSON_AddStringToObject(doc, "b", r->label_b);
    cJSON_AddStringToObject(doc, "verdict", r->verdict);
    cJSON_AddStringToObject(doc, "worst", compare_severity_str(r->worst));
    cJSON *d = cJSON_AddObjectToObject(doc, "differences");
    for (int s = COMPARE_INFO; s <= COMPARE_UNFAIR; s++)
        cJSON_AddNumberToObject(d, compare_severity_str((enum compare_severity)s), r->ndiff[s]);
    cJSON *ca = cJSON_AddArrayToObject(doc, "conditions");
    for (int i = 0; i < r->nconds; i++) {
        const struct compare_cond *c = &r->conds[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "group", c->group);
        cJSON_AddStringToObject(o, "field", c->field);
        cJSON_AddStringToObject(o, "a", c->a);
        cJSON_AddStringToObject(o, "b", c->b);
        cJSON_AddBoolToObject(o, "same", c->same);
        cJSON_AddStringToObject(o, "severity", compare_severity_str(c->severity));
        cJSON_AddStringToObject(o, "weight", compare_severity_str(c->weight));
        cJSON_AddStringToObject(o, "why", c->why ? c->why : "");
        cJSON_AddItemToArray(ca, o);
    }
    cJSON *oa = cJSON_AddArrayToObject(doc, "outcome");
    cJSON_AddStringToObject(doc, "outcome_units",
                            "latency in microseconds of the flow's latency_kind; goodput in Gb/s "
                            "(10^9 bit/s); ratios are B over A");
    static const char *const rkeys[] = {"p50", "p99", "p99.9", "goodput"};
    for (int i = 0; i < r->nrows; i++) {
        const struct compare_row *w = &r->rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "phase", w->phase);
        cJSON_AddStringToObject(o, "flow", w->flow);
        cJSON_AddStringToObject(o, "point", w->point);
        cJSON_AddStringToObject(o, "latency_kind", w->latency_kind);
        cJSON_AddItemToObject(o, "a", side_json(w, false));
        cJSON_AddItemToObject(o, "b", side_json(w, true));
        cJSON *ro = cJSON_AddObjectToObject(o, "ratio_b_over_a");
        for (int m = 0; m < COMPARE_NMETRICS; m++) {
            double x;
            bool ok = compare_ratio(w, m, &x);
            jsonutil_add_num_or_null(ro, rkeys[m], ok, ok ? x : 0);
        }
        cJSON_AddItemToArray(oa, o);
    }
    return doc;
}

/* ---- brief ---- */

void compare_brief(const cJSON *doc, struct compare_brief *out)
{
    memset(out, 0, sizeof(*out));
    jsonutil_strcpy(doc, "started_at", out->started_at, sizeof(out->started_at));
    jsonutil_strcpy(cJSON_GetObjectItemCaseSensitive(doc, "mix"), "name", out->mix,
                    sizeof(out->mix));
    const cJSON *p = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "hosts"), "peers"),
        0);
    if (cJSON_IsString(p))
        peer_text(p->valuestring, out->peer, sizeof(out->peer));
    bool failed = false;
    const cJSON *ph, *f, *last_phase = NULL;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(doc, "phases"))
    {
        last_phase = ph;
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(ph, "flows"))
        {
            const char *s = jsonutil_str(f, "status");
            failed |= s && strcmp(s, "ok");
        }
    }
    snprintf(out->status, sizeof(out->status), "%s",
             cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "interrupted")) ? "interrupted"
             : failed                                                           ? "failed"
                                                                                : "ok");
    jsonutil_strcpy(cJSON_GetObjectItemCaseSensitive(doc, "summary"), "foreground", out->foreground,
                    sizeof(out->foreground));
    if (!last_phase)
        return;
    jsonutil_strcpy(last_phase, "name", out->phase, sizeof(out->phase));
    const cJSON *fl = NULL;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(last_phase, "flows"))
    {
        const char *n = jsonutil_str(f, "name");
        if (out->foreground[0] ? (n && !strcmp(n, out->foreground)) : (!fl && is_fg(f)))
            fl = f;
    }
    if (!fl)
        return;
    if (!out->foreground[0])
        jsonutil_strcpy(fl, "name", out->foreground, sizeof(out->foreground));
    const cJSON *pts[MAX_POINTS];
    int n = measured_points(fl, pts, MAX_POINTS);
    if (n == 0)
        return;
    const cJSON *lat = cJSON_GetObjectItemCaseSensitive(pts[n - 1], "latency");
    out->have_p50 = jsonutil_num(lat, "p50", &out->p50_us);
    out->have_p99 = jsonutil_num(lat, "p99", &out->p99_us);
    out->have_gbps = results_goodput(fl, pts[n - 1], &out->gbps, &out->gbps_simulated);
}
