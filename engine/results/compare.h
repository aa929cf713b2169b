/* compare: puts two results documents side by side. It lists the test conditions that make
 * a comparison unfair (hosts, versions, the ports used, MTUs, congestion control, mix
 * parameters per flow, neighbour load, phases), each with why it matters, and the outcome
 * per flow and size point with ratios. Pure data: no curses, never prints.
 * Errors: functions return 0 or -errno and fill an optional struct ft_err. */
#ifndef COMPARE_H
#define COMPARE_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/results/results_model.h"

/* What a difference in one condition means for the comparison. */
enum compare_severity {
    COMPARE_SAME = 0, /* no difference */
    COMPARE_INFO,     /* recorded for context; unlikely to change the numbers */
    COMPARE_CAUTION,  /* may change the numbers; say so when quoting the comparison */
    COMPARE_UNFAIR,   /* changes the numbers by itself: the results are not like for like */
};

/* One test condition, A against B. */
struct compare_cond {
    char group[64];    /* "hosts", "versions", "port 1", "flow probe", "neighbours", ... */
    char field[40];    /* "active MTU", "link layer", "sizes", ... */
    char a[96], b[96]; /* values as text with units; "n/a" when not recorded */
    bool same;
    enum compare_severity weight;   /* what a difference in this field means */
    enum compare_severity severity; /* COMPARE_SAME when same, else the weight (at most
                                   COMPARE_CAUTION when only one side recorded it) */
    const char *why;                /* one line: why a difference matters (static text) */
};

/* The statistics put side by side for every flow and size point. */
enum { COMPARE_P50 = 0, COMPARE_P99, COMPARE_P999, COMPARE_GBPS, COMPARE_NMETRICS };

/* One flow at one size point in one phase, A against B. */
struct compare_row {
    char phase[16];
    char flow[72];         /* "probe" or "probe / tp-sync" when the paired names differ */
    char point[40];        /* "4KiB" or "4KiB / 16KiB" */
    char latency_kind[24]; /* "half_round_trip", "none", ... */
    bool in_a, in_b;
    bool valid_a[COMPARE_NMETRICS], valid_b[COMPARE_NMETRICS];
    double a[COMPARE_NMETRICS], b[COMPARE_NMETRICS]; /* us (latencies), Gb/s (goodput) */
    char status_a[16], status_b[16];                 /* "ok", "failed", ... */
    bool sim_a, sim_b; /* a simulated flow: its goodput is in simulated time */
};

/* One flow class of the scoreboards (results_model.h), A against B, loaded phase (the quiet
 * one when a class has no loaded figures). B is worse when its p99 is more than
 * COMPARE_CLASS_P99_WORSE times A's, or its share within the SLO is more than
 * COMPARE_CLASS_SLO_WORSE (a fraction, 0.01: one percentage point) below A's, or the SLO
 * was met in A and is not in B. */
#define COMPARE_CLASS_P99_WORSE 1.10
#define COMPARE_CLASS_SLO_WORSE 0.01
struct compare_class {
    char name[16];
    char slo[64]; /* B's SLO term, else A's; "" when neither has one */
    bool in_a, in_b;
    bool have_p99_a, have_p99_b, have_within_a, have_within_b;
    double p99_a, p99_b;       /* us */
    double within_a, within_b; /* share of operations within the SLO, 0-1 */
    int met_a, met_b;          /* 1 met, 0 not, -1 not recorded */
    bool worse;
    char why[160]; /* what got worse, with the numbers; "" when not worse */
};

struct compare_result {
    char label_a[160], label_b[160]; /* "quiet-vs-loaded, 2026-11-30T04:21:05Z, host vm" */
    int nconds;
    struct compare_cond *conds;
    int nrows;
    struct compare_row *rows;
    int ndiff[COMPARE_UNFAIR + 1]; /* differing conditions per severity (ndiff[0] unused) */
    enum compare_severity worst;   /* the most severe difference, COMPARE_SAME if none */
    char verdict[200];             /* one sentence: comparable or why not */
    int nclasses;                  /* the scoreboards' classes, A's order then B's new ones */
    struct compare_class *classes;
    char worse[256]; /* "Worse in B: class kv (p99 x1.42; within SLO 99.1% -> 92.0%)" or "" */
};

/* A few facts about one results document, for lists. */
struct compare_brief {
    char started_at[40]; /* ISO 8601, UTC */
    char mix[64];
    char peer[128];  /* the first peer, "" if none */
    char status[16]; /* "ok", "failed", "interrupted" */
    char foreground[32];
    char phase[16]; /* the phase the numbers come from (the last one) */
    bool have_p50, have_p99, have_gbps;
    double p50_us, p99_us, gbps; /* foreground, last phase, last size point */
    bool gbps_simulated;         /* a simulated flow's goodput, in simulated time */
};

/* Compare two runs of the results model (results_model.h). */
void compare_runs(const struct results_run *a, const struct results_run *b,
                  struct compare_result *out);
/* The same for two documents as cJSON (read through the model: -EINVAL for one that is no
 * results document, -EBADMSG with the reader's line for one it refuses). */
int compare_results(const cJSON *a, const cJSON *b, struct compare_result *out, struct ft_err *err);
void compare_free(struct compare_result *r);
/* The comparison as JSON (caller owns it): verdict, conditions, outcome with ratios. */
cJSON *compare_to_json(const struct compare_result *r);
/* B over A for metric m of row r; false when either side is missing or A is 0, or for a
 * goodput in simulated time against one in wall-clock time. */
bool compare_ratio(const struct compare_row *r, int m, double *ratio);
/* What a ratio B/A says about B, by the metric's direction: latency lower is better,
 * goodput higher. Within COMPARE_CHANGE_SAME_PCT percent either way it is no change; worse
 * by COMPARE_CHANGE_MUCH times or more is much worse (the colours of the explorer and the
 * words of compare's text, documented in its help). */
enum compare_change {
    COMPARE_CHANGE_NONE = 0,
    COMPARE_CHANGE_BETTER,
    COMPARE_CHANGE_WORSE,
    COMPARE_CHANGE_MUCH_WORSE,
};
#define COMPARE_CHANGE_SAME_PCT 10.0
#define COMPARE_CHANGE_MUCH     2.0
enum compare_change compare_change_of(bool lower_is_better, double ratio);
/* Is metric m better when lower (the latencies) or higher (goodput)? */
bool compare_metric_lower_better(int m);
/* "better", "worse", "much worse", or "" for no change. */
const char *compare_change_str(enum compare_change c);
const char *compare_severity_str(enum compare_severity s);
const char *compare_metric_str(int m); /* "p50 us", "p99 us", "p99.9 us", "Gb/s" */
/* Key facts of one run (missing facts stay empty / invalid). */
void compare_run_brief(const struct results_run *doc, struct compare_brief *out);
/* The same for a document as cJSON (all empty when the reader refuses it). */
void compare_brief(const cJSON *doc, struct compare_brief *out);

#endif
