/* test_tcp_agent: the agent's side of a TCP ping-pong / request-response data connection, over
 * real loopback sockets, byte by byte as a client could send it: two requests in one segment
 * get two responses, a request split anywhere (inside its header too) gets one, a request
 * larger than the agent's buffer is read to its end, and a malformed header closes the
 * connection with one log line. The requests are written here from the wire format (magic,
 * size, response size, flags in network byte order, then the payload), not by fabtop's
 * client. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "common/jsonutil.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/xport/xport.h"

#define REQ_MAGIC   0x46545450u /* "FTTP" */
#define HELLO_MAGIC 0x4654484cu /* "FTHL" */
#define HDR         16

struct logbuf {
    pthread_mutex_t mu;
    char text[8192];
};

static void log_line(void *arg, const char *line)
{
    struct logbuf *l = arg;
    pthread_mutex_lock(&l->mu);
    size_t n = strlen(l->text);
    snprintf(l->text + n, sizeof(l->text) - n, "%s\n", line);
    pthread_mutex_unlock(&l->mu);
}

struct fx {
    struct agent *a;
    struct channel_conn *c;
    struct logbuf log;
    int fd; /* the data connection */
};

/* An agent on 127.0.0.1 with the transports' handlers, a session, and one authenticated
 * ping-pong data connection opened through tcp.open. */
static struct fx *fx_new(void)
{
    struct fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    pthread_mutex_init(&f->log.mu, NULL);
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1");
    channel_key_random(&cfg.key);
    cfg.log = log_line;
    cfg.log_arg = &f->log;
    struct channel_key key = cfg.key;
    int nh;
    const struct agent_handler *const *h = xport_agent_handlers(&nh);
    struct ft_err err = {0};
    if (agent_start(&cfg, h, nh, &f->a, &err) < 0)
        fail_msg("agent_start: %s", err.msg);
    char hp[64];
    snprintf(hp, sizeof(hp), "127.0.0.1:%u", agent_port(f->a));
    if (channel_connect(hp, 0, &key, 3000, &f->c, &err) < 0)
        fail_msg("channel_connect: %s", err.msg);
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "tcp.open");
    cJSON_AddStringToObject(req, "op", "pingpong");
    cJSON_AddStringToObject(req, "direction", "tx");
    cJSON_AddNumberToObject(req, "conns", 1);
    cJSON_AddNumberToObject(req, "size", 64);
    cJSON *resp = NULL;
    if (channel_request(f->c, req, &resp, 3000, &err) < 0)
        fail_msg("tcp.open: %s", err.msg);
    double port = 0;
    const char *tok = jsonutil_str(resp, "token");
    assert_true(jsonutil_num(resp, "port", &port) && port > 0 && tok);
    uint8_t token[32];
    size_t toklen = 0;
    assert_int_equal(sodium_hex2bin(token, sizeof(token), tok, strlen(tok), NULL, &toklen, NULL),
                     0);
    assert_int_equal(toklen, sizeof(token));
    cJSON_Delete(resp);

    f->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(f->fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(f->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    uint32_t hello[2] = {htonl(HELLO_MAGIC), htonl(0)};
    assert_int_equal(send(f->fd, hello, sizeof(hello), 0), (ssize_t)sizeof(hello));
    assert_int_equal(send(f->fd, token, sizeof(token), 0), (ssize_t)sizeof(token));
    uint8_t ack = 0;
    assert_int_equal(recv(f->fd, &ack, 1, MSG_WAITALL), 1);
    assert_int_equal(ack, 1);
    return f;
}

static void fx_free(struct fx *f)
{
    close(f->fd);
    channel_close(f->c);
    agent_stop(f->a);
    pthread_mutex_destroy(&f->log.mu);
    free(f);
}

/* A request of size bytes (header included) asking for resp bytes back, into buf. */
static size_t put_req(uint8_t *buf, uint32_t size, uint32_t resp, uint32_t magic)
{
    uint32_t h[4] = {htonl(magic), htonl(size), htonl(resp), 0};
    memcpy(buf, h, sizeof(h));
    memset(buf + HDR, 0x5a, size - HDR);
    return size;
}

static void send_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        assert_true(k > 0);
        p += k;
        n -= (size_t)k;
    }
}

/* Bytes readable within ms: reads until that long passes without any. */
static size_t recv_for(int fd, int ms)
{
    size_t total = 0;
    char buf[65536];
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, ms) <= 0)
            return total;
        ssize_t k = recv(fd, buf, sizeof(buf), 0);
        if (k <= 0)
            return total;
        total += (size_t)k;
    }
}

static void test_two_requests_in_one_segment(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    uint8_t buf[256];
    size_t n = put_req(buf, 64, 100, REQ_MAGIC);
    n += put_req(buf + n, 80, 30, REQ_MAGIC);
    send_all(f->fd, buf, n); /* one send: both arrive together */
    assert_int_equal(recv_for(f->fd, 500), 130);
    fx_free(f);
}

static void test_split_requests(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    uint8_t buf[64];
    put_req(buf, 64, 40, REQ_MAGIC);
    /* Inside the header, then inside the payload: one response, after the last byte. */
    send_all(f->fd, buf, 5);
    assert_int_equal(recv_for(f->fd, 100), 0);
    send_all(f->fd, buf + 5, 20);
    assert_int_equal(recv_for(f->fd, 100), 0);
    send_all(f->fd, buf + 25, 39);
    assert_int_equal(recv_for(f->fd, 500), 40);
    /* A request ending and the next one's first bytes in one segment. */
    uint8_t two[128];
    size_t n = put_req(two, 64, 20, REQ_MAGIC);
    n += put_req(two + n, 64, 24, REQ_MAGIC);
    send_all(f->fd, two, 64 + 10);
    assert_int_equal(recv_for(f->fd, 300), 20);
    send_all(f->fd, two + 74, n - 74);
    assert_int_equal(recv_for(f->fd, 500), 24);
    fx_free(f);
}

static void test_request_larger_than_buffer(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    uint32_t size = 9u << 20; /* over the agent's 4 MiB buffer */
    uint8_t *big = malloc(size + 64);
    assert_non_null(big);
    put_req(big, size, 16, REQ_MAGIC);
    put_req(big + size, 64, 50, REQ_MAGIC); /* and one more right behind it */
    send_all(f->fd, big, size + 64);
    assert_int_equal(recv_for(f->fd, 2000), 16 + 50);
    free(big);
    fx_free(f);
}

static void test_malformed_header_closes(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    uint8_t buf[64];
    put_req(buf, 64, 32, REQ_MAGIC);
    send_all(f->fd, buf, 64);
    assert_int_equal(recv_for(f->fd, 500), 32);
    put_req(buf, 64, 32, 0x12345678u); /* wrong magic */
    send_all(f->fd, buf, 64);
    /* The agent closes: EOF, no response. */
    char c;
    struct pollfd p = {f->fd, POLLIN, 0};
    assert_int_equal(poll(&p, 1, 3000), 1);
    assert_int_equal(recv(f->fd, &c, 1, 0), 0);
    pthread_mutex_lock(&f->log.mu);
    bool logged = strstr(f->log.text, "malformed request header") != NULL;
    pthread_mutex_unlock(&f->log.mu);
    assert_true(logged);
    fx_free(f);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_requests_in_one_segment),
        cmocka_unit_test(test_split_requests),
        cmocka_unit_test(test_request_larger_than_buffer),
        cmocka_unit_test(test_malformed_header_closes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
