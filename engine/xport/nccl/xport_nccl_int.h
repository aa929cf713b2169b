/* xport_nccl_int: what the files of the NCCL transport share (engine/xport/nccl/): limits,
 * the flow's parameters, the communicator core, the client's flow state, and the functions
 * each file offers the others. Private to engine/xport/nccl/; the transport itself is
 * xport_nccl (engine/xport/xport.h). */
#ifndef XPORT_NCCL_INT_H
#define XPORT_NCCL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/xport/nccl/cudart.h"
#include "engine/xport/nccl/nccl_util.h"
#include "engine/xport/xport.h"

struct agent_handler;

#define NC_MAX_GPUS            16
#define NC_MAX_COMMS           16  /* concurrency: communicator sets issued in a fixed order */
#define NC_EV_MAX              256 /* event pairs per (rank, communicator): longest event batch */
#define NC_HOST_ITERS          20  /* nccl-tests' default -n: launches per host-timed batch */
#define NC_EVENT_ITERS         100 /* operations per event batch (fewer when they are slow) */
#define NC_GATE_MAX            32  /* operations enqueued behind one gate (NCCL's work FIFO) */
#define NC_EVENT_BATCH         50000000ull   /* ns: target length of an event batch */
#define NC_HOST_BATCH          200000000ull  /* ns: longest host-timed batch */
#define NC_INIT_TIMEOUT        60.0          /* s: communicator initialisation */
#define NC_TEARDOWN_S          10.0          /* s: ncclCommDestroy/Abort may take this long */
#define NC_CHECK_CHUNK         (16ull << 20) /* bytes filled / verified between keep-alives */
#define NC_COPY_DEPTH          2             /* copies in flight per lane */
#define NC_MAX_LANES           (2 * NC_MAX_GPUS)
#define NC_MAX_BOUND_S         600 /* s: the largest failure bound a peer agent accepts */
#define NC_CUDA_EVENT_RES_NOTE "CUDA events resolve about 0.5 us"

enum { NC_TIME_EVENTS = 1, NC_TIME_HOST = 2 };

struct nccl_params {
    /* collective */
    enum nccl_util_coll coll;
    const struct nccl_util_dtype *dt;
    int redop, root;
    bool in_place, graph, check;
    bool blocking; /* blocking communicators (this process's ranks) */
    int timing;    /* NC_TIME_* bits */
    int host_iters, event_iters;
    char algo[64], proto[64];
    /* endpoints: CUDA ordinals here and on the peer; all = every visible GPU */
    bool all_gpus, peer_all;
    int ngpus, gpus[NC_MAX_GPUS];
    int npeer, peer_gpus[NC_MAX_GPUS];
    /* copy */
    int copy_dir; /* bit 1 host->device, bit 2 device->host */
    bool pinned;
    int depth;
};

/* One GPU of this process: its rank, and per communicator a stream, buffers and events. */
struct nccl_rank {
    int dev;  /* CUDA ordinal */
    int rank; /* in every communicator */
    char busid[CU_DEVICE_PCI_BUS_ID_LEN];
    cu_stream_t stream[NC_MAX_COMMS];
    nccl_comm_t comm[NC_MAX_COMMS];
    void *send[NC_MAX_COMMS], *recv[NC_MAX_COMMS];
    cu_event_t *ev;          /* [comm][NC_EV_MAX][2]: start, end */
    cu_graph_exec_t *graphs; /* [comm][point] */
};

struct nccl_core {
    const struct cudart *a;
    enum nccl_util_coll coll;
    const struct nccl_util_dtype *dt;
    int redop, root;
    bool in_place;
    int ncomms, nranks, nlocal;
    struct nccl_rank ranks[NC_MAX_GPUS];
    int npoints;
    uint64_t sizes[MIX_MAX_SIZES];
    struct nccl_util_layout lay[MIX_MAX_SIZES];
    uint64_t bound_ns;      /* the mix's fail_bound_s: detect a dead rank within it */
    uint64_t op_timeout_ns; /* an operation this late past its due time failed (< bound_ns) */
    /* Called every few ms during waits by design (communicator set-up, the first operation
     * of a size, the correctness check), so the runner's progress deadline does not fire;
     * never while timed operations are outstanding: there the progress is real. */
    void (*alive)(void *arg);
    void *alive_arg;
    bool waiting_by_design;
    /* Watchdog: the issuing thread notes when it enters a call that might block; another
     * thread that finds it stuck past the bound aborts the communicators. */
    _Atomic uint64_t in_call_ns;
    _Atomic int abort_claim; /* 0 none, 1 abort started (by whoever claimed it) */
    bool inited;             /* communicators exist */
    bool aborted;
    _Atomic int gate_open; /* see gate_wait */
    bool blocking;         /* blocking communicators (params.blocking) */
    pthread_mutex_t err_lock;
    char err[320];
};

/* A batch of operations on every communicator set.
 * sync: untimed eager operations first (they align the ranks of two processes);
 * n: timed operations, back to back, eager or graph launches;
 * events: a CUDA event before and after each operation on its own stream (per-operation
 *   latency = the largest end - start over the local ranks), else host-timed only.
 * lat_ns (events) receives n x ncomms latencies, [i * ncomms + c]. */
struct nccl_batch {
    int point, sync, n;
    bool graph, events;
    bool gate;           /* hold the streams until all n are enqueued (gate_wait) */
    uint64_t enqueue_ns; /* gated: how long enqueuing the n operations took */
    uint64_t est_op_ns;  /* expected time of one operation (for the deadlines) */
    uint64_t t0_ns, t1_ns;
    double *lat_ns;
    /* progress: nops operations of `bytes` (nccl-tests' S) completed on set c */
    void (*op_done)(void *arg, int c, int nops, uint64_t bytes);
    void *arg;
};

struct nccl_point {
    bool begun;                                 /* probe (and check, capture) done */
    uint64_t est_op_ns;                         /* latest time per operation */
    bool next_events;                           /* alternate host-timed and event batches */
    uint64_t host_ns, host_iters, host_batches; /* measured host-timed batches */
    uint64_t enq_ns, enq_ops;                   /* gated batches: enqueue time and count */
    char algo[24], proto[16];
    int ch_lo, ch_hi;
    bool tuned; /* algo/proto known */
    uint64_t wrong, checked;
    bool check_done;
};

struct nccl_flow {
    struct nccl_params prm;
    const struct cudart *a;
    struct nccl_core core;
    struct flow_rt *f;
    bool remote;
    bool gate; /* gated batches (gate_wait); FABTOP_NCCL_GATE=0 turns them off */
    int nremote;
    nccl_id_t remote_ids[NC_MAX_COMMS]; /* made by the peer agent (its nccl.open reply) */
    char remote_host[160];
    char remote_desc[512];
    uint64_t peer_wrong; /* wrong elements the peer's ranks counted */
    double init_s;
    struct nccl_util_log log;
    bool tuning_log; /* per-size probes log NCCL's tuning choices */
    char tuning_note[200];
    char env_note[400];
    struct nccl_point pts[MIX_MAX_SIZES];
    double *lat;
    pthread_t thread, watch;
    bool started, watching, leaked;
    _Atomic bool watch_stop;
    /* copy flows */
    struct nccl_copy *copy;
};

struct nccl_copy;

/* nccl_params.c */
/* params.what: "all" (or absent: *all) or a list of 1 to NC_MAX_GPUS distinct CUDA ordinals;
 * the agent reads the client's lists with it too. */
int nccl_params_gpu_list(const cJSON *v, const char *what, const char *flow, bool *all, int *n,
                         int *out, struct ft_err *err);
/* The transport table's param_keys and validate; parse fills p with every default. */
const char *const *nccl_params_keys(enum mix_op op);
int nccl_params_parse(const struct mix_flow *f, struct nccl_params *p, struct ft_err *err);
int nccl_params_validate(const struct mix_flow *f, struct ft_err *err);

/* nccl_env.c: held around every change of NCCL's environment. */
extern pthread_mutex_t nccl_env_lock;
/* Set name to val, or unset it when val is NULL. */
void nccl_env_restore_var(const char *name, const char *val);
/* A fresh file name for NCCL's log under $TMPDIR (or /tmp). */
void nccl_env_log_file_name(char *buf, size_t len);
/* NCCL's INFO lines (INIT, and TUNING when asked) to path, then back to the user's own
 * logging (nccl_env_lock held for both). */
void nccl_env_log_on(const struct cudart *a, const char *path, bool tuning);
void nccl_env_log_off(const struct cudart *a);
/* Does the user's own NCCL_DEBUG/NCCL_DEBUG_SUBSYS already log TUNING? */
bool nccl_env_user_logs_tuning(void);

/* nccl_core.c */
/* The first error of the core wins (k->err); later ones are dropped. */
void nccl_core_seterr(struct nccl_core *k, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Zeroed, with its lock: before anything else, on both sides. */
void nccl_core_init_struct(struct nccl_core *k);
/* Note NCCL's failure r of what (its last error on comm too); -EIO. */
int nccl_core_fail(struct nccl_core *k, nccl_result_t r, const char *what, nccl_comm_t comm);
/* Each size point's buffer layout for the collective; -EINVAL when a size is too small. */
int nccl_core_layouts(struct nccl_core *k);
/* Streams, buffers (the largest size of the sweep) and events of every local rank. */
int nccl_core_alloc(struct nccl_core *k);
/* Abort the communicators once (whoever claims it first); false when NCCL did not let go. */
bool nccl_core_abort(struct nccl_core *k);
/* From a watchdog thread: true (and aborted) when the issuing thread is stuck in a call. */
bool nccl_core_watchdog(struct nccl_core *k);
/* One NCCL group over every local rank and communicator set, with the unique ids. */
int nccl_core_init_comms(struct nccl_core *k, const nccl_id_t *ids, double timeout_s);
/* After the ranks of the other process vanished: every communicator set rebuilt with this
 * process's ranks only (their numbers stay: they come first), by ncclCommShrink with
 * NCCL_SHRINK_ABORT in one group, the parents aborted after; the layouts follow the new rank
 * count. 0; -ENOTSUP when this NCCL has no ncclCommShrink (before 2.27); else -errno (k->err). */
int nccl_core_shrink(struct nccl_core *k, double timeout_s);
/* Enqueue one operation of point p on communicator set c (one group over the local ranks). */
int nccl_core_issue(struct nccl_core *k, int c, int p, uint64_t deadline);
/* Until every local stream is idle, or the deadline (then the error names what). */
int nccl_core_wait_streams(struct nccl_core *k, uint64_t deadline, const char *what);
/* Capture one operation per communicator set of point p as a CUDA graph per local rank. */
int nccl_core_capture(struct nccl_core *k, int p);
bool nccl_core_has_graph(const struct nccl_core *k, int p);
/* A batch of operations on every communicator set (timed by events or the host clock). */
int nccl_core_batch(struct nccl_core *k, struct nccl_batch *b);
/* The correctness check of point p: wrong elements out of those checked (local ranks). */
int nccl_core_check(struct nccl_core *k, int p, uint64_t *wrong, uint64_t *checked);
/* Keep owner's memory for the process's life (a hung kernel may still touch it); false when
 * the list is full. */
bool nccl_core_abandon(void *owner);
/* Release everything; false when NCCL did not let go in time (keep the block: abandon it). */
bool nccl_core_free(struct nccl_core *k);

/* nccl_coll.c */
/* The issuing thread of a collective flow, and its watchdog (thread functions, arg: the flow). */
void *nccl_coll_main(void *arg);
void *nccl_coll_watch_main(void *arg);
/* CUDA ordinals for "all" or a list, checked to exist; errors name the flow and where. */
int nccl_coll_pick_gpus(const struct cudart *a, bool all, int n, const int *list, int *out,
                        const char *flow, const char *where, struct ft_err *err);
/* A unique id as hex (2 * CUDART_NCCL_ID_BYTES + 1 bytes), as the control channel carries it. */
void nccl_coll_id_hex(const nccl_id_t *id, char *hex);
/* Remote mode: announce a batch (point p: sync untimed, then n timed operations) to the peer
 * agent, whose ranks issue the same operations in the same order; 0 when not remote. On a
 * failure of the control channel: -errno, the core's error set and the flow failed. */
int nccl_coll_remote_batch(struct nccl_flow *x, int p, int sync, int n, bool graph, bool check,
                           uint64_t est_op_ns);
/* Set up a collective flow: GPUs, communicators (with the peer agent's ranks if remote). */
int nccl_coll_setup(struct flow_rt *f, struct nccl_flow *x, struct ft_err *err);

/* nccl_copy.c */
/* A copy lane's worker thread (arg: its flow_worker); set-up and release of the lanes. */
void *nccl_copy_main(void *arg);
int nccl_copy_setup(struct flow_rt *f, struct nccl_flow *x, struct ft_err *err);
void nccl_copy_free(struct nccl_flow *x);
/* The lanes as "GPU 0 h2d", ... appended to the array out (the conditions). */
void nccl_copy_lanes(const struct nccl_copy *cp, cJSON *out);
/* Each lane's GPU as its PCI address (cudaDeviceGetPCIBusId: "0000:18:00.0"), in lane order,
 * null where the runtime cannot say: what ties a lane to the topology's GPU (its path). */
void nccl_copy_lane_busids(const struct nccl_copy *cp, const struct cudart *a, cJSON *out);

/* nccl_agent.c */
extern const struct agent_handler *const nccl_agent_handlers[];

#endif
