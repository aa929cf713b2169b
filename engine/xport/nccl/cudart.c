/* cudart: dlopen the CUDA runtime and NCCL once, resolve the entry points cudart.h lists,
 * check the versions and that a GPU is usable, and remember why not when something is
 * missing. */
#include "engine/xport/nccl/cudart.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static bool load_done;
static int load_rc;
static char load_why[768];
static char load_lib[256]; /* the NCCL library asked for by name at the load; "": none */
static struct cudart api;

void cudart_nccl_config_init(struct cudart_nccl_config *c)
{
    memset(c, 0, sizeof(*c));
    c->size = sizeof(*c);
    c->magic = CUDART_NCCL_CONFIG_MAGIC;
    c->version = CUDART_NCCL_CONFIG_VERSION;
    c->blocking = c->cgaClusterSize = c->minCTAs = c->maxCTAs = CUDART_NCCL_UNDEF_INT;
    c->netName = NULL;
    c->splitShare = c->trafficClass = CUDART_NCCL_UNDEF_INT;
    c->commName = NULL;
    c->collnetEnable = c->CTAPolicy = c->shrinkShare = c->nvlsCTAs = CUDART_NCCL_UNDEF_INT;
    c->nChannelsPerNetPeer = c->nvlinkCentricSched = CUDART_NCCL_UNDEF_INT;
}

void cudart_version_str(int code, bool nccl, char *buf, size_t len)
{
    if (code <= 0) {
        snprintf(buf, len, "unknown");
    } else if (!nccl) {
        snprintf(buf, len, "%d.%d", code / 1000, code % 1000 / 10);
    } else if (code < 10000) { /* NCCL before 2.9: X*1000 + Y*100 + Z */
        snprintf(buf, len, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
    } else {
        snprintf(buf, len, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
    }
}

const char *cudart_err_str(const struct cudart *c, cu_err_t e, char *buf, size_t len)
{
    const char *name = c && c->cudaGetErrorName ? c->cudaGetErrorName(e) : NULL;
    const char *text = c && c->cudaGetErrorString ? c->cudaGetErrorString(e) : NULL;
    snprintf(buf, len, "%s (%s)", name ? name : "cudaError", text ? text : "?");
    return buf;
}

#define SYM_REQ(lib, name)                                                                         \
    do {                                                                                           \
        api.name = (__typeof__(api.name))dynlib_sym(&api.lib, #name);                              \
        if (!api.name) {                                                                           \
            snprintf(why, len, "%s", api.lib.why);                                                 \
            return -ELIBACC;                                                                       \
        }                                                                                          \
    } while (0)

static int resolve(char *why, size_t len)
{
#define RT_SYM(ret, name, args)   SYM_REQ(rt, name);
#define NCCL_SYM(ret, name, args) SYM_REQ(nccl, name);
#define OPT_SYM(ret, name, args)  api.name = (__typeof__(api.name))dynlib_sym(&api.nccl, #name);
    CUDART_RT_FUNCS(RT_SYM)
    /* ncclCommInitRankConfig arrived in 2.14; say "too old" rather than "symbol missing". */
    if (!dynlib_sym(&api.nccl, "ncclCommInitRankConfig")) {
        int (*get)(int *) = (int (*)(int *))dynlib_sym(&api.nccl, "ncclGetVersion");
        int v = 0;
        char vs[32];
        if (get)
            get(&v);
        cudart_version_str(v, true, vs, sizeof(vs));
        snprintf(why, len,
                 "%s is NCCL %s: fabtop needs NCCL >= 2.14 (non-blocking communicators, so a "
                 "vanished rank gives an error instead of a hang)",
                 api.nccl_path, vs);
        return -ENOTSUP;
    }
    CUDART_NCCL_FUNCS(NCCL_SYM)
    CUDART_NCCL_OPT_FUNCS(OPT_SYM)
#undef RT_SYM
#undef NCCL_SYM
#undef OPT_SYM
    return 0;
}

static int open_libs(const char *nccl_lib, char *why, size_t len)
{
    const char *rt_env = getenv("FABTOP_CUDART");
    const char *nccl_env = nccl_lib ? nccl_lib : getenv("FABTOP_NCCL");
    static const char *const rt_names[] = {"libcudart.so.13",
                                           "libcudart.so.12",
                                           "libcudart.so",
                                           "/usr/local/cuda/lib64/libcudart.so.13",
                                           "/usr/local/cuda/lib64/libcudart.so.12",
                                           NULL};
    static const char *const nccl_names[] = {"libnccl.so.2", "libnccl.so",
                                             "/usr/local/cuda/lib64/libnccl.so.2", NULL};
    const char *rt_one[] = {rt_env, NULL}, *nccl_one[] = {nccl_env, NULL};
    bool rt_explicit = rt_env && *rt_env, nccl_explicit = nccl_env && *nccl_env;
    if (dynlib_open(&api.rt, rt_explicit ? rt_one : rt_names) < 0) {
        snprintf(why, len, "CUDA runtime not found (%s); install it or set FABTOP_CUDART=PATH",
                 api.rt.why);
        return -ELIBACC;
    }
    snprintf(api.rt_path, sizeof(api.rt_path), "%s", api.rt.path);
    if (dynlib_open(&api.nccl, nccl_explicit ? nccl_one : nccl_names) < 0) {
        snprintf(why, len, "NCCL not found (%s); install libnccl2 or give --nccl PATH",
                 api.nccl.why);
        return -ELIBACC;
    }
    snprintf(api.nccl_path, sizeof(api.nccl_path), "%s", api.nccl.path);
    return 0;
}

static int do_load(const char *nccl_lib, char *why, size_t len)
{
    int rc = open_libs(nccl_lib, why, len);
    if (rc < 0)
        return rc;
    rc = resolve(why, len);
    if (rc < 0)
        return rc;
    api.ncclGetVersion(&api.nccl_version);
    api.cudaRuntimeGetVersion(&api.rt_version);
    api.cudaDriverGetVersion(&api.drv_version);
    if (api.nccl_version > 0 && api.nccl_version < 21400) {
        char vs[32];
        cudart_version_str(api.nccl_version, true, vs, sizeof(vs));
        snprintf(why, len, "%s is NCCL %s: fabtop needs NCCL >= 2.14", api.nccl_path, vs);
        return -ENOTSUP;
    }
    int n = 0;
    cu_err_t e = api.cudaGetDeviceCount(&n);
    if (e != CU_SUCCESS || n <= 0) {
        char eb[160];
        char rv[16], dv[16];
        cudart_version_str(api.rt_version, false, rv, sizeof(rv));
        cudart_version_str(api.drv_version, false, dv, sizeof(dv));
        if (e == CU_SUCCESS)
            snprintf(eb, sizeof(eb), "0 devices");
        else
            cudart_err_str(&api, e, eb, sizeof(eb));
        snprintf(why, len,
                 "no usable GPU: cudaGetDeviceCount: %s (CUDA runtime %s from %s, driver API "
                 "%s%s)",
                 eb, rv, api.rt_path, api.drv_version ? dv : "absent",
                 e == CU_ERR_INSUFFICIENT_DRIVER ? "; is the NVIDIA driver installed and loaded?"
                                                 : "");
        return -ENODEV;
    }
    api.ndevices = n;
    return 0;
}

int cudart_load(const struct cudart **out, char *why, size_t len)
{
    return cudart_load_lib(NULL, out, why, len);
}

int cudart_load_lib(const char *nccl_lib, const struct cudart **out, char *why, size_t len)
{
    if (nccl_lib && !*nccl_lib)
        nccl_lib = NULL;
    pthread_mutex_lock(&load_lock);
    if (load_done && load_rc < 0 && nccl_lib && strcmp(nccl_lib, load_lib)) {
        /* An earlier load failed (nothing of it is used): try the library now named. */
        dynlib_close(&api.nccl);
        dynlib_close(&api.rt);
        memset(&api, 0, sizeof(api));
        load_done = false;
    }
    if (!load_done) {
        snprintf(load_lib, sizeof(load_lib), "%s", nccl_lib ? nccl_lib : "");
        load_rc = do_load(nccl_lib, load_why, sizeof(load_why));
        load_done = true;
    }
    int rc = load_rc;
    if (rc == 0 && nccl_lib && strcmp(nccl_lib, api.nccl_path) && strcmp(nccl_lib, load_lib)) {
        /* dlopen's libraries stay: one NCCL per process. */
        rc = -EBUSY;
        if (why && len)
            snprintf(why, len, "NCCL is already loaded from %s in this process, not %s",
                     api.nccl_path, nccl_lib);
    } else if (why && len) {
        snprintf(why, len, "%s", load_why);
    }
    pthread_mutex_unlock(&load_lock);
    if (out)
        *out = rc == 0 ? &api : NULL;
    return rc;
}
