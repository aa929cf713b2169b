/* topo_lint: the bring-up checklist. Each rule looks at the model (and, for error
 * counters, two samples taken a window apart) and reports findings with a severity and a
 * one-line remedy. Rules must not raise false alarms on a healthy idle node. */
#ifndef TOPO_LINT_H
#define TOPO_LINT_H

#include <stdbool.h>
#include <stdint.h>

#include "topology/topo_model.h"

enum topo_sev { TOPO_SEV_INFO = 0, TOPO_SEV_WARN, TOPO_SEV_ERROR };

struct topo_finding {
    const char *rule; /* stable rule id, e.g. "pcie-width" */
    enum topo_sev sev;
    char object[64];  /* what it is about: "GPU0", "mlx5_0 port 1", "0000:4d:00.0" */
    int pci;          /* model pci index to jump to, -1 if none */
    int port;         /* model port index, -1 if none */
    char msg[320];    /* what is wrong, with the numbers */
    char remedy[256]; /* one line: what to do */
};

struct topo_findings {
    int n, cap;
    struct topo_finding *v;
};

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
void topo_findings_free(struct topo_findings *f);
/* Append a finding of rule with sev about PCI device pci and/or port (-1: none); the
 * caller fills its texts. For the rule modules (topo_lint.c, topo_fablint.c). */
struct topo_finding *topo_findings_add(struct topo_findings *out, const char *rule,
                                       enum topo_sev sev, int pci, int port);

/* Worst severity present, or -1 when there are no findings above INFO. */
int topo_findings_worst(const struct topo_findings *f);

/* Take the first (second=false) or second sample of every RDMA port's error counters
 * under root ("/" live). Returns the number of counters read. */
int topo_lint_sample(const struct topo_model *m, const char *root, bool second,
                     struct topo_err_samples *s);
void topo_err_samples_free(struct topo_err_samples *s);

const char *topo_sev_str(enum topo_sev s);

/* The rule table, for --help and the explorer's glossary. */
struct topo_lint_rule {
    const char *id;
    const char *what; /* one line: what it checks */
};
extern const struct topo_lint_rule topo_lint_rules[];
extern const int topo_lint_nrules;

#endif
