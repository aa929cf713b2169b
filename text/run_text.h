/* run_text: the end-of-run summary table (sizes, percentiles in microseconds with the
 * latency kind named, goodput and wire throughput in Gb/s, retransmissions) rendered from a
 * results document. No curses. */
#ifndef RUN_TEXT_H
#define RUN_TEXT_H

#include <cjson/cJSON.h>

#include "common/strbuf.h"

void run_text_summary(struct strbuf *sb, const cJSON *results);

#endif
