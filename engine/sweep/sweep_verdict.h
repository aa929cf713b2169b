/* sweep_verdict: the judgement of a rack sweep, a pure function of its figures. Each pair's
 * figures are set against the rack's own distribution within its path class (rail, same group
 * or across groups) with robust z-scores and a minimum deviation, and against the path's
 * ceiling; slow pairs are then explained by the narrowest place that explains them all: one
 * rank's port, cable or NIC, the uplink between two groups, or one pair. A second pass plans
 * re-tests of each suspect rank against two ranks that were fine and confirms or clears it. */
#ifndef SWEEP_VERDICT_H
#define SWEEP_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "common/ft_err.h"
#include "engine/sweep/sweep_plan.h"

/* Which figures of a pair are valid. */
enum {
    SWEEP_FIG_LAT = 1 << 0,   /* lat_p50_ns and lat_p99_ns */
    SWEEP_FIG_BW_AB = 1 << 1, /* bw_ab_gbps: a to b */
    SWEEP_FIG_BW_BA = 1 << 2, /* bw_ba_gbps: b to a */
};

/* One pair of ranks on one rail, as measured. */
struct sweep_figure {
    uint32_t a, b;
    uint16_t rail;
    uint8_t valid;                 /* SWEEP_FIG_* */
    uint8_t failed;                /* the test failed: no figure is valid, fail_reason says why */
    double lat_p50_ns, lat_p99_ns; /* ping-pong latency percentiles, ns */
    double bw_ab_gbps, bw_ba_gbps; /* stream bandwidth per direction, Gb/s */
    const char *fail_reason;       /* e.g. "peer rk-h5 did not answer within 10 s" */
};

/* What is judged: the direction that hurts is lower bandwidth, higher latency. */
enum sweep_metric { SWEEP_M_BW, SWEEP_M_LAT_P50, SWEEP_M_LAT_P99, SWEEP_M_COUNT };

/* A number with its unit ("Gb/s", "ns", "x") and kind ("bandwidth", "latency p50", ...). */
struct sweep_qty {
    double value;
    const char *unit;
    const char *kind;
};

enum sweep_verdict_kind {
    SWEEP_V_RANK,        /* every pair of one rank slow on a rail: its port, cable or NIC */
    SWEEP_V_UPLINK,      /* the pairs across two groups slow: the uplink between them */
    SWEEP_V_PAIR,        /* one pair alone slow */
    SWEEP_V_CEILING,     /* a path class's median well under its ports' rate */
    SWEEP_V_RANK_FAILED, /* every test of one rank failed */
    SWEEP_V_PAIR_FAILED, /* one test failed */
};

/* The second pass's state of a rank or pair verdict; the others are SWEEP_NAMED at once. */
enum sweep_state { SWEEP_SUSPECT, SWEEP_NAMED, SWEEP_CLEARED };

struct sweep_verdict {
    enum sweep_verdict_kind kind;
    enum sweep_metric metric;
    enum sweep_state state;
    uint32_t rank, peer;      /* SWEEP_NO_RANK where none */
    int32_t group_a, group_b; /* uplink: the two groups; else SWEEP_GROUP_UNKNOWN */
    uint16_t rail;
    struct sweep_qty observed;  /* the suspect's median figure */
    struct sweep_qty reference; /* the class median (ceiling: the port rate) */
    struct sweep_qty ratio;     /* observed / reference, "x" */
    uint32_t n_slow, n_pairs;   /* slow or failed figures of n judged */
    int unlike;                 /* rank: at its own slower port's rate (an unlike node) */
    char msg[320];
};

struct sweep_judge_opts {
    double z_max;        /* robust z-score beyond which a figure is an outlier; 0: 3.5 */
    double min_dev;      /* and at least this far from the class median (fraction); 0: 0.15 */
    double ceiling_frac; /* a class median under this fraction of its ceiling; 0: 0.85 */
    const char *const *group_names; /* sweep_rank.group indexes these, for the messages;
                                       NULL: groups by number */
};

/* Figures a class needs before any of them is judged an outlier. */
#define SWEEP_MIN_CLASS 5

/* Median and MAD of one metric in one class (rail x same/across groups). */
struct sweep_class_stat {
    double median, mad;
    size_t n;
};

struct sweep_analysis {
    struct sweep_verdict *v;
    size_t n_v, cap_v;
    /* [metric][rail][cls], cls 0: same group (or all when groups are unknown), 1: across */
    struct sweep_class_stat cls[SWEEP_M_COUNT][SWEEP_MAX_RAILS][2];
    struct sweep_judge_opts opts;
    uint32_t n_ranks;
    int groups_known;
    uint8_t *slow; /* per figure judged: bit 0 bw a->b, 1 bw b->a, 2 p50, 3 p99 an outlier */
    size_t n_fig;
};

/* Judge the figures f[0..nf) of ranks[0..n). 0, or -EINVAL (a figure naming a rank or rail
 * that is not there). out is filled (free it with sweep_analysis_free). Rank verdicts start
 * SWEEP_SUSPECT: run the second pass to name them. */
int sweep_judge(const struct sweep_rank *ranks, uint32_t n, const struct sweep_figure *f, size_t nf,
                const struct sweep_judge_opts *o, struct sweep_analysis *out, struct ft_err *e);

/* The second pass: for each suspect rank, tests against two ranks with no slow figure of the
 * suspect's metric on that rail (same class first); for each suspect pair, that pair again;
 * appended to plan as SWEEP_RECHECK rounds. 0, or -ENOENT when some
 * suspect has fewer than two fine ranks to test against (it stays a suspect). */
int sweep_recheck_plan(const struct sweep_analysis *an, const struct sweep_rank *ranks,
                       const struct sweep_figure *f, size_t nf, struct sweep_plan *plan,
                       struct ft_err *e);

/* Confirm (SWEEP_NAMED) or clear (SWEEP_CLEARED) each suspect from the re-test figures: named
 * when every valid re-test of it (a pair's: that pair's) is slow against its class, cleared
 * when none is; suspects with no re-test stay suspects. Returns the number still suspect. */
size_t sweep_recheck_judge(struct sweep_analysis *an, const struct sweep_rank *ranks,
                           const struct sweep_figure *re, size_t n_re);

/* Whether x is an outlier in the hurting direction of metric m against class c. */
int sweep_is_outlier(const struct sweep_analysis *an, enum sweep_metric m,
                     const struct sweep_class_stat *c, double x);

const char *sweep_metric_name(enum sweep_metric m);

void sweep_analysis_free(struct sweep_analysis *an);

#endif
