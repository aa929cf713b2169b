/* ring_gate: where the two halves of one rank of a collective across hosts meet inside its
 * process (a fabtop sweep rank hosts both): the agent's side, fed by the data connections of
 * the peers this rank receives from (a ring's predecessor; an all-to-all's N - 1 others),
 * counts the bytes each feeder brought and times each chunk's arrival; the client's side
 * waits until every feeder has brought enough before it goes on, as a ring rank waits for its
 * predecessor's chunk before it sends on, and an all-to-all rank for every peer's share. Gates
 * are named by an id all sides are given (the sweep's test) and live while any holds them. */
#ifndef RING_GATE_H
#define RING_GATE_H

#include <stdbool.h>
#include <stdint.h>

#define RING_GATE_ID_MAX      64   /* bytes of an id, its terminator included */
#define RING_GATE_MAX         64   /* gates alive at once in one process */
#define RING_GATE_FEEDERS_MAX 1023 /* feeders of one gate (an all-to-all of 1,024 ranks) */
#define RING_GATE_FROM_MAX    16   /* bytes of a feeder's label ("17": its rank) */

struct ring_gate;

/* The gate named id, created if none is alive (no feeder yet), held once more: NULL when id
 * is empty or too long, or RING_GATE_MAX gates are alive. */
struct ring_gate *ring_gate_get(const char *id);
/* Let go of g (freed with its last holder). NULL is ignored. */
void ring_gate_put(struct ring_gate *g);

/* The agent's side: join g as one of its feeders (expect of them in all, 1 to
 * RING_GATE_FEEDERS_MAX, the same for every feeder; from, the feeder's label, unique), with
 * chunks of chunk bytes (one ring step; one peer's share). The feeder's index, or -EBUSY when
 * g has its expect feeders already or one called from, -EINVAL when expect differs from the
 * first feeder's or is out of range. */
int ring_gate_feed(struct ring_gate *g, int expect, const char *from, uint64_t chunk);
/* The agent's side: bytes more arrived from feeder i at now_ns (CLOCK_MONOTONIC). A chunk's
 * arrival is timed from the receive that brought its first byte to the one that brought its
 * last. */
void ring_gate_arrived(struct ring_gate *g, int i, uint64_t bytes, uint64_t now_ns);
/* The agent's side: feeder i's connection ended. */
void ring_gate_close(struct ring_gate *g, int i);

/* The client's side, an all-to-all's flows (one per peer): join g as one of its expect
 * senders, whose sent bytes the wait counts too, so that no flow starts the next all-to-all
 * before every flow has sent its share of this one. The sender's index, or -EBUSY when g has
 * its senders already, -EINVAL when expect differs from the first sender's or is out of
 * range. */
int ring_gate_sender(struct ring_gate *g, int expect);
/* The client's side: sender i has sent bytes more. */
void ring_gate_sent(struct ring_gate *g, int i, uint64_t bytes);

/* The client's side: wait until every expected feeder has brought at least bytes (and every
 * expected sender sent as much, when g has senders), for up to timeout_ms. 1 reached, 0 not
 * yet, -ENODATA a feeder's connection ended short of it. */
int ring_gate_wait(struct ring_gate *g, uint64_t bytes, int timeout_ms);

/* What arrived, over every feeder: bytes in all, whole chunks timed and their arrival time
 * summed (ns). */
struct ring_gate_stats {
    uint64_t bytes, chunks, arrival_ns;
};
void ring_gate_stats(struct ring_gate *g, struct ring_gate_stats *s);
/* The same for the feeder labelled from: 0, or -ENOENT when none is. */
int ring_gate_feeder_stats(struct ring_gate *g, const char *from, struct ring_gate_stats *s);

#endif
