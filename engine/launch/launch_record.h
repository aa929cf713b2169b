/* launch_record: what every rank of fabtop sweep tells rank 0 at the rendezvous (one MPI
 * gather of fixed-size slots): hostname, fabtop version, the node's topology summary (NIC
 * models, firmware, MTU, link layer, GPU count), its rail, endpoints and addresses.
 *
 * The slot is LAUNCH_SLOT bytes, the same in every fabtop version, little-endian:
 *   0  magic "FTSWEEP\0"          8 bytes
 *   8  layout                     u16 (LAUNCH_LAYOUT; a later fabtop may change the body)
 *  10  reserved                   u16, 0
 *  12  body length                u32, bytes of body after offset 64 (<= LAUNCH_BODY_MAX)
 *  16  fabtop version             32 bytes, NUL-terminated printable ASCII
 *  48  rank, world size           u32, u32 (as the sender's MPI saw them)
 *  56  reserved                   8 bytes, 0
 *  64  body (layout 1 below)
 *  LAUNCH_SLOT-32  BLAKE2b-256 (libsodium crypto_generichash) of bytes [0, LAUNCH_SLOT-32)
 * The header stays readable across layouts, so a mismatched version is named, not misread.
 * Layout 1 body: hostname[64], local rank i32, local size i32, rail i32, ngpus u32,
 * nics_total u32, nnics u32 (<= LAUNCH_MAX_NICS), control port u16, NCCL GPUs u16, then per
 * NIC: model[64] firmware[32] rdma_dev[32] netdev[32] link layer u32 (topo_link_layer),
 * netdev MTU u32 (bytes), IB active MTU u32 (bytes), rate u32 (Mb/s), address[48].
 * Every text field holds a NUL, printable ASCII before it and zeros after it; every number
 * is range-checked; every byte past the body is zero. A record failing any of that, or the
 * checksum (which catches corruption, not forgery: the checks on the fields are what stand
 * against a hostile sender), is refused with the reason. */
#ifndef LAUNCH_RECORD_H
#define LAUNCH_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "common/ft_err.h"
#include "topology/topo_model.h"

#define LAUNCH_SLOT     4096
#define LAUNCH_HEADER   64
#define LAUNCH_SUM      32
#define LAUNCH_BODY_MAX (LAUNCH_SLOT - LAUNCH_HEADER - LAUNCH_SUM)
#define LAUNCH_LAYOUT   2
#define LAUNCH_MAX_NICS 8

struct launch_nic {
    char model[64];      /* the adapter's PCI device name */
    char firmware[32];   /* "" unknown */
    char rdma_dev[32];   /* "mlx5_0", "" for a plain network function */
    char netdev[32];     /* "eth0", "" none */
    uint32_t link_layer; /* enum topo_link_layer */
    uint32_t mtu;        /* netdev MTU, bytes; 0 unknown */
    uint32_t ib_mtu;     /* the RDMA port's active MTU, bytes; 0 unknown */
    uint32_t rate_mbps; /* port rate (RDMA active rate, else the netdev's speed), Mb/s; 0 unknown */
    char addr[48];      /* its first IP address, "" none */
};

struct launch_record {
    char version[32]; /* fabtop version */
    uint16_t layout;  /* LAUNCH_LAYOUT of the sender */
    uint32_t rank, size;
    char hostname[64];
    int32_t local_rank, local_size; /* -1 unknown */
    int32_t rail;                   /* index into nics, -1 none */
    uint32_t ngpus;
    uint32_t nics_total; /* rails on the node (those beyond LAUNCH_MAX_NICS are not listed) */
    uint32_t nnics;
    uint16_t ctl_port;  /* the rank's control-channel port; 0 until it listens */
    uint16_t nccl_gpus; /* GPUs NCCL can use on the node (CUDA's device count), 0 none */
    char nccl_gpu[16];  /* the PCI bus id of the GPU its NCCL tests use, "" unknown */
    struct launch_nic nics[LAUNCH_MAX_NICS];
};

/* The GPU (CUDA device index) a rank's NCCL tests use: that of its local rank, as one rank
 * per GPU binds (local_rank modulo nccl_gpus); 0 without GPUs or a local rank. */
int launch_rank_gpu(const struct launch_record *r);

/* Fill r's topology summary from a loaded model: GPU count and the rails in the model's order
 * (the RDMA NICs when the node has any, else every NIC) with their model, firmware, MTU, link
 * layer, rate and first address. */
void launch_record_topo(struct launch_record *r, const struct topo_model *m);

/* The rails as named (--rails eth0,eth1: rail i is netdevs[i]) instead of the model's NICs:
 * each netdev's NIC when it belongs to one (model, firmware, RDMA device, port rate), else
 * the netdev alone (a virtual device: MTU, speed, address); nics_total = n. 0, or -ENODEV
 * naming a netdev the model does not have, -EINVAL for none, too many or one given twice
 * (r is then unchanged). */
int launch_record_rails(struct launch_record *r, const struct topo_model *m,
                        const char *const *netdevs, int n, struct ft_err *err);

/* Copy src into a text field of len bytes as the record carries it: printable ASCII, every
 * other byte (a UTF-8 adapter name from pci.ids, a hostname) as '?', cut to fit. So a node's
 * own names never make rank 0 refuse its record. */
void launch_record_text(char *dst, size_t len, const char *src);

/* Write r into slot (LAUNCH_SLOT bytes). 0, or -EINVAL when r does not fit the layout (a
 * field too long: it is never cut silently). */
int launch_record_encode(const struct launch_record *r, unsigned char *slot, struct ft_err *err);
/* Read only the stable header: magic, layout, version, rank, size. 0, or -EBADMSG. */
int launch_record_header(const unsigned char *slot, struct launch_record *r, struct ft_err *err);
/* Read and check the whole slot (header, checksum, layout LAUNCH_LAYOUT, every field):
 * 0, or -EBADMSG with err saying which field is wrong. A layout other than LAUNCH_LAYOUT is
 * -EPROTO (the header is in r: its version names the sender's fabtop). */
int launch_record_decode(const unsigned char *slot, struct launch_record *r, struct ft_err *err);

/* How rank i's topology differs from the usual one among n records (the summary most ranks
 * share; a tie goes to the lowest rank's): "NIC 0 firmware 28.39 (others 28.40); GPUs 7
 * (others 8)" in buf, or "" when it is the usual one. Returns the index of the usual record. */
int launch_record_usual(const struct launch_record *recs, int n);
void launch_record_diff(const struct launch_record *usual, const struct launch_record *r, char *buf,
                        size_t len);

#endif
