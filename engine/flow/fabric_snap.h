/* fabric_snap: a simulated fabric's state as it travels inside the engine's snapshots
 * (struct runner_snapshot.fabric), filled by the transport that runs it through its
 * snapshot hook (engine/xport/xport.h), and the playback requests the runner passes on to it.
 * Plain data: readers need nothing of the transport. */
#ifndef FABRIC_SNAP_H
#define FABRIC_SNAP_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/sim/sim.h"

/* One simulated flow of the fabric, in simulated time. */
struct fabric_snap_flow {
    char name[32];   /* the mix's flow */
    int src, dst;    /* host indices (node indices too: hosts come first) */
    bool background; /* runs until the foreground flows are done */
    uint64_t target; /* operations to complete (0: background) */
    struct sim_app_stats st;
};

/* valid bits of struct fabric_snap. */
enum {
    FABRIC_SNAP_V_STATE = 1u << 0, /* sim_now_ps, events, ctl, ports, counters */
    FABRIC_SNAP_V_FLOWS = 1u << 1, /* flows (published once the simulation has run) */
};

/* A copy of the simulation's state, refreshed by its thread about every 50 ms of wall time
 * (and at the end). After the simulation ends its final state stays (finished, retired) until
 * the run is freed or runs its next simulation. */
struct fabric_snap {
    unsigned valid;
    char topology[64];
    uint64_t sim_now_ps; /* simulated time */
    uint64_t events;
    bool finished;
    bool retired; /* the simulation is over and gone: playback requests answer -ENOENT */
    int phase;    /* the run's phase it belongs to */
    enum sim_fabric fabric;
    bool pfc, ecn;
    enum sim_cc cc;
    uint64_t buffer_bytes; /* shared switch buffer (RoCE) */
    struct sim_ctl_state ctl;
    uint64_t moments[SIM_MAX_MOMENTS][2]; /* the scenario's key moments, ps (sim_ctl_moments) */
    int nmoments;
    int nflows;
    struct fabric_snap_flow *flows;
    int nnodes;
    char (*node_names)[24];
    bool *node_host;
    int nports;
    struct sim_port_snap *ports;
    int ncounters;
    struct counters_value *counters; /* per NIC ("h3") and switch port ("sw0/2") */
};

/* Playback requests (runner_playback): wall ns per simulated us (0: full speed, else 10,000 to
 * 100,000,000), pause (arg 1) or play (0), step by simulated ps while paused (0: one event),
 * skip idle stretches (1) or not (0). */
enum fabric_play {
    FABRIC_PLAY_SCALE = 0,
    FABRIC_PLAY_PAUSE,
    FABRIC_PLAY_STEP,
    FABRIC_PLAY_SKIP_IDLE,
};

/* Free the arrays (the struct itself is the caller's). */
void fabric_snap_free(struct fabric_snap *s);
/* The flow of the mix called name, or NULL. */
const struct fabric_snap_flow *fabric_snap_flow(const struct fabric_snap *s, const char *name);
/* Flow f's payload goodput in simulated time, Gb/s: bytes acknowledged to its sender over
 * the simulated time since its first post (NAN before any). */
double fabric_snap_gbps(const struct fabric_snap *s, const struct fabric_snap_flow *f);

#endif
