/* ring_gate: a process-wide table of named gates, each a byte count under a mutex and a
 * condition variable on CLOCK_MONOTONIC. */
#include "engine/flow/ring_gate.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/xalloc.h"

struct ring_gate {
    char id[RING_GATE_ID_MAX];
    int holders;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint64_t chunk, bytes, chunks, arrival_ns, chunk_t0;
    bool closed, fed;
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
        free(g);
    }
}

int ring_gate_feed(struct ring_gate *g)
{
    pthread_mutex_lock(&g->lock);
    int rc = g->fed ? -EBUSY : 0;
    g->fed = true;
    pthread_mutex_unlock(&g->lock);
    return rc;
}

void ring_gate_chunk(struct ring_gate *g, uint64_t chunk)
{
    pthread_mutex_lock(&g->lock);
    g->chunk = chunk;
    pthread_mutex_unlock(&g->lock);
}

void ring_gate_arrived(struct ring_gate *g, uint64_t bytes, uint64_t now_ns)
{
    if (!bytes)
        return;
    pthread_mutex_lock(&g->lock);
    uint64_t before = g->bytes;
    g->bytes += bytes;
    if (g->chunk) {
        if (before % g->chunk == 0) /* this receive brought a chunk's first byte */
            g->chunk_t0 = now_ns;
        /* Every chunk completed by this receive; one started and ended within it took no
         * measurable time and counts as such (its rate is the receive's, not known). */
        uint64_t done = g->bytes / g->chunk - before / g->chunk;
        if (done) {
            g->chunks += done;
            g->arrival_ns += now_ns - g->chunk_t0;
            if (g->bytes % g->chunk) /* the next chunk began in this receive too */
                g->chunk_t0 = now_ns;
        }
    }
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

void ring_gate_close(struct ring_gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->closed = true;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
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
    int rc = 0;
    pthread_mutex_lock(&g->lock);
    for (;;) {
        if (g->bytes >= bytes) {
            rc = 1;
            break;
        }
        if (g->closed) {
            rc = -ENODATA;
            break;
        }
        if (pthread_cond_timedwait(&g->cond, &g->lock, &until) == ETIMEDOUT) {
            rc = g->bytes >= bytes ? 1 : 0;
            break;
        }
    }
    pthread_mutex_unlock(&g->lock);
    return rc;
}

void ring_gate_stats(struct ring_gate *g, struct ring_gate_stats *s)
{
    pthread_mutex_lock(&g->lock);
    *s = (struct ring_gate_stats){g->bytes, g->chunks, g->arrival_ns};
    pthread_mutex_unlock(&g->lock);
}
