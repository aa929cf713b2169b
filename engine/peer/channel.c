/* channel: the control channel's connections: framing with hard size limits and per-frame
 * MACs, I/O with deadlines (a silent or slow peer cannot hold a thread forever), sending,
 * receiving and refusing, addresses. The protocol is described in channel.h; keys are in
 * channel_key.c, the handshake in channel_handshake.c, channel_client.c and channel_accept.c. */
#include "engine/peer/channel_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/jsonutil.h"

/* ---- small helpers ---- */

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static int sodium_status;

static void do_sodium_init(void)
{
    sodium_status = sodium_init() < 0 ? -1 : 0;
}

int channel_crypto_ready(struct ft_err *err)
{
    pthread_once(&sodium_once, do_sodium_init);
    if (sodium_status < 0)
        return ft_err_set(err, -ENOSYS, "libsodium failed to initialise");
    return 0;
}

int64_t channel_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t deadline_after(int ms)
{
    return ms < 0 ? -1 : channel_now_ms() + ms;
}

void channel_put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

void channel_put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

void channel_put_u64(unsigned char *p, uint64_t v)
{
    channel_put_u32(p, (uint32_t)(v >> 32));
    channel_put_u32(p + 4, (uint32_t)v);
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- I/O with deadlines (deadline < 0: none) ---- */

/* Wait until fd has events (or an error/hangup). -ETIMEDOUT, -ECANCELED or -errno. */
int channel_io_wait(int fd, short events, int64_t deadline, int cancel_fd)
{
    for (;;) {
        struct pollfd p[2] = {{.fd = fd, .events = events}, {.fd = cancel_fd, .events = POLLIN}};
        int timeout = -1;
        if (deadline >= 0) {
            int64_t left = deadline - channel_now_ms();
            if (left <= 0)
                return -ETIMEDOUT;
            timeout = left > 60000 ? 60000 : (int)left;
        }
        int n = poll(p, cancel_fd >= 0 ? 2 : 1, timeout);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (cancel_fd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
            return -ECANCELED;
        if (p[0].revents)
            return 0;
    }
}

/* Read exactly n bytes. -ECONNRESET when the peer closed. */
static int io_read(int fd, void *buf, size_t n, int64_t deadline, int cancel_fd)
{
    unsigned char *p = buf;
    while (n) {
        ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
        if (r > 0) {
            p += r;
            n -= (size_t)r;
            continue;
        }
        if (r == 0)
            return -ECONNRESET;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return errno == EPIPE ? -ECONNRESET : -errno;
        int rc = channel_io_wait(fd, POLLIN, deadline, cancel_fd);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int io_write(int fd, const void *buf, size_t n, int64_t deadline)
{
    const unsigned char *p = buf;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w >= 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return errno == EPIPE ? -ECONNRESET : -errno;
        int rc = channel_io_wait(fd, POLLOUT, deadline, -1);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- frames ---- */

static void frame_mac(const unsigned char key[CHANNEL_KEY_BYTES], char dir, uint64_t seq, int type,
                      const unsigned char *payload, size_t plen,
                      unsigned char out[CHANNEL_MAC_BYTES])
{
    unsigned char hdr[14];
    hdr[0] = (unsigned char)dir;
    channel_put_u64(hdr + 1, seq);
    hdr[9] = (unsigned char)type;
    channel_put_u32(hdr + 10, (uint32_t)plen);
    crypto_auth_hmacsha512256_state st;
    crypto_auth_hmacsha512256_init(&st, key, CHANNEL_KEY_BYTES);
    crypto_auth_hmacsha512256_update(&st, hdr, sizeof(hdr));
    crypto_auth_hmacsha512256_update(&st, payload, plen);
    crypto_auth_hmacsha512256_final(&st, out);
    sodium_memzero(&st, sizeof(st));
}

static char send_dir(const struct channel_conn *c)
{
    return c->is_client ? 'C' : 'A';
}

static const char *peer_role(const struct channel_conn *c)
{
    return c->is_client ? "agent" : "client";
}

int channel_write_frame(struct channel_conn *c, int type, const void *payload, size_t plen,
                        int64_t deadline, struct ft_err *err)
{
    size_t limit = c->send_mac ? CHANNEL_MAX_PAYLOAD : CHANNEL_MAX_HANDSHAKE_FRAME - 1;
    if (plen > limit)
        return ft_err_set(err, -EMSGSIZE, "frame payload of %zu bytes exceeds the %zu-byte limit",
                          plen, limit);
    size_t mac = c->send_mac ? CHANNEL_MAC_BYTES : 0;
    size_t total = 4 + 1 + plen + mac;
    unsigned char *buf = malloc(total);
    if (!buf)
        return ft_err_set(err, -ENOMEM, "out of memory");
    channel_put_u32(buf, (uint32_t)(1 + plen + mac));
    buf[4] = (unsigned char)type;
    if (plen)
        memcpy(buf + 5, payload, plen);
    if (mac)
        frame_mac(c->skey, send_dir(c), c->send_seq, type, buf + 5, plen, buf + 5 + plen);
    int rc = io_write(c->fd, buf, total, deadline);
    free(buf);
    if (rc < 0)
        return ft_err_set(err, rc, "cannot send to the %s: %s", peer_role(c), strerror(-rc));
    if (mac)
        c->send_seq++;
    return 0;
}

/* Read one frame: wait until wait_deadline for it to start, then until frame_deadline
 * (computed from frame_ms once it started, or given absolutely when frame_ms < -1) for the
 * rest. Errors: -ETIMEDOUT nothing arrived, -ETIME cut short, -ECONNRESET, -ECANCELED,
 * -EMSGSIZE, -EBADMSG. */
int channel_read_frame(struct channel_conn *c, size_t limit, int64_t wait_deadline, int frame_ms,
                       int *type, char **payload, size_t *plen, struct ft_err *err)
{
    *payload = NULL;
    int rc = channel_io_wait(c->fd, POLLIN, wait_deadline, c->cancel_fd);
    if (rc == -ETIMEDOUT)
        return ft_err_set(err, rc, "no frame from the %s in time", peer_role(c));
    if (rc == -ECANCELED)
        return ft_err_set(err, rc, "cancelled");
    if (rc < 0)
        return ft_err_set(err, rc, "connection to the %s failed: %s", peer_role(c), strerror(-rc));
    int64_t fdl = frame_ms < 0 ? wait_deadline : channel_now_ms() + frame_ms;
    unsigned char hdr[4];
    rc = io_read(c->fd, hdr, sizeof(hdr), fdl, c->cancel_fd);
    if (rc == -ETIMEDOUT)
        rc = -ETIME;
    if (rc == -ECONNRESET)
        return ft_err_set(err, rc, "the %s closed the connection", peer_role(c));
    if (rc == -ETIME)
        return ft_err_set(err, rc, "frame from the %s not completed in time", peer_role(c));
    if (rc < 0)
        return ft_err_set(err, rc, "cannot read from the %s: %s", peer_role(c), strerror(-rc));
    uint32_t len = get_u32(hdr);
    size_t mac = c->recv_mac ? CHANNEL_MAC_BYTES : 0;
    if (len > limit)
        return ft_err_set(err, -EMSGSIZE, "frame of %u bytes exceeds the %zu-byte%s limit", len,
                          limit, c->recv_mac ? "" : " handshake");
    if (len < 1 + mac)
        return ft_err_set(err, -EBADMSG, "frame of %u bytes is too short", len);
    unsigned char *buf = malloc((size_t)len + 1);
    if (!buf)
        return ft_err_set(err, -ENOMEM, "out of memory");
    rc = io_read(c->fd, buf, len, fdl, c->cancel_fd);
    if (rc < 0) {
        free(buf);
        if (rc == -ETIMEDOUT || rc == -ETIME)
            return ft_err_set(err, -ETIME, "frame from the %s not completed in time", peer_role(c));
        if (rc == -ECONNRESET)
            return ft_err_set(err, rc, "the %s closed the connection", peer_role(c));
        if (rc == -ECANCELED)
            return ft_err_set(err, rc, "cancelled");
        return ft_err_set(err, rc, "cannot read from the %s: %s", peer_role(c), strerror(-rc));
    }
    size_t n = len - 1 - mac;
    if (mac) {
        unsigned char want[CHANNEL_MAC_BYTES];
        frame_mac(c->skey, c->is_client ? 'A' : 'C', c->recv_seq, buf[0], buf + 1, n, want);
        int bad = sodium_memcmp(want, buf + 1 + n, CHANNEL_MAC_BYTES);
        sodium_memzero(want, sizeof(want));
        if (bad) {
            free(buf);
            return ft_err_set(err, -EBADMSG,
                              "frame %llu from the %s failed authentication (bad MAC: tampered, "
                              "replayed or reordered)",
                              (unsigned long long)c->recv_seq, peer_role(c));
        }
        c->recv_seq++;
    }
    *type = buf[0];
    memmove(buf, buf + 1, n);
    buf[n] = '\0';
    *payload = (char *)buf;
    *plen = n;
    return 0;
}

/* ---- connections ---- */

struct channel_conn *channel_conn_new(int fd, bool is_client)
{
    struct channel_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->fd = fd;
    c->is_client = is_client;
    c->cancel_fd = -1;
    pthread_mutex_init(&c->mu, NULL);
    socklen_t sl = sizeof(c->peer);
    if (getpeername(fd, (struct sockaddr *)&c->peer, &sl) == 0) {
        channel_format_addr(&c->peer, false, c->host, sizeof(c->host));
        channel_format_addr(&c->peer, true, c->desc, sizeof(c->desc));
    }
    return c;
}

/* Free c but leave its fd open. */
void channel_conn_release(struct channel_conn *c)
{
    if (!c)
        return;
    sodium_memzero(c->skey, sizeof(c->skey));
    cJSON_Delete(c->info);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void channel_set_cancel_fd(struct channel_conn *c, int cancel_fd)
{
    c->cancel_fd = cancel_fd;
}

int channel_conn_fd(const struct channel_conn *c)
{
    return c->fd;
}

const char *channel_peer_host(const struct channel_conn *c)
{
    return c->host;
}

const char *channel_peer_name(const struct channel_conn *c)
{
    return c->name[0] ? c->name : c->host;
}

const char *channel_peer_desc(const struct channel_conn *c)
{
    return c->desc;
}

const cJSON *channel_peer_info(const struct channel_conn *c)
{
    return c->info;
}

const struct sockaddr_storage *channel_peer_addr(const struct channel_conn *c)
{
    return &c->peer;
}

int channel_send(struct channel_conn *c, int type, const void *payload, size_t len,
                 struct ft_err *err)
{
    return channel_write_frame(c, type, payload, len, deadline_after(SEND_TIMEOUT), err);
}

int channel_send_json(struct channel_conn *c, int type, const cJSON *j, struct ft_err *err)
{
    char *text = cJSON_PrintUnformatted(j);
    if (!text)
        return ft_err_set(err, -ENOMEM, "out of memory");
    int rc = channel_send(c, type, text, strlen(text), err);
    cJSON_free(text);
    return rc;
}

int channel_recv(struct channel_conn *c, int *type, char **payload, size_t *len, int wait_ms,
                 int frame_ms, struct ft_err *err)
{
    return channel_read_frame(c, CHANNEL_MAX_FRAME, deadline_after(wait_ms),
                              frame_ms > 0 ? frame_ms : SEND_TIMEOUT, type, payload, len, err);
}

static char *error_payload(const char *code, const char *msg, int retry_ms, size_t *len)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "code", code);
    cJSON_AddStringToObject(j, "message", msg);
    cJSON_AddNumberToObject(j, "version", CHANNEL_VERSION);
    if (retry_ms > 0)
        cJSON_AddNumberToObject(j, "retry_ms", retry_ms);
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    *len = text ? strlen(text) : 0;
    return text;
}

int channel_refuse(struct channel_conn *c, const char *code, const char *msg, int retry_ms)
{
    size_t n;
    char *text = error_payload(code, msg, retry_ms, &n);
    if (!text)
        return -ENOMEM;
    int rc = channel_write_frame(c, CHANNEL_T_ERROR, text, n, deadline_after(2000), NULL);
    cJSON_free(text);
    return rc;
}

int channel_refuse_fd(int fd, const char *code, const char *msg, int retry_ms)
{
    struct channel_conn c = {.fd = fd, .cancel_fd = -1};
    size_t n;
    char *text = error_payload(code, msg, retry_ms, &n);
    if (!text)
        return -ENOMEM;
    int rc = channel_write_frame(&c, CHANNEL_T_ERROR, text, n, channel_now_ms(),
                                 NULL); /* never blocks */
    cJSON_free(text);
    return rc;
}

void channel_drain(int fd, int ms, int cancel_fd)
{
    shutdown(fd, SHUT_WR);
    int64_t deadline = channel_now_ms() + ms;
    char scratch[4096];
    for (;;) {
        if (channel_io_wait(fd, POLLIN, deadline, cancel_fd) < 0)
            return;
        ssize_t r = recv(fd, scratch, sizeof(scratch), MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
            return;
    }
}

/* ---- addresses ---- */

int channel_split_host_port(const char *s, uint16_t default_port, char *host, size_t hostlen,
                            uint16_t *port, struct ft_err *err)
{
    const char *h = s, *p = NULL;
    size_t hl;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || (close[1] && close[1] != ':'))
            return ft_err_set(err, -EINVAL, "bad address '%s': expected [IPv6]:PORT", s);
        h = s + 1;
        hl = (size_t)(close - h);
        if (close[1] == ':')
            p = close + 2;
    } else {
        const char *colon = strchr(s, ':');
        if (colon && !strchr(colon + 1, ':')) {
            hl = (size_t)(colon - s);
            p = colon + 1;
        } else {
            hl = strlen(s); /* no port, or a bare IPv6 literal */
        }
    }
    if (hl >= hostlen)
        return ft_err_set(err, -EINVAL, "bad address '%s': host name too long", s);
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = default_port;
    if (p) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (!*p || *end || errno || v > 65535 || *p == '-' || *p == '+')
            return ft_err_set(err, -EINVAL, "bad port '%s' in '%s': expected 0 to 65535", p, s);
        *port = (uint16_t)v;
    }
    return 0;
}

void channel_format_addr(const struct sockaddr_storage *ss, bool with_port, char *buf, size_t len)
{
    char a[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    bool v6 = false;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
        port = ntohs(s4->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
        if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
            inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], a, sizeof(a));
        } else {
            inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
            v6 = true;
        }
        port = ntohs(s6->sin6_port);
    }
    if (!with_port)
        snprintf(buf, len, "%s", a);
    else
        snprintf(buf, len, v6 ? "[%s]:%u" : "%s:%u", a, port);
}
