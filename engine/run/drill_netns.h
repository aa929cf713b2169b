/* drill_netns: the blackhole of `fabtop drill --fault blackhole --netns NAME`: an nftables
 * table in a network namespace the drill was told it owns, dropping the test traffic to and
 * from the peer (TCP other than the agent's control port, so the drill keeps its control
 * sessions, and RoCE v2's UDP port 4791) until it is lifted. The rules are set and removed by
 * a guardian process that entered the namespace (setns) and runs nft there: it lifts them
 * when told, when this process ends (its pipe closes: Ctrl-C, a crash) or at its own
 * deadline, whichever comes first, so no rule outlives the drill. Never this process's own
 * namespace's settings, never PID 1's namespace. */
#ifndef DRILL_NETNS_H
#define DRILL_NETNS_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/ft_err.h"

/* The table's name in the namespace (one drill per namespace at a time). */
#define DRILL_NETNS_TABLE "fabtop_drill"

struct drill_netns {
    char path[300];    /* the namespace: /run/netns/NAME, or the path given */
    char nft[256];     /* the nft program found */
    char peer[64];     /* numeric address of the peer agent */
    bool v6;           /* peer is IPv6 */
    unsigned ctl_port; /* the agent's control port: not dropped */
    pid_t guard;       /* the guardian while a hole is on, else 0 */
    int ctl;           /* its pipe (closing it lifts the hole), else -1 */
};

/* Check the namespace (name or path) and find nft; peer_hp is the agent's HOST[:PORT]
 * (default port port). 0, or -errno with one line: no such namespace (-ENOENT), the host's
 * namespace (-EPERM), no nft (-ELIBACC, "install nftables"), a peer that does not resolve. */
int drill_netns_init(struct drill_netns *h, const char *ns, const char *peer_hp,
                     unsigned default_port, struct ft_err *err);
/* Drop the traffic for at most max_s seconds (the guardian's own deadline). 0, or -errno with
 * nft's own line (no permission: -EPERM). */
int drill_netns_on(struct drill_netns *h, double max_s, struct ft_err *err);
/* Lift it (waits for the guardian; a no-op when none is on). */
void drill_netns_off(struct drill_netns *h);

#endif
