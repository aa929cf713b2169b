/* sweep_plan: the rounds of each pattern (sweep_plan.h). */
#include "engine/sweep/sweep_plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

/* A pair to test in one round, on every rail in mask. */
struct unit {
    uint32_t src, dst, mask;
    uint8_t role;
};

/* splitmix64 (Steele, Lea, Flood 2014): small, seedable, good enough for splits. */
static uint64_t plan_rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint32_t rank_rails(const struct sweep_rank *r)
{
    uint32_t m = r->rails & ((1u << SWEEP_MAX_RAILS) - 1);
    return m ? m : 1u; /* no NIC named: the host's one path, rail 0 */
}

uint32_t sweep_plan_common_rails(const struct sweep_rank *a, const struct sweep_rank *b)
{
    return rank_rails(a) & rank_rails(b);
}

void sweep_plan_begin_round(struct sweep_plan *p, uint8_t pattern, uint8_t phase, uint32_t subject)
{
    if (p->n_rounds == p->cap_rounds) {
        p->cap_rounds = p->cap_rounds ? 2 * p->cap_rounds : 64;
        p->rounds = xalloc_resize(p->rounds, p->cap_rounds * sizeof(*p->rounds));
    }
    p->rounds[p->n_rounds++] = (struct sweep_round){
        .first = p->n_tests, .pattern = pattern, .phase = phase, .subject = subject};
}

void sweep_plan_add(struct sweep_plan *p, const struct sweep_test *t)
{
    if (p->n_tests == p->cap_tests) {
        p->cap_tests = p->cap_tests ? 2 * p->cap_tests : 256;
        p->tests = xalloc_resize(p->tests, p->cap_tests * sizeof(*p->tests));
    }
    p->tests[p->n_tests++] = *t;
    p->rounds[p->n_rounds - 1].count++;
}

static void add_unit(struct sweep_plan *p, const struct unit *u, uint32_t mask, uint8_t pattern)
{
    for (unsigned i = 0; i < SWEEP_MAX_RAILS; i++) {
        if (!(u->mask & mask & (1u << i)))
            continue;
        struct sweep_test t = {
            .src = u->src, .dst = u->dst, .rail = (uint16_t)i, .pattern = pattern, .role = u->role};
        sweep_plan_add(p, &t);
    }
}

/* One round of units: one plan round (rails together) or one per rail that has tests. */
static void emit(struct sweep_plan *p, const struct unit *u, size_t n, uint8_t pattern,
                 uint8_t phase, uint32_t subject, enum sweep_rails_mode mode)
{
    uint32_t all = 0;
    for (size_t j = 0; j < n; j++)
        all |= u[j].mask;
    for (unsigned i = 0; i < SWEEP_MAX_RAILS && all; i++) {
        uint32_t mask = mode == SWEEP_RAILS_TOGETHER ? all : (all & (1u << i));
        if (!mask)
            continue;
        sweep_plan_begin_round(p, pattern, phase, subject);
        for (size_t j = 0; j < n; j++)
            add_unit(p, &u[j], mask, pattern);
        all &= ~mask;
    }
}

uint32_t sweep_plan_tournament_round(uint32_t n, uint32_t r, uint32_t *out)
{
    /* The circle method: m = n rounded up to even, rank m-1 fixed, the others on a circle of
     * m-1 seats turned one seat per round; with n odd, rank m-1 is the idle seat. */
    uint32_t m = n + (n & 1), c = m - 1;
    for (uint32_t i = 0; i < n; i++)
        out[i] = SWEEP_NO_RANK;
    if (n < 2)
        return 0;
    uint32_t pair_a[2] = {m - 1, r % c};
    for (uint32_t k = 0; k < m / 2; k++) {
        uint32_t a = k ? (r + k) % c : pair_a[0], b = k ? (r + c - k) % c : pair_a[1];
        if (a < n && b < n) {
            out[a] = b;
            out[b] = a;
        }
    }
    return c;
}

static const struct sweep_plan_opts defaults;

static int need(int ok, struct ft_err *e, const char *fmt, uint32_t a, uint32_t b)
{
    return ok ? 0 : ft_err_set(e, -EINVAL, fmt, a, b);
}

int sweep_plan_pairs(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                     const struct sweep_plan_opts *o, struct ft_err *e)
{
    o = o ? o : &defaults;
    if (need(n >= 2, e, "pairs: %u rank(s) given: start at least %u", n, 2))
        return -EINVAL;
    uint32_t *mate = xalloc_zero(n, sizeof(*mate));
    struct unit *u = xalloc_zero(n / 2 + 1, sizeof(*u));
    uint32_t rounds = sweep_plan_tournament_round(n, 0, mate);
    for (uint32_t r = 0; r < rounds; r++) {
        sweep_plan_tournament_round(n, r, mate);
        size_t k = 0;
        for (uint32_t a = 0; a < n; a++)
            if (mate[a] != SWEEP_NO_RANK && a < mate[a])
                u[k++] =
                    (struct unit){a, mate[a], sweep_plan_common_rails(&ranks[a], &ranks[mate[a]]),
                                  SWEEP_ROLE_PAIR};
        emit(p, u, k, SWEEP_PAIRS, SWEEP_PHASE_NONE, r, o->rails_mode);
    }
    free(u);
    free(mate);
    return 0;
}

static int check_incast(uint32_t n, const struct sweep_plan_opts *o, struct ft_err *e)
{
    if (need(n >= 3, e,
             "incast: %u rank(s) given: it needs %u or more (a receiver, a sender "
             "and a latency probe)",
             n, 3))
        return -EINVAL;
    if (need(o->incast_senders <= n - 2, e,
             "incast: %u senders asked of %u ranks: at most N-2 "
             "(one receiver, one latency probe)",
             o->incast_senders, n))
        return -EINVAL;
    for (size_t i = 0; o->receivers && i < o->n_receivers; i++)
        if (need(o->receivers[i] < n, e, "incast: receiver rank %u is not in the job (%u ranks)",
                 o->receivers[i], n))
            return -EINVAL;
    return 0;
}

/* The receiver's probe (first after it in rank order with the rail) and k senders (next). */
static size_t incast_units(const struct sweep_rank *ranks, uint32_t n, uint32_t rx, uint32_t k,
                           unsigned rail, struct unit *u)
{
    size_t m = 0;
    for (uint32_t j = 1; j < n && m < (size_t)k + 1; j++) {
        uint32_t s = (rx + j) % n;
        if (!(rank_rails(&ranks[s]) & rank_rails(&ranks[rx]) & (1u << rail)))
            continue;
        uint8_t role = m ? SWEEP_ROLE_STREAM : SWEEP_ROLE_PROBE;
        u[m++] = (struct unit){s, rx, 1u << rail, role};
    }
    return m;
}

static void incast_receiver(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                            uint32_t rx, uint32_t k, enum sweep_rails_mode mode, struct unit *u)
{
    /* Each rail's probe and senders; together: every rail in one quiet and one loaded round. */
    size_t m = 0, probes = 0;
    struct unit *q = u + (size_t)SWEEP_MAX_RAILS * n;
    for (unsigned i = 0; i < SWEEP_MAX_RAILS; i++) {
        if (!(rank_rails(&ranks[rx]) & (1u << i)))
            continue;
        size_t got = incast_units(ranks, n, rx, k, i, u + m);
        if (got)
            q[probes++] = u[m];
        m += got;
        if (mode == SWEEP_RAILS_APART && got) {
            emit(p, q, probes, SWEEP_INCAST, SWEEP_PHASE_QUIET, rx, mode);
            emit(p, u, m, SWEEP_INCAST, SWEEP_PHASE_LOADED, rx, mode);
            m = probes = 0;
        }
    }
    if (mode == SWEEP_RAILS_TOGETHER && m) {
        emit(p, q, probes, SWEEP_INCAST, SWEEP_PHASE_QUIET, rx, mode);
        emit(p, u, m, SWEEP_INCAST, SWEEP_PHASE_LOADED, rx, mode);
    }
}

int sweep_plan_incast(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                      const struct sweep_plan_opts *o, struct ft_err *e)
{
    o = o ? o : &defaults;
    int rc = check_incast(n, o, e);
    if (rc)
        return rc;
    uint32_t k = o->incast_senders ? o->incast_senders : n - 2;
    struct unit *u = xalloc_zero((size_t)SWEEP_MAX_RAILS * (n + 1), sizeof(*u));
    size_t nr = o->receivers ? o->n_receivers : n;
    for (size_t i = 0; i < nr; i++)
        incast_receiver(p, ranks, n, o->receivers ? o->receivers[i] : (uint32_t)i, k, o->rails_mode,
                        u);
    free(u);
    return 0;
}

/* Split: order[0..n/2) sends to order[n/2..n), position by position. */
static void emit_split(struct sweep_plan *p, const struct sweep_rank *ranks, const uint32_t *order,
                       uint32_t n, uint32_t subject, enum sweep_rails_mode mode, struct unit *u)
{
    for (uint32_t i = 0; i < n / 2; i++) {
        uint32_t a = order[i], b = order[i + n / 2];
        u[i] =
            (struct unit){a, b, sweep_plan_common_rails(&ranks[a], &ranks[b]), SWEEP_ROLE_STREAM};
    }
    emit(p, u, n / 2, SWEEP_BISECTION, SWEEP_PHASE_NONE, subject, mode);
}

static const struct sweep_rank *sort_ranks;

static int by_group(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    int32_t ga = sort_ranks[a].group, gb = sort_ranks[b].group;
    if (ga != gb)
        return ga < gb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* The group-against-group split, when every rank's group is known and there are two or more:
 * ranks in group order, position i against position i + N/2, so that every pair crosses groups
 * unless one group holds more than half the ranks. */
static int group_order(const struct sweep_rank *ranks, uint32_t n, uint32_t *order)
{
    int distinct = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (ranks[i].group == SWEEP_GROUP_UNKNOWN)
            return 0;
        distinct |= ranks[i].group != ranks[0].group;
        order[i] = i;
    }
    sort_ranks = ranks;
    qsort(order, n, sizeof(*order), by_group);
    return distinct;
}

int sweep_plan_bisection(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                         const struct sweep_plan_opts *o, struct ft_err *e)
{
    o = o ? o : &defaults;
    if (n < 2 || (n & 1))
        return ft_err_set(e, -EINVAL,
                          "bisection: %u ranks given: it splits the ranks in two "
                          "equal halves, start an even number (2 or more)",
                          n);
    uint32_t *order = xalloc_zero(n, sizeof(*order));
    struct unit *u = xalloc_zero(n / 2, sizeof(*u));
    uint64_t s = o->seed;
    unsigned splits = o->bisection_splits ? o->bisection_splits : 3;
    for (unsigned k = 0; k < splits; k++) {
        for (uint32_t i = 0; i < n; i++)
            order[i] = i;
        for (uint32_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
            uint32_t j = (uint32_t)(plan_rng(&s) % (i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        emit_split(p, ranks, order, n, k, o->rails_mode, u);
    }
    if (group_order(ranks, n, order))
        emit_split(p, ranks, order, n, splits, o->rails_mode, u);
    free(u);
    free(order);
    return 0;
}

int sweep_plan_ring(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                    const struct sweep_plan_opts *o, struct ft_err *e)
{
    o = o ? o : &defaults;
    if (need(n >= 2, e, "ring: %u rank(s) given: start at least %u", n, 2))
        return -EINVAL;
    struct unit *u = xalloc_zero(n, sizeof(*u));
    for (uint32_t r = 0; r < n; r++)
        u[r] =
            (struct unit){r, (r + 1) % n, sweep_plan_common_rails(&ranks[r], &ranks[(r + 1) % n]),
                          SWEEP_ROLE_STREAM};
    emit(p, u, n, SWEEP_RING, SWEEP_PHASE_NONE, 0, o->rails_mode);
    free(u);
    return 0;
}

/* One round of n tests of role on every rail common to all n ranks: rank r to r + 1. */
static int plan_all_ranks(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                          const char *what, uint8_t pattern, uint8_t role, struct ft_err *e)
{
    if (n < 2) {
        ft_err_set(e, -EINVAL, "%s: %u rank(s) given: start at least 2", what, n);
        return -EINVAL;
    }
    uint32_t all = UINT32_MAX;
    for (uint32_t r = 0; r < n; r++)
        all &= sweep_plan_common_rails(&ranks[r], &ranks[(r + 1) % n]);
    if (!all) {
        ft_err_set(e, -EINVAL,
                   "%s: no rail is common to all %u ranks (it needs every rank on it); give "
                   "--rails so that rail i is the same network on every node",
                   what, n);
        return -EINVAL;
    }
    struct unit *u = xalloc_zero(n, sizeof(*u));
    for (uint32_t r = 0; r < n; r++)
        u[r] = (struct unit){r, (r + 1) % n, all, role};
    emit(p, u, n, pattern, SWEEP_PHASE_NONE, 0, SWEEP_RAILS_TOGETHER);
    free(u);
    return 0;
}

int sweep_plan_allreduce(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                         const struct sweep_plan_opts *o, struct ft_err *e)
{
    (void)o;
    return plan_all_ranks(p, ranks, n, "allreduce", SWEEP_ALLREDUCE, SWEEP_ROLE_RING, e);
}

int sweep_plan_alltoall(struct sweep_plan *p, const struct sweep_rank *ranks, uint32_t n,
                        const struct sweep_plan_opts *o, struct ft_err *e)
{
    (void)o;
    return plan_all_ranks(p, ranks, n, "alltoall", SWEEP_ALLTOALL, SWEEP_ROLE_ALLTOALL, e);
}

void sweep_plan_pack(struct sweep_plan *p, const struct sweep_test *t, size_t n, uint32_t n_ranks)
{
    /* round[j]: the round test j goes in; busy[r * n_ranks + rank]: rank taken in round r. */
    size_t *round = xalloc_zero(n + 1, sizeof(*round)), rounds = 0;
    uint8_t *busy = xalloc_zero((n + 1) * (size_t)n_ranks, 1);
    for (size_t j = 0; j < n; j++) {
        size_t r = 0;
        while (busy[r * n_ranks + t[j].src] || busy[r * n_ranks + t[j].dst])
            r++;
        busy[r * n_ranks + t[j].src] = busy[r * n_ranks + t[j].dst] = 1;
        round[j] = r;
        rounds = r + 1 > rounds ? r + 1 : rounds;
    }
    for (size_t r = 0; r < rounds; r++) {
        sweep_plan_begin_round(p, t[0].pattern, SWEEP_PHASE_NONE, (uint32_t)r);
        for (size_t j = 0; j < n; j++)
            if (round[j] == r)
                sweep_plan_add(p, &t[j]);
    }
    free(busy);
    free(round);
}

void sweep_plan_free(struct sweep_plan *p)
{
    free(p->tests);
    free(p->rounds);
    memset(p, 0, sizeof(*p));
}
