/* thresholds: thresholds for bring-up scripts, e.g. `p99<50us,gbps>9` or
 * `probe.quiet.p99<20us`. Each term names the flow (default: the foreground), the phase
 * (default: loaded) and the statistic; it is checked on every measured size point. */
#ifndef THRESHOLDS_H
#define THRESHOLDS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/results/results_model.h"

#define THRESHOLDS_MAX 16

enum thresholds_stat {
    EXP_MIN = 0,
    EXP_MEAN,
    EXP_P50,
    EXP_P90,
    EXP_P99,
    EXP_P999,
    EXP_P9999,
    EXP_MAX_LAT,
    EXP_GBPS,      /* goodput, Gb/s */
    EXP_WIRE_GBPS, /* on the wire, Gb/s */
    EXP_OPS,       /* operations per second */
    EXP_RETRANS,   /* retransmitted segments */
};

struct thresholds_term {
    char flow[32];  /* "" = the foreground flow */
    char phase[16]; /* "" = loaded */
    enum thresholds_stat stat;
    bool less;     /* '<' (else '>') */
    double value;  /* latency in us; rates in their unit */
    char text[96]; /* the term as written */
};

struct thresholds {
    int n;
    struct thresholds_term t[THRESHOLDS_MAX];
};

int thresholds_parse(const char *s, struct thresholds *e, struct ft_err *err);

struct mix;
/* Before the run: every term must be able to pass against this mix. Its flow exists (the
 * foreground when none is named), its phase exists and holds that flow (a background flow
 * does not run in the quiet phase), and the flow records the statistic (latency needs an
 * operation with a latency kind; wire_gbps and retrans a transport that samples the socket,
 * TCP). 0, or -EINVAL naming the term and why. */
int thresholds_check_mix(const struct thresholds *e, const struct mix *m, struct ft_err *err);

/* Check the terms against a run of the results model. Returns the number of violations
 * and appends one line per violation (and per term that could not be checked) to report. */
int thresholds_check_run(const struct thresholds *e, const struct results_run *results,
                         char *report, size_t len);
/* The same for a results document as cJSON (read through the model's run reader; one the
 * reader refuses fails every term, with its line). */
int thresholds_check(const struct thresholds *e, const cJSON *results, char *report, size_t len);

#endif
