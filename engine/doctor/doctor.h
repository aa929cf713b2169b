/* doctor: the handshake doctor (`fabtop doctor`): the facts of one end of a path (route,
 * interface, MTU, rp_filter, ARP, ECN, offloads, memlock, IOMMU, RDMA ports and GIDs), the
 * comparison rules over both ends' facts and the queue-pair attributes to be used, and a UDP
 * path MTU probe with don't-fragment set against the agent's "doctor.probe". */
#ifndef DOCTOR_H
#define DOCTOR_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "topology/topo_dcb.h"

struct agent_handler;
struct topo_model;

#define DOCTOR_NAME     32
#define DOCTOR_ADDR     64
#define DOCTOR_MAX_SIB  8
#define DOCTOR_MAX_RDMA 8
#define DOCTOR_MAX_GIDS 16
#define DOCTOR_UNKNOWN  (-1) /* an integer fact that could not be read */

struct doctor_gid {
    int index;
    char type[16]; /* "IB/RoCE v1", "RoCE v2", "IB" (sysfs gid_attrs/types) */
    char ip[48];   /* the address it encodes, "" for link-local */
};

struct doctor_rdma_port {
    char dev[DOCTOR_NAME]; /* "rxe0", "mlx5_0" */
    int port;
    char link_layer[16]; /* "Ethernet", "InfiniBand" */
    char state[16];      /* "ACTIVE", "DOWN", ... */
    int active_mtu;      /* bytes */
    int max_mtu;         /* bytes */
    char netdev[DOCTOR_NAME];
    int netdev_mtu; /* bytes, DOCTOR_UNKNOWN */
    char fw[DOCTOR_NAME];
    int ngids;
    struct doctor_gid gids[DOCTOR_MAX_GIDS];
    /* RoCE: the netdev's DCB (trust, DSCP -> priority, PFC, ETS) and RoCE ECN switches;
     * dcb.available false with dcb.why when it offers none or was not read. */
    struct topo_dcb_info dcb;
    /* PCIe bridges whose ACS redirects peer-to-peer traffic between this NIC and a GPU under
     * one PCIe switch with it (the lint's acs-redirect: "0000:02:01.0 Request redirect",
     * comma separated), "" none; acs_gpus: how many such GPUs. */
    char acs[192];
    int acs_gpus;
};

/* One end's facts toward the other end. Integers DOCTOR_UNKNOWN where unreadable. */
struct doctor_facts {
    char host[DOCTOR_ADDR];           /* host name */
    char local_addr[DOCTOR_ADDR];     /* this end's address on the path */
    char peer_addr[DOCTOR_ADDR];      /* the other end's address */
    char addr_dev[DOCTOR_NAME];       /* the interface holding local_addr */
    char route_dev[DOCTOR_NAME];      /* the interface the route to peer_addr leaves by */
    char route_via[DOCTOR_ADDR];      /* its gateway, "" when on link */
    char subnet[DOCTOR_ADDR];         /* local_addr's prefix, "10.0.0.0/24" */
    int mtu;                          /* route_dev's MTU, bytes */
    int addr_mtu;                     /* addr_dev's MTU, bytes */
    int rp_filter_all, rp_filter_dev; /* net.ipv4.conf.{all,addr_dev}.rp_filter */
    int arp_ignore_all, arp_ignore_dev, arp_announce_all, arp_announce_dev;
    int nsib; /* other interfaces with an address in subnet */
    char sib[DOCTOR_MAX_SIB][DOCTOR_NAME];
    int tcp_ecn; /* net.ipv4.tcp_ecn */
    char driver[DOCTOR_NAME], driver_version[DOCTOR_NAME], firmware[DOCTOR_NAME];
    int tso, gso, gro, rx_csum, tx_csum; /* route_dev's offloads, 0/1 */
    int64_t memlock_soft, memlock_hard;  /* bytes; -2 unlimited, DOCTOR_UNKNOWN */
    int iommu_groups;                    /* /sys/kernel/iommu_groups entries */
    int nrdma;
    struct doctor_rdma_port rdma[DOCTOR_MAX_RDMA];
};

#define DOCTOR_UNLIMITED (-2)

/* Collect this end's facts toward peer_addr (numeric). local_addr: the address the path
 * uses here (NULL or "": the kernel's source address for peer_addr). root: a captured tree
 * holding sys/ and proc/ (NULL: "/"); with a root only what it holds is read (no sockets,
 * no netlink), for tests. -errno with a message when peer_addr is not an address or no
 * route reaches it. */
int doctor_facts_collect(const char *peer_addr, const char *local_addr, const char *root,
                         struct doctor_facts *f, struct ft_err *err);
/* RDMA ports (link layer, state, MTUs, GIDs, netdev MTU, DCB, ACS on their GPU paths) from
 * the topology discovery of root (NULL: live), replacing f's. */
void doctor_facts_rdma(struct doctor_facts *f, const char *root);
/* The same from a model already made (root: where the DCB and ECN facts are read, NULL:
 * live), for tests. */
void doctor_facts_rdma_model(struct doctor_facts *f, const struct topo_model *m, const char *root);
cJSON *doctor_facts_json(const struct doctor_facts *f);
/* 0, or -EPROTO when j is not a facts object. */
int doctor_facts_from_json(const cJSON *j, struct doctor_facts *f, struct ft_err *err);

/* The largest IB MTU a RoCE netdev MTU allows (include/rdma/ib_addr.h iboe_get_mtu: the
 * netdev MTU less GRH 40 + UDP 8 + BTH 12 + XRC ext 4 + AtomicETH 28 + ICRC 4 = 96 bytes,
 * rounded down to 256/512/1024/2048/4096); 0 below 256. */
int doctor_roce_mtu(int netdev_mtu);

/* The queue pair's attributes to check (verbs); dev "" for a TCP path. */
struct doctor_qp {
    char dev[DOCTOR_NAME];
    int port;
    int gid_index;     /* -1: not given */
    int path_mtu;      /* bytes, 0: not given (the smaller active MTU is used) */
    char gid_type[16]; /* expected: "RoCE v2" by default */
    int dscp;          /* RoCE v2: the packets' DSCP (traffic class >> 2); 26 by default */
};

/* What a path MTU probe found (doctor_pmtu_probe). */
struct doctor_pmtu {
    bool valid;
    int tried;      /* the largest size sent, bytes of IP packet */
    int largest_ok; /* the largest size echoed back, bytes of IP packet; 0: none */
    int icmp_mtu;   /* MTU named by an ICMP "fragmentation needed", 0: none arrived */
};

enum doctor_sev { DOCTOR_WARN = 1, DOCTOR_ERROR = 2 };

struct doctor_finding {
    enum doctor_sev sev;
    char rule[32];  /* "mtu-mismatch", "rp-filter", ... */
    char attr[48];  /* the attribute compared */
    char local[64]; /* its value here */
    char peer[64];  /* its value at the peer */
    char msg[512];  /* one sentence: what, where, the fix */
};

/* The rules, pure functions over both ends' facts (local, peer), the queue pair (NULL or
 * dev "": none) and the probe (NULL: none). Up to max findings into out; returns how many
 * (all found, even beyond max: only max are written). */
int doctor_compare(const struct doctor_facts *local, const struct doctor_facts *peer,
                   const struct doctor_qp *qp, const struct doctor_pmtu *probe,
                   struct doctor_finding *out, int max);
/* Each rule alone (doctor_compare runs them all), for tests. */
int doctor_rule_route(const struct doctor_facts *l, const struct doctor_facts *p,
                      struct doctor_finding *out, int max);
int doctor_rule_mtu(const struct doctor_facts *l, const struct doctor_facts *p,
                    struct doctor_finding *out, int max);
int doctor_rule_pmtu(const struct doctor_facts *l, const struct doctor_facts *p,
                     const struct doctor_pmtu *probe, struct doctor_finding *out, int max);
int doctor_rule_rdma(const struct doctor_facts *l, const struct doctor_facts *p,
                     const struct doctor_qp *qp, struct doctor_finding *out, int max);
int doctor_rule_host(const struct doctor_facts *l, const struct doctor_facts *p,
                     const struct doctor_qp *qp, struct doctor_finding *out, int max);
/* RoCE's lossless class on both ends' ports of qp: DSCP trust, the DSCP's priority, PFC on it,
 * its ETS share, RoCE ECN (rules dcb-trust, pfc, ets, roce-ecn). */
int doctor_rule_dcb(const struct doctor_facts *l, const struct doctor_facts *p,
                    const struct doctor_qp *qp, struct doctor_finding *out, int max);
/* PCIe ACS redirect between the queue pair's NIC and a GPU under one switch, at either end
 * (rule pcie-acs): GPUDirect RDMA then detours through the root complex. */
int doctor_rule_acs(const struct doctor_facts *l, const struct doctor_facts *p,
                    const struct doctor_qp *qp, struct doctor_finding *out, int max);
/* The priority a RoCE v2 packet of DSCP dscp gets at port r: the APP table's when the port
 * trusts DSCP (-1 when it maps none there), 0 with PCP trust (an untagged packet's; a VLAN's
 * PCP would come from the queue pair's SL, which the doctor does not see); -1 without DCB. */
int doctor_dcb_priority(const struct doctor_rdma_port *r, int dscp);
/* A switch's value as text: "on" (1), "off" (0), "n/a" (anything else). */
const char *doctor_switch_str(int v);
/* The port of f a queue pair on (dev, port) uses: dev named (NULL or "": any), port (0: any),
 * the first that fits (the agent's end: the device it picks); NULL: none. */
const struct doctor_rdma_port *doctor_port(const struct doctor_facts *f, const char *dev, int port);

/* The worst severity in findings: 0 clean, 1 warnings, 2 errors. */
int doctor_status(const struct doctor_finding *f, int n);

/* Probe the UDP echo at addr:port (the agent's doctor.probe) with don't-fragment set
 * (IP_PMTUDISC_PROBE), from size max_size down, for the largest IP packet that comes back;
 * ICMP "fragmentation needed" is read from the error queue. -errno on a socket failure. */
int doctor_pmtu_probe(const char *addr, uint16_t port, int max_size, struct doctor_pmtu *out,
                      struct ft_err *err);

/* The agent's handlers: doctor.facts {"peer_addr": the client's address, "local_addr":
 * the agent's address on the path} -> {"facts": {...}}; doctor.probe -> {"port": N}, a UDP
 * echo on the session's local address answering only the session's client, until the
 * session ends. */
extern const struct agent_handler doctor_facts_handler;
extern const struct agent_handler doctor_probe_handler;

#endif
