/* runner: phases, flow drivers, the 10 Hz sampler and snapshot publication, failure
 * detection by progress deadlines, and the results document. */
/* CPU sets, pthread_setaffinity_np and pipe2 are GNU extensions. */
#define _GNU_SOURCE
#include "engine/run/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/run/run_path.h"
#include "engine/flow/flow.h"
#include "engine/path/path_sites.h"
#include "engine/results/results.h"
#include "engine/results/results_json.h"
#include "engine/results/score.h"
#include "engine/xport/xport.h"
#include "topology/topo_model.h"

#define MAX_EVENTS 512

/* Sampler-side memory of a flow: previous counters for interval rates, the timeline. */
struct flow_tl {
    uint64_t t_ns, goodput, wire, ops;
    bool have_prev;
    int n;
    float t[SNAP_TIMELINE * 10];
    float goodput_gbps[SNAP_TIMELINE * 10];
    float wire_gbps[SNAP_TIMELINE * 10];
    float ops_per_s[SNAP_TIMELINE * 10];
    double last_goodput, last_wire, last_ops;
    bool last_wire_valid, last_valid;
};

struct phase_rt {
    char name[16];
    struct flow_rt *flows[MIX_MAX_FLOWS]; /* NULL: flow not in this phase */
    struct flow_tl *tl[MIX_MAX_FLOWS];
    pthread_t drivers[MIX_MAX_FLOWS];
    uint64_t t0_ns, t1_ns;
    _Atomic bool fg_done; /* every foreground flow finished */
    double planned_s;
};

struct runner {
    struct runner_opts o;
    struct mix mix;
    struct flow_host host;         /* what the flows get of the run (engine/flow/flow.h) */
    struct sim_ctl_state playback; /* runner_opts.playback, copied */
    struct score_opts score;       /* runner_opts.score, copied */
    struct agent *loop_agent;
    struct channel_key loop_key, key;
    bool key_loaded;
    char key_error[512];
    pthread_t main_thread, sampler_thread;
    _Atomic bool stop, done, sampler_exit;
    _Atomic bool republish; /* runner_playback: publish a snapshot now */
    /* The sampler and the flow drivers sleep on tick_cv until their next deadline, woken
     * early by runner_nudge (a stop, a failure, a phase's or the run's end): no wake-ups in
     * between, whose scheduling on an idle CPU moves a test's own threads around (a loopback
     * stream's two ends, split by the idle balancing that follows each). */
    pthread_mutex_t tick_mu;
    pthread_cond_t tick_cv;
    _Atomic int hist_flow; /* runner_show_hist: whose histogram snapshots carry (-1: fg) */
    int wake[2];
    pthread_mutex_t snap_lock;
    struct runner_snapshot *snap;
    uint64_t gen;
    _Atomic int cur_phase;
    int nphases;
    struct phase_rt phases[2];
    pthread_mutex_t ev_lock;
    int nevents;
    char events[MAX_EVENTS][160];
    uint64_t t_start_ns;
    struct timespec wall_start, wall_end;
    struct results_doc doc; /* the results (results_build) */
    cJSON *results;         /* ... as written (results_json_write) */
    bool joined;            /* runner_main has been joined */
    int status;
    bool interrupted;
    /* Counters of the test's ports and netdevs (port-wide). A thread of their own reads them:
     * qdisc dumps and ethtool ioctls wait for the kernel's RTNL lock (held for seconds while
     * namespaces are torn down, say) and firmware counters for the firmware, which must
     * never delay the sampler's failure detection. ctr_lock guards the set (read, marked at
     * a phase's start, its deltas kept at the end); pub_lock the copy snapshots take. */
    struct counters_set *ctrs;
    pthread_t ctr_thread;
    pthread_mutex_t ctr_lock, pub_lock;
    struct counters_value *pub;
    int npub;
    cJSON *phase_ctrs[2];
    struct run_path path; /* the foreground's peer: TTL, site, its counters (run_path.h) */
    char site_local[64];  /* this end's site: --site, or the sites file's */
    char site_from[300];  /* where the labels came from, when a sites file gave one */
};

/* ---- clocks and small helpers ---- */

/* Wake every thread in runner_sleep: something it waits for may have happened. The flag or
 * state it checks is set before this call. */
static void runner_nudge(struct runner *r)
{
    pthread_mutex_lock(&r->tick_mu);
    pthread_cond_broadcast(&r->tick_cv);
    pthread_mutex_unlock(&r->tick_mu);
}

/* Sleep until CLOCK_MONOTONIC `until` (ns) or until done(arg), checked under tick_mu so that
 * no nudge is lost between the check and the wait. */
static void runner_sleep(struct runner *r, uint64_t until, bool (*done)(void *), void *arg)
{
    struct timespec ts = {(time_t)(until / 1000000000ull), (long)(until % 1000000000ull)};
    pthread_mutex_lock(&r->tick_mu);
    while (!done(arg) && flow_now_ns() < until)
        if (pthread_cond_timedwait(&r->tick_cv, &r->tick_mu, &ts) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&r->tick_mu);
}

static void runner_event(struct runner *r, const char *fmt, va_list ap)
{
    char line[160];
    double t = (flow_now_ns() - r->t_start_ns) / 1e9;
    int n = snprintf(line, sizeof(line), "%7.3fs ", t);
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    pthread_mutex_lock(&r->ev_lock);
    if (r->nevents < MAX_EVENTS)
        snprintf(r->events[r->nevents++], sizeof(r->events[0]), "%s", line);
    pthread_mutex_unlock(&r->ev_lock);
}

static void revent(struct runner *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void revent(struct runner *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    runner_event(r, fmt, ap);
    va_end(ap);
}

/* struct flow_host's side: the flows' events and failures. */
static void host_event(void *ctx, const char *line)
{
    revent(ctx, "%s", line);
}

static void host_nudge(void *ctx)
{
    runner_nudge(ctx);
}

/* Payload delivered: what the receiving side(s) got. For a TCP sender that is what the peer
 * acknowledged (bytes in socket buffers are not delivered yet). */
static uint64_t delivered(const struct flow_rt *f, uint64_t tx, uint64_t rx,
                          const struct flow_wire *w)
{
    const struct mix_flow *s = f->spec;
    bool tx_side = s->op != MIX_OP_STREAM || s->dir != MIX_DIR_RX;
    bool rx_side = s->op != MIX_OP_STREAM || s->dir != MIX_DIR_TX;
    uint64_t out = 0;
    if (tx_side)
        out += (w && w->valid && s->op == MIX_OP_STREAM) ? w->acked_bytes : tx;
    if (rx_side)
        out += rx;
    return out;
}

/* The sampler thread's look at the transport's counters; never once the flow's driver has
 * torn the transport down (it frees what sample reads). */
static void sample_wire(struct flow_rt *f, struct flow_wire *w)
{
    memset(w, 0, sizeof(*w));
    pthread_mutex_lock(&f->xp_lock);
    if (!f->xp_gone && f->xp && f->xp->sample)
        f->xp->sample(f, w);
    pthread_mutex_unlock(&f->xp_lock);
}

/* The run was stopped or the flow failed. */
static bool flow_must_end(void *arg)
{
    struct flow_rt *f = arg;
    return atomic_load(&((struct runner *)f->host->ctx)->stop) || flow_state(f) == FLOW_ST_STOP;
}

/* Wait up to ns, waking early on stop/failure; returns false if the flow must end. */
static bool wait_or_stop(struct flow_rt *f, uint64_t ns)
{
    runner_sleep(f->host->ctx, flow_now_ns() + ns, flow_must_end, f);
    return !flow_must_end(f);
}

/* A measurement window ends early: the flow must end, or (a background flow that lasts the
 * phase) every foreground flow is done. */
struct window_wait {
    struct flow_rt *f;
    const struct phase_rt *ph;
    bool until_phase_end;
};

static bool window_cut(void *arg)
{
    const struct window_wait *w = arg;
    return flow_must_end(w->f) || (w->until_phase_end && atomic_load(&w->ph->fg_done));
}

/* How long a connection to a remote agent may take. */
static int peer_timeout_ms(const struct mix *m)
{
    int ms = (int)(m->fail_bound_s * 1000);
    return ms < 1000 ? 1000 : ms;
}

/* channel_connect to a remote agent, trying again for up to half a second while it answers
 * "busy": a session that just ended (this run's check of the peer, the previous run's flows)
 * holds its slot until the agent has seen the connection close. */
static int connect_remote(const char *peer, const char *local, const struct channel_key *key,
                          int timeout_ms, struct channel_conn **c, struct ft_err *err)
{
    for (int tries = 0;; tries++) {
        struct ft_err e = {0};
        int rc = channel_connect_from(peer, CHANNEL_DEFAULT_PORT, local, key, timeout_ms, c, &e);
        if (rc != -EBUSY || tries == 5) {
            if (rc < 0)
                ft_err_set(err, rc, "%s", e.msg);
            return rc;
        }
        flow_sleep_ns(100000000);
    }
}

/* The agent a flow talks to: its own peer, or --peer for a loopback flow; NULL when the flow
 * needs no agent or uses the one inside this process. */
static const char *remote_peer(const struct mix_flow *f, const char *peer_override)
{
    const struct xport_ops *xp = xport_find(f->transport);
    if (!xp || !xp->needs_peer)
        return NULL;
    const char *peer = f->peer;
    if (!strcmp(peer, "loopback") && peer_override)
        peer = peer_override;
    return strcmp(peer, "loopback") ? peer : NULL;
}

/* Connect the flow's control session: the in-process loopback agent or a remote one. */
static int connect_peer(struct flow_rt *f, struct ft_err *err)
{
    struct runner *r = f->host->ctx;
    const char *peer = f->spec->peer;
    if (!strcmp(peer, "loopback") && r->o.peer_override)
        peer = r->o.peer_override;
    if (!strcmp(peer, "loopback")) {
        char hp[64];
        snprintf(hp, sizeof(hp), "127.0.0.1:%u", agent_port(r->loop_agent));
        snprintf(f->peer_desc, sizeof(f->peer_desc), "loopback agent %s", hp);
        return channel_connect(hp, 0, &r->loop_key, 2000, &f->ctl, err);
    }
    if (!r->key_loaded)
        return ft_err_set(err, -ENOKEY, "%s", r->key_error);
    snprintf(f->peer_desc, sizeof(f->peer_desc), "%s", peer);
    /* From the flow's local address when it names one: the agent takes data connections only
     * from the session's address. */
    return connect_remote(peer, f->spec->local_ip, &r->key, peer_timeout_ms(&r->mix), &f->ctl, err);
}

/* The workers' CPU time into the flow's conditions ("cpu"), once they are joined: a flow
 * whose workers waited on the run queue for much of the time they were runnable shared its
 * cores with other work (engine/judge: busy-cpu). */
static void record_cpu(struct flow_rt *f)
{
    struct flow_cpu c;
    if (!f->conditions || !flow_cpu_sum(f, &c))
        return;
    cJSON *o = flow_cpu_json(&c);
    pthread_mutex_lock(&f->lock);
    cJSON_DeleteItemFromObjectCaseSensitive(f->conditions, "cpu");
    cJSON_AddItemToObject(f->conditions, "cpu", o);
    pthread_mutex_unlock(&f->lock);
}

static void *flow_drive(void *arg)
{
    struct flow_rt *f = arg;
    struct runner *r = f->host->ctx;
    struct phase_rt *ph = &r->phases[atomic_load(&r->cur_phase)];
    const struct mix_flow *s = f->spec;
    struct ft_err err = {0};
    atomic_store(&f->status, FLOW_RUNNING);
    if (s->start_s > 0 && !wait_or_stop(f, (uint64_t)(s->start_s * 1e9)))
        goto out;
    revent(r, "%s: setting up (%s %s)", s->name, s->transport, mix_op_str(s->op));
    uint64_t t = flow_now_ns();
    if (f->xp->needs_peer && connect_peer(f, &err) < 0) {
        flow_fail(f, "%s", err.msg);
        goto out;
    }
    if (f->xp->setup(f, &err) < 0) {
        flow_fail(f, "%s", err.msg);
        goto out_teardown;
    }
    f->setup_s = (flow_now_ns() - t) / 1e9;
    f->conditions = cJSON_CreateObject();
    if (f->xp->conditions)
        f->xp->conditions(f, f->conditions);
    const char *cpus = r->o.pin ? flow_endpoint_cpus(f) : NULL;
    cJSON_AddStringToObject(f->conditions, "worker_cpus",
                            cpus       ? cpus
                            : r->o.pin ? "not pinned: no NUMA locality known for the endpoint"
                                       : "not pinned (--no-pin)");
    pthread_mutex_lock(&f->lock);
    results_conditions_brief(f->conditions, f->brief, sizeof(f->brief));
    pthread_mutex_unlock(&f->lock);
    atomic_store(&f->state, FLOW_ST_PAUSE);
    if (f->xp->start(f, &err) < 0) {
        flow_fail(f, "%s", err.msg);
        goto out_stop;
    }
    bool until_phase_end =
        s->role == MIX_ROLE_BACKGROUND && s->duration_s == 0 && s->iterations == 0;
    for (int p = 0; p < f->npoints; p++) {
        struct flow_point *pt = &f->points[p];
        atomic_store(&f->point, p);
        atomic_store(&f->state, FLOW_ST_WARMUP);
        if (!wait_or_stop(f, (uint64_t)(s->warmup_s * 1e9)))
            break;
        sample_wire(f, &pt->wire0);
        flow_sum_counters(f, &pt->tx0, &pt->rx0, &pt->ops0);
        pt->t0_ns = flow_now_ns();
        atomic_store(&f->state, FLOW_ST_MEASURE);
        uint64_t dur = (uint64_t)(s->duration_s * 1e9);
        bool cut = false;
        for (;;) {
            if (atomic_load(&r->stop) || flow_state(f) == FLOW_ST_STOP) {
                cut = true;
                break;
            }
            uint64_t now = flow_now_ns();
            if (until_phase_end) {
                if (atomic_load(&ph->fg_done))
                    break;
            } else if (s->iterations) {
                uint64_t tx, rx, ops;
                flow_sum_counters(f, &tx, &rx, &ops);
                if (ops - pt->ops0 >= s->iterations)
                    break;
            } else if (now - pt->t0_ns >= dur) {
                break;
            }
            /* Sleep to the window's end (a stop or a failure wakes it at once); a window of
             * so many operations looks at the count every 2 ms. */
            struct window_wait ww = {f, ph, until_phase_end};
            uint64_t until = s->iterations     ? now + 2000000
                             : until_phase_end ? now + 1000000000
                                               : pt->t0_ns + dur;
            runner_sleep(r, until, window_cut, &ww);
        }
        if (flow_state(f) != FLOW_ST_STOP)
            atomic_store(&f->state, FLOW_ST_PAUSE);
        pt->t1_ns = flow_now_ns();
        flow_sum_counters(f, &pt->tx1, &pt->rx1, &pt->ops1);
        sample_wire(f, &pt->wire1);
        pt->done = true;
        pt->partial = cut;
        if (cut)
            break;
    }
out_stop:
    atomic_store(&f->state, FLOW_ST_STOP);
    f->xp->stop(f);
    record_cpu(f);
out_teardown:
    t = flow_now_ns();
    pthread_mutex_lock(&f->xp_lock);
    f->xp->teardown(f);
    f->xp_gone = true;
    pthread_mutex_unlock(&f->xp_lock);
    f->teardown_s = (flow_now_ns() - t) / 1e9;
out:
    if (f->ctl) {
        channel_close(f->ctl);
        f->ctl = NULL;
    }
    int st = atomic_load(&f->status);
    if (st != FLOW_FAILED)
        atomic_store(&f->status, atomic_load(&r->stop) ? FLOW_STOPPED : FLOW_OK);
    revent(r, "%s: %s", s->name,
           atomic_load(&f->status) == FLOW_OK        ? "done"
           : atomic_load(&f->status) == FLOW_STOPPED ? "stopped"
                                                     : "failed");
    return NULL;
}

/* ---- sampler and snapshots ---- */

static void snapshot_free(struct runner_snapshot *s)
{
    fabric_snap_free(s->fabric);
    free(s->fabric);
    free(s->counters);
    free(s->flows);
    free(s);
}

void runner_snapshot_release(struct runner_snapshot *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1)
        snapshot_free(s);
}

void runner_show_hist(struct runner *r, int flow)
{
    atomic_store(&r->hist_flow, flow);
}

struct runner_snapshot *runner_snapshot(struct runner *r)
{
    pthread_mutex_lock(&r->snap_lock);
    struct runner_snapshot *s = r->snap;
    atomic_fetch_add(&s->refs, 1);
    pthread_mutex_unlock(&r->snap_lock);
    return s;
}

/* Merge a flow's current-point histograms into out (reading live workers). */
static void current_hist(const struct flow_rt *f, int p, struct hist *out, struct hist *tmp)
{
    hist_init(out);
    for (int i = 0; i < f->nworkers; i++) {
        hist_snapshot(&f->workers[i].lat[p], tmp);
        hist_merge(out, tmp);
    }
}

/* Another flow of the phase, to the same peer, that moved within the last `within_s`: proof
 * that the peer and the path are up while f stands still (NULL: none). */
static const struct flow_rt *live_sibling(const struct phase_rt *ph, const struct flow_rt *f,
                                          uint64_t now, double within_s)
{
    for (int i = 0; i < MIX_MAX_FLOWS; i++) {
        const struct flow_rt *o = ph->flows[i];
        if (!o || o == f || o->xp != f->xp || strcmp(o->spec->peer, f->spec->peer) != 0)
            continue;
        enum flow_state st = flow_state(o);
        if (st != FLOW_ST_WARMUP && st != FLOW_ST_MEASURE)
            continue;
        uint64_t last = flow_last_alive(o);
        if (last && (now <= last || (now - last) / 1e9 <= within_s))
            return o;
    }
    return NULL;
}

static void check_progress(struct runner *r, const struct phase_rt *ph, struct flow_rt *f,
                           uint64_t now)
{
    enum flow_state st = flow_state(f);
    if (st != FLOW_ST_WARMUP && st != FLOW_ST_MEASURE)
        return;
    uint64_t last = flow_last_alive(f);
    /* Check early enough that detection stays inside the mix's bound: one sampler period of
     * check granularity, one more for a late sampler tick on a busy host, and half a period
     * for acknowledgements the kernel was still processing when the path died. */
    double deadline = f->progress_deadline_s;
    double margin = 2.5 / r->o.snapshot_hz;
    if (deadline > f->fail_bound_s - margin)
        deadline = f->fail_bound_s - margin;
    if (!last || now <= last || (now - last) / 1e9 <= deadline)
        return;
    /* The stall is still a failure (the mix's bound is the longest silence it accepts), but
     * when a flow to the same peer moved meanwhile the peer is not gone: say what fits, a flow
     * starved behind a full queue (TCP's retransmission timeout doubles from 200 ms at each
     * loss in a row, RFC 6298 5.5: four in a row are 3 s of silence) or a hung worker. */
    const struct flow_rt *o = live_sibling(ph, f, now, deadline);
    if (o)
        flow_fail(f,
                  "no progress for %.2f s (deadline %.2f s) while %s to the same peer moved: "
                  "starved behind a full queue, or its worker hung? (fail_bound_s sets the "
                  "longest stall accepted)",
                  (now - last) / 1e9, deadline, o->spec->name);
    else
        flow_fail(f, "no progress for %.2f s (deadline %.2f s): peer gone or path down?",
                  (now - last) / 1e9, deadline);
}

static void tl_add(struct flow_tl *tl, struct runner *r, struct flow_rt *f, uint64_t now)
{
    uint64_t tx, rx, ops;
    flow_sum_counters(f, &tx, &rx, &ops);
    struct flow_wire w;
    sample_wire(f, &w);
    if (w.valid && (!f->wire.valid || w.acked_bytes > f->wire.acked_bytes || !f->last_ack_ns))
        f->last_ack_ns = now;
    f->wire = w;
    uint64_t good = delivered(f, tx, rx, &w);
    if (tl->have_prev && now > tl->t_ns) {
        double dt = (now - tl->t_ns) / 1e9;
        tl->last_goodput = (good - tl->goodput) * 8 / dt / 1e9;
        tl->last_ops = (ops - tl->ops) / dt;
        tl->last_wire_valid = w.valid;
        tl->last_wire = w.valid ? (w.wire_bytes - tl->wire) * 8 / dt / 1e9 : 0;
        tl->last_valid = true;
        if (tl->n < SNAP_TIMELINE * 10) {
            tl->t[tl->n] = (float)((now - r->t_start_ns) / 1e9);
            tl->goodput_gbps[tl->n] = (float)tl->last_goodput;
            tl->wire_gbps[tl->n] = (float)tl->last_wire;
            tl->ops_per_s[tl->n] = (float)tl->last_ops;
            tl->n++;
        }
    }
    tl->t_ns = now;
    tl->goodput = good;
    tl->wire = w.valid ? w.wire_bytes : 0;
    tl->ops = ops;
    tl->have_prev = true;
}

/* The counters' latest values for the snapshots (call with ctr_lock held). */
static void publish_counters(struct runner *r)
{
    int n;
    const struct counters_value *v = counters_set_values(r->ctrs, &n);
    pthread_mutex_lock(&r->pub_lock);
    if (n > r->npub)
        r->pub = xalloc_resize(r->pub, (size_t)n * sizeof(*v));
    memcpy(r->pub, v, (size_t)n * sizeof(*v));
    r->npub = n;
    pthread_mutex_unlock(&r->pub_lock);
}

/* A transport's own state for the snapshot (a simulated fabric), through its snapshot hook. */
static struct fabric_snap *transport_state(const struct runner *r)
{
    for (const struct xport_ops *const *x = xport_all(); *x; x++) {
        if (!(*x)->snapshot)
            continue;
        struct fabric_snap *fs = xalloc_zero(1, sizeof(*fs));
        if ((*x)->snapshot(&r->host, fs) == 0)
            return fs;
        free(fs);
    }
    return NULL;
}

/* The test's counters into a snapshot, as a copy; never waits for a counter read. A
 * simulated fabric's counters (per NIC and switch port) follow. */
static void copy_counters(struct runner *r, struct runner_snapshot *s)
{
    int nsim = s->fabric ? s->fabric->ncounters : -1;
    if (r->ctrs || nsim > 0) {
        if (r->ctrs)
            pthread_mutex_lock(&r->pub_lock);
        int nhost = r->ctrs ? r->npub : 0, n = nhost + (nsim > 0 ? nsim : 0);
        s->counters = xalloc((size_t)(n ? n : 1) * sizeof(*s->counters));
        if (nhost)
            memcpy(s->counters, r->pub, (size_t)nhost * sizeof(*r->pub));
        if (r->ctrs)
            pthread_mutex_unlock(&r->pub_lock);
        if (nsim > 0)
            memcpy(s->counters + nhost, s->fabric->counters,
                   (size_t)nsim * sizeof(*s->fabric->counters));
        s->ncounters = n;
    }
}

/* Each flow's own counters (verbs: its queue pairs' RDMA counter, engine/counters/counters_qp.h)
 * after the port-wide ones; their source, COUNTERS_SRC_QP, and object tell them apart. */
static void copy_own_counters(struct runner_snapshot *s, const struct phase_rt *ph, int nflows)
{
    for (int i = 0; i < nflows; i++) {
        struct flow_rt *f = ph->flows[i];
        if (!f)
            continue;
        pthread_mutex_lock(&f->lock);
        if (f->nown > 0) {
            size_t n = (size_t)(s->ncounters + f->nown);
            s->counters = xalloc_resize(s->counters, n * sizeof(*s->counters));
            memcpy(s->counters + s->ncounters, f->own, (size_t)f->nown * sizeof(*f->own));
            s->ncounters += f->nown;
        }
        pthread_mutex_unlock(&f->lock);
    }
}

static struct runner_snapshot *build_snapshot(struct runner *r, bool final)
{
    struct runner_snapshot *s = xalloc_zero(1, sizeof(*s));
    atomic_init(&s->refs, 1);
    uint64_t now = flow_now_ns();
    int phi = atomic_load(&r->cur_phase);
    struct phase_rt *ph = &r->phases[phi];
    s->gen = ++r->gen;
    s->t_s = (now - r->t_start_ns) / 1e9;
    s->phase_index = phi;
    s->nphases = r->nphases;
    snprintf(s->phase_name, sizeof(s->phase_name), "%s", ph->name);
    s->phase_total_s = ph->planned_s;
    s->phase_elapsed_s = ph->t0_ns ? (now - ph->t0_ns) / 1e9 : 0;
    s->done = final;
    s->nflows = r->mix.nflows;
    s->fg = mix_foreground(&r->mix);
    int hf = atomic_load(&r->hist_flow);
    s->hist_flow = hf >= 0 && hf < r->mix.nflows ? hf : s->fg;
    s->flows = xalloc_zero((size_t)s->nflows, sizeof(*s->flows));
    struct hist *tmp = xalloc(sizeof(*tmp));
    struct hist *merged = xalloc(sizeof(*merged));
    int worst = RUN_PH_DONE;
    for (int i = 0; i < s->nflows; i++) {
        struct snap_flow *sf = &s->flows[i];
        const struct mix_flow *spec = &r->mix.flows[i];
        snprintf(sf->name, sizeof(sf->name), "%s", spec->name);
        snprintf(sf->transport, sizeof(sf->transport), "%s", spec->transport);
        sf->op = spec->op;
        sf->role = spec->role;
        struct flow_rt *f = ph->flows[i];
        if (!f) {
            sf->status = FLOW_PENDING;
            sf->state = FLOW_ST_SETUP;
            continue;
        }
        sf->status = atomic_load(&f->status);
        sf->state = flow_state(f);
        sf->point = atomic_load(&f->point);
        sf->npoints = f->npoints;
        sf->size = f->points[sf->point].size;
        sf->bw_bytes = f->points[sf->point].bw_bytes;
        sf->bw_factor = f->bw_factor;
        flow_sum_counters(f, &sf->tx_bytes, &sf->rx_bytes, &sf->ops);
        struct flow_tl *tl = ph->tl[i];
        if (tl->last_valid) {
            sf->valid |= SNAP_V_RATE;
            sf->goodput_gbps = tl->last_goodput;
            sf->ops_per_s = tl->last_ops;
            if (tl->last_wire_valid) {
                sf->valid |= SNAP_V_WIRE;
                sf->wire_gbps = tl->last_wire;
            }
        }
        sf->wire.valid = f->wire.valid;
        sf->wire.retrans = f->wire.retrans;
        sf->wire.rtt_us = f->wire.rtt_us;
        sf->wire.rttvar_us = f->wire.rttvar_us;
        sf->wire.cwnd_bytes = f->wire.cwnd_bytes;
        if (mix_latency_kind_of(spec) != MIX_LAT_NONE) {
            current_hist(f, sf->point, merged, tmp);
            if (atomic_load(&merged->count)) {
                hist_stats(merged, &sf->lat);
                sf->valid |= SNAP_V_LAT;
            }
            if (i == s->hist_flow)
                memcpy(&s->hist, merged, sizeof(*merged));
        }
        int first = tl->n > SNAP_TIMELINE ? tl->n - SNAP_TIMELINE : 0;
        sf->ntl = tl->n - first;
        memcpy(sf->tl_goodput, tl->goodput_gbps + first, (size_t)sf->ntl * sizeof(float));
        memcpy(sf->tl_t, tl->t + first, (size_t)sf->ntl * sizeof(float));
        pthread_mutex_lock(&f->lock);
        snprintf(sf->error, sizeof(sf->error), "%s", f->error);
        snprintf(sf->brief, sizeof(sf->brief), "%s", f->brief);
        pthread_mutex_unlock(&f->lock);
        int rp = sf->state == FLOW_ST_SETUP     ? RUN_PH_SETUP
                 : sf->state == FLOW_ST_WARMUP  ? RUN_PH_WARMUP
                 : sf->state == FLOW_ST_MEASURE ? RUN_PH_MEASURE
                 : sf->status == FLOW_RUNNING   ? RUN_PH_TEARDOWN
                                                : RUN_PH_DONE;
        if (spec->role == MIX_ROLE_FOREGROUND && rp < worst)
            worst = rp;
    }
    s->run_phase = final ? RUN_PH_DONE : (enum run_phase)worst;
    free(tmp);
    free(merged);
    s->fabric = transport_state(r);
    copy_counters(r, s);
    copy_own_counters(s, ph, s->nflows);
    pthread_mutex_lock(&r->ev_lock);
    int first = r->nevents > 32 ? r->nevents - 32 : 0;
    s->nevents = r->nevents - first;
    for (int i = 0; i < s->nevents; i++)
        snprintf(s->events[i], sizeof(s->events[i]), "%s", r->events[first + i]);
    pthread_mutex_unlock(&r->ev_lock);
    return s;
}

static void publish(struct runner *r, struct runner_snapshot *s)
{
    pthread_mutex_lock(&r->snap_lock);
    struct runner_snapshot *old = r->snap;
    r->snap = s;
    pthread_mutex_unlock(&r->snap_lock);
    runner_snapshot_release(old);
    char b = 1;
    if (write(r->wake[1], &b, 1) < 0) {
        /* the pipe is full: the UI has a wake-up pending already */
    }
}

static bool sampler_wake(void *arg)
{
    struct runner *r = arg;
    return atomic_load(&r->sampler_exit) || atomic_load(&r->republish);
}

static void *sampler(void *arg)
{
    struct runner *r = arg;
    uint64_t period = (uint64_t)(1e9 / r->o.snapshot_hz);
    uint64_t next = flow_now_ns() + period;
    while (!atomic_load(&r->sampler_exit)) {
        uint64_t now = flow_now_ns();
        bool due = now >= next;
        /* Between ticks only for runner_playback: a snapshot that shows the request. */
        bool asked = atomic_exchange(&r->republish, false);
        if (!due && !asked) {
            runner_sleep(r, next, sampler_wake, r);
            continue;
        }
        if (due) {
            next += period;
            if (next < now)
                next = now + period;
            struct phase_rt *ph = &r->phases[atomic_load(&r->cur_phase)];
            for (int i = 0; i < r->mix.nflows; i++) {
                struct flow_rt *f = ph->flows[i];
                if (!f)
                    continue;
                tl_add(ph->tl[i], r, f, now);
                check_progress(r, ph, f, now);
            }
        }
        publish(r, build_snapshot(r, false));
    }
    return NULL;
}

/* The counters' own sampler, at the snapshot rate (firmware-backed counters once a
 * second, see counters_opts); a read that blocks delays only the counters. */
static void *counter_sampler(void *arg)
{
    struct runner *r = arg;
    uint64_t period = (uint64_t)(1e9 / r->o.snapshot_hz);
    while (!atomic_load(&r->sampler_exit)) {
        pthread_mutex_lock(&r->ctr_lock);
        counters_set_sample(r->ctrs);
        publish_counters(r);
        pthread_mutex_unlock(&r->ctr_lock);
        flow_sleep_ns(period);
    }
    return NULL;
}

/* ---- phases ---- */

static double planned_seconds(const struct runner *r, bool quiet)
{
    double total = 0;
    for (int i = 0; i < r->mix.nflows; i++) {
        const struct mix_flow *f = &r->mix.flows[i];
        if (f->role != MIX_ROLE_FOREGROUND)
            continue;
        int points = f->size.kind == MIX_SIZE_SWEEP ? f->size.n : 1;
        double t = f->start_s + points * (f->warmup_s + f->duration_s);
        if (t > total)
            total = t;
    }
    (void)quiet;
    return total;
}

/* Counters at a phase boundary: everything read now, then marked (start) or the deltas
 * since the mark kept for the results (end). */
static void phase_counters(struct runner *r, int phi, bool start)
{
    if (!r->ctrs)
        return;
    pthread_mutex_lock(&r->ctr_lock);
    counters_set_sample_all(r->ctrs);
    if (start) {
        counters_set_mark(r->ctrs);
    } else {
        cJSON_Delete(r->phase_ctrs[phi]);
        r->phase_ctrs[phi] = counters_set_report_json(r->ctrs, true);
    }
    publish_counters(r);
    pthread_mutex_unlock(&r->ctr_lock);
}

static void run_phase(struct runner *r, int phi)
{
    struct phase_rt *ph = &r->phases[phi];
    bool quiet = r->nphases == 2 && phi == 0;
    atomic_store(&r->cur_phase, phi);
    ph->planned_s = planned_seconds(r, quiet);
    phase_counters(r, phi, true);
    run_path_phase(&r->path, phi, true);
    ph->t0_ns = flow_now_ns();
    revent(r, "phase %s: %s", ph->name,
           quiet ? "foreground flows alone" : "all flows (foreground and neighbours)");
    for (int i = 0; i < r->mix.nflows; i++) {
        if (quiet && r->mix.flows[i].role == MIX_ROLE_BACKGROUND)
            continue;
        ph->tl[i] = xalloc_zero(1, sizeof(struct flow_tl));
        ph->flows[i] = flow_new(&r->mix, i, phi, xport_find(r->mix.flows[i].transport), &r->host);
        if (r->o.trace_ops && strcmp(r->mix.flows[i].transport, "sim"))
            flow_trace_ops(ph->flows[i]);
    }
    /* Background flows start first so the foreground is measured under load. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < r->mix.nflows; i++) {
            struct flow_rt *f = ph->flows[i];
            if (!f || (pass == 0) != (f->spec->role == MIX_ROLE_BACKGROUND))
                continue;
            pthread_create(&ph->drivers[i], NULL, flow_drive, f);
        }
    for (int i = 0; i < r->mix.nflows; i++)
        if (ph->flows[i] && ph->flows[i]->spec->role == MIX_ROLE_FOREGROUND)
            pthread_join(ph->drivers[i], NULL);
    atomic_store(&ph->fg_done, true);
    runner_nudge(r);
    for (int i = 0; i < r->mix.nflows; i++)
        if (ph->flows[i] && ph->flows[i]->spec->role == MIX_ROLE_BACKGROUND)
            pthread_join(ph->drivers[i], NULL);
    ph->t1_ns = flow_now_ns();
    phase_counters(r, phi, false);
    run_path_phase(&r->path, phi, false);
}

/* The ends' site labels: each end's own --site, else the sites file's site of its address
 * on the path (this host's from the path session's local address, the peer's from the
 * address it answered on). */
static void apply_sites(struct runner *r)
{
    snprintf(r->site_local, sizeof(r->site_local), "%s", r->o.site ? r->o.site : "");
    if (!r->o.sites || !r->path.ctl)
        return;
    char here[INET6_ADDRSTRLEN] = "";
    struct sockaddr_storage a;
    socklen_t al = sizeof(a);
    if (getsockname(channel_conn_fd(r->path.ctl), (struct sockaddr *)&a, &al) == 0)
        getnameinfo((struct sockaddr *)&a, al, here, sizeof(here), NULL, 0, NI_NUMERICHOST);
    const char *there = channel_peer_host(r->path.ctl);
    const struct path_site_prefix *pl = NULL, *pp = NULL;
    if (!r->site_local[0])
        pl = path_sites_lookup(r->o.sites, here);
    if (!r->path.site_peer[0])
        pp = path_sites_lookup(r->o.sites, there);
    struct strbuf sb;
    strbuf_init(&sb);
    if (pl) {
        snprintf(r->site_local, sizeof(r->site_local), "%s", pl->name);
        strbuf_printf(&sb, "this host %s in %s", here, pl->text);
    }
    if (pp) {
        snprintf(r->path.site_peer, sizeof(r->path.site_peer), "%s", pp->name);
        strbuf_printf(&sb, "%sthe peer %s in %s", pl ? ", " : "", there, pp->text);
    }
    if (sb.len)
        snprintf(r->site_from, sizeof(r->site_from), "%s: %s", r->o.sites_file, sb.s);
    else if (!r->site_local[0] || !r->path.site_peer[0])
        revent(r, "sites file %s: no prefix of it holds %s", r->o.sites_file,
               !r->site_local[0] ? (here[0] ? here : "this host's address") : there);
    strbuf_free(&sb);
}

static void *runner_main(void *arg)
{
    struct runner *r = arg;
    int fg = mix_foreground(&r->mix);
    const char *fgpeer = fg >= 0 ? remote_peer(&r->mix.flows[fg], r->o.peer_override) : NULL;
    r->path.ttl = -1;
    if (fgpeer && r->key_loaded) {
        int same = 0;
        for (int i = 0; i < r->mix.nflows; i++) {
            const char *pi = remote_peer(&r->mix.flows[i], r->o.peer_override);
            same += pi && !strcmp(pi, fgpeer);
        }
        run_path_open(&r->path, fgpeer, r->mix.flows[fg].local_ip, &r->key,
                      peer_timeout_ms(&r->mix), same);
        if (r->path.note[0])
            revent(r, "%s", r->path.note);
    }
    apply_sites(r);
    for (int p = 0; p < r->nphases && !atomic_load(&r->stop); p++)
        run_phase(r, p);
    r->interrupted = atomic_load(&r->stop);
    clock_gettime(CLOCK_REALTIME, &r->wall_end);
    atomic_store(&r->sampler_exit, true);
    runner_nudge(r);
    pthread_join(r->sampler_thread, NULL);
    if (r->ctrs)
        pthread_join(r->ctr_thread, NULL);

    struct results_input in = {
        .mix = &r->mix,
        .topo = r->o.topo,
        .score = &r->score,
        .nphases = r->nphases,
        .wall_start = r->wall_start,
        .wall_end = r->wall_end,
        .t_start_ns = r->t_start_ns,
        .interrupted = r->interrupted,
        .nevents = r->nevents,
        .events = (const char(*)[160])r->events,
    };
    for (int p = 0; p < r->nphases; p++) {
        in.phases[p].name = r->phases[p].name;
        in.phases[p].t0_ns = r->phases[p].t0_ns;
        in.phases[p].t1_ns = r->phases[p].t1_ns;
        in.phases[p].counters = r->phase_ctrs[p];
        for (int i = 0; i < r->mix.nflows; i++) {
            in.phases[p].flows[i] = r->phases[p].flows[i];
            struct flow_tl *tl = r->phases[p].tl[i];
            if (tl) {
                in.phases[p].tl[i].n = tl->n;
                in.phases[p].tl[i].t = tl->t;
                in.phases[p].tl[i].goodput_gbps = tl->goodput_gbps;
                in.phases[p].tl[i].wire_gbps = tl->wire_gbps;
                in.phases[p].tl[i].ops_per_s = tl->ops_per_s;
            }
            struct flow_rt *f = r->phases[p].flows[i];
            if (f && atomic_load(&f->status) == FLOW_FAILED)
                r->status = 2;
        }
    }
    struct results_path_in pin;
    run_path_input(&r->path, r->site_local[0] ? r->site_local : NULL, &pin);
    pin.site_from = r->site_from[0] ? r->site_from : NULL;
    in.path = &pin;
    results_build(&in, &r->doc);
    r->results = results_json_write(&r->doc);
    publish(r, build_snapshot(r, true));
    atomic_store(&r->done, true);
    char b = 1;
    if (write(r->wake[1], &b, 1) < 0) {
        /* best effort */
    }
    return NULL;
}

/* The counters of the ports and netdevs the mix uses (engine/counters/counters.h); a run goes on
 * without them. Each verbs flow adds its own queue pairs' counter (engine/counters/counters_qp.h).
 */
static void open_counters(struct runner *r)
{
    struct ft_err err = {0};
    pthread_mutex_init(&r->ctr_lock, NULL);
    pthread_mutex_init(&r->pub_lock, NULL);
    if (counters_set_for_mix(&r->mix, r->o.peer_override, xport_local_port, r->o.topo, &r->ctrs,
                             &err) < 0) {
        revent(r, "counters: none (%s)", err.msg);
        return;
    }
    counters_set_sample_all(r->ctrs);
    publish_counters(r);
    pthread_create(&r->ctr_thread, NULL, counter_sampler, r);
    const char *const *obj;
    int n = counters_set_objects(r->ctrs, &obj);
    struct strbuf sb;
    strbuf_init(&sb);
    for (int i = 0; i < n && sb.len < 100; i++) {
        const char *sp = strchr(obj[i], ' ');
        strbuf_printf(&sb, "%s%.*s", i ? ", " : "", sp ? (int)(sp - obj[i]) : (int)strlen(obj[i]),
                      obj[i]);
    }
    revent(r, "counters (port-wide, include other traffic): %s", sb.s);
    strbuf_free(&sb);
}

/* ---- public API ---- */

int runner_transports(struct runner_transport *out, int max)
{
    int n = 0;
    for (const struct xport_ops *const *x = xport_all(); *x && n < max; x++, n++) {
        snprintf(out[n].name, sizeof(out[n].name), "%s", (*x)->name);
        out[n].ops = (*x)->ops;
    }
    return n;
}

int runner_transport_available(const char *name, char *why, size_t len)
{
    const struct xport_ops *xp = xport_find(name);
    if (!xp)
        return -ENOENT;
    return xp->available(why, len);
}

int runner_transport_devices(const char *name)
{
    const struct xport_ops *xp = xport_find(name);
    return xp && xp->devices ? xp->devices() : 0;
}

int runner_transport_device_id(const char *name, int index, char *buf, size_t len)
{
    const struct xport_ops *xp = xport_find(name);
    return xp && xp->device_id ? xp->device_id(index, buf, len) : -ENOTSUP;
}

int runner_validate_flow(const struct mix_flow *f, struct ft_err *err)
{
    const struct xport_ops *xp = xport_find(f->transport);
    if (!xp)
        return ft_err_set(err, -ENOENT, "flow %s: unknown transport '%s'", f->name, f->transport);
    return xp->validate ? xp->validate(f, err) : 0;
}

int runner_validate(const struct mix *mix, struct ft_err *err)
{
    int krc = xport_check_params(mix, err);
    if (krc < 0)
        return krc;
    for (int i = 0; i < mix->nflows; i++) {
        const struct mix_flow *f = &mix->flows[i];
        const struct xport_ops *xp = xport_find(f->transport);
        char why[256] = "";
        if (!xp)
            return ft_err_set(err, -ENOENT, "flow %s: unknown transport '%s'", f->name,
                              f->transport);
        if ((xp->available_flow ? xp->available_flow(f, why, sizeof(why))
                                : xp->available(why, sizeof(why))) < 0)
            return ft_err_set(err, -ENOSYS, "flow %s: transport %s is unavailable here: %s",
                              f->name, f->transport, why);
        if (!(xp->ops & (1u << f->op)))
            return ft_err_set(err, -EINVAL, "flow %s: transport %s cannot do %s", f->name,
                              f->transport, mix_op_str(f->op));
        if (xp->validate) {
            int rc = xp->validate(f, err);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

int runner_start(const struct runner_opts *o, struct runner **out, struct ft_err *err)
{
    *out = NULL;
    const struct mix *mix = o->mix;
    int vrc = runner_validate(mix, err);
    if (vrc < 0)
        return vrc;
    bool any_loopback = false, any_remote = false;
    for (int i = 0; i < mix->nflows; i++) {
        const struct mix_flow *f = &mix->flows[i];
        const struct xport_ops *xp = xport_find(f->transport);
        if (xp->needs_peer) {
            bool lb = !strcmp(f->peer, "loopback");
            any_loopback |= lb && !o->peer_override;
            any_remote |= !lb || o->peer_override;
        }
    }
    struct runner *r = xalloc_zero(1, sizeof(*r));
    r->o = *o;
    atomic_init(&r->hist_flow, -1);
    r->host = (struct flow_host){
        .ctx = r, .event = host_event, .nudge = host_nudge, .topo = o->topo, .pin = o->pin};
    if (o->score)
        r->score = *o->score;
    if (o->playback) {
        r->playback = *o->playback;
        r->host.playback = &r->playback;
    }
    if (r->o.snapshot_hz <= 0)
        r->o.snapshot_hz = 10;
    mix_copy(&r->mix, mix);
    r->nphases = mix->quiet_then_loaded ? 2 : 1;
    snprintf(r->phases[0].name, sizeof(r->phases[0].name), "%s",
             r->nphases == 2 ? "quiet" : "loaded");
    snprintf(r->phases[1].name, sizeof(r->phases[1].name), "loaded");
    pthread_mutex_init(&r->snap_lock, NULL);
    pthread_mutex_init(&r->tick_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the clock of flow_now_ns */
    pthread_cond_init(&r->tick_cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&r->ev_lock, NULL);
    if (pipe2(r->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        int e = -errno;
        mix_free(&r->mix);
        free(r);
        return ft_err_set(err, e, "runner: pipe: %s", strerror(-e));
    }
    if (any_remote) {
        struct ft_err kerr = {0};
        r->key_loaded = channel_key_load(o->key_file, &r->key, &kerr) == 0;
        snprintf(r->key_error, sizeof(r->key_error), "%s", kerr.msg);
    }
    if (any_loopback) {
        channel_key_random(&r->loop_key);
        struct agent_cfg cfg;
        agent_cfg_defaults(&cfg);
        snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1");
        cfg.port = 0;
        cfg.key = r->loop_key;
        cfg.max_sessions = 2 * MIX_MAX_FLOWS;
        /* Every flow's session comes from 127.0.0.1, all at once. */
        cfg.max_handshakes = cfg.max_handshakes_addr = 2 * MIX_MAX_FLOWS;
        cfg.max_streams = 1024;
        cfg.max_rate_gbps = 0;
        cfg.max_duration_s = 0;
        int nh;
        const struct agent_handler *const *h = xport_agent_handlers(&nh);
        int rc = agent_start(&cfg, h, nh, &r->loop_agent, err);
        if (rc < 0) {
            close(r->wake[0]);
            close(r->wake[1]);
            mix_free(&r->mix);
            free(r);
            return rc;
        }
    }
    r->t_start_ns = flow_now_ns();
    clock_gettime(CLOCK_REALTIME, &r->wall_start);
    open_counters(r);
    r->snap = build_snapshot(r, false);
    pthread_create(&r->sampler_thread, NULL, sampler, r);
    pthread_create(&r->main_thread, NULL, runner_main, r);
    *out = r;
    return 0;
}

int runner_check_peers(const struct runner_opts *o, enum runner_peer_fault *fault,
                       struct ft_err *err)
{
    const struct mix *m = o->mix;
    *fault = RUNNER_PEER_OK;
    const char *seen[MIX_MAX_FLOWS];
    int nseen = 0;
    for (int i = 0; i < m->nflows; i++) {
        const char *peer = remote_peer(&m->flows[i], o->peer_override);
        bool dup = false;
        for (int k = 0; k < nseen && peer; k++)
            dup |= !strcmp(seen[k], peer);
        if (!peer || dup)
            continue;
        seen[nseen++] = peer;
        char host[256];
        uint16_t port;
        struct ft_err why = {0};
        int rc =
            channel_split_host_port(peer, CHANNEL_DEFAULT_PORT, host, sizeof(host), &port, &why);
        if (rc == 0 && (!host[0] || port == 0))
            rc = ft_err_set(&why, -EINVAL, "'%s': %s", peer,
                            host[0] ? "port 0 is not a port to connect to" : "no host name");
        if (rc < 0) {
            bool opt = o->peer_override && !strcmp(peer, o->peer_override);
            *fault = opt ? RUNNER_PEER_OPTION : RUNNER_PEER_ADDRESS;
            if (opt)
                return ft_err_set(err, rc, "--peer: %s", why.msg);
            return ft_err_set(err, rc, "flow %s: peer: %s", m->flows[i].name, why.msg);
        }
    }
    if (!nseen)
        return 0;
    struct channel_key key;
    int rc = channel_key_load(o->key_file, &key, err);
    if (rc < 0) {
        *fault = RUNNER_PEER_KEY;
        return rc;
    }
    for (int k = 0; k < nseen && rc == 0; k++) {
        struct channel_conn *c;
        rc = connect_remote(seen[k], NULL, &key, peer_timeout_ms(m), &c, err);
        if (rc == 0)
            channel_close(c);
        else
            *fault = rc == -EACCES || rc == -EPERM ? RUNNER_PEER_DENIED : RUNNER_PEER_DOWN;
    }
    channel_key_wipe(&key);
    return rc;
}

int runner_wake_fd(const struct runner *r)
{
    return r->wake[0];
}

void runner_stop(struct runner *r)
{
    if (!atomic_exchange(&r->stop, true))
        revent(r, "stop requested: keeping what was measured");
    runner_nudge(r);
}

int runner_playback(struct runner *r, enum fabric_play what, uint64_t arg)
{
    int rc = -ENOENT;
    for (const struct xport_ops *const *x = xport_all(); *x && rc == -ENOENT; x++)
        if ((*x)->control)
            rc = (*x)->control(&r->host, what, arg);
    if (rc < 0)
        return rc;
    /* Have the sampler publish a snapshot with it, and wait (briefly) for that one. */
    pthread_mutex_lock(&r->snap_lock);
    uint64_t g0 = r->snap->gen;
    pthread_mutex_unlock(&r->snap_lock);
    atomic_store(&r->republish, true);
    runner_nudge(r);
    for (int i = 0; i < 1000 && !atomic_load(&r->sampler_exit); i++) {
        pthread_mutex_lock(&r->snap_lock);
        bool fresh = r->snap->gen > g0;
        pthread_mutex_unlock(&r->snap_lock);
        if (fresh)
            break;
        flow_sleep_ns(200000);
    }
    return 0;
}

bool runner_done(const struct runner *r)
{
    return atomic_load(&r->done);
}

static void runner_join(struct runner *r)
{
    if (!r->joined)
        pthread_join(r->main_thread, NULL);
    r->joined = true;
}

const cJSON *runner_wait(struct runner *r)
{
    runner_join(r);
    return r->results;
}

const struct results_doc *runner_results(struct runner *r)
{
    runner_join(r);
    return r->results ? &r->doc : NULL;
}

int runner_status(const struct runner *r)
{
    return r->status;
}

void runner_trace_ops(const struct runner *r,
                      void (*fn)(void *arg, int phase, int flow, int worker, double t0_s,
                                 double t1_s, int point),
                      void *arg)
{
    for (int p = 0; p < r->nphases; p++)
        for (int i = 0; i < r->mix.nflows; i++) {
            const struct flow_rt *f = r->phases[p].flows[i];
            if (!f)
                continue;
            /* A half round trip records half the operation's time. */
            unsigned k = mix_latency_kind_of(f->spec) == MIX_LAT_HALF_RTT ? 2 : 1;
            for (int w = 0; w < f->nworkers_alloc; w++) {
                const struct flow_worker *fw = &f->workers[w];
                for (unsigned j = 0; fw->trace && j < fw->ntrace; j++) {
                    const struct flow_op *op = &fw->trace[j];
                    uint64_t span = op->lat_ns * k;
                    if (op->end_ns < r->t_start_ns + span)
                        continue;
                    fn(arg, p, i, w, (double)(op->end_ns - span - r->t_start_ns) / 1e9,
                       (double)(op->end_ns - r->t_start_ns) / 1e9, op->point);
                }
            }
        }
}

void runner_free(struct runner *r)
{
    if (!r)
        return;
    for (const struct xport_ops *const *x = xport_all(); *x; x++)
        if ((*x)->release)
            (*x)->release(&r->host);
    if (r->loop_agent)
        agent_stop(r->loop_agent);
    for (int p = 0; p < r->nphases; p++)
        for (int i = 0; i < r->mix.nflows; i++) {
            flow_free(r->phases[p].flows[i]);
            free(r->phases[p].tl[i]);
        }
    runner_snapshot_release(r->snap);
    counters_set_close(r->ctrs);
    run_path_close(&r->path);
    for (int p = 0; p < 2; p++)
        cJSON_Delete(r->phase_ctrs[p]);
    pthread_mutex_destroy(&r->ctr_lock);
    pthread_mutex_destroy(&r->pub_lock);
    free(r->pub);
    cJSON_Delete(r->results);
    results_doc_free(&r->doc);
    close(r->wake[0]);
    close(r->wake[1]);
    mix_free(&r->mix);
    pthread_mutex_destroy(&r->snap_lock);
    pthread_mutex_destroy(&r->tick_mu);
    pthread_cond_destroy(&r->tick_cv);
    pthread_mutex_destroy(&r->ev_lock);
    free(r);
}
