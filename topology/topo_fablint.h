/* topo_fablint: the lint rules about what lies beyond the node's ports: a port stuck in
 * Polling on the wrong link layer, host and switch ports that disagree on width or
 * speed, links trained below what both ends support, cabling that differs from a plan,
 * routes that do not arrive, and switch port counters that rose during the window.
 * topo_lint_run calls it; it reads the model (and its fabric section) only. */
#ifndef TOPO_FABLINT_H
#define TOPO_FABLINT_H

#include "topology/topo_lint.h"
#include "topology/topo_model.h"

/* Append the fabric findings (unsorted; topo_lint_run sorts). */
void topo_fablint_run(const struct topo_model *m, const struct topo_lint_opts *o,
                      struct topo_findings *out);

#endif
