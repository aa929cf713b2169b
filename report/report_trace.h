/* report_trace: a run of the results model as a Chrome trace event document (a JSON object
 * with "traceEvents", which Perfetto and chrome://tracing open): the phases and each flow's
 * setup and size points as complete ("X") events, each flow's goodput and operations per
 * second from its timeline as counter ("C") tracks, the run's events and the flows' failures
 * as instant ("i") events. fabtop's workers record histograms, not single operations, so no
 * operation appears on its own. No curses. */
#ifndef REPORT_TRACE_H
#define REPORT_TRACE_H

#include <cjson/cJSON.h>

#include "engine/results/results_model.h"

/* The document (caller owns it); NULL when out of memory. */
cJSON *report_trace_run(const struct results_run *r);

#endif
