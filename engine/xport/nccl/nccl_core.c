/* nccl_core: the communicator core both sides share (the client's ranks and a peer
 * agent's): streams, buffers and events per GPU, communicator set-up and teardown with
 * deadlines, the watchdog and abort, the gate, CUDA graphs, timed batches and the check. */
#define _GNU_SOURCE
#include "engine/xport/nccl/xport_nccl_int.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

void nccl_core_seterr(struct nccl_core *k, const char *fmt, ...)
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

void nccl_core_init_struct(struct nccl_core *k)
{
    memset(k, 0, sizeof(*k));
    pthread_mutex_init(&k->err_lock, NULL);
}

static const char *cu_str(const struct nccl_core *k, cu_err_t e, char *buf, size_t len)
{
    return cudart_err_str(k->a, e, buf, len);
}

static int cu_fail(struct nccl_core *k, cu_err_t e, const char *what, int dev)
{
    char b[160];
    nccl_core_seterr(k, "%s on GPU %d: %s", what, dev, cu_str(k, e, b, sizeof(b)));
    return -EIO;
}

int nccl_core_fail(struct nccl_core *k, nccl_result_t r, const char *what, nccl_comm_t comm)
{
    const char *s = k->a->ncclGetErrorString ? k->a->ncclGetErrorString(r) : "?";
    const char *last = comm && k->a->ncclGetLastError ? k->a->ncclGetLastError(comm) : NULL;
    nccl_core_seterr(k, "%s: NCCL error %d (%s)%s%s", what, r, s ? s : "?",
                     last && *last ? ": " : "", last && *last ? last : "");
    return -EIO;
}

static uint64_t now_ns(void)
{
    return flow_now_ns();
}

int nccl_core_layouts(struct nccl_core *k)
{
    for (int p = 0; p < k->npoints; p++)
        if (nccl_util_layout(k->coll, k->sizes[p], k->dt->size, k->nranks, &k->lay[p]) < 0) {
            nccl_core_seterr(k,
                             "size %llu B is smaller than one %s element per rank for %s over %d "
                             "ranks",
                             (unsigned long long)k->sizes[p], k->dt->name,
                             nccl_util_coll_name(k->coll), k->nranks);
            return -EINVAL;
        }
    return 0;
}

/* Streams, buffers (the largest size of the sweep), events; GPU memory is zeroed. */
int nccl_core_alloc(struct nccl_core *k)
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
        struct nccl_rank *r = &k->ranks[i];
        cu_err_t e = a->cudaSetDevice(r->dev);
        if (e)
            return cu_fail(k, e, "cudaSetDevice", r->dev);
        size_t fr = 0, tot = 0;
        a->cudaMemGetInfo(&fr, &tot);
        uint64_t need = (sb + rb) * (uint64_t)k->ncomms;
        if (fr && need > fr) {
            nccl_core_seterr(
                k,
                "GPU %d: %d communicator(s) x %.1f MiB of buffers need %.1f GiB, %.1f GiB "
                "free",
                r->dev, k->ncomms, (sb + rb) / 1048576.0, need / 1073741824.0, fr / 1073741824.0);
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

static cu_event_t *ev_at(struct nccl_rank *r, int c, int i)
{
    return &r->ev[((size_t)c * NC_EV_MAX + (size_t)i) * 2];
}

/* Any asynchronous NCCL error on any communicator: 0, or -EIO with the message set. */
static int core_async_errors(struct nccl_core *k)
{
    for (int i = 0; i < k->nlocal; i++)
        for (int c = 0; c < k->ncomms; c++) {
            nccl_result_t st = 0;
            nccl_comm_t comm = k->ranks[i].comm[c];
            if (!comm)
                continue;
            nccl_result_t r = k->a->ncclCommGetAsyncError(comm, &st);
            if (r != NCCL_R_SUCCESS)
                return nccl_core_fail(k, r, "ncclCommGetAsyncError", comm);
            if (st != NCCL_R_SUCCESS && st != NCCL_R_IN_PROGRESS) {
                char what[96];
                snprintf(what, sizeof(what), "communicator %d, rank %d (GPU %d) reported", c,
                         k->ranks[i].rank, k->ranks[i].dev);
                return nccl_core_fail(k, st, what, comm);
            }
        }
    return 0;
}

/* Wait until no communicator of set c (-1: all sets) is ncclInProgress. */
static int core_wait_comms(struct nccl_core *k, int c, uint64_t deadline, const char *what)
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
                    return nccl_core_fail(k, r, what, comm);
                if (st == NCCL_R_IN_PROGRESS)
                    busy = true;
                else if (st != NCCL_R_SUCCESS)
                    return nccl_core_fail(k, st, what, comm);
            }
        if (!busy)
            return 0;
        if (atomic_load(&k->abort_claim))
            return -ECANCELED;
        uint64_t now = now_ns();
        if (now > deadline) {
            nccl_core_seterr(k, "%s did not finish within its deadline", what);
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
struct nccl_closer {
    const struct cudart *a;
    bool abort;
    int n;
    nccl_comm_t comms[NC_MAX_GPUS * NC_MAX_COMMS];
    _Atomic bool done;
};

static void *closer_main(void *arg)
{
    struct nccl_closer *c = arg;
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

/* Close (or abort) the n communicators of the list (taken over by the helper, which the list
 * must fit); false when it did not finish in time (the helper thread is left running). */
static bool close_list(const struct cudart *a, const nccl_comm_t *comms, int n, bool abort)
{
    struct nccl_closer *c = xalloc_zero(1, sizeof(*c));
    c->a = a;
    c->abort = abort;
    for (int i = 0; i < n; i++)
        if (comms[i])
            c->comms[c->n++] = comms[i];
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

static bool core_close_comms(struct nccl_core *k, bool abort)
{
    nccl_comm_t comms[NC_MAX_GPUS * NC_MAX_COMMS];
    int n = 0;
    for (int i = 0; i < k->nlocal; i++)
        for (int s = 0; s < k->ncomms; s++)
            if (k->ranks[i].comm[s]) {
                comms[n++] = k->ranks[i].comm[s];
                k->ranks[i].comm[s] = NULL;
            }
    return close_list(k->a, comms, n, abort);
}

/* Abort once (the issuing thread or the watchdog, whichever claims it first). */
bool nccl_core_abort(struct nccl_core *k)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&k->abort_claim, &expect, 1))
        return true;
    k->aborted = true;
    return core_close_comms(k, true);
}

/* Is the issuing thread stuck inside a call for longer than the bound? Called by a watchdog
 * thread; aborts and returns true when it was. */
bool nccl_core_watchdog(struct nccl_core *k)
{
    uint64_t since = atomic_load(&k->in_call_ns);
    if (!since || now_ns() - since < k->op_timeout_ns)
        return false;
    nccl_core_seterr(k,
                     "an NCCL or CUDA call blocked for %.2f s (a rank vanished?); communicators "
                     "aborted",
                     (now_ns() - since) / 1e9);
    nccl_core_abort(k);
    return true;
}

#define CALL_BEGIN(k) atomic_store_explicit(&(k)->in_call_ns, now_ns(), memory_order_relaxed)
#define CALL_END(k)   atomic_store_explicit(&(k)->in_call_ns, 0, memory_order_relaxed)

/* Kernels of different communicators on one GPU can deadlock when two GPUs see them in a
 * different order. Each operation is one group over all of this process's GPUs, and this lock
 * makes every group (and graph launch round) of every NCCL flow in the process reach all GPUs
 * in the same order. Uncontended with one flow: a few tens of ns. */
static pthread_mutex_t issue_lock = PTHREAD_MUTEX_INITIALIZER;

/* One NCCL group over every local rank (its GPU current) and communicator set: each(k, rank,
 * set, arg) makes that rank's communicator of the set. 0, or the first -errno (what names the
 * group's end in the message). */
typedef int (*comm_maker_fn)(struct nccl_core *k, struct nccl_rank *rk, int c, void *arg);
static int group_over_comms(struct nccl_core *k, comm_maker_fn each, void *arg, const char *what)
{
    const struct cudart *a = k->a;
    nccl_result_t r = a->ncclGroupStart();
    if (r)
        return nccl_core_fail(k, r, "ncclGroupStart", NULL);
    int rc = 0;
    for (int i = 0; i < k->nlocal && !rc; i++) {
        struct nccl_rank *rk = &k->ranks[i];
        cu_err_t e = a->cudaSetDevice(rk->dev);
        if (e) {
            rc = cu_fail(k, e, "cudaSetDevice", rk->dev);
            break;
        }
        for (int c = 0; c < k->ncomms && !rc; c++)
            rc = each(k, rk, c, arg);
    }
    r = a->ncclGroupEnd();
    if (!rc && r != NCCL_R_SUCCESS && r != NCCL_R_IN_PROGRESS)
        rc = nccl_core_fail(k, r, what, NULL);
    return rc;
}

struct init_arg {
    const nccl_id_t *ids;
    struct cudart_nccl_config *cfg;
};

static int init_one(struct nccl_core *k, struct nccl_rank *rk, int c, void *arg)
{
    struct init_arg *ia = arg;
    nccl_result_t r = k->a->ncclCommInitRankConfig(&rk->comm[c], k->nranks, ia->ids[c], rk->rank,
                                                   (nccl_config_t *)ia->cfg);
    return r != NCCL_R_SUCCESS && r != NCCL_R_IN_PROGRESS
               ? nccl_core_fail(k, r, "ncclCommInitRankConfig", NULL)
               : 0;
}

/* Create the communicators: one NCCL group over every local rank and communicator set. */
int nccl_core_init_comms(struct nccl_core *k, const nccl_id_t *ids, double timeout_s)
{
    struct cudart_nccl_config cfg;
    cudart_nccl_config_init(&cfg);
    /* Non-blocking by default: operations return ncclInProgress instead of blocking, so a
     * vanished rank can be aborted. params.blocking makes blocking communicators (as
     * nccl-tests uses) to compare the two; a hung enqueue is then left to the watchdog. On
     * H200 with NCCL's socket transport the two differed by less than the run-to-run spread
     * (64 KiB: 117 vs 130 us in one run, 123 vs 119 us in the next; bench/device/). */
    cfg.blocking = k->blocking;
    struct init_arg ia = {ids, &cfg};
    int rc = group_over_comms(k, init_one, &ia, "ncclGroupEnd (communicator initialisation)");
    k->inited = true;
    if (!rc)
        rc = core_wait_comms(k, -1, now_ns() + (uint64_t)(timeout_s * 1e9),
                             "communicator initialisation");
    return rc;
}

struct shrink_arg {
    int *excl, nx;
    struct cudart_nccl_config *cfg;
    nccl_comm_t *old; /* the parents, for their abort after */
    int nold;
};

static int shrink_one(struct nccl_core *k, struct nccl_rank *rk, int c, void *arg)
{
    struct shrink_arg *sa = arg;
    nccl_comm_t parent = rk->comm[c];
    sa->old[sa->nold++] = parent;
    rk->comm[c] = NULL;
    nccl_result_t r = k->a->ncclCommShrink(parent, sa->excl, sa->nx, &rk->comm[c],
                                           (nccl_config_t *)sa->cfg, CUDART_NCCL_SHRINK_ABORT);
    return r != NCCL_R_SUCCESS && r != NCCL_R_IN_PROGRESS
               ? nccl_core_fail(k, r, "ncclCommShrink", parent)
               : 0;
}

int nccl_core_shrink(struct nccl_core *k, double timeout_s)
{
    const struct cudart *a = k->a;
    char ver[32];
    cudart_version_str(a->nccl_version, true, ver, sizeof(ver));
    pthread_mutex_lock(&k->err_lock);
    k->err[0] = '\0'; /* the failure that led here is the caller's to keep */
    pthread_mutex_unlock(&k->err_lock);
    if (!a->ncclCommShrink) {
        nccl_core_seterr(k, "NCCL %s has no ncclCommShrink (NCCL 2.27 and later)", ver);
        return -ENOTSUP;
    }
    int nx = k->nranks - k->nlocal, excl[2 * NC_MAX_GPUS];
    if (nx < 1 || nx > 2 * NC_MAX_GPUS || atomic_load(&k->abort_claim)) {
        nccl_core_seterr(k, "%s",
                         nx < 1 ? "no rank of another process to leave out"
                                : "the communicators were aborted: nothing to shrink");
        return -EINVAL;
    }
    for (int i = 0; i < nx; i++)
        excl[i] = k->nlocal + i; /* this process's ranks come first (remote_init's first_rank) */
    nccl_comm_t old[NC_MAX_GPUS * NC_MAX_COMMS];
    struct cudart_nccl_config cfg;
    cudart_nccl_config_init(&cfg);
    cfg.blocking = k->blocking;
    struct shrink_arg sa = {excl, nx, &cfg, old, 0};
    pthread_mutex_lock(&issue_lock);
    CALL_BEGIN(k);
    int rc = group_over_comms(k, shrink_one, &sa, "ncclGroupEnd (ncclCommShrink)");
    CALL_END(k);
    pthread_mutex_unlock(&issue_lock);
    k->nranks = k->nlocal;
    if (!rc)
        rc = core_wait_comms(k, -1, now_ns() + (uint64_t)(timeout_s * 1e9), "ncclCommShrink");
    /* The parents go after their children exist (ncclCommAbort of a parent first would leave
     * nothing to shrink). */
    if (!close_list(a, old, sa.nold, true) && !rc) {
        nccl_core_seterr(k, "NCCL did not abort the old communicators within %.0f s",
                         NC_TEARDOWN_S);
        rc = -ETIMEDOUT;
    }
    if (!rc)
        rc = nccl_core_layouts(k);
    return rc;
}

/* The buffers of rank r for point p (in-place operations use views of one buffer). */
static void bufs(const struct nccl_core *k, const struct nccl_rank *r, int c, int p,
                 const void **sb, void **rb)
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
int nccl_core_issue(struct nccl_core *k, int c, int p, uint64_t deadline)
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
        return nccl_core_fail(k, r, "ncclGroupStart", NULL);
    }
    for (int i = 0; i < k->nlocal; i++) {
        struct nccl_rank *rk = &k->ranks[i];
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
        return nccl_core_fail(k, first, nccl_util_coll_name(k->coll), bad);
    if (r == NCCL_R_IN_PROGRESS)
        return core_wait_comms(k, c, deadline, "enqueue");
    if (r != NCCL_R_SUCCESS)
        return nccl_core_fail(k, r, "ncclGroupEnd", k->ranks[0].comm[c]);
    return 0;
}

/* Poll until done() says 1, with a deadline, asynchronous-error checks every ~1000 polls and
 * the keep-alive. done() returns 1 done, 0 not yet, < 0 error (message set). */
static int core_poll(struct nccl_core *k, int (*done)(struct nccl_core *, void *), void *arg,
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
                nccl_core_seterr(
                    k,
                    "%s did not complete within %.2f s of its due time: a rank vanished "
                    "or hangs",
                    what, k->op_timeout_ns / 1e9);
                return -ETIMEDOUT;
            }
        }
    }
}

static int streams_done(struct nccl_core *k, void *arg)
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

static int events_done(struct nccl_core *k, void *arg)
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

int nccl_core_wait_streams(struct nccl_core *k, uint64_t deadline, const char *what)
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
    struct nccl_core *k = arg;
    while (!atomic_load(&k->gate_open) && !atomic_load(&k->abort_claim))
        sched_yield();
}

static void gate_release(struct nccl_core *k)
{
    atomic_store(&k->gate_open, 1);
}

/* Hold every stream of the local ranks; 0 or -errno (the gate is open again then). */
static int gate_hold(struct nccl_core *k)
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
int nccl_core_capture(struct nccl_core *k, int p)
{
    const struct cudart *a = k->a;
    cu_err_t e;
    int mode = capture_mode();
    for (int i = 0; i < k->nlocal; i++) {
        struct nccl_rank *r = &k->ranks[i];
        a->cudaSetDevice(r->dev);
        for (int c = 0; c < k->ncomms; c++)
            if ((e = a->cudaStreamBeginCapture(r->stream[c], mode)))
                return cu_fail(k, e, "cudaStreamBeginCapture", r->dev);
    }
    int rc = 0;
    for (int c = 0; c < k->ncomms && !rc; c++)
        rc = nccl_core_issue(k, c, p, now_ns() + k->bound_ns);
    for (int i = 0; i < k->nlocal; i++) {
        struct nccl_rank *r = &k->ranks[i];
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

bool nccl_core_has_graph(const struct nccl_core *k, int p)
{
    return k->nlocal && k->ranks[0].graphs[(size_t)p] != NULL;
}

int nccl_core_batch(struct nccl_core *k, struct nccl_batch *b)
{
    const struct cudart *a = k->a;
    int p = b->point, rc = 0;
    uint64_t slack = k->op_timeout_ns + 2 * b->est_op_ns;
    for (int s = 0; s < b->sync && !rc; s++) {
        for (int c = 0; c < k->ncomms && !rc; c++)
            rc = nccl_core_issue(k, c, p, now_ns() + slack);
        if (!rc)
            rc = nccl_core_wait_streams(k, now_ns() + slack, "the synchronising operation");
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
                    struct nccl_rank *rk = &k->ranks[r];
                    cu_err_t e = a->cudaGraphLaunch(
                        rk->graphs[(size_t)c * (size_t)k->npoints + (size_t)p], rk->stream[c]);
                    if (e)
                        rc = cu_fail(k, e, "cudaGraphLaunch", rk->dev);
                }
                CALL_END(k);
                pthread_mutex_unlock(&issue_lock);
            } else {
                rc = nccl_core_issue(k, c, p, now_ns() + slack);
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
        rc = nccl_core_wait_streams(k, launched + slack + (uint64_t)b->n * 2 * b->est_op_ns,
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
int nccl_core_check(struct nccl_core *k, int p, uint64_t *wrong, uint64_t *checked)
{
    const struct cudart *a = k->a;
    const struct nccl_util_layout *l = &k->lay[p];
    uint64_t ts = (uint64_t)k->dt->size;
    size_t chunk = NC_CHECK_CHUNK;
    char *host = xalloc(chunk);
    int rc = 0;
    for (int i = 0; i < k->nlocal && !rc; i++) {
        struct nccl_rank *r = &k->ranks[i];
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
        rc = nccl_core_issue(k, 0, p, now_ns() + k->bound_ns);
    if (!rc)
        rc = nccl_core_wait_streams(k, now_ns() + k->bound_ns * 4, "the checked operation");
    for (int i = 0; i < k->nlocal && !rc; i++) {
        struct nccl_rank *r = &k->ranks[i];
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

bool nccl_core_abandon(void *owner)
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
 * communicators were aborted: then the caller keeps its block (nccl_core_abandon). */
bool nccl_core_free(struct nccl_core *k)
{
    const struct cudart *a = k->a;
    bool ok = true;
    if (!a)
        return true;
    if (k->inited && !atomic_load(&k->abort_claim))
        ok = k->err[0] ? nccl_core_abort(k) : core_close_comms(k, false);
    if (!ok || atomic_load(&k->abort_claim))
        return false; /* memory a hung or aborted kernel may still touch is left alone */
    for (int i = 0; i < k->nlocal; i++) {
        struct nccl_rank *r = &k->ranks[i];
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
