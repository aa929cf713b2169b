/* sim_run: building a simulation, adding applications, the event loop, playback control (time
 * scale, pause, step, skip idle), and what the views read: per-port snapshots, counters with
 * their real names, and the deterministic results document. */
#include "engine/sim/sim_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xalloc.h"

int sim_new(const cJSON *topo, const char *what, const struct sim_params *p, struct sim **out,
            struct ft_err *err)
{
    *out = NULL;
    struct sim *s = xalloc_zero(1, sizeof(*s));
    s->p = *p;
    if (s->p.fabric == SIM_FABRIC_IB) {
        /* IB: no PFC; ACKs and BECNs never take data credits (they ride their own VL). */
        s->p.pfc = false;
        s->p.ecn = false;
        s->p.control_class = true;
    }
    if (s->p.mtu < 64 || s->p.ack_every < 1 || s->p.depth < 1 || s->p.depth > SIM_MAXDEPTH) {
        free(s);
        return ft_err_set(err, -EINVAL, "%s: mtu >= 64, ack_every >= 1, depth 1-%d", what,
                          SIM_MAXDEPTH);
    }
    int rc = sim_topo_build(s, topo, what, err);
    if (rc < 0) {
        sim_free(s);
        return rc;
    }
    uint32_t mtu_frame = s->p.mtu + SIM_ROCE_HDR + SIM_RETH;
    for (uint32_t i = 0; i < s->nports; i++) {
        struct sim_port *pt = &s->ports[i];
        const struct sim_node *peer = &s->nodes[s->ports[pt->peer].node];
        pt->hop = pt->prop + (peer->host ? 0 : s->p.switch_latency);
        pt->headroom =
            s->p.headroom ? s->p.headroom : sim_pfc_headroom(pt->gbps, pt->prop, mtu_frame);
        pt->credits = (int64_t)(s->p.ib_vl_buffer / SIM_IB_BLOCK);
        if (!s->p.pfc_xon_delta)
            s->p.pfc_xon_delta = 2 * (uint64_t)(s->p.mtu + SIM_ROCE_HDR);
        pt->wire_head = pt->wire_tail = pt->cred_head = pt->cred_tail = SIM_NIL;
    }
    for (int i = 0; i < s->p.nlink_events; i++) {
        const struct sim_link_event *e = &s->p.link_events[i];
        if (sim_find_link(s, e->a, e->b) < 0) {
            rc = ft_err_set(err, -EINVAL, "%s: link_events: no link between %s and %s", what, e->a,
                            e->b);
            sim_free(s);
            return rc;
        }
    }
    sim_ev_grow(&s->hq[0]);
    sim_ev_grow(&s->hq[1]);
    sim_pool_init(s, 4096);
    s->rng = s->p.seed * 0x2545f4914f6cdd1dull + 1;
    for (int i = 0; i < s->p.nlink_events; i++)
        sim_ev_push(s, s->p.link_events[i].at, EV_LINK, (uint32_t)i);
    if (s->p.sample_period) {
        s->tl_queue = xalloc_zero(SIM_TL_MAX, sizeof(float));
        s->tl_paused = xalloc_zero(SIM_TL_MAX, sizeof(uint16_t));
        sim_ev_push(s, s->p.sample_period, EV_SAMPLE, 0);
    }
    *out = s;
    return 0;
}

void sim_free(struct sim *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; s->nodes && i < s->nnodes; i++) {
        free(s->nodes[i].route_off);
        free(s->nodes[i].route_n);
        free(s->nodes[i].senders);
    }
    for (uint32_t i = 0; i < s->napps; i++) {
        free(s->apps[i].sizes_copy);
        free(s->apps[i].weights_copy);
        free(s->apps[i].pp_post);
        free(s->apps[i].tl);
    }
    free(s->tl_queue);
    free(s->tl_paused);
    free(s->nodes);
    free(s->host_node);
    free(s->ports);
    free(s->routes);
    free(s->apps);
    free(s->qds);
    free(s->hq[0].e);
    free(s->hq[1].e);
    free(s->pkts);
    free(s);
}

int sim_nhosts(const struct sim *s)
{
    return (int)s->nhosts;
}

int sim_nnodes(const struct sim *s)
{
    return (int)s->nnodes;
}

int sim_host_index(const struct sim *s, const char *name)
{
    for (uint32_t i = 0; i < s->nhosts; i++)
        if (!strcmp(s->nodes[s->host_node[i]].name, name))
            return (int)i;
    return -1;
}

const char *sim_node_name(const struct sim *s, int node)
{
    return node >= 0 && (uint32_t)node < s->nnodes ? s->nodes[node].name : "?";
}

double sim_host_gbps(const struct sim *s, int host)
{
    return s->ports[s->nodes[s->host_node[host]].port0].gbps;
}

static void add_sender(struct sim *s, uint32_t host, uint32_t qd)
{
    struct sim_node *n = &s->nodes[s->host_node[host]];
    n->senders = xalloc_resize(n->senders, (n->nsenders + 1) * sizeof(uint32_t));
    n->senders[n->nsenders++] = qd;
}

int sim_app_add(struct sim *s, const struct sim_app *a, struct ft_err *err)
{
    if (s->events)
        return ft_err_set(err, -EBUSY, "simulator: apps must be added before the run starts");
    if (a->src < 0 || a->dst < 0 || (uint32_t)a->src >= s->nhosts ||
        (uint32_t)a->dst >= s->nhosts || a->src == a->dst)
        return ft_err_set(err, -EINVAL, "simulator: an app needs two different hosts of h0-h%u",
                          s->nhosts - 1);
    if (a->nqps < 1 || a->nqps > 1024 || (a->nsizes <= 0 && a->size < 1) || a->nsizes > 64)
        return ft_err_set(err, -EINVAL, "simulator: an app needs 1-1024 QPs and a size");
    if (s->napps == s->apps_cap) {
        s->apps_cap = s->apps_cap ? 2 * s->apps_cap : 16;
        s->apps = xalloc_resize(s->apps, s->apps_cap * sizeof(*s->apps));
    }
    uint32_t ai = s->napps++;
    struct sim_appx *ax = &s->apps[ai];
    memset(ax, 0, sizeof(*ax));
    ax->a = *a;
    if (a->nsizes > 0) {
        ax->sizes_copy = xalloc((size_t)a->nsizes * sizeof(uint64_t));
        ax->weights_copy = xalloc((size_t)a->nsizes * sizeof(double));
        memcpy(ax->sizes_copy, a->sizes, (size_t)a->nsizes * sizeof(uint64_t));
        memcpy(ax->weights_copy, a->weights, (size_t)a->nsizes * sizeof(double));
    }
    ax->a.sizes = NULL;
    ax->a.weights = NULL;
    ax->remaining = a->messages ? a->messages : UINT64_MAX;
    ax->rng = s->p.seed * 1000003u + ai + 1;
    ax->pp_post = xalloc_zero((size_t)a->nqps, sizeof(uint64_t));
    if (s->p.sample_period)
        ax->tl = xalloc_zero(SIM_TL_MAX, sizeof(float));
    uint32_t need = s->nqds + 2 * (uint32_t)a->nqps;
    if (need > s->qds_cap) {
        s->qds_cap = need * 2;
        s->qds = xalloc_resize(s->qds, s->qds_cap * sizeof(*s->qds));
    }
    ax->qd0 = s->nqds;
    double rate_cap = a->rate_gbps > 0 ? a->rate_gbps / a->nqps : 0;
    for (int qp = 0; qp < a->nqps; qp++)
        for (int d = 0; d < 2; d++) {
            uint32_t qi = s->nqds++;
            struct sim_qd *q = &s->qds[qi];
            memset(q, 0, sizeof(*q));
            q->app = ai;
            q->qp = (uint32_t)qp;
            q->dir = (uint8_t)d;
            q->src = (uint16_t)(d ? a->dst : a->src);
            q->dst = (uint16_t)(d ? a->src : a->dst);
            q->hash = (uint32_t)sim_mix64(((uint64_t)q->src << 48) ^ ((uint64_t)q->dst << 32) ^
                                          ((uint64_t)ai << 16) ^ (uint64_t)qp ^ (s->p.seed << 56));
            q->last_cnp = UINT64_MAX;
            q->rate_cap = rate_cap;
            q->rp.line = sim_host_gbps(s, q->src);
            q->rp.rc = q->rp.rt = q->rp.line;
            q->rp.alpha = s->p.dcqcn.initial_alpha;
            q->alpha_anchor = a->start;
            q->ccti = s->p.ibcc.ccti_min;
            q->worker = -1;
            bool sends;
            if (a->op == SIM_OP_STREAM) {
                sends = a->dir == SIM_DIR_BIDIR || (a->dir == SIM_DIR_TX) == (d == 0);
                if (sends)
                    q->worker = a->dir == SIM_DIR_BIDIR && d == 1 ? a->nqps + qp : qp;
            } else {
                sends = true;
                q->worker = qp;
            }
            if (sends)
                add_sender(s, q->src, qi);
        }
    if (!a->background) {
        s->nfg++;
        s->fg_left++;
    }
    sim_ev_push(s, a->start, EV_APP_START, ai);
    return (int)ai;
}

void sim_app_stats(const struct sim *s, int app, struct sim_app_stats *out)
{
    const struct sim_appx *ax = &s->apps[app];
    *out = ax->st;
    out->tx_acked = out->rx_bytes = out->peer_rx_bytes = 0;
    for (int qp = 0; qp < ax->a.nqps; qp++) {
        const struct sim_qd *d0 = &s->qds[ax->qd0 + 2 * (uint32_t)qp];
        const struct sim_qd *d1 = d0 + 1;
        /* Acknowledged payload: whole messages, plus the acknowledged packets of the oldest. */
        uint64_t acked = d0->acked_bytes;
        if (d0->mn) {
            const struct sim_msg *m = &d0->m[d0->mhead];
            if (d0->snd_una > m->psn0)
                acked += (uint64_t)(d0->snd_una - m->psn0) * s->p.mtu;
        }
        out->tx_acked += acked;
        out->peer_rx_bytes += d0->rx_bytes;
        out->rx_bytes += d1->rx_bytes;
    }
}

/* ---- the event loop ---- */

/* Every foreground app is done (or the run was aborted). */
static inline bool over(const struct sim *s)
{
    return s->aborted || (s->nfg && !s->fg_left);
}

static inline void dispatch(struct sim *s, const struct sim_ev *e)
{
    s->now = e->key >> SIM_SEQ_BITS;
    uint32_t idx = e->what & EV_MASK;
    switch ((enum sim_ev_type)(e->what >> EV_SHIFT)) {
    case EV_ARRIVE:
        sim_wire_arrive(s, idx);
        break;
    case EV_CREDIT:
        sim_credit_arrive(s, idx);
        break;
    case EV_TXDONE:
        s->ports[idx].txdone_pending = false;
        sim_port_kick(s, idx);
        break;
    case EV_NIC_WAKE:
        sim_nic_wake(s, idx);
        break;
    case EV_PAUSE_END:
        sim_pause_end(s, idx);
        break;
    case EV_PFC_REFRESH:
        sim_pfc_refresh(s, idx);
        break;
    case EV_RTO:
        sim_rto(s, idx);
        break;
    case EV_RATE:
        sim_rate_timer(s, idx);
        break;
    case EV_CCTI:
        sim_ccti_timer(s, idx);
        break;
    case EV_APP_START:
        sim_app_start(s, idx);
        break;
    case EV_LINK:
        sim_link_event(s, idx);
        break;
    case EV_ROUTES:
        sim_routes_compute(s);
        break;
    case EV_SAMPLE:
        sim_sample(s);
        break;
    }
}

/* The event loop: at most max_n events with keys up to max_key, until the run is over. */
static uint64_t run_events(struct sim *s, uint64_t max_key, uint64_t max_n)
{
    uint64_t n = 0;
    struct sim_ev e = {0};
    while (n < max_n && !over(s) && sim_ev_pop_upto(s, max_key, &e)) {
        dispatch(s, &e);
        n++;
    }
    s->events += n;
    return n;
}

uint64_t sim_run_until(struct sim *s, uint64_t until)
{
    return run_events(s, sim_ev_key_upto(until), UINT64_MAX);
}

uint64_t sim_step(struct sim *s, uint64_t max)
{
    return run_events(s, UINT64_MAX, max);
}

bool sim_finished(const struct sim *s)
{
    return over(s);
}

uint64_t sim_run(struct sim *s, uint64_t max_ps)
{
    return run_events(s, sim_ev_key_upto(max_ps), UINT64_MAX);
}

uint64_t sim_now(const struct sim *s)
{
    return s->now;
}

uint64_t sim_next_time(const struct sim *s)
{
    return sim_ev_any(s) ? sim_ev_next(s) : UINT64_MAX;
}

uint64_t sim_events(const struct sim *s)
{
    return s->events;
}

uint64_t sim_packets_live(const struct sim *s)
{
    return s->live;
}

void sim_abort(struct sim *s)
{
    s->aborted = true;
}

/* ---- playback ---- */

int sim_ctl_set_scale(struct sim *s, uint64_t wall_ns_per_sim_us)
{
    if (wall_ns_per_sim_us && (wall_ns_per_sim_us < 10000 || wall_ns_per_sim_us > 100000000))
        return -EINVAL;
    atomic_store(&s->ctl_scale, wall_ns_per_sim_us);
    atomic_fetch_add(&s->ctl_gen, 1);
    return 0;
}

void sim_ctl_pause(struct sim *s, bool paused)
{
    atomic_store(&s->ctl_paused, paused);
    atomic_fetch_add(&s->ctl_gen, 1);
}

void sim_ctl_step(struct sim *s, uint64_t sim_ps)
{
    atomic_store(&s->ctl_step, sim_ps ? sim_ps : UINT64_MAX);
}

void sim_ctl_skip_idle(struct sim *s, bool on)
{
    atomic_store(&s->ctl_skip, on);
    atomic_fetch_add(&s->ctl_gen, 1);
}

void sim_ctl_get(const struct sim *s, struct sim_ctl_state *out)
{
    out->scale = atomic_load(&((struct sim *)s)->ctl_scale);
    out->paused = atomic_load(&((struct sim *)s)->ctl_paused);
    out->skip_idle = atomic_load(&((struct sim *)s)->ctl_skip);
}

int sim_ctl_moments(struct sim *s, const uint64_t (*ps)[2], int n)
{
    if (n < 0 || n > SIM_MAX_MOMENTS)
        return -EINVAL;
    for (int i = 0; i < n; i++)
        if (ps[i][1] <= ps[i][0] || (i && ps[i][0] < ps[i - 1][1]))
            return -EINVAL;
    memcpy(s->moments, ps, (size_t)n * sizeof(ps[0]));
    s->nmoments = n;
    atomic_fetch_add(&s->ctl_gen, 1);
    return 0;
}

int sim_ctl_get_moments(const struct sim *s, uint64_t (*ps)[2])
{
    memcpy(ps, s->moments, (size_t)s->nmoments * sizeof(s->moments[0]));
    return s->nmoments;
}

/* The scale at simulated time t and where it next changes (UINT64_MAX: never). */
static uint64_t scale_at(uint64_t scale, const uint64_t (*m)[2], int n, uint64_t t, uint64_t *until)
{
    *until = UINT64_MAX;
    if (n == 0)
        return scale;
    uint64_t steady = scale < SIM_SCALE_STEADY ? scale : SIM_SCALE_STEADY;
    for (int i = 0; i < n; i++) {
        if (t < m[i][0]) {
            *until = m[i][0];
            return steady;
        }
        if (t < m[i][1]) {
            *until = m[i][1];
            return scale;
        }
    }
    return steady;
}

/* Simulated time reached from sim time t after dw wall ns, the scale piecewise. */
static uint64_t sim_after(uint64_t scale, const uint64_t (*m)[2], int n, uint64_t t, double dw)
{
    while (dw > 0) {
        uint64_t until;
        double sc = (double)scale_at(scale, m, n, t, &until);
        /* Wall ns per simulated us: ps of simulated time per wall ns is 1e6 / sc. */
        double reach = until == UINT64_MAX ? INFINITY : (double)(until - t) / 1e6 * sc;
        if (dw < reach)
            return t + (uint64_t)(dw * 1e6 / sc);
        dw -= reach;
        t = until;
    }
    return t;
}

double sim_playback_wall_ns(uint64_t scale, const uint64_t (*moments)[2], int n, uint64_t sim_ps)
{
    if (!scale)
        return 0;
    double wall = 0;
    for (uint64_t t = 0; t < sim_ps;) {
        uint64_t until;
        double sc = (double)scale_at(scale, moments, n, t, &until);
        uint64_t end = until < sim_ps ? until : sim_ps;
        wall += (double)(end - t) / 1e6 * sc;
        t = end;
    }
    return wall;
}

uint64_t sim_play(struct sim *s, uint64_t wall_ns, uint64_t max_events)
{
    uint64_t gen = atomic_load(&s->ctl_gen);
    if (gen != s->play_gen) {
        s->play_gen = gen;
        s->anchored = false;
    }
    if (atomic_load(&s->ctl_paused)) {
        uint64_t step = atomic_exchange(&s->ctl_step, 0);
        s->anchored = false;
        if (step == UINT64_MAX)
            return sim_step(s, 1);
        if (!step)
            return 0;
        uint64_t target = s->now + step;
        uint64_t n = sim_run_until(s, target);
        if (s->now < target && !over(s))
            s->now = target; /* nothing due before the target: the clock still moves */
        return n;
    }
    uint64_t scale = atomic_load(&s->ctl_scale);
    if (!scale)
        return sim_step(s, max_events);
    if (!s->anchored) {
        s->anchor_wall = wall_ns;
        s->anchor_sim = s->now;
        s->anchored = true;
    }
    double dw = wall_ns > s->anchor_wall ? (double)(wall_ns - s->anchor_wall) : 0;
    uint64_t target = sim_after(scale, s->moments, s->nmoments, s->anchor_sim, dw);
    uint64_t next = sim_next_time(s);
    if (atomic_load(&s->ctl_skip) && s->live == 0 && next != UINT64_MAX && next > target) {
        /* Nothing on a wire or in a queue: jump to the next event (a timer). */
        s->anchor_sim = next;
        s->anchor_wall = wall_ns;
        target = next;
    }
    uint64_t n = run_events(s, sim_ev_key_upto(target), max_events);
    if (n < max_events && s->now < target && !over(s))
        s->now = target;
    return n;
}

/* ---- the timeline in the results ---- */

void sim_sample(struct sim *s)
{
    if (s->ntl >= SIM_TL_MAX)
        return;
    double per = (double)s->p.sample_period;
    for (uint32_t i = 0; i < s->napps; i++) {
        struct sim_app_stats st;
        sim_app_stats(s, (int)i, &st);
        uint64_t b = st.tx_acked + st.rx_bytes;
        s->apps[i].tl[s->ntl] = (float)((double)(b - s->apps[i].tl_bytes) * 8 / per * 1e3);
        s->apps[i].tl_bytes = b;
    }
    uint64_t q = 0;
    unsigned held = 0;
    for (uint32_t i = 0; i < s->nports; i++) {
        const struct sim_port *p = &s->ports[i];
        if (!p->host && p->q[1].bytes > q)
            q = p->q[1].bytes;
        held += s->p.fabric == SIM_FABRIC_IB ? p->blocked : p->paused;
    }
    s->tl_queue[s->ntl] = (float)q;
    s->tl_paused[s->ntl] = (uint16_t)(held > 65535 ? 65535 : held);
    s->ntl++;
    sim_ev_push(s, s->now + s->p.sample_period, EV_SAMPLE, 0);
}

/* ---- views ---- */

int sim_nports(const struct sim *s)
{
    return (int)s->nports;
}

void sim_port_snapshot(const struct sim *s, struct sim_port_snap *out, int max)
{
    for (uint32_t i = 0; i < s->nports && (int)i < max; i++) {
        const struct sim_port *p = &s->ports[i];
        const struct sim_port *q = &s->ports[p->peer];
        struct sim_port_snap *o = &out[i];
        memset(o, 0, sizeof(*o));
        o->node = (int)p->node;
        o->port = p->local;
        o->peer_node = (int)q->node;
        o->peer_port = q->local;
        o->host = p->host;
        o->up = p->up;
        o->queue_bytes = p->q[1].bytes;
        o->ctrl_bytes = p->q[0].bytes;
        o->watermark_bytes = p->watermark;
        o->ingress_bytes = p->in_bytes;
        o->paused = s->p.fabric == SIM_FABRIC_IB ? p->blocked : p->paused;
        o->pausing = p->xoff;
        o->mark_prob = s->p.ecn ? sim_red_prob(p->q[1].bytes, s->p.kmin, s->p.kmax, s->p.pmax) : 0;
        o->ecn_marked = p->c.ecn_marked;
        o->xmit_bytes = p->c.xmit_bytes;
        o->gbps = p->gbps;
    }
}

/* ---- counters ---- */

struct cdef {
    const char *name;
    enum counters_source src;
    enum counters_group group;
    enum counters_kind kind;
    const char *unit;
    bool error_like;
};

static void port_name(const struct sim *s, uint32_t pi, char *buf, size_t len)
{
    const struct sim_port *p = &s->ports[pi];
    if (p->host)
        snprintf(buf, len, "%s", s->nodes[p->node].name);
    else
        snprintf(buf, len, "%s/%u", s->nodes[p->node].name, p->local);
}

/* Every counter of one port (NIC counters too for a host port), raw hardware values. */
static int port_counters(const struct sim *s, uint32_t pi, struct cdef *d, double *v)
{
    const struct sim_port *p = &s->ports[pi];
    const struct sim_port_ctr *c = &p->c;
    bool roce = s->p.fabric == SIM_FABRIC_ROCE;
    int n = 0;
#define ADD(nm, sr, gr, kd, un, el, val)                                                           \
    do {                                                                                           \
        d[n] = (struct cdef){nm, sr, gr, kd, un, el};                                              \
        v[n++] = (double)(val);                                                                    \
    } while (0)
    uint64_t now = s->now;
    uint64_t wait = c->xmit_wait_ps + (p->blocked ? now - p->blocked_since : 0);
    ADD("port_xmit_data", COUNTERS_SRC_IB, COUNTERS_TRAFFIC, COUNTERS_COUNTER, "4-byte words",
        false, c->xmit_bytes / 4);
    ADD("port_rcv_data", COUNTERS_SRC_IB, COUNTERS_TRAFFIC, COUNTERS_COUNTER, "4-byte words", false,
        c->rcv_bytes / 4);
    ADD("port_xmit_packets", COUNTERS_SRC_IB, COUNTERS_TRAFFIC, COUNTERS_COUNTER, "packets", false,
        c->xmit_pkts);
    ADD("port_rcv_packets", COUNTERS_SRC_IB, COUNTERS_TRAFFIC, COUNTERS_COUNTER, "packets", false,
        c->rcv_pkts);
    ADD("port_xmit_wait", COUNTERS_SRC_IB, COUNTERS_CONGESTION, COUNTERS_COUNTER, "ticks", false,
        wait / 1000);
    ADD("port_xmit_discards", COUNTERS_SRC_IB, COUNTERS_LOSS, COUNTERS_COUNTER, "packets", true,
        c->xmit_discards);
    ADD("link_downed", COUNTERS_SRC_IB, COUNTERS_ERRORS, COUNTERS_COUNTER, "events", true,
        c->link_downed);
    if (!p->host)
        ADD("port_rcv_switch_relay_errors", COUNTERS_SRC_IB, COUNTERS_LOSS, COUNTERS_COUNTER,
            "packets", true, c->relay_errors);
    if (roce) {
        uint64_t held = c->rx_pause_ps + (p->paused ? now - p->pause_start : 0);
        uint64_t asked = c->tx_pause_ps + (p->xoff ? now - p->xoff_since : 0);
        /* Names with the data priority: rx_prio3_pause ... (mlx5 ethtool, counters.md §4). */
        ADD("rx_prio%d_pause", COUNTERS_SRC_ETHTOOL, COUNTERS_CONGESTION, COUNTERS_COUNTER,
            "frames", false, c->rx_pause);
        ADD("rx_prio%d_pause_duration", COUNTERS_SRC_ETHTOOL, COUNTERS_CONGESTION, COUNTERS_COUNTER,
            "us", false, held / 1000000);
        ADD("rx_prio%d_pause_transition", COUNTERS_SRC_ETHTOOL, COUNTERS_CONGESTION,
            COUNTERS_COUNTER, "events", false, c->rx_trans);
        if (!p->host) {
            ADD("tx_prio%d_pause", COUNTERS_SRC_ETHTOOL, COUNTERS_CONGESTION, COUNTERS_COUNTER,
                "frames", false, c->tx_pause);
            ADD("tx_prio%d_pause_duration", COUNTERS_SRC_ETHTOOL, COUNTERS_CONGESTION,
                COUNTERS_COUNTER, "us", false, asked / 1000000);
            ADD("rx_prio%d_discards", COUNTERS_SRC_ETHTOOL, COUNTERS_LOSS, COUNTERS_COUNTER,
                "packets", true, c->rx_discards);
        }
    }
    if (!p->host) {
        ADD(roce ? "ecn_marked" : "fecn_marked", COUNTERS_SRC_ETHTOOL, COUNTERS_CONGESTION,
            COUNTERS_COUNTER, "packets", false, c->ecn_marked);
        ADD("queue_depth", COUNTERS_SRC_QDISC, COUNTERS_CONGESTION, COUNTERS_GAUGE, "bytes", false,
            p->q[1].bytes);
        ADD("queue_watermark", COUNTERS_SRC_QDISC, COUNTERS_CONGESTION, COUNTERS_GAUGE, "bytes",
            false, p->watermark);
    } else {
        const struct sim_nic_ctr *k = &s->nodes[p->node].c;
        if (roce) {
            ADD("np_cnp_sent", COUNTERS_SRC_HW, COUNTERS_CONGESTION, COUNTERS_COUNTER, "packets",
                false, k->np_cnp_sent);
            ADD("np_ecn_marked_roce_packets", COUNTERS_SRC_HW, COUNTERS_CONGESTION,
                COUNTERS_COUNTER, "packets", false, k->np_ecn_marked);
            ADD("rp_cnp_handled", COUNTERS_SRC_HW, COUNTERS_CONGESTION, COUNTERS_COUNTER, "packets",
                false, k->rp_cnp_handled);
        } else {
            ADD("sim_fecn_received", COUNTERS_SRC_HW, COUNTERS_CONGESTION, COUNTERS_COUNTER,
                "packets", false, k->rcv_fecn);
            ADD("sim_becn_received", COUNTERS_SRC_HW, COUNTERS_CONGESTION, COUNTERS_COUNTER,
                "packets", false, k->rcv_becn);
        }
        ADD("out_of_sequence", COUNTERS_SRC_HW, COUNTERS_LOSS, COUNTERS_COUNTER, "packets", true,
            k->out_of_sequence);
        ADD("packet_seq_err", COUNTERS_SRC_HW, COUNTERS_LOSS, COUNTERS_COUNTER, "packets", true,
            k->packet_seq_err);
        ADD("local_ack_timeout_err", COUNTERS_SRC_HW, COUNTERS_ERRORS, COUNTERS_COUNTER, "events",
            true, k->local_ack_timeout_err);
        ADD("duplicate_request", COUNTERS_SRC_HW, COUNTERS_LOSS, COUNTERS_COUNTER, "packets", true,
            k->duplicate_request);
        ADD("req_transport_retries_exceeded", COUNTERS_SRC_HW, COUNTERS_ERRORS, COUNTERS_COUNTER,
            "events", true, k->retries_exceeded);
    }
#undef ADD
    return n;
}

#define MAX_PER_PORT 32

/* The real name: priority counters carry the data priority number. */
static void real_name(const struct sim *s, const char *pattern, char *buf, size_t len)
{
    if (strstr(pattern, "%d"))
        snprintf(buf, len, pattern, s->p.data_prio);
    else
        snprintf(buf, len, "%s", pattern);
}

int sim_counters(const struct sim *s, struct counters_value *out, int max)
{
    int total = 0;
    struct cdef d[MAX_PER_PORT];
    double v[MAX_PER_PORT];
    for (uint32_t pi = 0; pi < s->nports; pi++) {
        int n = port_counters(s, pi, d, v);
        for (int i = 0; i < n; i++, total++) {
            if (!out || total >= max)
                continue;
            struct counters_value *c = &out[total];
            memset(c, 0, sizeof(*c));
            c->source = d[i].src;
            port_name(s, pi, c->object, sizeof(c->object));
            real_name(s, d[i].name, c->name, sizeof(c->name));
            c->group = d[i].group;
            c->kind = d[i].kind;
            /* engine/counters/counters.h: 4-byte words are shown as bytes. */
            bool words = !strcmp(d[i].unit, "4-byte words");
            c->unit = words ? "bytes" : d[i].unit;
            c->value = words ? v[i] * 4 : v[i];
            c->delta = c->value; /* every counter starts at 0 with the simulation */
            c->valid = COUNTERS_V_VALUE | COUNTERS_V_DELTA;
            c->error_like = d[i].error_like;
            c->simulated = true;
            /* A rate per wall-clock second would say how fast the playback runs, not the
             * fabric: the average per simulated second since the start instead. */
            if (s->now > 0 && c->kind == COUNTERS_COUNTER) {
                c->rate = c->value / ((double)s->now / 1e12);
                c->valid |= COUNTERS_V_RATE;
            }
        }
    }
    return out ? (total < max ? total : max) : total;
}

int sim_counter(const struct sim *s, const char *object, const char *name, uint64_t *out)
{
    struct cdef d[MAX_PER_PORT];
    double v[MAX_PER_PORT];
    char buf[64];
    for (uint32_t pi = 0; pi < s->nports; pi++) {
        port_name(s, pi, buf, sizeof(buf));
        if (strcmp(buf, object))
            continue;
        int n = port_counters(s, pi, d, v);
        for (int i = 0; i < n; i++) {
            real_name(s, d[i].name, buf, sizeof(buf));
            if (!strcmp(buf, name)) {
                *out = (uint64_t)v[i];
                return 0;
            }
        }
        return -ENOENT;
    }
    return -ENOENT;
}

static const char *op_name(enum sim_op op)
{
    return op == SIM_OP_PINGPONG ? "pingpong" : op == SIM_OP_RR ? "rr" : "stream";
}

static cJSON *app_json(const struct sim *s, int app)
{
    const struct sim_appx *ax = &s->apps[app];
    struct sim_app_stats st;
    sim_app_stats(s, app, &st);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "src", s->nodes[s->host_node[ax->a.src]].name);
    cJSON_AddStringToObject(o, "dst", s->nodes[s->host_node[ax->a.dst]].name);
    cJSON_AddStringToObject(o, "op", op_name(ax->a.op));
    cJSON_AddNumberToObject(o, "qps", ax->a.nqps);
    cJSON_AddNumberToObject(o, "start_us", (double)ax->a.start / 1e6);
    cJSON_AddNumberToObject(o, "ops", (double)st.ops);
    cJSON_AddNumberToObject(o, "tx_acked_bytes", (double)st.tx_acked);
    cJSON_AddNumberToObject(o, "rx_bytes", (double)st.rx_bytes);
    cJSON_AddNumberToObject(o, "peer_rx_bytes", (double)st.peer_rx_bytes);
    if (st.ops) {
        /* Completion time of the last operation since the app started (for one message: its
         * flow completion time), and payload per simulated second over that span. */
        double span = (double)(st.last_done - ax->a.start);
        uint64_t payload = st.tx_acked + st.rx_bytes;
        cJSON_AddNumberToObject(o, "completion_us", span / 1e6);
        cJSON_AddNumberToObject(o, "goodput_gbps", span > 0 ? (double)payload * 8 / span * 1e3 : 0);
        cJSON_AddNumberToObject(o, "latency_min_us", (double)st.lat_min / 1e6);
        cJSON_AddNumberToObject(o, "latency_mean_us", (double)st.lat_sum / (double)st.ops / 1e6);
        cJSON_AddNumberToObject(o, "latency_max_us", (double)st.lat_max / 1e6);
    } else {
        cJSON_AddNullToObject(o, "completion_us");
        cJSON_AddNullToObject(o, "goodput_gbps");
    }
    if (ax->tl) {
        cJSON *t = cJSON_AddArrayToObject(o, "timeline_gbps");
        for (uint32_t i = 0; i < s->ntl; i++)
            cJSON_AddItemToArray(t, cJSON_CreateNumber(ax->tl[i]));
    }
    cJSON_AddBoolToObject(o, "done", st.done);
    if (st.failed)
        cJSON_AddStringToObject(o, "error", st.error);
    else
        cJSON_AddNullToObject(o, "error");
    return o;
}

cJSON *sim_results_json(const struct sim *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "topology", s->name);
    cJSON_AddNumberToObject(o, "hosts", s->nhosts);
    cJSON_AddNumberToObject(o, "sim_time_us", (double)s->now / 1e6);
    cJSON_AddNumberToObject(o, "events", (double)s->events);
    cJSON_AddNumberToObject(o, "pfc_pause_frames", (double)s->pfc_pause_frames);
    cJSON_AddItemToObject(o, "settings", sim_params_to_json(&s->p));
    if (s->ntl) {
        /* Sampled in simulated time: each app's goodput (in its entry), the deepest switch
         * egress queue and how many ports were held (paused or out of credits). */
        cJSON *t = cJSON_AddObjectToObject(o, "timeline");
        cJSON_AddNumberToObject(t, "period_us", (double)s->p.sample_period / SIM_PS_PER_US);
        cJSON *q = cJSON_AddArrayToObject(t, "max_queue_bytes");
        cJSON *h = cJSON_AddArrayToObject(t, "ports_held");
        for (uint32_t i = 0; i < s->ntl; i++) {
            cJSON_AddItemToArray(q, cJSON_CreateNumber(s->tl_queue[i]));
            cJSON_AddItemToArray(h, cJSON_CreateNumber(s->tl_paused[i]));
        }
    }
    cJSON *apps = cJSON_AddArrayToObject(o, "apps");
    for (uint32_t i = 0; i < s->napps; i++)
        cJSON_AddItemToArray(apps, app_json(s, (int)i));
    /* Counters that moved, per NIC and switch port, as the hardware shows them. */
    cJSON *ctr = cJSON_AddObjectToObject(o, "counters");
    struct cdef d[MAX_PER_PORT];
    double v[MAX_PER_PORT];
    char name[64], obj[48];
    for (uint32_t pi = 0; pi < s->nports; pi++) {
        int n = port_counters(s, pi, d, v);
        cJSON *po = NULL;
        for (int i = 0; i < n; i++) {
            if (!v[i])
                continue;
            if (!po) {
                port_name(s, pi, obj, sizeof(obj));
                po = cJSON_AddObjectToObject(ctr, obj);
            }
            real_name(s, d[i].name, name, sizeof(name));
            cJSON_AddNumberToObject(po, name, v[i]);
        }
        const struct sim_port *p = &s->ports[pi];
        if (po && !p->host && p->in_max)
            cJSON_AddNumberToObject(po, "ingress_max_bytes", (double)p->in_max);
    }
    return o;
}
