/* score: the scoreboard's arithmetic (Jain's index on known inputs, the share within an SLO
 * from a histogram, the step budget and the tokens/s bound), --slo and the budget options'
 * refusals, the scoreboard built from a hand-made run and mix, its round trip through the
 * results reader and writer byte for byte, and compare naming the class that got worse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/xalloc.h"
#include "engine/results/compare.h"
#include "engine/results/results_json.h"
#include "engine/results/score.h"

static void jain_known(void **state)
{
    (void)state;
    double eq[4] = {5, 5, 5, 5};
    assert_float_equal(score_jain(eq, 4), 1.0, 1e-12);
    double alone[4] = {0, 7, 0, 0};
    assert_float_equal(score_jain(alone, 4), 0.25, 1e-12);
    double one[1] = {3};
    assert_float_equal(score_jain(one, 1), 1.0, 1e-12);
    /* (1 + 3)^2 / (2 (1 + 9)) = 0.8 */
    double two[2] = {1, 3};
    assert_float_equal(score_jain(two, 2), 0.8, 1e-12);
    assert_true(isnan(score_jain(eq, 0)));
    double zero[3] = {0, 0, 0};
    assert_true(isnan(score_jain(zero, 3)));
}

static void within_hist(void **state)
{
    (void)state;
    struct hist *h = xalloc(sizeof(*h));
    hist_init(h);
    assert_true(isnan(score_hist_within(h, 10)));
    /* 90 samples at 10 us, 10 at 100 us. */
    for (int i = 0; i < 90; i++)
        hist_record(h, 10000);
    for (int i = 0; i < 10; i++)
        hist_record(h, 100000);
    assert_float_equal(score_hist_within(h, 50), 0.9, 1e-12);
    assert_float_equal(score_hist_within(h, 100), 1.0, 1e-12); /* max at the bound */
    assert_float_equal(score_hist_within(h, 5), 0.0, 1e-12);   /* min above it */
    /* A bucket straddling the bound does not count: 10 us lies in a bucket wider than 1 ns. */
    assert_float_equal(score_hist_within(h, 10.0005), 0.0, 1e-12);
    free(h);
}

static void step_arith(void **state)
{
    (void)state;
    double share, tps;
    score_step(5000, 25, &share, &tps); /* 5 ms of a 25 ms step */
    assert_float_equal(share, 0.2, 1e-12);
    assert_float_equal(tps, 200, 1e-9);
    score_step(5000, 0, &share, &tps);
    assert_true(isnan(share));
    assert_float_equal(tps, 200, 1e-9);
    score_step(0, 25, &share, &tps);
    assert_float_equal(share, 0, 1e-12);
    assert_true(isnan(tps));
    struct score_opts o = {0};
    struct ft_err err = {0};
    assert_int_equal(score_set_target_tps(&o, "40", &err), 0);
    assert_float_equal(o.step_budget_ms, 25, 1e-12);
    assert_string_equal(o.budget_from, "--target-tps 40");
    assert_int_equal(score_set_step_budget(&o, "25000us", &err), 0);
    assert_float_equal(o.step_budget_ms, 25, 1e-12);
    assert_int_equal(score_set_step_budget(&o, "0.02s", &err), 0);
    assert_float_equal(o.step_budget_ms, 20, 1e-12);
    assert_int_equal(score_set_step_budget(&o, "25", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "--step-budget '25'"));
    assert_int_equal(score_set_target_tps(&o, "0", &err), -EINVAL);
    err = (struct ft_err){0};
    assert_int_equal(score_set_target_tps(&o, "4x", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "--target-tps '4x'"));
}

static void slo_refused(const char *s, const char *want)
{
    struct score_opts o = {0};
    struct ft_err err = {0};
    assert_int_equal(score_slo_parse(s, &o, &err), -EINVAL);
    if (!strstr(err.msg, want))
        fail_msg("--slo '%s': message \"%s\" lacks \"%s\"", s, err.msg, want);
    assert_null(strchr(err.msg, '\n'));
}

static void slo_parse(void **state)
{
    (void)state;
    struct score_opts o = {0};
    struct ft_err err = {0};
    assert_int_equal(score_slo_parse("kv:p99<30ms,tp:p99.9<80us,api:max<1s", &o, &err), 0);
    assert_int_equal(o.nslo, 3);
    assert_string_equal(o.slo[0].class_name, "kv");
    assert_string_equal(o.slo[0].stat, "p99");
    assert_float_equal(o.slo[0].bound_us, 30000, 1e-9);
    assert_string_equal(o.slo[0].text, "p99<30ms");
    assert_float_equal(o.slo[1].pct, 99.9, 1e-12);
    assert_float_equal(o.slo[1].bound_us, 80, 1e-12);
    assert_float_equal(o.slo[2].pct, 100, 1e-12);
    assert_float_equal(o.slo[2].bound_us, 1e6, 1e-6);

    slo_refused("p99<80us", "'p99<80us': no CLASS:");
    slo_refused("tp:p99", "'tp:p99': no '<'");
    slo_refused("tp:mxa<80us", "unknown statistic 'mxa' (did you mean 'max'? ");
    slo_refused("tp:mean<80us", "unknown statistic 'mean' (use p50, p90, p99");
    slo_refused("tp:p99<80", "the bound '80' is not a positive time with its unit");
    slo_refused("tp:p99<-3ms", "the bound '-3ms'");
    slo_refused("tp:p99<80us,tp:p50<1ms", "'tp:p50<1ms': class tp has an SLO already (p99<80us)");
    slo_refused("tp:p99<80us,", "--slo: an empty term");
    slo_refused("averyveryverylongclass:p99<1ms", "the class is longer than 15 characters");

    /* A class no flow of the mix has. */
    struct mix m = {.nflows = 1};
    snprintf(m.name, sizeof(m.name), "small");
    snprintf(m.flows[0].name, sizeof(m.flows[0].name), "probe");
    snprintf(m.flows[0].class_name, sizeof(m.flows[0].class_name), "tp");
    struct score_opts k = {0};
    assert_int_equal(score_slo_parse("tp:p99<1ms,kv:p99<30ms", &k, &err), 0);
    assert_int_equal(score_slo_check_mix(&k, &m, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'kv:p99<30ms': no flow of mix small has class kv"));
}

/* ---- a hand-made run ---- */

/* A flow of a phase: samples at us microseconds (n of them, then nslow at slow_us), ops over
 * one second. */
static void add_flow(struct results_phase *ph, const char *name, const char *cls, int n, double us,
                     int nslow, double slow_us)
{
    struct results_flow *f = &ph->flows[ph->nflows++];
    results_str_set(&f->name, name);
    if (cls)
        results_str_set(&f->class_name, cls);
    results_str_set(&f->status, "ok");
    f->points_st = RESULTS_SET;
    f->points = xalloc_zero(1, sizeof(*f->points));
    f->npoints = 1;
    struct results_point *p = &f->points[0];
    p->measured = p->complete = (struct results_bool){RESULTS_SET, true};
    results_num_set(&p->size_bytes, true, 4096);
    results_num_set(&p->measure_s, true, 1);
    results_num_set(&p->ops, true, n + nslow);
    results_num_set(&p->payload_bytes, true, 4096.0 * (n + nslow));
    p->histogram = xalloc(sizeof(*p->histogram));
    hist_init(p->histogram);
    for (int i = 0; i < n; i++)
        hist_record(p->histogram, (uint64_t)(us * 1e3));
    for (int i = 0; i < nslow; i++)
        hist_record(p->histogram, (uint64_t)(slow_us * 1e3));
    p->latency_st = RESULTS_SET;
    results_num_set(&p->latency.p99, true, us);
}

static void mix_flow(struct mix *m, const char *name, const char *cls, enum mix_op op,
                     double per_step)
{
    struct mix_flow *f = &m->flows[m->nflows++];
    snprintf(f->name, sizeof(f->name), "%s", name);
    snprintf(f->class_name, sizeof(f->class_name), "%s", cls);
    f->op = op;
    f->per_step = per_step;
}

/* quiet: tp alone; loaded: tp slower in its tail, two kv flows (one with 3x the ops). */
static void make_run(struct results_run *r, struct mix *m, double kv_slow_us)
{
    memset(r, 0, sizeof(*r));
    memset(m, 0, sizeof(*m));
    snprintf(m->name, sizeof(m->name), "hand");
    mix_flow(m, "tp-decode", "tp", MIX_OP_PINGPONG, 64);
    mix_flow(m, "kv-a", "kv", MIX_OP_RR, 0);
    mix_flow(m, "kv-b", "kv", MIX_OP_RR, 0);
    results_str_set(&r->format, RESULTS_FORMAT);
    results_num_set(&r->version, true, RESULTS_VERSION);
    r->phases_st = RESULTS_SET;
    r->phases = xalloc_zero(2, sizeof(*r->phases));
    r->nphases = 2;
    struct results_phase *q = &r->phases[0], *l = &r->phases[1];
    results_str_set(&q->name, "quiet");
    results_str_set(&l->name, "loaded");
    q->flows_st = l->flows_st = RESULTS_SET;
    q->flows = xalloc_zero(3, sizeof(*q->flows));
    l->flows = xalloc_zero(3, sizeof(*l->flows));
    add_flow(q, "tp-decode", "tp", 100, 20, 0, 0);
    add_flow(l, "tp-decode", "tp", 98, 20, 2, 100);
    add_flow(l, "kv-a", "kv", 90, 1000, 10, kv_slow_us);
    add_flow(l, "kv-b", "kv", 270, 1000, 30, kv_slow_us);
}

static void build_and_roundtrip(void **state)
{
    (void)state;
    struct results_run r;
    struct mix m;
    make_run(&r, &m, 50000);
    struct score_opts o = {0};
    struct ft_err err = {0};
    assert_int_equal(score_slo_parse("tp:p99<50us,kv:p99<30ms", &o, &err), 0);
    assert_int_equal(score_set_step_budget(&o, "25ms", &err), 0);
    score_build(&r, &m, &o);
    const struct results_scoreboard *b = &r.scoreboard;
    assert_int_equal(b->st, RESULTS_SET);
    assert_int_equal(b->nclasses, 2);
    const struct results_score_class *tp = &b->classes[0], *kv = &b->classes[1];
    assert_string_equal(tp->name, "tp");
    assert_string_equal(kv->name, "kv");
    /* tp: quiet 100 x 20 us; loaded 98 x 20 us + 2 x 100 us: p99 is 100 us (rank 99). */
    assert_float_equal(tp->quiet.p99_us.v, 20, 0.1);
    assert_float_equal(tp->loaded.p99_us.v, 100, 0.5);
    assert_float_equal(tp->p99_loaded_over_quiet.v, 5, 0.05);
    assert_float_equal(tp->loaded.within_slo.v, 0.98, 1e-12);
    assert_int_equal(tp->slo_met.st, RESULTS_SET);
    assert_false(tp->slo_met.v);
    assert_float_equal(tp->loaded.fairness_jain.v, 1, 1e-12); /* one flow */
    /* kv: 400 samples, 40 of them at 50 ms over a 30 ms bound; no quiet phase. */
    assert_float_equal(kv->loaded.samples.v, 400, 0);
    assert_float_equal(kv->loaded.within_slo.v, 0.9, 1e-12);
    assert_int_equal(kv->quiet.st, RESULTS_ABSENT);
    assert_int_equal(kv->p99_loaded_over_quiet.st, RESULTS_ABSENT);
    /* Op rates 100/s and 300/s: (400)^2 / (2 (100^2 + 300^2)) = 0.8. */
    assert_string_equal(kv->fairness_of.s, "ops_per_s");
    assert_float_equal(kv->loaded.fairness_jain.v, 0.8, 1e-12);
    /* The step: 64 x tp's p50 (20 us) = 1280 us, 5.12% of 25 ms, 781 tokens/s. */
    const struct results_score_step *st = &b->step;
    assert_int_equal(st->st, RESULTS_SET);
    assert_int_equal(st->nterms, 1);
    assert_string_equal(st->terms[0].flow, "tp-decode");
    assert_float_equal(st->quiet.comm_p50_us.v, 1280, 5);
    assert_float_equal(st->quiet.budget_share_p50.v, 0.0512, 0.0002);
    assert_float_equal(st->quiet.tokens_per_s_p50.v, 1e6 / st->quiet.comm_p50_us.v, 1e-9);
    assert_float_equal(st->loaded.comm_p99_us.v, 6400, 30);
    assert_float_equal(st->budget_ms.v, 25, 0);

    /* Written, read back, written again: the same bytes. */
    cJSON *j = results_json_write_run(&r);
    char *t1 = cJSON_Print(j);
    assert_non_null(strstr(t1, "\"scoreboard\""));
    assert_non_null(strstr(t1, "\"class\":\t\"kv\""));
    assert_non_null(strstr(t1, "\"fairness_jain\""));
    struct results_run back;
    assert_int_equal(results_json_read_run(j, "hand.json", &back, &err), 0);
    assert_int_equal(back.scoreboard.nclasses, 2);
    assert_float_equal(back.scoreboard.classes[1].loaded.within_slo.v, 0.9, 1e-12);
    assert_string_equal(back.phases[1].flows[1].class_name.s, "kv");
    cJSON *j2 = results_json_write_run(&back);
    char *t2 = cJSON_Print(j2);
    assert_string_equal(t1, t2);
    /* The reader's refusal: a class without its name. */
    cJSON *cls = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j2, "scoreboard"), "classes"), 1);
    cJSON_DeleteItemFromObject(cls, "class");
    struct results_run bad;
    assert_int_equal(results_json_read_run(j2, "hand.json", &bad, &err), -EBADMSG);
    assert_non_null(strstr(err.msg, "scoreboard.classes[1].class"));
    free(t1);
    free(t2);
    cJSON_Delete(j);
    cJSON_Delete(j2);
    results_run_free(&back);
    results_run_free(&r);
}

/* Write back (read from j) again: the same text as t1. Frees t1, j, back and r. */
static void same_again(char *t1, cJSON *j, struct results_run *back, struct results_run *r)
{
    cJSON *j2 = results_json_write_run(back);
    char *t2 = cJSON_Print(j2);
    assert_string_equal(t1, t2);
    free(t1);
    free(t2);
    cJSON_Delete(j);
    cJSON_Delete(j2);
    results_run_free(back);
    results_run_free(r);
}

/* A term with measured steps counts the step's own percentiles, not per_step x the
 * operation's; a term without them counts per_step x its operation's, and the step is read
 * back from the document as it was written. */
static void measured_step(void **state)
{
    (void)state;
    struct results_run r;
    struct mix m;
    make_run(&r, &m, 50000);
    m.flows[1].per_step = 2; /* kv-a: 90 x 1000 us + 10 x 50 ms, no steps of its own */
    struct results_point *p = &r.phases[1].flows[0].points[0]; /* loaded tp-decode */
    p->step_st = RESULTS_SET;
    results_num_set(&p->step_ops, true, 64);
    p->step_histogram = xalloc(sizeof(*p->step_histogram));
    hist_init(p->step_histogram);
    /* Steps of 64 operations at 20 us would be 1280 us; their tail is not 64 x 100 us. */
    for (int i = 0; i < 95; i++)
        hist_record(p->step_histogram, 1300000);
    for (int i = 0; i < 5; i++)
        hist_record(p->step_histogram, 2000000);
    score_build(&r, &m, NULL);
    const struct results_score_step *st = &r.scoreboard.step;
    assert_int_equal(st->nterms, 2);
    /* Loaded: tp's steps 95% 1300 and 5% 2000 us; kv-a 90% 2 x 1000 us and 10% 2 x 50 ms.
     * Summed as independent: 85.5% 3300, 4.5% 4000, 9.5% 101300 and 0.5% 102000 us, so the
     * p50 is 3300 and the p99 101300 (each within a bucket: 0.4%, twice); each term at its
     * own p99, 2000 + 100000 us, is the upper figure. */
    assert_float_equal(st->loaded.comm_p50_us.v, 1300 + 2000, 15);
    assert_float_equal(st->loaded.comm_p99_us.v, 1300 + 100000, 800);
    assert_true(st->loaded.comm_p99_us.v < 101300 + 400);
    assert_float_equal(st->loaded.comm_p99_upper_us.v, 2000 + 100000, 600);
    /* Quiet: no steps measured, kv-a absent there: 64 x 20 us. */
    assert_float_equal(st->quiet.comm_p99_us.v, 1280, 10);
    assert_float_equal(st->quiet.comm_p99_upper_us.v, 1280, 10); /* one term: the same */
    assert_float_equal(st->loaded.steps_measured.v, 100, 0);
    assert_int_equal(st->quiet.steps_measured.st, RESULTS_ABSENT);
    assert_non_null(strstr(r.scoreboard.step.basis.s, "consecutive"));

    cJSON *j = results_json_write_run(&r);
    char *t1 = cJSON_Print(j);
    struct results_run back;
    struct ft_err err = {0};
    assert_int_equal(results_json_read_run(j, "step.json", &back, &err), 0);
    const struct results_point *bp = &back.phases[1].flows[0].points[0];
    assert_int_equal(bp->step_st, RESULTS_SET);
    assert_float_equal(bp->step_ops.v, 64, 0);
    assert_non_null(bp->step_histogram);
    assert_int_equal(atomic_load(&bp->step_histogram->count), 100);
    assert_int_equal(back.phases[1].flows[1].points[0].step_st, RESULTS_ABSENT);
    assert_null(bp->figures); /* "step" is not a transport figure */
    same_again(t1, j, &back, &r);
}

static void no_class_no_scoreboard(void **state)
{
    (void)state;
    struct results_run r;
    struct mix m;
    make_run(&r, &m, 50000);
    for (int i = 0; i < m.nflows; i++) {
        m.flows[i].class_name[0] = '\0';
        m.flows[i].per_step = 0;
    }
    score_build(&r, &m, NULL);
    assert_int_equal(r.scoreboard.st, RESULTS_ABSENT);
    results_run_free(&r);
}

static void compare_names_worse(void **state)
{
    (void)state;
    struct results_run a, b;
    struct mix ma, mb;
    struct score_opts o = {0};
    struct ft_err err = {0};
    assert_int_equal(score_slo_parse("kv:p99<30ms", &o, &err), 0);
    make_run(&a, &ma, 20000); /* kv's tail under its 30 ms bound */
    make_run(&b, &mb, 50000); /* over it */
    score_build(&a, &ma, &o);
    score_build(&b, &mb, &o);
    struct compare_result r;
    compare_runs(&a, &b, &r);
    assert_int_equal(r.nclasses, 2);
    assert_string_equal(r.classes[1].name, "kv");
    assert_true(r.classes[1].worse);
    assert_false(r.classes[0].worse); /* tp the same */
    if (!strstr(r.worse, "class kv (p99 x2.50") || !strstr(r.worse, "within SLO 100.0% -> 90.0%") ||
        !strstr(r.worse, "SLO p99<30ms met in A, not in B"))
        fail_msg("worse: \"%s\"", r.worse);
    assert_null(strstr(r.worse, "class tp"));
    cJSON *j = compare_to_json(&r);
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "classes"), 1);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c, "worse")));
    cJSON_Delete(j);
    compare_free(&r);
    /* B against A: nothing got worse. */
    compare_runs(&b, &a, &r);
    assert_string_equal(r.worse, "");
    compare_free(&r);
    results_run_free(&a);
    results_run_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jain_known),          cmocka_unit_test(within_hist),
        cmocka_unit_test(step_arith),          cmocka_unit_test(slo_parse),
        cmocka_unit_test(build_and_roundtrip), cmocka_unit_test(no_class_no_scoreboard),
        cmocka_unit_test(compare_names_worse), cmocka_unit_test(measured_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
