/* fake_cudanccl: a stand-in CUDA runtime and NCCL, loaded through FABTOP_CUDART/FABTOP_NCCL,
 * so the nccl transport's whole path (init, probes, batches, events, graphs, copies, checks,
 * deadlines, abort, the peer agent) runs in CI without a GPU. "Device" memory is host memory;
 * each stream is a queue of operations and event records completed in order on a virtual
 * clock; collectives of one process compute real results; ranks in two processes (the peer
 * agent) meet through a POSIX shared-memory counter per communicator (synchronisation only,
 * no data). Knobs: FAKE_CUDA_DEVICES (2), FAKE_OP_NS (3000), FAKE_NCCL_HANG_AFTER=N (the
 * collective after the N-th never completes), FAKE_CUDA_NO_DEVICE=1, FAKE_NCCL_ID_LOG=FILE
 * (appends "made UID pid P" per ncclGetUniqueId and "init UID rank R pid P" per
 * communicator, so a test can tell which process made the ids). ncclCommShrink as NCCL 2.27
 * has it, unless built with -DFAKE_NO_SHRINK (an older NCCL). Test code only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "engine/xport/nccl/cudart.h"
#include "engine/xport/nccl/nccl_util.h"

/* Prototypes from our own declarations: the fake must match what fabtop resolves. */
#define PROTO(ret, name, args) ret name args;
CUDART_RT_FUNCS(PROTO)
CUDART_NCCL_FUNCS(PROTO)
CUDART_NCCL_OPT_FUNCS(PROTO)
#undef PROTO

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int cur_dev;
static uint64_t op_ns = 3000;
static long hang_after = -1;
static atomic_long executed;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((constructor)) static void fake_init(void)
{
    const char *e = getenv("FAKE_OP_NS");
    if (e)
        op_ns = strtoull(e, NULL, 10);
    e = getenv("FAKE_NCCL_HANG_AFTER");
    if (e)
        hang_after = strtol(e, NULL, 10);
}

/* ---------------- CUDA runtime ---------------- */

struct fake_rdv;

struct item {
    int kind; /* 0 operation, 1 event record, 2 copy, 3 host function */
    struct fake_rdv *r;
    struct CUevent_st *ev;
    uint64_t dur;
    void (*fn)(void *); /* kind 3: run on a thread of its own, as CUDA does */
    void *arg;
    pthread_t th;
    _Atomic int state; /* kind 3: 0 not started, 1 running, 2 returned */
    struct item *next;
};

static void *host_fn_main(void *p)
{
    struct item *it = p;
    it->fn(it->arg);
    atomic_store(&it->state, 2);
    return NULL;
}

struct cap_op; /* an NCCL operation captured into a graph */

struct CUstream_st {
    int dev;
    struct item *head, *tail;
    uint64_t vt; /* virtual time of the last completed item */
    bool capturing;
    struct cap_op *cap, *cap_tail;
};

struct CUevent_st {
    int dev;
    bool done;
    uint64_t t;
    struct CUstream_st *s; /* where it was last recorded */
};

struct CUgraph_st {
    struct cap_op *ops;
};

struct CUgraphExec_st {
    struct cap_op *ops;
};

static int ndevices(void)
{
    if (getenv("FAKE_CUDA_NO_DEVICE"))
        return 0;
    const char *e = getenv("FAKE_CUDA_DEVICES");
    return e ? atoi(e) : 2;
}

static bool rdv_complete(struct fake_rdv *r);
static void rdv_unref(struct fake_rdv *r);

/* Complete what can complete, in order. Lock held. */
static void progress(struct CUstream_st *s)
{
    while (s->head) {
        struct item *it = s->head;
        uint64_t t = now_ns();
        if (it->kind == 0) {
            if (!rdv_complete(it->r))
                return;
            s->vt = (s->vt > t ? s->vt : t) + it->dur;
            rdv_unref(it->r);
        } else if (it->kind == 2) {
            s->vt = (s->vt > t ? s->vt : t) + it->dur;
        } else if (it->kind == 3) {
            int st = atomic_load(&it->state);
            if (st == 0) {
                atomic_store(&it->state, 1);
                pthread_create(&it->th, NULL, host_fn_main, it);
                return;
            }
            if (st == 1)
                return;
            pthread_join(it->th, NULL);
            s->vt = s->vt > now_ns() ? s->vt : now_ns();
        } else {
            it->ev->t = s->vt > t ? s->vt : t;
            it->ev->done = true;
        }
        s->head = it->next;
        if (!s->head)
            s->tail = NULL;
        free(it);
    }
}

static void push(struct CUstream_st *s, struct item *it)
{
    it->next = NULL;
    if (s->tail)
        s->tail->next = it;
    else
        s->head = it;
    s->tail = it;
}

int cudaGetDeviceCount(int *count)
{
    *count = ndevices();
    return *count ? 0 : CU_ERR_NO_DEVICE;
}

int cudaSetDevice(int device)
{
    if (device < 0 || device >= ndevices())
        return 101; /* cudaErrorInvalidDevice */
    cur_dev = device;
    return 0;
}

int cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    snprintf(pciBusId, (size_t)len, "0000:%02X:00.0", 0x18 + device);
    return 0;
}

const char *cudaGetErrorString(int error)
{
    return error == CU_ERR_NOT_READY ? "device not ready" : "fake CUDA error";
}

const char *cudaGetErrorName(int error)
{
    return error == CU_ERR_NOT_READY ? "cudaErrorNotReady" : "cudaErrorFake";
}

int cudaGetLastError(void)
{
    return 0;
}

int cudaRuntimeGetVersion(int *v)
{
    *v = 13000;
    return 0;
}

int cudaDriverGetVersion(int *v)
{
    *v = 13000;
    return 0;
}

int cudaMemGetInfo(size_t *fr, size_t *total)
{
    *fr = 64ull << 30;
    *total = 80ull << 30;
    return 0;
}

int cudaMalloc(void **p, size_t size)
{
    *p = calloc(1, size ? size : 1);
    return *p ? 0 : 2; /* cudaErrorMemoryAllocation */
}

int cudaFree(void *p)
{
    free(p);
    return 0;
}

int cudaMemset(void *p, int v, size_t n)
{
    memset(p, v, n);
    return 0;
}

int cudaMemcpy(void *dst, const void *src, size_t n, int kind)
{
    (void)kind;
    memcpy(dst, src, n);
    return 0;
}

int cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, struct CUstream_st *s)
{
    (void)kind;
    memcpy(dst, src, n);
    struct item *it = calloc(1, sizeof(*it));
    it->kind = 2;
    it->dur = n / 25; /* 25 GB/s */
    pthread_mutex_lock(&lock);
    push(s, it);
    pthread_mutex_unlock(&lock);
    return 0;
}

int cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
    (void)flags;
    return cudaMalloc(p, size);
}

int cudaFreeHost(void *p)
{
    free(p);
    return 0;
}

int cudaStreamCreateWithFlags(struct CUstream_st **s, unsigned int flags)
{
    if (flags != CU_STREAM_NON_BLOCKING)
        return 1; /* the transport must never use a blocking stream */
    *s = calloc(1, sizeof(**s));
    (*s)->dev = cur_dev;
    return 0;
}

int cudaStreamDestroy(struct CUstream_st *s)
{
    pthread_mutex_lock(&lock);
    while (s->head) {
        struct item *n = s->head->next;
        if (s->head->kind == 0)
            rdv_unref(s->head->r);
        if (s->head->kind == 3 && atomic_load(&s->head->state) != 0)
            pthread_join(s->head->th, NULL);
        free(s->head);
        s->head = n;
    }
    pthread_mutex_unlock(&lock);
    free(s);
    return 0;
}

int cudaStreamQuery(struct CUstream_st *s)
{
    pthread_mutex_lock(&lock);
    progress(s);
    int rc = s->head ? CU_ERR_NOT_READY : 0;
    pthread_mutex_unlock(&lock);
    return rc;
}

int cudaLaunchHostFunc(struct CUstream_st *s, void (*fn)(void *), void *arg)
{
    struct item *it = calloc(1, sizeof(*it));
    it->kind = 3;
    it->fn = fn;
    it->arg = arg;
    pthread_mutex_lock(&lock);
    push(s, it);
    pthread_mutex_unlock(&lock);
    return 0;
}

int cudaStreamSynchronize(struct CUstream_st *s)
{
    /* Bounded: a hung fake operation must not hang the test. */
    for (int i = 0; i < 2000; i++) {
        if (cudaStreamQuery(s) == 0)
            return 0;
        usleep(1000);
    }
    return 999;
}

int cudaEventCreateWithFlags(struct CUevent_st **e, unsigned int flags)
{
    (void)flags;
    *e = calloc(1, sizeof(**e));
    (*e)->dev = cur_dev;
    (*e)->done = true;
    return 0;
}

int cudaEventDestroy(struct CUevent_st *e)
{
    free(e);
    return 0;
}

int cudaEventRecord(struct CUevent_st *e, struct CUstream_st *s)
{
    if (e->dev != s->dev)
        return 400; /* cudaErrorInvalidResourceHandle: event and stream on different GPUs */
    struct item *it = calloc(1, sizeof(*it));
    it->kind = 1;
    it->ev = e;
    pthread_mutex_lock(&lock);
    e->done = false;
    e->s = s;
    push(s, it);
    pthread_mutex_unlock(&lock);
    return 0;
}

int cudaEventQuery(struct CUevent_st *e)
{
    pthread_mutex_lock(&lock);
    if (!e->done && e->s)
        progress(e->s);
    bool done = e->done;
    pthread_mutex_unlock(&lock);
    return done ? 0 : CU_ERR_NOT_READY;
}

int cudaEventElapsedTime(float *ms, struct CUevent_st *a, struct CUevent_st *b)
{
    if (!a->done || !b->done)
        return CU_ERR_NOT_READY;
    *ms = (float)((double)(b->t - a->t) / 1e6);
    return 0;
}

/* ---------------- NCCL ---------------- */

#define FAKE_MAXR 16 /* ranks of one communicator */

struct part { /* one rank's share of an operation */
    int rank;
    const void *send;
    void *recv;
    size_t count;
    int dtype, op, root;
    int coll; /* enum nccl_util_coll, or -1 for send/recv lists */
    int nsr;
    struct {
        bool send;
        const void *buf;
        void *rbuf;
        size_t count;
        int peer;
    } sr[2 * FAKE_MAXR];
};

struct fake_set { /* the communicators of one unique id in this process */
    uint64_t uid;
    int nranks, nlocal;
    struct ncclComm *local[FAKE_MAXR];
    int shm_fd;
    struct shm_seg *shm;        /* ranks in other processes: synchronisation only */
    struct fake_rdv *slots[64]; /* open operations by sequence number */
    bool connected;             /* channels connect at the first operation, as NCCL does */
    struct fake_set *next;
};

struct shm_seg {
    _Atomic int attached;
    _Atomic uint64_t posted[FAKE_MAXR]; /* operations each rank has enqueued */
};

struct fake_rdv {
    struct fake_set *set;
    uint64_t seq;
    int arrived;
    bool done, hung, detached;
    struct part parts[FAKE_MAXR];
    int refs; /* queued items that wait for it */
};

struct ncclComm {
    struct fake_set *set;
    int rank, dev;
    uint64_t seq;
    int init_polls; /* ncclInProgress this many times after init */
    bool aborted;
    /* the operation being built inside a group */
    bool pending;
    struct part p;
    struct CUstream_st *stream;
};

struct cap_op {
    struct ncclComm *comm;
    struct part p;
    struct cap_op *next;
};

static struct fake_set *sets;
static int group_depth;
static struct ncclComm *group_comms[256];
static int ngroup;

static void rdv_unref(struct fake_rdv *r)
{
    if (--r->refs == 0 && r->detached)
        free(r);
}

/* Debug log, as NCCL writes it (the parser's input). */
static FILE *dbg;
static bool dbg_init, dbg_tuning;

static void debug_setup(void)
{
    if (dbg && dbg != stdout)
        fclose(dbg);
    dbg = NULL;
    dbg_init = dbg_tuning = false;
    const char *lvl = getenv("NCCL_DEBUG"), *sub = getenv("NCCL_DEBUG_SUBSYS");
    const char *file = getenv("NCCL_DEBUG_FILE");
    if (!lvl || strcasecmp(lvl, "INFO"))
        return;
    dbg_init = !sub || strstr(sub, "INIT");
    dbg_tuning = sub && strstr(sub, "TUNING");
    dbg = file ? fopen(file, "w") : stdout;
    if (dbg)
        setlinebuf(dbg);
}

static bool dbg_ready;

#define INFO(fmt, ...)                                                                             \
    do {                                                                                           \
        if (!dbg_ready) {                                                                          \
            debug_setup();                                                                         \
            dbg_ready = true;                                                                      \
        }                                                                                          \
        if (dbg)                                                                                   \
            fprintf(dbg, "fake:%d:%d [%d] NCCL INFO " fmt "\n", (int)getpid(), (int)gettid(),      \
                    cur_dev, __VA_ARGS__);                                                         \
    } while (0)

void ncclResetDebugInit(void)
{
    pthread_mutex_lock(&lock);
    dbg_ready = false;
    pthread_mutex_unlock(&lock);
}

int ncclGetVersion(int *v)
{
#ifdef FAKE_NO_SHRINK
    *v = 22605;
#else
    *v = 22809;
#endif
    return 0;
}

static void id_log(const char *what, uint64_t uid, int rank)
{
    const char *path = getenv("FAKE_NCCL_ID_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    if (rank < 0)
        fprintf(f, "%s %016llx pid %d\n", what, (unsigned long long)uid, (int)getpid());
    else
        fprintf(f, "%s %016llx rank %d pid %d\n", what, (unsigned long long)uid, rank,
                (int)getpid());
    fclose(f);
}

int ncclGetUniqueId(struct cudart_nccl_id *id)
{
    memset(id, 0, sizeof(*id));
    uint64_t u = now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)random();
    memcpy(id->internal, &u, 8);
    id_log("made", u, -1);
    return 0;
}

const char *ncclGetErrorString(int r)
{
    switch (r) {
    case 0:
        return "no error";
    case 4:
        return "invalid argument";
    case 5:
        return "invalid usage";
    case 6:
        return "remote process exited or there was a network error";
    default:
        return "fake NCCL error";
    }
}

const char *ncclGetLastError(struct ncclComm *comm)
{
    (void)comm;
    return "";
}

static struct shm_seg *shm_attach(uint64_t uid, int *fd)
{
    char name[64];
    snprintf(name, sizeof(name), "/fabtop-fake-%016llx", (unsigned long long)uid);
    *fd = shm_open(name, O_RDWR | O_CREAT, 0600);
    if (*fd < 0)
        return NULL;
    if (ftruncate(*fd, sizeof(struct shm_seg)) < 0) {
        close(*fd);
        *fd = -1;
        return NULL;
    }
    void *p = mmap(NULL, sizeof(struct shm_seg), PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    close(*fd); /* the mapping stays */
    *fd = -1;
    return p == MAP_FAILED ? NULL : p;
}

/* A new communicator: rank of the set of unique id uid (made with nranks at its first rank in
 * this process), on device dev. Lock held. */
static struct ncclComm *join_set(uint64_t uid, int nranks, int rank, int dev)
{
    struct fake_set *s = sets;
    while (s && s->uid != uid)
        s = s->next;
    if (!s) {
        s = calloc(1, sizeof(*s));
        s->uid = uid;
        s->nranks = nranks;
        s->shm_fd = -1;
        s->next = sets;
        sets = s;
    }
    struct ncclComm *c = calloc(1, sizeof(*c));
    c->set = s;
    c->rank = rank;
    c->dev = dev;
    c->init_polls = 2;
    s->local[s->nlocal++] = c;
    return c;
}

int ncclCommInitRankConfig(struct ncclComm **comm, int nranks, struct cudart_nccl_id id, int rank,
                           struct cudart_nccl_config *cfg)
{
    /* The configuration must be what NCCL_CONFIG_INITIALIZER makes, non-blocking. */
    if (!cfg || cfg->magic != CUDART_NCCL_CONFIG_MAGIC || cfg->size < 16 + 4 || cfg->blocking != 0)
        return 4;
    if (nranks < 1 || nranks > FAKE_MAXR || rank < 0 || rank >= nranks)
        return 4;
    uint64_t uid;
    memcpy(&uid, id.internal, 8);
    id_log("init", uid, rank);
    pthread_mutex_lock(&lock);
    struct ncclComm *c = join_set(uid, nranks, rank, cur_dev);
    *comm = c;
    INFO("comm %p rank %d nRanks %d nNodes 1 localRanks %d localRank %d MNNVL 0", (void *)c, rank,
         nranks, nranks, rank);
    if (rank == 0) {
        INFO("NCCL version 2.28.9+fake%s", "");
        INFO("comm %p, 2 coll channels, 2 collnet channels, 0 nvls channels, 4 p2p channels, 2 "
             "p2p channels per peer",
             (void *)c);
    }
    pthread_mutex_unlock(&lock);
    return group_depth ? 0 : NCCL_R_IN_PROGRESS;
}

/* Ranks of the set that live in other processes: meet through shared memory. Lock held. */
static void shm_check(struct fake_set *s)
{
    if (s->nlocal < s->nranks && !s->shm) {
        s->shm = shm_attach(s->uid, &s->shm_fd);
        if (s->shm && atomic_fetch_add(&s->shm->attached, s->nlocal) + s->nlocal >= s->nranks) {
            /* Everyone is in: the name can go (the mappings stay). */
            char name[64];
            snprintf(name, sizeof(name), "/fabtop-fake-%016llx", (unsigned long long)s->uid);
            shm_unlink(name);
        }
    }
}

int ncclCommGetAsyncError(struct ncclComm *c, int *st)
{
    pthread_mutex_lock(&lock);
    shm_check(c->set);
    if (c->aborted)
        *st = 6;
    else if (c->init_polls > 0) {
        c->init_polls--;
        *st = NCCL_R_IN_PROGRESS;
    } else if (c->set->shm && atomic_load(&c->set->shm->attached) < c->set->nranks)
        *st = NCCL_R_IN_PROGRESS; /* the other process has not joined yet */
    else
        *st = 0;
    pthread_mutex_unlock(&lock);
    return 0;
}

int ncclCommAbort(struct ncclComm *c)
{
    pthread_mutex_lock(&lock);
    c->aborted = true;
    pthread_mutex_unlock(&lock);
    return 0;
}

#ifndef FAKE_NO_SHRINK
/* ncclCommShrink (NCCL 2.27): a child communicator without the excluded ranks, the survivors
 * renumbered in order. Every surviving rank calls it, in any process: the child's id follows
 * from the parent's and the list, so ranks of two processes meet again. NCCL_SHRINK_ABORT
 * first ends the parent's open operations (no data: they complete, so the streams drain,
 * as NCCL's abort ends their kernels) and aborts the parent. Built without it
 * (-DFAKE_NO_SHRINK), the library is an NCCL before 2.27. */
int ncclCommShrink(struct ncclComm *c, int *excl, int nexcl, struct ncclComm **out,
                   struct cudart_nccl_config *cfg, int flags)
{
    if (!c || !out || nexcl < 1 || !excl ||
        (cfg && (cfg->magic != CUDART_NCCL_CONFIG_MAGIC || cfg->blocking != 0)))
        return 4; /* ncclInvalidArgument */
    pthread_mutex_lock(&lock);
    struct fake_set *p = c->set;
    int rank = c->rank;
    uint64_t uid = p->uid * 1000003ull + 0x5348524b;
    for (int i = 0; i < nexcl; i++) {
        if (excl[i] < 0 || excl[i] >= p->nranks || excl[i] == c->rank) {
            pthread_mutex_unlock(&lock);
            return 4;
        }
        rank -= excl[i] < c->rank;
        uid ^= 1ull << (excl[i] % 64);
    }
    if (flags & CUDART_NCCL_SHRINK_ABORT) {
        for (int k = 0; k < 64; k++)
            if (p->slots[k])
                p->slots[k]->done = true;
        for (int k = 0; k < p->nlocal; k++)
            p->local[k]->aborted = true;
    }
    struct ncclComm *n = join_set(uid, p->nranks - nexcl, rank, c->dev);
    *out = n;
    INFO("comm %p shrunk from %d to %d ranks: rank %d is now %d", (void *)n, p->nranks,
         n->set->nranks, c->rank, rank);
    pthread_mutex_unlock(&lock);
    return group_depth ? 0 : NCCL_R_IN_PROGRESS;
}
#endif

int ncclCommFinalize(struct ncclComm *c)
{
    (void)c;
    return 0;
}

int ncclCommDestroy(struct ncclComm *c)
{
    pthread_mutex_lock(&lock);
    c->aborted = true; /* leaked on purpose: queued items may still point at the set */
    pthread_mutex_unlock(&lock);
    return 0;
}

int ncclGroupStart(void)
{
    pthread_mutex_lock(&lock);
    group_depth++;
    pthread_mutex_unlock(&lock);
    return 0;
}

static size_t tsize(int dt)
{
    static const size_t sz[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    return dt >= 0 && dt < 12 ? sz[dt] : 1;
}

static double ld(int dt, const void *b, size_t i)
{
    switch (dt) {
    case 0:
        return ((const int8_t *)b)[i];
    case 1:
        return ((const uint8_t *)b)[i];
    case 2:
        return ((const int32_t *)b)[i];
    case 3:
        return ((const uint32_t *)b)[i];
    case 4:
        return (double)((const int64_t *)b)[i];
    case 5:
        return (double)((const uint64_t *)b)[i];
    case 6:
        return nccl_util_half_to_float(((const uint16_t *)b)[i]);
    case 7:
        return ((const float *)b)[i];
    case 8:
        return ((const double *)b)[i];
    case 9:
        return nccl_util_bf16_to_float(((const uint16_t *)b)[i]);
    default:
        return 0;
    }
}

static void st(int dt, void *b, size_t i, double v)
{
    switch (dt) {
    case 0:
        ((int8_t *)b)[i] = (int8_t)v;
        break;
    case 1:
        ((uint8_t *)b)[i] = (uint8_t)v;
        break;
    case 2:
        ((int32_t *)b)[i] = (int32_t)v;
        break;
    case 3:
        ((uint32_t *)b)[i] = (uint32_t)v;
        break;
    case 4:
        ((int64_t *)b)[i] = (int64_t)v;
        break;
    case 5:
        ((uint64_t *)b)[i] = (uint64_t)v;
        break;
    case 6:
        ((uint16_t *)b)[i] = nccl_util_float_to_half((float)v);
        break;
    case 7:
        ((float *)b)[i] = (float)v;
        break;
    case 8:
        ((double *)b)[i] = v;
        break;
    case 9:
        ((uint16_t *)b)[i] = nccl_util_float_to_bf16((float)v);
        break;
    default:
        break;
    }
}

static double red(int op, double a, double b)
{
    return op == 1 ? a * b : op == 2 ? (a > b ? a : b) : op == 3 ? (a < b ? a : b) : a + b;
}

/* Compute a complete single-process operation (all ranks' parts present). */
static void compute(struct fake_rdv *r)
{
    int n = r->set->nranks;
    struct part *P = r->parts;
    int dt = P[0].dtype, op = P[0].op;
    size_t cnt = P[0].count, ts = tsize(dt);
    if (P[0].coll < 0) { /* send/recv: each receive takes the matching send */
        for (int q = 0; q < n; q++)
            for (int i = 0; i < P[q].nsr; i++) {
                if (P[q].sr[i].send)
                    continue;
                int from = P[q].sr[i].peer;
                for (int j = 0; j < P[from].nsr; j++)
                    if (P[from].sr[j].send && P[from].sr[j].peer == q)
                        memcpy(P[q].sr[i].rbuf, P[from].sr[j].buf, P[q].sr[i].count * ts);
            }
        return;
    }
    size_t total = P[0].coll == NCCL_COLL_ALL_GATHER || P[0].coll == NCCL_COLL_REDUCE_SCATTER ||
                           P[0].coll == NCCL_COLL_ALLTOALL
                       ? cnt * (size_t)n
                       : cnt;
    /* Inputs first (an in-place operation overwrites them). */
    size_t in_n = P[0].coll == NCCL_COLL_ALL_GATHER ? cnt : total;
    double *in = malloc((size_t)n * in_n * sizeof(double));
    for (int q = 0; q < n; q++)
        for (size_t i = 0; i < in_n; i++)
            in[(size_t)q * in_n + i] = ld(dt, P[q].send, i);
    for (int q = 0; q < n; q++) {
        switch (P[0].coll) {
        case NCCL_COLL_ALL_REDUCE:
        case NCCL_COLL_REDUCE:
            if (P[0].coll == NCCL_COLL_REDUCE && q != P[0].root)
                break;
            for (size_t i = 0; i < cnt; i++) {
                double v = in[i];
                for (int k = 1; k < n; k++)
                    v = red(op, v, in[(size_t)k * in_n + i]);
                st(dt, P[q].recv, i, op == 4 ? v / n : v);
            }
            break;
        case NCCL_COLL_BROADCAST:
            for (size_t i = 0; i < cnt; i++)
                st(dt, P[q].recv, i, in[(size_t)P[0].root * in_n + i]);
            break;
        case NCCL_COLL_ALL_GATHER:
            for (size_t i = 0; i < cnt * (size_t)n; i++)
                st(dt, P[q].recv, i, in[(i / cnt) * in_n + i % cnt]);
            break;
        case NCCL_COLL_REDUCE_SCATTER:
            for (size_t i = 0; i < cnt; i++) {
                double v = in[(size_t)q * cnt + i];
                for (int k = 1; k < n; k++)
                    v = red(op, v, in[(size_t)k * in_n + (size_t)q * cnt + i]);
                st(dt, P[q].recv, i, op == 4 ? v / n : v);
            }
            break;
        case NCCL_COLL_ALLTOALL:
            for (size_t i = 0; i < cnt * (size_t)n; i++)
                st(dt, P[q].recv, i, in[(i / cnt) * in_n + (size_t)q * cnt + i % cnt]);
            break;
        default:
            break;
        }
    }
    free(in);
}

static bool rdv_complete(struct fake_rdv *r)
{
    if (r->done)
        return true;
    if (r->hung)
        return false;
    struct fake_set *s = r->set;
    if (s->shm) {
        for (int q = 0; q < s->nranks; q++)
            if (atomic_load(&s->shm->posted[q]) <= r->seq)
                return false;
        r->done = true;
        return true;
    }
    return false;
}

/* Post one rank's part of operation `seq` of its set, queued on its stream. Lock held. */
static void post(struct ncclComm *c, const struct part *p, struct CUstream_st *s)
{
    struct fake_set *set = c->set;
    uint64_t seq = c->seq++;
    struct fake_rdv **slot = &set->slots[seq % 64], *r = *slot;
    if (!r || r->seq != seq) {
        if (r) { /* an old operation leaves its slot; freed once nothing waits on it */
            r->detached = true;
            if (r->refs == 0)
                free(r);
        }
        r = *slot = calloc(1, sizeof(*r));
        r->set = set;
        r->seq = seq;
        if (hang_after >= 0 && atomic_fetch_add(&executed, 1) >= hang_after)
            r->hung = true;
    }
    r->parts[c->rank] = *p;
    r->arrived++;
    r->refs++;
    shm_check(set);
    if (set->shm)
        atomic_store(&set->shm->posted[c->rank], seq + 1);
    else if (r->arrived == set->nranks && !r->hung) {
        compute(r);
        r->done = true;
    }
    struct item *it = calloc(1, sizeof(*it));
    it->kind = 0;
    it->r = r;
    size_t bytes = p->coll < 0 ? p->sr[0].count * tsize(p->dtype) : p->count * tsize(p->dtype);
    it->dur = op_ns + bytes / 300; /* 300 GB/s */
    push(s, it);
    if (c->rank == 0 && dbg_tuning && p->coll >= 0)
        INFO("%s: %zu Bytes -> Algo RING proto %s channel{Lo..Hi}={0..1}",
             nccl_util_coll_func((enum nccl_util_coll)p->coll), p->count * tsize(p->dtype),
             bytes <= 65536 ? "LL" : "SIMPLE");
}

static int enqueue(struct ncclComm *c, const struct part *p, struct CUstream_st *s)
{
    pthread_mutex_lock(&lock);
    if (c->aborted) {
        pthread_mutex_unlock(&lock);
        return 5;
    }
    if (!dbg_ready) {
        debug_setup();
        dbg_ready = true;
    }
    if (!c->set->connected) { /* NCCL_RUNTIME_CONNECT: connections at the first operation */
        c->set->connected = true;
        INFO("Channel 00/0 : 0[0] -> 1[1] via %s", "P2P/FAKE/read");
    }
    if (group_depth == 0) {
        pthread_mutex_unlock(&lock);
        return 5; /* fabtop always groups */
    }
    if (p->coll < 0) { /* add to the rank's send/recv list for this group */
        if (!c->pending) {
            memset(&c->p, 0, sizeof(c->p));
            c->p.coll = -1;
            c->p.dtype = p->dtype;
            c->p.rank = c->rank;
        }
        if (c->p.nsr < 2 * FAKE_MAXR)
            c->p.sr[c->p.nsr++] = p->sr[0];
    } else {
        c->p = *p;
        c->p.rank = c->rank;
    }
    if (!c->pending && ngroup < 256)
        group_comms[ngroup++] = c;
    c->pending = true;
    c->stream = s;
    pthread_mutex_unlock(&lock);
    return 0;
}

int ncclGroupEnd(void)
{
    pthread_mutex_lock(&lock);
    int rc = 0;
    if (--group_depth == 0) {
        for (int i = 0; i < ngroup; i++) {
            struct ncclComm *c = group_comms[i];
            if (!c->pending)
                continue;
            c->pending = false;
            if (c->stream->capturing) {
                struct cap_op *o = calloc(1, sizeof(*o));
                o->comm = c;
                o->p = c->p;
                if (c->stream->cap_tail)
                    c->stream->cap_tail->next = o;
                else
                    c->stream->cap = o;
                c->stream->cap_tail = o;
            } else {
                post(c, &c->p, c->stream);
            }
        }
        ngroup = 0;
        /* Initialisation in a group: non-blocking communicators report ncclInProgress. */
        for (struct fake_set *s = sets; s; s = s->next)
            for (int k = 0; k < s->nlocal; k++)
                if (s->local[k]->init_polls > 0)
                    rc = NCCL_R_IN_PROGRESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int coll(int c, const void *sb, void *rb, size_t count, int dt, int op, int root,
                struct ncclComm *comm, struct CUstream_st *s)
{
    if (comm->dev != s->dev)
        return 4; /* stream of another GPU */
    struct part p = {
        .send = sb, .recv = rb, .count = count, .dtype = dt, .op = op, .root = root, .coll = c};
    return enqueue(comm, &p, s);
}

int ncclAllReduce(const void *sb, void *rb, size_t count, int dt, int op, struct ncclComm *c,
                  struct CUstream_st *s)
{
    return coll(NCCL_COLL_ALL_REDUCE, sb, rb, count, dt, op, 0, c, s);
}

int ncclBroadcast(const void *sb, void *rb, size_t count, int dt, int root, struct ncclComm *c,
                  struct CUstream_st *s)
{
    return coll(NCCL_COLL_BROADCAST, sb, rb, count, dt, 0, root, c, s);
}

int ncclReduce(const void *sb, void *rb, size_t count, int dt, int op, int root, struct ncclComm *c,
               struct CUstream_st *s)
{
    return coll(NCCL_COLL_REDUCE, sb, rb, count, dt, op, root, c, s);
}

int ncclAllGather(const void *sb, void *rb, size_t count, int dt, struct ncclComm *c,
                  struct CUstream_st *s)
{
    return coll(NCCL_COLL_ALL_GATHER, sb, rb, count, dt, 0, 0, c, s);
}

int ncclReduceScatter(const void *sb, void *rb, size_t count, int dt, int op, struct ncclComm *c,
                      struct CUstream_st *s)
{
    return coll(NCCL_COLL_REDUCE_SCATTER, sb, rb, count, dt, op, 0, c, s);
}

int ncclAlltoAll(const void *sb, void *rb, size_t count, int dt, struct ncclComm *c,
                 struct CUstream_st *s)
{
    return coll(NCCL_COLL_ALLTOALL, sb, rb, count, dt, 0, 0, c, s);
}

int ncclSend(const void *sb, size_t count, int dt, int peer, struct ncclComm *c,
             struct CUstream_st *s)
{
    struct part p = {.dtype = dt, .coll = -1, .nsr = 1};
    p.sr[0].send = true;
    p.sr[0].buf = sb;
    p.sr[0].count = count;
    p.sr[0].peer = peer;
    return enqueue(c, &p, s);
}

int ncclRecv(void *rb, size_t count, int dt, int peer, struct ncclComm *c, struct CUstream_st *s)
{
    struct part p = {.dtype = dt, .coll = -1, .nsr = 1};
    p.sr[0].send = false;
    p.sr[0].rbuf = rb;
    p.sr[0].count = count;
    p.sr[0].peer = peer;
    return enqueue(c, &p, s);
}

/* ---------------- graphs ---------------- */

int cudaStreamBeginCapture(struct CUstream_st *s, int mode)
{
    if (mode < CU_CAPTURE_GLOBAL || mode > CU_CAPTURE_RELAXED)
        return 1;
    s->capturing = true;
    s->cap = s->cap_tail = NULL;
    return 0;
}

int cudaStreamEndCapture(struct CUstream_st *s, struct CUgraph_st **g)
{
    if (!s->capturing)
        return 1;
    s->capturing = false;
    *g = calloc(1, sizeof(**g));
    (*g)->ops = s->cap;
    s->cap = s->cap_tail = NULL;
    return 0;
}

int cudaGraphInstantiateWithFlags(struct CUgraphExec_st **x, struct CUgraph_st *g,
                                  unsigned long long flags)
{
    (void)flags;
    *x = calloc(1, sizeof(**x));
    (*x)->ops = g->ops;
    g->ops = NULL;
    return 0;
}

int cudaGraphLaunch(struct CUgraphExec_st *x, struct CUstream_st *s)
{
    pthread_mutex_lock(&lock);
    for (struct cap_op *o = x->ops; o; o = o->next)
        post(o->comm, &o->p, s);
    pthread_mutex_unlock(&lock);
    return 0;
}

int cudaGraphExecDestroy(struct CUgraphExec_st *x)
{
    while (x->ops) {
        struct cap_op *n = x->ops->next;
        free(x->ops);
        x->ops = n;
    }
    free(x);
    return 0;
}

int cudaGraphDestroy(struct CUgraph_st *g)
{
    free(g);
    return 0;
}

int cudaDeviceCanAccessPeer(int *can, int a, int b)
{
    (void)a;
    (void)b;
    *can = 1;
    return 0;
}
