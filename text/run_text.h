/* run_text: the end-of-run summary table (sizes, percentiles in microseconds with the
 * latency kind named, goodput and wire throughput in Gb/s, retransmissions) rendered from a
 * run of the results model (so saved results print alike). No curses. */
#ifndef RUN_TEXT_H
#define RUN_TEXT_H

#include "common/strbuf.h"
#include "engine/results/results_model.h"

void run_text_summary(struct strbuf *sb, const struct results_run *results);

#endif
