/* ctl: the control channel between `fabtop run` (client) and `fabtop serve` (agent):
 * length-prefixed, size-limited frames; a mutual challenge-response on a pre-shared key
 * that binds the protocol version and each side's role; a MAC on every later frame.
 * Functions return 0 or -errno with one sentence in struct ft_err; they never print. */
#ifndef CHANNEL_H
#define CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"

/*
 * Wire format (all integers big-endian):
 *
 *   frame   = u32 len | u8 type | payload | [mac: 32 bytes]
 *             len counts type + payload + mac and is checked against the limit
 *             (CHANNEL_MAX_HANDSHAKE_FRAME before authentication, CHANNEL_MAX_FRAME after)
 *             before anything is allocated.
 *   mac     = HMAC-SHA-512-256(session key, dir | u64 seq | u8 type | u32 payload length |
 *             payload); dir is 'C' for client->agent and 'A' for agent->client, seq counts
 *             each direction's authenticated frames from 0. It is present on every frame a
 *             side sends after its own AUTH frame, so a replayed, reordered, reflected or
 *             altered frame fails and ends the session.
 *
 * Handshake (HELLO and ERROR frames keep this layout in every protocol version):
 *   client -> HELLO {"proto":"fabtop-ctl","version":1,"role":"client","nonce":"<64 hex>",
 *                    "time":T,"early":"<64 hex>"}
 *   agent  -> HELLO {... "role":"agent", its own nonce}    or ERROR (refusal)
 *   client -> AUTH  proof("client")                        (32 bytes)
 *   agent  -> AUTH  proof("agent")                         or ERROR "authentication failed"
 * proof(role) = HMAC-SHA-512-256(PSK, "fabtop-ctl" 0 | u16 version | role 0 | Nc | Na | T),
 * T = BLAKE2b-256(u32 |hello_c| hello_c | u32 |hello_a| hello_a) binds both hellos. The roles
 * differ, so a proof reflected back to its sender fails; nonces are fresh random 32 bytes,
 * so an old proof is useless; no secret crosses the wire. Session key =
 * BLAKE2b-256(key = PSK, "fabtop-ctl session" 0 | u16 version | Nc | Na | T).
 * The PSK itself is BLAKE2b-256("fabtop-ctl key" 0 | key file bytes).
 * early = HMAC-SHA-512-256(PSK, "fabtop-ctl early" 0 | u16 version | Nc | u64 T), T the
 * client's clock in Unix seconds: the client proves the key in its first frame, so an agent
 * under a flood of connections without the key can serve it first (engine/peer/agent.h). It
 * grants no session (the AUTH exchange does); an agent remembers the nonces of early proofs
 * so a replayed hello gains nothing, and ignores proofs more than CHANNEL_EARLY_SKEW_S away
 * from its own clock. Both fields are optional: a hello without them is served as before.
 *
 * Then REQUEST {"type":"echo","id":N,...} / RESPONSE {"type":..,"id":N,"ok":true,...}, or
 * {"ok":false,"errno":E,"error":"message"} for a refused request (the session goes on).
 * ERROR {"code":"busy","message":"busy: 8 sessions, limit 8"[,"version":V][,"retry_ms":N]}
 * ends the session; codes: version, auth, busy, denied, malformed, toolarge, timeout, mac,
 * idle, shutdown. retry_ms (busy only): the refusal is transient (handshake slots), try
 * again after N ms; channel_connect does so within its timeout.
 *
 * An agent may hold several keys: it checks the client's proof against each (the same
 * work for every key, so timing does not tell which) and the session uses the one that
 * verifies.
 */

#define CHANNEL_PROTO               "fabtop-ctl"
#define CHANNEL_VERSION             1
#define CHANNEL_DEFAULT_PORT        7470
#define CHANNEL_MAX_FRAME           65536 /* bytes after the length prefix */
#define CHANNEL_MAX_HANDSHAKE_FRAME 1024
#define CHANNEL_MAC_BYTES           32
#define CHANNEL_NONCE_BYTES         32
#define CHANNEL_KEY_BYTES           32
#define CHANNEL_KEY_MIN_BYTES       32 /* random bytes a key file must hold */
#define CHANNEL_MAX_PAYLOAD         (CHANNEL_MAX_FRAME - 1 - CHANNEL_MAC_BYTES)
#define CHANNEL_DEFAULT_TIMEOUT_MS  10000
#define CHANNEL_EARLY_SKEW_S        120 /* s a client's clock may be off for its early proof */

enum channel_frame_type {
    CHANNEL_T_HELLO = 1,
    CHANNEL_T_AUTH = 2,
    CHANNEL_T_REQUEST = 3,
    CHANNEL_T_RESPONSE = 4,
    CHANNEL_T_ERROR = 5,
};

/* The pre-shared key, already derived from the key file; never print it. */
struct channel_key {
    unsigned char k[CHANNEL_KEY_BYTES];
};

struct channel_conn;

/* ---- Keys ---- */

/* Load the key from path; with NULL: FABTOP_KEY (hex) in the environment, then
 * $XDG_CONFIG_HOME/fabtop/key, then ~/.config/fabtop/key. A file holds at least 32 random
 * bytes, as hex (whitespace ignored) or raw. -ENOENT missing, -EACCES unreadable or
 * readable by group/others, -EINVAL malformed or too short. Messages never quote the key. */
int channel_key_load(const char *path, struct channel_key *key, struct ft_err *err);
/* A fresh random key (tests, one-off sessions). */
void channel_key_random(struct channel_key *key);
/* Write 32 fresh random bytes as hex to a new file with mode 0600 (-EEXIST if it exists). */
int channel_key_generate_file(const char *path, struct ft_err *err);
/* A short fingerprint (16 hex digits of a hash) to compare keys without showing them. */
void channel_key_fingerprint(const struct channel_key *key, char out[17]);
void channel_key_wipe(struct channel_key *key);

/* ---- Addresses ---- */

/* Split "host", "host:port", "[v6]:port", "[v6]" or a bare IPv6 literal. An empty host
 * (":7470") gives "". -EINVAL with a message on a bad port or bracket. */
int channel_split_host_port(const char *s, uint16_t default_port, char *host, size_t hostlen,
                            uint16_t *port, struct ft_err *err);
/* "127.0.0.1" / "::1" (IPv4-mapped IPv6 is shown as IPv4); with_port: "127.0.0.1:7470",
 * "[::1]:7470". */
void channel_format_addr(const struct sockaddr_storage *ss, bool with_port, char *buf, size_t len);

/* ---- Client ---- */

/* Connect to an agent ("host", "host:port", "[::1]:7470"), authenticate both ways and ask
 * "hello". timeout_ms (<= 0: CHANNEL_DEFAULT_TIMEOUT_MS) bounds the whole call. Errors name the
 * peer and the cause: -ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH (name does not resolve),
 * -EACCES "authentication failed: the keys differ" or an allowlist refusal,
 * -EPROTONOSUPPORT (both versions named), -EBUSY (session limit), -EPROTO. */
int channel_connect(const char *host_port, uint16_t default_port, const struct channel_key *key,
                    int timeout_ms, struct channel_conn **out, struct ft_err *err);
/* The same from the local address local (a numeric address the connection is bound to;
 * NULL or "": the kernel's choice), so that an agent sees the session come from the address
 * the flow's data will come from (a rail's, when several share a subnet). */
int channel_connect_from(const char *host_port, uint16_t default_port, const char *local,
                         const struct channel_key *key, int timeout_ms, struct channel_conn **out,
                         struct ft_err *err);
/* The client's side on a socket already connected to an agent (desc, "host:port", names it
 * in messages): the handshake and the hello request, within timeout_ms. On success *out owns
 * fd; on failure the caller still owns it, and *retry_ms is the hint of a transient "busy"
 * refusal (else 0). channel_connect uses it; tests and fuzzing call it on a socketpair. */
int channel_client_fd(int fd, const char *desc, const struct channel_key *key, int timeout_ms,
                      int *retry_ms, struct channel_conn **out, struct ft_err *err);
/* Send one request (a JSON object with "type"; consumed) and wait for its response (owned
 * by the caller). An error reply from the agent returns its -errno and message; an ERROR
 * frame (session ended by the agent) or a bad MAC closes the session. Several threads may
 * share a connection; requests are serialised. timeout_ms <= 0: CHANNEL_DEFAULT_TIMEOUT_MS. */
int channel_request(struct channel_conn *c, cJSON *req, cJSON **resp, int timeout_ms,
                    struct ft_err *err);
/* The agent's numeric address ("192.0.2.7", "::1"). */
const char *channel_peer_host(const struct channel_conn *c);
/* The agent's host name, from its hello reply. */
const char *channel_peer_name(const struct channel_conn *c);
/* "host:port" as used in messages ("[::1]:7470"). */
const char *channel_peer_desc(const struct channel_conn *c);
/* The agent's whole hello reply: host, fabtop version, caps {max_rate_gbps, ...}. */
const cJSON *channel_peer_info(const struct channel_conn *c);
const struct sockaddr_storage *channel_peer_addr(const struct channel_conn *c);
/* Client: say "bye" (briefly, if the session is healthy) and close. Agent side: close. */
void channel_close(struct channel_conn *c);

/* ---- Agent side (engine/peer/agent.c) ---- */

struct channel_accept_opts {
    int timeout_ms;       /* the whole handshake must finish within it */
    int hello_timeout_ms; /* the client's hello must arrive within it (<= 0: timeout_ms) */
    int cancel_fd;        /* readable = give up now (agent stopping); -1: none */
    /* Called once the client's hello is in and well-formed: key_index is the key its early
     * proof verifies with (-1: none, or its time is off), nonce the client's 32 bytes. 0 to
     * go on (*timeout_ms, counted from the call of channel_accept, may be shortened), or -errno
     * with a message (refused as for admit). May be NULL. */
    int (*hello)(void *arg, int key_index, const unsigned char *nonce, int *timeout_ms,
                 struct ft_err *why);
    /* Called once the client has proved key number key_index, before the agent proves
     * it: 0 to admit, or -errno with a message (sent as an ERROR "busy" refusal, with
     * "retry_ms": busy_retry_ms when the errno is -EAGAIN). May be NULL. */
    int (*admit)(void *arg, int key_index, struct ft_err *why);
    /* Called with the reason just before a refusal is sent to the client, so that what the
     * agent logs is in the order the clients were answered. May be NULL. */
    void (*refused)(void *arg, const char *why);
    void *admit_arg; /* for hello, admit and refused */
    int busy_retry_ms;
};

/* Run the agent's side of the handshake on an accepted socket, against nkeys keys (1 to
 * 64). On success *out owns fd and channel_conn_key() tells which key the client proved. On
 * failure the caller still owns fd, a refusal has been sent when the client can read one,
 * and err holds the reason (for the log). */
int channel_accept(int fd, const struct channel_accept_opts *o, const struct channel_key *keys,
                   int nkeys, struct channel_conn **out, struct ft_err *err);
/* Agent side: the index of the key the client proved. */
int channel_conn_key(const struct channel_conn *c);
/* Receive one authenticated frame: wait_ms for it to start (< 0: forever), then frame_ms
 * (<= 0: 10 s) for the rest. *payload (NUL-terminated, free()) and *len. -ETIMEDOUT: nothing
 * arrived (the session is intact); -ECONNRESET: the peer closed; -ECANCELED: cancel fd readable;
 * -EMSGSIZE / -EBADMSG / -EPROTO: the session is unusable (send channel_refuse). */
int channel_recv(struct channel_conn *c, int *type, char **payload, size_t *len, int wait_ms,
                 int frame_ms, struct ft_err *err);
/* Send one frame (MAC'd); JSON is printed compactly. -EMSGSIZE beyond CHANNEL_MAX_PAYLOAD. */
int channel_send(struct channel_conn *c, int type, const void *payload, size_t len,
                 struct ft_err *err);
int channel_send_json(struct channel_conn *c, int type, const cJSON *j, struct ft_err *err);
/* Send an ERROR frame (MAC'd when authenticated) that ends the session; retry_ms > 0 adds
 * the retry hint (transient "busy" refusals only). */
int channel_refuse(struct channel_conn *c, const char *code, const char *msg, int retry_ms);
/* Send an ERROR frame on a socket before any handshake (allowlist, busy); never blocks. */
int channel_refuse_fd(int fd, const char *code, const char *msg, int retry_ms);
/* Stop sending, read and discard until the peer closes, ms pass or cancel_fd is readable
 * (so the peer reads our last frame instead of a reset). Does not close fd. */
void channel_drain(int fd, int ms, int cancel_fd);
void channel_set_cancel_fd(struct channel_conn *c, int cancel_fd);
int channel_conn_fd(const struct channel_conn *c);

#endif
