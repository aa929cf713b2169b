/* drill_netns: the faults a drill sets inside a network namespace it was told it owns
 * (`--netns NAME`): the blackhole (an nftables table dropping the test traffic to and from the
 * peer: TCP other than the agent's control port, so the drill keeps its control sessions, and
 * RoCE v2's UDP port 4791) and link-down (the data path's netdev set down, then up again;
 * never the interface of a default route or of the control connection). Set and undone by a
 * guardian process that entered the namespace (setns): it undoes the fault when told, when
 * this process ends (its pipe closes: Ctrl-C, a crash) or at its own deadline, whichever comes
 * first, so no fault outlives the drill. Never this process's own namespace's settings, never
 * PID 1's namespace. */
#ifndef DRILL_NETNS_H
#define DRILL_NETNS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/ft_err.h"

/* The table's name in the namespace (one drill per namespace at a time). */
#define DRILL_NETNS_TABLE "fabtop_drill"

enum drill_netns_kind { DRILL_NETNS_BLACKHOLE, DRILL_NETNS_LINK_DOWN };

struct drill_netns {
    enum drill_netns_kind kind;
    char path[300];    /* the namespace: /run/netns/NAME, or the path given */
    char nft[256];     /* blackhole: the nft program found */
    char peer[64];     /* numeric address of the peer's data path (the agent's, or --data-peer) */
    char ctl_peer[64]; /* numeric address of the control connection's peer */
    bool v6;           /* peer is IPv6 */
    unsigned ctl_port; /* the agent's control port: not dropped */
    char dev[16];      /* link-down: the netdev (given, or the one routing to peer) */
    bool owned;        /* link-down of --device DEV --owned in this process's own namespace */
    pid_t guard;       /* the guardian while a fault is on, else 0 */
    uint64_t set_ns;   /* link-down: when the guardian set it (CLOCK_MONOTONIC ns), else 0 */
    int ctl;           /* its pipe (closing it undoes the fault), else -1 */
};

/* Check the namespace (name or path) and what the fault needs there; ctl_hp is the agent's
 * HOST[:PORT] (default port port), data_host the agent's address on a data path of its own
 * (NULL: the same host), dev the netdev to take down (link-down; NULL: the one that routes to
 * the data path's peer). owned (link-down, ns NULL, dev given): the caller owns dev in this
 * process's own namespace (a VM's data NIC), which may be the host's; the netdev's refusals
 * still hold. 0, or -errno with one line: no such namespace (-ENOENT), the host's
 * namespace, a namespace with a default route (blackhole), the interface of a default route or
 * of the control connection (link-down) (-EPERM), no such netdev or no route to the peer there
 * (-ENODEV), an IPv6 data path for link-down (-EAFNOSUPPORT), no nft (-ELIBACC, "install
 * nftables"), a peer that does not resolve. */
int drill_netns_init(struct drill_netns *h, enum drill_netns_kind kind, const char *ns, bool owned,
                     const char *ctl_hp, const char *data_host, const char *dev,
                     unsigned default_port, struct ft_err *err);
/* Set the fault for at most max_s seconds (the guardian's own deadline). 0, or -errno with
 * nft's own line or the netdev's error (no permission: -EPERM). A link-down's h->set_ns: the
 * CLOCK_MONOTONIC time just before the netdev was set down. */
int drill_netns_on(struct drill_netns *h, double max_s, struct ft_err *err);
/* Undo it (waits for the guardian; a no-op when none is on). */
void drill_netns_off(struct drill_netns *h);

#endif
