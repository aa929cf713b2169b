/* flow: the flow contract's implementation: the clock, the workers' helpers (recording,
 * progress, pacing, size draws, pause and stop), a flow's failure, its events and its
 * placement near its endpoint, and the run-time state's life. What it needs of the run (the
 * event log, waking the run's waits, the topology) comes through struct flow_host, so this
 * file knows nothing of the runner. */
/* CPU sets and pthread_setaffinity_np are GNU extensions. */
#define _GNU_SOURCE
#include "engine/flow/flow.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/xalloc.h"
#include "topology/topo_model.h"

/* ---- clocks and small helpers ---- */

uint64_t flow_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void flow_sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* An event line for the run's log (through the host). */
static void host_event(const struct flow_rt *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void host_event(const struct flow_rt *f, const char *fmt, ...)
{
    if (!f->host || !f->host->event)
        return;
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    f->host->event(f->host->ctx, line);
}

/* ---- worker-side helpers ---- */

/* Documentation/scheduler/sched-stats.rst: /proc/<pid>/schedstat is "time spent on the cpu",
 * "time spent waiting on a runqueue", "# of timeslices run on this cpu". */
bool flow_sched_read(int tid, uint64_t *run, uint64_t *wait)
{
    char path[64];
    if (tid > 0)
        snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
    else
        snprintf(path, sizeof(path), "/proc/thread-self/schedstat");
    FILE *fp = fopen(path, "re");
    if (!fp)
        return false;
    unsigned long long r = 0, q = 0;
    bool ok = fscanf(fp, "%llu %llu", &r, &q) == 2;
    fclose(fp);
    *run = r;
    *wait = q;
    return ok;
}

/* A worker thread: its transport's main, timed. */
static void *worker_thread(void *arg)
{
    struct flow_worker *w = arg;
    uint64_t r0 = 0, q0 = 0, r1 = 0, q1 = 0, t0 = flow_now_ns();
    bool ok = flow_sched_read(0, &r0, &q0);
    void *ret = w->main(w);
    ok = ok && flow_sched_read(0, &r1, &q1) && r1 >= r0 && q1 >= q0;
    w->wall_ns = flow_now_ns() - t0;
    w->run_ns = ok ? r1 - r0 : 0;
    w->wait_ns = ok ? q1 - q0 : 0;
    w->sched_ok = ok;
    return ret;
}

void flow_cpu_add(struct flow_cpu *c, uint64_t wall_ns, uint64_t run_ns, uint64_t wait_ns)
{
    if (!wall_ns)
        return;
    c->workers++;
    c->wall_s += wall_ns / 1e9;
    c->run_s += run_ns / 1e9;
    c->wait_s += wait_ns / 1e9;
    double pct = 100.0 * (double)run_ns / (double)wall_ns;
    if (pct > c->busiest_run_pct)
        c->busiest_run_pct = pct > 100 ? 100 : pct;
}

bool flow_cpu_sum(const struct flow_rt *f, struct flow_cpu *out)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < f->nworkers; i++) {
        const struct flow_worker *w = &f->workers[i];
        if (w->sched_ok)
            flow_cpu_add(out, w->wall_ns, w->run_ns, w->wait_ns);
    }
    return out->workers > 0;
}

cJSON *flow_cpu_json(const struct flow_cpu *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "workers", c->workers);
    cJSON_AddNumberToObject(o, "wall_s", c->wall_s);
    cJSON_AddNumberToObject(o, "run_s", c->run_s);
    cJSON_AddNumberToObject(o, "runqueue_wait_s", c->wait_s);
    /* Of the time the workers wanted a CPU (on one or waiting for one), the share waited. */
    double want = c->run_s + c->wait_s;
    cJSON_AddNumberToObject(o, "runqueue_wait_pct", want > 0 ? 100 * c->wait_s / want : 0);
    /* The one worker most often on a CPU, as a share of its own life: near 100 % it was
     * bound by its core. */
    cJSON_AddNumberToObject(o, "busiest_run_pct", c->busiest_run_pct);
    return o;
}

int flow_start_workers(struct flow_rt *f, void *(*fn)(void *), struct ft_err *err)
{
    for (int i = 0; i < f->nworkers; i++) {
        struct flow_worker *w = &f->workers[i];
        w->main = fn;
        w->sched_ok = false;
        int rc = pthread_create(&w->thread, NULL, worker_thread, w);
        if (rc)
            return ft_err_set(err, -rc, "flow %s: cannot start a worker: %s", f->spec->name,
                              strerror(rc));
        w->started = true;
    }
    return 0;
}

void flow_join_workers(struct flow_rt *f)
{
    for (int i = 0; i < f->nworkers; i++)
        if (f->workers[i].started) {
            pthread_join(f->workers[i].thread, NULL);
            f->workers[i].started = false;
        }
}

const struct topo_model *flow_topology(const struct flow_rt *f)
{
    return f->host ? f->host->topo : NULL;
}

void flow_event(struct flow_rt *f, const char *fmt, ...)
{
    char buf[140];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    host_event(f, "%s: %s", f->spec->name, buf);
}

void flow_record(struct flow_worker *w, uint64_t ns)
{
    struct flow_rt *f = w->flow;
    if (flow_state(f) != FLOW_ST_MEASURE)
        return;
    flow_record_point(w, atomic_load_explicit(&f->point, memory_order_relaxed), ns);
}

/* Keep one operation in trace_every; a full ring drops every other one and halves the rate. */
static void sample_op(struct flow_worker *w, int p, uint64_t ns)
{
    if (++w->trace_skip < w->trace_every)
        return;
    w->trace_skip = 0;
    if (w->ntrace == FLOW_OPS_MAX) {
        for (unsigned i = 0; i < FLOW_OPS_MAX / 2; i++)
            w->trace[i] = w->trace[2 * i + 1];
        w->ntrace = FLOW_OPS_MAX / 2;
        w->trace_every *= 2;
    }
    w->trace[w->ntrace++] = (struct flow_op){flow_now_ns(), ns, p};
}

void flow_trace_ops(struct flow_rt *f)
{
    for (int i = 0; i < f->nworkers_alloc; i++) {
        struct flow_worker *w = &f->workers[i];
        if (!w->trace)
            w->trace = xalloc((size_t)FLOW_OPS_MAX * sizeof(*w->trace));
        w->ntrace = 0;
        w->trace_every = 1;
        w->trace_skip = 0;
    }
}

void flow_record_point(struct flow_worker *w, int p, uint64_t ns)
{
    hist_record(&w->lat[p], ns);
    if (w->trace)
        sample_op(w, p, ns);
    if (!w->step)
        return;
    /* Back-to-back operations of one connection: their latencies add up to the time the
     * step waited on this flow (the gaps between them are the loop's, a few ns). */
    if (p != w->step_point) {
        w->step_point = p;
        w->step_ns = 0;
        w->step_n = 0;
    }
    w->step_ns += ns;
    if (++w->step_n == w->flow->step_ops) {
        hist_record(&w->step[p], w->step_ns);
        w->step_ns = 0;
        w->step_n = 0;
    }
}

void flow_progress(struct flow_worker *w, uint64_t tx, uint64_t rx, uint64_t ops)
{
    /* Single writer per counter: plain load + store, no locked instruction. */
    if (tx)
        atomic_store_explicit(&w->tx_bytes,
                              atomic_load_explicit(&w->tx_bytes, memory_order_relaxed) + tx,
                              memory_order_relaxed);
    if (rx)
        atomic_store_explicit(&w->rx_bytes,
                              atomic_load_explicit(&w->rx_bytes, memory_order_relaxed) + rx,
                              memory_order_relaxed);
    if (ops)
        atomic_store_explicit(&w->ops, atomic_load_explicit(&w->ops, memory_order_relaxed) + ops,
                              memory_order_relaxed);
    uint64_t now = flow_now_ns();
    if (rx || ops)
        atomic_store_explicit(&w->last_progress_ns, now, memory_order_relaxed);
    if (tx)
        atomic_store_explicit(&w->last_tx_ns, now, memory_order_relaxed);
}

uint64_t flow_next_size(struct flow_worker *w)
{
    const struct mix_sizes *s = &w->flow->spec->size;
    if (s->kind != MIX_SIZE_DIST) {
        int p = atomic_load_explicit(&w->flow->point, memory_order_relaxed);
        return w->flow->points[p].size;
    }
    return mix_sizes_draw(s, &w->rng);
}

bool flow_pace(struct flow_worker *w, uint64_t bytes)
{
    struct flow_rt *f = w->flow;
    double rate = f->spec->rate_gbps;
    if (rate <= 0)
        return flow_state(f) < FLOW_ST_STOP;
    /* Token bucket per worker: the flow's rate split evenly over its workers, a burst of at
     * most 1 ms worth of data or two messages, so one late wake-up (a busy host) does not
     * lose rate for good. */
    double bytes_per_ns = rate * 1e9 / 8 / 1e9 / f->nworkers;
    double burst = bytes_per_ns * 1e6;
    if (burst < 2.0 * (double)bytes)
        burst = 2.0 * (double)bytes;
    for (;;) {
        uint64_t now = flow_now_ns();
        if (w->tokens_ns == 0)
            w->tokens_ns = now;
        w->tokens += (double)(now - w->tokens_ns) * bytes_per_ns;
        w->tokens_ns = now;
        if (w->tokens > burst)
            w->tokens = burst;
        if (w->tokens >= (double)bytes) {
            w->tokens -= (double)bytes;
            return true;
        }
        if (flow_state(f) >= FLOW_ST_STOP)
            return false;
        double wait = ((double)bytes - w->tokens) / bytes_per_ns;
        flow_sleep_ns(wait > 2e6 ? 2000000 : (uint64_t)wait);
        atomic_store_explicit(&w->last_progress_ns, flow_now_ns(), memory_order_relaxed);
    }
}

void flow_fail(struct flow_rt *f, const char *fmt, ...)
{
    pthread_mutex_lock(&f->lock);
    bool first = atomic_load(&f->status) != FLOW_FAILED;
    if (first) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->error, sizeof(f->error), fmt, ap);
        va_end(ap);
        f->failed_ns = flow_now_ns();
        f->last_progress_ns = flow_last_alive(f);
        atomic_store(&f->status, FLOW_FAILED);
    }
    pthread_mutex_unlock(&f->lock);
    atomic_store_explicit(&f->state, FLOW_ST_STOP, memory_order_release);
    if (f->host && f->host->nudge)
        f->host->nudge(f->host->ctx);
    if (first)
        host_event(f, "%s FAILED: %s", f->spec->name, f->error);
}

bool flow_wait_running(struct flow_worker *w)
{
    for (;;) {
        enum flow_state s = flow_state(w->flow);
        if (s == FLOW_ST_STOP)
            return false;
        if (s != FLOW_ST_PAUSE && s != FLOW_ST_SETUP)
            return true;
        atomic_store_explicit(&w->last_progress_ns, flow_now_ns(), memory_order_relaxed);
        flow_sleep_ns(200000);
    }
}

/* ---- pinning ---- */

/* CPU list of the PCI device behind the flow's local endpoint, from the topology. */
const char *flow_endpoint_cpus(const struct flow_rt *f)
{
    const struct topo_model *m = flow_topology(f);
    const struct mix_flow *spec = f->spec;
    if (!m)
        return NULL;
    for (int i = 0; i < m->nnetdevs; i++) {
        const struct topo_netdev *d = &m->netdevs[i];
        bool match = (spec->local_netdev[0] && !strcmp(d->name, spec->local_netdev)) ||
                     (spec->local_ip[0] && strstr(d->addrs, spec->local_ip));
        if (match && d->pci >= 0 && m->pci[d->pci].cpuset[0])
            return m->pci[d->pci].cpuset;
    }
    return NULL;
}

static void parse_cpulist(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            break;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long c = a; c <= b && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, set);
        s = *end == ',' ? end + 1 : end;
        if (*end != ',')
            break;
    }
}

void flow_worker_begin(struct flow_worker *w)
{
    struct flow_rt *f = w->flow;
    atomic_store(&w->last_progress_ns, flow_now_ns());
    atomic_store(&w->last_tx_ns, flow_now_ns());
    if (!f->host || !f->host->pin)
        return;
    const char *cpus = flow_endpoint_cpus(f);
    if (!cpus)
        return;
    cpu_set_t set;
    parse_cpulist(cpus, &set);
    if (CPU_COUNT(&set) > 0)
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* ---- the run-time state ---- */

struct flow_rt *flow_new(const struct mix *mix, int index, int phase, const struct xport_ops *xp,
                         const struct flow_host *host)
{
    const struct mix_flow *spec = &mix->flows[index];
    struct flow_rt *f = xalloc_zero(1, sizeof(*f));
    f->spec = spec;
    f->mix = mix;
    f->index = index;
    f->phase = phase;
    f->host = host;
    f->xp = xp;
    pthread_mutex_init(&f->lock, NULL);
    pthread_mutex_init(&f->xp_lock, NULL);
    f->fail_bound_s = mix->fail_bound_s;
    f->progress_deadline_s = mix->progress_deadline_s;
    atomic_init(&f->state, FLOW_ST_SETUP);
    atomic_init(&f->status, FLOW_PENDING);
    if (spec->size.kind == MIX_SIZE_SWEEP) {
        f->npoints = spec->size.n;
        for (int i = 0; i < f->npoints; i++)
            f->points[i].size = spec->size.bytes[i];
    } else {
        f->npoints = 1;
        f->points[0].size = spec->size.kind == MIX_SIZE_FIXED ? spec->size.bytes[0] : 0;
    }
    /* A decode step's share of the flow is timed whole when it is a whole number of its
     * operations, each of which has a latency. */
    if (spec->per_step >= 1 && spec->per_step <= FLOW_MAX_STEP_OPS &&
        spec->per_step == (double)(unsigned)spec->per_step &&
        mix_latency_kind_of(spec) != MIX_LAT_NONE)
        f->step_ops = (unsigned)spec->per_step;
    /* One worker per connection; bidirectional streams get a sender and a receiver. */
    int n = spec->concurrency;
    if (spec->op == MIX_OP_STREAM && spec->dir == MIX_DIR_BIDIR)
        n *= 2;
    f->nworkers = f->nworkers_alloc = n;
    f->workers = xalloc_zero((size_t)n, sizeof(*f->workers));
    for (int i = 0; i < n; i++) {
        struct flow_worker *w = &f->workers[i];
        w->flow = f;
        w->idx = i;
        w->fd = -1;
        w->rng = spec->seed * 1000003u + (uint64_t)i + 1;
        w->lat = xalloc((size_t)f->npoints * sizeof(struct hist));
        for (int p = 0; p < f->npoints; p++)
            hist_init(&w->lat[p]);
        if (f->step_ops) {
            w->step = xalloc((size_t)f->npoints * sizeof(struct hist));
            for (int p = 0; p < f->npoints; p++)
                hist_init(&w->step[p]);
        }
    }
    return f;
}

void flow_free(struct flow_rt *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->nworkers_alloc; i++) {
        free(f->workers[i].lat);
        free(f->workers[i].step);
        free(f->workers[i].trace);
    }
    free(f->workers);
    cJSON_Delete(f->conditions);
    free(f->own);
    cJSON_Delete(f->own_report);
    pthread_mutex_destroy(&f->lock);
    pthread_mutex_destroy(&f->xp_lock);
    free(f);
}

void flow_sum_counters(const struct flow_rt *f, uint64_t *tx, uint64_t *rx, uint64_t *ops)
{
    *tx = *rx = *ops = 0;
    for (int i = 0; i < f->nworkers; i++) {
        *tx += atomic_load_explicit(&f->workers[i].tx_bytes, memory_order_relaxed);
        *rx += atomic_load_explicit(&f->workers[i].rx_bytes, memory_order_relaxed);
        *ops += atomic_load_explicit(&f->workers[i].ops, memory_order_relaxed);
    }
}

/* When did the flow last show it is alive? Received bytes, completed operations and waits
 * by design count; sent bytes count only through what the peer acknowledged when the
 * transport can see that (TCP), since writes into a socket buffer succeed on a dead path. */
uint64_t flow_last_alive(const struct flow_rt *f)
{
    uint64_t last = 0;
    for (int i = 0; i < f->nworkers; i++) {
        uint64_t l = atomic_load_explicit(&f->workers[i].last_progress_ns, memory_order_relaxed);
        if (l > last)
            last = l;
        if (!f->wire.valid) {
            l = atomic_load_explicit(&f->workers[i].last_tx_ns, memory_order_relaxed);
            if (l > last)
                last = l;
        }
    }
    if (f->wire.valid && f->last_ack_ns > last)
        last = f->last_ack_ns;
    return last;
}
