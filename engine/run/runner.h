/* runner: runs a mix: phases (quiet, then loaded), flows in parallel through their
 * transports, each flow's setup / warm-up / measure / teardown timed on its own, a sampler
 * that reads counters at 10 Hz and publishes immutable snapshots for the UI, bounded
 * failure detection, and the results document at the end (or on interruption). */
#ifndef RUNNER_H
#define RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/counters/counters.h"
#include "engine/flow/fabric_snap.h"
#include "engine/flow/flow_state.h"
#include "engine/flow/hist.h"
#include "engine/flow/mix.h"
#include "engine/results/results_model.h"

struct topo_model;
struct score_opts;

struct runner_opts {
    const struct mix *mix;
    const char *peer_override;     /* --peer HOST[:PORT] for every flow whose peer is loopback */
    const char *key_file;          /* pre-shared key for remote agents (NULL: default lookup) */
    const struct topo_model *topo; /* for pinning and the results (may be NULL) */
    double snapshot_hz;            /* default 10 */
    bool pin;                      /* pin workers near their endpoint's NUMA node */
    /* Playback of a simulated fabric whose mix gives no params.playback of its own (each
     * field the mix sets wins); NULL: full speed, no skipping, running. Copied at start. */
    const struct sim_ctl_state *playback;
    /* The scoreboard's --slo and step budget (engine/results/score.h); NULL: none. Copied. */
    const struct score_opts *score;
    /* This host's site label (`fabtop run --site NAME`) for the path's class; NULL: none. */
    const char *site;
    /* A sites file (`--sites FILE`, engine/path/path_sites.h): the site of an end that has
     * no label of its own, from its address on the path; NULL: none. Kept by the caller for
     * the runner's life; sites_file names it in the results. */
    const struct path_sites *sites;
    const char *sites_file;
    /* Sample operations for a trace (fabtop run --trace; flow_trace_ops), of every flow but
     * simulated ones (whose times are the fabric's, not this host's); runner_trace_ops. */
    bool trace_ops;
};

enum run_phase {
    RUN_PH_SETUP = 0,
    RUN_PH_WARMUP,
    RUN_PH_MEASURE,
    RUN_PH_TEARDOWN,
    RUN_PH_DONE,
};

/* One flow in a snapshot. valid bits say which numbers are real (n/a otherwise). */
enum {
    SNAP_V_LAT = 1u << 0,  /* lat */
    SNAP_V_RATE = 1u << 1, /* goodput_gbps, ops_per_s (last interval) */
    SNAP_V_WIRE = 1u << 2, /* wire_gbps, wire */
};

#define SNAP_TIMELINE 600 /* last 60 s at 10 Hz */

struct snap_flow {
    char name[32];
    char transport[16];
    int op, role, status, state, point, npoints; /* status, state: engine/flow/flow_state.h */
    uint64_t size;                               /* current point's size (0: distribution) */
    /* Collectives: the point's S and the busbw factor (busbw GB/s = bw_bytes / mean ns x
     * bw_factor, as nccl-tests computes it); bw_factor 0: not a collective. */
    uint64_t bw_bytes;
    double bw_factor;
    unsigned valid;
    struct hist_stats lat; /* current point, measured samples only (ns) */
    double goodput_gbps;   /* payload, Gb/s, last interval */
    double wire_gbps;      /* with headers as a qdisc counts them, last interval */
    double ops_per_s;
    uint64_t tx_bytes, rx_bytes, ops;
    struct flow_wire_snap {
        bool valid;
        uint64_t retrans;
        double rtt_us, rttvar_us;
        uint64_t cwnd_bytes;
    } wire;
    char error[320];
    char brief[200]; /* the values the transport chose (device, GID, MTU, DSCP...) */
    int ntl;         /* timeline points (oldest first) */
    float tl_goodput[SNAP_TIMELINE]; /* Gb/s per interval */
    float tl_t[SNAP_TIMELINE];       /* seconds since the run started */
};

struct runner_snapshot {
    uint64_t gen;    /* increases with every snapshot */
    double t_s;      /* seconds since the run started */
    int phase_index; /* 0 quiet / 1 loaded (or 0 when single) */
    int nphases;
    char phase_name[16]; /* "quiet", "loaded" */
    enum run_phase run_phase;
    double phase_elapsed_s, phase_total_s; /* progress of the current phase */
    bool done;
    int nflows;
    struct snap_flow *flows;
    int fg;           /* foreground flow index */
    int hist_flow;    /* whose histogram hist is: the foreground, or runner_show_hist's */
    struct hist hist; /* that flow's current point, for the histogram view */
    int nevents;
    char events[32][160]; /* most recent last */
    /* Counters of the ports and netdevs the test uses (engine/counters/counters.h), port-wide:
     * they include everyone else's traffic on those ports; then each flow's own counters
     * where it has them (source COUNTERS_SRC_QP: this test's queue pairs). NULL/0 when none. */
    int ncounters;
    struct counters_value *counters;
    /* A simulated fabric's state (its counters are among counters too), from the transport's
     * snapshot hook; NULL when the run has none (yet). */
    struct fabric_snap *fabric;
    _Atomic int refs;
};

struct runner;

/* The transports of this build, for a front end choosing one (the registry, engine/xport/xport.h,
 * stays inside the engine). */
struct runner_transport {
    char name[16];
    unsigned ops; /* operations it can do: bit (1 << MIX_OP_*) */
};
/* The transports in the registry's order: how many (at most max) went into out. */
int runner_transports(struct runner_transport *out, int max);
/* Can transport name run here? 0, -ENOENT when this build has none of that name, or -errno with
 * the reason in why (a library or device missing). */
int runner_transport_available(const char *name, char *why, size_t len);
/* How many devices of its own transport name can use here (nccl: the CUDA devices NCCL and
 * the CUDA runtime see), 0 when none or when it is not available. */
int runner_transport_devices(const char *name);
/* The identity of that transport's device index (xport_ops.device_id: a GPU's PCI bus id),
 * 0 or -errno (-ENOTSUP for a transport without devices). */
int runner_transport_device_id(const char *name, int index, char *buf, size_t len);
/* The flow's transport's own checks (sizes, params), as runner_validate makes them; 0 also when
 * the transport has none. -ENOENT for an unknown transport. */
int runner_validate_flow(const struct mix_flow *f, struct ft_err *err);
/* Validate the mix against the transports: each exists, is available here, can do its
 * flow's operation and accepts its settings. 0 or -errno with the message. */
int runner_validate(const struct mix *mix, struct ft_err *err);
/* Validate the mix (runner_validate) and start running it in the background. */
int runner_start(const struct runner_opts *o, struct runner **out, struct ft_err *err);

/* What runner_check_peers found wrong, for the caller's exit status. */
enum runner_peer_fault {
    RUNNER_PEER_OK = 0,
    RUNNER_PEER_OPTION,  /* peer_override does not parse (bad port or brackets): -EINVAL */
    RUNNER_PEER_ADDRESS, /* a flow's own peer does not parse: -EINVAL */
    RUNNER_PEER_KEY,     /* the key: missing -ENOENT, unreadable or open to others -EACCES,
                            malformed -EINVAL */
    RUNNER_PEER_DENIED,  /* an agent refused us: the keys differ, or not on its allowlist */
    RUNNER_PEER_DOWN,    /* no agent there: refused, unreachable, no such host, timed out, busy,
                            another protocol or version */
};

/* Before runner_start (and after runner_validate): every remote agent the mix's flows use (--peer
 * for loopback flows, or a flow's own peer), each address once: it parses, the key loads, and one
 * authenticated session opens and closes, within the mix's fail_bound_s (at least 1 s). So a run
 * that cannot reach its peer says it once instead of failing every flow. 0 (also when every flow
 * stays in this process), or -errno with the message and *fault. */
int runner_check_peers(const struct runner_opts *o, enum runner_peer_fault *fault,
                       struct ft_err *err);
/* The latest snapshot (never NULL after start); release it when done. Never blocks a
 * worker. */
struct runner_snapshot *runner_snapshot(struct runner *r);
void runner_snapshot_release(struct runner_snapshot *s);
/* A file descriptor that becomes readable when a new snapshot is published (read and
 * discard its bytes), for the UI's poll loop. */
int runner_wake_fd(const struct runner *r);
/* Which flow's histogram the next snapshots carry (index in the mix; -1: the foreground,
 * the default). For a viewer browsing the flows of a running test. */
void runner_show_hist(struct runner *r, int flow);
/* Playback of the run's simulated fabric (enum fabric_play), passed to its transport; the
 * next snapshot, published at once, shows it. 0, -ENOENT when no simulation is running (yet, or
 * any more), -EINVAL for a bad value. */
int runner_playback(struct runner *r, enum fabric_play what, uint64_t arg);
/* Ask it to stop early (Ctrl-C, the UI's stop key): results keep what was measured. */
void runner_stop(struct runner *r);
bool runner_done(const struct runner *r);
/* Wait for the end; returns the results document (owned by the runner). */
const cJSON *runner_wait(struct runner *r);
/* The same as the results model (owned by the runner; NULL when the run built none).
 * runner_wait and runner_results may both be called, each more than once. */
const struct results_doc *runner_results(struct runner *r);
/* Worst outcome: 0 all flows ok, 2 some flow failed. */
int runner_status(const struct runner *r);
void runner_free(struct runner *r);

/* The operations sampled for runner_opts.trace_ops, once runner_wait returned: fn for each
 * with its phase, the flow's index in the mix, the worker, its start and end in seconds since
 * the run started (the span the latency recorded: a half round trip is half of it) and its
 * size point. */
void runner_trace_ops(const struct runner *r,
                      void (*fn)(void *arg, int phase, int flow, int worker, double t0_s,
                                 double t1_s, int point),
                      void *arg);

#endif
