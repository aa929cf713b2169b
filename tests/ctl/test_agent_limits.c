/* test_agent_limits: an in-process agent on loopback under hostile load from clients
 * without the key: idle connections that reconnect each time theirs ends (from another
 * address and from the legitimate client's own), a mix of 200 hostile connections (idle,
 * slowloris, garbage, wrong key) from nine addresses, and a refusal flood whose log must
 * stay bounded and summarised. A legitimate client must keep getting sessions within a
 * bound throughout. Loopback only (127.0.0.0/8 source addresses need no set-up). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "ctltest.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"

/* ---- a flood of hostile connections, each reconnecting when its connection ends ---- */

/* Idle and slowloris connections reconnect when theirs ends; the spinning idle ones, the
 * garbage and the wrong-key ones as soon as anything (a refusal) arrives. */
enum kind { K_IDLE, K_SLOW, K_GARBAGE, K_WRONGKEY, K_SPIN, K_NKINDS };

struct conn {
    int fd;
    enum kind kind;
    char src[16];
    int64_t next_send; /* slowloris: next byte */
    size_t sent;       /* slowloris: bytes of the hello sent */
    unsigned char in[2048];
    size_t nin;
    bool proved; /* wrong key: sent the bogus proof */
};

struct flood {
    pthread_t t;
    uint16_t port;
    int n;
    struct conn *c;
    atomic_bool stop;
    atomic_long connects, ended;
    unsigned char hello[600]; /* a valid client hello frame */
    size_t nhello;
};

/* A non-blocking connection to 127.0.0.1:port from src. */
static int flood_connect(const char *src, uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in s4 = {.sin_family = AF_INET};
    inet_pton(AF_INET, src, &s4.sin_addr);
    assert_int_equal(bind(fd, (struct sockaddr *)&s4, sizeof(s4)), 0);
    inet_pton(AF_INET, "127.0.0.1", &s4.sin_addr);
    s4.sin_port = htons(port);
    int rc = connect(fd, (struct sockaddr *)&s4, sizeof(s4));
    assert_true(rc == 0 || errno == EINPROGRESS);
    return fd;
}

static void conn_open(struct flood *fl, struct conn *c)
{
    c->fd = flood_connect(c->src, fl->port);
    c->nin = c->sent = 0;
    c->proved = false;
    c->next_send = now_ms() + 20;
    atomic_fetch_add(&fl->connects, 1);
    if (c->kind == K_GARBAGE) {
        unsigned char junk[48];
        for (size_t i = 0; i < sizeof(junk); i++)
            junk[i] = (unsigned char)rand();
        junk[0] = 0;
        junk[1] = 0; /* a length the agent reads and judges */
        send(c->fd, junk, sizeof(junk), MSG_NOSIGNAL);
    } else if (c->kind == K_WRONGKEY) {
        send(c->fd, fl->hello, fl->nhello, MSG_NOSIGNAL);
    }
}

static void conn_end(struct flood *fl, struct conn *c)
{
    close(c->fd);
    atomic_fetch_add(&fl->ended, 1);
    conn_open(fl, c);
}

/* Wrong key: once the agent's hello is in, send 32 bytes that are no proof. */
static void wrongkey_step(struct conn *c)
{
    if (c->proved || c->nin < 5)
        return;
    uint32_t len =
        (uint32_t)c->in[0] << 24 | (uint32_t)c->in[1] << 16 | (uint32_t)c->in[2] << 8 | c->in[3];
    if (c->nin < 4 + (size_t)len || c->in[4] != CHANNEL_T_HELLO)
        return;
    unsigned char f[5 + 32] = {0, 0, 0, 33, CHANNEL_T_AUTH};
    for (int i = 0; i < 32; i++)
        f[5 + i] = (unsigned char)rand();
    send(c->fd, f, sizeof(f), MSG_NOSIGNAL);
    c->proved = true;
}

static void *flood_main(void *arg)
{
    struct flood *fl = arg;
    struct pollfd *p = calloc((size_t)fl->n, sizeof(*p));
    assert_non_null(p);
    while (!atomic_load(&fl->stop)) {
        int64_t now = now_ms();
        for (int i = 0; i < fl->n; i++) {
            struct conn *c = &fl->c[i];
            if (c->kind == K_SLOW && now >= c->next_send && c->sent < fl->nhello) {
                send(c->fd, fl->hello + c->sent, 1, MSG_NOSIGNAL);
                c->sent++;
                c->next_send = now + 200;
            }
            p[i] = (struct pollfd){.fd = c->fd, .events = POLLIN};
        }
        int n = poll(p, (nfds_t)fl->n, 20);
        for (int i = 0; n > 0 && i < fl->n; i++) {
            struct conn *c = &fl->c[i];
            if (!p[i].revents)
                continue;
            size_t room = sizeof(c->in) - c->nin;
            ssize_t r = recv(c->fd, c->in + c->nin, room ? room : 1, MSG_DONTWAIT);
            if (r > 0 && room) {
                c->nin += (size_t)r;
                if (c->kind == K_WRONGKEY)
                    wrongkey_step(c);
                if (c->kind == K_SPIN || c->kind == K_GARBAGE ||
                    (c->kind == K_WRONGKEY && c->proved))
                    conn_end(fl, c);
            } else if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
                conn_end(fl, c); /* refused, cut off, timed out: back at once */
            }
        }
    }
    for (int i = 0; i < fl->n; i++)
        close(fl->c[i].fd);
    free(p);
    return NULL;
}

/* n connections of kinds (a bit set of 1 << K_*, used in turn) from the addresses srcs. */
static struct flood *flood_start(uint16_t port, int n, unsigned kinds, const char *const *srcs,
                                 int nsrcs)
{
    struct flood *fl = calloc(1, sizeof(*fl));
    assert_non_null(fl);
    fl->port = port;
    fl->n = n;
    fl->c = calloc((size_t)n, sizeof(*fl->c));
    assert_non_null(fl->c);
    const char *h = hello_json("fabtop-ctl", CHANNEL_VERSION, "client");
    size_t hn = strlen(h);
    fl->hello[0] = fl->hello[1] = 0;
    fl->hello[2] = (unsigned char)((hn + 1) >> 8);
    fl->hello[3] = (unsigned char)(hn + 1);
    fl->hello[4] = CHANNEL_T_HELLO;
    memcpy(fl->hello + 5, h, hn);
    fl->nhello = hn + 5;
    int k = 0;
    for (int i = 0; i < n; i++) {
        while (!(kinds & (1u << (k % K_NKINDS))))
            k++;
        fl->c[i].kind = (enum kind)(k++ % K_NKINDS);
        snprintf(fl->c[i].src, sizeof(fl->c[i].src), "%s", srcs[i % nsrcs]);
        conn_open(fl, &fl->c[i]);
    }
    assert_int_equal(pthread_create(&fl->t, NULL, flood_main, fl), 0);
    return fl;
}

static void flood_stop(struct flood *fl)
{
    atomic_store(&fl->stop, true);
    pthread_join(fl->t, NULL);
    free(fl->c);
    free(fl);
}

/* runs legitimate sessions (connect with the key, echo, bye), one after another; each must
 * succeed within bound_ms. Returns the slowest, in ms. */
static int64_t legit_runs(struct fx *f, int runs, int bound_ms)
{
    int64_t worst = 0;
    for (int i = 0; i < runs; i++) {
        struct channel_conn *c = NULL;
        struct ft_err err = {0};
        int64_t t0 = now_ms();
        int rc = channel_connect(f->hp, 0, &f->key, bound_ms, &c, &err);
        if (rc == 0)
            rc = echo_n(c, i, &err);
        int64_t took = now_ms() - t0;
        if (rc < 0)
            fprintf(stderr, "legitimate run %d of %d failed after %lld ms: %s\n", i + 1, runs,
                    (long long)took, err.msg);
        assert_int_equal(rc, 0);
        channel_close(c);
        worst = took > worst ? took : worst;
        sleep_ms(100);
    }
    return worst;
}

/* 16 idle connections that reconnect each time theirs ends (the agent's 5 s handshake
 * timeout, or sooner) held every handshake slot: every legitimate session was refused
 * "busy: 16 connections authenticating, limit 16". From another address, from the
 * client's own, and from its own reconnecting the moment a refusal arrives. */
static void test_idle_reconnect(void **state)
{
    (void)state;
    static const char *const other[] = {"127.0.0.2"}, *const same[] = {"127.0.0.1"};
    static const struct {
        const char *const *src;
        unsigned kind;
        const char *what;
    } rounds[] = {
        {other, 1u << K_IDLE, "idle from another address"},
        {same, 1u << K_IDLE, "idle from the client's own address"},
        {same, 1u << K_SPIN, "idle, reconnecting at once, from the client's own address"},
    };
    for (size_t r = 0; r < sizeof(rounds) / sizeof(rounds[0]); r++) {
        struct fx *f = fx_new(NULL, "127.0.0.1", NULL);
        struct flood *fl = flood_start(f->port, 16, rounds[r].kind, rounds[r].src, 1);
        sleep_ms(300);
        int64_t worst = legit_runs(f, 12, 3000);
        long churn = atomic_load(&fl->ended);
        flood_stop(fl);
        fprintf(stderr,
                "16 connections %s: 12 of 12 sessions, the slowest in %lld ms; the flood's "
                "connections ended %ld times\n",
                rounds[r].what, (long long)worst, churn);
        fx_free(f);
    }
}

/* 200 hostile connections (idle, slowloris, garbage, wrong key; each reconnecting when it
 * ends) from nine addresses, one of them the legitimate client's. */
static void test_hostile_mix(void **state)
{
    (void)state;
    static const char *const srcs[] = {"127.0.0.2", "127.0.0.3", "127.0.0.4",
                                       "127.0.0.5", "127.0.0.6", "127.0.0.7",
                                       "127.0.0.8", "127.0.0.9", "127.0.0.1"};
    struct fx *f = fx_new(NULL, "127.0.0.1", NULL);
    struct flood *fl = flood_start(f->port, 200, (1u << K_NKINDS) - 1, srcs, 9);
    sleep_ms(500);
    int64_t worst = legit_runs(f, 12, 3000);
    long churn = atomic_load(&fl->ended);
    flood_stop(fl);
    fprintf(stderr,
            "200 hostile connections from 9 addresses: 12 of 12 sessions, the slowest in %lld "
            "ms; the flood's connections ended %ld times\n",
            (long long)worst, churn);
    fx_free(f);
}

/* A flood of refused connections (allowlist) writes a bounded log: at most
 * AGENT_LOG_DETAIL + AGENT_LOG_ADDRS + 1 lines per window, and every refusal counted. */
static void test_refusal_log_bounded(void **state)
{
    (void)state;
    const char *allow[] = {"127.0.0.1/32"};
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    cfg.allow = allow;
    cfg.nallow = 1;
    struct fx *f = fx_new(&cfg, "127.0.0.1", NULL);
    struct bg *b = bg_start(f);
    int n = 0;
    int64_t t0 = now_ms();
    while (now_ms() - t0 < 3000) {
        char src[16];
        snprintf(src, sizeof(src), "127.0.1.%d", 1 + n % 40); /* 40 addresses */
        int fd = raw_connect(AF_INET, src, f->port);
        char buf[512];
        int type;
        raw_read_frame(fd, &type, buf, sizeof(buf), 2000);
        close(fd);
        n++;
    }
    bg_progress(b);
    bg_stop(b);
    fx_stop(f);
    /* Count what the summaries say. */
    long counted = 0;
    const char *p = f->log.buf;
    while ((p = strstr(p, "refused ")) != NULL) {
        const char *q = p + 8;
        char *end;
        unsigned long k = strtoul(q, &end, 10);
        if (end > q && (!strncmp(end, " more connection", 16) || !strncmp(end, " connection", 11)))
            counted += (long)k;
        else if (!strncmp(q, "127.0.1.", 8))
            counted++; /* a line of its own */
        p = q;
    }
    fprintf(stderr, "%d refused connections in 3 s: %u log lines, %zu bytes\n", n, f->log.lines,
            f->log.total);
    assert_int_equal(counted, n);
    assert_true(f->log.lines <= 2 + AGENT_LOG_DETAIL + AGENT_LOG_ADDRS + 1);
    assert_true(log_has(&f->log, "refused 127.0.1.1 port "));
    assert_true(log_has(&f->log, " more connections from 127.0.1.1 in the last 10 s: address "
                                 "127.0.1.1 is not in the agent's allowlist"));
    assert_true(log_has(&f->log, " connections from other addresses in the last 10 s"));
    assert_true(n > 500);
    fx_free(f);
}

/* ---- the slot rules one by one ---- */

/* A client hello with the early proof made as ctl.h documents it (key NULL: none). */
static size_t early_hello(unsigned char *frame, const struct channel_key *key,
                          const unsigned char *nc, int64_t t)
{
    char nhex[65], ehex[65], body[512];
    sodium_bin2hex(nhex, sizeof(nhex), nc, 32);
    int n;
    if (key) {
        static const char label[] = "fabtop-ctl early";
        unsigned char v[2] = {0, CHANNEL_VERSION}, tb[8], e[32];
        for (int i = 0; i < 8; i++)
            tb[i] = (unsigned char)((uint64_t)t >> (56 - 8 * i));
        crypto_auth_hmacsha512256_state st;
        crypto_auth_hmacsha512256_init(&st, key->k, sizeof(key->k));
        crypto_auth_hmacsha512256_update(&st, (const unsigned char *)label, sizeof(label));
        crypto_auth_hmacsha512256_update(&st, v, 2);
        crypto_auth_hmacsha512256_update(&st, nc, 32);
        crypto_auth_hmacsha512256_update(&st, tb, 8);
        crypto_auth_hmacsha512256_final(&st, e);
        sodium_bin2hex(ehex, sizeof(ehex), e, 32);
        n = snprintf(body, sizeof(body),
                     "{\"proto\":\"fabtop-ctl\",\"version\":%d,\"role\":\"client\",\"nonce\":"
                     "\"%s\",\"time\":%lld,\"early\":\"%s\"}",
                     CHANNEL_VERSION, nhex, (long long)t, ehex);
    } else {
        n = snprintf(body, sizeof(body),
                     "{\"proto\":\"fabtop-ctl\",\"version\":%d,\"role\":\"client\",\"nonce\":"
                     "\"%s\"}",
                     CHANNEL_VERSION, nhex);
    }
    frame[0] = frame[1] = 0;
    frame[2] = (unsigned char)((n + 1) >> 8);
    frame[3] = (unsigned char)(n + 1);
    frame[4] = CHANNEL_T_HELLO;
    memcpy(frame + 5, body, (size_t)n);
    return (size_t)n + 5;
}

/* A raw connection from src that sends the hello frame and gets the agent's hello back. */
static int hello_answered(uint16_t port, const char *src, const unsigned char *frame, size_t n)
{
    int fd = raw_connect(AF_INET, src, port);
    raw_send(fd, frame, n);
    char buf[1024];
    int type = 0;
    assert_true(raw_read_frame(fd, &type, buf, sizeof(buf), 2000) > 0);
    assert_int_equal(type, CHANNEL_T_HELLO);
    return fd;
}

/* The next frame is a refusal "busy" starting with prefix, with the retry hint. */
static void expect_busy_prefix(int fd, const char *prefix)
{
    char buf[1024];
    int type = 0;
    assert_true(raw_read_frame(fd, &type, buf, sizeof(buf), 3000) > 0);
    assert_int_equal(type, CHANNEL_T_ERROR);
    cJSON *j = cJSON_Parse(buf);
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(j, "message"));
    if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "code")), "busy"))
        fprintf(stderr, "refusal '%s', not busy (wanted %s)\n", m, prefix);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "code")), "busy");
    if (strncmp(m, prefix, strlen(prefix)))
        fprintf(stderr, "refusal '%s' does not start with '%s'\n", m, prefix);
    assert_true(!strncmp(m, prefix, strlen(prefix)));
    assert_int_equal(cJSON_GetObjectItem(j, "retry_ms")->valueint, AGENT_BUSY_RETRY_MS);
    cJSON_Delete(j);
}

static void test_handshake_slots(void **state)
{
    (void)state;
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    cfg.max_handshakes = 4;
    cfg.max_handshakes_addr = 2; /* connections without a key's proof: 1 per address, 2 in all */
    struct fx *f = fx_new(&cfg, "127.0.0.1", NULL);
    struct bg *b = bg_start(f);

    /* Before the hello: a newcomer takes the place of its address's oldest idle one. */
    int s1 = raw_connect(AF_INET, "127.0.0.2", f->port);
    int s2 = raw_connect(AF_INET, "127.0.0.2", f->port);
    sleep_ms(50);
    int s3 = raw_connect(AF_INET, "127.0.0.2", f->port);
    expect_busy_prefix(s1, "busy: handshake cut off after ");
    /* ... with every slot taken, the address holding the most gives one up. */
    int s4 = raw_connect(AF_INET, "127.0.0.3", f->port);
    int s5 = raw_connect(AF_INET, "127.0.0.4", f->port);
    int s6 = raw_connect(AF_INET, "127.0.0.4", f->port);
    expect_busy_prefix(s2, "busy: handshake cut off after ");
    bg_progress(b);
    close(s1);
    close(s2);
    close(s3);
    close(s4);
    close(s5);
    close(s6);
    sleep_ms(100);

    /* A hello without an early proof holds one of the fewer slots; a second one from its
     * address is refused while the first is young, and displaces it once it is older than
     * AGENT_EVICT_AGE_MS; under this pressure its handshake must finish within
     * AGENT_PRESSURE_MS instead of the 5 s. */
    unsigned char fr[600], nc[32];
    randombytes_buf(nc, sizeof(nc));
    size_t n = early_hello(fr, NULL, nc, 0);
    int u1 = hello_answered(f->port, "127.0.0.5", fr, n);
    int u2 = raw_connect(AF_INET, "127.0.0.5", f->port);
    randombytes_buf(nc, sizeof(nc));
    n = early_hello(fr, NULL, nc, 0);
    raw_send(u2, fr, n);
    expect_busy_prefix(u2, "busy: 1 handshakes without a key's early proof from 127.0.0.5 at "
                           "once, limit 1 per address");
    close(u2);
    sleep_ms(AGENT_EVICT_AGE_MS + 50);
    randombytes_buf(nc, sizeof(nc));
    n = early_hello(fr, NULL, nc, 0);
    int64_t t0 = now_ms();
    int u3 = hello_answered(f->port, "127.0.0.5", fr, n);
    expect_busy_prefix(u1, "busy: handshake cut off after ");
    close(u1);
    expect_refusal(u3, "timeout", "handshake timed out after 1000 ms");
    int64_t took = now_ms() - t0;
    assert_true(took >= 900 && took < 2000);
    close(u3);

    /* A hello with a valid early proof skips those slots while they are taken; a replay of
     * it, a stale one and one made with another key do not. */
    int w1 = hello_answered(f->port, "127.0.0.6", fr, early_hello(fr, NULL, nc, 0));
    randombytes_buf(nc, sizeof(nc));
    n = early_hello(fr, &f->key, nc, (int64_t)time(NULL));
    int e1 = hello_answered(f->port, "127.0.0.6", fr, n);
    int e2 = raw_connect(AF_INET, "127.0.0.6", f->port);
    raw_send(e2, fr, n); /* the same hello again */
    expect_busy_prefix(e2, "busy: 1 handshakes without a key's early proof from 127.0.0.6");
    close(e2);
    randombytes_buf(nc, sizeof(nc));
    n = early_hello(fr, &f->key, nc, (int64_t)time(NULL) - 2 * CHANNEL_EARLY_SKEW_S);
    e2 = raw_connect(AF_INET, "127.0.0.6", f->port);
    raw_send(e2, fr, n);
    expect_busy_prefix(e2, "busy: 1 handshakes without a key's early proof from 127.0.0.6");
    close(e2);
    struct channel_key other;
    channel_key_random(&other);
    randombytes_buf(nc, sizeof(nc));
    n = early_hello(fr, &other, nc, (int64_t)time(NULL));
    e2 = raw_connect(AF_INET, "127.0.0.6", f->port);
    raw_send(e2, fr, n);
    expect_busy_prefix(e2, "busy: 1 handshakes without a key's early proof from 127.0.0.6");
    close(e2);
    close(e1);
    close(w1);
    bg_stop(b);
    fx_free(f);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    srand((unsigned)time(NULL));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idle_reconnect),
        cmocka_unit_test(test_hostile_mix),
        cmocka_unit_test(test_refusal_log_bounded),
        cmocka_unit_test(test_handshake_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
