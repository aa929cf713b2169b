/* cudart: the CUDA runtime and NCCL entry points fabtop uses, declared here (types, constants,
 * prototypes) and resolved with dlopen at run time, so the build needs no CUDA or NCCL headers
 * or libraries and a node without them says what is missing and why. Never includes curses.
 * tests/gpu/test_cudart_abi.c checks every declaration against the real headers when present.
 *
 * Errors: cudart_load returns 0 or -errno (-ELIBACC missing library or symbol, -ENODEV no
 * usable GPU, -ENOTSUP too old) with one sentence in why. */
#ifndef CUDART_H
#define CUDART_H

#include <stdbool.h>
#include <stddef.h>

#include "common/dynlib.h"

/* NCCL's communicator configuration as NCCL 2.28 lays it out (nccl.h, ncclConfig_v22800).
 * NCCL reads min(size, its own sizeof) bytes, checks magic, and gives every field newer than
 * `version` its default, so one layout works with older and newer libraries alike, provided
 * it is filled the way NCCL_CONFIG_INITIALIZER does (cudart_nccl_config_init). */
struct cudart_nccl_config {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int blocking;
    int cgaClusterSize;
    int minCTAs;
    int maxCTAs;
    const char *netName;
    int splitShare;
    int trafficClass;
    const char *commName;
    int collnetEnable;
    int CTAPolicy;
    int shrinkShare;
    int nvlsCTAs;
    int nChannelsPerNetPeer;
    int nvlinkCentricSched;
};

#define CUDART_NCCL_CONFIG_MAGIC   0xcafebeefu
#define CUDART_NCCL_CONFIG_VERSION 22809             /* NCCL_VERSION(2, 28, 9): the layout above */
#define CUDART_NCCL_UNDEF_INT      (-2147483647 - 1) /* NCCL_CONFIG_UNDEF_INT = INT_MIN */
#define CUDART_NCCL_ID_BYTES       128               /* NCCL_UNIQUE_ID_BYTES */

struct cudart_nccl_id {
    char internal[CUDART_NCCL_ID_BYTES];
};

#ifdef CUDART_REAL_TYPES
/* The ABI test: the same prototypes spelled with the real headers' types. */
typedef cudaError_t cu_err_t;
typedef cudaStream_t cu_stream_t;
typedef cudaEvent_t cu_event_t;
typedef cudaGraph_t cu_graph_t;
typedef cudaGraphExec_t cu_graph_exec_t;
typedef enum cudaMemcpyKind cu_memcpy_kind_t;
typedef enum cudaStreamCaptureMode cu_capture_mode_t;
typedef ncclResult_t nccl_result_t;
typedef ncclComm_t nccl_comm_t;
typedef ncclDataType_t nccl_dtype_t;
typedef ncclRedOp_t nccl_redop_t;
typedef ncclUniqueId nccl_id_t;
typedef ncclConfig_t nccl_config_t;
#else
typedef int cu_err_t; /* enum cudaError (int-sized) */
typedef struct CUstream_st *cu_stream_t;
typedef struct CUevent_st *cu_event_t;
typedef struct CUgraph_st *cu_graph_t;
typedef struct CUgraphExec_st *cu_graph_exec_t;
typedef int cu_memcpy_kind_t;  /* enum cudaMemcpyKind */
typedef int cu_capture_mode_t; /* enum cudaStreamCaptureMode */
typedef int nccl_result_t;     /* ncclResult_t */
typedef struct ncclComm *nccl_comm_t;
typedef int nccl_dtype_t; /* ncclDataType_t */
typedef int nccl_redop_t; /* ncclRedOp_t */
typedef struct cudart_nccl_id nccl_id_t;
typedef struct cudart_nccl_config nccl_config_t;
#endif

/* cuda_runtime_api.h / driver_types.h constants. */
enum {
    CU_SUCCESS = 0,                  /* cudaSuccess */
    CU_ERR_INSUFFICIENT_DRIVER = 35, /* cudaErrorInsufficientDriver */
    CU_ERR_NO_DEVICE = 100,          /* cudaErrorNoDevice */
    CU_ERR_NOT_READY = 600,          /* cudaErrorNotReady */
    CU_STREAM_NON_BLOCKING = 0x01,   /* cudaStreamNonBlocking */
    CU_EVENT_DEFAULT = 0x00,         /* cudaEventDefault (timing on) */
    CU_EVENT_DISABLE_TIMING = 0x02,  /* cudaEventDisableTiming */
    CU_HOST_ALLOC_DEFAULT = 0x00,    /* cudaHostAllocDefault */
    CU_HOST_ALLOC_PORTABLE = 0x01,   /* cudaHostAllocPortable */
    CU_MEMCPY_H2D = 1,               /* cudaMemcpyHostToDevice */
    CU_MEMCPY_D2H = 2,               /* cudaMemcpyDeviceToHost */
    CU_CAPTURE_GLOBAL = 0,           /* cudaStreamCaptureModeGlobal */
    CU_CAPTURE_THREAD_LOCAL = 1,     /* cudaStreamCaptureModeThreadLocal */
    CU_CAPTURE_RELAXED = 2,          /* cudaStreamCaptureModeRelaxed */
    CU_DEVICE_PCI_BUS_ID_LEN = 32,   /* enough for "0000:00:00.0" */
};

/* nccl.h constants. */
enum {
    NCCL_R_SUCCESS = 0,     /* ncclSuccess */
    NCCL_R_IN_PROGRESS = 7, /* ncclInProgress (non-blocking communicators) */
    NCCL_DT_INT8 = 0,
    NCCL_DT_UINT8 = 1,
    NCCL_DT_INT32 = 2,
    NCCL_DT_UINT32 = 3,
    NCCL_DT_INT64 = 4,
    NCCL_DT_UINT64 = 5,
    NCCL_DT_FLOAT16 = 6,
    NCCL_DT_FLOAT32 = 7,
    NCCL_DT_FLOAT64 = 8,
    NCCL_DT_BFLOAT16 = 9,
    NCCL_DT_FP8_E4M3 = 10, /* NCCL >= 2.24, sm_90 and later */
    NCCL_DT_FP8_E5M2 = 11,
    NCCL_OP_SUM = 0,
    NCCL_OP_PROD = 1,
    NCCL_OP_MAX = 2,
    NCCL_OP_MIN = 3,
    NCCL_OP_AVG = 4,              /* NCCL >= 2.10 */
    CUDART_NCCL_SHRINK_ABORT = 1, /* ncclCommShrink's flag (nccl.h 2.27: NCCL_SHRINK_ABORT 0x01) */
};

/* X(return type, name, parameters): the CUDA runtime functions (all required). */
#define CUDART_RT_FUNCS(X)                                                                         \
    X(cu_err_t, cudaGetDeviceCount, (int *count))                                                  \
    X(cu_err_t, cudaSetDevice, (int device))                                                       \
    X(cu_err_t, cudaDeviceGetPCIBusId, (char *pciBusId, int len, int device))                      \
    X(const char *, cudaGetErrorString, (cu_err_t error))                                          \
    X(const char *, cudaGetErrorName, (cu_err_t error))                                            \
    X(cu_err_t, cudaGetLastError, (void))                                                          \
    X(cu_err_t, cudaRuntimeGetVersion, (int *runtimeVersion))                                      \
    X(cu_err_t, cudaDriverGetVersion, (int *driverVersion))                                        \
    X(cu_err_t, cudaMemGetInfo, (size_t * free, size_t * total))                                   \
    X(cu_err_t, cudaMalloc, (void **devPtr, size_t size))                                          \
    X(cu_err_t, cudaFree, (void *devPtr))                                                          \
    X(cu_err_t, cudaMemset, (void *devPtr, int value, size_t count))                               \
    X(cu_err_t, cudaMemcpy, (void *dst, const void *src, size_t count, cu_memcpy_kind_t kind))     \
    X(cu_err_t, cudaMemcpyAsync,                                                                   \
      (void *dst, const void *src, size_t count, cu_memcpy_kind_t kind, cu_stream_t stream))       \
    X(cu_err_t, cudaHostAlloc, (void **pHost, size_t size, unsigned int flags))                    \
    X(cu_err_t, cudaFreeHost, (void *ptr))                                                         \
    X(cu_err_t, cudaStreamCreateWithFlags, (cu_stream_t * pStream, unsigned int flags))            \
    X(cu_err_t, cudaStreamDestroy, (cu_stream_t stream))                                           \
    X(cu_err_t, cudaStreamQuery, (cu_stream_t stream))                                             \
    X(cu_err_t, cudaStreamSynchronize, (cu_stream_t stream))                                       \
    X(cu_err_t, cudaLaunchHostFunc, (cu_stream_t stream, void (*fn)(void *), void *userData))      \
    X(cu_err_t, cudaEventCreateWithFlags, (cu_event_t * event, unsigned int flags))                \
    X(cu_err_t, cudaEventDestroy, (cu_event_t event))                                              \
    X(cu_err_t, cudaEventRecord, (cu_event_t event, cu_stream_t stream))                           \
    X(cu_err_t, cudaEventQuery, (cu_event_t event))                                                \
    X(cu_err_t, cudaEventElapsedTime, (float *ms, cu_event_t start, cu_event_t end))               \
    X(cu_err_t, cudaStreamBeginCapture, (cu_stream_t stream, cu_capture_mode_t mode))              \
    X(cu_err_t, cudaStreamEndCapture, (cu_stream_t stream, cu_graph_t * pGraph))                   \
    X(cu_err_t, cudaGraphInstantiateWithFlags,                                                     \
      (cu_graph_exec_t * pGraphExec, cu_graph_t graph, unsigned long long flags))                  \
    X(cu_err_t, cudaGraphLaunch, (cu_graph_exec_t graphExec, cu_stream_t stream))                  \
    X(cu_err_t, cudaGraphExecDestroy, (cu_graph_exec_t graphExec))                                 \
    X(cu_err_t, cudaGraphDestroy, (cu_graph_t graph))                                              \
    X(cu_err_t, cudaDeviceCanAccessPeer, (int *canAccessPeer, int device, int peerDevice))

/* The NCCL functions every supported version (>= 2.14) has. */
#define CUDART_NCCL_FUNCS(X)                                                                       \
    X(nccl_result_t, ncclGetVersion, (int *version))                                               \
    X(nccl_result_t, ncclGetUniqueId, (nccl_id_t * uniqueId))                                      \
    X(nccl_result_t, ncclCommInitRankConfig,                                                       \
      (nccl_comm_t * comm, int nranks, nccl_id_t commId, int rank, nccl_config_t *config))         \
    X(nccl_result_t, ncclCommGetAsyncError, (nccl_comm_t comm, nccl_result_t * asyncError))        \
    X(nccl_result_t, ncclCommAbort, (nccl_comm_t comm))                                            \
    X(nccl_result_t, ncclCommDestroy, (nccl_comm_t comm))                                          \
    X(nccl_result_t, ncclCommFinalize, (nccl_comm_t comm))                                         \
    X(const char *, ncclGetErrorString, (nccl_result_t result))                                    \
    X(const char *, ncclGetLastError, (nccl_comm_t comm))                                          \
    X(nccl_result_t, ncclGroupStart, (void))                                                       \
    X(nccl_result_t, ncclGroupEnd, (void))                                                         \
    X(nccl_result_t, ncclAllReduce,                                                                \
      (const void *sendbuff, void *recvbuff, size_t count, nccl_dtype_t datatype, nccl_redop_t op, \
       nccl_comm_t comm, cu_stream_t stream))                                                      \
    X(nccl_result_t, ncclBroadcast,                                                                \
      (const void *sendbuff, void *recvbuff, size_t count, nccl_dtype_t datatype, int root,        \
       nccl_comm_t comm, cu_stream_t stream))                                                      \
    X(nccl_result_t, ncclReduce,                                                                   \
      (const void *sendbuff, void *recvbuff, size_t count, nccl_dtype_t datatype, nccl_redop_t op, \
       int root, nccl_comm_t comm, cu_stream_t stream))                                            \
    X(nccl_result_t, ncclAllGather,                                                                \
      (const void *sendbuff, void *recvbuff, size_t sendcount, nccl_dtype_t datatype,              \
       nccl_comm_t comm, cu_stream_t stream))                                                      \
    X(nccl_result_t, ncclReduceScatter,                                                            \
      (const void *sendbuff, void *recvbuff, size_t recvcount, nccl_dtype_t datatype,              \
       nccl_redop_t op, nccl_comm_t comm, cu_stream_t stream))                                     \
    X(nccl_result_t, ncclSend,                                                                     \
      (const void *sendbuff, size_t count, nccl_dtype_t datatype, int peer, nccl_comm_t comm,      \
       cu_stream_t stream))                                                                        \
    X(nccl_result_t, ncclRecv,                                                                     \
      (void *recvbuff, size_t count, nccl_dtype_t datatype, int peer, nccl_comm_t comm,            \
       cu_stream_t stream))

/* NCCL functions that only some versions have (NULL when absent): ncclAlltoAll (2.28; else
 * alltoall is grouped send/recv), ncclResetDebugInit (re-reads NCCL_DEBUG*, which lets the
 * transport log tuning choices for one probe operation and then turn logging off) and
 * ncclCommShrink (2.27: a child communicator without the ranks in the list, the survivors
 * renumbered in order; with NCCL_SHRINK_ABORT the parent's outstanding operations are
 * aborted first, so a parent hung on a vanished rank can be shrunk; nccl.h of 2.27). */
#define CUDART_NCCL_OPT_FUNCS(X)                                                                   \
    X(nccl_result_t, ncclAlltoAll,                                                                 \
      (const void *sendbuff, void *recvbuff, size_t count, nccl_dtype_t datatype,                  \
       nccl_comm_t comm, cu_stream_t stream))                                                      \
    X(void, ncclResetDebugInit, (void))                                                            \
    X(nccl_result_t, ncclCommShrink,                                                               \
      (nccl_comm_t comm, int *excludeRanksList, int excludeRanksCount, nccl_comm_t *newcomm,       \
       nccl_config_t *config, int shrinkFlags))

struct cudart {
    struct dynlib rt, nccl;
    int rt_version;   /* cudaRuntimeGetVersion: 13000 = 13.0 */
    int drv_version;  /* cudaDriverGetVersion */
    int nccl_version; /* ncclGetVersion: 22809 = 2.28.9 */
    int ndevices;     /* cudaGetDeviceCount */
    char rt_path[256], nccl_path[256];
#define CUDART_FIELD(ret, name, args) ret(*name) args;
    CUDART_RT_FUNCS(CUDART_FIELD)
    CUDART_NCCL_FUNCS(CUDART_FIELD)
    CUDART_NCCL_OPT_FUNCS(CUDART_FIELD)
#undef CUDART_FIELD
};

/* Load the CUDA runtime and NCCL once per process and check that a GPU is usable.
 * Libraries: $FABTOP_CUDART, else libcudart.so.13/.12 (and /usr/local/cuda/lib64); nccl_lib
 * (a flow's library: `fabtop run --nccl PATH`), else $FABTOP_NCCL, else libnccl.so.2. An
 * explicit path is used alone, so a run tests exactly that library. The result (and its
 * reason) is remembered: later calls are cheap and give the same answer; a call naming
 * another library after a load that worked gets -EBUSY (one NCCL per process), after one
 * that failed tries it. nccl_lib NULL or "": whatever is loaded, else the default. */
int cudart_load_lib(const char *nccl_lib, const struct cudart **out, char *why, size_t len);
/* cudart_load_lib(NULL, ...). */
int cudart_load(const struct cudart **out, char *why, size_t len);

/* Fill a configuration as NCCL_CONFIG_INITIALIZER does (every tunable undefined). */
void cudart_nccl_config_init(struct cudart_nccl_config *c);

/* "13.0", "2.28.9" from the integer codes. */
void cudart_version_str(int code, bool nccl, char *buf, size_t len);

/* "cudaErrorNotReady (device not ready)" / "ncclSystemError (...)" style text for messages. */
const char *cudart_err_str(const struct cudart *c, cu_err_t e, char *buf, size_t len);

#endif
