/* xport_verbs: the RDMA verbs transport (libibverbs, RC queue pairs).
 *
 * Client side: one worker per queue pair (two for a bidirectional stream). Latency:
 * WRITE ping-pong measured as ib_write_lat does (each side polls the last byte of its
 * buffer; half the round trip), post-to-completion of one WRITE, SEND/RECV ping-pong,
 * RDMA READ (round trip), and WRITE-with-immediate ping-pong (needed for GPU memory, where
 * polling the last byte cannot work). Bandwidth: up to `depth` outstanding work requests
 * per QP, completions signalled every few requests. Set-up (device, PD/CQ/QP, memory
 * registration, connection) is timed apart from transfer.
 *
 * A ring all-reduce's message pattern (op collective, engine/flow/ring.h): 2 (N - 1) steps per
 * all-reduce, each a SEND of ceil(S / N) bytes to the peer while the peer's SEND of as many is
 * received, receives kept posted ahead on both sides; one sample per all-reduce.
 *
 * Agent side ("verbs.open"): opens the same number of QPs on its RDMA port, exchanges QP
 * number, PSN, the GID itself, LID, rkey and buffer address over the authenticated control
 * channel, and answers: it echoes ping-pongs, keeps receives posted, or sends (rx).
 * Return routability (engine/peer/rrcheck.h): the client chooses the GID/LID the agent's QPs
 * connect to, and a multi-rail RoCE data address, a link-local GID or an InfiniBand LID
 * need not match the control connection's address, so the agent checks instead that the
 * client receives there: "verbs.nonce" makes it RDMA WRITE a random nonce over each QP into
 * the client's nonce buffer, and "verbs.echo" must bring them back within RRCHECK_ECHO_MS, or the
 * QPs are destroyed. No worker (no test data) starts before that. The QPs could only answer
 * requests before it: an RC responder drops packets whose source does not match the QP's
 * address (IBTA 9.6.1.5), so only whoever is at that address can ask anything of them.
 *
 * Here: the transport table. The rest, sharing xport_verbs_int.h: verbs_params.c (the flow's
 * settings), verbs_client.c (the client side), verbs_agent.c (the verbs.* requests); the
 * resources and data path in verbs_res.c, librdmacm in verbs_cm.c; DCB in topology/topo_dcb.c. */
#define _GNU_SOURCE
#include "engine/xport/verbs/xport_verbs_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/counters/counters_qp.h"
#include "topology/topo_dcb.h"
#include "engine/peer/rrcheck.h"
#include "engine/xport/verbs/verbs_cm.h"
#include "engine/xport/verbs/verbs_res.h"
#include "topology/topo_model.h"

static int verbs_available(char *why, size_t len)
{
    int n = 0;
    struct ibv_device **l = ibv_get_device_list(&n);
    int e = errno;
    if (l)
        ibv_free_device_list(l);
    if (n > 0)
        return 0;
    snprintf(why, len, "no RDMA device (%s): load an RDMA driver, or rdma_rxe for Soft-RoCE",
             e ? strerror(e) : "none listed");
    return -ENODEV;
}

/* The port verbs_res_open will choose for this flow: open it the same way and close it again
 * (librdmacm flows get theirs from the route at connect time: left to the caller). */
static int verbs_local_port(const struct mix_flow *f, char *rdma, size_t rlen, char *netdev,
                            size_t nlen, struct ft_err *err)
{
    struct verbs_params c;
    int rc = verbs_params_parse(f, &c, err);
    if (rc < 0 || c.rdmacm)
        return rc;
    struct verbs_res r;
    rc = verbs_res_open(&r, &c.want, err);
    if (rc < 0)
        return rc;
    snprintf(rdma, rlen, "%s:%d", r.dev, r.port);
    snprintf(netdev, nlen, "%s", r.netdev);
    verbs_res_close(&r);
    return 0;
}

const struct xport_ops xport_verbs = {
    .name = "verbs",
    .ops = (1u << MIX_OP_PINGPONG) | (1u << MIX_OP_STREAM) | (1u << MIX_OP_KV) |
           (1u << MIX_OP_COLLECTIVE),
    .needs_peer = true,
    .available = verbs_available,
    .param_keys = verbs_params_keys,
    .validate = verbs_params_validate,
    .setup = verbs_client_setup,
    .start = verbs_client_start,
    .stop = verbs_client_stop,
    .teardown = verbs_client_teardown,
    .local_port = verbs_local_port,
    .conditions = verbs_client_conditions,
    .handlers = verbs_agent_handlers,
};
