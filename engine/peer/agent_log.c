/* agent_log: the agent's log lines: one per event through the configured sink (a session's
 * lines prefixed with its number), refusals one line each up to the window's quota, then
 * per-address summaries. */
#include "engine/peer/agent_int.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/jsonutil.h"

int64_t agent_log_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void agent_log(struct agent *a, const char *fmt, ...)
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

void agent_session_log(struct agent_session *s, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    agent_log(s->a, "session %llu: %s", (unsigned long long)s->id, msg);
}

/* IPv4-mapped IPv6 becomes plain IPv4, so allowlists and transports see one form. */
/* ---- refusals: one line each up to the window's quota, then per-address summaries ---- */

/* Under rlmu: log what the window did not log line by line, and start a new window. */
static void rl_flush_locked(struct agent *a)
{
    int span = (int)((agent_log_mono_ms() - a->rl_start + 999) / 1000);
    if (span < AGENT_LOG_WINDOW_S)
        span = AGENT_LOG_WINDOW_S;
    for (int i = 0; i < a->nrl; i++) {
        const struct agent_refused *r = &a->rl[i];
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
void agent_log_rl_tick(struct agent *a, bool force)
{
    pthread_mutex_lock(&a->rlmu);
    if (a->rl_start && (force || agent_log_mono_ms() - a->rl_start >= AGENT_LOG_WINDOW_S * 1000))
        rl_flush_locked(a);
    pthread_mutex_unlock(&a->rlmu);
}

/* When the accept loop must wake for the summary: ms from now, or -1. */
int agent_log_rl_due_ms(struct agent *a)
{
    pthread_mutex_lock(&a->rlmu);
    int64_t left = -1;
    if (a->rl_start) {
        left = a->rl_start + AGENT_LOG_WINDOW_S * 1000 - agent_log_mono_ms();
        if (left < 0)
            left = 0;
    }
    pthread_mutex_unlock(&a->rlmu);
    return (int)left;
}

/* A refused connection: "refused HOST port P: WHY" while the window's quota lasts (at most
 * 3 lines per address), otherwise counted for the summary. */
void agent_log_note_refusal(struct agent *a, const char *host, unsigned port, const char *why)
{
    atomic_fetch_add(&a->refused_total, 1);
    pthread_mutex_lock(&a->rlmu);
    int64_t now = agent_log_mono_ms();
    if (a->rl_start && now - a->rl_start >= AGENT_LOG_WINDOW_S * 1000)
        rl_flush_locked(a);
    if (!a->rl_start)
        a->rl_start = now;
    struct agent_refused *r = NULL;
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

void agent_log_note_accept_error(struct agent *a, int e)
{
    pthread_mutex_lock(&a->rlmu);
    if (!a->rl_start)
        a->rl_start = agent_log_mono_ms();
    if (a->accept_errors++ == 0) {
        snprintf(a->accept_error, sizeof(a->accept_error), "%s", strerror(e));
        agent_log(a, "cannot accept a connection: %s; pausing 100 ms", strerror(e));
    }
    pthread_mutex_unlock(&a->rlmu);
}
