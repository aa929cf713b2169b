/* dcb: what a NIC does with a RoCE v2 packet's DSCP, read through DCB netlink (dcbnl,
 * IEEE 802.1Qaz): the DSCP -> priority map (APP table entries with the DSCP selector),
 * whether the port trusts DSCP, and which priorities have PFC enabled. */
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
};

/* Query netdev's DCB state. 0 on an answer (even "not offered"), -errno on netlink failure. */
int verbs_dcb_query(const char *netdev, struct verbs_dcb_info *out, struct ft_err *err);

/* The priority a DSCP maps to: the APP table when trusted, else -1 (PCP/default: the
 * packet's priority then comes from the VLAN PCP, or 0 without a VLAN). */
int verbs_dcb_priority_of(const struct verbs_dcb_info *d, int dscp);

/* {"available":..., "trust":"dscp"|"pcp", "dscp":D, "priority":P, "pfc_enabled":bool} */
cJSON *verbs_dcb_json(const struct verbs_dcb_info *d, int dscp);

#endif
