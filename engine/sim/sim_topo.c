/* sim_topo: the simulated fabric's shape from a small JSON file (a single-switch star, a
 * two-tier leaf-spine, a k-ary fat tree; 2 to 64 hosts), its nodes, ports and links, and the
 * routes: every equal-cost shortest-path next hop per (switch, destination host), recomputed
 * over the links that are up. RoCE picks among them by flow hash (ECMP), IB by destination
 * (fixed, D-mod-K style). */
#include "engine/sim/sim_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/datadir.h"
#include "common/fsutil.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#define TOPO_FORMAT "fabtop-sim-topology"

struct tlink {
    uint32_t a, b;
    double gbps;
    uint64_t delay; /* ps */
};

struct tbuild {
    struct tlink *l;
    uint32_t n, cap;
};

static void add_link(struct tbuild *b, uint32_t x, uint32_t y, double gbps, uint64_t delay)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->l = xalloc_resize(b->l, (size_t)b->cap * sizeof(*b->l));
    }
    b->l[b->n++] = (struct tlink){x, y, gbps, delay};
}

static void name_node(struct sim *s, uint32_t i, const char *fmt, int a)
{
    snprintf(s->nodes[i].name, sizeof(s->nodes[i].name), fmt, a);
}

int sim_topology_load(const char *name_or_path, cJSON **out, struct ft_err *err)
{
    if (strchr(name_or_path, '/') || strstr(name_or_path, ".json"))
        return jsonutil_load(name_or_path, out, err);
    char dirs[DATADIR_MAX][DATADIR_LEN];
    int n = datadir_search("mixes", FABTOP_MIX_SOURCE_DIR, dirs);
    for (int i = 0; i < n; i++) {
        char path[700];
        snprintf(path, sizeof(path), "%s/sim/topologies/%s.json", dirs[i], name_or_path);
        if (fsutil_exists("/", path))
            return jsonutil_load(path, out, err);
    }
    return ft_err_set(err, -ENOENT,
                      "simulator topology '%s': no such file, and no %s.json in "
                      "sim/topologies/ of the mix search path (%s, ...)",
                      name_or_path, name_or_path, datadir_installed());
}

static int topo_num(const cJSON *t, const char *what, const char *key, double dflt, double lo,
                    double hi, double *out, struct ft_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, key);
    if (!v) {
        if (isnan(dflt))
            return ft_err_set(err, -EINVAL, "%s: topology needs \"%s\"", what, key);
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi))
        return ft_err_set(err, -EINVAL, "%s: topology \"%s\" must be a number from %g to %g", what,
                          key, lo, hi);
    *out = v->valuedouble;
    return 0;
}

int sim_topo_build(struct sim *s, const cJSON *t, const char *what, struct ft_err *err)
{
    const char *fmt = jsonutil_str(t, "format");
    if (!cJSON_IsObject(t) || !fmt || strcmp(fmt, TOPO_FORMAT))
        return ft_err_set(err, -EINVAL,
                          "%s: not a simulator topology (expected \"format\": \"%s\")", what,
                          TOPO_FORMAT);
    static const char *const keys[] = {
        "format", "version",   "name",        "description",   "fabric",
        "kind",   "hosts",     "leaves",      "spines",        "hosts_per_leaf",
        "k",      "link_gbps", "uplink_gbps", "link_delay_ns", "uplink_delay_ns",
        NULL};
    int krc = jsonutil_check_keys(t, keys, what, err);
    if (krc < 0)
        return krc;
    const char *fab = jsonutil_str(t, "fabric");
    if (fab && strcmp(fab, s->p.fabric == SIM_FABRIC_IB ? "ib" : "roce"))
        return ft_err_set(err, -EINVAL, "%s: the topology is \"%s\" but the settings are for %s",
                          what, fab, s->p.fabric == SIM_FABRIC_IB ? "ib" : "roce");
    jsonutil_strcpy(t, "name", s->name, sizeof(s->name));
    const char *kind = jsonutil_str(t, "kind");
    double gbps, upg, delay, updelay;
    int rc = topo_num(t, what, "link_gbps", NAN, 1, 1600, &gbps, err);
    if (!rc)
        rc = topo_num(t, what, "uplink_gbps", gbps, 1, 1600, &upg, err);
    if (!rc)
        rc = topo_num(t, what, "link_delay_ns", 1000, 0, 1e7, &delay, err);
    if (!rc)
        rc = topo_num(t, what, "uplink_delay_ns", delay, 0, 1e7, &updelay, err);
    if (rc)
        return rc;
    uint64_t d = (uint64_t)llround(delay * SIM_PS_PER_NS), ud = (uint64_t)llround(updelay * 1000);
    struct tbuild b = {0};
    uint32_t nhosts = 0, nsw = 0;
    if (kind && !strcmp(kind, "star")) {
        double h;
        if ((rc = topo_num(t, what, "hosts", NAN, 2, SIM_MAX_HOSTS, &h, err)))
            return rc;
        nhosts = (uint32_t)h;
        nsw = 1;
        s->nnodes = nhosts + nsw;
        s->nodes = xalloc_zero(s->nnodes, sizeof(*s->nodes));
        name_node(s, nhosts, "sw%d", 0);
        for (uint32_t i = 0; i < nhosts; i++)
            add_link(&b, i, nhosts, gbps, d);
    } else if (kind && !strcmp(kind, "leaf_spine")) {
        double L, S, H;
        if ((rc = topo_num(t, what, "leaves", NAN, 1, 32, &L, err)) ||
            (rc = topo_num(t, what, "spines", NAN, 1, 32, &S, err)) ||
            (rc = topo_num(t, what, "hosts_per_leaf", NAN, 1, 64, &H, err)))
            return rc;
        nhosts = (uint32_t)(L * H);
        if (nhosts < 2 || nhosts > SIM_MAX_HOSTS)
            return ft_err_set(err, -EINVAL, "%s: leaves x hosts_per_leaf must be 2 to %d", what,
                              SIM_MAX_HOSTS);
        nsw = (uint32_t)(L + S);
        s->nnodes = nhosts + nsw;
        s->nodes = xalloc_zero(s->nnodes, sizeof(*s->nodes));
        for (uint32_t l = 0; l < (uint32_t)L; l++)
            name_node(s, nhosts + l, "leaf%d", (int)l);
        for (uint32_t sp = 0; sp < (uint32_t)S; sp++)
            name_node(s, nhosts + (uint32_t)L + sp, "spine%d", (int)sp);
        for (uint32_t i = 0; i < nhosts; i++)
            add_link(&b, i, nhosts + i / (uint32_t)H, gbps, d);
        for (uint32_t l = 0; l < (uint32_t)L; l++)
            for (uint32_t sp = 0; sp < (uint32_t)S; sp++)
                add_link(&b, nhosts + l, nhosts + (uint32_t)L + sp, upg, ud);
    } else if (kind && !strcmp(kind, "fat_tree")) {
        double kk;
        if ((rc = topo_num(t, what, "k", NAN, 2, 6, &kk, err)))
            return rc;
        uint32_t k = (uint32_t)kk, h2 = k / 2;
        if (k % 2)
            return ft_err_set(err, -EINVAL, "%s: fat_tree k must be even (2, 4 or 6)", what);
        nhosts = k * k * k / 4;
        uint32_t nedge = k * h2, nagg = k * h2, ncore = h2 * h2;
        nsw = nedge + nagg + ncore;
        s->nnodes = nhosts + nsw;
        s->nodes = xalloc_zero(s->nnodes, sizeof(*s->nodes));
        uint32_t e0 = nhosts, a0 = e0 + nedge, c0 = a0 + nagg;
        for (uint32_t i = 0; i < nedge; i++)
            name_node(s, e0 + i, "edge%d", (int)i);
        for (uint32_t i = 0; i < nagg; i++)
            name_node(s, a0 + i, "agg%d", (int)i);
        for (uint32_t i = 0; i < ncore; i++)
            name_node(s, c0 + i, "core%d", (int)i);
        /* Host h sits on edge h / (k/2); edge e of pod p links every aggregation switch of
         * pod p; aggregation a (0..k/2-1) of every pod links cores a*k/2 .. a*k/2+k/2-1. */
        for (uint32_t h = 0; h < nhosts; h++)
            add_link(&b, h, e0 + h / h2, gbps, d);
        for (uint32_t p = 0; p < k; p++)
            for (uint32_t e = 0; e < h2; e++)
                for (uint32_t a = 0; a < h2; a++)
                    add_link(&b, e0 + p * h2 + e, a0 + p * h2 + a, upg, ud);
        for (uint32_t p = 0; p < k; p++)
            for (uint32_t a = 0; a < h2; a++)
                for (uint32_t j = 0; j < h2; j++)
                    add_link(&b, a0 + p * h2 + a, c0 + a * h2 + j, upg, ud);
    } else {
        return ft_err_set(err, -EINVAL,
                          "%s: topology \"kind\" must be \"star\", \"leaf_spine\" or \"fat_tree\"",
                          what);
    }
    s->nhosts = nhosts;
    s->host_node = xalloc_zero(nhosts, sizeof(uint32_t));
    for (uint32_t i = 0; i < nhosts; i++) {
        name_node(s, i, "h%d", (int)i);
        s->nodes[i].host = true;
        s->host_node[i] = i;
    }
    /* Ports: contiguous per node, numbered in link order. */
    for (uint32_t i = 0; i < b.n; i++) {
        s->nodes[b.l[i].a].nports++;
        s->nodes[b.l[i].b].nports++;
    }
    uint32_t np = 0;
    for (uint32_t i = 0; i < s->nnodes; i++) {
        s->nodes[i].port0 = np;
        np += s->nodes[i].nports;
        s->nodes[i].nports = 0;
        s->nodes[i].salt = (uint32_t)sim_mix64(i * 0x9e3779b97f4a7c15ull + 17);
    }
    s->nports = np;
    s->ports = xalloc_zero(np, sizeof(*s->ports));
    for (uint32_t i = 0; i < b.n; i++) {
        const struct tlink *l = &b.l[i];
        uint32_t pa = s->nodes[l->a].port0 + s->nodes[l->a].nports;
        uint32_t pb = s->nodes[l->b].port0 + s->nodes[l->b].nports;
        struct sim_port *x = &s->ports[pa], *y = &s->ports[pb];
        x->node = l->a;
        x->local = (uint16_t)s->nodes[l->a].nports++;
        y->node = l->b;
        y->local = (uint16_t)s->nodes[l->b].nports++;
        x->peer = pb;
        y->peer = pa;
        for (int k = 0; k < 2; k++) {
            struct sim_port *p = k ? y : x;
            p->host = s->nodes[p->node].host;
            p->up = true;
            p->gbps = l->gbps;
            p->ppb = (uint64_t)llround(8000.0 * 65536.0 / l->gbps);
            p->prop = l->delay;
        }
    }
    free(b.l);
    for (uint32_t i = 0; i < s->nnodes; i++) {
        struct sim_node *n = &s->nodes[i];
        if (n->host && n->nports != 1)
            return ft_err_set(err, -EINVAL, "%s: host %s has %u ports (one expected)", what,
                              n->name, n->nports);
        if (!n->host) {
            n->route_off = xalloc_zero(nhosts, sizeof(uint32_t));
            n->route_n = xalloc_zero(nhosts, sizeof(uint8_t));
            s->routes_cap += nhosts * n->nports;
        }
    }
    s->routes = xalloc_zero(s->routes_cap ? s->routes_cap : 1, sizeof(uint32_t));
    sim_routes_compute(s);
    return 0;
}

void sim_routes_compute(struct sim *s)
{
    uint32_t *dist = xalloc(s->nnodes * sizeof(uint32_t));
    uint32_t *queue = xalloc(s->nnodes * sizeof(uint32_t));
    s->routes_len = 0;
    for (uint32_t h = 0; h < s->nhosts; h++) {
        /* Breadth-first from the destination over links that are up; hosts do not forward. */
        for (uint32_t i = 0; i < s->nnodes; i++)
            dist[i] = UINT32_MAX;
        uint32_t qh = 0, qt = 0, dst = s->host_node[h];
        dist[dst] = 0;
        queue[qt++] = dst;
        while (qh < qt) {
            uint32_t u = queue[qh++];
            if (s->nodes[u].host && u != dst)
                continue;
            const struct sim_node *n = &s->nodes[u];
            for (uint32_t k = 0; k < n->nports; k++) {
                const struct sim_port *p = &s->ports[n->port0 + k];
                uint32_t v = s->ports[p->peer].node;
                if (p->up && dist[v] == UINT32_MAX) {
                    dist[v] = dist[u] + 1;
                    queue[qt++] = v;
                }
            }
        }
        for (uint32_t i = 0; i < s->nnodes; i++) {
            struct sim_node *n = &s->nodes[i];
            if (n->host)
                continue;
            n->route_off[h] = s->routes_len;
            n->route_n[h] = 0;
            if (dist[i] == UINT32_MAX)
                continue;
            for (uint32_t k = 0; k < n->nports; k++) {
                uint32_t pi = n->port0 + k;
                const struct sim_port *p = &s->ports[pi];
                uint32_t v = s->ports[p->peer].node;
                if (p->up && dist[v] + 1 == dist[i] && (!s->nodes[v].host || v == dst)) {
                    s->routes[s->routes_len++] = pi;
                    n->route_n[h]++;
                }
            }
        }
    }
    free(dist);
    free(queue);
}

int sim_find_link(const struct sim *s, const char *a, const char *b)
{
    for (uint32_t i = 0; i < s->nnodes; i++) {
        if (strcmp(s->nodes[i].name, a))
            continue;
        const struct sim_node *n = &s->nodes[i];
        for (uint32_t k = 0; k < n->nports; k++) {
            const struct sim_port *p = &s->ports[n->port0 + k];
            if (!strcmp(s->nodes[s->ports[p->peer].node].name, b))
                return (int)(n->port0 + k);
        }
    }
    return -ENOENT;
}
