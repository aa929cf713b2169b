/* xport: the transports (TCP, RDMA verbs, NCCL, the fabric simulator) behind one table of
 * functions, listed in one registry. The runner calls the client side; the peer agent
 * calls the request handlers each transport registers. */
#ifndef XPORT_H
#define XPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/flow/fabric_snap.h"
#include "engine/flow/flow.h"

struct agent_handler;

struct xport_ops {
    const char *name; /* "tcp" */
    unsigned ops;     /* supported operations: bit (1 << MIX_OP_*) */
    bool needs_peer;  /* uses a peer agent (false: local only, e.g. NCCL in one process) */
    /* Can it run here? 0, or -errno with the reason in why (library or device missing). */
    int (*available)(char *why, size_t len);
    /* Optional: the same for one flow, whose spec may name the library to load
     * (mix_flow.library); runner_validate prefers it. NULL: available(). */
    int (*available_flow)(const struct mix_flow *f, char *why, size_t len);
    /* Optional: how many devices of its own it can use here (NCCL: the CUDA devices), 0 when
     * it is not available. NULL: it has none of its own. */
    int (*devices)(void);
    /* Optional: a stable identity of device index (NCCL: the GPU's PCI bus id,
     * "0000:18:00.0"), so that two processes can tell whether they hold the same one: 0, or
     * -errno (-ENODEV: no such device, -ENOTSUP: not available here). */
    int (*device_id)(int index, char *buf, size_t len);
    /* The keys a flow's "params" may hold for operation op (NULL-terminated): the mix reader
     * refuses any other, naming the nearest of these. NULL: params are not checked. */
    const char *const *(*param_keys)(enum mix_op op);
    /* Transport-specific checks of a flow (sizes, params) before anything starts. */
    int (*validate)(const struct mix_flow *f, struct ft_err *err);
    /* Client side, in order: make connections / register memory (timed as setup), start the
     * workers, and at the end stop them and release everything (timed as teardown). */
    int (*setup)(struct flow_rt *f, struct ft_err *err);
    int (*start)(struct flow_rt *f, struct ft_err *err);
    void (*stop)(struct flow_rt *f);
    void (*teardown)(struct flow_rt *f);
    /* Read the kernel's counters for the flow (TCP_INFO...) into out; called by the sampler
     * thread at 10 Hz and by the flow's driver at window edges. May be NULL. */
    void (*sample)(struct flow_rt *f, struct flow_wire *out);
    /* The local RDMA port ("mlx5_0:1") and netdev the flow will use, chosen as setup will
     * choose them, so that the port's counters are attributed before the flow starts (for
     * flows whose mix names no RDMA port). Both left empty: by the route to the peer, as for
     * TCP. 0, or -errno with the reason. May be NULL. */
    int (*local_port)(const struct mix_flow *f, char *rdma, size_t rlen, char *netdev, size_t nlen,
                      struct ft_err *err);
    /* Test conditions for the results (socket options, congestion control, MTU...); called
     * once, right after setup. */
    void (*conditions)(const struct flow_rt *f, cJSON *out);
    /* The front door for a transport's own state (a simulated fabric); each may be NULL. run
     * is the host the runner gave the run's flows (flow_rt.host), the same for all of them.
     * snapshot: the state for the run's next snapshot into *out (fabric_snap_free frees it):
     * 0, or -ENOENT when it has none for run (yet, or any more). control: a playback request
     * (runner_playback): 0, -ENOENT with nothing running for run, -EINVAL for a bad value.
     * release: forget what it kept for run (runner_free). */
    int (*snapshot)(const struct flow_host *run, struct fabric_snap *out);
    int (*control)(const struct flow_host *run, enum fabric_play what, uint64_t arg);
    void (*release)(const struct flow_host *run);
    /* Agent side: request handlers (NULL-terminated). */
    const struct agent_handler *const *handlers;
};

/* The registry. */
const struct xport_ops *xport_find(const char *name);
/* The params of every flow of m hold only keys its transport reads for the flow's operation
 * (xport_ops.param_keys); flows of an unknown transport are left to runner_validate. 0, or
 * -EINVAL with "SOURCE: flows[N].params: unknown key 'K' (did you mean ...)". */
int xport_check_params(const struct mix *m, struct ft_err *err);
/* The local RDMA port and netdev flow f will use, through its transport's local_port (for
 * counters_set_for_mix): 0 with them filled, 1 when the transport has no such hook (or is
 * unknown), or -errno with the reason. */
int xport_local_port(const struct mix_flow *f, char *rdma, size_t rlen, char *netdev, size_t nlen,
                     struct ft_err *err);
/* All transports, NULL-terminated. */
const struct xport_ops *const *xport_all(void);
/* All agent handlers of all transports (NULL-terminated), for `fabtop serve`. */
const struct agent_handler *const *xport_agent_handlers(int *n);

extern const struct xport_ops xport_tcp;
extern const struct xport_ops xport_verbs;
extern const struct xport_ops xport_nccl;
extern const struct xport_ops xport_sim;

#endif
