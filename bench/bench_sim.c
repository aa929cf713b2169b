/* bench_sim: the fabric simulator's speed on one core: wall time of the 16-host 400 Gb/s RoCE
 * incast (15 senders x 2 MB into one receiver, 4 KB MTU, 500 ns links, PFC) from building the
 * fabric to the last completion, events per second on it and on the longer 100 Gb/s reference
 * star (1000 B payloads), and the process's peak resident memory.
 * Usage: bench_sim [RUNS]   (default 21; medians with the p10-p90 spread)
 *        bench_sim --once 400|100 [--no-flows]
 *            one run of that star in a fresh process, nothing else (for bench/sim.sh, which
 *            times whole processes against htsim's): prints the simulated completion of the
 *            last flow in us and the events; --no-flows builds and frees the fabric only,
 *            the process's own start-up and set-up cost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "common/jsonutil.h"
#include "engine/sim/sim.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* CPU time of this thread, ns: what the run costs without the time other processes on a
 * shared machine take from it. */
static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct one {
    double total_ms, run_ms, mev_s, sim_us, cpu_total_ms, cpu_run_ms, cpu_mev_s;
    double last_us; /* simulated completion of the last flow */
    unsigned long long events;
};

static const char star400[] =
    "{\"format\":\"fabtop-sim-topology\",\"name\":\"star16-400g\",\"kind\":\"star\","
    "\"hosts\":16,\"link_gbps\":400,\"link_delay_ns\":500}";
static const char star100[] =
    "{\"format\":\"fabtop-sim-topology\",\"name\":\"star16-100g\",\"kind\":\"star\","
    "\"hosts\":16,\"link_gbps\":100,\"link_delay_ns\":1000}";

/* The 15 -> 1 incast of 2 MB each (nflows 15), or the fabric alone (nflows 0). */
static int incast(const char *topo_text, uint32_t mtu, int nflows, struct one *o)
{
    struct ft_err err = {0};
    double t0 = now_ns(), c0 = cpu_ns();
    cJSON *topo = cJSON_Parse(topo_text);
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    p.mtu = mtu;
    struct sim *s;
    if (!topo || sim_new(topo, "bench", &p, &s, &err) < 0) {
        fprintf(stderr, "bench_sim: %s\n", err.msg);
        return -1;
    }
    cJSON_Delete(topo);
    for (int i = 1; i <= nflows; i++) {
        struct sim_app a = {
            .src = i, .dst = 0, .op = SIM_OP_STREAM, .size = 2000000, .nqps = 1, .messages = 1};
        if (sim_app_add(s, &a, &err) < 0) {
            fprintf(stderr, "bench_sim: %s\n", err.msg);
            return -1;
        }
    }
    double t1 = now_ns(), c1 = cpu_ns();
    sim_run(s, UINT64_MAX);
    double t2 = now_ns(), c2 = cpu_ns();
    o->events = sim_events(s);
    o->sim_us = (double)sim_now(s) / 1e6;
    o->last_us = 0;
    for (int i = 0; i < nflows; i++) {
        struct sim_app_stats st;
        sim_app_stats(s, i, &st);
        if ((double)st.last_done / 1e6 > o->last_us)
            o->last_us = (double)st.last_done / 1e6;
    }
    bool ok = !nflows || sim_finished(s);
    sim_free(s);
    double t3 = now_ns(), c3 = cpu_ns();
    o->total_ms = (t3 - t0) / 1e6;
    o->run_ms = (t2 - t1) / 1e6;
    o->mev_s = (double)o->events / ((t2 - t1) / 1e9) / 1e6;
    o->cpu_total_ms = (c3 - c0) / 1e6;
    o->cpu_run_ms = (c2 - c1) / 1e6;
    o->cpu_mev_s = (double)o->events / ((c2 - c1) / 1e9) / 1e6;
    return ok ? 0 : -1;
}

static void report(const char *what, struct one *r, int n)
{
    double *v = malloc((size_t)n * sizeof(double));
    const char *names[6] = {"wall, build to free", "wall, event loop", "events per second",
                            "CPU, build to free",  "CPU, event loop",  "events per CPU second"};
    for (int k = 0; k < 6; k++) {
        for (int i = 0; i < n; i++) {
            const double x[6] = {r[i].total_ms,     r[i].run_ms,     r[i].mev_s,
                                 r[i].cpu_total_ms, r[i].cpu_run_ms, r[i].cpu_mev_s};
            v[i] = x[k];
        }
        qsort(v, (size_t)n, sizeof(double), cmp_d);
        printf("  %-22s %8.3f %s (p10-p90 %.3f-%.3f, n=%d)\n", names[k], v[n / 2],
               k % 3 == 2 ? "M/s" : "ms", v[n / 10], v[n - 1 - n / 10], n);
    }
    printf("  %s: %llu events, %.1f us simulated, last flow done at %.1f us\n", what, r[0].events,
           r[0].sim_us, r[0].last_us);
    free(v);
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--once")) {
        bool g400 = !strcmp(argv[2], "400");
        if (!g400 && strcmp(argv[2], "100")) {
            fprintf(stderr, "bench_sim: --once takes 400 or 100\n");
            return 64;
        }
        int nflows = argc > 3 && !strcmp(argv[3], "--no-flows") ? 0 : 15;
        struct one o;
        if (incast(g400 ? star400 : star100, g400 ? 4096 : 1000, nflows, &o) < 0)
            return 1;
        printf("last flow done at %.3f us, %llu events\n", o.last_us, o.events);
        return 0;
    }
    int runs = argc > 1 ? atoi(argv[1]) : 21;
    if (runs < 1)
        runs = 1;
    struct one *r = calloc((size_t)runs, sizeof(*r));
#ifdef __OPTIMIZE__
    const char *opt = "optimised build";
#else
    const char *opt = "UNOPTIMISED build: numbers mean nothing";
#endif
    printf("%s; one core\n", opt);
    printf("16-host 400 Gb/s incast, 15 x 2 MB, 4 KB MTU, PFC (targets: <= 6 ms, >= 20 M "
           "events/s)\n");
    struct one warm;
    if (incast(star400, 4096, 15, &warm) < 0)
        return 1;
    for (int i = 0; i < runs; i++)
        if (incast(star400, 4096, 15, &r[i]) < 0)
            return 1;
    report("run", r, runs);
    printf("16-host 100 Gb/s reference star, 15 x 2 MB, 1000 B payloads, PFC\n");
    for (int i = 0; i < runs; i++)
        if (incast(star100, 1000, 15, &r[i]) < 0)
            return 1;
    report("run", r, runs);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak resident memory: %.1f MB (target < 100 MB)\n", (double)ru.ru_maxrss / 1024);
    free(r);
    return 0;
}
