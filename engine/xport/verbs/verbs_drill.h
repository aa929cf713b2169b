/* verbs_drill: the verbs lane of a fault drill (`fabtop drill`, engine/run/drill.h): a mix's
 * verbs ping-pong flow on one queue pair against a peer agent, one operation at a time with
 * its own deadline, so that a drill sees when the queue pair fails (a completion error:
 * retry exceeded once the peer's queue pair is gone) and can open a new one (new queue pairs
 * through the control channel, as a run's set-up makes them). */
#ifndef VERBS_DRILL_H
#define VERBS_DRILL_H

#include <stdint.h>

#include "common/ft_err.h"
#include "engine/flow/mix.h"
#include "engine/peer/channel.h"

struct verbs_drill;

/* What a lane's set-up got to, also when it failed (`fabtop doctor`'s queue-pair walk). */
struct verbs_drill_setup {
    char qp_state[8]; /* the furthest state of the local queue pair: "", INIT, RTR, RTS */
    char dev[64];     /* the RDMA device opened, "" none */
    int port;         /* its port, 0 none */
    int gid_index;    /* the local GID index used, -1 none */
    char netdev[32];  /* the netdev of that GID, "" unknown */
    int path_mtu;     /* bytes, the queue pair's path MTU; 0 before RTR */
};

/* Open flow index of m (a verbs ping-pong) on ctl (an authenticated session to the agent,
 * still the caller's; peer_desc names it in messages): its resources, the queue pair and the
 * agent's side, as in a run. 0 or -errno with the message; *st (NULL: not wanted) says what
 * the set-up got to either way. */
int verbs_drill_open(struct channel_conn *ctl, const char *peer_desc, const struct mix *m,
                     int index, struct verbs_drill **out, struct verbs_drill_setup *st,
                     struct ft_err *err);
/* The bound within which the queue pair reports a vanished peer (s): (retry_cnt + 1) x 4 x
 * T_o and the liveness probe's wait, as the transport computes it; *timeout_s: a request's
 * deadline, the mix's fail_bound_s or that bound with its margin, whichever is longer, so
 * that the completion's status is what detects. */
double verbs_drill_bound_s(const struct verbs_drill *l, double *timeout_s);
/* One ping-pong of size bytes within timeout_ms: 0 (its round trip in *ns), -ETIMEDOUT
 * (abandoned at the deadline), -EIO (the queue pair failed; the message names the completion's
 * status). After a failure the lane must be closed. */
int verbs_drill_op(struct verbs_drill *l, uint64_t size, int timeout_ms, uint64_t *ns,
                   struct ft_err *err);
/* Release the lane (its queue pairs and memory); ctl stays the caller's. */
void verbs_drill_close(struct verbs_drill *l);

#endif
