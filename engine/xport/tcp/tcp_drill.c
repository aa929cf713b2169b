/* tcp_drill: a drill's request/response lane over the TCP transport's wire format (the
 * greeting, token and request header that xport_tcp.c's agent side reads). */
#include "engine/xport/tcp/tcp_drill.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/jsonutil.h"

/* The TCP transport's wire format (xport_tcp.c). */
#define TD_MAGIC 0x46545450u /* "FTTP": request header */
#define TD_HELLO 0x4654484cu /* "FTHL": data connection greeting */
#define TD_HDR   16
#define TD_TOKEN 32
#define TD_MAX   (1ull << 30) /* a lane's largest message: the agent's (xport_tcp.c) */
#define TD_BUF   (4u << 20)   /* a lane's buffer: larger messages move through it in pieces */

struct tcp_drill_lane {
    int fd;
    uint64_t size, resp; /* the largest request; the response (echo: each request's size) */
    bool echo;
    char *buf;
    size_t cap; /* buf's bytes */
    /* a load stream */
    bool tx;
    double rate_bps;    /* tx paced at this many bit/s, 0 unpaced */
    uint64_t t0, moved; /* opened at, bytes moved since */
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Move n bytes on a non-blocking fd before deadline (ns): 0, -ETIMEDOUT, -ENODATA (EOF),
 * -errno. */
static int io_all(int fd, void *buf, size_t n, bool out, uint64_t deadline)
{
    char *p = buf;
    while (n) {
        ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (k == 0 && !out)
            return -ENODATA;
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -errno;
        uint64_t now = now_ns();
        if (now >= deadline)
            return -ETIMEDOUT;
        struct pollfd pf = {.fd = fd, .events = out ? POLLOUT : POLLIN};
        int ms = (int)((deadline - now + 999999) / 1000000);
        if (poll(&pf, 1, ms) < 0 && errno != EINTR)
            return -errno;
    }
    return 0;
}

/* Move n bytes through buf (cap bytes, sent again and again, or received over) before
 * deadline: io_all's results. */
static int io_pieces(int fd, char *buf, size_t cap, uint64_t n, bool out, uint64_t deadline)
{
    while (n) {
        size_t k = n > cap ? cap : (size_t)n;
        int rc = io_all(fd, buf, k, out, deadline);
        if (rc < 0)
            return rc;
        n -= k;
    }
    return 0;
}

/* The address this host sends from towards host (a connected UDP socket sends nothing), both
 * numeric, for a data path other than the control connection's. 0 or -errno with the line
 * (no route there now: -ENETUNREACH). */
static int data_path(const char *host, char *peer, size_t plen, char *from, size_t flen,
                     struct ft_err *err)
{
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *ai = NULL;
    int g = getaddrinfo(host, "9", &hints, &ai);
    if (g)
        return ft_err_set(err, -EHOSTUNREACH, "data peer %s: %s", host, gai_strerror(g));
    struct sockaddr_storage ss = {0}, src = {0};
    memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
    int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int rc = fd < 0 ? -errno : connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 ? -errno : 0;
    freeaddrinfo(ai);
    socklen_t sl = sizeof(src);
    if (rc == 0 && getsockname(fd, (struct sockaddr *)&src, &sl) < 0)
        rc = -errno;
    if (fd >= 0)
        close(fd);
    if (rc < 0)
        return ft_err_set(err, rc, "data peer %s: %s", host, strerror(-rc));
    channel_format_addr(&ss, false, peer, plen);
    channel_format_addr(&src, false, from, flen);
    return 0;
}

static int connect_data(const char *host, const char *from, int port, const uint8_t *token,
                        double uto_s, int timeout_ms, int *out, struct ft_err *err)
{
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
    struct addrinfo *ai;
    int g = getaddrinfo(host, ps, &hints, &ai);
    if (g)
        return ft_err_set(err, -EHOSTUNREACH, "%s: %s", host, gai_strerror(g));
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        freeaddrinfo(ai);
        return ft_err_set(err, -errno, "socket: %s", strerror(errno));
    }
    int one = 1;
    unsigned uto = (unsigned)(uto_s * 1000);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof(uto));
    uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000ull;
    int rc = 0;
    if (from) { /* from the address the agent was told to accept */
        struct addrinfo *la = NULL;
        if (getaddrinfo(from, NULL, &hints, &la) != 0 || !la)
            rc = -EADDRNOTAVAIL;
        else if (bind(fd, la->ai_addr, la->ai_addrlen) < 0)
            rc = -errno;
        if (la)
            freeaddrinfo(la);
    }
    if (rc == 0)
        rc = connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 ? -errno : 0;
    freeaddrinfo(ai);
    if (rc == -EINPROGRESS) {
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        rc = poll(&pf, 1, timeout_ms) == 1 ? 0 : -ETIMEDOUT;
        int e = 0;
        socklen_t l = sizeof(e);
        if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) == 0 && e)
            rc = -e;
    }
    uint32_t hello[2] = {htonl(TD_HELLO), 0};
    uint8_t ack = 0;
    if (rc == 0)
        rc = io_all(fd, hello, sizeof(hello), true, deadline);
    if (rc == 0)
        rc = io_all(fd, (void *)token, TD_TOKEN, true, deadline);
    if (rc == 0)
        rc = io_all(fd, &ack, 1, false, deadline);
    if (rc == 0 && ack != 1)
        rc = -EACCES;
    if (rc < 0) {
        close(fd);
        return ft_err_set(err, rc, "data connection to %s port %d: %s", host, port, strerror(-rc));
    }
    *out = fd;
    return 0;
}

/* tcp.open on ctl (op in direction dir, messages of size, the agent sending at rate_gbps in
 * an rx stream, the request deadline deadline_ms when not 0) and the one data connection. */
static int open_data(struct channel_conn *ctl, const char *data_host, enum mix_op op,
                     enum mix_dir dir, uint64_t size, double rate_gbps, double user_timeout_s,
                     int timeout_ms, int deadline_ms, int *fd, struct ft_err *err)
{
    char peer[64] = "", from[64] = "";
    if (data_host) {
        int rc = data_path(data_host, peer, sizeof(peer), from, sizeof(from), err);
        if (rc < 0)
            return rc;
    }
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "tcp.open");
    if (data_host) {
        cJSON_AddStringToObject(req, "data_addr", peer);
        cJSON_AddStringToObject(req, "data_from", from);
    }
    cJSON_AddStringToObject(req, "op", mix_op_str(op));
    cJSON_AddStringToObject(req, "direction", mix_dir_str(dir));
    cJSON_AddNumberToObject(req, "conns", 1);
    cJSON_AddNumberToObject(req, "size", (double)size);
    cJSON_AddNumberToObject(req, "rate_gbps", rate_gbps);
    cJSON_AddNumberToObject(req, "user_timeout_ms", user_timeout_s * 1000);
    /* The agent answers no request stalled past it (the lane has abandoned it by then). */
    if (deadline_ms > 0)
        cJSON_AddNumberToObject(req, "request_deadline_ms", deadline_ms);
    cJSON *r = NULL;
    int rc = channel_request(ctl, req, &r, timeout_ms, err);
    if (rc < 0)
        return rc;
    double port = 0;
    const char *tok = jsonutil_str(r, "token");
    uint8_t token[TD_TOKEN];
    size_t toklen = 0;
    if (!jsonutil_num(r, "port", &port) || port < 1 || port > 65535 || !tok ||
        sodium_hex2bin(token, TD_TOKEN, tok, strlen(tok), NULL, &toklen, NULL) ||
        toklen != TD_TOKEN) {
        cJSON_Delete(r);
        return ft_err_set(err, -EPROTO, "the agent's tcp.open reply is malformed");
    }
    cJSON_Delete(r);
    return connect_data(data_host ? peer : channel_peer_host(ctl), data_host ? from : NULL,
                        (int)port, token, user_timeout_s, timeout_ms, fd, err);
}

/* The lane around fd (closed on failure), with a buffer of len bytes. */
static int new_lane(int fd, size_t len, struct tcp_drill_lane **out, struct ft_err *err)
{
    struct tcp_drill_lane *l = calloc(1, sizeof(*l));
    char *buf = malloc(len);
    if (!l || !buf) {
        free(l);
        free(buf);
        close(fd);
        return ft_err_set(err, -ENOMEM, "out of memory");
    }
    memset(buf, 0, len);
    l->fd = fd;
    l->buf = buf;
    l->cap = len;
    *out = l;
    return 0;
}

int tcp_drill_open(struct channel_conn *ctl, const char *data_host, enum mix_op op, uint64_t size,
                   uint64_t resp, double user_timeout_s, int timeout_ms,
                   struct tcp_drill_lane **out, struct ft_err *err)
{
    *out = NULL;
    bool echo = !resp || op == MIX_OP_PINGPONG;
    if (echo)
        resp = size;
    if ((op != MIX_OP_PINGPONG && op != MIX_OP_RR) || size < TD_HDR || resp < TD_HDR ||
        size > TD_MAX || resp > TD_MAX)
        return ft_err_set(err, -EINVAL,
                          "a drill lane runs pingpong or rr of %d B to 1 GiB each way", TD_HDR);
    uint64_t most = size > resp ? size : resp;
    int fd = -1;
    int rc = open_data(ctl, data_host, op, MIX_DIR_TX, most > TD_BUF ? TD_BUF : most, 0,
                       user_timeout_s, timeout_ms, timeout_ms, &fd, err);
    if (rc == 0)
        rc = new_lane(fd, most > TD_BUF ? TD_BUF : most, out, err);
    if (rc == 0) {
        (*out)->size = size;
        (*out)->resp = resp;
        (*out)->echo = echo;
    }
    return rc;
}

int tcp_drill_stream_open(struct channel_conn *ctl, const char *data_host, enum mix_dir dir,
                          uint64_t chunk, double rate_gbps, double user_timeout_s, int timeout_ms,
                          struct tcp_drill_lane **out, struct ft_err *err)
{
    *out = NULL;
    if ((dir != MIX_DIR_TX && dir != MIX_DIR_RX) || chunk < 1 || chunk > TD_BUF)
        return ft_err_set(err, -EINVAL,
                          "a drill's load streams one way (tx or rx) in chunks of 1 B to 4 MiB");
    int fd = -1;
    int rc = open_data(ctl, data_host, MIX_OP_STREAM, dir, chunk, dir == MIX_DIR_RX ? rate_gbps : 0,
                       user_timeout_s, timeout_ms, 0, &fd, err);
    if (rc == 0)
        rc = new_lane(fd, chunk, out, err);
    if (rc == 0) {
        (*out)->tx = dir == MIX_DIR_TX;
        (*out)->size = chunk;
        (*out)->rate_bps = dir == MIX_DIR_TX ? rate_gbps * 1e9 : 0;
        (*out)->t0 = now_ns();
    }
    return rc;
}

int tcp_drill_stream(struct tcp_drill_lane *l, int ms, uint64_t *bytes, struct ft_err *err)
{
    *bytes = 0;
    uint64_t until = now_ns() + (uint64_t)ms * 1000000ull;
    for (;;) {
        uint64_t now = now_ns();
        if (now >= until)
            return 0;
        /* Paced (tx at rate_bps): no more than the rate allows since the lane opened. */
        if (l->rate_bps > 0) {
            double allowed = l->rate_bps / 8 * ((double)(now - l->t0) / 1e9);
            if ((double)l->moved >= allowed) {
                uint64_t wait = (uint64_t)(((double)l->moved - allowed) * 8 / l->rate_bps * 1e9);
                struct timespec ts = {0, (long)(wait < 1000000 ? wait + 100000 : 1000000)};
                nanosleep(&ts, NULL);
                continue;
            }
        }
        ssize_t k =
            l->tx ? send(l->fd, l->buf, l->size, MSG_NOSIGNAL) : recv(l->fd, l->buf, l->size, 0);
        if (k > 0) {
            *bytes += (uint64_t)k;
            l->moved += (uint64_t)k;
            continue;
        }
        if (k == 0)
            return ft_err_set(err, -ENODATA, "the peer closed the connection");
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return ft_err_set(err, -errno, "%s", strerror(errno));
        struct pollfd pf = {.fd = l->fd, .events = l->tx ? POLLOUT : POLLIN};
        int left = (int)((until - now + 999999) / 1000000);
        if (poll(&pf, 1, left) < 0 && errno != EINTR)
            return ft_err_set(err, -errno, "%s", strerror(errno));
    }
}

int tcp_drill_request(struct tcp_drill_lane *l, uint64_t size, int timeout_ms, uint64_t *rtt_ns,
                      struct ft_err *err)
{
    if (!size)
        size = l->size;
    if (size < TD_HDR || size > l->size)
        return ft_err_set(err, -EINVAL, "a request of %llu B on a lane of %d B to %llu B",
                          (unsigned long long)size, TD_HDR, (unsigned long long)l->size);
    uint64_t resp = l->echo ? size : l->resp;
    size_t cap = l->cap;
    uint32_t h[4] = {htonl(TD_MAGIC), htonl((uint32_t)size), htonl((uint32_t)resp), 0};
    uint64_t t0 = now_ns(), deadline = t0 + (uint64_t)timeout_ms * 1000000ull;
    /* The header leads the first piece; the pieces after it carry the buffer as it is. */
    memcpy(l->buf, h, sizeof(h));
    size_t first = size > cap ? cap : (size_t)size;
    int rc = io_all(l->fd, l->buf, first, true, deadline);
    if (rc == 0)
        rc = io_pieces(l->fd, l->buf, cap, size - first, true, deadline);
    if (rc == 0)
        rc = io_pieces(l->fd, l->buf, cap, resp, false, deadline);
    if (rc == 0) {
        *rtt_ns = now_ns() - t0;
        return 0;
    }
    if (rc == -ETIMEDOUT)
        return ft_err_set(err, rc, "no response within %d ms", timeout_ms);
    if (rc == -ENODATA)
        return ft_err_set(err, rc, "the peer closed the connection");
    return ft_err_set(err, rc, "%s", strerror(-rc));
}

void tcp_drill_close(struct tcp_drill_lane *l)
{
    if (!l)
        return;
    close(l->fd);
    free(l->buf);
    free(l);
}
