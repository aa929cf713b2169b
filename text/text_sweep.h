/* text_sweep: a rack sweep's document (results_sweep.h) as plain text: the pair matrix as a
 * heat map per metric and rail (or one line per rank when it does not fit), the verdicts, the
 * one summary line a bring-up checklist pastes, and the whole report. No curses. */
#ifndef TEXT_SWEEP_H
#define TEXT_SWEEP_H

#include <stddef.h>
#include <stdio.h>

#include "engine/results/results_sweep.h"

enum text_sweep_metric {
    TEXT_SWEEP_BW,      /* bandwidth a to b (Gb/s), lower is worse */
    TEXT_SWEEP_LAT_P50, /* latency p50 (us), higher is worse */
    TEXT_SWEEP_LAT_P99, /* latency p99 (us), higher is worse */
};

/* The ranks x ranks matrix of metric m on rail (< 0: every rail, a cell shows its worst)
 * over transport ("tcp", "verbs", "nccl"; NULL: tcp),
 * row a (the sender) and column b, one character per cell by the ratio of the cell's figure
 * to the rack's median ('#' '+' '-' '.' from near the median to far worse; 'X' failed, '?'
 * not measured, '\' the diagonal), under a legend with the median, its unit and kind. When
 * the matrix does not fit in width columns, one line per rank instead: its pairs, its
 * median ratio, its worst peer and ratio. */
void text_sweep_heatmap(FILE *f, const struct results_sweep *s, enum text_sweep_metric m, int rail,
                        const char *transport, int width);
/* One line per verdict ("NAMED rk-h3 [rank bandwidth]: message"), or "no verdicts: ...". */
void text_sweep_verdicts(FILE *f, const struct results_sweep *s);
/* The one line: ranks, TCP pairs measured and failed, failed ranks, the bandwidth and latency
 * medians, what was named, the status. */
void text_sweep_summary(const struct results_sweep *s, char *buf, size_t len);
/* The header, unlike ranks, the bandwidth and p50 heat maps of every rail and transport, failed
 * ranks and pairs, the verdicts and the summary line last. */
void text_sweep_report(FILE *f, const struct results_sweep *s, int width);

#endif
