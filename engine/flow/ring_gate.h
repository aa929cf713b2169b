/* ring_gate: where the two halves of one rank of a ring all-reduce across hosts meet inside
 * its process (a fabtop sweep rank hosts both): the agent's side, fed by the predecessor's
 * data connection, counts the bytes that arrived and times each chunk's arrival; the client's
 * side, sending to the successor, waits on that count before each step, as a ring rank waits
 * for its predecessor's chunk before it sends on. Gates are named by an id both sides are
 * given (the sweep's test) and live while either side holds them. */
#ifndef RING_GATE_H
#define RING_GATE_H

#include <stdbool.h>
#include <stdint.h>

#define RING_GATE_ID_MAX 64 /* bytes of an id, its terminator included */
#define RING_GATE_MAX    64 /* gates alive at once in one process */

struct ring_gate;

/* The gate named id, created if none is alive (its count 0), held once more: NULL when id is
 * empty or too long, or RING_GATE_MAX gates are alive. */
struct ring_gate *ring_gate_get(const char *id);
/* Let go of g (freed with its last holder). NULL is ignored. */
void ring_gate_put(struct ring_gate *g);

/* The agent's side: take the gate as the one connection that feeds it: 0, or -EBUSY when
 * another already did (a second feeder would count bytes that are not the predecessor's). */
int ring_gate_feed(struct ring_gate *g);
/* The agent's side: the chunk size (bytes of one ring step), set before bytes arrive. */
void ring_gate_chunk(struct ring_gate *g, uint64_t chunk);
/* The agent's side: bytes more arrived from the predecessor at now_ns (CLOCK_MONOTONIC). A
 * chunk's arrival is timed from the receive that brought its first byte to the one that
 * brought its last. */
void ring_gate_arrived(struct ring_gate *g, uint64_t bytes, uint64_t now_ns);
/* The agent's side: the predecessor's connection ended; waiters stop waiting. */
void ring_gate_close(struct ring_gate *g);

/* The client's side: wait until at least bytes arrived in all, for up to timeout_ms.
 * 1 reached, 0 not yet, -ENODATA the predecessor's connection ended before. */
int ring_gate_wait(struct ring_gate *g, uint64_t bytes, int timeout_ms);

/* What arrived: bytes in all, whole chunks timed and their arrival time summed (ns). */
struct ring_gate_stats {
    uint64_t bytes, chunks, arrival_ns;
};
void ring_gate_stats(struct ring_gate *g, struct ring_gate_stats *s);

#endif
