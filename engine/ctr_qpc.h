/* ctr_qpc: the test's own queue pairs bound to an RDMA counter of their own (manual mode, the
 * mechanism behind `rdma statistic qp bind`), read with the counters' semantics (widths,
 * wraps, resets, deltas since binding) apart from the port-wide counters, and unbound at the
 * end. Where the kernel or the device cannot (rdma_rxe has no per-QP counters; binding needs
 * CAP_NET_ADMIN), one line says exactly why and the test carries on: nothing here fails it.
 * Used by one thread at a time. */
#ifndef CTR_QPC_H
#define CTR_QPC_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine/counters.h"

struct flow_rt;

struct ctr_qpc_opts {
    const char *dev;      /* RDMA device, "mlx5_0" */
    int port;             /* its port the QPs use */
    const char *driver;   /* the device's kernel driver ("mlx5_core", "rdma_rxe"): semantics
                           * and the words for a refusal */
    const uint32_t *qpns; /* local QP numbers */
    int nqps;
    const char *label; /* names the counters' object ("kv" -> "kv: mlx5_0/1 counter 4") */
    int nl_fd;         /* >= 0: a connected socket standing in for NETLINK_RDMA (tests);
                        * the session closes it */
    int timeout_ms;    /* per request (0: 5000) */
};

struct ctr_qpc;

/* Bind every QP to one new counter, all or none (a QP that fails unbinds those before it),
 * and take the first reading (the deltas count from it). Never NULL: ask ctr_qpc_bound(). */
struct ctr_qpc *ctr_qpc_bind(const struct ctr_qpc_opts *o);
bool ctr_qpc_bound(const struct ctr_qpc *q);
/* Why the QPs are not bound: one line ("" when bound); brief: a few words of it; errname:
 * the kernel's answer ("ENOMEM", "EPERM"...) or NULL when it was not an errno. */
const char *ctr_qpc_why(const struct ctr_qpc *q);
const char *ctr_qpc_brief(const struct ctr_qpc *q);
const char *ctr_qpc_errname(const struct ctr_qpc *q);
uint32_t ctr_qpc_counter_id(const struct ctr_qpc *q);
/* Read the counter now: 0, or -errno (its values then read n/a and a note says why). */
int ctr_qpc_sample(struct ctr_qpc *q);
/* The counters as last sampled (source CTR_SRC_QP); valid until the next sample or free. */
const struct ctr_value *ctr_qpc_values(const struct ctr_qpc *q, int *n);
/* Unbind every QP (the kernel frees the counter with the last one); 0 or the first -errno.
 * Read the counter one last time first. */
int ctr_qpc_unbind(struct ctr_qpc *q);
/* For the results: scope ("this test's queue pairs: ..."), status, reason, device, port,
 * counter id, QP numbers, unbinding, and the counters' deltas since binding. */
cJSON *ctr_qpc_report(const struct ctr_qpc *q);
/* Unbind what is still bound, close, free. */
void ctr_qpc_free(struct ctr_qpc *q);

/* For a transport: bind a flow's QPs (after they are connected) and say in the flow's
 * events what came of it; publish the values into the flow for the snapshots (at most once
 * per period_s; call it as often as convenient); at the end read once more, unbind, store
 * the report in the flow for the results and free. */
struct ctr_qpc *ctr_qpc_flow_bind(struct flow_rt *f, const struct ctr_qpc_opts *o);
void ctr_qpc_flow_tick(struct flow_rt *f, struct ctr_qpc *q, double period_s);
void ctr_qpc_flow_finish(struct flow_rt *f, struct ctr_qpc *q);

#endif
