/* report_trace: a run of the results model as a Chrome trace event document (a JSON object
 * with "traceEvents", which Perfetto and chrome://tracing open): the phases and each flow's
 * setup and size points as complete ("X") events, each flow's goodput and operations per
 * second from its timeline as counter ("C") tracks, the run's events and the flows' failures
 * as instant ("i") events; and, from a live run, its sampled operations as async events.
 * No curses. */
#ifndef REPORT_TRACE_H
#define REPORT_TRACE_H

#include <cjson/cJSON.h>

#include "engine/results/results_model.h"

/* The document (caller owns it); NULL when out of memory. */
cJSON *report_trace_run(const struct results_run *r);

/* An operation sampled while the run ran (runner_trace_ops): its phase (index into the
 * run's phases), flow name, worker, start and end in seconds since the run started. */
struct report_trace_op {
    int phase;
    const char *flow;
    int worker;
    double t0_s, t1_s;
};
/* The same with the sampled operations (n of them) as async ("b"/"e") events on their flow's
 * thread, one id each: operations of one flow overlap (several workers, several in flight),
 * which complete events on one thread may not. */
cJSON *report_trace_run_ops(const struct results_run *r, const struct report_trace_op *ops, int n);

#endif
