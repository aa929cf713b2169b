/* xport_sim: the "sim" transport (teaching mode). A mix's sim flows share one simulated fabric
 * (engine/sim/sim.h) per phase; its messages complete into the flows' histograms and counters
 * exactly as a real transport's do. What the explorer's fabric view needs while it runs comes
 * through the transport table's front door (engine/xport/xport.h): the fabric's state into the
 * run's snapshots (struct fabric_snap, engine/flow/fabric_snap.h) and playback requests. */
#ifndef XPORT_SIM_H
#define XPORT_SIM_H

#include "engine/xport/xport.h"

extern const struct xport_ops xport_sim;

#endif
