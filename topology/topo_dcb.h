/* topo_dcb: what a NIC does with a RoCE v2 packet's DSCP, read through DCB netlink (dcbnl,
 * IEEE 802.1Qaz): the DSCP -> priority map (APP table entries with the DSCP selector),
 * whether the port trusts DSCP, which priorities have PFC enabled, the ETS traffic class of
 * each priority with its share; and, where the driver shows them in sysfs, its RoCE ECN
 * (DCQCN) switches per priority. The verbs transport records it with each flow; the doctor
 * compares both ends'. */
#ifndef TOPO_DCB_H
#define TOPO_DCB_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"

/* ETS's selection algorithm (IEEE_8021QAZ_TSA_ETS in linux/dcbnl.h). */
#define TOPO_DCB_TSA_ETS 2

struct topo_dcb_info {
    bool available;    /* the netdev answered DCB_CMD_IEEE_GET */
    char why[160];     /* when not: "veth0 does not offer DCB (Operation not supported)" */
    bool trust_dscp;   /* DSCP APP entries exist: the port classifies by DSCP */
    int dscp_prio[64]; /* priority per DSCP from the APP table, -1 if not mapped */
    unsigned pfc_en;   /* bit p set: PFC enabled on priority p */
    bool pfc_known;
    /* ETS (struct ieee_ets): the traffic class of each priority, each class's share of the
     * transmit bandwidth (%) and its selection algorithm (IEEE_8021QAZ_TSA_*: 0 strict,
     * 1 credit-based shaper, 2 ETS, 255 vendor). */
    bool ets_known;
    int prio_tc[8], tc_tx_bw[8], tc_tsa[8];
    /* RoCE ECN per priority (DCQCN), where the driver shows it (topo_dcb_ecn_read): the
     * notification point (as a receiver the NIC answers ECN-marked packets with CNPs) and the
     * reaction point (as a sender it slows down on CNPs); 1 on, 0 off, -1 unknown. */
    bool ecn_known;
    int ecn_np[8], ecn_rp[8];
};

/* Nothing known: no DCB, no DSCP mapped, ECN unknown. */
void topo_dcb_init(struct topo_dcb_info *d);
/* Query netdev's DCB state. 0 on an answer (even "not offered"), -errno on netlink failure. */
int topo_dcb_query(const char *netdev, struct topo_dcb_info *out, struct ft_err *err);
/* The answer to DCB_CMD_IEEE_GET for netdev (n bytes of netlink messages) into out (DCB part
 * only: the ECN switches are kept): 0 when it held DCB or said why not, -EPROTO otherwise. */
int topo_dcb_parse(const void *buf, size_t n, const char *netdev, struct topo_dcb_info *out);

/* Read netdev's RoCE ECN switches under root ("" live, or a captured tree):
 * sys/class/net/NETDEV/ecn/roce_np/enable/P and .../roce_rp/enable/P, P 0-7, as NVIDIA's
 * mlx5 driver (MLNX_OFED) shows them ("echo 1 > /sys/class/net/<if>/ecn/roce_np/enable/3",
 * its DCQCN documentation). 0 when read (ecn_known), -ENOENT when the driver shows none. */
int topo_dcb_ecn_read(const char *root, const char *netdev, struct topo_dcb_info *d);

/* The priority a DSCP maps to: the APP table when trusted, else -1 (PCP/default: the
 * packet's priority then comes from the VLAN PCP, or 0 without a VLAN). */
int topo_dcb_priority_of(const struct topo_dcb_info *d, int dscp);

/* {"available":..., "trust":"dscp"|"pcp", "dscp":D, "priority":P, "pfc_enabled":bool,
 *  "ecn": {"priority":P, "np_enabled":bool, "rp_enabled":bool} where known} */
cJSON *topo_dcb_json(const struct topo_dcb_info *d, int dscp);
/* The whole state (every mapped DSCP, PFC, ETS, ECN) for another process to read back with
 * topo_dcb_state_from_json (`fabtop doctor`'s facts travel so). */
cJSON *topo_dcb_state_json(const struct topo_dcb_info *d);
/* 0, or -EPROTO when j is not such an object (d is then as topo_dcb_init leaves it). */
int topo_dcb_state_from_json(const cJSON *j, struct topo_dcb_info *d);

#endif
