/* xport_sim: the "sim" transport (teaching mode). A mix's sim flows share one simulated fabric
 * (engine/sim/sim.h) per phase; its messages complete into the flows' histograms and counters
 * exactly as a real transport's do. What the explorer's fabric view needs while it runs: the
 * ports' state, the counters with their real names, and playback control. Safe to call from
 * any thread; -ENOENT when the run has no simulation going (yet, or any more). */
#ifndef XPORT_SIM_H
#define XPORT_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/counters/counters.h"
#include "engine/sim/sim.h"

struct runner;

/* One sim flow of the simulation, in simulated time. */
struct xport_sim_flow {
    char name[32];   /* the mix's flow */
    int src, dst;    /* host indices (node indices too: hosts come first) */
    bool background; /* runs until the foreground flows are done */
    uint64_t target; /* operations to complete (0: background) */
    struct sim_app_stats st;
};

/* A copy of the running simulation's state, refreshed by its thread about every 50 ms of wall
 * time (and at the end). After the simulation ends its final state stays readable (finished,
 * retired) until the runner is freed or runs its next simulation. */
struct xport_sim_view {
    char topology[64];
    uint64_t sim_now_ps; /* simulated time */
    uint64_t events;
    bool finished;
    bool retired; /* the simulation is over and gone: playback calls answer -ENOENT */
    int phase;    /* the runner's phase it belongs to */
    enum sim_fabric fabric;
    bool pfc, ecn;
    enum sim_cc cc;
    uint64_t buffer_bytes; /* shared switch buffer (RoCE) */
    struct sim_ctl_state ctl;
    int nflows;
    struct xport_sim_flow *flows;
    int nnodes;
    char (*node_names)[24];
    bool *node_host;
    int nports;
    struct sim_port_snap *ports;
    int ncounters;
    struct counters_value *counters; /* per NIC ("h3") and switch port ("sw0/2") */
};

int xport_sim_view(const struct runner *r, struct xport_sim_view *out);
void xport_sim_view_free(struct xport_sim_view *v);

/* Playback (sim_ctl_*): wall ns per simulated us (0: full speed, else 10,000-100,000,000),
 * pause, step by simulated ps while paused (0: one event), skip idle stretches. */
int xport_sim_set_scale(const struct runner *r, uint64_t wall_ns_per_sim_us);
int xport_sim_pause(const struct runner *r, bool paused);
int xport_sim_step(const struct runner *r, uint64_t sim_ps);
int xport_sim_skip_idle(const struct runner *r, bool on);
/* Playback for simulations started from now on in this process whose mix gives no
 * params.playback of its own (each field the mix sets wins); the explorer sets it, so a run
 * started there plays as its fabric view says. Starts as full speed, no skipping, running. */
int xport_sim_set_default_playback(const struct sim_ctl_state *c);
void xport_sim_default_playback(struct sim_ctl_state *out);
/* Forget the final state of r's simulations (runner_free calls it). */
void xport_sim_release(const struct runner *r);

extern const struct xport_ops xport_sim;

#endif
