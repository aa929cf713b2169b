/* nccl_drill: the collective lane of a fault drill's rank-loss (`fabtop drill --fault
 * rank-loss`, engine/run/drill.h): a mix's NCCL collective flow between this process's GPUs
 * and those of a peer agent (the victim, a process of its own), its first size one operation
 * at a time, each with its own deadline, so the drill sees when the peer's ranks vanished;
 * then the survivors carry on by themselves (ncclCommShrink), or, with an NCCL that has none,
 * the lane is closed and opened again on a restarted agent. */
#ifndef NCCL_DRILL_H
#define NCCL_DRILL_H

#include <stdint.h>

#include "common/ft_err.h"
#include "engine/flow/mix.h"
#include "engine/peer/channel.h"

struct nccl_drill;

/* Open flow index of m (a collective) on ctl (an authenticated session to the agent, still the
 * caller's; peer_desc names it in messages): the agent's ranks join this process's. 0 or
 * -errno with the message. */
int nccl_drill_open(struct channel_conn *ctl, const char *peer_desc, const struct mix *m, int index,
                    struct nccl_drill **out, struct ft_err *err);
/* One operation on every communicator set, announced to the agent first while its ranks are
 * in: 0 (the collective's own time in *ns), -ETIMEDOUT when it did not complete within
 * timeout_ms, or another -errno (the control channel lost, an NCCL error). */
int nccl_drill_op(struct nccl_drill *l, int timeout_ms, uint64_t *ns, struct ft_err *err);
/* After a failure: the survivors (this process's ranks) shrink every communicator to
 * themselves (ncclCommShrink with NCCL_SHRINK_ABORT) within timeout_s and go on alone. 0;
 * -ENOTSUP when this NCCL has none (before 2.27); else -errno with the message. */
int nccl_drill_shrink(struct nccl_drill *l, double timeout_s, struct ft_err *err);
/* Ranks in the communicators now (all of them, this process's and the agent's). */
int nccl_drill_ranks(const struct nccl_drill *l);
/* "2.28.9", the NCCL this process loaded. */
const char *nccl_drill_version(const struct nccl_drill *l);
/* Release the lane (aborting what a vanished rank may hold); ctl stays the caller's. */
void nccl_drill_close(struct nccl_drill *l);

#endif
