/* fabric_draw: a fabric drawn as its topology: switches in rows by tier (the top tier first),
 * the hosts grouped under the switch they hang from, buses joining linked tiers, and in
 * every box one mark per port for the state of the link it drives. Two sources: the
 * simulated fabric (the fabric view's first mode; its marks say queue, pause and traffic)
 * and a discovered InfiniBand subnet (the topology view; its marks say link state, a
 * route's ports highlighted). */
#ifndef FABRIC_DRAW_H
#define FABRIC_DRAW_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/flow/fabric_snap.h"
#include "topology/topo_model.h"
#include "tui/ui.h"

/* One port: on node, cabled to node peer, drawn as mark in role. */
struct fabric_draw_port {
    int node, peer;
    const char *mark; /* one column: a static string */
    enum theme_role role;
};

/* What is drawn; filled by a fabric_draw_from_* and freed with fabric_draw_free. */
struct fabric_draw_graph {
    int nnodes;
    char (*names)[40];
    bool *host; /* hosts (adapters) hang under the switch their first port reaches */
    int nports;
    struct fabric_draw_port *ports;
};

/* The mark of a simulated port: "!" down, "H" held (a PFC pause or no IB credits), "X"
 * pausing its peer, a bar of eighths for a queue (of qmax), "+" for traffic over the last
 * interval (util > 0), "." idle; UTF-8 bars and a middle dot where the terminal has them. */
const char *fabric_draw_mark(const struct sim_port_snap *p, double util, uint64_t qmax, bool utf8);
/* The simulated fabric v (util: per port, 0..1, over the last interval; lit: per port, the
 * ones the lesson names, drawn selected; either may be NULL). */
void fabric_draw_from_sim(const struct fabric_snap *v, const double *util, uint64_t qmax, bool utf8,
                          const bool *lit, struct fabric_draw_graph *g);
/* A discovered subnet, its cabled ports only: "+" active, "!" down, "?" another state, "*"
 * a port the route (an index into f->routes, -1 none) leaves by. */
void fabric_draw_from_ib(const struct topo_fabric *f, int route, bool utf8,
                         struct fabric_draw_graph *g);
/* The LLDP neighbours of host (this node's name): each neighbour system a switch above the
 * host, a "+" for every interface that hears it, on both ends. */
void fabric_draw_from_lldp(const struct topo_fabric *f, const char *host,
                           struct fabric_draw_graph *g);
void fabric_draw_free(struct fabric_draw_graph *g);
/* Draw g into in. Returns the rows used. */
int fabric_draw_render(struct ui *u, const struct rect *in, const struct fabric_draw_graph *g);

#endif
