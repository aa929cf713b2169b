/* flow: the run-time state of one flow, shared between the runner (which drives phases
 * and samples counters) and the transport (whose workers move the bytes). Workers never
 * block on the runner: they read an atomic state, record into their own histograms and
 * bump their own counters. */
#ifndef FLOW_H
#define FLOW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine/flow/flow_state.h"
#include "engine/flow/hist.h"
#include "engine/flow/mix.h"

struct topo_model;
struct sim_ctl_state;
struct channel_conn;
struct xport_ops;
struct counters_value;

/* An operation sampled for a trace (fabtop run --trace): when it ended (flow_now_ns), the
 * value recorded for it (ns) and its size point. A worker keeps at most FLOW_OPS_MAX; when
 * full, every other one is dropped and it samples half as often from then on, so what is kept
 * spans the whole flow, one operation in trace_every. */
#define FLOW_OPS_MAX 2048
struct flow_op {
    uint64_t end_ns, lat_ns;
    int point;
};

struct flow_worker {
    struct flow_rt *flow;
    int idx;
    pthread_t thread;
    bool started;
    int fd;           /* transport's socket, -1 if none */
    void *xp;         /* transport's per-worker data */
    struct hist *lat; /* one histogram per size point, recorded only by this worker */
    /* A flow with a whole per_step (flow_rt.step_ops): that many consecutive measured
     * operations of this worker summed into one sample, one decode step's share of the flow,
     * one histogram per size point (NULL when the flow is not on the step). */
    struct hist *step;
    uint64_t step_ns;                         /* the step being summed */
    unsigned step_n;                          /* its operations so far */
    int step_point;                           /* its size point */
    uint64_t rng;                             /* size distribution / pacing */
    double tokens;                            /* pacing: bytes this worker may still send now */
    uint64_t tokens_ns;                       /* pacing: when tokens were last topped up */
    _Atomic uint64_t tx_bytes, rx_bytes, ops; /* payload, cumulative over the phase */
    /* Liveness, CLOCK_MONOTONIC ns: bytes received, or waiting by design (paced, paused). */
    _Atomic uint64_t last_progress_ns;
    /* Bytes handed to the kernel. Only a sign of life when the transport cannot tell what
     * the peer acknowledged: writes into a socket buffer succeed on a dead path too. */
    _Atomic uint64_t last_tx_ns;
    /* Its thread's time from start to end (flow_start_workers), and what the scheduler says
     * of it (/proc/thread-self/schedstat): on a CPU, and runnable but waiting for one. Written
     * by the worker as it ends, read after the join. */
    void *(*main)(void *);
    bool sched_ok;
    uint64_t wall_ns, run_ns, wait_ns;
    /* Sampled operations (flow_trace_ops; NULL: none), written by the worker, read once it
     * is joined. */
    struct flow_op *trace;
    unsigned ntrace, trace_every, trace_skip;
};

/* The workers' CPU time over their lives (flow_cpu_sum): a worker that waited on the run
 * queue shared its core with other work. */
struct flow_cpu {
    int workers;                  /* those with a reading */
    double wall_s, run_s, wait_s; /* summed over them */
    double busiest_run_pct;       /* the largest run / wall of one of them, % */
};

/* Counters a transport samples from the kernel (TCP_INFO, ...), cumulative. */
struct flow_wire {
    bool valid;
    uint64_t wire_bytes;      /* payload + per-segment headers as a Linux qdisc counts them */
    uint64_t acked_bytes;     /* bytes the peer acknowledged (tx) */
    uint64_t retrans;         /* retransmitted segments, all connections (tcpi_total_retrans) */
    double rtt_us, rttvar_us; /* smoothed RTT and its variation, mean over connections */
    uint64_t cwnd_bytes;      /* congestion window in bytes (snd_cwnd x snd_mss), summed */
};

/* One measurement point: one size of a sweep (or the whole flow). */
struct flow_point {
    uint64_t size;         /* bytes; 0 for a size distribution */
    uint64_t bw_bytes;     /* nccl-tests' S of the point, for bus bandwidth (0: none) */
    uint64_t t0_ns, t1_ns; /* measure window, CLOCK_MONOTONIC */
    uint64_t tx0, rx0, ops0, tx1, rx1, ops1;
    struct flow_wire wire0, wire1; /* sampled at the window's start and end */
    bool done, partial;            /* measured / cut short (stop or failure) */
};

/* What the run lends its flows: its event log, a way to wake its waits (a failure), the
 * topology for placement. Set by the runner; the same for every flow of a run, so a
 * transport may use its address to tell runs apart. */
struct flow_host {
    void *ctx;
    void (*event)(void *ctx, const char *line); /* one line for the log, time added there */
    void (*nudge)(void *ctx);                   /* something the run waits for happened */
    const struct topo_model *topo;              /* NULL if none */
    bool pin;                                   /* pin workers near their endpoint */
    /* Playback for a simulated fabric whose mix gives no params.playback of its own (each
     * field the mix sets wins); NULL: full speed, no skipping, running. */
    const struct sim_ctl_state *playback;
};

/* The most operations a decode step's share of one flow sums into one sample. */
#define FLOW_MAX_STEP_OPS 100000

struct flow_rt {
    const struct mix_flow *spec; /* &mix->flows[index] */
    const struct mix *mix;       /* the run's mix */
    int index;                   /* in the mix */
    int phase;                   /* the run's phase (0 quiet / 1 loaded, or 0 when single) */
    const struct flow_host *host;
    const struct xport_ops *xp;
    void *xdata;              /* transport's per-flow data */
    struct channel_conn *ctl; /* session with the peer agent */
    char peer_desc[160];      /* "loopback agent 127.0.0.1:34567" */

    _Atomic int state; /* enum flow_state */
    _Atomic int point; /* current point index */
    int npoints;
    struct flow_point points[MIX_MAX_SIZES];
    /* Collectives: busbw = bw_bytes / time x bw_factor (nccl-tests' factor for the
     * collective and rank count), set by the transport at setup; 0: no bus bandwidth. */
    double bw_factor;
    unsigned step_ops;  /* the spec's per_step when whole (1 to FLOW_MAX_STEP_OPS), else 0 */
    int nworkers;       /* in use (a transport may lower it in setup) */
    int nworkers_alloc; /* allocated */
    struct flow_worker *workers;

    _Atomic int status;        /* enum flow_status */
    char error[320];           /* why it failed */
    uint64_t failed_ns;        /* when the failure was detected */
    uint64_t last_progress_ns; /* latest progress of any worker at that moment */
    pthread_mutex_t lock;      /* guards error/failed_ns */
    /* The transport's state between the sampler (xp->sample, another thread) and its
     * teardown, which frees it: xp_gone once torn down. */
    pthread_mutex_t xp_lock;
    bool xp_gone;

    double setup_s, teardown_s; /* timed apart from the transfer */
    double fail_bound_s;        /* detect a dead peer or path within this (mix setting) */
    double progress_deadline_s; /* no progress for this long fails the flow; a transport may
                                 * raise it and fail_bound_s in setup to fit its timeouts */
    struct flow_wire wire;      /* latest sample (sampler thread) */
    uint64_t last_ack_ns;       /* when wire.acked_bytes last grew (sampler thread) */
    cJSON *conditions;          /* test conditions the transport reported after setup */
    char brief[200];            /* one line of them (results_conditions_brief) */
    /* The flow's own counters, apart from the port-wide ones: an RDMA counter bound to its
     * queue pairs (verbs, engine/counters/counters_qp.h), kept by the transport under lock: own,
     * the latest values (NULL: none); own_report, set at teardown for the results: the deltas since
     * binding, or why there are none. The runner frees both. */
    int nown;
    struct counters_value *own;
    cJSON *own_report;
};

/* CLOCK_MONOTONIC in ns. */
uint64_t flow_now_ns(void);
/* Sleep ns, resuming after signals. */
void flow_sleep_ns(uint64_t ns);

/* The run-time state of flow index of mix in the run's phase, through transport xp, its
 * workers allocated (one per connection) with their histograms; freed by flow_free. */
struct flow_rt *flow_new(const struct mix *mix, int index, int phase, const struct xport_ops *xp,
                         const struct flow_host *host);
void flow_free(struct flow_rt *f);
/* Sample f's operations for a trace from now on (before its workers start): each recorded
 * operation of a worker, then one in 2, 4, ... as its FLOW_OPS_MAX fill (a clock read each). */
void flow_trace_ops(struct flow_rt *f);
/* Payload and operations of all workers, cumulative. */
void flow_sum_counters(const struct flow_rt *f, uint64_t *tx, uint64_t *rx, uint64_t *ops);
/* When the flow last showed it is alive (CLOCK_MONOTONIC ns): received bytes, completed
 * operations and waits by design; sent bytes only where the transport cannot see what the
 * peer acknowledged. */
uint64_t flow_last_alive(const struct flow_rt *f);
/* CPU list of the PCI device behind the flow's local endpoint (NULL: not known). */
const char *flow_endpoint_cpus(const struct flow_rt *f);

/* For workers. Call first in a worker thread: pins it near the flow's endpoint (NUMA
 * node of its NIC, from the topology) and starts its progress clock. */
void flow_worker_begin(struct flow_worker *w);
static inline enum flow_state flow_state(const struct flow_rt *f)
{
    return (enum flow_state)atomic_load_explicit(&f->state, memory_order_acquire);
}
/* Record a latency sample if measuring (ns). */
void flow_record(struct flow_worker *w, uint64_t ns);
/* Record a sample of point p (ns), measuring or not: for a transport that decides itself which
 * of its samples fall in the window (one writer per worker). */
void flow_record_point(struct flow_worker *w, int p, uint64_t ns);
/* Count payload moved (any state) and note progress (see last_progress_ns, last_tx_ns). */
void flow_progress(struct flow_worker *w, uint64_t tx, uint64_t rx, uint64_t ops);
/* Size of the next message: the point's size, or a draw from the distribution. */
uint64_t flow_next_size(struct flow_worker *w);
/* Pacing: wait until `bytes` may be sent under the flow's rate limit (no-op if none).
 * Returns false when the flow is stopping. */
bool flow_pace(struct flow_worker *w, uint64_t bytes);
/* Mark the flow failed (first reason wins) and ask every worker to stop. */
void flow_fail(struct flow_rt *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The workers' CPU time, once they are joined: false when no worker has a reading (no
 * schedstat: a kernel without CONFIG_SCHED_INFO, or no worker threads). */
bool flow_cpu_sum(const struct flow_rt *f, struct flow_cpu *out);
/* Add one thread's reading (its life, its time on a CPU, its run-queue wait) to c. */
void flow_cpu_add(struct flow_cpu *c, uint64_t wall_ns, uint64_t run_ns, uint64_t wait_ns);
/* c as conditions.cpu writes it ({workers, wall_s, run_s, runqueue_wait_s,
 * runqueue_wait_pct, busiest_run_pct}); the caller's. */
cJSON *flow_cpu_json(const struct flow_cpu *c);
/* Thread tid's (0: this thread's) time on a CPU and waiting on a run queue so far, ns, from
 * /proc's schedstat; false when the kernel keeps none (no CONFIG_SCHED_INFO) or tid is gone. */
bool flow_sched_read(int tid, uint64_t *run, uint64_t *wait);
/* Start one thread per worker running fn(worker); 0 or -errno (workers already started
 * are joined by flow_join_workers). */
int flow_start_workers(struct flow_rt *f, void *(*fn)(void *), struct ft_err *err);
/* Join every started worker. */
void flow_join_workers(struct flow_rt *f);
/* Block while paused; returns false when the worker should exit. */
bool flow_wait_running(struct flow_worker *w);
/* The node's topology the run was started with (NULL if none), for NUMA placement. */
const struct topo_model *flow_topology(const struct flow_rt *f);
/* Events for the log the explorer shows. */
void flow_event(struct flow_rt *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
