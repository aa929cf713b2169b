/* results: builds, saves and loads the results document. Latency is written in
 * microseconds with its kind named; throughput in Gb/s (10^9 bit/s); byte counts in bytes;
 * histograms keep their bucket bounds in nanoseconds. */
#include "engine/results/results.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/flow/mix.h"
#include "engine/results/version.h"
#include "engine/flow/flow.h"
#include "topology/topo_json.h"

static void iso8601(const struct timespec *ts, char *buf, size_t len)
{
    struct tm tm;
    gmtime_r(&ts->tv_sec, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03ldZ", ts->tv_nsec / 1000000);
}

static const char *status_str(int st)
{
    switch (st) {
    case FLOW_OK:
        return "ok";
    case FLOW_FAILED:
        return "failed";
    case FLOW_STOPPED:
        return "stopped";
    case FLOW_RUNNING:
        return "running";
    default:
        return "not run";
    }
}

static cJSON *latency_json(const struct hist *h, enum mix_latency_kind kind)
{
    struct hist_stats s;
    hist_stats(h, &s);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", mix_latency_kind_str(kind));
    cJSON_AddStringToObject(o, "unit", "us");
    cJSON_AddNumberToObject(o, "count", (double)s.count);
    cJSON_AddNumberToObject(o, "min", s.min / 1e3);
    cJSON_AddNumberToObject(o, "mean", s.mean / 1e3);
    cJSON_AddNumberToObject(o, "stdev", s.stdev / 1e3);
    cJSON_AddNumberToObject(o, "p50", s.p50 / 1e3);
    cJSON_AddNumberToObject(o, "p90", s.p90 / 1e3);
    cJSON_AddNumberToObject(o, "p99", s.p99 / 1e3);
    cJSON_AddNumberToObject(o, "p99.9", s.p999 / 1e3);
    cJSON_AddNumberToObject(o, "p99.99", s.p9999 / 1e3);
    cJSON_AddNumberToObject(o, "max", s.max / 1e3);
    return o;
}

/* Payload delivered inside a window: tx counts what the peer acknowledged when the
 * transport could see it (a stream's socket buffers are not delivered data). */
static uint64_t window_payload(const struct flow_rt *f, const struct flow_point *p)
{
    const struct mix_flow *s = f->spec;
    bool tx_side = s->op != MIX_OP_STREAM || s->dir != MIX_DIR_RX;
    bool rx_side = s->op != MIX_OP_STREAM || s->dir != MIX_DIR_TX;
    uint64_t out = 0;
    if (tx_side) {
        if (s->op == MIX_OP_STREAM && p->wire0.valid && p->wire1.valid)
            out += p->wire1.acked_bytes - p->wire0.acked_bytes;
        else
            out += p->tx1 - p->tx0;
    }
    if (rx_side)
        out += p->rx1 - p->rx0;
    return out;
}

static cJSON *point_json(const struct flow_rt *f, int pi, struct hist *merged, struct hist *tmp)
{
    const struct flow_point *p = &f->points[pi];
    cJSON *o = cJSON_CreateObject();
    if (p->size)
        cJSON_AddNumberToObject(o, "size_bytes", (double)p->size);
    else
        cJSON_AddNullToObject(o, "size_bytes");
    cJSON_AddBoolToObject(o, "measured", p->done);
    cJSON_AddBoolToObject(o, "complete", p->done && !p->partial);
    if (!p->done)
        return o;
    double secs = (p->t1_ns - p->t0_ns) / 1e9;
    uint64_t payload = window_payload(f, p);
    cJSON_AddNumberToObject(o, "measure_s", secs);
    cJSON_AddNumberToObject(o, "ops", (double)(p->ops1 - p->ops0));
    cJSON_AddNumberToObject(o, "ops_per_s", secs > 0 ? (p->ops1 - p->ops0) / secs : 0);
    cJSON_AddNumberToObject(o, "payload_bytes", (double)payload);
    cJSON_AddNumberToObject(o, "goodput_gbps", secs > 0 ? payload * 8 / secs / 1e9 : 0);
    if (p->wire0.valid && p->wire1.valid) {
        uint64_t wb = p->wire1.wire_bytes - p->wire0.wire_bytes;
        cJSON_AddNumberToObject(o, "wire_bytes", (double)wb);
        cJSON_AddNumberToObject(o, "wire_gbps", secs > 0 ? wb * 8 / secs / 1e9 : 0);
        cJSON *t = cJSON_AddObjectToObject(o, "tcp");
        cJSON_AddNumberToObject(t, "retrans_segments",
                                (double)(p->wire1.retrans - p->wire0.retrans));
        cJSON_AddNumberToObject(t, "rtt_us", p->wire1.rtt_us);
        cJSON_AddNumberToObject(t, "rttvar_us", p->wire1.rttvar_us);
        cJSON_AddNumberToObject(t, "cwnd_bytes", (double)p->wire1.cwnd_bytes);
    } else {
        cJSON_AddNullToObject(o, "wire_bytes");
        cJSON_AddNullToObject(o, "wire_gbps");
        cJSON_AddNullToObject(o, "tcp");
    }
    enum mix_latency_kind kind = mix_latency_kind_of(f->spec);
    hist_init(merged);
    for (int w = 0; w < f->nworkers; w++) {
        hist_snapshot(&f->workers[w].lat[pi], tmp);
        hist_merge(merged, tmp);
    }
    if (kind != MIX_LAT_NONE && atomic_load(&merged->count) > 0) {
        cJSON_AddItemToObject(o, "latency", latency_json(merged, kind));
        cJSON_AddItemToObject(o, "histogram", hist_to_json(merged));
    } else {
        cJSON_AddNullToObject(o, "latency");
    }
    /* A transport's own figures for this point (nccl: algbw/busbw as nccl-tests computes
     * them, the host-timed mean), reported as conditions.point_figures[i]. */
    const cJSON *fig, *pf = cJSON_GetArrayItem(
                          cJSON_GetObjectItemCaseSensitive(f->conditions, "point_figures"), pi);
    cJSON_ArrayForEach(fig, pf) cJSON_AddItemToObject(o, fig->string, cJSON_Duplicate(fig, 1));
    return o;
}

static cJSON *flow_json(const struct flow_rt *f, const struct results_timeline *tl,
                        uint64_t phase_t0, uint64_t run_t0)
{
    const struct mix_flow *s = f->spec;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", s->name);
    cJSON_AddStringToObject(o, "transport", s->transport);
    cJSON_AddStringToObject(o, "op", mix_op_str(s->op));
    cJSON_AddStringToObject(o, "role",
                            s->role == MIX_ROLE_FOREGROUND ? "foreground" : "background");
    cJSON_AddStringToObject(o, "direction", mix_dir_str(s->dir));
    cJSON_AddStringToObject(o, "latency_kind", mix_latency_kind_str(mix_latency_kind_of(s)));
    cJSON_AddStringToObject(o, "peer", f->peer_desc);
    cJSON_AddNumberToObject(o, "connections_asked", s->concurrency);
    cJSON_AddNumberToObject(o, "workers", f->nworkers);
    int st = atomic_load(&((struct flow_rt *)f)->status);
    cJSON_AddStringToObject(o, "status", status_str(st));
    if (st == FLOW_FAILED) {
        cJSON_AddStringToObject(o, "error", f->error);
        cJSON_AddNumberToObject(o, "failed_at_s", (f->failed_ns - phase_t0) / 1e9);
        /* How long after the last byte moved the failure was declared: the detection time
         * when the fault happened right after that byte. */
        if (f->last_progress_ns && f->failed_ns > f->last_progress_ns)
            cJSON_AddNumberToObject(o, "detected_after_last_progress_s",
                                    (f->failed_ns - f->last_progress_ns) / 1e9);
        cJSON_AddNumberToObject(o, "failed_at_run_s", (f->failed_ns - run_t0) / 1e9);
    } else {
        cJSON_AddNullToObject(o, "error");
    }
    cJSON_AddNumberToObject(o, "setup_s", f->setup_s);
    cJSON_AddNumberToObject(o, "teardown_s", f->teardown_s);
    struct hist *merged = xalloc(sizeof(*merged)), *tmp = xalloc(sizeof(*tmp));
    cJSON *pts = cJSON_AddArrayToObject(o, "points");
    for (int p = 0; p < f->npoints; p++)
        cJSON_AddItemToArray(pts, point_json(f, p, merged, tmp));
    free(merged);
    free(tmp);
    cJSON *t = cJSON_AddObjectToObject(o, "timeline");
    cJSON_AddStringToObject(t, "t", "seconds since the run started");
    cJSON *ta = cJSON_AddArrayToObject(t, "t_s");
    cJSON *ga = cJSON_AddArrayToObject(t, "goodput_gbps");
    cJSON *wa = cJSON_AddArrayToObject(t, "wire_gbps");
    cJSON *oa = cJSON_AddArrayToObject(t, "ops_per_s");
    for (int i = 0; tl && i < tl->n; i++) {
        cJSON_AddItemToArray(ta, cJSON_CreateNumber((double)(long)(tl->t[i] * 1000) / 1000));
        cJSON_AddItemToArray(ga, cJSON_CreateNumber(tl->goodput_gbps[i]));
        cJSON_AddItemToArray(wa, cJSON_CreateNumber(tl->wire_gbps[i]));
        cJSON_AddItemToArray(oa, cJSON_CreateNumber(tl->ops_per_s[i]));
    }
    /* Captured right after setup, while the connections existed (point_figures went into
     * the points). */
    cJSON *cond = f->conditions ? cJSON_Duplicate(f->conditions, 1) : cJSON_CreateObject();
    cJSON_DeleteItemFromObjectCaseSensitive(cond, "point_figures");
    cJSON_AddItemToObject(o, "conditions", cond);
    /* The flow's own counters, apart from the phase's port-wide ones (verbs: its queue
     * pairs' RDMA counter, with the deltas since binding, or why there is none). */
    if (f->own_report)
        cJSON_AddItemToObject(o, "qp_counters", cJSON_Duplicate(f->own_report, 1));
    return o;
}

static void add_sysctl(cJSON *o, const char *key, const char *path)
{
    char buf[256];
    if (fsutil_read("/", path, buf, sizeof(buf)) >= 0)
        cJSON_AddStringToObject(o, key, buf);
    else
        cJSON_AddNullToObject(o, key);
}

/* The conditions of an all-sim run: the simulated fabric (its topology; each flow's
 * conditions.sim hold the rest), nothing of the host. */
static void sim_conditions(cJSON *cond, const struct results_input *in)
{
    cJSON *o = cJSON_AddObjectToObject(cond, "sim");
    cJSON_AddStringToObject(o, "note",
                            "every flow is simulated: these are the simulated fabric's "
                            "conditions (each flow's conditions.sim has its settings and "
                            "results); the host's sysctls, netdev MTUs and topology are not "
                            "recorded");
    const char *topo = NULL;
    for (int p = 0; p < in->nphases && !topo; p++)
        for (int i = 0; i < in->mix->nflows && !topo; i++) {
            const struct flow_rt *f = in->phases[p].flows[i];
            if (f && f->conditions)
                topo = jsonutil_str(cJSON_GetObjectItemCaseSensitive(f->conditions, "sim"),
                                    "topology");
        }
    jsonutil_add_str_or_null(o, "topology", topo);
}

/* The foreground's p50/p99 per phase, side by side (quiet vs loaded). */
static cJSON *summary_json(cJSON *phases, const struct mix *mix)
{
    int fg = mix_foreground(mix);
    cJSON *o = cJSON_CreateObject();
    if (fg < 0)
        return o;
    cJSON_AddStringToObject(o, "foreground", mix->flows[fg].name);
    const cJSON *ph;
    cJSON_ArrayForEach(ph, phases)
    {
        const cJSON *fl;
        cJSON_ArrayForEach(fl, cJSON_GetObjectItem(ph, "flows"))
        {
            if (strcmp(jsonutil_str(fl, "name"), mix->flows[fg].name))
                continue;
            cJSON *pts = cJSON_GetObjectItem(fl, "points");
            cJSON *last = cJSON_GetArrayItem(pts, cJSON_GetArraySize(pts) - 1);
            cJSON *lat = cJSON_GetObjectItem(last, "latency");
            cJSON *e = cJSON_AddObjectToObject(o, jsonutil_str(ph, "name"));
            cJSON_AddStringToObject(e, "status", jsonutil_str(fl, "status"));
            if (cJSON_IsObject(lat))
                for (const char *const *k =
                         (const char *const[]){"p50", "p99", "p99.9", "max", NULL};
                     *k; k++)
                    cJSON_AddItemToObject(e, *k, cJSON_Duplicate(cJSON_GetObjectItem(lat, *k), 0));
            cJSON_AddItemToObject(e, "goodput_gbps",
                                  cJSON_Duplicate(cJSON_GetObjectItem(last, "goodput_gbps"), 0));
        }
    }
    double q, l;
    const cJSON *qo = cJSON_GetObjectItem(o, "quiet"), *lo = cJSON_GetObjectItem(o, "loaded");
    if (jsonutil_num(qo, "p99", &q) && jsonutil_num(lo, "p99", &l) && q > 0)
        cJSON_AddNumberToObject(o, "p99_loaded_over_quiet", l / q);
    return o;
}

cJSON *results_build(const struct results_input *in)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "format", RESULTS_FORMAT);
    cJSON_AddNumberToObject(doc, "version", RESULTS_VERSION);
    char ts[64];
    iso8601(&in->wall_start, ts, sizeof(ts));
    cJSON_AddStringToObject(doc, "started_at", ts);
    iso8601(&in->wall_end, ts, sizeof(ts));
    cJSON_AddStringToObject(doc, "ended_at", ts);
    cJSON_AddNumberToObject(doc, "duration_s",
                            (in->wall_end.tv_sec - in->wall_start.tv_sec) +
                                (in->wall_end.tv_nsec - in->wall_start.tv_nsec) / 1e9);
    cJSON_AddBoolToObject(doc, "interrupted", in->interrupted);
    cJSON *hosts = cJSON_AddObjectToObject(doc, "hosts");
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    cJSON_AddStringToObject(hosts, "local", host);
    cJSON *peers = cJSON_AddArrayToObject(hosts, "peers");
    for (int p = 0; p < in->nphases; p++)
        for (int i = 0; i < in->mix->nflows; i++) {
            const struct flow_rt *f = in->phases[p].flows[i];
            if (!f || !f->peer_desc[0])
                continue;
            bool dup = false;
            const cJSON *e;
            cJSON_ArrayForEach(e, peers) dup |= !strcmp(e->valuestring, f->peer_desc);
            if (!dup)
                cJSON_AddItemToArray(peers, cJSON_CreateString(f->peer_desc));
        }
    cJSON_AddItemToObject(doc, "versions", version_json());
    cJSON *cond = cJSON_AddObjectToObject(doc, "conditions");
    /* A simulated run depends on the simulated fabric alone: it records none of the host's
     * state (sysctls, netdev MTUs, the topology), which other programs change under it. */
    bool sim = mix_all_simulated(in->mix);
    if (sim)
        sim_conditions(cond, in);
    else {
        add_sysctl(cond, "tcp_congestion_control", "proc/sys/net/ipv4/tcp_congestion_control");
        add_sysctl(cond, "tcp_ecn", "proc/sys/net/ipv4/tcp_ecn");
        add_sysctl(cond, "tcp_rmem", "proc/sys/net/ipv4/tcp_rmem");
        add_sysctl(cond, "tcp_wmem", "proc/sys/net/ipv4/tcp_wmem");
    }
    if (in->topo && !sim) {
        cJSON *mtu = cJSON_AddObjectToObject(cond, "netdev_mtu");
        for (int i = 0; i < in->topo->nnetdevs; i++)
            if (in->topo->netdevs[i].valid & TOPO_NET_V_MTU)
                cJSON_AddNumberToObject(mtu, in->topo->netdevs[i].name, in->topo->netdevs[i].mtu);
    }
    cJSON_AddItemToObject(doc, "mix", mix_to_json(in->mix));
    cJSON *phases = cJSON_AddArrayToObject(doc, "phases");
    for (int p = 0; p < in->nphases; p++) {
        cJSON *ph = cJSON_CreateObject();
        cJSON_AddStringToObject(ph, "name", in->phases[p].name);
        double dur = in->phases[p].t1_ns > in->phases[p].t0_ns
                         ? (in->phases[p].t1_ns - in->phases[p].t0_ns) / 1e9
                         : 0;
        cJSON_AddNumberToObject(ph, "duration_s", dur);
        /* Port-wide counter deltas over the phase (n/a as null); null when none were read. */
        if (in->phases[p].counters)
            cJSON_AddItemToObject(ph, "counters", cJSON_Duplicate(in->phases[p].counters, 1));
        else
            cJSON_AddNullToObject(ph, "counters");
        cJSON *fl = cJSON_AddArrayToObject(ph, "flows");
        for (int i = 0; i < in->mix->nflows; i++)
            if (in->phases[p].flows[i])
                cJSON_AddItemToArray(fl, flow_json(in->phases[p].flows[i], &in->phases[p].tl[i],
                                                   in->phases[p].t0_ns, in->t_start_ns));
        cJSON_AddItemToArray(phases, ph);
    }
    cJSON_AddItemToObject(doc, "summary", summary_json(phases, in->mix));
    cJSON *ev = cJSON_AddArrayToObject(doc, "events");
    for (int i = 0; i < in->nevents; i++)
        cJSON_AddItemToArray(ev, cJSON_CreateString(in->events[i]));
    if (in->topo && !sim)
        cJSON_AddItemToObject(doc, "topology", topo_json_from_model(in->topo));
    else
        cJSON_AddNullToObject(doc, "topology");
    return doc;
}

void results_conditions_brief(const cJSON *c, char *buf, size_t len)
{
    struct strbuf sb;
    strbuf_init(&sb);
    int64_t v, w;
    const char *dev = jsonutil_str(c, "rdma_device"), *ll = jsonutil_str(c, "link_layer");
    /* Numbers out of their field's range are left out (n/a), never converted. */
    if (dev) {
        strbuf_printf(&sb, "%s:%d", dev, jsonutil_int_in(c, "port", 0, 255, &v) ? (int)v : 1);
        bool ib = ll && !strncmp(ll, "InfiniBand", 10);
        if (ib && jsonutil_int_in(c, "lid", 0, 0xffff, &v))
            strbuf_printf(&sb, " IB LID %d SL %d", (int)v,
                          jsonutil_int_in(c, "sl", 0, 15, &w) ? (int)w : 0);
        else if (jsonutil_str(c, "gid_type"))
            strbuf_printf(&sb, " %s GID %d %s", jsonutil_str(c, "gid_type"),
                          jsonutil_int_in(c, "gid_index", 0, INT_MAX, &v) ? (int)v : -1,
                          jsonutil_str(c, "gid") ? jsonutil_str(c, "gid") : "?");
        if (jsonutil_int_in(c, "path_mtu", 0, INT_MAX, &v))
            strbuf_printf(&sb, ", MTU %d", (int)v);
        if (!ib && jsonutil_int_in(c, "dscp", 0, 63, &v)) {
            strbuf_printf(&sb, ", DSCP %d (TC %d)", (int)v,
                          jsonutil_int_in(c, "traffic_class", 0, 255, &w) ? (int)w : (int)v << 2);
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "dcb");
            const cJSON *pfc = cJSON_GetObjectItemCaseSensitive(d, "pfc_enabled");
            if (jsonutil_int_in(d, "priority", 0, 7, &w))
                strbuf_printf(&sb, " prio %d PFC %s", (int)w,
                              cJSON_IsBool(pfc) ? (cJSON_IsTrue(pfc) ? "on" : "OFF") : "?");
            else if (d)
                strbuf_printf(&sb, " prio ?%s",
                              cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(d, "available"))
                                  ? " (no DCB)"
                                  : "");
        }
        if (jsonutil_int_in(c, "queue_pairs", 0, INT_MAX, &v))
            strbuf_printf(&sb, ", %d QP%s", (int)v, v == 1 ? "" : "s");
        const char *conn = jsonutil_str(c, "connection");
        if (conn && !strncmp(conn, "librdmacm", 9))
            strbuf_printf(&sb, ", rdma_cm");
        const char *mem = jsonutil_str(c, "memory");
        if (mem && strcmp(mem, "host"))
            strbuf_printf(&sb, ", %s memory", mem);
    } else if (jsonutil_str(c, "congestion_control")) {
        strbuf_printf(&sb, "TCP %s", jsonutil_str(c, "congestion_control"));
        if (jsonutil_int_in(c, "mss_bytes", 0, INT_MAX, &v))
            strbuf_printf(&sb, ", MSS %d", (int)v);
    }
    snprintf(buf, len, "%s", sb.s ? sb.s : "");
    strbuf_free(&sb);
}

bool results_goodput(const cJSON *flow, const cJSON *point, double *gbps, bool *simulated)
{
    const char *t = jsonutil_str(flow, "transport");
    *simulated = t && !strcmp(t, "sim");
    if (!*simulated)
        return jsonutil_num(point, "goodput_gbps", gbps);
    const cJSON *sim = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(flow, "conditions"), "sim");
    return jsonutil_num(cJSON_GetObjectItemCaseSensitive(sim, "results"), "goodput_gbps", gbps);
}

/* Set o.key to null where o has it. */
static void null_key(cJSON *o, const char *key)
{
    if (cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_ReplaceItemInObjectCaseSensitive(o, key, cJSON_CreateNull());
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void results_make_reproducible(cJSON *doc)
{
    for (const char *const *k = (const char *const[]){"started_at", "ended_at", "duration_s", NULL};
         *k; k++)
        null_key(doc, *k);
    cJSON *ph;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(doc, "phases"))
    {
        null_key(ph, "duration_s");
        null_key(ph, "counters"); /* the host's, port-wide */
        cJSON *fl;
        cJSON_ArrayForEach(fl, cJSON_GetObjectItemCaseSensitive(ph, "flows"))
        {
            for (const char *const *k =
                     (const char *const[]){"setup_s", "teardown_s", "failed_at_s",
                                           "detected_after_last_progress_s", "failed_at_run_s",
                                           "timeline", NULL};
                 *k; k++)
                null_key(fl, *k);
            cJSON *pt;
            cJSON_ArrayForEach(pt, cJSON_GetObjectItemCaseSensitive(fl, "points"))
            {
                for (const char *const *k =
                         (const char *const[]){"measure_s", "ops_per_s", "goodput_gbps",
                                               "wire_gbps", NULL};
                     *k; k++)
                    null_key(pt, *k);
            }
        }
    }
    cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "summary"))
    {
        if (cJSON_IsObject(e))
            null_key(e, "goodput_gbps");
    }
    /* Events without their times ("  1.234s "), sorted. */
    cJSON *ev = cJSON_GetObjectItemCaseSensitive(doc, "events");
    int n = cJSON_GetArraySize(ev), k = 0;
    char **v = xalloc_zero((size_t)n + 1, sizeof(char *));
    cJSON_ArrayForEach(e, ev)
    {
        if (!cJSON_IsString(e))
            continue;
        const char *t = e->valuestring;
        const char *p = t + strspn(t, " ");
        const char *q = p + strspn(p, "0123456789.");
        v[k++] = xalloc_strdup(q > p && q[0] == 's' && q[1] == ' ' ? q + 2 : t);
    }
    qsort(v, (size_t)k, sizeof(*v), str_cmp);
    if (ev) {
        cJSON *sorted = cJSON_CreateArray();
        for (int i = 0; i < k; i++)
            cJSON_AddItemToArray(sorted, cJSON_CreateString(v[i]));
        cJSON_ReplaceItemInObjectCaseSensitive(doc, "events", sorted);
    }
    for (int i = 0; i < k; i++)
        free(v[i]);
    free(v);
    /* The topology of a real run stays: it holds no free memory or other moving state (numa
     * mem_bytes is hwloc's local_memory, the node's MemTotal); an all-sim run has none. */
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "reproducible");
    cJSON_AddStringToObject(doc, "reproducible",
                            "fabtop run --reproducible: wall-clock times and durations, the rates "
                            "and timelines computed from them, the events' times (events sorted) "
                            "and the host's counters are null");
}

int results_save(const char *path, const cJSON *doc, struct ft_err *err)
{
    return jsonutil_save(path, doc, true, err);
}

/* Sizes are what compare pairs size points by and what the report and compare print as
 * bytes: a number from the file that is not a whole number of bytes a mix allows (1 B to
 * 16 GiB) is refused with its place and the range, before anything converts it. */
static int size_ok(const cJSON *v, const char *path, const char *where, struct ft_err *err)
{
    int64_t b;
    if (!cJSON_IsNumber(v) || jsonutil_whole(v->valuedouble, 1, (int64_t)MIX_MAX_BYTES, &b))
        return 0; /* absent, null, or a string with a unit ("64KiB") */
    return ft_err_set(err, -EBADMSG, "%s: %s = %.15g is out of range 1-%llu (bytes)", path, where,
                      v->valuedouble, (unsigned long long)MIX_MAX_BYTES);
}

static int check_sizes(const cJSON *doc, const char *path, struct ft_err *err)
{
    char where[128];
    int rc = 0, i = 0;
    const cJSON *fl, *ph, *pt;
    cJSON_ArrayForEach(
        fl, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "mix"), "flows"))
    {
        static const char *const keys[] = {"size", "response_size"};
        for (int k = 0; k < 2 && !rc; k++) {
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(fl, keys[k]);
            snprintf(where, sizeof(where), "mix.flows[%d].%s", i, keys[k]);
            rc = size_ok(s, path, where, err);
            const cJSON *sw = cJSON_GetObjectItemCaseSensitive(s, "sweep");
            for (int e = 0; e < 2 && !rc; e++) {
                const char *end = e ? "to" : "from";
                snprintf(where, sizeof(where), "mix.flows[%d].%s.sweep.%s", i, keys[k], end);
                rc = size_ok(cJSON_GetObjectItemCaseSensitive(sw, end), path, where, err);
            }
            const cJSON *pair;
            int d = 0;
            cJSON_ArrayForEach(pair, cJSON_GetObjectItemCaseSensitive(s, "dist"))
            {
                snprintf(where, sizeof(where), "mix.flows[%d].%s.dist[%d][0]", i, keys[k], d++);
                if (!rc)
                    rc = size_ok(cJSON_GetArrayItem(pair, 0), path, where, err);
            }
        }
        i++;
    }
    int p = 0;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(doc, "phases"))
    {
        int f = 0;
        cJSON_ArrayForEach(fl, cJSON_GetObjectItemCaseSensitive(ph, "flows"))
        {
            int k = 0;
            cJSON_ArrayForEach(pt, cJSON_GetObjectItemCaseSensitive(fl, "points"))
            {
                snprintf(where, sizeof(where), "phases[%d].flows[%d].points[%d].size_bytes", p, f,
                         k++);
                if (!rc)
                    rc = size_ok(cJSON_GetObjectItemCaseSensitive(pt, "size_bytes"), path, where,
                                 err);
            }
            f++;
        }
        p++;
    }
    return rc;
}

int results_load(const char *path, cJSON **doc, struct ft_err *err)
{
    int rc = jsonutil_load(path, doc, err);
    if (rc < 0)
        return rc;
    const char *fmt = jsonutil_str(*doc, "format");
    int64_t ver = 0;
    if (!fmt || strcmp(fmt, RESULTS_FORMAT) || !jsonutil_int(*doc, "version", &ver) ||
        ver != RESULTS_VERSION) {
        /* fmt points into the document: decide on the hint before freeing it. */
        bool topo = fmt && !strcmp(fmt, "fabtop-topology");
        cJSON_Delete(*doc);
        *doc = NULL;
        return ft_err_set(err, -EBADMSG,
                          "%s: not a fabtop results file (expected \"format\": \"%s\", version "
                          "%d)%s",
                          path, RESULTS_FORMAT, RESULTS_VERSION,
                          topo ? "; this is a topology snapshot: open it with --input" : "");
    }
    rc = check_sizes(*doc, path, err);
    if (rc < 0) {
        cJSON_Delete(*doc);
        *doc = NULL;
    }
    return rc;
}
