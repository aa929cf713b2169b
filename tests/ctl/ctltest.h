/* ctltest: helpers for the control channel and agent tests: time, a captured agent log,
 * an in-process agent on loopback, a legitimate background client, and raw sockets for
 * what a broken or hostile client sends. Asserts through cmocka. */
#ifndef CTLTEST_H
#define CTLTEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/peer/agent.h"
#include "engine/peer/channel.h"

int64_t now_ms(void);
void sleep_ms(int ms);

struct logcap {
    pthread_mutex_t mu;
    char buf[1 << 18];
    size_t len;
    size_t total; /* bytes logged, kept or not */
    unsigned lines;
};

void cap_log(void *arg, const char *line);
bool log_has(struct logcap *lc, const char *needle);
/* Wait (polling, not sleeping a fixed time) for a log line containing needle. */
bool log_wait(struct logcap *lc, const char *needle, int ms);

/* The agent under test. */
struct fx {
    struct agent *a;
    struct channel_key key;
    struct logcap log;
    uint16_t port;
    char hp[80]; /* "127.0.0.1:PORT" or "[::1]:PORT" */
};

/* Start an agent on listen (port 0) with cfg (NULL: defaults), a random key, handlers. */
struct fx *fx_new(struct agent_cfg *cfg, const char *listen,
                  const struct agent_handler *const *handlers);
/* Stop the agent (its log stays readable). */
void fx_stop(struct fx *f);
void fx_free(struct fx *f);
struct channel_conn *must_connect(const char *hp, const struct channel_key *key);
/* Echo one value; returns 0 or -errno (message in err). */
int echo_n(struct channel_conn *c, int n, struct ft_err *err);

/* A legitimate client that keeps echoing while the agent is attacked. */
struct bg {
    pthread_t t;
    struct channel_conn *c;
    atomic_int ok, fail;
    atomic_bool stop;
    char err[512];
};

struct bg *bg_start(struct fx *f);
/* The legitimate client made progress just now. */
void bg_progress(struct bg *b);
void bg_stop(struct bg *b);

/* Raw sockets: connect to 127.0.0.1 (from src when given) or ::1. */
int raw_connect(int family, const char *src, uint16_t port);
void raw_send(int fd, const void *p, size_t n);
void raw_frame(int fd, int type, const void *payload, size_t n);
int read_full(int fd, void *buf, size_t n, int64_t deadline);
/* Read one unauthenticated frame; returns the payload length or -errno. */
int raw_read_frame(int fd, int *type, char *buf, size_t max, int ms);
/* The next frame is an ERROR refusal with this code and message. */
void expect_refusal(int fd, const char *code, const char *msg);
/* ... and this retry hint (0: none). */
void expect_refusal_retry(int fd, const char *code, const char *msg, int retry_ms);
char *hello_json(const char *proto, int version, const char *role);
uint16_t local_port(int fd);

#endif
