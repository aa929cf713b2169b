/* agent: accept loop (poll on the listening socket, a stop pipe and a reap pipe), one
 * thread per session, allowlist, handshake slots per address with eviction under pressure,
 * refusal logging with summaries, caps (rate per client key, flows per session), request
 * dispatch, per-session state and timers. A session that fails or misbehaves only ever
 * ends itself. */
#include "engine/peer/agent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/jsonutil.h"

/* Refused connections wait (held open, so a client that reconnects when its connection ends
 * waits that long) until the client has read why or LINGER_MS pass; at most MAX_LINGER. */
#define MAX_LINGER       256
#define LINGER_MS        1000
#define EARLY_SEEN       256      /* nonces of early proofs remembered (replays gain nothing) */
#define PACE_SLACK_NS    20000000 /* the rate cap's tolerance for late senders (20 ms) */
#define FRAME_TIMEOUT_MS 10000
#define ACCEPT_BATCH     64

struct cidr {
    int family;
    unsigned char addr[16];
    int prefix;
};

/* A pending handshake: before its hello (PRE), after a hello without a valid early proof
 * (UNAUTH), or after one with it (PRIO: the client holds a key; not counted against the
 * slots of connections without one). */
enum { HS_PRE = 1, HS_UNAUTH, HS_PRIO };

/* Where a connection comes from, for the per-address handshake slots: the IPv4 address,
 * or the /64 of an IPv6 one (a host usually has a whole /64). */
struct src_addr {
    unsigned char b[8];
    int len; /* 4 or 8 */
};

struct agent_session {
    struct agent *a;
    struct agent_session *next;
    uint64_t id;
    int fd;
    struct channel_conn *conn;
    struct sockaddr_storage peer, local;
    char peer_host[INET6_ADDRSTRLEN];
    unsigned peer_port;
    struct src_addr src;
    pthread_t thr;
    atomic_bool done;
    /* Under agent.mu: */
    bool pending;     /* in the handshake */
    int hs;           /* HS_*: which handshake slot it holds while pending */
    bool evicted;     /* cut off for a newcomer (its socket's reading side is shut) */
    bool admitted;    /* holds one of max_sessions */
    int64_t t_accept; /* ms, CLOCK_MONOTONIC */
    char evict_why[200];
    /* The session's thread only: */
    int key;
    int nflows;
    int nreq;
    struct timespec t0;
    struct {
        const void *tag;
        void *state;
        void (*destroy)(void *);
    } st[AGENT_STATE_SLOTS];
    int nst;
    int64_t timer_at; /* ms; 0: none */
    void (*timer_fn)(struct agent_session *, void *);
    void *timer_arg;
};

struct lingering {
    int fd;
    int64_t deadline;
    bool blind; /* its reading side is shut (cut off): only the deadline ends it */
};

/* Rate cap of one client key: a virtual clock (the time by which everything reserved so
 * far has gone at the cap); a reservation of n bytes waits until the clock, then moves it
 * on by n / rate. */
struct bucket {
    pthread_mutex_t mu;
    int64_t tat_ns;
};

/* Refusals in the current log window, per address. */
struct refused {
    char host[INET6_ADDRSTRLEN];
    unsigned count, logged;
    char last[200];
};

struct agent {
    struct agent_cfg cfg; /* effective: defaults filled, keys zeroed, allow NULL */
    struct channel_key keys[AGENT_MAX_KEYS];
    bool allow_nccl[AGENT_MAX_KEYS];
    struct bucket buckets[AGENT_MAX_KEYS];
    int nkeys;
    struct cidr allow[AGENT_MAX_ALLOW];
    int nallow;
    const struct agent_handler **handlers;
    int nhandlers;
    int lfd;
    uint16_t port;
    char desc[80];
    int stop_pipe[2]; /* readable once stopping; never drained */
    int wake_pipe[2]; /* a session ended: reap it */
    pthread_t thr;
    pthread_mutex_t mu; /* sessions, their handshake fields, nactive, npending, hand */
    struct agent_session *sessions;
    int nactive, npending;
    uint64_t next_id;
    atomic_bool stopping;
    pthread_mutex_t logmu;
    char host[256];
    struct lingering lg[MAX_LINGER];
    int nlg;
    int hand[MAX_LINGER];        /* refused connections handed to the accept loop, under mu; */
    bool hand_blind[MAX_LINGER]; /* with their lingering.blind */
    int nhand;
    struct {
        unsigned char n[8];
        int64_t at;
    } seen[EARLY_SEEN]; /* early proofs' nonces, under mu */
    int nseen;
    pthread_attr_t thr_attr; /* session threads: a smaller stack */
    /* refusal log window, under rlmu */
    pthread_mutex_t rlmu;
    int64_t rl_start; /* ms; 0: no refusal yet in this window */
    int rl_detail;    /* lines logged one by one in this window */
    struct refused rl[AGENT_LOG_ADDRS];
    int nrl;
    unsigned rl_other, rl_other_logged; /* addresses beyond AGENT_LOG_ADDRS */
    unsigned accept_errors;             /* accept() failures in this window */
    char accept_error[80];
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void agent_log(struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void agent_log(struct agent *a, const char *fmt, ...)
{
    if (!a->cfg.log)
        return;
    char line[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&a->logmu);
    a->cfg.log(a->cfg.log_arg, line);
    pthread_mutex_unlock(&a->logmu);
}

/* IPv4-mapped IPv6 becomes plain IPv4, so allowlists and transports see one form. */
static void normalize(struct sockaddr_storage *ss)
{
    if (ss->ss_family != AF_INET6)
        return;
    struct sockaddr_in6 s6 = *(struct sockaddr_in6 *)ss;
    if (!IN6_IS_ADDR_V4MAPPED(&s6.sin6_addr))
        return;
    struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_port = s6.sin6_port};
    memcpy(&s4.sin_addr, &s6.sin6_addr.s6_addr[12], 4);
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, &s4, sizeof(s4));
}

/* ---- allowlist ---- */

static int cidr_parse(const char *s, struct cidr *c, struct ft_err *err)
{
    char buf[INET6_ADDRSTRLEN + 8];
    if (strlen(s) >= sizeof(buf))
        return ft_err_set(err, -EINVAL, "allowlist entry '%s': too long", s);
    snprintf(buf, sizeof(buf), "%s", s);
    char *slash = strchr(buf, '/');
    if (slash)
        *slash = '\0';
    memset(c, 0, sizeof(*c));
    int max;
    if (inet_pton(AF_INET, buf, c->addr) == 1) {
        c->family = AF_INET;
        max = 32;
    } else if (inet_pton(AF_INET6, buf, c->addr) == 1) {
        c->family = AF_INET6;
        max = 128;
    } else {
        return ft_err_set(err, -EINVAL,
                          "allowlist entry '%s': not an IPv4 or IPv6 address with an optional "
                          "/PREFIX",
                          s);
    }
    c->prefix = max;
    if (slash) {
        char *end;
        long v = strtol(slash + 1, &end, 10);
        if (!slash[1] || *end || v < 0 || v > max)
            return ft_err_set(err, -EINVAL, "allowlist entry '%s': the prefix must be 0 to %d", s,
                              max);
        c->prefix = (int)v;
    }
    /* ::ffff:a.b.c.d/N (N >= 96) is the IPv4 network a.b.c.d/(N-96). */
    if (c->family == AF_INET6 && c->prefix >= 96 &&
        IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)c->addr)) {
        memmove(c->addr, c->addr + 12, 4);
        memset(c->addr + 4, 0, 12);
        c->family = AF_INET;
        c->prefix -= 96;
    }
    return 0;
}

static bool cidr_match(const struct cidr *c, const struct sockaddr_storage *ss)
{
    const unsigned char *p;
    if (ss->ss_family != c->family)
        return false;
    if (c->family == AF_INET)
        p = (const unsigned char *)&((const struct sockaddr_in *)ss)->sin_addr;
    else
        p = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
    int bits = c->prefix, i = 0;
    for (; bits >= 8; bits -= 8, i++)
        if (p[i] != c->addr[i])
            return false;
    if (bits) {
        unsigned char mask = (unsigned char)(0xff << (8 - bits));
        if ((p[i] & mask) != (c->addr[i] & mask))
            return false;
    }
    return true;
}

static bool allowed(const struct agent *a, const struct sockaddr_storage *ss)
{
    if (a->nallow == 0)
        return true;
    for (int i = 0; i < a->nallow; i++)
        if (cidr_match(&a->allow[i], ss))
            return true;
    return false;
}

/* ---- built-in requests ---- */

static int h_hello(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)req;
    (void)err;
    struct agent *a = s->a;
    cJSON_AddStringToObject(resp, "host", a->host);
    cJSON_AddStringToObject(resp, "fabtop", FABTOP_VERSION);
    cJSON_AddStringToObject(resp, "protocol", CHANNEL_PROTO);
    cJSON_AddNumberToObject(resp, "version", CHANNEL_VERSION);
    cJSON_AddNumberToObject(resp, "session", (double)s->id);
    cJSON_AddStringToObject(resp, "client", s->peer_host);
    /* null: no cap */
    cJSON *caps = cJSON_AddObjectToObject(resp, "caps");
    cJSON_AddNumberToObject(caps, "max_sessions", a->cfg.max_sessions);
    /* per client key: every session of this client's key shares it */
    jsonutil_add_num_or_null(caps, "max_rate_gbps", a->cfg.max_rate_gbps > 0, a->cfg.max_rate_gbps);
    cJSON_AddStringToObject(caps, "max_rate_scope", "client key");
    cJSON_AddNumberToObject(caps, "max_flows", a->cfg.max_flows);
    cJSON_AddBoolToObject(caps, "nccl", a->allow_nccl[s->key]);
    jsonutil_add_num_or_null(caps, "max_duration_s", a->cfg.max_duration_s > 0,
                             a->cfg.max_duration_s);
    jsonutil_add_num_or_null(caps, "max_streams", a->cfg.max_streams > 0, a->cfg.max_streams);
    jsonutil_add_num_or_null(caps, "idle_timeout_s", a->cfg.idle_timeout_s > 0,
                             a->cfg.idle_timeout_s);
    cJSON *types = cJSON_AddArrayToObject(resp, "types");
    for (int i = 0; i < a->nhandlers; i++)
        cJSON_AddItemToArray(types, cJSON_CreateString(a->handlers[i]->type));
    return 0;
}

static int h_echo(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)s;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(req, "data");
    cJSON *copy = d ? cJSON_Duplicate(d, true) : cJSON_CreateNull();
    if (!copy)
        return ft_err_set(err, -ENOMEM, "out of memory");
    cJSON_AddItemToObject(resp, "data", copy);
    return 0;
}

static int h_bye(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)s;
    (void)req;
    (void)resp;
    (void)err;
    return 0; /* the session loop ends after the reply */
}

static const struct agent_handler builtin_hello = {"hello", h_hello};
static const struct agent_handler builtin_info = {"info", h_hello};
static const struct agent_handler builtin_echo = {"echo", h_echo};
static const struct agent_handler builtin_bye = {"bye", h_bye};
static const struct agent_handler *const builtins[] = {&builtin_hello, &builtin_info, &builtin_echo,
                                                       &builtin_bye};

/* ---- refusals: one line each up to the window's quota, then per-address summaries ---- */

/* Under rlmu: log what the window did not log line by line, and start a new window. */
static void rl_flush_locked(struct agent *a)
{
    int span = (int)((mono_ms() - a->rl_start + 999) / 1000);
    if (span < AGENT_LOG_WINDOW_S)
        span = AGENT_LOG_WINDOW_S;
    for (int i = 0; i < a->nrl; i++) {
        const struct refused *r = &a->rl[i];
        unsigned more = r->count - r->logged;
        if (more)
            agent_log(a, "refused %u %sconnection%s from %s in the last %d s: %s", more,
                      r->logged ? "more " : "", more == 1 ? "" : "s", r->host, span, r->last);
    }
    unsigned more = a->rl_other - a->rl_other_logged;
    if (more)
        agent_log(a, "refused %u %sconnection%s from other addresses in the last %d s", more,
                  a->rl_other_logged ? "more " : "", more == 1 ? "" : "s", span);
    if (a->accept_errors > 1)
        agent_log(a, "could not accept %u more connections in the last %d s: %s",
                  a->accept_errors - 1, span, a->accept_error);
    a->nrl = 0;
    a->rl_other = a->rl_other_logged = 0;
    a->rl_detail = 0;
    a->accept_errors = 0;
    a->rl_start = 0;
}

/* The window is over: summarise it (the accept loop calls this when it wakes). */
static void rl_tick(struct agent *a, bool force)
{
    pthread_mutex_lock(&a->rlmu);
    if (a->rl_start && (force || mono_ms() - a->rl_start >= AGENT_LOG_WINDOW_S * 1000))
        rl_flush_locked(a);
    pthread_mutex_unlock(&a->rlmu);
}

/* When the accept loop must wake for the summary: ms from now, or -1. */
static int rl_due_ms(struct agent *a)
{
    pthread_mutex_lock(&a->rlmu);
    int64_t left = -1;
    if (a->rl_start) {
        left = a->rl_start + AGENT_LOG_WINDOW_S * 1000 - mono_ms();
        if (left < 0)
            left = 0;
    }
    pthread_mutex_unlock(&a->rlmu);
    return (int)left;
}

/* A refused connection: "refused HOST port P: WHY" while the window's quota lasts (at most
 * 3 lines per address), otherwise counted for the summary. */
static void note_refusal(struct agent *a, const char *host, unsigned port, const char *why)
{
    pthread_mutex_lock(&a->rlmu);
    int64_t now = mono_ms();
    if (a->rl_start && now - a->rl_start >= AGENT_LOG_WINDOW_S * 1000)
        rl_flush_locked(a);
    if (!a->rl_start)
        a->rl_start = now;
    struct refused *r = NULL;
    for (int i = 0; i < a->nrl && !r; i++)
        if (!strcmp(a->rl[i].host, host))
            r = &a->rl[i];
    if (!r && a->nrl < AGENT_LOG_ADDRS) {
        r = &a->rl[a->nrl++];
        memset(r, 0, sizeof(*r));
        snprintf(r->host, sizeof(r->host), "%s", host);
    }
    bool line = a->rl_detail < AGENT_LOG_DETAIL && (!r || r->logged < 3);
    if (r) {
        r->count++;
        r->logged += line;
        snprintf(r->last, sizeof(r->last), "%s", why);
    } else {
        a->rl_other++;
        a->rl_other_logged += line;
    }
    if (line) {
        a->rl_detail++;
        agent_log(a, "refused %s port %u: %s", host, port, why);
    }
    pthread_mutex_unlock(&a->rlmu);
}

static void note_accept_error(struct agent *a, int e)
{
    pthread_mutex_lock(&a->rlmu);
    if (!a->rl_start)
        a->rl_start = mono_ms();
    if (a->accept_errors++ == 0) {
        snprintf(a->accept_error, sizeof(a->accept_error), "%s", strerror(e));
        agent_log(a, "cannot accept a connection: %s; pausing 100 ms", strerror(e));
    }
    pthread_mutex_unlock(&a->rlmu);
}

/* ---- sessions ---- */

static const struct agent_handler *find_handler(const struct agent *a, const char *type)
{
    for (int i = 0; i < a->nhandlers; i++)
        if (!strcmp(a->handlers[i]->type, type))
            return a->handlers[i];
    return NULL;
}

/* Admit a client that proved key number key if a session slot is free and its handshake
 * was not cut off meanwhile (channel_accept calls it). */
static int admit(void *arg, int key, struct ft_err *why)
{
    struct agent_session *s = arg;
    struct agent *a = s->a;
    pthread_mutex_lock(&a->mu);
    int n = a->nactive, max = a->cfg.max_sessions;
    bool evicted = s->evicted;
    if (!evicted && n < max) {
        a->nactive++;
        s->admitted = true;
        s->key = key;
    }
    pthread_mutex_unlock(&a->mu);
    if (evicted)
        return ft_err_set(why, -EAGAIN, "%s", s->evict_why);
    if (!s->admitted)
        return ft_err_set(why, -EBUSY, "busy: %d sessions, limit %d", n, max);
    return 0;
}

/* Answer one request; *bye when the session should end after it. Returns 0 or the -errno
 * of a failed send (with the reason in err). */
static int serve_request(struct agent_session *s, const char *payload, size_t len, bool *bye,
                         struct ft_err *err)
{
    struct agent *a = s->a;
    cJSON *req = cJSON_ParseWithLength(payload, len);
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(req, "id");
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "type"));
    cJSON *resp = cJSON_CreateObject();
    struct ft_err herr = {0};
    int rc;
    if (!cJSON_IsObject(req)) {
        rc = ft_err_set(&herr, -EBADMSG, "the request is not a JSON object");
    } else if (!type || !*type) {
        rc = ft_err_set(&herr, -EINVAL, "the request has no \"type\"");
    } else {
        const struct agent_handler *h = find_handler(a, type);
        if (!h)
            rc = ft_err_set(&herr, -EOPNOTSUPP, "unknown request type '%s'", type);
        else
            rc = h->handle(s, req, resp, &herr);
        if (h == &builtin_bye && rc == 0)
            *bye = true;
    }
    char *text = NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (rc < 0) {
            cJSON_Delete(resp);
            resp = cJSON_CreateObject();
        }
        cJSON_DeleteItemFromObjectCaseSensitive(resp, "type");
        cJSON_DeleteItemFromObjectCaseSensitive(resp, "id");
        cJSON_DeleteItemFromObjectCaseSensitive(resp, "ok");
        cJSON_AddStringToObject(resp, "type", type ? type : "");
        cJSON_AddItemToObject(
            resp, "id", cJSON_IsNumber(jid) ? cJSON_Duplicate(jid, false) : cJSON_CreateNull());
        cJSON_AddBoolToObject(resp, "ok", rc == 0);
        if (rc < 0) {
            int e = rc > -4096 ? -rc : EIO;
            cJSON_AddNumberToObject(resp, "errno", e);
            cJSON_AddStringToObject(resp, "error", herr.msg[0] ? herr.msg : strerror(e));
        }
        text = cJSON_PrintUnformatted(resp);
        if (text && strlen(text) <= CHANNEL_MAX_PAYLOAD)
            break;
        size_t n = text ? strlen(text) : 0;
        cJSON_free(text);
        text = NULL;
        ft_err_clear(&herr);
        rc = ft_err_set(&herr, -EMSGSIZE, "the response of %zu bytes exceeds the %d-byte limit", n,
                        CHANNEL_MAX_PAYLOAD);
    }
    rc = text ? channel_send(s->conn, CHANNEL_T_RESPONSE, text, strlen(text), err)
              : ft_err_set(err, -ENOMEM, "out of memory");
    cJSON_free(text);
    cJSON_Delete(resp);
    cJSON_Delete(req);
    return rc;
}

static void session_end_state(struct agent_session *s)
{
    s->timer_fn = NULL;
    while (s->nst > 0) {
        s->nst--;
        if (s->st[s->nst].destroy)
            s->st[s->nst].destroy(s->st[s->nst].state);
    }
}

static double since_s(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int hello_in(void *arg, int key, const unsigned char *nonce, int *timeout_ms,
                    struct ft_err *why);

/* Pass a refused connection to the accept loop, which keeps it (bounded, without a
 * thread) until the client has read why, then closes it. */
static void linger_hand(struct agent *a, int fd, bool blind)
{
    pthread_mutex_lock(&a->mu);
    bool kept = a->nhand < MAX_LINGER;
    if (kept) {
        a->hand_blind[a->nhand] = blind;
        a->hand[a->nhand++] = fd;
    }
    pthread_mutex_unlock(&a->mu);
    if (!kept) {
        close(fd);
        return;
    }
    ssize_t w = write(a->wake_pipe[1], "x", 1);
    (void)w;
}

/* The handshake on the session's thread; false when it failed (refused, logged, fd
 * handed to the accept loop). */
static bool session_handshake(struct agent_session *s)
{
    struct agent *a = s->a;
    struct channel_accept_opts o = {.timeout_ms = a->cfg.handshake_timeout_ms,
                                    .hello_timeout_ms = AGENT_HELLO_MS,
                                    .cancel_fd = a->stop_pipe[0],
                                    .hello = hello_in,
                                    .admit = admit,
                                    .admit_arg = s,
                                    .busy_retry_ms = AGENT_BUSY_RETRY_MS};
    struct ft_err err = {0};
    int rc = channel_accept(s->fd, &o, a->keys, a->nkeys, &s->conn, &err);
    pthread_mutex_lock(&a->mu);
    a->npending--;
    s->pending = false;
    s->hs = 0;
    bool evicted = s->evicted;
    if (rc < 0 && s->admitted) {
        a->nactive--;
        s->admitted = false;
    }
    pthread_mutex_unlock(&a->mu);
    if (rc == 0)
        return true;
    const char *why = err.msg;
    if (evicted && rc != -EAGAIN) { /* cut off while reading: nothing said yet */
        channel_refuse_fd(s->fd, "busy", s->evict_why, AGENT_BUSY_RETRY_MS);
        why = s->evict_why;
    }
    note_refusal(a, s->peer_host, s->peer_port, why);
    if (rc == -ECANCELED) {
        channel_drain(s->fd, 200, -1);
        close(s->fd);
    } else {
        linger_hand(a, s->fd, evicted);
    }
    return false;
}

static void *session_main(void *arg)
{
    struct agent_session *s = arg;
    struct agent *a = s->a;
    int cancel = a->stop_pipe[0];
    if (!session_handshake(s))
        goto done;
    pthread_mutex_lock(&a->mu);
    int nactive = a->nactive;
    pthread_mutex_unlock(&a->mu);
    agent_log(a, "session %llu from %s port %u: started (%d of %d sessions)",
              (unsigned long long)s->id, s->peer_host, s->peer_port, nactive, a->cfg.max_sessions);
    char reason[400] = "";
    int64_t idle_ms = a->cfg.idle_timeout_s > 0 ? (int64_t)a->cfg.idle_timeout_s * 1000 : -1;
    int64_t idle_at = idle_ms > 0 ? mono_ms() + idle_ms : -1;
    struct ft_err err = {0};
    for (;;) {
        int64_t now = mono_ms();
        if (s->timer_fn && now >= s->timer_at) {
            void (*fn)(struct agent_session *, void *) = s->timer_fn;
            s->timer_fn = NULL;
            fn(s, s->timer_arg);
            continue;
        }
        int64_t wait = idle_at >= 0 ? (idle_at > now ? idle_at - now : 0) : -1;
        if (s->timer_fn && (wait < 0 || s->timer_at - now < wait))
            wait = s->timer_at - now;
        int type;
        char *payload = NULL;
        size_t len;
        ft_err_clear(&err);
        int rc = channel_recv(s->conn, &type, &payload, &len, (int)wait, FRAME_TIMEOUT_MS, &err);
        if (rc == -ETIMEDOUT && (idle_at < 0 || mono_ms() < idle_at))
            continue; /* a timer is due */
        if (rc == 0 && type != CHANNEL_T_REQUEST) {
            free(payload);
            snprintf(reason, sizeof(reason), "expected a request, got frame type %d", type);
            channel_refuse(s->conn, "malformed", reason, 0);
            break;
        }
        if (rc == -ECONNRESET) {
            snprintf(reason, sizeof(reason), "the client closed the connection");
            break;
        }
        if (rc < 0) {
            const char *code = "malformed";
            switch (rc) {
            case -ETIMEDOUT:
                code = "idle";
                snprintf(reason, sizeof(reason), "no request for %d s; session closed",
                         a->cfg.idle_timeout_s);
                break;
            case -ECANCELED:
                code = "shutdown";
                snprintf(reason, sizeof(reason), "the agent is shutting down");
                break;
            case -ETIME:
                code = "timeout";
                snprintf(reason, sizeof(reason), "a frame was not completed within %d s",
                         FRAME_TIMEOUT_MS / 1000);
                break;
            case -EMSGSIZE:
                code = "toolarge";
                snprintf(reason, sizeof(reason), "%s", err.msg);
                break;
            case -EBADMSG:
                code = strstr(err.msg, "MAC") ? "mac" : "malformed";
                snprintf(reason, sizeof(reason), "%s", err.msg);
                break;
            default:
                code = NULL;
                snprintf(reason, sizeof(reason), "%s", err.msg);
            }
            if (code)
                channel_refuse(s->conn, code, reason, 0);
            if (rc == -ECANCELED)
                channel_drain(channel_conn_fd(s->conn), 200, -1);
            else if (code)
                channel_drain(channel_conn_fd(s->conn), LINGER_MS, cancel);
            break;
        }
        s->nreq++;
        bool bye = false;
        rc = serve_request(s, payload, len, &bye, &err);
        free(payload);
        if (idle_ms > 0)
            idle_at = mono_ms() + idle_ms;
        if (rc < 0) {
            snprintf(reason, sizeof(reason), "%s", err.msg);
            break;
        }
        if (bye) {
            snprintf(reason, sizeof(reason), "bye");
            channel_drain(channel_conn_fd(s->conn), LINGER_MS, cancel);
            break;
        }
    }
    channel_close(s->conn);
    s->conn = NULL;
    session_end_state(s);
    pthread_mutex_lock(&a->mu);
    a->nactive--;
    pthread_mutex_unlock(&a->mu);
    agent_log(a, "session %llu from %s port %u: ended after %.1f s, %d request%s: %s",
              (unsigned long long)s->id, s->peer_host, s->peer_port, since_s(&s->t0), s->nreq,
              s->nreq == 1 ? "" : "s", reason);
done:
    atomic_store(&s->done, true);
    ssize_t w = write(a->wake_pipe[1], "x", 1);
    (void)w;
    return NULL;
}

/* ---- accept loop ---- */

/* Keep a refused connection open (no FIN: a client that reconnects the moment its
 * connection ends waits) until the client closes it or LINGER_MS pass. */
static void linger_add(struct agent *a, int fd, bool blind)
{
    if (a->nlg == MAX_LINGER) { /* the oldest makes room */
        close(a->lg[0].fd);
        memmove(&a->lg[0], &a->lg[1], sizeof(a->lg[0]) * (MAX_LINGER - 1));
        a->nlg--;
    }
    a->lg[a->nlg].fd = fd;
    a->lg[a->nlg].blind = blind;
    a->lg[a->nlg].deadline = mono_ms() + LINGER_MS;
    a->nlg++;
}

static void linger_remove(struct agent *a, int i)
{
    close(a->lg[i].fd);
    memmove(&a->lg[i], &a->lg[i + 1], sizeof(a->lg[0]) * (size_t)(a->nlg - i - 1));
    a->nlg--;
}

/* Refuse a connection in the accept loop without blocking it. */
static void refuse_now(struct agent *a, int fd, const struct sockaddr_storage *ss, const char *code,
                       const char *msg, int retry_ms)
{
    char host[INET6_ADDRSTRLEN];
    channel_format_addr(ss, false, host, sizeof(host));
    unsigned port = ntohs(ss->ss_family == AF_INET ? ((const struct sockaddr_in *)ss)->sin_port
                                                   : ((const struct sockaddr_in6 *)ss)->sin6_port);
    note_refusal(a, host, port, msg);
    channel_refuse_fd(fd, code, msg, retry_ms);
    linger_add(a, fd, false);
}

static void reap(struct agent *a, bool all)
{
    for (;;) {
        struct agent_session *found = NULL;
        pthread_mutex_lock(&a->mu);
        for (struct agent_session **pp = &a->sessions; *pp; pp = &(*pp)->next) {
            if (all || atomic_load(&(*pp)->done)) {
                found = *pp;
                *pp = found->next;
                break;
            }
        }
        pthread_mutex_unlock(&a->mu);
        if (!found)
            return;
        pthread_join(found->thr, NULL);
        free(found);
    }
}

static void src_of(const struct sockaddr_storage *ss, struct src_addr *out)
{
    memset(out, 0, sizeof(*out));
    if (ss->ss_family == AF_INET) {
        memcpy(out->b, &((const struct sockaddr_in *)ss)->sin_addr, 4);
        out->len = 4;
    } else {
        memcpy(out->b, ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr, 8);
        out->len = 8;
    }
}

static bool src_eq(const struct src_addr *x, const struct src_addr *y)
{
    return x->len == y->len && !memcmp(x->b, y->b, (size_t)x->len);
}

/* Under mu: a handshake of state hs (0: PRE or UNAUTH, the slots of connections without a
 * key) that may still be cut off (not admitted, not already cut off). */
static bool holds(const struct agent_session *s, int hs)
{
    return s->pending && !s->evicted && !s->admitted &&
           (hs ? s->hs == hs : s->hs == HS_PRE || s->hs == HS_UNAUTH);
}

static int count_from(const struct agent *a, const struct src_addr *src, int hs)
{
    int n = 0;
    for (const struct agent_session *s = a->sessions; s; s = s->next)
        n += holds(s, hs) && (!src || src_eq(&s->src, src));
    return n;
}

/* A complete frame waits in the socket: its thread is about to read it (not idle). */
static bool frame_waiting(int fd)
{
    int avail = 0;
    unsigned char h[4];
    if (ioctl(fd, FIONREAD, &avail) < 0 || avail < 5 ||
        recv(fd, h, 4, MSG_PEEK | MSG_DONTWAIT) != 4)
        return false;
    uint32_t len = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
    return len > CHANNEL_MAX_HANDSHAKE_FRAME || (uint32_t)avail >= 4 + len;
}

/* Under mu: the oldest handshake of state hs from src (NULL: any address) that may be cut
 * off: a PRE one with no complete frame waiting, or an UNAUTH one older than min_age. */
static struct agent_session *oldest_from(const struct agent *a, const struct src_addr *src, int hs,
                                         int64_t min_age, int64_t now)
{
    struct agent_session *o = NULL;
    for (struct agent_session *s = a->sessions; s; s = s->next)
        if (holds(s, hs) && (!src || src_eq(&s->src, src)) && now - s->t_accept >= min_age &&
            (!o || s->id < o->id) && !(hs == HS_PRE && frame_waiting(s->fd)))
            o = s;
    return o;
}

/* Under mu: the address that holds the most handshakes of state hs gives up its oldest. */
static struct agent_session *from_biggest(const struct agent *a, int hs, int64_t min_age,
                                          int64_t now)
{
    struct agent_session *victim = NULL;
    int most = 0;
    for (const struct agent_session *s = a->sessions; s; s = s->next) {
        if (!holds(s, hs))
            continue;
        int n = count_from(a, &s->src, hs);
        struct agent_session *o = n >= most ? oldest_from(a, &s->src, hs, min_age, now) : NULL;
        if (o && (n > most || o->id < victim->id)) {
            most = n;
            victim = o;
        }
    }
    return victim;
}

/* Under mu: cut a handshake off for a newcomer; its thread sends the refusal. */
static void evict(struct agent_session *v, int64_t now, const char *why)
{
    v->evicted = true;
    snprintf(v->evict_why, sizeof(v->evict_why),
             "busy: handshake cut off after %lld ms for a newer connection (%s); retry",
             (long long)(now - v->t_accept), why);
    shutdown(v->fd, SHUT_RD); /* wakes its thread's read */
}

/* Under mu: a slot before the hello for a newcomer from src (host for messages): when its
 * address's slots (or all) are taken, the oldest idle one (no complete frame in) of that
 * address (or of the address holding the most) makes room. 0, or -1 with the refusal. */
static int pre_slot(struct agent *a, const struct src_addr *src, const char *host, char *msg,
                    size_t len)
{
    int64_t now = mono_ms();
    int per = a->cfg.max_handshakes_addr, max = a->cfg.max_handshakes;
    int nsrc = count_from(a, src, 0), total = count_from(a, NULL, 0);
    char why[120];
    struct agent_session *v = NULL;
    if (nsrc >= per) {
        snprintf(why, sizeof(why), "%d handshakes from %s at once, limit %d per address", nsrc,
                 host, per);
        v = oldest_from(a, src, HS_PRE, 0, now);
    } else if (total >= max) {
        snprintf(why, sizeof(why), "%d connections authenticating, limit %d", total, max);
        v = from_biggest(a, HS_PRE, 0, now);
    } else {
        return 0;
    }
    if (!v) {
        snprintf(msg, len, "busy: %s", why);
        return -1;
    }
    evict(v, now, why);
    return 0;
}

static bool seen_early(struct agent *a, const unsigned char *nonce, int64_t now)
{
    for (int i = 0; i < a->nseen; i++)
        if (now - a->seen[i].at < 2000 * CHANNEL_EARLY_SKEW_S && !memcmp(a->seen[i].n, nonce, 8))
            return true;
    int i = a->nseen < EARLY_SEEN ? a->nseen++ : 0;
    for (int k = 0; k < a->nseen && a->nseen == EARLY_SEEN; k++) /* replace the oldest */
        if (a->seen[k].at < a->seen[i].at)
            i = k;
    memcpy(a->seen[i].n, nonce, 8);
    a->seen[i].at = now;
    return false;
}

/* channel_accept: the client's hello is in. With a valid, fresh early proof it takes the lane
 * of clients with a key (up to max_sessions at once); otherwise an UNAUTH slot: half the
 * per-address slots, half of all; when taken, the oldest such handshake older than
 * AGENT_EVICT_AGE_MS makes room, or it is refused. Under pressure (half of either taken)
 * it must finish within AGENT_PRESSURE_MS. */
static int hello_in(void *arg, int key, const unsigned char *nonce, int *timeout_ms,
                    struct ft_err *why)
{
    struct agent_session *s = arg;
    struct agent *a = s->a;
    int64_t now = mono_ms();
    int rc = 0;
    pthread_mutex_lock(&a->mu);
    if (s->evicted) {
        rc = ft_err_set(why, -EAGAIN, "%s", s->evict_why);
        goto out;
    }
    if (key >= 0 && count_from(a, NULL, HS_PRIO) < a->cfg.max_sessions &&
        !seen_early(a, nonce, now)) {
        s->hs = HS_PRIO;
        goto out;
    }
    int per = a->cfg.max_handshakes_addr / 2 > 0 ? a->cfg.max_handshakes_addr / 2 : 1;
    int max = a->cfg.max_handshakes / 2 > 0 ? a->cfg.max_handshakes / 2 : 1;
    int nsrc = count_from(a, &s->src, HS_UNAUTH), total = count_from(a, NULL, HS_UNAUTH);
    char w[120];
    struct agent_session *v = NULL;
    if (nsrc >= per) {
        snprintf(w, sizeof(w),
                 "%d handshakes without a key's early proof from %s at once, limit %d per address",
                 nsrc, s->peer_host, per);
        v = oldest_from(a, &s->src, HS_UNAUTH, AGENT_EVICT_AGE_MS, now);
    } else if (total >= max) {
        snprintf(w, sizeof(w), "%d handshakes without a key's early proof at once, limit %d", total,
                 max);
        v = from_biggest(a, HS_UNAUTH, AGENT_EVICT_AGE_MS, now);
    }
    if ((nsrc >= per || total >= max) && !v) {
        rc = ft_err_set(why, -EAGAIN, "busy: %s", w);
        goto out;
    }
    if (v) {
        evict(v, now, w);
        nsrc -= src_eq(&v->src, &s->src);
        total--;
    }
    s->hs = HS_UNAUTH;
    if ((2 * (nsrc + 1) > per || 2 * (total + 1) > max) && *timeout_ms > AGENT_PRESSURE_MS)
        *timeout_ms = AGENT_PRESSURE_MS;
out:
    pthread_mutex_unlock(&a->mu);
    return rc;
}

static void accept_one(struct agent *a, int fd, struct sockaddr_storage *ss)
{
    normalize(ss);
    char msg[200], host[INET6_ADDRSTRLEN];
    channel_format_addr(ss, false, host, sizeof(host));
    if (!allowed(a, ss)) {
        snprintf(msg, sizeof(msg), "address %s is not in the agent's allowlist", host);
        refuse_now(a, fd, ss, "denied", msg, 0);
        return;
    }
    struct agent_session *s = calloc(1, sizeof(*s));
    if (!s) {
        refuse_now(a, fd, ss, "busy", "busy: out of memory", AGENT_BUSY_RETRY_MS);
        return;
    }
    s->a = a;
    s->fd = fd;
    s->peer = *ss;
    src_of(ss, &s->src);
    socklen_t sl = sizeof(s->local);
    getsockname(fd, (struct sockaddr *)&s->local, &sl);
    normalize(&s->local);
    snprintf(s->peer_host, sizeof(s->peer_host), "%s", host);
    s->peer_port = ntohs(ss->ss_family == AF_INET ? ((struct sockaddr_in *)ss)->sin_port
                                                  : ((struct sockaddr_in6 *)ss)->sin6_port);
    clock_gettime(CLOCK_MONOTONIC, &s->t0);
    int retry = 0, t = -1;
    msg[0] = '\0';
    pthread_mutex_lock(&a->mu);
    if (a->nactive >= a->cfg.max_sessions) {
        snprintf(msg, sizeof(msg), "busy: %d sessions, limit %d", a->nactive, a->cfg.max_sessions);
    } else {
        t = pre_slot(a, &s->src, host, msg, sizeof(msg));
        retry = AGENT_BUSY_RETRY_MS;
    }
    if (t >= 0) {
        s->pending = true;
        s->hs = HS_PRE;
        s->t_accept = mono_ms();
        s->id = ++a->next_id;
        a->npending++;
        s->next = a->sessions;
        a->sessions = s;
    }
    pthread_mutex_unlock(&a->mu);
    if (t < 0) {
        free(s);
        refuse_now(a, fd, ss, "busy", msg, retry);
        return;
    }
    if (pthread_create(&s->thr, &a->thr_attr, session_main, s) != 0) {
        pthread_mutex_lock(&a->mu);
        for (struct agent_session **pp = &a->sessions; *pp; pp = &(*pp)->next)
            if (*pp == s) {
                *pp = s->next;
                break;
            }
        a->npending--;
        pthread_mutex_unlock(&a->mu);
        free(s);
        refuse_now(a, fd, ss, "busy", "busy: cannot start a session thread", AGENT_BUSY_RETRY_MS);
    }
}

static void *accept_main(void *arg)
{
    struct agent *a = arg;
    int64_t paused_until = 0; /* out of file descriptors: retry later */
    for (;;) {
        struct pollfd p[3 + MAX_LINGER];
        int64_t now = mono_ms();
        bool listening = now >= paused_until;
        p[0] = (struct pollfd){.fd = listening ? a->lfd : -1, .events = POLLIN};
        p[1] = (struct pollfd){.fd = a->stop_pipe[0], .events = POLLIN};
        p[2] = (struct pollfd){.fd = a->wake_pipe[0], .events = POLLIN};
        int64_t next = listening ? -1 : paused_until;
        for (int i = 0; i < a->nlg; i++) {
            p[3 + i] = (struct pollfd){.fd = a->lg[i].blind ? -1 : a->lg[i].fd, .events = POLLIN};
            if (next < 0 || a->lg[i].deadline < next)
                next = a->lg[i].deadline;
        }
        int due = rl_due_ms(a);
        if (due >= 0 && (next < 0 || now + due < next))
            next = now + due;
        int timeout = next < 0 ? -1 : next <= now ? 0 : (int)(next - now);
        int n = poll(p, (nfds_t)(3 + a->nlg), timeout);
        if (n < 0 && errno != EINTR)
            break;
        if (atomic_load(&a->stopping))
            break;
        if (n < 0)
            continue;
        rl_tick(a, false);
        if (p[2].revents & POLLIN) {
            char buf[64];
            while (read(a->wake_pipe[0], buf, sizeof(buf)) > 0)
                ;
            reap(a, false);
        }
        now = mono_ms();
        for (int i = a->nlg - 1; i >= 0; i--) {
            bool gone = now >= a->lg[i].deadline;
            if (!gone && p[3 + i].revents) {
                char scratch[1024];
                ssize_t r = recv(a->lg[i].fd, scratch, sizeof(scratch), MSG_DONTWAIT);
                gone = r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR);
            }
            if (gone)
                linger_remove(a, i);
        }
        /* Refused connections the sessions' threads handed over. */
        pthread_mutex_lock(&a->mu);
        int nh = a->nhand, hand[MAX_LINGER];
        bool blind[MAX_LINGER];
        memcpy(hand, a->hand, sizeof(hand[0]) * (size_t)nh);
        memcpy(blind, a->hand_blind, sizeof(blind[0]) * (size_t)nh);
        a->nhand = 0;
        pthread_mutex_unlock(&a->mu);
        for (int i = 0; i < nh; i++)
            linger_add(a, hand[i], blind[i]);
        if (!listening || !(p[0].revents & POLLIN))
            continue;
        for (int k = 0; k < ACCEPT_BATCH; k++) {
            struct sockaddr_storage ss;
            socklen_t sl = sizeof(ss);
            int fd = accept(a->lfd, (struct sockaddr *)&ss, &sl);
            if (fd < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                    note_accept_error(a, errno);
                    paused_until = mono_ms() + 100;
                }
                break;
            }
            fcntl(fd, F_SETFD, FD_CLOEXEC);
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); /* MSG_DONTWAIT is per call */
            accept_one(a, fd, &ss);
        }
    }
    /* Connections already in the backlog get a reason, not a reset. */
    for (int k = 0; k < ACCEPT_BATCH; k++) {
        int fd = accept(a->lfd, NULL, NULL);
        if (fd < 0)
            break;
        channel_refuse_fd(fd, "shutdown", "the agent is shutting down", 0);
        channel_drain(fd, 100, -1);
        close(fd);
    }
    close(a->lfd);
    a->lfd = -1;
    while (a->nlg)
        linger_remove(a, a->nlg - 1);
    reap(a, true); /* every session sees the stop pipe and ends */
    pthread_mutex_lock(&a->mu);
    for (int i = 0; i < a->nhand; i++)
        close(a->hand[i]);
    a->nhand = 0;
    pthread_mutex_unlock(&a->mu);
    rl_tick(a, true);
    return NULL;
}

/* ---- start / stop ---- */

void agent_cfg_defaults(struct agent_cfg *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->max_sessions = AGENT_DEF_MAX_SESSIONS;
    cfg->max_rate_gbps = AGENT_DEF_MAX_RATE_GBPS;
    cfg->max_duration_s = AGENT_DEF_MAX_DURATION_S;
    cfg->max_streams = AGENT_DEF_MAX_STREAMS;
    cfg->max_flows = AGENT_DEF_MAX_FLOWS;
    cfg->handshake_timeout_ms = AGENT_DEF_HANDSHAKE_TIMEOUT;
}

static int check_cfg(struct agent_cfg *c, struct ft_err *err)
{
    if (c->nkeys < 0 || c->nkeys > AGENT_MAX_KEYS)
        return ft_err_set(err, -EINVAL, "agent: 0 to %d keys, not %d", AGENT_MAX_KEYS, c->nkeys);
    if (c->nkeys == 0 && sodium_is_zero(c->key.k, sizeof(c->key.k)))
        return ft_err_set(err, -EINVAL, "agent: no key");
    for (int i = 0; i < c->nkeys; i++) {
        if (sodium_is_zero(c->keys[i].key.k, sizeof(c->keys[i].key.k)))
            return ft_err_set(err, -EINVAL, "agent: key %d is empty", i + 1);
        for (int j = 0; j < i; j++)
            if (sodium_memcmp(c->keys[i].key.k, c->keys[j].key.k, CHANNEL_KEY_BYTES) == 0)
                return ft_err_set(err, -EINVAL, "agent: keys %d and %d are the same key", j + 1,
                                  i + 1);
    }
    if (c->max_sessions == 0)
        c->max_sessions = AGENT_DEF_MAX_SESSIONS;
    if (c->max_handshakes == 0)
        c->max_handshakes =
            c->max_sessions > AGENT_DEF_MAX_HANDSHAKES ? c->max_sessions : AGENT_DEF_MAX_HANDSHAKES;
    if (c->max_handshakes_addr == 0)
        c->max_handshakes_addr = AGENT_DEF_HANDSHAKES_ADDR < c->max_handshakes
                                     ? AGENT_DEF_HANDSHAKES_ADDR
                                     : c->max_handshakes;
    if (c->max_flows == 0)
        c->max_flows = AGENT_DEF_MAX_FLOWS;
    if (c->handshake_timeout_ms == 0)
        c->handshake_timeout_ms = AGENT_DEF_HANDSHAKE_TIMEOUT;
    if (c->max_sessions < 1 || c->max_sessions > 4096)
        return ft_err_set(err, -EINVAL, "max sessions must be 1 to 4096, not %d", c->max_sessions);
    if (c->max_handshakes < 1 || c->max_handshakes > 4096)
        return ft_err_set(err, -EINVAL, "max handshakes must be 1 to 4096, not %d",
                          c->max_handshakes);
    if (c->max_handshakes_addr < 1 || c->max_handshakes_addr > c->max_handshakes)
        return ft_err_set(err, -EINVAL, "max handshakes per address must be 1 to %d, not %d",
                          c->max_handshakes, c->max_handshakes_addr);
    if (c->max_flows < 1 || c->max_flows > 64)
        return ft_err_set(err, -EINVAL, "max flows per session must be 1 to 64, not %d",
                          c->max_flows);
    if (!(c->max_rate_gbps >= 0 && c->max_rate_gbps <= 100000))
        return ft_err_set(err, -EINVAL, "max rate must be 0 (no cap) to 100000 Gb/s, not %g",
                          c->max_rate_gbps);
    if (!(c->max_duration_s >= 0 && c->max_duration_s <= 86400))
        return ft_err_set(err, -EINVAL, "max duration must be 0 (no cap) to 86400 s, not %g",
                          c->max_duration_s);
    if (c->max_streams < 0 || c->max_streams > 4096)
        return ft_err_set(err, -EINVAL, "max streams must be 0 (no cap) to 4096, not %d",
                          c->max_streams);
    if (c->handshake_timeout_ms < 10 || c->handshake_timeout_ms > 600000)
        return ft_err_set(err, -EINVAL, "the handshake timeout must be 10 to 600000 ms, not %d",
                          c->handshake_timeout_ms);
    if (c->idle_timeout_s < 0 || c->idle_timeout_s > 86400)
        return ft_err_set(err, -EINVAL, "the idle timeout must be 0 (default) to 86400 s, not %d",
                          c->idle_timeout_s);
    /* A session may sit quiet while its test runs: never shorter than a test. */
    if (c->idle_timeout_s == 0 && c->max_duration_s > 0)
        c->idle_timeout_s = AGENT_DEF_IDLE_TIMEOUT;
    if (c->idle_timeout_s > 0 && c->max_duration_s > 0 &&
        c->idle_timeout_s < c->max_duration_s + 30)
        c->idle_timeout_s = (int)ceil(c->max_duration_s) + 30;
    if (c->nallow < 0 || c->nallow > AGENT_MAX_ALLOW || (c->nallow && !c->allow))
        return ft_err_set(err, -EINVAL, "the allowlist takes 0 to %d entries", AGENT_MAX_ALLOW);
    return 0;
}

static int listen_on(struct agent *a, struct ft_err *err)
{
    const char *addr = a->cfg.listen[0] ? a->cfg.listen : NULL;
    char ps[8];
    snprintf(ps, sizeof(ps), "%u", a->cfg.port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo any6 = {.ai_family = AF_INET6, .ai_socktype = SOCK_STREAM};
    struct addrinfo any4 = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct sockaddr_in6 s6 = {
        .sin6_family = AF_INET6, .sin6_port = htons(a->cfg.port), .sin6_addr = IN6ADDR_ANY_INIT};
    struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_port = htons(a->cfg.port)};
    struct addrinfo *res = NULL;
    char want[300];
    if (addr) {
        snprintf(want, sizeof(want), strchr(addr, ':') ? "[%s]:%u" : "%s:%u", addr, a->cfg.port);
        int g = getaddrinfo(addr, ps, &hints, &res);
        if (g != 0)
            return ft_err_set(err, -EADDRNOTAVAIL, "cannot listen on %s: %s", want,
                              g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
    } else {
        snprintf(want, sizeof(want), "[::]:%u", a->cfg.port);
        any6.ai_addr = (struct sockaddr *)&s6;
        any6.ai_addrlen = sizeof(s6);
        any4.ai_addr = (struct sockaddr *)&s4;
        any4.ai_addrlen = sizeof(s4);
        any6.ai_next = &any4; /* IPv4 only if this host has no IPv6 */
    }
    int fd = -1, e = -EADDRNOTAVAIL;
    for (const struct addrinfo *ai = res ? res : &any6; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            e = -errno;
            continue;
        }
        int one = 1, zero = 0;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (!addr && ai->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
            e = -errno;
            close(fd);
            fd = -1;
            if (!addr && e != -EAFNOSUPPORT && e != -EADDRNOTAVAIL)
                break; /* e.g. the port is taken: do not fall back to IPv4 only */
        }
    }
    if (res)
        freeaddrinfo(res);
    if (fd < 0)
        return ft_err_set(err, e, "cannot listen on %s: %s", want, strerror(-e));
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    a->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                            : ((struct sockaddr_in6 *)&ss)->sin6_port);
    if (ss.ss_family == AF_INET6 &&
        IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr))
        snprintf(a->desc, sizeof(a->desc), "[::]:%u", a->port);
    else
        channel_format_addr(&ss, true, a->desc, sizeof(a->desc));
    a->lfd = fd;
    return 0;
}

static int make_pipe(int p[2])
{
    if (pipe(p) < 0)
        return -errno;
    for (int i = 0; i < 2; i++) {
        fcntl(p[i], F_SETFD, FD_CLOEXEC);
        fcntl(p[i], F_SETFL, O_NONBLOCK);
    }
    return 0;
}

static void agent_free(struct agent *a)
{
    for (int i = 0; i < AGENT_MAX_KEYS; i++) {
        channel_key_wipe(&a->keys[i]);
        pthread_mutex_destroy(&a->buckets[i].mu);
    }
    free(a->handlers);
    pthread_attr_destroy(&a->thr_attr);
    pthread_mutex_destroy(&a->mu);
    pthread_mutex_destroy(&a->logmu);
    pthread_mutex_destroy(&a->rlmu);
    free(a);
}

int agent_start(const struct agent_cfg *cfg, const struct agent_handler *const *handlers,
                int nhandlers, struct agent **out, struct ft_err *err)
{
    *out = NULL;
    struct agent *a = calloc(1, sizeof(*a));
    if (!a)
        return ft_err_set(err, -ENOMEM, "out of memory");
    a->cfg = *cfg;
    a->lfd = -1;
    a->stop_pipe[0] = a->stop_pipe[1] = a->wake_pipe[0] = a->wake_pipe[1] = -1;
    pthread_mutex_init(&a->mu, NULL);
    pthread_mutex_init(&a->logmu, NULL);
    pthread_mutex_init(&a->rlmu, NULL);
    for (int i = 0; i < AGENT_MAX_KEYS; i++)
        pthread_mutex_init(&a->buckets[i].mu, NULL);
    /* Session threads run handlers and the handshake: 256 KiB of stack is plenty, and
     * glibc's 8 MiB default would count against the address space per session. */
    pthread_attr_init(&a->thr_attr);
    pthread_attr_setstacksize(&a->thr_attr, 256 * 1024);
    int rc = check_cfg(&a->cfg, err);
    if (rc < 0)
        goto fail;
    if (cfg->nkeys == 0) {
        a->keys[0] = cfg->key;
        a->allow_nccl[0] = cfg->allow_nccl;
        a->nkeys = 1;
    } else {
        for (int i = 0; i < cfg->nkeys; i++) {
            a->keys[i] = cfg->keys[i].key;
            a->allow_nccl[i] = cfg->keys[i].allow_nccl;
        }
        a->nkeys = cfg->nkeys;
    }
    channel_key_wipe(&a->cfg.key);
    for (int i = 0; i < AGENT_MAX_KEYS; i++)
        channel_key_wipe(&a->cfg.keys[i].key);
    for (int i = 0; i < cfg->nallow; i++) {
        rc = cidr_parse(cfg->allow[i], &a->allow[i], err);
        if (rc < 0)
            goto fail;
    }
    a->nallow = cfg->nallow;
    a->cfg.allow = NULL;
    if (nhandlers < 0)
        for (nhandlers = 0; handlers && handlers[nhandlers]; nhandlers++)
            ;
    if (!handlers)
        nhandlers = 0;
    int nb = (int)(sizeof(builtins) / sizeof(builtins[0]));
    a->handlers = calloc((size_t)(nb + nhandlers), sizeof(*a->handlers));
    if (!a->handlers) {
        rc = ft_err_set(err, -ENOMEM, "out of memory");
        goto fail;
    }
    for (int i = 0; i < nb + nhandlers; i++) {
        const struct agent_handler *h = i < nb ? builtins[i] : handlers[i - nb];
        if (!h || !h->type || !h->type[0] || !h->handle) {
            rc = ft_err_set(err, -EINVAL, "agent: request handler %d has no type or function",
                            i - nb);
            goto fail;
        }
        if (find_handler(a, h->type)) {
            rc = ft_err_set(err, -EEXIST, "agent: two handlers for request type '%s'", h->type);
            goto fail;
        }
        a->handlers[a->nhandlers++] = h;
    }
    if (gethostname(a->host, sizeof(a->host) - 1) < 0)
        snprintf(a->host, sizeof(a->host), "unknown");
    if (make_pipe(a->stop_pipe) < 0 || make_pipe(a->wake_pipe) < 0) {
        rc = ft_err_set(err, -errno, "agent: cannot create a pipe: %s", strerror(errno));
        goto fail;
    }
    rc = listen_on(a, err);
    if (rc < 0)
        goto fail;
    rc = -pthread_create(&a->thr, NULL, accept_main, a);
    if (rc < 0) {
        ft_err_set(err, rc, "agent: cannot start the accept thread: %s", strerror(-rc));
        goto fail;
    }
    *out = a;
    return 0;
fail:
    if (a->lfd >= 0)
        close(a->lfd);
    for (int i = 0; i < 2; i++) {
        if (a->stop_pipe[i] >= 0)
            close(a->stop_pipe[i]);
        if (a->wake_pipe[i] >= 0)
            close(a->wake_pipe[i]);
    }
    agent_free(a);
    return rc;
}

uint16_t agent_port(const struct agent *a)
{
    return a->port;
}

const char *agent_listen_desc(const struct agent *a)
{
    return a->desc;
}

int agent_sessions(struct agent *a)
{
    pthread_mutex_lock(&a->mu);
    int n = a->nactive;
    pthread_mutex_unlock(&a->mu);
    return n;
}

void agent_stop(struct agent *a)
{
    if (!a)
        return;
    atomic_store(&a->stopping, true);
    ssize_t w = write(a->stop_pipe[1], "x", 1);
    (void)w;
    pthread_join(a->thr, NULL);
    for (int i = 0; i < 2; i++) {
        close(a->stop_pipe[i]);
        close(a->wake_pipe[i]);
    }
    agent_free(a);
}

/* ---- for handlers ---- */

const struct sockaddr_storage *agent_session_peer(const struct agent_session *s)
{
    return &s->peer;
}

void agent_session_local(const struct agent_session *s, struct sockaddr_storage *out,
                         socklen_t *len)
{
    *out = s->local;
    *len = s->local.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

const char *agent_session_peer_host(const struct agent_session *s)
{
    return s->peer_host;
}

const struct agent_cfg *agent_session_cfg(const struct agent_session *s)
{
    return &s->a->cfg;
}

uint64_t agent_session_id(const struct agent_session *s)
{
    return s->id;
}

bool agent_session_stopping(const struct agent_session *s)
{
    return atomic_load(&s->a->stopping);
}

int agent_session_set_state(struct agent_session *s, const void *tag, void *state,
                            void (*destroy)(void *state))
{
    int i = 0;
    while (i < s->nst && s->st[i].tag != tag)
        i++;
    if (i == s->nst) {
        if (s->nst == AGENT_STATE_SLOTS)
            return -ENOSPC;
        s->nst++;
    } else if (s->st[i].destroy && s->st[i].state != state) {
        s->st[i].destroy(s->st[i].state);
    }
    s->st[i].tag = tag;
    s->st[i].state = state;
    s->st[i].destroy = destroy;
    return 0;
}

void *agent_session_state(const struct agent_session *s, const void *tag)
{
    for (int i = 0; i < s->nst; i++)
        if (s->st[i].tag == tag)
            return s->st[i].state;
    return NULL;
}

void agent_session_log(struct agent_session *s, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    agent_log(s->a, "session %llu: %s", (unsigned long long)s->id, msg);
}

int agent_session_key(const struct agent_session *s)
{
    return s->key;
}

bool agent_session_allow_nccl(const struct agent_session *s)
{
    return s->a->allow_nccl[s->key];
}

int agent_session_flow_add(struct agent_session *s, const char *what, struct ft_err *err)
{
    int max = s->a->cfg.max_flows;
    if (s->nflows >= max)
        return ft_err_set(err, -EMFILE,
                          "%s: this session already has %d flow%s, the agent's limit per session "
                          "(a run opens one session per flow)",
                          what, s->nflows, s->nflows == 1 ? "" : "s");
    s->nflows++;
    return 0;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool agent_session_pace(struct agent_session *s, size_t n, const _Atomic bool *stop)
{
    double gbps = s->a->cfg.max_rate_gbps; /* bits per ns */
    if (!(gbps > 0) || n == 0)
        return !(stop && atomic_load(stop));
    struct bucket *b = &s->a->buckets[s->key];
    int64_t cost = (int64_t)((double)n * 8.0 / gbps), now = mono_ns();
    /* A sender that woke late may catch up by PACE_SLACK_NS (so scheduling delays do not
     * lower the rate), never more: over any window of T the key sends at most
     * rate x (T + PACE_SLACK_NS) plus the reservations being sent. */
    pthread_mutex_lock(&b->mu);
    int64_t at = b->tat_ns > now - PACE_SLACK_NS ? b->tat_ns : now - PACE_SLACK_NS;
    b->tat_ns = at + cost;
    pthread_mutex_unlock(&b->mu);
    while (now < at) {
        if (stop && atomic_load(stop))
            return false;
        int64_t wait = at - now;
        struct timespec ts = {0, (long)(wait > 2000000 ? 2000000 : wait)};
        nanosleep(&ts, NULL);
        now = mono_ns();
    }
    return !(stop && atomic_load(stop));
}

void agent_session_set_timer(struct agent_session *s, int ms,
                             void (*fn)(struct agent_session *s, void *arg), void *arg)
{
    s->timer_fn = fn;
    s->timer_arg = arg;
    s->timer_at = fn ? mono_ms() + (ms > 0 ? ms : 0) : 0;
}

double agent_clamp(cJSON *resp, const char *what, double asked, double cap)
{
    if (!(asked > 0))
        return cap;
    if (asked <= cap)
        return asked;
    if (resp) {
        cJSON *cl = cJSON_GetObjectItemCaseSensitive(resp, "clamped");
        if (!cl)
            cl = cJSON_AddObjectToObject(resp, "clamped");
        cJSON *o = cJSON_AddObjectToObject(cl, what);
        cJSON_AddNumberToObject(o, "asked", asked);
        cJSON_AddNumberToObject(o, "allowed", cap);
    }
    return cap;
}
