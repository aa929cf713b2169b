/* agent: the peer agent's life: its configuration checked, the listening sockets, the
 * threads started and stopped. Admission (allowlist, handshake slots, the accept loop) is in
 * agent_admit.c, sessions (requests, state, timers, caps) in agent_session.c, the log lines
 * in agent_log.c. A session that fails or misbehaves only ever ends itself. */
#include "engine/peer/agent_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "common/jsonutil.h"

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
    cfg->max_fault_s = AGENT_DEF_MAX_FAULT_S;
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
    if (!(c->max_fault_s >= 0 && c->max_fault_s <= 3600))
        return ft_err_set(err, -EINVAL, "max fault must be 0 (none) to 3600 s, not %g",
                          c->max_fault_s);
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
        /* A deep accept queue (SOMAXCONN, capped by net.core.somaxconn: listen(2)): under a
         * flood of connections a full queue drops a client's SYN or handshake ACK, and the
         * retransmission one RTO later (1 s, RFC 6298) pushes a legitimate client past its
         * 2 s handshake (netns_agent measured 1.6 s at a 64-deep queue under ASan). */
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0) {
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
    pthread_mutex_destroy(&a->fmu);
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
    pthread_mutex_init(&a->fmu, NULL);
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
        rc = agent_admit_cidr_parse(cfg->allow[i], &a->allow[i], err);
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
    int nb = AGENT_SESSION_NBUILTINS;
    a->handlers = calloc((size_t)(nb + nhandlers), sizeof(*a->handlers));
    if (!a->handlers) {
        rc = ft_err_set(err, -ENOMEM, "out of memory");
        goto fail;
    }
    for (int i = 0; i < nb + nhandlers; i++) {
        const struct agent_handler *h = i < nb ? agent_session_builtins[i] : handlers[i - nb];
        if (!h || !h->type || !h->type[0] || !h->handle) {
            rc = ft_err_set(err, -EINVAL, "agent: request handler %d has no type or function",
                            i - nb);
            goto fail;
        }
        if (agent_session_find_handler(a, h->type)) {
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
    rc = -pthread_create(&a->thr, NULL, agent_admit_main, a);
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

void agent_get_stats(struct agent *a, struct agent_stats *out)
{
    pthread_mutex_lock(&a->mu);
    out->active = a->nactive;
    out->max = a->cfg.max_sessions;
    out->admitted_total = a->admitted_total;
    pthread_mutex_unlock(&a->mu);
    out->refused_total = atomic_load(&a->refused_total);
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
