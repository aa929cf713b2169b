/* xport_nccl: GPU traffic. Op "collective": NCCL all_reduce, all_gather, reduce_scatter,
 * alltoall, broadcast, reduce and send/recv between chosen GPUs, several communicators at once
 * issued by one thread in a fixed order, optionally as CUDA graphs; per-operation latency from
 * CUDA events and the host-timed mean nccl-tests reports; algbw/busbw as nccl-tests computes
 * them; NCCL's algorithm/protocol/transport choices from its debug output. Op "copy": host<->GPU
 * cudaMemcpyAsync neighbours on non-blocking streams. Non-blocking communicators and a deadline
 * on every operation turn a vanished rank into an error, not a hang. Agent side: "nccl.*"
 * requests join as the other ranks on the peer's GPUs. The agent makes the unique ids
 * (ncclGetUniqueId: it is the bootstrap root, so it never connects to a bootstrap address a
 * client chose) and returns them over the authenticated control channel; NCCL's later
 * connections go to the addresses the client's ranks advertise during bootstrap, which is
 * why an agent serves nccl.* only to keys it allows (`fabtop serve --allow-nccl`). CUDA and
 * NCCL are loaded at run time (engine/xport/nccl/cudart.h).
 *
 * Here: the transport table, its set-up, start, stop and teardown, the per-point figures and
 * the conditions. The rest, sharing xport_nccl_int.h: nccl_params.c (the flow's parameters),
 * nccl_env.c (NCCL's logging environment), nccl_core.c (the communicator core of both sides),
 * nccl_coll.c (the client side of collectives), nccl_copy.c (copies), nccl_agent.c (the
 * nccl.* requests on the agent). */
#define _GNU_SOURCE
#include "engine/xport/nccl/xport_nccl_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/xport/nccl/cudart.h"
#include "engine/xport/nccl/nccl_util.h"

static int nccl_available(char *why, size_t len)
{
    return cudart_load(NULL, why, len);
}

/* The CUDA devices NCCL can use here (cudaGetDeviceCount), 0 when CUDA or NCCL is missing. */
static int nccl_devices(void)
{
    const struct cudart *a;
    char why[768];
    return cudart_load(&a, why, sizeof(why)) == 0 ? a->ndevices : 0;
}

/* The GPU's PCI bus id (cudaDeviceGetPCIBusId: "domain:bus:device.function"). */
static int nccl_device_id(int index, char *buf, size_t len)
{
    const struct cudart *a;
    char why[768];
    if (cudart_load(&a, why, sizeof(why)) != 0)
        return -ENOTSUP;
    if (index < 0 || index >= a->ndevices || len < 2 || len > INT_MAX)
        return -ENODEV;
    buf[0] = '\0';
    if (a->cudaDeviceGetPCIBusId(buf, (int)len, index) != 0 || !buf[0])
        return -EIO;
    return 0;
}

/* With the flow's own libnccl.so (`fabtop run --nccl PATH`), that one alone. */
static int nccl_available_flow(const struct mix_flow *f, char *why, size_t len)
{
    return cudart_load_lib(f->library, NULL, why, len);
}

static int nccl_setup(struct flow_rt *f, struct ft_err *err)
{
    const struct mix_flow *s = f->spec;
    struct nccl_flow *x = xalloc_zero(1, sizeof(*x));
    nccl_core_init_struct(&x->core);
    f->xdata = x;
    x->f = f;
    char why[768];
    const struct cudart *a;
    int rc = cudart_load_lib(s->library, &a, why, sizeof(why));
    if (rc < 0)
        return ft_err_set(err, rc, "flow %s: %s", s->name, why);
    x->a = a;
    x->core.a = a;
    if ((rc = nccl_params_parse(s, &x->prm, err)) < 0)
        return rc;
    return s->op == MIX_OP_COPY ? nccl_copy_setup(f, x, err) : nccl_coll_setup(f, x, err);
}

static int nccl_start(struct flow_rt *f, struct ft_err *err)
{
    struct nccl_flow *x = f->xdata;
    if (f->spec->op == MIX_OP_COPY) {
        for (int i = 0; i < f->nworkers; i++) {
            if (pthread_create(&f->workers[i].thread, NULL, nccl_copy_main, &f->workers[i]) != 0)
                return ft_err_set(err, -EAGAIN, "flow %s: cannot start a copy thread",
                                  f->spec->name);
            f->workers[i].started = true;
        }
        return 0;
    }
    if (pthread_create(&x->thread, NULL, nccl_coll_main, f) != 0)
        return ft_err_set(err, -EAGAIN, "flow %s: cannot start the issuing thread", f->spec->name);
    x->started = true;
    if (pthread_create(&x->watch, NULL, nccl_coll_watch_main, f) == 0)
        x->watching = true;
    return 0;
}

static void nccl_stop(struct flow_rt *f)
{
    struct nccl_flow *x = f->xdata;
    if (!x)
        return;
    for (int i = 0; i < f->nworkers_alloc; i++)
        if (f->workers[i].started) {
            pthread_join(f->workers[i].thread, NULL);
            f->workers[i].started = false;
        }
    if (x->started) {
        /* The issuing thread leaves within its deadline; should NCCL keep it inside a call
         * even after the abort, do not hang the run on it. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)(f->fail_bound_s * 3 + NC_TEARDOWN_S);
        if (pthread_timedjoin_np(x->thread, NULL, &ts) != 0) {
            pthread_detach(x->thread);
            x->leaked = true;
            flow_event(f, "the NCCL issuing thread is stuck inside NCCL; left behind");
        }
        x->started = false;
    }
    if (x->watching) {
        atomic_store(&x->watch_stop, true);
        pthread_join(x->watch, NULL);
        x->watching = false;
    }
}

static double point_secs(const struct flow_point *p)
{
    return p->t1_ns > p->t0_ns ? (p->t1_ns - p->t0_ns) / 1e9 : 0;
}

static cJSON *bw_obj(const struct nccl_flow *x, uint64_t bytes, double secs)
{
    double alg, bus;
    nccl_util_bw(x->core.coll, bytes, x->core.nranks, secs, &alg, &bus);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "algbw_GBps", alg);
    cJSON_AddNumberToObject(o, "busbw_GBps", bus);
    return o;
}

/* Per-point figures for the results (engine/results/results.c merges conditions.point_figures[i]
 * into point i): nccl-tests' time/algbw/busbw for the host-timed mean and for the mean of
 * the per-operation CUDA-event latencies, the tuning NCCL chose, the check. */
static cJSON *coll_point_figures(struct flow_rt *f, struct nccl_flow *x, int p)
{
    const struct nccl_core *k = &x->core;
    const struct nccl_point *pt = &x->pts[p];
    const struct nccl_util_layout *l = &k->lay[p];
    cJSON *o = cJSON_CreateObject();
    cJSON *n = cJSON_AddObjectToObject(o, "nccl");
    cJSON_AddNumberToObject(n, "bytes", (double)l->bytes);
    cJSON_AddNumberToObject(n, "count", (double)l->count);
    cJSON_AddNumberToObject(n, "elements", (double)l->elements);
    cJSON_AddNumberToObject(n, "send_bytes", (double)l->send_bytes);
    cJSON_AddNumberToObject(n, "recv_bytes", (double)l->recv_bytes);
    cJSON_AddNumberToObject(n, "nranks", k->nranks);
    cJSON_AddNumberToObject(n, "busbw_factor", nccl_util_busbw_factor(k->coll, k->nranks));
    if (pt->tuned) {
        cJSON_AddStringToObject(n, "algo", pt->algo);
        cJSON_AddStringToObject(n, "proto", pt->proto);
        char ch[32];
        snprintf(ch, sizeof(ch), "%d..%d", pt->ch_lo, pt->ch_hi);
        cJSON_AddStringToObject(n, "channels", ch);
    } else {
        cJSON_AddNullToObject(n, "algo");
        cJSON_AddNullToObject(n, "proto");
        cJSON_AddNullToObject(n, "channels");
    }
    const char *bw_from = NULL;
    double alg = 0, bus = 0;
    if (pt->host_iters) {
        double t = pt->host_ns / 1e9 / (double)pt->host_iters / (double)k->ncomms;
        cJSON *h = cJSON_AddObjectToObject(n, "host_timed");
        cJSON_AddNumberToObject(h, "time_us", pt->host_ns / 1e3 / (double)pt->host_iters);
        /* With several communicators at once, k operations complete per iteration: the
         * aggregate bandwidth divides the iteration time by k. */
        cJSON *bw = bw_obj(x, l->bytes, t);
        cJSON_AddItemToObject(h, "algbw_GBps",
                              cJSON_Duplicate(cJSON_GetObjectItem(bw, "algbw_GBps"), 0));
        cJSON_AddItemToObject(h, "busbw_GBps",
                              cJSON_Duplicate(cJSON_GetObjectItem(bw, "busbw_GBps"), 0));
        jsonutil_num(bw, "algbw_GBps", &alg);
        jsonutil_num(bw, "busbw_GBps", &bus);
        cJSON_Delete(bw);
        cJSON_AddNumberToObject(h, "iterations", (double)pt->host_iters);
        cJSON_AddNumberToObject(h, "batches", (double)pt->host_batches);
        cJSON_AddNumberToObject(h, "iters_per_batch_max", x->prm.host_iters);
        bw_from = "host_timed";
        if (pt->enq_ops)
            cJSON_AddNumberToObject(n, "enqueue_us_per_op", pt->enq_ns / 1e3 / (double)pt->enq_ops);
    } else {
        cJSON_AddNullToObject(n, "host_timed");
    }
    struct hist *m = xalloc(sizeof(*m)), *tmp = xalloc(sizeof(*tmp));
    hist_init(m);
    for (int w = 0; w < f->nworkers; w++) {
        hist_snapshot(&f->workers[w].lat[p], tmp);
        hist_merge(m, tmp);
    }
    struct hist_stats st;
    hist_stats(m, &st);
    if (st.count) {
        cJSON *e = cJSON_AddObjectToObject(n, "per_iteration");
        cJSON_AddNumberToObject(e, "count", (double)st.count);
        cJSON_AddNumberToObject(e, "mean_us", st.mean / 1e3);
        cJSON_AddNumberToObject(e, "min_us", st.min / 1e3);
        cJSON_AddNumberToObject(e, "p50_us", st.p50 / 1e3);
        cJSON_AddNumberToObject(e, "p99_us", st.p99 / 1e3);
        cJSON_AddNumberToObject(e, "max_us", st.max / 1e3);
        double ea, eb;
        nccl_util_bw(k->coll, l->bytes, k->nranks, st.mean / 1e9, &ea, &eb);
        cJSON_AddNumberToObject(e, "algbw_GBps", ea);
        cJSON_AddNumberToObject(e, "busbw_GBps", eb);
        if (st.mean < 100e3)
            cJSON_AddStringToObject(e, "note", NC_CUDA_EVENT_RES_NOTE);
        if (!bw_from) {
            alg = ea;
            bus = eb;
            bw_from = "per_iteration";
        }
    } else {
        cJSON_AddNullToObject(n, "per_iteration");
    }
    free(m);
    free(tmp);
    if (bw_from) {
        cJSON_AddNumberToObject(n, "algbw_GBps", alg);
        cJSON_AddNumberToObject(n, "busbw_GBps", bus);
        cJSON_AddStringToObject(n, "bw_from", bw_from);
    } else {
        cJSON_AddNullToObject(n, "algbw_GBps");
        cJSON_AddNullToObject(n, "busbw_GBps");
    }
    if (x->prm.check && pt->check_done) {
        cJSON *c = cJSON_AddObjectToObject(n, "check");
        cJSON_AddNumberToObject(c, "wrong", (double)(pt->wrong));
        cJSON_AddNumberToObject(c, "checked_elements", (double)pt->checked);
        cJSON_AddNumberToObject(c, "peer_wrong_total", (double)x->peer_wrong);
        cJSON_AddStringToObject(
            c, "ranks", x->remote ? "local ranks here; the peer checks its own" : "every rank");
    } else {
        cJSON_AddNullToObject(n, "check");
    }
    return o;
}

static cJSON *copy_point_figures(struct flow_rt *f, struct nccl_flow *x, int p)
{
    const struct flow_point *pt = &f->points[p];
    cJSON *o = cJSON_CreateObject();
    cJSON *c = cJSON_AddObjectToObject(o, "copy");
    double secs = point_secs(pt);
    bool ok = pt->done && secs > 0;
    jsonutil_add_num_or_null(c, "h2d_GBps", ok && (x->prm.copy_dir & 1),
                             ok ? (pt->tx1 - pt->tx0) / secs / 1e9 : 0);
    jsonutil_add_num_or_null(c, "d2h_GBps", ok && (x->prm.copy_dir & 2),
                             ok ? (pt->rx1 - pt->rx0) / secs / 1e9 : 0);
    cJSON_AddNumberToObject(c, "h2d_bytes", ok ? (double)(pt->tx1 - pt->tx0) : 0);
    cJSON_AddNumberToObject(c, "d2h_bytes", ok ? (double)(pt->rx1 - pt->rx0) : 0);
    cJSON_AddStringToObject(c, "unit", "GB/s = 10^9 bytes/s, all lanes of the flow together");
    return o;
}

static void nccl_teardown(struct flow_rt *f)
{
    struct nccl_flow *x = f->xdata;
    if (!x)
        return;
    if (f->conditions && x->a) {
        /* NCCL connects at run time (the first operation of each size): the transports it
         * chose are only known after the probes, long after the conditions were taken. */
        cJSON *nc = cJSON_GetObjectItemCaseSensitive(f->conditions, "nccl");
        if (cJSON_IsObject(nc)) {
            cJSON *tr = cJSON_CreateArray();
            for (int i = 0; i < x->log.ntransports; i++)
                cJSON_AddItemToArray(tr, cJSON_CreateString(x->log.transports[i]));
            cJSON_ReplaceItemInObjectCaseSensitive(nc, "transports", tr);
            if (x->log.network[0]) {
                cJSON_DeleteItemFromObjectCaseSensitive(nc, "network");
                cJSON_AddStringToObject(nc, "network", x->log.network);
            }
        }
        cJSON *pf = cJSON_AddArrayToObject(f->conditions, "point_figures");
        for (int p = 0; p < f->npoints; p++)
            cJSON_AddItemToArray(pf, f->spec->op == MIX_OP_COPY ? copy_point_figures(f, x, p)
                                     : x->core.nranks           ? coll_point_figures(f, x, p)
                                                                : cJSON_CreateObject());
    }
    if (x->copy)
        nccl_copy_free(x);
    if (x->leaked) {
        /* A thread may still use the flow's memory: leave it all. */
        f->xdata = NULL;
        nccl_core_abandon(x);
        return;
    }
    if (x->core.inited && atomic_load(&f->status) == FLOW_FAILED)
        nccl_core_abort(&x->core); /* the peer may be gone: never wait for it */
    if (x->remote && f->ctl) {
        cJSON *req = cJSON_CreateObject();
        cJSON_AddStringToObject(req, "type", "nccl.close");
        cJSON *resp = NULL;
        channel_request(f->ctl, req, &resp, 2000, NULL);
        cJSON_Delete(resp);
    }
    f->xdata = NULL;
    if (x->a && !nccl_core_free(&x->core)) {
        if (!atomic_load(&x->core.abort_claim))
            flow_event(f, "NCCL did not release its communicators within %.0f s; left behind",
                       NC_TEARDOWN_S);
        if (nccl_core_abandon(x))
            return;
    }
    free(x->lat);
    free(x);
}

static void nccl_conditions(const struct flow_rt *f, cJSON *out)
{
    const struct nccl_flow *x = f->xdata;
    if (!x || !x->a)
        return;
    const struct cudart *a = x->a;
    char v[32];
    cJSON *lib = cJSON_AddObjectToObject(out, "libraries");
    cudart_version_str(a->nccl_version, true, v, sizeof(v));
    cJSON_AddStringToObject(lib, "nccl", v);
    cJSON_AddStringToObject(lib, "nccl_path", a->nccl_path);
    cudart_version_str(a->rt_version, false, v, sizeof(v));
    cJSON_AddStringToObject(lib, "cuda_runtime", v);
    cJSON_AddStringToObject(lib, "cuda_runtime_path", a->rt_path);
    cudart_version_str(a->drv_version, false, v, sizeof(v));
    cJSON_AddStringToObject(lib, "cuda_driver_api", v);
    if (f->spec->op == MIX_OP_COPY) {
        const struct nccl_copy *cp = x->copy;
        cJSON *c = cJSON_AddObjectToObject(out, "copy");
        cJSON_AddStringToObject(c, "direction",
                                x->prm.copy_dir == 1   ? "h2d (host to device)"
                                : x->prm.copy_dir == 2 ? "d2h (device to host)"
                                                       : "both (h2d and d2h at once)");
        cJSON_AddStringToObject(c, "host_memory",
                                x->prm.pinned ? "pinned (cudaHostAlloc)"
                                              : "pageable (malloc; the driver stages through its "
                                                "own pinned buffers)");
        cJSON_AddStringToObject(c, "streams",
                                "cudaStreamCreateWithFlags(cudaStreamNonBlocking), one per lane: "
                                "never serialised behind the legacy default stream");
        cJSON_AddNumberToObject(c, "in_flight_per_lane", x->prm.depth);
        cJSON_AddNumberToObject(c, "threads", f->nworkers);
        cJSON *g = cJSON_AddArrayToObject(c, "lanes");
        if (cp)
            nccl_copy_lanes(cp, g);
        cJSON *bi = cJSON_AddArrayToObject(c, "lane_pci_bus_ids");
        if (cp)
            nccl_copy_lane_busids(cp, a, bi);
        cJSON_AddStringToObject(c, "latency", "per copy: CUDA events around cudaMemcpyAsync");
        return;
    }
    const struct nccl_core *k = &x->core;
    cJSON *n = cJSON_AddObjectToObject(out, "nccl");
    cJSON_AddStringToObject(n, "collective", nccl_util_coll_name(k->coll));
    cJSON_AddStringToObject(n, "dtype", k->dt->name);
    if (nccl_util_coll_reduces(k->coll))
        cJSON_AddStringToObject(n, "redop", nccl_util_redop_name(k->redop));
    if (nccl_util_coll_rooted(k->coll))
        cJSON_AddNumberToObject(n, "root", k->root);
    cJSON_AddBoolToObject(n, "in_place", k->in_place);
    cJSON_AddBoolToObject(n, "graph", x->prm.graph);
    cJSON_AddBoolToObject(n, "check", x->prm.check);
    cJSON_AddNumberToObject(n, "nranks", k->nranks);
    cJSON_AddNumberToObject(n, "communicators", k->ncomms);
    cJSON_AddStringToObject(n, "issue",
                            "one thread issues every communicator in a fixed order, one NCCL "
                            "group per operation over this process's ranks");
    cJSON *lr = cJSON_AddArrayToObject(n, "local_ranks");
    for (int i = 0; i < k->nlocal; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "rank", k->ranks[i].rank);
        cJSON_AddNumberToObject(r, "cuda_device", k->ranks[i].dev);
        cJSON_AddStringToObject(r, "pci_bus_id", k->ranks[i].busid);
        cJSON_AddItemToArray(lr, r);
    }
    if (x->remote)
        cJSON_AddStringToObject(n, "peer_ranks", x->remote_desc);
    else
        cJSON_AddNullToObject(n, "peer_ranks");
    cJSON_AddNumberToObject(n, "init_s", x->init_s);
    cJSON_AddStringToObject(n, "communicator_mode",
                            k->blocking
                                ? "blocking (params.blocking): a hung enqueue is left "
                                  "to the watchdog"
                                : "non-blocking (config.blocking = 0): enqueue never blocks");
    cJSON_AddNumberToObject(n, "op_deadline_s", k->op_timeout_ns / 1e9);
    cJSON_AddStringToObject(n, "op_deadline",
                            "an operation not complete this long after its due time (the later "
                            "of its launch and the previous completion, plus twice its usual "
                            "duration) fails the flow: 0.6 x the mix's fail_bound_s");
    cJSON_AddStringToObject(n, "on_deadline",
                            "ncclCommAbort of every communicator; the flow fails with the reason "
                            "and the time");
    cJSON_AddStringToObject(n, "nccl_version_log", x->log.version);
    cJSON *tr = cJSON_AddArrayToObject(n, "transports");
    for (int i = 0; i < x->log.ntransports; i++)
        cJSON_AddItemToArray(tr, cJSON_CreateString(x->log.transports[i]));
    jsonutil_add_str_or_null(n, "network", x->log.network[0] ? x->log.network : NULL);
    cJSON *ch = cJSON_AddObjectToObject(n, "channels");
    jsonutil_add_num_or_null(ch, "coll", x->log.coll_channels >= 0, x->log.coll_channels);
    jsonutil_add_num_or_null(ch, "nvls", x->log.nvls_channels >= 0, x->log.nvls_channels);
    jsonutil_add_num_or_null(ch, "p2p", x->log.p2p_channels >= 0, x->log.p2p_channels);
    if (x->log.nvls >= 0)
        cJSON_AddBoolToObject(n, "nvls_multicast", x->log.nvls == 1);
    else
        cJSON_AddNullToObject(n, "nvls_multicast");
    jsonutil_add_str_or_null(n, "algo_env", x->prm.algo[0] ? x->prm.algo : NULL);
    jsonutil_add_str_or_null(n, "proto_env", x->prm.proto[0] ? x->prm.proto : NULL);
    cJSON_AddStringToObject(n, "nccl_env", x->env_note);
    cJSON_AddStringToObject(n, "tuning_log", x->tuning_note);
    cJSON_AddStringToObject(n, "size_meaning",
                            "as nccl-tests: S is the array on every rank for all_reduce, "
                            "broadcast, reduce, sendrecv; the total for all_gather, "
                            "reduce_scatter and alltoall (per-rank chunk S/n)");
    cJSON_AddStringToObject(n, "busbw_factor", nccl_util_busbw_formula(k->coll));
    cJSON_AddStringToObject(n, "bw_unit", "GB/s = 10^9 bytes/s, as nccl-tests prints");
    cJSON *t = cJSON_AddObjectToObject(n, "timing");
    cJSON_AddStringToObject(t, "per_iteration",
                            "CUDA events recorded before and after each operation on its own "
                            "stream, launches back to back; the largest end - start over this "
                            "process's ranks; " NC_CUDA_EVENT_RES_NOTE);
    cJSON_AddStringToObject(t, "host_timed",
                            "as nccl-tests by default: host clock around N back-to-back "
                            "launches and the wait for completion, time = elapsed / N");
    cJSON_AddStringToObject(t, "gate",
                            x->remote || !x->gate || x->prm.graph
                                ? "none: the measurement includes enqueuing each operation "
                                  "(graph launches, remote ranks, FABTOP_NCCL_GATE=0)"
                                : "a host function holds each stream until the batch is "
                                  "enqueued; timing starts when it lets go (non-blocking "
                                  "communicators take about 0.2 ms per enqueue, shown as "
                                  "enqueue_us_per_op); FABTOP_NCCL_GATE=0 turns it off");
    cJSON_AddNumberToObject(t, "host_iters_per_batch", x->prm.host_iters);
    cJSON_AddStringToObject(t, "batches",
                            x->prm.timing == NC_TIME_HOST     ? "host-timed only"
                            : x->prm.timing == NC_TIME_EVENTS ? "per-operation events only"
                                                              : "event and host-timed batches "
                                                                "alternate");
    cJSON_AddStringToObject(t, "latency_note", NC_CUDA_EVENT_RES_NOTE);
}

const struct xport_ops xport_nccl = {
    .name = "nccl",
    .ops = (1u << MIX_OP_COLLECTIVE) | (1u << MIX_OP_COPY),
    /* A peer agent holds the other ranks when the flow names one; with the in-process
     * loopback agent every rank runs in this process (see nccl_coll_setup). */
    .needs_peer = true,
    .available = nccl_available,
    .devices = nccl_devices,
    .device_id = nccl_device_id,
    .available_flow = nccl_available_flow,
    .param_keys = nccl_params_keys,
    .validate = nccl_params_validate,
    .setup = nccl_setup,
    .start = nccl_start,
    .stop = nccl_stop,
    .teardown = nccl_teardown,
    .sample = NULL,
    .conditions = nccl_conditions,
    .handlers = nccl_agent_handlers,
};
