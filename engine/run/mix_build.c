/* mix_build: a mix from a preset and the knobs the explorer's form and `fabtop run` give. */
#include "engine/run/mix_build.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "engine/xport/xport.h"

const struct mix_knob_info mix_build_knobs[MIX_KNOB_COUNT] = {
    [MIX_KNOB_PEER] = {"peer", "HOST[:PORT]",
                       "the `fabtop serve` agent to test against ([IPv6]:PORT too; loopback: "
                       "the in-process agent on 127.0.0.1)"},
    [MIX_KNOB_KEY_FILE] = {"key-file", "FILE", "the agent's pre-shared key (remote peers only)"},
    [MIX_KNOB_SIZE] = {"size", "BYTES",
                       "message size of every flow, 1 B to 1 GiB (4096, 64KiB, 1MiB)"},
    [MIX_KNOB_DURATION] = {"duration", "SECONDS",
                           "seconds per size after the warm-up, more than 0 up to 86400"},
    [MIX_KNOB_ENDPOINT] = {"endpoint", "ENDPOINT",
                           "local endpoint of every flow: any, netdev:NAME, ip:ADDR, "
                           "rdma:DEV:PORT or gpu:N"},
    [MIX_KNOB_TRANSPORT] = {"transport", "NAME", "transport of every flow: tcp, verbs, nccl"},
    [MIX_KNOB_CONC] = {"concurrency", "N",
                       "the foreground's operations, requests or connections in flight, 1 to "
                       "1024"},
    [MIX_KNOB_SENDERS] = {"senders", "N",
                          "incast senders streaming into this host at once (incast presets)"},
    [MIX_KNOB_NEIGHBOURS] = {"neighbours", "on|off",
                             "off: drop the background flows (the quiet phase alone)"},
};

/* ---- text ---- */

void mix_build_fmt_bytes(char *buf, size_t len, uint64_t b)
{
    if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(buf, len, "%lluMiB", (unsigned long long)(b >> 20));
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%lluKiB", (unsigned long long)(b >> 10));
    else
        snprintf(buf, len, "%llu", (unsigned long long)b);
}

bool mix_build_parse_long(const char *s, long lo, long hi, long *out)
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

bool mix_build_parse_seconds(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    while (*end == ' ')
        end++;
    if (end == s || (*end && strcmp(end, "s")) || !isfinite(v) ||
        !(v > 0 && v <= MIX_BUILD_MAX_DURATION))
        return false;
    *out = v;
    return true;
}

/* ---- the builder ---- */

void mix_build_init(struct mix_build *b)
{
    memset(b, 0, sizeof(*b));
    b->ep.kind = MIX_EP_ANY;
    b->ep.gpu = -1;
    snprintf(b->ep.id, sizeof(b->ep.id), "any");
    b->neighbours = true;
}

void mix_build_free(struct mix_build *b)
{
    if (b->have_base)
        mix_free(&b->base);
    b->have_base = false;
}

void mix_build_reset(struct mix_build *b)
{
    b->size[0] = b->conc[0] = b->duration[0] = b->senders[0] = '\0';
    b->neighbours = true;
    int fg = mix_build_fg(b);
    if (fg >= 0)
        snprintf(b->transport, sizeof(b->transport), "%s", b->base.flows[fg].transport);
}

int mix_build_load(struct mix_build *b, const char *name_or_path, struct ft_err *err)
{
    mix_build_free(b);
    b->base_error[0] = '\0';
    snprintf(b->preset, sizeof(b->preset), "%s", name_or_path ? name_or_path : "");
    struct ft_err e = {0};
    int rc = 0;
    if (!name_or_path)
        rc =
            ft_err_set(&e, -ENOENT, "no preset mixes found (engine/mixes, ~/.config/fabtop/mixes)");
    else if ((rc = mix_load(name_or_path, &b->base, &e)) == 0)
        b->have_base = true;
    if (rc < 0) {
        snprintf(b->base_error, sizeof(b->base_error), "%s", e.msg);
        if (err)
            *err = e;
    }
    mix_build_reset(b);
    return rc < 0 ? rc : 0;
}

int mix_build_parse_endpoint(const char *id, struct mix_build_endpoint *ep, struct ft_err *err)
{
    struct mix_build_endpoint e = {.kind = MIX_EP_ANY, .gpu = -1};
    snprintf(e.id, sizeof(e.id), "%s", id);
    long g;
    if (!strcmp(id, "any")) {
    } else if (!strncmp(id, "netdev:", 7) && id[7] && strlen(id + 7) < sizeof(e.netdev)) {
        e.kind = MIX_EP_NETDEV;
        snprintf(e.netdev, sizeof(e.netdev), "%s", id + 7);
    } else if (!strncmp(id, "ip:", 3) && id[3] && strlen(id + 3) < sizeof(e.ip)) {
        e.kind = MIX_EP_IP;
        snprintf(e.ip, sizeof(e.ip), "%s", id + 3);
    } else if (!strncmp(id, "rdma:", 5) && strchr(id + 5, ':') && id[5] != ':' &&
               strlen(id + 5) < sizeof(e.rdma)) {
        e.kind = MIX_EP_RDMA;
        snprintf(e.rdma, sizeof(e.rdma), "%s", id + 5);
    } else if (!strncmp(id, "gpu:", 4) && mix_build_parse_long(id + 4, 0, 1023, &g)) {
        e.kind = MIX_EP_GPU;
        e.gpu = (int)g;
    } else {
        return ft_err_set(err, -EINVAL,
                          "endpoint '%s': give any, netdev:NAME, ip:ADDR, rdma:DEV:PORT or "
                          "gpu:N",
                          id);
    }
    *ep = e;
    return 0;
}

int mix_build_set(struct mix_build *b, enum mix_knob k, const char *value, struct ft_err *err)
{
    const char *v = value ? value : "";
    switch (k) {
    case MIX_KNOB_PEER:
        snprintf(b->peer, sizeof(b->peer), "%s", strcmp(v, "loopback") ? v : "");
        return 0;
    case MIX_KNOB_KEY_FILE:
        snprintf(b->key_file, sizeof(b->key_file), "%s", v);
        return 0;
    case MIX_KNOB_SIZE:
        snprintf(b->size, sizeof(b->size), "%s", v);
        return 0;
    case MIX_KNOB_DURATION:
        snprintf(b->duration, sizeof(b->duration), "%s", v);
        return 0;
    case MIX_KNOB_ENDPOINT:
        return mix_build_parse_endpoint(*v ? v : "any", &b->ep, err);
    case MIX_KNOB_TRANSPORT:
        if (!*v) {
            int fg = mix_build_fg(b);
            v = fg >= 0 ? b->base.flows[fg].transport : "";
        }
        snprintf(b->transport, sizeof(b->transport), "%s", v);
        return 0;
    case MIX_KNOB_CONC:
        snprintf(b->conc, sizeof(b->conc), "%s", v);
        return 0;
    case MIX_KNOB_SENDERS:
        snprintf(b->senders, sizeof(b->senders), "%s", v);
        return 0;
    case MIX_KNOB_NEIGHBOURS:
        if (!*v || !strcmp(v, "on"))
            b->neighbours = true;
        else if (!strcmp(v, "off"))
            b->neighbours = false;
        else
            return ft_err_set(err, -EINVAL, "neighbours '%s': give on or off", v);
        return 0;
    default:
        return ft_err_set(err, -EINVAL, "no such setting (%d)", (int)k);
    }
}

/* ---- the preset's shape ---- */

int mix_build_fg(const struct mix_build *b)
{
    return b->have_base ? mix_foreground(&b->base) : -1;
}

int mix_build_background(const struct mix_build *b)
{
    int n = 0;
    for (int i = 0; b->have_base && i < b->base.nflows; i++)
        n += b->base.flows[i].role == MIX_ROLE_BACKGROUND;
    return n;
}

static bool is_sender(const struct mix_flow *f)
{
    return f->role == MIX_ROLE_BACKGROUND && f->dir == MIX_DIR_RX;
}

int mix_build_senders(const struct mix_build *b)
{
    int n = 0;
    for (int i = 0; b->have_base && i < b->base.nflows; i++)
        n += is_sender(&b->base.flows[i]);
    return n;
}

int mix_build_max_senders(const struct mix_build *b)
{
    return MIX_MAX_FLOWS - (b->base.nflows - mix_build_senders(b));
}

bool mix_build_sim(const struct mix_build *b)
{
    int fg = mix_build_fg(b);
    return fg >= 0 && !strcmp(b->base.flows[fg].transport, "sim");
}

/* The simulated host flow f sends to (params.dst), or NULL. */
static const char *sim_dst(const struct mix_flow *f)
{
    const cJSON *d = f->params ? cJSON_GetObjectItemCaseSensitive(f->params, "dst") : NULL;
    return cJSON_IsString(d) ? d->valuestring : NULL;
}

int mix_build_sim_incast(const struct mix_build *b, char *dst, size_t len)
{
    int best = 0;
    if (len)
        dst[0] = '\0';
    if (!mix_build_sim(b))
        return 0;
    for (int i = 0; i < b->base.nflows; i++) {
        const char *di = sim_dst(&b->base.flows[i]);
        if (!di || b->base.flows[i].op != MIX_OP_STREAM)
            continue;
        int n = 0;
        for (int j = 0; j < b->base.nflows; j++) {
            const char *dj = sim_dst(&b->base.flows[j]);
            n += dj && b->base.flows[j].op == MIX_OP_STREAM && !strcmp(di, dj);
        }
        if (n > best) {
            best = n;
            snprintf(dst, len, "%s", di);
        }
    }
    return best >= 2 ? best : 0;
}

bool mix_build_applies(const struct mix_build *b, enum mix_knob k)
{
    if (mix_build_sim(b) && (k == MIX_KNOB_ENDPOINT || k == MIX_KNOB_PEER ||
                             k == MIX_KNOB_KEY_FILE || k == MIX_KNOB_DURATION))
        return false;
    if (k == MIX_KNOB_SENDERS)
        return mix_build_senders(b) > 0 && b->neighbours;
    if (k == MIX_KNOB_NEIGHBOURS)
        return mix_build_background(b) > 0;
    return true;
}

bool mix_build_flow_runs(const struct mix_build *b, const struct mix_flow *f)
{
    return f->role == MIX_ROLE_FOREGROUND || b->neighbours;
}

int mix_build_transports(const struct mix_build *b, const char **names, int max)
{
    static const char *const known[] = {"tcp", "verbs", "nccl"};
    const char *all[16];
    int n = 0, k = 0;
    const struct xport_ops *const *reg = xport_all();
    for (int i = 0; reg[i] && n < 16; i++)
        all[n++] = reg[i]->name;
    for (size_t j = 0; j < sizeof(known) / sizeof(known[0]) && n < 16; j++)
        if (!xport_find(known[j]))
            all[n++] = known[j];
    /* The simulator is the sim/ presets' one transport, and no other preset's. */
    for (int i = 0; i < n && k < max; i++)
        if (!b->have_base || mix_build_sim(b) == !strcmp(all[i], "sim"))
            names[k++] = all[i];
    return k;
}

bool mix_build_transport_offered(const struct mix_build *b, const char *name)
{
    const char *names[16];
    int n = mix_build_transports(b, names, 16);
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return true;
    return false;
}

bool mix_build_transport_ok(const struct mix_build *b, const char *name, char *why, size_t len)
{
    const struct xport_ops *xp = xport_find(name);
    const struct mix_build_endpoint *e = &b->ep;
    if (!xp) {
        snprintf(why, len, "not in this build");
        return false;
    }
    char r[160] = "";
    if (xp->available(r, sizeof(r)) < 0) {
        snprintf(why, len, "%s", r[0] ? r : "unavailable here");
        return false;
    }
    for (int i = 0; b->have_base && i < b->base.nflows; i++) {
        const struct mix_flow *f = &b->base.flows[i];
        if (mix_build_flow_runs(b, f) && !(xp->ops & (1u << f->op))) {
            snprintf(why, len, "cannot run %s (flow %s)", mix_op_str(f->op), f->name);
            return false;
        }
    }
    /* The simulator runs the sim/ presets (their flows name simulated hosts), and only it. */
    if (b->have_base && mix_build_sim(b) != !strcmp(name, "sim")) {
        snprintf(why, len, "%s",
                 mix_build_sim(b) ? "this preset is a simulated fabric"
                                  : "runs the sim/ presets only");
        return false;
    }
    if (!strcmp(name, "sim"))
        return true;
    if (!strcmp(name, "tcp")) {
        if (e->kind == MIX_EP_GPU) {
            snprintf(why, len, "TCP cannot use a GPU endpoint");
            return false;
        }
        if (e->kind == MIX_EP_RDMA && !e->netdev[0]) {
            snprintf(why, len, "%s has no netdev for TCP", e->rdma);
            return false;
        }
    } else if (!strcmp(name, "verbs") && e->kind != MIX_EP_RDMA) {
        snprintf(why, len, "needs an RDMA port endpoint%s",
                 b->node_has_rdma ? "" : " (none on this node)");
        return false;
    } else if (!strcmp(name, "nccl") && e->kind != MIX_EP_GPU) {
        snprintf(why, len, "needs a GPU endpoint%s", b->node_has_gpu ? "" : " (none on this node)");
        return false;
    }
    return true;
}

/* Is the concurrency given away from the preset's foreground one? */
static bool conc_edited(const struct mix_build *b)
{
    long v;
    int fg = mix_build_fg(b);
    return b->conc[0] && !(mix_build_parse_long(b->conc, 1, MIX_BUILD_MAX_CONC, &v) &&
                           v == b->base.flows[fg].concurrency);
}

/* Are the senders given away from the preset's (with neighbours on)? */
static bool senders_edited(const struct mix_build *b)
{
    long v;
    return b->neighbours && mix_build_senders(b) > 0 && b->senders[0] &&
           !(mix_build_parse_long(b->senders, 0, MIX_MAX_FLOWS, &v) && v == mix_build_senders(b));
}

/* Does a flow that runs use another transport than the one chosen? */
static bool transport_edited(const struct mix_build *b)
{
    for (int i = 0; i < b->base.nflows; i++)
        if (mix_build_flow_runs(b, &b->base.flows[i]) &&
            strcmp(b->base.flows[i].transport, b->transport))
            return true;
    return false;
}

bool mix_build_edited(const struct mix_build *b)
{
    if (!b->have_base)
        return false;
    if (b->ep.kind != MIX_EP_ANY && !mix_build_sim(b))
        return true;
    return transport_edited(b) || conc_edited(b) ||
           (!b->neighbours && mix_build_background(b) > 0) || senders_edited(b);
}

/* ---- the mix ---- */

/* Set the flow's local endpoint for its transport. */
static void apply_endpoint(const struct mix_build_endpoint *e, struct mix_flow *f)
{
    f->local_ip[0] = f->local_netdev[0] = f->local_rdma[0] = '\0';
    f->local_gpu = -1;
    switch (e->kind) {
    case MIX_EP_ANY:
        break;
    case MIX_EP_NETDEV:
        snprintf(f->local_netdev, sizeof(f->local_netdev), "%s", e->netdev);
        break;
    case MIX_EP_IP:
        snprintf(f->local_ip, sizeof(f->local_ip), "%s", e->ip);
        break;
    case MIX_EP_RDMA:
        snprintf(f->local_rdma, sizeof(f->local_rdma), "%s", e->rdma);
        /* TCP leaves through the port's netdev: by its address where it has one (no
         * privilege needed), else by binding to the device. */
        if (!strcmp(f->transport, "tcp") && e->netdev[0]) {
            if (e->ip[0])
                snprintf(f->local_ip, sizeof(f->local_ip), "%s", e->ip);
            else
                snprintf(f->local_netdev, sizeof(f->local_netdev), "%s", e->netdev);
        }
        break;
    case MIX_EP_GPU:
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
    return !port || mix_build_parse_long(port, 1, 65535, &v);
}

/* The knobs one by one, in the documented order; 0 or -EINVAL with why. */
static int check_knobs(const struct mix_build *b, uint64_t *size, long *conc, long *senders,
                       double *duration, char *why, size_t len)
{
    const struct mix_flow *bf = &b->base.flows[mix_build_fg(b)];
    if (b->size[0] && (mix_parse_bytes(b->size, size) < 0 || *size > MIX_BUILD_MAX_SIZE)) {
        snprintf(why, len, "Message size '%s': give bytes up to 1GiB, e.g. 4096, 64KiB, 1MiB",
                 b->size);
        return -EINVAL;
    }
    if (b->conc[0] && !mix_build_parse_long(b->conc, 1, MIX_BUILD_MAX_CONC, conc)) {
        snprintf(why, len, "Concurrency '%s': give a whole number from 1 to 1024", b->conc);
        return -EINVAL;
    }
    if (*conc != 1 && bf->op == MIX_OP_PINGPONG) {
        snprintf(why, len, "Concurrency: ping-pong keeps 1 message in flight; pick an rr preset");
        return -EINVAL;
    }
    if (b->duration[0] && mix_build_applies(b, MIX_KNOB_DURATION) &&
        !mix_build_parse_seconds(b->duration, duration)) {
        snprintf(why, len, "Duration '%s': give seconds per size, more than 0, up to 86400",
                 b->duration);
        return -EINVAL;
    }
    if (mix_build_applies(b, MIX_KNOB_SENDERS) && b->senders[0] &&
        !mix_build_parse_long(b->senders, 1, mix_build_max_senders(b), senders)) {
        snprintf(why, len, "Incast senders '%s': from 1 to %d (Neighbours off for none)",
                 b->senders, mix_build_max_senders(b));
        return -EINVAL;
    }
    bool remote = b->peer[0] && mix_build_applies(b, MIX_KNOB_PEER);
    if (remote && !peer_ok(b->peer)) {
        snprintf(why, len, "Peer '%s': give HOST[:PORT] of a `fabtop serve`, or loopback", b->peer);
        return -EINVAL;
    }
    if (remote && b->key_file[0] && access(b->key_file, R_OK) < 0) {
        snprintf(why, len, "Key file %s: %s", b->key_file, strerror(errno));
        return -EINVAL;
    }
    char r[160];
    if (!mix_build_transport_offered(b, b->transport)) {
        snprintf(why, len, "Transport: pick one that can run this endpoint and preset");
        return -EINVAL;
    }
    if (!mix_build_transport_ok(b, b->transport, r, sizeof(r))) {
        snprintf(why, len, "Transport %s: %s", b->transport, r);
        return -EINVAL;
    }
    return 0;
}

int mix_build_make(const struct mix_build *b, struct mix *m, char *why, size_t len)
{
    if (!b->have_base) {
        snprintf(why, len, "%s", b->base_error);
        return -EINVAL;
    }
    uint64_t size = 0;
    long conc = b->base.flows[mix_build_fg(b)].concurrency, senders = mix_build_senders(b);
    double duration = 0;
    int rc = check_knobs(b, &size, &conc, &senders, &duration, why, len);
    if (rc < 0)
        return rc;
    mix_copy(m, &b->base);
    if (!b->neighbours) {
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
    } else if (mix_build_senders(b) > 0 && senders != mix_build_senders(b)) {
        set_senders(m, (int)senders);
    }
    for (int i = 0; i < m->nflows; i++) {
        struct mix_flow *f = &m->flows[i];
        snprintf(f->transport, sizeof(f->transport), "%s", b->transport);
        if (mix_build_applies(b, MIX_KNOB_ENDPOINT))
            apply_endpoint(&b->ep, f);
    }
    if (size)
        mix_set_size(m, size);
    m->flows[mix_foreground(m)].concurrency = (int)conc;
    if (duration > 0)
        mix_set_duration(m, duration);
    if (b->edited_by && mix_build_edited(b)) {
        char d[sizeof(m->description)];
        snprintf(d, sizeof(d), "%s", m->description);
        snprintf(m->description, sizeof(m->description), "Preset %s edited in %s. %s", b->preset,
                 b->edited_by, d);
    }
    const struct xport_ops *xp = xport_find(b->transport);
    for (int i = 0; xp->validate && i < m->nflows; i++) {
        struct ft_err err = {0};
        if (xp->validate(&m->flows[i], &err) < 0) {
            snprintf(why, len, "%s", err.msg);
            mix_free(m);
            return -EINVAL;
        }
    }
    return 0;
}

/* ---- the command line ---- */

static void add_flag(struct strbuf *sb, enum mix_knob k, const char *value)
{
    strbuf_printf(sb, " --%s ", mix_build_knobs[k].flag);
    strbuf_add_shell_word(sb, value);
}

void mix_build_command_line(const struct mix_build *b, struct strbuf *sb)
{
    strbuf_add(sb, "fabtop run --mix ");
    strbuf_add_shell_word(sb, b->preset[0] ? b->preset : "?");
    bool remote = b->peer[0] && mix_build_applies(b, MIX_KNOB_PEER);
    if (remote)
        add_flag(sb, MIX_KNOB_PEER, b->peer);
    if (remote && b->key_file[0])
        add_flag(sb, MIX_KNOB_KEY_FILE, b->key_file);
    char t[64];
    uint64_t bytes;
    if (b->size[0] && mix_parse_bytes(b->size, &bytes) == 0) {
        mix_build_fmt_bytes(t, sizeof(t), bytes);
        add_flag(sb, MIX_KNOB_SIZE, t);
    } else if (b->size[0]) {
        add_flag(sb, MIX_KNOB_SIZE, b->size);
    }
    double d;
    if (b->duration[0] && mix_build_applies(b, MIX_KNOB_DURATION)) {
        if (mix_build_parse_seconds(b->duration, &d))
            snprintf(t, sizeof(t), "%g", d);
        add_flag(sb, MIX_KNOB_DURATION, mix_build_parse_seconds(b->duration, &d) ? t : b->duration);
    }
    if (!b->have_base)
        return;
    if (b->ep.kind != MIX_EP_ANY && mix_build_applies(b, MIX_KNOB_ENDPOINT))
        add_flag(sb, MIX_KNOB_ENDPOINT, b->ep.id);
    if (transport_edited(b))
        add_flag(sb, MIX_KNOB_TRANSPORT, b->transport[0] ? b->transport : "?");
    long v;
    if (conc_edited(b)) {
        if (mix_build_parse_long(b->conc, 1, MIX_BUILD_MAX_CONC, &v))
            snprintf(t, sizeof(t), "%ld", v);
        add_flag(sb, MIX_KNOB_CONC,
                 mix_build_parse_long(b->conc, 1, MIX_BUILD_MAX_CONC, &v) ? t : b->conc);
    }
    if (senders_edited(b)) {
        if (mix_build_parse_long(b->senders, 0, MIX_MAX_FLOWS, &v))
            snprintf(t, sizeof(t), "%ld", v);
        add_flag(sb, MIX_KNOB_SENDERS,
                 mix_build_parse_long(b->senders, 0, MIX_MAX_FLOWS, &v) ? t : b->senders);
    }
    if (!b->neighbours && mix_build_background(b) > 0)
        add_flag(sb, MIX_KNOB_NEIGHBOURS, "off");
}

int mix_build_rdma_netdev(const struct topo_model *m, int p, struct mix_build_endpoint *ep)
{
    int d = m->ports[p].netdev;
    if (d < 0)
        return -1;
    const struct topo_netdev *nd = &m->netdevs[d];
    size_t na = strcspn(nd->addrs, " ");
    snprintf(ep->netdev, sizeof(ep->netdev), "%s", nd->name);
    if (na && na < sizeof(ep->ip))
        snprintf(ep->ip, sizeof(ep->ip), "%.*s", (int)na, nd->addrs);
    return d;
}
