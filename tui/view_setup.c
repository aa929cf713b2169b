/* view_setup: the test setup view: a form (preset, endpoint, peer, key file, transport,
 * message size, concurrency, duration, incast senders, neighbours) that builds a mix from a
 * preset plus overrides, validates it, starts it, remembers it in the config and shows the
 * equivalent `fabtop run` command line (saving the edited mix when flags cannot say it). */
#include "tui/views.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "tui/config.h"

/* The form's lines, top to bottom. */
enum field {
    F_PRESET = 0,
    F_ENDPOINT,
    F_PEER,
    F_KEYFILE,
    F_TRANSPORT,
    F_SIZE,
    F_CONC,
    F_DURATION,
    F_SENDERS,
    F_NEIGHBOURS,
    F_START,
    F_COUNT
};

static const char *const field_label[F_COUNT] = {
    "Preset",      "Endpoint", "Peer",           "Key file",   "Transport", "Message size",
    "Concurrency", "Duration", "Incast senders", "Neighbours", ""};

/* Name of the edited mix saved for `fabtop run --mix last-setup`. */
#define LAST_SETUP "last-setup"
#define LABEL_W    15           /* columns for the labels */
#define VALUE_W    28           /* columns for the values */
#define MAX_SIZE   (1ull << 30) /* bytes: largest message the size keys step to */

enum ep_kind { EP_ANY = 0, EP_NETDEV, EP_IP, EP_RDMA, EP_GPU };

/* One choice of local endpoint, built from the topology. */
struct endpoint {
    enum ep_kind kind;
    char id[96];    /* remembered in the config: "any", "netdev:eth0", "ip:10.0.0.1",
                     * "rdma:mlx5_0:1", "gpu:0" */
    char label[96]; /* shown: "mlx5_0:1 (ib0)" */
    char netdev[32];
    char ip[64];
    char rdma[48];
    int gpu;  /* index into gpus, -1 */
    int port; /* index into ports, -1 */
    int nd;   /* index into netdevs, -1 */
};

/* One transport: a registered one, or a known name this build lacks. */
struct xp_choice {
    char name[16];
    bool present; /* in this build */
    unsigned ops; /* what it can do: bit (1 << MIX_OP_*) */
    bool ok;
    char why[160]; /* why it cannot be used with these settings */
};

#define MAX_XP 8

struct setup_state {
    char **presets;
    int npresets, preset;
    struct mix base; /* the preset as loaded */
    bool have_base;
    char base_error[512];
    struct endpoint *eps;
    int neps, ep;
    struct xp_choice xps[MAX_XP];
    int nxps;
    char transport[16];
    char peer[128];   /* "" = the loopback agent */
    char remote[128]; /* the last remote peer, for Left/Right */
    char key_file[256];
    /* Overrides as typed; "" = the preset's value. */
    char size[32], conc[16], duration[16], senders[16];
    bool neighbours;
    int sel;
    bool editing;
    char edit[256];
};

static struct setup_state *st(struct app *a)
{
    return a->vstate[VIEW_SETUP];
}

/* ---- small helpers ---- */

/* "64KiB", "4MiB", or plain bytes ("256"); unit suffixes only when exact. */
static void fmt_bytes(char *buf, size_t len, uint64_t b)
{
    if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(buf, len, "%lluMiB", (unsigned long long)(b >> 20));
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%lluKiB", (unsigned long long)(b >> 10));
    else
        snprintf(buf, len, "%llu", (unsigned long long)b);
}

/* The preset's sizes in words: "4KiB", "16KiB..256KiB x2 sweep", "4MiB/16MiB/64MiB mix". */
static void fmt_sizes(char *buf, size_t len, const struct mix_sizes *s)
{
    char a[32], b[32];
    fmt_bytes(a, sizeof(a), s->bytes[0]);
    if (s->kind == MIX_SIZE_FIXED) {
        snprintf(buf, len, "%s%s", a, s->bytes[0] < 1024 ? " B" : "");
    } else if (s->kind == MIX_SIZE_SWEEP) {
        fmt_bytes(b, sizeof(b), s->bytes[s->n - 1]);
        snprintf(buf, len, "%s..%s sweep, %d sizes", a, b, s->n);
    } else {
        size_t n = 0;
        buf[0] = '\0';
        for (int i = 0; i < s->n && n + 1 < len; i++) {
            fmt_bytes(a, sizeof(a), s->bytes[i]);
            n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "/" : "", a);
        }
        if (n + 1 < len)
            snprintf(buf + n, len - n, " mix");
    }
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    while (*end == ' ')
        end++;
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_seconds(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    while (*end == ' ')
        end++;
    if (end == s || (*end && strcmp(end, "s")) || !isfinite(v) || !(v > 0 && v <= 86400))
        return false;
    *out = v;
    return true;
}

static bool is_text_field(int f)
{
    return f == F_PEER || f == F_KEYFILE || f == F_SIZE || f == F_CONC || f == F_DURATION ||
           f == F_SENDERS;
}

static char *field_text(struct setup_state *s, int f, size_t *len)
{
    switch (f) {
    case F_PEER:
        *len = sizeof(s->peer);
        return s->peer;
    case F_KEYFILE:
        *len = sizeof(s->key_file);
        return s->key_file;
    case F_SIZE:
        *len = sizeof(s->size);
        return s->size;
    case F_CONC:
        *len = sizeof(s->conc);
        return s->conc;
    case F_DURATION:
        *len = sizeof(s->duration);
        return s->duration;
    case F_SENDERS:
        *len = sizeof(s->senders);
        return s->senders;
    default:
        *len = 0;
        return NULL;
    }
}

/* ---- the preset's shape ---- */

static int base_fg(const struct setup_state *s)
{
    return s->have_base ? mix_foreground(&s->base) : -1;
}

static int base_background(const struct setup_state *s)
{
    int n = 0;
    for (int i = 0; s->have_base && i < s->base.nflows; i++)
        n += s->base.flows[i].role == MIX_ROLE_BACKGROUND;
    return n;
}

static bool is_sender(const struct mix_flow *f)
{
    return f->role == MIX_ROLE_BACKGROUND && f->dir == MIX_DIR_RX;
}

/* Background flows streaming into this host: the incast senders. */
static int base_senders(const struct setup_state *s)
{
    int n = 0;
    for (int i = 0; s->have_base && i < s->base.nflows; i++)
        n += is_sender(&s->base.flows[i]);
    return n;
}

/* The most senders a mix can hold next to the preset's other flows. */
static int max_senders(const struct setup_state *s)
{
    return MIX_MAX_FLOWS - (s->base.nflows - base_senders(s));
}

/* A preset of the fabric simulator (sim/NAME): its flows run between simulated hosts, so no
 * endpoint, peer, key file or duration applies (they complete a number of operations). */
static bool base_sim(const struct setup_state *s)
{
    int fg = base_fg(s);
    return fg >= 0 && !strcmp(s->base.flows[fg].transport, "sim");
}

/* Does a field apply to this preset (and these settings)? */
static bool field_applies(const struct setup_state *s, int f)
{
    if (base_sim(s) && (f == F_ENDPOINT || f == F_PEER || f == F_KEYFILE || f == F_DURATION))
        return false;
    if (f == F_SENDERS)
        return base_senders(s) > 0 && s->neighbours;
    if (f == F_NEIGHBOURS)
        return base_background(s) > 0;
    return true;
}

/* Does the flow run with these settings (background flows only with neighbours on)? */
static bool flow_runs(const struct setup_state *s, const struct mix_flow *f)
{
    return f->role == MIX_ROLE_FOREGROUND || s->neighbours;
}

/* ---- endpoints ---- */

static struct endpoint *add_ep(struct setup_state *s, enum ep_kind k)
{
    s->eps = xalloc_resize(s->eps, (size_t)(s->neps + 1) * sizeof(*s->eps));
    struct endpoint *e = &s->eps[s->neps++];
    memset(e, 0, sizeof(*e));
    e->kind = k;
    e->gpu = e->port = e->nd = -1;
    return e;
}

/* "any (default route)", each netdev followed by its IPs, each RDMA port, each GPU. */
static void build_endpoints(struct app *a)
{
    struct setup_state *s = st(a);
    const struct topo_model *m = a->topo;
    free(s->eps);
    s->eps = NULL;
    s->neps = 0;
    struct endpoint *e = add_ep(s, EP_ANY);
    snprintf(e->id, sizeof(e->id), "any");
    snprintf(e->label, sizeof(e->label), "any (default route)");
    for (int d = 0; d < m->nnetdevs; d++) {
        const struct topo_netdev *nd = &m->netdevs[d];
        e = add_ep(s, EP_NETDEV);
        e->nd = d;
        snprintf(e->netdev, sizeof(e->netdev), "%s", nd->name);
        snprintf(e->id, sizeof(e->id), "netdev:%s", nd->name);
        snprintf(e->label, sizeof(e->label), "netdev %s", nd->name);
        char addrs[sizeof(nd->addrs)];
        snprintf(addrs, sizeof(addrs), "%s", nd->addrs);
        char *save = NULL;
        for (char *ip = strtok_r(addrs, " ", &save); ip; ip = strtok_r(NULL, " ", &save)) {
            e = add_ep(s, EP_IP);
            e->nd = d;
            snprintf(e->ip, sizeof(e->ip), "%s", ip);
            snprintf(e->id, sizeof(e->id), "ip:%s", ip);
            snprintf(e->label, sizeof(e->label), "ip %s (%s)", ip, nd->name);
        }
    }
    for (int p = 0; p < m->nports; p++) {
        const struct topo_port *pt = &m->ports[p];
        const struct topo_nic *n = &m->nics[pt->nic];
        if (!n->rdma_dev[0])
            continue;
        e = add_ep(s, EP_RDMA);
        e->port = p;
        e->nd = pt->netdev;
        snprintf(e->rdma, sizeof(e->rdma), "%s:%d", n->rdma_dev, pt->num);
        snprintf(e->id, sizeof(e->id), "rdma:%s", e->rdma);
        if (pt->netdev >= 0)
            snprintf(e->label, sizeof(e->label), "%s (%s)", e->rdma, m->netdevs[pt->netdev].name);
        else
            snprintf(e->label, sizeof(e->label), "%s", e->rdma);
    }
    for (int g = 0; g < m->ngpus; g++) {
        e = add_ep(s, EP_GPU);
        e->gpu = g;
        char name[32];
        topo_gpu_name(m, g, name, sizeof(name));
        snprintf(e->id, sizeof(e->id), "gpu:%d", g);
        snprintf(e->label, sizeof(e->label), "%s %s", name, m->gpus[g].model);
    }
}

static int find_ep(const struct setup_state *s, const char *id)
{
    for (int i = 0; i < s->neps; i++)
        if (!strcmp(s->eps[i].id, id))
            return i;
    return -1;
}

/* A short description of the selected endpoint for the hint column. */
static void ep_hint(struct app *a, const struct endpoint *e, char *buf, size_t len)
{
    const struct topo_model *m = a->topo;
    switch (e->kind) {
    case EP_ANY:
        snprintf(buf, len, "the kernel's route to the peer");
        break;
    case EP_NETDEV:
    case EP_IP: {
        const struct topo_netdev *nd = &m->netdevs[e->nd];
        char speed[32] = "speed n/a";
        if (nd->valid & TOPO_NET_V_SPEED)
            snprintf(speed, sizeof(speed), "%d Mb/s", nd->speed_mbps);
        snprintf(buf, len, "%s%s, %s%s", e->kind == EP_IP ? "on " : "",
                 e->kind == EP_IP ? nd->name : (nd->operstate[0] ? nd->operstate : "state n/a"),
                 speed, e->kind == EP_NETDEV && !nd->addrs[0] ? ", no IP" : "");
        break;
    }
    case EP_RDMA: {
        const struct topo_port *pt = &m->ports[e->port];
        char rate[32] = "rate n/a";
        if (pt->valid & TOPO_PORT_V_RATE)
            snprintf(rate, sizeof(rate), "%g Gb/s", pt->rate_gbps);
        /* "InfiniBand ACTIVE, 200 Gb/s"; an unknown link layer is left out. */
        snprintf(buf, len, "%s%s%s, %s",
                 pt->valid & TOPO_PORT_V_LL ? topo_link_layer_str(pt->link_layer) : "",
                 pt->valid & TOPO_PORT_V_LL ? " " : "",
                 pt->valid & TOPO_PORT_V_STATE ? topo_port_state_str(pt->state) : "state n/a",
                 rate);
        break;
    }
    case EP_GPU: {
        const struct topo_nearest *ne = &a->aff.nearest[e->gpu];
        if (ne->n) {
            char nn[64];
            topo_nic_name(m, ne->nics[0], nn, sizeof(nn));
            snprintf(buf, len, "nearest NIC %s (%s)", nn, topo_rel_str(ne->rel));
        } else {
            snprintf(buf, len, "no NIC near it");
        }
        break;
    }
    }
}

/* ---- transports ---- */

/* Can transport x run these settings? */
static bool xp_check(struct app *a, const struct xp_choice *x, char *why, size_t len)
{
    const char *name = x->name;
    struct setup_state *s = st(a);
    const struct endpoint *e = &s->eps[s->ep];
    const struct topo_model *m = a->topo;
    if (!x->present) {
        snprintf(why, len, "not in this build");
        return false;
    }
    char r[160] = "";
    if (runner_transport_available(name, r, sizeof(r)) < 0) {
        snprintf(why, len, "%s", r[0] ? r : "unavailable here");
        return false;
    }
    for (int i = 0; s->have_base && i < s->base.nflows; i++) {
        const struct mix_flow *f = &s->base.flows[i];
        if (flow_runs(s, f) && !(x->ops & (1u << f->op))) {
            snprintf(why, len, "cannot run %s (flow %s)", mix_op_str(f->op), f->name);
            return false;
        }
    }
    /* The simulator runs the sim/ presets (their flows name simulated hosts), and only it. */
    if (s->have_base && base_sim(s) != !strcmp(name, "sim")) {
        snprintf(why, len, "%s",
                 base_sim(s) ? "this preset is a simulated fabric" : "runs the sim/ presets only");
        return false;
    }
    if (!strcmp(name, "sim"))
        return true;
    if (!strcmp(name, "tcp")) {
        if (e->kind == EP_GPU) {
            snprintf(why, len, "TCP cannot use a GPU endpoint");
            return false;
        }
        if (e->kind == EP_RDMA && e->nd < 0) {
            snprintf(why, len, "%s has no netdev for TCP", e->rdma);
            return false;
        }
    } else if (!strcmp(name, "verbs") && e->kind != EP_RDMA) {
        bool any = false;
        for (int i = 0; i < s->neps; i++)
            any |= s->eps[i].kind == EP_RDMA;
        snprintf(why, len, "needs an RDMA port endpoint%s", any ? "" : " (none on this node)");
        return false;
    } else if (!strcmp(name, "nccl") && e->kind != EP_GPU) {
        snprintf(why, len, "needs a GPU endpoint%s", m->ngpus ? "" : " (none on this node)");
        return false;
    }
    return true;
}

static int find_xp(const struct setup_state *s, const char *name)
{
    for (int i = 0; i < s->nxps; i++)
        if (!strcmp(s->xps[i].name, name))
            return i;
    return -1;
}

/* Re-check every transport against the endpoint and preset. The chosen one stays if it is
 * still usable, else the preset's is taken if usable; otherwise the choice stays, shown as
 * not usable (Start says why): a real test never turns silently into another transport's
 * (the simulator's) because an endpoint changed. */
static void eval_transports(struct app *a)
{
    static const char *const known[] = {"tcp", "verbs", "nccl"};
    struct setup_state *s = st(a);
    s->nxps = 0;
    struct runner_transport all[MAX_XP];
    int nall = runner_transports(all, MAX_XP);
    for (int i = 0; i < nall && s->nxps < MAX_XP; i++) {
        snprintf(s->xps[s->nxps].name, sizeof(s->xps[0].name), "%s", all[i].name);
        s->xps[s->nxps].present = true;
        s->xps[s->nxps++].ops = all[i].ops;
    }
    for (size_t k = 0; k < sizeof(known) / sizeof(known[0]) && s->nxps < MAX_XP; k++)
        if (find_xp(s, known[k]) < 0) {
            snprintf(s->xps[s->nxps].name, sizeof(s->xps[0].name), "%s", known[k]);
            s->xps[s->nxps].present = false;
            s->xps[s->nxps++].ops = 0;
        }
    /* The simulator is the sim/ presets' one transport, and no other preset's. */
    int k = 0;
    for (int i = 0; i < s->nxps; i++)
        if (!s->have_base || base_sim(s) == !strcmp(s->xps[i].name, "sim"))
            s->xps[k++] = s->xps[i];
    s->nxps = k;
    for (int i = 0; i < s->nxps; i++) {
        struct xp_choice *x = &s->xps[i];
        x->why[0] = '\0';
        x->ok = xp_check(a, x, x->why, sizeof(x->why));
    }
    int cur = find_xp(s, s->transport);
    if (cur >= 0 && s->xps[cur].ok)
        return;
    int fg = base_fg(s);
    int pre = fg >= 0 ? find_xp(s, s->base.flows[fg].transport) : -1;
    if (pre >= 0 && s->xps[pre].ok) {
        snprintf(s->transport, sizeof(s->transport), "%s", s->xps[pre].name);
        return;
    }
    if (s->transport[0])
        return;
    for (int i = 0; i < s->nxps; i++)
        if (s->xps[i].ok) {
            snprintf(s->transport, sizeof(s->transport), "%s", s->xps[i].name);
            return;
        }
}

/* ---- presets ---- */

static void reset_overrides(struct setup_state *s)
{
    s->size[0] = s->conc[0] = s->duration[0] = s->senders[0] = '\0';
    s->neighbours = true;
    int fg = base_fg(s);
    if (fg >= 0)
        snprintf(s->transport, sizeof(s->transport), "%s", s->base.flows[fg].transport);
}

static void load_preset(struct app *a, int idx)
{
    struct setup_state *s = st(a);
    if (s->have_base)
        mix_free(&s->base);
    s->have_base = false;
    s->base_error[0] = '\0';
    s->preset = idx;
    struct ft_err err = {0};
    if (idx < 0 || idx >= s->npresets)
        snprintf(s->base_error, sizeof(s->base_error),
                 "no preset mixes found (engine/mixes, ~/.config/fabtop/mixes)");
    else if (mix_load(s->presets[idx], &s->base, &err) < 0)
        snprintf(s->base_error, sizeof(s->base_error), "%s", err.msg);
    else
        s->have_base = true;
    reset_overrides(s);
    eval_transports(a);
}

static int find_preset(const struct setup_state *s, const char *name)
{
    for (int i = 0; i < s->npresets; i++)
        if (!strcmp(s->presets[i], name))
            return i;
    return -1;
}

/* Re-read the preset list (a saved last-setup appears), keeping the selection. */
static void refresh_presets(struct app *a)
{
    struct setup_state *s = st(a);
    char cur[128] = "";
    if (s->preset >= 0 && s->preset < s->npresets)
        snprintf(cur, sizeof(cur), "%s", s->presets[s->preset]);
    mix_free_names(s->presets);
    s->presets = mix_list_presets();
    s->npresets = 0;
    while (s->presets[s->npresets])
        s->npresets++;
    int i = find_preset(s, cur);
    s->preset = i >= 0 ? i : s->npresets ? 0 : -1;
}

/* ---- remembered settings ---- */

static void restore_settings(struct app *a)
{
    struct setup_state *s = st(a);
    struct config cfg;
    config_load(a->o.config_dir, &cfg);
    int p = cfg.mix[0] ? find_preset(s, cfg.mix) : -1;
    load_preset(a, p >= 0 ? p : s->npresets ? 0 : -1);
    if (strcmp(cfg.peer, "loopback"))
        snprintf(s->peer, sizeof(s->peer), "%s", cfg.peer);
    const cJSON *j = cfg.setup;
    if (j && p >= 0) {
        char id[96] = "";
        if (jsonutil_strcpy(j, "endpoint", id, sizeof(id)) && find_ep(s, id) >= 0)
            s->ep = find_ep(s, id);
        jsonutil_strcpy(j, "transport", s->transport, sizeof(s->transport));
        jsonutil_strcpy(j, "size", s->size, sizeof(s->size));
        jsonutil_strcpy(j, "concurrency", s->conc, sizeof(s->conc));
        jsonutil_strcpy(j, "duration", s->duration, sizeof(s->duration));
        jsonutil_strcpy(j, "senders", s->senders, sizeof(s->senders));
        jsonutil_bool(j, "neighbours", &s->neighbours);
    }
    if (j) {
        jsonutil_strcpy(j, "key_file", s->key_file, sizeof(s->key_file));
        jsonutil_strcpy(j, "remote", s->remote, sizeof(s->remote));
    }
    if (s->peer[0])
        snprintf(s->remote, sizeof(s->remote), "%s", s->peer);
    eval_transports(a);
    config_free(&cfg);
}

static int remember_settings(struct app *a, struct ft_err *err)
{
    struct setup_state *s = st(a);
    struct config cfg;
    config_load(a->o.config_dir, &cfg); /* keep the theme and anything else in it */
    if (cfg.error[0]) {
        /* A malformed config file stays as it is, for its owner to fix. */
        int rc = ft_err_set(err, -EINVAL, "%s", cfg.error);
        config_free(&cfg);
        return rc;
    }
    snprintf(cfg.mix, sizeof(cfg.mix), "%s", s->have_base ? s->presets[s->preset] : "");
    snprintf(cfg.peer, sizeof(cfg.peer), "%s", s->peer[0] ? s->peer : "loopback");
    cJSON_Delete(cfg.setup);
    cfg.setup = cJSON_CreateObject();
    cJSON_AddStringToObject(cfg.setup, "endpoint", s->eps[s->ep].id);
    cJSON_AddStringToObject(cfg.setup, "transport", s->transport);
    cJSON_AddStringToObject(cfg.setup, "size", s->size);
    cJSON_AddStringToObject(cfg.setup, "concurrency", s->conc);
    cJSON_AddStringToObject(cfg.setup, "duration", s->duration);
    cJSON_AddStringToObject(cfg.setup, "senders", s->senders);
    cJSON_AddBoolToObject(cfg.setup, "neighbours", s->neighbours);
    cJSON_AddStringToObject(cfg.setup, "key_file", s->key_file);
    cJSON_AddStringToObject(cfg.setup, "remote", s->remote);
    int rc = config_save(a->o.config_dir, &cfg, err);
    config_free(&cfg);
    return rc;
}

/* ---- building the mix ---- */

/* Can `fabtop run` flags (--mix, --size, --duration, --peer, --key-file) say all of it? */
static bool needs_file(const struct setup_state *s)
{
    if (!s->have_base)
        return false;
    if (s->eps[s->ep].kind != EP_ANY && !base_sim(s))
        return true;
    for (int i = 0; i < s->base.nflows; i++)
        if (flow_runs(s, &s->base.flows[i]) && strcmp(s->base.flows[i].transport, s->transport))
            return true;
    long v;
    int fg = base_fg(s);
    if (s->conc[0] && !(parse_long(s->conc, 1, 1024, &v) && v == s->base.flows[fg].concurrency))
        return true;
    if (!s->neighbours && base_background(s) > 0)
        return true;
    if (s->neighbours && base_senders(s) > 0 && s->senders[0] &&
        !(parse_long(s->senders, 0, MIX_MAX_FLOWS, &v) && v == base_senders(s)))
        return true;
    return false;
}

/* Set the flow's local endpoint for its transport. */
static void apply_endpoint(const struct endpoint *e, const struct topo_model *m, struct mix_flow *f)
{
    f->local_ip[0] = f->local_netdev[0] = f->local_rdma[0] = '\0';
    f->local_gpu = -1;
    switch (e->kind) {
    case EP_ANY:
        break;
    case EP_NETDEV:
        snprintf(f->local_netdev, sizeof(f->local_netdev), "%s", e->netdev);
        break;
    case EP_IP:
        snprintf(f->local_ip, sizeof(f->local_ip), "%s", e->ip);
        break;
    case EP_RDMA:
        snprintf(f->local_rdma, sizeof(f->local_rdma), "%s", e->rdma);
        /* TCP leaves through the port's netdev: by its address where it has one (no
         * privilege needed), else by binding to the device. */
        if (!strcmp(f->transport, "tcp") && e->nd >= 0) {
            const struct topo_netdev *nd = &m->netdevs[e->nd];
            size_t n = strcspn(nd->addrs, " ");
            if (n && n < sizeof(f->local_ip))
                snprintf(f->local_ip, sizeof(f->local_ip), "%.*s", (int)n, nd->addrs);
            else
                snprintf(f->local_netdev, sizeof(f->local_netdev), "%s", nd->name);
        }
        break;
    case EP_GPU:
        f->local_gpu = e->gpu;
        break;
    }
}

/* Change the number of incast senders: drop the last ones, or copy the last one under new
 * names ("sender5", "sender6", ...). */
static void set_senders(struct mix *m, int want)
{
    int have = 0, last = -1;
    for (int i = 0; i < m->nflows; i++)
        if (is_sender(&m->flows[i])) {
            if (have >= want) {
                cJSON_Delete(m->flows[i].params);
                memmove(&m->flows[i], &m->flows[i + 1],
                        (size_t)(m->nflows - i - 1) * sizeof(m->flows[0]));
                m->nflows--;
                i--;
                continue;
            }
            have++;
            last = i;
        }
    if (last < 0)
        return;
    char stem[32];
    snprintf(stem, sizeof(stem), "%s", m->flows[last].name);
    size_t n = strlen(stem);
    while (n && stem[n - 1] >= '0' && stem[n - 1] <= '9')
        stem[--n] = '\0';
    for (int k = 1; have < want && m->nflows < MIX_MAX_FLOWS; k++) {
        char name[32];
        snprintf(name, sizeof(name), "%.24s%d", stem, k);
        bool used = false;
        for (int i = 0; i < m->nflows; i++)
            used |= !strcmp(m->flows[i].name, name);
        if (used)
            continue;
        struct mix_flow *f = &m->flows[m->nflows++];
        *f = m->flows[last];
        f->params = m->flows[last].params ? cJSON_Duplicate(m->flows[last].params, 1) : NULL;
        snprintf(f->name, sizeof(f->name), "%s", name);
        f->seed += (uint64_t)k;
        have++;
    }
}

/* HOST[:PORT] or [IPv6]:PORT, no spaces; a port from 1 to 65535. */
static bool peer_ok(const char *p)
{
    if (!*p || strpbrk(p, " \t/"))
        return false;
    const char *port = NULL;
    if (p[0] == '[') {
        const char *e = strchr(p, ']');
        if (!e || e == p + 1)
            return false;
        if (e[1] == ':')
            port = e + 2;
        else if (e[1])
            return false;
    } else {
        const char *c = strchr(p, ':');
        if (c == p)
            return false;
        if (c && !strchr(c + 1, ':'))
            port = c + 1; /* one colon: host:port; more: a bare IPv6 address */
    }
    long v;
    return !port || parse_long(port, 1, 65535, &v);
}

/* Build the mix the settings describe, or say (in why) the one thing that is wrong. */
static int build_mix(struct app *a, struct mix *m, char *why, size_t len)
{
    struct setup_state *s = st(a);
    if (!s->have_base) {
        snprintf(why, len, "%s", s->base_error);
        return -EINVAL;
    }
    int fg = base_fg(s);
    const struct mix_flow *bf = &s->base.flows[fg];
    uint64_t size = 0;
    long conc = bf->concurrency, senders = base_senders(s);
    double duration = 0;
    if (s->size[0] && (mix_parse_bytes(s->size, &size) < 0 || size > MAX_SIZE)) {
        snprintf(why, len, "Message size '%s': give bytes up to 1GiB, e.g. 4096, 64KiB, 1MiB",
                 s->size);
        return -EINVAL;
    }
    if (s->conc[0] && !parse_long(s->conc, 1, 1024, &conc)) {
        snprintf(why, len, "Concurrency '%s': give a whole number from 1 to 1024", s->conc);
        return -EINVAL;
    }
    if (conc != 1 && bf->op == MIX_OP_PINGPONG) {
        snprintf(why, len, "Concurrency: ping-pong keeps 1 message in flight; pick an rr preset");
        return -EINVAL;
    }
    if (s->duration[0] && field_applies(s, F_DURATION) && !parse_seconds(s->duration, &duration)) {
        snprintf(why, len, "Duration '%s': give seconds per size, more than 0, up to 86400",
                 s->duration);
        return -EINVAL;
    }
    if (field_applies(s, F_SENDERS) && s->senders[0] &&
        !parse_long(s->senders, 1, max_senders(s), &senders)) {
        snprintf(why, len, "Incast senders '%s': from 1 to %d (Neighbours off for none)",
                 s->senders, max_senders(s));
        return -EINVAL;
    }
    bool remote = s->peer[0] && field_applies(s, F_PEER);
    if (remote && !peer_ok(s->peer)) {
        snprintf(why, len, "Peer '%s': give HOST[:PORT] of a `fabtop serve`, or loopback", s->peer);
        return -EINVAL;
    }
    if (remote && s->key_file[0] && access(s->key_file, R_OK) < 0) {
        snprintf(why, len, "Key file %s: %s", s->key_file, strerror(errno));
        return -EINVAL;
    }
    int x = find_xp(s, s->transport);
    if (x < 0 || !s->xps[x].ok) {
        if (x >= 0)
            snprintf(why, len, "Transport %s: %s", s->xps[x].name, s->xps[x].why);
        else
            snprintf(why, len, "Transport: pick one that can run this endpoint and preset");
        return -EINVAL;
    }
    mix_copy(m, &s->base);
    if (!s->neighbours) {
        int k = 0;
        for (int i = 0; i < m->nflows; i++) {
            if (m->flows[i].role == MIX_ROLE_BACKGROUND) {
                cJSON_Delete(m->flows[i].params);
                continue;
            }
            m->flows[k++] = m->flows[i];
        }
        m->nflows = k;
        m->quiet_then_loaded = false; /* the quiet phase alone is all there is */
    } else if (base_senders(s) > 0 && senders != base_senders(s)) {
        set_senders(m, (int)senders);
    }
    for (int i = 0; i < m->nflows; i++) {
        struct mix_flow *f = &m->flows[i];
        snprintf(f->transport, sizeof(f->transport), "%s", s->transport);
        if (field_applies(s, F_ENDPOINT))
            apply_endpoint(&s->eps[s->ep], a->topo, f);
    }
    if (size)
        mix_set_size(m, size);
    m->flows[mix_foreground(m)].concurrency = (int)conc;
    if (duration > 0)
        mix_set_duration(m, duration);
    if (needs_file(s)) {
        char d[sizeof(m->description)];
        snprintf(d, sizeof(d), "%s", m->description);
        snprintf(m->description, sizeof(m->description), "Preset %s edited in the explorer. %s",
                 s->presets[s->preset], d);
    }
    for (int i = 0; s->xps[x].present && i < m->nflows; i++) {
        struct ft_err err = {0};
        if (runner_validate_flow(&m->flows[i], &err) < 0) {
            snprintf(why, len, "%s", err.msg);
            mix_free(m);
            return -EINVAL;
        }
    }
    return 0;
}

/* ---- the command line ---- */

static void mixes_dir(const struct app *a, char *buf, size_t len)
{
    char d[512];
    config_dir(a->o.config_dir, d, sizeof(d));
    snprintf(buf, len, "%s/mixes", d);
}

/* How `fabtop run` names the saved mix: "last-setup" where mix_load looks, else the path. */
static void saved_mix_name(const struct app *a, char *buf, size_t len)
{
    char mine[512], dflt[512];
    config_dir(a->o.config_dir, mine, sizeof(mine));
    config_dir(NULL, dflt, sizeof(dflt));
    if (!strcmp(mine, dflt))
        snprintf(buf, len, "%s", LAST_SETUP);
    else
        snprintf(buf, len, "%s/mixes/%s.json", mine, LAST_SETUP);
}

/* A shell word: as is when safe, else in single quotes. */
static void add_word(struct strbuf *sb, const char *w)
{
    bool safe = *w != '\0';
    for (const char *p = w; *p; p++)
        safe &= strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                       "_-.,:/@[]%+=",
                       *p) != NULL;
    if (safe) {
        strbuf_add(sb, w);
        return;
    }
    strbuf_add(sb, "'");
    for (const char *p = w; *p; p++)
        strbuf_add(sb, *p == '\'' ? "'\\''" : (char[2]){*p, '\0'});
    strbuf_add(sb, "'");
}

static void command_line(struct app *a, struct strbuf *sb)
{
    struct setup_state *s = st(a);
    bool file = needs_file(s);
    strbuf_add(sb, "fabtop run --mix ");
    char name[600];
    if (file)
        saved_mix_name(a, name, sizeof(name));
    else
        snprintf(name, sizeof(name), "%s", s->preset >= 0 ? s->presets[s->preset] : "?");
    add_word(sb, name);
    bool remote = s->peer[0] && field_applies(s, F_PEER);
    if (remote) {
        strbuf_add(sb, " --peer ");
        add_word(sb, s->peer);
    }
    if (remote && s->key_file[0]) {
        strbuf_add(sb, " --key-file ");
        add_word(sb, s->key_file);
    }
    if (file)
        return; /* the size and duration are in the saved mix */
    uint64_t b;
    if (s->size[0] && mix_parse_bytes(s->size, &b) == 0) {
        char t[32];
        fmt_bytes(t, sizeof(t), b);
        strbuf_printf(sb, " --size %s", t);
    } else if (s->size[0]) {
        strbuf_add(sb, " --size ");
        add_word(sb, s->size);
    }
    double d;
    if (!field_applies(s, F_DURATION))
        return;
    if (s->duration[0] && parse_seconds(s->duration, &d))
        strbuf_printf(sb, " --duration %g", d);
    else if (s->duration[0]) {
        strbuf_add(sb, " --duration ");
        add_word(sb, s->duration);
    }
}

/* mkdir -p: 0 or -errno. */
static int make_dirs(const char *dir)
{
    char tmp[600];
    snprintf(tmp, sizeof(tmp), "%s", dir);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    return mkdir(tmp, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static int save_last_setup(struct app *a, const struct mix *m, struct ft_err *err)
{
    char dir[600], path[700];
    mixes_dir(a, dir, sizeof(dir));
    int rc = make_dirs(dir);
    if (rc < 0)
        return ft_err_set(err, rc, "%s: cannot create: %s", dir, strerror(-rc));
    snprintf(path, sizeof(path), "%s/%s.json", dir, LAST_SETUP);
    cJSON *doc = mix_to_json(m);
    rc = jsonutil_save(path, doc, true, err);
    cJSON_Delete(doc);
    return rc;
}

/* ---- actions ---- */

static int start(struct app *a)
{
    struct setup_state *s = st(a);
    struct mix m;
    char why[512];
    if (build_mix(a, &m, why, sizeof(why)) < 0) {
        app_message(a, ROLE_ERROR, "%s", why);
        return REACT_REDRAW;
    }
    bool file = needs_file(s);
    snprintf(a->run_key_file, sizeof(a->run_key_file), "%s", s->key_file);
    struct ft_err err = {0};
    bool remote = s->peer[0] && field_applies(s, F_PEER);
    if (app_start_run(a, &m, remote ? s->peer : NULL, &err) < 0) {
        app_message(a, ROLE_ERROR, "%s", err.msg);
        mix_free(&m);
        return REACT_REDRAW;
    }
    /* A simulated fabric is watched in its own view (the live view has the numbers too). */
    if (base_sim(s)) {
        app_switch(a, VIEW_FABRIC);
        app_message(a, ROLE_INFO, "running %s: F4 shows its latency and counters", m.name);
    }
    struct ft_err serr = {0}, cerr = {0};
    if (file && save_last_setup(a, &m, &serr) < 0)
        app_message(a, ROLE_WARN, "%s: no command-line equivalent", serr.msg);
    if (remember_settings(a, &cerr) < 0)
        app_message(a, ROLE_WARN, "%s: settings not remembered", cerr.msg);
    mix_free(&m);
    return REACT_REDRAW;
}

static void move_sel(struct setup_state *s, int d)
{
    int f = s->sel;
    for (int k = 0; k < F_COUNT; k++) {
        f += d;
        if (f < 0 || f >= F_COUNT)
            return;
        if (field_applies(s, f)) {
            s->sel = f;
            return;
        }
    }
}

static void step_size(struct setup_state *s, int dir)
{
    uint64_t b;
    if (!s->size[0] || mix_parse_bytes(s->size, &b) < 0) {
        int fg = base_fg(s);
        b = fg >= 0 ? s->base.flows[fg].size.bytes[0] : 4096;
    }
    /* Step to the next power of two. */
    uint64_t p = 1;
    while (p < b)
        p <<= 1;
    if (dir > 0)
        b = p > b ? p : p << 1;
    else
        b = p == b ? b >> 1 : p >> 1;
    if (b < 1)
        b = 1;
    if (b > MAX_SIZE)
        b = MAX_SIZE;
    fmt_bytes(s->size, sizeof(s->size), b);
}

static void step_long(char *buf, size_t len, long cur, long lo, long hi, int dir)
{
    long v;
    if (!buf[0] || !parse_long(buf, lo, hi, &v))
        v = cur;
    v += dir;
    if (v < lo)
        v = lo;
    if (v > hi)
        v = hi;
    snprintf(buf, len, "%ld", v);
}

/* Left/Right on the selected field. */
static int change(struct app *a, int dir)
{
    struct setup_state *s = st(a);
    int fg = base_fg(s);
    switch (s->sel) {
    case F_PRESET:
        if (s->npresets)
            load_preset(a, (s->preset + dir + s->npresets) % s->npresets);
        break;
    case F_ENDPOINT:
        s->ep = (s->ep + dir + s->neps) % s->neps;
        eval_transports(a);
        break;
    case F_PEER:
        if (s->peer[0]) {
            snprintf(s->remote, sizeof(s->remote), "%s", s->peer);
            s->peer[0] = '\0';
        } else if (s->remote[0]) {
            snprintf(s->peer, sizeof(s->peer), "%s", s->remote);
        } else {
            app_message(a, ROLE_INFO, "Enter types HOST[:PORT] of a `fabtop serve` agent");
        }
        break;
    case F_TRANSPORT: {
        int cur = find_xp(s, s->transport);
        for (int k = 1; k <= s->nxps; k++) {
            int i = ((cur < 0 ? 0 : cur) + dir * k + s->nxps * k) % s->nxps;
            if (s->xps[i].ok) {
                snprintf(s->transport, sizeof(s->transport), "%s", s->xps[i].name);
                break;
            }
        }
        break;
    }
    case F_SIZE:
        if (s->have_base)
            step_size(s, dir);
        break;
    case F_CONC:
        if (fg >= 0)
            step_long(s->conc, sizeof(s->conc), s->base.flows[fg].concurrency, 1, 1024, dir);
        break;
    case F_DURATION: {
        double d = fg >= 0 ? s->base.flows[fg].duration_s : 5;
        if (s->duration[0])
            parse_seconds(s->duration, &d);
        d = floor(d) + dir;
        snprintf(s->duration, sizeof(s->duration), "%g", d < 1 ? 1 : d > 86400 ? 86400 : d);
        break;
    }
    case F_SENDERS:
        step_long(s->senders, sizeof(s->senders), base_senders(s), 1, max_senders(s), dir);
        break;
    case F_NEIGHBOURS:
        s->neighbours = !s->neighbours;
        eval_transports(a);
        break;
    default:
        return REACT_HANDLED;
    }
    return REACT_REDRAW;
}

/* Del: the selected field back to the preset's value (or the default). */
static void reset_field(struct app *a)
{
    struct setup_state *s = st(a);
    size_t len;
    char *t = field_text(s, s->sel, &len);
    if (t)
        t[0] = '\0';
    if (s->sel == F_ENDPOINT)
        s->ep = 0;
    if (s->sel == F_NEIGHBOURS)
        s->neighbours = true;
    if (s->sel == F_TRANSPORT) {
        int fg = base_fg(s);
        if (fg >= 0)
            snprintf(s->transport, sizeof(s->transport), "%s", s->base.flows[fg].transport);
    }
    eval_transports(a);
}

/* Check one typed value at once, so a mistake is reported where it was made. */
static void check_field(struct app *a, int f)
{
    struct setup_state *s = st(a);
    struct mix m;
    char why[512];
    if (build_mix(a, &m, why, sizeof(why)) == 0) {
        mix_free(&m);
        return;
    }
    static const char *const prefix[F_COUNT] = {
        [F_PEER] = "Peer",        [F_KEYFILE] = "Key file",  [F_SIZE] = "Message size",
        [F_CONC] = "Concurrency", [F_DURATION] = "Duration", [F_SENDERS] = "Incast senders"};
    if (prefix[f] && !strncmp(why, prefix[f], strlen(prefix[f])))
        app_message(a, ROLE_ERROR, "%s", why);
    else if (f == F_SIZE && s->size[0] && strstr(why, "size"))
        app_message(a, ROLE_ERROR, "%s", why); /* the transport's own size limits */
}

static int edit_key(struct app *a, int ch)
{
    struct setup_state *s = st(a);
    size_t n = strlen(s->edit), cap;
    char *t = field_text(s, s->sel, &cap);
    if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        char *v = s->edit;
        while (*v == ' ')
            v++;
        size_t k = strlen(v);
        while (k && v[k - 1] == ' ')
            v[--k] = '\0';
        if (s->sel == F_PEER && !strcmp(v, "loopback"))
            v[0] = '\0';
        snprintf(t, cap, "%s", v);
        if (s->sel == F_PEER && s->peer[0])
            snprintf(s->remote, sizeof(s->remote), "%s", s->peer);
        s->editing = false;
        check_field(a, s->sel);
        return REACT_REDRAW;
    }
    if (ch == 27) {
        s->editing = false;
        return REACT_REDRAW;
    }
    if (ch >= KEY_F(0) && ch <= KEY_F(63)) {
        s->editing = false; /* another view or quit: drop the edit */
        return REACT_NONE;
    }
    if (ch == KEY_RESIZE)
        return REACT_NONE;
    if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n)
        s->edit[n - 1] = '\0';
    else if (ch == 21) /* Ctrl-U */
        s->edit[0] = '\0';
    else if (ch >= 32 && ch < 127 && n + 1 < cap && n + 1 < sizeof(s->edit)) {
        s->edit[n] = (char)ch;
        s->edit[n + 1] = '\0';
    }
    return REACT_REDRAW;
}

static int setup_key(struct app *a, int ch)
{
    struct setup_state *s = st(a);
    if (s->editing)
        return edit_key(a, ch);
    switch (ch) {
    case KEY_UP:
    case 'k':
        move_sel(s, -1);
        return REACT_REDRAW;
    case KEY_DOWN:
    case 'j':
        move_sel(s, 1);
        return REACT_REDRAW;
    case KEY_HOME:
    case 'g':
        s->sel = 0;
        return REACT_REDRAW;
    case KEY_END:
    case 'G':
        s->sel = F_START;
        return REACT_REDRAW;
    case KEY_LEFT:
    case 'h':
        return change(a, -1);
    case KEY_RIGHT:
    case 'l':
    case ' ':
        return change(a, 1);
    case KEY_DC:
    case 'x':
        reset_field(a);
        return REACT_REDRAW;
    case '\n':
    case '\r':
    case KEY_ENTER:
        if (s->sel == F_START)
            return start(a);
        if (is_text_field(s->sel)) {
            size_t cap;
            snprintf(s->edit, sizeof(s->edit), "%s", field_text(s, s->sel, &cap));
            s->editing = true;
            return REACT_REDRAW;
        }
        move_sel(s, 1);
        return REACT_REDRAW;
    case 'S': /* F5 stays the global key for the results view */
    case 's':
        return start(a);
    default:
        return REACT_NONE;
    }
}

/* ---- drawing ---- */

/* The value and the hint shown for a field. */
static void field_value(struct app *a, int f, char *val, size_t vlen, char *hint, size_t hlen,
                        bool *dim)
{
    struct setup_state *s = st(a);
    int fg = base_fg(s);
    const struct mix_flow *bf = fg >= 0 ? &s->base.flows[fg] : NULL;
    *dim = false;
    hint[0] = '\0';
    switch (f) {
    case F_PRESET:
        snprintf(val, vlen, "< %.*s >", VALUE_W - 4,
                 s->preset >= 0 ? s->presets[s->preset] : "none");
        if (bf)
            snprintf(hint, hlen, "%s, %d flow%s, %s", mix_op_str(bf->op), s->base.nflows,
                     s->base.nflows == 1 ? "" : "s",
                     s->base.quiet_then_loaded ? "quiet+loaded" : "loaded");
        else
            snprintf(hint, hlen, "cannot load it (below)");
        break;
    case F_ENDPOINT:
        if (base_sim(s)) {
            snprintf(val, vlen, "n/a");
            snprintf(hint, hlen, "simulated hosts (the preset's)");
            *dim = true;
            break;
        }
        snprintf(val, vlen, "< %.*s >", VALUE_W - 4, s->eps[s->ep].label);
        ep_hint(a, &s->eps[s->ep], hint, hlen);
        break;
    case F_PEER:
        if (base_sim(s)) {
            snprintf(val, vlen, "n/a");
            snprintf(hint, hlen, "none: a simulated fabric");
            *dim = true;
            break;
        }
        snprintf(val, vlen, "%s", s->peer[0] ? s->peer : "loopback");
        snprintf(hint, hlen, "%s",
                 s->peer[0] ? "a `fabtop serve` agent" : "in-process agent, 127.0.0.1");
        break;
    case F_KEYFILE:
        if (base_sim(s)) {
            snprintf(val, vlen, "n/a");
            *dim = true;
            break;
        }
        snprintf(val, vlen, "%s", s->key_file[0] ? s->key_file : "(default)");
        *dim = !s->key_file[0];
        snprintf(hint, hlen, "%s",
                 s->peer[0] ? "the agent's pre-shared key" : "only for remote peers");
        break;
    case F_TRANSPORT: {
        int bad = 0;
        for (int i = 0; i < s->nxps; i++)
            bad += !s->xps[i].ok;
        int cur = find_xp(s, s->transport);
        if (!s->transport[0])
            snprintf(val, vlen, "< none usable >");
        else if (cur < 0 || !s->xps[cur].ok)
            snprintf(val, vlen, "< %s (not usable) >", s->transport);
        else
            snprintf(val, vlen, "< %s >", s->transport);
        *dim = cur < 0 || !s->xps[cur].ok;
        snprintf(hint, hlen, "%d usable, %d not (below)", s->nxps - bad, bad);
        break;
    }
    case F_SIZE:
        if (s->size[0]) {
            snprintf(val, vlen, "%s", s->size);
            if (bf) {
                char p[64];
                fmt_sizes(p, sizeof(p), &bf->size);
                snprintf(hint, hlen, "preset: %s", p);
            }
        } else if (bf) {
            fmt_sizes(val, vlen, &bf->size);
            snprintf(hint, hlen, "preset's; type 64KiB or 1MiB");
        }
        break;
    case F_CONC:
        if (s->conc[0])
            snprintf(val, vlen, "%s", s->conc);
        else
            snprintf(val, vlen, "%d", bf ? bf->concurrency : 1);
        snprintf(hint, hlen, "%s",
                 !bf                         ? ""
                 : bf->op == MIX_OP_PINGPONG ? "ping-pong: 1 message in flight"
                 : bf->op == MIX_OP_RR       ? "requests in flight, foreground"
                 : bf->op == MIX_OP_STREAM   ? "connections, foreground"
                                             : "operations in flight");
        break;
    case F_DURATION:
        if (base_sim(s)) {
            snprintf(val, vlen, "n/a");
            unsigned long long n = bf ? (unsigned long long)bf->iterations : 0ull;
            snprintf(hint, hlen, "%llu operation%s in simulated time", n, n == 1 ? "" : "s");
            *dim = true;
            break;
        }
        if (s->duration[0])
            snprintf(val, vlen, "%s%s", s->duration, strchr(s->duration, 's') ? "" : " s");
        else
            snprintf(val, vlen, "%g s", bf ? bf->duration_s : 0.0);
        snprintf(hint, hlen, "per size, after %g s warm-up", bf ? bf->warmup_s : 0.0);
        break;
    case F_SENDERS:
        if (!base_senders(s)) {
            snprintf(val, vlen, "n/a");
            snprintf(hint, hlen, "no incast senders here");
        } else if (!s->neighbours) {
            snprintf(val, vlen, "n/a");
            snprintf(hint, hlen, "neighbours are off");
        } else {
            if (s->senders[0])
                snprintf(val, vlen, "%s", s->senders);
            else
                snprintf(val, vlen, "%d", base_senders(s));
            snprintf(hint, hlen, "streams into this host at once");
        }
        *dim = !field_applies(s, f);
        break;
    case F_NEIGHBOURS: {
        int bg = base_background(s);
        if (!bg) {
            snprintf(val, vlen, "n/a");
            snprintf(hint, hlen, "no background flows");
        } else {
            snprintf(val, vlen, "< %s >", s->neighbours ? "on" : "off");
            snprintf(hint, hlen, s->neighbours ? "%d background flow%s kept" : "%d dropped", bg,
                     bg == 1 ? "" : "s");
        }
        *dim = !bg;
        break;
    }
    case F_START:
        snprintf(val, vlen, "[ Start ]");
        snprintf(hint, hlen, "%s",
                 a->runner && !runner_done(a->runner) ? "a test is running (F4 live)"
                                                      : "or S from any field");
        break;
    }
}

/* Word-wrap text into at most maxrows rows of width w; a cut ends with "...". Returns the
 * rows used. */
static int draw_wrapped(struct ui *u, int y, int x, int w, int maxrows, enum theme_role r,
                        const char *text)
{
    int rows = 0;
    const char *p = text;
    while (*p && rows < maxrows) {
        while (rows && *p == ' ') /* the first row keeps its indent */
            p++;
        size_t n = strlen(p);
        char line[512];
        if ((int)n > w) {
            n = (size_t)w;
            while (n > 0 && p[n] != ' ')
                n--;
            if (n == 0)
                n = (size_t)w;
        }
        bool last = rows == maxrows - 1 && p[n] != '\0';
        if (last && n + 3 > (size_t)w)
            n = (size_t)(w > 3 ? w - 3 : 0);
        snprintf(line, sizeof(line), "%.*s%s", (int)n, p, last ? "..." : "");
        ui_text(u, y + rows, x, w, r, line);
        rows++;
        p += n;
    }
    return rows;
}

/* The usable transports on one row, then each unusable one with its reason, greyed; at
 * most maxrows rows. Returns the rows used. */
static int draw_transports(struct app *a, struct ui *u, int y, int x, int w, int maxrows)
{
    struct setup_state *s = st(a);
    struct strbuf sb;
    strbuf_init(&sb);
    strbuf_add(&sb, "Usable transports: ");
    int ok = 0, bad = 0;
    for (int i = 0; i < s->nxps; i++)
        if (s->xps[i].ok)
            strbuf_printf(&sb, "%s%s", ok++ ? ", " : "", s->xps[i].name);
    strbuf_add(&sb, ok ? "" : "none with these settings");
    ui_text(u, y, x, w, ok ? ROLE_OK : ROLE_WARN, sb.s);
    strbuf_free(&sb);
    int rows = 1;
    for (int i = 0; i < s->nxps; i++) {
        if (s->xps[i].ok)
            continue;
        bad++;
        if (rows >= maxrows)
            continue;
        char line[256];
        snprintf(line, sizeof(line), "  %s: %s", s->xps[i].name, s->xps[i].why);
        rows += draw_wrapped(u, y + rows, x, w, 1, ROLE_DIM, line);
    }
    if (bad + 1 > rows && rows > 1) {
        /* The last row says how many did not fit instead. */
        char more[64];
        snprintf(more, sizeof(more), "  (%d more not usable)", bad + 2 - rows);
        ui_text_pad(u, y + rows - 1, x, w, ROLE_DIM, more);
    }
    return rows;
}

static void setup_draw(struct app *a, struct ui *u, const struct layout *l)
{
    struct setup_state *s = st(a);
    const struct rect *b = &l->pane[0];
    struct rect box = {b->y, b->x, F_COUNT + 2, b->w};
    ui_box(u, &box, "Test setup", true);
    struct rect in = ui_inner(&box);
    int vx = in.x + 1 + LABEL_W, hx = vx + VALUE_W + 2, hw = in.x + in.w - hx - 1;
    for (int f = 0; f < F_COUNT; f++) {
        char val[256], hint[256];
        bool dim;
        field_value(a, f, val, sizeof(val), hint, sizeof(hint), &dim);
        int y = in.y + f;
        bool sel = s->sel == f;
        ui_text(u, y, in.x + 1, LABEL_W, dim ? ROLE_DIM : ROLE_NORMAL, field_label[f]);
        if (sel && s->editing) {
            char e[300];
            int keep = VALUE_W - 1;
            int n = (int)strlen(s->edit);
            snprintf(e, sizeof(e), "%s_", n > keep ? s->edit + (n - keep) : s->edit);
            ui_text_pad(u, y, vx, VALUE_W, ROLE_INPUT, e);
        } else {
            enum theme_role r = sel ? ROLE_SELECTED : dim ? ROLE_DIM : ROLE_INPUT;
            if (f == F_START && !sel)
                r = ROLE_OK;
            ui_text_pad(u, y, vx,
                        sel                       ? VALUE_W
                        : ui_width(val) < VALUE_W ? ui_width(val)
                                                  : VALUE_W,
                        r, val);
        }
        if (hw > 4)
            ui_text(u, y, hx, hw, ROLE_DIM, hint);
    }
    /* Below the form: transports, the preset's description and lesson, the command line. */
    int y = box.y + box.h, bottom = b->y + b->h, w = b->w - 2, x = b->x + 1;
    struct strbuf cmd;
    strbuf_init(&cmd);
    command_line(a, &cmd);
    bool file = needs_file(s);
    int cmd_rows = ((int)cmd.len + 2 + w - 1) / w;
    if (cmd_rows > 2)
        cmd_rows = 2;
    int need = cmd_rows + (file ? 1 : 0);
    int ycmd = bottom - need;
    /* The transports may take all but two rows of the preset's text. */
    y += draw_transports(a, u, y, x, w, ycmd - y - 2 > 1 ? ycmd - y - 2 : 1);
    if (s->have_base) {
        char about[2048];
        snprintf(about, sizeof(about), "%s: %s", s->presets[s->preset], s->base.description);
        int used = draw_wrapped(u, y, x, w, ycmd - y, ROLE_NORMAL, about);
        y += used;
        if (s->base.lesson[0] && y < ycmd) {
            snprintf(about, sizeof(about), "Lesson: %s", s->base.lesson);
            y += draw_wrapped(u, y, x, w, ycmd - y, ROLE_INFO, about);
        }
    } else {
        draw_wrapped(u, y, x, w, ycmd - y, ROLE_ERROR, s->base_error);
    }
    char line[1024];
    snprintf(line, sizeof(line), "$ %s", cmd.s);
    draw_wrapped(u, ycmd, x, w, cmd_rows, ROLE_NORMAL, line);
    if (file) {
        char dir[600], shown[700];
        mixes_dir(a, dir, sizeof(dir));
        const char *home = getenv("HOME");
        size_t hl = home ? strlen(home) : 0;
        if (hl > 1 && !strncmp(dir, home, hl) && dir[hl] == '/')
            snprintf(shown, sizeof(shown), "~%s", dir + hl);
        else
            snprintf(shown, sizeof(shown), "%s", dir);
        snprintf(line, sizeof(line), "  (Start saves the edited mix as %s/%s.json)", shown,
                 LAST_SETUP);
        ui_text(u, ycmd + cmd_rows, x, w, ROLE_DIM, line);
    }
    strbuf_free(&cmd);
}

/* ---- the view ---- */

static void setup_init(struct app *a)
{
    struct setup_state *s = xalloc_zero(1, sizeof(*s));
    a->vstate[VIEW_SETUP] = s;
    s->preset = -1;
    s->neighbours = true;
    build_endpoints(a);
    refresh_presets(a);
    restore_settings(a);
}

static void setup_fini(struct app *a)
{
    struct setup_state *s = st(a);
    if (s->have_base)
        mix_free(&s->base);
    mix_free_names(s->presets);
    free(s->eps);
    free(s);
}

static void setup_enter(struct app *a)
{
    struct setup_state *s = st(a);
    char cur[128] = "";
    if (s->preset >= 0)
        snprintf(cur, sizeof(cur), "%s", s->presets[s->preset]);
    refresh_presets(a);
    /* The preset file may have changed (last-setup is rewritten on every start). */
    if (s->preset >= 0 && strcmp(cur, s->presets[s->preset]))
        load_preset(a, s->preset);
    eval_transports(a);
}

static const char *setup_keys(const struct app *a)
{
    const struct setup_state *s = a->vstate[VIEW_SETUP];
    if (s->editing)
        return "type the value  Enter confirms  Esc cancels  Backspace/Ctrl-U delete";
    return "Up/Down field  Left/Right change  Enter edit  Del reset  S start";
}

const struct view_ops view_setup = {
    .name = "Setup",
    .fkey = 2,
    .layout = LAYOUT_SINGLE,
    .init = setup_init,
    .fini = setup_fini,
    .enter = setup_enter,
    .draw = setup_draw,
    .key = setup_key,
    .keys = setup_keys,
};
