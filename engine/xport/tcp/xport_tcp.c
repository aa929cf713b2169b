/* xport_tcp: the TCP transport. Client side: data connections to the peer agent, one
 * worker thread per connection (two for a bidirectional stream), ping-pong (half round
 * trip, TCP_NODELAY), request/response (round trip), streams, KV descriptor lists, and a ring
 * all-reduce's message pattern (op collective: 2 (N - 1) full-duplex steps of ceil(S / N)
 * bytes, engine/flow/ring.h); TCP_INFO sampled per connection. Agent side: the "tcp.open" request
 * makes a one-shot listener that accepts only the authenticated client's address presenting the
 * session's random token. */
/* accept4 is a GNU extension. */
#define _GNU_SOURCE
#include "engine/xport/xport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/tcp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <sodium.h>

#include "common/jsonutil.h"
#include "common/pagebuf.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/flow/kv.h"
#include "engine/flow/kv_worker.h"
#include "engine/flow/ring.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/xport/tcp/tcp_path.h"

#define TCP_MAGIC   0x46545450u /* "FTTP": request header */
#define TCP_HELLO   0x4654484cu /* "FTHL": data connection greeting */
#define TCP_HDR     16          /* ping-pong / request-response header, part of the message */
#define TCP_TOKEN   32
#define TCP_MAX_MSG (1ull << 30) /* largest message an agent accepts */
#define IO_SLICE_MS 50           /* poll slice: how quickly a worker notices a stop */
#define BUF_BYTES   (4u << 20)
#define CAPPED_MIN  (64u << 10) /* smallest read or send under the agent's rate cap */
#define KV_MAGIC    0x46544b56u /* "FTKV": a KV request's header */
#define KV_NOTIFY   0x46544b4eu /* "FTKN": its notification */
#define KV_IOV      1024        /* iovecs per vectored call (IOV_MAX) */
#define KV_REGION   (16u << 20) /* smallest "registered" region each side keeps per connection */

/* A KV request's header, then ndesc (offset, length) pairs, all 64-bit, network byte order;
 * mode 0: the client pushes (sglang, trtllm: WRITEs), 1: the client pulls (vllm: READs). */
struct kv_wire_hdr {
    uint32_t magic, mode, ndesc, pad;
    uint64_t total;
};

static uint64_t hton64(uint64_t v)
{
    return ((uint64_t)htonl((uint32_t)v) << 32) | htonl((uint32_t)(v >> 32));
}

/* Request header, network byte order. */
struct tcp_hdr {
    uint32_t magic, size, resp, flags;
};

/* ---- small helpers (shared by both sides) ---- */

/* A worker's buffer: from the kernel, so a long-running agent gives it back (pagebuf.h). */
static char *buf_alloc(void)
{
    char *b = pagebuf_alloc(BUF_BYTES);
    if (!b)
        abort(); /* as xalloc_zero: no recovering from out of memory here */
    return b;
}

/* Wait for fd to be ready; 1 ready, 0 timeout, -errno error. */
static int wait_fd(int fd, short ev, int ms)
{
    struct pollfd p = {.fd = fd, .events = ev};
    int rc = poll(&p, 1, ms);
    if (rc < 0)
        return errno == EINTR ? 0 : -errno;
    if (rc == 0)
        return 0;
    if (p.revents & (POLLERR | POLLNVAL)) {
        int e = 0;
        socklen_t l = sizeof(e);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
        return e ? -e : -EPIPE;
    }
    return 1;
}

/* Data sockets are blocking with short send/receive timeouts: one system call per
 * transfer on the fast path (no poll), and a worker still notices a stop request within
 * IO_SLICE_MS. */
static int set_io_timeouts(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
        return -errno;
    struct timeval tv = {0, IO_SLICE_MS * 1000};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
        return -errno;
    return 0;
}

/* Move exactly n bytes; keep() is asked each time a slice passes without progress.
 * Returns 0, -errno, -ECANCELED when keep() said stop, -ENODATA on EOF. */
typedef bool (*keep_fn)(void *arg);

static int xfer_all(int fd, void *buf, size_t n, bool out, keep_fn keep, void *arg, uint64_t *moved)
{
    char *p = buf;
    while (n) {
        ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            if (moved)
                *moved += (uint64_t)k;
            continue;
        }
        if (k == 0 && !out)
            return -ENODATA;
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -errno;
        if (!keep(arg))
            return -ECANCELED;
    }
    return 0;
}

/* keep() for handshakes: until the deadline (CLOCK_MONOTONIC ns) passes. */
static bool before_deadline(void *arg)
{
    return flow_now_ns() < *(const uint64_t *)arg;
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -errno : (fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0);
}

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    /* Compare addresses, treating IPv4-mapped IPv6 as the IPv4 address. */
    uint8_t x[16], y[16];
    int lx = 0, ly = 0;
    const struct sockaddr_storage *s[2] = {a, b};
    uint8_t *d[2] = {x, y};
    int *l[2] = {&lx, &ly};
    for (int i = 0; i < 2; i++) {
        if (s[i]->ss_family == AF_INET) {
            memcpy(d[i], &((const struct sockaddr_in *)s[i])->sin_addr, 4);
            *l[i] = 4;
        } else if (s[i]->ss_family == AF_INET6) {
            const struct in6_addr *a6 = &((const struct sockaddr_in6 *)s[i])->sin6_addr;
            if (IN6_IS_ADDR_V4MAPPED(a6)) {
                memcpy(d[i], &a6->s6_addr[12], 4);
                *l[i] = 4;
            } else {
                memcpy(d[i], a6, 16);
                *l[i] = 16;
            }
        }
    }
    return lx && lx == ly && !memcmp(x, y, (size_t)lx);
}

/* ================= client side ================= */

struct tcp_flow {
    int port;
    uint8_t token[TCP_TOKEN];
    int nconns;
    int *fds;
    char host[128];
    int family;
    struct kv_plan *kv;      /* a kv flow's descriptor lists, NULL for others */
    uint64_t **tables;       /* per job: its (offset, length) pairs, network byte order */
    struct ring_params ring; /* op collective: the emulated ring (ranks 0: not one) */
    struct ring_acc *racc;   /* per worker x point: its measured steps */
    struct ring_gate *gate;  /* a ring across hosts: the predecessor's chunks, NULL: none */
    int gate_sender;         /* an all-to-all's flow: its sender index at the gate */
};

static bool worker_keep(void *arg)
{
    struct flow_worker *w = arg;
    return flow_state(w->flow) < FLOW_ST_STOP;
}

static void describe_error(struct flow_rt *f, int rc, const char *what)
{
    if (rc == -ECANCELED)
        return;
    /* The peer's end gone shows as EOF on a read, EPIPE on a write once its FIN came in, or
     * ECONNRESET when its RST did (tcp(7)): one cause, named once. */
    if (rc == -ENODATA)
        flow_fail(f, "%s: the peer closed the connection (agent stopped or killed?)", what);
    else if (rc == -EPIPE || rc == -ECONNRESET)
        flow_fail(f, "%s: the peer closed the connection (%s; agent stopped or killed?)", what,
                  rc == -EPIPE ? "broken pipe on a send" : "reset");
    else if (rc == -ETIMEDOUT)
        flow_fail(f, "%s: TCP user timeout: data unacknowledged for %.1f s (path down?)", what,
                  f->fail_bound_s);
    else
        flow_fail(f, "%s: %s", what, strerror(-rc));
}

static int tcp_available(char *why, size_t len)
{
    (void)why;
    (void)len;
    return 0;
}

static int tcp_validate(const struct mix_flow *f, struct ft_err *err)
{
    if (f->op == MIX_OP_PINGPONG || f->op == MIX_OP_RR) {
        for (int i = 0; i < f->size.n; i++)
            if (f->size.bytes[i] < TCP_HDR || f->size.bytes[i] > TCP_MAX_MSG)
                return ft_err_set(err, -EINVAL,
                                  "flow %s: TCP %s messages carry a %d-byte header: sizes must "
                                  "be %d B to 1 GiB",
                                  f->name, mix_op_str(f->op), TCP_HDR, TCP_HDR);
        if (f->size.response_bytes &&
            (f->size.response_bytes < TCP_HDR || f->size.response_bytes > TCP_MAX_MSG))
            return ft_err_set(err, -EINVAL, "flow %s: response_size must be %d B to 1 GiB", f->name,
                              TCP_HDR);
    }
    if (f->local_gpu >= 0)
        return ft_err_set(err, -EINVAL, "flow %s: TCP cannot use a GPU endpoint", f->name);
    if (f->op == MIX_OP_COLLECTIVE) {
        struct ring_params rp;
        int rc = ring_params_from(f, &rp, err);
        if (rc)
            return rc;
        if (ring_chunk(f->size.bytes[0], rp.ranks) > TCP_MAX_MSG)
            return ft_err_set(err, -EINVAL, "flow %s: a ring step of over 1 GiB (lower size)",
                              f->name);
    }
    if (f->op == MIX_OP_KV) {
        struct kv_params p;
        int rc = kv_params_from_json(f->params, f->name, &p, err);
        if (rc)
            return rc;
        if (f->size.kind != MIX_SIZE_FIXED)
            return ft_err_set(err, -EINVAL,
                              "flow %s: size of a kv flow is one page of one layer's cache (one "
                              "number of bytes), not a sweep or distribution",
                              f->name);
        if (p.depth > KV_IOV)
            return ft_err_set(err, -EINVAL,
                              "flow %s: params.depth over TCP is at most %d (iovecs of one "
                              "vectored call, IOV_MAX)",
                              f->name, KV_IOV);
        uint64_t nkv = p.layout == KV_LAYOUT_FLASH ? 2 : 1;
        uint64_t most = p.engine == KV_ENGINE_TRTLLM
                            ? f->size.bytes[0] * nkv *
                                  (uint64_t)(p.layers_per_block ? p.layers_per_block : p.layers)
                        : p.engine == KV_ENGINE_SGLANG ? f->size.bytes[0] * (uint64_t)p.run_pages
                                                       : f->size.bytes[0];
        if (most > TCP_MAX_MSG)
            return ft_err_set(err, -EINVAL,
                              "flow %s: a descriptor of up to %llu B is over TCP's 1 GiB (lower "
                              "size, run_pages or layers_per_block)",
                              f->name, (unsigned long long)most);
        if (p.arrival == KV_ARRIVAL_TRACE) {
            struct kv_trace t;
            rc = kv_trace_load(p.trace, &t, err);
            if (rc)
                return rc;
            kv_trace_free(&t);
        }
    }
    return 0;
}

static void kv_tcp_free(struct tcp_flow *t)
{
    for (int i = 0; t->kv && t->tables && i < t->kv->njobs; i++)
        free(t->tables[i]);
    free(t->tables);
    kv_plan_free(t->kv);
    t->tables = NULL;
    t->kv = NULL;
}

/* The plan, and each request's table as the wire carries it. */
static int kv_prepare(struct flow_rt *f, struct tcp_flow *t, struct ft_err *err)
{
    int rc = kv_plan_build(f->spec, f->nworkers_alloc, f->npoints, KV_REGION, &t->kv, err);
    if (rc)
        return rc;
    struct kv_plan *k = t->kv;
    t->tables = xalloc_zero((size_t)k->njobs, sizeof(*t->tables));
    for (int j = 0; j < k->njobs; j++) {
        const struct kv_job *jb = &k->jobs[j];
        t->tables[j] = xalloc_zero(2 * (size_t)jb->ndesc + 1, sizeof(uint64_t));
        for (long i = 0; i < jb->ndesc; i++) {
            t->tables[j][2 * i] = hton64(jb->off[i]);
            t->tables[j][2 * i + 1] = hton64(jb->len[i]);
        }
    }
    return 0;
}

static int connect_one(struct flow_rt *f, struct tcp_flow *t, int idx, struct ft_err *err)
{
    const struct mix_flow *s = f->spec;
    char port[16];
    snprintf(port, sizeof(port), "%d", t->port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
    struct addrinfo *ai;
    int rc = getaddrinfo(t->host, port, &hints, &ai);
    if (rc)
        return ft_err_set(err, -EHOSTUNREACH, "%s: %s", t->host, gai_strerror(rc));
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        freeaddrinfo(ai);
        return ft_err_set(err, -errno, "socket: %s", strerror(errno));
    }
    int one = 1;
    if (s->op != MIX_OP_STREAM)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* TCP alone reports nothing for minutes after a link dies (tcp_retries2): abort once data
     * sits unacknowledged for the flow's bound. */
    unsigned uto = (unsigned)(f->fail_bound_s * 1000);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof(uto));
    const char *cc = jsonutil_str(s->params, "congestion_control");
    if (cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) < 0) {
        int e = -errno;
        close(fd);
        freeaddrinfo(ai);
        return ft_err_set(err, e,
                          "flow %s: congestion control '%s': %s (see "
                          "/proc/sys/net/ipv4/tcp_available_congestion_control)",
                          s->name, cc, strerror(-e));
    }
    if (s->local_netdev[0] && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, s->local_netdev,
                                         (socklen_t)strlen(s->local_netdev)) < 0) {
        int e = -errno;
        close(fd);
        freeaddrinfo(ai);
        return ft_err_set(err, e, "flow %s: bind to netdev %s: %s%s", s->name, s->local_netdev,
                          strerror(-e),
                          e == -EPERM ? " (needs CAP_NET_RAW; or give local.ip)" : "");
    }
    if (s->local_ip[0]) {
        struct addrinfo *la;
        struct addrinfo lh = {.ai_family = ai->ai_family, .ai_flags = AI_NUMERICHOST};
        if (getaddrinfo(s->local_ip, NULL, &lh, &la) || bind(fd, la->ai_addr, la->ai_addrlen)) {
            close(fd);
            freeaddrinfo(ai);
            return ft_err_set(err, -EADDRNOTAVAIL,
                              "flow %s: cannot bind to local ip %s (not on this host?)", s->name,
                              s->local_ip);
        }
        freeaddrinfo(la);
    }
    set_nonblock(fd);
    rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    if (rc < 0 && errno == EINPROGRESS) {
        rc = wait_fd(fd, POLLOUT, (int)(f->fail_bound_s * 1000));
        if (rc == 0)
            rc = -ETIMEDOUT;
        if (rc > 0) {
            int e = 0;
            socklen_t l = sizeof(e);
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
            rc = e ? -e : 0;
        }
    } else if (rc < 0) {
        rc = -errno;
    }
    /* Greeting: magic, connection index, the session's token; the agent answers one byte. */
    uint32_t hello[2] = {htonl(TCP_HELLO), htonl((uint32_t)idx)};
    uint8_t ack = 0;
    uint64_t until = flow_now_ns() + 3000000000ull;
    if (rc == 0)
        rc = set_io_timeouts(fd);
    if (rc == 0)
        rc = xfer_all(fd, hello, sizeof(hello), true, before_deadline, &until, NULL);
    if (rc == 0)
        rc = xfer_all(fd, t->token, TCP_TOKEN, true, before_deadline, &until, NULL);
    if (rc == 0)
        rc = xfer_all(fd, &ack, 1, false, before_deadline, &until, NULL);
    if (rc == -ECANCELED)
        rc = -ETIMEDOUT;
    if (rc == 0 && ack != 1)
        rc = -EACCES;
    if (rc < 0) {
        close(fd);
        return ft_err_set(err, rc, "flow %s: data connection %d to %s port %d: %s", s->name, idx,
                          t->host, t->port, strerror(-rc));
    }
    t->fds[idx] = fd;
    return 0;
}

static int tcp_setup(struct flow_rt *f, struct ft_err *err)
{
    const struct mix_flow *s = f->spec;
    struct tcp_flow *t = xalloc_zero(1, sizeof(*t));
    f->xdata = t;
    t->nconns = s->concurrency;
    t->fds = xalloc((size_t)t->nconns * sizeof(int));
    for (int i = 0; i < t->nconns; i++)
        t->fds[i] = -1;
    if (s->op == MIX_OP_KV) {
        int rc = kv_prepare(f, t, err);
        if (rc)
            return rc;
    }
    if (s->op == MIX_OP_COLLECTIVE) {
        int rc = ring_params_from(s, &t->ring, err);
        if (rc)
            return rc;
        t->racc = xalloc_zero((size_t)f->nworkers_alloc * (size_t)f->npoints, sizeof(*t->racc));
        if (t->ring.gate[0] && !(t->gate = ring_gate_get(t->ring.gate)))
            return ft_err_set(err, -ENOSPC,
                              "flow %s: %d rings across hosts are open in this process already",
                              s->name, RING_GATE_MAX);
        /* An all-to-all's flows start each all-to-all together: each one a sender. */
        if (t->gate && t->ring.alltoall &&
            (t->gate_sender = ring_gate_sender(t->gate, t->ring.ranks - 1)) < 0)
            return ft_err_set(err, -EINVAL,
                              "flow %s: gate %s has its %d senders already (one flow per peer "
                              "of the all-to-all)",
                              s->name, t->ring.gate, t->ring.ranks - 1);
        /* busbw as nccl-tests computes it: S over the time, x 2 (N - 1) / N for all_reduce,
         * x (N - 1) / N for alltoall. */
        f->bw_factor = t->ring.alltoall ? ring_alltoall_busbw_factor(t->ring.ranks)
                                        : ring_busbw_factor(t->ring.ranks);
        for (int p = 0; p < f->npoints; p++)
            f->points[p].bw_bytes = f->points[p].size;
    }
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "tcp.open");
    cJSON_AddStringToObject(req, "op", mix_op_str(s->op));
    cJSON_AddStringToObject(req, "direction", mix_dir_str(s->dir));
    cJSON_AddNumberToObject(req, "conns", t->nconns);
    uint64_t chunk = s->size.bytes[0];
    for (int i = 0; i < s->size.n; i++)
        if (s->size.bytes[i] > chunk)
            chunk = s->size.bytes[i];
    cJSON_AddNumberToObject(req, "size", (double)(chunk > BUF_BYTES ? BUF_BYTES : chunk));
    cJSON_AddNumberToObject(req, "rate_gbps", s->rate_gbps);
    cJSON_AddNumberToObject(req, "user_timeout_ms", f->fail_bound_s * 1000);
    if (t->kv)
        cJSON_AddNumberToObject(req, "kv_region", (double)t->kv->region);
    if (t->ring.ranks)
        cJSON_AddNumberToObject(req, "ring_chunk", (double)ring_chunk(chunk, t->ring.ranks));
    if (t->gate) {
        /* At the peer: this rank is the one feeder of its ring gate (this rank its
         * predecessor), or one of an all-to-all's N - 1, labelled by its rank. */
        char from[RING_GATE_FROM_MAX];
        snprintf(from, sizeof(from), "%d", t->ring.rank);
        cJSON_AddStringToObject(req, "ring_gate", t->ring.gate);
        cJSON_AddNumberToObject(req, "gate_feeders", t->ring.alltoall ? t->ring.ranks - 1 : 1);
        cJSON_AddStringToObject(req, "gate_from", from);
    }
    cJSON *resp = NULL;
    int rc = channel_request(f->ctl, req, &resp, 5000, err);
    if (rc < 0)
        return rc;
    double port = 0;
    const char *tok = jsonutil_str(resp, "token");
    size_t toklen = 0;
    if (!jsonutil_num(resp, "port", &port) || port < 1 || port > 65535 || !tok ||
        sodium_hex2bin(t->token, TCP_TOKEN, tok, strlen(tok), NULL, &toklen, NULL) ||
        toklen != TCP_TOKEN) {
        cJSON_Delete(resp);
        return ft_err_set(err, -EPROTO, "flow %s: the agent's tcp.open reply is malformed",
                          s->name);
    }
    const char *note = jsonutil_str(resp, "note");
    if (note && *note)
        flow_event(f, "agent: %s", note);
    /* The agent may allow fewer connections than asked: run with what it allows. */
    double allowed = t->nconns;
    if (jsonutil_num(resp, "conns", &allowed) && allowed >= 1 && allowed < t->nconns) {
        t->nconns = (int)allowed;
        f->nworkers = f->nworkers / s->concurrency * t->nconns;
    }
    cJSON_Delete(resp);
    t->port = (int)port;
    snprintf(t->host, sizeof(t->host), "%s", channel_peer_host(f->ctl));
    for (int i = 0; i < t->nconns; i++) {
        rc = connect_one(f, t, i, err);
        if (rc < 0)
            return rc;
    }
    for (int i = 0; i < f->nworkers; i++)
        f->workers[i].fd = t->fds[i % t->nconns];
    return 0;
}

/* Ping-pong and request/response: send a message, wait for the whole reply. */
static void run_rr(struct flow_worker *w, bool half)
{
    struct flow_rt *f = w->flow;
    const struct mix_flow *s = f->spec;
    size_t cap = BUF_BYTES;
    char *buf = buf_alloc();
    while (flow_wait_running(w)) {
        uint64_t size = flow_next_size(w);
        uint64_t resp =
            s->op == MIX_OP_PINGPONG || !s->size.response_bytes ? size : s->size.response_bytes;
        if (!flow_pace(w, size))
            break;
        struct tcp_hdr h = {htonl(TCP_MAGIC), htonl((uint32_t)size), htonl((uint32_t)resp), 0};
        uint64_t t0 = flow_now_ns(), moved = 0;
        memcpy(buf, &h, sizeof(h));
        /* A message that fits the buffer both ways is counted once, at the end (one clock
         * read instead of three on the path being measured); larger ones chunk by chunk. */
        bool whole = size <= cap && resp <= cap;
        int rc = 0;
        for (uint64_t left = size; left && !rc;) {
            size_t n = left > cap ? cap : left;
            rc = xfer_all(w->fd, buf, n, true, worker_keep, w, &moved);
            left -= n;
            if (!whole)
                flow_progress(w, n, 0, 0);
            memset(buf, 0, sizeof(h));
        }
        for (uint64_t left = resp; left && !rc;) {
            size_t n = left > cap ? cap : left;
            rc = xfer_all(w->fd, buf, n, false, worker_keep, w, &moved);
            left -= n;
            if (!whole)
                flow_progress(w, 0, n, 0);
        }
        if (rc) {
            describe_error(f, rc, s->op == MIX_OP_PINGPONG ? "ping-pong" : "request");
            break;
        }
        uint64_t dt = flow_now_ns() - t0;
        flow_record(w, half ? dt / 2 : dt);
        flow_progress(w, whole ? size : 0, whole ? resp : 0, 1);
    }
    pagebuf_free(buf, BUF_BYTES);
}

/* Stream: one side sends as fast as the pacing allows, the other reads. */
static void run_stream(struct flow_worker *w, bool sender)
{
    struct flow_rt *f = w->flow;
    char *buf = buf_alloc();
    uint64_t in_msg = 0;
    while (flow_wait_running(w)) {
        uint64_t size = flow_next_size(w);
        size_t n = size > BUF_BYTES ? BUF_BYTES : size;
        if (sender && !flow_pace(w, n))
            break;
        ssize_t k = sender ? send(w->fd, buf, n, MSG_NOSIGNAL) : recv(w->fd, buf, BUF_BYTES, 0);
        if (k > 0) {
            in_msg += (uint64_t)k;
            uint64_t msgs = in_msg / size;
            in_msg %= size;
            flow_progress(w, sender ? (uint64_t)k : 0, sender ? 0 : (uint64_t)k, msgs);
            if (sender && (size_t)k < n)
                w->tokens += (double)(n - (size_t)k); /* return unsent pacing credit */
            continue;
        }
        if (k == 0) {
            describe_error(f, -ENODATA, "stream");
            break;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            describe_error(f, -errno, "stream");
            break;
        }
        /* a timeout slice passed: look at the flow's state again */
    }
    pagebuf_free(buf, BUF_BYTES);
}

/* Move one request's descriptors over fd as vectored calls of up to depth iovecs (out: send
 * from region, else receive into it), keep() asked on each idle slice; each descriptor done
 * is timed from t0 into dts[its index] (NULL: not timed). 0 or -errno. */
static int kv_move(int fd, const struct kv_job *jb, char *region, int depth, bool out, keep_fn keep,
                   void *arg, uint64_t t0, uint64_t *dts, _Atomic uint64_t *alive)
{
    struct iovec iov[KV_IOV];
    long i = 0;
    uint64_t part = 0; /* bytes of descriptor i already moved */
    while (i < jb->ndesc) {
        int n = 0;
        for (long k = i; k < jb->ndesc && n < depth; k++, n++) {
            uint64_t skip = k == i ? part : 0;
            iov[n].iov_base = region + jb->off[k] + skip;
            iov[n].iov_len = jb->len[k] - skip;
        }
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t r = out ? sendmsg(fd, &mh, MSG_NOSIGNAL) : recvmsg(fd, &mh, 0);
        if (r > 0) {
            uint64_t now = flow_now_ns();
            if (alive)
                atomic_store_explicit(alive, now, memory_order_relaxed);
            uint64_t left = (uint64_t)r;
            while (left) {
                uint64_t rem = jb->len[i] - part;
                if (left < rem) {
                    part += left;
                    break;
                }
                left -= rem;
                part = 0;
                if (dts)
                    dts[i] = now - t0;
                i++;
            }
            continue;
        }
        if (r == 0 && !out)
            return -ENODATA;
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -errno;
        if (!keep(arg))
            return -ECANCELED;
    }
    return 0;
}

/* A KV transfer: requests arrive by the flow's process (this worker's share of it); each is
 * posted (its descriptor table, then the descriptors: pushed as vectored writes, or pulled,
 * the agent writing them back the same way) and is done when the agent's notification
 * arrives. Timed from the first byte posted to the notification received. */
static void run_kv(struct flow_worker *w)
{
    struct flow_rt *f = w->flow;
    struct tcp_flow *t = f->xdata;
    struct kv_plan *k = t->kv;
    const bool pull = k->p.engine == KV_ENGINE_VLLM;
    char *region = pagebuf_alloc(k->region);
    if (!region) {
        flow_fail(f, "kv: cannot allocate a %llu-byte region", (unsigned long long)k->region);
        return;
    }
    uint64_t *dts = xalloc_zero((size_t)k->desc_max + 1, sizeof(uint64_t));
    struct kv_worker c;
    kv_worker_init(&c, k, w);
    const struct kv_job *jb;
    while ((jb = kv_worker_next(&c))) {
        const uint64_t *table = t->tables[jb - k->jobs];
        struct kv_wire_hdr h = {htonl(KV_MAGIC), htonl(pull ? 1 : 0), htonl((uint32_t)jb->ndesc), 0,
                                hton64(jb->bytes)};
        uint64_t t0 = flow_now_ns();
        int rc = xfer_all(w->fd, &h, sizeof(h), true, worker_keep, w, NULL);
        if (!rc)
            rc = xfer_all(w->fd, (void *)table, (size_t)jb->ndesc * 16, true, worker_keep, w, NULL);
        if (!rc)
            rc = kv_move(w->fd, jb, region, k->p.depth, !pull, worker_keep, w, t0, dts,
                         pull ? &w->last_progress_ns : &w->last_tx_ns);
        uint32_t note[4];
        if (!rc)
            rc = xfer_all(w->fd, note, sizeof(note), false, worker_keep, w, NULL);
        if (!rc && (ntohl(note[0]) != KV_NOTIFY || ntohl(note[1]) != (uint32_t)jb->ndesc))
            rc = -EPROTO;
        if (rc) {
            describe_error(f, rc, "kv request");
            break;
        }
        kv_worker_done(&c, jb, t0, dts, pull);
    }
    free(dts);
    pagebuf_free(region, k->region);
}

/* One ring step's exchange: send n bytes and receive n bytes on fd at once (the successor and
 * the predecessor are the same peer), as non-blocking calls while both are under way, then a
 * blocking receive of what remains once everything is sent. 0 or -errno. */
static int ring_exchange(int fd, char *sbuf, char *rbuf, uint64_t n, keep_fn keep, void *arg)
{
    uint64_t out = 0, in = 0;
    while (out < n) {
        bool moved = false;
        size_t m = n - out > BUF_BYTES ? BUF_BYTES : (size_t)(n - out);
        ssize_t k = send(fd, sbuf, m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            out += (uint64_t)k;
            moved = true;
        } else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return -errno;
        }
        if (in < n) {
            m = n - in > BUF_BYTES ? BUF_BYTES : (size_t)(n - in);
            k = recv(fd, rbuf, m, MSG_DONTWAIT);
            if (k > 0) {
                in += (uint64_t)k;
                moved = true;
            } else if (k == 0) {
                return -ENODATA;
            } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return -errno;
            }
        }
        if (moved || out == n)
            continue;
        int r = wait_fd(fd, (short)(POLLOUT | (in < n ? POLLIN : 0)), IO_SLICE_MS);
        if (r < 0)
            return r;
        if (r == 0 && !keep(arg))
            return -ECANCELED;
    }
    for (uint64_t left = n - in; left;) {
        size_t m = left > BUF_BYTES ? BUF_BYTES : (size_t)left;
        int rc = xfer_all(fd, rbuf, m, false, keep, arg, NULL);
        if (rc)
            return rc;
        left -= m;
    }
    return 0;
}

/* A ring all-reduce's pattern between this host and the peer: 2 (N - 1) dependent steps, each
 * sending ceil(S / N) bytes to the successor while receiving as many from the predecessor
 * (both the peer); a step starts once the previous step's chunk has arrived. The peer follows
 * the same rule on its side (srv_ring), so both directions carry a chunk at once, as in
 * NCCL's ring. One sample per whole all-reduce (what a decode step waits), the steps timed
 * too. */
static void run_ring(struct flow_worker *w)
{
    struct flow_rt *f = w->flow;
    struct tcp_flow *t = f->xdata;
    const int ranks = t->ring.ranks, steps = ring_steps(ranks);
    char *sbuf = buf_alloc(), *rbuf = buf_alloc();
    while (flow_wait_running(w)) {
        uint64_t size = flow_next_size(w), chunk = ring_chunk(size, ranks);
        if (!flow_pace(w, (uint64_t)steps * chunk))
            break;
        int p = atomic_load_explicit(&f->point, memory_order_relaxed);
        uint64_t t0 = flow_now_ns(), ts = t0, sum = 0, lo = UINT64_MAX, hi = 0;
        int rc = 0;
        for (int k = 0; k < steps && !rc; k++) {
            rc = ring_exchange(w->fd, sbuf, rbuf, chunk, worker_keep, w);
            uint64_t now = flow_now_ns(), d = now - ts;
            ts = now;
            sum += d;
            lo = d < lo ? d : lo;
            hi = d > hi ? d : hi;
            if (!rc) /* a chunk arrived: alive, though the bytes count when the op is done */
                atomic_store_explicit(&w->last_progress_ns, now, memory_order_relaxed);
        }
        if (rc) {
            describe_error(f, rc, "ring all-reduce step");
            break;
        }
        uint64_t dt = ts - t0;
        if (flow_state(f) == FLOW_ST_MEASURE)
            ring_acc_add(&t->racc[(size_t)w->idx * (size_t)f->npoints + (size_t)p], dt, steps, sum,
                         lo, hi);
        flow_record(w, dt);
        flow_progress(w, (uint64_t)steps * chunk, (uint64_t)steps * chunk, 1);
    }
    pagebuf_free(sbuf, BUF_BYTES);
    pagebuf_free(rbuf, BUF_BYTES);
}

/* Wait at the gate until bytes in all came from the predecessor: 0, or -ECANCELED when the
 * flow stops. Bytes arriving are progress, a chunk not yet whole too. The predecessor's
 * connection ending is no error by itself: the ranks of a ring start and stop a few
 * milliseconds apart, so a predecessor that stopped first ends it normally; one that died
 * leaves this rank without progress, which the runner fails within the mix's bound. */
static int gate_wait(struct flow_worker *w, struct ring_gate *g, uint64_t bytes)
{
    uint64_t seen = 0;
    for (;;) {
        int r = ring_gate_wait(g, bytes, IO_SLICE_MS);
        if (r < 0) /* closed: wait out this flow's end (or the runner's verdict) */
            poll(NULL, 0, IO_SLICE_MS);
        struct ring_gate_stats st;
        ring_gate_stats(g, &st);
        if (st.bytes > seen) {
            seen = st.bytes;
            atomic_store_explicit(&w->last_progress_ns, flow_now_ns(), memory_order_relaxed);
        }
        if (r == 1)
            return 0;
        if (!worker_keep(w))
            return -ECANCELED;
    }
}

/* A ring all-reduce across hosts, this rank's part: each step waits until the predecessor's
 * previous chunk has arrived (at the gate its agent feeds; the first step at once), then sends
 * its chunk to the successor, the flow's peer; the all-reduce ends when the predecessor's last
 * chunk has arrived. Every rank follows the rule, so the ring moves at its slowest link, as
 * NCCL's does. One sample per whole all-reduce; the steps, the time waiting for the predecessor
 * and the time sending on are timed too. */
static void run_ring_hosts(struct flow_worker *w)
{
    struct flow_rt *f = w->flow;
    struct tcp_flow *t = f->xdata;
    const int ranks = t->ring.ranks, steps = ring_steps(ranks);
    char *sbuf = buf_alloc();
    uint64_t expect = 0; /* the predecessor's bytes every earlier all-reduce ended with */
    while (flow_wait_running(w)) {
        uint64_t size = flow_next_size(w), chunk = ring_chunk(size, ranks);
        if (!flow_pace(w, (uint64_t)steps * chunk))
            break;
        int p = atomic_load_explicit(&f->point, memory_order_relaxed);
        uint64_t t0 = flow_now_ns(), ts = t0, sum = 0, lo = UINT64_MAX, hi = 0, wait = 0, sent = 0;
        int rc = 0;
        const char *what = "ring all-reduce step";
        for (int k = 0; k < steps && !rc; k++) {
            uint64_t a = flow_now_ns();
            if (k && (rc = gate_wait(w, t->gate, expect + (uint64_t)k * chunk)))
                what = "ring all-reduce: waiting for the predecessor's chunk";
            uint64_t b = flow_now_ns();
            wait += b - a;
            for (uint64_t left = chunk; left && !rc;) {
                size_t m = left > BUF_BYTES ? BUF_BYTES : (size_t)left;
                rc = xfer_all(w->fd, sbuf, m, true, worker_keep, w, NULL);
                left -= m;
            }
            uint64_t now = flow_now_ns(), d = now - ts;
            sent += now - b;
            ts = now;
            sum += d;
            lo = d < lo ? d : lo;
            hi = d > hi ? d : hi;
            if (!rc)
                atomic_store_explicit(&w->last_progress_ns, now, memory_order_relaxed);
        }
        if (!rc) {
            uint64_t a = flow_now_ns();
            if ((rc = gate_wait(w, t->gate, expect + (uint64_t)steps * chunk)))
                what = "ring all-reduce: waiting for the predecessor's last chunk";
            ts = flow_now_ns();
            wait += ts - a;
        }
        expect += (uint64_t)steps * chunk;
        if (rc) {
            describe_error(f, rc, what);
            break;
        }
        uint64_t dt = ts - t0;
        if (flow_state(f) == FLOW_ST_MEASURE) {
            struct ring_acc *acc = &t->racc[(size_t)w->idx * (size_t)f->npoints + (size_t)p];
            ring_acc_add(acc, dt, steps, sum, lo, hi);
            acc->wait_ns += wait;
            acc->send_ns += sent;
        }
        flow_record(w, dt);
        flow_progress(w, (uint64_t)steps * chunk, (uint64_t)steps * chunk, 1);
    }
    pagebuf_free(sbuf, BUF_BYTES);
}

/* One peer's part of an all-to-all across hosts: every all-to-all starts once every peer's
 * share of the previous one has arrived at the gate (the first at once), sends ceil(S / N) to
 * this flow's peer, and ends when every peer's share of it has arrived. The mix has such a flow
 * for each of the N - 1 peers, so they all start and end together, as an expert-parallel
 * dispatch does; one sample per all-to-all, from its start to its last share's arrival. */
static void run_alltoall_hosts(struct flow_worker *w)
{
    struct flow_rt *f = w->flow;
    struct tcp_flow *t = f->xdata;
    char *sbuf = buf_alloc();
    uint64_t done = 0; /* bytes from each peer every earlier all-to-all ended with */
    while (flow_wait_running(w)) {
        uint64_t size = flow_next_size(w), chunk = ring_chunk(size, t->ring.ranks);
        if (!flow_pace(w, chunk))
            break;
        int p = atomic_load_explicit(&f->point, memory_order_relaxed);
        int rc = done ? gate_wait(w, t->gate, done) : 0;
        uint64_t t0 = flow_now_ns();
        for (uint64_t left = chunk; left && !rc;) {
            size_t m = left > BUF_BYTES ? BUF_BYTES : (size_t)left;
            rc = xfer_all(w->fd, sbuf, m, true, worker_keep, w, NULL);
            left -= m;
        }
        if (!rc)
            ring_gate_sent(t->gate, t->gate_sender, chunk);
        uint64_t b = flow_now_ns();
        if (!rc)
            rc = gate_wait(w, t->gate, done + chunk);
        uint64_t end = flow_now_ns();
        done += chunk;
        if (rc) {
            describe_error(f, rc, "all-to-all: its peers' shares");
            break;
        }
        if (flow_state(f) == FLOW_ST_MEASURE) {
            struct ring_acc *acc = &t->racc[(size_t)w->idx * (size_t)f->npoints + (size_t)p];
            ring_acc_add(acc, end - t0, 1, end - t0, end - t0, end - t0);
            acc->send_ns += b - t0;
            acc->wait_ns += end - b;
        }
        flow_record(w, end - t0);
        flow_progress(w, chunk, chunk, 1);
    }
    pagebuf_free(sbuf, BUF_BYTES);
}

static void *worker_main(void *arg)
{
    struct flow_worker *w = arg;
    const struct mix_flow *s = w->flow->spec;
    flow_worker_begin(w);
    switch (s->op) {
    case MIX_OP_PINGPONG:
        run_rr(w, true);
        break;
    case MIX_OP_RR:
        run_rr(w, false);
        break;
    case MIX_OP_KV:
        run_kv(w);
        break;
    case MIX_OP_COLLECTIVE:
        if (((struct tcp_flow *)w->flow->xdata)->ring.alltoall)
            run_alltoall_hosts(w);
        else if (((struct tcp_flow *)w->flow->xdata)->gate)
            run_ring_hosts(w);
        else
            run_ring(w);
        break;
    case MIX_OP_STREAM: {
        bool sender =
            s->dir == MIX_DIR_TX || (s->dir == MIX_DIR_BIDIR && w->idx < w->flow->nworkers / 2);
        run_stream(w, sender);
        break;
    }
    default:
        break;
    }
    return NULL;
}

static int tcp_start(struct flow_rt *f, struct ft_err *err)
{
    return flow_start_workers(f, worker_main, err);
}

/* The peer's side of the flow, its data-connection threads' scheduler times (tcp.cpu), into
 * conditions.peer_cpu: what says whether the peer was the CPU-bound end. An agent that does
 * not know the request leaves it out. */
static void peer_cpu(struct flow_rt *f)
{
    if (!f->ctl || !f->conditions)
        return;
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    cJSON_AddStringToObject(req, "type", "tcp.cpu");
    if (channel_request(f->ctl, req, &resp, 2000, NULL) == 0) {
        cJSON *c = cJSON_DetachItemFromObjectCaseSensitive(resp, "cpu");
        if (cJSON_IsObject(c)) {
            pthread_mutex_lock(&f->lock);
            cJSON_DeleteItemFromObjectCaseSensitive(f->conditions, "peer_cpu");
            cJSON_AddItemToObject(f->conditions, "peer_cpu", c);
            pthread_mutex_unlock(&f->lock);
        } else {
            cJSON_Delete(c);
        }
    }
    cJSON_Delete(resp);
}

static void tcp_stop(struct flow_rt *f)
{
    flow_join_workers(f);
    if (atomic_load(&f->status) != FLOW_FAILED)
        peer_cpu(f);
}

/* A kv flow's own figures per point (conditions.point_figures, merged into the points). */
static void kv_figures(struct flow_rt *f, struct kv_plan *k)
{
    if (!f->conditions || !k->desc)
        return;
    cJSON *pf = kv_plan_figures(k, k->p.engine == KV_ENGINE_VLLM
                                       ? "request posted to the descriptor's last byte received"
                                       : "request posted to the descriptor's last byte taken by "
                                         "the socket (TCP does not say when the peer has it)");
    pthread_mutex_lock(&f->lock);
    cJSON_DeleteItemFromObjectCaseSensitive(f->conditions, "point_figures");
    cJSON_AddItemToObject(f->conditions, "point_figures", pf);
    pthread_mutex_unlock(&f->lock);
}

/* A ring flow's figures per point (conditions.point_figures, merged into the points). */
static void ring_point_figures(struct flow_rt *f, struct tcp_flow *t)
{
    if (!f->conditions)
        return;
    cJSON *pf = cJSON_CreateArray();
    for (int p = 0; p < f->npoints; p++) {
        struct ring_acc a = {0};
        for (int i = 0; i < f->nworkers; i++)
            ring_acc_merge(&a, &t->racc[(size_t)i * (size_t)f->npoints + (size_t)p]);
        struct ring_gate_stats st;
        if (t->ring.alltoall) {
            char from[RING_GATE_FROM_MAX];
            snprintf(from, sizeof(from), "%d", t->ring.peer_rank);
            bool have = ring_gate_feeder_stats(t->gate, from, &st) == 0;
            cJSON_AddItemToArray(pf, ring_alltoall_figures("tcp", t->ring.ranks, f->points[p].size,
                                                           &a, have ? &st : NULL));
            continue;
        }
        if (t->gate)
            ring_gate_stats(t->gate, &st);
        cJSON_AddItemToArray(
            pf, ring_figures("tcp", t->ring.ranks, f->points[p].size, &a, t->gate ? &st : NULL));
    }
    pthread_mutex_lock(&f->lock);
    cJSON_DeleteItemFromObjectCaseSensitive(f->conditions, "point_figures");
    cJSON_AddItemToObject(f->conditions, "point_figures", pf);
    pthread_mutex_unlock(&f->lock);
}

static void tcp_teardown(struct flow_rt *f)
{
    struct tcp_flow *t = f->xdata;
    if (!t)
        return;
    if (t->kv) {
        kv_figures(f, t->kv);
        kv_tcp_free(t);
    }
    if (t->racc) {
        ring_point_figures(f, t);
        free(t->racc);
    }
    ring_gate_put(t->gate);
    for (int i = 0; i < t->nconns; i++)
        if (t->fds[i] >= 0)
            close(t->fds[i]);
    free(t->fds);
    free(t);
    f->xdata = NULL;
}

/* Per-segment header bytes as a Linux qdisc counts a frame: Ethernet header (14), IP (20 or
 * 40), TCP (20, plus 12 with timestamps). No preamble, FCS or inter-frame gap. */
static unsigned seg_overhead(int fd, const struct tcp_info *ti)
{
    struct sockaddr_storage a;
    socklen_t l = sizeof(a);
    unsigned ip = 20;
    if (getsockname(fd, (struct sockaddr *)&a, &l) == 0 && a.ss_family == AF_INET6 &&
        !IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&a)->sin6_addr))
        ip = 40;
    return 14 + ip + 20 + ((ti->tcpi_options & TCPI_OPT_TIMESTAMPS) ? 12 : 0);
}

static void tcp_sample(struct flow_rt *f, struct flow_wire *out)
{
    struct tcp_flow *t = f->xdata;
    const struct mix_flow *s = f->spec;
    memset(out, 0, sizeof(*out));
    if (!t)
        return;
    bool tx = s->op != MIX_OP_STREAM || s->dir != MIX_DIR_RX;
    bool rx = s->op != MIX_OP_STREAM || s->dir != MIX_DIR_TX;
    int n = 0;
    for (int i = 0; i < t->nconns; i++) {
        if (t->fds[i] < 0)
            continue;
        struct tcp_info ti;
        socklen_t len = sizeof(ti);
        memset(&ti, 0, sizeof(ti));
        if (getsockopt(t->fds[i], IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
            continue;
        unsigned hdr = seg_overhead(t->fds[i], &ti);
        /* tcpi_bytes_sent includes retransmitted bytes; data_segs_out counts data segments
         * only (pure ACKs excluded), data_segs_in likewise on the receive side. */
        if (tx)
            out->wire_bytes += ti.tcpi_bytes_sent + (uint64_t)ti.tcpi_data_segs_out * hdr;
        if (rx)
            out->wire_bytes += ti.tcpi_bytes_received + (uint64_t)ti.tcpi_data_segs_in * hdr;
        /* bytes_acked counts from 1: the SYN is acknowledged as one byte. */
        out->acked_bytes += ti.tcpi_bytes_acked ? ti.tcpi_bytes_acked - 1 : 0;
        out->retrans += ti.tcpi_total_retrans;
        out->rtt_us += ti.tcpi_rtt;
        out->rttvar_us += ti.tcpi_rttvar;
        out->cwnd_bytes += (uint64_t)ti.tcpi_snd_cwnd * ti.tcpi_snd_mss;
        n++;
    }
    if (n) {
        out->valid = true;
        out->rtt_us /= n;
        out->rttvar_us /= n;
    }
}

static void tcp_conditions(const struct flow_rt *f, cJSON *out)
{
    struct tcp_flow *t = f->xdata;
    int fd = -1;
    for (int i = 0; t && i < t->nconns && fd < 0; i++)
        fd = t->fds[i];
    const struct mix_flow *s = f->spec;
    cJSON_AddBoolToObject(out, "tcp_nodelay", s->op != MIX_OP_STREAM);
    cJSON_AddNumberToObject(out, "tcp_user_timeout_ms", f->fail_bound_s * 1000);
    cJSON_AddStringToObject(out, "local_netdev", s->local_netdev);
    cJSON_AddStringToObject(out, "local_ip", s->local_ip);
    if (t && t->kv) {
        cJSON *kv = kv_plan_conditions(t->kv);
        cJSON_AddStringToObject(kv, "transfer",
                                t->kv->p.engine == KV_ENGINE_VLLM
                                    ? "pull: the peer writes the descriptors back"
                                    : "push: descriptors written to the peer");
        cJSON_AddStringToObject(kv, "emulation",
                                "TCP: the same descriptor list as the RDMA engines post (the "
                                "table of offsets and lengths, then the descriptors as vectored "
                                "sendmsg/recvmsg of up to depth iovecs between per-connection "
                                "regions), then a 16-byte notification from the peer; qps and "
                                "doorbell_batch are recorded, not used (one connection per "
                                "worker, concurrency)");
        cJSON_AddItemToObject(out, "kv", kv);
    }
    if (t && t->ring.alltoall) {
        cJSON *r = cJSON_AddObjectToObject(out, "alltoall");
        cJSON_AddStringToObject(r, "collective", "alltoall");
        cJSON_AddNumberToObject(r, "ranks", t->ring.ranks);
        cJSON_AddNumberToObject(r, "rank", t->ring.rank);
        cJSON_AddNumberToObject(r, "peer_rank", t->ring.peer_rank);
        cJSON_AddNumberToObject(r, "peer_bytes",
                                (double)ring_chunk(f->points[0].size, t->ring.ranks));
        cJSON_AddStringToObject(r, "emulation",
                                "across hosts: this flow sends ceil(S / N) to its peer, one of "
                                "the mix's N - 1 such flows; every peer's share arrives at this "
                                "process's agent, and each all-to-all starts once every share of "
                                "the previous one has arrived");
        cJSON_AddStringToObject(r, "latency",
                                "per all-to-all: its start to the last peer's share received");
    } else if (t && t->ring.ranks) {
        char label[200];
        ring_label("tcp", t->ring.ranks, t->gate != NULL, label, sizeof(label));
        cJSON *r = cJSON_AddObjectToObject(out, "ring");
        cJSON_AddStringToObject(r, "pattern", label);
        cJSON_AddStringToObject(r, "collective", "all_reduce");
        cJSON_AddNumberToObject(r, "ranks", t->ring.ranks);
        cJSON_AddNumberToObject(r, "steps_per_allreduce", ring_steps(t->ring.ranks));
        cJSON_AddNumberToObject(r, "chunk_bytes",
                                (double)ring_chunk(f->points[0].size, t->ring.ranks));
        cJSON_AddStringToObject(
            r, "emulation",
            t->gate ? "across hosts: one connection to the successor (the peer) carries this "
                      "rank's chunks; the predecessor's arrive at this process's agent; each "
                      "step waits for the predecessor's previous chunk, then sends; every rank "
                      "follows the rule, so the ring moves at its slowest link"
                    : "one connection per worker carries both ring neighbours (the peer is "
                      "successor and predecessor): each step sends a chunk and receives one at "
                      "once, and starts when the previous step's chunk has arrived; the peer "
                      "follows the same rule, so it may be one step ahead when an all-reduce "
                      "starts");
        cJSON_AddStringToObject(r, "latency",
                                "per all-reduce: the first step's send to the "
                                "last step's chunk received");
    }
    if (fd < 0)
        return;
    char cc[32] = "";
    socklen_t l = sizeof(cc);
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &l) == 0)
        cJSON_AddStringToObject(out, "congestion_control", cc);
    int v;
    l = sizeof(v);
    if (getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &v, &l) == 0)
        cJSON_AddNumberToObject(out, "mss_bytes", v);
    l = sizeof(v);
    if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &l) == 0)
        cJSON_AddNumberToObject(out, "so_sndbuf_bytes", v);
    l = sizeof(v);
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &l) == 0)
        cJSON_AddNumberToObject(out, "so_rcvbuf_bytes", v);
    struct sockaddr_storage a;
    char host[INET6_ADDRSTRLEN + 8];
    l = sizeof(a);
    if (getsockname(fd, (struct sockaddr *)&a, &l) == 0 &&
        getnameinfo((struct sockaddr *)&a, l, host, sizeof(host), NULL, 0, NI_NUMERICHOST) == 0)
        cJSON_AddStringToObject(out, "local_address", host);
    l = sizeof(a);
    if (getpeername(fd, (struct sockaddr *)&a, &l) == 0 &&
        getnameinfo((struct sockaddr *)&a, l, host, sizeof(host), NULL, 0, NI_NUMERICHOST) == 0)
        cJSON_AddStringToObject(out, "peer_address", host);
}

/* ================= agent side ================= */

/* The tag of this side's per-session state (agent_session_state). */
static const char state_tag;

struct srv_conn {
    struct srv_flow *flow;
    int fd;
    bool sender;
    pthread_t thread;
    bool started;
    /* Its thread's scheduler times (tcp.cpu): cpu_state 0 not begun, 1 running (tid, t0_ns,
     * r0/q0 set), 2 ended (wall/run/wait set); written by the thread itself. */
    _Atomic int cpu_state;
    int tid;
    bool sched0, cpu_ok;
    uint64_t t0_ns, r0, q0, wall_ns, run_ns, wait_ns;
};

struct srv_flow {
    enum mix_op op;
    enum mix_dir dir;
    int nconns;
    uint64_t chunk;
    uint64_t kv_region;     /* kv: bytes of each connection's region */
    uint64_t ring_chunk;    /* collective: bytes of one ring step */
    struct ring_gate *gate; /* across hosts: this client is one of its feeders */
    int gate_slot;          /* which */
    double rate_gbps;
    bool capped;     /* the agent has a rate cap (shared per client key) */
    size_t io_chunk; /* the largest read or send: about 1 ms of a connection's rate */
    double max_duration_s;
    /* pingpong/rr: the client abandons a request this long after sending it (a drill lane's
     * deadline, tcp.open's request_deadline_ms); 0: never. */
    uint64_t request_deadline_ns;
    uint8_t token[TCP_TOKEN];
    struct sockaddr_storage client;
    int lfd;
    int stop_fd; /* eventfd: the acceptor wakes at once on stop */
    _Atomic bool stop;
    pthread_t acceptor;
    bool acceptor_started;
    struct srv_conn conns[2 * 1024];
    int nthreads;
    struct agent_session *session;
    struct srv_flow *next;
};

/* Everything a session opened, torn down when the session ends. */
struct srv_state {
    pthread_mutex_t lock;
    struct srv_flow *flows;
};

static bool srv_keep(void *arg)
{
    struct srv_conn *c = arg;
    return !atomic_load(&c->flow->stop);
}

/* Before n bytes go (or are read): the flow's own rate, per connection (rate /
 * connections, measured since the start), then the agent's cap, which every flow of every
 * session with this client's key shares. */
static void srv_pace(struct srv_conn *c, uint64_t *sent, uint64_t t0, size_t n)
{
    struct srv_flow *sf = c->flow;
    if (sf->rate_gbps > 0) {
        double bps = sf->rate_gbps * 1e9 / 8 / sf->nconns;
        *sent += n;
        for (;;) {
            double due = (double)*sent / bps * 1e9;
            uint64_t el = flow_now_ns() - t0;
            if ((double)el >= due || atomic_load(&sf->stop))
                break;
            uint64_t wait = (uint64_t)(due - (double)el);
            struct timespec ts = {0, (long)(wait > 2000000 ? 2000000 : wait)};
            nanosleep(&ts, NULL);
        }
    }
    agent_session_pace(sf->session, n, &sf->stop);
}

/* Read the next request of a ping-pong or request/response connection, all of it (and
 * nothing after it, except what a pipelining client sent in the same segment: kept in buf[0,
 * *have) for the next call). A request of a few bytes comes in one receive, header and
 * payload together. Returns the response size, or -errno (-ENODATA at EOF, -EPROTO for a
 * malformed header). */
static int64_t srv_request(struct srv_conn *c, char *buf, size_t *have)
{
    while (*have < TCP_HDR) {
        ssize_t k = recv(c->fd, buf + *have, BUF_BYTES - *have, 0);
        if (k > 0) {
            *have += (size_t)k;
            continue;
        }
        if (k == 0)
            return -ENODATA;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -errno;
        if (!srv_keep(c))
            return -ECANCELED;
    }
    struct tcp_hdr h;
    memcpy(&h, buf, sizeof(h));
    uint32_t size = ntohl(h.size), resp = ntohl(h.resp);
    /* A hostile or confused client: refuse nonsense instead of trusting it. */
    if (ntohl(h.magic) != TCP_MAGIC || size < TCP_HDR || resp < TCP_HDR || size > TCP_MAX_MSG ||
        resp > TCP_MAX_MSG)
        return -EPROTO;
    size_t got = *have < size ? *have : size;
    *have -= got;
    if (*have)
        memmove(buf, buf + got, *have); /* the next request's first bytes */
    for (uint64_t left = size - got; left;) {
        size_t n = left > BUF_BYTES ? BUF_BYTES : left;
        int rc = xfer_all(c->fd, buf, n, false, srv_keep, c, NULL);
        if (rc)
            return rc;
        left -= n;
    }
    return resp;
}

/* The agent's side of a KV connection: each request's header and descriptor table, the
 * descriptors received into (push) or sent from (pull) this connection's region as vectored
 * calls, then the notification. Returns at EOF, a stop or a malformed request. */
static void srv_kv(struct srv_conn *c)
{
    struct srv_flow *sf = c->flow;
    char *region = pagebuf_alloc(sf->kv_region);
    struct kv_job jb = {0};
    uint64_t *table = NULL;
    long cap = 0;
    uint64_t t0 = flow_now_ns(), paced = 0;
    while (region && !atomic_load(&sf->stop)) {
        struct kv_wire_hdr h;
        if (xfer_all(c->fd, &h, sizeof(h), false, srv_keep, c, NULL))
            break;
        uint32_t nd = ntohl(h.ndesc), mode = ntohl(h.mode);
        if (ntohl(h.magic) != KV_MAGIC || mode > 1 || nd == 0 || nd > KV_MAX_DESCS) {
            agent_session_log(sf->session, "tcp: malformed kv request header, closing");
            break;
        }
        if ((long)nd > cap) {
            cap = (long)nd;
            table = xalloc_resize(table, (size_t)cap * 16);
            jb.off = xalloc_resize(jb.off, (size_t)cap * sizeof(uint64_t));
            jb.len = xalloc_resize(jb.len, (size_t)cap * sizeof(uint64_t));
        }
        if (xfer_all(c->fd, table, (size_t)nd * 16, false, srv_keep, c, NULL))
            break;
        bool ok = true;
        uint64_t total = 0;
        for (uint32_t i = 0; i < nd && ok; i++) {
            jb.off[i] = hton64(table[2 * i]);
            jb.len[i] = hton64(table[2 * i + 1]);
            ok = jb.len[i] > 0 && jb.len[i] <= sf->kv_region &&
                 jb.off[i] <= sf->kv_region - jb.len[i];
            total += jb.len[i];
        }
        if (!ok || total != hton64(h.total)) {
            agent_session_log(sf->session, "tcp: kv descriptor outside the region, closing");
            break;
        }
        jb.ndesc = nd;
        if (mode == 1)
            srv_pace(c, &paced, t0, total);
        if (kv_move(c->fd, &jb, region, KV_IOV, mode == 1, srv_keep, c, 0, NULL, NULL))
            break;
        if (mode == 0)
            srv_pace(c, &paced, t0, total);
        uint32_t note[4] = {htonl(KV_NOTIFY), htonl(nd), htonl((uint32_t)(total >> 32)),
                            htonl((uint32_t)total)};
        if (xfer_all(c->fd, note, sizeof(note), true, srv_keep, c, NULL))
            break;
    }
    free(table);
    free(jb.off);
    free(jb.len);
    pagebuf_free(region, sf->kv_region);
}

/* The agent's side of a ring all-reduce's pattern: this host's ring neighbour, on the same
 * rule as the client (run_ring): it sends its chunk j once the client's chunk j - 1 has
 * arrived (chunk 0 at once), so sending and receiving overlap as in a ring, and it is never
 * more than one step ahead. It needs no all-reduce boundaries: the steps follow each other.
 * Returns at EOF, an error, a stop or the agent's duration cap. */
static void srv_ring(struct srv_conn *c, uint64_t limit)
{
    struct srv_flow *sf = c->flow;
    const uint64_t chunk = sf->ring_chunk;
    char *sbuf = buf_alloc(), *rbuf = buf_alloc();
    uint64_t sent = 0, rcvd = 0, t0 = flow_now_ns(), paced = 0;
    while (!atomic_load(&sf->stop)) {
        if (limit && flow_now_ns() - t0 > limit)
            break;
        if (agent_session_stall_wait(sf->session, &sf->stop))
            continue; /* a fault drill's peer-stall: neither sends nor reads meanwhile */
        uint64_t credit = (rcvd / chunk + 1) * chunk;
        bool moved = false;
        if (sent < credit) {
            size_t m = credit - sent > BUF_BYTES ? BUF_BYTES : (size_t)(credit - sent);
            if (m > sf->io_chunk)
                m = sf->io_chunk;
            ssize_t k = send(c->fd, sbuf, m, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k > 0) {
                sent += (uint64_t)k;
                moved = true;
                srv_pace(c, &paced, t0, (size_t)k);
            } else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                break;
            }
        }
        ssize_t k = recv(c->fd, rbuf, BUF_BYTES, MSG_DONTWAIT);
        if (k == 0)
            break;
        if (k > 0) {
            rcvd += (uint64_t)k;
            moved = true;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            break;
        }
        if (moved)
            continue;
        short ev = (short)(POLLIN | (sent < (rcvd / chunk + 1) * chunk ? POLLOUT : 0));
        if (wait_fd(c->fd, ev, IO_SLICE_MS) < 0)
            break;
    }
    pagebuf_free(sbuf, BUF_BYTES);
    pagebuf_free(rbuf, BUF_BYTES);
}

/* The agent's side of a ring across hosts: this process's rank is the client's successor;
 * what arrives is counted at the gate its own ring flow waits on (run_ring_hosts), and
 * nothing is sent back. Returns at EOF, an error, a stop or the agent's duration cap, and
 * closes the gate so that its waiter stops waiting. */
static void srv_ring_sink(struct srv_conn *c, uint64_t limit)
{
    struct srv_flow *sf = c->flow;
    char *rbuf = buf_alloc();
    uint64_t t0 = flow_now_ns();
    while (!atomic_load(&sf->stop)) {
        if (limit && flow_now_ns() - t0 > limit)
            break;
        if (agent_session_stall_wait(sf->session, &sf->stop))
            continue;
        ssize_t k = recv(c->fd, rbuf, BUF_BYTES, MSG_DONTWAIT);
        if (k == 0)
            break;
        if (k > 0) {
            ring_gate_arrived(sf->gate, sf->gate_slot, (uint64_t)k, flow_now_ns());
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            break;
        if (wait_fd(c->fd, POLLIN, IO_SLICE_MS) < 0)
            break;
    }
    ring_gate_close(sf->gate, sf->gate_slot);
    pagebuf_free(rbuf, BUF_BYTES);
}

static void *srv_conn_serve(void *arg)
{
    struct srv_conn *c = arg;
    struct srv_flow *sf = c->flow;
    char *buf = buf_alloc();
    uint64_t t0 = flow_now_ns(), paced = 0;
    uint64_t limit = sf->max_duration_s > 0 ? (uint64_t)(sf->max_duration_s * 1e9) : 0;
    size_t have = 0;
    if (sf->op == MIX_OP_KV) {
        srv_kv(c); /* ends with the session (its stop), EOF or a malformed request */
    }
    if (sf->op == MIX_OP_COLLECTIVE && sf->gate)
        srv_ring_sink(c, limit);
    else if (sf->op == MIX_OP_COLLECTIVE)
        srv_ring(c, limit);
    while (sf->op != MIX_OP_KV && sf->op != MIX_OP_COLLECTIVE && !atomic_load(&sf->stop)) {
        if (limit && flow_now_ns() - t0 > limit)
            break; /* the agent's duration cap */
        if (sf->op == MIX_OP_PINGPONG || sf->op == MIX_OP_RR) {
            int64_t resp = srv_request(c, buf, &have);
            if (resp == -EPROTO)
                agent_session_log(sf->session, "tcp: malformed request header, closing");
            if (resp < 0)
                break;
            /* A fault drill's peer-stall (agent_fault.c): the request is in, nothing answers. */
            uint64_t arrived = flow_now_ns();
            char peek;
            if (agent_session_stall_wait(sf->session, &sf->stop) &&
                recv(c->fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
                break; /* the client gave up on it meanwhile and left: no answer */
            /* Past the client's deadline (which started before the request arrived) it has
             * abandoned the request, whether or not its close has come in yet: an answer now
             * would be counted here and never used there. The connection ends instead. */
            if (sf->request_deadline_ns && flow_now_ns() - arrived >= sf->request_deadline_ns) {
                agent_session_log(sf->session,
                                  "tcp: a request stalled past the client's %.0f ms deadline: "
                                  "not answered, its connection closed",
                                  (double)sf->request_deadline_ns / 1e6);
                break;
            }
            if (atomic_load(&sf->stop))
                break;
            int rc = 0;
            for (uint64_t left = (uint64_t)resp; left && !rc;) {
                size_t n = left > BUF_BYTES ? BUF_BYTES : left;
                if (n > sf->io_chunk)
                    n = sf->io_chunk;
                srv_pace(c, &paced, t0, n);
                rc = xfer_all(c->fd, buf, n, true, srv_keep, c, NULL);
                left -= n;
            }
            if (rc)
                break;
            agent_session_count_answer(sf->session);
        } else if (agent_session_stall_wait(sf->session, &sf->stop)) {
            continue; /* a stream under a peer-stall: neither sends nor reads meanwhile */
        } else if (c->sender) {
            size_t n = sf->chunk > BUF_BYTES ? BUF_BYTES : sf->chunk;
            if (n > sf->io_chunk)
                n = sf->io_chunk; /* a stream: the pacing stays smooth */
            srv_pace(c, &paced, t0, n);
            if (xfer_all(c->fd, buf, n, true, srv_keep, c, NULL))
                break;
        } else {
            /* Receive and discard; under a rate read no faster than it, so TCP's flow
             * control holds the client back (under a low cap the receive buffer is small). */
            ssize_t k = recv(c->fd, buf, sf->io_chunk, 0);
            if (k == 0)
                break;
            if (k < 0) {
                if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                    break;
                continue; /* a timeout slice: check for stop */
            }
            srv_pace(c, &paced, t0, (size_t)k);
        }
    }
    shutdown(c->fd, SHUT_RDWR);
    pagebuf_free(buf, BUF_BYTES);
    return NULL;
}

/* A data connection's thread: srv_conn_serve, timed by the scheduler for tcp.cpu. */
static void *srv_conn_main(void *arg)
{
    struct srv_conn *c = arg;
    c->t0_ns = flow_now_ns();
    c->tid = (int)gettid();
    c->sched0 = flow_sched_read(0, &c->r0, &c->q0);
    atomic_store_explicit(&c->cpu_state, 1, memory_order_release);
    void *ret = srv_conn_serve(arg);
    uint64_t r1 = 0, q1 = 0;
    c->cpu_ok = c->sched0 && flow_sched_read(0, &r1, &q1) && r1 >= c->r0 && q1 >= c->q0;
    c->wall_ns = flow_now_ns() - c->t0_ns;
    c->run_ns = c->cpu_ok ? r1 - c->r0 : 0;
    c->wait_ns = c->cpu_ok ? q1 - c->q0 : 0;
    atomic_store_explicit(&c->cpu_state, 2, memory_order_release);
    return ret;
}

static void *srv_acceptor(void *arg)
{
    struct srv_flow *sf = arg;
    uint64_t deadline = flow_now_ns() + 10000000000ull;
    int accepted = 0, refused = 0;
    while (accepted < sf->nconns && !atomic_load(&sf->stop) && flow_now_ns() < deadline) {
        struct pollfd p[2] = {{.fd = sf->lfd, .events = POLLIN},
                              {.fd = sf->stop_fd, .events = POLLIN}};
        if (poll(p, 2, IO_SLICE_MS) <= 0 || !(p[0].revents & POLLIN))
            continue;
        struct sockaddr_storage from;
        socklen_t fl = sizeof(from);
        int fd = accept4(sf->lfd, (struct sockaddr *)&from, &fl, SOCK_CLOEXEC);
        if (fd < 0 || set_io_timeouts(fd) < 0) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        /* Only the authenticated client, with the session's token, may connect. */
        uint32_t hello[2];
        uint8_t tok[TCP_TOKEN];
        bool ok = same_host(&from, &sf->client);
        uint64_t until = flow_now_ns() + 3000000000ull;
        int rc = 0;
        if (ok) {
            rc = xfer_all(fd, hello, sizeof(hello), false, before_deadline, &until, NULL);
            if (rc == 0)
                rc = xfer_all(fd, tok, sizeof(tok), false, before_deadline, &until, NULL);
        }
        ok = ok && rc == 0 && ntohl(hello[0]) == TCP_HELLO &&
             ntohl(hello[1]) < (uint32_t)sf->nconns &&
             sodium_memcmp(tok, sf->token, TCP_TOKEN) == 0;
        if (!ok) {
            if (refused++ == 0) /* once; the count when the listener closes */
                agent_session_log(sf->session, "tcp: refused a data connection without the "
                                               "session's address and token");
            close(fd);
            continue;
        }
        uint8_t ack = 1;
        xfer_all(fd, &ack, 1, true, before_deadline, &until, NULL);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        int idx = (int)ntohl(hello[1]);
        int nth = (sf->op == MIX_OP_STREAM && sf->dir == MIX_DIR_BIDIR) ? 2 : 1;
        for (int k = 0; k < nth; k++) {
            struct srv_conn *c = &sf->conns[sf->nthreads];
            c->flow = sf;
            c->fd = fd;
            /* The agent sends when the client receives (rx), and on one of bidir's pair. */
            c->sender = sf->op == MIX_OP_STREAM &&
                        (sf->dir == MIX_DIR_RX || (sf->dir == MIX_DIR_BIDIR && k == 1));
            if (pthread_create(&c->thread, NULL, srv_conn_main, c) == 0) {
                c->started = true;
                sf->nthreads++;
            }
        }
        (void)idx;
        accepted++;
    }
    if (refused > 1)
        agent_session_log(sf->session,
                          "tcp: refused %d data connections in all without the session's "
                          "address and token",
                          refused);
    close(sf->lfd);
    sf->lfd = -1;
    return NULL;
}

static void srv_flow_stop(struct srv_flow *sf)
{
    atomic_store(&sf->stop, true);
    uint64_t one = 1;
    ssize_t w = write(sf->stop_fd, &one, sizeof(one));
    (void)w;
    if (sf->acceptor_started)
        pthread_join(sf->acceptor, NULL);
    close(sf->stop_fd);
    for (int i = 0; i < sf->nthreads; i++)
        if (sf->conns[i].started)
            pthread_join(sf->conns[i].thread, NULL);
    /* bidir: two threads share one fd; close each fd once */
    for (int i = 0; i < sf->nthreads; i++) {
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup |= sf->conns[j].fd == sf->conns[i].fd;
        if (!dup)
            close(sf->conns[i].fd);
    }
    if (sf->lfd >= 0)
        close(sf->lfd);
}

static void srv_state_free(void *arg)
{
    struct srv_state *st = arg;
    for (struct srv_flow *sf = st->flows, *next; sf; sf = next) {
        next = sf->next;
        srv_flow_stop(sf);
        ring_gate_put(sf->gate);
        free(sf);
    }
    pthread_mutex_destroy(&st->lock);
    free(st);
}

/* A numeric address ("10.0.0.2", "fd00::2") into *ss, port 0: 0 or -EINVAL. */
static int numeric_addr(const char *text, struct sockaddr_storage *ss, socklen_t *len)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST}, *ai = NULL;
    if (getaddrinfo(text, NULL, &hints, &ai) != 0 || !ai)
        return -EINVAL;
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    if (len)
        *len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

static int handle_open(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    const struct agent_cfg *cfg = agent_session_cfg(s);
    int op = -1, dir = -1;
    const char *ops = jsonutil_str(req, "op"), *dirs = jsonutil_str(req, "direction");
    for (int i = 0; ops && i < MIX_OP_COUNT; i++)
        if (!strcmp(ops, mix_op_str((enum mix_op)i)))
            op = i;
    for (int i = 0; dirs && i <= MIX_DIR_BIDIR; i++)
        if (!strcmp(dirs, mix_dir_str((enum mix_dir)i)))
            dir = i;
    double conns = 0, size = 0, rate = 0, region = 0, ring = 0;
    if (op == MIX_OP_COLLECTIVE && (!jsonutil_num(req, "ring_chunk", &ring) || ring < 1 ||
                                    ring > (double)TCP_MAX_MSG || ring != (double)(uint64_t)ring))
        return ft_err_set(err, -EINVAL, "tcp.open: ring_chunk must be 1 B to 1 GiB");
    if (op == MIX_OP_KV &&
        (!jsonutil_num(req, "kv_region", &region) || region < 4096 || region > (double)TCP_MAX_MSG))
        return ft_err_set(err, -EINVAL, "tcp.open: kv_region must be 4096 B to 1 GiB");
    if ((op != MIX_OP_PINGPONG && op != MIX_OP_RR && op != MIX_OP_STREAM && op != MIX_OP_KV &&
         op != MIX_OP_COLLECTIVE) ||
        dir < 0 || !jsonutil_num(req, "conns", &conns) || conns < 1 || conns > 1024 ||
        !jsonutil_num(req, "size", &size) || size < 1 || size > BUF_BYTES)
        return ft_err_set(err, -EINVAL,
                          "tcp.open: bad request (op, direction, conns 1-1024, "
                          "size 1-4194304 are required)");
    jsonutil_num(req, "rate_gbps", &rate);
    double deadline_ms = 0;
    if (jsonutil_num(req, "request_deadline_ms", &deadline_ms) &&
        !(deadline_ms > 0 && deadline_ms <= 3600000))
        return ft_err_set(err, -EINVAL, "tcp.open: request_deadline_ms must be 1 ms to 1 hour");
    /* A data path of its own (a drill's link-down must leave the control connection up):
     * listen at data_addr, one of this agent's addresses, and accept only data_from, the
     * client's address on that path. Both numeric; the session's token still decides. */
    struct sockaddr_storage data_addr = {0}, data_from = {0};
    socklen_t data_len = 0;
    const char *da = jsonutil_str(req, "data_addr"), *df = jsonutil_str(req, "data_from");
    if ((da != NULL) != (df != NULL) || (da && (numeric_addr(da, &data_addr, &data_len) < 0 ||
                                                numeric_addr(df, &data_from, NULL) < 0 ||
                                                data_addr.ss_family != data_from.ss_family)))
        return ft_err_set(err, -EINVAL,
                          "tcp.open: data_addr and data_from go together, numeric addresses of "
                          "one family");
    /* Across hosts: the client is a feeder of the gate of that name (a ring's predecessor,
     * one of an all-to-all's peers), which this process's own flow waits on. */
    const cJSON *rg = cJSON_GetObjectItemCaseSensitive(req, "ring_gate");
    struct ring_gate *gate = NULL;
    int slot = -1;
    if (rg) {
        double feeders = 0;
        const char *from = jsonutil_str(req, "gate_from");
        if (op != MIX_OP_COLLECTIVE || !cJSON_IsString(rg) || conns != 1 || !from ||
            !jsonutil_num(req, "gate_feeders", &feeders) || feeders != (int)feeders)
            return ft_err_set(err, -EINVAL,
                              "tcp.open: ring_gate is a string, with gate_feeders and gate_from, "
                              "for one connection of a collective");
        gate = ring_gate_get(rg->valuestring);
        if (!gate)
            return ft_err_set(err, -ENOSPC,
                              "tcp.open: ring_gate: an id of 1 to %d characters, and at most %d "
                              "gates at once",
                              RING_GATE_ID_MAX - 1, RING_GATE_MAX);
        slot = ring_gate_feed(gate, (int)feeders, from, (uint64_t)ring);
        if (slot < 0) {
            ring_gate_put(gate);
            if (slot == -EBUSY)
                return ft_err_set(err, slot,
                                  "tcp.open: gate %s has its feeders already, or one "
                                  "from %s",
                                  rg->valuestring, from);
            return ft_err_set(err, slot,
                              "tcp.open: gate %s: gate_feeders 1 to %d, the same "
                              "count and chunk as its other feeders' (from %s)",
                              rg->valuestring, RING_GATE_FEEDERS_MAX, from);
        }
    }
    int rc = agent_session_flow_add(s, "tcp.open", err);
    if (rc < 0) {
        ring_gate_put(gate);
        return rc;
    }
    struct strbuf note;
    strbuf_init(&note);
    /* Clamp to the agent's caps (a client cannot raise them) and say so. */
    if (cfg->max_streams > 0 && conns > cfg->max_streams) {
        strbuf_printf(&note, "%d connections capped at %d by the agent; ", (int)conns,
                      cfg->max_streams);
        conns = agent_clamp(resp, "connections", conns, cfg->max_streams);
    }
    if (cfg->max_rate_gbps > 0 && (rate <= 0 || rate > cfg->max_rate_gbps)) {
        strbuf_printf(&note,
                      "rate capped at %g Gb/s by the agent, shared by every session with this "
                      "key; ",
                      cfg->max_rate_gbps);
        rate = agent_clamp(resp, "rate_gbps", rate, cfg->max_rate_gbps);
    }
    if (cfg->max_duration_s > 0)
        strbuf_printf(&note, "data connections end after %g s (agent cap); ", cfg->max_duration_s);

    struct srv_flow *sf = xalloc_zero(1, sizeof(*sf));
    sf->op = (enum mix_op)op;
    sf->dir = (enum mix_dir)dir;
    sf->nconns = (int)conns;
    sf->chunk = (uint64_t)size;
    sf->kv_region = (uint64_t)region;
    sf->ring_chunk = (uint64_t)ring;
    sf->gate = gate;
    sf->gate_slot = slot;
    sf->rate_gbps = rate;
    sf->capped = cfg->max_rate_gbps > 0;
    /* Reads and sends of about 1 ms of a connection's rate (the client's, or the cap it is
     * clamped to) keep the pacing smooth; a rate far above what the path carries, or none,
     * reads and sends 4 MiB at a time. The size follows the rate alone, not where it came
     * from: a receiver's read size can move TCP's receive work between the two ends' CPUs
     * on lo (a socket its reader holds queues arriving segments to its backlog, processed by
     * the reader at release_sock, net/core/sock.c), so `fabtop serve` under its cap and
     * `fabtop sweep`'s uncapped agents read alike to measure the same path (with 64 KiB
     * reads under the cap `fabtop run` read 10-14% below the sweep on one pair, with reads
     * alike within 5%: bench/RESULTS.md, issue 16). */
    sf->io_chunk = BUF_BYTES;
    if (rate > 0) {
        double ms = rate * 1e9 / 8 / 1000 / (conns > 1 ? conns : 1);
        sf->io_chunk = ms < CAPPED_MIN ? CAPPED_MIN : ms > BUF_BYTES ? BUF_BYTES : (size_t)ms;
    }
    sf->max_duration_s = cfg->max_duration_s;
    sf->request_deadline_ns = (uint64_t)(deadline_ms * 1e6);
    sf->session = s;
    sf->client = da ? data_from : *agent_session_peer(s);
    randombytes_buf(sf->token, sizeof(sf->token));
    /* Listen on the address the client reached us at (or its data_addr), any port. */
    struct sockaddr_storage local;
    socklen_t ll = sizeof(local);
    if (da) {
        local = data_addr;
        ll = data_len;
    } else {
        agent_session_local(s, &local, &ll);
    }
    if (local.ss_family == AF_INET)
        ((struct sockaddr_in *)&local)->sin_port = 0;
    else
        ((struct sockaddr_in6 *)&local)->sin6_port = 0;
    sf->lfd = socket(local.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    double rcv = cfg->max_rate_gbps * 1e9 / 8 * 0.02;
    if (sf->lfd >= 0 && sf->capped && rcv < 4 * 1024 * 1024) {
        /* Under a low cap a small receive buffer (about 20 ms at the cap, set before listen
         * so the window scale fits it, tcp(7)) keeps what the client has in flight close
         * to what the agent reads. Above 1.6 Gb/s (4 MiB) the kernel's autotuning is left
         * alone, as an uncapped agent leaves it: a locked SO_RCVBUF changes the connection
         * itself (the sender's MSS is bounded by half the largest window it was offered,
         * tcp_bound_to_half_wnd in net/ipv4/tcp_output.c: 65483 bytes on lo against 32768
         * autotuned), so `fabtop run` against `fabtop serve` and `fabtop sweep`'s own agents
         * would measure different paths (bench/RESULTS.md, issue 16). */
        int rcvbuf = rcv < 64 * 1024 ? 64 * 1024 : (int)rcv;
        setsockopt(sf->lfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    }
    sf->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (sf->lfd < 0 || sf->stop_fd < 0 || bind(sf->lfd, (struct sockaddr *)&local, ll) < 0 ||
        listen(sf->lfd, 64) < 0) {
        int e = -errno;
        if (sf->lfd >= 0)
            close(sf->lfd);
        if (sf->stop_fd >= 0)
            close(sf->stop_fd);
        ring_gate_put(sf->gate);
        free(sf);
        strbuf_free(&note);
        if (da)
            return ft_err_set(err, e, "tcp.open: cannot listen at data_addr %s: %s%s", da,
                              strerror(-e),
                              e == -EADDRNOTAVAIL ? " (not an address of this agent)" : "");
        return ft_err_set(err, e, "tcp.open: cannot listen for data connections: %s", strerror(-e));
    }
    struct sockaddr_storage bound;
    socklen_t bl = sizeof(bound);
    getsockname(sf->lfd, (struct sockaddr *)&bound, &bl);
    int port = ntohs(bound.ss_family == AF_INET ? ((struct sockaddr_in *)&bound)->sin_port
                                                : ((struct sockaddr_in6 *)&bound)->sin6_port);
    if (pthread_create(&sf->acceptor, NULL, srv_acceptor, sf) == 0)
        sf->acceptor_started = true;
    struct srv_state *st = agent_session_state(s, &state_tag);
    if (!st) {
        st = xalloc_zero(1, sizeof(*st));
        pthread_mutex_init(&st->lock, NULL);
        agent_session_set_state(s, &state_tag, st, srv_state_free);
    }
    pthread_mutex_lock(&st->lock);
    sf->next = st->flows;
    st->flows = sf;
    pthread_mutex_unlock(&st->lock);
    char hex[2 * TCP_TOKEN + 1];
    sodium_bin2hex(hex, sizeof(hex), sf->token, TCP_TOKEN);
    cJSON_AddNumberToObject(resp, "port", port);
    cJSON_AddNumberToObject(resp, "conns", sf->nconns);
    cJSON_AddStringToObject(resp, "token", hex);
    cJSON_AddNumberToObject(resp, "rate_gbps", rate);
    cJSON_AddStringToObject(resp, "note", note.s);
    agent_session_log(s, "tcp: %s %s, %d connection%s on port %d", ops, dirs, (int)conns,
                      conns > 1 ? "s" : "", port);
    strbuf_free(&note);
    return 0;
}

/* {"type": "tcp.cpu"}: the scheduler times of this session's data-connection threads so far
 * (a live one's read now), as conditions.cpu has them: {"cpu": {...}}, or {"cpu": null}
 * when the kernel keeps none. What tells a client whether the peer's side was CPU-bound. */
static int handle_cpu(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)req;
    (void)err;
    struct flow_cpu cpu = {0};
    struct srv_state *st = agent_session_state(s, &state_tag);
    if (st) {
        pthread_mutex_lock(&st->lock);
        for (struct srv_flow *sf = st->flows; sf; sf = sf->next)
            for (size_t i = 0; i < sizeof(sf->conns) / sizeof(sf->conns[0]); i++) {
                const struct srv_conn *c = &sf->conns[i];
                int state = atomic_load_explicit(&c->cpu_state, memory_order_acquire);
                uint64_t r = 0, q = 0;
                if (state == 2 && c->cpu_ok)
                    flow_cpu_add(&cpu, c->wall_ns, c->run_ns, c->wait_ns);
                else if (state == 1 && c->sched0 && flow_sched_read(c->tid, &r, &q) && r >= c->r0 &&
                         q >= c->q0)
                    flow_cpu_add(&cpu, flow_now_ns() - c->t0_ns, r - c->r0, q - c->q0);
            }
        pthread_mutex_unlock(&st->lock);
    }
    if (cpu.workers)
        cJSON_AddItemToObject(resp, "cpu", flow_cpu_json(&cpu));
    else
        cJSON_AddNullToObject(resp, "cpu");
    return 0;
}

static const struct agent_handler tcp_open_handler = {"tcp.open", handle_open};
static const struct agent_handler tcp_cpu_handler = {"tcp.cpu", handle_cpu};
static const struct agent_handler *const tcp_handlers[] = {
    &tcp_open_handler, &tcp_cpu_handler, &tcp_path_counters_handler, &tcp_path_ttl_handler, NULL};

static const char *const *tcp_param_keys(enum mix_op op)
{
    static const char *const keys[] = {"congestion_control", NULL};
    static const char *const kv_keys[] = {"congestion_control",
                                          "engine",
                                          "layout",
                                          "layers",
                                          "pages",
                                          "page_tokens",
                                          "run_pages",
                                          "layers_per_block",
                                          "depth",
                                          "qps",
                                          "doorbell_batch",
                                          "arrival",
                                          NULL};
    static const char *const ring_keys[] = {
        "congestion_control", "collective", "ranks", "gate", "rank", "peer_rank", NULL};
    return op == MIX_OP_KV ? kv_keys : op == MIX_OP_COLLECTIVE ? ring_keys : keys;
}

const struct xport_ops xport_tcp = {
    .name = "tcp",
    .ops = (1u << MIX_OP_PINGPONG) | (1u << MIX_OP_STREAM) | (1u << MIX_OP_RR) | (1u << MIX_OP_KV) |
           (1u << MIX_OP_COLLECTIVE),
    .needs_peer = true,
    .available = tcp_available,
    .param_keys = tcp_param_keys,
    .validate = tcp_validate,
    .setup = tcp_setup,
    .start = tcp_start,
    .stop = tcp_stop,
    .teardown = tcp_teardown,
    .sample = tcp_sample,
    .conditions = tcp_conditions,
    .handlers = tcp_handlers,
};
