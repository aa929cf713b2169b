/* counters_qp: the test's own queue pairs bound to an RDMA counter of their own (manual mode, the
 * mechanism behind `rdma statistic qp bind`), read with the counters' semantics (widths,
 * wraps, resets, deltas since binding) apart from the port-wide counters, and unbound at the
 * end. Where the kernel or the device cannot (rdma_rxe has no per-QP counters; binding needs
 * CAP_NET_ADMIN), one line says exactly why and the test carries on: nothing here fails it.
 * Used by one thread at a time. */
#ifndef COUNTERS_QP_H
#define COUNTERS_QP_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine/counters/counters.h"

struct flow_rt;

struct counters_qp_opts {
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

struct counters_qp;

/* Bind every QP to one new counter, all or none (a QP that fails unbinds those before it),
 * and take the first reading (the deltas count from it). Never NULL: ask counters_qp_bound(). */
struct counters_qp *counters_qp_bind(const struct counters_qp_opts *o);
bool counters_qp_bound(const struct counters_qp *q);
/* Why the QPs are not bound: one line ("" when bound); brief: a few words of it; errname:
 * the kernel's answer ("ENOMEM", "EPERM"...) or NULL when it was not an errno. */
const char *counters_qp_why(const struct counters_qp *q);
const char *counters_qp_brief(const struct counters_qp *q);
const char *counters_qp_errname(const struct counters_qp *q);
uint32_t counters_qp_counter_id(const struct counters_qp *q);
/* Read the counter now: 0, or -errno (its values then read n/a and a note says why). */
int counters_qp_sample(struct counters_qp *q);
/* The counters as last sampled (source COUNTERS_SRC_QP); valid until the next sample or free. */
const struct counters_value *counters_qp_values(const struct counters_qp *q, int *n);
/* Unbind every QP (the kernel frees the counter with the last one); 0 or the first -errno.
 * Read the counter one last time first. */
int counters_qp_unbind(struct counters_qp *q);
/* For the results: scope ("this test's queue pairs: ..."), status, reason, device, port,
 * counter id, QP numbers, unbinding, and the counters' deltas since binding. */
cJSON *counters_qp_report(const struct counters_qp *q);
/* Unbind what is still bound, close, free. */
void counters_qp_free(struct counters_qp *q);

/* For a transport: bind a flow's QPs (after they are connected) and say in the flow's
 * events what came of it; publish the values into the flow for the snapshots (at most once
 * per period_s; call it as often as convenient); at the end read once more, unbind, store
 * the report in the flow for the results and free. */
struct counters_qp *counters_qp_flow_bind(struct flow_rt *f, const struct counters_qp_opts *o);
void counters_qp_flow_tick(struct flow_rt *f, struct counters_qp *q, double period_s);
void counters_qp_flow_finish(struct flow_rt *f, struct counters_qp *q);

#endif
