/* kv_worker: the arrivals and the accounting of a kv worker (kv_worker.h). */
#include "engine/flow/kv_worker.h"

#include <stdatomic.h>

void kv_worker_init(struct kv_worker *c, struct kv_plan *k, struct flow_worker *w)
{
    *c = (struct kv_worker){.k = k, .w = w, .rng = w->rng ? w->rng : 1, .point = -1};
}

const struct kv_job *kv_worker_next(struct kv_worker *c)
{
    struct flow_worker *w = c->w;
    struct flow_rt *f = w->flow;
    if (!flow_wait_running(w))
        return NULL;
    int pt = atomic_load(&f->point);
    uint64_t now = flow_now_ns(), due;
    if (pt != c->point) {
        /* Each point starts its arrivals afresh (none queued across a pause). */
        c->point = pt;
        c->base = now;
        c->idx = 0;
    }
    const struct kv_job *jb =
        kv_plan_request(c->k, w->idx, f->nworkers, c->idx++, c->base, &c->next, &c->rng, &due);
    while ((now = flow_now_ns()) < due) {
        if (flow_state(f) >= FLOW_ST_STOP)
            return NULL;
        uint64_t wait = due - now;
        flow_sleep_ns(wait > 2000000 ? 2000000 : wait);
        atomic_store_explicit(&w->last_progress_ns, flow_now_ns(), memory_order_relaxed);
    }
    c->slot = (size_t)w->idx * (size_t)f->npoints + (size_t)pt;
    if (flow_state(f) == FLOW_ST_MEASURE && kv_plan_paced(c->k) && now > due + 1000000) {
        c->k->late[c->slot]++;
        c->k->queued[c->slot] += now - due;
    }
    return jb;
}

void kv_worker_done(struct kv_worker *c, const struct kv_job *jb, uint64_t t0, const uint64_t *dts,
                    bool pull)
{
    struct flow_worker *w = c->w;
    uint64_t ns = flow_now_ns() - t0;
    /* One reading of the state decides whether the request counts (it ended while
     * measuring): its time, its descriptors, it and its bytes all go into the point, or
     * none of them. The point's ops and payload are these (kv_plan_figures), not the
     * window's counter deltas, which a request ending as the window closes can reach on
     * one side of the edge while its time lands on the other. */
    if (flow_state(w->flow) == FLOW_ST_MEASURE) {
        /* The point the request was posted in (c->slot's), for the time as for the rest. */
        flow_record_point(w, (int)(c->slot % (size_t)w->flow->npoints), ns);
        for (long i = 0; i < jb->ndesc; i++)
            hist_record(&c->k->desc[c->slot], dts[i]);
        atomic_fetch_add_explicit(&c->k->measured[c->slot], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&c->k->measured_bytes[c->slot], jb->bytes, memory_order_relaxed);
    }
    flow_progress(w, pull ? 0 : jb->bytes, pull ? jb->bytes : 0, 1);
}
