/* agent_fault: fault drills (`fabtop drill`): the fault.inject request, which a client sends
 * to stall or end its own test sessions (same key, same address; never another client's)
 * for at most the agent's max_fault_s, and fault.stats, the client's count of requests the
 * agent answered. Every fault is logged. A drill's controlling session is never faulted. */
#include "engine/peer/agent_int.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/jsonutil.h"

static const char *const kind_names[] = {"", "peer-stall", "peer-kill", "qp-error"};

static bool same_client(const struct agent_session *s, int key, const char *host)
{
    return s->key == key && !strcmp(s->peer_host, host);
}

bool agent_fault_active(struct agent_session *s, int kind, int64_t *left_ms)
{
    struct agent *a = s->a;
    int64_t now = agent_log_mono_ms();
    if (atomic_load(&a->fault_until_ms) <= now || atomic_load(&s->fault_ctl))
        return false;
    bool on = false;
    pthread_mutex_lock(&a->fmu);
    for (int i = 0; i < AGENT_MAX_FAULTS; i++) {
        const struct agent_fault *f = &a->faults[i];
        if (f->kind != kind || f->until_ms <= now || !same_client(s, f->key, f->host) ||
            (f->session && f->session != s->id))
            continue;
        if (left_ms && (!on || f->until_ms - now > *left_ms))
            *left_ms = f->until_ms - now;
        on = true;
    }
    pthread_mutex_unlock(&a->fmu);
    return on;
}

bool agent_session_stall_wait(struct agent_session *s, const _Atomic bool *stop)
{
    bool waited = false;
    while (agent_fault_active(s, AGENT_FAULT_STALL, NULL)) {
        if ((stop && atomic_load(stop)) || atomic_load(&s->a->stopping))
            break;
        waited = true;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return waited;
}

void agent_session_count_answer(struct agent_session *s)
{
    atomic_fetch_add(&s->answered, 1);
}

/* The client's entry in the totals of ended sessions (under fmu); NULL when full. */
static struct agent_count *count_of(struct agent *a, int key, const char *host)
{
    for (int i = 0; i < a->ncounts; i++)
        if (a->counts[i].key == key && !strcmp(a->counts[i].host, host))
            return &a->counts[i];
    if (a->ncounts == AGENT_MAX_COUNTS)
        return NULL;
    struct agent_count *c = &a->counts[a->ncounts++];
    c->key = key;
    snprintf(c->host, sizeof(c->host), "%s", host);
    c->answered = 0;
    return c;
}

void agent_fault_session_end(struct agent_session *s)
{
    struct agent *a = s->a;
    pthread_mutex_lock(&a->fmu);
    struct agent_count *c = count_of(a, s->key, s->peer_host);
    if (c)
        c->answered += atomic_exchange(&s->answered, 0);
    pthread_mutex_unlock(&a->fmu);
}

/* {"kind": "peer-stall"|"peer-kill"|"qp-error", "for_s": S, "session": N (optional: one of this
 * client's sessions; default every one of them)} */
static int h_inject(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    struct agent *a = s->a;
    atomic_store(&s->fault_ctl, true);
    const char *kind = jsonutil_str(req, "kind");
    double for_s = 0, sid = 0;
    int k = 0;
    for (int i = 1; kind && i <= AGENT_FAULT_QP_ERROR; i++)
        if (!strcmp(kind, kind_names[i]))
            k = i;
    if (!k)
        return ft_err_set(err, -EINVAL,
                          "fault.inject: unknown fault kind '%s' (peer-stall, peer-kill or "
                          "qp-error)",
                          kind ? kind : "");
    if (!jsonutil_num(req, "for_s", &for_s) || !(for_s > 0))
        return ft_err_set(err, -EINVAL, "fault.inject: for_s must be a number of seconds above 0");
    if (!(a->cfg.max_fault_s > 0)) {
        agent_session_log(s, "fault: refused %s for %g s: this agent takes no faults", kind, for_s);
        return ft_err_set(err, -EPERM,
                          "fault.inject: this agent takes no faults (fabtop serve --max-fault 0)");
    }
    if (for_s > a->cfg.max_fault_s) {
        agent_session_log(s, "fault: refused %s for %g s: longer than --max-fault %g s", kind,
                          for_s, a->cfg.max_fault_s);
        return ft_err_set(err, -EPERM,
                          "fault.inject: %g s is longer than this agent's limit (fabtop serve "
                          "--max-fault %g)",
                          for_s, a->cfg.max_fault_s);
    }
    jsonutil_num(req, "session", &sid);
    uint64_t target = sid > 0 ? (uint64_t)sid : 0;
    /* Which sessions: the client's own, never its controller's, never another client's. */
    int n = 0;
    bool found = target == 0, others = false;
    pthread_mutex_lock(&a->mu);
    for (struct agent_session *t = a->sessions; t; t = t->next) {
        if (target && t->id == target) {
            found = true;
            others = !t->admitted || !same_client(t, s->key, s->peer_host);
        }
        if (t == s || !t->admitted || t->pending || atomic_load(&t->done) ||
            atomic_load(&t->fault_ctl) || !same_client(t, s->key, s->peer_host) ||
            (target && t->id != target))
            continue;
        n++;
        if (k == AGENT_FAULT_KILL && t->fd_live)
            shutdown(t->fd, SHUT_RDWR); /* abruptly: its thread ends it, data threads too */
    }
    pthread_mutex_unlock(&a->mu);
    if (!found)
        return ft_err_set(err, -ENOENT, "fault.inject: no session %llu on this agent",
                          (unsigned long long)target);
    if (others || (target && target == s->id)) {
        agent_session_log(s,
                          "fault: refused %s of session %llu: not one of this client's test "
                          "sessions",
                          kind, (unsigned long long)target);
        return ft_err_set(err, -EPERM,
                          "fault.inject: session %llu is not one of this client's test sessions",
                          (unsigned long long)target);
    }
    int64_t until = agent_log_mono_ms() + (int64_t)(for_s * 1000);
    pthread_mutex_lock(&a->fmu);
    int slot = -1;
    int64_t now = agent_log_mono_ms();
    for (int i = 0; i < AGENT_MAX_FAULTS && slot < 0; i++)
        if (a->faults[i].kind == AGENT_FAULT_NONE || a->faults[i].until_ms <= now)
            slot = i;
    if (slot >= 0) {
        struct agent_fault *f = &a->faults[slot];
        f->kind = k;
        f->key = s->key;
        snprintf(f->host, sizeof(f->host), "%s", s->peer_host);
        f->session = target;
        f->until_ms = until;
        if (atomic_load(&a->fault_until_ms) < until)
            atomic_store(&a->fault_until_ms, until);
    }
    pthread_mutex_unlock(&a->fmu);
    if (slot < 0)
        return ft_err_set(err, -EBUSY, "fault.inject: %d faults already active", AGENT_MAX_FAULTS);
    agent_session_log(s, "fault: %s for %g s on %d session%s of %s%s", kind, for_s, n,
                      n == 1 ? "" : "s", s->peer_host,
                      k == AGENT_FAULT_KILL && !target ? " (new sessions refused meanwhile)" : "");
    cJSON_AddStringToObject(resp, "kind", kind);
    cJSON_AddNumberToObject(resp, "for_s", for_s);
    cJSON_AddNumberToObject(resp, "sessions", n);
    return 0;
}

/* The requests this client's sessions answered in full ({"answered": N}), and how many of
 * its test sessions are open now. */
static int h_stats(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)req;
    (void)err;
    struct agent *a = s->a;
    atomic_store(&s->fault_ctl, true);
    uint64_t answered = 0;
    int open = 0;
    pthread_mutex_lock(&a->mu);
    pthread_mutex_lock(&a->fmu);
    for (struct agent_session *t = a->sessions; t; t = t->next)
        if (t->admitted && same_client(t, s->key, s->peer_host)) {
            answered += atomic_load(&t->answered);
            open += t != s && !atomic_load(&t->done) && !atomic_load(&t->fault_ctl);
        }
    struct agent_count *c = count_of(a, s->key, s->peer_host);
    if (c)
        answered += c->answered;
    pthread_mutex_unlock(&a->fmu);
    pthread_mutex_unlock(&a->mu);
    cJSON_AddNumberToObject(resp, "answered", (double)answered);
    cJSON_AddNumberToObject(resp, "sessions", open);
    cJSON_AddNumberToObject(resp, "max_fault_s", a->cfg.max_fault_s);
    return 0;
}

const struct agent_handler agent_fault_inject_handler = {"fault.inject", h_inject};
const struct agent_handler agent_fault_stats_handler = {"fault.stats", h_stats};
