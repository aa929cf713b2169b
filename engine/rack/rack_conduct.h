/* rack_conduct: rank 0 of fabtop sweep runs the plan's rounds (engine/sweep/sweep_plan.h)
 * over the job's control channels (one authenticated session to every rank's rack_node):
 * every test of a round starts at once, behind the previous round's end; a round with pairs
 * has three steps per transport, with a barrier between each: ping-pong latency, then stream
 * bandwidth a to b, then b to a (one direction at a time: on a narrow port the other
 * direction's data would share its queue with this one's acknowledgements). TCP always; then
 * verbs where both ranks have an RDMA device on the test's rail (NIC i to NIC i: the agent
 * takes the RDMA port that holds the rail address it was reached at), then NCCL where both
 * ranks have a GPU NCCL can use (a sendrecv between their GPUs: latency, then bandwidth; two
 * steps, both directions at once, as NCCL's sendrecv moves them).
 * Each test runs on its src rank as `fabtop run` would, against dst's agent, and its results
 * document comes back over the channel. A rank that dies (its session resets) or hangs (no
 * answer within the round's deadline) is named with the reason, its tests are marked failed
 * or skipped, and the sweep goes on without it or stops (stop_on_failure); nothing already
 * measured is lost. No MPI here. */
#ifndef RACK_CONDUCT_H
#define RACK_CONDUCT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ft_err.h"
#include "engine/peer/channel.h"
#include "engine/results/results_sweep.h"
#include "engine/sweep/sweep_plan.h"

/* A rank's NIC on rail i, as the others reach it. */
struct rack_rail {
    char agent[96];    /* its rack_node reached over this rail ("addr:port"); "" none */
    char local_ip[64]; /* where its traffic on this rail leaves; "" default */
    char rdma[32];     /* its RDMA device on this rail ("mlx5_0"); "" none: no verbs here */
};

struct rack_member {
    char host[64];
    char agent[96];    /* its rack_node: "addr:port" (the control channel) */
    char local_ip[64]; /* where its test traffic leaves (its rail's address); "" default */
    /* Per rail (sweep_rank.rails says which it has); a rail without an agent of its own
     * uses agent and local_ip above. */
    struct rack_rail rails[SWEEP_MAX_RAILS];
    bool nccl;       /* NCCL and a GPU usable on this rank */
    int gpu;         /* the GPU its NCCL tests use (CUDA device index), when nccl */
    char gpu_id[16]; /* that GPU's PCI bus id, "" unknown: two ranks of one host with the same
                      * one get no NCCL test between them */
};

/* The transports a sweep's pair tests use, where both ranks can (RACK_XPORT_AUTO: all). */
enum {
    RACK_XPORT_TCP = 1u << 0,
    RACK_XPORT_VERBS = 1u << 1,
    RACK_XPORT_NCCL = 1u << 2,
    RACK_XPORT_AUTO = 0,
};

/* Per test step: warm-up, measured time, and the bound on everything else (setup,
 * teardown, detecting a dead peer: the mix's fail_bound_s). */
struct rack_conduct_opts {
    const struct rack_member *members; /* rank i is members[i] */
    uint32_t n;
    const struct channel_key *key;
    double duration_s;        /* measured seconds per step (> 0) */
    double warmup_s;          /* 0: 0.3 */
    double fail_bound_s;      /* 0: 3 */
    bool stop_on_failure;     /* --on-failure stop */
    uint64_t latency_bytes;   /* ping-pong message; 0: 64 */
    uint64_t stream_bytes;    /* stream write size; 0: 128 KiB */
    uint64_t nccl_bytes;      /* NCCL sendrecv size for bandwidth; 0: 64 MiB */
    uint64_t allreduce_bytes; /* S of the allreduce pattern's ring (TCP); 0: 16 MiB */
    uint64_t alltoall_bytes;  /* S of the alltoall pattern (a rank's buffer, TCP); 0: 16 MiB */
    unsigned transports;      /* RACK_XPORT_* bits; RACK_XPORT_AUTO: every one */
    /* A sites file's text and name (`fabtop sweep --sites`; NULL: none): every rank's agent
     * gets them with sweep.peers, so each test's path class knows the sites. */
    const char *sites_text, *sites_file;
    const _Atomic bool *interrupt; /* set on Ctrl-C: stop the running tests and return */
    /* After every step: the document so far (for a live view: it may set the elapsed time);
     * may be NULL. */
    void (*progress)(void *arg, struct results_sweep *doc, size_t round, size_t nrounds);
    void *progress_arg;
};

struct rack_conduct;

/* Connect to every rank's agent and tell each the job's agents (sweep.peers). doc->ranks
 * must hold n ranks; a rank that cannot be reached is marked failed there (and in
 * doc->events). 0, or -ECANCELED when stop_on_failure and some rank is unreachable, or when
 * fewer than 2 ranks are left. */
int rack_conduct_open(const struct rack_conduct_opts *o, struct results_sweep *doc,
                      struct rack_conduct **out, struct ft_err *err);

/* Run rounds [first, p->n_rounds) of p, appending one results_sweep_test per test and step
 * to doc->tests (skipped ones too, with the reason) and moving each rank's host conditions
 * and topology from its first run into doc->ranks. 0, or -ECANCELED when interrupted or
 * stopped after a failure (the tests not run are not appended). */
int rack_conduct_rounds(struct rack_conduct *c, const struct sweep_plan *p, size_t first,
                        struct results_sweep *doc);

/* Append one line to doc->events ("rank 3 (rk-h4) failed: ..."). */
void rack_conduct_event(struct results_sweep *doc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Whether rank r failed (died, hung, unreachable). */
bool rack_conduct_failed(const struct rack_conduct *c, uint32_t r);

/* Tell every live rank the sweep is over (sweep.end with status) and close. */
void rack_conduct_close(struct rack_conduct *c, int status);

/* The transport names ("tcp", "verbs", "nccl") by RACK_XPORT_* bit index. */
extern const char *const rack_conduct_xport_names[3];

/* Whether a test of src and dst on rail can use transport x (RACK_XPORT_* bit): TCP always,
 * verbs when both have an RDMA device on the rail, NCCL when both have a GPU for it and it is
 * not the same GPU (rack_conduct_same_gpu). */
bool rack_conduct_can(const struct rack_conduct_opts *o, unsigned x, uint32_t src, uint32_t dst,
                      unsigned rail);

/* Whether a and b are on one host and their NCCL tests would use the same GPU (same PCI bus
 * id; unknown ids are never the same). */
bool rack_conduct_same_gpu(const struct rack_member *a, const struct rack_member *b);

/* The mix one test step runs on its src rank ("latency", "bandwidth-ab", "bandwidth-ba",
 * "stream", "probe"; NCCL: "latency", "bandwidth") over transport x on rail, as the document
 * sweep.run carries; exposed for the benchmark that runs the same mix with `fabtop run`. */
struct cJSON *rack_conduct_mix(const struct rack_conduct_opts *o, unsigned x, const char *kind,
                               uint32_t src, uint32_t dst, unsigned rail);

#endif
