/* sim_evq: the simulator's event queue (binary heaps over preallocated arrays, ordered by
 * time and then insertion order, so ties are deterministic; push and pop are inline in
 * sim_int.h) and its packet pool (one array with a free list: no allocation per packet; both
 * double only when a run outgrows them). */
#include "engine/sim/sim_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xalloc.h"

uint64_t sim_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

void sim_ev_grow(struct sim_heap *hp)
{
    hp->cap = hp->cap ? 2 * hp->cap : 256;
    hp->e = xalloc_resize(hp->e, (size_t)hp->cap * sizeof(*hp->e));
    hp->e[hp->n].key = UINT64_MAX; /* the sentinel */
}

int sim_pool_init(struct sim *s, uint32_t n)
{
    s->pkts = xalloc_zero(n, sizeof(*s->pkts));
    s->npkts = n;
    for (uint32_t i = 0; i < n; i++)
        s->pkts[i].next = i + 1 < n ? i + 1 : SIM_NIL;
    s->free_head = 0;
    return 0;
}

void sim_pool_grow(struct sim *s)
{
    /* Indices stay valid; amortised, never per packet. */
    uint32_t old = s->npkts, n = old * 2;
    s->pkts = xalloc_resize(s->pkts, (size_t)n * sizeof(*s->pkts));
    for (uint32_t i = old; i < n; i++)
        s->pkts[i].next = i + 1 < n ? i + 1 : SIM_NIL;
    s->free_head = old;
    s->npkts = n;
}
