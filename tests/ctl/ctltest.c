/* ctltest: helpers for the control channel and agent tests (see ctltest.h). */
#include "ctltest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers: time, log capture ---- */

int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

void cap_log(void *arg, const char *line)
{
    struct logcap *lc = arg;
    pthread_mutex_lock(&lc->mu);
    lc->total += strlen(line) + 1;
    lc->lines++;
    int n = snprintf(lc->buf + lc->len, sizeof(lc->buf) - lc->len, "%s\n", line);
    if (n > 0 && lc->len + (size_t)n < sizeof(lc->buf))
        lc->len += (size_t)n;
    pthread_mutex_unlock(&lc->mu);
}

bool log_has(struct logcap *lc, const char *needle)
{
    pthread_mutex_lock(&lc->mu);
    bool found = strstr(lc->buf, needle) != NULL;
    pthread_mutex_unlock(&lc->mu);
    return found;
}

bool log_wait(struct logcap *lc, const char *needle, int ms)
{
    int64_t end = now_ms() + ms;
    while (!log_has(lc, needle)) {
        if (now_ms() > end) {
            fprintf(stderr, "log has no '%s'; it holds:\n%s", needle, lc->buf);
            return false;
        }
        sleep_ms(5);
    }
    return true;
}

struct fx *fx_new(struct agent_cfg *cfg, const char *listen,
                  const struct agent_handler *const *handlers)
{
    struct fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    pthread_mutex_init(&f->log.mu, NULL);
    channel_key_random(&f->key);
    struct agent_cfg d;
    if (!cfg) {
        agent_cfg_defaults(&d);
        cfg = &d;
    }
    snprintf(cfg->listen, sizeof(cfg->listen), "%s", listen);
    cfg->port = 0;
    cfg->key = f->key;
    cfg->log = cap_log;
    cfg->log_arg = &f->log;
    struct ft_err err = {0};
    int rc = agent_start(cfg, handlers, -1, &f->a, &err);
    if (rc < 0)
        fprintf(stderr, "agent_start: %s\n", err.msg);
    assert_int_equal(rc, 0);
    f->port = agent_port(f->a);
    assert_true(f->port > 0);
    snprintf(f->hp, sizeof(f->hp), strchr(listen, ':') ? "[%s]:%u" : "%s:%u", listen, f->port);
    return f;
}

void fx_stop(struct fx *f)
{
    agent_stop(f->a);
    f->a = NULL;
}

void fx_free(struct fx *f)
{
    agent_stop(f->a);
    pthread_mutex_destroy(&f->log.mu);
    free(f);
}

struct channel_conn *must_connect(const char *hp, const struct channel_key *key)
{
    struct channel_conn *c = NULL;
    struct ft_err err = {0};
    int rc = channel_connect(hp, CHANNEL_DEFAULT_PORT, key, 3000, &c, &err);
    if (rc < 0)
        fprintf(stderr, "channel_connect %s: %s\n", hp, err.msg);
    assert_int_equal(rc, 0);
    return c;
}

/* Echo one value; returns 0 or -errno (message in err). */
int echo_n(struct channel_conn *c, int n, struct ft_err *err)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "echo");
    cJSON *d = cJSON_AddObjectToObject(req, "data");
    cJSON_AddNumberToObject(d, "n", n);
    cJSON_AddStringToObject(d, "s", "ping");
    cJSON *resp = NULL;
    int rc = channel_request(c, req, &resp, 3000, err);
    if (rc == 0) {
        const cJSON *rd = cJSON_GetObjectItemCaseSensitive(resp, "data");
        const cJSON *rn = cJSON_GetObjectItemCaseSensitive(rd, "n");
        if (!cJSON_IsNumber(rn) || rn->valueint != n)
            rc = ft_err_set(err, -EPROTO, "echo returned something else");
    }
    cJSON_Delete(resp);
    return rc;
}

static void *bg_main(void *arg)
{
    struct bg *b = arg;
    for (int i = 0; !atomic_load(&b->stop); i++) {
        struct ft_err err = {0};
        if (echo_n(b->c, i, &err) == 0) {
            atomic_fetch_add(&b->ok, 1);
        } else {
            snprintf(b->err, sizeof(b->err), "%s", err.msg);
            atomic_fetch_add(&b->fail, 1);
            break;
        }
        sleep_ms(2);
    }
    return NULL;
}

struct bg *bg_start(struct fx *f)
{
    struct bg *b = calloc(1, sizeof(*b));
    assert_non_null(b);
    b->c = must_connect(f->hp, &f->key);
    assert_int_equal(pthread_create(&b->t, NULL, bg_main, b), 0);
    return b;
}

/* The legitimate client made progress just now. */
void bg_progress(struct bg *b)
{
    int start = atomic_load(&b->ok);
    int64_t end = now_ms() + 5000;
    while (atomic_load(&b->ok) < start + 5 && atomic_load(&b->fail) == 0 && now_ms() < end)
        sleep_ms(2);
    if (atomic_load(&b->fail))
        fprintf(stderr, "background client failed: %s\n", b->err);
    assert_int_equal(atomic_load(&b->fail), 0);
    assert_true(atomic_load(&b->ok) >= start + 5);
}

void bg_stop(struct bg *b)
{
    bg_progress(b);
    atomic_store(&b->stop, true);
    pthread_join(b->t, NULL);
    assert_int_equal(atomic_load(&b->fail), 0);
    channel_close(b->c);
    free(b);
}

/* ---- raw sockets: what a broken or hostile client sends ---- */

int raw_connect(int family, const char *src, uint16_t port)
{
    int fd = socket(family, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_storage ss = {0};
    socklen_t sl;
    if (family == AF_INET) {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        if (src) {
            inet_pton(AF_INET, src, &s4->sin_addr);
            assert_int_equal(bind(fd, (struct sockaddr *)s4, sizeof(*s4)), 0);
        }
        inet_pton(AF_INET, "127.0.0.1", &s4->sin_addr);
        s4->sin_port = htons(port);
        sl = sizeof(*s4);
    } else {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_addr = in6addr_loopback;
        s6->sin6_port = htons(port);
        sl = sizeof(*s6);
    }
    assert_int_equal(connect(fd, (struct sockaddr *)&ss, sl), 0);
    return fd;
}

void raw_send(int fd, const void *p, size_t n)
{
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    (void)w;
}

void raw_frame(int fd, int type, const void *payload, size_t n)
{
    unsigned char hdr[5] = {(unsigned char)((n + 1) >> 24), (unsigned char)((n + 1) >> 16),
                            (unsigned char)((n + 1) >> 8), (unsigned char)(n + 1),
                            (unsigned char)type};
    raw_send(fd, hdr, 5);
    raw_send(fd, payload, n);
}

int read_full(int fd, void *buf, size_t n, int64_t deadline)
{
    unsigned char *p = buf;
    while (n) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int left = (int)(deadline - now_ms());
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            return -ETIMEDOUT;
        ssize_t r = recv(fd, p, n, 0);
        if (r <= 0)
            return -ECONNRESET;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Read one unauthenticated frame; returns the payload length or -errno. */
int raw_read_frame(int fd, int *type, char *buf, size_t max, int ms)
{
    int64_t deadline = now_ms() + ms;
    unsigned char hdr[5];
    int rc = read_full(fd, hdr, 5, deadline);
    if (rc < 0)
        return rc;
    uint32_t len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
    assert_true(len >= 1 && len - 1 < max);
    *type = hdr[4];
    rc = read_full(fd, buf, len - 1, deadline);
    if (rc < 0)
        return rc;
    buf[len - 1] = '\0';
    return (int)(len - 1);
}

void expect_refusal(int fd, const char *code, const char *msg)
{
    expect_refusal_retry(fd, code, msg, 0);
}

void expect_refusal_retry(int fd, const char *code, const char *msg, int retry_ms)
{
    char buf[2048];
    int type = 0;
    int n = raw_read_frame(fd, &type, buf, sizeof(buf), 3000);
    assert_true(n > 0);
    assert_int_equal(type, CHANNEL_T_ERROR);
    cJSON *j = cJSON_Parse(buf);
    assert_non_null(j);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "code")), code);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "message")), msg);
    assert_int_equal(cJSON_GetObjectItem(j, "version")->valueint, CHANNEL_VERSION);
    const cJSON *r = cJSON_GetObjectItem(j, "retry_ms");
    assert_int_equal(r ? r->valueint : 0, retry_ms);
    cJSON_Delete(j);
}

char *hello_json(const char *proto, int version, const char *role)
{
    static char buf[512];
    char nonce[65];
    for (int i = 0; i < 64; i++)
        nonce[i] = "0123456789abcdef"[rand() % 16];
    nonce[64] = '\0';
    snprintf(buf, sizeof(buf), "{\"proto\":\"%s\",\"version\":%d,\"role\":\"%s\",\"nonce\":\"%s\"}",
             proto, version, role, nonce);
    return buf;
}

uint16_t local_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    return ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                         : ((struct sockaddr_in6 *)&ss)->sin6_port);
}
