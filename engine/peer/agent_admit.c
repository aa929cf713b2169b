/* agent_admit: admission to the agent: the allowlist, handshake slots per address with
 * eviction under pressure, early proofs, refused connections kept until read, the accept
 * loop and each session's thread (handshake, then agent_session_run). */
#include "engine/peer/agent_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonutil.h"

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

int agent_admit_cidr_parse(const char *s, struct agent_cidr *c, struct ft_err *err)
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

static bool cidr_match(const struct agent_cidr *c, const struct sockaddr_storage *ss)
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

static bool agent_admit_allowed(const struct agent *a, const struct sockaddr_storage *ss)
{
    if (a->nallow == 0)
        return true;
    for (int i = 0; i < a->nallow; i++)
        if (cidr_match(&a->allow[i], ss))
            return true;
    return false;
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
        a->admitted_total++;
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

/* The handshake is about to refuse the client: log it now, before the client can read the
 * refusal and connect again, so that the log keeps the order the clients were answered in. */
static void refused(void *arg, const char *why)
{
    struct agent_session *s = arg;
    agent_log_note_refusal(s->a, s->peer_host, s->peer_port, why);
    s->refusal_noted = true;
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
                                    .refused = refused,
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
    if (evicted && rc != -EAGAIN && !s->refusal_noted) { /* cut off while reading */
        agent_log_note_refusal(a, s->peer_host, s->peer_port, s->evict_why);
        channel_refuse_fd(s->fd, "busy", s->evict_why, AGENT_BUSY_RETRY_MS);
    } else if (!s->refusal_noted) { /* the client left, or nothing could be said */
        agent_log_note_refusal(a, s->peer_host, s->peer_port, err.msg);
    }
    if (rc == -ECANCELED) {
        channel_drain(s->fd, 200, -1);
        close(s->fd);
    } else {
        linger_hand(a, s->fd, evicted);
    }
    return false;
}

/* A session's thread: the handshake, then the session; the accept loop reaps it when done. */
static void *session_main(void *arg)
{
    struct agent_session *s = arg;
    struct agent *a = s->a;
    if (session_handshake(s))
        agent_session_run(s);
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
    a->lg[a->nlg].deadline = agent_log_mono_ms() + LINGER_MS;
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
    agent_log_note_refusal(a, host, port, msg);
    channel_refuse_fd(fd, code, msg, retry_ms);
    linger_add(a, fd, false);
}

void agent_admit_reap(struct agent *a, bool all)
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

static void src_of(const struct sockaddr_storage *ss, struct agent_src_addr *out)
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

static bool src_eq(const struct agent_src_addr *x, const struct agent_src_addr *y)
{
    return x->len == y->len && !memcmp(x->b, y->b, (size_t)x->len);
}

/* Under mu: a handshake of state hs (0: PRE or UNAUTH, the slots of connections without a
 * key) that may still be cut off (not admitted, not already cut off). */
bool agent_admit_holds(const struct agent_session *s, int hs)
{
    return s->pending && !s->evicted && !s->admitted &&
           (hs ? s->hs == hs : s->hs == HS_PRE || s->hs == HS_UNAUTH);
}

static int count_from(const struct agent *a, const struct agent_src_addr *src, int hs)
{
    int n = 0;
    for (const struct agent_session *s = a->sessions; s; s = s->next)
        n += agent_admit_holds(s, hs) && (!src || src_eq(&s->src, src));
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
static struct agent_session *oldest_from(const struct agent *a, const struct agent_src_addr *src,
                                         int hs, int64_t min_age, int64_t now)
{
    struct agent_session *o = NULL;
    for (struct agent_session *s = a->sessions; s; s = s->next)
        if (agent_admit_holds(s, hs) && (!src || src_eq(&s->src, src)) &&
            now - s->t_accept >= min_age && (!o || s->id < o->id) &&
            !(hs == HS_PRE && frame_waiting(s->fd)))
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
        if (!agent_admit_holds(s, hs))
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
static int pre_slot(struct agent *a, const struct agent_src_addr *src, const char *host, char *msg,
                    size_t len)
{
    int64_t now = agent_log_mono_ms();
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
    int64_t now = agent_log_mono_ms();
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
    if (!agent_admit_allowed(a, ss)) {
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
        s->t_accept = agent_log_mono_ms();
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

void *agent_admit_main(void *arg)
{
    struct agent *a = arg;
    int64_t paused_until = 0; /* out of file descriptors: retry later */
    for (;;) {
        struct pollfd p[3 + MAX_LINGER];
        int64_t now = agent_log_mono_ms();
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
        int due = agent_log_rl_due_ms(a);
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
        agent_log_rl_tick(a, false);
        if (p[2].revents & POLLIN) {
            char buf[64];
            while (read(a->wake_pipe[0], buf, sizeof(buf)) > 0)
                ;
            agent_admit_reap(a, false);
        }
        now = agent_log_mono_ms();
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
                    agent_log_note_accept_error(a, errno);
                    paused_until = agent_log_mono_ms() + 100;
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
    agent_admit_reap(a, true); /* every session sees the stop pipe and ends */
    pthread_mutex_lock(&a->mu);
    for (int i = 0; i < a->nhand; i++)
        close(a->hand[i]);
    a->nhand = 0;
    pthread_mutex_unlock(&a->mu);
    agent_log_rl_tick(a, true);
    return NULL;
}
