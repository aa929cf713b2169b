/* fabric_draw: a simulated fabric drawn as its topology: switches in rows by tier (the top
 * tier first), the hosts grouped under the switch they hang from, buses joining the tiers,
 * and in every box one mark per port for the state of the link it drives: down, held by
 * the peer (a PFC pause or no IB credits), pausing the peer, its egress queue as a bar
 * against the fabric's deepest watermark, carrying traffic, or idle. The fabric view's
 * first mode (the port table is the second). */
#ifndef FABRIC_DRAW_H
#define FABRIC_DRAW_H

#include <stdint.h>

#include "engine/flow/fabric_snap.h"
#include "tui/ui.h"

/* The mark of port p: "!" down, "H" held, "X" pausing its peer, a bar of eighths for a queue
 * (of qmax), "+" for traffic over the last interval (util > 0), "." idle; UTF-8 bars and a
 * middle dot where the terminal has them. */
const char *fabric_draw_mark(const struct sim_port_snap *p, double util, uint64_t qmax, bool utf8);
/* Draw v into in (util: per port, 0..1, over the last interval). Returns the rows used. */
int fabric_draw_topology(struct ui *u, const struct rect *in, const struct fabric_snap *v,
                         const double *util, uint64_t qmax);

#endif
