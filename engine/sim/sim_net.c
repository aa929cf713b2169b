/* sim_net: links and switches. A port serialises one frame at a time (store and forward);
 * switches are output-queued over one shared buffer with a strict-priority control class, PFC
 * per (ingress port, priority) with static or dynamic Xoff/Xon and headroom (IEEE 802.1Qbb,
 * sim-reference §7-§9), RED/step ECN marking on the egress queue (§10), InfiniBand credits per
 * VL in 64-byte blocks (§12) and FECN marking (IBA Annex A10, §13); links go down and up. */
#include "engine/sim/sim_int.h"

#include <string.h>

/* Xoff for one ingress: static, or alpha x free shared buffer (§7). */
static inline uint64_t xoff_of(const struct sim *s, const struct sim_node *n)
{
    if (!s->p.pfc_dynamic)
        return s->p.pfc_xoff;
    uint64_t free_b = n->buf_used < s->p.buffer_bytes ? s->p.buffer_bytes - n->buf_used : 0;
    return (uint64_t)(s->p.pfc_alpha * (double)free_b);
}

static inline uint64_t xon_of(const struct sim *s, const struct sim_node *n)
{
    if (!s->p.pfc_dynamic)
        return s->p.pfc_xon;
    uint64_t x = xoff_of(s, n);
    return x > s->p.pfc_xon_delta ? x - s->p.pfc_xon_delta : 0;
}

/* A frame left the switch (or was discarded from its queue): give back the buffer, and to
 * its ingress the PFC accounting (XON below Xon) or the IB credits. */
static void sw_release(struct sim *s, uint32_t pkt)
{
    struct sim_pkt *k = &s->pkts[pkt];
    struct sim_port *in = &s->ports[k->port];
    struct sim_node *n = &s->nodes[in->node];
    uint32_t fb = sim_frame_bytes(s, k);
    n->buf_used -= fb;
    if (s->p.fabric == SIM_FABRIC_IB) {
        if (k->flags & PF_CTRL)
            return;
        in->in_bytes -= fb;
        sim_credit_send(s, k->port, ib_blocks(k->wire));
        return;
    }
    if (k->flags & PF_CTRL)
        return;
    in->in_bytes -= fb;
    if (in->xoff && in->in_bytes <= xon_of(s, n)) {
        in->xoff = false;
        in->c.tx_pause_ps += s->now - in->xoff_since;
        if (in->pfc_pending == 1) {
            in->pfc_pending = 0; /* the XOFF never left: nothing to undo */
        } else {
            in->pfc_pending = 2; /* XON: a pause of zero quanta (§9) */
            sim_port_kick(s, k->port);
        }
    }
}

static bool sw_has_work(const struct sim_port *p)
{
    return p->pfc_pending || p->q[0].n || (p->q[1].n && !p->blocked);
}

static uint32_t make_pfc(struct sim *s, struct sim_port *p)
{
    uint32_t c = sim_pkt_alloc(s);
    struct sim_pkt *k = &s->pkts[c];
    k->type = PK_PFC;
    k->wire = SIM_PFC_FRAME + SIM_ETH_GAP;
    k->payload = p->pfc_pending == 1 ? s->p.pause_quanta : 0;
    if (k->payload) {
        p->c.tx_pause++;
        s->pfc_pause_frames++;
        if (!p->refresh_pending) {
            /* Refresh before the peer's pause runs out while still above Xon. */
            p->refresh_pending = true;
            sim_ev_push(s, s->now + sim_pause_ps(k->payload, p->gbps) / 2, EV_PFC_REFRESH,
                        (uint32_t)(p - s->ports));
        }
    }
    p->pfc_pending = 0;
    return c;
}

void sim_port_kick(struct sim *s, uint32_t pi)
{
    struct sim_port *p = &s->ports[pi];
    if (p->host) {
        sim_nic_kick(s, pi);
        return;
    }
    if (p->tx_until > s->now) {
        if (sw_has_work(p))
            sim_port_txdone_later(s, pi);
        return;
    }
    if (!p->up)
        return;
    uint32_t pkt = SIM_NIL;
    if (p->pfc_pending) {
        pkt = make_pfc(s, p);
    } else if (p->q[0].n) {
        pkt = sim_q_pop(s, &p->q[0], sim_frame_bytes(s, &s->pkts[p->q[0].head]));
        sw_release(s, pkt);
    } else if (p->q[1].n) {
        struct sim_pkt *h = &s->pkts[p->q[1].head];
        bool held =
            s->p.fabric == SIM_FABRIC_IB ? p->credits < (int64_t)ib_blocks(h->wire) : p->paused;
        if (held) {
            sim_port_block(s, p, true);
            return;
        }
        sim_port_block(s, p, false);
        pkt = sim_q_pop(s, &p->q[1], sim_frame_bytes(s, h));
        if (s->p.fabric == SIM_FABRIC_IB)
            p->credits -= ib_blocks(h->wire);
        sw_release(s, pkt);
    }
    if (pkt == SIM_NIL)
        return;
    sim_port_send(s, pi, pkt);
    if (sw_has_work(p))
        sim_port_txdone_later(s, pi);
}

void sim_port_enqueue(struct sim *s, uint32_t pi, uint32_t pkt, int cls)
{
    struct sim_port *p = &s->ports[pi];
    sim_q_push(s, &p->q[cls], pkt, sim_frame_bytes(s, &s->pkts[pkt]));
    if (cls == 1 && p->q[1].bytes > p->watermark)
        p->watermark = p->q[1].bytes;
    if (p->tx_until <= s->now)
        sim_port_kick(s, pi);
    else
        sim_port_txdone_later(s, pi);
}

static void drop(struct sim *s, uint32_t pkt)
{
    sim_pkt_free(s, pkt);
}

/* A frame arrived at a switch through k->port: route, admit, mark, queue. */
static void sw_forward(struct sim *s, uint32_t node, uint32_t pkt)
{
    struct sim_pkt *k = &s->pkts[pkt];
    struct sim_node *n = &s->nodes[node];
    struct sim_port *in = &s->ports[k->port];
    uint32_t cnt = n->route_n[k->dst];
    if (!cnt) {
        in->c.relay_errors++; /* port_rcv_switch_relay_errors: no route */
        drop(s, pkt);
        return;
    }
    uint32_t pick;
    if (cnt == 1)
        pick = 0;
    else if (s->p.fabric == SIM_FABRIC_IB)
        pick = k->dst % cnt; /* fixed routes: one path per destination */
    else
        pick = (uint32_t)(sim_mix64(s->qds[k->qd].hash ^ n->salt ^ ((uint64_t)k->type << 40)) %
                          cnt); /* ECMP by flow hash (data and its ACKs hash apart) */
    uint32_t ei = s->routes[n->route_off[k->dst] + pick];
    struct sim_port *eg = &s->ports[ei];
    uint32_t fb = sim_frame_bytes(s, k);
    if (!eg->up) {
        eg->c.xmit_discards++; /* routed to a dead port until routes are updated */
        drop(s, pkt);
        return;
    }
    int cls = (k->flags & PF_CTRL) ? 0 : 1;
    if (s->p.fabric == SIM_FABRIC_ROCE) {
        if (n->buf_used + fb > s->p.buffer_bytes) {
            if (cls == 1 && s->p.pfc)
                in->c.rx_discards++;
            else
                eg->c.xmit_discards++;
            drop(s, pkt);
            return;
        }
        if (cls == 1 && s->p.pfc) {
            /* Once XOFF is asserted, what still arrives lands in the port's headroom, a
             * reserve beyond the occupancy at that moment (§7, §8); past it the lossless
             * class drops. */
            if (in->xoff && in->in_bytes + fb > in->xoff_level + in->headroom) {
                in->c.rx_discards++;
                drop(s, pkt);
                return;
            }
            in->in_bytes += fb;
            if (in->in_bytes > in->in_max)
                in->in_max = in->in_bytes;
            if (!in->xoff && in->in_bytes > xoff_of(s, n)) {
                in->xoff = true;
                in->xoff_level = in->in_bytes;
                in->xoff_since = s->now;
                in->pfc_pending = 1;
                sim_port_kick(s, k->port);
            }
        } else if (cls == 1) {
            in->in_bytes += fb;
            if (in->in_bytes > in->in_max)
                in->in_max = in->in_bytes;
        }
        if (s->p.ecn && cls == 1 && k->type == PK_DATA && eg->q[1].bytes >= s->p.kmin) {
            double pr = sim_red_prob(eg->q[1].bytes, s->p.kmin, s->p.kmax, s->p.pmax);
            if (pr >= 1 || sim_rand01(s) < pr) {
                k->flags |= PF_CE;
                eg->c.ecn_marked++;
            }
        }
    } else if (cls == 1) {
        in->in_bytes += fb;
        if (in->in_bytes > in->in_max)
            in->in_max = in->in_bytes;
        const struct sim_ibcc *cc = &s->p.ibcc;
        /* FECN (§13): above Threshold, at a root of congestion (the port has credits to
         * send: a blocked port is a victim) unless Victim_Mask says mark anyway; one mark per
         * Marking_Rate + 1 eligible packets. */
        if (s->p.cc == SIM_CC_IBCC && cc->threshold && k->type == PK_DATA &&
            eg->q[1].bytes > (uint64_t)(16 - cc->threshold) * 8192 &&
            (!eg->blocked || (eg->local < 32 && (cc->victim_mask >> eg->local) & 1))) {
            if (eg->mark_count++ >= (uint32_t)cc->marking_rate) {
                eg->mark_count = 0;
                k->flags |= PF_FECN;
                eg->c.ecn_marked++;
            }
        }
    }
    n->buf_used += fb;
    if (n->buf_used > n->buf_max)
        n->buf_max = n->buf_used;
    sim_port_enqueue(s, ei, pkt, cls);
}

static void unpause(struct sim *s, struct sim_port *p)
{
    p->paused = false;
    p->c.rx_pause_ps += s->now - p->pause_start;
    p->c.rx_trans++;
    sim_port_kick(s, (uint32_t)(p - s->ports));
}

void sim_pause_end(struct sim *s, uint32_t pi)
{
    struct sim_port *p = &s->ports[pi];
    p->pause_ev = false;
    if (!p->paused)
        return;
    if (s->now >= p->paused_until) {
        unpause(s, p);
    } else {
        p->pause_ev = true; /* refreshed meanwhile: wait for the new expiry */
        sim_ev_push(s, p->paused_until, EV_PAUSE_END, pi);
    }
}

void sim_pfc_refresh(struct sim *s, uint32_t pi)
{
    struct sim_port *p = &s->ports[pi];
    p->refresh_pending = false;
    if (p->xoff && p->up) {
        p->pfc_pending = 1;
        sim_port_kick(s, pi);
    }
}

static void arrive(struct sim *s, uint32_t pkt);

void sim_wire_arrive(struct sim *s, uint32_t pi)
{
    struct sim_port *p = &s->ports[pi];
    uint32_t pkt = p->wire_head;
    p->wire_head = s->pkts[pkt].next;
    if (p->wire_head != SIM_NIL)
        sim_ev_push(s, s->pkts[p->wire_head].t, EV_ARRIVE, pi);
    arrive(s, pkt);
}

void sim_credit_arrive(struct sim *s, uint32_t pi)
{
    struct sim_port *p = &s->ports[pi];
    uint32_t pkt = p->cred_head;
    p->cred_head = s->pkts[pkt].next;
    if (p->cred_head != SIM_NIL)
        sim_ev_push(s, s->pkts[p->cred_head].t, EV_CREDIT, pi);
    arrive(s, pkt);
}

static void arrive(struct sim *s, uint32_t pkt)
{
    struct sim_pkt *k = &s->pkts[pkt];
    struct sim_port *p = &s->ports[k->port];
    if (!p->up) {
        drop(s, pkt); /* lost on a link that went down */
        return;
    }
    if (k->type == PK_PFC) {
        /* 802.1Qbb: stop the priority for quanta x 512 bit-times; zero quanta resumes. The
         * frame in transmission finishes first (the port is only consulted between frames). */
        if (k->payload) {
            p->c.rx_pause++;
            if (!p->paused) {
                p->paused = true;
                p->pause_start = s->now;
            }
            p->paused_until = s->now + sim_pause_ps(k->payload, p->gbps);
            if (!p->pause_ev) {
                p->pause_ev = true;
                sim_ev_push(s, p->paused_until, EV_PAUSE_END, k->port);
            }
        } else if (p->paused) {
            unpause(s, p);
        }
        drop(s, pkt);
        return;
    }
    if (k->type == PK_CREDIT) {
        p->credits += k->payload;
        uint32_t pi = k->port;
        drop(s, pkt);
        if (p->blocked || p->host)
            sim_port_kick(s, pi);
        return;
    }
    p->c.rcv_bytes += sim_frame_bytes(s, k);
    p->c.rcv_pkts++;
    if (p->host)
        sim_host_rx(s, p->node, pkt);
    else
        sw_forward(s, p->node, pkt);
}

/* Discard everything queued at a port that went down. */
static void flush_port(struct sim *s, struct sim_port *p)
{
    for (int c = 0; c < 2; c++)
        while (p->q[c].n) {
            uint32_t pkt = sim_q_pop(s, &p->q[c], sim_frame_bytes(s, &s->pkts[p->q[c].head]));
            p->c.xmit_discards++;
            if (!p->host)
                sw_release(s, pkt);
            drop(s, pkt);
        }
}

static void set_port(struct sim *s, struct sim_port *p, bool up)
{
    if (p->up == up)
        return;
    p->up = up;
    if (!up) {
        p->c.link_downed++;
        flush_port(s, p);
        if (p->paused)
            unpause(s, p);
        sim_port_block(s, p, false);
        if (p->xoff) {
            p->xoff = false;
            p->c.tx_pause_ps += s->now - p->xoff_since;
        }
        p->pfc_pending = 0;
    } else {
        /* Link training resets flow control: full credits for the peer's VL buffer. */
        p->credits = (int64_t)(s->p.ib_vl_buffer / SIM_IB_BLOCK);
        sim_port_kick(s, (uint32_t)(p - s->ports));
    }
}

void sim_link_event(struct sim *s, uint32_t idx)
{
    const struct sim_link_event *e = &s->p.link_events[idx];
    int pa = sim_find_link(s, e->a, e->b);
    if (pa < 0)
        return;
    struct sim_port *x = &s->ports[pa], *y = &s->ports[x->peer];
    set_port(s, x, e->up);
    set_port(s, y, e->up);
    /* Hosts notice their own link at once; the fabric reroutes after the update delay. */
    sim_ev_push(s, s->now + s->p.route_update, EV_ROUTES, 0);
}
