/* nccl_util: the parts of the NCCL transport that need no GPU, so they are unit-tested
 * everywhere: collective / data type / reduction names, how a size maps to counts and
 * buffers, algorithm and bus bandwidth as nccl-tests computes them, the parser for NCCL's
 * debug output (algorithm, protocol, transport it chose), and the correctness-check
 * pattern. Never includes curses; no CUDA or NCCL headers. */
#ifndef NCCL_UTIL_H
#define NCCL_UTIL_H

#include <stdbool.h>
#include <stdint.h>

enum nccl_util_coll {
    NCCL_COLL_ALL_REDUCE = 0,
    NCCL_COLL_ALL_GATHER,
    NCCL_COLL_REDUCE_SCATTER,
    NCCL_COLL_ALLTOALL,
    NCCL_COLL_BROADCAST,
    NCCL_COLL_REDUCE,
    NCCL_COLL_SENDRECV, /* each rank sends to rank+1 and receives from rank-1 (a ring) */
    NCCL_COLL_COUNT
};

/* "all_reduce", ...; parse accepts these and "allreduce"-style spellings. -1 if unknown. */
const char *nccl_util_coll_name(enum nccl_util_coll c);
int nccl_util_coll_parse(const char *s);
/* The name NCCL prints in its tuning lines ("AllReduce"), NULL for send/recv. */
const char *nccl_util_coll_func(enum nccl_util_coll c);
/* Does the collective take a reduction operation / a root rank? */
bool nccl_util_coll_reduces(enum nccl_util_coll c);
bool nccl_util_coll_rooted(enum nccl_util_coll c);

struct nccl_util_dtype {
    const char *name; /* "float", "half", "bfloat16", ... */
    int nccl;         /* ncclDataType_t value */
    int size;         /* bytes per element */
    bool is_float;
    bool checkable; /* the correctness check can fill and verify it (not fp8) */
};
/* By name or alias (float32/fp32, float16/fp16, bf16, float64/fp64, ...); NULL if unknown. */
const struct nccl_util_dtype *nccl_util_dtype_find(const char *name);
/* The comma-separated list of names, for error messages. */
const char *nccl_util_dtype_names(void);

/* "sum", "prod", "max", "min", "avg" <-> ncclRedOp_t. */
const char *nccl_util_redop_name(int op);
int nccl_util_redop_parse(const char *s);

/* How an operation of size S bytes is laid out, with nccl-tests' meaning of S:
 *   all_reduce, broadcast, reduce, sendrecv: S is the array size on every rank
 *     (count = S / type size; send and receive buffers S);
 *   all_gather: S is the gathered total (sendcount = S / (type size x n); send S/n, recv S);
 *   reduce_scatter: S is the total before scattering (recvcount = S / (type size x n);
 *     send S, recv S/n);
 *   alltoall: S is each rank's whole send buffer (count per peer = S / (type size x n);
 *     send S, recv S).
 * bytes is the S actually used after rounding the count down (what bandwidth divides). */
struct nccl_util_layout {
    uint64_t count;      /* elements passed to NCCL (per rank, or per peer for alltoall) */
    uint64_t bytes;      /* S after rounding: count x type size (x n for the gathered kinds) */
    uint64_t send_bytes; /* buffer sizes per rank */
    uint64_t recv_bytes;
    uint64_t elements; /* nccl-tests' "count" column: bytes / type size */
};
/* 0, or -EINVAL when S is smaller than one element per rank (count would be 0). */
int nccl_util_layout(enum nccl_util_coll c, uint64_t size, int type_size, int nranks,
                     struct nccl_util_layout *out);

/* Bus bandwidth factor (nccl-tests doc/PERFORMANCE.md; ../shared/data/nccl-tests-method.md):
 *   all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n;
 *   broadcast, reduce, sendrecv 1.
 * algbw = bytes / seconds / 1e9 (GB/s = 10^9 bytes/s, as nccl-tests prints);
 * busbw = algbw x factor. */
double nccl_util_busbw_factor(enum nccl_util_coll c, int nranks);
const char *nccl_util_busbw_formula(enum nccl_util_coll c);
void nccl_util_bw(enum nccl_util_coll c, uint64_t bytes, int nranks, double seconds,
                  double *algbw_GBps, double *busbw_GBps);

/* ---- NCCL's debug output (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,TUNING) ---- */

#define NCCL_LOG_MAX_TRANSPORTS 8
#define NCCL_LOG_MAX_TUNING     64

struct nccl_util_tuning {
    char func[24];    /* "AllReduce" */
    uint64_t bytes;   /* as NCCL prints it: count x type size per rank */
    char algo[24];    /* "RING", "TREE", "NVLS", "PAT", "COLLNET_DIRECT", ... */
    char proto[16];   /* "LL", "LL128", "SIMPLE" */
    int ch_lo, ch_hi; /* channels used */
};

struct nccl_util_log {
    char version[64];                               /* "2.28.9+cuda13.0" */
    char network[32];                               /* "Socket", "IB", "" */
    int ntransports;                                /* distinct connection kinds seen */
    char transports[NCCL_LOG_MAX_TRANSPORTS][48];   /* "P2P/CUMEM/read", "SHM/direct/direct" */
    int nnodes, nranks;                             /* -1 unknown */
    int coll_channels, nvls_channels, p2p_channels; /* -1 unknown */
    int nvls;                                       /* NVLS multicast: 1 yes, 0 no, -1 unknown */
    int ntuning;
    struct nccl_util_tuning tuning[NCCL_LOG_MAX_TUNING];
    char last_warn[256];
};

void nccl_util_log_init(struct nccl_util_log *l);
/* Feed one line (with or without its "host:pid:tid [dev] NCCL INFO " prefix). Returns true
 * when it recognised something. */
bool nccl_util_log_line(struct nccl_util_log *l, const char *line);
/* Feed a whole file; 0 or -errno. */
int nccl_util_log_file(struct nccl_util_log *l, const char *path);
/* The last tuning decision seen for func ("AllReduce") at bytes, or NULL. */
const struct nccl_util_tuning *nccl_util_log_tuning(const struct nccl_util_log *l, const char *func,
                                                    uint64_t bytes);

/* ---- correctness check ---- */

/* The value rank `rank` puts at index j of its send buffer: small integers, so sums and
 * products stay exact in every checked type (1..5; 1..2 for prod). */
double nccl_util_check_value(int redop, int rank, uint64_t j);
/* Fill buf with elements [first, first + n) of rank's send-buffer pattern (buf[0] is element
 * `first`), so large buffers can be filled in chunks. */
void nccl_util_check_fill(const struct nccl_util_dtype *t, int redop, int rank, void *buf,
                          uint64_t first, uint64_t n);
/* The value element i of rank's receive buffer must hold after the operation (layout as
 * nccl_util_layout gives it); returns false where the buffer is not defined (reduce off the root).
 */
bool nccl_util_check_expected(enum nccl_util_coll c, int redop, int nranks, int rank, int root,
                              uint64_t count, uint64_t i, double *out);
/* Count wrong elements among [first, first + n) of rank's receive buffer (recv[0] is element
 * `first`; the whole buffer is lay->recv_bytes / type size elements). */
uint64_t nccl_util_check_verify(enum nccl_util_coll c, const struct nccl_util_dtype *t, int redop,
                                int nranks, int rank, int root, const struct nccl_util_layout *lay,
                                const void *recv, uint64_t first, uint64_t n);

/* IEEE half and bfloat16 <-> float, round to nearest even. */
uint16_t nccl_util_float_to_half(float f);
float nccl_util_half_to_float(uint16_t h);
uint16_t nccl_util_float_to_bf16(float f);
float nccl_util_bf16_to_float(uint16_t b);

#endif
