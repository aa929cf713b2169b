/* topo_fablint: the lint rules about what lies beyond the node's ports: a port stuck in
 * Polling on the wrong link layer, host and switch ports that disagree on width or
 * speed, links trained below what both ends support, cabling that differs from a plan,
 * routes that do not arrive, and switch port counters that rose during the window.
 * topo_lint_run runs them from its rule table; they read the model (and its fabric
 * section) only. */
#ifndef TOPO_FABLINT_H
#define TOPO_FABLINT_H

#include "topology/topo_lint.h"
#include "topology/topo_model.h"

/* The fabric checks, each a row of lint's rule table (topo_lint.h, topo_lint_check_fn):
 * they append their findings, unsorted. */
void topo_fablint_ll_polling(const struct topo_model *m, const struct topo_lint_opts *o,
                             struct topo_findings *out); /* port-ll-mismatch */
void topo_fablint_host_vs_switch(const struct topo_model *m, const struct topo_lint_opts *o,
                                 struct topo_findings *out); /* fabric-link-mismatch */
void topo_fablint_degraded(const struct topo_model *m, const struct topo_lint_opts *o,
                           struct topo_findings *out); /* fabric-link-degraded */
void topo_fablint_cabling(const struct topo_model *m, const struct topo_lint_opts *o,
                          struct topo_findings *out); /* cabling-plan (o->cabling) */
void topo_fablint_routes(const struct topo_model *m, const struct topo_lint_opts *o,
                         struct topo_findings *out); /* route-broken */
void topo_fablint_switch_counters(const struct topo_model *m, const struct topo_lint_opts *o,
                                  struct topo_findings *out); /* switch-counter-*, -xmit-wait */

#endif
