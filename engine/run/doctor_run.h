/* doctor_run: `fabtop doctor` in one call, for the command and the explorer alike: both ends'
 * facts over an authenticated session with the agent, the path MTU probe, the rules, the
 * queue-pair walk (qp_walk.h), and the "fabtop-doctor" document. Blocks for the exchanges'
 * deadlines (the explorer runs it on a thread of its own). */
#ifndef DOCTOR_RUN_H
#define DOCTOR_RUN_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/doctor/doctor.h"
#include "engine/run/qp_walk.h"

#define DOCTOR_RUN_MAX_FINDINGS 33

struct doctor_run_opts {
    const char *peer;     /* HOST[:PORT] of a `fabtop serve` */
    const char *key_file; /* NULL: the default lookup */
    const char *to;       /* the peer's address the traffic will use; NULL: the session's */
    const char *device;   /* the local RDMA device; NULL: no RDMA checks, no walk */
    int port;             /* its port (1..) */
    int gid_index;        /* -1: chosen */
    int path_mtu;         /* bytes, 0: the smaller active MTU */
    int dscp;             /* RoCE v2 packets' DSCP (26) */
    const char *gid_type; /* expected, NULL: RoCE v2 */
    bool no_probe, no_walk;
};

struct doctor_run {
    char peer_desc[160];
    struct doctor_facts local, remote;
    struct doctor_pmtu probe;
    char probe_note[320]; /* why there is no probe ("" when it ran or was not asked) */
    struct doctor_qp qp;
    bool walked;
    struct qp_walk walk;
    char walk_note[320]; /* why there is no walk ("" when it ran or was not asked) */
    int n;               /* findings, the walk's included */
    struct doctor_finding f[DOCTOR_RUN_MAX_FINDINGS];
    int status; /* 0 clean, 1 warnings, 2 errors */
    cJSON *doc; /* the "fabtop-doctor" document (owned) */
};

/* Run the doctor into *r (allocate it: it holds both ends' facts). 0 with everything in *r,
 * or -errno when the key, the session or the peer's facts failed (-ENOSYS or -EOPNOTSUPP: the
 * agent has no doctor), with the message in err. */
int doctor_run(const struct doctor_run_opts *o, struct doctor_run *r, struct ft_err *err);
/* Free what doctor_run allocated in r (its document). */
void doctor_run_free(struct doctor_run *r);

#endif
