/* topo_gpu: GPU facts from NVIDIA's libraries, loaded at run time (never linked), so the
 * same binary runs on nodes without a GPU driver and says what is missing and why.
 * NVML gives name, memory, UUID and NVLink peers; the CUDA driver API gives the CUDA
 * ordinal and dma-buf support. Devices are matched to the model by PCI bus id: the
 * CUDA ordinal is not the NVML index. Only the few types used are declared here (from
 * nvml.h and cuda.h), so the build needs no NVIDIA headers. */
#include "topology/topo_enrich.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dynlib.h"

/* ---- NVML (nvml.h) ---- */
typedef int nvmlReturn_t; /* NVML_SUCCESS = 0 */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;
#define NVML_NVLINK_MAX_LINKS        18
#define NVML_DEVICE_NAME_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_BUFFER_SIZE 96
/* nvmlIntNvLinkDeviceType_t */
#define NVML_NVLINK_DEVICE_TYPE_GPU    0
#define NVML_NVLINK_DEVICE_TYPE_SWITCH 2

struct nvml_api {
    struct dynlib dl;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*count)(unsigned int *);
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*link_state)(nvmlDevice_t, unsigned int, int *);
    nvmlReturn_t (*link_remote_pci)(nvmlDevice_t, unsigned int, nvmlPciInfo_t *);
    nvmlReturn_t (*link_remote_type)(nvmlDevice_t, unsigned int, int *);
    nvmlReturn_t (*link_version)(nvmlDevice_t, unsigned int, unsigned int *);
    nvmlReturn_t (*arch)(nvmlDevice_t, unsigned int *);
};

/* ---- CUDA driver API (cuda.h) ---- */
typedef int CUresult; /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
#define CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED 124

struct cuda_api {
    struct dynlib dl;
    CUresult (*init)(unsigned int);
    CUresult (*count)(int *);
    CUresult (*get)(CUdevice *, int);
    CUresult (*busid)(char *, int, CUdevice);
    CUresult (*attr)(int *, int, CUdevice);
};

static bool applies(const struct topo_model *m, const struct topo_load_opts *o)
{
    (void)m;
    return !o->input && !o->sysfs_root && !o->no_gpu_libs; /* live loads only */
}

#define SYM(api, field, name)                                                                      \
    ((api)->field = (__typeof__((api)->field))dynlib_sym(&(api)->dl, name))

static int find_gpu_by_busid(const struct topo_model *m, const char *busid)
{
    struct topo_bdf a;
    /* NVML writes "00000000:4E:00.0"; topo_bdf_parse reads hex domain of any width. */
    if (topo_bdf_parse(busid, &a) < 0)
        return -1;
    int pci = topo_model_find_pci(m, &a);
    return pci >= 0 ? topo_model_gpu_of_pci(m, pci) : -1;
}

/* nvmlDeviceArchitecture_t values. */
#define NVML_DEVICE_ARCH_PASCAL    4
#define NVML_DEVICE_ARCH_BLACKWELL 10

/* Per-link, per-direction NVLink bandwidth (MB/s, the unit and convention of hwloc's
 * NVLinkBandwidth). The GPU architecture decides where NVML knows it: NVLink 1 (Pascal)
 * 20 GB/s, NVLink 2-4 (Volta to Hopper) 25 GB/s, NVLink 5 (Blackwell) 50 GB/s. Otherwise
 * nvmlDeviceGetNvLinkVersion, which returns nvmlNvlinkVersion_t (1 = 1.0, 2 = 2.0, 3 = 2.2,
 * 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0), not the major number; some drivers report 5.0 on
 * Hopper, hence the architecture first. Active links of unknown speed count as 25 GB/s so
 * that a switch-attached GPU still shows its NVLinks. */
static double nvlink_mbs(unsigned arch, unsigned version)
{
    if (arch >= NVML_DEVICE_ARCH_PASCAL && arch < NVML_DEVICE_ARCH_BLACKWELL + 1)
        return arch == NVML_DEVICE_ARCH_PASCAL      ? 20000
               : arch == NVML_DEVICE_ARCH_BLACKWELL ? 50000
                                                    : 25000;
    switch (version) {
    case 1:
        return 20000;
    case 7:
        return 50000;
    default:
        return 25000;
    }
}

static void nvml_links(struct topo_model *m, struct nvml_api *n, nvmlDevice_t dev, int gpu)
{
    int peer_links[64] = {0};
    int switch_links = 0;
    unsigned version = 0;
    for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
        int active = 0;
        if (n->link_state(dev, l, &active) != 0 || !active)
            continue;
        if (n->link_version && !version)
            n->link_version(dev, l, &version);
        int type = -1;
        if (n->link_remote_type)
            n->link_remote_type(dev, l, &type);
        nvmlPciInfo_t pi;
        int peer = -1;
        if (type != NVML_NVLINK_DEVICE_TYPE_SWITCH && n->link_remote_pci(dev, l, &pi) == 0)
            peer = find_gpu_by_busid(m, pi.busId);
        if (peer >= 0 && peer < 64)
            peer_links[peer]++;
        else
            switch_links++; /* NVSwitch: the remote end of the link is the switch */
    }
    m->gpu_links_known = true; /* NVML answered for this GPU's links */
    int any = switch_links;
    for (int i = 0; i < 64; i++)
        any |= peer_links[i];
    if (!any)
        return;
    /* NVML is authoritative: drop what an hwloc export said for this GPU. */
    int w = 0;
    for (int i = 0; i < m->ngpulinks; i++)
        if (m->gpulinks[i].gpu != gpu)
            m->gpulinks[w++] = m->gpulinks[i];
    m->ngpulinks = w;
    unsigned arch = 0;
    if (!n->arch || n->arch(dev, &arch) != 0)
        arch = 0;
    double per = nvlink_mbs(arch, version);
    for (int p = 0; p < 64 && p < m->ngpus; p++) {
        if (!peer_links[p])
            continue;
        int k = topo_model_add_gpulink(m);
        struct topo_gpulink *l = &m->gpulinks[k];
        l->gpu = gpu;
        l->peer_kind = TOPO_PEER_GPU;
        l->peer = p;
        l->links = peer_links[p];
        l->bw_mbs = per * peer_links[p];
        snprintf(l->kind, sizeof(l->kind), "NVLink");
    }
    if (switch_links) {
        int k = topo_model_add_gpulink(m);
        struct topo_gpulink *l = &m->gpulinks[k];
        l->gpu = gpu;
        l->peer_kind = TOPO_PEER_SWITCH;
        l->peer = -1; /* the switch is not a PCI device of this host */
        l->links = switch_links;
        l->bw_mbs = per * switch_links;
        snprintf(l->kind, sizeof(l->kind), "NVLink");
    }
}

static void enrich_nvml(struct topo_model *m)
{
    static const char *const names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so", NULL};
    struct nvml_api n;
    if (dynlib_open(&n.dl, names) < 0) {
        topo_model_note(m,
                        "NVML unavailable (%s): GPU names, memory and NVLink peers come "
                        "from hwloc and sysfs only",
                        n.dl.why);
        return;
    }
    if (!SYM(&n, init, "nvmlInit_v2") || !SYM(&n, shutdown, "nvmlShutdown") ||
        !SYM(&n, error_string, "nvmlErrorString") || !SYM(&n, count, "nvmlDeviceGetCount_v2") ||
        !SYM(&n, handle, "nvmlDeviceGetHandleByIndex_v2") ||
        !SYM(&n, pci, "nvmlDeviceGetPciInfo_v3") || !SYM(&n, name, "nvmlDeviceGetName") ||
        !SYM(&n, uuid, "nvmlDeviceGetUUID") || !SYM(&n, mem, "nvmlDeviceGetMemoryInfo") ||
        !SYM(&n, link_state, "nvmlDeviceGetNvLinkState") ||
        !SYM(&n, link_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2")) {
        topo_model_note(m, "NVML unusable: %s", n.dl.why);
        dynlib_close(&n.dl);
        return;
    }
    SYM(&n, link_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
    SYM(&n, link_version, "nvmlDeviceGetNvLinkVersion");
    SYM(&n, arch, "nvmlDeviceGetArchitecture");
    nvmlReturn_t r = n.init();
    if (r != 0) {
        topo_model_note(m, "NVML present but nvmlInit failed: %s (is the NVIDIA driver loaded?)",
                        n.error_string(r));
        dynlib_close(&n.dl);
        return;
    }
    unsigned cnt = 0;
    n.count(&cnt);
    nvmlDevice_t devs[64];
    int gpus[64];
    for (unsigned i = 0; i < cnt && i < 64; i++) {
        gpus[i] = -1;
        nvmlPciInfo_t pi;
        if (n.handle(i, &devs[i]) != 0 || n.pci(devs[i], &pi) != 0)
            continue;
        int g = find_gpu_by_busid(m, pi.busId);
        if (g < 0) {
            topo_model_note(m, "NVML lists GPU %u at %s, which hwloc did not report", i, pi.busId);
            continue;
        }
        gpus[i] = g;
        struct topo_gpu *gp = &m->gpus[g];
        gp->nvml_index = (int)i;
        gp->valid |= TOPO_GPU_V_NVML;
        char buf[NVML_DEVICE_NAME_BUFFER_SIZE];
        if (n.name(devs[i], buf, sizeof(buf)) == 0)
            snprintf(gp->model, sizeof(gp->model), "%s", buf);
        if (n.uuid(devs[i], buf, sizeof(buf)) == 0)
            snprintf(gp->uuid, sizeof(gp->uuid), "%s", buf);
        nvmlMemory_t mem;
        if (n.mem(devs[i], &mem) == 0) {
            gp->mem_bytes = mem.total;
            gp->valid |= TOPO_GPU_V_MEM;
        }
    }
    for (unsigned i = 0; i < cnt && i < 64; i++)
        if (gpus[i] >= 0)
            nvml_links(m, &n, devs[i], gpus[i]);
    n.shutdown();
    dynlib_close(&n.dl);
}

static void enrich_cuda(struct topo_model *m)
{
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    struct cuda_api c;
    if (dynlib_open(&c.dl, names) < 0) {
        topo_model_note(m, "CUDA driver unavailable (%s): no CUDA ordinals or dma-buf check",
                        c.dl.why);
        return;
    }
    if (!SYM(&c, init, "cuInit") || !SYM(&c, count, "cuDeviceGetCount") ||
        !SYM(&c, get, "cuDeviceGet") || !SYM(&c, busid, "cuDeviceGetPCIBusId") ||
        !SYM(&c, attr, "cuDeviceGetAttribute")) {
        topo_model_note(m, "CUDA driver unusable: %s", c.dl.why);
        dynlib_close(&c.dl);
        return;
    }
    CUresult r = c.init(0);
    if (r != 0) {
        topo_model_note(m,
                        "CUDA driver present but cuInit failed with error %d (no GPU "
                        "visible, or driver/library mismatch)",
                        r);
        dynlib_close(&c.dl);
        return;
    }
    int cnt = 0, dmabuf_any = -1;
    c.count(&cnt);
    for (int i = 0; i < cnt; i++) {
        CUdevice d;
        char bus[64];
        if (c.get(&d, i) != 0 || c.busid(bus, sizeof(bus), d) != 0)
            continue;
        int g = find_gpu_by_busid(m, bus);
        if (g < 0)
            continue;
        m->gpus[g].cuda_index = i;
        m->gpus[g].valid |= TOPO_GPU_V_CUDA;
        int v = 0;
        if (c.attr(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, d) == 0)
            dmabuf_any = dmabuf_any == 1 ? 1 : (v ? 1 : 0);
    }
    if (dmabuf_any >= 0)
        m->host.dmabuf = dmabuf_any ? TOPO_YES : TOPO_NO;
    dynlib_close(&c.dl);
}

static void enrich(struct topo_model *m, const struct topo_load_opts *o)
{
    (void)o;
    enrich_nvml(m);
    enrich_cuda(m);
}

const struct topo_enricher topo_enrich_gpu = {"gpu", applies, enrich};
