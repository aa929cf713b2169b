/* results_path: a run's path class and where its queue was (results_path.h), from the run's
 * own figures with the rules of engine/path/path.h. */
#include "engine/results/results_path.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/xalloc.h"
#include "engine/flow/mix.h"
#include "engine/path/path.h"

/* An address of this host: loopback, or one an interface holds. */
static bool local_addr(const char *host)
{
    unsigned char a[16];
    int fam = inet_pton(AF_INET, host, a) == 1    ? AF_INET
              : inet_pton(AF_INET6, host, a) == 1 ? AF_INET6
                                                  : 0;
    if (!fam)
        return !strcasecmp(host, "localhost");
    if ((fam == AF_INET && a[0] == 127) ||
        (fam == AF_INET6 && !memcmp(a, &in6addr_loopback, sizeof(in6addr_loopback))))
        return true;
    struct ifaddrs *ifs = NULL, *i;
    bool hit = false;
    if (getifaddrs(&ifs) < 0)
        return false;
    for (i = ifs; i && !hit; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != fam)
            continue;
        const void *x = fam == AF_INET
                            ? (const void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr
                            : (const void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
        hit = !memcmp(x, a, fam == AF_INET ? 4 : 16);
    }
    freeifaddrs(ifs);
    return hit;
}

/* The host of a peer as the run records it ("10.0.0.2", "10.0.0.2:7470", "[fd00::2]:7470",
 * "loopback agent 127.0.0.1:PORT"). */
static bool peer_is_local(const char *p)
{
    if (!strncmp(p, "loopback", 8))
        return true;
    char h[128];
    snprintf(h, sizeof(h), "%s", p);
    char *e;
    if (h[0] == '[' && (e = strchr(h, ']'))) {
        *e = 0;
        memmove(h, h + 1, strlen(h));
    } else if ((e = strchr(h, ':')) && !strchr(e + 1, ':')) {
        *e = 0;
    }
    return local_addr(h);
}

/* A qdisc's peaks over one phase's counters (the report of counters_set_report_json with
 * deltas: gauges carry "peak", counters "delta"): the qdisc whose qlen peaked highest. */
static void end_fill(struct results_path_end *o, const cJSON *report, struct path_end_queue *q)
{
    memset(q, 0, sizeof(*q));
    q->peak_packets = q->peak_bytes = q->drops = -1;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(report, "counters"), *c;
    if (!report)
        return;
    const char *best = NULL;
    double best_qlen = -1;
    cJSON_ArrayForEach(c, list)
    {
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(c, "source"),
                    *nm = cJSON_GetObjectItemCaseSensitive(c, "name"),
                    *ob = cJSON_GetObjectItemCaseSensitive(c, "object"),
                    *pk = cJSON_GetObjectItemCaseSensitive(c, "peak");
        if (cJSON_IsString(src) && !strcmp(src->valuestring, "qdisc") && cJSON_IsString(nm) &&
            !strcmp(nm->valuestring, "qlen") && cJSON_IsString(ob) && cJSON_IsNumber(pk) &&
            pk->valuedouble > best_qlen) {
            best_qlen = pk->valuedouble;
            best = ob->valuestring;
        }
    }
    q->have = true; /* sampled: no qdisc that queues (noqueue) holds nothing */
    o->st = RESULTS_SET;
    if (!best) {
        results_str_set(&o->netdev, NULL);
        results_num_set(&o->peak_packets, true, 0);
        q->peak_packets = 0;
        return;
    }
    cJSON_ArrayForEach(c, list)
    {
        const cJSON *ob = cJSON_GetObjectItemCaseSensitive(c, "object"),
                    *nm = cJSON_GetObjectItemCaseSensitive(c, "name");
        if (!cJSON_IsString(ob) || strcmp(ob->valuestring, best) || !cJSON_IsString(nm))
            continue;
        const cJSON *pk = cJSON_GetObjectItemCaseSensitive(c, "peak"),
                    *d = cJSON_GetObjectItemCaseSensitive(c, "delta");
        if (!strcmp(nm->valuestring, "backlog") && cJSON_IsNumber(pk))
            q->peak_bytes = pk->valuedouble;
        if (!strcmp(nm->valuestring, "drops") && cJSON_IsNumber(d))
            q->drops = d->valuedouble;
    }
    q->peak_packets = best_qlen;
    q->netdev = best;
    results_str_set(&o->netdev, best);
    results_num_set(&o->peak_packets, true, best_qlen);
    results_num_set(&o->peak_bytes, q->peak_bytes >= 0, q->peak_bytes);
    results_num_set(&o->drops, q->drops >= 0, q->drops);
}

/* The TCP RTTs (tcp_info srtt, us) of a phase's points: of the foreground's when it has
 * them, else of every flow's. */
static int phase_rtts(const struct results_phase *ph, const char *fg, double *v, int max,
                      double *retrans)
{
    int n = 0;
    *retrans = 0;
    for (int pass = 0; pass < 2 && !n; pass++)
        for (int i = 0; i < ph->nflows; i++) {
            const struct results_flow *f = &ph->flows[i];
            if (pass == 0 && (!fg || !f->name.s || strcmp(f->name.s, fg)))
                continue;
            for (int k = 0; k < f->npoints && n < max; k++) {
                const struct results_point *p = &f->points[k];
                double r;
                if (p->tcp_st != RESULTS_SET || !results_num_get(&p->tcp.rtt_us, &r) || r <= 0)
                    continue;
                v[n++] = r;
                double x;
                if (results_num_get(&p->tcp.retrans_segments, &x))
                    *retrans += x;
            }
        }
    return n;
}

/* The quiet phase's minimum round trip: the smallest latency sample of any flow there
 * (a half round trip counts twice) or TCP srtt, whichever is smaller. */
static bool quiet_min_rtt(const struct results_run *run, double *out)
{
    int q = -1;
    for (int p = 0; p < run->nphases && q < 0; p++)
        if (run->phases[p].name.s && !strcasecmp(run->phases[p].name.s, "quiet"))
            q = p;
    if (q < 0 && run->nphases == 1)
        q = 0;
    if (q < 0)
        return false;
    double best = INFINITY;
    const struct results_phase *ph = &run->phases[q];
    for (int i = 0; i < ph->nflows; i++)
        for (int k = 0; k < ph->flows[i].npoints; k++) {
            const struct results_point *p = &ph->flows[i].points[k];
            double v;
            if (p->latency_st == RESULTS_SET && results_num_get(&p->latency.min, &v) && v > 0) {
                const char *kind = results_str_get(&p->latency.kind);
                if (kind && (!strcmp(kind, "half_round_trip") || !strcmp(kind, "half round trip")))
                    v *= 2;
                best = fmin(best, v);
            }
            if (p->tcp_st == RESULTS_SET && results_num_get(&p->tcp.rtt_us, &v) && v > 0)
                best = fmin(best, v);
        }
    *out = best;
    return isfinite(best);
}

static void warn_add(struct results_path *p, const char *w)
{
    p->warnings = xalloc_resize(p->warnings, (size_t)(p->nwarnings + 2) * sizeof(char *));
    p->warnings[p->nwarnings++] = xalloc_strdup(w);
}

void results_path_fill(struct results_run *run, const struct mix *mix,
                       const struct results_path_in *in)
{
    struct results_path *p = &run->path;
    results_path_free(p);
    p->st = RESULTS_SET;
    struct path_evidence e = {.ttl = in ? in->ttl : -1, .same_leaf = in ? in->same_leaf : -1};
    e.site_local = in ? in->site_local : NULL;
    e.site_peer = in ? in->site_peer : NULL;
    e.loopback = run->npeers > 0;
    for (int i = 0; i < run->npeers; i++)
        e.loopback &= peer_is_local(run->peers[i]);
    e.have_min_rtt = quiet_min_rtt(run, &e.min_rtt_us);
    struct path_class_out c;
    path_classify(&e, &c);
    if (in && in->ttl_initial > 0 && e.ttl > 0 && e.ttl <= in->ttl_initial && !e.loopback) {
        /* The peer said what it starts at: no assumption needed. */
        c.ttl_init = in->ttl_initial;
        c.hops = in->ttl_initial - e.ttl;
    }
    results_str_set(&p->cls, path_class_str(c.cls));
    results_str_set(&p->evidence, c.why);
    results_num_set(&p->min_rtt_us, e.have_min_rtt, e.min_rtt_us);
    if (e.ttl >= 0) {
        results_num_set(&p->ttl, true, e.ttl);
        results_num_set(&p->ttl_initial, c.ttl_init > 0, c.ttl_init);
        results_num_set(&p->hops, c.hops >= 0, c.hops);
    }
    if (e.site_local && *e.site_local)
        results_str_set(&p->site_local, e.site_local);
    if (e.site_peer && *e.site_peer)
        results_str_set(&p->site_peer, e.site_peer);
    if (in && in->site_from)
        results_str_set(&p->site_from, in->site_from);

    /* The transport's RTT per phase, and the queues of the loaded phase (the last one). */
    const char *fg = results_str_get(&run->summary.foreground);
    p->rtt = xalloc_zero((size_t)run->nphases + 1, sizeof(*p->rtt));
    struct path_rtt rtt = {0};
    double quiet = NAN, loaded = NAN;
    for (int ph = 0; ph < run->nphases; ph++) {
        double v[256], rt;
        int n = phase_rtts(&run->phases[ph], fg, v, 256, &rt);
        struct results_path_rtt *t = &p->rtt[p->nrtt++];
        t->phase = xalloc_strdup(run->phases[ph].name.s ? run->phases[ph].name.s : "?");
        if (!n) {
            t->st = RESULTS_NULL;
            continue;
        }
        t->st = RESULTS_SET;
        double med = path_median(v, n); /* sorts */
        results_num_set(&t->min_us, true, v[0]);
        results_num_set(&t->median_us, true, med);
        results_num_set(&t->max_us, true, v[n - 1]);
        results_num_set(&t->retrans_segments, true, rt);
        if (!strcasecmp(t->phase, "quiet"))
            quiet = med;
        else if (!strcasecmp(t->phase, "loaded"))
            loaded = med;
    }
    if (isfinite(quiet) && isfinite(loaded))
        rtt = (struct path_rtt){.have = true, .quiet_us = quiet, .loaded_us = loaded};
    int lp = run->nphases - 1;
    for (int ph = 0; ph < run->nphases; ph++)
        if (run->phases[ph].name.s && !strcasecmp(run->phases[ph].name.s, "loaded"))
            lp = ph;
    struct path_end_queue lq = {0}, pq = {0};
    if (lp >= 0 && run->phases[lp].counters_st == RESULTS_SET)
        end_fill(&p->local, run->phases[lp].counters, &lq);
    if (lp >= 0 && lp < 2 && in && in->peer_counters[lp])
        end_fill(&p->peer, in->peer_counters[lp], &pq);
    if (e.loopback) {
        results_str_set(&p->queue, path_queue_where_str(PATH_QUEUE_UNKNOWN));
        results_str_set(&p->verdict, "same host: no path between the ends to hold a queue");
    } else {
        struct path_verdict v;
        path_queue_verdict(&lq, &pq, &rtt, &v);
        results_str_set(&p->queue, path_queue_where_str(v.where));
        results_str_set(&p->verdict, v.line);
    }
    p->warnings_st = RESULTS_SET;
    p->warnings = xalloc_zero(1, sizeof(char *));
    for (int i = 0; mix && c.cls == PATH_CLASS_WAN && i < mix->nflows; i++)
        if (path_class_tight(mix->flows[i].class_name)) {
            char w[400];
            path_tight_warning(mix->flows[i].name, mix->flows[i].class_name, w, sizeof(w));
            warn_add(p, w);
        }
}
