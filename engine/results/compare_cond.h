/* compare_cond: the conditions half of compare (compare.h): the run, hosts, versions and
 * host settings, the ports and netdevs used, each flow's parameters and recorded
 * conditions, neighbour load; and the pairing of flows that the outcome uses too. Internal
 * to engine/results/: compare.c calls it, it calls nothing of compare.c. */
#ifndef COMPARE_COND_H
#define COMPARE_COND_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "engine/results/compare.h"
#include "engine/results/results_model.h"

#define COMPARE_COND_NA "n/a"

/* The lists being built (the result's arrays grow by doubling). */
struct compare_cond_builder {
    struct compare_result *r;
    int ccap, rcap;
};

/* Two mix flows paired for comparison (carried mix objects); one may be NULL. */
struct compare_cond_pair {
    const cJSON *a, *b;
};

/* Same name first, then foregrounds with foregrounds and neighbours with neighbours in
 * order; the rest stand alone. Returns the number of pairs (at most max). */
int compare_cond_pair_flows(const struct results_run *A, const struct results_run *B,
                            struct compare_cond_pair *out, int max);
/* "probe" or "probe|tp-sync" when the paired names differ. */
void compare_cond_pair_label(const struct compare_cond_pair *p, char *buf, size_t len);
/* The flow of that name in the run's phases (of phase, or any when NULL): the last one. */
const struct results_flow *compare_cond_flow(const struct results_run *run, const char *phase,
                                             const char *name);
/* The phase of that name, or NULL. */
const struct results_phase *compare_cond_phase(const struct results_run *run, const char *name);
bool compare_cond_is_fg(const struct results_flow *f);

/* Every condition, A against B, in the order the comparison lists them. */
void compare_cond_all(struct compare_cond_builder *b, const struct results_run *A,
                      const struct results_run *B, const struct compare_cond_pair *pairs, int np);

/* Text of values: a byte count ("4KiB"; n/a for no whole number of bytes); a peer without
 * the in-process agent's changing port. */
void compare_cond_bytes_text(double v, char *buf, size_t len);
void compare_cond_peer_text(const char *p, char *buf, size_t len);

#endif
