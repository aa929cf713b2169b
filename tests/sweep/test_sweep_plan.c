/* test_sweep_plan: the rounds of fabtop sweep's patterns: the tournament (every unordered pair
 * once per common rail, each rank facing one peer and each NIC in one test per round, N-1 rounds
 * for even N and N for odd), incast (quiet probe, then k senders and the probe), seeded
 * bisection splits and the group split, the ring, packing, and the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/sweep/sweep_plan.h"

#define MAXN 64

static struct sweep_rank ranks[MAXN + 1];

/* Layouts: 0 one rail; 1 eight rails; 2 mixed (rank r has rails 0..(r%4)*2, rank 5 lacks 0). */
static void layout(uint32_t n, int kind)
{
    memset(ranks, 0, sizeof(ranks));
    for (uint32_t r = 0; r < n; r++) {
        ranks[r].name = "h";
        ranks[r].group = SWEEP_GROUP_UNKNOWN;
        ranks[r].rails = kind == 0 ? 1u : kind == 1 ? 0xffu : (2u << ((r % 4) * 2)) - 1;
        if (kind == 2 && r == 5)
            ranks[r].rails = 0x6;
    }
}

/* Every unordered pair on every common rail exactly once; per round each (rank, rail) at most
 * once and each rank with one peer (together) or in one test (apart). */
static void check_pairs(const struct sweep_plan *p, uint32_t n, enum sweep_rails_mode mode)
{
    static uint8_t seen[MAXN][MAXN][SWEEP_MAX_RAILS];
    uint32_t peer[MAXN];
    uint32_t used[MAXN];
    memset(seen, 0, sizeof(seen));
    for (size_t k = 0; k < p->n_rounds; k++) {
        const struct sweep_round *rd = &p->rounds[k];
        assert_int_equal(rd->pattern, SWEEP_PAIRS);
        assert_true(rd->count > 0);
        memset(used, 0, sizeof(used));
        for (uint32_t r = 0; r < n; r++)
            peer[r] = SWEEP_NO_RANK;
        for (size_t i = rd->first; i < rd->first + rd->count; i++) {
            const struct sweep_test *t = &p->tests[i];
            assert_true(t->src < t->dst && t->dst < n);
            assert_true(sweep_plan_common_rails(&ranks[t->src], &ranks[t->dst]) & (1u << t->rail));
            for (int e = 0; e < 2; e++) {
                uint32_t me = e ? t->dst : t->src, other = e ? t->src : t->dst;
                assert_false(used[me] & (1u << t->rail));
                used[me] |= 1u << t->rail;
                assert_true(peer[me] == SWEEP_NO_RANK || peer[me] == other);
                peer[me] = other;
                if (mode == SWEEP_RAILS_APART)
                    assert_int_equal(__builtin_popcount(used[me]), 1);
            }
            seen[t->src][t->dst][t->rail]++;
        }
    }
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = a + 1; b < n; b++)
            for (unsigned i = 0; i < SWEEP_MAX_RAILS; i++)
                assert_int_equal(seen[a][b][i],
                                 (sweep_plan_common_rails(&ranks[a], &ranks[b]) >> i) & 1);
}

static void test_tournament_every_n(void **state)
{
    (void)state;
    struct ft_err err = {0};
    for (int kind = 0; kind < 3; kind++)
        for (uint32_t n = 2; n <= MAXN; n++) {
            layout(n, kind);
            for (int mode = 0; mode < 2; mode++) {
                struct sweep_plan p = {0};
                struct sweep_plan_opts o = {.rails_mode = (enum sweep_rails_mode)mode};
                assert_int_equal(sweep_plan_pairs(&p, ranks, n, &o, &err), 0);
                check_pairs(&p, n, o.rails_mode);
                uint32_t want = n % 2 ? n : n - 1;
                if (mode == SWEEP_RAILS_TOGETHER && kind != 2)
                    assert_int_equal(p.n_rounds, want);
                if (mode == SWEEP_RAILS_APART && kind == 1)
                    assert_int_equal(p.n_rounds, want * 8);
                sweep_plan_free(&p);
            }
        }
}

static void test_tournament_odd_idle(void **state)
{
    (void)state;
    uint32_t mate[MAXN];
    for (uint32_t n = 3; n <= MAXN; n += 2) {
        uint32_t idle[MAXN] = {0};
        assert_int_equal(sweep_plan_tournament_round(n, 0, mate), n);
        for (uint32_t r = 0; r < n; r++) {
            sweep_plan_tournament_round(n, r, mate);
            uint32_t none = 0;
            for (uint32_t i = 0; i < n; i++) {
                if (mate[i] == SWEEP_NO_RANK) {
                    none++;
                    idle[i]++;
                } else {
                    assert_int_equal(mate[mate[i]], i);
                }
            }
            assert_int_equal(none, 1); /* one rank idle per round */
        }
        for (uint32_t i = 0; i < n; i++)
            assert_int_equal(idle[i], 1); /* and each rank idle once */
    }
    assert_int_equal(sweep_plan_tournament_round(1, 0, mate), 0);
}

static void test_incast(void **state)
{
    (void)state;
    struct ft_err err = {0};
    struct sweep_plan p = {0};
    struct sweep_plan_opts o = {0};
    layout(8, 0);
    assert_int_equal(sweep_plan_incast(&p, ranks, 8, &o, &err), 0);
    assert_int_equal(p.n_rounds, 16); /* quiet and loaded for each of 8 receivers */
    for (size_t k = 0; k < p.n_rounds; k++) {
        const struct sweep_round *rd = &p.rounds[k];
        uint32_t rx = rd->subject, probes = 0, from = 0;
        assert_int_equal(rd->phase, k % 2 ? SWEEP_PHASE_LOADED : SWEEP_PHASE_QUIET);
        assert_int_equal(rd->count, k % 2 ? 7 : 1); /* N-2 senders + the probe */
        for (size_t i = rd->first; i < rd->first + rd->count; i++) {
            const struct sweep_test *t = &p.tests[i];
            assert_int_equal(t->dst, rx);
            assert_int_not_equal(t->src, rx);
            assert_false(from & (1u << t->src));
            from |= 1u << t->src;
            probes += t->role == SWEEP_ROLE_PROBE;
        }
        assert_int_equal(probes, 1);
        assert_int_equal(k / 2, rx);
    }
    sweep_plan_free(&p);

    uint32_t rx[2] = {2, 6};
    o = (struct sweep_plan_opts){.incast_senders = 3, .receivers = rx, .n_receivers = 2};
    assert_int_equal(sweep_plan_incast(&p, ranks, 8, &o, &err), 0);
    assert_int_equal(p.n_rounds, 4);
    assert_int_equal(p.rounds[3].subject, 6);
    assert_int_equal(p.rounds[3].count, 4);
    sweep_plan_free(&p);

    o.incast_senders = 7;
    assert_int_equal(sweep_plan_incast(&p, ranks, 8, &o, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "at most N-2"));
    assert_int_equal(p.n_rounds, 0);
    ft_err_clear(&err);
    rx[1] = 8;
    o.incast_senders = 0;
    assert_int_equal(sweep_plan_incast(&p, ranks, 8, &o, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "receiver rank 8 is not in the job"));
    ft_err_clear(&err);
    assert_int_equal(sweep_plan_incast(&p, ranks, 2, &(struct sweep_plan_opts){0}, &err), -EINVAL);
}

/* Two rails: together, one quiet and one loaded round per receiver holding both rails' tests;
 * apart, one pair of rounds per rail. Each rail's loaded round has its own probe. */
static void test_incast_rails(void **state)
{
    (void)state;
    struct ft_err err = {0};
    layout(8, 1);
    for (uint32_t r = 0; r < 8; r++)
        ranks[r].rails = 0x3;
    for (int mode = 0; mode < 2; mode++) {
        struct sweep_plan p = {0};
        struct sweep_plan_opts o = {.rails_mode = (enum sweep_rails_mode)mode};
        assert_int_equal(sweep_plan_incast(&p, ranks, 8, &o, &err), 0);
        assert_int_equal(p.n_rounds, mode == SWEEP_RAILS_TOGETHER ? 16 : 32);
        for (size_t k = 0; k < p.n_rounds; k++) {
            const struct sweep_round *rd = &p.rounds[k];
            uint32_t per_rail[2] = {0}, probes[2] = {0};
            for (size_t i = rd->first; i < rd->first + rd->count; i++) {
                const struct sweep_test *t = &p.tests[i];
                assert_int_equal(t->dst, rd->subject);
                per_rail[t->rail]++;
                probes[t->rail] += t->role == SWEEP_ROLE_PROBE;
            }
            uint32_t want = rd->phase == SWEEP_PHASE_LOADED ? 7 : 1;
            for (int rail = 0; rail < 2; rail++)
                if (mode == SWEEP_RAILS_TOGETHER || per_rail[rail]) {
                    assert_int_equal(per_rail[rail], want);
                    assert_int_equal(probes[rail], 1);
                }
        }
        sweep_plan_free(&p);
    }
}

/* Several patterns in one plan: each call appends its rounds after the last. */
static void test_patterns_append(void **state)
{
    (void)state;
    struct ft_err err = {0};
    struct sweep_plan p = {0};
    struct sweep_plan_opts o = {0};
    layout(6, 0);
    assert_int_equal(sweep_plan_pairs(&p, ranks, 6, &o, &err), 0);
    assert_int_equal(sweep_plan_ring(&p, ranks, 6, &o, &err), 0);
    assert_int_equal(sweep_plan_pairs(&p, ranks, 1, &o, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "pairs: 1 rank(s) given"));
    assert_int_equal(p.n_rounds, 6);
    assert_int_equal(p.n_tests, 15 + 6);
    assert_int_equal(p.rounds[5].pattern, SWEEP_RING);
    assert_int_equal(p.rounds[5].first, 15);
    size_t next = 0;
    for (size_t k = 0; k < p.n_rounds; k++) {
        assert_int_equal(p.rounds[k].first, next);
        next += p.rounds[k].count;
    }
    sweep_plan_free(&p);
}

/* The all-reduce: one round, the ring 0 -> 1 -> ... -> n-1 -> 0 on every rail all ranks
 * have (a ring per rail at once), as ring roles; no common rail, or one rank, is refused. */
static void test_allreduce(void **state)
{
    (void)state;
    struct ft_err err = {0};
    for (uint32_t n = 2; n <= MAXN; n++) {
        struct sweep_plan p = {0};
        layout(n, 1);
        assert_int_equal(sweep_plan_allreduce(&p, ranks, n, NULL, &err), 0);
        assert_int_equal(p.n_rounds, 1);
        assert_int_equal(p.rounds[0].pattern, SWEEP_ALLREDUCE);
        assert_int_equal(p.n_tests, (size_t)n * 8);
        uint32_t out[MAXN][SWEEP_MAX_RAILS] = {{0}};
        for (size_t i = 0; i < p.n_tests; i++) {
            const struct sweep_test *t = &p.tests[i];
            assert_int_equal(t->dst, (t->src + 1) % n);
            assert_int_equal(t->role, SWEEP_ROLE_RING);
            assert_int_equal(t->pattern, SWEEP_ALLREDUCE);
            out[t->src][t->rail]++;
        }
        for (uint32_t r = 0; r < n; r++)
            for (unsigned k = 0; k < 8; k++)
                assert_int_equal(out[r][k], 1);
        sweep_plan_free(&p);
    }
    /* Rails 0 to 2 on some ranks, rail 0 only on others: one ring, on rail 0. */
    struct sweep_plan p = {0};
    layout(4, 2);
    assert_int_equal(sweep_plan_allreduce(&p, ranks, 4, NULL, &err), 0);
    assert_int_equal(p.n_tests, 4);
    for (size_t i = 0; i < p.n_tests; i++)
        assert_int_equal(p.tests[i].rail, 0);
    sweep_plan_free(&p);
    /* Rank 5 lacks rail 0 and rank 0 has only rail 0: no ring can reach every rank. */
    layout(8, 2);
    assert_int_equal(sweep_plan_allreduce(&p, ranks, 8, NULL, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "no rail is common to all 8 ranks"));
    assert_int_equal(p.n_rounds, 0);
    err = (struct ft_err){0};
    assert_int_equal(sweep_plan_allreduce(&p, ranks, 1, NULL, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "allreduce: 1 rank(s) given"));
    /* The all-to-all: one test per rank and rail, its role, on the common rails only. */
    for (uint32_t n = 2; n <= MAXN; n += 7) {
        layout(n, 1);
        assert_int_equal(sweep_plan_alltoall(&p, ranks, n, NULL, &err), 0);
        assert_int_equal(p.n_rounds, 1);
        assert_int_equal(p.rounds[0].pattern, SWEEP_ALLTOALL);
        assert_int_equal(p.n_tests, (size_t)n * 8);
        for (size_t i = 0; i < p.n_tests; i++) {
            assert_int_equal(p.tests[i].role, SWEEP_ROLE_ALLTOALL);
            assert_int_equal(p.tests[i].dst, (p.tests[i].src + 1) % n);
        }
        sweep_plan_free(&p);
    }
    layout(8, 2);
    err = (struct ft_err){0};
    assert_int_equal(sweep_plan_alltoall(&p, ranks, 8, NULL, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "alltoall: no rail is common to all 8 ranks"));
}

static void check_halves(const struct sweep_plan *p, size_t k, uint32_t n)
{
    uint8_t seen[MAXN] = {0};
    const struct sweep_round *rd = &p->rounds[k];
    assert_int_equal(rd->count, n / 2);
    for (size_t i = rd->first; i < rd->first + rd->count; i++) {
        seen[p->tests[i].src]++;
        seen[p->tests[i].dst]++;
    }
    for (uint32_t r = 0; r < n; r++)
        assert_int_equal(seen[r], 1);
}

static void test_bisection(void **state)
{
    (void)state;
    struct ft_err err = {0};
    struct sweep_plan p = {0}, q = {0};
    struct sweep_plan_opts o = {.seed = 42, .bisection_splits = 5};
    for (uint32_t n = 2; n <= MAXN; n += 2) {
        layout(n, 0);
        assert_int_equal(sweep_plan_bisection(&p, ranks, n, &o, &err), 0);
        assert_int_equal(p.n_rounds, 5); /* groups unknown: no group split */
        for (size_t k = 0; k < p.n_rounds; k++)
            check_halves(&p, k, n);
        assert_int_equal(sweep_plan_bisection(&q, ranks, n, &o, &err), 0);
        assert_memory_equal(p.tests, q.tests, p.n_tests * sizeof(*p.tests)); /* same seed */
        sweep_plan_free(&p);
        sweep_plan_free(&q);
    }
    /* Another seed, another split (32 ranks: a collision is out of the question). */
    layout(32, 0);
    sweep_plan_bisection(&p, ranks, 32, &o, &err);
    o.seed = 43;
    sweep_plan_bisection(&q, ranks, 32, &o, &err);
    assert_memory_not_equal(p.tests, q.tests, p.n_tests * sizeof(*p.tests));
    sweep_plan_free(&p);
    sweep_plan_free(&q);

    /* Four groups of four, given out of order: the last split crosses groups in every pair. */
    layout(16, 0);
    for (uint32_t r = 0; r < 16; r++)
        ranks[r].group = (int32_t)((r * 7) % 4);
    assert_int_equal(sweep_plan_bisection(&p, ranks, 16, &o, &err), 0);
    assert_int_equal(p.n_rounds, 6);
    const struct sweep_round *g = &p.rounds[5];
    assert_int_equal(g->subject, 5);
    check_halves(&p, 5, 16);
    for (size_t i = g->first; i < g->first + g->count; i++)
        assert_int_not_equal(ranks[p.tests[i].src].group, ranks[p.tests[i].dst].group);
    sweep_plan_free(&p);

    assert_int_equal(sweep_plan_bisection(&p, ranks, 7, &o, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "bisection: 7 ranks given"));
    assert_non_null(strstr(err.msg, "even number"));
    assert_int_equal(p.n_rounds, 0);
}

static void test_ring(void **state)
{
    (void)state;
    struct ft_err err = {0};
    for (uint32_t n = 2; n <= MAXN; n++) {
        struct sweep_plan p = {0};
        layout(n, 1);
        assert_int_equal(sweep_plan_ring(&p, ranks, n, &(struct sweep_plan_opts){0}, &err), 0);
        assert_int_equal(p.n_rounds, 1);
        assert_int_equal(p.n_tests, (size_t)n * 8);
        for (size_t i = 0; i < p.n_tests; i++) {
            assert_int_equal(p.tests[i].dst, (p.tests[i].src + 1) % n);
            assert_int_equal(p.tests[i].role, SWEEP_ROLE_STREAM);
        }
        sweep_plan_free(&p);
    }
    struct sweep_plan p = {0};
    assert_int_equal(sweep_plan_ring(&p, ranks, 1, &(struct sweep_plan_opts){0}, &err), -EINVAL);
}

static void test_pack(void **state)
{
    (void)state;
    struct sweep_test t[6] = {{0, 1, 0, SWEEP_RECHECK, 0}, {0, 2, 0, SWEEP_RECHECK, 0},
                              {3, 1, 0, SWEEP_RECHECK, 0}, {3, 2, 0, SWEEP_RECHECK, 0},
                              {4, 5, 0, SWEEP_RECHECK, 0}, {4, 6, 0, SWEEP_RECHECK, 0}};
    struct sweep_plan p = {0};
    sweep_plan_pack(&p, t, 6, 8);
    assert_int_equal(p.n_tests, 6);
    assert_int_equal(p.n_rounds, 2);
    for (size_t k = 0; k < p.n_rounds; k++) {
        uint32_t used = 0;
        for (size_t i = p.rounds[k].first; i < p.rounds[k].first + p.rounds[k].count; i++) {
            assert_false(used & ((1u << p.tests[i].src) | (1u << p.tests[i].dst)));
            used |= (1u << p.tests[i].src) | (1u << p.tests[i].dst);
        }
    }
    sweep_plan_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tournament_every_n),
        cmocka_unit_test(test_tournament_odd_idle),
        cmocka_unit_test(test_incast),
        cmocka_unit_test(test_bisection),
        cmocka_unit_test(test_ring),
        cmocka_unit_test(test_pack),
        cmocka_unit_test(test_incast_rails),
        cmocka_unit_test(test_patterns_append),
        cmocka_unit_test(test_allreduce),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
