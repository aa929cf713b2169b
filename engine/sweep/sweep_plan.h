/* sweep_plan: the rounds of a rack sweep (fabtop sweep), as pure data: who sends to whom, on
 * which rail, in which pattern. The round-robin tournament of all pairs, incast rounds (quiet
 * probe, then loaded), seeded bisection splits and the group-against-group split, the ring.
 * No I/O, no MPI, no traffic; deterministic for a given seed. */
#ifndef SWEEP_PLAN_H
#define SWEEP_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "common/ft_err.h"

#define SWEEP_MAX_RAILS     16
#define SWEEP_GROUP_UNKNOWN (-1)
#define SWEEP_NO_RANK       UINT32_MAX

/* One rank of the job: what planning and judging know about it. */
struct sweep_rank {
    const char *name; /* host name, e.g. "rk-h3" */
    uint32_t rails;   /* bit i: the rank has NIC i (rail i); 0: one path, rail 0 */
    int32_t group;    /* leaf or switch index, SWEEP_GROUP_UNKNOWN */
    const char *rail_name[SWEEP_MAX_RAILS]; /* netdev per rail, e.g. "eth0"; NULL unknown */
    double port_gbps[SWEEP_MAX_RAILS];      /* port rate ceiling in Gb/s; 0 unknown */
};

enum sweep_pattern {
    SWEEP_PAIRS,
    SWEEP_INCAST,
    SWEEP_BISECTION,
    SWEEP_RING,
    SWEEP_RECHECK,
    SWEEP_ALLREDUCE,
    SWEEP_ALLTOALL,
};

/* What a test does within its round. */
enum sweep_role {
    SWEEP_ROLE_PAIR,     /* ping-pong latency, then bandwidth in both directions */
    SWEEP_ROLE_STREAM,   /* src streams to dst (incast sender, bisection, ring) */
    SWEEP_ROLE_PROBE,    /* latency probe to the incast receiver */
    SWEEP_ROLE_RING,     /* one rank of a ring all-reduce across hosts: src sends to dst, its
                            successor, and waits for its predecessor's chunks */
    SWEEP_ROLE_ALLTOALL, /* one rank of an all-to-all across hosts: src sends to every other
                            rank of the round's tests on its rail (dst: its successor, for
                            the record) and waits for all their shares */
};

/* One test: src to dst on rail (rank src's NIC rail to rank dst's NIC rail). */
struct sweep_test {
    uint32_t src, dst;
    uint16_t rail;
    uint8_t pattern; /* enum sweep_pattern */
    uint8_t role;    /* enum sweep_role */
};

/* Incast rounds come in two phases per receiver and rail. */
enum sweep_phase { SWEEP_PHASE_NONE, SWEEP_PHASE_QUIET, SWEEP_PHASE_LOADED };

/* One round: tests[first .. first + count) run at once, behind one start barrier. */
struct sweep_round {
    size_t first, count;
    uint8_t pattern;  /* enum sweep_pattern */
    uint8_t phase;    /* enum sweep_phase */
    uint32_t subject; /* incast: the receiver; bisection: the split (0.. seeded, last: groups);
                         pairs: the tournament round; otherwise 0 */
};

struct sweep_plan {
    struct sweep_test *tests;
    size_t n_tests, cap_tests;
    struct sweep_round *rounds;
    size_t n_rounds, cap_rounds;
};

/* How rails share a round: all rails of a pair in one round (each NIC in one test at a time,
 * each rank facing one peer), or one round per rail (each rank in one test at a time). */
enum sweep_rails_mode { SWEEP_RAILS_TOGETHER, SWEEP_RAILS_APART };

struct sweep_plan_opts {
    enum sweep_rails_mode rails_mode;
    uint64_t seed;             /* bisection splits */
    unsigned bisection_splits; /* seeded random splits; 0: 3 */
    unsigned incast_senders;   /* k; 0: N-2 */
    const uint32_t *receivers; /* incast receivers; NULL: every rank */
    size_t n_receivers;
};

/* Rail i is usable between ranks a and b when both have NIC i. */
uint32_t sweep_plan_common_rails(const struct sweep_rank *a, const struct sweep_rank *b);

/* Append the rounds of one pattern for ranks[0..n) to plan (started empty or by an earlier
 * call). 0, or -EINVAL with the reason in e (too few ranks, odd N for bisection, a receiver
 * out of range, k too large); the plan is unchanged on failure. o NULL: the defaults. */
int sweep_plan_pairs(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                     const struct sweep_plan_opts *o, struct ft_err *e);
int sweep_plan_incast(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                      const struct sweep_plan_opts *o, struct ft_err *e);
int sweep_plan_bisection(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                         const struct sweep_plan_opts *o, struct ft_err *e);
int sweep_plan_ring(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                    const struct sweep_plan_opts *o, struct ft_err *e);
/* One round: a ring all-reduce across all n ranks (rank r to r + 1, the last to 0) on every
 * rail all of them have (a ring per rail at once, as NCCL runs one per NIC); -EINVAL when
 * fewer than 2 ranks or no rail is common to all. */
int sweep_plan_allreduce(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                         const struct sweep_plan_opts *o, struct ft_err *e);
/* One round: an all-to-all across all n ranks, one test per rank (src r, dst r + 1 for the
 * record), on every rail all of them have; refused as sweep_plan_allreduce. */
int sweep_plan_alltoall(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                        const struct sweep_plan_opts *o, struct ft_err *e);

/* The tournament's round r (0 <= r < rounds) as pairs: out[i] = partner of rank i, or
 * SWEEP_NO_RANK when idle. Returns the number of rounds (N-1 even, N odd). */
uint32_t sweep_plan_tournament_round(uint32_t n, uint32_t r, uint32_t *out);

/* Open a new round, and add test t to the open round (begin one first). */
void sweep_plan_begin_round(struct sweep_plan *p, uint8_t pattern, uint8_t phase, uint32_t subject);
void sweep_plan_add(struct sweep_plan *p, const struct sweep_test *t);

/* Pack tests into rounds in which every rank is in at most one test (greedy, first fit, in
 * order); used for the second pass. */
void sweep_plan_pack(struct sweep_plan *p, const struct sweep_test *t, size_t n, uint32_t n_ranks);

void sweep_plan_free(struct sweep_plan *p);

#endif
