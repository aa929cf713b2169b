/* sim_int: the simulator's internal state, shared by its modules (event queue and packet pool,
 * topology and routes, switches and links, NICs and queue pairs, playback). Not part of the
 * engine's API: only the files in engine/sim/ include it. */
#ifndef SIM_INT_H
#define SIM_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/sim/sim.h"

#define SIM_NIL      UINT32_MAX
#define SIM_MAXDEPTH 64 /* messages outstanding per QP direction */

/* ---- events, ordered by (time, insertion sequence) ---- */
enum sim_ev_type {
    EV_ARRIVE = 0,  /* the first frame on a port's wire arrives (index: the sending port) */
    EV_CREDIT,      /* the first credit update travelling back from a port arrives */
    EV_TXDONE,      /* a port finished serialising: start the next frame */
    EV_NIC_WAKE,    /* a rate-limited QP of a host may send */
    EV_PAUSE_END,   /* a received PFC pause may have expired */
    EV_PFC_REFRESH, /* an ingress still over Xon: send XOFF again before the peer resumes */
    EV_RTO,         /* a QP direction's local ACK timer */
    EV_RATE,        /* DCQCN rate-increase timer */
    EV_CCTI,        /* IB CC: CCTI_Timer */
    EV_APP_START,   /* an application posts its first messages */
    EV_LINK,        /* a scheduled link event (index into params.link_events) */
    EV_ROUTES,      /* recompute routes after a link change */
    EV_SAMPLE,      /* record the timeline (apps' goodput, the deepest queue) */
};
#define EV_SHIFT 27
#define EV_MASK  ((1u << EV_SHIFT) - 1)

/* Events sort on one 64-bit key: the time in ps above SIM_SEQ_BITS bits of insertion order,
 * so ties run first in, first out (among events pushed within 4096 of each other; beyond,
 * still in one deterministic order). Simulated time is therefore bounded by SIM_T_MAX (2^52 ps,
 * 75 minutes); later events are clamped to it. */
#define SIM_SEQ_BITS 12
#define SIM_T_MAX    ((1ull << (64 - SIM_SEQ_BITS)) - 1)

struct sim_ev {
    uint64_t key;  /* t << SIM_SEQ_BITS | sequence */
    uint32_t what; /* type << EV_SHIFT | index */
    uint32_t pad;
};

struct sim_heap {
    struct sim_ev *e; /* e[n] is a sentinel with the largest key (cap > n) */
    uint32_t n, cap;
};

/* ---- packets ---- */
enum sim_pkt_type { PK_DATA = 0, PK_ACK, PK_NAK, PK_CNP, PK_BECN, PK_PFC, PK_CREDIT };
enum {
    PF_FIRST = 1u << 0, /* first packet of a message (RETH) */
    PF_LAST = 1u << 1,  /* last packet of a message */
    PF_CE = 1u << 2,    /* ECN congestion experienced (RoCE) */
    PF_FECN = 1u << 3,  /* forward explicit congestion notification (IB) */
    PF_CTRL = 1u << 4,  /* travels in the control class */
};

struct sim_pkt {
    uint64_t t;    /* on a wire: when its last bit arrives (plus switch latency), ps */
    uint32_t next; /* queue or wire link, or free list */
    uint32_t qd;   /* QP direction (data: its sender's; control: the data's) */
    uint32_t psn;
    uint32_t payload; /* data: payload bytes; PFC: quanta; CREDIT: blocks */
    uint32_t wire;    /* bytes on the wire (RoCE: with preamble and gap) */
    uint32_t port;    /* port it is travelling to, then the port it arrived through */
    uint16_t dst;     /* destination host */
    uint8_t type, flags;
};

struct sim_q {
    uint32_t head, tail, n;
    uint64_t bytes; /* frame bytes */
};

struct sim_port_ctr {
    uint64_t xmit_bytes, rcv_bytes; /* frames; port_xmit_data / port_rcv_data are these / 4 */
    uint64_t xmit_pkts, rcv_pkts;
    uint64_t xmit_discards;                   /* port_xmit_discards */
    uint64_t rx_discards;                     /* rx_prio{p}_discards: lossless headroom overflow */
    uint64_t xmit_wait_ps;                    /* port_xmit_wait (reported in ticks of 1 ns) */
    uint64_t tx_pause, tx_pause_ps;           /* XOFF frames sent, time paused by us */
    uint64_t rx_pause, rx_pause_ps, rx_trans; /* XOFF received, time held, XOFF->XON */
    uint64_t link_downed;
    uint64_t relay_errors; /* port_rcv_switch_relay_errors: no route */
    uint64_t ecn_marked;   /* CE (RoCE) or FECN (IB) marks applied at this egress */
};

struct sim_port {
    uint32_t node, peer; /* owning node; the port at the other end */
    uint16_t local;      /* port number on the node */
    bool host, up;
    double gbps;
    uint64_t ppb;  /* ps per byte, 16.16 fixed point */
    uint64_t prop; /* propagation delay, ps */
    uint64_t hop;  /* prop + the next node's traversal latency, ps */
    uint64_t tx_until;
    bool txdone_pending;
    /* Frames on the wire to the peer, in order (one link delay for all, so arrivals keep the
     * sending order): only the first has an event. Likewise credit updates sent back to the
     * peer for frames that came in through this port (IB). */
    uint32_t wire_head, wire_tail, cred_head, cred_tail;
    struct sim_q q[2]; /* egress: [0] control class, [1] data */
    uint64_t watermark;
    /* PFC as a transmitter: the peer paused our data priority */
    uint64_t paused_until, pause_start;
    bool paused, pause_ev; /* pause_ev: an EV_PAUSE_END is pending */
    /* PFC as a switch ingress: we pause the peer */
    uint64_t in_bytes, in_max;
    bool xoff, refresh_pending;
    uint8_t pfc_pending;             /* 0 none, 1 XOFF, 2 XON */
    uint64_t xoff_since, xoff_level; /* when XOFF was asserted, ingress bytes then */
    /* IB credits: 64 B blocks we may still send into the peer's VL buffer */
    int64_t credits;
    bool blocked; /* data waiting, none sendable (paused or no credits) */
    uint64_t blocked_since;
    uint64_t headroom; /* PFC headroom of this ingress, bytes */
    uint32_t mark_count;
    struct sim_port_ctr c;
};

struct sim_nic_ctr {
    uint64_t np_cnp_sent, np_ecn_marked, rp_cnp_handled;
    uint64_t out_of_sequence, packet_seq_err, local_ack_timeout_err, duplicate_request;
    uint64_t retries_exceeded;
    uint64_t rcv_fecn, rcv_becn;
};

struct sim_node {
    char name[24];
    bool host;
    uint32_t port0, nports;
    /* switch */
    uint64_t buf_used, buf_max;
    uint32_t *route_off; /* per destination host: offset into routes (nroutes at route_n) */
    uint8_t *route_n;
    uint32_t salt;
    /* host */
    uint32_t *senders; /* QP directions sending from this host */
    uint32_t nsenders, rr;
    uint64_t wake_at;
    struct sim_nic_ctr c;
};

struct sim_msg {
    uint32_t psn0, npkts;
    uint64_t size, post; /* bytes, ps */
};

/* One direction of a queue pair: requester state at the sender, responder at the receiver. */
struct sim_qd {
    uint32_t app, qp;
    uint8_t dir; /* 0: app src -> dst, 1: dst -> src */
    bool err;
    uint16_t src, dst; /* hosts: sender, receiver */
    uint32_t hash;
    int worker; /* callback worker index for operations completing on this direction */
    /* requester */
    uint32_t snd_nxt, snd_una, snd_end;
    struct sim_msg m[SIM_MAXDEPTH];
    uint32_t mhead, mn, mcur; /* ring: oldest, count, message holding snd_nxt */
    uint64_t next_send;
    double rate_cap; /* Gb/s: line rate or the app's limit */
    struct sim_dcqcn_rp rp;
    bool cc_active; /* DCQCN: a CNP arrived; timers run */
    uint64_t bytes_since, last_cut;
    uint64_t alpha_anchor; /* alpha decays once per period since this time (lazily) */
    uint64_t rate_due;
    bool rate_ev;
    uint64_t rto_due;
    bool rto_ev;
    int retry;
    int ccti;
    bool ccti_ev;
    /* responder */
    uint32_t epsn, since_ack;
    bool nak_sent;
    uint64_t last_cnp;
    uint64_t rx_msg_bytes;
    /* progress */
    uint64_t acked_bytes, rx_bytes;
};

struct sim_appx {
    struct sim_app a;
    uint64_t *sizes_copy;
    double *weights_copy;
    uint64_t remaining; /* messages not yet posted (UINT64_MAX: unlimited) */
    uint64_t inflight;  /* posted, not completed */
    uint32_t qd0;       /* first QP direction (2 per QP) */
    uint64_t rng;
    struct sim_app_stats st;
    uint64_t *pp_post; /* ping-pong/rr: post time per QP */
    float *tl;         /* goodput per sample period, Gb/s */
    uint64_t tl_bytes; /* payload at the last sample */
};

#define SIM_TL_MAX 2000 /* timeline samples kept */

struct sim {
    struct sim_params p;
    char name[64];
    /* topology */
    struct sim_node *nodes;
    uint32_t nnodes, nhosts;
    uint32_t *host_node; /* host index -> node */
    struct sim_port *ports;
    uint32_t nports;
    uint32_t *routes; /* egress port ids */
    uint32_t routes_cap, routes_len;
    uint64_t hdr_frame; /* bytes of headers in a frame (buffer accounting) */
    /* traffic */
    struct sim_appx *apps;
    uint32_t napps, apps_cap;
    struct sim_qd *qds;
    uint32_t nqds, qds_cap;
    uint32_t nfg, fg_left; /* foreground apps, and those not done */
    bool aborted;
    /* events */
    struct sim_heap hq[2]; /* [0] frames and ports, [1] timers */
    uint32_t seq;
    uint64_t now, events;
    /* packets */
    struct sim_pkt *pkts;
    uint32_t npkts, free_head;
    uint64_t live;
    uint64_t rng;
    uint64_t pfc_pause_frames; /* XOFF frames sent anywhere (the reference's "pause events") */
    uint32_t ntl;              /* timeline samples taken */
    float *tl_queue;           /* deepest switch egress queue at each sample, bytes */
    uint16_t *tl_paused;       /* ports held by PFC or out of credits at each sample */
    /* playback (sim_ctl_* from any thread) */
    _Atomic uint64_t ctl_scale;
    _Atomic bool ctl_paused, ctl_skip;
    _Atomic uint64_t ctl_step; /* ps to advance while paused (UINT64_MAX: one event) */
    _Atomic uint64_t ctl_gen;  /* bumped on every change: re-anchor the clocks */
    uint64_t play_gen, anchor_wall, anchor_sim;
    bool anchored;
    uint64_t moments[SIM_MAX_MOMENTS][2]; /* sim_ctl_moments, ps */
    int nmoments;
};

/* sim_evq.c: two binary heaps over arrays that double when full (never per event): the hot
 * one holds frames arriving, ports finishing a frame and adapters waking (one or two per port),
 * the other the timers (retransmission, PFC, DCQCN, IB CC, link events); both share the
 * sequence, so together they keep one order. Push and pop are inline for the event loop. Pop
 * moves the hole to a leaf first, then sifts the last element up (fewer comparisons when, as
 * usual, the last element is late); the smaller child is chosen without a branch, whose
 * outcome a processor could not predict, against a sentinel past the last element. */
void sim_ev_grow(struct sim_heap *hp);

__attribute__((always_inline)) static inline void sim_ev_push(struct sim *s, uint64_t t,
                                                              enum sim_ev_type type, uint32_t idx)
{
    struct sim_heap *hp = &s->hq[type > EV_NIC_WAKE];
    if (hp->n + 1 == hp->cap)
        sim_ev_grow(hp);
    if (t > SIM_T_MAX)
        t = SIM_T_MAX;
    uint64_t key = (t << SIM_SEQ_BITS) | (s->seq++ & ((1u << SIM_SEQ_BITS) - 1));
    struct sim_ev *h = hp->e;
    uint32_t i = hp->n++;
    h[hp->n].key = UINT64_MAX; /* the sentinel */
    while (i) {
        uint32_t parent = (i - 1) >> 1;
        if (h[parent].key <= key)
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i].key = key;
    h[i].what = ((uint32_t)type << EV_SHIFT) | idx;
}

static inline bool sim_ev_any(const struct sim *s)
{
    return s->hq[0].n || s->hq[1].n;
}

/* The heap holding the earliest event (an empty heap's root is its sentinel; no event has
 * the largest key, times being at most SIM_T_MAX). */
static inline struct sim_heap *sim_ev_first(struct sim *s)
{
    return s->hq[1].e[0].key < s->hq[0].e[0].key ? &s->hq[1] : &s->hq[0];
}

/* Key of the earliest event (UINT64_MAX when none). */
static inline uint64_t sim_ev_top(const struct sim *s)
{
    uint64_t a = s->hq[0].e[0].key, b = s->hq[1].e[0].key;
    return a < b ? a : b;
}

/* Time of the earliest event, ps (the queue must not be empty). */
static inline uint64_t sim_ev_next(const struct sim *s)
{
    return sim_ev_top(s) >> SIM_SEQ_BITS;
}

/* Key bound for events at or before t ps. */
static inline uint64_t sim_ev_key_upto(uint64_t t)
{
    return t >= SIM_T_MAX ? UINT64_MAX : (t << SIM_SEQ_BITS) | ((1u << SIM_SEQ_BITS) - 1);
}

/* Remove the earliest event into *out if its key is at most max_key; false otherwise (or
 * when the queue is empty). */
static inline bool sim_ev_pop_upto(struct sim *s, uint64_t max_key, struct sim_ev *out)
{
    struct sim_heap *hp = sim_ev_first(s);
    struct sim_ev *h = hp->e;
    if (h[0].key > max_key || h[0].key == UINT64_MAX)
        return false;
    *out = h[0];
    uint32_t n = --hp->n;
    struct sim_ev last = h[n];
    h[n].key = UINT64_MAX; /* the sentinel moves down one */
    if (!n)
        return true;
    uint32_t i = 0, c;
    while ((c = 2 * i + 1) < n) {
        c += h[c + 1].key < h[c].key; /* h[n], the sentinel, never wins */
        h[i] = h[c];
        i = c;
    }
    while (i) {
        uint32_t parent = (i - 1) >> 1;
        if (h[parent].key <= last.key)
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = last;
    return true;
}

int sim_pool_init(struct sim *s, uint32_t n);
void sim_pool_grow(struct sim *s);

static inline uint32_t sim_pkt_alloc(struct sim *s)
{
    if (s->free_head == SIM_NIL)
        sim_pool_grow(s);
    uint32_t i = s->free_head;
    s->free_head = s->pkts[i].next;
    s->pkts[i] = (struct sim_pkt){.next = SIM_NIL};
    s->live++;
    return i;
}

static inline void sim_pkt_free(struct sim *s, uint32_t i)
{
    s->pkts[i].next = s->free_head;
    s->free_head = i;
    s->live--;
}
static inline uint64_t sim_rand(struct sim *s)
{
    /* splitmix64 */
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline double sim_rand01(struct sim *s)
{
    return (double)(sim_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}
uint64_t sim_mix64(uint64_t x);

/* sim_topo.c */
int sim_topo_build(struct sim *s, const cJSON *topo, const char *what, struct ft_err *err);
void sim_routes_compute(struct sim *s);
int sim_find_link(const struct sim *s, const char *a, const char *b);

/* sim_net.c */
/* Bytes of a frame as the counters and buffers count them (RoCE: without preamble and gap). */
static inline uint32_t sim_frame_bytes(const struct sim *s, const struct sim_pkt *k)
{
    return s->p.fabric == SIM_FABRIC_ROCE ? k->wire - SIM_ETH_GAP : k->wire;
}
/* IB credits count 64-byte blocks (§12). */
static inline uint32_t ib_blocks(uint32_t wire)
{
    return (wire + SIM_IB_BLOCK - 1) / SIM_IB_BLOCK;
}
static inline uint64_t sim_port_ser(const struct sim_port *p, uint64_t bytes)
{
    return (bytes * p->ppb + 0x8000) >> 16;
}
/* A port's queues (FIFO of packets linked through next, with their frame bytes). */
static inline void sim_q_push(struct sim *s, struct sim_q *q, uint32_t i, uint32_t bytes)
{
    s->pkts[i].next = SIM_NIL;
    if (q->n)
        s->pkts[q->tail].next = i;
    else
        q->head = i;
    q->tail = i;
    q->n++;
    q->bytes += bytes;
}
static inline uint32_t sim_q_pop(struct sim *s, struct sim_q *q, uint32_t bytes)
{
    uint32_t i = q->head;
    q->head = s->pkts[i].next;
    q->n--;
    q->bytes -= bytes;
    return i;
}
/* The port is busy until tx_until: consult it again then (one pending event at a time). */
static inline void sim_port_txdone_later(struct sim *s, uint32_t pi)
{
    struct sim_port *p = &s->ports[pi];
    if (!p->txdone_pending) {
        p->txdone_pending = true;
        sim_ev_push(s, p->tx_until, EV_TXDONE, pi);
    }
}

/* Put pkt on the wire of port pi: it arrives at the peer after serialisation, propagation
 * and the hop's latency (inline: every frame of switches and adapters goes through it). */
static inline void sim_port_send(struct sim *s, uint32_t pi, uint32_t pkt)
{
    struct sim_port *p = &s->ports[pi];
    struct sim_pkt *k = &s->pkts[pkt];
    uint64_t ser = sim_port_ser(p, k->wire);
    p->tx_until = s->now + ser;
    p->c.xmit_bytes += sim_frame_bytes(s, k);
    p->c.xmit_pkts++;
    /* The last bit reaches the peer after serialisation and propagation; a switch then needs
     * its traversal latency before the frame can be queued (folded into p->hop). */
    k->port = p->peer;
    k->t = s->now + ser + p->hop;
    k->next = SIM_NIL;
    if (p->wire_head == SIM_NIL) {
        p->wire_head = pkt;
        sim_ev_push(s, k->t, EV_ARRIVE, pi);
    } else {
        s->pkts[p->wire_tail].next = pkt;
    }
    p->wire_tail = pkt;
}

/* sim_port.c: the wire, for switches and adapters. */
/* Send a credit update for blocks back through port pi (to its peer), after the delay. */
void sim_credit_send(struct sim *s, uint32_t pi, uint32_t blocks);

/* sim_net.c: links and switches. */
/* Let port pi send its next frame if it is idle (a host's port: its adapter decides). */
void sim_port_kick(struct sim *s, uint32_t port);
void sim_port_enqueue(struct sim *s, uint32_t port, uint32_t pkt, int cls);
void sim_wire_arrive(struct sim *s, uint32_t port);
void sim_credit_arrive(struct sim *s, uint32_t port);
void sim_pause_end(struct sim *s, uint32_t port);
void sim_pfc_refresh(struct sim *s, uint32_t port);
void sim_link_event(struct sim *s, uint32_t idx);
/* Time the port had data to send but sent none (port_xmit_wait). */
static inline void sim_port_block(struct sim *s, struct sim_port *p, bool blocked)
{
    if (blocked == p->blocked)
        return;
    p->blocked = blocked;
    if (blocked)
        p->blocked_since = s->now;
    else
        p->c.xmit_wait_ps += s->now - p->blocked_since;
}

/* sim_nic.c */
/* A host's port pi may send: the adapter's next frame if the port is idle and one may go
 * (control frames first, then the senders round robin, paced, within pauses and credits). */
void sim_nic_kick(struct sim *s, uint32_t port);
void sim_nic_wake(struct sim *s, uint32_t node);
void sim_host_rx(struct sim *s, uint32_t node, uint32_t pkt);
void sim_rto(struct sim *s, uint32_t qd);
void sim_rate_timer(struct sim *s, uint32_t qd);
void sim_ccti_timer(struct sim *s, uint32_t qd);
void sim_app_start(struct sim *s, uint32_t app);
void sim_sample(struct sim *s);
void sim_qd_fail(struct sim *s, struct sim_qd *q, const char *why);

#endif
