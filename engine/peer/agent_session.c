/* agent_session: a session after its handshake: the built-in requests, dispatch to the
 * transports' handlers, per-session state and timers, caps (rate per client key, flows per
 * session) and what handlers may ask of their session. */
#include "engine/peer/agent_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/jsonutil.h"

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
const struct agent_handler *const agent_session_builtins[AGENT_SESSION_NBUILTINS] = {
    &builtin_hello,
    &builtin_info,
    &builtin_echo,
    &builtin_bye,
    &agent_fault_inject_handler,
    &agent_fault_stats_handler};

/* ---- sessions ---- */

const struct agent_handler *agent_session_find_handler(const struct agent *a, const char *type)
{
    for (int i = 0; i < a->nhandlers; i++)
        if (!strcmp(a->handlers[i]->type, type))
            return a->handlers[i];
    return NULL;
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
        const struct agent_handler *h = agent_session_find_handler(a, type);
        /* A peer-stall: nothing answers this client's test sessions until it ends. */
        if (strncmp(type, "fault.", 6) != 0)
            agent_session_stall_wait(s, NULL);
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

/* A session after its handshake: requests until the client leaves, the agent stops or a
 * frame fails; then the connection is closed and the session's state released. */
void agent_session_run(struct agent_session *s)
{
    struct agent *a = s->a;
    int cancel = a->stop_pipe[0];
    pthread_mutex_lock(&a->mu);
    int nactive = a->nactive;
    pthread_mutex_unlock(&a->mu);
    agent_log(a, "session %llu from %s port %u: started (%d of %d sessions)",
              (unsigned long long)s->id, s->peer_host, s->peer_port, nactive, a->cfg.max_sessions);
    char reason[400] = "";
    pthread_mutex_lock(&a->mu);
    s->fd_live = true;
    pthread_mutex_unlock(&a->mu);
    int64_t kill_left = 0;
    if (agent_fault_active(s, AGENT_FAULT_KILL, &kill_left)) {
        snprintf(reason, sizeof(reason),
                 "fault drill: peer-kill: this client's sessions are refused for another %.1f s",
                 (double)kill_left / 1000);
        channel_refuse(s->conn, "unavailable", reason, (int)kill_left);
        goto end;
    }
    int64_t idle_ms = a->cfg.idle_timeout_s > 0 ? (int64_t)a->cfg.idle_timeout_s * 1000 : -1;
    int64_t idle_at = idle_ms > 0 ? agent_log_mono_ms() + idle_ms : -1;
    struct ft_err err = {0};
    for (;;) {
        int64_t now = agent_log_mono_ms();
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
        if (rc == -ETIMEDOUT && (idle_at < 0 || agent_log_mono_ms() < idle_at))
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
            idle_at = agent_log_mono_ms() + idle_ms;
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
end:
    pthread_mutex_lock(&a->mu);
    s->fd_live = false;
    pthread_mutex_unlock(&a->mu);
    channel_close(s->conn);
    s->conn = NULL;
    session_end_state(s);
    uint64_t answered = atomic_load(&s->answered); /* before the client's total takes it */
    agent_fault_session_end(s);
    pthread_mutex_lock(&a->mu);
    a->nactive--;
    pthread_mutex_unlock(&a->mu);
    char ans[64] = "";
    if (answered)
        snprintf(ans, sizeof(ans), ", %llu answered", (unsigned long long)answered);
    agent_log(a, "session %llu from %s port %u: ended after %.1f s, %d request%s%s: %s",
              (unsigned long long)s->id, s->peer_host, s->peer_port, since_s(&s->t0), s->nreq,
              s->nreq == 1 ? "" : "s", ans, reason);
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
    struct agent_bucket *b = &s->a->buckets[s->key];
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
    s->timer_at = fn ? agent_log_mono_ms() + (ms > 0 ? ms : 0) : 0;
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
