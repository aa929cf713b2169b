/* report_html: a results document as one self-contained HTML page (inline CSS, the figures
 * as inline SVG from report_plot, no scripts, no external resources): a run's conditions and
 * topology, its latency histograms and CDF quiet against loaded, timelines, the quiet-vs-loaded
 * table and the text summary (text/run_text), counters, the judgement (text/judge_text); a
 * sweep's heat maps and verdicts; a drill's timeline. And each one's main figure alone. */
#ifndef REPORT_HTML_H
#define REPORT_HTML_H

#include "common/ft_err.h"
#include "common/strbuf.h"
#include "engine/results/results_drill.h"
#include "engine/results/results_model.h"
#include "engine/results/results_sweep.h"

/* what names the source file in the page. 0 or -errno (cairo failed) with err set. */
int report_html_run(struct strbuf *out, const struct results_run *run, const char *what,
                    struct ft_err *err);
int report_html_sweep(struct strbuf *out, const struct results_sweep *s, const char *what,
                      struct ft_err *err);
int report_html_drill(struct strbuf *out, const struct results_drill_doc *d, const char *what,
                      struct ft_err *err);

/* The main figure alone, for a ticket: a run's quiet-vs-loaded latency histogram, a sweep's
 * first bandwidth heat map, a drill's timeline; as SVG text or PNG bytes. */
enum report_format { REPORT_SVG, REPORT_PNG };
int report_figure_run(struct strbuf *out, enum report_format fmt, const struct results_run *run,
                      struct ft_err *err);
int report_figure_sweep(struct strbuf *out, enum report_format fmt, const struct results_sweep *s,
                        struct ft_err *err);
int report_figure_drill(struct strbuf *out, enum report_format fmt,
                        const struct results_drill_doc *d, struct ft_err *err);

#endif
