/* kv_worker: what every transport's kv worker does around moving one request
 * (engine/flow/kv.h builds the plan): wait for the request's arrival, count it late when it
 * is posted over 1 ms after, and after the move record its time, its descriptors and the
 * bytes. The transports keep only the moving itself (TCP's vectored writes, verbs' work
 * requests). */
#ifndef KV_WORKER_H
#define KV_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/flow/flow.h"
#include "engine/flow/kv.h"

/* One worker's place in its arrivals. */
struct kv_worker {
    struct kv_plan *k;
    struct flow_worker *w;
    uint64_t rng, base, next, idx;
    int point;
    size_t slot; /* the request's [worker][point] histogram slot */
};

void kv_worker_init(struct kv_worker *c, struct kv_plan *k, struct flow_worker *w);

/* The worker's next request, once it is due (the worker's progress kept fresh while it
 * waits; each point starts its arrivals afresh); NULL when the flow stops first. */
const struct kv_job *kv_worker_next(struct kv_worker *c);

/* A request moved: its time from t0, its descriptors' times dts (while measuring), and its
 * bytes, as received when pulled, else as sent. */
void kv_worker_done(struct kv_worker *c, const struct kv_job *jb, uint64_t t0, const uint64_t *dts,
                    bool pull);

#endif
