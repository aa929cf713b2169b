/* xport_verbs_int: what the files of the verbs transport share (engine/xport/verbs/): the
 * flow's settings and the functions each file offers the others. Private to
 * engine/xport/verbs/; the transport itself is xport_verbs (engine/xport/xport.h). */
#ifndef XPORT_VERBS_INT_H
#define XPORT_VERBS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/xport/verbs/verbs_res.h"
#include "engine/xport/xport.h"

struct agent_handler;

enum verbs_params_verb { VERBS_WRITE = 0, VERBS_SEND, VERBS_READ };
enum verbs_params_lat { VERBS_LAT_POLL = 0, VERBS_LAT_COMPLETION, VERBS_LAT_IMM };

/* Settings read from the flow's params (and sent to the agent). */
struct verbs_params {
    enum verbs_params_verb verb;
    enum verbs_params_lat lat;
    int timeout, retry_cnt, depth;
    size_t msg;  /* largest message */
    bool rdmacm; /* connect through librdmacm, not the control channel */
    struct verbs_res_want want;
};

/* verbs_params.c */
/* The names of the verbs and latency modes, as params and the agent's request spell them. */
extern const char *const verbs_params_verb_names[];
extern const char *const verbs_params_lat_names[];
/* The index of s in names[0..n), or -1. */
int verbs_params_name_idx(const char *s, const char *const *names, int n);
/* The flow's settings from its params (defaults filled in); the table's param_keys and validate. */
int verbs_params_parse(const struct mix_flow *f, struct verbs_params *c, struct ft_err *err);
const char *const *verbs_params_keys(enum mix_op op);
int verbs_params_validate(const struct mix_flow *f, struct ft_err *err);

/* verbs_client.c */
/* The transport table's client side: set-up (resources, the peer agent or librdmacm, the
 * return-routability echo), workers, teardown, conditions. */
int verbs_client_setup(struct flow_rt *f, struct ft_err *err);
int verbs_client_start(struct flow_rt *f, struct ft_err *err);
void verbs_client_stop(struct flow_rt *f);
void verbs_client_teardown(struct flow_rt *f);
void verbs_client_conditions(const struct flow_rt *f, cJSON *out);
/* A drill's operation (verbs_drill.h): one ping-pong of size bytes on the flow's first queue
 * pair within timeout_ms: 0 (its time in *ns), -ETIMEDOUT (abandoned at the deadline), -EIO
 * (the flow failed: f->error names the completion's status and its bound). */
int verbs_client_drill_op(struct flow_rt *f, uint64_t size, int timeout_ms, uint64_t *ns);
/* Within this long (s) a queue pair of the flow reports a vanished peer: (retry_cnt + 1) x 4 x
 * T_o (verbs_res_timeout_bound_s) and the liveness probe's wait; INFINITY with retry_cnt 7 on
 * rdma_rxe. */
double verbs_client_detect_bound_s(const struct flow_rt *f);
/* The flow's local resources (device, queue pairs and how far they got); NULL before set-up. */
const struct verbs_res *verbs_client_res(const struct flow_rt *f);

/* verbs_agent.c */
extern const struct agent_handler *const verbs_agent_handlers[];

#endif
