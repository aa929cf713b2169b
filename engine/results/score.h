/* score: the scoreboard of a run in serving terms (results_model.h, struct
 * results_scoreboard): per flow class its latency per phase, the share of operations within
 * its SLO (--slo), Jain's fairness index over its flows, its loaded/quiet p99; per decode step
 * the communication on the critical path against a step budget (--step-budget, --target-tps).
 * Pure arithmetic over a built run; the pieces are exported for tests. */
#ifndef SCORE_H
#define SCORE_H

#include <stdbool.h>

#include "common/ft_err.h"
#include "engine/flow/hist.h"
#include "engine/flow/mix.h"
#include "engine/results/results_model.h"

#define SCORE_MAX_SLO 16

/* One --slo term: CLASS:STAT<BOUND, the statistic a percentile (max: 100). */
struct score_slo {
    char class_name[16];
    char stat[8];    /* "p50", "p90", "p99", "p99.9", "p99.99", "max" */
    double pct;      /* 50, 90, 99, 99.9, 99.99, 100 */
    double bound_us; /* microseconds */
    char text[64];   /* "p99<80us", as written after the class */
};

struct score_opts {
    int nslo;
    struct score_slo slo[SCORE_MAX_SLO];
    double step_budget_ms; /* 0: none */
    char budget_from[48];  /* "--step-budget 25ms", "--target-tps 40" */
};

/* Parse --slo 'kv:p99<30ms,tp:p99<80us' into o (adding to what it has): 0, or -EINVAL with
 * one line naming the bad term and what is wrong. Bounds take ns, us, ms or s. */
int score_slo_parse(const char *s, struct score_opts *o, struct ft_err *err);
/* Every class --slo names has a flow of that class in m: 0 or -EINVAL naming it. */
int score_slo_check_mix(const struct score_opts *o, const struct mix *m, struct ft_err *err);
/* --step-budget DUR ("25ms", "25000us", "0.025s") or --target-tps N (tokens per second of
 * one sequence: the budget is 1 / N). 0 or -EINVAL with the reason. */
int score_set_step_budget(struct score_opts *o, const char *dur, struct ft_err *err);
int score_set_target_tps(struct score_opts *o, const char *tps, struct ft_err *err);

/* Jain's fairness index (sum x)^2 / (n sum x^2) of n values >= 0: 1 when all are equal,
 * 1/n when one has everything. NaN when n is 0 or every value is 0. */
double score_jain(const double *x, int n);
/* The share (0-1) of h's samples at or under bound_us: buckets wholly under the bound count,
 * one straddling it does not (so the share is never overstated); NaN when h is empty. */
double score_hist_within(const struct hist *h, double bound_us);
/* A step's communication time (comm_us) against its budget: the share of the budget
 * (NaN without one) and the tokens per second one sequence can decode at most, one token
 * per step, 1e6 / comm_us (NaN when comm_us <= 0). */
void score_step(double comm_us, double budget_ms, double *share, double *tokens_per_s);

/* Fill run->scoreboard from its phases and mix m (classes and per_step come from the mix
 * flows). Left absent when no flow has a class and none has per_step. */
void score_build(struct results_run *run, const struct mix *m, const struct score_opts *o);

#endif
