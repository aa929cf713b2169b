/* verbs_agent: the agent side of verbs flows ("verbs.open", "verbs.nonce", "verbs.echo",
 * "verbs.size"): the same number of QPs on the agent's RDMA port, the return-routability
 * check before any worker starts, then echoing ping-pongs, sinking or sourcing streams. */
#include "engine/xport/verbs/xport_verbs_int.h"

#include <arpa/inet.h>
#include <errno.h>
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
#include "topology/topo_dcb.h"
#include "engine/peer/rrcheck.h"
#include "engine/xport/verbs/verbs_cm.h"
#include "topology/topo_model.h"

/* ================= agent side ================= */

/* The tag of this side's per-session state (agent_session_state). */
static const char state_tag;

struct verbs_agent_srv {
    struct verbs_params cfg;
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
    struct verbs_agent_srv *next;
};

struct verbs_agent_state {
    pthread_mutex_t lock;
    struct verbs_agent_srv *list;
};

static bool srv_poll_ok(struct verbs_agent_srv *s, struct ibv_cq *cq, int *n)
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
    struct verbs_agent_srv *s;
    int qp;
};

/* A drill's qp-error of this client (fault.inject): queue pair qp to the Error state, where
 * it neither answers nor acknowledges what arrives (IBTA 10.3.1; ibv_modify_qp(3)), so the
 * client's requests run out of retries as on a black-holed path. Checked every 1024 calls
 * (*tick counts them): true when it is on and the worker should stop. */
static bool srv_holed(struct verbs_agent_srv *s, int qp, unsigned *tick)
{
    if ((++*tick & 1023) != 1 || !agent_fault_active(s->session, AGENT_FAULT_QP_ERROR, NULL))
        return false;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
    int rc = ibv_modify_qp(s->res.qp[qp], &a, IBV_QP_STATE);
    agent_session_log(s->session, "fault: queue pair %d (QPN %u) to the error state%s", qp,
                      s->res.qp[qp]->qp_num, rc ? " failed" : "");
    return true;
}

/* Echo ping-pongs: WRITE (poll the last byte), SEND (receive completions) or WRITE with
 * immediate (receive completions). Idle for a while: back off to short sleeps. */
static void srv_pong(struct verbs_agent_srv *s, int qp)
{
    struct verbs_res *r = &s->res;
    const size_t h = verbs_res_half(r);
    char *L = r->buf ? r->buf + (size_t)qp * r->slot : NULL, *R = L ? L + h : NULL;
    uint64_t raddr = s->peer.addr + (uint64_t)qp * s->peer.slot + s->peer.slot / 2;
    bool imm = s->cfg.lat == VERBS_LAT_IMM, send = s->cfg.verb == VERBS_SEND;
    char last = 0;
    uint64_t idle = 0;
    unsigned tick = 0;
    while (!atomic_load(&s->stop) && !srv_holed(s, qp, &tick)) {
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
                verbs_res_post_recv(r, qp, (size_t)qp * r->slot + h, h);
            }
        } else if (R && *(volatile char *)&R[h - 1] != last) {
            last = R[h - 1];
            size = atomic_load(&s->size[qp]);
            L[h - 1] = last;
        }
        /* Nothing, or a zero-byte SEND: the client's liveness probe (verbs_client.c
         * probe_tick), its receive posted again above and never answered. */
        if (!size) {
            if (++idle > 2000000)
                usleep(50); /* long idle: stop burning a core */
            continue;
        }
        idle = 0;
        /* A drill's peer-stall of this client (fault.inject): the reply waits, as a hung
         * worker's would; the NIC still acknowledges what arrives, a WRITE always, a SEND
         * while a receive is posted: this worker polls nothing and posts no receive while
         * it waits, so once the receives posted ahead (depth) are used up, the client's
         * SENDs (its liveness probes) meet receiver-not-ready NAKs. */
        agent_session_stall_wait(s->session, &s->stop);
        if (atomic_load(&s->stop))
            return;
        int rc =
            send ? verbs_res_post_op(r, qp, IBV_WR_SEND, (size_t)qp * r->slot + h - size, 0, 0,
                                     size, true, 0, 0)
                 : verbs_res_post_op(r, qp, imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
                                     (size_t)qp * r->slot + h - size, raddr + h - size,
                                     s->peer.rkey, size, true, 0, seq);
        if (rc)
            return;
        do {
            if (!srv_poll_ok(s, r->scq[qp], &n))
                return;
        } while (!n && !atomic_load(&s->stop));
    }
}

/* Keep receives posted for a SEND stream coming from the client. */
static void srv_sink(struct verbs_agent_srv *s, int qp)
{
    struct verbs_res *r = &s->res;
    const size_t h = verbs_res_half(r);
    unsigned tick = 0;
    while (!atomic_load(&s->stop) && !srv_holed(s, qp, &tick)) {
        int n = 0;
        if (!srv_poll_ok(s, r->rcq[qp], &n))
            return;
        for (int i = 0; i < n; i++)
            verbs_res_post_recv(r, qp, (size_t)qp * r->slot + h, h);
        if (!n)
            usleep(20);
    }
}

/* Send towards the client (rx and bidir streams): SEND, or WRITE with immediate so the
 * client's receive completions count the data. Paced to the agent's rate cap. */
static void srv_source(struct verbs_agent_srv *s, int qp)
{
    /* Pace each request to the cap every session of this client's key shares. */
    struct verbs_res *r = &s->res;
    uint64_t raddr = s->peer.addr + (uint64_t)qp * s->peer.slot + s->peer.slot / 2;
    size_t size = s->cfg.msg;
    int depth = r->depth, cq_mod = depth >= 4 ? depth / 4 : 1;
    uint64_t posted = 0, done = 0, t0 = flow_now_ns();
    double bps = s->rate_gbps > 0 ? s->rate_gbps * 1e9 / 8 / s->res.nqp : 0;
    enum ibv_wr_opcode op = s->cfg.verb == VERBS_SEND ? IBV_WR_SEND : IBV_WR_RDMA_WRITE_WITH_IMM;
    unsigned tick = 0;
    while (!atomic_load(&s->stop) && !srv_holed(s, qp, &tick)) {
        while (posted - done < (uint64_t)depth) {
            if (bps > 0 && (double)(posted * size) > bps * (flow_now_ns() - t0) / 1e9)
                break;
            if (!agent_session_pace(s->session, size, &s->stop))
                return;
            if (verbs_res_post_op(r, qp, op, (size_t)qp * r->slot, raddr, s->peer.rkey, size,
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

/* A ring all-reduce's pattern, this host's ring neighbour (the client's run_ring has the
 * other side): SEND chunk j once the client's chunk j - 1 has arrived (chunk 0 at once), so
 * both directions carry a chunk at once and this side is never more than one step ahead;
 * every receive completion (one chunk) is posted again at once. */
static void srv_ring(struct verbs_agent_srv *s, int qp)
{
    struct verbs_res *r = &s->res;
    const size_t h = verbs_res_half(r), chunk = s->cfg.msg;
    uint64_t sent = 0, rcvd = 0, done = 0, idle = 0;
    unsigned tick = 0;
    while (!atomic_load(&s->stop) && !srv_holed(s, qp, &tick)) {
        bool moved = false;
        if (sent <= rcvd && sent - done < 2) {
            if (!agent_session_pace(s->session, chunk, &s->stop))
                return;
            if (verbs_res_post_op(r, qp, IBV_WR_SEND, (size_t)qp * r->slot, 0, 0, chunk, true, sent,
                                  0))
                return;
            sent++;
            moved = true;
        }
        int n = 0;
        if (!srv_poll_ok(s, r->rcq[qp], &n))
            return;
        for (int i = 0; i < n; i++)
            verbs_res_post_recv(r, qp, (size_t)qp * r->slot + h, h);
        rcvd += (uint64_t)n;
        moved |= n > 0;
        if (!srv_poll_ok(s, r->scq[qp], &n))
            return;
        done += (uint64_t)n;
        moved |= n > 0;
        if (moved)
            idle = 0;
        else if (++idle > 2000000)
            usleep(50); /* long idle: stop burning a core */
    }
}

static void *srv_main(void *arg)
{
    struct srv_arg *a = arg;
    struct verbs_agent_srv *s = a->s;
    int qp = a->qp;
    free(a);
    /* kv: the client READs from this side's region or WRITEs into it, and its notification
     * is an RDMA WRITE into the scratch bytes: nothing to do here. */
    if (s->op == MIX_OP_KV)
        return NULL;
    if (s->op == MIX_OP_COLLECTIVE) {
        srv_ring(s, qp);
    } else if (s->op == MIX_OP_PINGPONG) {
        if (s->cfg.verb != VERBS_READ && s->cfg.lat != VERBS_LAT_COMPLETION)
            srv_pong(s, qp);
    } else if (s->dir == MIX_DIR_RX || s->dir == MIX_DIR_BIDIR) {
        srv_source(s, qp);
    } else if (s->cfg.verb == VERBS_SEND) {
        srv_sink(s, qp);
    }
    return NULL;
}

/* Stop the workers and destroy the flow's QPs (and the rest of its resources). */
static void srv_close(struct verbs_agent_srv *s)
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

static void srv_free(struct verbs_agent_srv *s)
{
    srv_close(s);
    free(s);
}

/* The check failed: no QP of this flow stays. */
static void srv_refuse(struct verbs_agent_srv *s, const char *why)
{
    int n = s->res.nqp;
    srv_close(s);
    s->dead = true;
    snprintf(s->dead_why, sizeof(s->dead_why), "%s; the agent destroyed the flow's %d queue pair%s",
             why, n, n == 1 ? "" : "s");
    agent_session_log(s->session, "verbs: %s", s->dead_why);
}

static int srv_start(struct verbs_agent_srv *s)
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
    struct verbs_agent_state *st = arg;
    int64_t now = rrcheck_now_ms(), next = -1;
    pthread_mutex_lock(&st->lock);
    for (struct verbs_agent_srv *s = st->list; s; s = s->next) {
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
static struct verbs_agent_srv *srv_newest(struct agent_session *sess,
                                          struct verbs_agent_state **stp)
{
    struct verbs_agent_state *st = agent_session_state(sess, &state_tag);
    *stp = st;
    return st ? st->list : NULL;
}

static int handle_nonce(struct agent_session *sess, const cJSON *req, cJSON *resp,
                        struct ft_err *err)
{
    (void)req;
    struct verbs_agent_state *st;
    struct verbs_agent_srv *s = srv_newest(sess, &st);
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
    struct verbs_agent_state *st;
    struct verbs_agent_srv *s = srv_newest(sess, &st);
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
    struct verbs_agent_state *st = arg;
    for (struct verbs_agent_srv *s = st->list, *n; s; s = n) {
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
    struct verbs_agent_srv *s = xalloc_zero(1, sizeof(*s));
    s->session = sess;
    const char *op = jsonutil_str(req, "op"), *dir = jsonutil_str(req, "direction"),
               *verb = jsonutil_str(req, "verb"), *lat = jsonutil_str(req, "latency");
    double size = 0, depth = 0, timeout = 14, retry = 7, dscp = 26, sl = 0, rate = 0, pmtu = 0;
    int v = verbs_params_name_idx(verb, verbs_params_verb_names, 3),
        l = verbs_params_name_idx(lat, verbs_params_lat_names, 3);
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
    jsonutil_num(req, "path_mtu", &pmtu); /* the client's params.path_mtu: both ends use it */
    const char *conn = jsonutil_str(req, "connect");
    bool rdmacm = conn && !strcmp(conn, "rdmacm");
    struct verbs_res_peer peer;
    if (v < 0 || l < 0 ||
        (o != MIX_OP_PINGPONG && o != MIX_OP_STREAM && o != MIX_OP_KV && o != MIX_OP_COLLECTIVE) ||
        (o == MIX_OP_KV && v == VERBS_SEND) || (o == MIX_OP_COLLECTIVE && v != VERBS_SEND) ||
        d < 0 || !jsonutil_num(req, "size", &size) || size < 1 || size > (1u << 30) ||
        !jsonutil_num(req, "depth", &depth) || depth < 1 || depth > 4096 || timeout < 0 ||
        timeout > 31 || retry < 0 || retry > 7 || dscp < 0 || dscp > 63 || sl < 0 || sl > 15 ||
        (pmtu != 0 &&
         (pmtu < 256 || pmtu > 4096 || !verbs_res_mtu_of_bytes((int)pmtu) || pmtu != (int)pmtu)) ||
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
    s->cfg.verb = (enum verbs_params_verb)v;
    s->cfg.lat = (enum verbs_params_lat)l;
    s->cfg.msg = (size_t)size;
    s->cfg.timeout = (int)timeout;
    s->cfg.retry_cnt = (int)retry;
    s->cfg.want.gid_index = -1;
    s->cfg.want.path_mtu = (int)pmtu;
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
        (s->op == MIX_OP_PINGPONG && (s->cfg.verb == VERBS_SEND || s->cfg.lat == VERBS_LAT_IMM)) ||
        (s->op == MIX_OP_STREAM && s->dir == MIX_DIR_TX && s->cfg.verb == VERBS_SEND) ||
        s->op == MIX_OP_COLLECTIVE;
    for (int i = 0; recvs && i < peer.nqp; i++)
        for (int k = 0; k < s->res.depth; k++)
            verbs_res_post_recv(&s->res, i, (size_t)i * s->res.slot + verbs_res_half(&s->res),
                                verbs_res_half(&s->res));
    for (int i = 0; i < peer.nqp; i++)
        atomic_init(&s->size[i], s->cfg.msg);
    /* The workers start once the client has echoed the nonces (verbs.echo). */
    struct verbs_agent_state *st = agent_session_state(sess, &state_tag);
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
    struct verbs_agent_state *st = agent_session_state(sess, &state_tag);
    if (!st || !jsonutil_num(req, "qp", &qp) || !jsonutil_num(req, "size", &size) || qp < 0 ||
        qp >= VERBS_RES_MAX_QPS || size < 1)
        return ft_err_set(err, -EINVAL, "verbs.size: malformed request or no verbs flow");
    pthread_mutex_lock(&st->lock);
    struct verbs_agent_srv *s = st->list; /* one flow per session: the newest */
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
const struct agent_handler *const verbs_agent_handlers[] = {&open_handler, &nonce_handler,
                                                            &echo_handler, &size_handler, NULL};
