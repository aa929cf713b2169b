/* results_drill: a fault drill's document ("fabtop-drill", `fabtop drill`) as C structs, with
 * its one reader and one writer (results_drill_json.c): the fault, each repetition's flows
 * (times of injection, detection, recovery and return to the quiet p99; the bounds; requests
 * by outcome), the agent's count of answers, the summary over repetitions and the drill
 * process's descriptors and threads. Presence as in results_model.h (absent / null / set),
 * keys in one fixed order: a document reads back and writes out byte for byte. Times in
 * seconds ("_s"), latency in microseconds ("_us"). */
#ifndef RESULTS_DRILL_H
#define RESULTS_DRILL_H

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/results/results_model.h"

#define RESULTS_DRILL_FORMAT  "fabtop-drill"
#define RESULTS_DRILL_VERSION 1

/* A port-wide RDMA counter that moved in a drill's fault window: "rxe0/1", "rcvd_rnr_err". */
struct results_drill_counter {
    struct results_str object, name;
    struct results_num delta;
};

struct results_drill_flow {
    struct results_str name, op;
    struct results_num connections, quiet_p99_us;
    struct results_num detected_at_s; /* since the repetition started, as the others _at_s */
    struct results_str detection;     /* "timeout: ...", "error: ..." */
    struct results_num recovered_at_s, returned_at_s;
    struct results_num detect_s, detect_bound_s; /* after the injection; its bound */
    struct results_bool detect_ok;
    struct results_num recover_s, recover_deadline_s; /* after the detection; the policy's */
    struct results_bool recover_ok, recovered;
    struct results_num reconnects;
    /* Connections that recovered on a failover agent, and the agent they recovered on (its
     * HOST[:PORT]; "several" when they went to different ones). Absent without failover. */
    struct results_num failovers;
    struct results_str recovered_on;
    /* NCCL (rank-loss): the ranks of its communicators before the fault and after the
     * recovery, and how they were rebuilt ("ncclCommShrink": the survivors went on alone;
     * "new communicator": with an agent restarted after --for). Absent for TCP. */
    struct results_num ranks_before, ranks_after;
    struct results_str rebuilt;
    enum results_state requests_st;
    struct results_num issued, completed, late, failed, abandoned, hanging;
    /* "seen_by": what could see this fault on the flow's transport and verb, and what did
     * (signals from one vocabulary: "request deadline", "connection error", "retry
     * exceeded", "receiver-not-ready", "local QP operation error", "completion error",
     * "NCCL error"); what its queue pair saw (verbs; null otherwise); one sentence; and the
     * error counters of its RDMA ports that moved in the fault window (verbs; null when
     * they could not be read). Absent where the drill did not say. */
    enum results_state seen_st;
    int ncould, ndid;
    struct results_str *could, *did;
    struct results_str queue_pair, seen_text;
    struct results_num counters_window_s;
    enum results_state counters_st;
    int ncounters;
    struct results_drill_counter *counters;
};

/* A background flow of the mix, run as load beside the drilled flows (TCP streams): what it
 * moved before the injection, during the fault (--for) and after it, in Gb/s of payload. */
struct results_drill_load {
    struct results_str name, direction;
    struct results_num connections;
    struct results_num before_gbps, during_gbps, after_gbps, reconnects;
};

struct results_drill_rep {
    struct results_num index, injected_at_s;
    int nflows;
    struct results_drill_flow *flows;
    enum results_state load_st; /* absent: no load */
    int nload;
    struct results_drill_load *load;
    enum results_state agent_st;
    struct results_num answered, client_completed; /* the agent's count, the client's */
    struct results_bool agree;
};

struct results_drill_stat {
    enum results_state st;
    struct results_num min_s, p50_s, max_s, n;
};

struct results_drill_doc {
    struct results_str fabtop, mix, peer, data_peer, transport;
    struct results_num fail_bound_s;
    enum results_state fault_st;
    struct results_str kind, netns, device; /* netns, device: the faults set in a namespace */
    struct results_num at_s, for_s, repeat;
    struct results_bool complete; /* false while repetitions follow, or after a failure */
    int nreps;
    struct results_drill_rep *reps;
    enum results_state summary_st;
    struct results_num drills;
    struct results_drill_stat detect, recover;
    struct results_num broke_bound, never_recovered, agent_disagrees;
    enum results_state process_st;
    struct results_num fds_before, fds_after, threads_before, threads_after;
};

/* Read doc (what names it in messages): 0, or -EBADMSG / -EPROTO with the key named. */
int results_drill_read(const cJSON *doc, const char *what, struct results_drill_doc *out,
                       struct ft_err *err);
cJSON *results_drill_write(const struct results_drill_doc *d);
void results_drill_free(struct results_drill_doc *d);
/* A field set to v / to null. */
void results_drill_num(struct results_num *f, double v);
void results_drill_null(struct results_num *f);

#endif
