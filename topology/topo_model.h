/* topo_model: the node model every other part of fabtop reads. It is plain data built
 * once by a source (hwloc live/XML/sysfs root, or a saved JSON snapshot) and then only
 * read. Optional facts carry a valid bit: unknown is shown as n/a, never as 0.
 * Objects refer to each other by index into the model's arrays (-1 = none). */
#ifndef TOPO_MODEL_H
#define TOPO_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOPO_NAME   64
#define TOPO_TEXT   128
#define TOPO_CPUSET 256
/* The largest index or OS number a model holds (packages, NUMA nodes, GPUs): far beyond any
 * machine, far inside an int. */
#define TOPO_MAX_INDEX (1 << 20)

/* A PCI address: domain:bus:device.function. */
struct topo_bdf {
    uint32_t domain;
    uint8_t bus, dev, func;
};

/* ---- CPU side ---- */

struct topo_package {
    int os_index; /* physical package id */
    char cpu_model[TOPO_TEXT];
    char cpuset[TOPO_CPUSET]; /* cpu list, "0-23,48-71" */
};

enum topo_numa_kind {
    TOPO_NUMA_CPU = 0,    /* ordinary memory with (or near) CPUs */
    TOPO_NUMA_GPU_MEMORY, /* a GPU's memory exposed as a NUMA node (POWER9 + V100) */
    TOPO_NUMA_OTHER,      /* HBM/NVM/CXL-only nodes without CPUs */
};

struct topo_numa {
    int os_index;
    enum topo_numa_kind kind;
    int package;              /* index into packages, -1 if not below one */
    uint64_t mem_bytes;       /* local memory, 0 if unknown */
    char cpuset[TOPO_CPUSET]; /* CPUs of this node ("" for memory-only nodes) */
    int gpu;                  /* for GPU memory: index into gpus, else -1 */
    char subtype[32];         /* hwloc subtype ("GPUMemory", "MCDRAM", ...) */
};

/* ---- PCI tree ---- */

enum topo_pci_kind {
    TOPO_PCI_HOSTBRIDGE = 0, /* root complex: hwloc HostBridge */
    TOPO_PCI_BRIDGE,         /* PCI-to-PCI bridge: root port or PCIe switch port */
    TOPO_PCI_DEVICE,         /* endpoint function */
};

/* What a PCI-to-PCI bridge is, derived from its place in the tree (see topo_affinity.c):
 * root ports sit directly below a host bridge; below them switch upstream and downstream
 * ports alternate. */
enum topo_bridge_role {
    TOPO_BRIDGE_NONE = 0,
    TOPO_BRIDGE_ROOT_PORT,
    TOPO_BRIDGE_SWITCH_UP,
    TOPO_BRIDGE_SWITCH_DOWN,
};

/* valid bits of struct topo_pci */
enum {
    TOPO_PCI_V_CUR_SPEED = 1u << 0, /* cur_speed_gts */
    TOPO_PCI_V_CUR_WIDTH = 1u << 1, /* cur_width */
    TOPO_PCI_V_MAX_SPEED = 1u << 2, /* max_speed_gts */
    TOPO_PCI_V_MAX_WIDTH = 1u << 3, /* max_width */
    TOPO_PCI_V_LINK_GBS = 1u << 4,  /* link_gbs (hwloc's per-direction bandwidth) */
    TOPO_PCI_V_ACS = 1u << 5,       /* acs_ctrl (config space was readable) */
    TOPO_PCI_V_IDS = 1u << 6,       /* vendor_id/device_id/class_id are real */
};

struct topo_pci {
    enum topo_pci_kind kind;
    int parent;                  /* index into pci, -1 for host bridges */
    int numa;                    /* local CPU NUMA node (os index), -1 if several or unknown */
    int package;                 /* index into packages, -1 if unknown */
    char cpuset[TOPO_CPUSET];    /* local CPUs, for pinning */
    struct topo_bdf addr;        /* function address; for host bridges domain + first bus */
    uint8_t bus_first, bus_last; /* bridges: secondary..subordinate bus range */
    uint16_t vendor_id, device_id;
    uint16_t class_id; /* base class << 8 | subclass (0x0302 = 3D controller) */
    uint8_t prog_if;
    enum topo_bridge_role role;
    unsigned valid;       /* TOPO_PCI_V_* */
    double cur_speed_gts; /* current link speed per lane, GT/s */
    double max_speed_gts; /* capability, GT/s */
    int cur_width;        /* lanes */
    int max_width;        /* lanes */
    double link_gbs;      /* hwloc's link bandwidth, GB/s (10^9 bytes/s), one direction */
    uint16_t acs_ctrl;    /* PCIe ACS Control register (bridges) */
    char vendor_name[TOPO_NAME];
    char device_name[TOPO_TEXT];
    char subtype[32]; /* hwloc subtype, e.g. "NVSwitch" */
    char slot[32];    /* physical slot name */
};

/* ---- GPUs ---- */

enum {
    TOPO_GPU_V_CUDA = 1u << 0, /* cuda_index */
    TOPO_GPU_V_NVML = 1u << 1, /* nvml_index */
    TOPO_GPU_V_MEM = 1u << 2,  /* mem_bytes */
    TOPO_GPU_V_RSMI = 1u << 3, /* rsmi_index */
};

struct topo_gpu {
    int pci;                /* index into pci (the GPU's function) */
    char vendor[16];        /* "NVIDIA", "AMD", "Intel", ... */
    char model[TOPO_TEXT];  /* "NVIDIA H100 80GB HBM3" where known */
    char osdevs[TOPO_TEXT]; /* OS device names, space separated: "cuda0 nvml0" */
    char uuid[64];
    char found_by[32]; /* how it was recognised: "osdev", "pci-class", "nvidia-proc" */
    unsigned valid;    /* TOPO_GPU_V_* */
    int cuda_index, nvml_index, rsmi_index;
    uint64_t mem_bytes; /* device memory, bytes */
    int mem_numa;       /* os index of its memory NUMA node, -1 if none */
};

/* An NVLink (or XGMI) connection summary between a GPU and a peer. */
enum topo_link_peer { TOPO_PEER_GPU = 0, TOPO_PEER_SWITCH, TOPO_PEER_CPU };

struct topo_gpulink {
    int gpu; /* index into gpus */
    enum topo_link_peer peer_kind;
    int peer;      /* gpu index, pci index of the switch, or package index */
    double bw_mbs; /* hwloc NVLinkBandwidth: MB/s (10^6 bytes/s) */
    int links;     /* number of links, -1 when it cannot be derived */
    char kind[16]; /* "NVLink", "XGMI" */
};

/* ---- NICs, RDMA devices, ports, netdevs ---- */

enum topo_link_layer { TOPO_LL_UNKNOWN = 0, TOPO_LL_INFINIBAND, TOPO_LL_ETHERNET };

/* IB port states as the kernel's sysfs "state" file numbers them (ib_verbs.h enum
 * ib_port_state): 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER. */
enum topo_port_state {
    TOPO_PORT_STATE_UNKNOWN = 0,
    TOPO_PORT_DOWN = 1,
    TOPO_PORT_INIT = 2,
    TOPO_PORT_ARMED = 3,
    TOPO_PORT_ACTIVE = 4,
    TOPO_PORT_ACTIVE_DEFER = 5,
};

/* Physical port states (IB spec PortPhysicalState; sysfs "phys_state"):
 * 1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining, 5 LinkUp,
 * 6 LinkErrorRecovery, 7 Phy Test. */
enum topo_phys_state {
    TOPO_PHYS_UNKNOWN = 0,
    TOPO_PHYS_SLEEP = 1,
    TOPO_PHYS_POLLING = 2,
    TOPO_PHYS_DISABLED = 3,
    TOPO_PHYS_TRAINING = 4,
    TOPO_PHYS_LINKUP = 5,
    TOPO_PHYS_ERROR_RECOVERY = 6,
    TOPO_PHYS_PHY_TEST = 7,
};

enum topo_gid_type { TOPO_GID_IB = 0, TOPO_GID_ROCE_V1, TOPO_GID_ROCE_V2 };

struct topo_gid {
    int index;
    char gid[48]; /* "fe80:0000:...", as sysfs writes it */
    enum topo_gid_type type;
    char ndev[32]; /* netdev the GID belongs to ("" if none) */
    char ip[48];   /* IPv4 (for ::ffff:a.b.c.d) or IPv6 text, "" for link-local IB */
};

enum {
    TOPO_PORT_V_STATE = 1u << 0,
    TOPO_PORT_V_PHYS = 1u << 1,
    TOPO_PORT_V_LL = 1u << 2,
    TOPO_PORT_V_RATE = 1u << 3,     /* rate_gbps, width, speed text */
    TOPO_PORT_V_MTU = 1u << 4,      /* active_mtu */
    TOPO_PORT_V_MAXMTU = 1u << 5,   /* max_mtu */
    TOPO_PORT_V_LID = 1u << 6,      /* lid, lmc */
    TOPO_PORT_V_SMLID = 1u << 7,    /* sm_lid, sm_sl */
    TOPO_PORT_V_GIDS = 1u << 8,     /* the GID table was read (it may still be empty) */
    TOPO_PORT_V_GIDTYPES = 1u << 9, /* GID types are known */
};

struct topo_port {
    int nic;        /* index into nics */
    int num;        /* port number, from 1 */
    unsigned valid; /* TOPO_PORT_V_* */
    enum topo_port_state state;
    enum topo_phys_state phys_state;
    enum topo_link_layer link_layer;
    double rate_gbps; /* active data rate, Gb/s (10^9 bit/s), e.g. 400 */
    int width;        /* active lanes: 1, 2, 4, 8, 12 */
    char speed[32];   /* lane speed name: "HDR", "NDR", "25 Gb/s" */
    int active_mtu;   /* bytes: 256..4096 */
    int max_mtu;      /* bytes */
    uint32_t lid, sm_lid;
    int lmc, sm_sl;
    int netdev; /* index into netdevs, -1 if none */
    int ngids;
    struct topo_gid *gids; /* non-zero GIDs only */
};

struct topo_nic {
    int pci;                  /* index into pci (this function), -1 for virtual devices */
    int adapter;              /* index into adapters */
    char rdma_dev[TOPO_NAME]; /* verbs device ("mlx5_0"), "" for a plain network function */
    char driver[32];          /* kernel driver, where known */
    char node_guid[24];
    char sys_image_guid[24];
    char fw_ver[TOPO_NAME];
    char board_id[TOPO_NAME];
    char hca_type[TOPO_NAME];
    int first_port, nports; /* range in ports */
};

/* An adapter is one physical card: the PCI functions that share domain:bus:device. */
struct topo_adapter {
    char model[TOPO_TEXT]; /* PCI device name, or "15b3:101b" */
    uint16_t vendor_id, device_id;
    char fw_ver[TOPO_NAME]; /* firmware of its first RDMA function, "" if unknown */
    int nfuncs;
    int funcs[8]; /* indices into nics */
};

enum {
    TOPO_NET_V_MTU = 1u << 0,
    TOPO_NET_V_SPEED = 1u << 1,
    TOPO_NET_V_OPER = 1u << 2,
    TOPO_NET_V_BOND = 1u << 3, /* a bond master (bond_mode set) */
};

struct topo_netdev {
    char name[32];
    int pci;        /* index into pci, -1 if virtual or unknown */
    int nic;        /* index into nics, -1 if none */
    int dev_port;   /* port of a multi-port function (sysfs dev_port), 0-based */
    unsigned valid; /* TOPO_NET_V_* */
    char mac[64];
    int mtu;               /* bytes */
    int speed_mbps;        /* link speed, Mb/s as ethtool reports it */
    char operstate[16];    /* "up", "down", "unknown" */
    char addrs[TOPO_TEXT]; /* IP addresses, space separated (live only) */
    /* Link aggregation (Documentation/networking/bonding.rst): a slave names its bond in
     * master (sysfs master link); a bond has its mode ("802.3ad", "balance-xor",
     * "active-backup", ...: the first word of bonding/mode) and its transmit hash
     * ("layer2", "layer3+4", ...: bonding/xmit_hash_policy); "" when none. */
    char master[32];
    char bond_mode[24];
    char bond_hash[24];
};

/* ---- host facts used by lint ---- */

enum topo_tristate { TOPO_UNKNOWN = -1, TOPO_NO = 0, TOPO_YES = 1 };

struct topo_host {
    char hostname[TOPO_NAME];
    char kernel[TOPO_TEXT];
    char arch[32];
    char product[TOPO_TEXT]; /* DMI product name */
    int is_root;             /* enum topo_tristate */
    int cap_ipc_lock;        /* enum topo_tristate */
    int memlock_known;       /* 1 when memlock_soft/hard were read */
    uint64_t memlock_soft;   /* bytes, UINT64_MAX for unlimited */
    uint64_t memlock_hard;
    int nvidia_peermem; /* tristate: nvidia_peermem (or nv_peer_mem) loaded */
    int dmabuf;         /* tristate: GPU driver exports dma-buf for RDMA */
};

/* ---- fabric: what lies beyond the node's ports ----
 * The InfiniBand subnet reachable from the node's IB ports (libibnetdisc, libibmad: see
 * topo_ibfabric.h) and the Ethernet neighbours of its netdevs (LLDP through lldpd: see
 * topo_lldp.h). Filled by `fabtop topo --fabric` on a live system, or read back from a
 * snapshot; empty (valid == 0) otherwise. Helpers: topo_fabric.h. */

/* IBA NodeInfo:NodeType (IBA vol 1, 14.2.5.3). */
enum topo_fnode_type { TOPO_FNODE_CA = 1, TOPO_FNODE_SWITCH = 2, TOPO_FNODE_ROUTER = 3 };

enum {
    TOPO_FNODE_V_LID = 1u << 0,  /* lid */
    TOPO_FNODE_V_HOPS = 1u << 1, /* hops and local */
    TOPO_FNODE_V_IDS = 1u << 2,  /* vendor_id, device_id */
};

/* A node of the subnet: a switch, a channel adapter (HCA) or a router. */
struct topo_fnode {
    enum topo_fnode_type type;
    uint64_t guid;        /* NodeGUID */
    uint64_t sys_guid;    /* SystemImageGUID */
    char desc[TOPO_TEXT]; /* NodeDescription ("leaf-1", "node01 mlx5_0") */
    int nports;           /* NumPorts (a switch's management port 0 is not counted) */
    unsigned valid;       /* TOPO_FNODE_V_* */
    uint32_t vendor_id;   /* IEEE OUI, 24 bits */
    uint16_t device_id;
    uint32_t lid;            /* a switch's port 0 LID; a CA's first LID */
    int hops;                /* cables on the shortest path from fabric.locals[local] */
    int local;               /* index into fabric.locals: where hops are counted from */
    int first_port, nfports; /* its discovered ports: a range in fabric.ports */
};

enum {
    TOPO_FPORT_V_STATE = 1u << 0,     /* state, phys_state */
    TOPO_FPORT_V_LID = 1u << 1,       /* lid, lmc */
    TOPO_FPORT_V_WIDTH = 1u << 2,     /* width */
    TOPO_FPORT_V_SPEED = 1u << 3,     /* lane_gbps, speed */
    TOPO_FPORT_V_WIDTH_CAP = 1u << 4, /* width_sup, width_ena */
    TOPO_FPORT_V_SPEED_CAP = 1u << 5, /* lane_sup_gbps, lane_ena_gbps */
};

/* One port of a fabric node, from its PortInfo (IBA 14.2.5.6). */
struct topo_fport {
    int node;       /* index into fabric.nodes */
    int num;        /* port number; 0 is a switch's management port */
    uint64_t guid;  /* PortGUID (a switch's ports share its port 0 GUID) */
    unsigned valid; /* TOPO_FPORT_V_* */
    enum topo_port_state state;
    enum topo_phys_state phys_state;
    uint32_t lid;
    int lmc;
    int width;                /* active lanes: 1, 2, 4, 8, 12 */
    int width_sup, width_ena; /* widest lanes supported; supported and enabled */
    double lane_gbps;         /* active lane speed, nominal Gb/s (2.5 SDR ... 100 NDR) */
    double lane_sup_gbps;     /* fastest lane speed supported */
    double lane_ena_gbps;     /* fastest lane speed supported and enabled */
    char speed[8];            /* "SDR", "QDR", "HDR" */
    int remote;               /* fabric port at the other end of the cable, -1 if none */
};

/* A cable between two discovered ports (derived from topo_fport.remote). */
struct topo_flink {
    int a, b; /* fabric ports, a < b */
};

/* One of this node's own IB ports that discovery started from. */
struct topo_flocal {
    char ca[TOPO_NAME];     /* the umad CA (RDMA device) name */
    int num;                /* its port number */
    int port;               /* model port index, -1 when the model has no such port */
    int fport;              /* the same port in fabric.ports, -1 when not discovered */
    char status[TOPO_TEXT]; /* "" when discovered, else why not */
};

/* A switch a route passes: entered on in_port, left on out_port as its linear forwarding
 * table says for the destination LID. */
struct topo_fhop {
    int node; /* fabric node */
    int in_port, out_port;
};

enum topo_route_status {
    TOPO_ROUTE_OK = 0,     /* the walk reached the destination */
    TOPO_ROUTE_NO_ENTRY,   /* a forwarding table has no port for the destination LID */
    TOPO_ROUTE_DOWN,       /* a forwarding table sends it out of a port with no active link */
    TOPO_ROUTE_LOOP,       /* a switch entered twice, or the hop limit reached */
    TOPO_ROUTE_NO_ANSWER,  /* a switch did not answer within the MAD timeout */
    TOPO_ROUTE_UNRESOLVED, /* source or destination is not in the discovered fabric */
};

/* The route between two ports, walked through the switches' forwarding tables. */
struct topo_froute {
    char src_spec[TOPO_NAME], dst_spec[TOPO_NAME]; /* as asked: "node01 HCA-1", "13" */
    int src, dst;                                  /* fabric ports, -1 when unresolved */
    uint32_t src_lid, dst_lid;
    enum topo_route_status status;
    char detail[TOPO_TEXT]; /* where and why the walk stopped, "" when OK */
    int first_hop, nhops;   /* range in fabric.hops */
};

/* A switch port counter read with PerfMgt MADs, twice, fabric.window_s apart. */
struct topo_fcounter {
    int fport;           /* fabric port */
    char name[40];       /* the topo_ibcounters name: "port_xmit_wait", "symbol_error" */
    bool valid0, valid1; /* answered at the first / second sample */
    uint64_t v0, v1;
};

enum {
    TOPO_NB_V_VLAN = 1u << 0, /* vlan */
    TOPO_NB_V_TTL = 1u << 1,  /* ttl */
};

/* An Ethernet neighbour as lldpd saw it on one of the node's interfaces. */
struct topo_neighbour {
    char ifname[32];          /* local interface */
    int netdev;               /* model netdev, -1 when the model lacks it */
    char protocol[16];        /* "LLDP", "CDPv2", ... */
    char chassis_id[64];      /* "3e:ce:8b:6a:41:da" */
    char chassis_id_type[16]; /* "mac", "ip", "local", ... */
    char sysname[TOPO_NAME];
    char sysdesc[TOPO_TEXT];
    char port_id[64];
    char port_id_type[16]; /* "ifname", "mac", "local", ... */
    char port_desc[TOPO_TEXT];
    char mgmt_addr[64]; /* first management address, "" if none */
    char vlans[64];     /* advertised VLAN ids: "10,20", "" if none */
    unsigned valid;     /* TOPO_NB_V_* */
    int vlan;           /* the port VLAN id (PVID), else the first advertised VLAN */
    int ttl;            /* seconds */
};

enum {
    TOPO_FAB_V_IB = 1u << 0,       /* InfiniBand discovery was tried (see ib_status) */
    TOPO_FAB_V_LLDP = 1u << 1,     /* LLDP neighbours were asked for (see lldp_status) */
    TOPO_FAB_V_COUNTERS = 1u << 2, /* switch port counters were sampled (window_s) */
};

struct topo_fabric {
    unsigned valid;        /* TOPO_FAB_V_* */
    char ib_status[256];   /* what InfiniBand discovery found, or why it could not */
    char lldp_status[256]; /* what LLDP found, or why not (lldpd not running, ...) */
    double window_s;       /* seconds between the two counter samples */
    int mad_timeout_ms;    /* per-MAD timeout used */
    int mad_retries;       /* retries per MAD */
    int nnodes, nports, nlinks, nlocals, nroutes, nhops, ncounters, nneighbours, nnotes;
    struct topo_fnode *nodes;
    struct topo_fport *ports;
    struct topo_flink *links;
    struct topo_flocal *locals;
    struct topo_froute *routes;
    struct topo_fhop *hops;
    struct topo_fcounter *counters;
    struct topo_neighbour *neighbours;
    char **notes; /* what discovery met on the way, one sentence each */
};

/* ---- the model ---- */

enum topo_source_kind {
    TOPO_SRC_LIVE = 0,
    TOPO_SRC_XML,
    TOPO_SRC_SYSFS,
    TOPO_SRC_JSON,
};

struct topo_model {
    enum topo_source_kind source;
    char source_path[512];  /* file or root directory read ("" for live) */
    char snapshot[512];     /* the fabtop JSON snapshot this was loaded from, "" if none;
                             * source/source_path then say where the snapshot came from */
    char hwloc_version[32]; /* hwloc that built the XML, where known */
    /* GPU-to-GPU links were looked for: hwloc's NVLinkBandwidth or XGMIBandwidth matrix was
     * in the topology (its NVML or RSMI component ran), or NVML answered for a GPU. false:
     * nothing is known of NVLink (an hwloc 1.x export, no NVML), not that there is none. */
    bool gpu_links_known;
    struct topo_host host;
    int npackages, nnuma, npci, ngpus, ngpulinks, nnics, nadapters, nports, nnetdevs;
    struct topo_package *packages;
    struct topo_numa *numa;
    struct topo_pci *pci;
    struct topo_gpu *gpus;
    struct topo_gpulink *gpulinks;
    struct topo_nic *nics;
    struct topo_adapter *adapters;
    struct topo_port *ports;
    struct topo_netdev *netdevs;
    int nnotes;
    char **notes;              /* what was not found and why, one sentence each */
    struct topo_fabric fabric; /* switches, links, routes, neighbours (topo_fabric.h) */
};

struct topo_model *topo_model_new(void);
void topo_model_free(struct topo_model *m);

/* Append a zeroed element and return its index (arrays grow; indices stay valid, pointers
 * do not: take the index first, `int k = topo_model_add_port(m); p = &m->ports[k];`,
 * never `&m->ports[topo_model_add_port(m)]`, whose array read may happen before the
 * realloc). */
int topo_model_add_package(struct topo_model *m);
int topo_model_add_numa(struct topo_model *m);
int topo_model_add_pci(struct topo_model *m);
int topo_model_add_gpu(struct topo_model *m);
int topo_model_add_gpulink(struct topo_model *m);
int topo_model_add_nic(struct topo_model *m);
int topo_model_add_adapter(struct topo_model *m);
int topo_model_add_port(struct topo_model *m);
int topo_model_add_netdev(struct topo_model *m);
void topo_port_add_gid(struct topo_port *p, const struct topo_gid *g);
void topo_model_note(struct topo_model *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Lookups; return an index or -1. */
int topo_model_find_pci(const struct topo_model *m, const struct topo_bdf *a);
int topo_model_find_netdev(const struct topo_model *m, const char *name);
/* A bond's links: the netdevs whose master it is (0 for any other netdev). */
int topo_model_bond_links(const struct topo_model *m, int netdev);
/* Whether a bond spreads flows over its links by a hash of their headers (802.3ad,
 * balance-xor; balance-tlb and -alb by a hash for transmit too): one connection then rides
 * one link. active-backup, broadcast and round-robin do not. */
bool topo_bond_hashes(const char *mode);
int topo_model_find_nic_by_rdma(const struct topo_model *m, const char *rdma_dev);
int topo_model_gpu_of_pci(const struct topo_model *m, int pci);
int topo_model_nic_of_pci(const struct topo_model *m, int pci);

/* Text helpers. */
void topo_bdf_str(const struct topo_bdf *a, char *buf, size_t len); /* "0000:4d:00.0" */
/* An OS number for display: "3", or "n/a" when unknown (-1). buf holds 16 bytes. */
const char *topo_os_index_str(int os_index, char *buf);
int topo_bdf_parse(const char *s, struct topo_bdf *out); /* 0 or -EINVAL */
const char *topo_port_state_str(enum topo_port_state s);
const char *topo_phys_state_str(enum topo_phys_state s);
const char *topo_link_layer_str(enum topo_link_layer l);
const char *topo_gid_type_str(enum topo_gid_type t);
/* A stable short name for a NIC: its RDMA device, else its first netdev, else its BDF. */
void topo_nic_name(const struct topo_model *m, int nic, char *buf, size_t len);
/* "mlx5_0 port 1": the port's NIC (topo_nic_name) and number. */
void topo_port_label(const struct topo_model *m, int port, char *buf, size_t len);
/* The PCI device index of the port's NIC, or -1. */
int topo_port_pci(const struct topo_model *m, int port);
/* Whether the port's NIC is an RDMA device. */
bool topo_port_is_rdma(const struct topo_model *m, int port);
/* "GPU0".. by index in the model (model order is PCI order). */
void topo_gpu_name(const struct topo_model *m, int gpu, char *buf, size_t len);

#endif
