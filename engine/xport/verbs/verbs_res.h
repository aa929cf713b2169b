/* verbs_res: RDMA verbs resources shared by both ends of a verbs flow: choosing the device,
 * port and GID (RoCE v2, IPv4-mapped, matching the chosen netdev or IP, as show_gids lists
 * them; LID and SL for InfiniBand), protection domain, CQs, RC queue pairs, one registered
 * buffer (host memory on the NIC's NUMA node, or GPU memory through dma-buf), and the QP
 * state changes INIT -> RTR -> RTS with the peer's QP number, PSN and GID. */
#ifndef VERBS_RES_H
#define VERBS_RES_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <infiniband/verbs.h>

#include "common/ft_err.h"
#include "engine/peer/rrcheck.h"

#define VERBS_RES_MAX_QPS 64

/* Where and how: what the user asked for. */
struct verbs_res_want {
    char device[64]; /* "mlx5_0" or "" (choose) */
    int port;        /* 0: choose */
    char ip[64];     /* local IP the RoCE GID must carry, "" any */
    char netdev[32]; /* netdev the port must sit on, "" any */
    int gid_index;   /* -1: choose automatically */
    /* The queue pairs' path MTU in bytes as given (256..4096), applied without clamping to
     * the ports' active MTUs, as an application that sets it does (`fabtop doctor`'s walk
     * tests such a value); 0: the smaller of both ends' active MTUs. */
    int path_mtu;
    int dscp;        /* RoCE v2: traffic class = dscp << 2 */
    int sl;          /* InfiniBand service level */
    int numa;        /* allocate host memory on this NUMA node, -1 don't care */
    bool gpu_memory; /* register CUDA device memory through dma-buf */
    int gpu;         /* CUDA ordinal for gpu_memory */
};

/* One end's resources. */
struct verbs_res {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *scq[VERBS_RES_MAX_QPS],
        *rcq[VERBS_RES_MAX_QPS]; /* per QP: one worker polls each */
    struct ibv_qp *qp[VERBS_RES_MAX_QPS];
    uint32_t psn[VERBS_RES_MAX_QPS];
    int nqp;
    struct ibv_mr *mr;
    char *buf;         /* host view of the buffer (NULL for GPU memory) */
    uint64_t buf_addr; /* address the MR covers (device address for GPU memory) */
    size_t buf_len;
    size_t slot; /* bytes per QP: [send area | receive area], each slot/2 */
    bool buf_gpu;
    /* Host memory the peer agent writes its return-routability nonces into, one
     * RRCHECK_NONCE_BYTES slot per QP (a buffer of its own: the data buffer may be GPU memory). */
    unsigned char *nonce_buf;
    struct ibv_mr *nonce_mr;
    int dmabuf_fd;
    void *cuda_mem; /* CUdeviceptr when buf_gpu */
    char dev[64];
    int port;
    int link_layer; /* IBV_LINK_LAYER_* */
    int gid_index;
    union ibv_gid gid;
    int gid_type;    /* IBV_GID_TYPE_* */
    char netdev[32]; /* netdev of the chosen GID */
    uint16_t lid;
    enum ibv_mtu active_mtu;
    /* The state the latest queue pair reached: NULL none yet, "INIT", "RTR", "RTS" (with
     * one queue pair, what a failed set-up got to: `fabtop doctor`'s walk reports it). */
    const char *qp_state;
    uint32_t max_inline; /* bytes the QPs accept inline */
    int depth;           /* send/receive queue depth per QP */
    /* timings (seconds) for the results: set-up apart from transfer */
    double t_open, t_qp, t_reg, t_connect;
    double reg_s_per_mib; /* memory registration time per MiB */
    char driver[32];
};

/* Bytes per QP after the slots, written by liveness probes and never read. */
#define VERBS_RES_SCRATCH 64
/* Offset of QP qp's scratch bytes in a buffer of nqp slots. */
#define VERBS_RES_SCRATCH_OFF(slot, nqp, qp)                                                       \
    ((size_t)(slot) * (size_t)(nqp) + (size_t)VERBS_RES_SCRATCH * (size_t)(qp))

/* What one end tells the other (JSON over the control channel). */
struct verbs_res_peer {
    int nqp;
    uint32_t qpn[VERBS_RES_MAX_QPS], psn[VERBS_RES_MAX_QPS];
    union ibv_gid gid;
    uint16_t lid;
    enum ibv_mtu mtu;
    uint64_t addr;
    uint32_t rkey;
    size_t slot;
    int link_layer;
    uint64_t nonce_addr; /* its nonce area (verbs_res.nonce_buf) */
    uint32_t nonce_rkey;
};

/* Open the device/port/GID matching want; err lists the GIDs that exist when none fits. */
int verbs_res_open(struct verbs_res *r, const struct verbs_res_want *want, struct ft_err *err);
/* PD, CQs, nqp RC QPs of depth, a buffer of nqp slots of 2 x msg bytes (rounded up). */
int verbs_res_alloc(struct verbs_res *r, const struct verbs_res_want *want, int nqp, size_t msg,
                    int depth, struct ft_err *err);
/* Can GPU gpu's memory be registered through dma-buf? 0, or -errno with why not (no CUDA
 * driver, no such device, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0). */
int verbs_res_gpu_dmabuf_check(int gpu, struct ft_err *err);
/* len bytes of GPU memory exported as a dma-buf (r->cuda_mem, r->dmabuf_fd, r->buf_addr);
 * verbs_res_close() frees them. */
int verbs_res_gpu_buffer(struct verbs_res *r, int gpu, size_t len, struct ft_err *err);
/* Before pinning len bytes: -ENOMEM with how to raise RLIMIT_MEMLOCK when the limit is
 * lower and the process lacks CAP_IPC_LOCK (the kernel's check in ib_umem_get()). */
int verbs_res_memlock_check(size_t len, struct ft_err *err);
/* INIT -> RTR -> RTS against the peer; timeout/retry_cnt set the local ACK timeout. */
int verbs_res_connect(struct verbs_res *r, const struct verbs_res_peer *p,
                      const struct verbs_res_want *want, int timeout, int retry_cnt,
                      struct ft_err *err);
/* Half of a queue pair's slot of the buffer: the first half sends, the second receives. */
static inline size_t verbs_res_half(const struct verbs_res *r)
{
    return r->slot / 2;
}

/* The data path: post one work request on queue pair qp (RDMA WRITE/READ to remote/rkey, SEND,
 * WRITE with immediate imm; inline when it fits and the buffer is host memory), or one
 * receive of len bytes at off (wr_id = qp). 0 or -errno. */
int verbs_res_post_op(struct verbs_res *r, int qp, enum ibv_wr_opcode op, size_t local_off,
                      uint64_t remote, uint32_t rkey, size_t len, bool signaled, uint64_t wr_id,
                      uint32_t imm);
int verbs_res_post_recv(struct verbs_res *r, int qp, size_t off, size_t len);
void verbs_res_close(struct verbs_res *r);
/* Agent, before any test data: RDMA WRITE nonce[i] into the peer's nonce slot i over QP i,
 * signalled, and wait up to ms for every completion (wr_id VERBS_RES_NONCE_ID; nothing else may be
 * outstanding). 0, or -errno naming the QP and the completion status ("transport retry
 * counter exceeded": nobody answers at the address the peer gave). */
int verbs_res_nonce_write(struct verbs_res *r, const struct verbs_res_peer *p,
                          const unsigned char (*nonce)[RRCHECK_NONCE_BYTES], int ms,
                          struct ft_err *err);
/* Client: copy the agent's nonces out of our nonce area, waiting up to ms for every slot to
 * be written (a slot of zeros is not yet written: 2^-256 for a random nonce). */
int verbs_res_nonce_read(const struct verbs_res *r, unsigned char (*out)[RRCHECK_NONCE_BYTES],
                         int ms, struct ft_err *err);
#define VERBS_RES_NONCE_ID (UINT64_MAX - 1)

cJSON *verbs_res_peer_json(const struct verbs_res *r);
int verbs_res_peer_parse(const cJSON *j, struct verbs_res_peer *p, struct ft_err *err);
/* "GIDs on rxe0 port 1: [0] fe80::... RoCE v2 veth0; [1] ::ffff:10.0.0.1 RoCE v2 veth0" */
void verbs_res_gid_table_text(struct ibv_context *ctx, int port, char *buf, size_t len);
int verbs_res_mtu_bytes(enum ibv_mtu m);
/* IBV_MTU_* of 256, 512, 1024, 2048 or 4096 bytes; 0 for any other value. */
enum ibv_mtu verbs_res_mtu_of_bytes(int bytes);
void verbs_res_gid_str(const union ibv_gid *g, char *buf, size_t len);
/* The longest a peer loss can take to surface as a completion error (IB spec: the local
 * ACK timeout T_o = 4.096 us x 2^timeout, one attempt may last up to 4 T_o, attempts =
 * retry_cnt + 1; Soft-RoCE rounds its timer up to at least one kernel tick). Seconds;
 * INFINITY when the device never gives up (rdma_rxe with retry_cnt 7). */
double verbs_res_timeout_bound_s(int timeout, int retry_cnt, const char *driver);
/* Everything chosen, for the results and the live header. */
cJSON *verbs_res_conditions(const struct verbs_res *r, const struct verbs_res_want *w, int timeout,
                            int retry_cnt);

#endif
