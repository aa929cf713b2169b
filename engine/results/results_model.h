/* results_model: the results document as C structs, the way topology/topo_model.h holds a
 * node: a run with its header, phases, flows, size points, statistics, counters and
 * conditions. engine/results/results_json.c is its one reader and one writer (every key of
 * the document is spelled there); results_build (results.h) fills it from a finished run.
 *
 * Presence: every scalar a document may leave out or write as null is a struct
 * results_num / results_str / results_bool whose state says which (and every object or
 * array has an enum results_state of its own, X_st) (RESULTS_ABSENT: no key,
 * RESULTS_NULL: the key with null, "n/a"; RESULTS_SET: a value). The writer writes the keys
 * in one fixed order and only the present ones, so a document fabtop wrote (and the sparse
 * ones tests write by hand, in the same order) reads back and writes out byte for byte.
 *
 * Typed: the header (format, version, times, interrupted, reproducible, hosts, versions as
 * name/value pairs), the run's conditions (sysctls, netdev MTUs, the simulated fabric's
 * note and topology), phases (name, duration), flows (identity, status, failure times,
 * setup/teardown), size points (size, measured/complete, window, ops, payload, goodput,
 * wire bytes and rate, TCP figures), the flow's path ceiling with its terms, latency
 * statistics with their kind and unit, the
 * histogram (struct hist, engine/flow/hist.h, with its own exact reader and writer), the
 * timeline, the summary, events.
 * Carried (cJSON, in the order read, written back unchanged): the mix (engine/flow/mix.h
 * has its model; the document keeps what was run), the topology snapshot
 * (topology/topo_json.h reads it into a topo_model), the phase's port-wide counters and a
 * flow's own qp_counters (engine/counters/ documents them), each flow's conditions (the
 * transports' own details: verbs device, GID, MTU, DSCP, DCB; TCP cc, MSS; NCCL algo/proto,
 * transports; sim: the fabric and its results), of which the fields consumers read are also
 * decoded into struct results_flow_cond, and a point's transport figures (nccl: algbw_gbps,
 * busbw_gbps, ...) kept as the ordered members after the histogram.
 *
 * A document today holds one run (struct results_doc, runs[0]). The shape a rack sweep's
 * document takes (issue 16): many runs (one per round and pair) whose flows name their ranks,
 * each rank's host conditions and topology stored once in a ranks[] table beside runs[] (a
 * run then points into it instead of carrying its own topology), under a new "format" or
 * major version. */
#ifndef RESULTS_MODEL_H
#define RESULTS_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine/flow/hist.h"

#define RESULTS_FORMAT  "fabtop-results"
#define RESULTS_VERSION 1

enum results_state { RESULTS_ABSENT = 0, RESULTS_NULL, RESULTS_SET };

struct results_num {
    enum results_state st;
    double v;
};
struct results_str {
    enum results_state st;
    char *s; /* owned, when st == RESULTS_SET */
};
struct results_bool {
    enum results_state st;
    bool v;
};

/* One name/value string pair (versions; a sysctl; absent values stay RESULTS_NULL). */
struct results_kv {
    char *key;
    struct results_str val;
};
struct results_kvs {
    int n;
    struct results_kv *v;
};

/* Latency statistics of a point, in unit (microseconds: "us") with their kind. */
struct results_latency {
    struct results_str kind, unit;
    struct results_num count, min, mean, stdev, p50, p90, p99, p999, p9999, max;
};

/* TCP figures over a point's window (tcp_info): retransmitted segments, the last RTT. */
struct results_tcp {
    struct results_num retrans_segments, rtt_us, rttvar_us, cwnd_bytes;
};

/* One size point of a flow (the whole flow when it has one size). */
struct results_point {
    struct results_num size_bytes;
    struct results_bool measured, complete;
    struct results_num measure_s, ops, ops_per_s, payload_bytes, goodput_gbps;
    struct results_num wire_bytes, wire_gbps;
    enum results_state tcp_st; /* RESULTS_SET: tcp holds the figures */
    struct results_tcp tcp;
    enum results_state latency_st;
    struct results_latency latency;
    struct hist *histogram; /* NULL when absent */
    /* A flow on the decode step (its per_step whole): per_step consecutive operations of one
     * connection summed into one sample, the time a step waits on this flow, measured
     * ("step" in the JSON; RESULTS_SET when present). */
    enum results_state step_st;
    struct results_num step_ops;
    struct results_latency step_latency;
    struct hist *step_histogram;
    cJSON *figures; /* carried: the transport's own members, in order (an object) */
};

/* A number array of the timeline (seconds since the run started, Gb/s, ops/s). */
struct results_series {
    enum results_state st;
    int n;
    double *v;
};
struct results_timeline {
    struct results_str t; /* what t_s counts ("seconds since the run started") */
    struct results_series t_s, goodput_gbps, wire_gbps, ops_per_s;
};

/* The fields of a flow's conditions that fabtop reads (decoded from the carried object;
 * numbers out of their field's range stay unset, never converted). */
struct results_flow_cond {
    const char *rdma_device, *link_layer, *gid_type, *gid, *connection, *memory;
    bool have_port, have_lid, have_sl, have_gid_index, have_path_mtu, have_dscp, have_tc,
        have_queue_pairs;
    int port, lid, sl, gid_index, path_mtu, dscp, traffic_class, queue_pairs;
    bool dcb;               /* a dcb object was recorded */
    bool have_dcb_priority; /* dcb.priority */
    int dcb_priority;       /* 0-7 */
    int dcb_pfc;            /* dcb.pfc_enabled: 1 on, 0 off, -1 not recorded */
    bool dcb_unavailable;   /* dcb.available is false */
    const char *tcp_cc;     /* TCP: congestion_control */
    bool have_mss;
    int mss_bytes;
    bool have_sim_goodput;   /* sim: conditions.sim.results.goodput_gbps */
    double sim_goodput_gbps; /* payload over simulated time */
    const char *sim_topology;
};

/* The ceiling of a flow's path (topology/topo_ceiling.h, docs/diagnosis.md): the narrowest
 * payload rate, Gb/s one direction, which term set it, and every term with its value, unit
 * and kind ("limit", "rate", "factor", "size", "assumed"). A flow's goodput as a percentage
 * of it is derived (results_ceiling_percent), never stored. */
struct results_ceil_term {
    struct results_str name, kind, unit, detail;
    struct results_num value;
};
struct results_ceiling {
    enum results_state st; /* the "ceiling" key */
    struct results_str path;
    struct results_num gbps; /* Gb/s of payload, one direction */
    struct results_str narrowest;
    enum results_state terms_st;
    int nterms;
    struct results_ceil_term *terms;
};

struct results_flow {
    struct results_str name, transport, op, role;
    struct results_str class_name; /* the mix's flow class ("tp", "kv", ...); absent: none */
    struct results_str direction, latency_kind, peer;
    struct results_num connections_asked, workers;
    struct results_str status, error;
    struct results_num failed_at_s, detected_after_last_progress_s, failed_at_run_s;
    struct results_num setup_s, teardown_s;
    enum results_state points_st; /* the "points" key */
    int npoints;
    struct results_point *points;
    enum results_state timeline_st;
    struct results_timeline timeline;
    struct results_ceiling ceiling; /* its path's ceiling, where fabtop knows the path */
    cJSON *conditions;              /* carried (an object), or NULL when absent */
    struct results_flow_cond cond;  /* decoded from conditions */
    cJSON *qp_counters;             /* carried, or NULL when absent */
};

struct results_phase {
    struct results_str name;
    struct results_num duration_s;
    enum results_state counters_st;
    cJSON *counters; /* carried: port-wide counter deltas (counters_set_report_json) */
    enum results_state flows_st;
    int nflows;
    struct results_flow *flows;
};

/* The run's conditions: the host's sysctls and netdev MTUs, or for an all-sim run the
 * simulated fabric's note and topology. */
struct results_run_cond {
    enum results_state sim_st;
    struct results_str sim_note, sim_topology;
    struct results_kvs sysctls; /* tcp_congestion_control, tcp_ecn, tcp_rmem, tcp_wmem */
    enum results_state netdev_mtu_st;
    int nmtu;
    struct {
        char *netdev;
        double mtu;
    } * mtu;
};

/* The foreground's headline per phase (summary.quiet, summary.loaded, ...). */
struct results_summary_phase {
    char *phase;
    struct results_str status;
    struct results_num p50, p99, p999, max, goodput_gbps;
};
struct results_summary {
    enum results_state st; /* the "summary" key */
    struct results_str foreground;
    int nphases;
    struct results_summary_phase *phases;
    struct results_num p99_loaded_over_quiet;
};

/* The scoreboard in serving terms (engine/results/score.h computes it): per class, its
 * latency per phase with the SLO share and fairness, the loaded/quiet p99 ratio; per decode
 * step, the communication on the critical path against a step budget. Latencies in
 * microseconds of the class's latency kind; shares and Jain's index are fractions 0-1. */
struct results_score_phase {
    enum results_state st;
    struct results_num samples; /* latency samples merged: what the percentiles are over */
    struct results_num p50_us, p99_us, p999_us;
    struct results_num within_slo; /* share of the phase's operations at or under the bound */
    struct results_num fairness_jain;
};
struct results_score_class {
    char *name;
    struct results_num flows;
    struct results_str latency_kind;
    struct results_str slo;          /* the --slo term for it ("p99<80us"); absent: none */
    struct results_num slo_bound_us; /* its bound */
    struct results_bool slo_met;     /* the loaded phase's statistic within the bound */
    struct results_str fairness_of;  /* "ops_per_s" or "goodput_gbps" of each flow */
    struct results_score_phase quiet, loaded;
    struct results_num p99_loaded_over_quiet;
};
/* One flow's share of a step: per_step x its latency. */
struct results_score_term {
    char *flow;
    struct results_num per_step;
};
struct results_score_step_phase {
    enum results_state st;
    /* The step's p50 / p99: its terms summed (several: their distributions convolved) */
    struct results_num comm_p50_us, comm_p99_us;
    struct results_num comm_p99_upper_us; /* each term's own p99, summed */
    /* The fewest measured steps of a term that has them (absent: none measured); under 100
     * the step's p99 is the largest of them (nearest rank). */
    struct results_num steps_measured;
    struct results_num budget_share_p50, budget_share_p99;
    struct results_num tokens_per_s_p50, tokens_per_s_p99; /* per sequence: 1 / comm */
};
struct results_score_step {
    enum results_state st;
    struct results_str basis;       /* how the figures are made, in words */
    struct results_num budget_ms;   /* the step budget */
    struct results_str budget_from; /* "--step-budget 25ms", "--target-tps 40" */
    int nterms;
    struct results_score_term *terms;
    struct results_score_step_phase quiet, loaded;
};
struct results_scoreboard {
    enum results_state st; /* the "scoreboard" key */
    struct results_str basis;
    int nclasses;
    struct results_score_class *classes;
    struct results_score_step step;
};

/* The path's class and where its queue was (engine/path/path.h, docs/diagnosis.md): the
 * evidence (the quiet phase's minimum round trip, the TTL a probe from the peer arrived with
 * and the hops it means, site labels), the transport's RTT per phase (TCP srtt over the
 * phase's TCP points: min, median, max, us) with retransmitted segments, each end's qdisc
 * peaks over the loaded phase (the peer's sampled by its agent), the verdict, and the
 * warnings for tightly coupled flows over a wide-area path. */
struct results_path_rtt {
    enum results_state st;
    char *phase;
    struct results_num min_us, median_us, max_us, retrans_segments;
};
struct results_path_end {
    enum results_state st;
    struct results_str netdev; /* the qdisc's object ("eth0 qdisc 1: htb") */
    struct results_num peak_packets, peak_bytes, drops;
};
struct results_path {
    enum results_state st;       /* the "path" key */
    struct results_str cls;      /* "host", "leaf", "site", "wan", "unknown" */
    struct results_str evidence; /* in words */
    struct results_num min_rtt_us, ttl, ttl_initial, hops;
    struct results_str site_local, site_peer;
    struct results_str site_from; /* a sites file gave a label: "FILE: this host A in P, ..." */
    int nrtt;
    struct results_path_rtt *rtt; /* per phase, in the run's order */
    struct results_path_end local, peer;
    struct results_str queue;   /* "local", "peer", "between", "beyond", "none", "unknown" */
    struct results_str verdict; /* one line */
    enum results_state warnings_st;
    int nwarnings;
    char **warnings;
};
/* The likely causes of a headline figure short of its ceiling (engine/judge/judge.h makes
 * them, docs/diagnosis.md lists the rules), ranked most likely first: the rule's stable id,
 * the flow and phase, the figure and its percent of the ceiling (null: no ceiling known),
 * one line naming the thing, one naming the fix, and the evidence, each value with its unit
 * (or as text, for a value that is a word: a GID type, a congestion control). */
struct results_cause_ev {
    struct results_str name, unit, text;
    struct results_num value;
};
struct results_cause {
    struct results_str rule, flow, phase, figure;
    struct results_num percent_of_ceiling;
    struct results_str message, fix;
    int nev;
    struct results_cause_ev *ev;
};
struct results_causes {
    enum results_state st; /* the "causes" key */
    int n;
    struct results_cause *v;
};
void results_causes_clear(struct results_causes *c);

/* A reference-table row (topology/refs/reference.json) that matches a flow's part: the
 * row as shipped with its source, and the flow's best goodput as a percent of its value
 * (one direction, Gb/s). */
/* A reference row set beside a flow's figure (engine/judge, docs/diagnosis.md section 6):
 * figure names what was compared ("busbw at 16 GiB"), measured is it in the row's unit, one
 * direction; verdict ("pass" or "below") for a pass line whose conditions the run meets;
 * differs names the row's condition it does not meet (then no verdict). */
struct results_ref_match {
    struct results_str flow, phase, id, part, metric, kind, unit, direction, conditions;
    struct results_str figure, tolerance_basis, verdict, differs;
    struct results_num value, tolerance_pct, measured, percent;
    struct results_str document, url;
};
struct results_ref_matches {
    enum results_state st; /* the "references" key */
    int n;
    struct results_ref_match *v;
};
void results_ref_matches_clear(struct results_ref_matches *m);

struct results_run {
    struct results_str format;
    struct results_num version;
    struct results_str started_at, ended_at;
    struct results_num duration_s;
    struct results_bool interrupted;
    enum results_state hosts_st;
    struct results_str host_local;
    enum results_state peers_st;
    int npeers;
    char **peers;
    enum results_state versions_st;
    struct results_kvs versions;
    enum results_state conditions_st;
    struct results_run_cond conditions;
    cJSON *mix; /* carried, or NULL when absent */
    enum results_state phases_st;
    int nphases;
    struct results_phase *phases;
    struct results_summary summary;
    struct results_scoreboard scoreboard;
    struct results_path path;
    struct results_causes causes;          /* engine/judge: why a figure fell short */
    struct results_ref_matches references; /* engine/judge: matching reference rows */
    enum results_state events_st;
    int nevents;
    char **events;
    enum results_state topology_st;
    cJSON *topology; /* carried topology snapshot when topology_st == RESULTS_SET */
    struct results_str reproducible;
};

/* A results document: one run today; a sweep will hold many (see the comment above). */
struct results_doc {
    int nruns;
    struct results_run *runs;
};

void results_doc_free(struct results_doc *d);
/* Free a ceiling's strings and terms and leave it absent. */
void results_ceiling_clear(struct results_ceiling *c);
void results_run_free(struct results_run *r);
void results_scoreboard_free(struct results_scoreboard *b);
void results_path_free(struct results_path *p);

/* Readers' accessors: the string when set, else NULL; the number when set. */
static inline const char *results_str_get(const struct results_str *f)
{
    return f->st == RESULTS_SET ? f->s : NULL;
}
static inline bool results_num_get(const struct results_num *f, double *v)
{
    if (f->st == RESULTS_SET)
        *v = f->v;
    return f->st == RESULTS_SET;
}
static inline bool results_bool_true(const struct results_bool *f)
{
    return f->st == RESULTS_SET && f->v;
}
/* The pair named key (NULL when there is none). */
const struct results_kv *results_kvs_find(const struct results_kvs *k, const char *key);

/* Setters for builders: copy s (NULL: RESULTS_NULL). */
void results_str_set(struct results_str *f, const char *s);
void results_num_set(struct results_num *f, bool valid, double v);

#endif
