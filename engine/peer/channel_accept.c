/* channel_accept: the agent side of the control channel's handshake: admitting a
 * connection, checking the client's proof against the keys, refusing with a reason. */
#include "engine/peer/channel_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "common/jsonutil.h"

/* ---- agent side of the handshake ---- */

/* Turn a read error into a refusal (when the client can still read one); ms: the deadline
 * that applied, hello: it was the hello's own. */
/* Send a refusal, telling o->refused first. */
static void accept_say(struct channel_conn *c, const struct channel_accept_opts *o,
                       const char *code, const char *msg, int retry_ms)
{
    if (o->refused)
        o->refused(o->admit_arg, msg);
    channel_refuse(c, code, msg, retry_ms);
}

static int accept_read_failed(struct channel_conn *c, const struct channel_accept_opts *o, int rc,
                              int ms, bool hello, const struct ft_err *e, struct ft_err *err)
{
    char msg[320];
    switch (rc) {
    case -ETIMEDOUT:
    case -ETIME:
        snprintf(msg, sizeof(msg),
                 hello ? "no hello within %d ms" : "handshake timed out after %d ms", ms);
        accept_say(c, o, "timeout", msg, 0);
        return ft_err_set(err, -ETIMEDOUT, "%s", msg);
    case -ECANCELED:
        accept_say(c, o, "shutdown", "the agent is shutting down", 0);
        return ft_err_set(err, rc, "the agent is shutting down");
    case -EMSGSIZE:
        accept_say(c, o, "toolarge", e->msg, 0);
        return ft_err_set(err, rc, "%s", e->msg);
    case -EBADMSG:
        accept_say(c, o, "malformed", e->msg, 0);
        return ft_err_set(err, rc, "%s", e->msg);
    case -ECONNRESET:
        return ft_err_set(err, rc, "the client closed the connection during the handshake");
    default:
        return ft_err_set(err, rc, "%s", e->msg);
    }
}

static int accept_refuse(struct channel_conn *c, const struct channel_accept_opts *o, int rc,
                         const char *code, int retry_ms, struct ft_err *err, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
static int accept_refuse(struct channel_conn *c, const struct channel_accept_opts *o, int rc,
                         const char *code, int retry_ms, struct ft_err *err, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    accept_say(c, o, code, msg, retry_ms);
    return ft_err_set(err, rc, "%s", msg);
}

int channel_conn_key(const struct channel_conn *c)
{
    return c->key_index;
}

/* Which of the keys made the client's proof: its index, or -1. Every key is tried and
 * compared, so the time taken does not depend on which one (or none) matched. */
static int match_key(const struct channel_key *keys, int nkeys, const unsigned char *nc,
                     const unsigned char *na, const unsigned char *t, const unsigned char *auth)
{
    int found = -1;
    for (int i = 0; i < nkeys; i++) {
        unsigned char buf[32];
        channel_handshake_proof(&keys[i], "client", nc, na, t, buf);
        int bad = sodium_memcmp(buf, auth, 32);
        sodium_memzero(buf, sizeof(buf));
        found = !bad && found < 0 ? i : found;
    }
    return found;
}

int channel_accept(int fd, const struct channel_accept_opts *o, const struct channel_key *keys,
                   int nkeys, struct channel_conn **out, struct ft_err *err)
{
    *out = NULL;
    int rc = channel_crypto_ready(err);
    if (rc < 0)
        return rc;
    if (nkeys < 1 || nkeys > 64)
        return ft_err_set(err, -EINVAL, "channel_accept: %d keys (1 to 64)", nkeys);
    struct channel_conn *c = channel_conn_new(fd, false);
    if (!c)
        return ft_err_set(err, -ENOMEM, "out of memory");
    c->cancel_fd = o->cancel_fd;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int64_t t0 = channel_now_ms(), deadline = t0 + o->timeout_ms;
    int timeout_ms = o->timeout_ms;
    int hello_ms = o->hello_timeout_ms > 0 && o->hello_timeout_ms < timeout_ms ? o->hello_timeout_ms
                                                                               : timeout_ms;
    unsigned char nc[CHANNEL_NONCE_BYTES], na[CHANNEL_NONCE_BYTES], t[32], buf[32];
    char *hc = NULL, *ha = NULL, *auth = NULL;
    size_t nhc, nauth;
    int type;
    struct ft_err e = {0};

    rc =
        channel_read_frame(c, CHANNEL_MAX_HANDSHAKE_FRAME, t0 + hello_ms, -2, &type, &hc, &nhc, &e);
    if (rc < 0) {
        rc = accept_read_failed(c, o, rc, hello_ms, hello_ms < timeout_ms, &e, err);
        goto fail;
    }
    if (type != CHANNEL_T_HELLO) {
        rc = accept_refuse(c, o, -EPROTO, "malformed", 0, err,
                           "expected a hello frame, got frame type %d", type);
        goto fail;
    }
    int version = -1;
    char why[128];
    rc = channel_handshake_hello_check(hc, nhc, "client", nc, &version, why, sizeof(why));
    if (rc == -EPROTONOSUPPORT) {
        rc = accept_refuse(c, o, rc, "version", 0, err,
                           "version mismatch: this agent speaks %s version %d, the client "
                           "version %d",
                           CHANNEL_PROTO, CHANNEL_VERSION, version);
        goto fail;
    }
    if (rc < 0) {
        rc = accept_refuse(c, o, rc, "malformed", 0, err, "malformed hello: %s", why);
        goto fail;
    }
    if (o->hello) {
        struct ft_err why_hello = {0};
        rc = o->hello(o->admit_arg, channel_handshake_early_check(hc, nhc, keys, nkeys, nc), nc,
                      &timeout_ms, &why_hello);
        if (rc < 0) {
            rc = accept_refuse(c, o, rc, "busy", rc == -EAGAIN ? o->busy_retry_ms : 0, err, "%s",
                               why_hello.msg);
            goto fail;
        }
        if (timeout_ms < o->timeout_ms)
            deadline = t0 + timeout_ms;
    }
    randombytes_buf(na, sizeof(na));
    ha = channel_handshake_hello_text("agent", na, NULL);
    if (!ha) {
        rc = ft_err_set(err, -ENOMEM, "out of memory");
        goto fail;
    }
    rc = channel_write_frame(c, CHANNEL_T_HELLO, ha, strlen(ha), deadline, &e);
    if (rc < 0) {
        rc = ft_err_set(err, rc, "%s", e.msg);
        goto fail;
    }
    rc = channel_read_frame(c, CHANNEL_MAX_HANDSHAKE_FRAME, deadline, -2, &type, &auth, &nauth, &e);
    if (rc < 0) {
        rc = accept_read_failed(c, o, rc, timeout_ms, false, &e, err);
        goto fail;
    }
    if (type != CHANNEL_T_AUTH || nauth != 32) {
        rc = accept_refuse(c, o, -EPROTO, "malformed", 0, err,
                           "expected the client's proof (32 bytes), got frame type %d with %zu "
                           "bytes",
                           type, nauth);
        goto fail;
    }
    channel_handshake_transcript(hc, nhc, ha, strlen(ha), t);
    int ki = match_key(keys, nkeys, nc, na, t, (const unsigned char *)auth);
    if (ki < 0) {
        rc = accept_refuse(c, o, -EACCES, "auth", 0, err, "authentication failed: the keys differ");
        goto fail;
    }
    if (o->admit) {
        struct ft_err why_admit = {0};
        rc = o->admit(o->admit_arg, ki, &why_admit);
        if (rc < 0) {
            rc = accept_refuse(c, o, rc, "busy", rc == -EAGAIN ? o->busy_retry_ms : 0, err, "%s",
                               why_admit.msg);
            goto fail;
        }
    }
    c->key_index = ki;
    channel_handshake_proof(&keys[ki], "agent", nc, na, t, buf);
    channel_handshake_session_key(&keys[ki], nc, na, t, c->skey);
    rc = channel_write_frame(c, CHANNEL_T_AUTH, buf, sizeof(buf), deadline, &e);
    sodium_memzero(buf, sizeof(buf));
    if (rc < 0) {
        rc = ft_err_set(err, rc, "%s", e.msg);
        goto fail; /* admitted: the caller releases the slot */
    }
    c->send_mac = c->recv_mac = true;
    free(hc);
    free(ha);
    free(auth);
    sodium_memzero(t, sizeof(t));
    *out = c;
    return 0;
fail:
    free(hc);
    free(ha);
    free(auth);
    sodium_memzero(t, sizeof(t));
    channel_conn_release(c);
    return rc;
}
