/* ring_gate: a process-wide table of named gates, each its feeders' byte counts under a mutex
 * and a condition variable on CLOCK_MONOTONIC. */
#include "engine/flow/ring_gate.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/xalloc.h"

struct feeder {
    char from[RING_GATE_FROM_MAX];
    uint64_t bytes, chunks, arrival_ns, chunk_t0;
    bool closed;
};

struct ring_gate {
    char id[RING_GATE_ID_MAX];
    int holders;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint64_t chunk;
    int expect, nfeeders;
    struct feeder *feeders; /* expect of them, once the first feeder joined */
    int expect_senders, nsenders;
    uint64_t *sent; /* expect_senders of them, once the first sender joined */
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ring_gate *table[RING_GATE_MAX];

struct ring_gate *ring_gate_get(const char *id)
{
    if (!id || !id[0] || strlen(id) >= RING_GATE_ID_MAX)
        return NULL;
    struct ring_gate *g = NULL;
    int free_slot = -1;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < RING_GATE_MAX && !g; i++) {
        if (table[i] && !strcmp(table[i]->id, id))
            g = table[i];
        else if (!table[i] && free_slot < 0)
            free_slot = i;
    }
    if (!g && free_slot >= 0) {
        g = xalloc_zero(1, sizeof(*g));
        strcpy(g->id, id);
        pthread_mutex_init(&g->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&g->cond, &ca);
        pthread_condattr_destroy(&ca);
        table[free_slot] = g;
    }
    if (g)
        g->holders++;
    pthread_mutex_unlock(&table_lock);
    return g;
}

void ring_gate_put(struct ring_gate *g)
{
    if (!g)
        return;
    bool last = false;
    pthread_mutex_lock(&table_lock);
    if (--g->holders == 0) {
        for (int i = 0; i < RING_GATE_MAX; i++)
            if (table[i] == g)
                table[i] = NULL;
        last = true;
    }
    pthread_mutex_unlock(&table_lock);
    if (last) {
        pthread_cond_destroy(&g->cond);
        pthread_mutex_destroy(&g->lock);
        free(g->feeders);
        free(g->sent);
        free(g);
    }
}

int ring_gate_feed(struct ring_gate *g, int expect, const char *from, uint64_t chunk)
{
    if (expect < 1 || expect > RING_GATE_FEEDERS_MAX || !from || strlen(from) >= RING_GATE_FROM_MAX)
        return -EINVAL;
    int rc;
    pthread_mutex_lock(&g->lock);
    if (!g->feeders) {
        g->feeders = xalloc_zero((size_t)expect, sizeof(*g->feeders));
        g->expect = expect;
        g->chunk = chunk;
    }
    rc = g->expect != expect || g->chunk != chunk ? -EINVAL : g->nfeeders == g->expect ? -EBUSY : 0;
    for (int i = 0; i < g->nfeeders && !rc; i++)
        if (!strcmp(g->feeders[i].from, from))
            rc = -EBUSY;
    if (!rc) {
        rc = g->nfeeders++;
        snprintf(g->feeders[rc].from, sizeof(g->feeders[rc].from), "%s", from);
        pthread_cond_broadcast(&g->cond);
    }
    pthread_mutex_unlock(&g->lock);
    return rc;
}

int ring_gate_sender(struct ring_gate *g, int expect)
{
    if (expect < 1 || expect > RING_GATE_FEEDERS_MAX)
        return -EINVAL;
    int rc;
    pthread_mutex_lock(&g->lock);
    if (!g->sent) {
        g->sent = xalloc_zero((size_t)expect, sizeof(*g->sent));
        g->expect_senders = expect;
    }
    rc = g->expect_senders != expect        ? -EINVAL
         : g->nsenders == g->expect_senders ? -EBUSY
                                            : g->nsenders++;
    pthread_mutex_unlock(&g->lock);
    return rc;
}

void ring_gate_sent(struct ring_gate *g, int i, uint64_t bytes)
{
    pthread_mutex_lock(&g->lock);
    g->sent[i] += bytes;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

void ring_gate_arrived(struct ring_gate *g, int i, uint64_t bytes, uint64_t now_ns)
{
    if (!bytes)
        return;
    pthread_mutex_lock(&g->lock);
    struct feeder *f = &g->feeders[i];
    uint64_t before = f->bytes;
    f->bytes += bytes;
    if (g->chunk) {
        if (before % g->chunk == 0) /* this receive brought a chunk's first byte */
            f->chunk_t0 = now_ns;
        /* Every chunk completed by this receive; one started and ended within it took no
         * measurable time and counts as such (its rate is the receive's, not known). */
        uint64_t done = f->bytes / g->chunk - before / g->chunk;
        if (done) {
            f->chunks += done;
            f->arrival_ns += now_ns - f->chunk_t0;
            if (f->bytes % g->chunk) /* the next chunk began in this receive too */
                f->chunk_t0 = now_ns;
        }
    }
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

void ring_gate_close(struct ring_gate *g, int i)
{
    pthread_mutex_lock(&g->lock);
    g->feeders[i].closed = true;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

/* 1 when every expected feeder brought bytes, -ENODATA when one that did not is closed, else
 * 0. Under g->lock. */
static int reached(const struct ring_gate *g, uint64_t bytes)
{
    if (!g->feeders)
        return bytes ? 0 : 1;
    int rc = 1;
    for (int i = 0; i < g->expect_senders; i++)
        if (i >= g->nsenders || g->sent[i] < bytes)
            rc = 0;
    for (int i = 0; i < g->expect; i++) {
        if (i >= g->nfeeders)
            rc = rc == 1 ? 0 : rc;
        else if (g->feeders[i].bytes < bytes)
            rc = g->feeders[i].closed ? -ENODATA : rc == 1 ? 0 : rc;
    }
    return rc;
}

int ring_gate_wait(struct ring_gate *g, uint64_t bytes, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    int rc;
    pthread_mutex_lock(&g->lock);
    while ((rc = reached(g, bytes)) == 0)
        if (pthread_cond_timedwait(&g->cond, &g->lock, &until) == ETIMEDOUT) {
            rc = reached(g, bytes);
            break;
        }
    pthread_mutex_unlock(&g->lock);
    return rc;
}

static void add(struct ring_gate_stats *s, const struct feeder *f)
{
    s->bytes += f->bytes;
    s->chunks += f->chunks;
    s->arrival_ns += f->arrival_ns;
}

void ring_gate_stats(struct ring_gate *g, struct ring_gate_stats *s)
{
    *s = (struct ring_gate_stats){0};
    pthread_mutex_lock(&g->lock);
    for (int i = 0; i < g->nfeeders; i++)
        add(s, &g->feeders[i]);
    pthread_mutex_unlock(&g->lock);
}

int ring_gate_feeder_stats(struct ring_gate *g, const char *from, struct ring_gate_stats *s)
{
    int rc = -ENOENT;
    *s = (struct ring_gate_stats){0};
    pthread_mutex_lock(&g->lock);
    for (int i = 0; i < g->nfeeders; i++)
        if (!strcmp(g->feeders[i].from, from)) {
            add(s, &g->feeders[i]);
            rc = 0;
        }
    pthread_mutex_unlock(&g->lock);
    return rc;
}
