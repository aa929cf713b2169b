/* agent: accept loop (poll on the listening socket, a stop pipe and a reap pipe), one
 * thread per session, allowlist and caps, request dispatch and per-session state. A
 * session that fails or misbehaves only ever ends itself. */
#include "engine/agent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
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

#define MAX_LINGER       64   /* refused connections waiting for the client to read why */
#define LINGER_MS        1000 /* how long they may wait */
#define FRAME_TIMEOUT_MS 10000
#define ACCEPT_BATCH     64

struct cidr {
    int family;
    unsigned char addr[16];
    int prefix;
};

struct agent_session {
    struct agent *a;
    struct agent_session *next;
    uint64_t id;
    int fd;
    struct ctl_conn *conn;
    struct sockaddr_storage peer, local;
    char peer_host[INET6_ADDRSTRLEN];
    unsigned peer_port;
    pthread_t thr;
    atomic_bool done;
    bool admitted; /* holds one of max_sessions */
    int nreq;
    struct timespec t0;
    void *state;
    void (*destroy)(void *);
};

struct lingering {
    int fd;
    int64_t deadline;
};

struct agent {
    struct agent_cfg cfg; /* effective: defaults filled, key zeroed, allow NULL */
    struct ctl_key key;
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
    pthread_mutex_t mu; /* sessions, nactive, npending */
    struct agent_session *sessions;
    int nactive, npending;
    uint64_t next_id;
    atomic_bool stopping;
    pthread_mutex_t logmu;
    char host[256];
    struct lingering lg[MAX_LINGER];
    int nlg;
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
    cJSON_AddStringToObject(resp, "protocol", CTL_PROTO);
    cJSON_AddNumberToObject(resp, "version", CTL_VERSION);
    cJSON_AddNumberToObject(resp, "session", (double)s->id);
    cJSON_AddStringToObject(resp, "client", s->peer_host);
    /* null: no cap */
    cJSON *caps = cJSON_AddObjectToObject(resp, "caps");
    cJSON_AddNumberToObject(caps, "max_sessions", a->cfg.max_sessions);
    jsonutil_add_num_or_null(caps, "max_rate_gbps", a->cfg.max_rate_gbps > 0, a->cfg.max_rate_gbps);
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

/* ---- sessions ---- */

static const struct agent_handler *find_handler(const struct agent *a, const char *type)
{
    for (int i = 0; i < a->nhandlers; i++)
        if (!strcmp(a->handlers[i]->type, type))
            return a->handlers[i];
    return NULL;
}

/* Admit an authenticated client if a session slot is free (ctl_accept calls it). */
static int admit(void *arg, struct ft_err *why)
{
    struct agent_session *s = arg;
    struct agent *a = s->a;
    pthread_mutex_lock(&a->mu);
    int n = a->nactive, max = a->cfg.max_sessions;
    if (n < max) {
        a->nactive++;
        s->admitted = true;
    }
    pthread_mutex_unlock(&a->mu);
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
        if (text && strlen(text) <= CTL_MAX_PAYLOAD)
            break;
        size_t n = text ? strlen(text) : 0;
        cJSON_free(text);
        text = NULL;
        ft_err_clear(&herr);
        rc = ft_err_set(&herr, -EMSGSIZE, "the response of %zu bytes exceeds the %d-byte limit", n,
                        CTL_MAX_PAYLOAD);
    }
    rc = text ? ctl_send(s->conn, CTL_T_RESPONSE, text, strlen(text), err)
              : ft_err_set(err, -ENOMEM, "out of memory");
    cJSON_free(text);
    cJSON_Delete(resp);
    cJSON_Delete(req);
    return rc;
}

static void session_end_state(struct agent_session *s)
{
    if (s->destroy)
        s->destroy(s->state);
    s->state = NULL;
    s->destroy = NULL;
}

static double since_s(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void *session_main(void *arg)
{
    struct agent_session *s = arg;
    struct agent *a = s->a;
    int cancel = a->stop_pipe[0];
    struct ctl_accept_opts o = {.timeout_ms = a->cfg.handshake_timeout_ms,
                                .cancel_fd = cancel,
                                .admit = admit,
                                .admit_arg = s};
    struct ft_err err = {0};
    int rc = ctl_accept(s->fd, &o, &a->key, &s->conn, &err);
    pthread_mutex_lock(&a->mu);
    a->npending--;
    int nactive = a->nactive;
    if (rc < 0 && s->admitted) {
        a->nactive--;
        s->admitted = false;
    }
    pthread_mutex_unlock(&a->mu);
    if (rc < 0) {
        agent_log(a, "refused %s port %u: %s", s->peer_host, s->peer_port, err.msg);
        ctl_drain(s->fd, rc == -ECANCELED ? 200 : LINGER_MS, rc == -ECANCELED ? -1 : cancel);
        close(s->fd);
        goto done;
    }
    agent_log(a, "session %llu from %s port %u: started (%d of %d sessions)",
              (unsigned long long)s->id, s->peer_host, s->peer_port, nactive, a->cfg.max_sessions);
    char reason[400] = "";
    for (;;) {
        int type;
        char *payload = NULL;
        size_t len;
        ft_err_clear(&err);
        rc = ctl_recv(s->conn, &type, &payload, &len,
                      a->cfg.idle_timeout_s > 0 ? a->cfg.idle_timeout_s * 1000 : -1,
                      FRAME_TIMEOUT_MS, &err);
        if (rc == 0 && type != CTL_T_REQUEST) {
            free(payload);
            snprintf(reason, sizeof(reason), "expected a request, got frame type %d", type);
            ctl_refuse(s->conn, "malformed", reason);
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
                ctl_refuse(s->conn, code, reason);
            if (rc == -ECANCELED)
                ctl_drain(ctl_conn_fd(s->conn), 200, -1);
            else if (code)
                ctl_drain(ctl_conn_fd(s->conn), LINGER_MS, cancel);
            break;
        }
        s->nreq++;
        bool bye = false;
        rc = serve_request(s, payload, len, &bye, &err);
        free(payload);
        if (rc < 0) {
            snprintf(reason, sizeof(reason), "%s", err.msg);
            break;
        }
        if (bye) {
            snprintf(reason, sizeof(reason), "bye");
            ctl_drain(ctl_conn_fd(s->conn), LINGER_MS, cancel);
            break;
        }
    }
    ctl_close(s->conn);
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

static void linger_add(struct agent *a, int fd)
{
    shutdown(fd, SHUT_WR);
    if (a->nlg == MAX_LINGER) {
        close(fd);
        return;
    }
    a->lg[a->nlg].fd = fd;
    a->lg[a->nlg].deadline = mono_ms() + LINGER_MS;
    a->nlg++;
}

static void linger_remove(struct agent *a, int i)
{
    close(a->lg[i].fd);
    a->lg[i] = a->lg[--a->nlg];
}

/* Refuse a connection in the accept loop without blocking it. */
static void refuse_now(struct agent *a, int fd, const struct sockaddr_storage *ss, const char *code,
                       const char *msg)
{
    char host[INET6_ADDRSTRLEN];
    ctl_format_addr(ss, false, host, sizeof(host));
    unsigned port = ntohs(ss->ss_family == AF_INET ? ((const struct sockaddr_in *)ss)->sin_port
                                                   : ((const struct sockaddr_in6 *)ss)->sin6_port);
    agent_log(a, "refused %s port %u: %s", host, port, msg);
    ctl_refuse_fd(fd, code, msg);
    linger_add(a, fd);
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

static void accept_one(struct agent *a, int fd, struct sockaddr_storage *ss)
{
    normalize(ss);
    char msg[160];
    if (!allowed(a, ss)) {
        char host[INET6_ADDRSTRLEN];
        ctl_format_addr(ss, false, host, sizeof(host));
        snprintf(msg, sizeof(msg), "address %s is not in the agent's allowlist", host);
        refuse_now(a, fd, ss, "denied", msg);
        return;
    }
    struct agent_session *s = calloc(1, sizeof(*s));
    msg[0] = '\0';
    pthread_mutex_lock(&a->mu);
    if (a->nactive >= a->cfg.max_sessions)
        snprintf(msg, sizeof(msg), "busy: %d sessions, limit %d", a->nactive, a->cfg.max_sessions);
    else if (a->npending >= a->cfg.max_handshakes)
        snprintf(msg, sizeof(msg), "busy: %d connections authenticating, limit %d", a->npending,
                 a->cfg.max_handshakes);
    else if (!s)
        snprintf(msg, sizeof(msg), "busy: out of memory");
    else
        a->npending++;
    pthread_mutex_unlock(&a->mu);
    if (msg[0]) {
        free(s);
        refuse_now(a, fd, ss, "busy", msg);
        return;
    }
    s->a = a;
    s->fd = fd;
    s->peer = *ss;
    socklen_t sl = sizeof(s->local);
    getsockname(fd, (struct sockaddr *)&s->local, &sl);
    normalize(&s->local);
    ctl_format_addr(ss, false, s->peer_host, sizeof(s->peer_host));
    s->peer_port = ntohs(ss->ss_family == AF_INET ? ((struct sockaddr_in *)ss)->sin_port
                                                  : ((struct sockaddr_in6 *)ss)->sin6_port);
    clock_gettime(CLOCK_MONOTONIC, &s->t0);
    pthread_mutex_lock(&a->mu);
    s->id = ++a->next_id;
    pthread_mutex_unlock(&a->mu);
    if (pthread_create(&s->thr, NULL, session_main, s) != 0) {
        pthread_mutex_lock(&a->mu);
        a->npending--;
        pthread_mutex_unlock(&a->mu);
        free(s);
        refuse_now(a, fd, ss, "busy", "busy: cannot start a session thread");
        return;
    }
    pthread_mutex_lock(&a->mu);
    s->next = a->sessions;
    a->sessions = s;
    pthread_mutex_unlock(&a->mu);
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
            p[3 + i] = (struct pollfd){.fd = a->lg[i].fd, .events = POLLIN};
            if (next < 0 || a->lg[i].deadline < next)
                next = a->lg[i].deadline;
        }
        int timeout = next < 0 ? -1 : next <= now ? 0 : (int)(next - now);
        int n = poll(p, (nfds_t)(3 + a->nlg), timeout);
        if (n < 0 && errno != EINTR)
            break;
        if (atomic_load(&a->stopping))
            break;
        if (n < 0)
            continue;
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
        if (!listening || !(p[0].revents & POLLIN))
            continue;
        for (int k = 0; k < ACCEPT_BATCH; k++) {
            struct sockaddr_storage ss;
            socklen_t sl = sizeof(ss);
            int fd = accept(a->lfd, (struct sockaddr *)&ss, &sl);
            if (fd < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                    agent_log(a, "cannot accept a connection: %s; pausing 100 ms", strerror(errno));
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
        ctl_refuse_fd(fd, "shutdown", "the agent is shutting down");
        ctl_drain(fd, 100, -1);
        close(fd);
    }
    close(a->lfd);
    a->lfd = -1;
    while (a->nlg)
        linger_remove(a, a->nlg - 1);
    reap(a, true); /* every session sees the stop pipe and ends */
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
    cfg->handshake_timeout_ms = AGENT_DEF_HANDSHAKE_TIMEOUT;
}

static int check_cfg(struct agent_cfg *c, struct ft_err *err)
{
    if (sodium_is_zero(c->key.k, sizeof(c->key.k)))
        return ft_err_set(err, -EINVAL, "agent: no key");
    if (c->max_sessions == 0)
        c->max_sessions = AGENT_DEF_MAX_SESSIONS;
    if (c->max_handshakes == 0)
        c->max_handshakes =
            c->max_sessions > AGENT_DEF_MAX_HANDSHAKES ? c->max_sessions : AGENT_DEF_MAX_HANDSHAKES;
    if (c->handshake_timeout_ms == 0)
        c->handshake_timeout_ms = AGENT_DEF_HANDSHAKE_TIMEOUT;
    if (c->max_sessions < 1 || c->max_sessions > 4096)
        return ft_err_set(err, -EINVAL, "max sessions must be 1 to 4096, not %d", c->max_sessions);
    if (c->max_handshakes < 1 || c->max_handshakes > 4096)
        return ft_err_set(err, -EINVAL, "max handshakes must be 1 to 4096, not %d",
                          c->max_handshakes);
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
        ctl_format_addr(&ss, true, a->desc, sizeof(a->desc));
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
    int rc = check_cfg(&a->cfg, err);
    if (rc < 0)
        goto fail;
    a->key = cfg->key;
    ctl_key_wipe(&a->cfg.key);
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
    ctl_key_wipe(&a->key);
    free(a->handlers);
    pthread_mutex_destroy(&a->mu);
    pthread_mutex_destroy(&a->logmu);
    free(a);
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
    ctl_key_wipe(&a->key);
    free(a->handlers);
    pthread_mutex_destroy(&a->mu);
    pthread_mutex_destroy(&a->logmu);
    free(a);
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

void agent_session_set_state(struct agent_session *s, void *state, void (*destroy)(void *state))
{
    if (s->destroy && s->state != state)
        s->destroy(s->state);
    s->state = state;
    s->destroy = destroy;
}

void *agent_session_state(const struct agent_session *s)
{
    return s->state;
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
