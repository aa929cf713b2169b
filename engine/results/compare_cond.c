/* compare_cond: the conditions of two runs side by side, each with its weight and why it
 * matters (compare_cond.h); typed fields from the results model, the carried parts (mix,
 * topology, a flow's recorded conditions) read as the documents hold them. */
#include "engine/results/compare_cond.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/results/results.h"

/* Neighbour throughputs within this factor of each other count as the same load. */
#define NEIGHBOUR_TOLERANCE 1.25

#define NA COMPARE_COND_NA

/* ---- building the lists ---- */

/* Copy a value for display: tabs and newlines become spaces, NULL becomes n/a. */
static void copy_val(char *dst, size_t len, const char *s)
{
    snprintf(dst, len, "%s", s ? s : NA);
    for (char *p = dst; *p; p++)
        if (*p == '\t' || *p == '\n')
            *p = ' ';
}

/* Add a condition whose sameness is decided by the caller. */
static struct compare_cond *add_cond_same(struct compare_cond_builder *b, const char *group,
                                          const char *field, const char *va, const char *vb,
                                          bool same, enum compare_severity weight, const char *why)
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

static struct compare_cond *add_cond(struct compare_cond_builder *b, const char *group,
                                     const char *field, const char *va, const char *vb,
                                     enum compare_severity weight, const char *why)
{
    const char *x = va ? va : NA, *y = vb ? vb : NA;
    return add_cond_same(b, group, field, va, vb, !strcmp(x, y), weight, why);
}

/* ---- rendering values ---- */

void compare_cond_bytes_text(double v, char *buf, size_t len)
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
        compare_cond_bytes_text(s->valuedouble, buf, len);
        return;
    }
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(s, "sweep");
    double from, to, f;
    if (sw && jsonutil_num(sw, "from", &from) && jsonutil_num(sw, "to", &to)) {
        compare_cond_bytes_text(from, x, sizeof(x));
        compare_cond_bytes_text(to, y, sizeof(y));
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
            compare_cond_bytes_text(cJSON_IsNumber(sz) ? sz->valuedouble : -1, x, sizeof(x));
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
void compare_cond_peer_text(const char *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s", p ? p : NA);
    if (p && !strncmp(p, "loopback agent", 14)) {
        char *colon = strrchr(buf, ':');
        if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1))
            *colon = '\0';
    }
}

/* ---- run, hosts, versions, host conditions ---- */

static bool uses_transport(const struct results_run *doc, const char *t)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc->mix, "flows"))
    {
        const char *x = jsonutil_str(f, "transport");
        if (x && !strcmp(x, t))
            return true;
    }
    return false;
}

static void phases_text(const struct results_run *doc, char *buf, size_t len)
{
    struct strbuf sb;
    strbuf_init(&sb);
    for (int p = 0; p < doc->nphases; p++) {
        const char *n = results_str_get(&doc->phases[p].name);
        strbuf_printf(&sb, "%s%s", sb.len ? ", " : "", n ? n : "?");
    }
    snprintf(buf, len, "%s", sb.len ? sb.s : "none");
    strbuf_free(&sb);
}

/* A version's or sysctl's value: NULL when absent or null. */
static const char *kv_str(const struct results_kvs *k, const char *key)
{
    const struct results_kv *e = results_kvs_find(k, key);
    return e ? results_str_get(&e->val) : NULL;
}

static void cond_run(struct compare_cond_builder *b, const struct results_run *A,
                     const struct results_run *B)
{
    char x[128], y[128];
    add_cond(b, "run", "mix", jsonutil_str(A->mix, "name"), jsonutil_str(B->mix, "name"),
             COMPARE_INFO, "a name only; the flows below say what was run");
    phases_text(A, x, sizeof(x));
    phases_text(B, y, sizeof(y));
    add_cond(b, "run", "phases", x, y, COMPARE_CAUTION,
             "compare phase with phase: a quiet phase has no neighbours, a loaded one has");
    add_cond(b, "run", "interrupted", results_bool_true(&A->interrupted) ? "yes" : "no",
             results_bool_true(&B->interrupted) ? "yes" : "no", COMPARE_UNFAIR,
             "an interrupted run holds partial points measured for less time");

    add_cond(b, "hosts", "local host", results_str_get(&A->host_local),
             results_str_get(&B->host_local), COMPARE_CAUTION,
             "another machine has its own PCIe placement, CPUs and NUMA layout; say which "
             "one is under test");
    compare_cond_peer_text(A->npeers ? A->peers[0] : NULL, x, sizeof(x));
    compare_cond_peer_text(B->npeers ? B->peers[0] : NULL, y, sizeof(y));
    add_cond(b, "hosts", "peer", x, y, COMPARE_CAUTION,
             "another peer means another path: its NIC, switch ports and distance");

    /* Versions: the union of both documents' keys. */
    const struct results_kvs *va = &A->versions, *vb = &B->versions;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < (pass ? vb : va)->n; i++) {
            const char *key = (pass ? vb : va)->v[i].key;
            if (pass && results_kvs_find(va, key))
                continue;
            bool kernel = !strcmp(key, "kernel"), self = !strcmp(key, "fabtop");
            add_cond(b, "versions", key, kv_str(va, key), kv_str(vb, key),
                     kernel || self ? COMPARE_CAUTION : COMPARE_INFO,
                     kernel ? "the kernel's network stack, drivers and RDMA core change "
                              "latency and throughput"
                     : self ? "another fabtop may measure differently (see its changelog)"
                            : "a library version; it seldom changes the numbers");
        }

    const struct results_kvs *ca = &A->conditions.sysctls, *cb = &B->conditions.sysctls;
    bool tcp = uses_transport(A, "tcp") || uses_transport(B, "tcp");
    add_cond(b, "host", "TCP congestion control", kv_str(ca, "tcp_congestion_control"),
             kv_str(cb, "tcp_congestion_control"), tcp ? COMPARE_UNFAIR : COMPARE_INFO,
             "congestion control decides how queues build under load (bbr and cubic differ "
             "most in the loaded tail)");
    add_cond(b, "host", "TCP ECN", kv_str(ca, "tcp_ecn"), kv_str(cb, "tcp_ecn"),
             tcp ? COMPARE_CAUTION : COMPARE_INFO,
             "with ECN the switch marks instead of dropping: fewer retransmissions under load");
    add_cond(b, "host", "tcp_rmem (bytes)", kv_str(ca, "tcp_rmem"), kv_str(cb, "tcp_rmem"),
             tcp ? COMPARE_CAUTION : COMPARE_INFO,
             "socket buffer limits bound the bytes in flight, hence stream throughput");
    add_cond(b, "host", "tcp_wmem (bytes)", kv_str(ca, "tcp_wmem"), kv_str(cb, "tcp_wmem"),
             tcp ? COMPARE_CAUTION : COMPARE_INFO,
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
static void endpoints_of(const struct results_run *doc, struct endpoints *rdma,
                         struct endpoints *net)
{
    memset(rdma, 0, sizeof(*rdma));
    memset(net, 0, sizeof(*net));
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc->mix, "flows"))
    {
        const cJSON *lo = cJSON_GetObjectItemCaseSensitive(f, "local");
        endpoints_add(rdma, jsonutil_str(lo, "rdma"));
        endpoints_add(net, jsonutil_str(lo, "netdev"));
    }
    for (int p = 0; p < doc->nphases; p++)
        for (int i = 0; i < doc->phases[p].nflows; i++) {
            const cJSON *c = doc->phases[p].flows[i].conditions;
            endpoints_add(net, jsonutil_str(c, "local_netdev"));
            endpoints_add(rdma, jsonutil_str(c, "local_rdma"));
        }
}

/* An entry of the carried topology snapshot's array by its index member. */
static const cJSON *topo_item(const cJSON *topo, const char *array, const cJSON *idx)
{
    if (!cJSON_IsNumber(idx) || idx->valueint < 0)
        return NULL;
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(topo, array), idx->valueint);
}

/* Indices of the ports used: those the flows name, or every port when none is named. */
static int used_ports(const struct results_run *doc, int *out, bool *all)
{
    struct endpoints rdma, net;
    endpoints_of(doc, &rdma, &net);
    *all = rdma.n == 0 && net.n == 0;
    const cJSON *topo = doc->topology;
    const cJSON *ports = cJSON_GetObjectItemCaseSensitive(topo, "ports");
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
        const cJSON *nic = topo_item(topo, "nics", cJSON_GetObjectItemCaseSensitive(p, "nic"));
        const cJSON *nd = topo_item(topo, "netdevs", cJSON_GetObjectItemCaseSensitive(p, "netdev"));
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

static void port_name(const cJSON *topo, const cJSON *p, char *buf, size_t len)
{
    const cJSON *nic = topo_item(topo, "nics", cJSON_GetObjectItemCaseSensitive(p, "nic"));
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

static void port_facts(const cJSON *topo, const cJSON *p, struct port_facts *f)
{
    const cJSON *nic = topo_item(topo, "nics", cJSON_GetObjectItemCaseSensitive(p, "nic"));
    const cJSON *ad = topo_item(topo, "adapters", cJSON_GetObjectItemCaseSensitive(nic, "adapter"));
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

static void cond_ports(struct compare_cond_builder *b, const struct results_run *A,
                       const struct results_run *B)
{
    int ia[MAX_PORTS], ib[MAX_PORTS];
    bool alla, allb;
    int na = used_ports(A, ia, &alla), nb = used_ports(B, ib, &allb);
    char x[64], y[64];
    snprintf(x, sizeof(x), "%d%s", na, alla ? " (none named: all)" : "");
    snprintf(y, sizeof(y), "%d%s", nb, allb ? " (none named: all)" : "");
    add_cond_same(b, "ports", "RDMA ports used", x, y, na == nb, COMPARE_CAUTION,
                  "a path with RDMA ports on one side only is a different fabric");
    const cJSON *pa_arr = cJSON_GetObjectItemCaseSensitive(A->topology, "ports"),
                *pb_arr = cJSON_GetObjectItemCaseSensitive(B->topology, "ports");
    int n = na > nb ? na : nb;
    for (int k = 0; k < n; k++) {
        const cJSON *pa = k < na ? cJSON_GetArrayItem(pa_arr, ia[k]) : NULL,
                    *pb = k < nb ? cJSON_GetArrayItem(pb_arr, ib[k]) : NULL;
        char an[40] = "none", bn[40] = "none", group[40];
        if (pa)
            port_name(A->topology, pa, an, sizeof(an));
        if (pb)
            port_name(B->topology, pb, bn, sizeof(bn));
        if (!strcmp(an, bn))
            snprintf(group, sizeof(group), "port %s", an);
        else
            snprintf(group, sizeof(group), "port %s|%s", an, bn);
        struct port_facts fa, fb;
        memset(&fa, 0, sizeof(fa));
        memset(&fb, 0, sizeof(fb));
        if (pa)
            port_facts(A->topology, pa, &fa);
        if (pb)
            port_facts(B->topology, pb, &fb);
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
static bool netdev_up(const struct results_run *doc, const char *name)
{
    const cJSON *nd;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc->topology, "netdevs");
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

/* The MTU recorded for a netdev (conditions.netdev_mtu), as text; NULL when none. */
static const char *mtu_text(const struct results_run_cond *c, const char *name, char *buf,
                            size_t len)
{
    for (int i = 0; i < c->nmtu; i++)
        if (!strcmp(c->mtu[i].netdev, name)) {
            num_fmt(c->mtu[i].mtu, " bytes", buf, len);
            return buf;
        }
    return NULL;
}

static void cond_netdevs(struct compare_cond_builder *b, const struct results_run *A,
                         const struct results_run *B)
{
    struct endpoints ra, na, rb, nb, names = {0};
    endpoints_of(A, &ra, &na);
    endpoints_of(B, &rb, &nb);
    for (int i = 0; i < na.n; i++)
        endpoints_add(&names, na.name[i]);
    for (int i = 0; i < nb.n; i++)
        endpoints_add(&names, nb.name[i]);
    bool named = names.n > 0;
    const struct results_run_cond *ma = &A->conditions, *mb = &B->conditions;
    if (!named)
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < (pass ? mb : ma)->nmtu; i++) {
                const char *nd = (pass ? mb : ma)->mtu[i].netdev;
                if (netdev_up(A, nd) || netdev_up(B, nd))
                    endpoints_add(&names, nd);
            }
    for (int i = 0; i < names.n; i++) {
        char group[48], x[32], y[32];
        snprintf(group, sizeof(group), "netdev %s", names.name[i]);
        add_cond(b, group, "MTU", mtu_text(ma, names.name[i], x, sizeof(x)),
                 mtu_text(mb, names.name[i], y, sizeof(y)),
                 named ? COMPARE_UNFAIR : COMPARE_CAUTION,
                 named ? "the netdev MTU sets TCP's segment size (and RoCE's ceiling): more "
                         "packets per message when smaller"
                       : "no flow names a netdev and this one is up, so it may carry the "
                         "traffic; its MTU sets TCP's segment size");
    }
}

/* ---- flows: pairing and their parameters ---- */

/* A mix flow's role (the carried mix). */
static bool is_fg(const cJSON *f)
{
    const char *r = jsonutil_str(f, "role");
    return r && !strcmp(r, "foreground");
}

bool compare_cond_is_fg(const struct results_flow *f)
{
    const char *r = results_str_get(&f->role);
    return r && !strcmp(r, "foreground");
}

int compare_cond_pair_flows(const struct results_run *A, const struct results_run *B,
                            struct compare_cond_pair *out, int max)
{
    const cJSON *fa = cJSON_GetObjectItemCaseSensitive(A->mix, "flows"),
                *fb = cJSON_GetObjectItemCaseSensitive(B->mix, "flows");
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
                out[n++] = (struct compare_cond_pair){x, y};
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
                    out[n++] = (struct compare_cond_pair){x, y};
                    break;
                }
            }
        }
    for (int i = 0; i < na && n < max; i++)
        if (!used_a[i])
            out[n++] = (struct compare_cond_pair){cJSON_GetArrayItem(fa, i), NULL};
    for (int k = 0; k < nb && n < max; k++)
        if (!used_b[k])
            out[n++] = (struct compare_cond_pair){NULL, cJSON_GetArrayItem(fb, k)};
    free(used_a);
    free(used_b);
    return n;
}

void compare_cond_pair_label(const struct compare_cond_pair *p, char *buf, size_t len)
{
    const char *x = p->a ? jsonutil_str(p->a, "name") : NULL,
               *y = p->b ? jsonutil_str(p->b, "name") : NULL;
    if (x && y && strcmp(x, y))
        snprintf(buf, len, "%s|%s", x, y);
    else
        snprintf(buf, len, "%s", x ? x : y ? y : "?");
}

const struct results_flow *compare_cond_flow(const struct results_run *doc, const char *phase,
                                             const char *name)
{
    const struct results_flow *found = NULL;
    if (!name)
        return NULL;
    for (int p = 0; p < doc->nphases; p++) {
        const struct results_phase *ph = &doc->phases[p];
        const char *pn = results_str_get(&ph->name);
        if (phase && (!pn || strcmp(pn, phase)))
            continue;
        for (int i = 0; i < ph->nflows; i++) {
            const char *n = results_str_get(&ph->flows[i].name);
            if (n && !strcmp(n, name))
                found = &ph->flows[i];
        }
    }
    return found;
}

/* The worst status of a flow over the phases it ran in. */
static const char *flow_status(const struct results_run *doc, const char *name)
{
    static const char *const order[] = {"ok", "not run", "running", "stopped", "failed"};
    int worst = -1;
    for (int p = 0; p < doc->nphases; p++)
        for (int i = 0; i < doc->phases[p].nflows; i++) {
            const struct results_flow *f = &doc->phases[p].flows[i];
            const char *n = results_str_get(&f->name), *s = results_str_get(&f->status);
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
    {"cpu", NULL, COMPARE_INFO, NULL}, /* measured every run: cond_cpu */
};

/* The workers' CPU contention (conditions.cpu, engine/run/runner.c): the same when both runs'
 * run-queue waits are on the same side of judge's busy-cpu line (25% of the runnable time). */
static void cond_cpu(struct compare_cond_builder *b, const char *group, const cJSON *ca,
                     const cJSON *cb)
{
    double pa = 0, pb = 0;
    bool ha = jsonutil_num(cJSON_GetObjectItemCaseSensitive(ca, "cpu"), "runqueue_wait_pct", &pa),
         hb = jsonutil_num(cJSON_GetObjectItemCaseSensitive(cb, "cpu"), "runqueue_wait_pct", &pb);
    if (!ha && !hb)
        return;
    char x[48], y[48];
    snprintf(x, sizeof(x), "%.0f%% run-queue wait", pa);
    snprintf(y, sizeof(y), "%.0f%% run-queue wait", pb);
    add_cond_same(b, group, "workers' CPUs busy with other work", ha ? x : NULL, hb ? y : NULL,
                  ha && hb && (pa >= 25) == (pb >= 25), COMPARE_CAUTION,
                  "a worker that waits for its core moves less: the other side had its CPUs to "
                  "itself");
}

static void cond_flow_conditions(struct compare_cond_builder *b, const char *group,
                                 const struct results_flow *fa, const struct results_flow *fb)
{
    const cJSON *ca = fa ? fa->conditions : NULL, *cb = fb ? fb->conditions : NULL;
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
    cond_cpu(b, group, ca, cb);
}

static void cond_flows(struct compare_cond_builder *b, const struct results_run *A,
                       const struct results_run *B, const struct compare_cond_pair *pairs, int np)
{
    for (int i = 0; i < np; i++) {
        const struct compare_cond_pair *p = &pairs[i];
        char label[64], group[72], x[96], y[96];
        compare_cond_pair_label(p, label, sizeof(label));
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
        const struct results_flow *fa = compare_cond_flow(A, NULL, jsonutil_str(p->a, "name")),
                                  *fb = compare_cond_flow(B, NULL, jsonutil_str(p->b, "name"));
        compare_cond_peer_text(fa ? results_str_get(&fa->peer) : NULL, x, sizeof(x));
        compare_cond_peer_text(fb ? results_str_get(&fb->peer) : NULL, y, sizeof(y));
        add_cond(b, group, "peer", fa ? x : NULL, fb ? y : NULL, COMPARE_CAUTION,
                 "another peer means another path: its NIC, switch ports and distance");
        add_cond(b, group, "status", flow_status(A, jsonutil_str(p->a, "name")),
                 flow_status(B, jsonutil_str(p->b, "name")), COMPARE_UNFAIR,
                 "a failed or stopped flow's numbers end at the failure");
        cond_flow_conditions(b, group, fa, fb);
    }
}

/* ---- neighbour load ---- */

/* Background flows of a phase and their goodput (Gb/s), summed over the last measured point
 * of each. */
static int neighbours(const struct results_phase *ph, double *gbps, bool *gbps_valid)
{
    int n = 0;
    *gbps = 0;
    *gbps_valid = true;
    for (int i = 0; i < ph->nflows; i++) {
        const struct results_flow *f = &ph->flows[i];
        if (compare_cond_is_fg(f))
            continue;
        n++;
        const struct results_point *last = NULL;
        for (int k = 0; k < f->npoints; k++)
            if (results_bool_true(&f->points[k].measured))
                last = &f->points[k];
        double g;
        bool sim;
        if (last && results_point_goodput(f, last, &g, &sim))
            *gbps += g;
        else
            *gbps_valid = false;
    }
    return n;
}

const struct results_phase *compare_cond_phase(const struct results_run *doc, const char *name)
{
    for (int p = 0; p < doc->nphases; p++) {
        const char *n = results_str_get(&doc->phases[p].name);
        if (n && name && !strcmp(n, name))
            return &doc->phases[p];
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
static void cond_neighbours(struct compare_cond_builder *b, const struct results_run *A,
                            const struct results_run *B)
{
    for (int p = 0; p < A->nphases; p++) {
        const struct results_phase *pa = &A->phases[p];
        const char *name = results_str_get(&pa->name);
        const struct results_phase *pb = compare_cond_phase(B, name);
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

/* The path's class (results_path.h): another class is another path, whatever the numbers. */
static void cond_path(struct compare_cond_builder *b, const struct results_run *A,
                      const struct results_run *B)
{
    if (A->path.st != RESULTS_SET && B->path.st != RESULTS_SET)
        return;
    add_cond(b, "hosts", "path class", results_str_get(&A->path.cls), results_str_get(&B->path.cls),
             COMPARE_UNFAIR,
             "same host, same leaf, same site and wide area are different paths: their round "
             "trips differ by orders of magnitude before any load (docs/diagnosis.md)");
}

void compare_cond_all(struct compare_cond_builder *b, const struct results_run *A,
                      const struct results_run *B, const struct compare_cond_pair *pairs, int np)
{
    cond_run(b, A, B);
    cond_path(b, A, B);
    cond_ports(b, A, B);
    cond_netdevs(b, A, B);
    cond_flows(b, A, B, pairs, np);
    cond_neighbours(b, A, B);
}
