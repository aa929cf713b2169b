/* agent_int: what the files of the peer agent share (engine/peer/agent*.c): the agent, its
 * sessions, limits and the functions each file offers the others. Private to engine/peer/;
 * the agent's contract is engine/peer/agent.h. */
#ifndef AGENT_INT_H
#define AGENT_INT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "engine/peer/agent.h"
#include "engine/peer/channel.h"

/* Refused connections wait (held open, so a client that reconnects when its connection ends
 * waits that long) until the client has read why or LINGER_MS pass; at most MAX_LINGER. */
#define MAX_LINGER       256
#define LINGER_MS        1000
#define EARLY_SEEN       256      /* nonces of early proofs remembered (replays gain nothing) */
#define PACE_SLACK_NS    20000000 /* the rate cap's tolerance for late senders (20 ms) */
#define FRAME_TIMEOUT_MS 10000
#define ACCEPT_BATCH     64

/* A pending handshake: before its hello (PRE), after a hello without a valid early proof
 * (UNAUTH), or after one with it (PRIO: the client holds a key; not counted against the
 * slots of connections without one). */
enum { HS_PRE = 1, HS_UNAUTH, HS_PRIO };

struct agent_cidr {
    int family;
    unsigned char addr[16];
    int prefix;
};

/* Where a connection comes from, for the per-address handshake slots: the IPv4 address,
 * or the /64 of an IPv6 one (a host usually has a whole /64). */
struct agent_src_addr {
    unsigned char b[8];
    int len; /* 4 or 8 */
};

struct agent_session {
    struct agent *a;
    struct agent_session *next;
    uint64_t id;
    int fd;
    struct channel_conn *conn;
    struct sockaddr_storage peer, local;
    char peer_host[INET6_ADDRSTRLEN];
    unsigned peer_port;
    struct agent_src_addr src;
    pthread_t thr;
    atomic_bool done;
    /* Under agent.mu: */
    bool pending;       /* in the handshake */
    int hs;             /* HS_*: which handshake slot it holds while pending */
    bool evicted;       /* cut off for a newcomer (its socket's reading side is shut) */
    bool refusal_noted; /* the handshake's refusal is logged (channel_accept_opts.refused) */
    bool admitted;      /* holds one of max_sessions */
    int64_t t_accept;   /* ms, CLOCK_MONOTONIC */
    char evict_why[200];
    /* The session's thread only: */
    int key;
    int nflows;
    int nreq;
    struct timespec t0;
    struct {
        const void *tag;
        void *state;
        void (*destroy)(void *);
    } st[AGENT_STATE_SLOTS];
    int nst;
    int64_t timer_at; /* ms; 0: none */
    void (*timer_fn)(struct agent_session *, void *);
    void *timer_arg;
    /* Fault drills (agent_fault.c): */
    atomic_bool fault_ctl;     /* it sent fault.*: a drill's controller, never faulted */
    _Atomic uint64_t answered; /* requests its data threads answered in full */
    bool fd_live;              /* under agent.mu: fd is this session's open connection */
};

/* A fault a client injected (agent_fault.c), under agent.fmu. */
#define AGENT_MAX_FAULTS 16
#define AGENT_MAX_COUNTS 32
struct agent_fault {
    int kind; /* enum agent_fault_kind; NONE: a free slot */
    int key;
    char host[INET6_ADDRSTRLEN];
    uint64_t session; /* 0: every session of the client */
    int64_t until_ms; /* CLOCK_MONOTONIC */
};

/* Requests answered for sessions that ended, per client (key and address). */
struct agent_count {
    int key;
    char host[INET6_ADDRSTRLEN];
    uint64_t answered;
};

struct agent_lingering {
    int fd;
    int64_t deadline;
    bool blind; /* its reading side is shut (cut off): only the deadline ends it */
};

/* Rate cap of one client key: a virtual clock (the time by which everything reserved so
 * far has gone at the cap); a reservation of n bytes waits until the clock, then moves it
 * on by n / rate. */
struct agent_bucket {
    pthread_mutex_t mu;
    int64_t tat_ns;
};

/* Refusals in the current log window, per address. */
struct agent_refused {
    char host[INET6_ADDRSTRLEN];
    unsigned count, logged;
    char last[200];
};

struct agent {
    struct agent_cfg cfg; /* effective: defaults filled, keys zeroed, allow NULL */
    struct channel_key keys[AGENT_MAX_KEYS];
    bool allow_nccl[AGENT_MAX_KEYS];
    struct agent_bucket buckets[AGENT_MAX_KEYS];
    int nkeys;
    struct agent_cidr allow[AGENT_MAX_ALLOW];
    int nallow;
    const struct agent_handler **handlers;
    int nhandlers;
    int lfd;
    uint16_t port;
    char desc[80];
    int stop_pipe[2]; /* readable once stopping; never drained */
    int wake_pipe[2]; /* a session ended: reap it */
    pthread_t thr;
    pthread_mutex_t mu; /* sessions, their handshake fields, nactive, npending, hand */
    struct agent_session *sessions;
    int nactive, npending;
    uint64_t admitted_total; /* sessions admitted since the start */
    uint64_t next_id;
    atomic_bool stopping;
    pthread_mutex_t logmu;
    char host[256];
    struct agent_lingering lg[MAX_LINGER];
    int nlg;
    int hand[MAX_LINGER];        /* refused connections handed to the accept loop, under mu; */
    bool hand_blind[MAX_LINGER]; /* with their lingering.blind */
    int nhand;
    struct {
        unsigned char n[8];
        int64_t at;
    } seen[EARLY_SEEN]; /* early proofs' nonces, under mu */
    int nseen;
    pthread_attr_t thr_attr; /* session threads: a smaller stack */
    /* refusal log window, under rlmu */
    pthread_mutex_t rlmu;
    int64_t rl_start; /* ms; 0: no refusal yet in this window */
    int rl_detail;    /* lines logged one by one in this window */
    struct agent_refused rl[AGENT_LOG_ADDRS];
    int nrl;
    unsigned rl_other, rl_other_logged; /* addresses beyond AGENT_LOG_ADDRS */
    unsigned accept_errors;             /* accept() failures in this window */
    _Atomic uint64_t refused_total;     /* connections refused since the start */
    char accept_error[80];
    /* Fault drills (agent_fault.c) */
    pthread_mutex_t fmu;
    struct agent_fault faults[AGENT_MAX_FAULTS];
    _Atomic int64_t fault_until_ms; /* the latest end of any fault: none active after it */
    struct agent_count counts[AGENT_MAX_COUNTS];
    int ncounts;
};

/* agent_log.c */
/* The monotonic clock in ms. */
int64_t agent_log_mono_ms(void);
/* One line through the configured log sink (none: dropped). */
void agent_log(struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The refusal log's window: summarise it when it is over (force: now); ms until it is, or -1. */
void agent_log_rl_tick(struct agent *a, bool force);
int agent_log_rl_due_ms(struct agent *a);
/* A refused connection (one line while the window's quota lasts, then summaries), and an
 * accept() failure. */
void agent_log_note_refusal(struct agent *a, const char *host, unsigned port, const char *why);
void agent_log_note_accept_error(struct agent *a, int e);

/* agent_admit.c */
/* An allowlist entry: an address or address/prefix. */
int agent_admit_cidr_parse(const char *s, struct agent_cidr *c, struct ft_err *err);
/* Join sessions that ended (all: every one, at stop); does s hold handshake slot hs? */
void agent_admit_reap(struct agent *a, bool all);
bool agent_admit_holds(const struct agent_session *s, int hs);
/* The accept loop (thread function, arg: the agent). */
void *agent_admit_main(void *arg);

/* agent_fault.c */
/* fault.inject and fault.stats. */
extern const struct agent_handler agent_fault_inject_handler, agent_fault_stats_handler;
/* Is s (not a drill's controller) under a fault of kind now? ms left in *left_ms. */
/* A session ends: add what it answered to its client's total. */
void agent_fault_session_end(struct agent_session *s);

/* agent_session.c */
/* The requests every agent answers (hello, info, echo, bye, fault.inject, fault.stats),
 * before the transports'. */
#define AGENT_SESSION_NBUILTINS 6
extern const struct agent_handler *const agent_session_builtins[AGENT_SESSION_NBUILTINS];
/* The handler of request type (built-in or a transport's), or NULL. */
const struct agent_handler *agent_session_find_handler(const struct agent *a, const char *type);
/* A session after its handshake, until it ends; the connection is closed after it. */
void agent_session_run(struct agent_session *s);

#endif
