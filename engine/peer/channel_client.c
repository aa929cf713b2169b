/* channel_client: the client side of the control channel: connecting (the handshake as
 * the client, an agent's refusals), requests and their responses, the orderly close. */
#include "engine/peer/channel_int.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/jsonutil.h"

static int version_mismatch(const struct channel_conn *c, int theirs, struct ft_err *err)
{
    return ft_err_set(err, -EPROTONOSUPPORT,
                      "peer %s: protocol version mismatch: this fabtop speaks %s version %d, the "
                      "agent version %d",
                      c->desc, CHANNEL_PROTO, CHANNEL_VERSION, theirs);
}

/* The client read an ERROR frame: say what the agent said, in the client's words. */
static int client_refused(struct channel_conn *c, const char *text, size_t len, bool in_session,
                          struct ft_err *err)
{
    struct channel_refusal r;
    channel_handshake_refusal_parse(text, len, &r);
    c->broken = true;
    c->retry_ms = !strcmp(r.code, "busy") ? r.retry_ms : 0;
    snprintf(c->broken_why, sizeof(c->broken_why), "%s", r.msg);
    if (!strcmp(r.code, "version") && r.version >= 0 && r.version != CHANNEL_VERSION)
        return version_mismatch(c, r.version, err);
    if (!strcmp(r.code, "auth"))
        return ft_err_set(err, -EACCES, "peer %s: %s", c->desc, r.msg);
    return ft_err_set(err, -channel_handshake_refusal_errno(r.code), "peer %s: the agent %s: %s",
                      c->desc, in_session ? "closed the session" : "refused the session", r.msg);
}

/* Client side of the handshake, within deadline. */
static int client_handshake(struct channel_conn *c, const struct channel_key *key, int64_t deadline,
                            int timeout_ms, struct ft_err *err)
{
    unsigned char nc[CHANNEL_NONCE_BYTES], na[CHANNEL_NONCE_BYTES], t[32], mine[32], want[32];
    randombytes_buf(nc, sizeof(nc));
    char *hc = channel_handshake_hello_text("client", nc, key);
    if (!hc)
        return ft_err_set(err, -ENOMEM, "out of memory");
    struct ft_err e = {0};
    int send_rc = channel_write_frame(c, CHANNEL_T_HELLO, hc, strlen(hc), deadline, &e);
    /* Even if sending failed, a refusal (allowlist, busy) may be waiting to be read. */
    int type;
    char *ha = NULL;
    size_t nha;
    int rc = channel_read_frame(c, CHANNEL_MAX_HANDSHAKE_FRAME, deadline, -2, &type, &ha, &nha, &e);
    if (rc < 0)
        goto io_fail;
    if (type == CHANNEL_T_ERROR) {
        rc = client_refused(c, ha, nha, false, err);
        goto out;
    }
    if (send_rc < 0) {
        rc = send_rc;
        goto io_fail;
    }
    if (type != CHANNEL_T_HELLO) {
        rc = ft_err_set(err, -EPROTO, "peer %s: not a fabtop agent (frame type %d)", c->desc, type);
        goto out;
    }
    int version = -1;
    char why[128];
    rc = channel_handshake_hello_check(ha, nha, "agent", na, &version, why, sizeof(why));
    if (rc == -EPROTONOSUPPORT) {
        version_mismatch(c, version, err);
        goto out;
    }
    if (rc < 0) {
        ft_err_set(err, rc, "peer %s: not a fabtop agent (%s)", c->desc, why);
        goto out;
    }
    if (sodium_memcmp(na, nc, sizeof(nc)) == 0) {
        rc = ft_err_set(err, -EPROTO, "peer %s: the agent sent our own nonce back", c->desc);
        goto out;
    }
    channel_handshake_transcript(hc, strlen(hc), ha, nha, t);
    channel_handshake_proof(key, "client", nc, na, t, mine);
    rc = channel_write_frame(c, CHANNEL_T_AUTH, mine, sizeof(mine), deadline, &e);
    sodium_memzero(mine, sizeof(mine));
    channel_handshake_session_key(key, nc, na, t, c->skey);
    c->send_mac = true;
    free(ha);
    ha = NULL;
    int rrc =
        channel_read_frame(c, CHANNEL_MAX_HANDSHAKE_FRAME, deadline, -2, &type, &ha, &nha, &e);
    if (rrc == 0 && type == CHANNEL_T_ERROR) {
        rc = client_refused(c, ha, nha, false, err);
        goto out;
    }
    if (rc < 0 || rrc < 0) {
        rc = rc < 0 ? rc : rrc;
        goto io_fail;
    }
    if (type != CHANNEL_T_AUTH || nha != 32) {
        rc = ft_err_set(err, -EPROTO, "peer %s: expected the agent's proof, got frame type %d",
                        c->desc, type);
        goto out;
    }
    channel_handshake_proof(key, "agent", nc, na, t, want);
    int bad = sodium_memcmp(want, ha, 32);
    sodium_memzero(want, sizeof(want));
    if (bad) {
        rc = ft_err_set(err, -EACCES,
                        "peer %s: authentication failed: the keys differ (the agent's proof did "
                        "not verify)",
                        c->desc);
        goto out;
    }
    c->recv_mac = true;
    rc = 0;
    goto out;
io_fail:
    if (rc == -ETIMEDOUT || rc == -ETIME)
        rc = ft_err_set(err, -ETIMEDOUT, "peer %s: no answer to the handshake within %d ms",
                        c->desc, timeout_ms);
    else if (rc == -ECONNRESET)
        rc = ft_err_set(err, rc, "peer %s: the agent closed the connection during the handshake",
                        c->desc);
    else
        rc = ft_err_set(err, rc, "peer %s: %s", c->desc, e.msg);
out:
    free(hc);
    free(ha);
    sodium_memzero(t, sizeof(t));
    return rc;
}

static int connect_addr(const struct addrinfo *ai, const char *local, int64_t deadline, int *fd_out)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (local && local[0]) {
        /* From this address (a rail's), as the flow's data connections will leave. */
        struct addrinfo lh = {.ai_family = ai->ai_family,
                              .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_NUMERICHOST | AI_PASSIVE},
                        *la;
        if (getaddrinfo(local, NULL, &lh, &la) != 0) {
            close(fd);
            return -EADDRNOTAVAIL;
        }
        rc = bind(fd, la->ai_addr, la->ai_addrlen) < 0 ? -errno : 0;
        freeaddrinfo(la);
        if (rc < 0) {
            close(fd);
            return rc;
        }
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS) {
            rc = -errno;
        } else {
            rc = channel_io_wait(fd, POLLOUT, deadline, -1);
            if (rc == 0) {
                int soerr = 0;
                socklen_t sl = sizeof(soerr);
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
                rc = -soerr;
            }
        }
    }
    if (rc < 0) {
        close(fd);
        return rc;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    *fd_out = fd;
    return 0;
}

static int client_start(int fd, const char *desc, const struct channel_key *key, int64_t deadline,
                        int timeout_ms, int *retry_ms, struct channel_conn **out,
                        struct ft_err *err);

int channel_connect(const char *host_port, uint16_t default_port, const struct channel_key *key,
                    int timeout_ms, struct channel_conn **out, struct ft_err *err)
{
    return channel_connect_from(host_port, default_port, NULL, key, timeout_ms, out, err);
}

int channel_connect_from(const char *host_port, uint16_t default_port, const char *local,
                         const struct channel_key *key, int timeout_ms, struct channel_conn **out,
                         struct ft_err *err)
{
    *out = NULL;
    int rc = channel_crypto_ready(err);
    if (rc < 0)
        return rc;
    if (timeout_ms <= 0)
        timeout_ms = CHANNEL_DEFAULT_TIMEOUT_MS;
    int64_t deadline = channel_now_ms() + timeout_ms;
    char host[256], desc[300], ps[8];
    uint16_t port;
    rc = channel_split_host_port(host_port, default_port, host, sizeof(host), &port, err);
    if (rc < 0)
        return rc;
    snprintf(desc, sizeof(desc), strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
    if (!host[0])
        return ft_err_set(err, -EINVAL, "peer '%s': no host name", host_port);
    if (port == 0)
        return ft_err_set(err, -EINVAL, "peer %s: port 0 is not a port to connect to", desc);
    snprintf(ps, sizeof(ps), "%u", port);
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res;
    int g = getaddrinfo(host, ps, &hints, &res);
    if (g != 0)
        return ft_err_set(err, -EHOSTUNREACH, "peer %s: cannot resolve '%s': %s", desc, host,
                          g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
    /* A transient "busy" refusal (handshake slots taken, ctl.h) is retried after the
     * agent's hint, with jitter, while the timeout allows. */
    for (;;) {
        int fd = -1, last = -EHOSTUNREACH;
        for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
            last = connect_addr(ai, local, deadline, &fd);
        if (fd < 0) {
            freeaddrinfo(res);
            if (last == -ECONNREFUSED)
                return ft_err_set(err, last,
                                  "peer %s: connection refused (is 'fabtop serve' running there?)",
                                  desc);
            if (last == -ETIMEDOUT)
                return ft_err_set(err, last, "peer %s: no answer within %d ms", desc, timeout_ms);
            if (local && local[0] && (last == -EADDRNOTAVAIL || last == -EAFNOSUPPORT))
                return ft_err_set(err, last,
                                  "peer %s: cannot connect from %s: no such local address "
                                  "here, or of another family",
                                  desc, local);
            return ft_err_set(err, last, "peer %s: cannot connect: %s", desc, strerror(-last));
        }
        struct ft_err e = {0};
        int retry = 0;
        rc = client_start(fd, desc, key, deadline, timeout_ms, &retry, out, &e);
        if (rc == 0)
            break;
        close(fd);
        int64_t wait = -1;
        if (retry > 0)
            wait = retry + (int64_t)randombytes_uniform((uint32_t)retry);
        if (rc != -EBUSY || wait < 0 || channel_now_ms() + wait >= deadline) {
            freeaddrinfo(res);
            return ft_err_set(err, rc, "%s", e.msg);
        }
        struct timespec ts = {(time_t)(wait / 1000), (long)(wait % 1000) * 1000000};
        nanosleep(&ts, NULL);
    }
    freeaddrinfo(res);
    return 0;
}

int channel_client_fd(int fd, const char *desc, const struct channel_key *key, int timeout_ms,
                      int *retry_ms, struct channel_conn **out, struct ft_err *err)
{
    *out = NULL;
    *retry_ms = 0;
    int rc = channel_crypto_ready(err);
    if (rc < 0)
        return rc;
    if (timeout_ms <= 0)
        timeout_ms = CHANNEL_DEFAULT_TIMEOUT_MS;
    return client_start(fd, desc, key, channel_now_ms() + timeout_ms, timeout_ms, retry_ms, out,
                        err);
}

/* channel_client_fd's work by deadline; timeout_ms is the caller's, for messages. */
static int client_start(int fd, const char *desc, const struct channel_key *key, int64_t deadline,
                        int timeout_ms, int *retry_ms, struct channel_conn **out,
                        struct ft_err *err)
{
    *out = NULL;
    *retry_ms = 0;
    int rc;
    struct channel_conn *c = channel_conn_new(fd, true);
    if (!c)
        return ft_err_set(err, -ENOMEM, "out of memory");
    snprintf(c->desc, sizeof(c->desc), "%s", desc);
    rc = client_handshake(c, key, deadline, timeout_ms, err);
    if (rc < 0) {
        *retry_ms = c->retry_ms;
        channel_conn_release(c);
        return rc;
    }
    char me[256] = "";
    gethostname(me, sizeof(me) - 1);
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "hello");
    cJSON_AddStringToObject(req, "host", me);
    cJSON_AddStringToObject(req, "fabtop", FABTOP_VERSION);
    int left = (int)(deadline - channel_now_ms());
    struct ft_err e = {0};
    rc = channel_request(c, req, &c->info, left > 0 ? left : 1, &e);
    if (rc < 0) {
        /* A refusal after authentication (e.g. the agent stopping) reads as a refusal. */
        const char *m = e.msg;
        char pre[320];
        snprintf(pre, sizeof(pre), "peer %s: the agent closed the session: ", c->desc);
        if (!strncmp(m, pre, strlen(pre)))
            ft_err_set(err, rc, "peer %s: the agent refused the session: %s", c->desc,
                       m + strlen(pre));
        else
            ft_err_set(err, rc, "%s", m);
        channel_conn_release(c);
        return rc;
    }
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c->info, "host"));
    snprintf(c->name, sizeof(c->name), "%s", name ? name : "");
    *out = c;
    return 0;
}

int channel_request(struct channel_conn *c, cJSON *req, cJSON **resp, int timeout_ms,
                    struct ft_err *err)
{
    *resp = NULL;
    if (timeout_ms <= 0)
        timeout_ms = CHANNEL_DEFAULT_TIMEOUT_MS;
    char type_name[64];
    const char *tn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "type"));
    snprintf(type_name, sizeof(type_name), "%s", tn ? tn : "?");
    if (!tn) {
        cJSON_Delete(req);
        return ft_err_set(err, -EINVAL, "peer %s: a request needs a \"type\"", c->desc);
    }
    pthread_mutex_lock(&c->mu);
    int rc;
    char *text = NULL, *payload = NULL;
    if (c->broken || !c->recv_mac) {
        rc = ft_err_set(err, -EPIPE, "peer %s: the session is closed (%s)", c->desc,
                        c->broken_why[0] ? c->broken_why : "not authenticated");
        goto out;
    }
    int64_t id = ++c->next_id;
    cJSON_DeleteItemFromObjectCaseSensitive(req, "id");
    cJSON_AddNumberToObject(req, "id", (double)id);
    text = cJSON_PrintUnformatted(req);
    if (!text) {
        rc = ft_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    size_t n = strlen(text);
    if (n > CHANNEL_MAX_PAYLOAD) {
        rc = ft_err_set(err, -EMSGSIZE, "peer %s: request of %zu bytes exceeds the %d-byte limit",
                        c->desc, n, CHANNEL_MAX_PAYLOAD);
        goto out;
    }
    int64_t deadline = channel_now_ms() + timeout_ms;
    struct ft_err e = {0};
    rc = channel_write_frame(c, CHANNEL_T_REQUEST, text, n, deadline, &e);
    if (rc < 0) {
        c->broken = true;
        snprintf(c->broken_why, sizeof(c->broken_why), "%s", e.msg);
        /* The agent may have said why it dropped us. */
        int type;
        size_t plen;
        if (channel_read_frame(c, CHANNEL_MAX_FRAME, channel_now_ms() + 200, -2, &type, &payload,
                               &plen, NULL) == 0 &&
            type == CHANNEL_T_ERROR)
            rc = client_refused(c, payload, plen, true, err);
        else
            rc = ft_err_set(err, rc, "peer %s: %s", c->desc, e.msg);
        goto out;
    }
    for (;;) {
        int type;
        size_t plen;
        free(payload);
        payload = NULL;
        ft_err_clear(&e);
        rc = channel_read_frame(c, CHANNEL_MAX_FRAME, deadline, -2, &type, &payload, &plen, &e);
        if (rc == -ETIMEDOUT) {
            rc = ft_err_set(err, rc, "peer %s: no reply to '%s' within %d ms", c->desc, type_name,
                            timeout_ms);
            goto out; /* the session stays usable; a late reply is skipped */
        }
        if (rc < 0) {
            c->broken = true;
            snprintf(c->broken_why, sizeof(c->broken_why), "%s", e.msg);
            if (rc == -ETIME)
                rc = -ETIMEDOUT;
            rc = ft_err_set(err, rc, "peer %s: %s%s", c->desc, e.msg,
                            rc == -EBADMSG ? "; session closed" : "");
            goto out;
        }
        if (type == CHANNEL_T_ERROR) {
            rc = client_refused(c, payload, plen, true, err);
            goto out;
        }
        cJSON *j = type == CHANNEL_T_RESPONSE ? cJSON_ParseWithLength(payload, plen) : NULL;
        const cJSON *jid = cJSON_GetObjectItemCaseSensitive(j, "id");
        int64_t rid = -1; /* the agent's number: whole and non-negative, or malformed */
        if (!cJSON_IsObject(j) || !cJSON_IsNumber(jid) ||
            !jsonutil_whole(jid->valuedouble, 0, INT64_MAX, &rid)) {
            cJSON_Delete(j);
            c->broken = true;
            snprintf(c->broken_why, sizeof(c->broken_why), "malformed response");
            rc = ft_err_set(err, -EPROTO, "peer %s: malformed response (frame type %d)", c->desc,
                            type);
            goto out;
        }
        if (rid < id) {
            cJSON_Delete(j); /* the late answer to a request that timed out */
            continue;
        }
        if (rid != id) {
            cJSON_Delete(j);
            c->broken = true;
            snprintf(c->broken_why, sizeof(c->broken_why), "response out of order");
            rc = ft_err_set(err, -EPROTO, "peer %s: response to an unknown request", c->desc);
            goto out;
        }
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(j, "ok");
        if (cJSON_IsFalse(ok)) {
            const cJSON *en = cJSON_GetObjectItemCaseSensitive(j, "errno");
            const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "error"));
            int eno =
                cJSON_IsNumber(en) && en->valueint > 0 && en->valueint < 4096 ? en->valueint : EIO;
            rc = ft_err_set(err, -eno, "peer %s: %s", c->desc, msg ? msg : strerror(eno));
            cJSON_Delete(j);
            goto out;
        }
        *resp = j;
        rc = 0;
        goto out;
    }
out:
    pthread_mutex_unlock(&c->mu);
    cJSON_Delete(req);
    cJSON_free(text);
    free(payload);
    return rc;
}

void channel_close(struct channel_conn *c)
{
    if (!c)
        return;
    if (c->is_client && !c->broken && c->recv_mac) {
        cJSON *req = cJSON_CreateObject();
        cJSON_AddStringToObject(req, "type", "bye");
        cJSON *resp = NULL;
        channel_request(c, req, &resp, BYE_TIMEOUT_MS, NULL);
        cJSON_Delete(resp);
    }
    close(c->fd);
    channel_conn_release(c);
}
