/* rack_sweep: plan, conduct, gather, judge, re-test, name (rack_sweep.h). */
#include "engine/rack/rack_sweep.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/xalloc.h"
#include "engine/sweep/sweep_stats.h"

/* The first point of the flow named name in a run, or NULL. */
static const struct results_point *point_of(const struct results_run *run, const char *name)
{
    for (int p = 0; p < run->nphases; p++)
        for (int i = 0; i < run->phases[p].nflows; i++) {
            const struct results_flow *f = &run->phases[p].flows[i];
            const char *n = results_str_get(&f->name);
            if (n && !strcmp(n, name) && f->npoints > 0)
                return &f->points[0];
        }
    return NULL;
}

/* A NCCL point's bandwidth in Gb/s: nccl-tests' algbw of the host-timed mean (GB/s, 10^9
 * bytes per second, as nccl-tests prints it) times 8. For a sendrecv of 2 ranks, each rank
 * sends and receives the size at once, so it is each direction's rate. */
static bool nccl_gbps(const struct results_point *p, double *out)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(p->figures, "nccl");
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(n, "host_timed");
    double v;
    if (!jsonutil_num(h, "algbw_GBps", &v) || !(v >= 0))
        return false;
    *out = v * 8;
    return true;
}

static struct sweep_figure *find_fig(struct sweep_figure *f, size_t n, int a, int b, int rail)
{
    for (size_t i = 0; i < n; i++)
        if ((int)f[i].a == a && (int)f[i].b == b && f[i].rail == rail)
            return &f[i];
    return NULL;
}

struct sweep_figure *rack_sweep_figures(const struct results_sweep *doc, bool recheck,
                                        const char *transport, size_t *n)
{
    struct sweep_figure *f = xalloc_zero((size_t)doc->ntests + 1, sizeof(*f));
    size_t nf = 0;
    const char *want = recheck ? "recheck" : "pairs";
    bool nccl = !strcmp(transport, "nccl");
    for (int i = 0; i < doc->ntests; i++) {
        const struct results_sweep_test *t = &doc->tests[i];
        if (strcmp(t->pattern, want) || strcmp(t->role, "pair") ||
            strcmp(results_sweep_transport(&t->transport), transport))
            continue;
        struct sweep_figure *x = find_fig(f, nf, t->src, t->dst, t->rail);
        if (!x) {
            x = &f[nf++];
            *x = (struct sweep_figure){
                .a = (uint32_t)t->src, .b = (uint32_t)t->dst, .rail = (uint16_t)t->rail};
        }
        if (strcmp(t->status, "ok")) {
            x->failed = 1;
            x->valid = 0;
            if (!x->fail_reason)
                x->fail_reason = results_str_get(&t->error);
            continue;
        }
        if (x->failed || t->run_st != RESULTS_SET)
            continue;
        const struct results_point *p;
        double v;
        if (t->step == 0 && (p = point_of(&t->run, "latency")) && p->latency_st == RESULTS_SET) {
            /* results_latency is in microseconds (its unit "us"); figures are in ns. */
            if (results_num_get(&p->latency.p50, &v)) {
                x->lat_p50_ns = v * 1e3;
                x->valid |= SWEEP_FIG_LAT;
                if (results_num_get(&p->latency.p99, &v))
                    x->lat_p99_ns = v * 1e3;
                else
                    x->lat_p99_ns = x->lat_p50_ns;
            }
        } else if (t->step == 1 && nccl) {
            /* Both directions at once, at one rate: a to b's and b to a's. */
            if ((p = point_of(&t->run, "sendrecv")) && nccl_gbps(p, &v)) {
                x->bw_ab_gbps = x->bw_ba_gbps = v;
                x->valid |= SWEEP_FIG_BW_AB | SWEEP_FIG_BW_BA;
            }
        } else if (t->step == 1) {
            if ((p = point_of(&t->run, "a-to-b")) && results_num_get(&p->goodput_gbps, &v)) {
                x->bw_ab_gbps = v;
                x->valid |= SWEEP_FIG_BW_AB;
            }
        } else if (t->step == 2) {
            if ((p = point_of(&t->run, "b-to-a")) && results_num_get(&p->goodput_gbps, &v)) {
                x->bw_ba_gbps = v;
                x->valid |= SWEEP_FIG_BW_BA;
            }
        }
    }
    *n = nf;
    return f;
}

/* A new, empty verdict at the end of doc->verdicts. */
static struct results_sweep_verdict *add_verdict(struct results_sweep *doc)
{
    doc->verdicts =
        xalloc_resize(doc->verdicts, (size_t)(doc->nverdicts + 1) * sizeof(*doc->verdicts));
    struct results_sweep_verdict *v = &doc->verdicts[doc->nverdicts++];
    memset(v, 0, sizeof(*v));
    return v;
}

/* The flow "latency" of pair (a, b)'s ping-pong step on rail, as measured, or NULL; *run
 * (when not NULL) its run. */
static const struct results_flow *latency_flow(const struct results_sweep *doc, int a, int b,
                                               int rail, const char *transport,
                                               const struct results_run **run)
{
    for (int i = 0; i < doc->ntests; i++) {
        const struct results_sweep_test *t = &doc->tests[i];
        if (t->src != a || t->dst != b || t->rail != rail || t->step != 0 ||
            strcmp(results_sweep_transport(&t->transport), transport) ||
            strcmp(t->pattern, "pairs") || strcmp(t->role, "pair") || t->run_st != RESULTS_SET)
            continue;
        for (int ph = 0; ph < t->run.nphases; ph++)
            for (int k = 0; k < t->run.phases[ph].nflows; k++) {
                const struct results_flow *f = &t->run.phases[ph].flows[k];
                const char *n = results_str_get(&f->name);
                if (n && !strcmp(n, "latency") && f->npoints > 0) {
                    if (run)
                        *run = &t->run;
                    return f;
                }
            }
    }
    return NULL;
}

void rack_sweep_pairs(struct results_sweep *doc, const struct sweep_figure *f, size_t n,
                      const char *transport)
{
    doc->pairs =
        xalloc_resize(doc->pairs, (size_t)(doc->npairs + (int)n + 1) * sizeof(*doc->pairs));
    for (size_t i = 0; i < n; i++) {
        struct results_sweep_pair *p = &doc->pairs[doc->npairs++];
        memset(p, 0, sizeof(*p));
        p->a = (int)f[i].a;
        p->b = (int)f[i].b;
        p->rail = f[i].rail;
        results_str_set(&p->transport, transport);
        bool lat = f[i].valid & SWEEP_FIG_LAT;
        /* The kind and the p99.9 as the ping-pong's run reported them (the figures carry
         * only what the verdicts judge). */
        const struct results_run *lr = NULL;
        const struct results_flow *lf =
            lat ? latency_flow(doc, p->a, p->b, p->rail, transport, &lr) : NULL;
        results_str_set(&p->latency_kind, lf ? results_str_get(&lf->latency_kind) : NULL);
        results_str_set(&p->path_class,
                        lr && lr->path.st == RESULTS_SET ? results_str_get(&lr->path.cls) : NULL);
        results_num_set(&p->lat_p50_us, lat, f[i].lat_p50_ns / 1e3);
        results_num_set(&p->lat_p99_us, lat, f[i].lat_p99_ns / 1e3);
        double p999 = 0;
        bool have999 = lf && lf->points[0].latency_st == RESULTS_SET &&
                       results_num_get(&lf->points[0].latency.p999, &p999);
        results_num_set(&p->lat_p999_us, have999, p999);
        results_num_set(&p->bw_ab_gbps, f[i].valid & SWEEP_FIG_BW_AB, f[i].bw_ab_gbps);
        results_num_set(&p->bw_ba_gbps, f[i].valid & SWEEP_FIG_BW_BA, f[i].bw_ba_gbps);
        p->failed = (struct results_bool){RESULTS_SET, f[i].failed != 0};
        if (f[i].failed)
            results_str_set(&p->error, f[i].fail_reason ? f[i].fail_reason : "failed");
        const char *ua = results_str_get(&doc->ranks[p->a].unlike);
        const char *ub = results_str_get(&doc->ranks[p->b].unlike);
        p->unlike = (struct results_bool){RESULTS_SET, ua || ub};
    }
}

const char *const rack_sweep_transports[RACK_SWEEP_NXPORTS] = {"tcp", "verbs", "nccl"};

cJSON *rack_sweep_live_json(const struct results_sweep *doc)
{
    struct results_sweep live = *doc; /* shallow: only the copies below are owned here */
    if (!doc->npairs) {
        live.pairs = NULL;
        live.npairs = 0;
        for (int x = 0; x < RACK_SWEEP_NXPORTS; x++) {
            size_t nf;
            struct sweep_figure *f = rack_sweep_figures(doc, false, rack_sweep_transports[x], &nf);
            rack_sweep_pairs(&live, f, nf, rack_sweep_transports[x]);
            free(f);
        }
    }
    live.tests = xalloc((size_t)doc->ntests * sizeof(*live.tests) + 1);
    for (int i = 0; i < doc->ntests; i++) {
        live.tests[i] = doc->tests[i];
        live.tests[i].run_st = RESULTS_ABSENT;
    }
    cJSON *j = results_sweep_write(&live);
    free(live.tests);
    if (!doc->npairs) {
        for (int i = 0; i < live.npairs; i++) {
            free(live.pairs[i].latency_kind.s);
            free(live.pairs[i].error.s);
            free(live.pairs[i].transport.s);
        }
        free(live.pairs);
    }
    return j;
}

static const char *kind_name(enum sweep_verdict_kind k)
{
    static const char *const n[] = {"rank",    "uplink",      "pair",
                                    "ceiling", "rank_failed", "pair_failed"};
    return (unsigned)k < sizeof(n) / sizeof(n[0]) ? n[k] : "?";
}

static const char *state_name(enum sweep_state s)
{
    return s == SWEEP_NAMED ? "named" : s == SWEEP_CLEARED ? "cleared" : "suspect";
}

static void qty(struct results_sweep_qty *q, const struct sweep_qty *s)
{
    results_num_set(&q->value, s->unit != NULL, s->value);
    results_str_set(&q->unit, s->unit);
    results_str_set(&q->kind, s->kind);
}

/* Whether rank r of doc failed mid-sweep (died, hung, unreachable). */
static bool rank_dead(const struct results_sweep *doc, uint32_t r)
{
    const char *st = r < (uint32_t)doc->nranks ? results_str_get(&doc->ranks[r].status) : NULL;
    return st && !strcmp(st, "failed");
}

/* One verdict per rank that failed mid-sweep: the rank, not its pairs' paths. */
static void dead_rank_verdicts(struct results_sweep *doc)
{
    for (int r = 0; r < doc->nranks; r++) {
        if (!rank_dead(doc, (uint32_t)r))
            continue;
        int lost = 0;
        for (int i = 0; i < doc->npairs; i++)
            lost += results_bool_true(&doc->pairs[i].failed) &&
                    (doc->pairs[i].a == r || doc->pairs[i].b == r);
        struct results_sweep_verdict *o = add_verdict(doc);
        o->kind = xalloc_strdup("rank_failed");
        o->metric = xalloc_strdup("tests");
        o->state = xalloc_strdup("named");
        results_num_set(&o->rank, true, r);
        results_num_set(&o->n_slow, true, lost);
        char msg[512];
        snprintf(msg, sizeof(msg),
                 "%s: failed during the sweep (%s); %d of its pairs not measured -> the rank "
                 "itself: its process, host, or its port, cable or NIC",
                 doc->ranks[r].host, results_str_get(&doc->ranks[r].error), lost);
        o->message = xalloc_strdup(msg);
    }
}

void rack_sweep_verdicts(struct results_sweep *doc, const struct sweep_analysis *an,
                         const char *const *group_names, const char *transport)
{
    for (size_t i = 0; i < an->n_v; i++) {
        const struct sweep_verdict *v = &an->v[i];
        /* A dead rank's failed tests are its own verdict (dead_rank_verdicts). */
        bool dead = (v->rank != SWEEP_NO_RANK && rank_dead(doc, v->rank)) ||
                    (v->peer != SWEEP_NO_RANK && rank_dead(doc, v->peer));
        if (dead && (v->kind == SWEEP_V_PAIR_FAILED || v->kind == SWEEP_V_RANK_FAILED))
            continue;
        struct results_sweep_verdict *o = add_verdict(doc);
        o->kind = xalloc_strdup(kind_name(v->kind));
        o->metric = xalloc_strdup(sweep_metric_name(v->metric));
        o->state = xalloc_strdup(state_name(v->state));
        results_num_set(&o->rank, v->rank != SWEEP_NO_RANK, v->rank);
        results_num_set(&o->peer, v->peer != SWEEP_NO_RANK, v->peer);
        results_num_set(&o->rail, true, v->rail);
        results_str_set(&o->transport, transport);
        if (v->group_a != SWEEP_GROUP_UNKNOWN && group_names)
            results_str_set(&o->group_a, group_names[v->group_a]);
        if (v->group_b != SWEEP_GROUP_UNKNOWN && group_names)
            results_str_set(&o->group_b, group_names[v->group_b]);
        qty(&o->observed, &v->observed);
        qty(&o->reference, &v->reference);
        qty(&o->ratio, &v->ratio);
        results_num_set(&o->n_slow, true, v->n_slow);
        results_num_set(&o->n_pairs, true, v->n_pairs);
        /* TCP's verdicts read as they always have; the other matrices say whose they are. */
        char msg[1100];
        snprintf(msg, sizeof(msg), "%s%s%s", transport && strcmp(transport, "tcp") ? transport : "",
                 transport && strcmp(transport, "tcp") ? ": " : "", v->msg);
        o->message = xalloc_strdup(msg);
    }
}

/* One stream's share into doc->shares. */
static void add_share(struct results_sweep *doc, const struct results_sweep_test *t, double gbps,
                      double fair, const char *fair_kind)
{
    doc->shares = xalloc_resize(doc->shares, (size_t)(doc->nshares + 1) * sizeof(*doc->shares));
    struct results_sweep_share *h = &doc->shares[doc->nshares++];
    memset(h, 0, sizeof(*h));
    h->pattern = xalloc_strdup(t->pattern);
    h->round = t->round;
    h->src = t->src;
    h->dst = t->dst;
    results_num_set(&h->gbps, true, gbps);
    results_num_set(&h->fair_gbps, fair > 0, fair);
    results_num_set(&h->share, fair > 0, fair > 0 ? gbps / fair : 0);
    results_str_set(&h->fair_kind, fair_kind);
    doc->shares_st = RESULTS_SET;
}

/* Rank r's reference bandwidth: the median of its pairs' figures (Gb/s) within its own group
 * (what it reaches without crossing the spine; all its pairs when groups are unknown), else
 * its port's rate, else 0 (unknown). */
static double rank_reference(const struct results_sweep *doc, const struct sweep_rank *ranks, int r,
                             double *scratch)
{
    size_t n = 0;
    bool grouped = ranks[r].group != SWEEP_GROUP_UNKNOWN;
    for (int i = 0; i < doc->npairs; i++) {
        const struct results_sweep_pair *p = &doc->pairs[i];
        double v;
        if ((p->a != r && p->b != r) || results_bool_true(&p->failed) ||
            strcmp(results_sweep_transport(&p->transport), "tcp"))
            continue;
        if (grouped && ranks[p->a].group != ranks[p->b].group)
            continue;
        if (results_num_get(&p->bw_ab_gbps, &v))
            scratch[n++] = v;
        if (results_num_get(&p->bw_ba_gbps, &v))
            scratch[n++] = v;
    }
    if (n)
        return sweep_stats_median(scratch, n);
    double port = 0;
    for (unsigned k = 0; k < SWEEP_MAX_RAILS; k++)
        port = ranks[r].port_gbps[k] > port ? ranks[r].port_gbps[k] : port;
    return port;
}

/* Bisection: per split, each stream's goodput against what its two ranks reach alone (their
 * pairs' median bandwidth: the fair share of a non-blocking fabric is all of it), the
 * aggregate across the cut, as an event per split; when the group-against-group split's
 * streams fall under 0.85x, the uplinks between the groups are named. */
static void bisection_report(struct results_sweep *doc, const struct rack_sweep_opts *o)
{
    int n = doc->nranks;
    double *ref = xalloc_zero((size_t)n + 1, sizeof(double));
    double *scratch = xalloc(sizeof(double) * (2 * (size_t)doc->npairs + 2));
    for (int r = 0; r < n; r++)
        ref[r] = rank_reference(doc, o->ranks, r, scratch);
    free(scratch);
    double *share = xalloc(sizeof(double) * ((size_t)doc->ntests + 1));
    for (int i = 0; i < doc->ntests;) {
        const struct results_sweep_test *t0 = &doc->tests[i];
        if (strcmp(t0->pattern, "bisection")) {
            i++;
            continue;
        }
        int round = t0->round, j = i, ns = 0, nfail = 0, across = 1, worst = -1;
        double agg = 0, worst_share = 1e300;
        for (; j < doc->ntests && doc->tests[j].round == round &&
               !strcmp(doc->tests[j].pattern, "bisection");
             j++) {
            const struct results_sweep_test *t = &doc->tests[j];
            const struct results_point *p;
            double v;
            int32_t ga = o->ranks[t->src].group, gb = o->ranks[t->dst].group;
            across &= ga != SWEEP_GROUP_UNKNOWN && ga != gb;
            if (strcmp(t->status, "ok") || t->run_st != RESULTS_SET ||
                !(p = point_of(&t->run, "stream")) || !results_num_get(&p->goodput_gbps, &v)) {
                nfail++;
                continue;
            }
            agg += v;
            double r = ref[t->src] < ref[t->dst] ? ref[t->src] : ref[t->dst];
            add_share(doc, t, v, r,
                      "what its two ranks reach alone (the lower of their pairs' medians)");
            if (r > 0) {
                share[ns] = v / r;
                if (share[ns] < worst_share) {
                    worst_share = share[ns];
                    worst = j;
                }
                ns++;
            }
        }
        int nstreams = j - i;
        char line[512];
        int k = snprintf(line, sizeof(line),
                         "bisection round %d (%s split): %d streams across the cut, "
                         "aggregate %.4g Gb/s",
                         round + 1, across ? "group-against-group" : "random", nstreams, agg);
        double med = ns ? sweep_stats_median(share, (size_t)ns) : 0;
        if (ns)
            k += snprintf(line + k, sizeof(line) - (size_t)k,
                          "; each stream at a median %.2fx of what its ranks reach alone (their "
                          "pairs' median), the lowest %s -> %s at %.2fx",
                          med, doc->ranks[doc->tests[worst].src].host,
                          doc->ranks[doc->tests[worst].dst].host, worst_share);
        if (nfail)
            snprintf(line + k, sizeof(line) - (size_t)k, "; %d failed", nfail);
        rack_conduct_event(doc, "%s", line);
        if (across && ns && med < 0.85 && o->group_names) {
            int32_t ga = o->ranks[t0->src].group, gb = o->ranks[t0->dst].group;
            struct results_sweep_verdict *v = add_verdict(doc);
            v->kind = xalloc_strdup("uplink");
            v->metric = xalloc_strdup("bandwidth");
            v->state = xalloc_strdup("named");
            results_str_set(&v->group_a, o->group_names[ga]);
            results_str_set(&v->group_b, o->group_names[gb]);
            results_num_set(&v->rail, true, t0->rail);
            results_num_set(&v->observed.value, true, agg);
            results_str_set(&v->observed.unit, "Gb/s");
            results_str_set(&v->observed.kind, "aggregate bandwidth across the cut");
            results_num_set(&v->ratio.value, true, med);
            results_str_set(&v->ratio.unit, "x");
            results_str_set(&v->ratio.kind, "median stream share of what its ranks reach alone");
            results_num_set(&v->n_pairs, true, nstreams);
            snprintf(line, sizeof(line),
                     "groups %s and %s: half against half, the %d streams across them ran at "
                     "%.2fx of what their ranks reach alone (%.4g Gb/s in all) -> the uplinks "
                     "between them carry about %.4g Gb/s: oversubscribed %.1f:1 for this traffic",
                     o->group_names[ga], o->group_names[gb], nstreams, med, agg, agg,
                     med > 0 ? 1 / med : 0);
            v->message = xalloc_strdup(line);
        }
        i = j;
    }
    free(share);
    free(ref);
}

/* A test's probe latency p50 and p99 (us), from its "latency" flow. */
static bool probe_lat(const struct results_sweep_test *t, double *p50, double *p99)
{
    const struct results_point *p;
    return !strcmp(t->status, "ok") && t->run_st == RESULTS_SET &&
           (p = point_of(&t->run, "latency")) && p->latency_st == RESULTS_SET &&
           results_num_get(&p->latency.p50, p50) && results_num_get(&p->latency.p99, p99);
}

/* Incast: per receiver, what its k senders delivered together and each one's share of the fair
 * share (the aggregate / k), and the probe's latency quiet against loaded, as an event. */
static void incast_report(struct results_sweep *doc)
{
    double *share = xalloc(sizeof(double) * ((size_t)doc->ntests + 1));
    for (int i = 0; i < doc->ntests; i++) {
        const struct results_sweep_test *t0 = &doc->tests[i];
        const char *ph = results_str_get(&t0->phase);
        if (strcmp(t0->pattern, "incast") || !ph || strcmp(ph, "loaded") ||
            (i > 0 && doc->tests[i - 1].round == t0->round))
            continue;
        int recv = -1, k = 0, nfail = 0, worst = -1, probe = -1;
        double agg = 0, gb[512];
        int src[512], tix[512];
        for (int j = i; j < doc->ntests && doc->tests[j].round == t0->round; j++) {
            const struct results_sweep_test *t = &doc->tests[j];
            const struct results_point *p;
            double v;
            recv = t->dst;
            if (!strcmp(t->role, "probe")) {
                probe = j;
                continue;
            }
            if (strcmp(t->status, "ok") || t->run_st != RESULTS_SET ||
                !(p = point_of(&t->run, "stream")) || !results_num_get(&p->goodput_gbps, &v)) {
                nfail++;
                continue;
            }
            if (k < 512) {
                gb[k] = v;
                tix[k] = j;
                src[k++] = t->src;
            }
            agg += v;
        }
        if (recv < 0)
            continue;
        for (int s = 0; s < k; s++)
            add_share(doc, &doc->tests[tix[s]], gb[s], agg / k,
                      "the senders' aggregate / senders (an equal share of the receiver)");
        char line[640];
        int n = snprintf(line, sizeof(line), "incast to %s (%d senders): aggregate %.4g Gb/s",
                         doc->ranks[recv].host, k + nfail, agg);
        if (k > 0) {
            double fair = agg / k, low = 1e300;
            for (int s = 0; s < k; s++) {
                share[s] = gb[s] / fair;
                if (share[s] < low) {
                    low = share[s];
                    worst = src[s];
                }
            }
            n += snprintf(line + n, sizeof(line) - (size_t)n,
                          " (fair share %.4g Gb/s each; the lowest, %s, at %.2fx)", fair,
                          doc->ranks[worst].host, low);
        }
        /* The quiet probe: the same receiver's quiet round just before. */
        double q50, q99, l50, l99;
        int quiet = -1;
        for (int j = i - 1; j >= 0 && quiet < 0; j--) {
            const char *qp = results_str_get(&doc->tests[j].phase);
            if (!strcmp(doc->tests[j].pattern, "incast") && qp && !strcmp(qp, "quiet") &&
                doc->tests[j].dst == recv)
                quiet = j;
        }
        if (probe >= 0 && probe_lat(&doc->tests[probe], &l50, &l99)) {
            if (quiet >= 0 && probe_lat(&doc->tests[quiet], &q50, &q99) && q99 > 0)
                n += snprintf(line + n, sizeof(line) - (size_t)n,
                              "; the probe from %s: p99 %.4g us quiet, %.4g us loaded (%.1fx)",
                              doc->ranks[doc->tests[probe].src].host, q99, l99, l99 / q99);
            else
                n += snprintf(line + n, sizeof(line) - (size_t)n,
                              "; the probe from %s: p99 %.4g us loaded",
                              doc->ranks[doc->tests[probe].src].host, l99);
        }
        if (nfail)
            snprintf(line + n, sizeof(line) - (size_t)n, "; %d failed", nfail);
        rack_conduct_event(doc, "%s", line);
    }
    free(share);
}

/* Whether x (a rate) is an outlier below the class st: at least 15% under its median and,
 * when its MAD is not 0, beyond 3.5 robust z-scores ((median - x) / (1.4826 MAD)): the rule
 * of the rack's verdicts (engine/sweep/sweep_verdict.h). */
static bool slow_outlier(double x, const struct sweep_class_stat *st)
{
    if (!(x > 0) || x > 0.85 * st->median)
        return false;
    return st->mad <= 0 || (st->median - x) / (1.4826 * st->mad) > 3.5;
}

/* Whether test i is the first of its collective (pattern, round and rail). */
static bool first_of_collective(const struct results_sweep *doc, int i, const char *pattern)
{
    const struct results_sweep_test *t0 = &doc->tests[i];
    if (strcmp(t0->pattern, pattern))
        return false;
    for (int j = 0; j < i; j++)
        if (doc->tests[j].round == t0->round && doc->tests[j].rail == t0->rail &&
            !strcmp(doc->tests[j].pattern, pattern))
            return false;
    return true;
}

/* The allreduce pattern's rings, one event each (per round and rail): the all-reduce as its
 * slowest rank measured it (nccl-tests' busbw, GB/s; every rank waits for the same ring, so
 * they differ by the start skew only), and the link that set its pace: each rank times its
 * predecessor's chunks from first byte to last, and the slowest such link is named when it is
 * an outlier below the ring's links (slow_outlier), else the ring is said to be even. */
static void allreduce_report(struct results_sweep *doc)
{
    for (int i = 0; i < doc->ntests; i++) {
        const struct results_sweep_test *t0 = &doc->tests[i];
        if (!first_of_collective(doc, i, "allreduce"))
            continue;
        double *link = xalloc_zero((size_t)doc->ntests, sizeof(double)), bus = -1, size = 0;
        int n = 0, nok = 0, nlink = 0, slow = -1, ops = -1;
        for (int j = i; j < doc->ntests; j++) {
            const struct results_sweep_test *t = &doc->tests[j];
            if (t->round != t0->round || t->rail != t0->rail || strcmp(t->pattern, "allreduce"))
                continue;
            n++;
            const struct results_point *p =
                t->run_st == RESULTS_SET ? point_of(&t->run, "allreduce") : NULL;
            const cJSON *r = p ? cJSON_GetObjectItemCaseSensitive(p->figures, "ring") : NULL;
            double v, k;
            jsonutil_num(r, "size_bytes", &size); /* a failed test's too: what was asked */
            if (strcmp(t->status, "ok") || !r || !jsonutil_num(r, "busbw_GBps", &v) ||
                !jsonutil_num(r, "allreduces", &k))
                continue;
            nok++;
            if (bus < 0 || v < bus)
                bus = v;
            if (ops < 0 || k < ops)
                ops = (int)k;
            if (jsonutil_num(cJSON_GetObjectItemCaseSensitive(r, "from_predecessor"),
                             "arrival_Gbps", &v) &&
                v > 0) {
                if (slow < 0 || v < link[slow])
                    slow = j;
                link[j] = v;
                nlink++;
            }
        }
        char line[640];
        int m = snprintf(line, sizeof(line), "allreduce: a ring of %d ranks on rail %d, %.0f bytes",
                         n, t0->rail, size);
        if (nok < n) {
            snprintf(line + m, sizeof(line) - (size_t)m,
                     ": %d of its ranks' tests did not finish (a ring stops at a missing rank; "
                     "what each measured is in its test)",
                     n - nok);
        } else {
            m += snprintf(line + m, sizeof(line) - (size_t)m,
                          ": busbw %.4g GB/s (%.4g Gb/s) at its slowest rank, %d all-reduces "
                          "each",
                          bus, bus * 8, ops);
            double *v = xalloc_zero((size_t)nlink + 1, sizeof(double));
            int nv = 0;
            for (int j = 0; j < doc->ntests; j++)
                if (link[j] > 0)
                    v[nv++] = link[j];
            struct sweep_class_stat st = sweep_stats_of(v, (size_t)nv, 1);
            double med = st.median;
            free(v);
            if (slow >= 0 && nv >= 3 && slow_outlier(link[slow], &st)) {
                const struct results_sweep_test *t = &doc->tests[slow];
                /* t's figures are of the link into its src: from the test whose dst is t's src. */
                int pred = -1;
                for (int j = 0; j < doc->ntests; j++)
                    if (doc->tests[j].round == t->round && doc->tests[j].rail == t->rail &&
                        doc->tests[j].dst == t->src && !strcmp(doc->tests[j].pattern, "allreduce"))
                        pred = doc->tests[j].src;
                snprintf(line + m, sizeof(line) - (size_t)m,
                         "; its pace is set by the link %s -> %s: chunks arrived at %.4g Gb/s, "
                         "%.2fx the ring's median link (%.4g Gb/s)",
                         pred >= 0 ? doc->ranks[pred].host : "?", doc->ranks[t->src].host,
                         link[slow], link[slow] / med, med);
            } else if (nv) {
                snprintf(line + m, sizeof(line) - (size_t)m,
                         "; no link stands out (the slowest %.2fx the ring's median link, %.4g "
                         "Gb/s)",
                         slow >= 0 && med > 0 ? link[slow] / med : 1.0, med);
            }
        }
        free(link);
        rack_conduct_event(doc, "%s", line);
    }
}

/* The alltoall pattern's all-to-alls, one event each (per round and rail): the all-to-all as
 * its slowest rank measured it (nccl-tests' busbw, GB/s), and the ranks whose port set its
 * pace: every rank times each peer's share into it, first byte to last, so each rank has a
 * median link in (the shares it received) and out (the shares the others received from it);
 * a rank either of whose medians is at most half the ranks' median is named with both, else
 * none stands out. Half, not the verdicts' robust z-scores: in an all-to-all every link shares
 * both its ports with N - 2 others, so healthy ranks' medians spread widely (0.79x to 1.2x the
 * median on the test rack) and 8 of them give a MAD too wide to set a quarter-speed port apart
 * every time. */
static void alltoall_report(struct results_sweep *doc)
{
    int nr = doc->nranks;
    for (int i = 0; i < doc->ntests; i++) {
        const struct results_sweep_test *t0 = &doc->tests[i];
        if (!first_of_collective(doc, i, "alltoall"))
            continue;
        /* link[a * nr + b]: a's shares as they arrived at b, Gb/s (0: not known). */
        double *link = xalloc_zero((size_t)nr * (size_t)nr, sizeof(double)), bus = -1, size = 0;
        int n = 0, nok = 0, ops = -1;
        for (int j = i; j < doc->ntests; j++) {
            const struct results_sweep_test *t = &doc->tests[j];
            if (t->round != t0->round || t->rail != t0->rail || strcmp(t->pattern, "alltoall"))
                continue;
            n++;
            if (t->run_st != RESULTS_SET || !t->run.nphases)
                continue;
            bool ok = !strcmp(t->status, "ok");
            nok += ok;
            const struct results_phase *ph = &t->run.phases[t->run.nphases - 1];
            for (int k = 0; k < ph->nflows; k++) {
                const struct results_flow *f = &ph->flows[k];
                const char *name = results_str_get(&f->name);
                unsigned q;
                const cJSON *r =
                    f->npoints ? cJSON_GetObjectItemCaseSensitive(f->points[0].figures, "alltoall")
                               : NULL;
                double v, c;
                jsonutil_num(r, "size_bytes", &size); /* a failed test's too: what was asked */
                if (!ok || !name || sscanf(name, "to-rank%u", &q) != 1 || (int)q >= nr || !r ||
                    !jsonutil_num(r, "busbw_GBps", &v) || !jsonutil_num(r, "alltoalls", &c))
                    continue;
                bus = bus < 0 || v < bus ? v : bus;
                ops = ops < 0 || c < ops ? (int)c : ops;
                if (jsonutil_num(cJSON_GetObjectItemCaseSensitive(r, "from_peer"), "arrival_Gbps",
                                 &v) &&
                    v > 0 && t->src >= 0 && t->src < nr)
                    link[(size_t)q * (size_t)nr + (size_t)t->src] = v;
            }
        }
        char line[1024];
        int m = snprintf(line, sizeof(line), "alltoall: %d ranks on rail %d, %.0f bytes", n,
                         t0->rail, size);
        if (nok < n || bus < 0) {
            snprintf(line + m, sizeof(line) - (size_t)m,
                     ": %d of its ranks' tests did not finish (an all-to-all waits for every "
                     "rank; what each measured is in its test)",
                     n - nok);
        } else {
            m += snprintf(line + m, sizeof(line) - (size_t)m,
                          ": busbw %.4g GB/s (%.4g Gb/s) at its slowest rank, %d all-to-alls "
                          "each",
                          bus, bus * 8, ops);
            /* Each rank's median link out (its shares at the others) and in. */
            double *dir = xalloc_zero(2 * (size_t)nr, sizeof(double)),
                   *w = xalloc_zero((size_t)nr + 1, sizeof(double)),
                   *meds = xalloc_zero((size_t)nr + 1, sizeof(double));
            struct sweep_class_stat st[2];
            size_t nd[2] = {0, 0};
            for (int d = 0; d < 2; d++) {
                for (int r = 0; r < nr; r++) {
                    size_t nw = 0;
                    for (int q = 0; q < nr; q++) {
                        double x = d ? link[(size_t)q * (size_t)nr + (size_t)r]
                                     : link[(size_t)r * (size_t)nr + (size_t)q];
                        if (x > 0)
                            w[nw++] = x;
                    }
                    dir[d * nr + r] = nw ? sweep_stats_median(w, nw) : 0;
                    if (nw)
                        meds[nd[d]++] = dir[d * nr + r];
                }
                st[d] = sweep_stats_of(meds, nd[d], 0);
            }
            int named = 0;
            for (int r = 0; r < nr && nd[0] >= 3 && nd[1] >= 3; r++) {
                double out = dir[r], in = dir[nr + r];
                if (!(out > 0 && out <= 0.5 * st[0].median) &&
                    !(in > 0 && in <= 0.5 * st[1].median))
                    continue;
                m +=
                    snprintf(line + m, sizeof(line) - (size_t)m,
                             "%s %s: its shares arrived at the others at a median %.4g Gb/s "
                             "(%.2fx the ranks' median, %.4g Gb/s) and the others' at it at "
                             "%.4g Gb/s (%.2fx of %.4g)",
                             named++ ? ";" : "; its pace is set by", doc->ranks[r].host, out,
                             out / st[0].median, st[0].median, in, in / st[1].median, st[1].median);
                if ((size_t)m >= sizeof(line))
                    break;
            }
            if (!named && nd[0] >= 3)
                snprintf(line + m, sizeof(line) - (size_t)m,
                         "; no rank stands out (the ranks' median links out %.4g Gb/s, in %.4g)",
                         st[0].median, st[1].median);
            free(dir);
            free(meds);
            free(w);
        }
        free(link);
        rack_conduct_event(doc, "%s", line);
    }
}

static int plan_all(const struct rack_sweep_opts *o, struct sweep_plan *plan, struct ft_err *err)
{
    struct sweep_plan_opts po = {.seed = o->seed};
    uint32_t n = o->conduct.n;
    int rc = 0;
    if (o->pairs)
        rc = sweep_plan_pairs(plan, o->ranks, n, &po, err);
    if (!rc && o->incast)
        rc = sweep_plan_incast(plan, o->ranks, n, &po, err);
    if (!rc && o->bisection)
        rc = sweep_plan_bisection(plan, o->ranks, n, &po, err);
    if (!rc && o->ring)
        rc = sweep_plan_ring(plan, o->ranks, n, &po, err);
    if (!rc && o->allreduce)
        rc = sweep_plan_allreduce(plan, o->ranks, n, &po, err);
    if (!rc && o->alltoall)
        rc = sweep_plan_alltoall(plan, o->ranks, n, &po, err);
    return rc;
}

/* Judge each transport's pairs, re-test the suspects (one second pass for all of them), and
 * record both in doc. */
static int judge(const struct rack_sweep_opts *o, struct rack_conduct *c, struct sweep_plan *plan,
                 struct results_sweep *doc, bool recheck)
{
    struct sweep_figure *f[RACK_SWEEP_NXPORTS] = {0};
    size_t nf[RACK_SWEEP_NXPORTS] = {0};
    struct sweep_analysis an[RACK_SWEEP_NXPORTS] = {0};
    bool judged[RACK_SWEEP_NXPORTS] = {0};
    struct sweep_judge_opts jo = {.group_names = o->group_names};
    size_t first = plan->n_rounds;
    int rc = 0;
    for (int x = 0; x < RACK_SWEEP_NXPORTS && !rc; x++) {
        f[x] = rack_sweep_figures(doc, false, rack_sweep_transports[x], &nf[x]);
        if (!nf[x])
            continue;
        rack_sweep_pairs(doc, f[x], nf[x], rack_sweep_transports[x]);
        struct ft_err e = {0};
        if (sweep_judge(o->ranks, o->conduct.n, f[x], nf[x], &jo, &an[x], &e) < 0) {
            rc = ft_err_set(&e, -EINVAL, "%s", e.msg);
            break;
        }
        judged[x] = true;
        /* -ENOENT: some suspect has no two fine ranks to re-test against; the others'
         * re-tests are planned all the same. */
        if (recheck && sweep_recheck_plan(&an[x], o->ranks, f[x], nf[x], plan, &e) < 0)
            rack_conduct_event(doc, "%s%s%s", x ? rack_sweep_transports[x] : "", x ? ": " : "",
                               e.msg);
    }
    if (!rc && recheck && plan->n_rounds > first) {
        results_num_set(&doc->rounds_planned, true, (double)plan->n_rounds);
        rc = rack_conduct_rounds(c, plan, first, doc);
        for (int x = 0; x < RACK_SWEEP_NXPORTS; x++) {
            if (!judged[x])
                continue;
            size_t nre;
            struct sweep_figure *re = rack_sweep_figures(doc, true, rack_sweep_transports[x], &nre);
            sweep_recheck_judge(&an[x], o->ranks, re, nre);
            free(re);
        }
    }
    dead_rank_verdicts(doc);
    for (int x = 0; x < RACK_SWEEP_NXPORTS; x++) {
        if (judged[x])
            rack_sweep_verdicts(doc, &an[x], o->group_names, rack_sweep_transports[x]);
        sweep_analysis_free(&an[x]);
        free(f[x]);
    }
    bisection_report(doc, o);
    incast_report(doc);
    allreduce_report(doc);
    alltoall_report(doc);
    return rc;
}

/* Tests over a wide-area path (their run's class "wan", as --sites makes it for ranks in two
 * sites): one event for the pairs, and for a ring, the shape of a tensor-parallel all-reduce,
 * the rule the field follows (docs/diagnosis.md 8). */
static void wan_events(struct results_sweep *doc)
{
    int pairs = 0, npairs = 0, ring = 0;
    for (int i = 0; i < doc->npairs; i++) {
        const char *c = results_str_get(&doc->pairs[i].path_class);
        npairs += c != NULL;
        pairs += c && !strcmp(c, "wan");
    }
    for (int i = 0; i < doc->ntests; i++) {
        const struct results_sweep_test *t = &doc->tests[i];
        const char *c = t->run_st == RESULTS_SET && t->run.path.st == RESULTS_SET
                            ? results_str_get(&t->run.path.cls)
                            : NULL;
        ring += c && !strcmp(c, "wan") && !strcmp(t->pattern, "ring");
    }
    if (pairs)
        rack_conduct_event(doc,
                           "%d of %d pairs cross sites (path class wan): set against each "
                           "other, not against pairs within a site, where the sites place the "
                           "ranks",
                           pairs, npairs);
    if (ring)
        rack_conduct_event(doc,
                           "ring: %d test%s between ranks in two sites: a ring all-reduce's "
                           "neighbours wait on a wide-area path every step; keep tightly coupled "
                           "ranks inside one validated site and send independent requests "
                           "between sites",
                           ring, ring == 1 ? "" : "s");
}

int rack_sweep_run(const struct rack_sweep_opts *o, struct results_sweep *doc, struct ft_err *err)
{
    struct sweep_plan plan = {0};
    int rc = plan_all(o, &plan, err);
    if (rc < 0) {
        sweep_plan_free(&plan);
        results_str_set(&doc->status, "failed");
        return rc;
    }
    results_num_set(&doc->rounds_planned, true, (double)plan.n_rounds);
    results_num_set(&doc->rounds_done, true, 0);
    struct rack_conduct *c = NULL;
    rc = rack_conduct_open(&o->conduct, doc, &c, err);
    if (rc == 0)
        rc = rack_conduct_rounds(c, &plan, 0, doc);
    /* What was measured is judged in every case; the second pass only after a whole sweep. */
    if (c) {
        int jrc = judge(o, c, &plan, doc, rc == 0 && !o->no_recheck);
        if (rc == 0)
            rc = jrc;
        wan_events(doc);
    }
    bool failed = false;
    for (int i = 0; i < doc->ntests; i++)
        failed |= strcmp(doc->tests[i].status, "ok") != 0;
    for (uint32_t r = 0; r < o->conduct.n; r++)
        failed |= rack_conduct_failed(c, r);
    bool intr = o->conduct.interrupt && atomic_load(o->conduct.interrupt);
    results_str_set(&doc->status, intr ? "interrupted" : failed || rc < 0 ? "failed" : "ok");
    doc->interrupted = (struct results_bool){RESULTS_SET, intr};
    for (uint32_t r = 0; r < o->conduct.n; r++)
        if (!results_str_get(&doc->ranks[r].status))
            results_str_set(&doc->ranks[r].status, "ok");
    rack_conduct_close(c, failed || rc < 0 ? 2 : 0);
    sweep_plan_free(&plan);
    return rc;
}
