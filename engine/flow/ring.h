/* ring: a ring all-reduce's message pattern as NCCL's ring algorithm moves it (2 (N - 1)
 * dependent steps of ceil(S / N) bytes each way), for the transports that emulate the
 * collective (tcp): between this host and one peer that plays every other rank, or across N
 * hosts, each sending to its successor and waiting for its predecessor (params.gate,
 * engine/flow/ring_gate.h): its arithmetic, its per-point timing and its figures (nccl-tests'
 * algbw and busbw for all_reduce). */
#ifndef RING_H
#define RING_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/flow/mix.h"
#include "engine/flow/ring_gate.h"

#define RING_MAX_RANKS 1024

/* A flow's ring: params {"collective": "all_reduce", "ranks": N} of an op "collective" over
 * an emulating transport; with "gate": ID the ring runs across N hosts: the flow's peer is
 * the successor, and the predecessor's chunks arrive at this process's agent, which counts
 * them at the gate of that name (one connection: concurrency 1). {"collective": "alltoall",
 * "ranks": N, "gate": ID} is one peer's part of an all-to-all across N hosts (only across
 * hosts): this rank sends ceil(S / N) to the flow's peer, the mix has a flow for each of its
 * N - 1 peers, and all of them wait at the gate for every peer's share. "rank" and
 * "peer_rank" (whole numbers) label this rank and the peer, so that the peer's link into
 * this rank is found among the gate's feeders. */
struct ring_params {
    int ranks;                   /* N >= 2 */
    bool alltoall;               /* an all-to-all's part (across hosts), not a ring */
    char gate[RING_GATE_ID_MAX]; /* "" emulated with one peer; else across hosts */
    int rank, peer_rank;         /* labels across hosts; -1: not given */
};

/* The flow's params (collective must be "all_reduce", ranks 2 to RING_MAX_RANKS, the size one
 * number): 0 or -EINVAL naming the flow and the field. */
int ring_params_from(const struct mix_flow *f, struct ring_params *p, struct ft_err *err);
/* Steps of one all-reduce: 2 (N - 1) (reduce-scatter N - 1, all-gather N - 1). */
int ring_steps(int ranks);
/* Bytes one step moves each way: ceil(S / N). The remainder is padded: every step moves the
 * whole chunk, so one all-reduce moves at most N - 1 bytes per step more than S / N. */
uint64_t ring_chunk(uint64_t size, int ranks);
/* Bytes one all-reduce moves each way: steps x chunk. */
uint64_t ring_op_bytes(uint64_t size, int ranks);
/* nccl-tests' bus bandwidth factor for all_reduce: 2 (N - 1) / N (busbw = algbw x it). */
double ring_busbw_factor(int ranks);
/* The label results carry: "ring all-reduce pattern over TRANSPORT, N ranks emulated between
 * this host and its peer (not NCCL)", or across hosts "..., N ranks on N hosts, this one
 * sending to its successor (the peer) and receiving from its predecessor (not NCCL)". */
void ring_label(const char *transport, int ranks, bool hosts, char *buf, size_t len);

/* One worker's timing of one point, measured window only. */
struct ring_acc {
    uint64_t ops, op_ns;                         /* whole all-reduces and their time */
    uint64_t steps, step_ns, step_min, step_max; /* ring steps and their time (ns) */
    uint64_t wait_ns, send_ns; /* across hosts: waiting for the predecessor, sending on */
};

/* Add one all-reduce of op_ns whose steps took step_ns in all, the shortest step_min and the
 * longest step_max. */
void ring_acc_add(struct ring_acc *a, uint64_t op_ns, int steps, uint64_t step_ns,
                  uint64_t step_min, uint64_t step_max);
/* a += b. */
void ring_acc_merge(struct ring_acc *a, const struct ring_acc *b);
/* An all-to-all's bus bandwidth factor (nccl-tests, alltoall): (N - 1) / N. */
double ring_alltoall_busbw_factor(int ranks);
/* An all-to-all part's point figures, {"alltoall": {pattern, ranks, size_bytes, peer_bytes
 * (ceil(S / N) to this flow's peer and as much from it), alltoalls, alltoall_mean_us,
 * algbw_GBps (S / mean time), busbw_GBps (x (N - 1) / N), busbw_factor, wait_share,
 * send_share, from_peer {chunks, arrival_Gbps} (the peer's share into this rank), bandwidth}};
 * the timed members are left out when nothing was measured. a counts one step per op. */
cJSON *ring_alltoall_figures(const char *transport, int ranks, uint64_t size,
                             const struct ring_acc *a, const struct ring_gate_stats *from_peer);

/* A point's figures, {"ring": {pattern, ranks, size_bytes, chunk_bytes, steps_per_allreduce,
 * bytes_per_allreduce_each_way, allreduces, steps, allreduce_mean_us, step_mean_us,
 * step_min_us, step_max_us, algbw_GBps, busbw_GBps, busbw_factor, bandwidth}}; the timed
 * members are left out when nothing was measured. Across hosts (arrived not NULL) also
 * wait_share and send_share (of the all-reduces' time) and from_predecessor {chunks,
 * arrival_Gbps: the predecessor's link as its chunks arrived, first byte to last}. */
cJSON *ring_figures(const char *transport, int ranks, uint64_t size, const struct ring_acc *a,
                    const struct ring_gate_stats *arrived);

#endif
