/* dcb: what a NIC does with a RoCE v2 packet's DSCP, read through DCB netlink (dcbnl,
 * IEEE 802.1Qaz): the DSCP -> priority map (APP table entries with the DSCP selector),
 * whether the port trusts DSCP, and which priorities have PFC enabled; and, where the driver
 * shows them in sysfs, its RoCE ECN (DCQCN) switches per priority. */
#ifndef VERBS_DCB_H
#define VERBS_DCB_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"

struct verbs_dcb_info {
    bool available;    /* the netdev answered DCB_CMD_IEEE_GET */
    char why[160];     /* when not: "veth0 does not offer DCB (Operation not supported)" */
    bool trust_dscp;   /* DSCP APP entries exist: the port classifies by DSCP */
    int dscp_prio[64]; /* priority per DSCP from the APP table, -1 if not mapped */
    unsigned pfc_en;   /* bit p set: PFC enabled on priority p */
    bool pfc_known;
    /* RoCE ECN per priority (DCQCN), where the driver shows it (verbs_dcb_ecn_read): the
     * notification point (as a receiver the NIC answers ECN-marked packets with CNPs) and the
     * reaction point (as a sender it slows down on CNPs); 1 on, 0 off, -1 unknown. */
    bool ecn_known;
    int ecn_np[8], ecn_rp[8];
};

/* Query netdev's DCB state. 0 on an answer (even "not offered"), -errno on netlink failure. */
int verbs_dcb_query(const char *netdev, struct verbs_dcb_info *out, struct ft_err *err);

/* Read netdev's RoCE ECN switches under root ("" live, or a captured tree):
 * sys/class/net/NETDEV/ecn/roce_np/enable/P and .../roce_rp/enable/P, P 0-7, as NVIDIA's
 * mlx5 driver (MLNX_OFED) shows them ("echo 1 > /sys/class/net/<if>/ecn/roce_np/enable/3",
 * its DCQCN documentation). 0 when read (ecn_known), -ENOENT when the driver shows none. */
int verbs_dcb_ecn_read(const char *root, const char *netdev, struct verbs_dcb_info *d);

/* The priority a DSCP maps to: the APP table when trusted, else -1 (PCP/default: the
 * packet's priority then comes from the VLAN PCP, or 0 without a VLAN). */
int verbs_dcb_priority_of(const struct verbs_dcb_info *d, int dscp);

/* {"available":..., "trust":"dscp"|"pcp", "dscp":D, "priority":P, "pfc_enabled":bool,
 *  "ecn": {"priority":P, "np_enabled":bool, "rp_enabled":bool} where known} */
cJSON *verbs_dcb_json(const struct verbs_dcb_info *d, int dscp);

#endif
