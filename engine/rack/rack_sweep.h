/* rack_sweep: a whole rack sweep from rank 0: the patterns' rounds planned
 * (engine/sweep/sweep_plan.h), run over the job's control channels (rack_conduct.h), the
 * pairs' figures gathered into the document's matrix, judged (engine/sweep/sweep_verdict.h),
 * each suspect re-tested against two ranks that were fine before it is named, and the
 * verdicts and summary written into the document (engine/results/results_sweep.h). */
#ifndef RACK_SWEEP_H
#define RACK_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "common/ft_err.h"
#include "engine/rack/rack_conduct.h"
#include "engine/results/results_sweep.h"
#include "engine/sweep/sweep_plan.h"
#include "engine/sweep/sweep_verdict.h"

struct rack_sweep_opts {
    struct rack_conduct_opts conduct; /* the members, the key, the step timings */
    const struct sweep_rank *ranks;   /* conduct.n of them: names, rails, groups, ceilings */
    const char *const *group_names;   /* sweep_rank.group indexes these (NULL: unknown) */
    bool pairs, incast, bisection, ring, allreduce, alltoall;
    uint64_t seed;   /* bisection splits */
    bool no_recheck; /* name suspects without the second pass (tests) */
};

/* Run the sweep; doc holds the header and conduct.n ranks on entry and gets the tests,
 * pairs, verdicts, events, status and summary. 0 when every test ran (some may have failed:
 * see doc->status), -ECANCELED when interrupted or stopped after a failure, -EINVAL for a
 * plan that cannot be made (with the reason in err). The document is complete in every
 * case, so that what was measured is saved. */
int rack_sweep_run(const struct rack_sweep_opts *o, struct results_sweep *doc, struct ft_err *err);

/* The transports whose pair tests make a matrix each, in the document's order. */
#define RACK_SWEEP_NXPORTS 3
extern const char *const rack_sweep_transports[RACK_SWEEP_NXPORTS]; /* tcp, verbs, nccl */

/* The matrix of doc's pair tests over transport (pattern "pairs"; or "recheck" with recheck
 * set) as figures for sweep_judge: one per (src, dst, rail), latency from the ping-pong step
 * and bandwidth from the two stream steps (a to b, then b to a; NCCL: its sendrecv's algbw,
 * both directions at once at one rate, as both). *n figures; the caller frees the array. */
struct sweep_figure *rack_sweep_figures(const struct results_sweep *doc, bool recheck,
                                        const char *transport, size_t *n);

/* Append doc->pairs from one transport's figures (the matrix the document and the heat map
 * show). */
void rack_sweep_pairs(struct results_sweep *doc, const struct sweep_figure *f, size_t n,
                      const char *transport);

/* The document as it stands, for a live view (fabtop --attach): with the pairs measured so
 * far when doc has no matrix yet (it is made at the end), and without the tests' runs (each
 * test's status, error and round stay), so that publishing after every step costs the size of
 * the matrix, not of every result so far. The caller owns it. */
cJSON *rack_sweep_live_json(const struct results_sweep *doc);

/* Copy an analysis of one transport's matrix into doc->verdicts (messages of matrices other
 * than TCP's start with the transport's name). */
void rack_sweep_verdicts(struct results_sweep *doc, const struct sweep_analysis *an,
                         const char *const *group_names, const char *transport);

#endif
