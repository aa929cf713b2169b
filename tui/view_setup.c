/* view_setup: the test setup view: a form (preset, endpoint, peer, key file, transport,
 * message size, concurrency, duration, incast senders, neighbours, drill) over a mix builder
 * (engine/run/mix_build.h: the preset plus the knobs, validated there), which starts the
 * mix, remembers the settings in the config and shows the equivalent `fabtop run` command
 * line with its flags. D drills the same mix instead (the Drill field's fault, its length
 * and repetitions; app_drill.h) when drill_check_mix_fault takes it, in the background, with the
 * live view following; a fault the explorer cannot carry out (a link-down, a blackhole of TCP
 * flows: they need a namespace or a netdev of the drill's own) is never started: D writes the
 * mix to a file and the form shows the `fabtop drill` line that drills it. After the mix presets
 * the Preset field offers the model presets (engine/model/): then the form is the model's layout
 * (TP, PP, EP, batch, context, prompt, page, KV dtype, engine, transport) with the sizes it
 * derives, and Start runs the mix engine/run/mix_model.h makes of it. C runs the handshake doctor
 * against the Peer field's agent (app_doctor.h, in the background: both ends' facts, the rules,
 * with an RDMA endpoint the queue-pair walk) and shows its report in a panel over the form, as
 * `fabtop doctor` prints it. */
#include "tui/views.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/model/model_config.h"
#include "engine/model/model_size.h"
#include "engine/run/drill.h"
#include "engine/run/mix_build.h"
#include "engine/run/mix_model.h"
#include "tui/app_doctor.h"
#include "tui/config.h"
#include "tui/setup_model.h"
#include "tui/ui_list.h"

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
    F_DRILL,
    F_START,
    F_COUNT
};

static const char *const field_label[F_COUNT] = {
    "Preset",      "Endpoint", "Peer",           "Key file",   "Transport", "Message size",
    "Concurrency", "Duration", "Incast senders", "Neighbours", "Drill",     ""};

/* How long the Drill field's fault lasts when no time is typed, seconds (once). */
#define DRILL_DEF_FOR_S 2.0
/* The Drill field's choices, in the order Right steps through them: off, then every kind of
 * `fabtop drill` (those the explorer cannot carry out show the command that can). */
static const enum drill_fault drill_order[] = {
    0, DRILL_PEER_STALL, DRILL_PEER_KILL, DRILL_BLACKHOLE, DRILL_RANK_LOSS, DRILL_LINK_DOWN};
#define N_DRILL_ORDER ((int)(sizeof(drill_order) / sizeof(drill_order[0])))

/* The form's lines for a model preset. */
enum mfield {
    M_PRESET = 0,
    M_TP,
    M_PP,
    M_EP,
    M_BATCH,
    M_CONTEXT,
    M_PROMPT,
    M_PAGE,
    M_DTYPE,
    M_ENGINE,
    M_TRANSPORT,
    M_START,
    M_COUNT
};

static const char *const mfield_label[M_COUNT] = {"Preset",   "TP",      "PP",        "EP",
                                                  "Batch",    "Context", "Prompt",    "Page",
                                                  "KV dtype", "Engine",  "Transport", ""};

/* The transports a model's mix runs over (docs/serving.md). */
static const char *const model_transports[] = {"nccl", "verbs", "tcp"};
#define N_MODEL_XP 3

#define LABEL_W 15 /* columns for the labels */
#define VALUE_W 28 /* columns for the values */

/* One choice of local endpoint, built from the topology. */
struct endpoint {
    struct mix_build_endpoint ep; /* ep.id is remembered in the config */
    char label[96];               /* shown: "mlx5_0:1 (ib0)" */
    int port;                     /* index into ports, -1 */
    int nd;                       /* index into netdevs, -1 */
};

/* One transport offered (mix_build_transports): registered, or a known name this build
 * lacks. */
struct xp_choice {
    char name[16];
    bool ok;
    char why[160]; /* why it cannot be used with these settings */
};

#define MAX_XP 8

struct setup_state {
    /* The doctor (C): running or ended, and its panel over the form (shown, scrolled to top). */
    struct app_doctor *doctor;
    bool doctor_shown, doctor_told;
    int doctor_top;
    char **presets;
    int npresets, preset;
    struct mix_build b; /* the preset as loaded and the knobs as typed */
    struct endpoint *eps;
    int neps, ep;
    struct xp_choice xps[MAX_XP];
    int nxps;
    char remote[128];      /* the last remote peer, for Left/Right */
    struct ui_list fields; /* the selected field (the form does not scroll) */
    bool editing;
    char edit[256];
    /* A model preset instead of a mix (model >= 0, an index into models). */
    char **models;
    int nmodels, model;
    struct model_config mc;
    bool mc_ok;
    char mc_error[256];
    struct model_layout ml;
    char mtransport[16];
    char mwhy[600];    /* why the best transport here is not a better one */
    char mbest[16];    /* mix_model_best_transport */
    bool mxp_ok;       /* the chosen transport is usable here ... */
    char mxp_why[256]; /* ... or why not */
    struct strbuf msz; /* the sizes (setup_model_sizes_text), or the refusal */
    bool msz_ok;
    /* The Drill field: off (0) or a fault kind (drill_order), and "FOR x TIMES" as typed
     * ("" is DRILL_DEF_FOR_S once). */
    enum drill_fault drill_fault;
    char drill_time[32];
};

static struct setup_state *st(struct app *a)
{
    return a->vstate[VIEW_SETUP];
}

/* ---- small helpers ---- */

/* The preset's sizes in words: "4KiB", "16KiB..256KiB x2 sweep", "4MiB/16MiB/64MiB mix". */
static void fmt_sizes(char *buf, size_t len, const struct mix_sizes *s)
{
    char a[32], b[32];
    mix_build_fmt_bytes(a, sizeof(a), s->bytes[0]);
    if (s->kind == MIX_SIZE_FIXED) {
        snprintf(buf, len, "%s%s", a, s->bytes[0] < 1024 ? " B" : "");
    } else if (s->kind == MIX_SIZE_SWEEP) {
        mix_build_fmt_bytes(b, sizeof(b), s->bytes[s->n - 1]);
        snprintf(buf, len, "%s..%s sweep, %d sizes", a, b, s->n);
    } else {
        size_t n = 0;
        buf[0] = '\0';
        for (int i = 0; i < s->n && n + 1 < len; i++) {
            mix_build_fmt_bytes(a, sizeof(a), s->bytes[i]);
            n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "/" : "", a);
        }
        if (n + 1 < len)
            snprintf(buf + n, len - n, " mix");
    }
}

static bool is_text_field(int f)
{
    return f == F_PEER || f == F_KEYFILE || f == F_SIZE || f == F_CONC || f == F_DURATION ||
           f == F_SENDERS || f == F_DRILL;
}

static char *field_text(struct setup_state *s, int f, size_t *len)
{
    switch (f) {
    case F_PEER:
        *len = sizeof(s->b.peer);
        return s->b.peer;
    case F_KEYFILE:
        *len = sizeof(s->b.key_file);
        return s->b.key_file;
    case F_SIZE:
        *len = sizeof(s->b.size);
        return s->b.size;
    case F_CONC:
        *len = sizeof(s->b.conc);
        return s->b.conc;
    case F_DURATION:
        *len = sizeof(s->b.duration);
        return s->b.duration;
    case F_SENDERS:
        *len = sizeof(s->b.senders);
        return s->b.senders;
    case F_DRILL:
        *len = sizeof(s->drill_time);
        return s->drill_time;
    default:
        *len = 0;
        return NULL;
    }
}

/* ---- the preset's shape ---- */

static const struct mix_build *bld(const struct setup_state *s)
{
    return &s->b;
}

/* Does a field apply to this preset (and these settings)? */
static bool field_applies(const struct setup_state *s, int f)
{
    static const int knob[F_COUNT] = {[F_PRESET] = -1,
                                      [F_ENDPOINT] = MIX_KNOB_ENDPOINT,
                                      [F_PEER] = MIX_KNOB_PEER,
                                      [F_KEYFILE] = MIX_KNOB_KEY_FILE,
                                      [F_TRANSPORT] = MIX_KNOB_TRANSPORT,
                                      [F_SIZE] = MIX_KNOB_SIZE,
                                      [F_CONC] = MIX_KNOB_CONC,
                                      [F_DURATION] = MIX_KNOB_DURATION,
                                      [F_SENDERS] = MIX_KNOB_SENDERS,
                                      [F_NEIGHBOURS] = MIX_KNOB_NEIGHBOURS,
                                      [F_DRILL] = -1,
                                      [F_START] = -1};
    if (f == F_DRILL)
        return !mix_build_sim(bld(s)); /* a simulated fabric has no agent to fault */
    return knob[f] < 0 || mix_build_applies(bld(s), (enum mix_knob)knob[f]);
}

/* ---- the drill ---- */

/* The Drill field's timing as typed: "FOR" or "FOR x TIMES" ("2", "0.5 x 3", "3s x2"; ""
 * is DRILL_DEF_FOR_S once), within app_drill.h's limits. */
static bool parse_drill_time(const char *t, double *for_s, int *repeat)
{
    *for_s = DRILL_DEF_FOR_S;
    *repeat = 1;
    t += strspn(t, " ");
    if (!*t)
        return true;
    /* Digits and a point only (strtod alone also takes "0x3" and "inf"). */
    size_t nd = strspn(t, "0123456789.");
    char num[32], *end;
    if (!nd || nd >= sizeof(num))
        return false;
    snprintf(num, sizeof(num), "%.*s", (int)nd, t);
    double v = strtod(num, &end);
    if (*end)
        return false;
    const char *p = t + nd;
    p += strspn(p, " ");
    if (*p == 's')
        p++;
    p += strspn(p, " ");
    long n = 1;
    if (*p == 'x' || *p == '*') {
        p++;
        p += strspn(p, " ");
        size_t nn = strspn(p, "0123456789");
        if (!nn)
            return false;
        n = strtol(p, NULL, 10);
        p += nn;
        p += strspn(p, " ");
    }
    if (*p || !(v >= APP_DRILL_MIN_FOR_S && v <= APP_DRILL_MAX_FOR_S) || n < 1 ||
        n > APP_DRILL_MAX_REPEAT)
        return false;
    *for_s = v;
    *repeat = (int)n;
    return true;
}

static void say_bad_drill_time(struct app *a, const char *t)
{
    app_message(a, ROLE_ERROR,
                "Drill '%s': give FOR x TIMES, %g to %g s and 1 to %d times (2 x 3: 2 s, 3 times)",
                t, APP_DRILL_MIN_FOR_S, APP_DRILL_MAX_FOR_S, APP_DRILL_MAX_REPEAT);
}

/* ---- endpoints ---- */

static struct endpoint *add_ep(struct setup_state *s, enum mix_ep_kind k)
{
    s->eps = xalloc_resize(s->eps, (size_t)(s->neps + 1) * sizeof(*s->eps));
    struct endpoint *e = &s->eps[s->neps++];
    memset(e, 0, sizeof(*e));
    e->ep.kind = k;
    e->ep.gpu = e->port = e->nd = -1;
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
    struct endpoint *e = add_ep(s, MIX_EP_ANY);
    snprintf(e->ep.id, sizeof(e->ep.id), "any");
    snprintf(e->label, sizeof(e->label), "any (default route)");
    for (int d = 0; d < m->nnetdevs; d++) {
        const struct topo_netdev *nd = &m->netdevs[d];
        e = add_ep(s, MIX_EP_NETDEV);
        e->nd = d;
        snprintf(e->ep.netdev, sizeof(e->ep.netdev), "%s", nd->name);
        snprintf(e->ep.id, sizeof(e->ep.id), "netdev:%s", nd->name);
        snprintf(e->label, sizeof(e->label), "netdev %s", nd->name);
        char addrs[sizeof(nd->addrs)];
        snprintf(addrs, sizeof(addrs), "%s", nd->addrs);
        char *save = NULL;
        for (char *ip = strtok_r(addrs, " ", &save); ip; ip = strtok_r(NULL, " ", &save)) {
            e = add_ep(s, MIX_EP_IP);
            e->nd = d;
            snprintf(e->ep.ip, sizeof(e->ep.ip), "%s", ip);
            snprintf(e->ep.id, sizeof(e->ep.id), "ip:%s", ip);
            snprintf(e->label, sizeof(e->label), "ip %s (%s)", ip, nd->name);
        }
    }
    for (int p = 0; p < m->nports; p++) {
        const struct topo_port *pt = &m->ports[p];
        const struct topo_nic *n = &m->nics[pt->nic];
        if (!n->rdma_dev[0])
            continue;
        e = add_ep(s, MIX_EP_RDMA);
        e->port = p;
        e->nd = pt->netdev;
        snprintf(e->ep.rdma, sizeof(e->ep.rdma), "%s:%d", n->rdma_dev, pt->num);
        snprintf(e->ep.id, sizeof(e->ep.id), "rdma:%s", e->ep.rdma);
        /* TCP over this port: its netdev, by its first address where it has one. */
        if (mix_build_rdma_netdev(m, p, &e->ep) >= 0) {
            snprintf(e->label, sizeof(e->label), "%s (%s)", e->ep.rdma, e->ep.netdev);
        } else {
            snprintf(e->label, sizeof(e->label), "%s", e->ep.rdma);
        }
    }
    for (int g = 0; g < m->ngpus; g++) {
        e = add_ep(s, MIX_EP_GPU);
        e->ep.gpu = g;
        char name[32];
        topo_gpu_name(m, g, name, sizeof(name));
        snprintf(e->ep.id, sizeof(e->ep.id), "gpu:%d", g);
        snprintf(e->label, sizeof(e->label), "%s %s", name, m->gpus[g].model);
    }
    s->b.node_has_gpu = m->ngpus > 0;
    s->b.node_has_rdma = false;
    for (int i = 0; i < s->neps; i++)
        s->b.node_has_rdma |= s->eps[i].ep.kind == MIX_EP_RDMA;
}

/* The endpoint choice i, in the builder too. */
static void set_ep(struct setup_state *s, int i)
{
    s->ep = i;
    s->b.ep = s->eps[i].ep;
}

static int find_ep(const struct setup_state *s, const char *id)
{
    for (int i = 0; i < s->neps; i++)
        if (!strcmp(s->eps[i].ep.id, id))
            return i;
    return -1;
}

/* A short description of the selected endpoint for the hint column. */
static void ep_hint(struct app *a, const struct endpoint *e, char *buf, size_t len)
{
    const struct topo_model *m = a->topo;
    switch (e->ep.kind) {
    case MIX_EP_ANY:
        snprintf(buf, len, "the kernel's route to the peer");
        break;
    case MIX_EP_NETDEV:
    case MIX_EP_IP: {
        const struct topo_netdev *nd = &m->netdevs[e->nd];
        char speed[32] = "speed n/a";
        if (nd->valid & TOPO_NET_V_SPEED)
            snprintf(speed, sizeof(speed), "%d Mb/s", nd->speed_mbps);
        snprintf(buf, len, "%s%s, %s%s", e->ep.kind == MIX_EP_IP ? "on " : "",
                 e->ep.kind == MIX_EP_IP ? nd->name
                                         : (nd->operstate[0] ? nd->operstate : "state n/a"),
                 speed, e->ep.kind == MIX_EP_NETDEV && !nd->addrs[0] ? ", no IP" : "");
        break;
    }
    case MIX_EP_RDMA: {
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
    case MIX_EP_GPU: {
        const struct topo_nearest *ne = &a->aff.nearest[e->ep.gpu];
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
    struct setup_state *s = st(a);
    const char *names[MAX_XP];
    s->nxps = mix_build_transports(bld(s), names, MAX_XP);
    for (int i = 0; i < s->nxps; i++)
        snprintf(s->xps[i].name, sizeof(s->xps[0].name), "%s", names[i]);
    for (int i = 0; i < s->nxps; i++) {
        struct xp_choice *x = &s->xps[i];
        x->why[0] = '\0';
        x->ok = mix_build_transport_ok(bld(s), x->name, x->why, sizeof(x->why));
    }
    int cur = find_xp(s, s->b.transport);
    if (cur >= 0 && s->xps[cur].ok)
        return;
    int fg = mix_build_fg(bld(s));
    int pre = fg >= 0 ? find_xp(s, s->b.base.flows[fg].transport) : -1;
    if (pre >= 0 && s->xps[pre].ok) {
        snprintf(s->b.transport, sizeof(s->b.transport), "%s", s->xps[pre].name);
        return;
    }
    if (s->b.transport[0])
        return;
    for (int i = 0; i < s->nxps; i++)
        if (s->xps[i].ok) {
            snprintf(s->b.transport, sizeof(s->b.transport), "%s", s->xps[i].name);
            return;
        }
}

/* ---- presets ---- */

static void load_preset(struct app *a, int idx)
{
    struct setup_state *s = st(a);
    s->preset = idx;
    /* A preset that cannot be loaded says why in the form (b.base_error). */
    mix_build_load(&s->b, idx >= 0 && idx < s->npresets ? s->presets[idx] : NULL, NULL);
    eval_transports(a);
}

static int find_preset(const struct setup_state *s, const char *name)
{
    for (int i = 0; i < s->npresets; i++)
        if (!strcmp(s->presets[i], name))
            return i;
    return -1;
}

/* Re-read the preset list (a mix the user added appears), keeping the selection. */
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
        snprintf(s->b.peer, sizeof(s->b.peer), "%s", cfg.peer);
    const cJSON *j = cfg.setup;
    if (j && p >= 0) {
        char id[96] = "";
        if (jsonutil_strcpy(j, "endpoint", id, sizeof(id)) && find_ep(s, id) >= 0)
            set_ep(s, find_ep(s, id));
        jsonutil_strcpy(j, "transport", s->b.transport, sizeof(s->b.transport));
        jsonutil_strcpy(j, "size", s->b.size, sizeof(s->b.size));
        jsonutil_strcpy(j, "concurrency", s->b.conc, sizeof(s->b.conc));
        jsonutil_strcpy(j, "duration", s->b.duration, sizeof(s->b.duration));
        jsonutil_strcpy(j, "senders", s->b.senders, sizeof(s->b.senders));
        jsonutil_bool(j, "neighbours", &s->b.neighbours);
    }
    if (j) {
        jsonutil_strcpy(j, "key_file", s->b.key_file, sizeof(s->b.key_file));
        jsonutil_strcpy(j, "remote", s->remote, sizeof(s->remote));
        char fault[32] = "";
        enum drill_fault f;
        if (jsonutil_strcpy(j, "drill", fault, sizeof(fault)) && drill_fault_parse(fault, &f) == 0)
            s->drill_fault = f;
        jsonutil_strcpy(j, "drill_time", s->drill_time, sizeof(s->drill_time));
    }
    if (s->b.peer[0])
        snprintf(s->remote, sizeof(s->remote), "%s", s->b.peer);
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
    snprintf(cfg.mix, sizeof(cfg.mix), "%s", s->b.have_base ? s->presets[s->preset] : "");
    snprintf(cfg.peer, sizeof(cfg.peer), "%s", s->b.peer[0] ? s->b.peer : "loopback");
    cJSON_Delete(cfg.setup);
    cfg.setup = cJSON_CreateObject();
    cJSON_AddStringToObject(cfg.setup, "endpoint", s->eps[s->ep].ep.id);
    cJSON_AddStringToObject(cfg.setup, "transport", s->b.transport);
    cJSON_AddStringToObject(cfg.setup, "size", s->b.size);
    cJSON_AddStringToObject(cfg.setup, "concurrency", s->b.conc);
    cJSON_AddStringToObject(cfg.setup, "duration", s->b.duration);
    cJSON_AddStringToObject(cfg.setup, "senders", s->b.senders);
    cJSON_AddBoolToObject(cfg.setup, "neighbours", s->b.neighbours);
    cJSON_AddStringToObject(cfg.setup, "key_file", s->b.key_file);
    cJSON_AddStringToObject(cfg.setup, "remote", s->remote);
    cJSON_AddStringToObject(cfg.setup, "drill",
                            s->drill_fault ? drill_fault_str(s->drill_fault) : "off");
    cJSON_AddStringToObject(cfg.setup, "drill_time", s->drill_time);
    int rc = config_save(a->o.config_dir, &cfg, err);
    config_free(&cfg);
    return rc;
}

/* ---- building the mix ---- */

/* ---- the command line ---- */

/* ---- model presets ---- */

static bool model_mode(const struct setup_state *s)
{
    return s->model >= 0;
}

static int nfields(const struct setup_state *s)
{
    return model_mode(s) ? M_COUNT : F_COUNT;
}

/* The sizes of the model's layout again; a refusal is said in the status line too. */
static void model_eval(struct app *a, bool say)
{
    struct setup_state *s = st(a);
    strbuf_reset(&s->msz);
    s->msz_ok = false;
    s->mxp_why[0] = '\0';
    s->mxp_ok = runner_transport_available(s->mtransport, s->mxp_why, sizeof(s->mxp_why)) == 0;
    if (!s->mc_ok) {
        strbuf_printf(&s->msz, "%s\n", s->mc_error);
        return;
    }
    s->msz_ok = setup_model_sizes_text(&s->mc, &s->ml, s->mtransport, 78, &s->msz, NULL) == 0;
    if (!s->msz_ok && say) {
        char line[256];
        snprintf(line, sizeof(line), "%s", s->msz.s);
        line[strcspn(line, "\n")] = '\0';
        app_message(a, ROLE_ERROR, "%s", line);
    } else if (s->msz_ok && say && a->msg_role == ROLE_ERROR && !strncmp(a->msg, "refused", 7)) {
        a->msg[0] = '\0'; /* the refusal no longer holds */
    }
}

/* Model preset i (the layout stays: the same TP tried on another model). */
static void load_model(struct app *a, int i)
{
    struct setup_state *s = st(a);
    s->model = i;
    struct ft_err err = {0};
    s->mc_ok = model_config_load(s->models[i], &s->mc, &err) == 0;
    if (!s->mc_ok)
        snprintf(s->mc_error, sizeof(s->mc_error), "%s: %s", s->models[i], err.msg);
    if (!s->mbest[0])
        snprintf(s->mbest, sizeof(s->mbest), "%s",
                 mix_model_best_transport(s->mwhy, sizeof(s->mwhy)));
    if (!s->mtransport[0])
        snprintf(s->mtransport, sizeof(s->mtransport), "%s", s->mbest);
    model_eval(a, true);
}

/* Preset choice k of the mix presets followed by the model presets. */
static void choose_preset(struct app *a, int k)
{
    struct setup_state *s = st(a);
    if (k < s->npresets) {
        s->model = -1;
        load_preset(a, k);
    } else {
        load_model(a, k - s->npresets);
    }
    if (s->fields.sel >= nfields(s))
        s->fields.sel = 0;
}

static long *model_long(struct setup_state *s, int f, long *lo, long *hi)
{
    struct model_layout *l = &s->ml;
    *lo = 1;
    switch (f) {
    case M_TP:
        *hi = MODEL_SIZE_MAX_TP;
        return &l->tp;
    case M_PP:
        *hi = MODEL_SIZE_MAX_PP;
        return &l->pp;
    case M_EP:
        *hi = MODEL_SIZE_MAX_EP;
        return &l->ep;
    case M_BATCH:
        *hi = MODEL_SIZE_MAX_BATCH;
        return &l->batch;
    case M_CONTEXT:
        *hi = MODEL_SIZE_MAX_CONTEXT;
        return &l->context;
    case M_PROMPT:
        *hi = MODEL_SIZE_MAX_CONTEXT;
        return &l->prompt;
    case M_PAGE:
        *hi = MODEL_SIZE_MAX_PAGE;
        return &l->page;
    default:
        return NULL;
    }
}

/* Left/Right: TP, PP and EP by one; batch, context, prompt and page halve and double. */
static int model_change(struct app *a, int dir)
{
    struct setup_state *s = st(a);
    int f = s->fields.sel;
    long lo, hi, *v = model_long(s, f, &lo, &hi);
    if (v) {
        long n = f <= M_EP ? *v + dir : dir > 0 ? *v * 2 : *v / 2;
        *v = n < lo ? lo : n > hi ? hi : n;
        /* A longer prompt than the context lengthens the context, as --prompt does. */
        if (f == M_PROMPT && s->ml.prompt > s->ml.context)
            s->ml.context = s->ml.prompt;
        if (f == M_CONTEXT && s->ml.prompt > s->ml.context)
            s->ml.prompt = s->ml.context;
    } else if (f == M_DTYPE) {
        s->ml.dtype = (enum model_dtype)((s->ml.dtype + 3 + dir) % 3);
    } else if (f == M_ENGINE) {
        s->ml.engine = (enum model_engine)((s->ml.engine + 3 + dir) % 3);
    } else if (f == M_TRANSPORT) {
        int cur = 0;
        for (int i = 0; i < N_MODEL_XP; i++)
            if (!strcmp(s->mtransport, model_transports[i]))
                cur = i;
        snprintf(s->mtransport, sizeof(s->mtransport), "%s",
                 model_transports[(cur + N_MODEL_XP + dir) % N_MODEL_XP]);
    } else {
        return REACT_HANDLED;
    }
    model_eval(a, true);
    return REACT_REDRAW;
}

/* Del: the field back to its default (the transport: the best here). */
static void model_reset(struct app *a)
{
    struct setup_state *s = st(a);
    struct model_layout d;
    model_size_layout_defaults(&d);
    long lo, hi, *v = model_long(s, s->fields.sel, &lo, &hi);
    if (v) {
        struct model_layout cur = s->ml;
        s->ml = d;
        long dv = *model_long(s, s->fields.sel, &lo, &hi);
        s->ml = cur;
        *v = dv;
    } else if (s->fields.sel == M_DTYPE)
        s->ml.dtype = d.dtype;
    else if (s->fields.sel == M_ENGINE)
        s->ml.engine = d.engine;
    else if (s->fields.sel == M_TRANSPORT)
        snprintf(s->mtransport, sizeof(s->mtransport), "%s", s->mbest);
    model_eval(a, true);
}

/* Enter on a number typed: taken when it is a whole number in range, else said. */
static void model_set_typed(struct app *a, const char *text)
{
    struct setup_state *s = st(a);
    long lo, hi, *v = model_long(s, s->fields.sel, &lo, &hi), n;
    if (!v)
        return;
    if (!mix_build_parse_long(text, lo, hi, &n)) {
        app_message(a, ROLE_ERROR, "%s '%s': give a whole number from %ld to %ld",
                    mfield_label[s->fields.sel], text, lo, hi);
        return;
    }
    *v = n;
    if (s->fields.sel == M_PROMPT && s->ml.prompt > s->ml.context)
        s->ml.context = s->ml.prompt;
    model_eval(a, true);
}

/* The model's mix (mix_model_make) into m: 0, or -EINVAL with the refusal said. */
static int model_mix(struct app *a, struct mix *m)
{
    struct setup_state *s = st(a);
    if (!s->mc_ok) {
        app_message(a, ROLE_ERROR, "%s", s->mc_error);
        return -EINVAL;
    }
    struct model_sizes sz;
    struct ft_err err = {0};
    if (model_size_compute(&s->mc, &s->ml, &sz, &err) < 0 ||
        mix_model_make(&s->mc, &s->ml, &sz, s->mtransport, m, &err) < 0) {
        app_message(a, ROLE_ERROR, "refused: %s", err.msg);
        return -EINVAL;
    }
    return 0;
}

/* Start: the model's mix, run like any mix. */
static int model_start(struct app *a)
{
    struct mix m;
    struct ft_err err = {0};
    if (model_mix(a, &m) < 0)
        return REACT_REDRAW;
    a->run_key_file[0] = '\0';
    if (app_start_run(a, &m, NULL, &err) < 0)
        app_message(a, ROLE_ERROR, "%s", err.msg);
    mix_free(&m);
    return REACT_REDRAW;
}

static void model_field_value(struct app *a, int f, char *val, size_t vlen, char *hint, size_t hlen,
                              bool *dim)
{
    struct setup_state *s = st(a);
    const struct model_config *m = &s->mc;
    *dim = false;
    hint[0] = '\0';
    long lo, hi, *v = model_long(s, f, &lo, &hi);
    if (v)
        snprintf(val, vlen, "%ld", *v);
    switch (f) {
    case M_PRESET:
        snprintf(val, vlen, "< model %.*s >", VALUE_W - 10, s->models[s->model]);
        if (!s->mc_ok)
            snprintf(hint, hlen, "cannot load it (below)");
        else if (m->mla)
            snprintf(hint, hlen, "%ld layers, MLA%s", m->layers, m->moe ? ", MoE" : "");
        else
            snprintf(hint, hlen, "%ld layers, %ld/%ld heads/KV%s", m->layers, m->heads, m->kv_heads,
                     m->moe ? ", MoE" : "");
        break;
    case M_TP:
        snprintf(hint, hlen, "tensor-parallel ranks");
        break;
    case M_PP:
        snprintf(hint, hlen, "pipeline stages");
        break;
    case M_EP:
        snprintf(hint, hlen,
                 s->mc_ok && m->moe ? "expert-parallel ranks (%ld experts)"
                                    : "dense model: EP stays 1",
                 m->experts);
        *dim = !(s->mc_ok && m->moe);
        break;
    case M_BATCH:
        snprintf(hint, hlen, "sequences per decode step");
        break;
    case M_CONTEXT:
        snprintf(hint, hlen, "tokens each sequence holds");
        break;
    case M_PROMPT:
        snprintf(hint, hlen, "tokens of one prefill");
        break;
    case M_PAGE:
        snprintf(hint, hlen, "tokens per KV page");
        break;
    case M_DTYPE:
        snprintf(val, vlen, "< %s >",
                 s->ml.dtype == MODEL_DTYPE_BF16  ? "bf16"
                 : s->ml.dtype == MODEL_DTYPE_FP8 ? "fp8"
                                                  : "the config's");
        snprintf(hint, hlen, "KV cache; config: %s", s->mc_ok ? m->dtype : "n/a");
        break;
    case M_ENGINE:
        snprintf(val, vlen, "< %s >", model_size_engine_str(s->ml.engine));
        snprintf(hint, hlen, "%s",
                 s->ml.engine == MODEL_ENGINE_VLLM ? "K and V apart (FlashAttention)"
                                                   : "K and V together (FlashInfer)");
        break;
    case M_TRANSPORT: {
        bool ok = s->mxp_ok;
        snprintf(val, vlen, "< %s%s >", s->mtransport, ok ? "" : " (not usable)");
        *dim = !ok;
        snprintf(hint, hlen, "%s",
                 !ok                                ? s->mxp_why
                 : !strcmp(s->mtransport, s->mbest) ? "the best here"
                                                    : "usable here");
        break;
    }
    case M_START:
        snprintf(val, vlen, "[ Start ]");
        snprintf(hint, hlen, "%s",
                 a->runner && !runner_done(a->runner)      ? "a test is running (F4 live)"
                 : a->drill && app_drill_running(a->drill) ? "a drill is running (F4 live)"
                                                           : "or S from any field");
        break;
    }
}

/* ---- actions ---- */

static int start(struct app *a)
{
    struct setup_state *s = st(a);
    if (model_mode(s))
        return model_start(a);
    struct mix m;
    char why[512];
    if (mix_build_make(bld(s), &m, why, sizeof(why)) < 0) {
        app_message(a, ROLE_ERROR, "%s", why);
        return REACT_REDRAW;
    }
    snprintf(a->run_key_file, sizeof(a->run_key_file), "%s", s->b.key_file);
    struct ft_err err = {0};
    bool remote = s->b.peer[0] && field_applies(s, F_PEER);
    if (app_start_run(a, &m, remote ? s->b.peer : NULL, &err) < 0) {
        app_message(a, ROLE_ERROR, "%s", err.msg);
        mix_free(&m);
        return REACT_REDRAW;
    }
    /* A simulated fabric is watched in its own view (the live view has the numbers too). */
    if (mix_build_sim(bld(s))) {
        app_switch(a, VIEW_FABRIC);
        app_message(a, ROLE_INFO, "running %s: F4 shows its latency and counters", m.name);
    }
    struct ft_err cerr = {0};
    if (remember_settings(a, &cerr) < 0)
        app_message(a, ROLE_WARN, "%s: settings not remembered", cerr.msg);
    mix_free(&m);
    return REACT_REDRAW;
}

/* The peer a drill of the form's mix goes to: the Peer field's, or NULL (the in-process
 * agent; rank-loss: its own victim). */
static const char *drill_peer(const struct setup_state *s)
{
    return !model_mode(s) && s->b.peer[0] && field_applies(s, F_PEER) ? s->b.peer : NULL;
}

/* path with $HOME as "~" (shorter on the form's rows; the shell expands it). */
static void home_short(const char *path, char *buf, size_t len)
{
    const char *home = getenv("HOME");
    size_t n = home ? strlen(home) : 0;
    if (n > 1 && !strncmp(path, home, n) && path[n] == '/')
        snprintf(buf, len, "~%s", path + n);
    else
        snprintf(buf, len, "%s", path);
}

/* What the Drill field's fault would do to the form's mix, for the form's lines. */
struct drill_eval {
    int rc;            /* app_drill_check's: 0, -EINVAL (or the mix not built), -EOPNOTSUPP */
    char line[1024];   /* what D does, or why it does not */
    char hint[64];     /* the field's hint */
    struct strbuf cmd; /* -EOPNOTSUPP: the `fabtop drill` line of the mix written to a file */
};

static void drill_eval(struct app *a, struct drill_eval *v)
{
    struct setup_state *s = st(a);
    strbuf_init(&v->cmd);
    v->rc = 0;
    v->line[0] = v->hint[0] = '\0';
    if (!s->drill_fault) {
        snprintf(v->hint, sizeof(v->hint), "off: Left/Right picks a fault");
        return;
    }
    struct mix m;
    if (mix_build_make(bld(s), &m, v->line, sizeof(v->line)) < 0) {
        v->rc = -EINVAL;
        snprintf(v->hint, sizeof(v->hint), "no mix to drill (below)");
        return;
    }
    snprintf(m.source, sizeof(m.source), "%s", m.name);
    double for_s;
    int repeat;
    bool timed = parse_drill_time(s->drill_time, &for_s, &repeat);
    struct ft_err err = {0};
    const char *peer = drill_peer(s);
    v->rc = app_drill_check(&m, s->drill_fault, peer, &err);
    if (v->rc == -EOPNOTSUPP) {
        char path[1024], shown[1024];
        app_drill_mix_path(m.name, path, sizeof(path));
        home_short(path, shown, sizeof(shown));
        snprintf(v->line, sizeof(v->line), "%s.", err.msg);
        app_drill_command(&v->cmd, shown, &m, s->drill_fault, for_s, repeat, peer, s->b.key_file);
        snprintf(v->hint, sizeof(v->hint), "needs `fabtop drill` (below)");
    } else if (v->rc < 0) {
        snprintf(v->line, sizeof(v->line), "%s", err.msg);
        snprintf(v->hint, sizeof(v->hint), "this mix cannot take it (below)");
    } else {
        const char *what =
            s->drill_fault == DRILL_PEER_STALL  ? "the agent answers none of the drill's sessions"
            : s->drill_fault == DRILL_PEER_KILL ? "the agent ends the drill's sessions and refuses "
                                                  "new ones"
            : s->drill_fault == DRILL_BLACKHOLE ? "the agent moves the ping-pongs' queue pairs to "
                                                  "the error state"
                                                : "it kills its victim (a fabtop serve of its own "
                                                  "with the peer NCCL ranks), then restarts it";
        if (timed)
            snprintf(v->line, sizeof(v->line),
                     "Drill %s at 1 s for %g s, %d repetition%s, against %s: %s. D starts it.",
                     drill_fault_str(s->drill_fault), for_s, repeat, repeat == 1 ? "" : "s",
                     s->drill_fault == DRILL_RANK_LOSS ? "a victim agent it starts"
                     : peer                            ? peer
                                                       : "the in-process agent",
                     what);
        else
            snprintf(v->line, sizeof(v->line), "Drill %s: %s.", drill_fault_str(s->drill_fault),
                     what);
        snprintf(v->hint, sizeof(v->hint), "injected at 1 s; D drills it");
    }
    mix_free(&m);
}

/* D: a drill of the mix Start would run (the model's too), with the Drill field's fault,
 * length and repetitions, against the form's peer or the in-process agent. A fault that
 * needs what the explorer does not have is not started: the mix goes to a file for the
 * `fabtop drill` line the Drill field shows. */
static int drill(struct app *a)
{
    struct setup_state *s = st(a);
    struct mix m;
    char why[512];
    if (model_mode(s)) {
        if (model_mix(a, &m) < 0)
            return REACT_REDRAW;
    } else if (mix_build_make(bld(s), &m, why, sizeof(why)) < 0) {
        app_message(a, ROLE_ERROR, "%s", why);
        return REACT_REDRAW;
    }
    /* Messages name the mix, not the file it came from: one status line. */
    snprintf(m.source, sizeof(m.source), "%s", m.name);
    struct ft_err err = {0};
    double for_s;
    int repeat;
    const char *peer = drill_peer(s);
    int rc = app_drill_check(&m, s->drill_fault ? s->drill_fault : DRILL_PEER_STALL, peer, &err);
    if (rc < 0 && rc != -EOPNOTSUPP) {
        app_message(a, ROLE_ERROR, "%s", err.msg);
    } else if (!s->drill_fault) {
        app_message(a, ROLE_WARN,
                    "Drill is off: Left/Right on the Drill field picks peer-stall, peer-kill, "
                    "blackhole, rank-loss or link-down");
    } else if (!parse_drill_time(s->drill_time, &for_s, &repeat)) {
        say_bad_drill_time(a, s->drill_time);
    } else if (rc == -EOPNOTSUPP) {
        /* Nothing is started: the mix as the explorer would drill it, for `fabtop drill`. */
        char path[1024];
        struct ft_err serr = {0};
        if (app_save_drill_mix(&m, for_s, path, sizeof(path), &serr) < 0) {
            app_message(a, ROLE_ERROR, "%s", serr.msg);
        } else {
            char shown[1024];
            home_short(path, shown, sizeof(shown));
            struct strbuf cmd;
            strbuf_init(&cmd);
            app_drill_command(&cmd, shown, &m, s->drill_fault, for_s, repeat, peer, s->b.key_file);
            /* The form shows the line (on the Drill field); a model's form has none. */
            if (model_mode(s))
                app_message(a, ROLE_WARN, "%s not started: run %s", drill_fault_str(s->drill_fault),
                            cmd.s);
            else
                app_message(a, ROLE_WARN,
                            "%s not started: the `fabtop drill` line below runs it; the mix is "
                            "in %s",
                            drill_fault_str(s->drill_fault), shown);
            strbuf_free(&cmd);
            if (!model_mode(s)) {
                s->fields.sel = F_DRILL; /* its command line is at the bottom */
                struct ft_err cerr = {0};
                if (remember_settings(a, &cerr) < 0)
                    app_message(a, ROLE_WARN, "%s: settings not remembered", cerr.msg);
            }
        }
    } else {
        struct app_drill_opts o = {.mix = &m,
                                   .fault = s->drill_fault,
                                   .for_s = for_s,
                                   .repeat = repeat,
                                   .peer = peer,
                                   .key_file = peer && s->b.key_file[0] ? s->b.key_file : NULL};
        if (app_start_drill(a, &o, &err) < 0) {
            app_message(a, ROLE_ERROR, "%s", err.msg);
        } else if (!model_mode(s)) {
            struct ft_err cerr = {0};
            if (remember_settings(a, &cerr) < 0)
                app_message(a, ROLE_WARN, "%s: settings not remembered", cerr.msg);
        }
    }
    mix_free(&m);
    return REACT_REDRAW;
}

static bool field_selectable(void *ctx, int f)
{
    return model_mode(ctx) || field_applies(ctx, f);
}

/* Up/Down: the next field that applies to this preset (none: the selection stays). */
static void move_sel(struct setup_state *s, int d)
{
    ui_list_step(&s->fields, nfields(s), d, field_selectable, s);
}

static void step_size(struct setup_state *s, int dir)
{
    uint64_t b;
    if (!s->b.size[0] || mix_parse_bytes(s->b.size, &b) < 0) {
        int fg = mix_build_fg(bld(s));
        b = fg >= 0 ? s->b.base.flows[fg].size.bytes[0] : 4096;
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
    if (b > MIX_BUILD_MAX_SIZE)
        b = MIX_BUILD_MAX_SIZE;
    mix_build_fmt_bytes(s->b.size, sizeof(s->b.size), b);
}

static void step_long(char *buf, size_t len, long cur, long lo, long hi, int dir)
{
    long v;
    if (!buf[0] || !mix_build_parse_long(buf, lo, hi, &v))
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
    int fg = mix_build_fg(bld(s));
    int total = s->npresets + s->nmodels;
    if (s->fields.sel == F_PRESET) {
        /* The mix presets, then the model presets. */
        int cur = model_mode(s) ? s->npresets + s->model : s->preset;
        if (total)
            choose_preset(a, ((cur < 0 ? 0 : cur) + dir + total) % total);
        return REACT_REDRAW;
    }
    if (model_mode(s))
        return model_change(a, dir);
    switch (s->fields.sel) {
    case F_ENDPOINT:
        set_ep(s, (s->ep + dir + s->neps) % s->neps);
        eval_transports(a);
        break;
    case F_PEER:
        if (s->b.peer[0]) {
            snprintf(s->remote, sizeof(s->remote), "%s", s->b.peer);
            s->b.peer[0] = '\0';
        } else if (s->remote[0]) {
            snprintf(s->b.peer, sizeof(s->b.peer), "%s", s->remote);
        } else {
            app_message(a, ROLE_INFO, "Enter types HOST[:PORT] of a `fabtop serve` agent");
        }
        break;
    case F_TRANSPORT: {
        int cur = find_xp(s, s->b.transport);
        for (int k = 1; k <= s->nxps; k++) {
            int i = ((cur < 0 ? 0 : cur) + dir * k + s->nxps * k) % s->nxps;
            if (s->xps[i].ok) {
                snprintf(s->b.transport, sizeof(s->b.transport), "%s", s->xps[i].name);
                break;
            }
        }
        break;
    }
    case F_SIZE:
        if (s->b.have_base)
            step_size(s, dir);
        break;
    case F_CONC:
        if (fg >= 0)
            step_long(s->b.conc, sizeof(s->b.conc), s->b.base.flows[fg].concurrency, 1,
                      MIX_BUILD_MAX_CONC, dir);
        break;
    case F_DURATION: {
        double d = fg >= 0 ? s->b.base.flows[fg].duration_s : 5;
        if (s->b.duration[0])
            mix_build_parse_seconds(s->b.duration, &d);
        d = floor(d) + dir;
        snprintf(s->b.duration, sizeof(s->b.duration), "%g",
                 d < 1                        ? 1
                 : d > MIX_BUILD_MAX_DURATION ? MIX_BUILD_MAX_DURATION
                                              : d);
        break;
    }
    case F_SENDERS:
        step_long(s->b.senders, sizeof(s->b.senders), mix_build_senders(bld(s)), 1,
                  mix_build_max_senders(bld(s)), dir);
        break;
    case F_NEIGHBOURS:
        s->b.neighbours = !s->b.neighbours;
        eval_transports(a);
        break;
    case F_DRILL: {
        int cur = 0;
        for (int i = 0; i < N_DRILL_ORDER; i++)
            if (drill_order[i] == s->drill_fault)
                cur = i;
        s->drill_fault = drill_order[(cur + N_DRILL_ORDER + dir) % N_DRILL_ORDER];
        break;
    }
    default:
        return REACT_HANDLED;
    }
    return REACT_REDRAW;
}

/* Del: the selected field back to the preset's value (or the default). */
static void reset_field(struct app *a)
{
    struct setup_state *s = st(a);
    if (model_mode(s)) {
        model_reset(a);
        return;
    }
    size_t len;
    char *t = field_text(s, s->fields.sel, &len);
    if (t)
        t[0] = '\0';
    if (s->fields.sel == F_ENDPOINT)
        set_ep(s, 0);
    if (s->fields.sel == F_NEIGHBOURS)
        s->b.neighbours = true;
    if (s->fields.sel == F_DRILL)
        s->drill_fault = 0;
    if (s->fields.sel == F_TRANSPORT) {
        int fg = mix_build_fg(bld(s));
        if (fg >= 0)
            snprintf(s->b.transport, sizeof(s->b.transport), "%s", s->b.base.flows[fg].transport);
    }
    eval_transports(a);
}

/* Check one typed value at once, so a mistake is reported where it was made. */
static void check_field(struct app *a, int f)
{
    struct setup_state *s = st(a);
    if (f == F_DRILL) {
        double for_s;
        int repeat;
        if (!parse_drill_time(s->drill_time, &for_s, &repeat))
            say_bad_drill_time(a, s->drill_time);
        return;
    }
    struct mix m;
    char why[512];
    if (mix_build_make(bld(s), &m, why, sizeof(why)) == 0) {
        mix_free(&m);
        return;
    }
    static const char *const prefix[F_COUNT] = {
        [F_PEER] = "Peer",        [F_KEYFILE] = "Key file",  [F_SIZE] = "Message size",
        [F_CONC] = "Concurrency", [F_DURATION] = "Duration", [F_SENDERS] = "Incast senders"};
    if (prefix[f] && !strncmp(why, prefix[f], strlen(prefix[f])))
        app_message(a, ROLE_ERROR, "%s", why);
    else if (f == F_SIZE && s->b.size[0] && strstr(why, "size"))
        app_message(a, ROLE_ERROR, "%s", why); /* the transport's own size limits */
}

static int edit_key(struct app *a, int ch)
{
    struct setup_state *s = st(a);
    size_t n = strlen(s->edit), cap = 16; /* a model's numbers */
    char *t = model_mode(s) ? NULL : field_text(s, s->fields.sel, &cap);
    if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        char *v = s->edit;
        while (*v == ' ')
            v++;
        size_t k = strlen(v);
        while (k && v[k - 1] == ' ')
            v[--k] = '\0';
        if (!t) {
            s->editing = false;
            model_set_typed(a, v);
            return REACT_REDRAW;
        }
        if (s->fields.sel == F_PEER && !strcmp(v, "loopback"))
            v[0] = '\0';
        snprintf(t, cap, "%s", v);
        if (s->fields.sel == F_PEER && s->b.peer[0])
            snprintf(s->remote, sizeof(s->remote), "%s", s->b.peer);
        s->editing = false;
        check_field(a, s->fields.sel);
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

/* ---- the doctor ---- */

/* C: the doctor against the Peer field's agent, with the RDMA endpoint's port when one is
 * chosen; the panel shows it running, then its report. */
static int doctor_start(struct app *a)
{
    struct setup_state *s = st(a);
    if (s->doctor && !app_doctor_poll(s->doctor)) {
        s->doctor_shown = true;
        return REACT_REDRAW;
    }
    const struct mix_build_endpoint *ep = &s->eps[s->ep].ep;
    struct app_doctor *d = NULL;
    struct ft_err err = {0};
    if (app_doctor_start(s->b.peer, s->b.key_file, ep->kind == MIX_EP_RDMA ? ep->rdma : "", &d,
                         &err) < 0) {
        app_message(a, ROLE_ERROR, "doctor: %s", err.msg);
        return REACT_REDRAW;
    }
    app_doctor_free(s->doctor);
    s->doctor = d;
    s->doctor_shown = true;
    s->doctor_told = false;
    s->doctor_top = 0;
    app_message(a, ROLE_INFO, "doctor: checking both ends of %s", d->peer);
    return REACT_REDRAW;
}

static int doctor_lines(const struct setup_state *s)
{
    return s->doctor && s->doctor->joined ? s->doctor->nlines : 0;
}

/* Keys while the doctor's panel covers the form: scroll, C again, Esc back. */
static int doctor_key(struct app *a, int ch)
{
    struct setup_state *s = st(a);
    int page = 10, n = doctor_lines(s);
    switch (ch) {
    case KEY_UP:
    case 'k':
        s->doctor_top--;
        break;
    case KEY_DOWN:
    case 'j':
        s->doctor_top++;
        break;
    case KEY_PPAGE:
        s->doctor_top -= page;
        break;
    case KEY_NPAGE:
    case ' ':
        s->doctor_top += page;
        break;
    case KEY_HOME:
    case 'g':
        s->doctor_top = 0;
        break;
    case KEY_END:
    case 'G':
        s->doctor_top = n;
        break;
    case 27:
    case KEY_BACKSPACE:
        s->doctor_shown = false;
        return REACT_REDRAW;
    case 'C':
        return doctor_start(a);
    default:
        return REACT_NONE;
    }
    if (s->doctor_top > n - 1)
        s->doctor_top = n - 1;
    if (s->doctor_top < 0)
        s->doctor_top = 0;
    return REACT_REDRAW;
}

/* The loop's tick: the doctor's end, said once; while it runs, its clock. */
static int setup_tick(struct app *a)
{
    struct setup_state *s = st(a);
    if (!s->doctor || s->doctor_told)
        return REACT_NONE;
    if (!app_doctor_poll(s->doctor))
        return s->doctor_shown ? REACT_REDRAW : REACT_NONE;
    s->doctor_told = true;
    const struct app_doctor *d = s->doctor;
    if (d->rc < 0)
        app_message(a, ROLE_ERROR, "doctor: %s", d->error);
    else
        app_message(a,
                    d->r->status == 2   ? ROLE_ERROR
                    : d->r->status == 1 ? ROLE_WARN
                                        : ROLE_OK,
                    "doctor: %s with %s (%d finding%s): C shows it again, Esc the form",
                    d->r->status == 2   ? "errors"
                    : d->r->status == 1 ? "warnings"
                                        : "clean",
                    d->peer, d->r->n, d->r->n == 1 ? "" : "s");
    return REACT_REDRAW;
}

static enum theme_role doctor_role(const char *line)
{
    if (!strncmp(line, "error:", 6))
        return ROLE_ERROR;
    if (!strncmp(line, "warning:", 8) || line[0] == '!')
        return ROLE_WARN;
    if (!strncmp(line, "0 error(s), 0 warning(s)", 24))
        return ROLE_OK;
    return ROLE_NORMAL;
}

/* The panel: the report's lines, wrapped to the pane, from doctor_top. */
static void doctor_draw(struct app *a, struct ui *u, const struct layout *l)
{
    struct setup_state *s = st(a);
    const struct app_doctor *d = s->doctor;
    struct rect box = l->pane[0];
    char title[200];
    snprintf(title, sizeof(title), "Doctor: this end and %s%s%s", d->peer,
             d->device[0] ? " over " : "", d->device);
    ui_box(u, &box, title, true);
    struct rect in = ui_inner(&box);
    int y = in.y, ymax = in.y + in.h;
    if (!d->joined) {
        char t[320];
        snprintf(t, sizeof(t),
                 "Checking both ends of %s: the facts of each (route, MTU, rp_filter, ARP, ECN, "
                 "offloads, memlock%s), a path MTU probe%s... %.0f s",
                 d->peer, d->device[0] ? ", the RDMA port, its GIDs and DCB" : "",
                 d->device[0] ? ", then a real queue pair walked to RTS with messages of the "
                                "path MTU's size"
                              : "",
                 app_doctor_elapsed_s(d));
        ui_paragraph(u, &y, ymax, in.x, in.w, ROLE_INFO, t);
        return;
    }
    if (d->rc < 0) {
        ui_paragraph(u, &y, ymax, in.x, in.w, ROLE_ERROR, d->error);
        return;
    }
    /* The table's rows ("! " or "  " first: the mark column) are cut at the pane's width to
     * keep their columns; findings and the walk's lines wrap. */
    for (int i = s->doctor_top; i < d->nlines && y < ymax; i++) {
        const char *t = d->lines[i];
        if ((t[0] == ' ' || t[0] == '!') && t[1] == ' ')
            ui_text(u, y++, in.x, in.w, doctor_role(t), t);
        else
            ui_paragraph(u, &y, ymax, in.x, in.w, doctor_role(t), t);
    }
}

static int setup_key(struct app *a, int ch)
{
    struct setup_state *s = st(a);
    if (s->editing)
        return edit_key(a, ch);
    if (s->doctor_shown)
        return doctor_key(a, ch);
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
        ui_list_move(&s->fields, nfields(s), -UI_NAV_FAR); /* the preset */
        return REACT_REDRAW;
    case KEY_END:
    case 'G':
        ui_list_move(&s->fields, nfields(s), UI_NAV_FAR); /* Start */
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
        if (s->fields.sel == (model_mode(s) ? M_START : F_START))
            return start(a);
        if (model_mode(s)) {
            long lo, hi, *num = model_long(s, s->fields.sel, &lo, &hi);
            if (num) {
                snprintf(s->edit, sizeof(s->edit), "%ld", *num);
                s->editing = true;
                return REACT_REDRAW;
            }
        }
        if (!model_mode(s) && is_text_field(s->fields.sel)) {
            size_t cap;
            snprintf(s->edit, sizeof(s->edit), "%s", field_text(s, s->fields.sel, &cap));
            s->editing = true;
            return REACT_REDRAW;
        }
        move_sel(s, 1);
        return REACT_REDRAW;
    case 'S': /* F5 stays the global key for the results view */
    case 's':
        return start(a);
    case 'D':
        return drill(a);
    case 'C':
        return doctor_start(a);
    default:
        /* A digit belongs to the form, never to the view shortcuts: on a field that takes
         * typing it starts the edit with itself ("64KiB" typed on Size), elsewhere (a choice,
         * Start) it is refused with a word, so typing a size on the wrong row neither starts
         * a run nor jumps to another view. */
        if (ch >= '0' && ch <= '9') {
            long lo, hi;
            bool typed = model_mode(s) ? model_long(s, s->fields.sel, &lo, &hi) != NULL
                                       : is_text_field(s->fields.sel);
            if (typed) {
                s->edit[0] = (char)ch;
                s->edit[1] = '\0';
                s->editing = true;
            } else {
                app_message(a, ROLE_WARN,
                            "'%c': this row takes no typing (Left/Right choose; F1-F7 switch "
                            "views)",
                            ch);
            }
            return REACT_REDRAW;
        }
        return REACT_NONE;
    }
}

/* ---- drawing ---- */

/* The value and the hint shown for a field. */
static void field_value(struct app *a, int f, char *val, size_t vlen, char *hint, size_t hlen,
                        bool *dim)
{
    struct setup_state *s = st(a);
    int fg = mix_build_fg(bld(s));
    const struct mix_flow *bf = fg >= 0 ? &s->b.base.flows[fg] : NULL;
    *dim = false;
    hint[0] = '\0';
    switch (f) {
    case F_PRESET:
        snprintf(val, vlen, "< %.*s >", VALUE_W - 4,
                 s->preset >= 0 ? s->presets[s->preset] : "none");
        if (bf)
            snprintf(hint, hlen, "%s, %d flow%s, %s", mix_op_str(bf->op), s->b.base.nflows,
                     s->b.base.nflows == 1 ? "" : "s",
                     s->b.base.quiet_then_loaded ? "quiet+loaded" : "loaded");
        else
            snprintf(hint, hlen, "cannot load it (below)");
        break;
    case F_ENDPOINT:
        if (mix_build_sim(bld(s))) {
            snprintf(val, vlen, "n/a");
            snprintf(hint, hlen, "simulated hosts (the preset's)");
            *dim = true;
            break;
        }
        snprintf(val, vlen, "< %.*s >", VALUE_W - 4, s->eps[s->ep].label);
        ep_hint(a, &s->eps[s->ep], hint, hlen);
        break;
    case F_PEER:
        if (mix_build_sim(bld(s))) {
            snprintf(val, vlen, "n/a");
            snprintf(hint, hlen, "none: a simulated fabric");
            *dim = true;
            break;
        }
        snprintf(val, vlen, "%s", s->b.peer[0] ? s->b.peer : "loopback");
        snprintf(hint, hlen, "%s",
                 s->b.peer[0] ? "a `fabtop serve` agent" : "in-process agent, 127.0.0.1");
        break;
    case F_KEYFILE:
        if (mix_build_sim(bld(s))) {
            snprintf(val, vlen, "n/a");
            *dim = true;
            break;
        }
        snprintf(val, vlen, "%s", s->b.key_file[0] ? s->b.key_file : "(default)");
        *dim = !s->b.key_file[0];
        snprintf(hint, hlen, "%s",
                 s->b.peer[0] ? "the agent's pre-shared key" : "only for remote peers");
        break;
    case F_TRANSPORT: {
        int bad = 0;
        for (int i = 0; i < s->nxps; i++)
            bad += !s->xps[i].ok;
        int cur = find_xp(s, s->b.transport);
        if (!s->b.transport[0])
            snprintf(val, vlen, "< none usable >");
        else if (cur < 0 || !s->xps[cur].ok)
            snprintf(val, vlen, "< %s (not usable) >", s->b.transport);
        else
            snprintf(val, vlen, "< %s >", s->b.transport);
        *dim = cur < 0 || !s->xps[cur].ok;
        snprintf(hint, hlen, "%d usable, %d not (below)", s->nxps - bad, bad);
        break;
    }
    case F_SIZE:
        if (s->b.size[0]) {
            snprintf(val, vlen, "%s", s->b.size);
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
        if (s->b.conc[0])
            snprintf(val, vlen, "%s", s->b.conc);
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
        if (mix_build_sim(bld(s))) {
            snprintf(val, vlen, "n/a");
            unsigned long long n = bf ? (unsigned long long)bf->iterations : 0ull;
            snprintf(hint, hlen, "%llu operation%s in simulated time", n, n == 1 ? "" : "s");
            *dim = true;
            break;
        }
        if (s->b.duration[0])
            snprintf(val, vlen, "%s%s", s->b.duration, strchr(s->b.duration, 's') ? "" : " s");
        else
            snprintf(val, vlen, "%g s", bf ? bf->duration_s : 0.0);
        snprintf(hint, hlen, "per size, after %g s warm-up", bf ? bf->warmup_s : 0.0);
        break;
    case F_SENDERS: {
        char into[32];
        int ns = mix_build_sim_incast(bld(s), into, sizeof(into));
        if (ns) {
            /* The scenario's senders are its own flows between simulated hosts. */
            snprintf(val, vlen, "%d", ns);
            snprintf(hint, hlen, "simulated, into %s (fixed)", into);
            *dim = true;
            break;
        }
        if (!mix_build_senders(bld(s))) {
            snprintf(val, vlen, "n/a");
            snprintf(hint, hlen, "no incast senders here");
        } else if (!s->b.neighbours) {
            snprintf(val, vlen, "n/a");
            snprintf(hint, hlen, "neighbours are off");
        } else {
            if (s->b.senders[0])
                snprintf(val, vlen, "%s", s->b.senders);
            else
                snprintf(val, vlen, "%d", mix_build_senders(bld(s)));
            snprintf(hint, hlen, "streams into this host at once");
        }
        *dim = !field_applies(s, f);
        break;
    }
    case F_NEIGHBOURS: {
        int bg = mix_build_background(bld(s));
        if (!bg) {
            snprintf(val, vlen, "n/a");
            snprintf(hint, hlen, "no background flows");
        } else {
            snprintf(val, vlen, "< %s >", s->b.neighbours ? "on" : "off");
            snprintf(hint, hlen, s->b.neighbours ? "%d background flow%s kept" : "%d dropped", bg,
                     bg == 1 ? "" : "s");
        }
        *dim = !bg;
        break;
    }
    case F_DRILL: {
        if (!field_applies(s, f)) {
            snprintf(val, vlen, "n/a");
            snprintf(hint, hlen, "no agent to fault in a simulation");
            *dim = true;
            break;
        }
        double for_s;
        int repeat;
        bool ok = parse_drill_time(s->drill_time, &for_s, &repeat);
        if (!s->drill_fault)
            snprintf(val, vlen, "< off >");
        else if (ok)
            snprintf(val, vlen, "< %s, %g s x %d >", drill_fault_str(s->drill_fault), for_s,
                     repeat);
        else
            snprintf(val, vlen, "< %s, %.12s? >", drill_fault_str(s->drill_fault), s->drill_time);
        *dim = !s->drill_fault;
        struct drill_eval v;
        drill_eval(a, &v);
        snprintf(hint, hlen, "%s", v.hint);
        strbuf_free(&v.cmd);
        break;
    }
    case F_START:
        snprintf(val, vlen, "[ Start ]");
        snprintf(hint, hlen, "%s",
                 a->runner && !runner_done(a->runner)      ? "a test is running (F4 live)"
                 : a->drill && app_drill_running(a->drill) ? "a drill is running (F4 live)"
                                                           : "or S from any field");
        break;
    }
}

/* Word-wrap text into at most maxrows rows of width w; a cut ends with "...". Returns the
 * rows used (u NULL: only counts them). */
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
        if (u)
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

/* One line of the form: label, value (the edit while typing), hint. */
static void draw_row(struct app *a, struct ui *u, const struct rect *in, int f, bool start,
                     const char *label, const char *val, const char *hint, bool dim)
{
    struct setup_state *s = st(a);
    int vx = in->x + 1 + LABEL_W, hx = vx + VALUE_W + 2, hw = in->x + in->w - hx - 1;
    int y = in->y + f;
    bool sel = s->fields.sel == f;
    ui_text(u, y, in->x + 1, LABEL_W, dim ? ROLE_DIM : ROLE_NORMAL, label);
    if (sel && s->editing) {
        char e[300];
        int keep = VALUE_W - 1;
        int n = (int)strlen(s->edit);
        snprintf(e, sizeof(e), "%s_", n > keep ? s->edit + (n - keep) : s->edit);
        ui_text_pad(u, y, vx, VALUE_W, ROLE_INPUT, e);
    } else {
        enum theme_role r = sel ? ROLE_SELECTED : dim ? ROLE_DIM : ROLE_INPUT;
        if (start && !sel)
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

/* A model preset: its layout, the sizes it derives (or the refusal), the command line. */
static void model_draw(struct app *a, struct ui *u, const struct layout *l)
{
    struct setup_state *s = st(a);
    const struct rect *b = &l->pane[0];
    struct rect box = {b->y, b->x, M_COUNT + 2, b->w};
    ui_box(u, &box, "Test setup: a model's serving traffic", true);
    struct rect in = ui_inner(&box);
    for (int f = 0; f < M_COUNT; f++) {
        char val[256], hint[256];
        bool dim;
        model_field_value(a, f, val, sizeof(val), hint, sizeof(hint), &dim);
        draw_row(a, u, &in, f, f == M_START, mfield_label[f], val, hint, dim);
    }
    int y = box.y + box.h, bottom = b->y + b->h, w = b->w - 2, x = b->x + 1;
    struct strbuf cmd, sz;
    strbuf_init(&cmd);
    strbuf_init(&sz);
    setup_model_command(s->models[s->model], &s->ml, s->mtransport, &cmd);
    int cmd_rows = ((int)cmd.len + 2 + w - 1) / w;
    if (cmd_rows > 2)
        cmd_rows = 2;
    int ycmd = bottom - cmd_rows;
    bool ok = s->mc_ok && setup_model_sizes_text(&s->mc, &s->ml, s->mtransport, w, &sz, NULL) == 0;
    const char *text = s->mc_ok ? sz.s : s->msz.s;
    /* The sizes one a row; a refusal wrapped over the rows there are. */
    for (const char *p = text; *p && y < ycmd;) {
        size_t n = strcspn(p, "\n");
        char row[512];
        snprintf(row, sizeof(row), "%.*s", (int)n, p);
        y += draw_wrapped(u, y, x, w, ok ? 1 : ycmd - y, ok ? ROLE_NORMAL : ROLE_ERROR, row);
        p += n + (p[n] == '\n');
    }
    if (s->mc_ok && s->mc.source[0] && y < ycmd) {
        char about[512];
        snprintf(about, sizeof(about), "%s: from %s", s->mc.name, s->mc.source);
        draw_wrapped(u, y, x, w, ycmd - y, ROLE_DIM, about);
    }
    char line[1024];
    snprintf(line, sizeof(line), "$ %s", cmd.s);
    draw_wrapped(u, ycmd, x, w, cmd_rows, ROLE_NORMAL, line);
    strbuf_free(&cmd);
    strbuf_free(&sz);
}

static void setup_draw(struct app *a, struct ui *u, const struct layout *l)
{
    struct setup_state *s = st(a);
    if (s->doctor_shown && s->doctor) {
        doctor_draw(a, u, l);
        return;
    }
    if (model_mode(s)) {
        model_draw(a, u, l);
        return;
    }
    const struct rect *b = &l->pane[0];
    struct rect box = {b->y, b->x, F_COUNT + 2, b->w};
    ui_box(u, &box, "Test setup", true);
    struct rect in = ui_inner(&box);
    for (int f = 0; f < F_COUNT; f++) {
        char val[256], hint[256];
        bool dim;
        field_value(a, f, val, sizeof(val), hint, sizeof(hint), &dim);
        draw_row(a, u, &in, f, f == F_START, field_label[f], val, hint, dim);
    }
    /* Below the form: transports, the Drill field's fault (what D does, or why not), the
     * preset's description and lesson, the command line: the `fabtop drill` one while the
     * Drill field is selected with a fault only that command carries out. */
    int y = box.y + box.h, bottom = b->y + b->h, w = b->w - 2, x = b->x + 1;
    struct drill_eval v = {.rc = 0};
    bool drilling = s->drill_fault && field_applies(s, F_DRILL);
    if (drilling)
        drill_eval(a, &v);
    struct strbuf cmd;
    strbuf_init(&cmd);
    bool drill_cmd = drilling && v.rc == -EOPNOTSUPP && s->fields.sel == F_DRILL;
    if (drill_cmd)
        strbuf_add(&cmd, v.cmd.s);
    else
        mix_build_command_line(bld(s), &cmd);
    char line[1024];
    snprintf(line, sizeof(line), "$ %s", cmd.s);
    /* A drill's line (a mix file's path) may take four rows, wrapped at its words. */
    int cmd_rows = drill_cmd ? draw_wrapped(NULL, 0, 0, w, 4, ROLE_NORMAL, line)
                             : ((int)cmd.len + 2 + w - 1) / w;
    if (cmd_rows > 2 && !drill_cmd)
        cmd_rows = 2;
    int ycmd = bottom - cmd_rows;
    /* The Drill line takes up to three rows before the transports' reasons, leaving them
     * one. */
    int drill_rows = drilling ? draw_wrapped(NULL, 0, 0, w, 3, ROLE_NORMAL, v.line) : 0;
    if (drill_rows > ycmd - y - 1)
        drill_rows = ycmd - y - 1 > 1 ? ycmd - y - 1 : 1;
    int xp_rows = ycmd - y - (drilling ? drill_rows : 2);
    /* The transports may take all but two rows of the preset's text. */
    y += draw_transports(a, u, y, x, w, xp_rows > 1 ? xp_rows : 1);
    if (drilling && y < ycmd)
        y += draw_wrapped(u, y, x, w, ycmd - y < drill_rows ? ycmd - y : drill_rows,
                          v.rc == 0             ? ROLE_INFO
                          : v.rc == -EOPNOTSUPP ? ROLE_WARN
                                                : ROLE_ERROR,
                          v.line);
    if (drilling)
        strbuf_free(&v.cmd);
    if (s->b.have_base && y < ycmd) {
        char about[2048];
        snprintf(about, sizeof(about), "%s: %s", s->presets[s->preset], s->b.base.description);
        int used = draw_wrapped(u, y, x, w, ycmd - y, ROLE_NORMAL, about);
        y += used;
        if (s->b.base.lesson[0] && y < ycmd) {
            snprintf(about, sizeof(about), "Lesson: %s", s->b.base.lesson);
            y += draw_wrapped(u, y, x, w, ycmd - y, ROLE_INFO, about);
        }
    } else if (!s->b.have_base) {
        draw_wrapped(u, y, x, w, ycmd - y, ROLE_ERROR, s->b.base_error);
    }
    draw_wrapped(u, ycmd, x, w, cmd_rows, ROLE_NORMAL, line);
    strbuf_free(&cmd);
}

/* ---- the view ---- */

static void setup_init(struct app *a)
{
    struct setup_state *s = xalloc_zero(1, sizeof(*s));
    a->vstate[VIEW_SETUP] = s;
    s->preset = -1;
    s->model = -1;
    model_size_layout_defaults(&s->ml);
    strbuf_init(&s->msz);
    s->models = model_config_presets();
    while (s->models && s->models[s->nmodels])
        s->nmodels++;
    mix_build_init(&s->b);
    s->b.edited_by = "the explorer";
    build_endpoints(a);
    set_ep(s, 0);
    refresh_presets(a);
    restore_settings(a);
}

static void setup_fini(struct app *a)
{
    struct setup_state *s = st(a);
    app_doctor_free(s->doctor);
    mix_build_free(&s->b);
    mix_free_names(s->presets);
    model_config_free_names(s->models);
    strbuf_free(&s->msz);
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
    /* The preset file may have changed (a mix of the user's, edited meanwhile). */
    if (!model_mode(s) && s->preset >= 0 && strcmp(cur, s->presets[s->preset]))
        load_preset(a, s->preset);
    eval_transports(a);
}

static const char *setup_keys(const struct app *a)
{
    const struct setup_state *s = a->vstate[VIEW_SETUP];
    if (s->editing && s->fields.sel == F_DRILL && !model_mode(s))
        return "type FOR x TIMES (2 x 3: the fault for 2 s, 3 times)  Enter confirms  Esc cancels";
    if (s->editing)
        return "type the value  Enter confirms  Esc cancels  Backspace/Ctrl-U delete";
    if (s->doctor_shown && s->doctor)
        return "Up/Down PgUp/PgDn scroll  C again  Esc back to the form";
    /* At 80 columns the line drops whole keys from the end: Del reset goes first. */
    return "Up/Down field  Left/Right change  Enter edit  S start  D drill  C doctor  Del reset";
}

/* A click on a field's row selects it (a field that does not apply stays unselected); the
 * form's rows start on the pane's first row. Not while a field is being edited. */
static int setup_click(struct app *a, int pane, int row, int col)
{
    (void)pane;
    (void)col;
    struct setup_state *s = st(a);
    if (s->editing || row < 0 || row >= nfields(s) || !field_selectable(s, row))
        return REACT_HANDLED;
    s->fields.sel = row;
    return REACT_REDRAW;
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
    .tick = setup_tick,
    .keys = setup_keys,
    .click = setup_click,
};
