/* drill: a fault drill's repetitions: lanes (one per connection of each flow) issue requests
 * one at a time, each with the mix's fail_bound_s as its deadline; the injector sends
 * fault.inject on a control session of its own; afterwards the times, the requests by
 * outcome and the agent's count of answers go into the "fabtop-drill" document. */
#include "engine/run/drill.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonutil.h"
#include "engine/counters/counters.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/results/results_drill.h"
#include "engine/run/drill_netns.h"
#include "common/xalloc.h"
#include "engine/xport/nccl/nccl_drill.h"
#include "engine/xport/tcp/tcp_drill.h"
#include "engine/xport/verbs/verbs_drill.h"
#include "engine/xport/xport.h"

/* A detection may come this long after the request deadline (fail_bound_s): the request in
 * flight at the injection, and scheduling. */
#define DETECT_SLACK_S 0.1
/* Back at the quiet p99: this many requests in a row at or under it after recovery. */
#define RETURN_RUN 5
#define MAX_LANES  256
/* The drill's peer and the failover agents of all its flows, each with a session of the
 * drill's own for fault.inject (the peer) and fault.stats (all of them). */
#define MAX_AGENTS (1 + 16)

struct drill;

struct lane {
    struct drill *d;
    const struct mix_flow *spec;
    int flow;
    pthread_t thr;
    bool started;
    atomic_bool ready, settled;
    char error[300]; /* it never started */
    long issued, completed, failed, abandoned, reconnects;
    int target;       /* the agent it is on: 0 the drill's peer, k its policy's failover[k - 1] */
    int recovered_on; /* the target of its first recovery after the fault */
    uint64_t detect_ns, recovered_ns, returned_ns;
    atomic_bool detected; /* detect_ns is set (read by the repetition's clock) */
    char detect_kind[300];
    bool gave_up;
    uint64_t rng;    /* the lane's size draws (a size distribution) */
    uint64_t *quiet; /* round trips before the injection, ns */
    size_t nquiet, capquiet;
    /* rank-loss: the NCCL lane (instead of tl), its ranks before the fault and after the
     * recovery, how it was rebuilt, and why the survivors could not shrink */
    struct nccl_drill *nl;
    struct verbs_drill *vl; /* a verbs ping-pong's lane (instead of tl) */
    double bound_s;         /* the verbs queue pair's own detection bound (0: the mix's) */
    double timeout_s;       /* verbs: its requests' deadline (0: the mix's fail_bound_s) */
    int ranks_before, ranks_after;
    const char *rebuilt;
    char shrink_error[300];
    /* verbs: the RDMA device and port of its queue pair (its first set-up's), whose
     * counters the drill reads over the fault window; "" none */
    char rdma[80], rdma_obj[80];
};

/* A background stream of the mix, run as load beside the lanes, one per connection: its
 * bytes before the injection, during the fault and after it (binned when each slice of
 * LOAD_SLICE_MS ends). It never gives up: it reconnects until the repetition ends. */
#define LOAD_SLICE_MS 10
struct load {
    struct drill *d;
    const struct mix_flow *spec;
    int flow;
    pthread_t thr;
    bool started;
    atomic_bool ready;
    char error[300]; /* it never started */
    _Atomic uint64_t bytes[3];
    long reconnects;
};

struct drill {
    const struct drill_opts *o;
    struct agent *agent; /* in-process, when no peer */
    char hp[300];
    struct channel_key key;
    _Atomic uint64_t inject_ns;
    atomic_bool stop;
    struct lane lanes[MAX_LANES];
    int nlanes;
    struct load loads[MAX_LANES];
    int nloads;
    struct drill_netns hole;                 /* blackhole, link-down */
    struct channel_conn *agents[MAX_AGENTS]; /* [0]: the peer's */
    char agent_hp[MAX_AGENTS][300];
    int nagents;
    /* rank-loss: the victim, a `fabtop serve` of the drill's own on 127.0.0.1 (its key file
     * and log in a private directory); killed at the injection, started again after --for
     * on the same port (a restarted worker) */
    pid_t victim;
    uint16_t victim_port;
    char victim_dir[256];
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

const char *drill_fault_str(enum drill_fault f)
{
    return f == DRILL_PEER_KILL   ? "peer-kill"
           : f == DRILL_BLACKHOLE ? "blackhole"
           : f == DRILL_LINK_DOWN ? "link-down"
           : f == DRILL_RANK_LOSS ? "rank-loss"
                                  : "peer-stall";
}

int drill_fault_parse(const char *s, enum drill_fault *out)
{
    if (!strcmp(s, "peer-stall"))
        *out = DRILL_PEER_STALL;
    else if (!strcmp(s, "peer-kill"))
        *out = DRILL_PEER_KILL;
    else if (!strcmp(s, "blackhole"))
        *out = DRILL_BLACKHOLE;
    else if (!strcmp(s, "link-down"))
        *out = DRILL_LINK_DOWN;
    else if (!strcmp(s, "rank-loss"))
        *out = DRILL_RANK_LOSS;
    else
        return -EINVAL;
    return 0;
}

/* Is the fault the drill's own in a network namespace (drill_netns.h)? A blackhole without
 * --netns is the agent's: its queue pairs to the error state (verbs lanes). */
static bool netns_fault(const struct drill_opts *o)
{
    return (o->fault == DRILL_BLACKHOLE && o->netns) || o->fault == DRILL_LINK_DOWN;
}

/* rank-loss: NCCL collectives of one fixed size with the victim's ranks, nothing else. */
static int check_rank_loss(const struct mix *m, struct ft_err *err)
{
    for (int i = 0; i < m->nflows; i++) {
        const struct mix_flow *f = &m->flows[i];
        if (f->role == MIX_ROLE_BACKGROUND || strcmp(f->transport, "nccl") ||
            f->op != MIX_OP_COLLECTIVE)
            return ft_err_set(err, -EINVAL,
                              "%s: flow %s: a rank-loss drill runs NCCL collectives (foreground) "
                              "only, not %s %s%s",
                              m->source, f->name, f->transport, mix_op_str(f->op),
                              f->role == MIX_ROLE_BACKGROUND ? " as background" : "");
        if (f->size.kind != MIX_SIZE_FIXED)
            return ft_err_set(err, -EINVAL, "%s: flow %s: a drill takes one fixed size", m->source,
                              f->name);
        if (strcmp(f->peer, "loopback"))
            return ft_err_set(err, -EINVAL,
                              "%s: flow %s: a rank-loss drill's ranks are on its own victim "
                              "agent, not on %s",
                              m->source, f->name, f->peer);
    }
    if (m->nflows < 1)
        return ft_err_set(err, -EINVAL, "%s: no flow: nothing for the drill to time", m->source);
    return 0;
}

int drill_check_mix(const struct mix *m, struct ft_err *err)
{
    return drill_check_mix_fault(m, DRILL_PEER_STALL, err);
}

int drill_check_mix_fault(const struct mix *m, enum drill_fault fault, struct ft_err *err)
{
    if (fault == DRILL_RANK_LOSS)
        return check_rank_loss(m, err);
    int lanes = 0;
    int drilled = 0;
    for (int i = 0; i < m->nflows; i++) {
        const struct mix_flow *f = &m->flows[i];
        bool load = f->role == MIX_ROLE_BACKGROUND;
        if (!strcmp(f->transport, "nccl"))
            return ft_err_set(err, -EINVAL,
                              "%s: flow %s: NCCL flows are drilled with --fault rank-loss",
                              m->source, f->name);
        if (!strcmp(f->transport, "verbs")) {
            /* A ping-pong's queue pair: the agent's gone, its retries run out (peer-kill); its
             * responder holds the reply (peer-stall); its queue pairs in the error state drop
             * what arrives (blackhole, by the agent); the RDMA device's netdev goes down
             * (link-down, --device DEV --owned: a VM's data NIC; drill_run checks that).
             * What Soft-RoCE does then (Linux 6.1, drivers/infiniband/sw/rxe): rxe_notify's
             * NETDEV_DOWN is rxe_port_down (port DOWN, IB_EVENT_PORT_ERR, hw_counter
             * link_downed + 1); the IPv4 GID stays (core/roce_gid_mgmt.c: netdevice_event
             * deletes a netdev's GIDs on NETDEV_UNREGISTER, not DOWN, and addr_event one
             * when its address goes, which an IPv4 address on a downed link does not), but the
             * kernel drops the routes through the netdev, so the next packet the queue pair sends
             * (a retransmission after T_o, the lane's liveness probe, a new request) finds no
             * route (rxe_net.c rxe_find_route4, prepare4: -EHOSTUNREACH) and rxe_requester
             * completes it with IB_WC_LOC_QP_OP_ERR: within about one T_o, not the
             * retry-exceeded bound. New queue pairs are refused while the port is DOWN
             * (verbs_res needs ACTIVE) and connect after NETDEV_UP (rxe_port_up). Seen in
             * the two-VM drill with rdma_rxe's dynamic debug: "qp#18 rxe_find_route4: no
             * route to 10.0.1.2", 49 ms after "rxe0: set down" (tests/vm/drill_verbs_pair.sh).
             */
            if (load || f->op != MIX_OP_PINGPONG ||
                (fault != DRILL_PEER_KILL && fault != DRILL_PEER_STALL &&
                 fault != DRILL_BLACKHOLE && fault != DRILL_LINK_DOWN))
                return ft_err_set(err, -EINVAL,
                                  "%s: flow %s: verbs flows are drilled as foreground ping-pongs "
                                  "under --fault peer-kill, peer-stall, blackhole or link-down "
                                  "for now, not %s%s under %s",
                                  m->source, f->name, mix_op_str(f->op),
                                  load ? " as background" : "", drill_fault_str(fault));
            const char *verb = jsonutil_str(f->params, "verb"),
                       *lat = jsonutil_str(f->params, "latency");
            /* Under link-down the drill's evidence is a WRITE or SEND ping-pong with a reply
             * (tests/vm/drill_verbs_pair.sh); a READ or a completion-latency ping-pong would
             * fail as well, but nothing has shown how, so they are not drilled yet. */
            if (fault == DRILL_LINK_DOWN &&
                ((verb && !strcmp(verb, "read")) || (lat && !strcmp(lat, "completion"))))
                return ft_err_set(err, -EINVAL,
                                  "%s: flow %s: a link-down drills a verbs WRITE or SEND "
                                  "ping-pong with a reply for now, not a %s",
                                  m->source, f->name,
                                  verb && !strcmp(verb, "read") ? "one-sided READ"
                                                                : "completion-latency ping-pong");
            /* One-sided READ is served by the peer's NIC, and a completion-latency
             * ping-pong waits for no reply: neither can see a stalled agent, and the agent
             * holds no worker of theirs to move their queue pairs. */
            if ((fault == DRILL_PEER_STALL || fault == DRILL_BLACKHOLE) &&
                ((verb && !strcmp(verb, "read")) || (lat && !strcmp(lat, "completion"))))
                return ft_err_set(err, -EINVAL,
                                  "%s: flow %s: a %s cannot be seen on a %s: the peer's "
                                  "NIC answers it without the agent (drill a WRITE or SEND "
                                  "ping-pong with a reply)",
                                  m->source, f->name, drill_fault_str(fault),
                                  verb && !strcmp(verb, "read") ? "one-sided READ"
                                                                : "completion-latency ping-pong");
            if (f->size.kind != MIX_SIZE_FIXED)
                return ft_err_set(err, -EINVAL, "%s: flow %s: a verbs lane takes one fixed size",
                                  m->source, f->name);
            if (strcmp(f->peer, "loopback"))
                return ft_err_set(err, -EINVAL,
                                  "%s: flow %s: a drill's flows use loopback or --peer, not their "
                                  "own peer (%s)",
                                  m->source, f->name, f->peer);
            drilled++;
            lanes++;
            continue;
        }
        if (load && (strcmp(f->transport, "tcp") || f->op != MIX_OP_STREAM ||
                     (f->dir != MIX_DIR_TX && f->dir != MIX_DIR_RX)))
            return ft_err_set(err, -EINVAL,
                              "%s: flow %s: a drill's neighbours (background flows) are TCP "
                              "streams one way (tx or rx) for now, not %s %s %s",
                              m->source, f->name, f->transport, mix_op_str(f->op),
                              mix_dir_str(f->dir));
        if (!load &&
            (strcmp(f->transport, "tcp") || (f->op != MIX_OP_PINGPONG && f->op != MIX_OP_RR)))
            return ft_err_set(
                err, -EINVAL,
                "%s: flow %s: drills run TCP pingpong and rr flows for now, not %s %s", m->source,
                f->name, f->transport, mix_op_str(f->op));
        drilled += !load;
        if (f->size.kind == MIX_SIZE_SWEEP || (load && f->size.kind != MIX_SIZE_FIXED))
            return ft_err_set(err, -EINVAL,
                              "%s: flow %s: a drill takes one fixed size or a size distribution "
                              "(its neighbours one fixed size), not a sweep",
                              m->source, f->name);
        if (strcmp(f->peer, "loopback"))
            return ft_err_set(err, -EINVAL,
                              "%s: flow %s: a drill's flows use loopback or --peer, not their own "
                              "peer (%s)",
                              m->source, f->name, f->peer);
        lanes += f->op == MIX_OP_PINGPONG ? 1 : f->concurrency;
        for (int k = 0; k < f->recover.nfailover; k++) {
            char host[256];
            uint16_t port;
            struct ft_err e = {0};
            if (channel_split_host_port(f->recover.failover[k], CHANNEL_DEFAULT_PORT, host,
                                        sizeof(host), &port, &e) < 0)
                return ft_err_set(err, -EINVAL, "%s: flow %s: recover.failover: %s", m->source,
                                  f->name, e.msg);
        }
    }
    if (lanes > MAX_LANES)
        return ft_err_set(err, -EINVAL, "%s: %d connections in all; a drill runs at most %d",
                          m->source, lanes, MAX_LANES);
    if (!drilled)
        return ft_err_set(err, -EINVAL,
                          "%s: no foreground pingpong or rr flow: nothing for the drill to time",
                          m->source);
    return 0;
}

const struct mix_flow *drill_blackhole_needs_netns(const struct mix *m)
{
    for (int i = 0; i < m->nflows; i++)
        if (m->flows[i].role != MIX_ROLE_BACKGROUND && strcmp(m->flows[i].transport, "verbs"))
            return &m->flows[i];
    return NULL;
}

static int fail_ms(const struct drill *d)
{
    return (int)(d->o->mix->fail_bound_s * 1000);
}

static int dconnect(const char *hp, int timeout_ms, struct channel_conn **c,
                    const struct channel_key *key, struct ft_err *err)
{
    return channel_connect(hp, CHANNEL_DEFAULT_PORT, key, timeout_ms < 500 ? 500 : timeout_ms, c,
                           err);
}

/* The agent of target t of a lane: the drill's peer (0) or a failover agent. */
static const char *target_hp(const struct lane *l, int t)
{
    return t == 0 ? l->d->hp : l->spec->recover.failover[t - 1];
}

/* A control session and the lane's data connection on it, with its current target (the data
 * peer of its own only on the drill's peer). */
static int lane_open(struct lane *l, struct channel_conn **ctl, struct tcp_drill_lane **tl,
                     int timeout_ms, struct ft_err *err)
{
    const struct mix_flow *s = l->spec;
    const char *hp = target_hp(l, l->target);
    int rc = dconnect(hp, timeout_ms, ctl, &l->d->key, err);
    if (rc < 0)
        return rc;
    if (l->d->o->fault == DRILL_RANK_LOSS) {
        char desc[160];
        snprintf(desc, sizeof(desc), "%s %s", l->target ? "failover agent" : "victim agent", hp);
        rc = nccl_drill_open(*ctl, desc, l->d->o->mix, l->flow, &l->nl, err);
    } else if (!strcmp(s->transport, "verbs")) {
        char desc[160];
        snprintf(desc, sizeof(desc), "agent %s", hp);
        struct verbs_drill_setup st;
        rc = verbs_drill_open(*ctl, desc, l->d->o->mix, l->flow, &l->vl, &st, err);
        if (rc == 0)
            l->bound_s = verbs_drill_bound_s(l->vl, &l->timeout_s);
        if (rc == 0 && !l->rdma[0] && st.dev[0] && st.port > 0) {
            snprintf(l->rdma_obj, sizeof(l->rdma_obj), "%s/%d", st.dev, st.port);
            snprintf(l->rdma, sizeof(l->rdma), "%s:%d", st.dev, st.port);
        }
        /* A link-down of a netdev the queue pair does not use would time nothing. */
        const char *dev = l->d->hole.dev;
        if (rc == 0 && l->d->o->fault == DRILL_LINK_DOWN && dev[0] && st.netdev[0] &&
            strcmp(st.netdev, dev)) {
            rc = ft_err_set(err, -ENODEV,
                            "its queue pair's GID %d on %s is on %s, not on --device %s: a "
                            "link-down of %s would not touch it (give --device %s)",
                            st.gid_index, st.dev, st.netdev, dev, dev, st.netdev);
            verbs_drill_close(l->vl);
            l->vl = NULL;
        }
    } else {
        rc = tcp_drill_open(*ctl, l->target == 0 ? l->d->o->data_peer : NULL, s->op,
                            mix_sizes_largest(&s->size), s->size.response_bytes,
                            l->d->o->mix->fail_bound_s, timeout_ms, tl, err);
    }
    if (rc < 0) {
        channel_close(*ctl);
        *ctl = NULL;
    }
    return rc;
}

/* One request (TCP) or collective operation (NCCL) of the lane, within timeout_ms. */
static int lane_request(struct lane *l, struct tcp_drill_lane *tl, int timeout_ms, uint64_t *ns,
                        struct ft_err *err)
{
    if (l->vl)
        return verbs_drill_op(l->vl, l->spec->size.bytes[0], timeout_ms, ns, err);
    return l->nl ? nccl_drill_op(l->nl, timeout_ms, ns, err)
                 : tcp_drill_request(tl, mix_sizes_draw(&l->spec->size, &l->rng), timeout_ms, ns,
                                     err);
}

static void lane_close(struct lane *l, struct channel_conn **ctl, struct tcp_drill_lane **tl)
{
    tcp_drill_close(*tl);
    *tl = NULL;
    nccl_drill_close(l->nl);
    l->nl = NULL;
    verbs_drill_close(l->vl);
    l->vl = NULL;
    if (*ctl)
        channel_close(*ctl);
    *ctl = NULL;
}

/* A lane's backoff: ns, or less when the repetition ends (d->stop). */
static void snooze(struct drill *d, uint64_t ns)
{
    uint64_t until = now_ns() + ns;
    for (uint64_t now = now_ns(); now < until && !atomic_load(&d->stop); now = now_ns())
        sleep_ns(until - now < 20000000 ? until - now : 20000000);
}

static bool cancelled(const struct drill *d)
{
    return d->o->cancel && atomic_load(d->o->cancel);
}

/* Sleep ns, or less when the drill is cancelled: false then. */
static bool nap(const struct drill *d, uint64_t ns)
{
    uint64_t until = now_ns() + ns;
    for (;;) {
        if (cancelled(d))
            return false;
        uint64_t now = now_ns();
        if (now >= until)
            return true;
        sleep_ns(until - now < 20000000 ? until - now : 20000000);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank p99 of v (sorted in place); 0 when empty. */
static uint64_t p99_of(uint64_t *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof(*v), cmp_u64);
    size_t rank = (n * 99 + 99) / 100;
    return v[rank ? rank - 1 : 0];
}

static void *lane_main(void *arg)
{
    struct lane *l = arg;
    struct drill *d = l->d;
    const struct mix_recover *pol = &l->spec->recover;
    struct channel_conn *ctl = NULL;
    struct tcp_drill_lane *tl = NULL;
    struct ft_err err = {0};
    int tmo = fail_ms(d);
    if (lane_open(l, &ctl, &tl, tmo, &err) < 0) {
        snprintf(l->error, sizeof(l->error), "%s", err.msg);
        atomic_store(&l->settled, true);
        atomic_store(&l->ready, true);
        return NULL;
    }
    if (l->nl)
        l->ranks_before = nccl_drill_ranks(l->nl);
    /* A verbs queue pair reports a vanished peer within its own bound: each request waits
     * that long, so the completion's status, not the lane's clock, is what detects. */
    if (l->timeout_s > 0)
        tmo = (int)(l->timeout_s * 1000);
    atomic_store(&l->ready, true);
    uint64_t p99 = 0;
    int run = 0;
    while (!atomic_load(&d->stop)) {
        uint64_t rtt = 0;
        ft_err_clear(&err);
        int rc = lane_request(l, tl, tmo, &rtt, &err);
        uint64_t now = now_ns(), inj = atomic_load(&d->inject_ns);
        l->issued++;
        if (rc == 0) {
            l->completed++;
            if (!inj || now < inj) {
                if (l->nquiet == l->capquiet) {
                    size_t cap = l->capquiet ? 2 * l->capquiet : 1024;
                    uint64_t *q = realloc(l->quiet, cap * sizeof(*q));
                    if (!q)
                        continue;
                    l->quiet = q;
                    l->capquiet = cap;
                }
                l->quiet[l->nquiet++] = rtt;
            } else if (l->detect_ns && !l->recovered_ns) {
                l->recovered_ns = now;
                l->recovered_on = l->target;
            }
            if (l->recovered_ns && !l->returned_ns) {
                run = rtt <= p99 ? run + 1 : 0;
                if (run >= RETURN_RUN) {
                    l->returned_ns = now;
                    atomic_store(&l->settled, true);
                }
            }
            continue;
        }
        if (rc == -ETIMEDOUT)
            l->abandoned++;
        else
            l->failed++;
        if (!l->detect_ns) {
            l->detect_ns = now;
            snprintf(l->detect_kind, sizeof(l->detect_kind), "%s: %s",
                     rc == -ETIMEDOUT ? "timeout" : "error", err.msg);
            atomic_store(&l->detected, true);
            uint64_t *copy = malloc((l->nquiet ? l->nquiet : 1) * sizeof(*copy));
            if (copy) {
                memcpy(copy, l->quiet, l->nquiet * sizeof(*copy));
                p99 = p99_of(copy, l->nquiet);
                free(copy);
            }
        }
        if (!pol->set) {
            l->gave_up = true;
            break;
        }
        /* NCCL: the survivors go on alone when this NCCL can shrink its communicators, on
         * the same control session (the victim's ranks are gone, and nothing waits on it). */
        if (l->nl && !l->rebuilt) {
            struct ft_err se = {0};
            int src = nccl_drill_shrink(l->nl, pol->deadline_s, &se);
            if (src == 0) {
                l->rebuilt = "ncclCommShrink";
                l->ranks_after = nccl_drill_ranks(l->nl);
                run = 0;
                continue;
            }
            snprintf(l->shrink_error, sizeof(l->shrink_error), "%s", se.msg);
        }
        lane_close(l, &ctl, &tl);
        /* Reconnect: a new control session and data connection, backing off; the first
         * attempt to the agent that failed, then round its failover agents and back. */
        uint64_t deadline = now + (uint64_t)(pol->deadline_s * 1e9);
        double backoff = pol->backoff_min_ms;
        bool ok = false;
        int failed_on = l->target;
        for (int a = 0; a < pol->attempts && !atomic_load(&d->stop); a++) {
            snooze(d, (uint64_t)(backoff * 1e6));
            uint64_t t = now_ns();
            if (t >= deadline)
                break;
            int left = (int)((deadline - t) / 1000000);
            l->target = (failed_on + a) % (1 + pol->nfailover);
            ft_err_clear(&err);
            if (lane_open(l, &ctl, &tl, left < tmo ? left : tmo, &err) == 0) {
                ok = true;
                l->reconnects++;
                if (l->nl) {
                    l->rebuilt = "new communicator";
                    l->ranks_after = nccl_drill_ranks(l->nl);
                }
                break;
            }
            backoff = backoff * 2 > pol->backoff_max_ms ? pol->backoff_max_ms : backoff * 2;
        }
        if (!ok) {
            l->gave_up = true;
            break;
        }
        run = 0;
    }
    lane_close(l, &ctl, &tl);
    atomic_store(&l->settled, true);
    return NULL;
}

static int load_open(struct load *l, struct channel_conn **ctl, struct tcp_drill_lane **tl,
                     struct ft_err *err)
{
    const struct mix_flow *s = l->spec;
    struct drill *d = l->d;
    int tmo = fail_ms(d) < 2000 ? 2000 : fail_ms(d);
    int rc = dconnect(d->hp, tmo, ctl, &d->key, err);
    if (rc == 0) {
        rc = tcp_drill_stream_open(*ctl, d->o->data_peer, s->dir, s->size.bytes[0],
                                   s->rate_gbps / (s->concurrency > 0 ? s->concurrency : 1),
                                   d->o->mix->fail_bound_s, tmo, tl, err);
        if (rc < 0) {
            channel_close(*ctl);
            *ctl = NULL;
        }
    }
    return rc;
}

static void *load_main(void *arg)
{
    struct load *l = arg;
    struct drill *d = l->d;
    struct channel_conn *ctl = NULL;
    struct tcp_drill_lane *tl = NULL;
    struct ft_err err = {0};
    if (load_open(l, &ctl, &tl, &err) < 0) {
        snprintf(l->error, sizeof(l->error), "%s", err.msg);
        atomic_store(&l->ready, true);
        return NULL;
    }
    atomic_store(&l->ready, true);
    const struct mix_recover *pol = &l->spec->recover;
    double backoff = pol->set ? pol->backoff_min_ms : 100;
    while (!atomic_load(&d->stop)) {
        if (!tl) { /* after a failure: again, backing off, until the repetition ends */
            snooze(d, (uint64_t)(backoff * 1e6));
            ft_err_clear(&err);
            if (load_open(l, &ctl, &tl, &err) < 0) {
                if (pol->set)
                    backoff = fmin(backoff * 2, pol->backoff_max_ms);
                continue;
            }
            l->reconnects++;
            backoff = pol->set ? pol->backoff_min_ms : 100;
        }
        uint64_t b = 0;
        ft_err_clear(&err);
        int rc = tcp_drill_stream(tl, LOAD_SLICE_MS, &b, &err);
        uint64_t now = now_ns(), inj = atomic_load(&d->inject_ns);
        int bin = !inj || now < inj ? 0 : now < inj + (uint64_t)(d->o->for_s * 1e9) ? 1 : 2;
        atomic_fetch_add(&l->bytes[bin], b);
        if (rc < 0) {
            tcp_drill_close(tl);
            tl = NULL;
            channel_close(ctl);
            ctl = NULL;
        }
    }
    tcp_drill_close(tl);
    if (ctl)
        channel_close(ctl);
    return NULL;
}

static int count_dir(const char *path)
{
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)))
        n += e->d_name[0] != '.';
    closedir(dir);
    return n - (!strcmp(path, "/proc/self/fd")); /* the directory's own descriptor */
}

static double rel_s(uint64_t t, uint64_t t0)
{
    return ((double)t - (double)t0) / 1e9;
}

/* A number, or null when not valid. */
static void num(struct results_num *f, bool valid, double v)
{
    if (valid)
        results_drill_num(f, v);
    else
        results_drill_null(f);
}

static void str(struct results_str *f, const char *v)
{
    f->st = v ? RESULTS_SET : RESULTS_NULL;
    f->s = v ? xalloc_strdup(v) : NULL;
}

static void flag(struct results_bool *f, bool v)
{
    f->st = RESULTS_SET;
    f->v = v;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* min, nearest-rank p50 and max of v (sorted in place). */
static void stat3(struct results_drill_stat *o, double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
    o->st = RESULTS_SET;
    num(&o->min_s, n > 0, n ? v[0] : 0);
    num(&o->p50_s, n > 0, n ? v[(n + 1) / 2 - 1] : 0);
    num(&o->max_s, n > 0, n ? v[n - 1] : 0);
    results_drill_num(&o->n, n);
}

/* The requests the agent answered for this client in full, and how many of its test
 * sessions are open there now (fault.stats). */
static int agent_answered(struct channel_conn *fc, double *out, double *open, struct ft_err *err)
{
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    cJSON_AddStringToObject(req, "type", "fault.stats");
    int rc = channel_request(fc, req, &resp, 5000, err);
    if (rc < 0)
        return rc;
    if (!jsonutil_num(resp, "answered", out))
        rc = ft_err_set(err, -EPROTO, "the agent's fault.stats reply has no \"answered\"");
    else if (open && !jsonutil_num(resp, "sessions", open))
        rc = ft_err_set(err, -EPROTO, "the agent's fault.stats reply has no \"sessions\"");
    cJSON_Delete(resp);
    return rc;
}

/* The agent's count once the repetition's sessions have ended there. A data thread counts
 * an answer after its last byte is written, so the client can read it, stop and ask before
 * the count is in; when a session ends its data threads have ended and its count is final.
 * Waits at most SETTLE_S, then takes the count as it stands (a session left open there is
 * the agent's problem, and a difference then is reported, not hidden). */
#define SETTLE_S 5.0
static int agent_answered_settled(struct channel_conn *fc, double *out, struct ft_err *err)
{
    uint64_t until = now_ns() + (uint64_t)(SETTLE_S * 1e9);
    for (;;) {
        double open = 0;
        int rc = agent_answered(fc, out, &open, err);
        if (rc < 0 || open == 0 || now_ns() >= until)
            return rc;
        sleep_ns(20000000);
    }
}

/* The answers of the peer and of every failover agent, summed. */
static int answered_all(struct drill *d, double *out, struct ft_err *err)
{
    *out = 0;
    for (int i = 0; i < d->nagents; i++) {
        double n = 0;
        int rc = agent_answered_settled(d->agents[i], &n, err);
        if (rc < 0 && i) {
            char why[sizeof(err->msg)];
            snprintf(why, sizeof(why), "%s", err->msg);
            return ft_err_set(err, rc, "failover agent %s: %s", d->agent_hp[i], why);
        }
        if (rc < 0)
            return rc;
        *out += n;
    }
    return 0;
}

/* The load's figures: per background flow, its payload rate before the injection (from t0,
 * when the lanes started, the neighbours already running), during the fault and after it
 * (to tend, when the lanes ended). */
static void put_load(struct drill *d, struct results_drill_rep *r, uint64_t t0, uint64_t tinj,
                     uint64_t tend)
{
    const struct mix *m = d->o->mix;
    if (!d->nloads || !tinj)
        return;
    r->load_st = RESULTS_SET;
    r->load = xalloc_zero((size_t)m->nflows, sizeof(*r->load));
    uint64_t tfor = tinj + (uint64_t)(d->o->for_s * 1e9);
    double win[3] = {rel_s(tinj, t0), rel_s(tfor < tend ? tfor : tend, tinj),
                     tend > tfor ? rel_s(tend, tfor) : 0};
    for (int i = 0; i < m->nflows; i++) {
        if (m->flows[i].role != MIX_ROLE_BACKGROUND)
            continue;
        struct results_drill_load *lo = &r->load[r->nload++];
        uint64_t b[3] = {0, 0, 0};
        long conns = 0, reconnects = 0;
        for (int k = 0; k < d->nloads; k++)
            if (d->loads[k].flow == i) {
                conns++;
                reconnects += d->loads[k].reconnects;
                for (int j = 0; j < 3; j++)
                    b[j] += atomic_load(&d->loads[k].bytes[j]);
            }
        str(&lo->name, m->flows[i].name);
        str(&lo->direction, mix_dir_str(m->flows[i].dir));
        results_drill_num(&lo->connections, (double)conns);
        struct results_num *g[3] = {&lo->before_gbps, &lo->during_gbps, &lo->after_gbps};
        for (int j = 0; j < 3; j++)
            num(g[j], win[j] > 0, win[j] > 0 ? (double)b[j] * 8 / win[j] / 1e9 : 0);
        results_drill_num(&lo->reconnects, (double)reconnects);
    }
}

/* What can see a fault on a flow, and what did ("seen_by", results_drill.h): one vocabulary
 * of signals for every transport. */
enum {
    SIG_DEADLINE = 1u << 0, /* a request outlived its deadline */
    SIG_CONN = 1u << 1,     /* TCP: the connection failed (reset, closed, refused) */
    SIG_RETRY = 1u << 2,    /* verbs: the queue pair's retries ran out */
    SIG_RNR = 1u << 3,      /* verbs: receiver-not-ready NAKs (rcvd_rnr_err moved) */
    SIG_LOCQP = 1u << 4,    /* verbs: a local QP operation error (Soft-RoCE: no route) */
    SIG_WC = 1u << 5,       /* verbs: another completion error */
    SIG_NCCL = 1u << 6,     /* NCCL: an error of the communicator */
};
static const char *const sig_names[] = {
    "request deadline",         "connection error", "retry exceeded", "receiver-not-ready",
    "local QP operation error", "completion error", "NCCL error"};
#define SEEN_NSIG ((int)(sizeof(sig_names) / sizeof(sig_names[0])))

static bool flow_is_send(const struct mix_flow *s)
{
    const char *verb = jsonutil_str(s->params, "verb");
    return verb && !strcmp(verb, "send");
}

/* What could see the fault on flow s. A peer-stall leaves every connection up: TCP still
 * acknowledges, and so does the peer's NIC, for a WRITE whatever its application does, for
 * a SEND while the application has a receive posted; once the stalled agent's receives are
 * used up, a SEND meets receiver-not-ready NAKs, which the IBTA has retried without end
 * under rnr_retry 7 (verbs_res.c; ibv_modify_qp(3)), no completion reporting them, only the
 * counters. On Soft-RoCE (Linux 6.1) the queue pair does not wait without end: measured in
 * tests/vm/drill_verbs.sh, a SEND ping-pong's liveness probe met 28-36 RNR NAKs and then
 * failed with "transport retry counter exceeded" about 0.4 s into the stall (timeout 14,
 * retry_cnt 3: completer_retry_err +3, retry_exceeded_err +1), as if the retransmission timer
 * ran on across the RNR NAKs; so retry exceeded can see it there too. */
static unsigned seen_could(const struct mix_flow *s, enum drill_fault fault)
{
    if (!strcmp(s->transport, "nccl"))
        return SIG_DEADLINE | SIG_NCCL;
    if (strcmp(s->transport, "verbs"))
        return fault == DRILL_PEER_STALL ? SIG_DEADLINE : SIG_DEADLINE | SIG_CONN;
    switch (fault) {
    case DRILL_PEER_STALL:
        return SIG_DEADLINE | (flow_is_send(s) ? SIG_RNR | SIG_RETRY : 0u);
    case DRILL_LINK_DOWN:
        return SIG_DEADLINE | SIG_LOCQP | SIG_RETRY;
    default: /* peer-kill, blackhole: nothing acknowledges */
        return SIG_DEADLINE | SIG_RETRY;
    }
}

/* The signal of a lane's detection ("timeout: ...", "error: ..."). */
static unsigned seen_did(const struct mix_flow *s, const char *kind)
{
    if (!kind || !kind[0])
        return 0;
    if (!strncmp(kind, "timeout:", 8))
        return SIG_DEADLINE;
    if (!strcmp(s->transport, "nccl"))
        return SIG_NCCL;
    if (strcmp(s->transport, "verbs"))
        return SIG_CONN;
    /* ibv_wc_status_str(3): "RNR retry counter exceeded", "transport retry counter
     * exceeded", "local QP operation error" */
    if (strstr(kind, "RNR retry counter exceeded"))
        return SIG_RNR;
    if (strstr(kind, "retry counter exceeded"))
        return SIG_RETRY;
    if (strstr(kind, "local QP operation error"))
        return SIG_LOCQP;
    return SIG_WC;
}

static void put_sigs(struct results_str **v, int *n, unsigned sigs)
{
    *v = xalloc_zero(SEEN_NSIG, sizeof(**v));
    *n = 0;
    for (int i = 0; i < SEEN_NSIG; i++)
        if (sigs & (1u << i))
            str(&(*v)[(*n)++], sig_names[i]);
}

/* A moved counter of the window, by name: its delta, or -1 when it did not move. */
static double ctr_delta(const struct results_drill_flow *fo, const char *name)
{
    double sum = -1;
    for (int i = 0; i < fo->ncounters; i++)
        if (!strcmp(fo->counters[i].name.s, name))
            sum = (sum < 0 ? 0 : sum) + fo->counters[i].delta.v;
    return sum;
}

/* The flow's "seen_by": could and did, its queue pair's view (verbs), the error counters
 * of its lanes' RDMA ports that moved over the window (cs, sampled at the injection and at
 * the window's end; NULL: not read, cs_note says why) and the sentence. */
static void put_seen(struct drill *d, int flow, struct results_drill_flow *fo,
                     const struct counters_set *cs, const char *cs_note, double window_s)
{
    const struct mix_flow *s = &d->o->mix->flows[flow];
    bool verbs = !strcmp(s->transport, "verbs");
    unsigned could = seen_could(s, d->o->fault), did = 0;
    for (int k = 0; k < d->nlanes; k++)
        if (d->lanes[k].flow == flow && d->lanes[k].detect_ns)
            did |= seen_did(s, d->lanes[k].detect_kind);
    fo->seen_st = RESULTS_SET;
    if (verbs) {
        fo->counters_st = cs ? RESULTS_SET : RESULTS_NULL;
        num(&fo->counters_window_s, cs != NULL, window_s);
        int nv = 0;
        const struct counters_value *v = cs ? counters_set_values(cs, &nv) : NULL;
        fo->counters = nv ? xalloc_zero((size_t)nv, sizeof(*fo->counters)) : NULL;
        for (int i = 0; i < nv; i++) {
            bool mine = false;
            for (int k = 0; k < d->nlanes && !mine; k++)
                mine = d->lanes[k].flow == flow && !strcmp(d->lanes[k].rdma_obj, v[i].object);
            if (!mine || v[i].source != COUNTERS_SRC_HW || !v[i].error_like ||
                !(v[i].valid & COUNTERS_V_DELTA) || !(v[i].delta > 0))
                continue;
            struct results_drill_counter *c = &fo->counters[fo->ncounters++];
            str(&c->object, v[i].object);
            str(&c->name, v[i].name);
            results_drill_num(&c->delta, v[i].delta);
        }
        /* rcvd_rnr_err counts the RNR NAKs this port's requesters received (rdma_rxe:
         * rxe_comp.c check_ack); port-wide, so it is taken as this flow's only where the
         * flow could meet one. */
        if ((could & SIG_RNR) && ctr_delta(fo, "rcvd_rnr_err") > 0)
            did |= SIG_RNR;
        /* A lane whose first failed completion was a flushed receive (the queue pair was
         * already in error, its send completion not yet polled) failed with the error the
         * port's retry_exceeded_err counted, where the flow could fail so. */
        bool flushed = false, other = false;
        for (int k = 0; k < d->nlanes; k++) {
            const struct lane *l = &d->lanes[k];
            if (l->flow != flow || !l->detect_ns || seen_did(s, l->detect_kind) != SIG_WC)
                continue;
            if (strstr(l->detect_kind, "Work Request Flushed"))
                flushed = true;
            else
                other = true; /* it keeps its completion error */
        }
        if (flushed && (could & SIG_RETRY) && ctr_delta(fo, "retry_exceeded_err") > 0) {
            did |= SIG_RETRY;
            if (!other)
                did &= ~(unsigned)SIG_WC;
        }
    }
    put_sigs(&fo->could, &fo->ncould, could);
    put_sigs(&fo->did, &fo->ndid, did);
    const char *qp = !verbs ? NULL
                     : (did & SIG_RETRY) && (did & SIG_RNR)
                         ? "receiver-not-ready, then retry exceeded"
                     : did & SIG_RETRY ? "retry exceeded"
                     : did & SIG_LOCQP ? "local QP operation error"
                     : did & SIG_RNR   ? "receiver-not-ready"
                     : did & SIG_WC    ? "completion error"
                                       : "saw nothing";
    str(&fo->queue_pair, qp);
    char t[600], moved[300] = "";
    for (int i = 0; i < fo->ncounters; i++) {
        size_t at = strlen(moved);
        snprintf(moved + at, sizeof(moved) - at, "%s%s +%.0f on %s", at ? ", " : "",
                 fo->counters[i].name.s, fo->counters[i].delta.v, fo->counters[i].object.s);
    }
    const char *by = did & SIG_DEADLINE ? "the request's deadline did" : "";
    bool stall = d->o->fault == DRILL_PEER_STALL;
    if (!did) {
        snprintf(t, sizeof(t), "nothing saw the fault%s%s", verbs && !cs ? " (counters: " : "",
                 verbs && !cs ? cs_note : "");
        if (verbs && !cs)
            strncat(t, ")", sizeof(t) - strlen(t) - 1);
    } else if (verbs && stall && !flow_is_send(s) && !(did & ~SIG_DEADLINE)) {
        snprintf(t, sizeof(t),
                 "the peer's NIC still acknowledged every WRITE and liveness probe: the queue "
                 "pair saw nothing; %s%s%s%s",
                 by, moved[0] ? " (moved meanwhile: " : "", moved, moved[0] ? ")" : "");
    } else if (verbs && stall && (did & SIG_RNR)) {
        snprintf(t, sizeof(t),
                 "receiver-not-ready: the stalled agent posted no receives, its NIC answered "
                 "the liveness probe's SEND with RNR NAKs (rnr_retry 7: no completion for "
                 "them)%s: %s%s%s",
                 did & SIG_RETRY ? ", then the queue pair failed with retry exceeded" : "", moved,
                 by[0] ? "; " : "", by);
    } else if (verbs && stall && !(did & ~SIG_DEADLINE)) {
        snprintf(t, sizeof(t), "the queue pair saw nothing (no RNR NAK counted: %s); %s",
                 cs ? "the agent still had receives posted" : cs_note, by);
    } else if (verbs && (did & ~(SIG_DEADLINE | SIG_RNR))) {
        snprintf(t, sizeof(t), "the queue pair: %s%s%s", qp, moved[0] ? " (" : "", moved);
        if (moved[0])
            strncat(t, ")", sizeof(t) - strlen(t) - 1);
    } else if (did & SIG_CONN) {
        snprintf(t, sizeof(t), "the connection's error%s",
                 did & SIG_DEADLINE ? " and the request's deadline" : "");
    } else if (did & SIG_NCCL) {
        snprintf(t, sizeof(t), "the communicator's error (NCCL)");
    } else {
        snprintf(t, sizeof(t), "%s%s", by,
                 !verbs && stall ? " (the connection stayed up: TCP still acknowledged)" : "");
    }
    str(&fo->seen_text, t);
}

/* One repetition: its object in reps, the summary's counts updated; the detection and
 * recovery times into det/rec. */
/* rank-loss: start the victim agent (`fabtop serve` on 127.0.0.1, the drill's key, NCCL
 * allowed) and wait until it answers; on the port it had before, when it is a restart. */
static int victim_start(struct drill *d, struct ft_err *err)
{
    const struct drill_opts *o = d->o;
    if (!d->victim_port) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(sa);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            return ft_err_set(err, -e, "rank-loss: no free port on 127.0.0.1: %s", strerror(e));
        }
        close(fd);
        d->victim_port = ntohs(sa.sin_port);
    }
    char listen[32], key[300], log[300];
    snprintf(listen, sizeof(listen), "127.0.0.1:%u", d->victim_port);
    snprintf(key, sizeof(key), "%s/key", d->victim_dir);
    snprintf(log, sizeof(log), "%s/victim.log", d->victim_dir);
    const char *args[] = {
        o->agent_exe,     "serve",       "--listen", listen,  "--key-file", key,
        "--allow-nccl",   "--max-fault", "0",        "--log", log,          "--exit-with-parent",
        "--max-duration", "86400",       NULL};
    char *argv[sizeof(args) / sizeof(args[0])];
    memcpy(argv, args, sizeof(args)); /* posix_spawn's argv is char *const[]; never written */
    extern char **environ;
    pid_t pid;
    int rc = posix_spawn(&pid, o->agent_exe, NULL, NULL, argv, environ);
    if (rc)
        return ft_err_set(err, -rc, "rank-loss: cannot start the victim agent %s serve: %s",
                          o->agent_exe, strerror(rc));
    d->victim = pid;
    snprintf(d->hp, sizeof(d->hp), "%s", listen);
    /* Up when it completes a handshake (it exits at once on a bad argument). */
    for (int i = 0; i < 200; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            d->victim = 0;
            return ft_err_set(err, -ECHILD,
                              "rank-loss: the victim agent (%s serve) exited at its start with "
                              "status %d: see its log %s",
                              o->agent_exe, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
                              log);
        }
        struct channel_conn *c = NULL;
        struct ft_err e = {0};
        if (channel_connect(d->hp, CHANNEL_DEFAULT_PORT, &d->key, 1000, &c, &e) == 0) {
            channel_close(c);
            return 0;
        }
        sleep_ns(50000000);
    }
    return ft_err_set(err, -ETIMEDOUT, "rank-loss: the victim agent on %s did not answer in 10 s",
                      d->hp);
}

/* The rank loss itself: SIGKILL to the victim, a process of the drill's own (by its PID). */
static void victim_kill(struct drill *d)
{
    if (d->victim <= 0)
        return;
    kill(d->victim, SIGKILL);
    while (waitpid(d->victim, NULL, 0) < 0 && errno == EINTR)
        ;
    d->victim = 0;
}

/* The victim's private directory (mode 0700) and key: 0 or -errno. */
static int victim_prepare(struct drill *d, struct ft_err *err)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(d->victim_dir, sizeof(d->victim_dir), "%s/fabtop-drill-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(d->victim_dir)) {
        int e = errno;
        d->victim_dir[0] = '\0';
        return ft_err_set(err, -e, "rank-loss: cannot make a directory for the victim's key: %s",
                          strerror(e));
    }
    char key[300];
    snprintf(key, sizeof(key), "%s/key", d->victim_dir);
    int rc = channel_key_generate_file(key, err);
    if (rc == 0)
        rc = channel_key_load(key, &d->key, err);
    return rc;
}

static void victim_cleanup(struct drill *d)
{
    victim_kill(d);
    if (!d->victim_dir[0])
        return;
    char p[300];
    snprintf(p, sizeof(p), "%s/key", d->victim_dir);
    unlink(p);
    snprintf(p, sizeof(p), "%s/victim.log", d->victim_dir);
    unlink(p);
    rmdir(d->victim_dir);
    d->victim_dir[0] = '\0';
}

static int one_rep(struct drill *d, int rep, struct results_drill_doc *doc,
                   struct drill_summary *sum, double *det, double *rec, int *ndet, int *nrec,
                   struct ft_err *err)
{
    const struct drill_opts *o = d->o;
    const struct mix *m = o->mix;
    struct channel_conn *fc = d->agents[0];
    double a0 = 0, a1 = 0;
    bool rank_loss = o->fault == DRILL_RANK_LOSS;
    int rc = rank_loss && !d->victim ? victim_start(d, err) : 0;
    if (rc == 0)
        rc = answered_all(d, &a0, err);
    if (rc < 0)
        return rc;
    memset(d->lanes, 0, sizeof(d->lanes));
    atomic_store(&d->inject_ns, 0);
    atomic_store(&d->stop, false);
    d->nlanes = 0;
    memset(d->loads, 0, sizeof(d->loads));
    d->nloads = 0;
    for (int i = 0; i < m->nflows; i++) {
        const struct mix_flow *f = &m->flows[i];
        /* NCCL: one lane drives all of the flow's communicator sets */
        int n = f->op == MIX_OP_PINGPONG || o->fault == DRILL_RANK_LOSS ? 1 : f->concurrency;
        for (int k = 0; k < n; k++) {
            if (f->role == MIX_ROLE_BACKGROUND) {
                struct load *l = &d->loads[d->nloads++];
                l->d = d;
                l->spec = f;
                l->flow = i;
                continue;
            }
            struct lane *l = &d->lanes[d->nlanes++];
            l->d = d;
            l->spec = f;
            l->flow = i;
            /* Its sizes differ between lanes and repetitions, and repeat with the seed. */
            l->rng = f->seed * 1000003u + (uint64_t)k * 7919u + (uint64_t)rep + 1;
        }
    }
    /* The neighbours first: the quiet p99 is then the loaded one, as in a deployment. */
    for (int i = 0; i < d->nloads; i++)
        d->loads[i].started = pthread_create(&d->loads[i].thr, NULL, load_main, &d->loads[i]) == 0;
    for (int i = 0; i < d->nloads; i++)
        while (d->loads[i].started && !atomic_load(&d->loads[i].ready))
            sleep_ns(1000000);
    uint64_t t0 = now_ns();
    for (int i = 0; i < d->nlanes; i++)
        d->lanes[i].started = pthread_create(&d->lanes[i].thr, NULL, lane_main, &d->lanes[i]) == 0;
    for (int i = 0; i < d->nlanes; i++)
        while (d->lanes[i].started && !atomic_load(&d->lanes[i].ready))
            sleep_ns(1000000);
    char start_err[400] = "";
    for (int i = 0; i < d->nlanes && !start_err[0]; i++)
        if (!d->lanes[i].started || d->lanes[i].error[0])
            snprintf(start_err, sizeof(start_err), "flow %s: %s", d->lanes[i].spec->name,
                     d->lanes[i].started ? d->lanes[i].error : "cannot start a thread");
    for (int i = 0; i < d->nloads && !start_err[0]; i++)
        if (!d->loads[i].started || d->loads[i].error[0])
            snprintf(start_err, sizeof(start_err), "flow %s (load): %s", d->loads[i].spec->name,
                     d->loads[i].started ? d->loads[i].error : "cannot start a thread");
    double max_deadline = 0;
    for (int i = 0; i < m->nflows; i++)
        if (m->flows[i].recover.deadline_s > max_deadline)
            max_deadline = m->flows[i].recover.deadline_s;
    uint64_t tinj = 0;
    bool hole = netns_fault(o); /* drill_netns */
    bool stopped = false;
    /* The verbs lanes' RDMA ports: their counters over the fault window, from the injection
     * until the fault is lifted and every lane has seen it (or settled). */
    struct counters_set *cs = NULL;
    char cs_note[300] = "";
    const char *ports[MAX_LANES];
    int nports = 0;
    for (int i = 0; i < d->nlanes && !start_err[0]; i++) {
        bool seen = !d->lanes[i].rdma[0];
        for (int k = 0; k < nports && !seen; k++)
            seen = !strcmp(ports[k], d->lanes[i].rdma);
        if (!seen)
            ports[nports++] = d->lanes[i].rdma;
    }
    if (nports) {
        struct counters_opts co = {.only = ports, .nonly = nports};
        struct ft_err ce = {0};
        if (counters_set_open(&co, &cs, &ce) < 0) {
            snprintf(cs_note, sizeof(cs_note), "not read: %s", ce.msg);
            cs = NULL;
        }
    }
    uint64_t win_ns = 0;
    if (!start_err[0] && !(stopped = !nap(d, (uint64_t)(o->at_s * 1e9)))) {
        if (cs && counters_set_sample_all(cs) < 0) {
            snprintf(cs_note, sizeof(cs_note), "not read: no counter of %s readable", ports[0]);
            counters_set_close(cs);
            cs = NULL;
        }
        if (cs)
            counters_set_mark(cs);
        tinj = now_ns();
        atomic_store(&d->inject_ns, tinj);
        if (hole) {
            rc = drill_netns_on(&d->hole, o->for_s, err);
            /* Injected once the guardian has set it (a fork, an nft run); a link-down when
             * the guardian set the netdev down, which a verbs lane can see before the
             * guardian has reported it (its queue pair fails within about one T_o). */
            tinj = rc == 0 && d->hole.set_ns ? d->hole.set_ns : now_ns();
            atomic_store(&d->inject_ns, tinj);
        } else if (rank_loss) {
            victim_kill(d);
        } else {
            cJSON *req = cJSON_CreateObject(), *resp = NULL;
            cJSON_AddStringToObject(req, "type", "fault.inject");
            /* A blackhole without a namespace: verbs lanes' queue pairs, by the agent. */
            cJSON_AddStringToObject(
                req, "kind", o->fault == DRILL_BLACKHOLE ? "qp-error" : drill_fault_str(o->fault));
            cJSON_AddNumberToObject(req, "for_s", o->for_s);
            rc = channel_request(fc, req, &resp, 5000, err);
            cJSON_Delete(resp);
        }
        if (rc == 0) {
            uint64_t cap = tinj + (uint64_t)((o->for_s + max_deadline + m->fail_bound_s + 1) * 1e9);
            uint64_t min_end = tinj + (uint64_t)((o->for_s + 0.2) * 1e9);
            for (;;) {
                uint64_t now = now_ns();
                if (hole && now >= tinj + (uint64_t)(o->for_s * 1e9))
                    drill_netns_off(&d->hole); /* lifted after --for */
                /* The worker restarted after --for (what a lane without shrink recovers on). */
                if (rank_loss && !d->victim && now >= tinj + (uint64_t)(o->for_s * 1e9)) {
                    struct ft_err ve = {0};
                    if (victim_start(d, &ve) < 0 && rc == 0)
                        rc = ft_err_set(err, ve.code, "%s", ve.msg);
                }
                bool all = true, seen = true;
                for (int i = 0; i < d->nlanes; i++) {
                    all &= atomic_load(&d->lanes[i].settled);
                    seen &= atomic_load(&d->lanes[i].detected) || atomic_load(&d->lanes[i].settled);
                }
                if (cs && !win_ns && seen && now >= tinj + (uint64_t)(o->for_s * 1e9)) {
                    counters_set_sample_all(cs);
                    win_ns = now_ns();
                }
                if (now >= cap || (all && now >= min_end))
                    break;
                if ((stopped = cancelled(d)))
                    break;
                sleep_ns(20000000);
            }
        }
    }
    drill_netns_off(&d->hole); /* also on every early way out */
    if (cs && tinj && !win_ns) {
        counters_set_sample_all(cs);
        win_ns = now_ns();
    }
    atomic_store(&d->stop, true);
    for (int i = 0; i < d->nlanes; i++)
        if (d->lanes[i].started)
            pthread_join(d->lanes[i].thr, NULL);
    uint64_t tend = now_ns();
    for (int i = 0; i < d->nloads; i++)
        if (d->loads[i].started)
            pthread_join(d->loads[i].thr, NULL);
    if (start_err[0] && rc == 0)
        rc = ft_err_set(err, -EHOSTUNREACH, "%s", start_err);
    if (stopped && rc == 0)
        rc = ft_err_set(err, -ECANCELED,
                        "the drill was stopped during repetition %d: the %d "
                        "before it are kept",
                        rep + 1, rep);
    if (rc < 0) {
        for (int i = 0; i < d->nlanes; i++)
            free(d->lanes[i].quiet);
        counters_set_close(cs);
        return rc;
    }
    rc = answered_all(d, &a1, err);

    doc->reps = xalloc_resize(doc->reps, (size_t)(doc->nreps + 1) * sizeof(*doc->reps));
    struct results_drill_rep *r = &doc->reps[doc->nreps++];
    memset(r, 0, sizeof(*r));
    results_drill_num(&r->index, rep);
    results_drill_num(&r->injected_at_s, rel_s(tinj, t0));
    r->flows = xalloc_zero((size_t)m->nflows, sizeof(*r->flows));
    r->nflows = 0;
    put_load(d, r, t0, tinj, tend);
    long completed_all = 0, unanswered_all = 0;
    for (int i = 0; i < m->nflows; i++) {
        const struct mix_flow *s = &m->flows[i];
        if (s->role == MIX_ROLE_BACKGROUND)
            continue;
        uint64_t det_ns = 0, rec_ns = 0, ret_ns = 0;
        bool all_rec = true, all_ret = true, gave_up = false;
        long issued = 0, completed = 0, failed = 0, abandoned = 0, reconnects = 0, failovers = 0;
        const char *on = NULL; /* the failover agent its connections recovered on */
        size_t nq = 0;
        const char *kind = NULL;
        int nl = 0;
        for (int k = 0; k < d->nlanes; k++) {
            struct lane *l = &d->lanes[k];
            if (l->flow != i)
                continue;
            nl++;
            issued += l->issued;
            completed += l->completed;
            failed += l->failed;
            abandoned += l->abandoned;
            reconnects += l->reconnects;
            nq += l->nquiet;
            gave_up |= l->gave_up;
            if (l->detect_ns && (!det_ns || l->detect_ns < det_ns)) {
                det_ns = l->detect_ns;
                kind = l->detect_kind;
            }
            if (l->recovered_ns && l->recovered_on > 0) {
                const char *hp = target_hp(l, l->recovered_on);
                failovers++;
                on = !on || !strcmp(on, hp) ? hp : "several";
            }
            all_rec &= l->recovered_ns != 0;
            all_ret &= l->returned_ns != 0;
            if (l->recovered_ns > rec_ns)
                rec_ns = l->recovered_ns;
            if (l->returned_ns > ret_ns)
                ret_ns = l->returned_ns;
        }
        uint64_t *q = malloc((nq ? nq : 1) * sizeof(*q));
        size_t at = 0;
        for (int k = 0; q && k < d->nlanes; k++)
            if (d->lanes[k].flow == i) {
                memcpy(q + at, d->lanes[k].quiet, d->lanes[k].nquiet * sizeof(*q));
                at += d->lanes[k].nquiet;
            }
        uint64_t p99 = q ? p99_of(q, nq) : 0;
        free(q);
        completed_all += completed;
        unanswered_all += failed + abandoned;
        /* verbs: a vanished peer within the queue pair's own bound; a stalled one at the
         * request's deadline (the queue pair sees nothing wrong: the NIC still answers). */
        double bound = m->fail_bound_s + DETECT_SLACK_S, qp_bound = 0;
        for (int k = 0; k < d->nlanes; k++)
            if (d->lanes[k].flow == i) {
                double b =
                    o->fault == DRILL_PEER_STALL ? d->lanes[k].timeout_s : d->lanes[k].bound_s;
                qp_bound = b > qp_bound ? b : qp_bound;
            }
        if (qp_bound > 0)
            bound = qp_bound + DETECT_SLACK_S;
        bool detected = det_ns != 0;
        bool recovered = detected && all_rec && !gave_up;
        double det_s = detected ? rel_s(det_ns, tinj) : 0;
        double rec_s = recovered ? rel_s(rec_ns, det_ns) : 0;
        bool det_ok = detected && det_s <= bound;
        bool rec_ok = recovered && s->recover.set && rec_s <= s->recover.deadline_s;
        struct results_drill_flow *fo = &r->flows[r->nflows++];
        str(&fo->name, s->name);
        str(&fo->op, mix_op_str(s->op));
        results_drill_num(&fo->connections, nl);
        num(&fo->quiet_p99_us, nq > 0, (double)p99 / 1000);
        num(&fo->detected_at_s, detected, rel_s(det_ns, t0));
        str(&fo->detection, kind);
        num(&fo->recovered_at_s, recovered, rel_s(rec_ns, t0));
        num(&fo->returned_at_s, recovered && all_ret, rel_s(ret_ns, t0));
        num(&fo->detect_s, detected, det_s);
        results_drill_num(&fo->detect_bound_s, bound);
        flag(&fo->detect_ok, det_ok);
        num(&fo->recover_s, recovered, rec_s);
        num(&fo->recover_deadline_s, s->recover.set, s->recover.deadline_s);
        flag(&fo->recover_ok, rec_ok);
        flag(&fo->recovered, recovered);
        results_drill_num(&fo->reconnects, (double)reconnects);
        if (s->recover.nfailover) {
            results_drill_num(&fo->failovers, (double)failovers);
            str(&fo->recovered_on, on);
        }
        if (rank_loss) {
            const struct lane *l = NULL;
            for (int k = 0; k < d->nlanes && !l; k++)
                l = d->lanes[k].flow == i ? &d->lanes[k] : NULL;
            num(&fo->ranks_before, l && l->ranks_before, l ? l->ranks_before : 0);
            num(&fo->ranks_after, l && l->ranks_after, l ? l->ranks_after : 0);
            char how[400];
            if (l && l->rebuilt && l->shrink_error[0])
                snprintf(how, sizeof(how), "%s (no shrink: %s)", l->rebuilt, l->shrink_error);
            else
                snprintf(how, sizeof(how), "%s", l && l->rebuilt ? l->rebuilt : "");
            str(&fo->rebuilt, how[0] ? how : NULL);
        }
        put_seen(d, i, fo, cs, cs_note[0] ? cs_note : "not read", rel_s(win_ns, tinj));
        fo->requests_st = RESULTS_SET;
        results_drill_num(&fo->issued, (double)issued);
        results_drill_num(&fo->completed, (double)completed);
        results_drill_null(&fo->late); /* no SLO in a drill yet */
        results_drill_num(&fo->failed, (double)failed);
        results_drill_num(&fo->abandoned, (double)abandoned);
        results_drill_num(&fo->hanging, (double)(issued - completed - failed - abandoned));
        sum->drills++;
        sum->never_recovered += !recovered;
        sum->broke_bound += !det_ok || !rec_ok;
        if (detected) {
            det[(*ndet)++] = det_s;
            if (det_s > sum->detect_max_s)
                sum->detect_max_s = det_s;
        }
        if (recovered) {
            rec[(*nrec)++] = rec_s;
            if (rec_s > sum->recover_max_s)
                sum->recover_max_s = rec_s;
        }
        if (failed > sum->failed_max)
            sum->failed_max = failed;
        if (abandoned > sum->abandoned_max)
            sum->abandoned_max = abandoned;
    }
    for (int i = 0; i < d->nlanes; i++)
        free(d->lanes[i].quiet);
    counters_set_close(cs);
    bool verbs = false;
    for (int i = 0; i < d->nlanes; i++)
        verbs |= !strcmp(d->lanes[i].spec->transport, "verbs");
    /* The victim is gone; a verbs agent's replies are the NIC's writes, not counted. */
    if (rank_loss || verbs)
        return rc;
    r->agent_st = RESULTS_SET;
    num(&r->answered, rc == 0, a1 - a0);
    results_drill_num(&r->client_completed, (double)completed_all);
    /* A blackhole or a downed link drops what the agent had already written: at most one
     * answer per connection (its request in flight), each one a request the client did not
     * complete. */
    long lost = (long)(a1 - a0) - completed_all;
    long lost_max = !hole ? 0 : unanswered_all < d->nlanes ? unanswered_all : d->nlanes;
    bool agree = rc == 0 && lost >= 0 && lost <= lost_max;
    flag(&r->agree, agree);
    sum->disagree += !agree;
    return rc;
}

static int start_local_agent(struct drill *d, struct ft_err *err)
{
    channel_key_random(&d->key);
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1");
    cfg.key = d->key;
    cfg.max_sessions = 4 * MAX_LANES;
    cfg.max_handshakes = cfg.max_handshakes_addr = 4 * MAX_LANES;
    cfg.max_streams = 1024;
    cfg.max_rate_gbps = 0;
    cfg.max_duration_s = 0;
    int nh;
    const struct agent_handler *const *h = xport_agent_handlers(&nh);
    int rc = agent_start(&cfg, h, nh, &d->agent, err);
    if (rc == 0)
        snprintf(d->hp, sizeof(d->hp), "127.0.0.1:%u", agent_port(d->agent));
    return rc;
}

/* The drill's own sessions: the peer's, then one on each failover agent of its flows (each
 * once), so that their answers are counted too. */
static int open_agents(struct drill *d, struct ft_err *err)
{
    int tmo = fail_ms(d) < 2000 ? 2000 : fail_ms(d);
    snprintf(d->agent_hp[0], sizeof(d->agent_hp[0]), "%s", d->hp);
    d->nagents = 1;
    int rc = dconnect(d->hp, tmo, &d->agents[0], &d->key, err);
    const struct mix *m = d->o->mix;
    for (int i = 0; rc == 0 && i < m->nflows; i++)
        for (int k = 0; rc == 0 && k < m->flows[i].recover.nfailover; k++) {
            const char *hp = m->flows[i].recover.failover[k];
            bool seen = false;
            for (int j = 0; j < d->nagents; j++)
                seen |= !strcmp(d->agent_hp[j], hp);
            if (seen)
                continue;
            if (d->nagents == MAX_AGENTS)
                return ft_err_set(err, -EINVAL, "%s: more than %d failover agents in all",
                                  m->source, MAX_AGENTS - 1);
            snprintf(d->agent_hp[d->nagents], sizeof(d->agent_hp[0]), "%s", hp);
            rc = dconnect(hp, tmo, &d->agents[d->nagents], &d->key, err);
            if (rc < 0) {
                char why[sizeof(err->msg)];
                snprintf(why, sizeof(why), "%s", err->msg);
                return ft_err_set(err, rc, "failover agent %s (flow %s): %s", hp, m->flows[i].name,
                                  why);
            }
            d->nagents++;
        }
    return rc;
}

static void close_agents(struct drill *d)
{
    for (int i = 0; i < MAX_AGENTS; i++)
        if (d->agents[i]) {
            channel_close(d->agents[i]);
            d->agents[i] = NULL;
        }
}

int drill_run(const struct drill_opts *o, cJSON **docp, struct drill_summary *sum,
              struct ft_err *err)
{
    memset(sum, 0, sizeof(*sum));
    *docp = NULL;
    int rc = drill_check_mix_fault(o->mix, o->fault, err);
    if (rc < 0)
        return rc;
    bool rank_loss = o->fault == DRILL_RANK_LOSS;
    const struct mix_flow *nn =
        o->fault == DRILL_BLACKHOLE && !o->netns ? drill_blackhole_needs_netns(o->mix) : NULL;
    if (nn)
        return ft_err_set(err, -EINVAL,
                          "%s: flow %s: a blackhole of a %s flow needs a network namespace "
                          "the drill owns (--netns NAME)",
                          o->mix->source, nn->name, nn->transport);
    /* A verbs lane's link is its RDMA device's netdev, and Soft-RoCE routes its packets in
     * the initial network namespace whatever --netns says (rxe_net.c, rxe_find_route4:
     * ip_route_output_key(&init_net, ...), Linux 6.1): its link-down is that netdev in this
     * process's namespace, --device DEV --owned (a VM's data NIC). */
    for (int i = 0; o->fault == DRILL_LINK_DOWN && !o->owned && i < o->mix->nflows; i++)
        if (o->mix->flows[i].role != MIX_ROLE_BACKGROUND &&
            !strcmp(o->mix->flows[i].transport, "verbs"))
            return ft_err_set(err, -EINVAL,
                              "%s: flow %s: a link-down of a verbs flow takes the RDMA device's "
                              "netdev in this namespace (--device DEV --owned), not --netns",
                              o->mix->source, o->mix->flows[i].name);
    if (rank_loss && (o->peer || !o->agent_exe))
        return ft_err_set(err, -EINVAL, "%s",
                          o->peer ? "rank-loss kills its victim agent: the drill starts one of "
                                    "its own (give no --peer)"
                                  : "rank-loss: no fabtop executable to start the victim agent");
    struct drill *d = calloc(1, sizeof(*d));
    if (!d)
        return ft_err_set(err, -ENOMEM, "out of memory");
    d->o = o;
    if (rank_loss) {
        rc = victim_prepare(d, err);
    } else if (o->peer) {
        snprintf(d->hp, sizeof(d->hp), "%s", o->peer);
        rc = channel_key_load(o->key_file, &d->key, err);
    } else {
        rc = start_local_agent(d, err);
    }
    if (rc == 0 && netns_fault(o))
        rc = drill_netns_init(
            &d->hole, o->fault == DRILL_BLACKHOLE ? DRILL_NETNS_BLACKHOLE : DRILL_NETNS_LINK_DOWN,
            o->netns, o->owned, d->hp, o->data_peer, o->device, CHANNEL_DEFAULT_PORT, err);
    if (rc == 0 && !rank_loss)
        rc = open_agents(d, err);
    if (rc < 0) {
        close_agents(d);
        victim_cleanup(d);
        agent_stop(d->agent);
        channel_key_wipe(&d->key);
        free(d);
        return rc;
    }
    int fds0 = count_dir("/proc/self/fd"), thr0 = count_dir("/proc/self/task");
    struct results_drill_doc doc = {0};
    str(&doc.fabtop, FABTOP_VERSION);
    str(&doc.mix, o->mix->name[0] ? o->mix->name : o->mix->source);
    str(&doc.peer, o->peer     ? o->peer
                   : rank_loss ? "victim agent (fabtop serve on 127.0.0.1, started by the drill)"
                               : "in-process agent");
    if (o->data_peer)
        str(&doc.data_peer, o->data_peer);
    /* The drilled (foreground) flows' transport: TCP, verbs, NCCL, or "mixed". */
    const char *xp = NULL;
    for (int i = 0; i < o->mix->nflows; i++) {
        const struct mix_flow *f = &o->mix->flows[i];
        if (f->role != MIX_ROLE_BACKGROUND)
            xp = !xp || !strcmp(xp, f->transport) ? f->transport : "mixed";
    }
    str(&doc.transport, rank_loss ? "nccl" : xp ? xp : "tcp");
    results_drill_num(&doc.fail_bound_s, o->mix->fail_bound_s);
    doc.fault_st = RESULTS_SET;
    str(&doc.kind, drill_fault_str(o->fault));
    if (d->hole.path[0]) {
        if (!d->hole.owned)
            str(&doc.netns, d->hole.path);
        if (d->hole.dev[0])
            str(&doc.device, d->hole.dev);
    }
    results_drill_num(&doc.at_s, o->at_s);
    results_drill_num(&doc.for_s, o->for_s);
    results_drill_num(&doc.repeat, o->repeat);
    flag(&doc.complete, false);
    cJSON *out = NULL;
    int cap = o->repeat * o->mix->nflows;
    double *det = calloc((size_t)cap, sizeof(double)), *rec = calloc((size_t)cap, sizeof(double));
    int ndet = 0, nrec = 0;
    for (int rep = 0; rep < o->repeat && rc == 0; rep++) {
        rc = one_rep(d, rep, &doc, sum, det, rec, &ndet, &nrec, err);
        doc.summary_st = RESULTS_SET;
        results_drill_num(&doc.drills, sum->drills);
        double *dc = malloc(((size_t)ndet + 1) * sizeof(double));
        double *rcp = malloc(((size_t)nrec + 1) * sizeof(double));
        memcpy(dc, det, (size_t)ndet * sizeof(double));
        memcpy(rcp, rec, (size_t)nrec * sizeof(double));
        stat3(&doc.detect, dc, ndet);
        stat3(&doc.recover, rcp, nrec);
        free(dc);
        free(rcp);
        results_drill_num(&doc.broke_bound, sum->broke_bound);
        results_drill_num(&doc.never_recovered, sum->never_recovered);
        results_drill_num(&doc.agent_disagrees, sum->disagree);
        if (rep + 1 == o->repeat || rc < 0) {
            /* Whatever the agent still tears down (stalled sessions, lingering refusals)
             * ends within a few seconds; then nothing of the drill is left behind. */
            int fds1 = -1, thr1 = -1;
            for (int i = 0; i < 300; i++) {
                fds1 = count_dir("/proc/self/fd");
                thr1 = count_dir("/proc/self/task");
                if (fds1 <= fds0 && thr1 <= thr0)
                    break;
                sleep_ns(10000000);
            }
            doc.process_st = RESULTS_SET;
            results_drill_num(&doc.fds_before, fds0);
            results_drill_num(&doc.fds_after, fds1);
            results_drill_num(&doc.threads_before, thr0);
            results_drill_num(&doc.threads_after, thr1);
            flag(&doc.complete, rc == 0);
        }
        cJSON_Delete(out);
        out = results_drill_write(&doc);
        if (o->progress && (rc == 0 || doc.nreps > 0))
            o->progress(o->arg, out);
    }
    free(det);
    free(rec);
    close_agents(d);
    victim_cleanup(d);
    agent_stop(d->agent);
    channel_key_wipe(&d->key);
    free(d);
    results_drill_free(&doc);
    *docp = out;
    return rc;
}
