/* xport_nccl: GPU traffic. Op "collective": NCCL all_reduce, all_gather, reduce_scatter,
 * alltoall, broadcast, reduce and send/recv between chosen GPUs, several communicators at once
 * issued by one thread in a fixed order, optionally as CUDA graphs; per-operation latency from
 * CUDA events and the host-timed mean nccl-tests reports; algbw/busbw as nccl-tests computes
 * them; NCCL's algorithm/protocol/transport choices from its debug output. Op "copy": host<->GPU
 * cudaMemcpyAsync neighbours on non-blocking streams. Non-blocking communicators and a deadline
 * on every operation turn a vanished rank into an error, not a hang. Agent side: "nccl.*"
 * requests join as the other ranks on the peer's GPUs. The agent makes the unique ids
 * (ncclGetUniqueId: it is the bootstrap root, so it never connects to a bootstrap address a
 * client chose) and returns them over the authenticated control channel; NCCL's later
 * connections go to the addresses the client's ranks advertise during bootstrap, which is
 * why an agent serves nccl.* only to keys it allows (`fabtop serve --allow-nccl`). CUDA and
 * NCCL are loaded at run time (engine/xport/nccl/cudart.h). */
#define _GNU_SOURCE
#include "engine/xport/xport.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/xport/nccl/cudart.h"
#include "engine/xport/nccl/nccl_util.h"

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

extern char **environ;

/* ================= parameters ================= */

enum { NC_TIME_EVENTS = 1, NC_TIME_HOST = 2 };

struct nc_params {
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

static int gpu_list(const cJSON *v, const char *what, const char *flow, bool *all, int *n, int *out,
                    struct ft_err *err)
{
    *all = false;
    *n = 0;
    if (!v || cJSON_IsNull(v)) {
        *all = true;
        return 0;
    }
    if (cJSON_IsString(v) && !strcmp(v->valuestring, "all")) {
        *all = true;
        return 0;
    }
    const cJSON *e;
    if (cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0 && cJSON_GetArraySize(v) <= NC_MAX_GPUS) {
        cJSON_ArrayForEach(e, v)
        {
            if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 1023 ||
                e->valuedouble != floor(e->valuedouble))
                goto bad;
            for (int i = 0; i < *n; i++)
                if (out[i] == (int)e->valuedouble)
                    return ft_err_set(err, -EINVAL, "flow %s: params.%s lists GPU %d twice", flow,
                                      what, out[i]);
            out[(*n)++] = (int)e->valuedouble;
        }
        return 0;
    }
bad:
    return ft_err_set(err, -EINVAL,
                      "flow %s: params.%s must be \"all\" or a list of 1 to %d CUDA device "
                      "numbers, e.g. [0, 1]",
                      flow, what, NC_MAX_GPUS);
}

static int int_param(const cJSON *p, const char *key, int dflt, int lo, int hi, const char *flow,
                     int *out, struct ft_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
    *out = dflt;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi ||
        v->valuedouble != floor(v->valuedouble))
        return ft_err_set(err, -EINVAL, "flow %s: params.%s must be an integer from %d to %d", flow,
                          key, lo, hi);
    *out = (int)v->valuedouble;
    return 0;
}

static int bool_param(const cJSON *p, const char *key, bool dflt, const char *flow, bool *out,
                      struct ft_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
    *out = dflt;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsBool(v))
        return ft_err_set(err, -EINVAL, "flow %s: params.%s must be true or false", flow, key);
    *out = cJSON_IsTrue(v);
    return 0;
}

static int str_param(const cJSON *p, const char *key, const char *flow, char *buf, size_t len,
                     struct ft_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
    buf[0] = '\0';
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= len)
        return ft_err_set(err, -EINVAL, "flow %s: params.%s must be a string shorter than %zu",
                          flow, key, len);
    snprintf(buf, len, "%s", v->valuestring);
    return 0;
}

/* The parameters of a collective flow and of a copy flow (the mix reader refuses others). */
static const char *const *nccl_param_keys(enum mix_op op)
{
    static const char *const coll[] = {"collective", "dtype",       "redop",    "root",
                                       "in_place",   "graph",       "check",    "timing",
                                       "host_iters", "event_iters", "algo",     "proto",
                                       "gpus",       "peer_gpus",   "blocking", NULL};
    static const char *const copy[] = {"copy", "pinned", "depth", "gpus", NULL};
    return op == MIX_OP_COPY ? copy : coll;
}

/* Every parameter the flow may carry, with its default; errors name the flow and the field. */
static int parse_params(const struct mix_flow *f, struct nc_params *p, struct ft_err *err)
{
    const cJSON *pp = f->params;
    memset(p, 0, sizeof(*p));
    int rc;
    const char *s = jsonutil_str(pp, "collective");
    int c = s ? nccl_util_coll_parse(s) : NCCL_COLL_ALL_REDUCE;
    if (c < 0)
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.collective '%s' is not one of all_reduce, all_gather, "
                          "reduce_scatter, alltoall, broadcast, reduce, sendrecv",
                          f->name, s);
    p->coll = (enum nccl_util_coll)c;
    s = jsonutil_str(pp, "dtype");
    p->dt = nccl_util_dtype_find(s ? s : "float");
    if (!p->dt)
        return ft_err_set(err, -EINVAL, "flow %s: params.dtype '%s' is not one of %s", f->name, s,
                          nccl_util_dtype_names());
    s = jsonutil_str(pp, "redop");
    p->redop = nccl_util_redop_parse(s ? s : "sum");
    if (p->redop < 0)
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.redop '%s' is not sum, prod, max, min "
                          "or avg",
                          f->name, s);
    if ((rc = int_param(pp, "root", 0, 0, 4095, f->name, &p->root, err)) < 0 ||
        (rc = bool_param(pp, "in_place", false, f->name, &p->in_place, err)) < 0 ||
        (rc = bool_param(pp, "graph", false, f->name, &p->graph, err)) < 0 ||
        (rc = bool_param(pp, "check", false, f->name, &p->check, err)) < 0 ||
        (rc = bool_param(pp, "blocking", false, f->name, &p->blocking, err)) < 0 ||
        (rc = int_param(pp, "host_iters", NC_HOST_ITERS, 1, 10000, f->name, &p->host_iters, err)) <
            0 ||
        (rc = int_param(pp, "event_iters", NC_EVENT_ITERS, 1, NC_EV_MAX, f->name, &p->event_iters,
                        err)) < 0 ||
        (rc = str_param(pp, "algo", f->name, p->algo, sizeof(p->algo), err)) < 0 ||
        (rc = str_param(pp, "proto", f->name, p->proto, sizeof(p->proto), err)) < 0 ||
        (rc = bool_param(pp, "pinned", true, f->name, &p->pinned, err)) < 0 ||
        (rc = int_param(pp, "depth", NC_COPY_DEPTH, 1, 16, f->name, &p->depth, err)) < 0)
        return rc;
    s = jsonutil_str(pp, "timing");
    if (!s || !strcmp(s, "both"))
        p->timing = NC_TIME_EVENTS | NC_TIME_HOST;
    else if (!strcmp(s, "events"))
        p->timing = NC_TIME_EVENTS;
    else if (!strcmp(s, "host"))
        p->timing = NC_TIME_HOST;
    else
        return ft_err_set(err, -EINVAL, "flow %s: params.timing must be both, events or host",
                          f->name);
    rc = gpu_list(cJSON_GetObjectItemCaseSensitive(pp, "gpus"), "gpus", f->name, &p->all_gpus,
                  &p->ngpus, p->gpus, err);
    if (rc < 0)
        return rc;
    if (p->all_gpus && f->local_gpu >= 0 && !cJSON_GetObjectItemCaseSensitive(pp, "gpus")) {
        p->all_gpus = false;
        p->ngpus = 1;
        p->gpus[0] = f->local_gpu;
    }
    rc = gpu_list(cJSON_GetObjectItemCaseSensitive(pp, "peer_gpus"), "peer_gpus", f->name,
                  &p->peer_all, &p->npeer, p->peer_gpus, err);
    if (rc < 0)
        return rc;
    s = jsonutil_str(pp, "copy");
    if (!s)
        p->copy_dir = f->dir == MIX_DIR_TX ? 1 : f->dir == MIX_DIR_RX ? 2 : 3;
    else if (!strcmp(s, "h2d"))
        p->copy_dir = 1;
    else if (!strcmp(s, "d2h"))
        p->copy_dir = 2;
    else if (!strcmp(s, "both"))
        p->copy_dir = 3;
    else
        return ft_err_set(err, -EINVAL, "flow %s: params.copy must be h2d, d2h or both", f->name);
    return 0;
}

static int nccl_validate(const struct mix_flow *f, struct ft_err *err)
{
    struct nc_params p;
    int rc = parse_params(f, &p, err);
    if (rc < 0)
        return rc;
    if (f->rate_gbps > 0)
        return ft_err_set(err, -EINVAL, "flow %s: nccl flows are not paced (rate_gbps must be 0)",
                          f->name);
    if (f->op == MIX_OP_COPY)
        return 0;
    if (f->size.kind == MIX_SIZE_DIST)
        return ft_err_set(err, -EINVAL,
                          "flow %s: collectives take a fixed size or a sweep, not a "
                          "distribution",
                          f->name);
    if (f->concurrency > NC_MAX_COMMS)
        return ft_err_set(err, -EINVAL,
                          "flow %s: concurrency (communicators issued at once) must be 1 to %d",
                          f->name, NC_MAX_COMMS);
    for (int i = 0; i < f->size.n; i++)
        if (f->size.bytes[i] < (uint64_t)p.dt->size)
            return ft_err_set(err, -EINVAL,
                              "flow %s: size %llu B is smaller than one %s element (%d B)", f->name,
                              (unsigned long long)f->size.bytes[i], p.dt->name, p.dt->size);
    if (p.in_place && (p.coll == NCCL_COLL_ALLTOALL || p.coll == NCCL_COLL_SENDRECV))
        return ft_err_set(err, -EINVAL, "flow %s: %s cannot run in place", f->name,
                          nccl_util_coll_name(p.coll));
    if (p.check && !p.dt->checkable)
        return ft_err_set(err, -EINVAL,
                          "flow %s: the correctness check does not support %s (use a float, "
                          "half, bfloat16, double or integer type)",
                          f->name, p.dt->name);
    if (p.redop == 4 && !p.dt->is_float && nccl_util_coll_reduces(p.coll))
        return ft_err_set(err, -EINVAL, "flow %s: avg needs a floating-point dtype", f->name);
    return 0;
}

/* ================= process-wide NCCL environment ================= */

/* NCCL reads NCCL_DEBUG* when its logging (re)initialises and NCCL_ALGO/NCCL_PROTO when a
 * communicator initialises; the environment is process-wide, so every change happens under
 * this lock, and the user's own values are put back afterwards. */
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *const debug_vars[] = {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"};
static bool user_saved;
static char *user_val[3];
static unsigned log_seq;

static void save_user_env(void)
{
    if (user_saved)
        return;
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(debug_vars[i]);
        user_val[i] = v ? xalloc_strdup(v) : NULL;
    }
    user_saved = true;
}

static void restore_var(const char *name, const char *val)
{
    if (val)
        setenv(name, val, 1);
    else
        unsetenv(name);
}

static void log_file_name(char *buf, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, len, "%s/fabtop-nccl.%d.%u.log", tmp && *tmp ? tmp : "/tmp", (int)getpid(),
             ++log_seq);
}

/* Send NCCL's INFO lines (INIT, and TUNING when asked) to a fresh file. env_lock held.
 * Without ncclResetDebugInit the settings only take effect before NCCL's first log line. */
static void log_on(const struct cudart *a, const char *path, bool tuning)
{
    save_user_env();
    setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_SUBSYS", tuning ? "INIT,TUNING" : "INIT", 1);
    setenv("NCCL_DEBUG_FILE", path, 1);
    if (a->ncclResetDebugInit)
        a->ncclResetDebugInit();
}

/* Back to the user's logging (usually none): TUNING prints a line for every operation, which
 * would distort the timing. env_lock held. */
static void log_off(const struct cudart *a)
{
    if (!a->ncclResetDebugInit)
        return; /* cannot switch it off: leave INIT-only logging as it is */
    for (int i = 0; i < 3; i++)
        restore_var(debug_vars[i], user_val[i]);
    a->ncclResetDebugInit();
}

static bool user_logs_tuning(void)
{
    save_user_env();
    return user_val[0] && (!strcasecmp(user_val[0], "INFO") || !strcasecmp(user_val[0], "TRACE")) &&
           user_val[1] && (strcasestr(user_val[1], "TUNING") || strcasestr(user_val[1], "ALL"));
}

/* ================= the communicator core (both sides) ================= */

/* One GPU of this process: its rank, and per communicator a stream, buffers and events. */
struct nc_rank {
    int dev;  /* CUDA ordinal */
    int rank; /* in every communicator */
    char busid[CU_DEVICE_PCI_BUS_ID_LEN];
    cu_stream_t stream[NC_MAX_COMMS];
    nccl_comm_t comm[NC_MAX_COMMS];
    void *send[NC_MAX_COMMS], *recv[NC_MAX_COMMS];
    cu_event_t *ev;          /* [comm][NC_EV_MAX][2]: start, end */
    cu_graph_exec_t *graphs; /* [comm][point] */
};

struct nc_core {
    const struct cudart *a;
    enum nccl_util_coll coll;
    const struct nccl_util_dtype *dt;
    int redop, root;
    bool in_place;
    int ncomms, nranks, nlocal;
    struct nc_rank ranks[NC_MAX_GPUS];
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

static void core_seterr(struct nc_core *k, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void core_seterr(struct nc_core *k, const char *fmt, ...)
{
    pthread_mutex_lock(&k->err_lock);
    if (!k->err[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(k->err, sizeof(k->err), fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&k->err_lock);
}

static void core_init_struct(struct nc_core *k)
{
    memset(k, 0, sizeof(*k));
    pthread_mutex_init(&k->err_lock, NULL);
}

static const char *cu_str(const struct nc_core *k, cu_err_t e, char *buf, size_t len)
{
    return cudart_err_str(k->a, e, buf, len);
}

static int cu_fail(struct nc_core *k, cu_err_t e, const char *what, int dev)
{
    char b[160];
    core_seterr(k, "%s on GPU %d: %s", what, dev, cu_str(k, e, b, sizeof(b)));
    return -EIO;
}

static int nccl_fail(struct nc_core *k, nccl_result_t r, const char *what, nccl_comm_t comm)
{
    const char *s = k->a->ncclGetErrorString ? k->a->ncclGetErrorString(r) : "?";
    const char *last = comm && k->a->ncclGetLastError ? k->a->ncclGetLastError(comm) : NULL;
    core_seterr(k, "%s: NCCL error %d (%s)%s%s", what, r, s ? s : "?", last && *last ? ": " : "",
                last && *last ? last : "");
    return -EIO;
}

static uint64_t now_ns(void)
{
    return flow_now_ns();
}

static int nc_layouts(struct nc_core *k)
{
    for (int p = 0; p < k->npoints; p++)
        if (nccl_util_layout(k->coll, k->sizes[p], k->dt->size, k->nranks, &k->lay[p]) < 0) {
            core_seterr(k,
                        "size %llu B is smaller than one %s element per rank for %s over %d "
                        "ranks",
                        (unsigned long long)k->sizes[p], k->dt->name, nccl_util_coll_name(k->coll),
                        k->nranks);
            return -EINVAL;
        }
    return 0;
}

/* Streams, buffers (the largest size of the sweep), events; GPU memory is zeroed. */
static int core_alloc(struct nc_core *k)
{
    const struct cudart *a = k->a;
    uint64_t sb = 0, rb = 0;
    for (int p = 0; p < k->npoints; p++) {
        if (k->lay[p].send_bytes > sb)
            sb = k->lay[p].send_bytes;
        if (k->lay[p].recv_bytes > rb)
            rb = k->lay[p].recv_bytes;
    }
    if (k->in_place) {
        rb = sb > rb ? sb : rb;
        sb = 0;
    }
    for (int i = 0; i < k->nlocal; i++) {
        struct nc_rank *r = &k->ranks[i];
        cu_err_t e = a->cudaSetDevice(r->dev);
        if (e)
            return cu_fail(k, e, "cudaSetDevice", r->dev);
        size_t fr = 0, tot = 0;
        a->cudaMemGetInfo(&fr, &tot);
        uint64_t need = (sb + rb) * (uint64_t)k->ncomms;
        if (fr && need > fr) {
            core_seterr(k,
                        "GPU %d: %d communicator(s) x %.1f MiB of buffers need %.1f GiB, %.1f GiB "
                        "free",
                        r->dev, k->ncomms, (sb + rb) / 1048576.0, need / 1073741824.0,
                        fr / 1073741824.0);
            return -ENOMEM;
        }
        r->ev = xalloc_zero((size_t)k->ncomms * NC_EV_MAX * 2, sizeof(cu_event_t));
        r->graphs = xalloc_zero((size_t)k->ncomms * (size_t)(k->npoints ? k->npoints : 1),
                                sizeof(cu_graph_exec_t));
        for (int c = 0; c < k->ncomms; c++) {
            if ((e = a->cudaStreamCreateWithFlags(&r->stream[c], CU_STREAM_NON_BLOCKING)))
                return cu_fail(k, e, "cudaStreamCreateWithFlags", r->dev);
            if ((e = a->cudaMalloc(&r->recv[c], rb ? rb : 1)))
                return cu_fail(k, e, "cudaMalloc (receive buffer)", r->dev);
            if ((e = a->cudaMemset(r->recv[c], 0, rb ? rb : 1)))
                return cu_fail(k, e, "cudaMemset", r->dev);
            if (sb) {
                if ((e = a->cudaMalloc(&r->send[c], sb)))
                    return cu_fail(k, e, "cudaMalloc (send buffer)", r->dev);
                if ((e = a->cudaMemset(r->send[c], 0, sb)))
                    return cu_fail(k, e, "cudaMemset", r->dev);
            } else {
                r->send[c] = r->recv[c];
            }
            for (int j = 0; j < NC_EV_MAX * 2; j++)
                if ((e = a->cudaEventCreateWithFlags(&r->ev[(size_t)c * NC_EV_MAX * 2 + j],
                                                     CU_EVENT_DEFAULT)))
                    return cu_fail(k, e, "cudaEventCreateWithFlags", r->dev);
        }
    }
    return 0;
}

static cu_event_t *ev_at(struct nc_rank *r, int c, int i)
{
    return &r->ev[((size_t)c * NC_EV_MAX + (size_t)i) * 2];
}

/* Any asynchronous NCCL error on any communicator: 0, or -EIO with the message set. */
static int core_async_errors(struct nc_core *k)
{
    for (int i = 0; i < k->nlocal; i++)
        for (int c = 0; c < k->ncomms; c++) {
            nccl_result_t st = 0;
            nccl_comm_t comm = k->ranks[i].comm[c];
            if (!comm)
                continue;
            nccl_result_t r = k->a->ncclCommGetAsyncError(comm, &st);
            if (r != NCCL_R_SUCCESS)
                return nccl_fail(k, r, "ncclCommGetAsyncError", comm);
            if (st != NCCL_R_SUCCESS && st != NCCL_R_IN_PROGRESS) {
                char what[96];
                snprintf(what, sizeof(what), "communicator %d, rank %d (GPU %d) reported", c,
                         k->ranks[i].rank, k->ranks[i].dev);
                return nccl_fail(k, st, what, comm);
            }
        }
    return 0;
}

/* Wait until no communicator of set c (-1: all sets) is ncclInProgress. */
static int core_wait_comms(struct nc_core *k, int c, uint64_t deadline, const char *what)
{
    for (uint64_t spins = 0;; spins++) {
        bool busy = false;
        for (int i = 0; i < k->nlocal; i++)
            for (int s = 0; s < k->ncomms; s++) {
                nccl_comm_t comm = k->ranks[i].comm[s];
                if ((c >= 0 && s != c) || !comm)
                    continue;
                nccl_result_t st = 0;
                nccl_result_t r = k->a->ncclCommGetAsyncError(comm, &st);
                if (r != NCCL_R_SUCCESS)
                    return nccl_fail(k, r, what, comm);
                if (st == NCCL_R_IN_PROGRESS)
                    busy = true;
                else if (st != NCCL_R_SUCCESS)
                    return nccl_fail(k, st, what, comm);
            }
        if (!busy)
            return 0;
        if (atomic_load(&k->abort_claim))
            return -ECANCELED;
        uint64_t now = now_ns();
        if (now > deadline) {
            core_seterr(k, "%s did not finish within its deadline", what);
            return -ETIMEDOUT;
        }
        if ((spins & 63) == 63) {
            if (k->alive && k->waiting_by_design)
                k->alive(k->alive_arg);
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
}

/* ncclCommAbort (or ncclCommDestroy) of every communicator, in a helper thread so that a
 * library that hangs cannot hang fabtop: give up waiting after NC_TEARDOWN_S. */
struct nc_closer {
    const struct cudart *a;
    bool abort;
    int n;
    nccl_comm_t comms[NC_MAX_GPUS * NC_MAX_COMMS];
    _Atomic bool done;
};

static void *closer_main(void *arg)
{
    struct nc_closer *c = arg;
    const struct cudart *a = c->a;
    bool failed[NC_MAX_GPUS * NC_MAX_COMMS] = {false};
    if (!c->abort) {
        /* Non-blocking communicators: finalize (flushes outstanding work, returns
         * ncclInProgress), poll until every one is quiet, then destroy. */
        for (int i = 0; i < c->n; i++) {
            nccl_result_t r = a->ncclCommFinalize(c->comms[i]);
            failed[i] = r != NCCL_R_SUCCESS && r != NCCL_R_IN_PROGRESS;
        }
        uint64_t until = now_ns() + (uint64_t)(NC_TEARDOWN_S * 0.8e9);
        for (bool busy = true; busy && now_ns() < until;) {
            busy = false;
            for (int i = 0; i < c->n; i++) {
                nccl_result_t st = NCCL_R_SUCCESS;
                if (failed[i] || a->ncclCommGetAsyncError(c->comms[i], &st) != NCCL_R_SUCCESS)
                    failed[i] = true;
                else if (st == NCCL_R_IN_PROGRESS)
                    busy = true;
                else if (st != NCCL_R_SUCCESS)
                    failed[i] = true;
            }
            if (busy) {
                struct timespec ts = {0, 200000};
                nanosleep(&ts, NULL);
            }
        }
    }
    for (int i = 0; i < c->n; i++) {
        if (c->abort || failed[i])
            a->ncclCommAbort(c->comms[i]);
        else
            a->ncclCommDestroy(c->comms[i]);
    }
    atomic_store(&c->done, true);
    return NULL;
}

/* Returns false when it did not finish in time (the helper thread is left running). */
static bool core_close_comms(struct nc_core *k, bool abort)
{
    struct nc_closer *c = xalloc_zero(1, sizeof(*c));
    c->a = k->a;
    c->abort = abort;
    for (int i = 0; i < k->nlocal; i++)
        for (int s = 0; s < k->ncomms; s++)
            if (k->ranks[i].comm[s]) {
                c->comms[c->n++] = k->ranks[i].comm[s];
                k->ranks[i].comm[s] = NULL;
            }
    if (!c->n) {
        free(c);
        return true;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, closer_main, c) != 0) {
        closer_main(c);
        free(c);
        return true;
    }
    uint64_t until = now_ns() + (uint64_t)(NC_TEARDOWN_S * 1e9);
    while (!atomic_load(&c->done) && now_ns() < until) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    if (!atomic_load(&c->done)) {
        pthread_detach(t); /* it owns c now; leaked if it never returns */
        return false;
    }
    pthread_join(t, NULL);
    free(c);
    return true;
}

/* Abort once (the issuing thread or the watchdog, whichever claims it first). */
static bool core_abort(struct nc_core *k)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&k->abort_claim, &expect, 1))
        return true;
    k->aborted = true;
    return core_close_comms(k, true);
}

/* Is the issuing thread stuck inside a call for longer than the bound? Called by a watchdog
 * thread; aborts and returns true when it was. */
static bool core_watchdog(struct nc_core *k)
{
    uint64_t since = atomic_load(&k->in_call_ns);
    if (!since || now_ns() - since < k->op_timeout_ns)
        return false;
    core_seterr(k,
                "an NCCL or CUDA call blocked for %.2f s (a rank vanished?); communicators "
                "aborted",
                (now_ns() - since) / 1e9);
    core_abort(k);
    return true;
}

#define CALL_BEGIN(k) atomic_store_explicit(&(k)->in_call_ns, now_ns(), memory_order_relaxed)
#define CALL_END(k)   atomic_store_explicit(&(k)->in_call_ns, 0, memory_order_relaxed)

/* Kernels of different communicators on one GPU can deadlock when two GPUs see them in a
 * different order. Each operation is one group over all of this process's GPUs, and this lock
 * makes every group (and graph launch round) of every NCCL flow in the process reach all GPUs
 * in the same order. Uncontended with one flow: a few tens of ns. */
static pthread_mutex_t issue_lock = PTHREAD_MUTEX_INITIALIZER;

/* Create the communicators: one NCCL group over every local rank and communicator set. */
static int core_init_comms(struct nc_core *k, const nccl_id_t *ids, double timeout_s)
{
    const struct cudart *a = k->a;
    struct cudart_nccl_config cfg;
    cudart_nccl_config_init(&cfg);
    /* Non-blocking by default: operations return ncclInProgress instead of blocking, so a
     * vanished rank can be aborted. params.blocking makes blocking communicators (as
     * nccl-tests uses) to compare the two; a hung enqueue is then left to the watchdog. On
     * H200 with NCCL's socket transport the two differed by less than the run-to-run spread
     * (64 KiB: 117 vs 130 us in one run, 123 vs 119 us in the next; bench/device/). */
    cfg.blocking = k->blocking;
    nccl_result_t r = a->ncclGroupStart();
    if (r)
        return nccl_fail(k, r, "ncclGroupStart", NULL);
    int rc = 0;
    for (int i = 0; i < k->nlocal && !rc; i++) {
        struct nc_rank *rk = &k->ranks[i];
        cu_err_t e = a->cudaSetDevice(rk->dev);
        if (e) {
            rc = cu_fail(k, e, "cudaSetDevice", rk->dev);
            break;
        }
        for (int c = 0; c < k->ncomms && !rc; c++) {
            r = a->ncclCommInitRankConfig(&rk->comm[c], k->nranks, ids[c], rk->rank,
                                          (nccl_config_t *)&cfg);
            if (r != NCCL_R_SUCCESS && r != NCCL_R_IN_PROGRESS)
                rc = nccl_fail(k, r, "ncclCommInitRankConfig", NULL);
        }
    }
    r = a->ncclGroupEnd();
    if (!rc && r != NCCL_R_SUCCESS && r != NCCL_R_IN_PROGRESS)
        rc = nccl_fail(k, r, "ncclGroupEnd (communicator initialisation)", NULL);
    k->inited = true;
    if (!rc)
        rc = core_wait_comms(k, -1, now_ns() + (uint64_t)(timeout_s * 1e9),
                             "communicator initialisation");
    return rc;
}

/* The buffers of rank r for point p (in-place operations use views of one buffer). */
static void bufs(const struct nc_core *k, const struct nc_rank *r, int c, int p, const void **sb,
                 void **rb)
{
    const struct nccl_util_layout *l = &k->lay[p];
    char *recv = r->recv[c];
    *rb = recv;
    *sb = r->send[c];
    if (!k->in_place)
        return;
    uint64_t chunk = l->count * (uint64_t)k->dt->size;
    if (k->coll == NCCL_COLL_ALL_GATHER)
        *sb = recv + (uint64_t)r->rank * chunk; /* this rank's slot of the result */
    else if (k->coll == NCCL_COLL_REDUCE_SCATTER)
        *rb = recv + (uint64_t)r->rank * chunk; /* this rank's slot of the input */
    else
        *sb = recv;
}

/* Enqueue one operation of point p on communicator set c: one NCCL group over the local ranks.
 * 0, -EIO, -ECANCELED (aborted). */
static int core_issue(struct nc_core *k, int c, int p, uint64_t deadline)
{
    const struct cudart *a = k->a;
    const struct nccl_util_layout *l = &k->lay[p];
    int dt = k->dt->nccl, n = k->nranks;
    size_t cnt = (size_t)l->count, ts = (size_t)k->dt->size;
    pthread_mutex_lock(&issue_lock);
    CALL_BEGIN(k);
    nccl_result_t r = a->ncclGroupStart(), first = NCCL_R_SUCCESS;
    nccl_comm_t bad = NULL;
    if (r != NCCL_R_SUCCESS) {
        CALL_END(k);
        pthread_mutex_unlock(&issue_lock);
        return nccl_fail(k, r, "ncclGroupStart", NULL);
    }
    for (int i = 0; i < k->nlocal; i++) {
        struct nc_rank *rk = &k->ranks[i];
        nccl_comm_t comm = rk->comm[c];
        cu_stream_t s = rk->stream[c];
        const void *sb;
        void *rb;
        bufs(k, rk, c, p, &sb, &rb);
        switch (k->coll) {
        case NCCL_COLL_ALL_REDUCE:
            r = a->ncclAllReduce(sb, rb, cnt, dt, k->redop, comm, s);
            break;
        case NCCL_COLL_ALL_GATHER:
            r = a->ncclAllGather(sb, rb, cnt, dt, comm, s);
            break;
        case NCCL_COLL_REDUCE_SCATTER:
            r = a->ncclReduceScatter(sb, rb, cnt, dt, k->redop, comm, s);
            break;
        case NCCL_COLL_BROADCAST:
            r = a->ncclBroadcast(sb, rb, cnt, dt, k->root, comm, s);
            break;
        case NCCL_COLL_REDUCE:
            r = a->ncclReduce(sb, rb, cnt, dt, k->redop, k->root, comm, s);
            break;
        case NCCL_COLL_ALLTOALL:
            if (a->ncclAlltoAll) {
                r = a->ncclAlltoAll(sb, rb, cnt, dt, comm, s);
            } else {
                for (int q = 0; q < n && (r == 0 || r == NCCL_R_IN_PROGRESS); q++) {
                    r = a->ncclSend((const char *)sb + (size_t)q * cnt * ts, cnt, dt, q, comm, s);
                    if (r == 0 || r == NCCL_R_IN_PROGRESS)
                        r = a->ncclRecv((char *)rb + (size_t)q * cnt * ts, cnt, dt, q, comm, s);
                }
            }
            break;
        case NCCL_COLL_SENDRECV:
            r = a->ncclSend(sb, cnt, dt, (rk->rank + 1) % n, comm, s);
            if (r == 0 || r == NCCL_R_IN_PROGRESS)
                r = a->ncclRecv(rb, cnt, dt, (rk->rank + n - 1) % n, comm, s);
            break;
        default:
            break;
        }
        if (r != NCCL_R_SUCCESS && r != NCCL_R_IN_PROGRESS && !first) {
            first = r;
            bad = comm;
        }
    }
    r = a->ncclGroupEnd();
    CALL_END(k);
    pthread_mutex_unlock(&issue_lock);
    if (atomic_load_explicit(&k->abort_claim, memory_order_relaxed))
        return -ECANCELED;
    if (first)
        return nccl_fail(k, first, nccl_util_coll_name(k->coll), bad);
    if (r == NCCL_R_IN_PROGRESS)
        return core_wait_comms(k, c, deadline, "enqueue");
    if (r != NCCL_R_SUCCESS)
        return nccl_fail(k, r, "ncclGroupEnd", k->ranks[0].comm[c]);
    return 0;
}

/* Poll until done() says 1, with a deadline, asynchronous-error checks every ~1000 polls and
 * the keep-alive. done() returns 1 done, 0 not yet, < 0 error (message set). */
static int core_poll(struct nc_core *k, int (*done)(struct nc_core *, void *), void *arg,
                     uint64_t deadline, const char *what)
{
    for (uint64_t spins = 0;; spins++) {
        int d = done(k, arg);
        if (d)
            return d < 0 ? d : 0;
        if (atomic_load_explicit(&k->abort_claim, memory_order_relaxed))
            return -ECANCELED;
        if ((spins & 1023) == 1023) {
            int rc = core_async_errors(k);
            if (rc < 0)
                return rc;
            if (k->alive && k->waiting_by_design)
                k->alive(k->alive_arg);
            if (now_ns() > deadline) {
                core_seterr(k,
                            "%s did not complete within %.2f s of its due time: a rank vanished "
                            "or hangs",
                            what, k->op_timeout_ns / 1e9);
                return -ETIMEDOUT;
            }
        }
    }
}

static int streams_done(struct nc_core *k, void *arg)
{
    (void)arg;
    for (int i = 0; i < k->nlocal; i++)
        for (int c = 0; c < k->ncomms; c++) {
            cu_err_t e = k->a->cudaStreamQuery(k->ranks[i].stream[c]);
            if (e == CU_ERR_NOT_READY)
                return 0;
            if (e != CU_SUCCESS)
                return cu_fail(k, e, "cudaStreamQuery", k->ranks[i].dev);
        }
    return 1;
}

struct ev_wait {
    int c, i;
};

static int events_done(struct nc_core *k, void *arg)
{
    const struct ev_wait *w = arg;
    for (int r = 0; r < k->nlocal; r++) {
        cu_err_t e = k->a->cudaEventQuery(ev_at(&k->ranks[r], w->c, w->i)[1]);
        if (e == CU_ERR_NOT_READY)
            return 0;
        if (e != CU_SUCCESS)
            return cu_fail(k, e, "cudaEventQuery", k->ranks[r].dev);
    }
    return 1;
}

static int core_wait_streams(struct nc_core *k, uint64_t deadline, const char *what)
{
    return core_poll(k, streams_done, NULL, deadline, what);
}

/* The gate: a host function at the head of every stream that holds the GPUs until the whole
 * batch is enqueued, so that per-operation events and host-timed batches measure the
 * collectives themselves back to back, not how fast this thread enqueues them. Non-blocking
 * communicators hand every group to a helper thread inside NCCL (ncclGroupEnd returns
 * ncclInProgress), which costs about 0.2 ms per launch: ungated, that cost would be the
 * measurement. CUDA runs host functions on its own thread; this one only polls a flag. */
static void gate_wait(void *arg)
{
    struct nc_core *k = arg;
    while (!atomic_load(&k->gate_open) && !atomic_load(&k->abort_claim))
        sched_yield();
}

static void gate_release(struct nc_core *k)
{
    atomic_store(&k->gate_open, 1);
}

/* Hold every stream of the local ranks; 0 or -errno (the gate is open again then). */
static int gate_hold(struct nc_core *k)
{
    atomic_store(&k->gate_open, 0);
    for (int r = 0; r < k->nlocal; r++)
        for (int c = 0; c < k->ncomms; c++) {
            cu_err_t e = k->a->cudaLaunchHostFunc(k->ranks[r].stream[c], gate_wait, k);
            if (e) {
                gate_release(k);
                return cu_fail(k, e, "cudaLaunchHostFunc (timing gate)", k->ranks[r].dev);
            }
        }
    return 0;
}

/* The stream-capture mode: relaxed by default, because with non-blocking communicators NCCL
 * may finish the enqueue (and poll its own events) while our thread is capturing, which the
 * stricter modes refuse (cudaErrorStreamCaptureUnsupported); FABTOP_NCCL_CAPTURE_MODE=
 * global|thread|relaxed overrides it. */
static int capture_mode(void)
{
    const char *m = getenv("FABTOP_NCCL_CAPTURE_MODE");
    if (m && !strcmp(m, "global"))
        return CU_CAPTURE_GLOBAL;
    if (m && !strcmp(m, "thread"))
        return CU_CAPTURE_THREAD_LOCAL;
    return CU_CAPTURE_RELAXED;
}

/* Capture one operation per communicator set of point p as a CUDA graph per local rank. */
static int core_capture(struct nc_core *k, int p)
{
    const struct cudart *a = k->a;
    cu_err_t e;
    int mode = capture_mode();
    for (int i = 0; i < k->nlocal; i++) {
        struct nc_rank *r = &k->ranks[i];
        a->cudaSetDevice(r->dev);
        for (int c = 0; c < k->ncomms; c++)
            if ((e = a->cudaStreamBeginCapture(r->stream[c], mode)))
                return cu_fail(k, e, "cudaStreamBeginCapture", r->dev);
    }
    int rc = 0;
    for (int c = 0; c < k->ncomms && !rc; c++)
        rc = core_issue(k, c, p, now_ns() + k->bound_ns);
    for (int i = 0; i < k->nlocal; i++) {
        struct nc_rank *r = &k->ranks[i];
        a->cudaSetDevice(r->dev);
        for (int c = 0; c < k->ncomms; c++) {
            cu_graph_t g = NULL;
            e = a->cudaStreamEndCapture(r->stream[c], &g);
            if (e && !rc)
                rc = cu_fail(k, e, "cudaStreamEndCapture", r->dev);
            cu_graph_exec_t *x = &r->graphs[(size_t)c * (size_t)k->npoints + (size_t)p];
            if (!rc && g && (e = a->cudaGraphInstantiateWithFlags(x, g, 0)))
                rc = cu_fail(k, e, "cudaGraphInstantiateWithFlags", r->dev);
            if (g)
                a->cudaGraphDestroy(g);
        }
    }
    return rc;
}

static bool core_has_graph(const struct nc_core *k, int p)
{
    return k->nlocal && k->ranks[0].graphs[(size_t)p] != NULL;
}

/* A batch of operations on every communicator set.
 * sync: untimed eager operations first (they align the ranks of two processes);
 * n: timed operations, back to back, eager or graph launches;
 * events: a CUDA event before and after each operation on its own stream (per-operation
 *   latency = the largest end - start over the local ranks), else host-timed only.
 * lat_ns (events) receives n x ncomms latencies, [i * ncomms + c]. */
struct nc_batch {
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

static int core_batch(struct nc_core *k, struct nc_batch *b)
{
    const struct cudart *a = k->a;
    int p = b->point, rc = 0;
    uint64_t slack = k->op_timeout_ns + 2 * b->est_op_ns;
    for (int s = 0; s < b->sync && !rc; s++) {
        for (int c = 0; c < k->ncomms && !rc; c++)
            rc = core_issue(k, c, p, now_ns() + slack);
        if (!rc)
            rc = core_wait_streams(k, now_ns() + slack, "the synchronising operation");
    }
    if (rc || b->n <= 0)
        return rc;
    if (b->gate && (rc = gate_hold(k)) < 0)
        return rc;
    b->t0_ns = now_ns();
    for (int i = 0; i < b->n && !rc; i++) {
        for (int c = 0; c < k->ncomms && !rc; c++) {
            /* Events need no current device: event and stream belong to the same GPU. */
            for (int r = 0; b->events && r < k->nlocal && !rc; r++) {
                cu_err_t e =
                    a->cudaEventRecord(ev_at(&k->ranks[r], c, i)[0], k->ranks[r].stream[c]);
                if (e)
                    rc = cu_fail(k, e, "cudaEventRecord", k->ranks[r].dev);
            }
            if (rc)
                break;
            if (b->graph) {
                pthread_mutex_lock(&issue_lock);
                CALL_BEGIN(k);
                for (int r = 0; r < k->nlocal && !rc; r++) {
                    struct nc_rank *rk = &k->ranks[r];
                    cu_err_t e = a->cudaGraphLaunch(
                        rk->graphs[(size_t)c * (size_t)k->npoints + (size_t)p], rk->stream[c]);
                    if (e)
                        rc = cu_fail(k, e, "cudaGraphLaunch", rk->dev);
                }
                CALL_END(k);
                pthread_mutex_unlock(&issue_lock);
            } else {
                rc = core_issue(k, c, p, now_ns() + slack);
            }
            for (int r = 0; b->events && r < k->nlocal && !rc; r++) {
                cu_err_t e =
                    a->cudaEventRecord(ev_at(&k->ranks[r], c, i)[1], k->ranks[r].stream[c]);
                if (e)
                    rc = cu_fail(k, e, "cudaEventRecord", k->ranks[r].dev);
            }
        }
    }
    uint64_t launched = now_ns();
    if (b->gate) { /* the measurement starts when the GPUs may start */
        b->enqueue_ns = launched - b->t0_ns;
        b->t0_ns = launched;
        gate_release(k);
    }
    if (rc)
        return rc;
    if (!b->events) {
        rc = core_wait_streams(k, launched + slack + (uint64_t)b->n * 2 * b->est_op_ns,
                               nccl_util_coll_name(k->coll));
        b->t1_ns = now_ns();
        if (!rc && b->op_done)
            for (int c = 0; c < k->ncomms; c++)
                b->op_done(b->arg, c, b->n, k->lay[p].bytes);
        return rc;
    }
    uint64_t last = launched;
    for (int i = 0; i < b->n && !rc; i++)
        for (int c = 0; c < k->ncomms && !rc; c++) {
            struct ev_wait w = {c, i};
            rc = core_poll(k, events_done, &w, last + slack, nccl_util_coll_name(k->coll));
            if (rc)
                break;
            last = now_ns();
            double worst = 0;
            for (int r = 0; r < k->nlocal; r++) {
                float ms = 0;
                cu_event_t *ev = ev_at(&k->ranks[r], c, i);
                cu_err_t e = a->cudaEventElapsedTime(&ms, ev[0], ev[1]);
                if (e) {
                    rc = cu_fail(k, e, "cudaEventElapsedTime", k->ranks[r].dev);
                    break;
                }
                if (ms * 1e6 > worst)
                    worst = ms * 1e6;
            }
            if (b->lat_ns)
                b->lat_ns[(size_t)i * (size_t)k->ncomms + (size_t)c] = worst;
            if (!rc && b->op_done)
                b->op_done(b->arg, c, 1, k->lay[p].bytes);
        }
    b->t1_ns = now_ns();
    return rc;
}

/* Fill the send buffers with the check pattern, run one eager operation on set 0, read the
 * results back and count wrong elements (local ranks only). */
static int core_check(struct nc_core *k, int p, uint64_t *wrong, uint64_t *checked)
{
    const struct cudart *a = k->a;
    const struct nccl_util_layout *l = &k->lay[p];
    uint64_t ts = (uint64_t)k->dt->size;
    size_t chunk = NC_CHECK_CHUNK;
    char *host = xalloc(chunk);
    int rc = 0;
    for (int i = 0; i < k->nlocal && !rc; i++) {
        struct nc_rank *r = &k->ranks[i];
        const void *sb;
        void *rb;
        bufs(k, r, 0, p, &sb, &rb);
        a->cudaSetDevice(r->dev);
        /* Clear the result first, so stale data from an earlier size cannot pass. */
        cu_err_t e = a->cudaMemset(r->recv[0], 0, l->recv_bytes);
        uint64_t n = l->send_bytes / ts;
        for (uint64_t j = 0; j < n && !e; j += chunk / ts) {
            uint64_t m = n - j < chunk / ts ? n - j : chunk / ts;
            nccl_util_check_fill(k->dt, k->redop, r->rank, host, j, m);
            e = a->cudaMemcpy((char *)sb + j * ts, host, m * ts, CU_MEMCPY_H2D);
            if (k->alive)
                k->alive(k->alive_arg);
        }
        if (e)
            rc = cu_fail(k, e, "filling the check pattern", r->dev);
    }
    if (!rc)
        rc = core_issue(k, 0, p, now_ns() + k->bound_ns);
    if (!rc)
        rc = core_wait_streams(k, now_ns() + k->bound_ns * 4, "the checked operation");
    for (int i = 0; i < k->nlocal && !rc; i++) {
        struct nc_rank *r = &k->ranks[i];
        const void *sb;
        void *rb;
        bufs(k, r, 0, p, &sb, &rb);
        a->cudaSetDevice(r->dev);
        uint64_t n = l->recv_bytes / ts;
        for (uint64_t j = 0; j < n && !rc; j += chunk / ts) {
            uint64_t m = n - j < chunk / ts ? n - j : chunk / ts;
            cu_err_t e = a->cudaMemcpy(host, (const char *)rb + j * ts, m * ts, CU_MEMCPY_D2H);
            if (e) {
                rc = cu_fail(k, e, "reading the result back", r->dev);
                break;
            }
            *wrong += nccl_util_check_verify(k->coll, k->dt, k->redop, k->nranks, r->rank, k->root,
                                             l, host, j, m);
            if (!(k->coll == NCCL_COLL_REDUCE && r->rank != k->root))
                *checked += m;
            if (k->alive)
                k->alive(k->alive_arg);
        }
    }
    free(host);
    return rc;
}

/* After an abort, buffers and streams a hung kernel may still touch are never freed: the block
 * that owns them is kept here for the life of the process (reachable, not lost). */
static pthread_mutex_t abandoned_lock = PTHREAD_MUTEX_INITIALIZER;
static void *abandoned[256];
static int nabandoned;

static bool abandon(void *owner)
{
    pthread_mutex_lock(&abandoned_lock);
    bool kept = nabandoned < 256;
    if (kept)
        abandoned[nabandoned++] = owner;
    pthread_mutex_unlock(&abandoned_lock);
    return kept;
}

/* Release everything: communicators destroyed (or aborted after a failure), then the
 * graphs, events, buffers and streams. Returns false when NCCL did not let go in time or the
 * communicators were aborted: then the caller keeps its block (abandon). */
static bool core_free(struct nc_core *k)
{
    const struct cudart *a = k->a;
    bool ok = true;
    if (!a)
        return true;
    if (k->inited && !atomic_load(&k->abort_claim))
        ok = k->err[0] ? core_abort(k) : core_close_comms(k, false);
    if (!ok || atomic_load(&k->abort_claim))
        return false; /* memory a hung or aborted kernel may still touch is left alone */
    for (int i = 0; i < k->nlocal; i++) {
        struct nc_rank *r = &k->ranks[i];
        a->cudaSetDevice(r->dev);
        for (int c = 0; c < k->ncomms; c++) {
            if (r->stream[c])
                a->cudaStreamSynchronize(r->stream[c]);
            for (int p = 0; r->graphs && p < k->npoints; p++)
                if (r->graphs[(size_t)c * (size_t)k->npoints + (size_t)p])
                    a->cudaGraphExecDestroy(r->graphs[(size_t)c * (size_t)k->npoints + (size_t)p]);
            for (int j = 0; r->ev && j < NC_EV_MAX * 2; j++)
                if (r->ev[(size_t)c * NC_EV_MAX * 2 + (size_t)j])
                    a->cudaEventDestroy(r->ev[(size_t)c * NC_EV_MAX * 2 + (size_t)j]);
            if (r->send[c] && r->send[c] != r->recv[c])
                a->cudaFree(r->send[c]);
            if (r->recv[c])
                a->cudaFree(r->recv[c]);
            if (r->stream[c])
                a->cudaStreamDestroy(r->stream[c]);
        }
        free(r->ev);
        free(r->graphs);
    }
    pthread_mutex_destroy(&k->err_lock);
    return ok;
}

/* ================= client side: collectives ================= */

struct nc_point {
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

struct nc_copy;

struct nc_flow {
    struct nc_params prm;
    const struct cudart *a;
    struct nc_core core;
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
    struct nc_point pts[MIX_MAX_SIZES];
    double *lat;
    pthread_t thread, watch;
    bool started, watching, leaked;
    _Atomic bool watch_stop;
    /* copy flows */
    struct nc_copy *copy;
};

static void flow_alive(void *arg)
{
    struct flow_rt *f = arg;
    uint64_t now = flow_now_ns();
    for (int i = 0; i < f->nworkers; i++)
        atomic_store_explicit(&f->workers[i].last_progress_ns, now, memory_order_relaxed);
}

static void coll_op_done(void *arg, int c, int nops, uint64_t bytes)
{
    struct flow_rt *f = arg;
    struct flow_worker *w = &f->workers[c < f->nworkers ? c : 0];
    flow_progress(w, bytes * (uint64_t)nops, 0, (uint64_t)nops);
}

/* The peer's side of a batch: it issues the same operations in the same order. */
static int remote_batch(struct nc_flow *x, int p, int sync, int n, bool graph, bool check,
                        uint64_t est_op_ns)
{
    if (!x->remote)
        return 0;
    struct flow_rt *f = x->f;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "nccl.batch");
    cJSON_AddNumberToObject(req, "point", p);
    cJSON_AddNumberToObject(req, "sync", sync);
    cJSON_AddNumberToObject(req, "n", n);
    cJSON_AddBoolToObject(req, "graph", graph);
    cJSON_AddBoolToObject(req, "check", check);
    cJSON_AddNumberToObject(req, "est_ns", (double)est_op_ns);
    cJSON *resp = NULL;
    struct ft_err err = {0};
    int ms = (int)(f->fail_bound_s * 1000);
    int rc = channel_request(f->ctl, req, &resp, ms < 1000 ? 1000 : ms, &err);
    if (rc < 0) {
        core_seterr(&x->core, "control channel to the peer agent: %s", err.msg);
        flow_fail(f, "nccl: %s", x->core.err);
        return rc;
    }
    double wrong = 0;
    if (jsonutil_num(resp, "wrong", &wrong))
        x->peer_wrong = (uint64_t)wrong;
    cJSON_Delete(resp);
    return 0;
}

/* Turn a core failure into the flow's error: first the reason and the time, then abort. */
static void coll_fail(struct nc_flow *x, int rc)
{
    struct flow_rt *f = x->f;
    if (rc == -ECANCELED && !x->core.err[0])
        return; /* stopping */
    flow_fail(f, "nccl: %s", x->core.err[0] ? x->core.err : strerror(-rc));
    if (atomic_load(&x->core.abort_claim))
        return; /* the watchdog aborted already */
    uint64_t t = flow_now_ns();
    bool ok = core_abort(&x->core);
    flow_event(f, "communicators aborted in %.3f s%s", (flow_now_ns() - t) / 1e9,
               ok ? "" : " (ncclCommAbort still running: left behind)");
}

/* Run one untimed operation of a new size with NCCL's tuning log on, then read which
 * algorithm, protocol and channels it chose (and any connections it just made). */
static int coll_probe(struct nc_flow *x, int p)
{
    struct nc_core *k = &x->core;
    struct nc_point *pt = &x->pts[p];
    char path[512] = "";
    pthread_mutex_lock(&env_lock);
    if (x->tuning_log) {
        log_file_name(path, sizeof(path));
        log_on(x->a, path, true);
    }
    uint64_t t0 = flow_now_ns();
    k->waiting_by_design = true;
    int rc = remote_batch(x, p, 1, 0, false, false, 0);
    for (int c = 0; c < k->ncomms && !rc; c++)
        rc = core_issue(k, c, p, flow_now_ns() + (uint64_t)(NC_INIT_TIMEOUT * 1e9));
    /* The first operation of a size may connect new channels (NCCL connects at run time):
     * allow it the initialisation bound. */
    if (!rc)
        rc = core_wait_streams(k, flow_now_ns() + (uint64_t)(NC_INIT_TIMEOUT * 1e9),
                               "the first operation of this size");
    k->waiting_by_design = false;
    pt->est_op_ns = flow_now_ns() - t0;
    if (x->tuning_log) {
        log_off(x->a);
        struct nccl_util_log l;
        nccl_util_log_init(&l);
        if (nccl_util_log_file(&l, path) == 0) {
            const char *func = nccl_util_coll_func(k->coll);
            uint64_t per = k->lay[p].count * (uint64_t)k->dt->size;
            const struct nccl_util_tuning *t = NULL;
            if (func && !(t = nccl_util_log_tuning(&l, func, k->lay[p].bytes)))
                t = nccl_util_log_tuning(&l, func, per);
            for (int i = l.ntuning - 1; func && !t && i >= 0; i--)
                if (!strcmp(l.tuning[i].func, func))
                    t = &l.tuning[i];
            if (t) {
                snprintf(pt->algo, sizeof(pt->algo), "%s", t->algo);
                snprintf(pt->proto, sizeof(pt->proto), "%s", t->proto);
                pt->ch_lo = t->ch_lo;
                pt->ch_hi = t->ch_hi;
                pt->tuned = true;
            }
            for (int i = 0; i < l.ntransports; i++) {
                bool dup = false;
                for (int j = 0; j < x->log.ntransports; j++)
                    dup |= !strcmp(x->log.transports[j], l.transports[i]);
                if (!dup && x->log.ntransports < NCCL_LOG_MAX_TRANSPORTS)
                    snprintf(x->log.transports[x->log.ntransports++], sizeof(x->log.transports[0]),
                             "%s", l.transports[i]);
            }
            if (l.network[0] && !x->log.network[0])
                snprintf(x->log.network, sizeof(x->log.network), "%s", l.network);
        }
        unlink(path);
    }
    pthread_mutex_unlock(&env_lock);
    return rc;
}

static int coll_begin_point(struct nc_flow *x, int p)
{
    struct nc_core *k = &x->core;
    struct nc_point *pt = &x->pts[p];
    int rc = coll_probe(x, p);
    if (!rc && x->prm.check) {
        k->waiting_by_design = true;
        rc = remote_batch(x, p, 0, 0, false, true, pt->est_op_ns);
        if (!rc)
            rc = core_check(k, p, &pt->wrong, &pt->checked);
        k->waiting_by_design = false;
        pt->check_done = rc == 0;
    }
    if (!rc && x->prm.graph && !core_has_graph(k, p)) {
        /* The peer captures its own graph when it sees the first graph batch. */
        rc = core_capture(k, p);
    }
    pt->begun = rc == 0;
    return rc;
}

static void *coll_main(void *arg)
{
    struct flow_rt *f = arg;
    struct nc_flow *x = f->xdata;
    struct nc_core *k = &x->core;
    flow_worker_begin(&f->workers[0]);
    flow_alive(f);
    int cur = -1;
    while (flow_wait_running(&f->workers[0])) {
        int p = atomic_load(&f->point);
        struct nc_point *pt = &x->pts[p];
        int rc = 0;
        if (p != cur) {
            cur = p;
            rc = coll_begin_point(x, p);
            if (rc) {
                coll_fail(x, rc);
                break;
            }
            continue; /* re-read the state: the runner may have moved on meanwhile */
        }
        /* Each point starts with a host-timed batch (nccl-tests' figure), then alternates. */
        bool host = (x->prm.timing == NC_TIME_HOST) ||
                    (x->prm.timing == (NC_TIME_HOST | NC_TIME_EVENTS) && !pt->next_events);
        pt->next_events = !pt->next_events;
        uint64_t est = pt->est_op_ns ? pt->est_op_ns : 1000;
        int n;
        if (host) {
            n = x->prm.host_iters;
            if ((uint64_t)n * est > NC_HOST_BATCH)
                n = (int)(NC_HOST_BATCH / est);
        } else {
            n = (int)(NC_EVENT_BATCH / est);
            if (n > x->prm.event_iters)
                n = x->prm.event_iters;
        }
        int st0 = flow_state(f);
        if (atomic_load(&f->point) != p)
            continue; /* the runner moved on meanwhile */
        /* With a timed measure window, no batch is longer than half of it, and inside the
         * window a batch ends with it where the estimate allows, so that a batch of the
         * other kind still starts inside. */
        uint64_t w0 = f->points[p].t0_ns, now = flow_now_ns();
        if (f->spec->duration_s > 0 && !f->spec->iterations) {
            uint64_t win = (uint64_t)(f->spec->duration_s * 1e9);
            if ((uint64_t)n * est > win / 2)
                n = (int)(win / 2 / est);
            if (st0 == FLOW_ST_MEASURE && w0) {
                uint64_t room = w0 + win > now ? w0 + win - now : 0;
                if ((uint64_t)n * est > room / 2 && !host)
                    n = (int)(room / 2 / est); /* leave room for a host-timed batch too */
                else if ((uint64_t)n * est > room)
                    n = (int)(room / est);
            }
        }
        /* Ranks in another process enqueue on their own: only local batches are gated. Graph
         * launches take microseconds and are never gated: behind the gate they stalled until
         * the progress deadline on H200 (bench/device/h200x2-2026-11-30/device_run.log). */
        bool gate = !x->remote && x->gate && !x->prm.graph;
        if (gate && n > NC_GATE_MAX)
            n = NC_GATE_MAX;
        if (n < 1)
            n = 1;
        struct nc_batch b = {.point = p,
                             .sync = x->remote ? 1 : 0,
                             .n = n,
                             .graph = x->prm.graph,
                             .events = !host,
                             .gate = gate,
                             .est_op_ns = est,
                             .lat_ns = x->lat,
                             .op_done = coll_op_done,
                             .arg = f};
        rc = remote_batch(x, p, b.sync, n, b.graph, false, est);
        if (rc)
            break;
        rc = core_batch(k, &b);
        if (rc) {
            coll_fail(x, rc);
            break;
        }
        /* A batch belongs to the point's measurement when it started inside the measure
         * window (it may end just after the window closes: an operation of a large size can
         * be longer than the window's remainder). */
        bool measured = st0 == FLOW_ST_MEASURE;
        if (b.t1_ns > b.t0_ns)
            pt->est_op_ns = (b.t1_ns - b.t0_ns) / (uint64_t)n;
        if (!measured)
            continue;
        pt->enq_ns += b.enqueue_ns;
        pt->enq_ops += b.gate ? (uint64_t)n : 0;
        if (host) {
            pt->host_ns += b.t1_ns - b.t0_ns;
            pt->host_iters += (uint64_t)n;
            pt->host_batches++;
        } else {
            /* Straight into the point's histograms (single writer: this thread), since
             * flow_record drops samples once the window has closed. */
            for (int i = 0; i < n; i++)
                for (int c = 0; c < k->ncomms; c++)
                    hist_record(
                        &f->workers[c < f->nworkers ? c : 0].lat[p],
                        (uint64_t)llround(x->lat[(size_t)i * (size_t)k->ncomms + (size_t)c]));
        }
    }
    return NULL;
}

static void *watch_main(void *arg)
{
    struct flow_rt *f = arg;
    struct nc_flow *x = f->xdata;
    while (!atomic_load(&x->watch_stop)) {
        if (core_watchdog(&x->core)) {
            flow_fail(f, "nccl: %s", x->core.err);
            break;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* CUDA ordinals for "all" / a list; checks they exist. */
static int pick_gpus(const struct cudart *a, bool all, int n, const int *list, int *out,
                     const char *flow, const char *where, struct ft_err *err)
{
    if (all) {
        int cnt = a->ndevices < NC_MAX_GPUS ? a->ndevices : NC_MAX_GPUS;
        for (int i = 0; i < cnt; i++)
            out[i] = i;
        return cnt;
    }
    for (int i = 0; i < n; i++) {
        if (list[i] >= a->ndevices)
            return ft_err_set(err, -ENODEV, "flow %s: GPU %d does not exist %s (%d visible)", flow,
                              list[i], where, a->ndevices);
        out[i] = list[i];
    }
    return n;
}

static int ids_parse(const cJSON *a, int n, nccl_id_t *ids)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return -EPROTO;
    for (int c = 0; c < n; c++) {
        const cJSON *h = cJSON_GetArrayItem(a, c);
        size_t got = 0;
        if (!cJSON_IsString(h) ||
            sodium_hex2bin((unsigned char *)&ids[c], CUDART_NCCL_ID_BYTES, h->valuestring,
                           strlen(h->valuestring), NULL, &got, NULL) ||
            got != CUDART_NCCL_ID_BYTES)
            return -EPROTO;
    }
    return 0;
}

static void id_hex(const nccl_id_t *id, char *hex)
{
    sodium_bin2hex(hex, 2 * CUDART_NCCL_ID_BYTES + 1, (const unsigned char *)id,
                   CUDART_NCCL_ID_BYTES);
}

static void add_sizes(cJSON *o, const struct nc_core *k)
{
    cJSON *s = cJSON_AddArrayToObject(o, "sizes");
    for (int p = 0; p < k->npoints; p++)
        cJSON_AddItemToArray(s, cJSON_CreateNumber((double)k->sizes[p]));
}

/* Remote mode, step 1: ask the peer which GPUs it will use (it loads CUDA and NCCL). */
static int remote_open(struct nc_flow *x, struct ft_err *err)
{
    struct flow_rt *f = x->f;
    const struct mix_flow *s = f->spec;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "nccl.open");
    cJSON_AddStringToObject(req, "collective", nccl_util_coll_name(x->prm.coll));
    cJSON_AddStringToObject(req, "dtype", x->prm.dt->name);
    cJSON_AddStringToObject(req, "redop", nccl_util_redop_name(x->prm.redop));
    cJSON_AddNumberToObject(req, "root", x->prm.root);
    cJSON_AddBoolToObject(req, "in_place", x->prm.in_place);
    cJSON_AddNumberToObject(req, "ncomms", x->core.ncomms);
    cJSON_AddNumberToObject(req, "bound_s", f->fail_bound_s);
    if (x->prm.peer_all) {
        cJSON_AddStringToObject(req, "gpus", "all");
    } else {
        cJSON *g = cJSON_AddArrayToObject(req, "gpus");
        for (int i = 0; i < x->prm.npeer; i++)
            cJSON_AddItemToArray(g, cJSON_CreateNumber(x->prm.peer_gpus[i]));
    }
    if (x->prm.algo[0])
        cJSON_AddStringToObject(req, "algo", x->prm.algo);
    if (x->prm.proto[0])
        cJSON_AddStringToObject(req, "proto", x->prm.proto);
    add_sizes(req, &x->core);
    cJSON *resp = NULL;
    int rc = channel_request(f->ctl, req, &resp, 30000, err);
    if (rc < 0)
        return rc;
    const cJSON *g = cJSON_GetObjectItem(resp, "gpus");
    const cJSON *b = cJSON_GetObjectItem(resp, "busids");
    x->nremote = cJSON_GetArraySize(g);
    if (x->nremote < 1 || x->nremote > NC_MAX_GPUS) {
        cJSON_Delete(resp);
        return ft_err_set(err, -EPROTO, "flow %s: the peer's nccl.open reply names no GPUs",
                          s->name);
    }
    if (ids_parse(cJSON_GetObjectItem(resp, "ids"), x->core.ncomms, x->remote_ids) < 0) {
        cJSON_Delete(resp);
        return ft_err_set(err, -EPROTO,
                          "flow %s: the peer's nccl.open reply has no unique id per communicator",
                          s->name);
    }
    struct strbuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb, "%s: %s, NCCL %s, GPUs", f->peer_desc,
                  jsonutil_str(resp, "host") ? jsonutil_str(resp, "host") : "?",
                  jsonutil_str(resp, "nccl") ? jsonutil_str(resp, "nccl") : "?");
    for (int i = 0; i < x->nremote; i++) {
        const cJSON *bi = cJSON_GetArrayItem(b, i);
        int64_t gpu = -1; /* the peer's number: shown only when it is a GPU index */
        const cJSON *gi = cJSON_GetArrayItem(g, i);
        if (cJSON_IsNumber(gi) && jsonutil_whole(gi->valuedouble, 0, 4095, &gpu))
            strbuf_printf(&sb, " %d", (int)gpu);
        else
            strbuf_add(&sb, " ?");
        strbuf_printf(&sb, " (%s)", cJSON_IsString(bi) ? bi->valuestring : "?");
    }
    snprintf(x->remote_desc, sizeof(x->remote_desc), "%s", sb.s);
    strbuf_free(&sb);
    cJSON_Delete(resp);
    return 0;
}

/* Remote mode, step 2: the peer's ranks join (with the ids it made). */
static int remote_init(struct nc_flow *x, struct ft_err *err)
{
    struct flow_rt *f = x->f;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "nccl.init");
    cJSON_AddNumberToObject(req, "nranks", x->core.nranks);
    cJSON_AddNumberToObject(req, "first_rank", x->core.nlocal);
    cJSON *resp = NULL;
    int rc = channel_request(f->ctl, req, &resp, 30000, err);
    cJSON_Delete(resp);
    return rc;
}

static void record_env(struct nc_flow *x)
{
    struct strbuf sb;
    strbuf_init(&sb);
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, "NCCL_", 5) && strncmp(*e, "NCCL_DEBUG", 10))
            strbuf_printf(&sb, "%s%s", sb.len ? " " : "", *e);
    snprintf(x->env_note, sizeof(x->env_note), "%s", sb.s);
    strbuf_free(&sb);
}

static int coll_setup(struct flow_rt *f, struct nc_flow *x, struct ft_err *err)
{
    const struct mix_flow *s = f->spec;
    struct nc_core *k = &x->core;
    k->a = x->a;
    k->coll = x->prm.coll;
    k->dt = x->prm.dt;
    k->redop = x->prm.redop;
    k->root = x->prm.root;
    k->in_place = x->prm.in_place;
    k->ncomms = s->concurrency;
    k->bound_ns = (uint64_t)(f->fail_bound_s * 1e9);
    k->blocking = x->prm.blocking;
    k->op_timeout_ns = k->bound_ns * 6 / 10; /* ahead of the runner's own progress deadline */
    k->alive = flow_alive;
    k->alive_arg = f;
    k->npoints = f->npoints;
    for (int p = 0; p < f->npoints; p++)
        k->sizes[p] = f->points[p].size;
    int gpus[NC_MAX_GPUS];
    int n = pick_gpus(x->a, x->prm.all_gpus, x->prm.ngpus, x->prm.gpus, gpus, s->name,
                      "on this host", err);
    if (n < 0)
        return n;
    /* The in-process loopback agent means every rank runs here; a named peer agent holds
     * the other ranks. */
    x->remote = f->ctl && strncmp(f->peer_desc, "loopback agent", 14) != 0;
    const char *g = getenv("FABTOP_NCCL_GATE");
    x->gate = !(g && !strcmp(g, "0"));
    if (x->remote)
        snprintf(x->remote_host, sizeof(x->remote_host), "%s", f->peer_desc);
    else
        f->peer_desc[0] = '\0'; /* no peer: the results list none */
    k->nlocal = n;
    for (int i = 0; i < n; i++) {
        k->ranks[i].dev = gpus[i];
        k->ranks[i].rank = i;
        x->a->cudaDeviceGetPCIBusId(k->ranks[i].busid, sizeof(k->ranks[i].busid), gpus[i]);
    }
    int rc;
    if (x->remote && (rc = remote_open(x, err)) < 0)
        return rc;
    k->nranks = k->nlocal + (x->remote ? x->nremote : 0);
    if (k->nranks < 2)
        return ft_err_set(err, -EINVAL,
                          "flow %s: a collective needs at least 2 ranks; this host has %d GPU%s "
                          "in params.gpus (give a peer agent for ranks on another host)",
                          s->name, k->nlocal, k->nlocal == 1 ? "" : "s");
    if (k->root >= k->nranks)
        return ft_err_set(err, -EINVAL, "flow %s: params.root %d but only %d ranks", s->name,
                          k->root, k->nranks);
    if ((rc = nc_layouts(k)) < 0 || (rc = core_alloc(k)) < 0)
        return ft_err_set(err, rc, "flow %s: %s", s->name, k->err);
    /* For the live view's bus bandwidth: each point's S and the collective's factor. */
    for (int p = 0; p < k->npoints; p++)
        f->points[p].bw_bytes = k->lay[p].bytes;
    f->bw_factor = nccl_util_busbw_factor(k->coll, k->nranks);
    x->lat = xalloc_zero((size_t)NC_EV_MAX * (size_t)k->ncomms, sizeof(double));
    record_env(x);

    nccl_id_t ids[NC_MAX_COMMS];
    pthread_mutex_lock(&env_lock);
    char path[512], old_algo[128] = "", old_proto[128] = "";
    bool had_algo = getenv("NCCL_ALGO") != NULL, had_proto = getenv("NCCL_PROTO") != NULL;
    if (had_algo)
        snprintf(old_algo, sizeof(old_algo), "%s", getenv("NCCL_ALGO"));
    if (had_proto)
        snprintf(old_proto, sizeof(old_proto), "%s", getenv("NCCL_PROTO"));
    if (x->prm.algo[0])
        setenv("NCCL_ALGO", x->prm.algo, 1);
    if (x->prm.proto[0])
        setenv("NCCL_PROTO", x->prm.proto, 1);
    bool user_tuning = user_logs_tuning();
    log_file_name(path, sizeof(path));
    if (!user_tuning)
        log_on(x->a, path, false);
    rc = 0;
    /* With a peer agent, its ids (it is the bootstrap root); else our own. */
    for (int c = 0; c < k->ncomms && !rc; c++) {
        nccl_result_t r = x->remote ? 0 : x->a->ncclGetUniqueId(&ids[c]);
        if (x->remote)
            ids[c] = x->remote_ids[c];
        if (r)
            rc = nccl_fail(k, r, "ncclGetUniqueId", NULL);
    }
    uint64_t t0 = flow_now_ns();
    if (!rc && x->remote && remote_init(x, err) < 0)
        rc = -EIO;
    if (!rc)
        rc = core_init_comms(k, ids, NC_INIT_TIMEOUT);
    x->init_s = (flow_now_ns() - t0) / 1e9;
    if (!user_tuning) {
        log_off(x->a);
        nccl_util_log_file(&x->log, path);
        unlink(path);
    }
    restore_var("NCCL_ALGO", had_algo ? old_algo : NULL);
    restore_var("NCCL_PROTO", had_proto ? old_proto : NULL);
    x->tuning_log = x->a->ncclResetDebugInit && !user_tuning;
    if (user_tuning)
        snprintf(x->tuning_note, sizeof(x->tuning_note),
                 "not recorded: NCCL_DEBUG_SUBSYS with TUNING was set by the user, so NCCL logs "
                 "every operation and small-message timing is distorted");
    else if (!x->a->ncclResetDebugInit)
        snprintf(x->tuning_note, sizeof(x->tuning_note),
                 "not recorded: this libnccl cannot switch logging off again "
                 "(no ncclResetDebugInit), and TUNING logs every operation");
    else
        snprintf(x->tuning_note, sizeof(x->tuning_note),
                 "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING during one untimed probe "
                 "operation per size, then logging off");
    pthread_mutex_unlock(&env_lock);
    if (rc) {
        if (err->code)
            return err->code;
        return ft_err_set(err, rc, "flow %s: NCCL initialisation: %s", s->name, k->err);
    }
    return 0;
}

/* ================= client side: copies ================= */

struct nc_lane {
    int dev, dir; /* CU_MEMCPY_H2D or CU_MEMCPY_D2H */
    cu_stream_t s;
    void *dbuf, *hbuf;
    cu_event_t ev[16][2];
    uint64_t issued[16], size[16];
    int head, inflight;
};

struct nc_copy {
    int nlanes;
    struct nc_lane lanes[NC_MAX_LANES];
    uint64_t max_bytes;
    int nthreads;
    pthread_t threads[NC_MAX_LANES];
    bool started[NC_MAX_LANES];
    char err[320];
};

static void *copy_main(void *arg)
{
    struct flow_worker *w = arg;
    struct flow_rt *f = w->flow;
    struct nc_flow *x = f->xdata;
    struct nc_copy *cp = x->copy;
    const struct cudart *a = x->a;
    uint64_t bound = (uint64_t)(f->fail_bound_s * 1e9);
    flow_worker_begin(w);
    char eb[160];
    int depth = x->prm.depth;
    uint64_t last_done = flow_now_ns();
    bool stopping = false;
    for (;;) {
        bool run = flow_wait_running(w);
        if (!run)
            stopping = true;
        uint64_t size = run ? flow_next_size(w) : 0;
        if (size > cp->max_bytes)
            size = cp->max_bytes;
        bool progressed = false, busy = false;
        for (int l = w->idx; l < cp->nlanes; l += f->nworkers) {
            struct nc_lane *ln = &cp->lanes[l];
            while (!stopping && ln->inflight < depth) {
                int slot = (ln->head + ln->inflight) % depth;
                void *dst = ln->dir == CU_MEMCPY_H2D ? ln->dbuf : ln->hbuf;
                const void *src = ln->dir == CU_MEMCPY_H2D ? ln->hbuf : ln->dbuf;
                a->cudaEventRecord(ln->ev[slot][0], ln->s);
                cu_err_t e = a->cudaMemcpyAsync(dst, src, (size_t)size, ln->dir, ln->s);
                a->cudaEventRecord(ln->ev[slot][1], ln->s);
                if (e) {
                    flow_fail(f, "nccl copy: cudaMemcpyAsync on GPU %d: %s", ln->dev,
                              cudart_err_str(a, e, eb, sizeof(eb)));
                    return NULL;
                }
                ln->issued[slot] = flow_now_ns();
                ln->size[slot] = size;
                ln->inflight++;
            }
            if (!ln->inflight)
                continue;
            busy = true;
            int slot = ln->head;
            cu_err_t e = a->cudaEventQuery(ln->ev[slot][1]);
            if (e == CU_ERR_NOT_READY) {
                uint64_t due = ln->issued[slot] > last_done ? ln->issued[slot] : last_done;
                if (flow_now_ns() - due > bound) {
                    flow_fail(f,
                              "nccl copy: a %s copy of %llu B on GPU %d did not complete within "
                              "%.2f s",
                              ln->dir == CU_MEMCPY_H2D ? "host-to-device" : "device-to-host",
                              (unsigned long long)ln->size[slot], ln->dev, bound / 1e9);
                    return NULL;
                }
                continue;
            }
            if (e != CU_SUCCESS) {
                flow_fail(f, "nccl copy: GPU %d: %s", ln->dev,
                          cudart_err_str(a, e, eb, sizeof(eb)));
                return NULL;
            }
            float ms = 0;
            a->cudaEventElapsedTime(&ms, ln->ev[slot][0], ln->ev[slot][1]);
            if (!stopping)
                flow_record(w, (uint64_t)llround(ms * 1e6));
            flow_progress(w, ln->dir == CU_MEMCPY_H2D ? ln->size[slot] : 0,
                          ln->dir == CU_MEMCPY_D2H ? ln->size[slot] : 0, 1);
            ln->head = (ln->head + 1) % depth;
            ln->inflight--;
            last_done = flow_now_ns();
            progressed = true;
        }
        if (stopping && !busy)
            break;
        if (!progressed) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static int copy_setup(struct flow_rt *f, struct nc_flow *x, struct ft_err *err)
{
    const struct mix_flow *s = f->spec;
    const struct cudart *a = x->a;
    struct nc_copy *cp = x->copy = xalloc_zero(1, sizeof(*cp));
    f->peer_desc[0] = '\0'; /* copies stay on this host */
    int gpus[NC_MAX_GPUS];
    int n = pick_gpus(a, x->prm.all_gpus, x->prm.ngpus, x->prm.gpus, gpus, s->name, "on this host",
                      err);
    if (n < 0)
        return n;
    for (int i = 0; i < s->size.n; i++)
        if (s->size.bytes[i] > cp->max_bytes)
            cp->max_bytes = s->size.bytes[i];
    char eb[160];
    for (int g = 0; g < n; g++)
        for (int d = 1; d <= 2; d++) {
            if (!(x->prm.copy_dir & d))
                continue;
            struct nc_lane *ln = &cp->lanes[cp->nlanes++];
            ln->dev = gpus[g];
            ln->dir = d == 1 ? CU_MEMCPY_H2D : CU_MEMCPY_D2H;
            cu_err_t e = a->cudaSetDevice(ln->dev);
            if (!e)
                e = a->cudaStreamCreateWithFlags(&ln->s, CU_STREAM_NON_BLOCKING);
            if (!e)
                e = a->cudaMalloc(&ln->dbuf, (size_t)cp->max_bytes);
            if (!e && x->prm.pinned)
                e = a->cudaHostAlloc(&ln->hbuf, (size_t)cp->max_bytes, CU_HOST_ALLOC_PORTABLE);
            if (!e && !x->prm.pinned) {
                ln->hbuf = malloc((size_t)cp->max_bytes);
                if (!ln->hbuf)
                    return ft_err_set(err, -ENOMEM,
                                      "flow %s: cannot allocate %llu B of host "
                                      "memory",
                                      s->name, (unsigned long long)cp->max_bytes);
                memset(ln->hbuf, 1, (size_t)cp->max_bytes); /* fault the pages in */
            }
            for (int j = 0; j < x->prm.depth && !e; j++) {
                e = a->cudaEventCreateWithFlags(&ln->ev[j][0], CU_EVENT_DEFAULT);
                if (!e)
                    e = a->cudaEventCreateWithFlags(&ln->ev[j][1], CU_EVENT_DEFAULT);
            }
            if (e)
                return ft_err_set(err, -EIO, "flow %s: GPU %d: %s", s->name, ln->dev,
                                  cudart_err_str(a, e, eb, sizeof(eb)));
        }
    if (f->nworkers > cp->nlanes)
        f->nworkers = cp->nlanes;
    return 0;
}

static void copy_free(struct nc_flow *x)
{
    struct nc_copy *cp = x->copy;
    const struct cudart *a = x->a;
    if (!cp)
        return;
    for (int l = 0; l < cp->nlanes; l++) {
        struct nc_lane *ln = &cp->lanes[l];
        a->cudaSetDevice(ln->dev);
        if (ln->s)
            a->cudaStreamSynchronize(ln->s);
        for (int j = 0; j < 16; j++)
            for (int q = 0; q < 2; q++)
                if (ln->ev[j][q])
                    a->cudaEventDestroy(ln->ev[j][q]);
        if (ln->dbuf)
            a->cudaFree(ln->dbuf);
        if (ln->hbuf) {
            if (x->prm.pinned)
                a->cudaFreeHost(ln->hbuf);
            else
                free(ln->hbuf);
        }
        if (ln->s)
            a->cudaStreamDestroy(ln->s);
    }
    free(cp);
    x->copy = NULL;
}

/* ================= the transport table: client ================= */

static int nccl_available(char *why, size_t len)
{
    return cudart_load(NULL, why, len);
}

/* With the flow's own libnccl.so (`fabtop run --nccl PATH`), that one alone. */
static int nccl_available_flow(const struct mix_flow *f, char *why, size_t len)
{
    return cudart_load_lib(f->library, NULL, why, len);
}

static int nccl_setup(struct flow_rt *f, struct ft_err *err)
{
    const struct mix_flow *s = f->spec;
    struct nc_flow *x = xalloc_zero(1, sizeof(*x));
    core_init_struct(&x->core);
    f->xdata = x;
    x->f = f;
    char why[768];
    const struct cudart *a;
    int rc = cudart_load_lib(s->library, &a, why, sizeof(why));
    if (rc < 0)
        return ft_err_set(err, rc, "flow %s: %s", s->name, why);
    x->a = a;
    x->core.a = a;
    if ((rc = parse_params(s, &x->prm, err)) < 0)
        return rc;
    return s->op == MIX_OP_COPY ? copy_setup(f, x, err) : coll_setup(f, x, err);
}

static int nccl_start(struct flow_rt *f, struct ft_err *err)
{
    struct nc_flow *x = f->xdata;
    if (f->spec->op == MIX_OP_COPY) {
        for (int i = 0; i < f->nworkers; i++) {
            if (pthread_create(&f->workers[i].thread, NULL, copy_main, &f->workers[i]) != 0)
                return ft_err_set(err, -EAGAIN, "flow %s: cannot start a copy thread",
                                  f->spec->name);
            f->workers[i].started = true;
        }
        return 0;
    }
    if (pthread_create(&x->thread, NULL, coll_main, f) != 0)
        return ft_err_set(err, -EAGAIN, "flow %s: cannot start the issuing thread", f->spec->name);
    x->started = true;
    if (pthread_create(&x->watch, NULL, watch_main, f) == 0)
        x->watching = true;
    return 0;
}

static void nccl_stop(struct flow_rt *f)
{
    struct nc_flow *x = f->xdata;
    if (!x)
        return;
    for (int i = 0; i < f->nworkers_alloc; i++)
        if (f->workers[i].started) {
            pthread_join(f->workers[i].thread, NULL);
            f->workers[i].started = false;
        }
    if (x->started) {
        /* The issuing thread leaves within its deadline; should NCCL keep it inside a call
         * even after the abort, do not hang the run on it. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)(f->fail_bound_s * 3 + NC_TEARDOWN_S);
        if (pthread_timedjoin_np(x->thread, NULL, &ts) != 0) {
            pthread_detach(x->thread);
            x->leaked = true;
            flow_event(f, "the NCCL issuing thread is stuck inside NCCL; left behind");
        }
        x->started = false;
    }
    if (x->watching) {
        atomic_store(&x->watch_stop, true);
        pthread_join(x->watch, NULL);
        x->watching = false;
    }
}

static double point_secs(const struct flow_point *p)
{
    return p->t1_ns > p->t0_ns ? (p->t1_ns - p->t0_ns) / 1e9 : 0;
}

static cJSON *bw_obj(const struct nc_flow *x, uint64_t bytes, double secs)
{
    double alg, bus;
    nccl_util_bw(x->core.coll, bytes, x->core.nranks, secs, &alg, &bus);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "algbw_GBps", alg);
    cJSON_AddNumberToObject(o, "busbw_GBps", bus);
    return o;
}

/* Per-point figures for the results (engine/results/results.c merges conditions.point_figures[i]
 * into point i): nccl-tests' time/algbw/busbw for the host-timed mean and for the mean of
 * the per-operation CUDA-event latencies, the tuning NCCL chose, the check. */
static cJSON *coll_point_figures(struct flow_rt *f, struct nc_flow *x, int p)
{
    const struct nc_core *k = &x->core;
    const struct nc_point *pt = &x->pts[p];
    const struct nccl_util_layout *l = &k->lay[p];
    cJSON *o = cJSON_CreateObject();
    cJSON *n = cJSON_AddObjectToObject(o, "nccl");
    cJSON_AddNumberToObject(n, "bytes", (double)l->bytes);
    cJSON_AddNumberToObject(n, "count", (double)l->count);
    cJSON_AddNumberToObject(n, "elements", (double)l->elements);
    cJSON_AddNumberToObject(n, "send_bytes", (double)l->send_bytes);
    cJSON_AddNumberToObject(n, "recv_bytes", (double)l->recv_bytes);
    cJSON_AddNumberToObject(n, "nranks", k->nranks);
    cJSON_AddNumberToObject(n, "busbw_factor", nccl_util_busbw_factor(k->coll, k->nranks));
    if (pt->tuned) {
        cJSON_AddStringToObject(n, "algo", pt->algo);
        cJSON_AddStringToObject(n, "proto", pt->proto);
        char ch[32];
        snprintf(ch, sizeof(ch), "%d..%d", pt->ch_lo, pt->ch_hi);
        cJSON_AddStringToObject(n, "channels", ch);
    } else {
        cJSON_AddNullToObject(n, "algo");
        cJSON_AddNullToObject(n, "proto");
        cJSON_AddNullToObject(n, "channels");
    }
    const char *bw_from = NULL;
    double alg = 0, bus = 0;
    if (pt->host_iters) {
        double t = pt->host_ns / 1e9 / (double)pt->host_iters / (double)k->ncomms;
        cJSON *h = cJSON_AddObjectToObject(n, "host_timed");
        cJSON_AddNumberToObject(h, "time_us", pt->host_ns / 1e3 / (double)pt->host_iters);
        /* With several communicators at once, k operations complete per iteration: the
         * aggregate bandwidth divides the iteration time by k. */
        cJSON *bw = bw_obj(x, l->bytes, t);
        cJSON_AddItemToObject(h, "algbw_GBps",
                              cJSON_Duplicate(cJSON_GetObjectItem(bw, "algbw_GBps"), 0));
        cJSON_AddItemToObject(h, "busbw_GBps",
                              cJSON_Duplicate(cJSON_GetObjectItem(bw, "busbw_GBps"), 0));
        jsonutil_num(bw, "algbw_GBps", &alg);
        jsonutil_num(bw, "busbw_GBps", &bus);
        cJSON_Delete(bw);
        cJSON_AddNumberToObject(h, "iterations", (double)pt->host_iters);
        cJSON_AddNumberToObject(h, "batches", (double)pt->host_batches);
        cJSON_AddNumberToObject(h, "iters_per_batch_max", x->prm.host_iters);
        bw_from = "host_timed";
        if (pt->enq_ops)
            cJSON_AddNumberToObject(n, "enqueue_us_per_op", pt->enq_ns / 1e3 / (double)pt->enq_ops);
    } else {
        cJSON_AddNullToObject(n, "host_timed");
    }
    struct hist *m = xalloc(sizeof(*m)), *tmp = xalloc(sizeof(*tmp));
    hist_init(m);
    for (int w = 0; w < f->nworkers; w++) {
        hist_snapshot(&f->workers[w].lat[p], tmp);
        hist_merge(m, tmp);
    }
    struct hist_stats st;
    hist_stats(m, &st);
    if (st.count) {
        cJSON *e = cJSON_AddObjectToObject(n, "per_iteration");
        cJSON_AddNumberToObject(e, "count", (double)st.count);
        cJSON_AddNumberToObject(e, "mean_us", st.mean / 1e3);
        cJSON_AddNumberToObject(e, "min_us", st.min / 1e3);
        cJSON_AddNumberToObject(e, "p50_us", st.p50 / 1e3);
        cJSON_AddNumberToObject(e, "p99_us", st.p99 / 1e3);
        cJSON_AddNumberToObject(e, "max_us", st.max / 1e3);
        double ea, eb;
        nccl_util_bw(k->coll, l->bytes, k->nranks, st.mean / 1e9, &ea, &eb);
        cJSON_AddNumberToObject(e, "algbw_GBps", ea);
        cJSON_AddNumberToObject(e, "busbw_GBps", eb);
        if (st.mean < 100e3)
            cJSON_AddStringToObject(e, "note", NC_CUDA_EVENT_RES_NOTE);
        if (!bw_from) {
            alg = ea;
            bus = eb;
            bw_from = "per_iteration";
        }
    } else {
        cJSON_AddNullToObject(n, "per_iteration");
    }
    free(m);
    free(tmp);
    if (bw_from) {
        cJSON_AddNumberToObject(n, "algbw_GBps", alg);
        cJSON_AddNumberToObject(n, "busbw_GBps", bus);
        cJSON_AddStringToObject(n, "bw_from", bw_from);
    } else {
        cJSON_AddNullToObject(n, "algbw_GBps");
        cJSON_AddNullToObject(n, "busbw_GBps");
    }
    if (x->prm.check && pt->check_done) {
        cJSON *c = cJSON_AddObjectToObject(n, "check");
        cJSON_AddNumberToObject(c, "wrong", (double)(pt->wrong));
        cJSON_AddNumberToObject(c, "checked_elements", (double)pt->checked);
        cJSON_AddNumberToObject(c, "peer_wrong_total", (double)x->peer_wrong);
        cJSON_AddStringToObject(
            c, "ranks", x->remote ? "local ranks here; the peer checks its own" : "every rank");
    } else {
        cJSON_AddNullToObject(n, "check");
    }
    return o;
}

static cJSON *copy_point_figures(struct flow_rt *f, struct nc_flow *x, int p)
{
    const struct flow_point *pt = &f->points[p];
    cJSON *o = cJSON_CreateObject();
    cJSON *c = cJSON_AddObjectToObject(o, "copy");
    double secs = point_secs(pt);
    bool ok = pt->done && secs > 0;
    jsonutil_add_num_or_null(c, "h2d_GBps", ok && (x->prm.copy_dir & 1),
                             ok ? (pt->tx1 - pt->tx0) / secs / 1e9 : 0);
    jsonutil_add_num_or_null(c, "d2h_GBps", ok && (x->prm.copy_dir & 2),
                             ok ? (pt->rx1 - pt->rx0) / secs / 1e9 : 0);
    cJSON_AddNumberToObject(c, "h2d_bytes", ok ? (double)(pt->tx1 - pt->tx0) : 0);
    cJSON_AddNumberToObject(c, "d2h_bytes", ok ? (double)(pt->rx1 - pt->rx0) : 0);
    cJSON_AddStringToObject(c, "unit", "GB/s = 10^9 bytes/s, all lanes of the flow together");
    return o;
}

static void nccl_teardown(struct flow_rt *f)
{
    struct nc_flow *x = f->xdata;
    if (!x)
        return;
    if (f->conditions && x->a) {
        /* NCCL connects at run time (the first operation of each size): the transports it
         * chose are only known after the probes, long after the conditions were taken. */
        cJSON *nc = cJSON_GetObjectItemCaseSensitive(f->conditions, "nccl");
        if (cJSON_IsObject(nc)) {
            cJSON *tr = cJSON_CreateArray();
            for (int i = 0; i < x->log.ntransports; i++)
                cJSON_AddItemToArray(tr, cJSON_CreateString(x->log.transports[i]));
            cJSON_ReplaceItemInObjectCaseSensitive(nc, "transports", tr);
            if (x->log.network[0]) {
                cJSON_DeleteItemFromObjectCaseSensitive(nc, "network");
                cJSON_AddStringToObject(nc, "network", x->log.network);
            }
        }
        cJSON *pf = cJSON_AddArrayToObject(f->conditions, "point_figures");
        for (int p = 0; p < f->npoints; p++)
            cJSON_AddItemToArray(pf, f->spec->op == MIX_OP_COPY ? copy_point_figures(f, x, p)
                                     : x->core.nranks           ? coll_point_figures(f, x, p)
                                                                : cJSON_CreateObject());
    }
    if (x->copy)
        copy_free(x);
    if (x->leaked) {
        /* A thread may still use the flow's memory: leave it all. */
        f->xdata = NULL;
        abandon(x);
        return;
    }
    if (x->core.inited && atomic_load(&f->status) == FLOW_FAILED)
        core_abort(&x->core); /* the peer may be gone: never wait for it */
    if (x->remote && f->ctl) {
        cJSON *req = cJSON_CreateObject();
        cJSON_AddStringToObject(req, "type", "nccl.close");
        cJSON *resp = NULL;
        channel_request(f->ctl, req, &resp, 2000, NULL);
        cJSON_Delete(resp);
    }
    f->xdata = NULL;
    if (x->a && !core_free(&x->core)) {
        if (!atomic_load(&x->core.abort_claim))
            flow_event(f, "NCCL did not release its communicators within %.0f s; left behind",
                       NC_TEARDOWN_S);
        if (abandon(x))
            return;
    }
    free(x->lat);
    free(x);
}

static void nccl_conditions(const struct flow_rt *f, cJSON *out)
{
    const struct nc_flow *x = f->xdata;
    if (!x || !x->a)
        return;
    const struct cudart *a = x->a;
    char v[32];
    cJSON *lib = cJSON_AddObjectToObject(out, "libraries");
    cudart_version_str(a->nccl_version, true, v, sizeof(v));
    cJSON_AddStringToObject(lib, "nccl", v);
    cJSON_AddStringToObject(lib, "nccl_path", a->nccl_path);
    cudart_version_str(a->rt_version, false, v, sizeof(v));
    cJSON_AddStringToObject(lib, "cuda_runtime", v);
    cJSON_AddStringToObject(lib, "cuda_runtime_path", a->rt_path);
    cudart_version_str(a->drv_version, false, v, sizeof(v));
    cJSON_AddStringToObject(lib, "cuda_driver_api", v);
    if (f->spec->op == MIX_OP_COPY) {
        const struct nc_copy *cp = x->copy;
        cJSON *c = cJSON_AddObjectToObject(out, "copy");
        cJSON_AddStringToObject(c, "direction",
                                x->prm.copy_dir == 1   ? "h2d (host to device)"
                                : x->prm.copy_dir == 2 ? "d2h (device to host)"
                                                       : "both (h2d and d2h at once)");
        cJSON_AddStringToObject(c, "host_memory",
                                x->prm.pinned ? "pinned (cudaHostAlloc)"
                                              : "pageable (malloc; the driver stages through its "
                                                "own pinned buffers)");
        cJSON_AddStringToObject(c, "streams",
                                "cudaStreamCreateWithFlags(cudaStreamNonBlocking), one per lane: "
                                "never serialised behind the legacy default stream");
        cJSON_AddNumberToObject(c, "in_flight_per_lane", x->prm.depth);
        cJSON_AddNumberToObject(c, "threads", f->nworkers);
        cJSON *g = cJSON_AddArrayToObject(c, "lanes");
        for (int l = 0; cp && l < cp->nlanes; l++) {
            char b[48];
            snprintf(b, sizeof(b), "GPU %d %s", cp->lanes[l].dev,
                     cp->lanes[l].dir == CU_MEMCPY_H2D ? "h2d" : "d2h");
            cJSON_AddItemToArray(g, cJSON_CreateString(b));
        }
        cJSON_AddStringToObject(c, "latency", "per copy: CUDA events around cudaMemcpyAsync");
        return;
    }
    const struct nc_core *k = &x->core;
    cJSON *n = cJSON_AddObjectToObject(out, "nccl");
    cJSON_AddStringToObject(n, "collective", nccl_util_coll_name(k->coll));
    cJSON_AddStringToObject(n, "dtype", k->dt->name);
    if (nccl_util_coll_reduces(k->coll))
        cJSON_AddStringToObject(n, "redop", nccl_util_redop_name(k->redop));
    if (nccl_util_coll_rooted(k->coll))
        cJSON_AddNumberToObject(n, "root", k->root);
    cJSON_AddBoolToObject(n, "in_place", k->in_place);
    cJSON_AddBoolToObject(n, "graph", x->prm.graph);
    cJSON_AddBoolToObject(n, "check", x->prm.check);
    cJSON_AddNumberToObject(n, "nranks", k->nranks);
    cJSON_AddNumberToObject(n, "communicators", k->ncomms);
    cJSON_AddStringToObject(n, "issue",
                            "one thread issues every communicator in a fixed order, one NCCL "
                            "group per operation over this process's ranks");
    cJSON *lr = cJSON_AddArrayToObject(n, "local_ranks");
    for (int i = 0; i < k->nlocal; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "rank", k->ranks[i].rank);
        cJSON_AddNumberToObject(r, "cuda_device", k->ranks[i].dev);
        cJSON_AddStringToObject(r, "pci_bus_id", k->ranks[i].busid);
        cJSON_AddItemToArray(lr, r);
    }
    if (x->remote)
        cJSON_AddStringToObject(n, "peer_ranks", x->remote_desc);
    else
        cJSON_AddNullToObject(n, "peer_ranks");
    cJSON_AddNumberToObject(n, "init_s", x->init_s);
    cJSON_AddStringToObject(n, "communicator_mode",
                            k->blocking
                                ? "blocking (params.blocking): a hung enqueue is left "
                                  "to the watchdog"
                                : "non-blocking (config.blocking = 0): enqueue never blocks");
    cJSON_AddNumberToObject(n, "op_deadline_s", k->op_timeout_ns / 1e9);
    cJSON_AddStringToObject(n, "op_deadline",
                            "an operation not complete this long after its due time (the later "
                            "of its launch and the previous completion, plus twice its usual "
                            "duration) fails the flow: 0.6 x the mix's fail_bound_s");
    cJSON_AddStringToObject(n, "on_deadline",
                            "ncclCommAbort of every communicator; the flow fails with the reason "
                            "and the time");
    cJSON_AddStringToObject(n, "nccl_version_log", x->log.version);
    cJSON *tr = cJSON_AddArrayToObject(n, "transports");
    for (int i = 0; i < x->log.ntransports; i++)
        cJSON_AddItemToArray(tr, cJSON_CreateString(x->log.transports[i]));
    jsonutil_add_str_or_null(n, "network", x->log.network[0] ? x->log.network : NULL);
    cJSON *ch = cJSON_AddObjectToObject(n, "channels");
    jsonutil_add_num_or_null(ch, "coll", x->log.coll_channels >= 0, x->log.coll_channels);
    jsonutil_add_num_or_null(ch, "nvls", x->log.nvls_channels >= 0, x->log.nvls_channels);
    jsonutil_add_num_or_null(ch, "p2p", x->log.p2p_channels >= 0, x->log.p2p_channels);
    if (x->log.nvls >= 0)
        cJSON_AddBoolToObject(n, "nvls_multicast", x->log.nvls == 1);
    else
        cJSON_AddNullToObject(n, "nvls_multicast");
    jsonutil_add_str_or_null(n, "algo_env", x->prm.algo[0] ? x->prm.algo : NULL);
    jsonutil_add_str_or_null(n, "proto_env", x->prm.proto[0] ? x->prm.proto : NULL);
    cJSON_AddStringToObject(n, "nccl_env", x->env_note);
    cJSON_AddStringToObject(n, "tuning_log", x->tuning_note);
    cJSON_AddStringToObject(n, "size_meaning",
                            "as nccl-tests: S is the array on every rank for all_reduce, "
                            "broadcast, reduce, sendrecv; the total for all_gather, "
                            "reduce_scatter and alltoall (per-rank chunk S/n)");
    cJSON_AddStringToObject(n, "busbw_factor", nccl_util_busbw_formula(k->coll));
    cJSON_AddStringToObject(n, "bw_unit", "GB/s = 10^9 bytes/s, as nccl-tests prints");
    cJSON *t = cJSON_AddObjectToObject(n, "timing");
    cJSON_AddStringToObject(t, "per_iteration",
                            "CUDA events recorded before and after each operation on its own "
                            "stream, launches back to back; the largest end - start over this "
                            "process's ranks; " NC_CUDA_EVENT_RES_NOTE);
    cJSON_AddStringToObject(t, "host_timed",
                            "as nccl-tests by default: host clock around N back-to-back "
                            "launches and the wait for completion, time = elapsed / N");
    cJSON_AddStringToObject(t, "gate",
                            x->remote || !x->gate || x->prm.graph
                                ? "none: the measurement includes enqueuing each operation "
                                  "(graph launches, remote ranks, FABTOP_NCCL_GATE=0)"
                                : "a host function holds each stream until the batch is "
                                  "enqueued; timing starts when it lets go (non-blocking "
                                  "communicators take about 0.2 ms per enqueue, shown as "
                                  "enqueue_us_per_op); FABTOP_NCCL_GATE=0 turns it off");
    cJSON_AddNumberToObject(t, "host_iters_per_batch", x->prm.host_iters);
    cJSON_AddStringToObject(t, "batches",
                            x->prm.timing == NC_TIME_HOST     ? "host-timed only"
                            : x->prm.timing == NC_TIME_EVENTS ? "per-operation events only"
                                                              : "event and host-timed batches "
                                                                "alternate");
    cJSON_AddStringToObject(t, "latency_note", NC_CUDA_EVENT_RES_NOTE);
}

/* ================= agent side ================= */

/* The tag of this side's per-session state (agent_session_state). */
static const char state_tag;

/* One session's ranks on this host. A worker thread initialises the communicators and then
 * runs the batches the client announces, in order, so both sides issue the same operations. */
struct nc_item {
    int point, sync, n;
    bool graph, check;
    uint64_t est_ns; /* the client's estimate of one operation */
};

struct nc_srv {
    struct nc_core core;
    struct agent_session *session;
    const struct cudart *a;
    int gpus[NC_MAX_GPUS], ngpus;
    nccl_id_t ids[NC_MAX_COMMS];
    char algo[64], proto[64];
    bool have_init;
    double max_duration_s;
    pthread_t thread;
    bool started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct nc_item q[64];
    int qhead, qlen;
    bool closing, stop;
    _Atomic uint64_t wrong;
    char error[320];
    pthread_t watch;
    bool watching;
    _Atomic bool watch_stop;
};

static void srv_error(struct nc_srv *sv, const char *msg)
{
    pthread_mutex_lock(&sv->lock);
    if (!sv->error[0])
        snprintf(sv->error, sizeof(sv->error), "%s", msg);
    pthread_mutex_unlock(&sv->lock);
}

static void *srv_watch(void *arg)
{
    struct nc_srv *sv = arg;
    while (!atomic_load(&sv->watch_stop)) {
        if (core_watchdog(&sv->core)) {
            srv_error(sv, sv->core.err);
            break;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void *srv_main(void *arg)
{
    struct nc_srv *sv = arg;
    struct nc_core *k = &sv->core;
    uint64_t t0 = flow_now_ns();
    pthread_mutex_lock(&env_lock);
    char old_algo[128] = "", old_proto[128] = "";
    bool had_algo = getenv("NCCL_ALGO") != NULL, had_proto = getenv("NCCL_PROTO") != NULL;
    if (had_algo)
        snprintf(old_algo, sizeof(old_algo), "%s", getenv("NCCL_ALGO"));
    if (had_proto)
        snprintf(old_proto, sizeof(old_proto), "%s", getenv("NCCL_PROTO"));
    if (sv->algo[0])
        setenv("NCCL_ALGO", sv->algo, 1);
    if (sv->proto[0])
        setenv("NCCL_PROTO", sv->proto, 1);
    int rc = core_init_comms(k, sv->ids, NC_INIT_TIMEOUT);
    restore_var("NCCL_ALGO", had_algo ? old_algo : NULL);
    restore_var("NCCL_PROTO", had_proto ? old_proto : NULL);
    pthread_mutex_unlock(&env_lock);
    if (rc) {
        char m[400];
        snprintf(m, sizeof(m), "NCCL initialisation on the peer: %s", k->err);
        srv_error(sv, m);
        core_abort(k);
        return NULL;
    }
    agent_session_log(sv->session, "nccl: %d rank(s) joined in %.2f s", k->nlocal,
                      (flow_now_ns() - t0) / 1e9);
    for (;;) {
        pthread_mutex_lock(&sv->lock);
        while (!sv->qlen && !sv->closing && !sv->stop)
            pthread_cond_wait(&sv->cond, &sv->lock);
        if (sv->stop || (!sv->qlen && sv->closing)) {
            pthread_mutex_unlock(&sv->lock);
            break;
        }
        struct nc_item it = sv->q[sv->qhead];
        sv->qhead = (sv->qhead + 1) % 64;
        sv->qlen--;
        pthread_mutex_unlock(&sv->lock);
        if (sv->max_duration_s > 0 && (flow_now_ns() - t0) / 1e9 > sv->max_duration_s) {
            char m[128];
            snprintf(m, sizeof(m), "the agent's duration cap (%.0f s) ended the test",
                     sv->max_duration_s);
            srv_error(sv, m);
            core_abort(k);
            break;
        }
        if (it.point < 0 || it.point >= k->npoints)
            continue;
        if (it.check) {
            uint64_t w = 0, c = 0;
            rc = core_check(k, it.point, &w, &c);
            atomic_fetch_add(&sv->wrong, w);
        } else {
            rc = 0;
            if (it.graph && !core_has_graph(k, it.point))
                rc = core_capture(k, it.point);
            struct nc_batch b = {.point = it.point,
                                 .sync = it.sync,
                                 .n = it.n,
                                 .graph = it.graph,
                                 .events = false,
                                 .est_op_ns = it.est_ns ? it.est_ns : 1000000};
            if (!rc)
                rc = core_batch(k, &b);
        }
        if (rc) {
            char m[400];
            snprintf(m, sizeof(m), "the peer's ranks: %s", k->err[0] ? k->err : strerror(-rc));
            srv_error(sv, m);
            agent_session_log(sv->session, "nccl: %s; aborting", m);
            core_abort(k);
            break;
        }
    }
    return NULL;
}

static void srv_free(void *arg)
{
    struct nc_srv *sv = arg;
    pthread_mutex_lock(&sv->lock);
    sv->closing = true;
    pthread_mutex_unlock(&sv->lock);
    pthread_cond_broadcast(&sv->cond);
    if (sv->started) {
        /* The client is gone: if our ranks still wait on it, the deadline (or the watchdog)
         * ends them; give the queue that long, then stop. */
        uint64_t until = flow_now_ns() + sv->core.bound_ns * 3 + 1000000000ull;
        while (flow_now_ns() < until) {
            pthread_mutex_lock(&sv->lock);
            bool idle = sv->qlen == 0;
            pthread_mutex_unlock(&sv->lock);
            if (idle)
                break;
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
        }
        pthread_mutex_lock(&sv->lock);
        sv->stop = true;
        pthread_mutex_unlock(&sv->lock);
        pthread_cond_broadcast(&sv->cond);
        pthread_join(sv->thread, NULL);
    }
    if (sv->watching) {
        atomic_store(&sv->watch_stop, true);
        pthread_join(sv->watch, NULL);
    }
    if (!core_free(&sv->core)) {
        if (!atomic_load(&sv->core.abort_claim))
            agent_session_log(sv->session, "nccl: NCCL did not release its communicators in time");
        if (abandon(sv))
            return;
    }
    pthread_mutex_destroy(&sv->lock);
    pthread_cond_destroy(&sv->cond);
    free(sv);
}

/* nccl.* only for keys the agent allows (see the top). */
static int nccl_allowed(struct agent_session *s, const char *what, struct ft_err *err)
{
    if (agent_session_allow_nccl(s))
        return 0;
    return ft_err_set(err, -EPERM,
                      "%s: this agent does not serve NCCL to this key: NCCL's ranks connect to "
                      "addresses the client's ranks advertise, so it is allowed per key "
                      "('fabtop serve --allow-nccl')",
                      what);
}

static int handle_open(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    int rc = nccl_allowed(s, "nccl.open", err);
    if (rc < 0)
        return rc;
    if (agent_session_state(s, &state_tag))
        return ft_err_set(err, -EBUSY, "nccl.open: this session already holds NCCL ranks");
    const struct agent_cfg *cfg = agent_session_cfg(s);
    /* The request first (the same answer on any host), then CUDA and NCCL. */
    int c = nccl_util_coll_parse(jsonutil_str(req, "collective"));
    const struct nccl_util_dtype *dt = nccl_util_dtype_find(jsonutil_str(req, "dtype"));
    int op = nccl_util_redop_parse(jsonutil_str(req, "redop"));
    double ncomms = 0, root = 0, bound = 0;
    bool inplace = false;
    jsonutil_num(req, "root", &root);
    jsonutil_bool(req, "in_place", &inplace);
    const cJSON *sizes = cJSON_GetObjectItem(req, "sizes");
    /* bound_s: the client's failure bound, which also sets how long the agent's ranks may
     * wait at the end (srv_free): at most NC_MAX_BOUND_S. */
    if (c < 0 || !dt || op < 0 || !jsonutil_num(req, "ncomms", &ncomms) || ncomms < 1 ||
        ncomms > NC_MAX_COMMS || ncomms != (int)ncomms || !jsonutil_num(req, "bound_s", &bound) ||
        !(bound > 0 && bound <= NC_MAX_BOUND_S) || !(root >= 0 && root < 4096) ||
        !cJSON_IsArray(sizes) || cJSON_GetArraySize(sizes) < 1 ||
        cJSON_GetArraySize(sizes) > MIX_MAX_SIZES)
        return ft_err_set(err, -EINVAL,
                          "nccl.open: bad request (collective, dtype, redop, ncomms 1-%d, "
                          "bound_s 0-%d, root 0-4095 and sizes are required)",
                          NC_MAX_COMMS, NC_MAX_BOUND_S);
    if (cfg->max_streams > 0 && ncomms > cfg->max_streams)
        return ft_err_set(err, -EPERM,
                          "nccl.open: %d communicators asked, the agent allows %d (--max-streams)",
                          (int)ncomms, cfg->max_streams);
    uint64_t sz[MIX_MAX_SIZES];
    int npoints = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, sizes)
    {
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= 1 && e->valuedouble <= 16.0 * (1ull << 30)))
            return ft_err_set(err, -EINVAL, "nccl.open: sizes must be 1 B to 16 GiB");
        sz[npoints++] = (uint64_t)e->valuedouble;
    }
    bool all = false;
    int n = 0, list[NC_MAX_GPUS];
    struct ft_err ge = {0};
    if (gpu_list(cJSON_GetObjectItem(req, "gpus"), "gpus", "(peer)", &all, &n, list, &ge) < 0)
        return ft_err_set(err, -EINVAL, "nccl.open: %s", ge.msg);
    char why[768];
    const struct cudart *a;
    rc = cudart_load(&a, why, sizeof(why));
    if (rc < 0)
        return ft_err_set(err, rc, "nccl.open: the peer cannot run NCCL: %s", why);
    if (agent_session_flow_add(s, "nccl.open", err) < 0)
        return err->code;
    struct nc_srv *sv = xalloc_zero(1, sizeof(*sv));
    core_init_struct(&sv->core);
    pthread_mutex_init(&sv->lock, NULL);
    pthread_cond_init(&sv->cond, NULL);
    sv->session = s;
    sv->a = a;
    sv->max_duration_s = cfg->max_duration_s;
    struct nc_core *k = &sv->core;
    k->a = a;
    k->coll = (enum nccl_util_coll)c;
    k->dt = dt;
    k->redop = op;
    k->root = (int)root;
    k->in_place = inplace;
    k->ncomms = (int)ncomms;
    k->bound_ns = (uint64_t)(bound * 1e9);
    k->op_timeout_ns = k->bound_ns * 6 / 10;
    for (int p = 0; p < npoints; p++)
        k->sizes[k->npoints++] = sz[p];
    if ((n = pick_gpus(a, all, n, list, sv->gpus, "(peer)", "on the peer", &ge)) < 0) {
        srv_free(sv);
        return ft_err_set(err, -EINVAL, "nccl.open: %s", ge.msg);
    }
    sv->ngpus = n;
    k->nlocal = n;
    cJSON *ga = cJSON_AddArrayToObject(resp, "gpus");
    cJSON *ba = cJSON_AddArrayToObject(resp, "busids");
    for (int i = 0; i < n; i++) {
        k->ranks[i].dev = sv->gpus[i];
        a->cudaDeviceGetPCIBusId(k->ranks[i].busid, sizeof(k->ranks[i].busid), sv->gpus[i]);
        cJSON_AddItemToArray(ga, cJSON_CreateNumber(sv->gpus[i]));
        cJSON_AddItemToArray(ba, cJSON_CreateString(k->ranks[i].busid));
    }
    char host[256] = "", v[32];
    gethostname(host, sizeof(host) - 1);
    cudart_version_str(a->nccl_version, true, v, sizeof(v));
    cJSON_AddStringToObject(resp, "host", host);
    cJSON_AddStringToObject(resp, "nccl", v);
    /* NCCL_ALGO / NCCL_PROTO apply when the communicators initialise (srv_main). */
    jsonutil_strcpy(req, "algo", sv->algo, sizeof(sv->algo));
    jsonutil_strcpy(req, "proto", sv->proto, sizeof(sv->proto));
    /* The agent is the bootstrap root of every communicator: its own ids. */
    pthread_mutex_lock(&env_lock);
    nccl_result_t r = 0;
    for (int i = 0; i < k->ncomms && !r; i++)
        r = a->ncclGetUniqueId(&sv->ids[i]);
    pthread_mutex_unlock(&env_lock);
    if (r) {
        srv_free(sv);
        return ft_err_set(err, -EIO, "nccl.open: ncclGetUniqueId on the peer: %s",
                          a->ncclGetErrorString ? a->ncclGetErrorString(r) : "failed");
    }
    cJSON *ia = cJSON_AddArrayToObject(resp, "ids");
    for (int i = 0; i < k->ncomms; i++) {
        char hex[2 * CUDART_NCCL_ID_BYTES + 1];
        id_hex(&sv->ids[i], hex);
        cJSON_AddItemToArray(ia, cJSON_CreateString(hex));
    }
    agent_session_set_state(s, &state_tag, sv, srv_free);
    agent_session_log(s, "nccl: %s %s on %d GPU(s), %d communicator(s)",
                      nccl_util_coll_name(k->coll), dt->name, n, k->ncomms);
    return 0;
}

static int handle_init(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)resp;
    int rc = nccl_allowed(s, "nccl.init", err);
    if (rc < 0)
        return rc;
    struct nc_srv *sv = agent_session_state(s, &state_tag);
    if (!sv || sv->have_init)
        return ft_err_set(err, -EPROTO, "nccl.init: send nccl.open first (once per session)");
    struct nc_core *k = &sv->core;
    double nranks = 0, first = 0;
    if (cJSON_GetObjectItem(req, "ids"))
        return ft_err_set(err, -EINVAL,
                          "nccl.init: the agent makes the unique ids (its nccl.open reply); ids "
                          "from a client are not accepted");
    if (!jsonutil_num(req, "nranks", &nranks) || !jsonutil_num(req, "first_rank", &first) ||
        first < 1 || nranks < first + k->nlocal || nranks > 4096)
        return ft_err_set(err, -EINVAL, "nccl.init: bad request (nranks and first_rank)");
    k->nranks = (int)nranks;
    for (int i = 0; i < k->nlocal; i++)
        k->ranks[i].rank = (int)first + i;
    if (nc_layouts(k) < 0 || core_alloc(k) < 0)
        return ft_err_set(err, -EIO, "nccl.init: %s", k->err);
    sv->have_init = true;
    if (pthread_create(&sv->thread, NULL, srv_main, sv) != 0)
        return ft_err_set(err, -EAGAIN, "nccl.init: cannot start a thread");
    sv->started = true;
    if (pthread_create(&sv->watch, NULL, srv_watch, sv) == 0)
        sv->watching = true;
    return 0;
}

static int handle_batch(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    if (nccl_allowed(s, "nccl.batch", err) < 0)
        return err->code;
    struct nc_srv *sv = agent_session_state(s, &state_tag);
    if (!sv || !sv->have_init)
        return ft_err_set(err, -EPROTO, "nccl.batch: no NCCL ranks in this session");
    double point = -1, sync = 0, n = 0, est = 0;
    struct nc_item it = {0};
    if (jsonutil_num(req, "est_ns", &est) && est > 0 && est < 1e12)
        it.est_ns = (uint64_t)est;
    jsonutil_num(req, "point", &point);
    jsonutil_num(req, "sync", &sync);
    jsonutil_num(req, "n", &n);
    jsonutil_bool(req, "graph", &it.graph);
    jsonutil_bool(req, "check", &it.check);
    if (point < 0 || point >= sv->core.npoints || sync < 0 || sync > 4 || n < 0 || n > 100000)
        return ft_err_set(err, -EINVAL, "nccl.batch: bad request (point, sync 0-4, n 0-100000)");
    it.point = (int)point;
    it.sync = (int)sync;
    it.n = (int)n;
    pthread_mutex_lock(&sv->lock);
    int rc = 0;
    if (sv->error[0])
        rc = ft_err_set(err, -EIO, "%s", sv->error);
    else if (sv->qlen == 64)
        rc = ft_err_set(err, -EBUSY, "nccl.batch: the peer is 64 batches behind");
    else {
        sv->q[(sv->qhead + sv->qlen) % 64] = it;
        sv->qlen++;
    }
    pthread_mutex_unlock(&sv->lock);
    pthread_cond_signal(&sv->cond);
    cJSON_AddNumberToObject(resp, "wrong", (double)atomic_load(&sv->wrong));
    return rc;
}

static int handle_close(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)req;
    if (nccl_allowed(s, "nccl.close", err) < 0)
        return err->code;
    struct nc_srv *sv = agent_session_state(s, &state_tag);
    if (sv) {
        pthread_mutex_lock(&sv->lock);
        sv->closing = true;
        pthread_mutex_unlock(&sv->lock);
        pthread_cond_broadcast(&sv->cond);
        cJSON_AddNumberToObject(resp, "wrong", (double)atomic_load(&sv->wrong));
    }
    return 0;
}

static const struct agent_handler nccl_open_handler = {"nccl.open", handle_open};
static const struct agent_handler nccl_init_handler = {"nccl.init", handle_init};
static const struct agent_handler nccl_batch_handler = {"nccl.batch", handle_batch};
static const struct agent_handler nccl_close_handler = {"nccl.close", handle_close};
static const struct agent_handler *const nccl_handlers[] = {
    &nccl_open_handler, &nccl_init_handler, &nccl_batch_handler, &nccl_close_handler, NULL};

const struct xport_ops xport_nccl = {
    .name = "nccl",
    .ops = (1u << MIX_OP_COLLECTIVE) | (1u << MIX_OP_COPY),
    /* A peer agent holds the other ranks when the flow names one; with the in-process
     * loopback agent every rank runs in this process (see coll_setup). */
    .needs_peer = true,
    .available = nccl_available,
    .available_flow = nccl_available_flow,
    .param_keys = nccl_param_keys,
    .validate = nccl_validate,
    .setup = nccl_setup,
    .start = nccl_start,
    .stop = nccl_stop,
    .teardown = nccl_teardown,
    .sample = NULL,
    .conditions = nccl_conditions,
    .handlers = nccl_handlers,
};
