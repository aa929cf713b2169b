/* test_ctl: the control channel and the agent over real sockets on 127.0.0.1 and ::1, in
 * process: sessions, every refusal (wrong key, garbage, oversized, version, bad MAC, replay,
 * reflection, silent and slow clients, allowlist, busy) with its exact text, while a
 * legitimate client keeps being served; handlers and their state; stopping; keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctltest.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"

/* ---- tests: sessions ---- */

static void test_session_ipv4(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL, "127.0.0.1", NULL);
    struct channel_conn *c = must_connect(f->hp, &f->key);
    assert_string_equal(channel_peer_host(c), "127.0.0.1");
    char me[256] = "";
    gethostname(me, sizeof(me) - 1);
    assert_string_equal(channel_peer_name(c), me);
    const cJSON *caps = cJSON_GetObjectItem(channel_peer_info(c), "caps");
    assert_int_equal(cJSON_GetObjectItem(caps, "max_sessions")->valueint, AGENT_DEF_MAX_SESSIONS);
    assert_true(cJSON_GetObjectItem(caps, "max_rate_gbps")->valuedouble == AGENT_DEF_MAX_RATE_GBPS);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(channel_peer_info(c), "client")),
                        "127.0.0.1");

    struct ft_err err = {0};
    for (int i = 0; i < 50; i++)
        assert_int_equal(echo_n(c, i, &err), 0);

    /* info is hello again */
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    cJSON_AddStringToObject(req, "type", "info");
    assert_int_equal(channel_request(c, req, &resp, 2000, &err), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(resp, "host")), me);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(resp, "ok")));
    cJSON_Delete(resp);

    /* An unknown request is refused; the session goes on. */
    req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "nosuch");
    assert_int_equal(channel_request(c, req, &resp, 2000, &err), -EOPNOTSUPP);
    char want[256];
    snprintf(want, sizeof(want), "peer %s: unknown request type 'nosuch'", f->hp);
    assert_string_equal(err.msg, want);
    assert_null(resp);
    ft_err_clear(&err);
    assert_int_equal(echo_n(c, 7, &err), 0);

    /* A large echo fits; a request beyond the frame limit is refused by the client itself. */
    char *big = malloc(70000);
    memset(big, 'x', 60000);
    big[60000] = '\0';
    req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "echo");
    cJSON_AddStringToObject(req, "data", big);
    assert_int_equal(channel_request(c, req, &resp, 2000, &err), 0);
    assert_int_equal(strlen(cJSON_GetStringValue(cJSON_GetObjectItem(resp, "data"))), 60000);
    cJSON_Delete(resp);
    memset(big, 'x', 69999);
    big[69999] = '\0';
    req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "echo");
    cJSON_AddStringToObject(req, "data", big);
    assert_int_equal(channel_request(c, req, &resp, 2000, &err), -EMSGSIZE);
    snprintf(want, sizeof(want), "peer %s: request of ", f->hp);
    assert_true(strstr(err.msg, want) == err.msg);
    assert_non_null(strstr(err.msg, " bytes exceeds the 65503-byte limit"));
    free(big);
    ft_err_clear(&err);
    assert_int_equal(echo_n(c, 8, &err), 0);

    channel_close(c);
    assert_true(log_wait(&f->log, "started (1 of 8 sessions)", 2000));
    assert_true(log_wait(&f->log, "57 requests: bye", 2000));
    fx_free(f);
}

static void test_session_ipv6(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL, "::1", NULL);
    assert_string_equal(agent_listen_desc(f->a), f->hp);
    struct channel_conn *c = must_connect(f->hp, &f->key);
    assert_string_equal(channel_peer_host(c), "::1");
    struct ft_err err = {0};
    assert_int_equal(echo_n(c, 1, &err), 0);
    channel_close(c);
    /* A bare IPv6 literal takes the default port: nothing listens on 7470 here, or it is
     * some other agent; either way the address form parses. */
    char host[64];
    uint16_t port;
    assert_int_equal(channel_split_host_port("::1", 7470, host, sizeof(host), &port, &err), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 7470);
    fx_free(f);
}

static void test_host_port_forms(void **state)
{
    (void)state;
    char host[64];
    uint16_t port;
    struct ft_err err = {0};
    assert_int_equal(channel_split_host_port("node7", 7470, host, sizeof(host), &port, &err), 0);
    assert_string_equal(host, "node7");
    assert_int_equal(port, 7470);
    assert_int_equal(channel_split_host_port("node7:9000", 7470, host, sizeof(host), &port, &err),
                     0);
    assert_string_equal(host, "node7");
    assert_int_equal(port, 9000);
    assert_int_equal(channel_split_host_port("[fd00::7]:9001", 1, host, sizeof(host), &port, &err),
                     0);
    assert_string_equal(host, "fd00::7");
    assert_int_equal(port, 9001);
    assert_int_equal(channel_split_host_port("[::1]", 7470, host, sizeof(host), &port, &err), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(channel_split_host_port(":7471", 7470, host, sizeof(host), &port, &err), 0);
    assert_string_equal(host, "");
    assert_int_equal(port, 7471);
    assert_int_equal(channel_split_host_port("h:70000", 1, host, sizeof(host), &port, &err),
                     -EINVAL);
    assert_string_equal(err.msg, "bad port '70000' in 'h:70000': expected 0 to 65535");
    ft_err_clear(&err);
    assert_int_equal(channel_split_host_port("[::1", 1, host, sizeof(host), &port, &err), -EINVAL);
    assert_string_equal(err.msg, "bad address '[::1': expected [IPv6]:PORT");
    ft_err_clear(&err);
    assert_int_equal(channel_split_host_port("h:", 1, host, sizeof(host), &port, &err), -EINVAL);

    /* Nothing listening: refused, with the peer named. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&s4, sizeof(s4)), 0);
    uint16_t p = local_port(fd);
    close(fd); /* bound, never listened, now closed: connections are refused */
    char hp[64], want[200];
    snprintf(hp, sizeof(hp), "127.0.0.1:%u", p);
    struct channel_key k;
    channel_key_random(&k);
    struct channel_conn *c = NULL;
    ft_err_clear(&err);
    assert_int_equal(channel_connect(hp, 7470, &k, 1000, &c, &err), -ECONNREFUSED);
    snprintf(want, sizeof(want), "peer %s: connection refused (is 'fabtop serve' running there?)",
             hp);
    assert_string_equal(err.msg, want);
    assert_null(c);
}

/* ---- tests: refusals, each while a legitimate client keeps going ---- */

static void test_wrong_key(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL, "127.0.0.1", NULL);
    struct bg *b = bg_start(f);
    struct channel_key other;
    channel_key_random(&other);
    struct channel_conn *c = NULL;
    struct ft_err err = {0};
    for (int i = 0; i < 3; i++) {
        ft_err_clear(&err);
        assert_int_equal(channel_connect(f->hp, 0, &other, 2000, &c, &err), -EACCES);
        char want[200];
        snprintf(want, sizeof(want), "peer %s: authentication failed: the keys differ", f->hp);
        assert_string_equal(err.msg, want);
        assert_null(c);
        bg_progress(b);
    }
    assert_true(log_wait(&f->log, ": authentication failed: the keys differ", 2000));
    assert_true(log_has(&f->log, "refused 127.0.0.1 port "));
    /* Nothing about either key in what anybody printed. */
    char hex[65], fp[17];
    const struct channel_key *keys[] = {&f->key, &other};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 32; i++)
            snprintf(hex + 2 * i, 3, "%02x", keys[k]->k[i]);
        hex[8] = '\0';
        channel_key_fingerprint(keys[k], fp);
        fp[8] = '\0';
        assert_false(log_has(&f->log, hex));
        assert_false(log_has(&f->log, fp));
        assert_null(strstr(err.msg, hex));
        assert_null(strstr(err.msg, fp));
    }
    bg_stop(b);
    fx_free(f);
}

static void test_garbage(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL, "127.0.0.1", NULL);
    struct bg *b = bg_start(f);

    int fd = raw_connect(AF_INET, NULL, f->port);
    const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    raw_send(fd, http, strlen(http));
    expect_refusal(fd, "toolarge",
                   "frame of 1195725856 bytes exceeds the 1024-byte handshake limit");
    close(fd);
    bg_progress(b);

    fd = raw_connect(AF_INET, NULL, f->port);
    raw_send(fd, "\0\0\0\3xyz", 7);
    expect_refusal(fd, "malformed", "expected a hello frame, got frame type 120");
    close(fd);

    fd = raw_connect(AF_INET, NULL, f->port);
    raw_send(fd, "\0\0\0\0", 4);
    expect_refusal(fd, "malformed", "frame of 0 bytes is too short");
    close(fd);

    fd = raw_connect(AF_INET, NULL, f->port);
    raw_frame(fd, CHANNEL_T_HELLO, "{not json", 9);
    expect_refusal(fd, "malformed", "malformed hello: not a JSON object");
    close(fd);
    bg_progress(b);

    fd = raw_connect(AF_INET, NULL, f->port);
    const char *h = hello_json("iperf3", 1, "client");
    raw_frame(fd, CHANNEL_T_HELLO, h, strlen(h));
    expect_refusal(fd, "malformed", "malformed hello: not a fabtop-ctl client");
    close(fd);

    fd = raw_connect(AF_INET, NULL, f->port);
    h = hello_json("fabtop-ctl", 1, "agent");
    raw_frame(fd, CHANNEL_T_HELLO, h, strlen(h));
    expect_refusal(fd, "malformed", "malformed hello: role must be 'client'");
    close(fd);

    /* A good hello, then a proof of the wrong size. */
    fd = raw_connect(AF_INET, NULL, f->port);
    h = hello_json("fabtop-ctl", 1, "client");
    raw_frame(fd, CHANNEL_T_HELLO, h, strlen(h));
    char buf[1024];
    int type;
    assert_true(raw_read_frame(fd, &type, buf, sizeof(buf), 2000) > 0);
    assert_int_equal(type, CHANNEL_T_HELLO);
    assert_non_null(strstr(buf, "\"role\":\"agent\""));
    raw_frame(fd, CHANNEL_T_AUTH, "12345", 5);
    expect_refusal(fd, "malformed",
                   "expected the client's proof (32 bytes), got frame type 2 with 5 bytes");
    close(fd);

    /* Random binary, and a client that hangs up mid-frame. */
    for (int i = 0; i < 20; i++) {
        unsigned char junk[64];
        for (size_t k = 0; k < sizeof(junk); k++)
            junk[k] = (unsigned char)rand();
        junk[0] = 0; /* keep the length small enough to be read and judged */
        fd = raw_connect(AF_INET, NULL, f->port);
        raw_send(fd, junk, sizeof(junk));
        if (i % 2)
            close(fd);
        else {
            raw_read_frame(fd, &type, buf, sizeof(buf), 2000);
            close(fd);
        }
    }
    bg_progress(b);
    assert_true(log_wait(&f->log, "frame of 1195725856 bytes exceeds", 2000));
    bg_stop(b);
    /* The first three refusals of an address in a log window get a line each, the other
     * 24 one summary (written at the latest when the agent stops), with the last reason. */
    fx_stop(f);
    assert_true(log_has(&f->log, "expected a hello frame, got frame type 120"));
    assert_true(log_has(&f->log, ": frame of 0 bytes is too short"));
    assert_false(log_has(&f->log, "malformed hello: not a JSON object"));
    assert_true(log_has(&f->log, "refused 24 more connections from 127.0.0.1 in the last 10 s: "));
    fx_free(f);
}

static void test_version_mismatch_agent(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL, "127.0.0.1", NULL);
    struct bg *b = bg_start(f);
    int fd = raw_connect(AF_INET, NULL, f->port);
    const char *h = hello_json("fabtop-ctl", 2, "client");
    raw_frame(fd, CHANNEL_T_HELLO, h, strlen(h));
    expect_refusal(
        fd, "version",
        "version mismatch: this agent speaks fabtop-ctl version 1, the client version 2");
    close(fd);
    bg_progress(b);
    assert_true(
        log_wait(&f->log, "version mismatch: this agent speaks fabtop-ctl version 1", 2000));
    bg_stop(b);
    fx_free(f);
}

/* A fake agent for the client's side of failures. */
enum fake_mode { FAKE_V2_HELLO, FAKE_V3_ERROR, FAKE_SILENT };

struct fake {
    int lfd;
    uint16_t port;
    enum fake_mode mode;
    pthread_t t;
};

static void *fake_main(void *arg)
{
    struct fake *fk = arg;
    int fd = accept(fk->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char buf[2048];
    int type;
    if (fk->mode != FAKE_SILENT && raw_read_frame(fd, &type, buf, sizeof(buf), 3000) > 0) {
        if (fk->mode == FAKE_V2_HELLO) {
            const char *h = hello_json("fabtop-ctl", 2, "agent");
            raw_frame(fd, CHANNEL_T_HELLO, h, strlen(h));
        } else {
            const char *e = "{\"code\":\"version\",\"message\":\"version mismatch: this agent "
                            "speaks fabtop-ctl version 3, the client version 1\",\"version\":3}";
            raw_frame(fd, CHANNEL_T_ERROR, e, strlen(e));
        }
    }
    while (recv(fd, buf, sizeof(buf), 0) > 0) /* until the client hangs up */
        ;
    close(fd);
    return NULL;
}

static void fake_start(struct fake *fk, enum fake_mode mode)
{
    fk->mode = mode;
    fk->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fk->lfd, (struct sockaddr *)&s4, sizeof(s4)), 0);
    assert_int_equal(listen(fk->lfd, 4), 0);
    fk->port = local_port(fk->lfd);
    assert_int_equal(pthread_create(&fk->t, NULL, fake_main, fk), 0);
}

static void fake_stop(struct fake *fk)
{
    pthread_join(fk->t, NULL);
    close(fk->lfd);
}

static void test_version_mismatch_client(void **state)
{
    (void)state;
    struct channel_key k;
    channel_key_random(&k);
    static const struct {
        enum fake_mode mode;
        int theirs;
    } cases[] = {{FAKE_V2_HELLO, 2}, {FAKE_V3_ERROR, 3}};
    for (size_t i = 0; i < 2; i++) {
        struct fake fk;
        fake_start(&fk, cases[i].mode);
        char hp[64], want[256];
        snprintf(hp, sizeof(hp), "127.0.0.1:%u", fk.port);
        struct channel_conn *c = NULL;
        struct ft_err err = {0};
        assert_int_equal(channel_connect(hp, 0, &k, 2000, &c, &err), -EPROTONOSUPPORT);
        snprintf(want, sizeof(want),
                 "peer %s: protocol version mismatch: this fabtop speaks fabtop-ctl version 1, "
                 "the agent version %d",
                 hp, cases[i].theirs);
        assert_string_equal(err.msg, want);
        fake_stop(&fk);
    }
    /* An agent that never answers: the client gives up in time and says so. */
    struct fake fk;
    fake_start(&fk, FAKE_SILENT);
    char hp[64], want[256];
    snprintf(hp, sizeof(hp), "127.0.0.1:%u", fk.port);
    struct channel_conn *c = NULL;
    struct ft_err err = {0};
    int64_t t0 = now_ms();
    assert_int_equal(channel_connect(hp, 0, &k, 300, &c, &err), -ETIMEDOUT);
    assert_true(now_ms() - t0 < 1500);
    snprintf(want, sizeof(want), "peer %s: no answer to the handshake within 300 ms", hp);
    assert_string_equal(err.msg, want);
    fake_stop(&fk);
}

/* ---- a frame-aware man in the middle ---- */

enum px_mode { PX_PASS, PX_REPLAY, PX_TAMPER, PX_REFLECT, PX_OVERSIZE };

struct proxy {
    int lfd, cfd, afd;
    uint16_t port, agent_port;
    int dir;   /* 0: client->agent, 1: agent->client */
    int index; /* which frame of that direction */
    enum px_mode mode;
    pthread_t acceptor, pump[2];
    bool pumping;
    pthread_mutex_t mu;
    unsigned char *last[2];
    size_t lastlen[2];
};

struct pump_arg {
    struct proxy *p;
    int dir;
};

static struct pump_arg pump_args[2];

static void *pump_main(void *arg)
{
    struct pump_arg *pa = arg;
    struct proxy *p = pa->p;
    int src = pa->dir == 0 ? p->cfd : p->afd, dst = pa->dir == 0 ? p->afd : p->cfd;
    for (int i = 0;; i++) {
        unsigned char hdr[4];
        if (read_full(src, hdr, 4, now_ms() + 20000) < 0)
            break;
        uint32_t len =
            (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
        if (len > (1u << 20))
            break;
        unsigned char *fr = malloc(4 + len);
        memcpy(fr, hdr, 4);
        if (read_full(src, fr + 4, len, now_ms() + 20000) < 0) {
            free(fr);
            break;
        }
        size_t n = 4 + len;
        pthread_mutex_lock(&p->mu);
        if (pa->dir == p->dir && i == p->index && p->mode != PX_PASS) {
            switch (p->mode) {
            case PX_REPLAY: /* the previous frame again instead of this one */
                raw_send(dst, p->last[pa->dir], p->lastlen[pa->dir]);
                break;
            case PX_TAMPER: /* one bit of the payload */
                fr[6] ^= 0x01;
                raw_send(dst, fr, n);
                break;
            case PX_REFLECT: /* the other side's last frame, back at it */
                raw_send(dst, p->last[!pa->dir], p->lastlen[!pa->dir]);
                break;
            case PX_OVERSIZE: {
                unsigned char big[8] = {0x7f, 0xff, 0xff, 0xff, CHANNEL_T_REQUEST, '{', '}', 0};
                raw_send(dst, big, 7);
                break;
            }
            default:
                break;
            }
        } else {
            raw_send(dst, fr, n);
        }
        free(p->last[pa->dir]);
        p->last[pa->dir] = fr;
        p->lastlen[pa->dir] = n;
        pthread_mutex_unlock(&p->mu);
    }
    shutdown(dst, SHUT_WR);
    return NULL;
}

static void *proxy_accept(void *arg)
{
    struct proxy *p = arg;
    p->cfd = accept(p->lfd, NULL, NULL);
    p->afd = raw_connect(AF_INET, NULL, p->agent_port);
    for (int d = 0; d < 2; d++) {
        pump_args[d] = (struct pump_arg){p, d};
        pthread_create(&p->pump[d], NULL, pump_main, &pump_args[d]);
    }
    p->pumping = true;
    return NULL;
}

static struct proxy *proxy_start(uint16_t agent_port, int dir, int index, enum px_mode mode)
{
    struct proxy *p = calloc(1, sizeof(*p));
    p->agent_port = agent_port;
    p->dir = dir;
    p->index = index;
    p->mode = mode;
    pthread_mutex_init(&p->mu, NULL);
    p->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(p->lfd, (struct sockaddr *)&s4, sizeof(s4)), 0);
    assert_int_equal(listen(p->lfd, 4), 0);
    p->port = local_port(p->lfd);
    pthread_create(&p->acceptor, NULL, proxy_accept, p);
    return p;
}

static void proxy_free(struct proxy *p)
{
    pthread_join(p->acceptor, NULL);
    shutdown(p->cfd, SHUT_RDWR);
    shutdown(p->afd, SHUT_RDWR);
    for (int d = 0; d < 2; d++)
        pthread_join(p->pump[d], NULL);
    close(p->cfd);
    close(p->afd);
    close(p->lfd);
    free(p->last[0]);
    free(p->last[1]);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* Connect through a proxy that does `mode` to frame `index` (0 hello, 1 auth, 2 the hello
 * request/response, 3 the first echo) of direction dir; return the echo's result. */
static int through_proxy(struct fx *f, int dir, int index, enum px_mode mode, char *hp,
                         size_t hplen, struct ft_err *err)
{
    struct proxy *p = proxy_start(f->port, dir, index, mode);
    snprintf(hp, hplen, "127.0.0.1:%u", p->port);
    struct channel_conn *c = must_connect(hp, &f->key);
    int rc = echo_n(c, 42, err);
    /* Whatever happened, the session is not usable afterwards. */
    struct ft_err e2 = {0};
    if (rc < 0)
        assert_true(echo_n(c, 43, &e2) < 0);
    channel_close(c);
    proxy_free(p);
    return rc;
}

static void test_mac_replay_reflect_tamper(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL, "127.0.0.1", NULL);
    struct bg *b = bg_start(f);
    char hp[64], want[400];
    struct ft_err err = {0};

    /* Control: an untouched proxy passes everything. */
    assert_int_equal(through_proxy(f, 0, 3, PX_PASS, hp, sizeof(hp), &err), 0);

    static const enum px_mode c2a[] = {PX_REPLAY, PX_REFLECT, PX_TAMPER};
    for (size_t i = 0; i < 3; i++) {
        ft_err_clear(&err);
        assert_int_equal(through_proxy(f, 0, 3, c2a[i], hp, sizeof(hp), &err), -EBADMSG);
        snprintf(want, sizeof(want),
                 "peer %s: the agent closed the session: frame 1 from the client failed "
                 "authentication (bad MAC: tampered, replayed or reordered)",
                 hp);
        assert_string_equal(err.msg, want);
        bg_progress(b);
    }
    assert_true(log_wait(&f->log,
                         "1 request: frame 1 from the client failed authentication (bad MAC: "
                         "tampered, replayed or reordered)",
                         2000));

    /* Tampered on the way back: the client notices by itself. */
    ft_err_clear(&err);
    assert_int_equal(through_proxy(f, 1, 3, PX_TAMPER, hp, sizeof(hp), &err), -EBADMSG);
    snprintf(want, sizeof(want),
             "peer %s: frame 1 from the agent failed authentication (bad MAC: tampered, "
             "replayed or reordered); session closed",
             hp);
    assert_string_equal(err.msg, want);

    /* Replaying the agent's hello response as the answer to the echo fails too. */
    ft_err_clear(&err);
    assert_int_equal(through_proxy(f, 1, 3, PX_REPLAY, hp, sizeof(hp), &err), -EBADMSG);
    snprintf(want, sizeof(want),
             "peer %s: frame 1 from the agent failed authentication (bad MAC: tampered, "
             "replayed or reordered); session closed",
             hp);
    assert_string_equal(err.msg, want);

    /* A length beyond the limit after authentication: refused before reading the body. */
    ft_err_clear(&err);
    assert_int_equal(through_proxy(f, 0, 3, PX_OVERSIZE, hp, sizeof(hp), &err), -EMSGSIZE);
    snprintf(want, sizeof(want),
             "peer %s: the agent closed the session: frame of 2147483647 bytes exceeds the "
             "65536-byte limit",
             hp);
    assert_string_equal(err.msg, want);
    bg_stop(b);
    fx_free(f);
}

static void test_oversized_handshake(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL, "127.0.0.1", NULL);
    struct bg *b = bg_start(f);
    int fd = raw_connect(AF_INET, NULL, f->port);
    int64_t t0 = now_ms();
    raw_send(fd, "\xff\xff\xff\xf0\x01", 5); /* and no body: refused without waiting for it */
    expect_refusal(fd, "toolarge",
                   "frame of 4294967280 bytes exceeds the 1024-byte handshake limit");
    assert_true(now_ms() - t0 < 1000);
    close(fd);
    fd = raw_connect(AF_INET, NULL, f->port);
    raw_send(fd, "\x00\x00\x04\x01\x01", 5); /* 1025: one past the handshake limit */
    expect_refusal(fd, "toolarge", "frame of 1025 bytes exceeds the 1024-byte handshake limit");
    close(fd);
    bg_stop(b);
    fx_free(f);
}

static void test_handshake_timeout(void **state)
{
    (void)state;
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    cfg.handshake_timeout_ms = 300;
    struct fx *f = fx_new(&cfg, "127.0.0.1", NULL);
    struct bg *b = bg_start(f);

    /* Connects and says nothing. */
    int fd = raw_connect(AF_INET, NULL, f->port);
    int64_t t0 = now_ms();
    expect_refusal(fd, "timeout", "handshake timed out after 300 ms");
    int64_t took = now_ms() - t0;
    assert_true(took >= 250 && took < 1500);
    close(fd);
    bg_progress(b);

    /* Slowloris: a valid hello, one byte every 40 ms, is still cut off at the deadline. */
    fd = raw_connect(AF_INET, NULL, f->port);
    const char *h = hello_json("fabtop-ctl", 1, "client");
    size_t n = strlen(h);
    unsigned char fr[600] = {0, 0, (unsigned char)((n + 1) >> 8), (unsigned char)(n + 1),
                             CHANNEL_T_HELLO};
    memcpy(fr + 5, h, n);
    t0 = now_ms();
    for (size_t i = 0; i < n + 5; i++) {
        raw_send(fd, fr + i, 1);
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, 40) > 0)
            break;
    }
    expect_refusal(fd, "timeout", "handshake timed out after 300 ms");
    took = now_ms() - t0;
    assert_true(took >= 250 && took < 1500);
    close(fd);
    bg_stop(b);
    assert_true(log_wait(&f->log, ": handshake timed out after 300 ms", 2000));
    fx_free(f);
}

static void test_allowlist(void **state)
{
    (void)state;
    const char *allow[] = {"127.0.0.1/32", "fd00::/8"};
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    cfg.allow = allow;
    cfg.nallow = 2;
    struct fx *f = fx_new(&cfg, "127.0.0.1", NULL);
    struct bg *b = bg_start(f); /* from 127.0.0.1: allowed */
    int fd = raw_connect(AF_INET, "127.0.0.2", f->port);
    expect_refusal(fd, "denied", "address 127.0.0.2 is not in the agent's allowlist");
    close(fd);
    bg_progress(b);
    assert_true(log_wait(&f->log, "refused 127.0.0.2 port ", 2000));
    assert_true(log_has(&f->log, ": address 127.0.0.2 is not in the agent's allowlist"));
    bg_stop(b);
    fx_free(f);

    /* IPv6: ::1 is outside 10.0.0.0/8 and the client says who refused it and why. */
    const char *allow10[] = {"10.0.0.0/8"};
    agent_cfg_defaults(&cfg);
    cfg.allow = allow10;
    cfg.nallow = 1;
    f = fx_new(&cfg, "::1", NULL);
    struct channel_conn *c = NULL;
    struct ft_err err = {0};
    assert_int_equal(channel_connect(f->hp, 0, &f->key, 2000, &c, &err), -EACCES);
    char want[256];
    snprintf(want, sizeof(want),
             "peer %s: the agent refused the session: address ::1 is not in the agent's allowlist",
             f->hp);
    assert_string_equal(err.msg, want);
    fx_free(f);

    /* ::1/128 and the IPv4-mapped form of 127/8 let their clients in. */
    const char *allow6[] = {"::1"};
    agent_cfg_defaults(&cfg);
    cfg.allow = allow6;
    cfg.nallow = 1;
    f = fx_new(&cfg, "::1", NULL);
    channel_close(must_connect(f->hp, &f->key));
    fx_free(f);
    const char *allowm[] = {"::ffff:127.0.0.0/104"};
    agent_cfg_defaults(&cfg);
    cfg.allow = allowm;
    cfg.nallow = 1;
    f = fx_new(&cfg, "127.0.0.1", NULL);
    channel_close(must_connect(f->hp, &f->key));
    fx_free(f);

    /* Bad entries are refused at start with the entry named. */
    static const struct {
        const char *entry, *msg;
    } bad[] = {
        {"300.1.1.1/8",
         "allowlist entry '300.1.1.1/8': not an IPv4 or IPv6 address with an optional /PREFIX"},
        {"10.0.0.0/33", "allowlist entry '10.0.0.0/33': the prefix must be 0 to 32"},
        {"fe80::/129", "allowlist entry 'fe80::/129': the prefix must be 0 to 128"},
        {"10.0.0.0/", "allowlist entry '10.0.0.0/': the prefix must be 0 to 32"},
        {"node7", "allowlist entry 'node7': not an IPv4 or IPv6 address with an optional /PREFIX"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        agent_cfg_defaults(&cfg);
        channel_key_random(&cfg.key);
        snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1");
        cfg.allow = &bad[i].entry;
        cfg.nallow = 1;
        struct agent *a = NULL;
        ft_err_clear(&err);
        assert_int_equal(agent_start(&cfg, NULL, 0, &a, &err), -EINVAL);
        assert_string_equal(err.msg, bad[i].msg);
        assert_null(a);
    }
}

static void test_busy(void **state)
{
    (void)state;
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    cfg.max_sessions = 2;
    cfg.max_handshakes = 2;
    struct fx *f = fx_new(&cfg, "127.0.0.1", NULL);
    struct bg *b = bg_start(f);
    struct channel_conn *c2 = must_connect(f->hp, &f->key);
    struct channel_conn *c3 = NULL;
    struct ft_err err = {0};
    char want[256];
    snprintf(want, sizeof(want),
             "peer %s: the agent refused the session: busy: 2 sessions, limit 2", f->hp);
    for (int i = 0; i < 3; i++) {
        ft_err_clear(&err);
        assert_int_equal(channel_connect(f->hp, 0, &f->key, 2000, &c3, &err), -EBUSY);
        assert_string_equal(err.msg, want);
        bg_progress(b);
    }
    assert_true(log_wait(&f->log, ": busy: 2 sessions, limit 2", 2000));
    /* A slot frees up when a session ends. */
    channel_close(c2);
    int64_t end = now_ms() + 3000;
    while (agent_sessions(f->a) != 1 && now_ms() < end)
        sleep_ms(5);
    c3 = must_connect(f->hp, &f->key);
    assert_int_equal(echo_n(c3, 5, &err), 0);
    channel_close(c3);
    while (agent_sessions(f->a) != 1 && now_ms() < end)
        sleep_ms(5);

    /* Connections without the key have handshake slots of their own (test_agent_limits
     * tests them): sessions of clients with the key went on meanwhile. */
    bg_stop(b);
    fx_free(f);
}

/* ---- handlers, state, stopping ---- */

/* The tag of this side's per-session state (agent_session_state). */
static const char state_tag;

static atomic_int destroyed;

static void state_free(void *p)
{
    free(p);
    atomic_fetch_add(&destroyed, 1);
}

static int h_open(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)err;
    int *st = agent_session_state(s, &state_tag);
    if (!st) {
        st = calloc(1, sizeof(*st));
        agent_session_set_state(s, &state_tag, st, state_free);
    }
    (*st)++;
    const struct agent_cfg *cfg = agent_session_cfg(s);
    const cJSON *r = cJSON_GetObjectItem(req, "rate_gbps");
    double rate =
        agent_clamp(resp, "rate_gbps", cJSON_IsNumber(r) ? r->valuedouble : 0, cfg->max_rate_gbps);
    cJSON_AddNumberToObject(resp, "rate_gbps", rate);
    cJSON_AddNumberToObject(resp, "opened", *st);
    cJSON_AddStringToObject(resp, "peer", agent_session_peer_host(s));
    struct sockaddr_storage local;
    socklen_t ll;
    agent_session_local(s, &local, &ll);
    char la[64];
    channel_format_addr(&local, false, la, sizeof(la));
    cJSON_AddStringToObject(resp, "local", la);
    cJSON_AddBoolToObject(resp, "key_hidden",
                          cfg->key.k[0] == 0 && !memcmp(cfg->key.k, cfg->key.k + 1, 31));
    agent_session_log(s, "test.open number %d", *st);
    return 0;
}

static int h_fail(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)s;
    (void)req;
    cJSON_AddStringToObject(resp, "ignored", "yes");
    return ft_err_set(err, -ERANGE, "test.fail: out of range");
}

static const struct agent_handler test_open = {"test.open", h_open};
static const struct agent_handler test_fail = {"test.fail", h_fail};
static const struct agent_handler *const test_handlers[] = {&test_open, &test_fail, NULL};

static cJSON *open_req(double rate)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "test.open");
    cJSON_AddNumberToObject(req, "rate_gbps", rate);
    return req;
}

static void test_handlers_and_state(void **state)
{
    (void)state;
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    cfg.max_rate_gbps = 5;
    struct fx *f = fx_new(&cfg, "127.0.0.1", test_handlers);
    atomic_store(&destroyed, 0);
    struct channel_conn *c = must_connect(f->hp, &f->key);
    cJSON *resp = NULL;
    struct ft_err err = {0};
    assert_int_equal(channel_request(c, open_req(100), &resp, 2000, &err), 0);
    assert_true(cJSON_GetObjectItem(resp, "rate_gbps")->valuedouble == 5);
    const cJSON *cl = cJSON_GetObjectItem(cJSON_GetObjectItem(resp, "clamped"), "rate_gbps");
    assert_true(cJSON_GetObjectItem(cl, "asked")->valuedouble == 100);
    assert_true(cJSON_GetObjectItem(cl, "allowed")->valuedouble == 5);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(resp, "peer")), "127.0.0.1");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(resp, "local")), "127.0.0.1");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(resp, "key_hidden")));
    cJSON_Delete(resp);
    assert_int_equal(channel_request(c, open_req(2), &resp, 2000, &err), 0);
    assert_true(cJSON_GetObjectItem(resp, "rate_gbps")->valuedouble == 2);
    assert_null(cJSON_GetObjectItem(resp, "clamped"));
    assert_int_equal(cJSON_GetObjectItem(resp, "opened")->valueint, 2);
    cJSON_Delete(resp);

    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "test.fail");
    assert_int_equal(channel_request(c, req, &resp, 2000, &err), -ERANGE);
    char want[200];
    snprintf(want, sizeof(want), "peer %s: test.fail: out of range", f->hp);
    assert_string_equal(err.msg, want);
    assert_int_equal(atomic_load(&destroyed), 0);

    /* The client vanishes without a word: the state's destructor runs. */
    shutdown(channel_conn_fd(c), SHUT_RDWR);
    int64_t end = now_ms() + 3000;
    while (atomic_load(&destroyed) != 1 && now_ms() < end)
        sleep_ms(5);
    assert_int_equal(atomic_load(&destroyed), 1);
    channel_close(c);
    assert_true(log_wait(&f->log, ": test.open number 2", 2000));
    assert_true(log_wait(&f->log, "4 requests: the client closed the connection", 2000));
    fx_free(f);

    /* Duplicate request types are refused at start. */
    static const struct agent_handler dup = {"echo", h_fail};
    const struct agent_handler *const dups[] = {&dup, NULL};
    agent_cfg_defaults(&cfg);
    channel_key_random(&cfg.key);
    snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1");
    struct agent *a = NULL;
    ft_err_clear(&err);
    assert_int_equal(agent_start(&cfg, dups, -1, &a, &err), -EEXIST);
    assert_string_equal(err.msg, "agent: two handlers for request type 'echo'");
    /* And a zero key. */
    agent_cfg_defaults(&cfg);
    ft_err_clear(&err);
    assert_int_equal(agent_start(&cfg, NULL, 0, &a, &err), -EINVAL);
    assert_string_equal(err.msg, "agent: no key");
}

static void test_stop_with_sessions(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL, "127.0.0.1", test_handlers);
    atomic_store(&destroyed, 0);
    struct channel_conn *c[3];
    cJSON *resp;
    struct ft_err err = {0};
    for (int i = 0; i < 3; i++) {
        c[i] = must_connect(f->hp, &f->key);
        assert_int_equal(channel_request(c[i], open_req(1), &resp, 2000, &err), 0);
        cJSON_Delete(resp);
    }
    int silent = raw_connect(AF_INET, NULL, f->port); /* mid-handshake */
    int64_t t0 = now_ms();
    char hp[80];
    snprintf(hp, sizeof(hp), "%s", f->hp);
    fx_free(f);
    assert_true(now_ms() - t0 < 2000);
    assert_int_equal(atomic_load(&destroyed), 3);
    expect_refusal(silent, "shutdown", "the agent is shutting down");
    close(silent);
    char want[200];
    snprintf(want, sizeof(want),
             "peer %s: the agent closed the session: the agent is shutting down", hp);
    for (int i = 0; i < 3; i++) {
        ft_err_clear(&err);
        assert_int_equal(echo_n(c[i], 1, &err), -ESHUTDOWN);
        assert_string_equal(err.msg, want);
        channel_close(c[i]);
    }
}

/* Many clients at once (incast): all served. */
struct many_arg {
    struct fx *f;
    int ok;
};

static void *many_main(void *arg)
{
    struct many_arg *m = arg;
    struct channel_conn *c = NULL;
    struct ft_err err = {0};
    if (channel_connect(m->f->hp, 0, &m->f->key, 5000, &c, &err) < 0)
        return NULL;
    int ok = 0;
    for (int i = 0; i < 100; i++)
        ok += echo_n(c, i, &err) == 0;
    m->ok = ok;
    channel_close(c);
    return NULL;
}

static void test_concurrent_clients(void **state)
{
    (void)state;
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    cfg.max_sessions = 16;
    struct fx *f = fx_new(&cfg, "127.0.0.1", NULL);
    pthread_t t[16];
    struct many_arg m[16];
    for (int i = 0; i < 16; i++) {
        m[i] = (struct many_arg){f, 0};
        pthread_create(&t[i], NULL, many_main, &m[i]);
    }
    for (int i = 0; i < 16; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(m[i].ok, 100);
    }
    fx_free(f);
}

/* ---- keys ---- */

static char kdir[64];

static void put_file(const char *name, const void *data, size_t n, mode_t mode)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", kdir, name);
    unlink(p);
    FILE *fp = fopen(p, "wb");
    assert_non_null(fp);
    fwrite(data, 1, n, fp);
    fclose(fp);
    chmod(p, mode);
}

static int load(const char *name, struct channel_key *k, struct ft_err *err)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", kdir, name);
    ft_err_clear(err);
    return channel_key_load(p, k, err);
}

static void test_keys(void **state)
{
    (void)state;
    snprintf(kdir, sizeof(kdir), "/tmp/fabtop-ctl-XXXXXX");
    assert_non_null(mkdtemp(kdir));
    struct channel_key k1, k2;
    struct ft_err err = {0};
    char p[256], want[512];
    static const char hint[] = "need at least 32 random bytes (hex or raw); create a key with "
                               "'fabtop serve --gen-key FILE' and copy it to every peer";

    /* --gen-key: mode 0600, 64 hex digits, never overwritten. */
    snprintf(p, sizeof(p), "%s/gen", kdir);
    assert_int_equal(channel_key_generate_file(p, &err), 0);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(st.st_size, 65);
    assert_int_equal(load("gen", &k1, &err), 0);
    assert_int_equal(channel_key_generate_file(p, &err), -EEXIST);
    snprintf(want, sizeof(want),
             "%s already exists; remove it first to replace the key (every peer then needs the "
             "new one)",
             p);
    assert_string_equal(err.msg, want);

    /* Hex and raw forms of the same bytes are the same key; whitespace does not matter. */
    unsigned char raw[40];
    char hex[81], spaced[200];
    for (int i = 0; i < 40; i++)
        raw[i] = (unsigned char)(i * 37 + 11);
    for (int i = 0; i < 40; i++)
        snprintf(hex + 2 * i, 3, "%02X", raw[i]);
    snprintf(spaced, sizeof(spaced), "  %.40s\n%.40s  \r\n", hex, hex + 40);
    put_file("raw", raw, sizeof(raw), 0600);
    put_file("hex", spaced, strlen(spaced), 0400);
    assert_int_equal(load("raw", &k1, &err), 0);
    assert_int_equal(load("hex", &k2, &err), 0);
    assert_memory_equal(k1.k, k2.k, sizeof(k1.k));
    assert_memory_not_equal(k1.k, raw, sizeof(k1.k)); /* derived, not used as is */

    /* The environment: FABTOP_KEY in hex wins over files. */
    setenv("FABTOP_KEY", hex, 1);
    ft_err_clear(&err);
    assert_int_equal(channel_key_load(NULL, &k2, &err), 0);
    assert_memory_equal(k1.k, k2.k, sizeof(k1.k));
    setenv("FABTOP_KEY", "not-a-hex-key-at-all-but-quite-long-anyway-really", 1);
    ft_err_clear(&err);
    assert_int_equal(channel_key_load(NULL, &k2, &err), -EINVAL);
    snprintf(want, sizeof(want), "FABTOP_KEY: not a hex key; %s", hint);
    assert_string_equal(err.msg, want);
    unsetenv("FABTOP_KEY");

    /* $XDG_CONFIG_HOME/fabtop/key, then ~/.config/fabtop/key. */
    snprintf(p, sizeof(p), "%s/fabtop", kdir);
    mkdir(p, 0700);
    setenv("XDG_CONFIG_HOME", kdir, 1);
    ft_err_clear(&err);
    assert_int_equal(channel_key_load(NULL, &k2, &err), -ENOENT);
    snprintf(want, sizeof(want),
             "no key: set FABTOP_KEY, pass --key-file FILE, or create %s/fabtop/key with 'fabtop "
             "serve --gen-key %s/fabtop/key' (the same key on every peer)",
             kdir, kdir);
    assert_string_equal(err.msg, want);
    put_file("fabtop/key", raw, sizeof(raw), 0600);
    ft_err_clear(&err);
    assert_int_equal(channel_key_load(NULL, &k2, &err), 0);
    assert_memory_equal(k1.k, k2.k, sizeof(k1.k));
    unsetenv("XDG_CONFIG_HOME");
    char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    snprintf(p, sizeof(p), "%s/.config", kdir);
    mkdir(p, 0700);
    snprintf(p, sizeof(p), "%s/.config/fabtop", kdir);
    mkdir(p, 0700);
    put_file(".config/fabtop/key", spaced, strlen(spaced), 0600);
    setenv("HOME", kdir, 1);
    ft_err_clear(&err);
    assert_int_equal(channel_key_load(NULL, &k2, &err), 0);
    assert_memory_equal(k1.k, k2.k, sizeof(k1.k));
    if (home)
        setenv("HOME", home, 1);
    free(home);

    /* Permissions: group or others may not read (or write) a key. */
    put_file("open", raw, sizeof(raw), 0644);
    assert_int_equal(load("open", &k2, &err), -EACCES);
    snprintf(want, sizeof(want),
             "%s/open: the key file is accessible by group or others (mode 0644); run 'chmod "
             "600 %s/open'",
             kdir, kdir);
    assert_string_equal(err.msg, want);
    put_file("grp", raw, sizeof(raw), 0640);
    assert_int_equal(load("grp", &k2, &err), -EACCES);

    /* Missing, too short, odd, empty, a directory. */
    assert_int_equal(load("missing", &k2, &err), -ENOENT);
    snprintf(want, sizeof(want),
             "%s/missing: no such key file; create one with 'fabtop serve --gen-key %s/missing' "
             "and copy it to every peer",
             kdir, kdir);
    assert_string_equal(err.msg, want);
    put_file("short", hex, 40, 0600);
    assert_int_equal(load("short", &k2, &err), -EINVAL);
    snprintf(want, sizeof(want), "%s/short: key too short: 20 bytes; %s", kdir, hint);
    assert_string_equal(err.msg, want);
    put_file("shortraw", raw, 31, 0600);
    raw[0] = 0xff; /* keep it binary */
    put_file("shortraw", raw, 31, 0600);
    assert_int_equal(load("shortraw", &k2, &err), -EINVAL);
    snprintf(want, sizeof(want), "%s/shortraw: key too short: 31 bytes; %s", kdir, hint);
    assert_string_equal(err.msg, want);
    put_file("odd", hex, 65, 0600);
    assert_int_equal(load("odd", &k2, &err), -EINVAL);
    snprintf(want, sizeof(want), "%s/odd: the key has an odd number of hex digits (65)", kdir);
    assert_string_equal(err.msg, want);
    put_file("empty", "\n", 1, 0600);
    assert_int_equal(load("empty", &k2, &err), -EINVAL);
    snprintf(want, sizeof(want), "%s/empty: the key is empty; %s", kdir, hint);
    assert_string_equal(err.msg, want);
    snprintf(p, sizeof(p), "%s/adir", kdir);
    mkdir(p, 0700);
    assert_int_equal(load("adir", &k2, &err), -EINVAL);
    snprintf(want, sizeof(want), "%s/adir: the key file is not a regular file", kdir);
    assert_string_equal(err.msg, want);

    /* Fingerprints tell keys apart without showing them. */
    char f1[17], f2[17];
    channel_key_random(&k1);
    channel_key_random(&k2);
    channel_key_fingerprint(&k1, f1);
    channel_key_fingerprint(&k2, f2);
    assert_int_equal(strlen(f1), 16);
    assert_string_not_equal(f1, f2);

    snprintf(p, sizeof(p), "rm -rf '%s'", kdir);
    assert_int_equal(system(p), 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    srand((unsigned)time(NULL));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_ipv4),
        cmocka_unit_test(test_session_ipv6),
        cmocka_unit_test(test_host_port_forms),
        cmocka_unit_test(test_wrong_key),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_version_mismatch_agent),
        cmocka_unit_test(test_version_mismatch_client),
        cmocka_unit_test(test_mac_replay_reflect_tamper),
        cmocka_unit_test(test_oversized_handshake),
        cmocka_unit_test(test_handshake_timeout),
        cmocka_unit_test(test_allowlist),
        cmocka_unit_test(test_busy),
        cmocka_unit_test(test_handlers_and_state),
        cmocka_unit_test(test_stop_with_sessions),
        cmocka_unit_test(test_concurrent_clients),
        cmocka_unit_test(test_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
