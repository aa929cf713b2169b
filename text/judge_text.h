/* judge_text: the judgement under a run's summary: each bandwidth figure's matching
 * reference-table rows with their sources, the likely causes of a short figure (ranked, with
 * fix and evidence), and a run against a saved baseline (ratios, unfair conditions). From the
 * results model and compare's result only. No curses. */
#ifndef JUDGE_TEXT_H
#define JUDGE_TEXT_H

#include "common/strbuf.h"
#include "engine/results/compare.h"
#include "engine/results/results_model.h"

/* References and causes as the run recorded them (nothing when it recorded neither). */
void judge_text_summary(struct strbuf *sb, const struct results_run *run);

/* The run (B) against the baseline called name (A): each foreground row's figures as ratios
 * to the baseline's, then the conditions that differ, unfair ones named as such. */
void judge_text_baseline(struct strbuf *sb, const char *name, const struct compare_result *cr);

#endif
