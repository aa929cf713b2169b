/* bench_sweep: planning and judging a rack sweep of 1,024 ranks x 8 rails (4.19 M rail-aligned
 * pairs): the pairs tournament, then the verdicts on synthetic figures (noisy, one rank's rail
 * degraded to 0.3x), then the second pass's plan. Prints the time of each step, the peak RSS and
 * the verdicts, and checks the plan's size and that the degraded rank alone is named. The time
 * target is checked on CPU time (one thread: wall time on an idle machine), which a shared
 * machine's other load does not inflate; wall time is printed beside it.
 *   bench_sweep [RANKS [RAILS [PER_GROUP]]]      (default 1024 8 32) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <sys/resource.h>

#include "engine/sweep/sweep_verdict.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU time of this process, user and system, s. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static uint64_t rng = 12345;

static double noise(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return 1 + 0.02 * ((double)(rng >> 11) / (double)(1ULL << 52) - 1.0);
}

static struct sweep_rank *make_ranks(uint32_t n, unsigned rails, uint32_t per_group)
{
    static const char *dev[SWEEP_MAX_RAILS] = {"eth0", "eth1", "eth2", "eth3",
                                               "eth4", "eth5", "eth6", "eth7"};
    struct sweep_rank *r = calloc(n, sizeof(*r));
    char(*names)[16] = calloc(n, 16);
    if (!r || !names)
        exit(70);
    for (uint32_t i = 0; i < n; i++) {
        snprintf(names[i], 16, "rk-h%u", i);
        r[i].name = names[i];
        r[i].rails = (1u << rails) - 1;
        r[i].group = (int32_t)(i / per_group);
        for (unsigned k = 0; k < rails && k < 8; k++) {
            r[i].rail_name[k] = dev[k];
            r[i].port_gbps[k] = 400;
        }
    }
    return r;
}

/* The figures a sweep of plan p would bring back: 360 Gb/s, 3 us p50, 8 us p99, 2% noise;
 * rank bad's rail bad_rail at 0.3x. */
static struct sweep_figure *make_figures(const struct sweep_plan *p, uint32_t bad,
                                         unsigned bad_rail)
{
    struct sweep_figure *f = calloc(p->n_tests, sizeof(*f));
    if (!f)
        exit(70);
    for (size_t i = 0; i < p->n_tests; i++) {
        const struct sweep_test *t = &p->tests[i];
        double k = (t->src == bad || t->dst == bad) && t->rail == bad_rail ? 0.3 : 1;
        f[i] = (struct sweep_figure){t->src,
                                     t->dst,
                                     t->rail,
                                     SWEEP_FIG_LAT | SWEEP_FIG_BW_AB | SWEEP_FIG_BW_BA,
                                     0,
                                     3000 * noise(),
                                     8000 * noise(),
                                     360 * k * noise(),
                                     360 * k * noise(),
                                     NULL};
    }
    return f;
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)atoi(argv[1]) : 1024;
    unsigned rails = argc > 2 ? (unsigned)atoi(argv[2]) : 8;
    uint32_t per_group = argc > 3 ? (uint32_t)atoi(argv[3]) : 32;
    struct ft_err err = {0};
    struct sweep_rank *ranks = make_ranks(n, rails, per_group);
    struct sweep_plan plan = {0}, re = {0};
    struct sweep_analysis an;
    struct sweep_plan_opts o = {.rails_mode = SWEEP_RAILS_TOGETHER};

    double c0 = cpu_s(), t0 = now_s();
    if (sweep_plan_pairs(&plan, ranks, n, &o, &err))
        return fprintf(stderr, "%s\n", err.msg), 65;
    double t1 = now_s(), c1 = cpu_s();
    struct sweep_figure *f = make_figures(&plan, n / 2 + 5, rails - 1);
    double c2 = cpu_s(), t2 = now_s();
    if (sweep_judge(ranks, n, f, plan.n_tests, NULL, &an, &err))
        return fprintf(stderr, "%s\n", err.msg), 65;
    double t2b = now_s();
    int rc = sweep_recheck_plan(&an, ranks, f, plan.n_tests, &re, &err);
    double t3 = now_s(), c3 = cpu_s();

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    size_t want = (size_t)n * (n - 1) / 2 * rails;
    printf("ranks %u, rails %u, groups of %u: %zu tests in %zu rounds (want %zu in %u)\n", n, rails,
           per_group, plan.n_tests, plan.n_rounds, want, n % 2 ? n : n - 1);
    printf("plan (pairs tournament):        %8.3f s\n", t1 - t0);
    printf("synthetic figures (not timed):  %8.3f s\n", t2 - t1);
    printf("judge:                          %8.3f s\n", t2b - t2);
    printf("second-pass plan:               %8.3f s\n", t3 - t2b);
    printf("plan + judge, wall:             %8.3f s\n", (t1 - t0) + (t3 - t2));
    printf("plan + judge, CPU time:         %8.3f s   (user + system; target under 2 s)\n",
           (c1 - c0) + (c3 - c2));
    printf("peak RSS:                       %8.1f MB  (target under 512 MB)\n",
           (double)ru.ru_maxrss / 1024.0);
    printf("verdicts: %zu; second pass: %zu tests in %zu rounds (rc %d)\n", an.n_v, re.n_tests,
           re.n_rounds, rc);
    for (size_t k = 0; k < an.n_v && k < 10; k++)
        printf("  %s\n", an.v[k].msg);
    int ok = plan.n_tests == want && an.n_v == 1 && an.v[0].rank == n / 2 + 5 &&
             (c1 - c0) + (c3 - c2) < 2 && ru.ru_maxrss < 512 * 1024;
    printf("targets: %s\n", ok ? "met" : "NOT met");
    free(f);
    sweep_analysis_free(&an);
    sweep_plan_free(&plan);
    sweep_plan_free(&re);
    return ok ? 0 : 1;
}
