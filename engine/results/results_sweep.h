/* results_sweep: a rack sweep's document (fabtop sweep, issue 16) as C structs, beside the
 * one-run document of results_model.h: the sweep's header, each rank once (host, placement,
 * NICs, and its host conditions and topology, stored once instead of in every run), every
 * test of every round with the run it made (a struct results_run without topology or host
 * conditions: its ranks point into ranks[]), the matrix of pair figures, the verdicts and
 * the failures. engine/results/results_sweep_json.c is its one reader and one writer (every
 * key is spelled there), with the presence rules of results_model.h (RESULTS_ABSENT /
 * RESULTS_NULL / RESULTS_SET, one fixed key order, so a document reads back and writes out
 * byte for byte).
 *
 * Units are in the keys, as in the run document: latency in microseconds ("_us"),
 * bandwidth in Gb/s (10^9 bit/s of payload, "_gbps"), times in seconds ("_s"). */
#ifndef RESULTS_SWEEP_H
#define RESULTS_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/results/results_model.h"

#define RESULTS_SWEEP_FORMAT  "fabtop-sweep"
#define RESULTS_SWEEP_VERSION 1

/* One rank of the job, stored once. */
struct results_sweep_rank {
    int rank;
    char *host;
    struct results_str group;      /* leaf or switch name (--groups, discovery) */
    struct results_num local_rank; /* on its node */
    struct results_num rail;       /* the NIC index it binds to */
    struct results_str address;    /* its control channel's address ("10.9.0.3:41234") */
    struct results_num gpus;
    cJSON *nics;               /* carried: [{model, firmware, rdma_dev, netdev, ...}] or NULL */
    struct results_str unlike; /* how it differs from the usual rank, or absent */
    cJSON *conditions;         /* carried: its host conditions (sysctls, MTUs), or NULL */
    cJSON *topology;           /* carried: its topology snapshot, or NULL */
    struct results_str status; /* "ok", "failed" (died or hung), "skipped" */
    struct results_str error;  /* why it failed */
};

/* One test: src to dst on one rail in one round and step. */
struct results_sweep_test {
    int round, step;            /* pairs: 0 latency, 1 bandwidth a to b, 2 b to a; else 0 */
    char *pattern;              /* "pairs", "incast", "bisection", "ring", "recheck" */
    char *role;                 /* "pair", "stream", "probe" */
    struct results_str phase;   /* incast: "quiet", "loaded" */
    struct results_num subject; /* incast: the receiver; bisection: the split; pairs: round */
    int src, dst, rail;
    struct results_str transport; /* "tcp", "verbs", "nccl" (absent: tcp, the first
                                     documents' only one) */
    char *status;                 /* "ok", "failed", "skipped" */
    struct results_str error;
    struct results_num started_s; /* since the sweep started */
    enum results_state run_st;    /* the "run" key */
    struct results_run run;       /* the run src made (topology and host conditions left out) */
};

/* One pair's figures on one rail over one transport, the matrix's cell (a to b and b to a;
 * NCCL: its sendrecv, both directions at once at one rate: bw_ab_gbps = bw_ba_gbps). */
struct results_sweep_pair {
    int a, b, rail;
    struct results_str transport;    /* as the test's (absent: tcp) */
    struct results_str latency_kind; /* as the run reports it ("round trip") */
    struct results_num lat_p50_us, lat_p99_us, lat_p999_us; /* a to b's ping-pong */
    struct results_num bw_ab_gbps, bw_ba_gbps;
    struct results_bool failed;
    struct results_str error;
    struct results_bool unlike; /* across unlike nodes: the comparison is flagged */
    /* The path's class as a's ping-pong run judged it ("host", "leaf", "site", "wan":
     * engine/path; with `--sites`, ranks in two sites make "wan"); absent: not measured. */
    struct results_str path_class;
};

/* One stream of an incast or bisection round against its fair share: what it moved, what a
 * fair fabric gives it, and the ratio (the figures the round's event sums up). */
struct results_sweep_share {
    char *pattern;                /* "incast", "bisection" */
    int round;                    /* the test's round */
    int src, dst;                 /* the stream's sender and receiver */
    struct results_num gbps;      /* its goodput, Gb/s */
    struct results_num fair_gbps; /* its fair share, Gb/s (fair_kind says how it is set) */
    struct results_num share;     /* gbps / fair_gbps */
    struct results_str fair_kind; /* "aggregate / senders" (incast), "what its ranks reach
                                     alone" (bisection: their pairs' median) */
};

/* A quantity with its unit and kind ("bandwidth", "Gb/s"). st: the object's own presence
 * (a builder may leave it RESULTS_ABSENT: the object is written when any member is set). */
struct results_sweep_qty {
    enum results_state st;
    struct results_num value;
    struct results_str unit, kind;
};

struct results_sweep_verdict {
    char *kind;   /* "rank", "uplink", "pair", "ceiling", "rank_failed", "pair_failed" */
    char *metric; /* "bandwidth", "latency p50", "latency p99" */
    char *state;  /* "named", "suspect", "cleared" */
    struct results_num rank, peer, rail;
    struct results_str transport; /* the matrix it judged (absent: tcp, or none) */
    struct results_str group_a, group_b;
    struct results_sweep_qty observed, reference, ratio;
    struct results_num n_slow, n_pairs;
    char *message;
};

struct results_sweep {
    struct results_str format;  /* RESULTS_SWEEP_FORMAT */
    struct results_num version; /* RESULTS_SWEEP_VERSION */
    struct results_str fabtop_version, launcher;
    struct results_str started_at, ended_at;
    struct results_num duration_s;
    struct results_bool interrupted;
    enum results_state patterns_st; /* each array's own presence: see below */
    int npatterns;
    char **patterns;
    struct results_num test_duration_s;
    struct results_str on_failure; /* "continue", "stop" */
    struct results_str status;     /* "ok", "failed", "interrupted" */
    struct results_num rounds_planned, rounds_done;
    cJSON *mix; /* carried: the mixes the tests ran ({"latency":..,...}) */
    enum results_state ranks_st;
    int nranks;
    struct results_sweep_rank *ranks;
    enum results_state tests_st;
    int ntests;
    struct results_sweep_test *tests;
    enum results_state pairs_st;
    int npairs;
    struct results_sweep_pair *pairs;
    enum results_state shares_st;
    int nshares;
    struct results_sweep_share *shares;
    enum results_state verdicts_st;
    int nverdicts;
    struct results_sweep_verdict *verdicts;
    enum results_state events_st;
    int nevents;
    char **events;              /* failures and decisions, in order */
    struct results_str summary; /* the one line a bring-up checklist pastes */
};

/* Arrays (patterns, ranks, pairs, shares, verdicts, events, tests): X_st is the key's presence as
 * read; the writer writes the array when X_st is RESULTS_SET or it holds entries, null when
 * RESULTS_NULL (a builder sets X_st = RESULTS_SET to write an empty array). A rank's,
 * test's, pair's and verdict's plain ints and strings are required keys (a NULL string is
 * written as null); the indexes src, dst, a, b, rank and peer are positions in ranks[]. */

void results_sweep_free(struct results_sweep *s);

/* The document (caller owns it). */
cJSON *results_sweep_write(const struct results_sweep *s);
/* Read a parsed document; refuses with -EBADMSG and one line naming what and the field:
 * another format, a newer major version, a field of the wrong type, a test or pair naming a
 * rank that is not in ranks[], a run that results_json_read_run refuses. On error s is empty. */
int results_sweep_read(const cJSON *j, const char *what, struct results_sweep *s,
                       struct ft_err *err);
/* The median of v[0..n) (sorts v): the rack medians the views shade by. false when n is 0. */
bool results_sweep_median(double *v, int n, double *out);

/* A test's, pair's or verdict's transport: its value, "tcp" when absent or null. */
const char *results_sweep_transport(const struct results_str *t);

/* Whether j is a sweep document (its format), to choose the reader. */
bool results_sweep_is(const cJSON *j);

#endif
