/* rack_node: what every rank of fabtop sweep serves while the sweep lasts: a peer agent
 * (engine/peer/agent.h) on its rail's address with the job's key, holding the transports'
 * handlers (so that other ranks can send it test traffic) and the sweep's own requests, by
 * which rank 0 (engine/rack/rack_conduct.h) runs tests from this rank:
 *   sweep.peers  {peers: ["addr:port", ...]}  the job's agents: the only places this rank
 *                                             will send test traffic to
 *   sweep.run    {test, mix}                    start the mix in the background (every flow's
 *                                             peer must be one of the job's agents)
 *   sweep.result {test, wait_ms}                wait up to wait_ms (<= 2000) for it:
 *                                             {done, status, error, bytes}
 *   sweep.fetch  {test, offset}                 its results document, in chunks (a frame
 *                                             holds 64 KiB): {data, next, last}; the last
 *                                             chunk frees it
 *   sweep.stop   {test}                         stop it early (it still reports)
 *   sweep.info   {test}                       this rank's host conditions and topology,
 *                                             fetched as a test's document is
 *   sweep.end    {status}                     the conductor's last word
 *   sweep.beat   {}                           the conductor is alive (about once a second,
 *                                             to every rank, in a test or not)
 * The session that sends these is the conductor's; when it ends without sweep.end (rank 0
 * died), rack_node_wait says so. */
#ifndef RACK_NODE_H
#define RACK_NODE_H

#include <stdint.h>

#include "common/ft_err.h"
#include "engine/peer/channel.h"

struct topo_model;
struct rack_node;

/* Raw bytes of a results document per sweep.fetch answer (escaped in JSON it stays under
 * CHANNEL_MAX_PAYLOAD). */
#define RACK_CHUNK 16384
/* How long a rank waits for a word from the conductor before it calls rank 0 hung: the
 * conductor beats every rank about once a second (RACK_BEAT_S), so this is many missed
 * beats, not a slow step. */
#define RACK_CONDUCTOR_IDLE_S 60.0
#define RACK_BEAT_S           1.0
/* Tests one node holds at once (a rank is in one test at a time; recheck and incast rounds
 * may give it a few). */
#define RACK_MAX_RUNS 64

struct rack_node_cfg {
    const char *listen;            /* numeric address to listen on; "" or NULL: all */
    uint16_t port;                 /* 0: ephemeral (rack_node_port) */
    const struct channel_key *key; /* the job's key */
    const char *key_file;          /* the same key as a file, for the runs this rank makes */
    const struct topo_model *topo; /* for pinning and the runs' results; may be NULL */
    int max_sessions;              /* 0: 16 + 4 per peer the sweep may have (256) */
};

/* Start listening. 0, or -errno with "cannot listen on ADDR:PORT: ..." in err. */
int rack_node_start(const struct rack_node_cfg *cfg, struct rack_node **out, struct ft_err *err);
uint16_t rack_node_port(const struct rack_node *n);

/* Block until the conductor's sweep.end (0, *status its status), its session ends without
 * one (-ECONNRESET: rank 0 died or was killed), or idle_s pass with no request from it
 * (-ETIMEDOUT: rank 0 hangs); idle_s <= 0: no idle limit. Before the conductor's first
 * request, idle_s counts from the call. */
int rack_node_wait(struct rack_node *n, double idle_s, int *status);

/* Stop every run, the agent and free. */
void rack_node_stop(struct rack_node *n);

#endif
