/* rack_expect: `fabtop sweep --expect` for scripts: the terms of `fabtop run --expect`
 * (engine/run/thresholds.h), each naming what it judges: "pair." (every pair's figures, the
 * default) or "rank." (each rank's median over its pairs), and one of p50, p99, p99.9 (the
 * ping-pong latency, us) or gbps (stream bandwidth, Gb/s: each direction for a pair). E.g.
 * `pair.gbps>0.09,pair.p99<500us,rank.p50<100us`. A failed pair or rank violates every term. */
#ifndef RACK_EXPECT_H
#define RACK_EXPECT_H

#include <stddef.h>

#include "common/ft_err.h"
#include "engine/results/results_sweep.h"
#include "engine/run/thresholds.h"

/* Parse and check that every term judges something a sweep measures. 0, or -EINVAL naming
 * the term and what a sweep can judge. */
int rack_expect_parse(const char *s, struct thresholds *e, struct ft_err *err);

/* The violations of doc: their count, one line each appended to report ("rk-h1 <-> rk-h3:
 * gbps a->b 0.0231 Gb/s, expected > 0.09 (pair.gbps>0.09)"). */
int rack_expect_check(const struct thresholds *e, const struct results_sweep *doc, char *report,
                      size_t len);

#endif
