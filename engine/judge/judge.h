/* judge: why a headline figure fell short of its path's ceiling. A pure function of a run
 * of the results model and the node's topology model: each rule looks at one flow's
 * recorded conditions (and the topology, when known) and names a likely cause with its
 * evidence; causes are ranked by the rule's weight. No I/O (docs/diagnosis.md). */
#ifndef JUDGE_H
#define JUDGE_H

#include <stdbool.h>

#include "engine/results/results_model.h"
#include "topology/topo_model.h"
#include "topology/topo_refs.h"

/* A bandwidth figure under this fraction of its ceiling is short (docs/diagnosis.md). */
#define JUDGE_SHORT_FRACTION 0.80

#define JUDGE_MAX_EV 6

/* One piece of evidence: a number with its unit, or a word (text) when value is NAN. */
struct judge_ev {
    char name[40];
    double value;
    char unit[16];
    char text[64];
};

struct judge_cause {
    const char *rule; /* a row's id in judge_rules */
    int weight;       /* the rule's: the ranking */
    char flow[64], phase[32];
    char figure[32]; /* "goodput" */
    double percent;  /* of the ceiling; NAN: no ceiling known (then not checked, only said) */
    char msg[200];   /* one line naming the thing */
    char fix[200];   /* one line naming the fix */
    int nev;
    struct judge_ev ev[JUDGE_MAX_EV];
};

struct judge_causes {
    int flows_judged; /* bandwidth flows looked at (short, or without a ceiling) */
    int flows_seen;   /* bandwidth flows with goodput */
    int n, cap;
    struct judge_cause *v;
};

/* What a rule sees: one judged flow and what surrounds it. */
struct judge_flow {
    const struct results_run *run;
    const struct topo_model *topo; /* NULL: unknown */
    const struct results_phase *phase;
    const struct results_flow *flow;
    const cJSON *mix_flow; /* the flow's object in the run's mix, NULL when not found */
    double goodput_gbps;   /* the best of its measured points */
    double ceiling_gbps;   /* NAN when unknown */
    double percent;        /* NAN when unknown */
    int nic;               /* its NIC in topo (by RDMA device or netdev), -1 */
};

/* A rule: appends at most one cause for the flow (judge_cause_add). */
typedef void (*judge_rule_fn)(const struct judge_flow *jf, struct judge_causes *out);

struct judge_rule {
    const char *id;
    const char *what; /* one line: what it looks for */
    int weight;       /* how likely a cause it is when it holds: higher ranks first */
    judge_rule_fn check;
};
extern const struct judge_rule judge_rules[];
extern const int judge_nrules;

/* Judge every bandwidth flow (stream, copy, kv) of every phase that has goodput: a flow
 * under JUDGE_SHORT_FRACTION of its ceiling, or without a ceiling, gets every rule that
 * holds; one at or above it gets none. Causes are ranked by weight, table order within a
 * weight. topo may be NULL. */
void judge_run(const struct results_run *run, const struct topo_model *topo,
               struct judge_causes *out);
void judge_causes_free(struct judge_causes *c);

/* A cause of the rule at row r, filled from jf, with msg and fix; returns it for evidence. */
struct judge_cause *judge_cause_add(struct judge_causes *out, const struct judge_flow *jf,
                                    const char *rule, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void judge_ev_num(struct judge_cause *c, const char *name, double v, const char *unit);
void judge_ev_text(struct judge_cause *c, const char *name, const char *text);

/* Into the results model (replacing what out held; st RESULTS_SET, even when empty). */
void judge_to_results(const struct judge_causes *c, struct results_causes *out);

/* The reference-table rows each flow's figure is set beside (judge_refs.c; docs/diagnosis.md
 * section 6), by the row's metric: port_rate and rdma_write_bw a bandwidth flow's goodput on
 * a NIC the row names (rdma_write_bw: a verbs WRITE stream at the row's port rate);
 * pcie_link_bw a flow whose narrowest ceiling term is that link ("PCIe Gen5 x16"), or a GPU
 * row's copies per GPU and direction; host_copy_bw host<->GPU copies per GPU and direction;
 * nvlink_bw and nccl_all_reduce_busbw an NCCL collective's busbw on GPUs the row names (the
 * latter an all_reduce of the row's rank count and algorithm). A pass line whose conditions
 * the run meets gets a verdict; a size below the row's gets differs instead. Replaces what
 * out held (st RESULTS_SET). topo may be NULL (then PCIe link rows only). */
void judge_refs(const struct results_run *run, const struct topo_model *topo,
                const struct topo_refs *refs, struct results_ref_matches *out);
/* The NIC a flow ran on (its RDMA device, else its local netdev), -1 when unknown. */
int judge_flow_nic(const struct topo_model *topo, const struct results_flow *f);
/* A bandwidth flow's best goodput over its points (Gb/s), -1 for another kind of flow or
 * one without a figure: what the judge and the reference rows look at. */
double judge_flow_best_goodput(const struct results_flow *f);

#endif
