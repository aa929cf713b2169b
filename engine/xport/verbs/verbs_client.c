/* verbs_client: the client side of a verbs flow: one worker per queue pair (ping-pong as
 * ib_write_lat measures it, post-to-completion, SEND/RECV, READ, WRITE with immediate;
 * streams with `depth` outstanding requests), the liveness probe, asynchronous events,
 * set-up against the peer agent (or librdmacm), teardown, the conditions. */
#include "engine/xport/verbs/xport_verbs_int.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/counters/counters_qp.h"
#include "engine/flow/kv.h"
#include "engine/flow/kv_worker.h"
#include "engine/flow/ring.h"
#include "topology/topo_dcb.h"
#include "engine/peer/rrcheck.h"
#include "engine/xport/verbs/verbs_cm.h"
#include "topology/topo_model.h"

/* ================= client side ================= */

/* A queue pair with nothing outstanding never errors, so a worker waiting on its peer (a
 * ping-pong reply, or data in an rx stream) keeps one 1-byte RDMA WRITE (into the peer's
 * scratch bytes, which nothing reads) in flight once
 * it has waited probe_after_s: if the peer is gone, that request runs out of retries and
 * its completion error names the failure. wr_id VERBS_PROBE_ID marks its completion. */
#define VERBS_PROBE_ID UINT64_MAX

struct verbs_client_probe {
    uint64_t since_ns; /* waiting since */
    bool out;          /* a probe is in flight */
};

/* A kv worker's cost of issuing work requests: how many it posted, the CPU time of its
 * thread over those requests (posting and busy-polling their completions), and the CPU time
 * inside ibv_post_send alone (CLOCK_THREAD_CPUTIME_ID, clock_gettime(2)). */
struct verbs_client_wr_cost {
    uint64_t wrs, posts, thread_ns, post_ns;
};

/* This thread's CPU time (ns). */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct pp_state; /* a ping-pong's state between its operations (pingpong_once) */

struct verbs_client_flow {
    struct verbs_params cfg;
    struct verbs_res res;
    struct verbs_res_peer peer;
    struct topo_dcb_info dcb;
    pthread_t async;
    bool async_started;
    _Atomic bool async_stop;
    struct verbs_cm *cm;     /* when connected through librdmacm */
    struct counters_qp *qpc; /* its QPs on an RDMA counter of their own (or why not) */
    double bound_s;          /* (retry_cnt + 1) x 4 x max(T_o, floor): the QP's own bound */
    uint64_t probe_after_ns; /* liveness probe after this long without an answer */
    /* kv flows */
    struct kv_plan *kv;
    int kv_qps;       /* queue pairs per worker (params.qps) */
    int kv_per_qp;    /* descriptors outstanding per QP: ceil(depth / qps), READs capped */
    int dev_rd_atom;  /* the device's max_qp_rd_atom */
    int qp_rd_atomic; /* READs a QP has in flight (verbs_res_connect sets 16) */
    /* kv: the cost of issuing descriptors, per [worker][point], measured requests only */
    struct verbs_client_wr_cost *wrc;
    /* collective: the emulated ring (ranks 0: not one), its measured steps per point */
    struct ring_params ring;
    struct ring_acc *racc;
    /* a drill's lane (verbs_client_drill_op): the ping-pong state of its one queue pair */
    struct pp_state *drill;
};

/* Report a failed completion: the status text, and the bound it should have come within. */
static void wc_fail(struct flow_rt *f, struct verbs_client_flow *v, int qp, const struct ibv_wc *wc)
{
    char hint[160];
    switch (wc->status) {
    case IBV_WC_RETRY_EXC_ERR: /* no ACK after retry_cnt + 1 attempts */
        snprintf(hint, sizeof(hint),
                 "the peer or the path is gone; bound %.3f s (timeout %d, retry_cnt %d, probe "
                 "after %.3f s)",
                 v->bound_s + v->probe_after_ns / 1e9, v->cfg.timeout, v->cfg.retry_cnt,
                 v->probe_after_ns / 1e9);
        break;
    case IBV_WC_RNR_RETRY_EXC_ERR:
        snprintf(hint, sizeof(hint), "the peer had no receive posted");
        break;
    case IBV_WC_LOC_QP_OP_ERR: /* rdma_rxe reports a failed transmit this way */
        snprintf(hint, sizeof(hint), "the local port may be down (check %s)",
                 v->res.netdev[0] ? v->res.netdev : v->res.dev);
        break;
    case IBV_WC_REM_ACCESS_ERR:
        snprintf(hint, sizeof(hint), "the peer refused the rkey or address");
        break;
    case IBV_WC_WR_FLUSH_ERR:
        snprintf(hint, sizeof(hint), "flushed after an earlier error on this queue pair");
        break;
    default:
        snprintf(hint, sizeof(hint), "see ibv_poll_cq(3)");
    }
    flow_fail(f, "queue pair %d: %s (status %d, vendor error 0x%x): %s", qp,
              ibv_wc_status_str(wc->status), wc->status, wc->vendor_err, hint);
}

/* Poll a CQ once; returns completions (>= 0), or -1 after reporting an error. */
static int poll_cq(struct flow_rt *f, struct verbs_client_flow *v, struct ibv_cq *cq, int qp,
                   struct ibv_wc *wc, int n)
{
    int k = ibv_poll_cq(cq, n, wc);
    if (k < 0) {
        flow_fail(f, "queue pair %d: polling the completion queue failed", qp);
        return -1;
    }
    for (int i = 0; i < k; i++)
        if (wc[i].status != IBV_WC_SUCCESS) {
            wc_fail(f, v, qp, &wc[i]);
            return -1;
        }
    return k;
}

/* Post a probe when the worker has waited long enough and none is in flight. A SEND
 * ping-pong's probe is a zero-byte SEND (send: true), which the agent's responder takes as
 * no request (verbs_agent.c srv_pong: a receive of 0 bytes is posted again, not answered), so
 * that it meets what the flow's requests meet: a responder that stopped posting receives (a
 * stalled agent) answers it with receiver-not-ready NAKs. With rnr_retry 7 the IBTA has those
 * retried without end (the rnr_retry attribute, ibv_modify_qp(3): 7 means infinite): no
 * completion says so, only the port's rcvd_rnr_err counter (Linux 6.1 rdma_rxe: rxe_comp.c
 * check_ack counts AETH_RNR_NAK as RXE_CNT_RCV_RNR; COMPST_RNR_RETRY decrements rnr_retry
 * unless it is 7). Soft-RoCE's queue pair then still failed with transport retry exceeded
 * about (retry_cnt + 1) x T_o into the NAKs (tests/vm/drill_verbs.sh; engine/run/drill.c
 * seen_could). A WRITE is acknowledged by the peer's NIC whatever its application does. */
static int probe_tick(struct flow_rt *f, struct verbs_client_flow *v, int qp,
                      struct verbs_client_probe *p, uint64_t now, bool send)
{
    if (p->out || now - p->since_ns < v->probe_after_ns)
        return 0;
    int rc = verbs_res_post_op(&v->res, qp, send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE,
                               VERBS_RES_SCRATCH_OFF(v->res.slot, v->res.nqp, qp),
                               v->peer.addr + VERBS_RES_SCRATCH_OFF(v->peer.slot, v->peer.nqp, qp),
                               v->peer.rkey, send ? 0 : 1, true, VERBS_PROBE_ID, 0);
    if (rc) {
        flow_fail(f, "queue pair %d: posting a liveness probe failed: %s", qp, strerror(-rc));
        return -1;
    }
    p->out = true;
    return 0;
}

/* Completions of the send queue, probes taken out: returns the others (>= 0) or -1. */
static int poll_send(struct flow_rt *f, struct verbs_client_flow *v, int qp,
                     struct verbs_client_probe *p, struct ibv_wc *wc, int n)
{
    int k = poll_cq(f, v, v->res.scq[qp], qp, wc, n), j = 0;
    for (int i = 0; i < k; i++) {
        if (wc[i].wr_id == VERBS_PROBE_ID) {
            p->out = false;
            p->since_ns = flow_now_ns();
        } else {
            wc[j++] = wc[i];
        }
    }
    return k < 0 ? -1 : j;
}

/* Tell the agent the ping-pong size for this QP (it writes replies of that size). */
static int tell_size(struct flow_rt *f, int qp, uint64_t size)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "verbs.size");
    cJSON_AddNumberToObject(req, "qp", qp);
    cJSON_AddNumberToObject(req, "size", (double)size);
    cJSON *resp = NULL;
    struct ft_err err = {0};
    int rc = channel_request(f->ctl, req, &resp, 3000, &err);
    cJSON_Delete(resp);
    if (rc < 0)
        flow_fail(f, "%s", err.msg);
    return rc;
}

/* A ping-pong's state between its operations (one queue pair's). */
struct pp_state {
    uint64_t cur; /* the size the agent was told */
    uint8_t seq;  /* the last byte's marker of the latest message */
    struct verbs_client_probe probe;
};

/* One ping-pong operation of size bytes on queue pair qp (the agent's reply, or the
 * completion alone: per latency mode), until deadline (ns; UINT64_MAX: while the flow runs):
 * 0 with its time in *dt_ns, -ETIMEDOUT at the deadline (nothing failed: the queue pair may
 * still hold the request), -ECANCELED when the flow stops, -EIO after a failure (the flow
 * failed, f->error says why: a completion error names the status and its bound). */
static int pingpong_once(struct flow_rt *f, struct verbs_client_flow *v, int qp,
                         struct pp_state *st, uint64_t size, uint64_t deadline, uint64_t *dt_ns)
{
    struct verbs_res *r = &v->res;
    const size_t h = verbs_res_half(r);
    char *L = r->buf ? r->buf + (size_t)qp * r->slot : NULL, *R = L ? L + h : NULL;
    uint64_t raddr = v->peer.addr + (uint64_t)qp * v->peer.slot + v->peer.slot / 2;
    uint64_t rsend = v->peer.addr + (uint64_t)qp * v->peer.slot;
    struct ibv_wc wc[4];
    /* Only a WRITE lands where we can poll it; a SEND's reply is a receive completion. */
    const bool imm = v->cfg.lat == VERBS_LAT_IMM,
               poll_mem = v->cfg.verb == VERBS_WRITE && v->cfg.lat == VERBS_LAT_POLL;
    if (size != st->cur) {
        if ((v->cfg.verb == VERBS_WRITE || imm) && tell_size(f, qp, size) < 0)
            return -EIO;
        st->cur = size;
    }
    st->seq = (uint8_t)(st->seq % 255 + 1);
    bool ok = true, sent = false, got = false;
    if (v->cfg.verb == VERBS_SEND || imm)
        ok = verbs_res_post_recv(r, qp, (size_t)qp * r->slot + h, h) == 0;
    if (L)
        L[h - 1] = (char)st->seq;
    uint64_t t0 = flow_now_ns();
    if (ok) {
        if (v->cfg.verb == VERBS_READ)
            ok = verbs_res_post_op(r, qp, IBV_WR_RDMA_READ, (size_t)qp * r->slot + h, rsend,
                                   v->peer.rkey, size, true, 1, 0) == 0;
        else if (v->cfg.verb == VERBS_SEND)
            ok = verbs_res_post_op(r, qp, IBV_WR_SEND, (size_t)qp * r->slot + h - size, 0, 0, size,
                                   true, 1, 0) == 0;
        else
            /* The message ends at the last byte of the peer's receive area, whatever its
             * size, so the peer polls one fixed byte (as ib_write_lat does). */
            ok = verbs_res_post_op(r, qp, imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
                                   (size_t)qp * r->slot + h - size, raddr + h - size, v->peer.rkey,
                                   size, true, 1, st->seq) == 0;
    }
    if (!ok) {
        flow_fail(f, "queue pair %d: posting a work request failed: %s", qp, strerror(errno));
        return -EIO;
    }
    bool need_reply = v->cfg.verb != VERBS_READ && v->cfg.lat != VERBS_LAT_COMPLETION;
    /* Wait for our completion and, for a ping-pong, the peer's reply. */
    uint64_t spins = 0;
    st->probe.since_ns = t0;
    while (!(sent && (got || !need_reply))) {
        int k = poll_send(f, v, qp, &st->probe, wc, 4);
        if (k < 0)
            return -EIO;
        sent |= k > 0;
        if (sent && need_reply && !got && (spins & 0x3ff) == 0 &&
            probe_tick(f, v, qp, &st->probe, flow_now_ns(), v->cfg.verb == VERBS_SEND) < 0)
            return -EIO;
        if (need_reply && !got) {
            if (poll_mem && R) {
                got = *(volatile char *)&R[h - 1] == (char)st->seq;
            } else {
                k = ibv_poll_cq(r->rcq[qp], 1, wc);
                /* A flushed receive: the queue pair is in error, and the send completion
                 * that says why (rdma_rxe's completer posts it, then flushes the receive
                 * queue) may have come since the send queue was polled above. */
                if (k > 0 && wc[0].status == IBV_WC_WR_FLUSH_ERR) {
                    struct ibv_wc sw[4];
                    if (poll_send(f, v, qp, &st->probe, sw, 4) < 0)
                        return -EIO;
                }
                if (k < 0)
                    flow_fail(f, "queue pair %d: polling the completion queue failed", qp);
                else if (k > 0 && wc[0].status != IBV_WC_SUCCESS)
                    wc_fail(f, v, qp, &wc[0]);
                if (k < 0 || (k > 0 && wc[0].status != IBV_WC_SUCCESS))
                    return -EIO;
                got = k > 0;
            }
        }
        if ((++spins & 0x3ff) == 0 && deadline != UINT64_MAX && flow_now_ns() >= deadline)
            return -ETIMEDOUT;
        if ((spins & 0xfffff) == 0 && flow_state(f) == FLOW_ST_STOP)
            return -ECANCELED;
    }
    *dt_ns = flow_now_ns() - t0;
    return 0;
}

static void run_pingpong(struct flow_worker *w)
{
    struct flow_rt *f = w->flow;
    struct verbs_client_flow *v = f->xdata;
    struct pp_state st = {0};
    bool need_reply = v->cfg.verb != VERBS_READ && v->cfg.lat != VERBS_LAT_COMPLETION;
    while (flow_wait_running(w)) {
        uint64_t size = flow_next_size(w), dt = 0;
        if (pingpong_once(f, v, w->idx, &st, size, UINT64_MAX, &dt) < 0)
            break;
        /* ping-pong: half the round trip, as perftest reports */
        flow_record(w, need_reply ? dt / 2 : dt);
        bool read = v->cfg.verb == VERBS_READ;
        flow_progress(w, read ? 0 : size, need_reply || read ? size : 0, 1);
    }
}

/* The drill's single operations (xport_verbs_int.h). */
double verbs_client_detect_bound_s(const struct flow_rt *f)
{
    const struct verbs_client_flow *v = f->xdata;
    return v->bound_s + v->probe_after_ns / 1e9;
}

const struct verbs_res *verbs_client_res(const struct flow_rt *f)
{
    const struct verbs_client_flow *v = f ? f->xdata : NULL;
    return v ? &v->res : NULL;
}

int verbs_client_drill_op(struct flow_rt *f, uint64_t size, int timeout_ms, uint64_t *ns)
{
    struct verbs_client_flow *v = f->xdata;
    if (!v->drill)
        v->drill = xalloc_zero(1, sizeof(*v->drill));
    uint64_t deadline = flow_now_ns() + (uint64_t)timeout_ms * 1000000ull;
    return pingpong_once(f, v, 0, v->drill, size, deadline, ns);
}

/* Bandwidth: keep up to depth requests outstanding, signal every cq_mod. Post-to-completion
 * latency of each signalled request is recorded (per operation). */
static void run_stream_tx(struct flow_worker *w)
{
    struct flow_rt *f = w->flow;
    struct verbs_client_flow *v = f->xdata;
    struct verbs_res *r = &v->res;
    const int qp = w->idx % r->nqp;
    const size_t h = verbs_res_half(r);
    uint64_t raddr = v->peer.addr + (uint64_t)qp * v->peer.slot + v->peer.slot / 2;
    uint64_t rsend = v->peer.addr + (uint64_t)qp * v->peer.slot;
    int depth = r->depth, cq_mod = depth >= 32 ? 16 : depth >= 4 ? depth / 4 : 1;
    uint64_t *posted_at = xalloc_zero((size_t)depth + 1, sizeof(uint64_t));
    uint64_t posted = 0, done = 0;
    struct ibv_wc wc[16];
    enum ibv_wr_opcode op = v->cfg.verb == VERBS_READ   ? IBV_WR_RDMA_READ
                            : v->cfg.verb == VERBS_SEND ? IBV_WR_SEND
                                                        : IBV_WR_RDMA_WRITE;
    while (flow_wait_running(w)) {
        uint64_t size = flow_next_size(w);
        while (posted - done < (uint64_t)depth) {
            if (!flow_pace(w, size))
                goto out;
            bool sig = (posted + 1) % (uint64_t)cq_mod == 0;
            int rc = verbs_res_post_op(
                r, qp, op, op == IBV_WR_RDMA_READ ? (size_t)qp * r->slot + h : (size_t)qp * r->slot,
                op == IBV_WR_RDMA_READ ? rsend : raddr, v->peer.rkey, size, sig, posted, 0);
            if (rc) {
                flow_fail(f, "queue pair %d: posting failed: %s", qp, strerror(-rc));
                goto out;
            }
            if (sig)
                posted_at[posted % (uint64_t)(depth + 1)] = flow_now_ns();
            posted++;
        }
        int k = poll_cq(f, v, r->scq[qp], qp, wc, 16);
        if (k < 0)
            goto out;
        for (int i = 0; i < k; i++) {
            uint64_t id = wc[i].wr_id;
            flow_record(w, flow_now_ns() - posted_at[id % (uint64_t)(depth + 1)]);
            uint64_t n = id + 1 - done;
            done = id + 1;
            flow_progress(w, n * size, 0, n);
        }
        if (k == 0)
            sched_yield();
    }
out:
    free(posted_at);
}

/* Receiving side of an rx or bidir stream: keep receives posted, count what arrives. */
static void run_stream_rx(struct flow_worker *w)
{
    struct flow_rt *f = w->flow;
    struct verbs_client_flow *v = f->xdata;
    struct verbs_res *r = &v->res;
    const int qp = w->idx % r->nqp;
    const size_t h = verbs_res_half(r);
    struct ibv_wc wc[16];
    for (int i = 0; i < r->depth; i++)
        if (verbs_res_post_recv(r, qp, (size_t)qp * r->slot + h, h)) {
            flow_fail(f, "queue pair %d: posting receives failed: %s", qp, strerror(errno));
            return;
        }
    const bool probes = f->spec->dir == MIX_DIR_RX;
    struct verbs_client_probe probe = {.since_ns = flow_now_ns()};
    struct ibv_wc swc[2];
    while (flow_wait_running(w)) {
        int k = poll_cq(f, v, r->rcq[qp], qp, wc, 16);
        if (k < 0)
            return;
        uint64_t bytes = 0;
        for (int i = 0; i < k; i++) {
            bytes += wc[i].byte_len;
            verbs_res_post_recv(r, qp, (size_t)qp * r->slot + h, h);
        }
        if (k) {
            flow_progress(w, 0, bytes, (uint64_t)k);
            probe.since_ns = flow_now_ns();
        } else {
            if (probes && (poll_send(f, v, qp, &probe, swc, 2) < 0 ||
                           probe_tick(f, v, qp, &probe, flow_now_ns(), false) < 0))
                return;
            sched_yield();
        }
    }
}

/* A KV request over verbs: the descriptors as RDMA READs from the agent's region (vLLM: the
 * decode side pulls) or RDMA WRITEs into it (the prefill side pushes into pages the decode
 * side allocated), one SGE each on registered memory, dealt round robin over the worker's
 * queue pairs, at most kv_per_qp outstanding on each, posted in chains of doorbell_batch (one
 * ibv_post_send each), every one signalled; once all are complete, the notification: an 8-byte
 * RDMA WRITE into the agent's scratch bytes, signalled. Timed from the first post to the
 * notification's completion. */
static void run_kv(struct flow_worker *w)
{
    struct flow_rt *f = w->flow;
    struct verbs_client_flow *v = f->xdata;
    struct verbs_res *r = &v->res;
    struct kv_plan *k = v->kv;
    const bool read = k->p.engine == KV_ENGINE_VLLM;
    const int nq = v->kv_qps, q0 = w->idx * nq, per = v->kv_per_qp;
    const int batch = k->p.doorbell_batch < per ? k->p.doorbell_batch : per;
    const size_t h = verbs_res_half(r);
    int outstanding[VERBS_RES_MAX_QPS] = {0};
    struct ibv_send_wr *wr = xalloc_zero((size_t)batch, sizeof(*wr));
    struct ibv_sge *sge = xalloc_zero((size_t)batch, sizeof(*sge));
    struct ibv_wc wc[32];
    uint64_t *dts = xalloc_zero((size_t)k->desc_max + 1, sizeof(uint64_t));
    struct kv_worker kw;
    kv_worker_init(&kw, k, w);
    const struct kv_job *jb;
    while ((jb = kv_worker_next(&kw))) {
        /* The cost of issuing, timed while measuring only (clock_gettime of the thread's CPU
         * clock is a system call: kept off the warm-up). */
        const bool cost = flow_state(f) == FLOW_ST_MEASURE;
        struct verbs_client_wr_cost wc0 = {0};
        const int pt = atomic_load_explicit(&f->point, memory_order_relaxed);
        uint64_t cpu0 = cost ? thread_cpu_ns() : 0;
        uint64_t t0 = flow_now_ns();
        long posted = 0, done = 0;
        int turn = 0; /* the QP the next descriptor goes to */
        while (done < jb->ndesc) {
            /* Post what the QPs have room for, a chain of up to `batch` per doorbell. */
            /* Chains go to the QPs in turn. */
            for (int tries = 0, start = turn; tries < nq && posted < jb->ndesc; tries++) {
                int qi = (start + tries) % nq, qp = q0 + qi;
                int n = 0;
                while (n < batch && outstanding[qi] + n < per && posted + n < jb->ndesc) {
                    long d = posted + n;
                    size_t off = (size_t)qp * r->slot + (read ? h : 0) + jb->off[d];
                    sge[n] = (struct ibv_sge){r->buf_addr + off, (uint32_t)jb->len[d], r->mr->lkey};
                    uint64_t remote = v->peer.addr + (uint64_t)qp * v->peer.slot +
                                      (read ? 0 : v->peer.slot / 2) + jb->off[d];
                    wr[n] =
                        (struct ibv_send_wr){.wr_id = (uint64_t)d,
                                             .next = NULL,
                                             .sg_list = &sge[n],
                                             .num_sge = 1,
                                             .opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
                                             .send_flags = IBV_SEND_SIGNALED,
                                             .wr.rdma = {remote, v->peer.rkey}};
                    if (n)
                        wr[n - 1].next = &wr[n];
                    n++;
                }
                if (!n)
                    continue;
                struct ibv_send_wr *bad = NULL;
                uint64_t c0 = cost ? thread_cpu_ns() : 0;
                int rc = ibv_post_send(r->qp[qp], wr, &bad);
                if (cost) {
                    wc0.post_ns += thread_cpu_ns() - c0;
                    wc0.posts++;
                    wc0.wrs += (uint64_t)n;
                }
                if (rc) {
                    flow_fail(f, "queue pair %d: posting %d KV work requests failed: %s", qp, n,
                              strerror(rc));
                    goto out;
                }
                outstanding[qi] += n;
                posted += n;
                turn = (qi + 1) % nq;
            }
            /* Reap completions on every QP of the worker. */
            int got = 0;
            for (int qi = 0; qi < nq; qi++) {
                if (!outstanding[qi])
                    continue;
                int c = poll_cq(f, v, r->scq[q0 + qi], q0 + qi, wc, 32);
                if (c < 0)
                    goto out;
                outstanding[qi] -= c;
                done += c;
                got += c;
                if (c) {
                    uint64_t t = flow_now_ns() - t0;
                    for (int i = 0; i < c; i++)
                        dts[wc[i].wr_id] = t;
                }
            }
            if (got)
                atomic_store_explicit(&w->last_progress_ns, flow_now_ns(), memory_order_relaxed);
            else if (flow_state(f) == FLOW_ST_STOP)
                goto out;
        }
        /* The notification, after every descriptor completed (they may span QPs, which do not
         * order against each other). */
        int rc =
            verbs_res_post_op(r, q0, IBV_WR_RDMA_WRITE, VERBS_RES_SCRATCH_OFF(r->slot, r->nqp, q0),
                              v->peer.addr + VERBS_RES_SCRATCH_OFF(v->peer.slot, v->peer.nqp, q0),
                              v->peer.rkey, 8, true, UINT64_MAX - 2, 0);
        if (rc) {
            flow_fail(f, "queue pair %d: posting the KV notification failed: %s", q0,
                      strerror(-rc));
            goto out;
        }
        for (int c = 0; c == 0;) {
            c = poll_cq(f, v, r->scq[q0], q0, wc, 1);
            if (c < 0)
                goto out;
            if (c == 0 && flow_state(f) == FLOW_ST_STOP)
                goto out;
        }
        kv_worker_done(&kw, jb, t0, dts, read);
        if (cost && flow_state(f) == FLOW_ST_MEASURE) {
            struct verbs_client_wr_cost *a = &v->wrc[(size_t)w->idx * (size_t)f->npoints + pt];
            a->wrs += wc0.wrs + 1; /* and the notification */
            a->posts += wc0.posts + 1;
            a->post_ns += wc0.post_ns;
            a->thread_ns += thread_cpu_ns() - cpu0;
        }
    }
out:
    free(dts);
    free(wr);
    free(sge);
}

/* Receives kept posted per queue pair of a ring: the peer is at most one chunk ahead, so two
 * may be consumed before this side re-posts; four leave room. */
#define VERBS_RING_RECVS 4

/* A ring all-reduce's pattern (engine/flow/ring.h): 2 (N - 1) dependent steps, each a SEND
 * of the chunk to the peer (successor) while the peer's SEND of its chunk (predecessor) is
 * received; a step ends when both its send completed and the peer's chunk arrived, and the
 * next starts only then. The agent follows the same rule (srv_ring), so it may be one step
 * ahead. One sample per whole all-reduce, the steps timed too. */
static void run_ring(struct flow_worker *w)
{
    struct flow_rt *f = w->flow;
    struct verbs_client_flow *v = f->xdata;
    struct verbs_res *r = &v->res;
    const int qp = w->idx, steps = ring_steps(v->ring.ranks);
    const size_t h = verbs_res_half(r);
    const uint64_t chunk = v->cfg.msg;
    struct verbs_client_probe probe = {0};
    struct ibv_wc wc[4];
    while (flow_wait_running(w)) {
        if (!flow_pace(w, (uint64_t)steps * chunk))
            break;
        int p = atomic_load_explicit(&f->point, memory_order_relaxed);
        uint64_t t0 = flow_now_ns(), ts = t0, sum = 0, lo = UINT64_MAX, hi = 0;
        for (int k = 0; k < steps; k++) {
            if (verbs_res_post_op(r, qp, IBV_WR_SEND, (size_t)qp * r->slot, 0, 0, chunk, true, 1,
                                  0)) {
                flow_fail(f, "queue pair %d: posting a ring step's SEND failed: %s", qp,
                          strerror(errno));
                return;
            }
            bool sent = false, got = false;
            uint64_t spins = 0;
            probe.since_ns = ts;
            while (!(sent && got)) {
                int n = poll_send(f, v, qp, &probe, wc, 4);
                if (n < 0)
                    return;
                sent |= n > 0;
                if (!got) {
                    n = poll_cq(f, v, r->rcq[qp], qp, wc, 1);
                    if (n < 0)
                        return;
                    if (n > 0) {
                        got = true;
                        if (verbs_res_post_recv(r, qp, (size_t)qp * r->slot + h, h)) {
                            flow_fail(f, "queue pair %d: posting a receive failed", qp);
                            return;
                        }
                    }
                }
                if (!got && (spins & 0x3ff) == 0 &&
                    probe_tick(f, v, qp, &probe, flow_now_ns(), false) < 0)
                    return;
                if ((++spins & 0xfffff) == 0 && flow_state(f) == FLOW_ST_STOP)
                    return;
            }
            uint64_t now = flow_now_ns(), d = now - ts;
            ts = now;
            sum += d;
            lo = d < lo ? d : lo;
            hi = d > hi ? d : hi;
            atomic_store_explicit(&w->last_progress_ns, now, memory_order_relaxed);
        }
        uint64_t dt = ts - t0;
        if (flow_state(f) == FLOW_ST_MEASURE)
            ring_acc_add(&v->racc[(size_t)w->idx * (size_t)f->npoints + (size_t)p], dt, steps, sum,
                         lo, hi);
        flow_record(w, dt);
        flow_progress(w, (uint64_t)steps * chunk, (uint64_t)steps * chunk, 1);
    }
}

static void *worker_main(void *arg)
{
    struct flow_worker *w = arg;
    struct flow_rt *f = w->flow;
    struct verbs_client_flow *v = f->xdata;
    flow_worker_begin(w);
    if (f->spec->op == MIX_OP_KV)
        run_kv(w);
    else if (f->spec->op == MIX_OP_COLLECTIVE)
        run_ring(w);
    else if (f->spec->op == MIX_OP_PINGPONG)
        run_pingpong(w);
    else if (f->spec->dir == MIX_DIR_TX || (f->spec->dir == MIX_DIR_BIDIR && w->idx < v->res.nqp))
        run_stream_tx(w);
    else
        run_stream_rx(w);
    return NULL;
}

/* Asynchronous events (port down, QP fatal) become events in the run's log. */
static void *async_main(void *arg)
{
    struct flow_rt *f = arg;
    struct verbs_client_flow *v = f->xdata;
    struct pollfd p = {v->res.ctx->async_fd, POLLIN, 0};
    int fl = fcntl(p.fd, F_GETFL);
    fcntl(p.fd, F_SETFL, fl | O_NONBLOCK);
    /* After a stop request, one last look: a port that went down is queued as an event
     * before the completion error it causes, so the log keeps both. */
    for (bool last = false; !last;) {
        last = atomic_load(&v->async_stop);
        counters_qp_flow_tick(f, v->qpc, 1.0); /* this flow's QP counter, once a second */
        if (poll(&p, 1, last ? 20 : 100) <= 0)
            continue;
        struct ibv_async_event ev;
        if (ibv_get_async_event(v->res.ctx, &ev))
            continue;
        flow_event(f, "%s: async event %s", v->res.dev, ibv_event_type_str(ev.event_type));
        if (ev.event_type == IBV_EVENT_QP_FATAL || ev.event_type == IBV_EVENT_DEVICE_FATAL)
            flow_fail(f, "%s: %s", v->res.dev, ibv_event_type_str(ev.event_type));
        ibv_ack_async_event(&ev);
        last = false; /* there may be more */
    }
    return NULL;
}

/* The agent's return-routability check (see the top): ask for the nonces, read them from
 * our nonce buffer, echo them. */
static int vb_prove(struct flow_rt *f, struct verbs_client_flow *v, struct ft_err *err)
{
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    cJSON_AddStringToObject(req, "type", "verbs.nonce");
    uint64_t t0 = flow_now_ns();
    int rc = channel_request(f->ctl, req, &resp, 5000, err);
    cJSON_Delete(resp);
    if (rc < 0)
        return rc;
    unsigned char n[VERBS_RES_MAX_QPS][RRCHECK_NONCE_BYTES];
    rc = verbs_res_nonce_read(&v->res, n, RRCHECK_ECHO_MS / 2, err);
    if (rc < 0)
        return rc;
    req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "verbs.echo");
    cJSON_AddItemToObject(
        req, "nonces",
        rrcheck_echo_json((const unsigned char(*)[RRCHECK_NONCE_BYTES])n, v->res.nqp));
    rc = channel_request(f->ctl, req, &resp, 5000, err);
    cJSON_Delete(resp);
    if (rc == 0)
        flow_event(f,
                   "the agent checked the return path: a nonce RDMA WRITE over each of %d QP%s, "
                   "echoed in %.1f ms",
                   v->res.nqp, v->res.nqp == 1 ? "" : "s", (flow_now_ns() - t0) / 1e6);
    return rc;
}

int verbs_client_setup(struct flow_rt *f, struct ft_err *err)
{
    const struct mix_flow *s = f->spec;
    struct verbs_client_flow *v = xalloc_zero(1, sizeof(*v));
    f->xdata = v;
    int rc = verbs_params_parse(s, &v->cfg, err);
    if (rc < 0)
        return rc;
    /* Host buffers on the NIC's NUMA node (from the topology, when known). */
    const struct topo_model *m = flow_topology(f);
    rc = verbs_res_open(&v->res, &v->cfg.want, err);
    if (rc < 0)
        return rc;
    for (int i = 0; m && i < m->nnics; i++)
        if (!strcmp(m->nics[i].rdma_dev, v->res.dev) && m->nics[i].pci >= 0)
            v->cfg.want.numa = m->pci[m->nics[i].pci].numa;
    int nqp = s->concurrency, qdepth = v->cfg.depth;
    if (s->op == MIX_OP_KV) {
        /* Each worker's queue pairs hold a region of the plan's size per side (send half:
         * what it WRITEs from, receive half: what it READs into). */
        rc = kv_plan_build(s, f->nworkers_alloc, f->npoints, 4u << 20, &v->kv, err);
        if (rc < 0)
            return rc;
        v->cfg.msg = v->kv->region;
        v->cfg.verb = v->kv->p.engine == KV_ENGINE_VLLM ? VERBS_READ : VERBS_WRITE;
        v->kv_qps = v->kv->p.qps;
        nqp = s->concurrency * v->kv_qps;
        struct ibv_device_attr da;
        v->dev_rd_atom = ibv_query_device(v->res.ctx, &da) == 0 ? da.max_qp_rd_atom : 0;
        v->qp_rd_atomic = 16; /* what verbs_res_connect asks for */
        if (v->dev_rd_atom > 0 && v->dev_rd_atom < v->qp_rd_atomic)
            v->qp_rd_atomic = v->dev_rd_atom;
        v->kv_per_qp = (v->cfg.depth + v->kv_qps - 1) / v->kv_qps;
        /* More outstanding READs than a QP has in flight would only queue on it: the depth
         * beyond max_qp_rd_atom per QP needs more QPs (params.qps). */
        if (v->cfg.verb == VERBS_READ && v->kv_per_qp > v->qp_rd_atomic)
            v->kv_per_qp = v->qp_rd_atomic;
        qdepth = v->kv_per_qp + 1; /* and the notification */
        v->wrc = xalloc_zero((size_t)f->nworkers_alloc * (size_t)f->npoints, sizeof(*v->wrc));
    }
    if (s->op == MIX_OP_COLLECTIVE) {
        rc = ring_params_from(s, &v->ring, err);
        if (rc < 0)
            return rc;
        v->cfg.msg = ring_chunk(s->size.bytes[0], v->ring.ranks);
        v->cfg.verb = VERBS_SEND;
        v->cfg.lat = VERBS_LAT_POLL;
        qdepth = VERBS_RING_RECVS;
        v->racc = xalloc_zero((size_t)f->nworkers_alloc * (size_t)f->npoints, sizeof(*v->racc));
        /* busbw as nccl-tests computes it for all_reduce: S over the time, x 2 (N - 1) / N. */
        f->bw_factor = ring_busbw_factor(v->ring.ranks);
        for (int p = 0; p < f->npoints; p++)
            f->points[p].bw_bytes = f->points[p].size;
    }
    rc = verbs_res_alloc(&v->res, &v->cfg.want, nqp, v->cfg.msg, qdepth, err);
    if (rc < 0)
        return rc;
    v->bound_s = verbs_res_timeout_bound_s(v->cfg.timeout, v->cfg.retry_cnt, v->res.driver);
    /* Probe after one local ACK timeout without an answer (at least 1 ms, so a healthy
     * ping-pong rarely needs one): detection then takes at most this plus bound_s. */
    double t_o = 4.096e-6 * (double)(1ull << v->cfg.timeout);
    v->probe_after_ns = (uint64_t)(1e9 * (t_o > 0.001 ? t_o : 0.001));
    if (v->bound_s == INFINITY)
        flow_event(f,
                   "%s retries forever with retry_cnt 7 (rdma_rxe's rxe_comp.c treats 7 "
                   "as unlimited): a dead peer is caught by the progress deadline instead",
                   v->res.dev);
    /* The flow's liveness deadline must not pre-empt the QP's own timeout, which is what
     * reports a vanished peer with its status text. */
    double detect = v->bound_s + v->probe_after_ns / 1e9;
    if (detect != INFINITY && f->fail_bound_s < detect + 0.5)
        f->fail_bound_s = detect + 0.5;
    if (detect != INFINITY && f->progress_deadline_s < detect + 0.5)
        f->progress_deadline_s = detect + 0.5;
    if (v->res.link_layer == IBV_LINK_LAYER_ETHERNET && v->res.netdev[0]) {
        struct ft_err derr = {0};
        topo_dcb_query(v->res.netdev, &v->dcb, &derr);
        topo_dcb_ecn_read("", v->res.netdev, &v->dcb);
    }
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "verbs.open");
    cJSON_AddStringToObject(req, "op", mix_op_str(s->op));
    cJSON_AddStringToObject(req, "direction", mix_dir_str(s->dir));
    cJSON_AddStringToObject(req, "verb", verbs_params_verb_names[v->cfg.verb]);
    cJSON_AddStringToObject(req, "latency", verbs_params_lat_names[v->cfg.lat]);
    cJSON_AddNumberToObject(req, "size", (double)v->cfg.msg);
    cJSON_AddNumberToObject(req, "depth", qdepth);
    cJSON_AddNumberToObject(req, "timeout", v->cfg.timeout);
    cJSON_AddNumberToObject(req, "retry_cnt", v->cfg.retry_cnt);
    if (v->cfg.want.path_mtu)
        cJSON_AddNumberToObject(req, "path_mtu", v->cfg.want.path_mtu);
    cJSON_AddNumberToObject(req, "dscp", v->cfg.want.dscp);
    cJSON_AddNumberToObject(req, "sl", v->cfg.want.sl);
    cJSON_AddNumberToObject(req, "rate_gbps", s->rate_gbps);
    cJSON_AddStringToObject(req, "connect", v->cfg.rdmacm ? "rdmacm" : "ctl");
    cJSON_AddItemToObject(req, "peer", verbs_res_peer_json(&v->res));
    cJSON *resp = NULL;
    rc = channel_request(f->ctl, req, &resp, 10000, err);
    if (rc < 0)
        return rc;
    rc = verbs_res_peer_parse(cJSON_GetObjectItemCaseSensitive(resp, "peer"), &v->peer, err);
    char cm_host[64] = "";
    double cm_port = 0;
    if (v->cfg.rdmacm && rc == 0 &&
        (!jsonutil_str(resp, "cm_host") || !jsonutil_num(resp, "cm_port", &cm_port)))
        rc = ft_err_set(err, -EPROTO, "flow %s: the agent did not offer rdma_cm", s->name);
    if (v->cfg.rdmacm && rc == 0)
        snprintf(cm_host, sizeof(cm_host), "%s", jsonutil_str(resp, "cm_host"));
    const char *agent_dev = jsonutil_str(resp, "device");
    if (agent_dev)
        flow_event(f, "agent uses %s, GID index %s", agent_dev,
                   jsonutil_str(resp, "gid_index_text") ? jsonutil_str(resp, "gid_index_text")
                                                        : "?");
    cJSON_Delete(resp);
    if (rc < 0)
        return rc;
    if (v->cfg.rdmacm)
        rc = verbs_cm_connect(&v->res, cm_host, (int)cm_port, v->cfg.want.dscp << 2, v->cfg.timeout,
                              v->cfg.retry_cnt, &v->cm, err);
    else
        rc = verbs_res_connect(&v->res, &v->peer, &v->cfg.want, v->cfg.timeout, v->cfg.retry_cnt,
                               err);
    if (rc < 0)
        return rc;
    /* A ring's receives go up before the agent's side starts (after the echo below): its first
     * SEND comes at once, and a SEND with no receive posted waits in RNR retries. */
    for (int i = 0; v->ring.ranks && i < v->res.nqp; i++)
        for (int k = 0; k < VERBS_RING_RECVS; k++)
            if (verbs_res_post_recv(&v->res, i, (size_t)i * v->res.slot + verbs_res_half(&v->res),
                                    verbs_res_half(&v->res)))
                return ft_err_set(err, -EIO, "flow %s: posting the ring's receives failed",
                                  s->name);
    rc = vb_prove(f, v, err);
    if (rc < 0)
        return rc;
    /* The QPs on a counter of their own, apart from the port-wide counters, where the
     * kernel and the device allow it (never fails the flow). */
    uint32_t qpns[VERBS_RES_MAX_QPS];
    for (int i = 0; i < v->res.nqp; i++)
        qpns[i] = v->res.qp[i]->qp_num;
    v->qpc = counters_qp_flow_bind(f, &(struct counters_qp_opts){.dev = v->res.dev,
                                                                 .port = v->res.port,
                                                                 .driver = v->res.driver,
                                                                 .qpns = qpns,
                                                                 .nqps = v->res.nqp,
                                                                 .nl_fd = -1});
    if (pthread_create(&v->async, NULL, async_main, f) == 0)
        v->async_started = true;
    return 0;
}

int verbs_client_start(struct flow_rt *f, struct ft_err *err)
{
    return flow_start_workers(f, worker_main, err);
}

void verbs_client_stop(struct flow_rt *f)
{
    flow_join_workers(f);
}

/* The cost of issuing descriptors into each point's kv figures: work requests per second per
 * core, over the posting thread's CPU time (posting and busy-polling) and over the CPU time
 * inside ibv_post_send alone. */
static void wr_cost_figures(struct flow_rt *f, struct verbs_client_flow *v, cJSON *pf)
{
    for (int p = 0; p < f->npoints; p++) {
        cJSON *kv = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(pf, p), "kv");
        if (!kv)
            continue;
        struct verbs_client_wr_cost a = {0};
        for (int i = 0; i < f->nworkers; i++) {
            const struct verbs_client_wr_cost *b = &v->wrc[(size_t)i * (size_t)f->npoints + p];
            a.wrs += b->wrs;
            a.posts += b->posts;
            a.thread_ns += b->thread_ns;
            a.post_ns += b->post_ns;
        }
        cJSON *c = cJSON_AddObjectToObject(kv, "issue_cost");
        cJSON_AddNumberToObject(c, "work_requests", (double)a.wrs);
        cJSON_AddNumberToObject(c, "ibv_post_send_calls", (double)a.posts);
        cJSON_AddNumberToObject(c, "thread_cpu_s", a.thread_ns / 1e9);
        cJSON_AddNumberToObject(c, "post_cpu_s", a.post_ns / 1e9);
        jsonutil_add_num_or_null(c, "work_requests_per_thread_cpu_s", a.thread_ns > 0,
                                 a.thread_ns ? (double)a.wrs / (a.thread_ns / 1e9) : 0);
        jsonutil_add_num_or_null(c, "work_requests_per_post_cpu_s", a.post_ns > 0,
                                 a.post_ns ? (double)a.wrs / (a.post_ns / 1e9) : 0);
        cJSON_AddStringToObject(c, "method",
                                "work requests posted (descriptors and notifications) over the "
                                "posting threads' CPU seconds (CLOCK_THREAD_CPUTIME_ID) of the "
                                "measured requests: thread_cpu includes busy-polling the "
                                "completions, post_cpu is inside ibv_post_send only; per core, "
                                "one thread per worker");
    }
}

void verbs_client_teardown(struct flow_rt *f)
{
    struct verbs_client_flow *v = f->xdata;
    if (!v)
        return;
    if (v->async_started) {
        atomic_store(&v->async_stop, true);
        pthread_join(v->async, NULL);
    }
    counters_qp_flow_finish(f, v->qpc); /* a last reading, then unbound before the QPs go */
    v->qpc = NULL;
    verbs_cm_close(v->cm);
    verbs_res_close(&v->res);
    if (v->kv && f->conditions && v->kv->desc) {
        cJSON *pf = kv_plan_figures(v->kv, v->kv->p.engine == KV_ENGINE_VLLM
                                               ? "request posted to the descriptor's RDMA READ "
                                                 "completion"
                                               : "request posted to the descriptor's RDMA WRITE "
                                                 "completion (acknowledged by the peer)");
        wr_cost_figures(f, v, pf);
        pthread_mutex_lock(&f->lock);
        cJSON_DeleteItemFromObjectCaseSensitive(f->conditions, "point_figures");
        cJSON_AddItemToObject(f->conditions, "point_figures", pf);
        pthread_mutex_unlock(&f->lock);
    }
    free(v->wrc);
    kv_plan_free(v->kv);
    if (v->racc && f->conditions) {
        cJSON *pf = cJSON_CreateArray();
        for (int p = 0; p < f->npoints; p++) {
            struct ring_acc a = {0};
            for (int i = 0; i < f->nworkers; i++)
                ring_acc_merge(&a, &v->racc[(size_t)i * (size_t)f->npoints + (size_t)p]);
            cJSON_AddItemToArray(pf,
                                 ring_figures("verbs", v->ring.ranks, f->points[p].size, &a, NULL));
        }
        pthread_mutex_lock(&f->lock);
        cJSON_DeleteItemFromObjectCaseSensitive(f->conditions, "point_figures");
        cJSON_AddItemToObject(f->conditions, "point_figures", pf);
        pthread_mutex_unlock(&f->lock);
    }
    free(v->racc);
    free(v->drill);
    free(v);
    f->xdata = NULL;
}

void verbs_client_conditions(const struct flow_rt *f, cJSON *out)
{
    struct verbs_client_flow *v = f->xdata;
    if (!v)
        return;
    cJSON *c = verbs_res_conditions(&v->res, &v->cfg.want, v->cfg.timeout, v->cfg.retry_cnt);
    cJSON *it = c->child;
    while (it) {
        cJSON *next = it->next;
        cJSON_AddItemToObject(out, it->string, cJSON_DetachItemViaPointer(c, it));
        it = next;
    }
    cJSON_Delete(c);
    cJSON_AddNumberToObject(out, "liveness_probe_after_s", v->probe_after_ns / 1e9);
    if (!isinf(v->bound_s))
        cJSON_AddNumberToObject(out, "peer_loss_detect_bound_s",
                                v->bound_s + v->probe_after_ns / 1e9);
    cJSON_AddStringToObject(out, "verb", verbs_params_verb_names[v->cfg.verb]);
    if (v->kv) {
        cJSON *kv = kv_plan_conditions(v->kv);
        cJSON_AddStringToObject(kv, "transfer",
                                v->cfg.verb == VERBS_READ
                                    ? "pull: RDMA READ of each descriptor from the agent's region"
                                    : "push: RDMA WRITE of each descriptor into the agent's "
                                      "region");
        cJSON_AddNumberToObject(kv, "qps_total", v->res.nqp);
        cJSON_AddNumberToObject(kv, "outstanding_per_qp", v->kv_per_qp);
        jsonutil_add_num_or_null(kv, "device_max_qp_rd_atom", v->dev_rd_atom > 0, v->dev_rd_atom);
        cJSON_AddNumberToObject(kv, "qp_max_rd_atomic", v->qp_rd_atomic);
        cJSON_AddNumberToObject(kv, "sge_per_work_request", 1);
        cJSON_AddStringToObject(kv, "signalled", "every descriptor");
        cJSON_AddStringToObject(kv, "notification",
                                "an 8-byte RDMA WRITE into the agent's scratch bytes once every "
                                "descriptor completed, timed to its completion");
        cJSON_AddNumberToObject(kv, "path_mtu_bytes", verbs_res_mtu_bytes(v->res.active_mtu));
        cJSON_AddItemToObject(out, "kv", kv);
    }
    if (v->ring.ranks) {
        char label[160];
        ring_label("verbs", v->ring.ranks, false, label, sizeof(label));
        cJSON *r = cJSON_AddObjectToObject(out, "ring");
        cJSON_AddStringToObject(r, "pattern", label);
        cJSON_AddStringToObject(r, "collective", "all_reduce");
        cJSON_AddNumberToObject(r, "ranks", v->ring.ranks);
        cJSON_AddNumberToObject(r, "steps_per_allreduce", ring_steps(v->ring.ranks));
        cJSON_AddNumberToObject(r, "chunk_bytes", (double)v->cfg.msg);
        cJSON_AddStringToObject(r, "emulation",
                                "one RC queue pair carries both ring neighbours (the peer is "
                                "successor and predecessor): each step a signalled SEND of the "
                                "chunk while the peer's SEND is received (receives kept posted "
                                "ahead), started when the previous step's chunk has arrived; the "
                                "peer follows the same rule, so it may be one step ahead when "
                                "an all-reduce starts");
    }
    cJSON_AddStringToObject(out, "latency_method",
                            f->spec->op == MIX_OP_COLLECTIVE
                                ? "per all-reduce: the first step's SEND posted to the last "
                                  "step's chunk received"
                            : f->spec->op == MIX_OP_KV     ? "per request: first descriptor "
                                                             "posted to the notification's "
                                                             "completion"
                            : f->spec->op == MIX_OP_STREAM ? "post to completion of signalled "
                                                             "requests"
                            : v->cfg.verb == VERBS_READ    ? "READ round trip (post to completion)"
                            : v->cfg.lat == VERBS_LAT_POLL ? "ping-pong polling the last byte "
                                                             "(ib_write_lat method), half round "
                                                             "trip"
                            : v->cfg.lat == VERBS_LAT_IMM  ? "ping-pong of WRITE with immediate, "
                                                             "half round trip"
                                                           : "post to completion of one WRITE");
    cJSON_AddStringToObject(out, "connection",
                            v->cm ? "librdmacm (rdma_cm address, route and CM handshake; rkey "
                                    "and address over the fabtop control channel)"
                                  : "fabtop control channel (QP number, PSN, GID, LID, rkey, "
                                    "address)");
    if (v->res.link_layer == IBV_LINK_LAYER_ETHERNET)
        cJSON_AddItemToObject(out, "dcb", topo_dcb_json(&v->dcb, v->cfg.want.dscp));
}
