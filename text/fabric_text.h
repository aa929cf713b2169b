/* fabric_text: the model's fabric section as plain text, for `fabtop topo --fabric` and
 * the explorer's Fabric entries: switches and their cabled ports, CAs with hop counts,
 * routes hop by hop, switch port counters over the window, LLDP neighbours, notes.
 * Pure functions of the model (no curses), appended to a strbuf. */
#ifndef FABRIC_TEXT_H
#define FABRIC_TEXT_H

#include "common/strbuf.h"
#include "topology/topo_model.h"

/* Everything, as one block headed "Fabric". */
void fabric_text(struct strbuf *sb, const struct topo_model *m);
/* One line per local port: "ibsim0 port 1 (LID 2) -> leaf-1 port 1, 4X QDR, 40 Gb/s". */
void fabric_text_locals(struct strbuf *sb, const struct topo_model *m, const char *indent);
/* One fabric node: what it is, then its cabled ports (with counters where sampled). */
void fabric_text_node(struct strbuf *sb, const struct topo_model *m, int node, const char *indent);
/* One route: endpoints, status, then a line per switch with in and out ports. */
void fabric_text_route(struct strbuf *sb, const struct topo_model *m, int route,
                       const char *indent);
/* One LLDP neighbour as a line. */
void fabric_text_neighbour(struct strbuf *sb, const struct topo_model *m, int nb,
                           const char *indent);
/* A port's sampled counters in one line ("" when none): changes over the window, data
 * rates in Gb/s (10^9 bit/s). */
void fabric_text_counters(struct strbuf *sb, const struct topo_model *m, int fport);

#endif
