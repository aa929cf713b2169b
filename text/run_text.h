/* run_text: the end-of-run summary table (sizes, percentiles in microseconds with the
 * latency kind named, goodput and wire throughput in Gb/s, retransmissions) rendered from a
 * run of the results model (so saved results print alike). No curses. */
#ifndef RUN_TEXT_H
#define RUN_TEXT_H

#include <stddef.h>

#include "common/strbuf.h"
#include "engine/results/results_model.h"

void run_text_summary(struct strbuf *sb, const struct results_run *results);
/* A latency in microseconds as the summary's cells write it ("7.47", "1781.8"), or "n/a":
 * for other renderings of the same table (report/report_html.c). */
void run_text_lat(char *buf, size_t len, const struct results_num *f);

#endif
