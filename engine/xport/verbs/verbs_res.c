/* verbs_res: device/port/GID choice, RC QPs, memory registration and QP state changes for the
 * verbs transport (libibverbs). GPU memory goes through the CUDA driver, dlopen'ed, and
 * ibv_reg_dmabuf_mr; nothing here links CUDA. */
#define _GNU_SOURCE
#include "engine/xport/verbs/verbs_res.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/dynlib.h"
#include "common/fsutil.h"
#include "common/jsonutil.h"
#include "common/pagebuf.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

enum ibv_mtu verbs_res_mtu_of_bytes(int bytes)
{
    for (enum ibv_mtu m = IBV_MTU_256; m <= IBV_MTU_4096; m++)
        if (verbs_res_mtu_bytes(m) == bytes)
            return m;
    return (enum ibv_mtu)0;
}

int verbs_res_mtu_bytes(enum ibv_mtu m)
{
    switch (m) {
    case IBV_MTU_256:
        return 256;
    case IBV_MTU_512:
        return 512;
    case IBV_MTU_1024:
        return 1024;
    case IBV_MTU_2048:
        return 2048;
    case IBV_MTU_4096:
        return 4096;
    default:
        return 0;
    }
}

void verbs_res_gid_str(const union ibv_gid *g, char *buf, size_t len)
{
    char tmp[INET6_ADDRSTRLEN];
    if (!inet_ntop(AF_INET6, g->raw, tmp, sizeof(tmp)))
        snprintf(tmp, sizeof(tmp), "?");
    snprintf(buf, len, "%s", tmp);
}

static const char *gid_type_str(int t)
{
    return t == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : t == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1" : "IB";
}

static bool gid_is_v4mapped(const union ibv_gid *g)
{
    static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !memcmp(g->raw, pfx, sizeof(pfx));
}

void verbs_res_gid_table_text(struct ibv_context *ctx, int port, char *buf, size_t len)
{
    struct ibv_port_attr pa;
    size_t used = 0;
    buf[0] = '\0';
    if (ibv_query_port(ctx, (uint8_t)port, &pa))
        return;
    used +=
        (size_t)snprintf(buf, len, "GIDs on %s port %d:", ibv_get_device_name(ctx->device), port);
    int shown = 0;
    for (int i = 0; i < pa.gid_tbl_len && used < len; i++) {
        struct ibv_gid_entry e;
        if (ibv_query_gid_ex(ctx, (uint32_t)port, (uint32_t)i, &e, 0))
            continue;
        char g[64], nd[IF_NAMESIZE] = "";
        verbs_res_gid_str(&e.gid, g, sizeof(g));
        if (e.ndev_ifindex)
            if_indextoname(e.ndev_ifindex, nd);
        used += (size_t)snprintf(buf + used, len - used, "%s [%d] %s %s%s%s", shown++ ? ";" : "", i,
                                 g, gid_type_str((int)e.gid_type), nd[0] ? " " : "", nd);
    }
    if (!shown && used < len)
        snprintf(buf + used, len - used, " none");
}

/* The netdev's IPv4 address as an IPv4-mapped GID matches want->ip. */
static bool ip_matches(const union ibv_gid *g, const char *ip)
{
    struct in_addr a;
    struct in6_addr a6;
    if (inet_pton(AF_INET, ip, &a) == 1)
        return gid_is_v4mapped(g) && !memcmp(g->raw + 12, &a, 4);
    if (inet_pton(AF_INET6, ip, &a6) == 1)
        return !memcmp(g->raw, &a6, 16);
    return false;
}

/* Best GID on a RoCE port: RoCE v2 over v1, IPv4-mapped first, matching ip/netdev. */
static int choose_gid(struct ibv_context *ctx, int port, int tbl_len,
                      const struct verbs_res_want *w, struct ibv_gid_entry *out)
{
    int best = -1, best_score = -1;
    for (int i = 0; i < tbl_len; i++) {
        struct ibv_gid_entry e;
        if (ibv_query_gid_ex(ctx, (uint32_t)port, (uint32_t)i, &e, 0))
            continue;
        char nd[IF_NAMESIZE] = "";
        if (e.ndev_ifindex)
            if_indextoname(e.ndev_ifindex, nd);
        if (w->ip[0] && !ip_matches(&e.gid, w->ip))
            continue;
        if (w->netdev[0] && strcmp(nd, w->netdev))
            continue;
        int score =
            (e.gid_type == IBV_GID_TYPE_ROCE_V2 ? 4 : 0) + (gid_is_v4mapped(&e.gid) ? 2 : 0);
        if (score > best_score) {
            best_score = score;
            best = i;
            *out = e;
        }
    }
    return best;
}

static void driver_of(const char *dev, char *buf, size_t len)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/device/driver", dev);
    if (fsutil_link_base("/", rel, buf, len) > 0)
        return;
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/parent", dev);
    if (fsutil_exists("/", rel) || !strncmp(dev, "rxe", 3))
        snprintf(buf, len, "rdma_rxe");
    else
        snprintf(buf, len, "unknown");
}

int verbs_res_open(struct verbs_res *r, const struct verbs_res_want *w, struct ft_err *err)
{
    memset(r, 0, sizeof(*r));
    r->dmabuf_fd = -1;
    double t0 = now_s();
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list || n == 0) {
        int e = errno;
        if (list)
            ibv_free_device_list(list);
        return ft_err_set(err, -ENODEV,
                          "no RDMA device here (%s): load an RDMA driver (mlx5_ib; or rdma_rxe "
                          "for Soft-RoCE: rdma link add rxe0 type rxe netdev IF)",
                          e ? strerror(e) : "none listed");
    }
    char tried[1024] = "";
    size_t tl = 0;
    for (int d = 0; d < n && !r->ctx; d++) {
        const char *name = ibv_get_device_name(list[d]);
        if (w->device[0] && strcmp(name, w->device))
            continue;
        struct ibv_context *ctx = ibv_open_device(list[d]);
        if (!ctx) {
            tl += (size_t)snprintf(tried + tl, sizeof(tried) - tl, " %s: cannot open (%s);", name,
                                   strerror(errno));
            continue;
        }
        struct ibv_device_attr da;
        if (ibv_query_device(ctx, &da)) {
            ibv_close_device(ctx);
            continue;
        }
        for (int p = 1; p <= da.phys_port_cnt && !r->ctx; p++) {
            if (w->port && p != w->port)
                continue;
            struct ibv_port_attr pa;
            if (ibv_query_port(ctx, (uint8_t)p, &pa))
                continue;
            if (pa.state != IBV_PORT_ACTIVE) {
                tl += (size_t)snprintf(tried + tl, sizeof(tried) - tl, " %s port %d is %s;", name,
                                       p, ibv_port_state_str(pa.state));
                continue;
            }
            struct ibv_gid_entry ge;
            memset(&ge, 0, sizeof(ge));
            int gi = -1;
            if (w->gid_index >= 0) {
                if (ibv_query_gid_ex(ctx, (uint32_t)p, (uint32_t)w->gid_index, &ge, 0) == 0)
                    gi = w->gid_index;
                else
                    tl += (size_t)snprintf(tried + tl, sizeof(tried) - tl,
                                           " GID index %d is empty on %s port %d;", w->gid_index,
                                           name, p);
            } else if (pa.link_layer == IBV_LINK_LAYER_ETHERNET) {
                gi = choose_gid(ctx, p, pa.gid_tbl_len, w, &ge);
            } else if (!w->ip[0] && !w->netdev[0]) {
                if (ibv_query_gid_ex(ctx, (uint32_t)p, 0, &ge, 0) == 0)
                    gi = 0;
            }
            if (gi < 0) {
                char gids[512];
                verbs_res_gid_table_text(ctx, p, gids, sizeof(gids));
                tl += (size_t)snprintf(tried + tl, sizeof(tried) - tl, " %s;", gids);
                continue;
            }
            r->ctx = ctx;
            r->port = p;
            r->link_layer = pa.link_layer;
            r->gid_index = gi;
            r->gid = ge.gid;
            r->gid_type = (int)ge.gid_type;
            if (ge.ndev_ifindex)
                if_indextoname(ge.ndev_ifindex, r->netdev);
            r->lid = pa.lid;
            r->active_mtu = pa.active_mtu;
            snprintf(r->dev, sizeof(r->dev), "%s", name);
        }
        if (!r->ctx)
            ibv_close_device(ctx);
    }
    ibv_free_device_list(list);
    if (!r->ctx) {
        char want[256];
        snprintf(want, sizeof(want), "%s%s%s%s%s%s", w->device[0] ? " device " : "", w->device,
                 w->ip[0] ? " ip " : "", w->ip, w->netdev[0] ? " netdev " : "", w->netdev);
        return ft_err_set(err, -ENODEV, "no ACTIVE RDMA port with a usable GID%s:%s",
                          want[0] ? want : "", tried[0] ? tried : " no ports");
    }
    driver_of(r->dev, r->driver, sizeof(r->driver));
    r->t_open = now_s() - t0;
    return 0;
}

/* ---- GPU memory through dma-buf (CUDA driver API, dlopen'ed) ---- */

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
#define CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED 124
#define CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD   1

struct cu_api {
    struct dynlib dl;
    CUresult (*init)(unsigned);
    CUresult (*dev_get)(int *, int);
    CUresult (*attr)(int *, int, int);
    CUresult (*ctx_retain)(void **, int);
    CUresult (*ctx_set)(void *);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*handle)(void *, CUdeviceptr, size_t, int, unsigned long long);
};

static struct cu_api cu;

/* The CUDA driver API, loaded once. */
static int cu_load(struct ft_err *err)
{
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    if (!cu.dl.handle && dynlib_open(&cu.dl, names) < 0)
        return ft_err_set(err, -ELIBACC, "GPU memory unavailable: no CUDA driver (%s)", cu.dl.why);
#define CUSYM(f, n) (cu.f = (__typeof__(cu.f))dynlib_sym(&cu.dl, n))
    if (!CUSYM(init, "cuInit") || !CUSYM(dev_get, "cuDeviceGet") ||
        !CUSYM(attr, "cuDeviceGetAttribute") || !CUSYM(ctx_retain, "cuDevicePrimaryCtxRetain") ||
        !CUSYM(ctx_set, "cuCtxSetCurrent") || !CUSYM(alloc, "cuMemAlloc_v2") ||
        !CUSYM(free, "cuMemFree_v2") || !CUSYM(handle, "cuMemGetHandleForAddressRange"))
        return ft_err_set(err, -ELIBACC, "GPU memory unavailable: %s", cu.dl.why);
#undef CUSYM
    return 0;
}

int verbs_res_gpu_dmabuf_check(int gpu, struct ft_err *err)
{
    int rc = cu_load(err);
    if (rc < 0)
        return rc;
    int dev, ok = 0;
    CUresult cr = cu.init(0);
    if (!cr)
        cr = cu.dev_get(&dev, gpu);
    if (cr)
        return ft_err_set(err, -ENODEV, "GPU memory unavailable: CUDA device %d: error %d", gpu,
                          cr);
    /* dma-buf export needs driver support (CUDA 11.7+, open kernel modules); check first. */
    if (cu.attr(&ok, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev) || !ok)
        return ft_err_set(err, -EOPNOTSUPP,
                          "GPU %d does not export dma-buf (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED "
                          "= 0): use the open GPU kernel modules, or nvidia_peermem",
                          gpu);
    return 0;
}

int verbs_res_gpu_buffer(struct verbs_res *r, int gpu, size_t len, struct ft_err *err)
{
    int rc = verbs_res_gpu_dmabuf_check(gpu, err);
    if (rc < 0)
        return rc;
    int dev;
    void *ctx;
    cu.dev_get(&dev, gpu);
    /* cuMemGetHandleForAddressRange wants a range aligned to the host page size. */
    len = (len + 65535) & ~(size_t)65535;
    CUdeviceptr p;
    if (cu.ctx_retain(&ctx, dev) || cu.ctx_set(ctx) || cu.alloc(&p, len))
        return ft_err_set(err, -ENOMEM, "GPU %d: cannot allocate %zu bytes", gpu, len);
    int fd = -1;
    if (cu.handle(&fd, p, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) || fd < 0) {
        cu.free(p);
        return ft_err_set(err, -EOPNOTSUPP,
                          "GPU %d: cuMemGetHandleForAddressRange (dma-buf) "
                          "failed",
                          gpu);
    }
    r->cuda_mem = (void *)(uintptr_t)p;
    r->dmabuf_fd = fd;
    r->buf_addr = p;
    r->buf_gpu = true;
    return 0;
}

/* Host memory on the NIC's NUMA node (mbind; MPOL_BIND = 2, numaif.h). */
/* Host buffers from the kernel (pagebuf.h), so an agent gives them back after each flow. */
static char *host_alloc(size_t len, int numa)
{
    void *p = pagebuf_alloc(len);
    if (!p)
        return NULL;
    if (numa >= 0 && numa < 1024) {
        unsigned long mask[1024 / (8 * sizeof(unsigned long))] = {0};
        mask[numa / (8 * sizeof(unsigned long))] |= 1ul << (numa % (8 * sizeof(unsigned long)));
        syscall(SYS_mbind, p, len, 2 /* MPOL_BIND */, mask, 1024ul, 0u);
    }
    memset(p, 0, len);
    return p;
}

/* CAP_IPC_LOCK (bit 14) in the effective set, from /proc/self/status (proc(5): CapEff). */
static bool have_ipc_lock(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long eff = 0;
    bool found = false;
    while (fp && fgets(line, sizeof(line), fp))
        if (sscanf(line, "CapEff: %llx", &eff) == 1) {
            found = true;
            break;
        }
    if (fp)
        fclose(fp);
    return found && (eff >> 14) & 1;
}

#define MEMLOCK_HOW                                                                                \
    "raise it (ulimit -l unlimited; a memlock line in /etc/security/limits.conf; "                 \
    "LimitMEMLOCK=infinity for a systemd service; --ulimit memlock=-1 for a container) or "        \
    "give fabtop CAP_IPC_LOCK"

int verbs_res_memlock_check(size_t len, struct ft_err *err)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY || len <= rl.rlim_cur ||
        have_ipc_lock())
        return 0;
    return ft_err_set(err, -ENOMEM,
                      "RDMA buffers of %.2f MiB must be pinned, but RLIMIT_MEMLOCK is %llu KiB: "
                      "%s",
                      len / 1048576.0, (unsigned long long)rl.rlim_cur / 1024, MEMLOCK_HOW);
}

static int memlock_error(struct ft_err *err, size_t len, int e)
{
    struct rlimit rl;
    getrlimit(RLIMIT_MEMLOCK, &rl);
    if (rl.rlim_cur != RLIM_INFINITY && (e == ENOMEM || e == EPERM || e == EAGAIN))
        return ft_err_set(err, -e,
                          "memory registration of %.1f MiB failed (%s): RLIMIT_MEMLOCK is %llu "
                          "KiB; " MEMLOCK_HOW,
                          len / 1048576.0, strerror(e), (unsigned long long)rl.rlim_cur / 1024);
    return ft_err_set(err, -e, "memory registration of %.1f MiB failed: %s", len / 1048576.0,
                      strerror(e));
}

int verbs_res_alloc(struct verbs_res *r, const struct verbs_res_want *w, int nqp, size_t msg,
                    int depth, struct ft_err *err)
{
    if (nqp < 1 || nqp > VERBS_RES_MAX_QPS)
        return ft_err_set(err, -EINVAL, "verbs: %d queue pairs asked, 1 to %d allowed", nqp,
                          VERBS_RES_MAX_QPS);
    double t0 = now_s();
    r->depth = depth;
    r->pd = ibv_alloc_pd(r->ctx);
    if (!r->pd)
        return ft_err_set(err, -errno, "%s: cannot allocate a protection domain: %s", r->dev,
                          strerror(errno));
    for (int i = 0; i < nqp; i++) {
        r->scq[i] = ibv_create_cq(r->ctx, depth + 16, NULL, NULL, 0);
        r->rcq[i] = ibv_create_cq(r->ctx, depth + 16, NULL, NULL, 0);
        if (!r->scq[i] || !r->rcq[i])
            return ft_err_set(err, -errno, "%s: cannot create a completion queue: %s", r->dev,
                              strerror(errno));
        struct ibv_qp_init_attr ia = {
            .send_cq = r->scq[i],
            .recv_cq = r->rcq[i],
            .cap = {.max_send_wr = (uint32_t)depth + 1,
                    .max_recv_wr = (uint32_t)depth + 1,
                    .max_send_sge = 1,
                    .max_recv_sge = 1,
                    .max_inline_data = 220},
            .qp_type = IBV_QPT_RC,
        };
        /* Ask for inline data for small messages; some devices refuse, so step down. */
        static const uint32_t inl[] = {220, 64, 0};
        for (size_t k = 0; k < 3 && !r->qp[i]; k++) {
            ia.cap.max_inline_data = inl[k];
            r->qp[i] = ibv_create_qp(r->pd, &ia);
        }
        if (!r->qp[i])
            return ft_err_set(err, -errno, "%s: cannot create queue pair %d of %d: %s", r->dev,
                              i + 1, nqp, strerror(errno));
        r->max_inline = ia.cap.max_inline_data;
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
                                .pkey_index = 0,
                                .port_num = (uint8_t)r->port,
                                .qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
                                                   IBV_ACCESS_REMOTE_WRITE |
                                                   IBV_ACCESS_REMOTE_READ};
        if (ibv_modify_qp(r->qp[i], &a,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
            return ft_err_set(err, -errno, "%s: queue pair to INIT: %s", r->dev, strerror(errno));
        r->psn[i] = randombytes_uniform(1u << 24);
    }
    r->qp_state = "INIT";
    r->nqp = nqp;
    r->t_qp = now_s() - t0;
    size_t half = (msg + 63) & ~(size_t)63;
    if (half < 64)
        half = 64;
    r->slot = 2 * half;
    /* nqp slots, then VERBS_RES_SCRATCH bytes per QP for liveness probes (verbs_client.c). */
    r->buf_len = (r->slot + VERBS_RES_SCRATCH) * (size_t)nqp;
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    if (!w->gpu_memory) { /* host pages count against RLIMIT_MEMLOCK; say so before failing */
        int rc = verbs_res_memlock_check(r->buf_len, err);
        if (rc < 0)
            return rc;
    }
    if (w->gpu_memory) {
        int rc = verbs_res_gpu_buffer(r, w->gpu, r->buf_len, err);
        if (rc < 0)
            return rc;
    } else {
        r->buf = host_alloc(r->buf_len, w->numa);
        if (!r->buf)
            return ft_err_set(err, -ENOMEM, "cannot allocate %zu bytes", r->buf_len);
        r->buf_addr = (uint64_t)(uintptr_t)r->buf;
    }
    t0 = now_s();
    if (r->buf_gpu)
        r->mr = ibv_reg_dmabuf_mr(r->pd, 0, r->buf_len, r->buf_addr, r->dmabuf_fd, access);
    else
        r->mr = ibv_reg_mr(r->pd, r->buf, r->buf_len, access);
    if (!r->mr)
        return memlock_error(err, r->buf_len, errno);
    r->t_reg = now_s() - t0;
    size_t nlen = (size_t)nqp * RRCHECK_NONCE_BYTES;
    r->nonce_buf = calloc(1, nlen);
    if (!r->nonce_buf)
        return ft_err_set(err, -ENOMEM, "cannot allocate %zu bytes", nlen);
    r->nonce_mr =
        ibv_reg_mr(r->pd, r->nonce_buf, nlen, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!r->nonce_mr)
        return memlock_error(err, nlen, errno);
    r->reg_s_per_mib = r->t_reg / (r->buf_len / 1048576.0);
    return 0;
}

int verbs_res_connect(struct verbs_res *r, const struct verbs_res_peer *p,
                      const struct verbs_res_want *w, int timeout, int retry_cnt,
                      struct ft_err *err)
{
    if (p->nqp != r->nqp)
        return ft_err_set(err, -EPROTO, "verbs: peer has %d queue pairs, we have %d", p->nqp,
                          r->nqp);
    double t0 = now_s();
    /* The path MTU used: as given, else the smaller of both ends' active MTUs. */
    enum ibv_mtu mtu = p->mtu < r->active_mtu ? p->mtu : r->active_mtu;
    if (w->path_mtu)
        mtu = verbs_res_mtu_of_bytes(w->path_mtu);
    r->active_mtu = mtu;
    for (int i = 0; i < r->nqp; i++) {
        struct ibv_qp_attr a;
        memset(&a, 0, sizeof(a));
        a.qp_state = IBV_QPS_RTR;
        a.path_mtu = mtu;
        a.dest_qp_num = p->qpn[i];
        a.rq_psn = p->psn[i];
        a.max_dest_rd_atomic = 16;
        a.min_rnr_timer = 12;
        a.ah_attr.port_num = (uint8_t)r->port;
        a.ah_attr.sl = (uint8_t)w->sl;
        if (r->link_layer == IBV_LINK_LAYER_ETHERNET || !p->lid) {
            a.ah_attr.is_global = 1;
            a.ah_attr.grh.dgid = p->gid;
            a.ah_attr.grh.sgid_index = (uint8_t)r->gid_index;
            a.ah_attr.grh.hop_limit = 64;
            /* RoCE v2: the IP header's traffic class carries DSCP in its upper six bits. */
            a.ah_attr.grh.traffic_class = (uint8_t)(w->dscp << 2);
        } else {
            a.ah_attr.dlid = p->lid;
        }
        if (ibv_modify_qp(r->qp[i], &a,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                              IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
            int e = errno;
            char gids[640], g[64];
            verbs_res_gid_table_text(r->ctx, r->port, gids, sizeof(gids));
            verbs_res_gid_str(&p->gid, g, sizeof(g));
            return ft_err_set(err, -e,
                              "%s: queue pair to RTR failed (%s) with local GID index %d to "
                              "remote GID %s; %s; pick another with params.gid_index",
                              r->dev, strerror(e), r->gid_index, g, gids);
        }
        r->qp_state = "RTR";
        memset(&a, 0, sizeof(a));
        a.qp_state = IBV_QPS_RTS;
        a.timeout = (uint8_t)timeout;
        a.retry_cnt = (uint8_t)retry_cnt;
        a.rnr_retry = 7;
        a.sq_psn = r->psn[i];
        a.max_rd_atomic = 16;
        if (ibv_modify_qp(r->qp[i], &a,
                          IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                              IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
            return ft_err_set(err, -errno, "%s: queue pair to RTS failed: %s", r->dev,
                              strerror(errno));
        r->qp_state = "RTS";
    }
    r->t_connect = now_s() - t0;
    return 0;
}

void verbs_res_close(struct verbs_res *r)
{
    for (int i = 0; i < VERBS_RES_MAX_QPS; i++)
        if (r->qp[i])
            ibv_destroy_qp(r->qp[i]);
    if (r->mr)
        ibv_dereg_mr(r->mr);
    if (r->nonce_mr)
        ibv_dereg_mr(r->nonce_mr);
    free(r->nonce_buf);
    for (int i = 0; i < VERBS_RES_MAX_QPS; i++) {
        if (r->scq[i])
            ibv_destroy_cq(r->scq[i]);
        if (r->rcq[i])
            ibv_destroy_cq(r->rcq[i]);
    }
    if (r->pd)
        ibv_dealloc_pd(r->pd);
    if (r->ctx)
        ibv_close_device(r->ctx);
    pagebuf_free(r->buf, r->buf_len);
    if (r->buf_gpu && cu.free)
        cu.free((CUdeviceptr)(uintptr_t)r->cuda_mem);
    if (r->dmabuf_fd >= 0)
        close(r->dmabuf_fd);
    memset(r, 0, sizeof(*r));
    r->dmabuf_fd = -1;
}

cJSON *verbs_res_peer_json(const struct verbs_res *r)
{
    cJSON *o = cJSON_CreateObject();
    char hex[33];
    sodium_bin2hex(hex, sizeof(hex), r->gid.raw, 16);
    cJSON_AddStringToObject(o, "gid", hex);
    cJSON_AddNumberToObject(o, "lid", r->lid);
    cJSON_AddNumberToObject(o, "mtu", r->active_mtu);
    cJSON_AddNumberToObject(o, "link_layer", r->link_layer);
    char addr[24];
    snprintf(addr, sizeof(addr), "%llx", (unsigned long long)r->buf_addr);
    cJSON_AddStringToObject(o, "addr", addr);
    cJSON_AddNumberToObject(o, "rkey", r->mr ? r->mr->rkey : 0);
    cJSON_AddNumberToObject(o, "slot", (double)r->slot);
    snprintf(addr, sizeof(addr), "%llx", (unsigned long long)(uintptr_t)r->nonce_buf);
    cJSON_AddStringToObject(o, "nonce_addr", addr);
    cJSON_AddNumberToObject(o, "nonce_rkey", r->nonce_mr ? r->nonce_mr->rkey : 0);
    cJSON *q = cJSON_AddArrayToObject(o, "qpn"), *ps = cJSON_AddArrayToObject(o, "psn");
    for (int i = 0; i < r->nqp; i++) {
        cJSON_AddItemToArray(q, cJSON_CreateNumber(r->qp[i]->qp_num));
        cJSON_AddItemToArray(ps, cJSON_CreateNumber(r->psn[i]));
    }
    return o;
}

int verbs_res_peer_parse(const cJSON *j, struct verbs_res_peer *p, struct ft_err *err)
{
    memset(p, 0, sizeof(*p));
    const cJSON *gid = cJSON_GetObjectItemCaseSensitive(j, "gid");
    const cJSON *addr = cJSON_GetObjectItemCaseSensitive(j, "addr");
    const cJSON *qpn = cJSON_GetObjectItemCaseSensitive(j, "qpn");
    const cJSON *psn = cJSON_GetObjectItemCaseSensitive(j, "psn");
    size_t glen = 0;
    int n = cJSON_GetArraySize(qpn);
    if (!cJSON_IsString(gid) || !cJSON_IsString(addr) || !cJSON_IsArray(qpn) ||
        !cJSON_IsArray(psn) || n < 1 || n > VERBS_RES_MAX_QPS || cJSON_GetArraySize(psn) != n ||
        sodium_hex2bin(p->gid.raw, 16, gid->valuestring, strlen(gid->valuestring), NULL, &glen,
                       NULL) ||
        glen != 16)
        return ft_err_set(err, -EPROTO, "verbs: malformed queue pair information from the peer");
    p->nqp = n;
    /* Every number comes from the peer: whole and in its field's range, or refused (a cast
     * of an out-of-range double is undefined behaviour). QPNs and PSNs are 24 bits (IBTA
     * 9.7.1), a LID 16 bits, an rkey 32 bits. */
    int64_t x;
    for (int i = 0; i < n; i++) {
        if (!jsonutil_whole(cJSON_GetArrayItem(qpn, i)->valuedouble, 0, 0xffffff, &x))
            return ft_err_set(err, -EPROTO, "verbs: the peer sent a QP number out of range");
        p->qpn[i] = (uint32_t)x;
        if (!jsonutil_whole(cJSON_GetArrayItem(psn, i)->valuedouble, 0, 0xffffff, &x))
            return ft_err_set(err, -EPROTO, "verbs: the peer sent a PSN out of range");
        p->psn[i] = (uint32_t)x;
    }
    p->addr = strtoull(addr->valuestring, NULL, 16);
    static const struct {
        const char *key;
        int64_t lo, hi;
    } nums[] = {{"lid", 0, 0xffff},      {"mtu", IBV_MTU_256, IBV_MTU_4096},
                {"rkey", 0, 0xffffffff}, {"slot", 0, (int64_t)1 << 40},
                {"link_layer", 0, 255},  {"nonce_rkey", 0, 0xffffffff}};
    int64_t val[sizeof(nums) / sizeof(nums[0])] = {0};
    for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, nums[k].key);
        if (v && cJSON_IsNumber(v) &&
            !jsonutil_whole(v->valuedouble, nums[k].lo, nums[k].hi, &val[k]))
            return ft_err_set(err, -EPROTO, "verbs: the peer sent %s out of range %lld-%lld",
                              nums[k].key, (long long)nums[k].lo, (long long)nums[k].hi);
    }
    p->lid = (uint16_t)val[0];
    p->mtu = (enum ibv_mtu)val[1];
    p->rkey = (uint32_t)val[2];
    p->slot = (size_t)val[3];
    p->link_layer = (int)val[4];
    p->nonce_rkey = (uint32_t)val[5];
    const char *na = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "nonce_addr"));
    p->nonce_addr = na ? strtoull(na, NULL, 16) : 0;
    if (p->mtu < IBV_MTU_256 || p->mtu > IBV_MTU_4096 || !p->slot)
        return ft_err_set(err, -EPROTO, "verbs: the peer sent no valid MTU or buffer layout");
    if (!p->nonce_addr)
        return ft_err_set(err, -EPROTO,
                          "verbs: the peer sent no nonce area (a fabtop without the "
                          "return-routability check)");
    return 0;
}

int verbs_res_nonce_write(struct verbs_res *r, const struct verbs_res_peer *p,
                          const unsigned char (*nonce)[RRCHECK_NONCE_BYTES], int ms,
                          struct ft_err *err)
{
    double end = now_s() + ms / 1000.0;
    for (int i = 0; i < r->nqp; i++) {
        memcpy(r->nonce_buf + (size_t)i * RRCHECK_NONCE_BYTES, nonce[i], RRCHECK_NONCE_BYTES);
        struct ibv_sge sge = {.addr = (uintptr_t)(r->nonce_buf + (size_t)i * RRCHECK_NONCE_BYTES),
                              .length = RRCHECK_NONCE_BYTES,
                              .lkey = r->nonce_mr->lkey};
        struct ibv_send_wr wr = {.wr_id = VERBS_RES_NONCE_ID,
                                 .sg_list = &sge,
                                 .num_sge = 1,
                                 .opcode = IBV_WR_RDMA_WRITE,
                                 .send_flags = IBV_SEND_SIGNALED};
        wr.wr.rdma.remote_addr = p->nonce_addr + (uint64_t)i * RRCHECK_NONCE_BYTES;
        wr.wr.rdma.rkey = p->nonce_rkey;
        struct ibv_send_wr *bad;
        if (ibv_post_send(r->qp[i], &wr, &bad))
            return ft_err_set(err, -errno, "%s: cannot post the nonce on queue pair %d: %s", r->dev,
                              i, strerror(errno));
    }
    for (int i = 0; i < r->nqp; i++) {
        struct ibv_wc wc;
        int k;
        while ((k = ibv_poll_cq(r->scq[i], 1, &wc)) == 0 && now_s() < end)
            sched_yield();
        if (k < 0)
            return ft_err_set(err, -EIO, "%s: polling queue pair %d failed", r->dev, i);
        if (k == 0)
            return ft_err_set(err, -ETIMEDOUT,
                              "%s: the nonce WRITE on queue pair %d was not acknowledged within "
                              "%d ms",
                              r->dev, i, ms);
        if (wc.status != IBV_WC_SUCCESS)
            return ft_err_set(err, -EHOSTUNREACH, "%s: the nonce WRITE on queue pair %d failed: %s",
                              r->dev, i, ibv_wc_status_str(wc.status));
    }
    return 0;
}

int verbs_res_nonce_read(const struct verbs_res *r, unsigned char (*out)[RRCHECK_NONCE_BYTES],
                         int ms, struct ft_err *err)
{
    double end = now_s() + ms / 1000.0;
    for (int i = 0; i < r->nqp; i++) {
        const volatile unsigned char *slot = r->nonce_buf + (size_t)i * RRCHECK_NONCE_BYTES;
        for (;;) {
            bool zero = true;
            for (int k = 0; k < RRCHECK_NONCE_BYTES; k++) {
                out[i][k] = slot[k];
                zero &= out[i][k] == 0;
            }
            if (!zero)
                break;
            if (now_s() > end)
                return ft_err_set(err, -ETIMEDOUT,
                                  "%s: the agent's nonce for queue pair %d did not arrive within "
                                  "%d ms",
                                  r->dev, i, ms);
            sched_yield();
        }
    }
    return 0;
}

double verbs_res_timeout_bound_s(int timeout, int retry_cnt, const char *driver)
{
    double t_o = 4.096e-6 * (double)(1ull << timeout);
    bool rxe = driver && strstr(driver, "rxe");
    /* rdma_rxe treats retry_cnt 7 as "retry forever" (drivers/infiniband/sw/rxe/rxe_comp.c:
     * the count is only decremented when it is not 7), so no completion error ever comes. */
    if (rxe && retry_cnt == 7)
        return INFINITY;
    /* rdma_rxe arms its retransmit timer in jiffies: at least one tick (4 ms at HZ=250, the
     * Debian kernel's setting). */
    double floor = rxe ? 0.004 : 0;
    return (retry_cnt + 1) * 4 * (t_o > floor ? t_o : floor);
}

cJSON *verbs_res_conditions(const struct verbs_res *r, const struct verbs_res_want *w, int timeout,
                            int retry_cnt)
{
    cJSON *o = cJSON_CreateObject();
    char g[64];
    verbs_res_gid_str(&r->gid, g, sizeof(g));
    cJSON_AddStringToObject(o, "rdma_device", r->dev);
    cJSON_AddStringToObject(o, "driver", r->driver);
    cJSON_AddNumberToObject(o, "port", r->port);
    cJSON_AddStringToObject(o, "link_layer",
                            r->link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)"
                                                                     : "InfiniBand");
    cJSON_AddNumberToObject(o, "gid_index", r->gid_index);
    cJSON_AddStringToObject(o, "gid", g);
    cJSON_AddStringToObject(o, "gid_type", gid_type_str(r->gid_type));
    cJSON_AddStringToObject(o, "netdev", r->netdev);
    if (r->link_layer != IBV_LINK_LAYER_ETHERNET) {
        cJSON_AddNumberToObject(o, "lid", r->lid);
        cJSON_AddNumberToObject(o, "sl", w->sl);
    } else {
        cJSON_AddNumberToObject(o, "dscp", w->dscp);
        cJSON_AddNumberToObject(o, "traffic_class", w->dscp << 2);
    }
    cJSON_AddNumberToObject(o, "path_mtu", verbs_res_mtu_bytes(r->active_mtu));
    cJSON_AddNumberToObject(o, "queue_pairs", r->nqp);
    cJSON_AddNumberToObject(o, "queue_depth", r->depth);
    cJSON_AddNumberToObject(o, "max_inline_bytes", r->max_inline);
    cJSON_AddNumberToObject(o, "qp_timeout", timeout);
    cJSON_AddNumberToObject(o, "qp_retry_cnt", retry_cnt);
    double bound = verbs_res_timeout_bound_s(timeout, retry_cnt, r->driver);
    if (isinf(bound))
        cJSON_AddStringToObject(o, "qp_timeout_bound_s", "unlimited (the device retries forever)");
    else
        cJSON_AddNumberToObject(o, "qp_timeout_bound_s", bound);
    cJSON_AddStringToObject(o, "memory", r->buf_gpu ? "GPU (dma-buf)" : "host");
    cJSON_AddNumberToObject(o, "buffer_bytes", (double)r->buf_len);
    cJSON *t = cJSON_AddObjectToObject(o, "setup_s");
    cJSON_AddNumberToObject(t, "device_open", r->t_open);
    cJSON_AddNumberToObject(t, "pd_cq_qp", r->t_qp);
    cJSON_AddNumberToObject(t, "memory_registration", r->t_reg);
    cJSON_AddNumberToObject(t, "registration_per_mib", r->reg_s_per_mib);
    cJSON_AddNumberToObject(t, "qp_connect", r->t_connect);
    return o;
}

/* The data path: one work request on queue pair qp of r (inline when small enough and the
 * buffer is host memory), and one receive of len bytes at off. 0 or -errno. */
int verbs_res_post_op(struct verbs_res *r, int qp, enum ibv_wr_opcode op, size_t local_off,
                      uint64_t remote, uint32_t rkey, size_t len, bool signaled, uint64_t wr_id,
                      uint32_t imm)
{
    struct ibv_sge sge = {
        .addr = r->buf_addr + local_off, .length = (uint32_t)len, .lkey = r->mr->lkey};
    struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = len ? 1 : 0, .opcode = op};
    wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
    if (len <= r->max_inline && op != IBV_WR_RDMA_READ && !r->buf_gpu)
        wr.send_flags |= IBV_SEND_INLINE;
    if (op != IBV_WR_SEND) {
        wr.wr.rdma.remote_addr = remote;
        wr.wr.rdma.rkey = rkey;
    }
    if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
        wr.imm_data = htonl(imm);
    struct ibv_send_wr *bad;
    return ibv_post_send(r->qp[qp], &wr, &bad) ? -errno : 0;
}

int verbs_res_post_recv(struct verbs_res *r, int qp, size_t off, size_t len)
{
    struct ibv_sge sge = {.addr = r->buf_addr + off, .length = (uint32_t)len, .lkey = r->mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = (uint64_t)qp, .sg_list = &sge, .num_sge = 1};
    struct ibv_recv_wr *bad;
    return ibv_post_recv(r->qp[qp], &wr, &bad) ? -errno : 0;
}
