/* test_cudart_abi: engine/xport/nccl/cudart.h declares the CUDA runtime and NCCL entry points
 * itself so that fabtop builds without them; this test compiles those declarations against the real
 * cuda_runtime_api.h and nccl.h (built only where they are installed) and checks, at compile
 * time, every prototype, constant, enum size and the ncclConfig_t / ncclUniqueId layouts, and
 * at run time that cudart_nccl_config_init fills what NCCL_CONFIG_INITIALIZER fills. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#define CUDART_REAL_TYPES
#include "engine/xport/nccl/cudart.h"
#include "engine/xport/nccl/nccl_util.h"

/* Every function pointer in struct cudart has exactly the type of the real function. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#define SAME_TYPE(ret, name, args)                                                                 \
    _Static_assert(                                                                                \
        __builtin_types_compatible_p(__typeof__(((struct cudart *)0)->name), __typeof__(&name)),   \
        #name ": the declaration in engine/xport/nccl/cudart.h differs from the real header");
CUDART_RT_FUNCS(SAME_TYPE)
CUDART_NCCL_FUNCS(SAME_TYPE)
CUDART_NCCL_OPT_FUNCS(SAME_TYPE)
#pragma GCC diagnostic pop

/* Our constants are enumerators of our own anonymous enums: compare the values. */
#pragma GCC diagnostic ignored "-Wenum-compare"

/* Outside the ABI test these enums are declared as int: same size, same values. */
_Static_assert(sizeof(enum cudaError) == sizeof(int), "cudaError_t is not int-sized");
_Static_assert(sizeof(enum cudaMemcpyKind) == sizeof(int), "cudaMemcpyKind is not int-sized");
_Static_assert(sizeof(enum cudaStreamCaptureMode) == sizeof(int), "capture mode size");
_Static_assert(sizeof(ncclResult_t) == sizeof(int), "ncclResult_t is not int-sized");
_Static_assert(sizeof(ncclDataType_t) == sizeof(int), "ncclDataType_t is not int-sized");
_Static_assert(sizeof(ncclRedOp_t) == sizeof(int), "ncclRedOp_t is not int-sized");

_Static_assert(CU_SUCCESS == cudaSuccess, "cudaSuccess");
_Static_assert(CU_ERR_INSUFFICIENT_DRIVER == cudaErrorInsufficientDriver, "insufficient driver");
_Static_assert(CU_ERR_NO_DEVICE == cudaErrorNoDevice, "cudaErrorNoDevice");
_Static_assert(CU_ERR_NOT_READY == cudaErrorNotReady, "cudaErrorNotReady");
_Static_assert(CU_STREAM_NON_BLOCKING == cudaStreamNonBlocking, "cudaStreamNonBlocking");
_Static_assert(CU_EVENT_DEFAULT == cudaEventDefault, "cudaEventDefault");
_Static_assert(CU_EVENT_DISABLE_TIMING == cudaEventDisableTiming, "cudaEventDisableTiming");
_Static_assert(CU_HOST_ALLOC_DEFAULT == cudaHostAllocDefault, "cudaHostAllocDefault");
_Static_assert(CU_HOST_ALLOC_PORTABLE == cudaHostAllocPortable, "cudaHostAllocPortable");
_Static_assert(CU_MEMCPY_H2D == cudaMemcpyHostToDevice, "cudaMemcpyHostToDevice");
_Static_assert(CU_MEMCPY_D2H == cudaMemcpyDeviceToHost, "cudaMemcpyDeviceToHost");
_Static_assert(CU_CAPTURE_THREAD_LOCAL == cudaStreamCaptureModeThreadLocal, "capture mode");
_Static_assert(CU_CAPTURE_GLOBAL == cudaStreamCaptureModeGlobal, "capture mode");
_Static_assert(CU_CAPTURE_RELAXED == cudaStreamCaptureModeRelaxed, "capture mode");

_Static_assert(NCCL_R_SUCCESS == ncclSuccess, "ncclSuccess");
_Static_assert(NCCL_R_IN_PROGRESS == ncclInProgress, "ncclInProgress");
_Static_assert(NCCL_DT_INT8 == ncclInt8 && NCCL_DT_UINT8 == ncclUint8, "int8");
_Static_assert(NCCL_DT_INT32 == ncclInt32 && NCCL_DT_UINT32 == ncclUint32, "int32");
_Static_assert(NCCL_DT_INT64 == ncclInt64 && NCCL_DT_UINT64 == ncclUint64, "int64");
_Static_assert(NCCL_DT_FLOAT16 == ncclFloat16 && NCCL_DT_FLOAT32 == ncclFloat32, "float");
_Static_assert(NCCL_DT_FLOAT64 == ncclFloat64 && NCCL_DT_BFLOAT16 == ncclBfloat16, "double");
_Static_assert(NCCL_DT_FP8_E4M3 == ncclFloat8e4m3 && NCCL_DT_FP8_E5M2 == ncclFloat8e5m2, "fp8");
_Static_assert(NCCL_OP_SUM == ncclSum && NCCL_OP_PROD == ncclProd && NCCL_OP_MAX == ncclMax &&
                   NCCL_OP_MIN == ncclMin && NCCL_OP_AVG == ncclAvg,
               "reduction operations");

_Static_assert(CUDART_NCCL_SHRINK_ABORT == NCCL_SHRINK_ABORT, "NCCL_SHRINK_ABORT");
_Static_assert(CUDART_NCCL_ID_BYTES == NCCL_UNIQUE_ID_BYTES, "NCCL_UNIQUE_ID_BYTES");
_Static_assert(sizeof(struct cudart_nccl_id) == sizeof(ncclUniqueId), "ncclUniqueId size");
_Static_assert(CUDART_NCCL_UNDEF_INT == NCCL_CONFIG_UNDEF_INT, "NCCL_CONFIG_UNDEF_INT");

/* The configuration: every field we declare sits where NCCL has it. */
#define SAME_OFFSET(field)                                                                         \
    _Static_assert(offsetof(struct cudart_nccl_config, field) == offsetof(ncclConfig_t, field) &&  \
                       sizeof(((struct cudart_nccl_config *)0)->field) ==                          \
                           sizeof(((ncclConfig_t *)0)->field),                                     \
                   "ncclConfig_t." #field " moved");
SAME_OFFSET(size)
SAME_OFFSET(magic)
SAME_OFFSET(version)
SAME_OFFSET(blocking)
SAME_OFFSET(cgaClusterSize)
SAME_OFFSET(minCTAs)
SAME_OFFSET(maxCTAs)
SAME_OFFSET(netName)
SAME_OFFSET(splitShare)
SAME_OFFSET(trafficClass)
SAME_OFFSET(commName)
SAME_OFFSET(collnetEnable)
SAME_OFFSET(CTAPolicy)
SAME_OFFSET(shrinkShare)
SAME_OFFSET(nvlsCTAs)
SAME_OFFSET(nChannelsPerNetPeer)
SAME_OFFSET(nvlinkCentricSched)
_Static_assert(sizeof(struct cudart_nccl_config) <= sizeof(ncclConfig_t),
               "the mirrored ncclConfig_t is larger than the header's");
#if NCCL_VERSION_CODE == CUDART_NCCL_CONFIG_VERSION
_Static_assert(sizeof(struct cudart_nccl_config) == sizeof(ncclConfig_t),
               "ncclConfig_t of this NCCL version has fields engine/xport/nccl/cudart.h lacks");
#endif

int main(void)
{
    int bad = 0;
    ncclConfig_t real = NCCL_CONFIG_INITIALIZER;
    struct cudart_nccl_config ours;
    cudart_nccl_config_init(&ours);
#define SAME_VALUE(field)                                                                          \
    if (memcmp(&real.field, &ours.field, sizeof(real.field)) != 0) {                               \
        printf("FAIL: ncclConfig_t.%s differs from NCCL_CONFIG_INITIALIZER\n", #field);            \
        bad++;                                                                                     \
    }
    SAME_VALUE(magic)
    SAME_VALUE(blocking)
    SAME_VALUE(cgaClusterSize)
    SAME_VALUE(minCTAs)
    SAME_VALUE(maxCTAs)
    SAME_VALUE(netName)
    SAME_VALUE(splitShare)
    SAME_VALUE(trafficClass)
    SAME_VALUE(commName)
    SAME_VALUE(collnetEnable)
    SAME_VALUE(CTAPolicy)
    SAME_VALUE(shrinkShare)
    SAME_VALUE(nvlsCTAs)
    SAME_VALUE(nChannelsPerNetPeer)
    SAME_VALUE(nvlinkCentricSched)
    if (ours.size != sizeof(ours) || ours.version != CUDART_NCCL_CONFIG_VERSION) {
        printf("FAIL: size/version of the mirrored configuration\n");
        bad++;
    }
    /* The data-type table of nccl_util against the real enum. */
    static const struct {
        const char *name;
        int v;
    } dts[] = {{"float", ncclFloat},   {"half", ncclHalf},           {"bfloat16", ncclBfloat16},
               {"double", ncclDouble}, {"int8", ncclInt8},           {"uint8", ncclUint8},
               {"int32", ncclInt32},   {"uint32", ncclUint32},       {"int64", ncclInt64},
               {"uint64", ncclUint64}, {"fp8_e4m3", ncclFloat8e4m3}, {"fp8_e5m2", ncclFloat8e5m2}};
    for (size_t i = 0; i < sizeof(dts) / sizeof(dts[0]); i++) {
        const struct nccl_util_dtype *t = nccl_util_dtype_find(dts[i].name);
        if (!t || t->nccl != dts[i].v) {
            printf("FAIL: dtype %s\n", dts[i].name);
            bad++;
        }
    }
    if (nccl_util_redop_parse("avg") != ncclAvg || nccl_util_redop_parse("min") != ncclMin) {
        printf("FAIL: reduction operations\n");
        bad++;
    }
    printf("%s: engine/xport/nccl/cudart.h against CUDA runtime %d and NCCL %d.%d.%d headers\n",
           bad ? "FAIL" : "PASS", CUDART_VERSION, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
    return bad ? 1 : 0;
}
