/* sim_evq: the simulator's event queue (a binary heap over one preallocated array, ordered by
 * time and then insertion order, so ties are deterministic) and its packet pool (one array
 * with a free list: no allocation per packet; it doubles only when a run outgrows it). */
#include "engine/sim/sim_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

uint64_t sim_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static inline bool ev_before(const struct sim_ev *a, const struct sim_ev *b)
{
    /* seq wraps after 2^32 insertions; the signed difference keeps FIFO order for ties
     * between events scheduled less than 2^31 insertions apart. */
    return a->t < b->t || (a->t == b->t && (int32_t)(a->seq - b->seq) < 0);
}

void sim_ev_push(struct sim *s, uint64_t t, enum sim_ev_type type, uint32_t idx)
{
    if (s->nheap == s->heap_cap) {
        s->heap_cap *= 2;
        s->heap = xrealloc(s->heap, (size_t)s->heap_cap * sizeof(*s->heap));
    }
    struct sim_ev e = {t, s->seq++, ((uint32_t)type << EV_SHIFT) | idx};
    struct sim_ev *h = s->heap;
    uint32_t i = s->nheap++;
    while (i) {
        uint32_t parent = (i - 1) >> 1;
        if (!ev_before(&e, &h[parent]))
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = e;
}

bool sim_ev_pop(struct sim *s, struct sim_ev *out)
{
    if (!s->nheap)
        return false;
    struct sim_ev *h = s->heap;
    *out = h[0];
    struct sim_ev last = h[--s->nheap];
    uint32_t n = s->nheap, i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && ev_before(&h[c + 1], &h[c]))
            c++;
        if (!ev_before(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = last;
    return true;
}

int sim_pool_init(struct sim *s, uint32_t n)
{
    s->pkts = xcalloc(n, sizeof(*s->pkts));
    s->npkts = n;
    for (uint32_t i = 0; i < n; i++)
        s->pkts[i].next = i + 1 < n ? i + 1 : SIM_NIL;
    s->free_head = 0;
    return 0;
}

uint32_t sim_pkt_alloc(struct sim *s)
{
    if (s->free_head == SIM_NIL) {
        /* Grow: indices stay valid; amortised, never per packet. */
        uint32_t old = s->npkts, n = old * 2;
        s->pkts = xrealloc(s->pkts, (size_t)n * sizeof(*s->pkts));
        memset(s->pkts + old, 0, (size_t)(n - old) * sizeof(*s->pkts));
        for (uint32_t i = old; i < n; i++)
            s->pkts[i].next = i + 1 < n ? i + 1 : SIM_NIL;
        s->free_head = old;
        s->npkts = n;
    }
    uint32_t i = s->free_head;
    s->free_head = s->pkts[i].next;
    s->pkts[i].next = SIM_NIL;
    s->pkts[i].flags = 0;
    s->live++;
    return i;
}

void sim_pkt_free(struct sim *s, uint32_t i)
{
    s->pkts[i].next = s->free_head;
    s->free_head = i;
    s->live--;
}
