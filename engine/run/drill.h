/* drill: fault drills (`fabtop drill`): a mix's request/response flows (TCP pingpong and rr;
 * verbs ping-pongs under peer-kill, verbs_drill.h) run against an agent while it takes a fault that
 * fabtop controls (fault.inject: a peer-stall or a peer-kill of this client's own sessions; or, in
 * a network namespace the drill owns, a blackhole or a link-down of the data path, drill_netns.h);
 * each flow detects the fault (the first error or request deadline), reconnects under its recovery
 * policy and goes on; every request is accounted for, and the times are set against bounds computed
 * from the mix (fail_bound_s); each flow's report says what could see the fault on its
 * transport and verb and what did ("seen_by": the request's deadline, the connection's or
 * queue pair's error, receiver-not-ready; a verbs flow's RDMA error counters that moved over
 * the fault window, read with engine/counters). rank-loss drills a mix's NCCL collectives with the
 * ranks of a victim agent, a process the drill starts and kills (SIGKILL): the survivors shrink
 * their communicators (ncclCommShrink), or reconnect to the agent restarted after --for. The
 * "fabtop-drill" document (engine/results/results_drill.h) is written after every repetition. */
#ifndef DRILL_H
#define DRILL_H

#include <stdatomic.h>
#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/flow/mix.h"

enum drill_fault {
    DRILL_PEER_STALL = 1,
    DRILL_PEER_KILL,
    DRILL_BLACKHOLE,
    DRILL_LINK_DOWN,
    DRILL_RANK_LOSS /* NCCL: the victim agent's process killed; its ranks are lost */
};

struct drill_opts {
    const struct mix *mix;
    enum drill_fault fault;
    double at_s;  /* into each repetition (quiet before it) */
    double for_s; /* how long the fault lasts */
    int repeat;
    const char *peer;      /* HOST[:PORT] of a `fabtop serve`; NULL: an in-process agent */
    const char *key_file;  /* for peer (NULL: the default lookup) */
    const char *netns;     /* blackhole, link-down: the namespace the drill owns (drill_netns.h) */
    const char *device;    /* link-down: its netdev (NULL: the one routing to the data peer) */
    bool owned;            /* link-down: device is the caller's in this process's namespace */
    const char *data_peer; /* the agent's address on a data path of its own (NULL: peer's) */
    const char *agent_exe; /* rank-loss: the fabtop executable that starts the victim agent */
    /* When it points at true, the drill stops: the repetition running is dropped (its lanes
     * end at once, the fault is undone), the ones done stay, drill_run returns -ECANCELED.
     * NULL: it runs to its end. */
    const atomic_bool *cancel;
    /* After every repetition: the document so far (complete: false while more follow). */
    void (*progress)(void *arg, const cJSON *doc);
    void *arg;
};

/* What the document says, for the exit status. */
struct drill_summary {
    int drills;          /* flow x repetition */
    int never_recovered; /* flows that did not recover within their policy (or had none) */
    int broke_bound;     /* drills whose detection or recovery broke its bound */
    int disagree;        /* repetitions where the agent's count of answers differs */
    double detect_max_s, recover_max_s;
    long failed_max, abandoned_max; /* requests per drill, the most */
};

const char *drill_fault_str(enum drill_fault f);
/* "peer-stall" / "peer-kill" / "blackhole" / "link-down" / "rank-loss": 0, or -EINVAL. */
int drill_fault_parse(const char *s, enum drill_fault *out);
/* Can the mix be drilled with the agent's faults (TCP pingpong and rr flows, TCP streams as
 * load)? 0 or -EINVAL. */
int drill_check_mix(const struct mix *m, struct ft_err *err);
/* The same for a fault: rank-loss takes NCCL collectives only, the others no NCCL. */
int drill_check_mix_fault(const struct mix *m, enum drill_fault fault, struct ft_err *err);
/* Without a network namespace a blackhole is the agent's (its verbs lanes' queue pairs to the
 * error state), which verbs lanes alone see: the first foreground flow it cannot reach, or
 * NULL when every one is verbs. */
const struct mix_flow *drill_blackhole_needs_netns(const struct mix *m);
/* Run the drill: the document in *doc (the caller frees it) and its summary. 0, or -errno
 * with the message: the agent refused the fault (-EPERM), could not be reached, a flow
 * could not start, it was cancelled (-ECANCELED). *doc may hold what was measured before a
 * failure. */
int drill_run(const struct drill_opts *o, cJSON **doc, struct drill_summary *sum,
              struct ft_err *err);

#endif
