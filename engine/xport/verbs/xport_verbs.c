/* xport_verbs: the RDMA verbs transport (libibverbs, RC queue pairs).
 *
 * Client side: one worker per queue pair (two for a bidirectional stream). Latency:
 * WRITE ping-pong measured as ib_write_lat does (each side polls the last byte of its
 * buffer; half the round trip), post-to-completion of one WRITE, SEND/RECV ping-pong,
 * RDMA READ (round trip), and WRITE-with-immediate ping-pong (needed for GPU memory, where
 * polling the last byte cannot work). Bandwidth: up to `depth` outstanding work requests
 * per QP, completions signalled every few requests. Set-up (device, PD/CQ/QP, memory
 * registration, connection) is timed apart from transfer.
 *
 * Agent side ("verbs.open"): opens the same number of QPs on its RDMA port, exchanges QP
 * number, PSN, the GID itself, LID, rkey and buffer address over the authenticated control
 * channel, and answers: it echoes ping-pongs, keeps receives posted, or sends (rx).
 * Return routability (engine/peer/rrcheck.h): the client chooses the GID/LID the agent's QPs
 * connect to, and a multi-rail RoCE data address, a link-local GID or an InfiniBand LID
 * need not match the control connection's address, so the agent checks instead that the
 * client receives there: "verbs.nonce" makes it RDMA WRITE a random nonce over each QP into
 * the client's nonce buffer, and "verbs.echo" must bring them back within RRCHECK_ECHO_MS, or the
 * QPs are destroyed. No worker (no test data) starts before that. The QPs could only answer
 * requests before it: an RC responder drops packets whose source does not match the QP's
 * address (IBTA 9.6.1.5), so only whoever is at that address can ask anything of them. */
#define _GNU_SOURCE
#include "engine/xport/xport.h"

#include <arpa/inet.h>
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
#include <unistd.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/counters/counters_qp.h"
#include "engine/xport/verbs/verbs_dcb.h"
#include "engine/peer/rrcheck.h"
#include "engine/xport/verbs/verbs_cm.h"
#include "engine/xport/verbs/verbs_res.h"
#include "topology/topo_model.h"

enum vb_verb { VB_WRITE = 0, VB_SEND, VB_READ };
enum vb_lat { VB_LAT_POLL = 0, VB_LAT_COMPLETION, VB_LAT_IMM };

static const char *const verb_names[] = {"write", "send", "read"};
static const char *const lat_names[] = {"pingpong", "completion", "imm"};

/* Settings read from the flow's params (and sent to the agent). */
struct vb_cfg {
    enum vb_verb verb;
    enum vb_lat lat;
    int timeout, retry_cnt, depth;
    size_t msg;  /* largest message */
    bool rdmacm; /* connect through librdmacm, not the control channel */
    struct verbs_res_want want;
};

static int name_idx(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

/* A whole-number parameter, dflt when absent; INT_MIN (which the range checks refuse) when it
 * is a fraction or beyond an int: never converted (that would be undefined). */
static int int_or(const cJSON *p, const char *key, int dflt)
{
    double d;
    int64_t v;
    if (!jsonutil_num(p, key, &d))
        return dflt;
    return jsonutil_whole(d, INT_MIN + 1, INT_MAX, &v) ? (int)v : INT_MIN;
}

static int parse_cfg(const struct mix_flow *f, struct vb_cfg *c, struct ft_err *err)
{
    memset(c, 0, sizeof(*c));
    const cJSON *p = f->params;
    const char *verb = jsonutil_str(p, "verb"), *lat = jsonutil_str(p, "latency"),
               *mem = jsonutil_str(p, "memory");
    int v = verb ? name_idx(verb, verb_names, 3) : VB_WRITE;
    int l = lat ? name_idx(lat, lat_names, 3) : VB_LAT_POLL;
    if (v < 0)
        return ft_err_set(err, -EINVAL, "flow %s: params.verb must be write, send or read",
                          f->name);
    if (l < 0)
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.latency must be pingpong, completion or imm", f->name);
    c->verb = (enum vb_verb)v;
    c->lat = (enum vb_lat)l;
    c->timeout = int_or(p, "timeout", 14);
    c->retry_cnt = int_or(p, "retry_cnt", 7);
    c->depth = int_or(p, "depth", f->op == MIX_OP_STREAM ? 64 : 2);
    c->want.gid_index = int_or(p, "gid_index", -1); /* -1: chosen by the port's GIDs */
    c->want.dscp = int_or(p, "dscp", 26);           /* the RoCE default, AF31 */
    c->want.sl = int_or(p, "sl", 0);
    c->want.numa = -1;
    c->want.gpu_memory = mem && !strcmp(mem, "gpu");
    c->want.gpu = f->local_gpu >= 0 ? f->local_gpu : 0;
    const char *conn = jsonutil_str(p, "connect");
    if (conn && strcmp(conn, "ctl") && strcmp(conn, "rdmacm"))
        return ft_err_set(err, -EINVAL, "flow %s: params.connect must be ctl or rdmacm", f->name);
    c->rdmacm = conn && !strcmp(conn, "rdmacm");
    if (mem && strcmp(mem, "gpu") && strcmp(mem, "host"))
        return ft_err_set(err, -EINVAL, "flow %s: params.memory must be host or gpu", f->name);
    if (c->timeout < 0 || c->timeout > 31 || c->retry_cnt < 0 || c->retry_cnt > 7 || c->depth < 1 ||
        c->depth > 4096 || c->want.dscp < 0 || c->want.dscp > 63 || c->want.sl < 0 ||
        c->want.sl > 15 || c->want.gid_index < -1 || c->want.gid_index > 65535)
        return ft_err_set(err, -EINVAL,
                          "flow %s: params out of range (timeout 0-31, retry_cnt 0-7, depth "
                          "1-4096, dscp 0-63, sl 0-15, gid_index -1-65535; whole numbers)",
                          f->name);
    c->msg = 0;
    for (int i = 0; i < f->size.n; i++)
        if (f->size.bytes[i] > c->msg)
            c->msg = f->size.bytes[i];
    if (f->local_rdma[0]) {
        char dev[64];
        int port = 0;
        snprintf(dev, sizeof(dev), "%s", f->local_rdma);
        char *colon = strchr(dev, ':');
        if (colon) {
            port = atoi(colon + 1);
            *colon = '\0';
        }
        snprintf(c->want.device, sizeof(c->want.device), "%s", dev);
        c->want.port = port;
    }
    snprintf(c->want.ip, sizeof(c->want.ip), "%s", f->local_ip);
    snprintf(c->want.netdev, sizeof(c->want.netdev), "%s", f->local_netdev);
    return 0;
}

/* The params parse_cfg reads. */
static const char *const *vb_param_keys(enum mix_op op)
{
    (void)op;
    static const char *const keys[] = {"verb",      "latency", "memory",    "timeout",
                                       "retry_cnt", "depth",   "gid_index", "dscp",
                                       "sl",        "connect", NULL};
    return keys;
}

static int vb_validate(const struct mix_flow *f, struct ft_err *err)
{
    struct vb_cfg c;
    int rc = parse_cfg(f, &c, err);
    if (rc < 0)
        return rc;
    if (f->size.kind == MIX_SIZE_DIST)
        return ft_err_set(err, -EINVAL,
                          "flow %s: verbs flows take a fixed size or a sweep, not a distribution",
                          f->name);
    if (f->concurrency > VERBS_RES_MAX_QPS)
        return ft_err_set(err, -EINVAL, "flow %s: at most %d queue pairs", f->name,
                          VERBS_RES_MAX_QPS);
    if (c.msg > (1u << 30))
        return ft_err_set(err, -EINVAL, "flow %s: messages up to 1 GiB", f->name);
    if (f->op == MIX_OP_PINGPONG && c.verb == VB_READ && c.lat != VB_LAT_POLL)
        return ft_err_set(err, -EINVAL, "flow %s: READ latency is always a round trip", f->name);
    if (f->op == MIX_OP_STREAM && f->dir != MIX_DIR_TX && c.verb == VB_READ)
        return ft_err_set(err, -EINVAL, "flow %s: RDMA READ streams run in direction tx", f->name);
    if (c.want.gpu_memory && f->op == MIX_OP_PINGPONG && c.lat == VB_LAT_POLL)
        return ft_err_set(err, -EINVAL,
                          "flow %s: GPU memory cannot be polled from the CPU: use "
                          "params.latency \"imm\" (WRITE with immediate)",
                          f->name);
    return 0;
}

static int vb_available(char *why, size_t len)
{
    int n = 0;
    struct ibv_device **l = ibv_get_device_list(&n);
    int e = errno;
    if (l)
        ibv_free_device_list(l);
    if (n > 0)
        return 0;
    snprintf(why, len, "no RDMA device (%s): load an RDMA driver, or rdma_rxe for Soft-RoCE",
             e ? strerror(e) : "none listed");
    return -ENODEV;
}

/* ================= shared data path helpers ================= */

static int post_op(struct verbs_res *r, int qp, enum ibv_wr_opcode op, size_t local_off,
                   uint64_t remote, uint32_t rkey, size_t len, bool signaled, uint64_t wr_id,
                   uint32_t imm)
{
    struct ibv_sge sge = {
        .addr = r->buf_addr + local_off, .length = (uint32_t)len, .lkey = r->mr->lkey};
    struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = len ? 1 : 0, .opcode = op};
    wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
    if (len <= r->max_inline && op != IBV_WR_RDMA_READ && !r->buf_gpu)
        wr.send_flags |= IBV_SEND_INLINE;
    if (op != IBV_WR_SEND) {
        wr.wr.rdma.remote_addr = remote;
        wr.wr.rdma.rkey = rkey;
    }
    if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
        wr.imm_data = htonl(imm);
    struct ibv_send_wr *bad;
    return ibv_post_send(r->qp[qp], &wr, &bad) ? -errno : 0;
}

static int post_recv(struct verbs_res *r, int qp, size_t off, size_t len)
{
    struct ibv_sge sge = {.addr = r->buf_addr + off, .length = (uint32_t)len, .lkey = r->mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = (uint64_t)qp, .sg_list = &sge, .num_sge = 1};
    struct ibv_recv_wr *bad;
    return ibv_post_recv(r->qp[qp], &wr, &bad) ? -errno : 0;
}

/* ================= client side ================= */

/* A queue pair with nothing outstanding never errors, so a worker waiting on its peer (a
 * ping-pong reply, or data in an rx stream) keeps one 1-byte RDMA WRITE (into the peer's
 * scratch bytes, which nothing reads) in flight once
 * it has waited probe_after_s: if the peer is gone, that request runs out of retries and
 * its completion error names the failure. wr_id VB_PROBE_ID marks its completion. */
#define VB_PROBE_ID UINT64_MAX

struct vb_probe {
    uint64_t since_ns; /* waiting since */
    bool out;          /* a probe is in flight */
};

struct vb_flow {
    struct vb_cfg cfg;
    struct verbs_res res;
    struct verbs_res_peer peer;
    struct verbs_dcb_info dcb;
    pthread_t async;
    bool async_started;
    _Atomic bool async_stop;
    struct verbs_cm *cm;     /* when connected through librdmacm */
    struct counters_qp *qpc; /* its QPs on an RDMA counter of their own (or why not) */
    double bound_s;          /* (retry_cnt + 1) x 4 x max(T_o, floor): the QP's own bound */
    uint64_t probe_after_ns; /* liveness probe after this long without an answer */
};

static size_t half(const struct verbs_res *r)
{
    return r->slot / 2;
}

/* Report a failed completion: the status text, and the bound it should have come within. */
static void wc_fail(struct flow_rt *f, struct vb_flow *v, int qp, const struct ibv_wc *wc)
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
static int poll_cq(struct flow_rt *f, struct vb_flow *v, struct ibv_cq *cq, int qp,
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

/* Post a probe when the worker has waited long enough and none is in flight. */
static int probe_tick(struct flow_rt *f, struct vb_flow *v, int qp, struct vb_probe *p,
                      uint64_t now)
{
    if (p->out || now - p->since_ns < v->probe_after_ns)
        return 0;
    int rc =
        post_op(&v->res, qp, IBV_WR_RDMA_WRITE, VERBS_RES_SCRATCH_OFF(v->res.slot, v->res.nqp, qp),
                v->peer.addr + VERBS_RES_SCRATCH_OFF(v->peer.slot, v->peer.nqp, qp), v->peer.rkey,
                1, true, VB_PROBE_ID, 0);
    if (rc) {
        flow_fail(f, "queue pair %d: posting a liveness probe failed: %s", qp, strerror(-rc));
        return -1;
    }
    p->out = true;
    return 0;
}

/* Completions of the send queue, probes taken out: returns the others (>= 0) or -1. */
static int poll_send(struct flow_rt *f, struct vb_flow *v, int qp, struct vb_probe *p,
                     struct ibv_wc *wc, int n)
{
    int k = poll_cq(f, v, v->res.scq[qp], qp, wc, n), j = 0;
    for (int i = 0; i < k; i++) {
        if (wc[i].wr_id == VB_PROBE_ID) {
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

static void run_pingpong(struct flow_worker *w)
{
    struct flow_rt *f = w->flow;
    struct vb_flow *v = f->xdata;
    struct verbs_res *r = &v->res;
    const int qp = w->idx;
    const size_t h = half(r);
    char *L = r->buf ? r->buf + (size_t)qp * r->slot : NULL, *R = L ? L + h : NULL;
    uint64_t raddr = v->peer.addr + (uint64_t)qp * v->peer.slot + v->peer.slot / 2;
    uint64_t rsend = v->peer.addr + (uint64_t)qp * v->peer.slot;
    struct ibv_wc wc[4];
    uint64_t cur = 0;
    uint8_t seq = 0;
    struct vb_probe probe = {0};
    /* Only a WRITE lands where we can poll it; a SEND's reply is a receive completion. */
    const bool imm = v->cfg.lat == VB_LAT_IMM,
               poll_mem = v->cfg.verb == VB_WRITE && v->cfg.lat == VB_LAT_POLL;
    while (flow_wait_running(w)) {
        uint64_t size = flow_next_size(w);
        if (size != cur) {
            if ((v->cfg.verb == VB_WRITE || imm) && tell_size(f, qp, size) < 0)
                break;
            cur = size;
        }
        seq = (uint8_t)(seq % 255 + 1);
        bool ok = true, sent = false, got = false;
        uint64_t t0 = 0;
        if (v->cfg.verb == VB_SEND || imm)
            ok = post_recv(r, qp, (size_t)qp * r->slot + h, h) == 0;
        if (L)
            L[h - 1] = (char)seq;
        t0 = flow_now_ns();
        if (ok) {
            if (v->cfg.verb == VB_READ)
                ok = post_op(r, qp, IBV_WR_RDMA_READ, (size_t)qp * r->slot + h, rsend, v->peer.rkey,
                             size, true, 1, 0) == 0;
            else if (v->cfg.verb == VB_SEND)
                ok = post_op(r, qp, IBV_WR_SEND, (size_t)qp * r->slot + h - size, 0, 0, size, true,
                             1, 0) == 0;
            else
                /* The message ends at the last byte of the peer's receive area, whatever its
                 * size, so the peer polls one fixed byte (as ib_write_lat does). */
                ok = post_op(r, qp, imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
                             (size_t)qp * r->slot + h - size, raddr + h - size, v->peer.rkey, size,
                             true, 1, seq) == 0;
        }
        if (!ok) {
            flow_fail(f, "queue pair %d: posting a work request failed: %s", qp, strerror(errno));
            break;
        }
        bool need_reply = v->cfg.verb != VB_READ && v->cfg.lat != VB_LAT_COMPLETION;
        /* Wait for our completion and, for a ping-pong, the peer's reply. */
        uint64_t spins = 0;
        probe.since_ns = t0;
        while (!(sent && (got || !need_reply))) {
            int k = poll_send(f, v, qp, &probe, wc, 4);
            if (k < 0)
                goto out;
            sent |= k > 0;
            if (sent && need_reply && !got && (spins & 0x3ff) == 0 &&
                probe_tick(f, v, qp, &probe, flow_now_ns()) < 0)
                goto out;
            if (need_reply && !got) {
                if (poll_mem && R) {
                    got = *(volatile char *)&R[h - 1] == (char)seq;
                } else {
                    k = poll_cq(f, v, r->rcq[qp], qp, wc, 1);
                    if (k < 0)
                        goto out;
                    got = k > 0;
                }
            }
            if ((++spins & 0xfffff) == 0 && flow_state(f) == FLOW_ST_STOP)
                goto out;
        }
        uint64_t dt = flow_now_ns() - t0;
        bool half_rtt = need_reply; /* ping-pong: half the round trip, as perftest reports */
        flow_record(w, half_rtt ? dt / 2 : dt);
        bool read = v->cfg.verb == VB_READ;
        flow_progress(w, read ? 0 : size, need_reply || read ? size : 0, 1);
    }
out:
    return;
}

/* Bandwidth: keep up to depth requests outstanding, signal every cq_mod. Post-to-completion
 * latency of each signalled request is recorded (per operation). */
static void run_stream_tx(struct flow_worker *w)
{
    struct flow_rt *f = w->flow;
    struct vb_flow *v = f->xdata;
    struct verbs_res *r = &v->res;
    const int qp = w->idx % r->nqp;
    const size_t h = half(r);
    uint64_t raddr = v->peer.addr + (uint64_t)qp * v->peer.slot + v->peer.slot / 2;
    uint64_t rsend = v->peer.addr + (uint64_t)qp * v->peer.slot;
    int depth = r->depth, cq_mod = depth >= 32 ? 16 : depth >= 4 ? depth / 4 : 1;
    uint64_t *posted_at = xalloc_zero((size_t)depth + 1, sizeof(uint64_t));
    uint64_t posted = 0, done = 0;
    struct ibv_wc wc[16];
    enum ibv_wr_opcode op = v->cfg.verb == VB_READ   ? IBV_WR_RDMA_READ
                            : v->cfg.verb == VB_SEND ? IBV_WR_SEND
                                                     : IBV_WR_RDMA_WRITE;
    while (flow_wait_running(w)) {
        uint64_t size = flow_next_size(w);
        while (posted - done < (uint64_t)depth) {
            if (!flow_pace(w, size))
                goto out;
            bool sig = (posted + 1) % (uint64_t)cq_mod == 0;
            int rc = post_op(
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
    struct vb_flow *v = f->xdata;
    struct verbs_res *r = &v->res;
    const int qp = w->idx % r->nqp;
    const size_t h = half(r);
    struct ibv_wc wc[16];
    for (int i = 0; i < r->depth; i++)
        if (post_recv(r, qp, (size_t)qp * r->slot + h, h)) {
            flow_fail(f, "queue pair %d: posting receives failed: %s", qp, strerror(errno));
            return;
        }
    const bool probes = f->spec->dir == MIX_DIR_RX;
    struct vb_probe probe = {.since_ns = flow_now_ns()};
    struct ibv_wc swc[2];
    while (flow_wait_running(w)) {
        int k = poll_cq(f, v, r->rcq[qp], qp, wc, 16);
        if (k < 0)
            return;
        uint64_t bytes = 0;
        for (int i = 0; i < k; i++) {
            bytes += wc[i].byte_len;
            post_recv(r, qp, (size_t)qp * r->slot + h, h);
        }
        if (k) {
            flow_progress(w, 0, bytes, (uint64_t)k);
            probe.since_ns = flow_now_ns();
        } else {
            if (probes && (poll_send(f, v, qp, &probe, swc, 2) < 0 ||
                           probe_tick(f, v, qp, &probe, flow_now_ns()) < 0))
                return;
            sched_yield();
        }
    }
}

static void *worker_main(void *arg)
{
    struct flow_worker *w = arg;
    struct flow_rt *f = w->flow;
    struct vb_flow *v = f->xdata;
    flow_worker_begin(w);
    if (f->spec->op == MIX_OP_PINGPONG)
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
    struct vb_flow *v = f->xdata;
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
static int vb_prove(struct flow_rt *f, struct vb_flow *v, struct ft_err *err)
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

static int vb_setup(struct flow_rt *f, struct ft_err *err)
{
    const struct mix_flow *s = f->spec;
    struct vb_flow *v = xalloc_zero(1, sizeof(*v));
    f->xdata = v;
    int rc = parse_cfg(s, &v->cfg, err);
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
    rc = verbs_res_alloc(&v->res, &v->cfg.want, s->concurrency, v->cfg.msg, v->cfg.depth, err);
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
        verbs_dcb_query(v->res.netdev, &v->dcb, &derr);
    }
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "verbs.open");
    cJSON_AddStringToObject(req, "op", mix_op_str(s->op));
    cJSON_AddStringToObject(req, "direction", mix_dir_str(s->dir));
    cJSON_AddStringToObject(req, "verb", verb_names[v->cfg.verb]);
    cJSON_AddStringToObject(req, "latency", lat_names[v->cfg.lat]);
    cJSON_AddNumberToObject(req, "size", (double)v->cfg.msg);
    cJSON_AddNumberToObject(req, "depth", v->cfg.depth);
    cJSON_AddNumberToObject(req, "timeout", v->cfg.timeout);
    cJSON_AddNumberToObject(req, "retry_cnt", v->cfg.retry_cnt);
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

static int vb_start(struct flow_rt *f, struct ft_err *err)
{
    return flow_start_workers(f, worker_main, err);
}

static void vb_stop(struct flow_rt *f)
{
    flow_join_workers(f);
}

static void vb_teardown(struct flow_rt *f)
{
    struct vb_flow *v = f->xdata;
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
    free(v);
    f->xdata = NULL;
}

static void vb_conditions_hook(const struct flow_rt *f, cJSON *out)
{
    struct vb_flow *v = f->xdata;
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
    cJSON_AddStringToObject(out, "verb", verb_names[v->cfg.verb]);
    cJSON_AddStringToObject(out, "latency_method",
                            f->spec->op == MIX_OP_STREAM ? "post to completion of signalled "
                                                           "requests"
                            : v->cfg.verb == VB_READ     ? "READ round trip (post to completion)"
                            : v->cfg.lat == VB_LAT_POLL  ? "ping-pong polling the last byte "
                                                           "(ib_write_lat method), half round "
                                                           "trip"
                            : v->cfg.lat == VB_LAT_IMM   ? "ping-pong of WRITE with immediate, "
                                                           "half round trip"
                                                         : "post to completion of one WRITE");
    cJSON_AddStringToObject(out, "connection",
                            v->cm ? "librdmacm (rdma_cm address, route and CM handshake; rkey "
                                    "and address over the fabtop control channel)"
                                  : "fabtop control channel (QP number, PSN, GID, LID, rkey, "
                                    "address)");
    if (v->res.link_layer == IBV_LINK_LAYER_ETHERNET)
        cJSON_AddItemToObject(out, "dcb", verbs_dcb_json(&v->dcb, v->cfg.want.dscp));
}

/* ================= agent side ================= */

/* The tag of this side's per-session state (agent_session_state). */
static const char state_tag;

struct vb_srv {
    struct vb_cfg cfg;
    enum mix_op op;
    enum mix_dir dir;
    struct verbs_res res;
    struct verbs_res_peer peer;
    struct verbs_cm *cm;
    _Atomic uint64_t size[VERBS_RES_MAX_QPS]; /* current ping-pong reply size per QP */
    pthread_t th[VERBS_RES_MAX_QPS];
    bool started[VERBS_RES_MAX_QPS];
    _Atomic bool stop;
    double rate_gbps;
    struct agent_session *session;
    struct rrcheck_check rr; /* no worker before the client echoed the nonces */
    bool dead;               /* its QPs were destroyed */
    char dead_why[200];
    struct vb_srv *next;
};

struct vb_srv_state {
    pthread_mutex_t lock;
    struct vb_srv *list;
};

static bool srv_poll_ok(struct vb_srv *s, struct ibv_cq *cq, int *n)
{
    struct ibv_wc wc[16];
    int k = ibv_poll_cq(cq, 16, wc);
    if (k < 0)
        return false;
    for (int i = 0; i < k; i++)
        if (wc[i].status != IBV_WC_SUCCESS) {
            agent_session_log(s->session, "verbs: completion error %s",
                              ibv_wc_status_str(wc[i].status));
            return false;
        }
    *n = k;
    return true;
}

struct srv_arg {
    struct vb_srv *s;
    int qp;
};

/* Echo ping-pongs: WRITE (poll the last byte), SEND (receive completions) or WRITE with
 * immediate (receive completions). Idle for a while: back off to short sleeps. */
static void srv_pong(struct vb_srv *s, int qp)
{
    struct verbs_res *r = &s->res;
    const size_t h = half(r);
    char *L = r->buf ? r->buf + (size_t)qp * r->slot : NULL, *R = L ? L + h : NULL;
    uint64_t raddr = s->peer.addr + (uint64_t)qp * s->peer.slot + s->peer.slot / 2;
    bool imm = s->cfg.lat == VB_LAT_IMM, send = s->cfg.verb == VB_SEND;
    char last = 0;
    uint64_t idle = 0;
    while (!atomic_load(&s->stop)) {
        uint64_t size = 0;
        uint32_t seq = 0;
        int n = 0;
        if (send || imm) {
            struct ibv_wc wc;
            int k = ibv_poll_cq(r->rcq[qp], 1, &wc);
            if (k < 0 || (k == 1 && wc.status != IBV_WC_SUCCESS))
                return;
            if (k == 1) {
                size = send ? wc.byte_len : atomic_load(&s->size[qp]);
                seq = imm ? ntohl(wc.imm_data) : 0;
                post_recv(r, qp, (size_t)qp * r->slot + h, h);
            }
        } else if (R && *(volatile char *)&R[h - 1] != last) {
            last = R[h - 1];
            size = atomic_load(&s->size[qp]);
            L[h - 1] = last;
        }
        if (!size) {
            if (++idle > 2000000)
                usleep(50); /* long idle: stop burning a core */
            continue;
        }
        idle = 0;
        int rc = send ? post_op(r, qp, IBV_WR_SEND, (size_t)qp * r->slot + h - size, 0, 0, size,
                                true, 0, 0)
                      : post_op(r, qp, imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
                                (size_t)qp * r->slot + h - size, raddr + h - size, s->peer.rkey,
                                size, true, 0, seq);
        if (rc)
            return;
        do {
            if (!srv_poll_ok(s, r->scq[qp], &n))
                return;
        } while (!n && !atomic_load(&s->stop));
    }
}

/* Keep receives posted for a SEND stream coming from the client. */
static void srv_sink(struct vb_srv *s, int qp)
{
    struct verbs_res *r = &s->res;
    const size_t h = half(r);
    while (!atomic_load(&s->stop)) {
        int n = 0;
        if (!srv_poll_ok(s, r->rcq[qp], &n))
            return;
        for (int i = 0; i < n; i++)
            post_recv(r, qp, (size_t)qp * r->slot + h, h);
        if (!n)
            usleep(20);
    }
}

/* Send towards the client (rx and bidir streams): SEND, or WRITE with immediate so the
 * client's receive completions count the data. Paced to the agent's rate cap. */
static void srv_source(struct vb_srv *s, int qp)
{
    /* Pace each request to the cap every session of this client's key shares. */
    struct verbs_res *r = &s->res;
    uint64_t raddr = s->peer.addr + (uint64_t)qp * s->peer.slot + s->peer.slot / 2;
    size_t size = s->cfg.msg;
    int depth = r->depth, cq_mod = depth >= 4 ? depth / 4 : 1;
    uint64_t posted = 0, done = 0, t0 = flow_now_ns();
    double bps = s->rate_gbps > 0 ? s->rate_gbps * 1e9 / 8 / s->res.nqp : 0;
    enum ibv_wr_opcode op = s->cfg.verb == VB_SEND ? IBV_WR_SEND : IBV_WR_RDMA_WRITE_WITH_IMM;
    while (!atomic_load(&s->stop)) {
        while (posted - done < (uint64_t)depth) {
            if (bps > 0 && (double)(posted * size) > bps * (flow_now_ns() - t0) / 1e9)
                break;
            if (!agent_session_pace(s->session, size, &s->stop))
                return;
            if (post_op(r, qp, op, (size_t)qp * r->slot, raddr, s->peer.rkey, size,
                        (posted + 1) % (uint64_t)cq_mod == 0, posted, 0))
                return;
            posted++;
        }
        struct ibv_wc wc[16];
        int k = ibv_poll_cq(r->scq[qp], 16, wc);
        if (k < 0)
            return;
        for (int i = 0; i < k; i++) {
            if (wc[i].status != IBV_WC_SUCCESS)
                return;
            done = wc[i].wr_id + 1;
        }
        if (!k)
            sched_yield();
    }
}

static void *srv_main(void *arg)
{
    struct srv_arg *a = arg;
    struct vb_srv *s = a->s;
    int qp = a->qp;
    free(a);
    if (s->op == MIX_OP_PINGPONG) {
        if (s->cfg.verb != VB_READ && s->cfg.lat != VB_LAT_COMPLETION)
            srv_pong(s, qp);
    } else if (s->dir == MIX_DIR_RX || s->dir == MIX_DIR_BIDIR) {
        srv_source(s, qp);
    } else if (s->cfg.verb == VB_SEND) {
        srv_sink(s, qp);
    }
    return NULL;
}

/* Stop the workers and destroy the flow's QPs (and the rest of its resources). */
static void srv_close(struct vb_srv *s)
{
    atomic_store(&s->stop, true);
    for (int i = 0; i < VERBS_RES_MAX_QPS; i++)
        if (s->started[i])
            pthread_join(s->th[i], NULL);
    memset(s->started, 0, sizeof(s->started));
    verbs_cm_close(s->cm);
    s->cm = NULL;
    verbs_res_close(&s->res);
}

static void srv_free(struct vb_srv *s)
{
    srv_close(s);
    free(s);
}

/* The check failed: no QP of this flow stays. */
static void srv_refuse(struct vb_srv *s, const char *why)
{
    int n = s->res.nqp;
    srv_close(s);
    s->dead = true;
    snprintf(s->dead_why, sizeof(s->dead_why), "%s; the agent destroyed the flow's %d queue pair%s",
             why, n, n == 1 ? "" : "s");
    agent_session_log(s->session, "verbs: %s", s->dead_why);
}

static int srv_start(struct vb_srv *s)
{
    for (int i = 0; i < s->res.nqp; i++) {
        struct srv_arg *a = xalloc(sizeof(*a));
        a->s = s;
        a->qp = i;
        if (pthread_create(&s->th[i], NULL, srv_main, a) == 0)
            s->started[i] = true;
        else
            free(a);
    }
    return 0;
}

/* Session timer: destroy the QPs of flows whose nonces were not echoed in time; wake again
 * for the next one. */
static void srv_rr_timer(struct agent_session *sess, void *arg)
{
    struct vb_srv_state *st = arg;
    int64_t now = rrcheck_now_ms(), next = -1;
    pthread_mutex_lock(&st->lock);
    for (struct vb_srv *s = st->list; s; s = s->next) {
        int64_t left = rrcheck_left_ms(&s->rr, now);
        if (left == 0) {
            char why[120];
            snprintf(why, sizeof(why), "no echo of the nonces within %d ms", RRCHECK_ECHO_MS);
            s->rr.state = RRCHECK_FAILED;
            srv_refuse(s, why);
        } else if (left > 0 && (next < 0 || left < next)) {
            next = left;
        }
    }
    pthread_mutex_unlock(&st->lock);
    agent_session_set_timer(sess, (int)next, next >= 0 ? srv_rr_timer : NULL, st);
}

/* The session's newest verbs flow (one flow per session is what the client opens). */
static struct vb_srv *srv_newest(struct agent_session *sess, struct vb_srv_state **stp)
{
    struct vb_srv_state *st = agent_session_state(sess, &state_tag);
    *stp = st;
    return st ? st->list : NULL;
}

static int handle_nonce(struct agent_session *sess, const cJSON *req, cJSON *resp,
                        struct ft_err *err)
{
    (void)req;
    struct vb_srv_state *st;
    struct vb_srv *s = srv_newest(sess, &st);
    if (!s || s->dead || s->rr.state != RRCHECK_READY)
        return ft_err_set(err, -EPROTO,
                          "verbs.nonce: no verbs flow of this session waits for its "
                          "check (verbs.open first, once per flow)");
    struct ft_err e = {0};
    int rc = s->cm ? verbs_cm_wait(s->cm, RRCHECK_ECHO_MS, &e) : 0;
    if (rc == 0) {
        rrcheck_sent(&s->rr, rrcheck_now_ms());
        rc = verbs_res_nonce_write(&s->res, &s->peer,
                                   (const unsigned char(*)[RRCHECK_NONCE_BYTES])s->rr.nonce,
                                   RRCHECK_ECHO_MS, &e);
    }
    if (rc < 0) {
        s->rr.state = RRCHECK_FAILED;
        pthread_mutex_lock(&st->lock);
        srv_refuse(s, e.msg);
        pthread_mutex_unlock(&st->lock);
        return ft_err_set(err, rc,
                          "verbs.nonce: %s: it sends test data only where the client shows it "
                          "receives",
                          s->dead_why);
    }
    agent_session_set_timer(sess, (int)rrcheck_left_ms(&s->rr, rrcheck_now_ms()), srv_rr_timer, st);
    cJSON_AddNumberToObject(resp, "qps", s->res.nqp);
    cJSON_AddNumberToObject(resp, "echo_within_ms", RRCHECK_ECHO_MS);
    return 0;
}

static int handle_echo(struct agent_session *sess, const cJSON *req, cJSON *resp,
                       struct ft_err *err)
{
    (void)resp;
    struct vb_srv_state *st;
    struct vb_srv *s = srv_newest(sess, &st);
    if (!s)
        return ft_err_set(err, -EPROTO, "verbs.echo: this session has no verbs flow");
    if (s->dead)
        return ft_err_set(err, -EPROTO, "verbs.echo: %s", s->dead_why);
    int64_t now = rrcheck_now_ms(), sent = s->rr.sent_ms;
    struct ft_err e = {0};
    int rc = rrcheck_verify(&s->rr, cJSON_GetObjectItemCaseSensitive(req, "nonces"), now,
                            "verbs.echo", &e);
    if (rc < 0) {
        if (rc != -EPROTO) {
            pthread_mutex_lock(&st->lock);
            srv_refuse(s, e.msg);
            pthread_mutex_unlock(&st->lock);
            return ft_err_set(err, rc, "%s", s->dead_why);
        }
        return ft_err_set(err, rc, "%s", e.msg);
    }
    srv_start(s);
    agent_session_log(sess, "verbs: the client echoed the nonces of %d queue pair%s in %lld ms",
                      s->res.nqp, s->res.nqp == 1 ? "" : "s", (long long)(now - sent));
    return 0;
}

static void srv_state_free(void *arg)
{
    struct vb_srv_state *st = arg;
    for (struct vb_srv *s = st->list, *n; s; s = n) {
        n = s->next;
        srv_free(s);
    }
    pthread_mutex_destroy(&st->lock);
    free(st);
}

static int handle_open(struct agent_session *sess, const cJSON *req, cJSON *resp,
                       struct ft_err *err)
{
    const struct agent_cfg *cfg = agent_session_cfg(sess);
    struct vb_srv *s = xalloc_zero(1, sizeof(*s));
    s->session = sess;
    const char *op = jsonutil_str(req, "op"), *dir = jsonutil_str(req, "direction"),
               *verb = jsonutil_str(req, "verb"), *lat = jsonutil_str(req, "latency");
    double size = 0, depth = 0, timeout = 14, retry = 7, dscp = 26, sl = 0, rate = 0;
    int v = name_idx(verb, verb_names, 3), l = name_idx(lat, lat_names, 3);
    int o = -1, d = -1;
    for (int i = 0; op && i < MIX_OP_COUNT; i++)
        if (!strcmp(op, mix_op_str((enum mix_op)i)))
            o = i;
    for (int i = 0; dir && i <= MIX_DIR_BIDIR; i++)
        if (!strcmp(dir, mix_dir_str((enum mix_dir)i)))
            d = i;
    jsonutil_num(req, "timeout", &timeout);
    jsonutil_num(req, "retry_cnt", &retry);
    jsonutil_num(req, "dscp", &dscp);
    jsonutil_num(req, "sl", &sl);
    jsonutil_num(req, "rate_gbps", &rate);
    const char *conn = jsonutil_str(req, "connect");
    bool rdmacm = conn && !strcmp(conn, "rdmacm");
    struct verbs_res_peer peer;
    if (v < 0 || l < 0 || (o != MIX_OP_PINGPONG && o != MIX_OP_STREAM) || d < 0 ||
        !jsonutil_num(req, "size", &size) || size < 1 || size > (1u << 30) ||
        !jsonutil_num(req, "depth", &depth) || depth < 1 || depth > 4096 || timeout < 0 ||
        timeout > 31 || retry < 0 || retry > 7 || dscp < 0 || dscp > 63 || sl < 0 || sl > 15 ||
        verbs_res_peer_parse(cJSON_GetObjectItemCaseSensitive(req, "peer"), &peer, err) < 0) {
        free(s);
        return ft_err_set(err, -EINVAL, "verbs.open: malformed request");
    }
    if (cfg->max_streams > 0 && peer.nqp > cfg->max_streams) {
        free(s);
        return ft_err_set(err, -EPERM, "verbs.open: %d queue pairs asked, this agent allows %d",
                          peer.nqp, cfg->max_streams);
    }
    if (agent_session_flow_add(sess, "verbs.open", err) < 0 ||
        rrcheck_init(&s->rr, peer.nqp, err) < 0) {
        free(s);
        return err->code;
    }
    s->cfg.verb = (enum vb_verb)v;
    s->cfg.lat = (enum vb_lat)l;
    s->cfg.msg = (size_t)size;
    s->cfg.timeout = (int)timeout;
    s->cfg.retry_cnt = (int)retry;
    s->cfg.want.gid_index = -1;
    s->cfg.want.dscp = (int)dscp;
    s->cfg.want.sl = (int)sl;
    s->cfg.want.numa = -1;
    s->op = (enum mix_op)o;
    s->dir = (enum mix_dir)d;
    s->peer = peer;
    s->rate_gbps = rate;
    if (cfg->max_rate_gbps > 0)
        s->rate_gbps = agent_clamp(resp, "rate_gbps", rate, cfg->max_rate_gbps);
    /* The RDMA port that carries the address the client reached us at; else any. */
    char host[64];
    struct sockaddr_storage local;
    socklen_t ll = sizeof(local);
    agent_session_local(sess, &local, &ll);
    channel_format_addr(&local, false, host, sizeof(host));
    snprintf(s->cfg.want.ip, sizeof(s->cfg.want.ip), "%s", host);
    struct ft_err e2 = {0};
    int rc = verbs_res_open(&s->res, &s->cfg.want, &e2);
    if (rc < 0) {
        s->cfg.want.ip[0] = '\0';
        rc = verbs_res_open(&s->res, &s->cfg.want, err);
    }
    if (rc == 0)
        rc = verbs_res_alloc(&s->res, &s->cfg.want, peer.nqp, s->cfg.msg, (int)depth, err);
    char cm_host[64] = "";
    int cm_port = 0;
    if (rc == 0 && rdmacm)
        rc = verbs_cm_listen(&s->res, s->cfg.timeout, s->cfg.retry_cnt, cm_host, sizeof(cm_host),
                             &cm_port, &s->cm, err);
    else if (rc == 0)
        rc = verbs_res_connect(&s->res, &s->peer, &s->cfg.want, s->cfg.timeout, s->cfg.retry_cnt,
                               err);
    if (rc < 0) {
        verbs_cm_close(s->cm);
        verbs_res_close(&s->res);
        free(s);
        return rc;
    }
    /* Receives go up before we answer: the client may send the moment it has our QP
     * numbers, and a SEND with no receive posted waits in RNR retries. */
    bool recvs =
        (s->op == MIX_OP_PINGPONG && (s->cfg.verb == VB_SEND || s->cfg.lat == VB_LAT_IMM)) ||
        (s->op == MIX_OP_STREAM && s->dir == MIX_DIR_TX && s->cfg.verb == VB_SEND);
    for (int i = 0; recvs && i < peer.nqp; i++)
        for (int k = 0; k < s->res.depth; k++)
            post_recv(&s->res, i, (size_t)i * s->res.slot + half(&s->res), half(&s->res));
    for (int i = 0; i < peer.nqp; i++)
        atomic_init(&s->size[i], s->cfg.msg);
    /* The workers start once the client has echoed the nonces (verbs.echo). */
    struct vb_srv_state *st = agent_session_state(sess, &state_tag);
    if (!st) {
        st = xalloc_zero(1, sizeof(*st));
        pthread_mutex_init(&st->lock, NULL);
        agent_session_set_state(sess, &state_tag, st, srv_state_free);
    }
    pthread_mutex_lock(&st->lock);
    s->next = st->list;
    st->list = s;
    pthread_mutex_unlock(&st->lock);
    cJSON_AddItemToObject(resp, "peer", verbs_res_peer_json(&s->res));
    cJSON_AddStringToObject(resp, "device", s->res.dev);
    if (s->cm) {
        cJSON_AddStringToObject(resp, "cm_host", cm_host);
        cJSON_AddNumberToObject(resp, "cm_port", cm_port);
    }
    char gi[96], g[64];
    verbs_res_gid_str(&s->res.gid, g, sizeof(g));
    snprintf(gi, sizeof(gi), "%d (%s)", s->res.gid_index, g);
    cJSON_AddStringToObject(resp, "gid_index_text", gi);
    agent_session_log(sess, "verbs: %s %s %s, %d QP%s on %s port %d, GID %s", op, verb, dir,
                      peer.nqp, peer.nqp > 1 ? "s" : "", s->res.dev, s->res.port, gi);
    return 0;
}

static int handle_size(struct agent_session *sess, const cJSON *req, cJSON *resp,
                       struct ft_err *err)
{
    (void)resp;
    double qp = -1, size = 0;
    struct vb_srv_state *st = agent_session_state(sess, &state_tag);
    if (!st || !jsonutil_num(req, "qp", &qp) || !jsonutil_num(req, "size", &size) || qp < 0 ||
        qp >= VERBS_RES_MAX_QPS || size < 1)
        return ft_err_set(err, -EINVAL, "verbs.size: malformed request or no verbs flow");
    pthread_mutex_lock(&st->lock);
    struct vb_srv *s = st->list; /* one flow per session: the newest */
    bool ok = s && !s->dead && qp < s->res.nqp && size <= s->cfg.msg;
    if (ok)
        atomic_store(&s->size[(int)qp], (uint64_t)size);
    pthread_mutex_unlock(&st->lock);
    return ok ? 0
              : ft_err_set(err, -EINVAL, "verbs.size: size %.0f above the flow's largest", size);
}

static const struct agent_handler open_handler = {"verbs.open", handle_open};
static const struct agent_handler nonce_handler = {"verbs.nonce", handle_nonce};
static const struct agent_handler echo_handler = {"verbs.echo", handle_echo};
static const struct agent_handler size_handler = {"verbs.size", handle_size};
static const struct agent_handler *const vb_handlers[] = {&open_handler, &nonce_handler,
                                                          &echo_handler, &size_handler, NULL};

/* The port verbs_res_open will choose for this flow: open it the same way and close it again
 * (librdmacm flows get theirs from the route at connect time: left to the caller). */
static int vb_local_port(const struct mix_flow *f, char *rdma, size_t rlen, char *netdev,
                         size_t nlen, struct ft_err *err)
{
    struct vb_cfg c;
    int rc = parse_cfg(f, &c, err);
    if (rc < 0 || c.rdmacm)
        return rc;
    struct verbs_res r;
    rc = verbs_res_open(&r, &c.want, err);
    if (rc < 0)
        return rc;
    snprintf(rdma, rlen, "%s:%d", r.dev, r.port);
    snprintf(netdev, nlen, "%s", r.netdev);
    verbs_res_close(&r);
    return 0;
}

const struct xport_ops xport_verbs = {
    .name = "verbs",
    .ops = (1u << MIX_OP_PINGPONG) | (1u << MIX_OP_STREAM),
    .needs_peer = true,
    .available = vb_available,
    .param_keys = vb_param_keys,
    .validate = vb_validate,
    .setup = vb_setup,
    .start = vb_start,
    .stop = vb_stop,
    .teardown = vb_teardown,
    .local_port = vb_local_port,
    .conditions = vb_conditions_hook,
    .handlers = vb_handlers,
};
