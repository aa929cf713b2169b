/* sweep_verdict: outliers within path classes, then the narrowest place that explains the slow
 * pairs (sweep_verdict.h). */
#include "engine/sweep/sweep_verdict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "engine/sweep/sweep_stats.h"

/* Samples of a figure: slot 0 bw a->b, 1 bw b->a, 2 latency p50, 3 latency p99. */
#define SLOTS             4
#define MAX_UPLINK_GROUPS 128

static const struct {
    const char *name, *unit;
    int higher_hurts;
} metric_info[SWEEP_M_COUNT] = {
    [SWEEP_M_BW] = {"bandwidth", "Gb/s", 0},
    [SWEEP_M_LAT_P50] = {"latency p50", "ns", 1},
    [SWEEP_M_LAT_P99] = {"latency p99", "ns", 1},
};

const char *sweep_metric_name(enum sweep_metric m)
{
    return m < SWEEP_M_COUNT ? metric_info[m].name : "?";
}

static enum sweep_metric slot_metric(int slot)
{
    return slot < 2 ? SWEEP_M_BW : (enum sweep_metric)(slot - 1);
}

/* The samples of f: v[slot] for every slot, valid (not failed, flagged valid, finite and not
 * negative) for each slot in the mask returned. */
static unsigned fig_samples(const struct sweep_figure *f, double v[SLOTS])
{
    v[0] = f->bw_ab_gbps;
    v[1] = f->bw_ba_gbps;
    v[2] = f->lat_p50_ns;
    v[3] = f->lat_p99_ns;
    if (f->failed)
        return 0;
    unsigned ok = (f->valid & SWEEP_FIG_BW_AB ? 1u : 0) | (f->valid & SWEEP_FIG_BW_BA ? 2u : 0) |
                  (f->valid & SWEEP_FIG_LAT ? 12u : 0);
    for (int s = 0; s < SLOTS; s++)
        if (!isfinite(v[s]) || v[s] < 0)
            ok &= ~(1u << s);
    return ok;
}

/* The value of sample slot of f; 0 when it is not valid. */
static int slot_value(const struct sweep_figure *f, int slot, double *v)
{
    double x[SLOTS];
    unsigned ok = fig_samples(f, x);
    *v = x[slot];
    return (ok >> slot) & 1;
}

/* What the judging passes share. */
struct judge {
    struct sweep_analysis *an;
    const struct sweep_rank *ranks;
    const struct sweep_figure *f;
    size_t nf;
    enum sweep_metric m;
    uint8_t *slow;     /* per figure: bit per slot */
    uint32_t *suspect; /* per rank: rails on which it is named */
    int32_t *gidx;     /* per rank: dense group index */
    uint32_t n_groups;
    uint8_t *uplink; /* [rail][g][h]: that uplink is named */
    double *scratch; /* nf x SLOTS values, for sweep_stats_sort */
    /* Every sample sorted by cell: [metric][rail][class][g][h] (g <= h, the dense group
     * indices) when uplinks are judged, else [metric][rail][class]. */
    struct sweep_stats_sorted cells;
    size_t n_cells; /* cells per class: groups x groups, or 1 */
    int caps;       /* ceiling_keys: the ceilings too, not only the shares */
};

static int pair_class(const struct sweep_analysis *an, const struct sweep_rank *ranks,
                      const struct sweep_figure *f)
{
    return an->groups_known && ranks[f->a].group != ranks[f->b].group;
}

static int fig_class(const struct judge *j, const struct sweep_figure *f)
{
    return pair_class(j->an, j->ranks, f);
}

static const struct sweep_class_stat *fig_stat(const struct judge *j, const struct sweep_figure *f,
                                               enum sweep_metric m)
{
    return &j->an->cls[m][f->rail][fig_class(j, f)];
}

/* A figure of metric m in words with its unit: latency (ns) as ns, us or ms, bandwidth
 * (Gb/s) as Gb/s, or Mb/s under 1 Gb/s. */
static const char *fig_str(enum sweep_metric m, double v, char *buf, size_t len)
{
    if (m == SWEEP_M_BW)
        snprintf(buf, len, v < 1 ? "%.3g Mb/s" : "%.3g Gb/s", v < 1 ? v * 1e3 : v);
    else if (v >= 1e6)
        snprintf(buf, len, "%.3g ms", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, len, "%.3g us", v / 1e3);
    else
        snprintf(buf, len, "%.0f ns", v);
    return buf;
}

/* Group g's name, or its number. */
static const char *group_str(const struct sweep_analysis *an, int32_t g, char *buf, size_t len)
{
    if (an->opts.group_names && g >= 0)
        return an->opts.group_names[g];
    snprintf(buf, len, "%d", g);
    return buf;
}

/* sweep_is_outlier, inlined where every sample of the rack is judged. */
static inline int outlier(const struct sweep_analysis *an, enum sweep_metric m,
                          const struct sweep_class_stat *c, double x)
{
    /* A median and MAD of fewer figures say nothing of the rack's spread. */
    if (c->n < SWEEP_MIN_CLASS || c->median <= 0)
        return 0;
    double dev = metric_info[m].higher_hurts ? x - c->median : c->median - x;
    if (dev < an->opts.min_dev * c->median)
        return 0;
    if (c->mad == 0) /* no spread: the minimum deviation alone */
        return 1;
    return dev / (1.4826 * c->mad) > an->opts.z_max;
}

int sweep_is_outlier(const struct sweep_analysis *an, enum sweep_metric m,
                     const struct sweep_class_stat *c, double x)
{
    return outlier(an, m, c, x);
}

/* The cell of f within its class: (g, h), g <= h, when uplinks are judged, else 0. */
static uint32_t fig_cell(const struct judge *j, const struct sweep_figure *f)
{
    if (j->n_cells == 1)
        return 0;
    uint32_t g = (uint32_t)j->gidx[f->a], h = (uint32_t)j->gidx[f->b];
    return g < h ? g * j->n_groups + h : h * j->n_groups + g;
}

/* The class of f, from its cell when uplinks are judged: across when g < h. */
static int cell_class(const struct judge *j, const struct sweep_figure *f, uint32_t cell)
{
    return j->n_cells == 1 ? fig_class(j, f) : cell / j->n_groups != cell % j->n_groups;
}

static uint32_t cell_bucket(const struct judge *j, enum sweep_metric m, unsigned rail, int cls,
                            uint32_t cell)
{
    return (uint32_t)(((m * SWEEP_MAX_RAILS + rail) * 2 + (unsigned)cls) * j->n_cells + cell);
}

/* Cell buckets (struct judge's cells): every valid sample, a named rank's or not. */
static int cell_keys(void *ctx, const struct sweep_figure *f, uint32_t *b, double *v)
{
    const struct judge *j = ctx;
    double x[SLOTS];
    unsigned ok = fig_samples(f, x);
    if (!ok)
        return 0;
    uint32_t cell = fig_cell(j, f);
    int cls = cell_class(j, f, cell), n = 0;
    for (int s = 0; s < SLOTS; s++)
        if ((ok >> s) & 1) {
            b[n] = cell_bucket(j, slot_metric(s), f->rail, cls, cell);
            v[n++] = x[s];
        }
    return n;
}

/* Sort every sample into its cell, once for the classes and the uplinks; then each class's
 * median and MAD, from a copy where the cells' order must stay for the uplinks. */
static void class_stats(struct judge *j)
{
    size_t nb = SWEEP_M_COUNT * SWEEP_MAX_RAILS * 2 * j->n_cells, most = 0;
    sweep_stats_sort(j->f, j->nf, cell_keys, j, nb, j->scratch, &j->cells);
    const size_t *at = j->cells.at;
    for (size_t c = 0; c < nb / j->n_cells; c++) {
        size_t n = at[(c + 1) * j->n_cells] - at[c * j->n_cells];
        most = n > most ? n : most;
    }
    double *copy = j->n_cells > 1 ? xalloc(sizeof(*copy) * (most + 1)) : NULL;
    struct sweep_class_stat *out = &j->an->cls[0][0][0];
    for (size_t c = 0; c < nb / j->n_cells; c++) {
        double *x = j->cells.x + at[c * j->n_cells];
        size_t n = at[(c + 1) * j->n_cells] - at[c * j->n_cells];
        if (copy)
            x = memcpy(copy, x, sizeof(*x) * n);
        out[c] = sweep_stats_of(x, n, 1);
    }
    free(copy);
}

static void mark_slow(struct judge *j)
{
    for (size_t i = 0; i < j->nf; i++) {
        const struct sweep_figure *f = &j->f[i];
        double v[SLOTS];
        unsigned ok = fig_samples(f, v);
        int cls = fig_class(j, f);
        for (int s = 0; s < SLOTS; s++) {
            enum sweep_metric m = slot_metric(s);
            if (((ok >> s) & 1) && outlier(j->an, m, &j->an->cls[m][f->rail][cls], v[s]))
                j->slow[i] |= (uint8_t)(1u << s);
        }
    }
}

static struct sweep_verdict *add_verdict(struct sweep_analysis *an, enum sweep_verdict_kind k)
{
    if (an->n_v == an->cap_v) {
        an->cap_v = an->cap_v ? 2 * an->cap_v : 16;
        an->v = xalloc_resize(an->v, an->cap_v * sizeof(*an->v));
    }
    struct sweep_verdict *v = &an->v[an->n_v++];
    *v = (struct sweep_verdict){.kind = k,
                                .state = SWEEP_NAMED,
                                .rank = SWEEP_NO_RANK,
                                .peer = SWEEP_NO_RANK,
                                .group_a = SWEEP_GROUP_UNKNOWN,
                                .group_b = SWEEP_GROUP_UNKNOWN};
    return v;
}

static struct sweep_qty qty(double value, const char *unit, const char *kind)
{
    return (struct sweep_qty){value, unit, kind};
}

static void set_figures(struct sweep_verdict *v, enum sweep_metric m, double obs, double ref)
{
    v->metric = m;
    v->observed = qty(obs, metric_info[m].unit, metric_info[m].name);
    v->reference = qty(ref, metric_info[m].unit, metric_info[m].name);
    v->ratio = qty(ref > 0 ? obs / ref : 0, "x", "ratio to the class median");
}

static const char *port_name(const struct sweep_rank *r, unsigned rail, char *buf, size_t n)
{
    if (r->rail_name[rail] && r->rail_name[rail][0])
        return r->rail_name[rail];
    snprintf(buf, n, "rail %u", rail);
    return buf;
}

/* Per rank and rail: figures judged and slow per metric, tests failed and in all. */
struct tally {
    uint32_t n[SWEEP_M_COUNT], slow[SWEEP_M_COUNT], failed, all;
    const char *reason;
};

static int fig_slow(const struct judge *j, size_t i, enum sweep_metric m)
{
    return m == SWEEP_M_BW ? (j->slow[i] & 3) != 0 : (j->slow[i] >> (m + 1)) & 1;
}

static int fig_has(const struct sweep_figure *f, enum sweep_metric m)
{
    uint8_t need = m == SWEEP_M_BW ? SWEEP_FIG_BW_AB | SWEEP_FIG_BW_BA : SWEEP_FIG_LAT;
    return !f->failed && (f->valid & need);
}

static void tally_one(struct tally *t, const struct judge *j, size_t i)
{
    const struct sweep_figure *f = &j->f[i];
    t->all++;
    if (f->failed) {
        t->failed++;
        t->reason = t->reason ? t->reason : f->fail_reason;
    }
    for (int m = 0; m < SWEEP_M_COUNT; m++) {
        t->n[m] += (uint32_t)fig_has(f, (enum sweep_metric)m);
        t->slow[m] += (uint32_t)fig_slow(j, i, (enum sweep_metric)m);
    }
}

static struct tally *tally_all(const struct judge *j)
{
    struct tally *t = xalloc_zero((size_t)j->an->n_ranks * SWEEP_MAX_RAILS, sizeof(*t));
    for (size_t i = 0; i < j->nf; i++) {
        tally_one(&t[(size_t)j->f[i].a * SWEEP_MAX_RAILS + j->f[i].rail], j, i);
        tally_one(&t[(size_t)j->f[i].b * SWEEP_MAX_RAILS + j->f[i].rail], j, i);
    }
    return t;
}

static void name_failed_rank(struct judge *j, uint32_t r, unsigned rail, const struct tally *t)
{
    char b[32];
    struct sweep_verdict *v = add_verdict(j->an, SWEEP_V_RANK_FAILED);
    v->rank = r;
    v->rail = (uint16_t)rail;
    v->n_slow = t->failed;
    v->n_pairs = t->all;
    snprintf(v->msg, sizeof(v->msg),
             "%s %s: all %u of its tests failed (%s) -> the rank itself, or its port, cable or NIC",
             j->ranks[r].name, port_name(&j->ranks[r], rail, b, sizeof(b)), t->all,
             t->reason ? t->reason : "no reason given");
    j->suspect[r] |= 1u << rail;
}

/* A rank slow in every pair but at its own port's rate, where the others run faster: an unlike
 * node (a slower port), not a fault. */
static int unlike_port(const struct judge *j, const struct sweep_verdict *v)
{
    double own = j->ranks[v->rank].port_gbps[v->rail];
    return v->metric == SWEEP_M_BW && own > 0 &&
           v->observed.value >= j->an->opts.ceiling_frac * own && v->reference.value > own;
}

static void rank_message(const struct judge *j, struct sweep_verdict *v, double obs, double ratio)
{
    char b[32];
    const struct sweep_rank *r = &j->ranks[v->rank];
    set_figures(v, v->metric, obs, ratio > 0 ? obs / ratio : 0);
    v->ratio.value = ratio;
    char of[32];
    if (v->n_slow == v->n_pairs)
        snprintf(of, sizeof(of), "all %u of its", v->n_pairs);
    else
        snprintf(of, sizeof(of), "%u of its %u", v->n_slow, v->n_pairs);
    int n =
        snprintf(v->msg, sizeof(v->msg), "%s %s: %.2fx the rack's median %s in %s pairs", r->name,
                 port_name(r, v->rail, b, sizeof(b)), ratio, metric_info[v->metric].name, of);
    v->unlike = unlike_port(j, v);
    if (v->unlike)
        snprintf(
            v->msg + n, sizeof(v->msg) - (size_t)n,
            ", at its own port's rate (%.4g of %.4g Gb/s) -> a slower port than the rack's: an "
            "unlike node, not a fault",
            obs, r->port_gbps[v->rail]);
    else
        snprintf(v->msg + n, sizeof(v->msg) - (size_t)n,
                 " -> its port, cable or NIC, not the fabric");
}

/* A suspect rank's verdict, its figures filled in by rank_figures. */
static void name_slow_rank(struct judge *j, uint32_t r, unsigned rail, enum sweep_metric m,
                           const struct tally *t)
{
    struct sweep_verdict *v = add_verdict(j->an, SWEEP_V_RANK);
    v->state = SWEEP_SUSPECT;
    v->metric = m;
    v->rank = r;
    v->rail = (uint16_t)rail;
    v->group_a = j->ranks[r].group;
    v->n_slow = t->slow[m];
    v->n_pairs = t->n[m];
    j->suspect[r] |= 1u << rail;
}

/* The median of each suspect's samples and of their ratios to their class medians, all
 * suspects in one pass over the figures; then their messages. pick[rank * rails + rail]: the
 * verdict of that rank's rail, or -1. */
static void rank_figures(struct judge *j, const int32_t *pick, size_t first)
{
    struct sweep_analysis *an = j->an;
    size_t *at = xalloc_zero(an->n_v + 1, sizeof(*at)),
           *fill = xalloc_zero(an->n_v + 1, sizeof(*fill));
    for (size_t k = first; k < an->n_v; k++)
        at[k + 1] = at[k] + 2 * (size_t)an->v[k].n_pairs;
    double *x = xalloc(sizeof(*x) * (2 * at[an->n_v] + 1)), *q = x + at[an->n_v], v;
    for (size_t i = 0; i < j->nf; i++)
        for (int e = 0; e < 2; e++) {
            const struct sweep_figure *f = &j->f[i];
            int32_t k = pick[(size_t)(e ? f->b : f->a) * SWEEP_MAX_RAILS + f->rail];
            if (k < 0)
                continue;
            enum sweep_metric m = an->v[k].metric;
            for (int s = 0; s < SLOTS; s++)
                if (slot_metric(s) == m && slot_value(f, s, &v) && fill[k] < at[k + 1] - at[k]) {
                    x[at[k] + fill[k]] = v;
                    q[at[k] + fill[k]++] = v / fig_stat(j, f, m)->median;
                }
        }
    for (size_t k = first; k < an->n_v; k++)
        if (an->v[k].kind == SWEEP_V_RANK)
            rank_message(j, &an->v[k], sweep_stats_median(x + at[k], fill[k]),
                         sweep_stats_median(q + at[k], fill[k]));
    free(x);
    free(fill);
    free(at);
}

/* A rank is named when all its tests on a rail failed, or at least 4 in 5 of them were slow in
 * one metric (two or more: with one pair alone, which end is to blame is unknown). Not all:
 * on a busy rack one of a degraded node's pairs may land within the class's spread. */
static void name_ranks(struct judge *j)
{
    struct tally *t = tally_all(j);
    size_t first = j->an->n_v, cells = (size_t)j->an->n_ranks * SWEEP_MAX_RAILS;
    int32_t *pick = xalloc(cells * sizeof(*pick) + 1);
    for (size_t c = 0; c < cells; c++) {
        const struct tally *x = &t[c];
        uint32_t r = (uint32_t)(c / SWEEP_MAX_RAILS);
        unsigned rail = (unsigned)(c % SWEEP_MAX_RAILS);
        pick[c] = -1;
        if (x->all < 2)
            continue;
        if (x->failed == x->all) {
            name_failed_rank(j, r, rail, x);
            continue;
        }
        for (int m = 0; m < SWEEP_M_COUNT && pick[c] < 0; m++)
            if (x->n[m] >= 2 && (uint64_t)x->slow[m] * 5 >= (uint64_t)x->n[m] * 4) {
                pick[c] = (int32_t)j->an->n_v;
                name_slow_rank(j, r, rail, (enum sweep_metric)m, x);
            }
    }
    rank_figures(j, pick, first);
    free(pick);
    free(t);
}

static int explained(const struct judge *j, const struct sweep_figure *f)
{
    return ((j->suspect[f->a] | j->suspect[f->b]) >> f->rail) & 1;
}

/* The reference of an uplink: the same-group pairs on that rail, else all across pairs. */
/* What a group pair's figures are set against: for bandwidth the same-group pairs' (an uplink
 * should carry what a leaf carries); for latency the across-group pairs' of every group pair,
 * never the same group's: crossing the spine adds hops by design, so only one group pair
 * slower than the other group pairs points at its uplink. */
static const struct sweep_class_stat *uplink_ref(const struct judge *j, unsigned rail)
{
    const struct sweep_class_stat *c = j->an->cls[j->m][rail];
    if (j->m != SWEEP_M_BW)
        return &c[1];
    return c[0].n ? &c[0] : &c[1];
}

static int32_t group_of(const struct judge *j, uint32_t gi)
{
    for (uint32_t r = 0; r < j->an->n_ranks; r++)
        if ((uint32_t)j->gidx[r] == gi)
            return j->ranks[r].group;
    return SWEEP_GROUP_UNKNOWN;
}

static void name_uplink(struct judge *j, unsigned rail, uint32_t g, uint32_t h,
                        const struct sweep_class_stat *st)
{
    const struct sweep_class_stat *ref = uplink_ref(j, rail);
    struct sweep_verdict *v = add_verdict(j->an, SWEEP_V_UPLINK);
    v->rail = (uint16_t)rail;
    v->group_a = group_of(j, g);
    v->group_b = group_of(j, h);
    set_figures(v, j->m, st->median, ref->median);
    v->n_pairs = (uint32_t)st->n;
    char ga[16], gb[16], xo[32], xr[32];
    snprintf(v->msg, sizeof(v->msg),
             "groups %s and %s (rail %u): the pairs across them at %.2fx the %s median %s (%s "
             "against %s) -> the uplink or spine between them, not the hosts",
             group_str(j->an, v->group_a, ga, sizeof(ga)),
             group_str(j->an, v->group_b, gb, sizeof(gb)), rail, v->ratio.value,
             ref == &j->an->cls[j->m][rail][0] ? "same-group" : "across-group",
             metric_info[j->m].name, fig_str(j->m, st->median, xo, sizeof(xo)),
             fig_str(j->m, ref->median, xr, sizeof(xr)));
    j->uplink[((size_t)rail * j->n_groups + g) * j->n_groups + h] = 1;
}

/* The samples of each uplink cell that no named rank explains, counted into n[bucket]: the
 * cells that hold a named rank's figure are filled again from their other figures. */
static void drop_explained(struct judge *j, size_t *n)
{
    size_t G = j->n_groups, nb = j->cells.n_buckets;
    uint8_t *dirty = xalloc_zero(SWEEP_MAX_RAILS * G * G, 1);
    int any = 0;
    for (size_t b = 0; b < nb; b++)
        n[b] = j->cells.at[b + 1] - j->cells.at[b];
    for (size_t i = 0; i < j->nf; i++) {
        const struct sweep_figure *f = &j->f[i];
        if (j->gidx[f->a] != j->gidx[f->b] && explained(j, f)) {
            dirty[f->rail * G * G + fig_cell(j, f)] = 1;
            any = 1;
        }
    }
    for (size_t b = 0; any && b < nb; b++) {
        size_t cell = b % (G * G), rail = b / (G * G * 2) % SWEEP_MAX_RAILS;
        if (dirty[rail * G * G + cell])
            n[b] = 0;
    }
    uint32_t bk[SWEEP_STATS_MAX_SAMPLES];
    double v[SWEEP_STATS_MAX_SAMPLES];
    for (size_t i = 0; any && i < j->nf; i++) {
        const struct sweep_figure *f = &j->f[i];
        if (j->gidx[f->a] == j->gidx[f->b] || !dirty[f->rail * G * G + fig_cell(j, f)] ||
            explained(j, f))
            continue;
        int ns = cell_keys(j, f, bk, v);
        for (int k = 0; k < ns; k++)
            j->cells.x[j->cells.at[bk[k]] + n[bk[k]]++] = v[k];
    }
    free(dirty);
}

/* Each group pair's median from its cell of the samples that class_stats sorted, against
 * uplink_ref. */
static void name_uplinks(struct judge *j)
{
    uint32_t G = j->n_groups;
    size_t *n = xalloc(sizeof(*n) * (j->cells.n_buckets + 1));
    drop_explained(j, n);
    for (int m = 0; m < SWEEP_M_COUNT; m++) {
        j->m = (enum sweep_metric)m;
        for (unsigned rail = 0; rail < SWEEP_MAX_RAILS; rail++)
            for (uint32_t g = 0; g < G; g++)
                for (uint32_t h = g + 1; h < G; h++) {
                    uint32_t b = cell_bucket(j, j->m, rail, 1, g * G + h);
                    struct sweep_class_stat st = {0};
                    if (n[b] >= 2)
                        st = sweep_stats_of(j->cells.x + j->cells.at[b], n[b], 0);
                    if (st.n >= 2 && !j->uplink[(rail * G + g) * G + h] &&
                        sweep_is_outlier(j->an, j->m, uplink_ref(j, rail), st.median))
                        name_uplink(j, rail, g, h, &st);
                }
    }
    free(n);
}

/* Count the pairs behind each uplink verdict, and which of them are slow against the reference. */
static void count_uplinks(struct judge *j)
{
    for (size_t k = 0; k < j->an->n_v; k++) {
        struct sweep_verdict *v = &j->an->v[k];
        if (v->kind != SWEEP_V_UPLINK)
            continue;
        v->n_pairs = v->n_slow = 0;
        j->m = v->metric;
        for (size_t i = 0; i < j->nf; i++) {
            const struct sweep_figure *f = &j->f[i];
            double x;
            int32_t ga = j->ranks[f->a].group, gb = j->ranks[f->b].group, slow = 0;
            if (f->rail != v->rail || !fig_has(f, v->metric) || explained(j, f) ||
                !((ga == v->group_a && gb == v->group_b) || (ga == v->group_b && gb == v->group_a)))
                continue;
            for (int s = 0; s < SLOTS; s++)
                slow |= slot_metric(s) == v->metric && slot_value(f, s, &x) &&
                        sweep_is_outlier(j->an, v->metric, uplink_ref(j, f->rail), x);
            v->n_pairs++;
            v->n_slow += (uint32_t)slow;
        }
    }
}

static int in_uplink(const struct judge *j, const struct sweep_figure *f)
{
    if (!j->uplink || j->gidx[f->a] == j->gidx[f->b] || explained(j, f))
        return 0;
    return j->uplink[(size_t)f->rail * j->n_cells + fig_cell(j, f)];
}

static void name_pair(struct judge *j, const struct sweep_figure *f, int slot)
{
    char ba[32], bb[32];
    double x = 0;
    enum sweep_metric m = slot_metric(slot);
    const struct sweep_rank *a = &j->ranks[f->a], *b = &j->ranks[f->b];
    struct sweep_verdict *v = add_verdict(j->an, f->failed ? SWEEP_V_PAIR_FAILED : SWEEP_V_PAIR);
    /* One slow figure of one pair may be a moment's noise: the second pass measures the pair
     * again before naming it. */
    if (!f->failed)
        v->state = SWEEP_SUSPECT;
    v->rank = f->a;
    v->peer = f->b;
    v->rail = f->rail;
    v->group_a = a->group;
    v->group_b = b->group;
    v->n_pairs = 1;
    v->n_slow = 1;
    int n = snprintf(v->msg, sizeof(v->msg), "%s %s <-> %s %s: ", a->name,
                     port_name(a, f->rail, ba, sizeof(ba)), b->name,
                     port_name(b, f->rail, bb, sizeof(bb)));
    if (f->failed) {
        snprintf(v->msg + n, sizeof(v->msg) - (size_t)n, "failed (%s)",
                 f->fail_reason ? f->fail_reason : "no reason given");
        return;
    }
    slot_value(f, slot, &x);
    set_figures(v, m, x, fig_stat(j, f, m)->median);
    char xo[32], xr[32];
    snprintf(v->msg + n, sizeof(v->msg) - (size_t)n,
             "%s%s %s, %.2fx the class median %s -> this pair's path (its ports, cables or "
             "switch route), not either rank alone",
             metric_info[m].name,
             slot == 0   ? " a->b"
             : slot == 1 ? " b->a"
                         : "",
             fig_str(m, x, xo, sizeof(xo)), v->ratio.value,
             fig_str(m, v->reference.value, xr, sizeof(xr)));
}

static void name_pairs(struct judge *j)
{
    for (size_t i = 0; i < j->nf; i++) {
        const struct sweep_figure *f = &j->f[i];
        if (explained(j, f) || (!f->failed && (!j->slow[i] || in_uplink(j, f))))
            continue;
        int s = 0;
        while (s < SLOTS - 1 && !((j->slow[i] >> s) & 1))
            s++;
        name_pair(j, f, s);
    }
}

/* The path's ceiling: the slower port of the two, when both are known. */
static double fig_ceiling(const struct judge *j, const struct sweep_figure *f)
{
    double a = j->ranks[f->a].port_gbps[f->rail], b = j->ranks[f->b].port_gbps[f->rail];
    return a > 0 && b > 0 ? (a < b ? a : b) : 0;
}

/* Ceiling buckets: the bandwidth's share of its ceiling per [rail][class] (each valid direction),
 * and with j->caps the ceiling itself, 2 x SWEEP_MAX_RAILS buckets on; not a named rank's. */
static int ceiling_keys(void *ctx, const struct sweep_figure *f, uint32_t *b, double *v)
{
    const struct judge *j = ctx;
    double c = fig_ceiling(j, f), x[SLOTS];
    unsigned ok = fig_samples(f, x) & 3;
    if (c <= 0 || !ok || explained(j, f))
        return 0;
    uint32_t share = (uint32_t)(f->rail * 2 + fig_class(j, f));
    int n = 0;
    for (int s = 0; s < 2; s++)
        if ((ok >> s) & 1) {
            b[n] = share;
            v[n++] = x[s] / c;
            if (j->caps) {
                b[n] = SWEEP_MAX_RAILS * 2 + share;
                v[n++] = c;
            }
        }
    return n;
}

static void name_ceilings(struct judge *j)
{
    struct sweep_class_stat st[SWEEP_MAX_RAILS * 4] = {{0}}, *share = st,
                                                 *cap = st + SWEEP_MAX_RAILS * 2;
    int low = 0;
    /* A share's (and a ceiling's) bucket holds at most its class's bandwidth samples. */
    size_t room[SWEEP_MAX_RAILS * 4];
    for (unsigned b = 0; b < SWEEP_MAX_RAILS * 2; b++)
        room[b] = room[SWEEP_MAX_RAILS * 2 + b] = j->an->cls[SWEEP_M_BW][b / 2][b % 2].n;
    /* The shares first; the ceilings themselves only when a class falls short. */
    j->caps = 0;
    sweep_stats_buckets_within(j->f, j->nf, ceiling_keys, j, SWEEP_MAX_RAILS * 2, room, 0,
                               j->scratch, st);
    for (unsigned b = 0; b < SWEEP_MAX_RAILS * 2; b++)
        low |= share[b].n && share[b].median < j->an->opts.ceiling_frac;
    if (low) {
        j->caps = 1;
        sweep_stats_buckets_within(j->f, j->nf, ceiling_keys, j, SWEEP_MAX_RAILS * 4, room, 0,
                                   j->scratch, st);
    }
    for (unsigned b = 0; b < SWEEP_MAX_RAILS * 2 && low; b++) {
        if (!share[b].n || share[b].median >= j->an->opts.ceiling_frac)
            continue;
        struct sweep_verdict *v = add_verdict(j->an, SWEEP_V_CEILING);
        v->rail = (uint16_t)(b / 2);
        set_figures(v, SWEEP_M_BW, share[b].median * cap[b].median, cap[b].median);
        v->reference.kind = "port rate (the path's ceiling)";
        v->ratio = qty(share[b].median, "x", "median share of the path's ceiling");
        v->n_pairs = (uint32_t)share[b].n;
        snprintf(v->msg, sizeof(v->msg),
                 "rail %u, %s pairs: the median direction streams %.2fx its path's ceiling "
                 "(%.4g Gb/s ports, %zu directions) -> the fabric, the hosts' settings or the "
                 "test hold every pair back",
                 b / 2,
                 b % 2                 ? "across-group"
                 : j->an->groups_known ? "same-group"
                                       : "all",
                 share[b].median, cap[b].median, share[b].n);
    }
}

static int check_input(uint32_t n, const struct sweep_figure *f, size_t nf, struct ft_err *e)
{
    for (size_t i = 0; i < nf; i++)
        if (f[i].a >= n || f[i].b >= n || f[i].a == f[i].b || f[i].rail >= SWEEP_MAX_RAILS)
            return ft_err_set(e, -EINVAL,
                              "sweep figure %zu: ranks %u and %u on rail %u, but the job has %u "
                              "ranks and %d rails: the results do not belong to this job",
                              i, f[i].a, f[i].b, f[i].rail, n, SWEEP_MAX_RAILS);
    return 0;
}

/* Dense group indices; returns the number of groups, 0 when some rank's group is unknown. */
static uint32_t index_groups(const struct sweep_rank *ranks, uint32_t n, int32_t *gidx)
{
    uint32_t g = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (ranks[r].group == SWEEP_GROUP_UNKNOWN)
            return 0;
        gidx[r] = -1;
        for (uint32_t q = 0; q < r && gidx[r] < 0; q++)
            if (ranks[q].group == ranks[r].group)
                gidx[r] = gidx[q];
        if (gidx[r] < 0)
            gidx[r] = (int32_t)g++;
    }
    return g;
}

static void set_opts(struct sweep_analysis *an, const struct sweep_judge_opts *o)
{
    an->opts.z_max = o && o->z_max > 0 ? o->z_max : 3.5;
    an->opts.min_dev = o && o->min_dev > 0 ? o->min_dev : 0.15;
    an->opts.ceiling_frac = o && o->ceiling_frac > 0 ? o->ceiling_frac : 0.85;
    an->opts.group_names = o ? o->group_names : NULL;
}

int sweep_judge(const struct sweep_rank *ranks, uint32_t n, const struct sweep_figure *f, size_t nf,
                const struct sweep_judge_opts *o, struct sweep_analysis *out, struct ft_err *e)
{
    memset(out, 0, sizeof(*out));
    int rc = check_input(n, f, nf, e);
    if (rc)
        return rc;
    set_opts(out, o);
    out->n_ranks = n;
    struct judge j = {.an = out, .ranks = ranks, .f = f, .nf = nf};
    j.gidx = xalloc_zero(n + 1, sizeof(*j.gidx));
    j.n_groups = index_groups(ranks, n, j.gidx);
    out->groups_known = j.n_groups > 0;
    j.slow = xalloc_zero(nf + 1, 1);
    j.scratch = xalloc(sizeof(*j.scratch) * (nf * SLOTS + 1));
    j.suspect = xalloc_zero(n + 1, sizeof(*j.suspect));
    int uplinks = j.n_groups >= 2 && j.n_groups <= MAX_UPLINK_GROUPS;
    j.n_cells = uplinks ? (size_t)j.n_groups * j.n_groups : 1;
    class_stats(&j);
    mark_slow(&j);
    name_ranks(&j);
    if (uplinks) {
        j.uplink = xalloc_zero((size_t)SWEEP_MAX_RAILS * j.n_groups * j.n_groups, 1);
        name_uplinks(&j);
        count_uplinks(&j);
    }
    sweep_stats_sorted_free(&j.cells);
    name_pairs(&j);
    name_ceilings(&j);
    free(j.scratch);
    free(j.uplink);
    free(j.suspect);
    out->slow = j.slow;
    out->n_fig = nf;
    free(j.gidx);
    return 0;
}

/* Whether figure f is slow in metric m against its class (a failed test counts as slow). */
static int figure_slow(const struct sweep_analysis *an, const struct sweep_rank *ranks,
                       const struct sweep_figure *f, enum sweep_metric m)
{
    double v;
    if (f->failed)
        return 1;
    for (int s = 0; s < SLOTS; s++)
        if (slot_metric(s) == m && slot_value(f, s, &v) &&
            sweep_is_outlier(an, m, &an->cls[m][f->rail][pair_class(an, ranks, f)], v))
            return 1;
    return 0;
}

static int is_suspect(const struct sweep_verdict *v)
{
    return (v->kind == SWEEP_V_RANK && v->state == SWEEP_SUSPECT) || v->kind == SWEEP_V_RANK_FAILED;
}

/* Per rank, the rails on which it is suspect, and those on which it had a slow or failed
 * figure with a rank that is not. */
static void rail_masks(const struct sweep_analysis *an, const struct sweep_rank *ranks,
                       const struct sweep_figure *f, size_t nf, uint32_t *sus, uint32_t *dirty)
{
    for (size_t k = 0; k < an->n_v; k++)
        if (is_suspect(&an->v[k]))
            sus[an->v[k].rank] |= 1u << an->v[k].rail;
    /* dirty[m * n + rank]: the rank has a slow (or failed) figure of metric m on that rail,
     * so it is no reference for re-testing a suspect of metric m. A pair's noisy p99 does not
     * disqualify it as a bandwidth reference. */
    static const unsigned slot_bits[SWEEP_M_COUNT] = {
        [SWEEP_M_BW] = 0x3, [SWEEP_M_LAT_P50] = 0x4, [SWEEP_M_LAT_P99] = 0x8};
    int known = an->slow && an->n_fig == nf; /* the figures judged: their slow bits */
    uint32_t n = an->n_ranks;
    for (size_t i = 0; i < nf; i++) {
        uint32_t bit = 1u << f[i].rail;
        if ((sus[f[i].a] | sus[f[i].b]) & bit)
            continue;
        for (int m = 0; m < SWEEP_M_COUNT; m++) {
            int bad = f[i].failed || (known ? (an->slow[i] & slot_bits[m]) != 0
                                            : figure_slow(an, ranks, &f[i], (enum sweep_metric)m));
            if (bad) {
                dirty[(size_t)m * n + f[i].a] |= bit;
                dirty[(size_t)m * n + f[i].b] |= bit;
            }
        }
    }
}

/* Two ranks fine on the suspect's rail, the suspect's group first; returns how many found.
 * When fewer than two are clean (a loaded rack's noisy pairs mark many ranks), ranks with a
 * slow figure of the metric are taken next, never a suspect rank: the re-test measures the
 * suspect against them afresh, and a reference that were itself bad would be a suspect. */
static int pick_fine(const struct sweep_analysis *an, const struct sweep_rank *ranks,
                     const uint32_t *sus, const uint32_t *dirty, const struct sweep_verdict *v,
                     uint32_t *out)
{
    int got = 0;
    uint32_t n = an->n_ranks, bit = 1u << v->rail;
    for (int pass = 0; pass < 4; pass++)
        for (uint32_t k = 1; k < n && got < 2; k++) {
            uint32_t q = (v->rank + k) % n;
            int same = ranks[q].group == ranks[v->rank].group;
            int clean = !(dirty[(size_t)v->metric * n + q] & bit);
            if ((pass % 2 == 0) != same || (pass < 2) != clean || sus[q] ||
                !(sweep_plan_common_rails(&ranks[q], &ranks[v->rank]) & bit))
                continue;
            if (got == 0 || out[0] != q)
                out[got++] = q;
        }
    return got;
}

int sweep_recheck_plan(const struct sweep_analysis *an, const struct sweep_rank *ranks,
                       const struct sweep_figure *f, size_t nf, struct sweep_plan *plan,
                       struct ft_err *e)
{
    uint32_t *sus = xalloc_zero(an->n_ranks + 1, sizeof(*sus));
    uint32_t *dirty = xalloc_zero((size_t)SWEEP_M_COUNT * an->n_ranks + 1, sizeof(*dirty));
    struct sweep_test *t = xalloc_zero(2 * an->n_v + 1, sizeof(*t));
    size_t nt = 0;
    int rc = 0;
    rail_masks(an, ranks, f, nf, sus, dirty);
    for (size_t k = 0; k < an->n_v; k++) {
        const struct sweep_verdict *v = &an->v[k];
        uint32_t fine[2];
        if (v->kind == SWEEP_V_PAIR && v->state == SWEEP_SUSPECT) {
            t[nt++] =
                (struct sweep_test){v->rank, v->peer, v->rail, SWEEP_RECHECK, SWEEP_ROLE_PAIR};
            continue;
        }
        if (v->kind != SWEEP_V_RANK || v->state != SWEEP_SUSPECT)
            continue;
        if (pick_fine(an, ranks, sus, dirty, v, fine) < 2) {
            rc = ft_err_set(e, -ENOENT,
                            "%s: fewer than two ranks were fine on rail %u to re-test it "
                            "against; it stays a suspect",
                            ranks[v->rank].name, v->rail);
            continue;
        }
        for (int h = 0; h < 2; h++)
            t[nt++] =
                (struct sweep_test){v->rank, fine[h], v->rail, SWEEP_RECHECK, SWEEP_ROLE_PAIR};
    }
    if (nt)
        sweep_plan_pack(plan, t, nt, an->n_ranks);
    free(t);
    free(dirty);
    free(sus);
    return rc;
}

size_t sweep_recheck_judge(struct sweep_analysis *an, const struct sweep_rank *ranks,
                           const struct sweep_figure *re, size_t n_re)
{
    size_t left = 0;
    for (size_t k = 0; k < an->n_v; k++) {
        struct sweep_verdict *v = &an->v[k];
        uint32_t judged = 0, slow = 0;
        int pair = v->kind == SWEEP_V_PAIR;
        if ((v->kind != SWEEP_V_RANK && !pair) || v->state != SWEEP_SUSPECT)
            continue;
        for (size_t i = 0; i < n_re; i++) {
            const struct sweep_figure *f = &re[i];
            if (f->rail != v->rail || (f->a != v->rank && f->b != v->rank) || f->a >= an->n_ranks ||
                f->b >= an->n_ranks || (!f->failed && !fig_has(f, v->metric)))
                continue;
            /* A pair's re-test is that pair's; a rank's, any pair of it. */
            if (pair &&
                !((f->a == v->rank && f->b == v->peer) || (f->b == v->rank && f->a == v->peer)))
                continue;
            judged++;
            slow += (uint32_t)figure_slow(an, ranks, f, v->metric);
        }
        if (judged && slow == judged)
            v->state = SWEEP_NAMED;
        else if (judged && slow == 0)
            v->state = SWEEP_CLEARED;
        else
            left++;
    }
    return left;
}

void sweep_analysis_free(struct sweep_analysis *an)
{
    free(an->slow);
    free(an->v);
    memset(an, 0, sizeof(*an));
}
