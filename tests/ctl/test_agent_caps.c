/* test_agent_caps: the agent's caps with its real transport handlers, in a network
 * namespace of the test's own (so loopback's counters hold only this test's traffic and
 * are the wire measurement): the rate cap held by every flow of a session together and by
 * every session of a client key together (and apart for two keys), in both directions;
 * flows per session refused past the cap with a bounded number of threads and file
 * descriptors; one transport's request never reaching another's state. Root only (77). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "ctltest.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/xport/xport.h"

#define TOL 1.05 /* the cap may be exceeded by 5 % (headers, a last reservation) */

/* ---- what the test's namespace carries ---- */

static uint64_t lo_bytes(void)
{
    FILE *f = fopen("/proc/self/net/dev", "r");
    assert_non_null(f);
    char line[512];
    uint64_t tx = 0;
    while (fgets(line, sizeof(line), f)) {
        char *p = strstr(line, "lo:");
        unsigned long long v[9];
        if (p && sscanf(p + 3, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                        &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 9)
            tx = v[8]; /* transmit bytes: every byte on loopback once */
    }
    fclose(f);
    return tx;
}

static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    assert_non_null(d);
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 2;
}

/* ---- the TCP transport's data connections, as its client side makes them ---- */

#define TCP_HELLO 0x4654484cu /* "FTHL": engine/xport/tcp/xport_tcp.c */

struct data_conn {
    int fd;
    bool send; /* the test sends (a "tx" flow), else it receives ("rx") */
    pthread_t t;
    atomic_bool stop;
    _Atomic uint64_t bytes;
};

static void *data_main(void *arg)
{
    struct data_conn *d = arg;
    static char buf[1 << 16];
    while (!atomic_load(&d->stop)) {
        ssize_t k = d->send ? send(d->fd, buf, sizeof(buf), MSG_NOSIGNAL)
                            : recv(d->fd, buf, sizeof(buf), 0);
        if (k > 0)
            atomic_fetch_add(&d->bytes, (uint64_t)k);
        else if (k == 0 || (errno != EAGAIN && errno != EINTR))
            break;
    }
    return NULL;
}

/* tcp.open a one-connection stream in direction dir ("rx": the agent sends) on session c
 * and connect its data connection; returns the request's rc (and err). */
static int open_stream(struct channel_conn *c, const char *dir, struct data_conn *d,
                       struct ft_err *err)
{
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    cJSON_AddStringToObject(req, "type", "tcp.open");
    cJSON_AddStringToObject(req, "op", "stream");
    cJSON_AddStringToObject(req, "direction", dir);
    cJSON_AddNumberToObject(req, "conns", 1);
    cJSON_AddNumberToObject(req, "size", 65536);
    int rc = channel_request(c, req, &resp, 3000, err);
    if (rc < 0 || !d) {
        cJSON_Delete(resp);
        return rc;
    }
    int port = cJSON_GetObjectItem(resp, "port")->valueint;
    unsigned char tok[32];
    size_t len = 0;
    const char *hex = cJSON_GetStringValue(cJSON_GetObjectItem(resp, "token"));
    assert_int_equal(sodium_hex2bin(tok, 32, hex, strlen(hex), NULL, &len, NULL), 0);
    cJSON_Delete(resp);
    memset(d, 0, sizeof(*d));
    d->send = !strcmp(dir, "tx");
    d->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &s4.sin_addr);
    assert_int_equal(connect(d->fd, (struct sockaddr *)&s4, sizeof(s4)), 0);
    uint32_t hello[2] = {htonl(TCP_HELLO), htonl(0)};
    assert_int_equal(send(d->fd, hello, sizeof(hello), 0), (ssize_t)sizeof(hello));
    assert_int_equal(send(d->fd, tok, 32, 0), 32);
    unsigned char ack = 0;
    assert_int_equal(recv(d->fd, &ack, 1, MSG_WAITALL), 1);
    struct timeval tv = {0, 100000};
    setsockopt(d->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(d->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    assert_int_equal(pthread_create(&d->t, NULL, data_main, d), 0);
    return 0;
}

static void close_stream(struct data_conn *d)
{
    atomic_store(&d->stop, true);
    pthread_join(d->t, NULL);
    close(d->fd);
}

/* Run the streams for a warm-up (buffers fill) and then secs; Gb/s on the wire and per
 * stream (the test's own byte counts). */
static double measure(struct data_conn *d, int n, double secs, double *each)
{
    sleep_ms(500);
    uint64_t w0 = lo_bytes(), b0[16];
    for (int i = 0; i < n; i++)
        b0[i] = atomic_load(&d[i].bytes);
    int64_t t0 = now_ms();
    sleep_ms((int)(secs * 1000));
    double dt = (now_ms() - t0) / 1000.0;
    uint64_t w1 = lo_bytes();
    for (int i = 0; i < n; i++)
        each[i] = (double)(atomic_load(&d[i].bytes) - b0[i]) * 8 / dt / 1e9;
    return (double)(w1 - w0) * 8 / dt / 1e9;
}

static const struct agent_handler *const *transport_handlers(void)
{
    return xport_agent_handlers(NULL);
}

/* Five flows of one session at a cap of 0.2 Gb/s received 0.998 Gb/s (each flow clamped to
 * the cap on its own). Now they share it, both ways. */
static void test_session_flows_share_cap(void **state)
{
    (void)state;
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    cfg.max_rate_gbps = 0.2;
    cfg.max_flows = 8;
    struct fx *f = fx_new(&cfg, "127.0.0.1", transport_handlers());
    static const char *const dirs[] = {"rx", "tx"};
    for (int k = 0; k < 2; k++) {
        struct channel_conn *c = must_connect(f->hp, &f->key);
        struct data_conn d[5];
        struct ft_err err = {0};
        for (int i = 0; i < 5; i++)
            assert_int_equal(open_stream(c, dirs[k], &d[i], &err), 0);
        double each[5];
        double wire = measure(d, 5, 3.0, each);
        double sum = 0;
        for (int i = 0; i < 5; i++)
            sum += each[i];
        fprintf(stderr,
                "5 %s flows of one session, cap 0.2 Gb/s: %.3f Gb/s on the wire, %.3f Gb/s of "
                "data (%.3f %.3f %.3f %.3f %.3f)\n",
                dirs[k], wire, sum, each[0], each[1], each[2], each[3], each[4]);
        assert_true(wire <= 0.2 * TOL);
        assert_true(sum > 0.2 * 0.7); /* and the cap is used, not starved */
        for (int i = 0; i < 5; i++) {
            assert_true(each[i] > 0.2 / 5 * 0.5); /* fair enough between flows */
            close_stream(&d[i]);
        }
        channel_close(c);
    }
    fx_free(f);
}

/* A client with several sessions got 11.6 Gb/s through a 10 Gb/s cap: sessions of one key
 * share it; two keys have one each. */
static void test_key_sessions_share_cap(void **state)
{
    (void)state;
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    cfg.max_rate_gbps = 0.2;
    struct channel_key k2;
    channel_key_random(&k2);
    channel_key_random(&cfg.keys[0].key);
    cfg.keys[1].key = k2;
    cfg.nkeys = 2;
    struct fx *f = fx_new(&cfg, "127.0.0.1", transport_handlers());
    /* fx_new put its own key in cfg.key, which nkeys > 0 ignores: use the two keys. */
    struct channel_key k1 = cfg.keys[0].key;
    for (int two_keys = 0; two_keys < 2; two_keys++) {
        struct channel_conn *c[2] = {must_connect(f->hp, &k1),
                                     must_connect(f->hp, two_keys ? &k2 : &k1)};
        struct data_conn d[2];
        struct ft_err err = {0};
        for (int i = 0; i < 2; i++)
            assert_int_equal(open_stream(c[i], "rx", &d[i], &err), 0);
        double each[2];
        double wire = measure(d, 2, 3.0, each);
        fprintf(stderr,
                "2 sessions with %s, cap 0.2 Gb/s: %.3f Gb/s on the wire; %.3f and %.3f Gb/s of "
                "data\n",
                two_keys ? "two keys" : "one key", wire, each[0], each[1]);
        if (two_keys) {
            assert_true(each[0] <= 0.2 * TOL && each[1] <= 0.2 * TOL);
            assert_true(wire > 0.2 * 1.5 && wire <= 0.4 * TOL);
        } else {
            assert_true(wire <= 0.2 * TOL);
            assert_true(each[0] > 0.05 && each[1] > 0.05);
        }
        for (int i = 0; i < 2; i++) {
            close_stream(&d[i]);
            channel_close(c[i]);
        }
    }
    fx_free(f);
}

/* 200 tcp.open in one session made 203 threads and 212 file descriptors. Past the flows
 * cap they are refused, saying so, and cost nothing. */
static void test_flows_per_session(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL, "127.0.0.1", transport_handlers());
    struct channel_conn *c = must_connect(f->hp, &f->key);
    sleep_ms(100);
    int th0 = count_dir("/proc/self/task"), fd0 = count_dir("/proc/self/fd");
    int ok = 0, refused = 0;
    char want[300];
    snprintf(want, sizeof(want),
             "peer %s: tcp.open: this session already has %d flows, the agent's limit per "
             "session (a run opens one session per flow)",
             f->hp, AGENT_DEF_MAX_FLOWS);
    for (int i = 0; i < 200; i++) {
        struct ft_err err = {0};
        int rc = open_stream(c, "rx", NULL, &err);
        if (rc == 0) {
            ok++;
        } else {
            assert_int_equal(rc, -EMFILE);
            assert_string_equal(err.msg, want);
            refused++;
        }
    }
    int th1 = count_dir("/proc/self/task"), fd1 = count_dir("/proc/self/fd");
    fprintf(stderr,
            "200 tcp.open in one session: %d opened, %d refused; threads %d -> %d, file "
            "descriptors %d -> %d\n",
            ok, refused, th0, th1, fd0, fd1);
    assert_int_equal(ok, AGENT_DEF_MAX_FLOWS);
    assert_true(th1 - th0 <= AGENT_DEF_MAX_FLOWS);
    assert_true(fd1 - fd0 <= 2 * AGENT_DEF_MAX_FLOWS); /* a listener and its stop eventfd */
    /* The session itself goes on, and ends at once with its flows' listeners. */
    struct ft_err err = {0};
    assert_int_equal(echo_n(c, 1, &err), 0);
    int64_t t0 = now_ms();
    channel_close(c);
    while (agent_sessions(f->a) > 0 && now_ms() - t0 < 3000)
        sleep_ms(1);
    fprintf(stderr, "a session with %d flows ended %lld ms after its client left\n", ok,
            (long long)(now_ms() - t0));
    assert_true(now_ms() - t0 < 150);
    fx_free(f);
}

/* Requests of one transport never see another's per-session state (each asked for the
 * session's state and cast it to its own). */
static void test_state_per_transport(void **state)
{
    (void)state;
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    cfg.allow_nccl = true;
    struct fx *f = fx_new(&cfg, "127.0.0.1", transport_handlers());
    struct channel_conn *c = must_connect(f->hp, &f->key);
    struct ft_err err = {0};
    assert_int_equal(open_stream(c, "rx", NULL, &err), 0);
    static const struct {
        const char *req;
        int rc;
        const char *msg;
    } reqs[] = {
        {"{\"type\":\"verbs.size\",\"qp\":0,\"size\":8}", -EINVAL,
         "verbs.size: malformed request or no verbs flow"},
        {"{\"type\":\"verbs.nonce\"}", -EPROTO,
         "verbs.nonce: no verbs flow of this session waits for its check (verbs.open first, once "
         "per flow)"},
        {"{\"type\":\"verbs.echo\",\"nonces\":[]}", -EPROTO,
         "verbs.echo: this session has no verbs flow"},
        {"{\"type\":\"nccl.init\",\"nranks\":2,\"first_rank\":1,\"ids\":[]}", -EPROTO,
         "nccl.init: send nccl.open first (once per session)"},
        {"{\"type\":\"nccl.batch\",\"point\":0,\"n\":1}", -EPROTO,
         "nccl.batch: no NCCL ranks in this session"},
    };
    for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
        cJSON *resp = NULL;
        ft_err_clear(&err);
        int rc = channel_request(c, cJSON_Parse(reqs[i].req), &resp, 3000, &err);
        cJSON_Delete(resp);
        char want[300];
        snprintf(want, sizeof(want), "peer %s: %s", f->hp, reqs[i].msg);
        assert_int_equal(rc, reqs[i].rc);
        assert_string_equal(err.msg, want);
    }
    assert_int_equal(echo_n(c, 2, &err), 0);
    channel_close(c);
    fx_free(f);
}

/* nccl.* is refused, naming the flag, unless the session's key may use it. */
static void test_nccl_per_key(void **state)
{
    (void)state;
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    channel_key_random(&cfg.keys[0].key);
    channel_key_random(&cfg.keys[1].key);
    cfg.keys[1].allow_nccl = true;
    cfg.nkeys = 2;
    struct fx *f = fx_new(&cfg, "127.0.0.1", transport_handlers());
    static const char *const types[] = {"nccl.open", "nccl.init", "nccl.batch", "nccl.close"};
    for (int k = 0; k < 2; k++) {
        struct channel_conn *c = must_connect(f->hp, &cfg.keys[k].key);
        const cJSON *caps = cJSON_GetObjectItem(channel_peer_info(c), "caps");
        assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(caps, "nccl")), k == 1);
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
            cJSON *req = cJSON_CreateObject(), *resp = NULL;
            cJSON_AddStringToObject(req, "type", types[i]);
            struct ft_err err = {0};
            int rc = channel_request(c, req, &resp, 3000, &err);
            cJSON_Delete(resp);
            char want[400];
            snprintf(want, sizeof(want),
                     "peer %s: %s: this agent does not serve NCCL to this key: NCCL's ranks "
                     "connect to addresses the client's ranks advertise, so it is allowed per "
                     "key ('fabtop serve --allow-nccl')",
                     f->hp, types[i]);
            if (k == 0) {
                assert_int_equal(rc, -EPERM);
                assert_string_equal(err.msg, want);
            } else {
                assert_true(rc != -EPERM); /* past the permission (this host has no GPU) */
            }
        }
        /* Past the permission, out-of-range numbers are refused before anything uses them
         * (bound_s and root were converted unbounded). */
        static const char *const bad[] = {
            "{\"type\":\"nccl.open\",\"collective\":\"all_reduce\",\"dtype\":\"float\","
            "\"redop\":\"sum\",\"ncomms\":1,\"bound_s\":1e300,\"sizes\":[64]}",
            "{\"type\":\"nccl.open\",\"collective\":\"all_reduce\",\"dtype\":\"float\","
            "\"redop\":\"sum\",\"ncomms\":1,\"bound_s\":3,\"root\":1e300,\"sizes\":[64]}",
        };
        for (size_t i = 0; k == 1 && i < sizeof(bad) / sizeof(bad[0]); i++) {
            cJSON *resp = NULL;
            struct ft_err err = {0};
            assert_int_equal(channel_request(c, cJSON_Parse(bad[i]), &resp, 3000, &err), -EINVAL);
            char want[300];
            snprintf(want, sizeof(want),
                     "peer %s: nccl.open: bad request (collective, dtype, redop, ncomms 1-16, "
                     "bound_s 0-600, root 0-4095 and sizes are required)",
                     f->hp);
            assert_string_equal(err.msg, want);
        }
        channel_close(c);
    }
    fx_free(f);
}

/* Bring loopback up in the test's own namespace. */
static int lo_up(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
    int rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
    ifr.ifr_flags |= IFF_UP;
    if (rc == 0)
        rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
    close(fd);
    return rc;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0 || lo_up() < 0) {
        printf("SKIP: a network namespace of its own needs root\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_flows_share_cap),
        cmocka_unit_test(test_key_sessions_share_cap),
        cmocka_unit_test(test_flows_per_session),
        cmocka_unit_test(test_state_per_transport),
        cmocka_unit_test(test_nccl_per_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
