/* run_path: what a run learns of its path from the foreground's peer agent, on a control
 * session of its own (engine/xport/tcp/tcp_path.h): the TTL a datagram from the peer arrives
 * with, the peer's site label, and the peer's counters over each phase, for the results'
 * "path" object (engine/results/results_path.h). A run goes on without any of it. */
#ifndef RUN_PATH_H
#define RUN_PATH_H

#include <cjson/cJSON.h>

#include "engine/peer/channel.h"
#include "engine/results/results_path.h"

struct run_path {
    struct channel_conn *ctl;
    char netdev[64], site_peer[64];
    int ttl, ttl_initial;
    bool counting;
    cJSON *peer_ctrs[2];
    char note[256]; /* why something is missing, for the run's events */
};

/* Connect to peer (from local, NULL: any) and ask for the TTL probe and the counters.
 * flows: the sessions the run's own flows hold there at once; when the agent's session
 * limit (its hello's caps.max_sessions) leaves no room beside them, the path's session is
 * given up (said in note) rather than take a flow's. */
void run_path_open(struct run_path *p, const char *peer, const char *local,
                   const struct channel_key *key, int timeout_ms, int flows);
/* At a phase's start (the peer's counters marked) and end (their deltas kept). */
void run_path_phase(struct run_path *p, int phi, bool start);
/* The evidence for results_path_fill (site_local: --site, NULL: none). */
void run_path_input(const struct run_path *p, const char *site_local, struct results_path_in *in);
void run_path_close(struct run_path *p);

#endif
