/* qp_walk: the handshake doctor's queue-pair walk (`fabtop doctor --device`): a real RC queue
 * pair against the peer agent, INIT -> RTR -> RTS with the attributes given, then a few RDMA
 * WRITE ping-pongs of the path MTU's size; when a try fails, the walk repeats with the value
 * that should work (the GID the transport picks; the smaller active MTU, then halves), so the
 * fix is proven on the wire instead of guessed from the facts. */
#ifndef QP_WALK_H
#define QP_WALK_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/doctor/doctor.h"
#include "engine/peer/channel.h"

#define QP_WALK_MAX_TRIES 6

struct qp_walk_want {
    char dev[DOCTOR_NAME];  /* the local RDMA device ("rxe0") */
    int port;               /* 1.. */
    int gid_index;          /* -1: chosen by the port's GIDs */
    int path_mtu;           /* bytes (256..4096); 0: the smaller of both ends' active MTUs */
    int smaller_active_mtu; /* bytes, from both ends' facts (0: unknown) */
    int dscp;               /* RoCE v2: the packets' DSCP */
    int messages;           /* ping-pongs per try (default 5) */
    int timeout, retry_cnt; /* the queue pair's local ACK timeout and retries (14, 3) */
};

struct qp_walk_try {
    int path_mtu;      /* asked, bytes (0: the smaller active MTU) */
    int gid_index;     /* asked (-1: chosen) */
    char reached[8];   /* the local queue pair's furthest state: "", INIT, RTR, RTS */
    int path_mtu_used; /* bytes, 0 when RTR was not reached */
    int gid_used;      /* -1 when no device was opened */
    bool setup_ok;     /* both ends at RTS and the return path proven */
    int sent, delivered;
    double rtt_p50_us;     /* round trip of the delivered ping-pongs (median), 0: none */
    double failed_after_s; /* the failing message: from its post to the error */
    double bound_s;        /* the queue pair's retry bound, (retry_cnt + 1) x 4 x T_o and probe */
    char error[400];       /* why the try failed, "" when it worked */
    char cause[200];       /* the same in short, for the finding: a status or set-up error */
};

struct qp_walk {
    int ntries;
    struct qp_walk_try tries[QP_WALK_MAX_TRIES];
    int works; /* the first try that worked, -1 none */
};

/* Walk on ctl (an authenticated session with the agent, still the caller's; peer_desc names it
 * in messages): the try as wanted, then the fixes while tries fail. 0 (the walk is in *out,
 * whatever it found), or -errno when no try could be made at all. */
int qp_walk_run(struct channel_conn *ctl, const char *peer_desc, const struct qp_walk_want *w,
                struct qp_walk *out, struct ft_err *err);
/* The next try after try t failed, from what it got to (pure, for tests): 1 with *next filled,
 * 0 when nothing is left to try. tried: the walk so far (no value is tried twice). */
int qp_walk_next(const struct qp_walk_want *w, const struct qp_walk *tried,
                 const struct qp_walk_try *t, struct qp_walk_try *next);
/* The walk's verdict as a doctor finding (rule "qp-walk"): 1 with *f filled when the wanted
 * try failed (an error, naming what worked if anything did), 0 when it worked. */
int qp_walk_finding(const struct qp_walk_want *w, const struct qp_walk *walk,
                    struct doctor_finding *f);
/* One line per try for the text report, into buf. */
void qp_walk_text(const struct qp_walk *walk, char *buf, size_t len);
cJSON *qp_walk_json(const struct qp_walk *walk);

#endif
