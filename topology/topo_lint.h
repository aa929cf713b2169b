/* topo_lint: the bring-up checklist. Each rule looks at the model (and, for error
 * counters, two samples taken a window apart) and reports findings with a severity and a
 * one-line remedy. Rules must not raise false alarms on a healthy idle node. */
#ifndef TOPO_LINT_H
#define TOPO_LINT_H

#include <stdbool.h>
#include <stdint.h>

#include "topology/topo_findings.h"
#include "topology/topo_model.h"

/* Error counters of one RDMA port at two instants (see topo_lint_sample). */
struct topo_err_counter {
    int port;            /* model port index */
    char name[48];       /* sysfs counter name, e.g. "symbol_error" */
    bool valid0, valid1; /* readable at the first / second sample */
    uint64_t v0, v1;     /* values */
    int width;           /* counter width in bits (saturates at 2^width - 1), 0 if unknown */
};

struct topo_err_samples {
    int n, cap;
    struct topo_err_counter *v;
    double window_s; /* seconds between the two samples */
};

struct topo_cabling; /* topo_cabling.h */

/* Options a user can state. */
struct topo_lint_opts {
    const struct topo_err_samples *errs; /* NULL: counter rules are skipped */
    enum topo_link_layer expect_ll;      /* the fabric's link layer as the user states it;
                                          * TOPO_LL_UNKNOWN: not stated */
    const struct topo_cabling *cabling;  /* a cabling plan to compare with; NULL: none */
};

/* Run every rule; findings are appended to out (sorted: errors first). */
void topo_lint_run(const struct topo_model *m, const struct topo_lint_opts *o,
                   struct topo_findings *out);

/* Take the first (second=false) or second sample of every RDMA port's error counters
 * under root ("/" live). Returns the number of counters read. */
int topo_lint_sample(const struct topo_model *m, const char *root, bool second,
                     struct topo_err_samples *s);
void topo_err_samples_free(struct topo_err_samples *s);

const char *topo_sev_str(enum topo_sev s);

/* A check: appends its rules' findings about m to out (unsorted; topo_lint_run sorts). o may
 * be NULL; a check that needs what o gives (error samples, a cabling plan) is then quiet. */
typedef void (*topo_lint_check_fn)(const struct topo_model *m, const struct topo_lint_opts *o,
                                   struct topo_findings *out);

/* The rule table: every rule lint knows, in the order topo_lint_run runs them, for --help and
 * the explorer's glossary too. A check may report several rules: it sits on each of their
 * rows, which are adjacent, and runs once, at the first. */
struct topo_lint_rule {
    const char *id;
    const char *what;         /* one line: what it checks */
    enum topo_sev sev;        /* the most severe finding it reports */
    topo_lint_check_fn check; /* the function that reports it */
};
extern const struct topo_lint_rule topo_lint_rules[];
extern const int topo_lint_nrules;

#endif
