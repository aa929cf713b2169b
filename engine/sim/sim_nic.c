/* sim_nic: the hosts' adapters. RC queue pairs carry messages as PSN-numbered packets; the
 * responder ACKs (coalesced), NAKs a PSN gap once and the requester goes back N; a local ACK
 * timer of 4.096 us x 2^timeout retries up to retry_cnt times (§14). DCQCN (SIGCOMM 2015, §11):
 * CNPs paced at the notification point, rate cuts and increases at the reaction point. IB CC
 * (Annex A10, §13): FECN -> BECN -> CCTI -> inter-packet delay. PFC pauses and IB credits
 * hold the data class at the port. Applications post messages and report completions. */
#include "engine/sim/sim_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static inline struct sim_node *host_node(struct sim *s, uint32_t host)
{
    return &s->nodes[s->host_node[host]];
}

static inline uint32_t host_port(struct sim *s, uint32_t host)
{
    return host_node(s, host)->port0;
}

/* ---- control packets (ACK, NAK, CNP, BECN) ---- */

/* A control frame waits in the port's class-0 queue; nic_send sends those first. */
static void ctrl_enqueue(struct sim *s, uint32_t pi, uint32_t pkt)
{
    struct sim_port *p = &s->ports[pi];
    sim_q_push(s, &p->q[0], pkt, sim_frame_bytes(s, &s->pkts[pkt]));
    if (p->tx_until <= s->now)
        sim_nic_kick(s, pi);
    else
        sim_port_txdone_later(s, pi);
}

static void send_ctrl(struct sim *s, uint32_t qd, enum sim_pkt_type type, uint32_t psn)
{
    struct sim_qd *q = &s->qds[qd];
    uint32_t c = sim_pkt_alloc(s);
    struct sim_pkt *k = &s->pkts[c];
    k->type = (uint8_t)type;
    k->qd = qd;
    k->psn = psn;
    k->dst = q->src; /* back to the data's sender */
    bool ib = s->p.fabric == SIM_FABRIC_IB;
    if (type == PK_CNP)
        k->wire = SIM_CNP_BYTES + SIM_ETH_GAP;
    else
        k->wire = ib ? SIM_IB_HDR + SIM_AETH : SIM_ROCE_HDR + SIM_AETH + SIM_ETH_GAP;
    k->flags = s->p.control_class ? PF_CTRL : 0;
    ctrl_enqueue(s, host_port(s, q->dst), c);
}

/* ---- messages ---- */

static uint64_t draw_size(struct sim_appx *ax)
{
    if (ax->a.nsizes <= 0)
        return ax->a.size;
    double total = 0;
    for (int i = 0; i < ax->a.nsizes; i++)
        total += ax->weights_copy[i];
    uint64_t z = (ax->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    double x = (double)(z >> 11) / 9007199254740992.0 * total;
    for (int i = 0; i < ax->a.nsizes; i++) {
        if (x < ax->weights_copy[i])
            return ax->sizes_copy[i];
        x -= ax->weights_copy[i];
    }
    return ax->sizes_copy[ax->a.nsizes - 1];
}

static void post_msg(struct sim *s, struct sim_qd *q, uint64_t size)
{
    uint32_t slot = (q->mhead + q->mn) % SIM_MAXDEPTH;
    uint32_t mtu = s->p.mtu;
    struct sim_msg *m = &q->m[slot];
    m->psn0 = q->snd_end;
    m->npkts = size ? (uint32_t)((size + mtu - 1) / mtu) : 1;
    m->size = size;
    m->post = s->now;
    q->mn++;
    q->snd_end += m->npkts;
    if (!q->err)
        sim_nic_kick(s, host_port(s, q->src));
}

/* Post the next stream message on q if the app has one left and q has room. */
static bool stream_post(struct sim *s, struct sim_appx *ax, struct sim_qd *q)
{
    if (!ax->remaining || q->mn >= s->p.depth || q->err)
        return false;
    if (ax->remaining != UINT64_MAX)
        ax->remaining--;
    ax->inflight++;
    if (!ax->st.first_post)
        ax->st.first_post = s->now;
    post_msg(s, q, draw_size(ax));
    return true;
}

static void app_check_done(struct sim *s, struct sim_appx *ax)
{
    if (ax->st.done || ax->remaining || ax->inflight)
        return;
    ax->st.done = true;
    if (!ax->a.background && s->fg_left)
        s->fg_left--;
}

static void op_done(struct sim *s, struct sim_appx *ax, int worker, uint64_t lat)
{
    struct sim_app_stats *st = &ax->st;
    st->ops++;
    st->last_done = s->now;
    st->lat_sum += lat;
    if (!st->lat_min || lat < st->lat_min)
        st->lat_min = lat;
    if (lat > st->lat_max)
        st->lat_max = lat;
    ax->inflight--;
    if (ax->a.cb)
        ax->a.cb(ax->a.user, (int)(ax - s->apps), worker, lat);
}

/* Ping-pong and request/response: a request from src on direction 0. */
static void rr_post(struct sim *s, struct sim_appx *ax, uint32_t qp)
{
    if (!ax->remaining)
        return;
    if (ax->remaining != UINT64_MAX)
        ax->remaining--;
    ax->inflight++;
    if (!ax->st.first_post)
        ax->st.first_post = s->now;
    ax->pp_post[qp] = s->now;
    post_msg(s, &s->qds[ax->qd0 + 2 * qp], draw_size(ax));
}

/* A whole message arrived in order at q's receiver. */
static void msg_received(struct sim *s, struct sim_qd *q, uint64_t size)
{
    struct sim_appx *ax = &s->apps[q->app];
    if (ax->a.op == SIM_OP_STREAM)
        return; /* streams complete at the sender, on the ACK */
    if (q->dir == 0) {
        /* The responder answers on the other direction of the same QP pair. */
        uint64_t resp = ax->a.op == SIM_OP_RR && ax->a.resp_size ? ax->a.resp_size : size;
        post_msg(s, &s->qds[q->qp * 2 + ax->qd0 + 1], resp);
        return;
    }
    uint64_t rtt = s->now - ax->pp_post[q->qp];
    op_done(s, ax, (int)q->qp, ax->a.op == SIM_OP_PINGPONG ? rtt / 2 : rtt);
    rr_post(s, ax, q->qp);
    app_check_done(s, ax);
}

static uint64_t timeout_ps(const struct sim *s)
{
    return sim_rc_timeout_ps(s->p.timeout);
}

static void rto_arm(struct sim *s, struct sim_qd *q)
{
    q->rto_due = s->now + timeout_ps(s);
    if (!q->rto_ev) {
        q->rto_ev = true;
        sim_ev_push(s, q->rto_due, EV_RTO, (uint32_t)(q - s->qds));
    }
}

/* Point snd_nxt at psn (go back N) and find the message that holds it. */
static void set_snd_nxt(struct sim_qd *q, uint32_t psn)
{
    q->snd_nxt = psn;
    uint32_t i = 0;
    for (; i < q->mn; i++) {
        const struct sim_msg *m = &q->m[(q->mhead + i) % SIM_MAXDEPTH];
        if (psn < m->psn0 + m->npkts)
            break;
    }
    q->mcur = (q->mhead + i) % SIM_MAXDEPTH;
}

/* Everything before una is acknowledged. */
static void advance(struct sim *s, struct sim_qd *q, uint32_t una)
{
    if (una <= q->snd_una)
        return;
    struct sim_appx *ax = &s->apps[q->app];
    q->snd_una = una;
    q->retry = 0;
    if (q->snd_nxt < una)
        set_snd_nxt(q, una);
    while (q->mn) {
        struct sim_msg *m = &q->m[q->mhead];
        if (m->psn0 + m->npkts > una)
            break;
        q->acked_bytes += m->size;
        uint64_t post = m->post;
        q->mhead = (q->mhead + 1) % SIM_MAXDEPTH;
        q->mn--;
        if (ax->a.op == SIM_OP_STREAM) {
            op_done(s, ax, q->worker, s->now - post);
            stream_post(s, ax, q);
        }
    }
    if (q->snd_una < q->snd_nxt)
        q->rto_due = s->now + timeout_ps(s);
    else
        q->rto_due = 0;
    app_check_done(s, ax);
}

void sim_qd_fail(struct sim *s, struct sim_qd *q, const char *why)
{
    if (q->err)
        return;
    q->err = true;
    struct sim_appx *ax = &s->apps[q->app];
    if (!ax->st.failed) {
        ax->st.failed = true;
        snprintf(ax->st.error, sizeof(ax->st.error), "QP %s->%s #%u: %s",
                 s->nodes[s->host_node[q->src]].name, s->nodes[s->host_node[q->dst]].name, q->qp,
                 why);
        if (!ax->st.done) {
            ax->st.done = true;
            if (!ax->a.background && s->fg_left)
                s->fg_left--;
        }
        if (ax->a.fail)
            ax->a.fail(ax->a.user, (int)q->app, ax->st.error);
    }
}

void sim_rto(struct sim *s, uint32_t qi)
{
    struct sim_qd *q = &s->qds[qi];
    q->rto_ev = false;
    if (q->err || !q->rto_due)
        return;
    if (s->now < q->rto_due) {
        q->rto_ev = true;
        sim_ev_push(s, q->rto_due, EV_RTO, qi);
        return;
    }
    /* §14: the local ACK timer expired: retry from the oldest unacknowledged PSN; after
     * retry_cnt retries without progress the QP goes to the error state. */
    struct sim_node *n = host_node(s, q->src);
    n->c.local_ack_timeout_err++;
    if (++q->retry > s->p.retry_cnt) {
        n->c.retries_exceeded++;
        char why[96];
        snprintf(why, sizeof(why),
                 "transport retry counter exceeded (%d local ACK timeouts of %.3f ms)", q->retry,
                 (double)timeout_ps(s) / 1e9);
        sim_qd_fail(s, q, why);
        return;
    }
    set_snd_nxt(q, q->snd_una);
    rto_arm(s, q);
    sim_nic_kick(s, host_port(s, q->src));
}

/* ---- DCQCN reaction point ---- */

static void rate_timer_arm(struct sim *s, struct sim_qd *q)
{
    q->rate_due = s->now + s->p.dcqcn.rate_period;
    if (!q->rate_ev) {
        q->rate_ev = true;
        sim_ev_push(s, q->rate_due, EV_RATE, (uint32_t)(q - s->qds));
    }
}

/* Alpha decays once per alpha period without a CNP (§11); applied lazily. */
static void alpha_catch_up(struct sim *s, struct sim_qd *q)
{
    uint64_t per = s->p.dcqcn.alpha_period;
    uint64_t n = (s->now - q->alpha_anchor) / per;
    if (n) {
        q->rp.alpha *= pow(1 - s->p.dcqcn.g, (double)n);
        q->alpha_anchor += n * per;
    }
}

static void rx_cnp(struct sim *s, struct sim_qd *q)
{
    struct sim_node *n = host_node(s, q->src);
    n->c.rp_cnp_handled++;
    const struct sim_dcqcn *d = &s->p.dcqcn;
    alpha_catch_up(s, q); /* the alpha timer runs whether or not the rate is cut */
    if (q->cc_active && d->reduce_period && s->now - q->last_cut < d->reduce_period)
        return;
    sim_dcqcn_on_cnp(d, &q->rp);
    q->cc_active = true;
    q->last_cut = s->now;
    q->alpha_anchor = s->now;
    q->bytes_since = 0;
    rate_timer_arm(s, q);
}

void sim_rate_timer(struct sim *s, uint32_t qi)
{
    struct sim_qd *q = &s->qds[qi];
    q->rate_ev = false;
    if (!q->cc_active || q->err)
        return;
    if (s->now < q->rate_due) {
        q->rate_ev = true;
        sim_ev_push(s, q->rate_due, EV_RATE, qi);
        return;
    }
    sim_dcqcn_increase(&s->p.dcqcn, &q->rp, true);
    if (q->rp.rc >= q->rp.line) {
        alpha_catch_up(s, q);
        q->cc_active = false; /* back at line rate: the timers stop until the next CNP */
        return;
    }
    rate_timer_arm(s, q);
}

/* ---- IB congestion control at the channel adapter ---- */

static uint64_t ccti_period(const struct sim *s)
{
    return (uint64_t)s->p.ibcc.ccti_timer * 1024 * SIM_PS_PER_NS; /* units of 1.024 us */
}

static void rx_becn(struct sim *s, struct sim_qd *q)
{
    const struct sim_ibcc *c = &s->p.ibcc;
    host_node(s, q->src)->c.rcv_becn++;
    q->ccti += c->ccti_increase;
    if (q->ccti > c->ccti_limit)
        q->ccti = c->ccti_limit;
    if (!q->ccti_ev && q->ccti > c->ccti_min) {
        q->ccti_ev = true;
        sim_ev_push(s, s->now + ccti_period(s), EV_CCTI, (uint32_t)(q - s->qds));
    }
}

void sim_ccti_timer(struct sim *s, uint32_t qi)
{
    struct sim_qd *q = &s->qds[qi];
    q->ccti_ev = false;
    if (q->ccti > s->p.ibcc.ccti_min)
        q->ccti--;
    if (q->ccti > s->p.ibcc.ccti_min) {
        q->ccti_ev = true;
        sim_ev_push(s, s->now + ccti_period(s), EV_CCTI, qi);
    }
}

/* ---- the adapter's transmit side ---- */

static inline bool qd_ready(const struct sim_qd *q)
{
    return !q->err && q->snd_nxt < q->snd_end;
}

static bool nic_has_more(const struct sim *s, uint32_t node)
{
    const struct sim_node *n = &s->nodes[node];
    const struct sim_port *p = &s->ports[n->port0];
    if (p->q[0].n)
        return true;
    if (p->paused)
        return false;
    for (uint32_t i = 0; i < n->nsenders; i++)
        if (qd_ready(&s->qds[n->senders[i]]))
            return true;
    return false;
}

static void send_data(struct sim *s, struct sim_qd *q, uint32_t pi)
{
    struct sim_port *p = &s->ports[pi];
    const struct sim_msg *m = &q->m[q->mcur];
    uint32_t mtu = s->p.mtu;
    uint32_t off = q->snd_nxt - m->psn0;
    bool first = off == 0, last = off + 1 == m->npkts;
    uint32_t payload = last ? (uint32_t)(m->size - (uint64_t)off * mtu) : mtu;
    uint32_t c = sim_pkt_alloc(s);
    struct sim_pkt *k = &s->pkts[c];
    k->type = PK_DATA;
    k->qd = (uint32_t)(q - s->qds);
    k->psn = q->snd_nxt;
    k->payload = payload;
    k->wire = sim_wire_bytes(s->p.fabric, payload, first);
    k->dst = q->dst;
    k->flags = (first ? PF_FIRST : 0) | (last ? PF_LAST : 0);
    q->snd_nxt++;
    if (last)
        q->mcur = (q->mcur + 1) % SIM_MAXDEPTH;
    /* Pacing: the QP's rate (DCQCN R_C, else line rate) over wire bytes, the app's limit over
     * payload, plus IB CC's inter-packet delay CCT[CCTI]. */
    uint64_t gap =
        q->cc_active ? (uint64_t)((double)k->wire * 8000.0 / q->rp.rc) : sim_port_ser(p, k->wire);
    if (q->rate_cap > 0) {
        uint64_t g2 = (uint64_t)((double)payload * 8000.0 / q->rate_cap);
        if (g2 > gap)
            gap = g2;
    }
    if (q->ccti)
        gap += (uint64_t)s->p.ibcc.cct[q->ccti] * SIM_PS_PER_NS;
    q->next_send = s->now + gap;
    if (q->cc_active) {
        q->bytes_since += k->wire;
        if (q->bytes_since >= s->p.dcqcn.byte_counter) {
            q->bytes_since -= s->p.dcqcn.byte_counter;
            sim_dcqcn_increase(&s->p.dcqcn, &q->rp, false);
            if (q->rp.rc >= q->rp.line) {
                alpha_catch_up(s, q);
                q->cc_active = false;
            }
        }
    }
    if (!q->rto_due)
        rto_arm(s, q);
    if (s->p.fabric == SIM_FABRIC_IB)
        p->credits -= ib_blocks(k->wire);
    sim_port_send(s, pi, c);
}

/* Send the adapter's next frame on its idle port if one may go; true when it sent one and has
 * more waiting (the port's next transmit-done event is due). */
static bool nic_send(struct sim *s, uint32_t node, uint32_t pi)
{
    struct sim_node *n = &s->nodes[node];
    struct sim_port *p = &s->ports[pi];
    if (p->q[0].n) {
        struct sim_pkt *h = &s->pkts[p->q[0].head];
        if ((h->flags & PF_CTRL) || !p->paused) {
            uint32_t c = p->q[0].head;
            p->q[0].head = h->next;
            p->q[0].n--;
            p->q[0].bytes -= sim_frame_bytes(s, h);
            sim_port_send(s, pi, c);
            return nic_has_more(s, node);
        }
    }
    uint64_t earliest = UINT64_MAX;
    bool want = false;
    if (!p->paused) {
        bool ib = s->p.fabric == SIM_FABRIC_IB;
        for (uint32_t i = 0; i < n->nsenders; i++) {
            uint32_t idx = n->rr + i;
            if (idx >= n->nsenders)
                idx -= n->nsenders;
            struct sim_qd *q = &s->qds[n->senders[idx]];
            if (!qd_ready(q))
                continue;
            if (q->next_send > s->now) {
                if (q->next_send < earliest)
                    earliest = q->next_send;
                continue;
            }
            if (ib) {
                const struct sim_msg *m = &q->m[q->mcur];
                uint32_t off = q->snd_nxt - m->psn0;
                uint32_t pl =
                    off + 1 == m->npkts ? (uint32_t)(m->size - (uint64_t)off * s->p.mtu) : s->p.mtu;
                if (p->credits < (int64_t)ib_blocks(sim_wire_bytes(s->p.fabric, pl, off == 0))) {
                    want = true;
                    continue;
                }
            }
            n->rr = idx + 1 < n->nsenders ? idx + 1 : 0;
            sim_port_block(s, p, false);
            send_data(s, q, pi);
            return nic_has_more(s, node);
        }
    } else {
        for (uint32_t i = 0; i < n->nsenders && !want; i++)
            want = qd_ready(&s->qds[n->senders[i]]);
    }
    sim_port_block(s, p, want);
    if (earliest != UINT64_MAX && (!n->wake_at || earliest < n->wake_at)) {
        n->wake_at = earliest;
        sim_ev_push(s, earliest, EV_NIC_WAKE, node);
    }
    return false;
}

void sim_nic_kick(struct sim *s, uint32_t pi)
{
    struct sim_port *p = &s->ports[pi];
    if (p->tx_until > s->now) {
        if (nic_has_more(s, p->node))
            sim_port_txdone_later(s, pi);
        return;
    }
    if (!p->up)
        return;
    if (nic_send(s, p->node, pi))
        sim_port_txdone_later(s, pi);
}

void sim_nic_wake(struct sim *s, uint32_t node)
{
    struct sim_node *n = &s->nodes[node];
    if (s->now >= n->wake_at)
        n->wake_at = 0;
    sim_nic_kick(s, n->port0);
}

/* ---- the adapter's receive side ---- */

static void rx_data(struct sim *s, struct sim_qd *q, const struct sim_pkt *k)
{
    struct sim_node *n = host_node(s, q->dst);
    uint32_t qi = (uint32_t)(q - s->qds);
    if (k->flags & PF_CE) {
        /* DCQCN notification point: at most one CNP per QP per interval (§11). */
        n->c.np_ecn_marked++;
        if (s->p.cc == SIM_CC_DCQCN &&
            (q->last_cnp == UINT64_MAX || s->now - q->last_cnp >= s->p.dcqcn.cnp_interval)) {
            q->last_cnp = s->now;
            n->c.np_cnp_sent++;
            send_ctrl(s, qi, PK_CNP, 0);
        }
    }
    if (k->flags & PF_FECN) {
        n->c.rcv_fecn++;
        if (s->p.cc == SIM_CC_IBCC)
            send_ctrl(s, qi, PK_BECN, 0);
    }
    if (q->err)
        return;
    if (k->psn == q->epsn) {
        q->epsn++;
        q->nak_sent = false;
        q->rx_bytes += k->payload;
        q->rx_msg_bytes += k->payload;
        bool last = k->flags & PF_LAST;
        if (++q->since_ack >= s->p.ack_every || last) {
            q->since_ack = 0;
            send_ctrl(s, qi, PK_ACK, k->psn);
        }
        if (last) {
            uint64_t size = q->rx_msg_bytes;
            q->rx_msg_bytes = 0;
            msg_received(s, q, size);
        }
    } else if (k->psn > q->epsn) {
        /* A gap: loss upstream. NAK once (sequence error) until the expected PSN arrives. */
        n->c.out_of_sequence++;
        if (!q->nak_sent) {
            q->nak_sent = true;
            send_ctrl(s, qi, PK_NAK, q->epsn);
        }
    } else {
        n->c.duplicate_request++;
        send_ctrl(s, qi, PK_ACK, q->epsn - 1);
    }
}

void sim_host_rx(struct sim *s, uint32_t node, uint32_t pkt)
{
    struct sim_pkt *k = &s->pkts[pkt];
    struct sim_qd *q = &s->qds[k->qd];
    (void)node;
    switch (k->type) {
    case PK_DATA:
        rx_data(s, q, k);
        break;
    case PK_ACK:
        if (!q->err && k->psn >= q->snd_una && k->psn < q->snd_end)
            advance(s, q, k->psn + 1);
        break;
    case PK_NAK:
        if (!q->err && k->psn >= q->snd_una && k->psn <= q->snd_nxt) {
            host_node(s, q->src)->c.packet_seq_err++;
            advance(s, q, k->psn);
            set_snd_nxt(q, k->psn);
            sim_nic_kick(s, host_port(s, q->src));
        }
        break;
    case PK_CNP:
        if (s->p.cc == SIM_CC_DCQCN && !q->err)
            rx_cnp(s, q);
        break;
    case PK_BECN:
        if (!q->err)
            rx_becn(s, q);
        break;
    default:
        break;
    }
    if (s->p.fabric == SIM_FABRIC_IB && !(k->flags & PF_CTRL)) {
        /* The adapter empties its VL buffer at once: credits go back to the switch. */
        sim_credit_send(s, k->port, ib_blocks(k->wire));
    }
    sim_pkt_free(s, pkt);
}

void sim_app_start(struct sim *s, uint32_t ai)
{
    struct sim_appx *ax = &s->apps[ai];
    for (int qp = 0; qp < ax->a.nqps; qp++) {
        if (ax->a.op != SIM_OP_STREAM) {
            rr_post(s, ax, (uint32_t)qp);
            continue;
        }
        for (int d = 0; d < 2; d++) {
            struct sim_qd *q = &s->qds[ax->qd0 + 2 * (uint32_t)qp + (uint32_t)d];
            if (q->worker < 0)
                continue;
            while (stream_post(s, ax, q))
                ;
        }
    }
    app_check_done(s, ax);
}
