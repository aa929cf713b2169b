/* agent: the peer agent core that `fabtop serve` runs: accepts authenticated control
 * sessions (engine/peer/channel.h), one thread each, and dispatches their requests to handlers that
 * transports register, within caps that no client can raise. Safe on a production fabric:
 * an optional allowlist, limits on unauthenticated connections per address, caps per
 * session and per client key, test traffic only to where the client proves it listens. */
#ifndef AGENT_H
#define AGENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/peer/channel.h"

/* Defaults (agent_cfg_defaults). `fabtop serve` always runs with caps; 0 ("no cap") in
 * max_rate_gbps, max_duration_s or max_streams is for an in-process loopback agent. */
/* Handshakes at once of clients not (yet) known to hold a key: in all (at least
 * max_sessions), and from one client address (IPv6: one /64); see below. */
#define AGENT_DEF_MAX_HANDSHAKES    128
#define AGENT_DEF_MAX_SESSIONS      8 /* authenticated sessions at once */
#define AGENT_DEF_HANDSHAKES_ADDR   8
#define AGENT_DEF_MAX_RATE_GBPS     10.0 /* Gb/s (10^9 bit/s) per client key: all its sessions */
#define AGENT_DEF_MAX_DURATION_S    60.0 /* seconds per test */
#define AGENT_DEF_MAX_STREAMS       8    /* connections per flow */
#define AGENT_DEF_MAX_FLOWS         4    /* flows per session (a run opens one session per flow) */
#define AGENT_DEF_HANDSHAKE_TIMEOUT 5000 /* ms for the whole handshake */
#define AGENT_DEF_IDLE_TIMEOUT      300  /* s without a request, raised to max_duration + 30 */
#define AGENT_DEF_MAX_FAULT_S       30.0 /* longest fault.inject (0 in agent_cfg: none at all) */
#define AGENT_MAX_ALLOW             64   /* allowlist entries */
#define AGENT_MAX_KEYS              8    /* client keys */
/* Handshakes under a flood of connections without the key (ctl.h's early proof):
 * - a client proves its key in its first frame (the hello) and from then on holds none of
 *   the slots below (up to max_sessions such handshakes at once);
 * - until its hello is in (within AGENT_HELLO_MS), a connection holds one of its address's
 *   max_handshakes_addr slots and one of the max_handshakes in all; a newcomer that finds
 *   them taken cuts off the oldest connection of its address (or of the address holding the
 *   most) that has no complete frame in yet, and is refused only when there is none;
 * - a hello without a valid early proof (another program, an old fabtop, a wrong key) holds
 *   one of half as many slots; when they are taken, the oldest such handshake older than
 *   AGENT_EVICT_AGE_MS makes room, else the newcomer is refused "busy" with a hint to retry
 *   after AGENT_BUSY_RETRY_MS (channel_connect does, within its timeout); once half of them
 *   are taken, such a handshake must finish within AGENT_PRESSURE_MS;
 * - refused and cut-off connections are held open (their reason sent) for a second, so a
 *   client that reconnects when its connection ends does so at most once a second.
 * So a client with the key is displaced only by more than max_handshakes_addr newer
 * connections from its own address before its hello arrives, or, with every slot taken,
 * when no address holds more than one. */
#define AGENT_HELLO_MS      1000
#define AGENT_PRESSURE_MS   1000
#define AGENT_EVICT_AGE_MS  250
#define AGENT_BUSY_RETRY_MS 100
/* Refusals are logged one by one up to AGENT_LOG_DETAIL per AGENT_LOG_WINDOW_S (3 per
 * address), then summarised per address at the end of the window ("refused 1834 connections from
 * 10.0.0.5 in the last 10 s: ..."), for at most AGENT_LOG_ADDRS addresses and one line for
 * all others: at most AGENT_LOG_DETAIL + AGENT_LOG_ADDRS + 1 lines per window. */
#define AGENT_LOG_WINDOW_S 10
#define AGENT_LOG_DETAIL   10
#define AGENT_LOG_ADDRS    16

/* A client key and what its sessions may do. */
struct agent_key {
    struct channel_key key;
    bool allow_nccl; /* nccl.* requests (NCCL connects to addresses the client's ranks give) */
};

struct agent_cfg {
    char listen[256];       /* numeric address or host name; "": all addresses (IPv6 and
                               IPv4) */
    uint16_t port;          /* 0: ephemeral (agent_port() tells which) */
    struct channel_key key; /* the key when nkeys is 0 (all zero is refused); zeroed in
                           agent_session_cfg() */
    bool allow_nccl;        /* for key, when nkeys is 0 */
    struct agent_key keys[AGENT_MAX_KEYS]; /* several client keys, each with its own rate cap
                                              and permissions; zeroed in agent_session_cfg() */
    int nkeys;
    const char *const *allow; /* client CIDRs: "10.0.0.0/8", "fd00::/8", "192.0.2.7"; none:
                                 any client with the key. Parsed at start (NULL afterwards) */
    int nallow;
    int max_sessions;         /* 0: default */
    int max_handshakes;       /* 0: the larger of AGENT_DEF_MAX_HANDSHAKES and max_sessions */
    int max_handshakes_addr;  /* 0: AGENT_DEF_HANDSHAKES_ADDR (at most max_handshakes) */
    double max_rate_gbps;     /* per client key: every flow of every session with that key
                                 shares it (and so each session holds it); handlers clamp and
                                 pace to it. 0: no cap */
    double max_duration_s;    /* per test. 0: no cap */
    int max_streams;          /* connections per flow. 0: no cap */
    int max_flows;            /* flows per session; 0: AGENT_DEF_MAX_FLOWS */
    int handshake_timeout_ms; /* 0: default */
    int idle_timeout_s;       /* 0: default; with no duration cap, 0 means never */
    /* Fault drills (`fabtop drill`): the longest fault a client may inject into its own test
     * sessions with fault.inject (engine/peer/agent_fault.c); 0 refuses every fault. */
    double max_fault_s;
    /* One line per session start / end, refusals (summarised under a flood, see above) and
     * handler logs; never key material. Calls are serialised. NULL: no log. */
    void (*log)(void *arg, const char *line);
    void *log_arg;
    /* For the handlers (agent_session_cfg(s)->handler_arg): what the agent's owner serves
     * them with (fabtop sweep's rank state). */
    void *handler_arg;
    /* This agent's site label (`fabtop serve --site NAME`), reported to clients for the
     * path's class (docs/diagnosis.md); NULL or "": none. */
    const char *site;
};

struct agent;
struct agent_session;

/* A request handler: fill resp (an empty object) and return 0, or return -errno with a
 * message in err (the client gets {"ok":false,"errno":..,"error":..}; the session goes on).
 * Runs on the session's thread; must return promptly (long work belongs to the transport's
 * own threads, stopped by a state destructor). */
struct agent_handler {
    const char *type; /* "tcp.open"; unique; the built-ins are hello, info, echo, bye */
    int (*handle)(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err);
};

/* Fill cfg with the safe defaults above (key, listen address and allowlist empty). */
void agent_cfg_defaults(struct agent_cfg *cfg);

/* Bind, listen and start accepting in a background thread. handlers may be NULL-terminated
 * or counted (nhandlers < 0: count up to NULL). -EINVAL bad configuration, -EEXIST a
 * duplicate request type, or the bind/listen -errno ("cannot listen on ADDR:PORT: ..."). */
int agent_start(const struct agent_cfg *cfg, const struct agent_handler *const *handlers,
                int nhandlers, struct agent **out, struct ft_err *err);
uint16_t agent_port(const struct agent *a);
/* "[::]:7470", "127.0.0.1:7470". */
const char *agent_listen_desc(const struct agent *a);
/* Authenticated sessions now. */
int agent_sessions(struct agent *a);
/* What the agent's metrics report (fabtop serve --metrics): sessions now and the limit,
 * sessions admitted and connections refused (a bad key, an address not allowed, busy, a
 * handshake cut off) since the start. */
struct agent_stats {
    int active, max;
    uint64_t admitted_total, refused_total;
};
void agent_get_stats(struct agent *a, struct agent_stats *out);
/* Stop accepting, end every session (clients get "the agent is shutting down"), run the
 * state destructors, join every thread and free. Callable while sessions are active. */
void agent_stop(struct agent *a);

/* For handlers. */
/* The authenticated client's address (IPv4-mapped IPv6 shown as IPv4): the only address a
 * transport may send test traffic to. */
const struct sockaddr_storage *agent_session_peer(const struct agent_session *s);
/* The agent's own address on this session (where a transport should listen); *len is set
 * to the size of that address family's sockaddr. */
void agent_session_local(const struct agent_session *s, struct sockaddr_storage *out,
                         socklen_t *len);
/* Numeric text of agent_session_peer ("192.0.2.7", "::1"). */
const char *agent_session_peer_host(const struct agent_session *s);
/* The effective caps, defaults filled in. */
const struct agent_cfg *agent_session_cfg(const struct agent_session *s);
uint64_t agent_session_id(const struct agent_session *s);
/* Attach per-session state under tag (the owner's own: a transport passes its handler
 * table, so one transport never sees another's state; up to AGENT_STATE_SLOTS tags per
 * session, -ENOSPC beyond). destroy(state) runs when the session ends (after the control
 * connection is gone, before agent_stop returns, in the reverse order of attaching), so a
 * transport stops its data threads when the client vanishes. Replacing a tag's state
 * destroys the old one first. */
#define AGENT_STATE_SLOTS 8
int agent_session_set_state(struct agent_session *s, const void *tag, void *state,
                            void (*destroy)(void *state));
void *agent_session_state(const struct agent_session *s, const void *tag);
/* True once agent_stop began (for handlers that wait). */
bool agent_session_stopping(const struct agent_session *s);
/* Log "session N: ..." through the agent's log callback. */
void agent_session_log(struct agent_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Which of the agent's client keys this session proved (0 with one key), and whether that
 * key may use NCCL (agent_key.allow_nccl). */
int agent_session_key(const struct agent_session *s);
bool agent_session_allow_nccl(const struct agent_session *s);
/* Count one more flow against the session's cap (agent_cfg.max_flows): 0, or -EMFILE with
 * "WHAT: this session already has N flows, the agent's limit" in err. A flow is counted
 * until the session ends. */
int agent_session_flow_add(struct agent_session *s, const char *what, struct ft_err *err);
/* Before sending (or reading) n bytes of test data: wait until the rate cap shared by every
 * session of this session's client key allows them (no wait without a cap). Returns false
 * when *stop became true first. Fair between flows: reservations are served in order. */
bool agent_session_pace(struct agent_session *s, size_t n, const _Atomic bool *stop);
/* Run fn(s, arg) on the session's own thread (between requests, never beside a handler)
 * once ms have passed, unless replaced first; one timer per session, fn NULL cancels. */
void agent_session_set_timer(struct agent_session *s, int ms,
                             void (*fn)(struct agent_session *s, void *arg), void *arg);

/* Fault drills (fault.inject, agent_fault.c): the faults a client may inject into its own
 * test sessions (same key, same address), never another client's. */
enum agent_fault_kind {
    AGENT_FAULT_NONE = 0,
    AGENT_FAULT_STALL,
    AGENT_FAULT_KILL,
    /* "qp-error": the client's RDMA queue pairs on this agent moved to the error state, and new
     * ones as soon as they exist, while it lasts: what arrives for them is dropped without an
     * answer, a verbs black hole (IBTA: a QP in the Error state neither responds nor
     * acknowledges). Transports without queue pairs are not touched. */
    AGENT_FAULT_QP_ERROR,
};
/* While a peer-stall holds this session, wait (checking *stop, the agent's stop and the
 * stall's end every 10 ms); returns at once when none does. For a transport's data threads
 * before they answer. True when it waited. */
bool agent_session_stall_wait(struct agent_session *s, const _Atomic bool *stop);
/* Is a fault of kind on this session now (its client's, not its controller's)? *left_ms (may
 * be NULL): how much longer, the longest of them. */
bool agent_fault_active(struct agent_session *s, int kind, int64_t *left_ms);
/* Count one request answered in full for this session's client (fault.stats reports the
 * client's total, so a drill can check both sides agree). */
void agent_session_count_answer(struct agent_session *s);

/* Clamp what a client asked for to the agent's cap: returns min(asked, cap), or cap when
 * asked <= 0 (unspecified). When it clamps, resp gets "clamped": {what: {"asked": ..,
 * "allowed": ..}} so the client can report it. */
double agent_clamp(cJSON *resp, const char *what, double asked, double cap);

#endif
