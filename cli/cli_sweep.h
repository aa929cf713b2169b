/* cli_sweep: `fabtop sweep`'s command line, shared by the fabtop executable (which lists it,
 * prints its --help and executes fabtop-sweep) and by fabtop-sweep (sweep/), which parses
 * it. fabtop itself never links MPI. */
#ifndef CLI_SWEEP_H
#define CLI_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/cli_opts.h"

/* The patterns (--pattern, several allowed; bits of sweep_args.patterns). */
enum sweep_pattern_bit {
    SWEEP_BIT_PAIRS = 1u << 0,
    SWEEP_BIT_INCAST = 1u << 1,
    SWEEP_BIT_BISECTION = 1u << 2,
    SWEEP_BIT_RING = 1u << 3,
    SWEEP_BIT_ALLREDUCE = 1u << 4,
    SWEEP_BIT_ALLTOALL = 1u << 5,
};
#define SWEEP_NPATTERNS 6
/* The name of pattern bit i ("pairs", "incast", "bisection", "ring", "allreduce",
 * "alltoall"). */
const char *sweep_pattern_name(int i);

enum sweep_on_failure { SWEEP_CONTINUE = 0, SWEEP_STOP = 1 };

struct sweep_args {
    struct cli_list pattern_words; /* as given */
    unsigned patterns;             /* SWEEP_*: filled by sweep_args_finish */
    double duration;               /* seconds per test */
    uint64_t allreduce_bytes;      /* --allreduce-size: S of the ring all-reduce; 0 not given */
    uint64_t alltoall_bytes;       /* --alltoall-size: S of the all-to-all (a rank's buffer) */
    const char *model;             /* --model: the collectives' sizes from a model */
    long batch;                    /* --batch: its decode step's sequences */
    char model_note[512];          /* rank 0: how the sizes follow from the model, or "" */
    const char *out;
    bool json;
    const char *groups;
    const char *sites;   /* --sites FILE: sites by address (engine/path/path_sites.h) */
    const char *expect;  /* --expect TERMS (engine/rack/rack_expect.h) */
    const char *listen;  /* --listen: every rank's agent and tests on this address */
    const char *rails;   /* --rails NETDEV,...: the rails by name, in order (else the NICs) */
    const char *publish; /* --publish: the live document's path, "none", or NULL (default) */
    int on_failure;      /* enum sweep_on_failure */
};

#define SWEEP_DEFAULT_DURATION       2.0
#define SWEEP_DEFAULT_ALLREDUCE_SIZE (16ull << 20)
#define SWEEP_DEFAULT_ALLTOALL_SIZE  (16ull << 20)

/* After cli_parse_args: the pattern bits from the words (pairs when none was given). */
void sweep_args_finish(struct sweep_args *a);

/* The binary fabtop executes. */
#define SWEEP_BINARY "fabtop-sweep"

#endif
