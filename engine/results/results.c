/* results: builds, saves and loads the results document. Latency is written in
 * microseconds with its kind named; throughput in Gb/s (10^9 bit/s); byte counts in bytes;
 * histograms keep their bucket bounds in nanoseconds. */
#include "engine/results/results.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/flow/mix.h"
#include "engine/results/results_json.h"
#include "engine/results/results_path.h"
#include "engine/results/score.h"
#include "engine/results/version.h"
#include "engine/flow/flow.h"
#include "topology/topo_ceiling.h"
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

static void latency_fill(struct results_latency *o, const struct hist *h,
                         enum mix_latency_kind kind)
{
    struct hist_stats s;
    hist_stats(h, &s);
    results_str_set(&o->kind, mix_latency_kind_str(kind));
    results_str_set(&o->unit, "us");
    results_num_set(&o->count, true, (double)s.count);
    results_num_set(&o->min, true, s.min / 1e3);
    results_num_set(&o->mean, true, s.mean / 1e3);
    results_num_set(&o->stdev, true, s.stdev / 1e3);
    results_num_set(&o->p50, true, s.p50 / 1e3);
    results_num_set(&o->p90, true, s.p90 / 1e3);
    results_num_set(&o->p99, true, s.p99 / 1e3);
    results_num_set(&o->p999, true, s.p999 / 1e3);
    results_num_set(&o->p9999, true, s.p9999 / 1e3);
    results_num_set(&o->max, true, s.max / 1e3);
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

static void point_fill(struct results_point *o, const struct flow_rt *f, int pi,
                       struct hist *merged, struct hist *tmp)
{
    const struct flow_point *p = &f->points[pi];
    results_num_set(&o->size_bytes, p->size != 0, (double)p->size);
    o->measured = (struct results_bool){RESULTS_SET, p->done};
    o->complete = (struct results_bool){RESULTS_SET, p->done && !p->partial};
    if (!p->done)
        return;
    double secs = (p->t1_ns - p->t0_ns) / 1e9;
    uint64_t payload = window_payload(f, p);
    results_num_set(&o->measure_s, true, secs);
    results_num_set(&o->ops, true, (double)(p->ops1 - p->ops0));
    results_num_set(&o->ops_per_s, true, secs > 0 ? (p->ops1 - p->ops0) / secs : 0);
    results_num_set(&o->payload_bytes, true, (double)payload);
    results_num_set(&o->goodput_gbps, true, secs > 0 ? payload * 8 / secs / 1e9 : 0);
    bool wire = p->wire0.valid && p->wire1.valid;
    uint64_t wb = wire ? p->wire1.wire_bytes - p->wire0.wire_bytes : 0;
    results_num_set(&o->wire_bytes, wire, (double)wb);
    results_num_set(&o->wire_gbps, wire, secs > 0 ? wb * 8 / secs / 1e9 : 0);
    o->tcp_st = wire ? RESULTS_SET : RESULTS_NULL;
    if (wire) {
        results_num_set(&o->tcp.retrans_segments, true,
                        (double)(p->wire1.retrans - p->wire0.retrans));
        results_num_set(&o->tcp.rtt_us, true, p->wire1.rtt_us);
        results_num_set(&o->tcp.rttvar_us, true, p->wire1.rttvar_us);
        results_num_set(&o->tcp.cwnd_bytes, true, (double)p->wire1.cwnd_bytes);
    }
    enum mix_latency_kind kind = mix_latency_kind_of(f->spec);
    hist_init(merged);
    for (int w = 0; w < f->nworkers; w++) {
        hist_snapshot(&f->workers[w].lat[pi], tmp);
        hist_merge(merged, tmp);
    }
    o->latency_st = RESULTS_NULL;
    if (kind != MIX_LAT_NONE && atomic_load(&merged->count) > 0) {
        o->latency_st = RESULTS_SET;
        latency_fill(&o->latency, merged, kind);
        o->histogram = xalloc(sizeof(*o->histogram));
        hist_snapshot(merged, o->histogram);
    }
    /* Absent off the step; null on it with no whole step measured. */
    o->step_st = f->step_ops ? RESULTS_NULL : RESULTS_ABSENT;
    if (f->step_ops && o->latency_st == RESULTS_SET) {
        hist_init(merged);
        for (int w = 0; w < f->nworkers; w++)
            if (f->workers[w].step) {
                hist_snapshot(&f->workers[w].step[pi], tmp);
                hist_merge(merged, tmp);
            }
        if (atomic_load(&merged->count) > 0) {
            o->step_st = RESULTS_SET;
            results_num_set(&o->step_ops, true, f->step_ops);
            latency_fill(&o->step_latency, merged, kind);
            o->step_histogram = xalloc(sizeof(*o->step_histogram));
            hist_snapshot(merged, o->step_histogram);
        }
    }
    /* A transport's own figures for this point (nccl: algbw/busbw as nccl-tests computes
     * them, the host-timed mean), reported as conditions.point_figures[i]. */
    const cJSON *pf =
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f->conditions, "point_figures"), pi);
    if (pf && pf->child)
        o->figures = cJSON_Duplicate(pf, 1);
    /* A kv flow counts its requests where it times them (engine/flow/kv_worker.c): the
     * point's ops and payload are those requests', so that ops equals the latency's count. */
    const cJSON *kvf = cJSON_GetObjectItemCaseSensitive(pf, "kv");
    double reqs, bytes;
    if (jsonutil_num(kvf, "requests_measured", &reqs) &&
        jsonutil_num(kvf, "bytes_measured", &bytes)) {
        results_num_set(&o->ops, true, reqs);
        results_num_set(&o->ops_per_s, true, secs > 0 ? reqs / secs : 0);
        results_num_set(&o->payload_bytes, true, bytes);
        results_num_set(&o->goodput_gbps, true, secs > 0 ? bytes * 8 / secs / 1e9 : 0);
    }
}

static void series_fill(struct results_series *s, int n, const float *v, bool ms)
{
    s->st = RESULTS_SET;
    s->n = n;
    s->v = xalloc_zero((size_t)n + 1, sizeof(double));
    for (int i = 0; i < n; i++)
        s->v[i] = ms ? (double)(long)(v[i] * 1000) / 1000 : v[i];
}

static void flow_fill(struct results_flow *o, const struct flow_rt *f,
                      const struct results_timeline_in *tl, uint64_t phase_t0, uint64_t run_t0)
{
    const struct mix_flow *s = f->spec;
    results_str_set(&o->name, s->name);
    results_str_set(&o->transport, s->transport);
    results_str_set(&o->op, mix_op_str(s->op));
    results_str_set(&o->role, s->role == MIX_ROLE_FOREGROUND ? "foreground" : "background");
    if (s->class_name[0])
        results_str_set(&o->class_name, s->class_name);
    results_str_set(&o->direction, mix_dir_str(s->dir));
    results_str_set(&o->latency_kind, mix_latency_kind_str(mix_latency_kind_of(s)));
    results_str_set(&o->peer, f->peer_desc);
    results_num_set(&o->connections_asked, true, s->concurrency);
    results_num_set(&o->workers, true, f->nworkers);
    int st = atomic_load(&((struct flow_rt *)f)->status);
    results_str_set(&o->status, status_str(st));
    results_str_set(&o->error, st == FLOW_FAILED ? f->error : NULL);
    if (st == FLOW_FAILED) {
        results_num_set(&o->failed_at_s, true, (f->failed_ns - phase_t0) / 1e9);
        /* How long after the last byte moved the failure was declared: the detection time
         * when the fault happened right after that byte. */
        if (f->last_progress_ns && f->failed_ns > f->last_progress_ns)
            results_num_set(&o->detected_after_last_progress_s, true,
                            (f->failed_ns - f->last_progress_ns) / 1e9);
        results_num_set(&o->failed_at_run_s, true, (f->failed_ns - run_t0) / 1e9);
    }
    results_num_set(&o->setup_s, true, f->setup_s);
    results_num_set(&o->teardown_s, true, f->teardown_s);
    struct hist *merged = xalloc(sizeof(*merged)), *tmp = xalloc(sizeof(*tmp));
    o->points_st = RESULTS_SET;
    o->points = xalloc_zero((size_t)f->npoints + 1, sizeof(*o->points));
    for (int p = 0; p < f->npoints; p++)
        point_fill(&o->points[o->npoints++], f, p, merged, tmp);
    free(merged);
    free(tmp);
    o->timeline_st = RESULTS_SET;
    results_str_set(&o->timeline.t, "seconds since the run started");
    int n = tl ? tl->n : 0;
    series_fill(&o->timeline.t_s, n, n ? tl->t : NULL, true);
    series_fill(&o->timeline.goodput_gbps, n, n ? tl->goodput_gbps : NULL, false);
    series_fill(&o->timeline.wire_gbps, n, n ? tl->wire_gbps : NULL, false);
    series_fill(&o->timeline.ops_per_s, n, n ? tl->ops_per_s : NULL, false);
    /* Captured right after setup, while the connections existed (point_figures went into
     * the points). */
    o->conditions = f->conditions ? cJSON_Duplicate(f->conditions, 1) : cJSON_CreateObject();
    cJSON_DeleteItemFromObjectCaseSensitive(o->conditions, "point_figures");
    results_json_flow_cond(o->conditions, &o->cond);
    /* The flow's own counters, apart from the phase's port-wide ones (verbs: its queue
     * pairs' RDMA counter, with the deltas since binding, or why there is none). */
    if (f->own_report)
        o->qp_counters = cJSON_Duplicate(f->own_report, 1);
}

void results_ceiling_set(struct results_ceiling *out, const struct topo_ceiling *c)
{
    results_ceiling_clear(out);
    out->st = RESULTS_SET;
    results_str_set(&out->path, c->path);
    results_num_set(&out->gbps, c->valid, c->gbps);
    results_str_set(&out->narrowest, c->valid ? c->terms[c->narrowest].name : NULL);
    out->terms_st = RESULTS_SET;
    out->terms = xalloc_zero((size_t)c->nterms + 1, sizeof(*out->terms));
    for (int i = 0; i < c->nterms; i++) {
        struct results_ceil_term *t = &out->terms[out->nterms++];
        results_str_set(&t->name, c->terms[i].name);
        results_str_set(&t->kind, topo_ceil_kind_str(c->terms[i].kind));
        results_num_set(&t->value, isfinite(c->terms[i].value), c->terms[i].value);
        results_str_set(&t->unit, c->terms[i].unit);
        results_str_set(&t->detail, c->terms[i].detail[0] ? c->terms[i].detail : NULL);
    }
}

double results_ceiling_percent(const struct results_ceiling *c, double goodput_gbps)
{
    double g;
    if (c->st != RESULTS_SET || !results_num_get(&c->gbps, &g) || !(g > 0) ||
        !(goodput_gbps >= 0) || !isfinite(goodput_gbps))
        return NAN;
    return 100.0 * goodput_gbps / g;
}

/* The netdev a TCP flow left by: the one it was bound to, else the one holding its local
 * address (the model knows addresses on a live system only); -1 when none. */
static int tcp_netdev(const struct results_flow *o, const struct topo_model *topo)
{
    const char *nd = jsonutil_str(o->conditions, "local_netdev");
    if (nd && *nd)
        return topo_model_find_netdev(topo, nd);
    const char *ip = jsonutil_str(o->conditions, "local_address");
    if (!ip || !*ip)
        return -1;
    size_t n = strlen(ip);
    for (int d = 0; d < topo->nnetdevs; d++)
        for (const char *a = topo->netdevs[d].addrs; (a = strstr(a, ip)); a += n)
            if ((a == topo->netdevs[d].addrs || a[-1] == ' ') &&
                (a[n] == ' ' || a[n] == '/' || a[n] == '\0'))
                return d;
    return -1;
}

static double largest_size(const struct results_flow *o)
{
    double size = 0;
    for (int i = 0; i < o->npoints; i++)
        if (o->points[i].size_bytes.st == RESULTS_SET && o->points[i].size_bytes.v > size)
            size = o->points[i].size_bytes.v;
    return size >= 1 && size <= (double)(UINT64_C(1) << 40) ? size : 0;
}

/* A TCP flow's: the netdev it left by, when that belongs to a NIC (a veth's or loopback's
 * speed is no link's), its MTU, IPv4 or IPv6 as its address, timestamps as Linux defaults. */
static void tcp_ceiling_fill(struct results_flow *o, const struct mix_flow *s,
                             const struct topo_model *topo)
{
    int d = tcp_netdev(o, topo);
    double size = largest_size(o);
    if (d < 0 || topo->netdevs[d].nic < 0 || !(topo->netdevs[d].valid & TOPO_NET_V_MTU) ||
        size == 0)
        return;
    const char *ip = jsonutil_str(o->conditions, "local_address");
    struct topo_ceil_wire w = {.proto = TOPO_CEIL_TCP,
                               .mtu = topo->netdevs[d].mtu,
                               .msg_bytes = (uint64_t)size,
                               .ipv6 = ip && strchr(ip, ':'),
                               .bidir = s->dir == MIX_DIR_BIDIR};
    struct topo_ceiling c;
    if (topo_ceiling_netdev(topo, d, &w, &c) == 0)
        results_ceiling_set(&o->ceiling, &c);
}

/* The ceiling of a verbs flow's path: its RDMA device and port in the node's topology, the
 * path MTU and verb it ran with (its conditions), its largest message size and, for a
 * flow both ways, the other direction's acknowledgements on the link; a TCP stream's through
 * the netdev it left by. Left absent where the path is not in the model. */
int results_gpu_find(const struct topo_model *topo, const char *pci_bus_id, int cuda_index)
{
    struct topo_bdf a;
    int pci = -1, g = -1;
    if (!topo)
        return -1;
    if (pci_bus_id && topo_bdf_parse(pci_bus_id, &a) == 0)
        pci = topo_model_find_pci(topo, &a);
    if (pci >= 0)
        g = topo_model_gpu_of_pci(topo, pci);
    for (int k = 0; k < topo->ngpus && g < 0 && cuda_index >= 0; k++)
        if ((topo->gpus[k].valid & TOPO_GPU_V_CUDA) && topo->gpus[k].cuda_index == cuda_index)
            g = k;
    if (g < 0 && topo->ngpus == 1 && !(topo->gpus[0].valid & TOPO_GPU_V_CUDA))
        g = 0;
    return g;
}

int results_copy_gpus(const struct results_flow *o, const struct topo_model *topo, int *gpus,
                      int max)
{
    const cJSON *copy = cJSON_GetObjectItemCaseSensitive(o->conditions, "copy");
    const cJSON *lanes = cJSON_GetObjectItemCaseSensitive(copy, "lanes");
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(copy, "lane_pci_bus_ids");
    int n = 0, i = 0;
    const cJSON *l;
    if (!cJSON_IsArray(lanes))
        return -1;
    cJSON_ArrayForEach(l, lanes)
    {
        int dev;
        if (!cJSON_IsString(l) || sscanf(l->valuestring, "GPU %d", &dev) != 1)
            return -1;
        const cJSON *id = cJSON_GetArrayItem(ids, i++);
        int g = results_gpu_find(topo, cJSON_IsString(id) ? id->valuestring : NULL, dev);
        if (g < 0)
            return -1;
        bool seen = false;
        for (int k = 0; k < n; k++)
            seen = seen || gpus[k] == g;
        if (!seen && n < max)
            gpus[n++] = g;
    }
    return n;
}

/* Host<->GPU copies: the GPUs of its lanes (results_copy_gpus); their host paths at once. */
static void copy_ceiling_fill(struct results_flow *o, const struct topo_model *topo)
{
    int gpus[64];
    int n = results_copy_gpus(o, topo, gpus, 64);
    struct topo_ceiling c;
    if (n > 0 && topo_ceiling_gpus_host(topo, gpus, n, &c) == 0)
        results_ceiling_set(&o->ceiling, &c);
}

void results_flow_ceiling(struct results_flow *o, const struct mix_flow *s,
                          const struct topo_model *topo)
{
    if (topo && !strcmp(s->transport, "tcp") && s->op == MIX_OP_STREAM)
        tcp_ceiling_fill(o, s, topo);
    if (topo && !strcmp(s->transport, "nccl") && s->op == MIX_OP_COPY)
        copy_ceiling_fill(o, topo);
    if (!topo || strcmp(s->transport, "verbs") || !o->cond.rdma_device)
        return;
    int nic = topo_model_find_nic_by_rdma(topo, o->cond.rdma_device), port = -1;
    if (nic < 0)
        return;
    int num = o->cond.have_port ? o->cond.port : 1;
    for (int k = 0; k < topo->nics[nic].nports; k++)
        if (topo->ports[topo->nics[nic].first_port + k].num == num)
            port = topo->nics[nic].first_port + k;
    struct topo_ceil_wire w;
    if (port < 0 || topo_ceiling_default_wire(topo, nic, port, &w) < 0)
        return;
    if (o->cond.have_path_mtu && o->cond.path_mtu >= 256 && o->cond.path_mtu <= 4096) {
        w.mtu = o->cond.path_mtu;
        w.mtu_assumed = false;
    }
    double size = largest_size(o);
    if (size == 0)
        return;
    w.msg_bytes = (uint64_t)size;
    const char *verb = jsonutil_str(o->conditions, "verb");
    w.op = verb && !strcmp(verb, "send")   ? TOPO_CEIL_SEND
           : verb && !strcmp(verb, "read") ? TOPO_CEIL_READ
                                           : TOPO_CEIL_WRITE;
    w.bidir = s->dir == MIX_DIR_BIDIR;
    struct topo_ceiling c;
    if (topo_ceiling_nic(topo, nic, port, &w, &c) == 0)
        results_ceiling_set(&o->ceiling, &c);
}

static void kv_add(struct results_kvs *k, const char *key, const char *val)
{
    k->v = xalloc_resize(k->v, ((size_t)k->n + 1) * sizeof(*k->v));
    memset(&k->v[k->n], 0, sizeof(k->v[k->n]));
    k->v[k->n].key = xalloc_strdup(key);
    results_str_set(&k->v[k->n++].val, val);
}

static void add_sysctl(struct results_kvs *k, const char *key, const char *path)
{
    char buf[256];
    kv_add(k, key, fsutil_read("/", path, buf, sizeof(buf)) >= 0 ? buf : NULL);
}

void results_host_conditions(struct results_run_cond *cond, const struct topo_model *topo)
{
    add_sysctl(&cond->sysctls, "tcp_congestion_control",
               "proc/sys/net/ipv4/tcp_congestion_control");
    add_sysctl(&cond->sysctls, "tcp_ecn", "proc/sys/net/ipv4/tcp_ecn");
    add_sysctl(&cond->sysctls, "tcp_rmem", "proc/sys/net/ipv4/tcp_rmem");
    add_sysctl(&cond->sysctls, "tcp_wmem", "proc/sys/net/ipv4/tcp_wmem");
    /* The ceilings of SO_RCVBUF / SO_SNDBUF set by a program (socket(7)); autotuning is
     * bounded by tcp_rmem / tcp_wmem's third field instead (tcp(7)). */
    add_sysctl(&cond->sysctls, "rmem_max", "proc/sys/net/core/rmem_max");
    add_sysctl(&cond->sysctls, "wmem_max", "proc/sys/net/core/wmem_max");
    if (topo) {
        cond->netdev_mtu_st = RESULTS_SET;
        cond->mtu = xalloc_zero((size_t)topo->nnetdevs + 1, sizeof(*cond->mtu));
        for (int i = 0; i < topo->nnetdevs; i++)
            if (topo->netdevs[i].valid & TOPO_NET_V_MTU) {
                cond->mtu[cond->nmtu].netdev = xalloc_strdup(topo->netdevs[i].name);
                cond->mtu[cond->nmtu++].mtu = topo->netdevs[i].mtu;
            }
    }
}

/* The conditions of an all-sim run: the simulated fabric (its topology; each flow's
 * conditions.sim hold the rest), nothing of the host. */
static void sim_conditions(struct results_run_cond *c, const struct results_input *in)
{
    c->sim_st = RESULTS_SET;
    results_str_set(&c->sim_note, "every flow is simulated: these are the simulated fabric's "
                                  "conditions (each flow's conditions.sim has its settings and "
                                  "results); the host's sysctls, netdev MTUs and topology are "
                                  "not recorded");
    const char *topo = NULL;
    for (int p = 0; p < in->nphases && !topo; p++)
        for (int i = 0; i < in->mix->nflows && !topo; i++) {
            const struct flow_rt *f = in->phases[p].flows[i];
            if (f && f->conditions)
                topo = jsonutil_str(cJSON_GetObjectItemCaseSensitive(f->conditions, "sim"),
                                    "topology");
        }
    results_str_set(&c->sim_topology, topo);
}

/* The foreground's p50/p99 per phase, side by side (quiet vs loaded). */
static void summary_fill(struct results_run *run, const struct mix *mix)
{
    struct results_summary *o = &run->summary;
    o->st = RESULTS_SET;
    int fg = mix_foreground(mix);
    if (fg < 0)
        return;
    results_str_set(&o->foreground, mix->flows[fg].name);
    o->phases = xalloc_zero((size_t)run->nphases * MIX_MAX_FLOWS + 1, sizeof(*o->phases));
    for (int p = 0; p < run->nphases; p++) {
        const struct results_phase *ph = &run->phases[p];
        for (int i = 0; i < ph->nflows; i++) {
            const struct results_flow *fl = &ph->flows[i];
            if (strcmp(fl->name.s, mix->flows[fg].name))
                continue;
            struct results_summary_phase *e = &o->phases[o->nphases++];
            e->phase = xalloc_strdup(ph->name.s);
            results_str_set(&e->status, fl->status.s);
            const struct results_point *last = fl->npoints ? &fl->points[fl->npoints - 1] : NULL;
            if (last && last->latency_st == RESULTS_SET) {
                e->p50 = last->latency.p50;
                e->p99 = last->latency.p99;
                e->p999 = last->latency.p999;
                e->max = last->latency.max;
            }
            if (last)
                e->goodput_gbps = last->goodput_gbps;
        }
    }
    const struct results_num *q = NULL, *l = NULL;
    for (int i = 0; i < o->nphases; i++) {
        if (!q && !strcasecmp(o->phases[i].phase, "quiet"))
            q = &o->phases[i].p99;
        if (!l && !strcasecmp(o->phases[i].phase, "loaded"))
            l = &o->phases[i].p99;
    }
    if (q && l && q->st == RESULTS_SET && l->st == RESULTS_SET && q->v > 0)
        results_num_set(&o->p99_loaded_over_quiet, true, l->v / q->v);
}

static void iso_set(struct results_str *f, const struct timespec *ts)
{
    char buf[64];
    iso8601(ts, buf, sizeof(buf));
    results_str_set(f, buf);
}

void results_build(const struct results_input *in, struct results_doc *out)
{
    memset(out, 0, sizeof(*out));
    struct results_run *run = out->runs = xalloc_zero(1, sizeof(*run));
    out->nruns = 1;
    results_str_set(&run->format, RESULTS_FORMAT);
    results_num_set(&run->version, true, RESULTS_VERSION);
    iso_set(&run->started_at, &in->wall_start);
    iso_set(&run->ended_at, &in->wall_end);
    results_num_set(&run->duration_s, true,
                    (in->wall_end.tv_sec - in->wall_start.tv_sec) +
                        (in->wall_end.tv_nsec - in->wall_start.tv_nsec) / 1e9);
    run->interrupted = (struct results_bool){RESULTS_SET, in->interrupted};
    run->hosts_st = run->peers_st = RESULTS_SET;
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    results_str_set(&run->host_local, host);
    run->peers = xalloc_zero((size_t)in->nphases * MIX_MAX_FLOWS + 1, sizeof(char *));
    for (int p = 0; p < in->nphases; p++)
        for (int i = 0; i < in->mix->nflows; i++) {
            const struct flow_rt *f = in->phases[p].flows[i];
            if (!f || !f->peer_desc[0])
                continue;
            bool dup = false;
            for (int k = 0; k < run->npeers; k++)
                dup |= !strcmp(run->peers[k], f->peer_desc);
            if (!dup)
                run->peers[run->npeers++] = xalloc_strdup(f->peer_desc);
        }
    run->versions_st = RESULTS_SET;
    cJSON *ver = version_json(), *v;
    cJSON_ArrayForEach(v, ver) kv_add(&run->versions, v->string, v->valuestring);
    cJSON_Delete(ver);
    run->conditions_st = RESULTS_SET;
    struct results_run_cond *cond = &run->conditions;
    /* A simulated run depends on the simulated fabric alone: it records none of the host's
     * state (sysctls, netdev MTUs, the topology), which other programs change under it. */
    bool sim = mix_all_simulated(in->mix);
    if (sim)
        sim_conditions(cond, in);
    else
        results_host_conditions(cond, in->topo);
    run->mix = mix_to_json(in->mix);
    run->phases_st = RESULTS_SET;
    run->phases = xalloc_zero((size_t)in->nphases + 1, sizeof(*run->phases));
    for (int p = 0; p < in->nphases; p++) {
        struct results_phase *ph = &run->phases[run->nphases++];
        results_str_set(&ph->name, in->phases[p].name);
        double dur = in->phases[p].t1_ns > in->phases[p].t0_ns
                         ? (in->phases[p].t1_ns - in->phases[p].t0_ns) / 1e9
                         : 0;
        results_num_set(&ph->duration_s, true, dur);
        /* Port-wide counter deltas over the phase (n/a as null); null when none were read. */
        ph->counters_st = in->phases[p].counters ? RESULTS_SET : RESULTS_NULL;
        ph->counters = in->phases[p].counters ? cJSON_Duplicate(in->phases[p].counters, 1) : NULL;
        ph->flows_st = RESULTS_SET;
        ph->flows = xalloc_zero((size_t)in->mix->nflows + 1, sizeof(*ph->flows));
        for (int i = 0; i < in->mix->nflows; i++)
            if (in->phases[p].flows[i]) {
                struct results_flow *fo = &ph->flows[ph->nflows++];
                flow_fill(fo, in->phases[p].flows[i], &in->phases[p].tl[i], in->phases[p].t0_ns,
                          in->t_start_ns);
                results_flow_ceiling(fo, &in->mix->flows[i], in->topo);
            }
    }
    summary_fill(run, in->mix);
    score_build(run, in->mix, in->score);
    if (!sim)
        results_path_fill(run, in->mix, in->path);
    run->events_st = RESULTS_SET;
    run->events = xalloc_zero((size_t)in->nevents + 1, sizeof(char *));
    for (int i = 0; i < in->nevents; i++)
        run->events[run->nevents++] = xalloc_strdup(in->events[i]);
    run->topology_st = in->topo && !sim ? RESULTS_SET : RESULTS_NULL;
    if (in->topo && !sim)
        run->topology = topo_json_from_model(in->topo);
}

void results_flow_cond_brief(const struct results_flow_cond *c, char *buf, size_t len)
{
    struct strbuf sb;
    strbuf_init(&sb);
    /* Numbers out of their field's range are left out (n/a), never converted. */
    if (c->rdma_device) {
        strbuf_printf(&sb, "%s:%d", c->rdma_device, c->have_port ? c->port : 1);
        bool ib = c->link_layer && !strncmp(c->link_layer, "InfiniBand", 10);
        if (ib && c->have_lid)
            strbuf_printf(&sb, " IB LID %d SL %d", c->lid, c->have_sl ? c->sl : 0);
        else if (c->gid_type)
            strbuf_printf(&sb, " %s GID %d %s", c->gid_type, c->have_gid_index ? c->gid_index : -1,
                          c->gid ? c->gid : "?");
        if (c->have_path_mtu)
            strbuf_printf(&sb, ", MTU %d", c->path_mtu);
        if (!ib && c->have_dscp) {
            strbuf_printf(&sb, ", DSCP %d (TC %d)", c->dscp,
                          c->have_tc ? c->traffic_class : c->dscp << 2);
            if (c->have_dcb_priority)
                strbuf_printf(&sb, " prio %d PFC %s", c->dcb_priority,
                              c->dcb_pfc < 0 ? "?"
                              : c->dcb_pfc   ? "on"
                                             : "OFF");
            else if (c->dcb)
                strbuf_printf(&sb, " prio ?%s", c->dcb_unavailable ? " (no DCB)" : "");
        }
        if (c->have_queue_pairs)
            strbuf_printf(&sb, ", %d QP%s", c->queue_pairs, c->queue_pairs == 1 ? "" : "s");
        if (c->connection && !strncmp(c->connection, "librdmacm", 9))
            strbuf_printf(&sb, ", rdma_cm");
        if (c->memory && strcmp(c->memory, "host"))
            strbuf_printf(&sb, ", %s memory", c->memory);
    } else if (c->tcp_cc) {
        strbuf_printf(&sb, "TCP %s", c->tcp_cc);
        if (c->have_mss)
            strbuf_printf(&sb, ", MSS %d", c->mss_bytes);
    }
    snprintf(buf, len, "%s", sb.s ? sb.s : "");
    strbuf_free(&sb);
}

bool results_point_goodput(const struct results_flow *flow, const struct results_point *point,
                           double *gbps, bool *simulated)
{
    *simulated = flow->transport.st == RESULTS_SET && !strcmp(flow->transport.s, "sim");
    if (*simulated) {
        *gbps = flow->cond.sim_goodput_gbps;
        return flow->cond.have_sim_goodput;
    }
    *gbps = point ? point->goodput_gbps.v : 0;
    return point && point->goodput_gbps.st == RESULTS_SET;
}

bool results_goodput(const cJSON *flow, const cJSON *point, double *gbps, bool *simulated)
{
    const char *t = jsonutil_str(flow, "transport");
    *simulated = t && !strcmp(t, "sim");
    if (!*simulated)
        return jsonutil_num(point, "goodput_gbps", gbps);
    struct results_flow_cond c;
    results_json_flow_cond(cJSON_GetObjectItemCaseSensitive(flow, "conditions"), &c);
    *gbps = c.sim_goodput_gbps;
    return c.have_sim_goodput;
}

/* Make f null where the document has it. */
static void null_num(struct results_num *f)
{
    if (f->st != RESULTS_ABSENT)
        f->st = RESULTS_NULL;
}

static void null_str(struct results_str *f)
{
    if (f->st != RESULTS_ABSENT)
        results_str_set(f, NULL);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void timeline_drop(struct results_flow *f)
{
    struct results_series *s[] = {&f->timeline.t_s, &f->timeline.goodput_gbps,
                                  &f->timeline.wire_gbps, &f->timeline.ops_per_s};
    for (int i = 0; i < 4; i++) {
        free(s[i]->v);
        memset(s[i], 0, sizeof(*s[i]));
    }
    results_str_set(&f->timeline.t, NULL);
    f->timeline.t.st = RESULTS_ABSENT;
    f->timeline_st = RESULTS_NULL;
}

static void run_make_reproducible(struct results_run *r)
{
    null_str(&r->started_at);
    null_str(&r->ended_at);
    null_num(&r->duration_s);
    for (int p = 0; p < r->nphases; p++) {
        struct results_phase *ph = &r->phases[p];
        null_num(&ph->duration_s);
        if (ph->counters_st != RESULTS_ABSENT) { /* the host's, port-wide */
            cJSON_Delete(ph->counters);
            ph->counters = NULL;
            ph->counters_st = RESULTS_NULL;
        }
        for (int i = 0; i < ph->nflows; i++) {
            struct results_flow *f = &ph->flows[i];
            null_num(&f->setup_s);
            null_num(&f->teardown_s);
            null_num(&f->failed_at_s);
            null_num(&f->detected_after_last_progress_s);
            null_num(&f->failed_at_run_s);
            if (f->timeline_st != RESULTS_ABSENT)
                timeline_drop(f);
            for (int k = 0; k < f->npoints; k++) {
                null_num(&f->points[k].measure_s);
                null_num(&f->points[k].ops_per_s);
                null_num(&f->points[k].goodput_gbps);
                null_num(&f->points[k].wire_gbps);
            }
        }
    }
    for (int i = 0; i < r->summary.nphases; i++)
        null_num(&r->summary.phases[i].goodput_gbps);
    /* Fairness is over wall-clock rates. */
    for (int i = 0; i < r->scoreboard.nclasses; i++) {
        null_num(&r->scoreboard.classes[i].quiet.fairness_jain);
        null_num(&r->scoreboard.classes[i].loaded.fairness_jain);
    }
    /* Events without their times ("  1.234s "), sorted. */
    for (int i = 0; i < r->nevents; i++) {
        const char *t = r->events[i];
        const char *p = t + strspn(t, " ");
        const char *q = p + strspn(p, "0123456789.");
        if (q > p && q[0] == 's' && q[1] == ' ')
            memmove(r->events[i], q + 2, strlen(q + 2) + 1);
    }
    qsort(r->events, (size_t)r->nevents, sizeof(*r->events), str_cmp);
    /* The topology of a real run stays: it holds no free memory or other moving state (numa
     * mem_bytes is hwloc's local_memory, the node's MemTotal); an all-sim run has none. */
    results_str_set(&r->reproducible,
                    "fabtop run --reproducible: wall-clock times and durations, the rates "
                    "and timelines computed from them, the events' times (events sorted) "
                    "and the host's counters are null");
}

void results_doc_make_reproducible(struct results_doc *d)
{
    for (int i = 0; i < d->nruns; i++)
        run_make_reproducible(&d->runs[i]);
}

void results_conditions_brief(const cJSON *cond, char *buf, size_t len)
{
    struct results_flow_cond c;
    results_json_flow_cond(cond, &c);
    results_flow_cond_brief(&c, buf, len);
}

void results_make_reproducible(cJSON *doc)
{
    struct results_doc d;
    if (results_json_read(doc, "results", &d, NULL) < 0)
        return;
    results_doc_make_reproducible(&d);
    cJSON *n = results_json_write(&d);
    results_doc_free(&d);
    /* Swap the members: doc stays the caller's object. */
    cJSON *old = doc->child;
    doc->child = n->child;
    n->child = old;
    cJSON_Delete(n);
}

int results_doc_save(const char *path, const struct results_doc *d, struct ft_err *err)
{
    cJSON *j = results_json_write(d);
    int rc = jsonutil_save(path, j, true, err);
    cJSON_Delete(j);
    return rc;
}

int results_save(const char *path, const cJSON *doc, struct ft_err *err)
{
    return jsonutil_save(path, doc, true, err);
}

int results_doc_load(const char *path, struct results_doc *d, struct ft_err *err)
{
    cJSON *j;
    memset(d, 0, sizeof(*d));
    int rc = jsonutil_load(path, &j, err);
    if (rc < 0)
        return rc;
    rc = results_json_read(j, path, d, err);
    cJSON_Delete(j);
    return rc;
}

int results_load(const char *path, cJSON **doc, struct ft_err *err)
{
    struct results_doc d;
    *doc = NULL;
    int rc = results_doc_load(path, &d, err);
    if (rc < 0)
        return rc;
    *doc = results_json_write(&d);
    results_doc_free(&d);
    return 0;
}

void results_doc_copy(const struct results_doc *d, struct results_doc *out)
{
    cJSON *j = results_json_write(d);
    memset(out, 0, sizeof(*out));
    if (j && results_json_read(j, "a copy", out, NULL) < 0)
        memset(out, 0, sizeof(*out));
    cJSON_Delete(j);
}
