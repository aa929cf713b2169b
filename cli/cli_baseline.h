/* cli_baseline: `fabtop baseline save|list|rm` (this fabric's own reference results, kept
 * under $XDG_DATA_HOME/fabtop/baselines), a run against one (`fabtop run --baseline NAME`,
 * or the baseline of the same mix), and the judgement a run's document carries (causes and
 * reference rows, engine/judge/judge.h) that `fabtop run` and `fabtop report` show. */
#ifndef CLI_BASELINE_H
#define CLI_BASELINE_H

#include "common/strbuf.h"
#include "engine/results/results_model.h"
#include "topology/topo_model.h"

int cli_baseline_main(int argc, char **argv);

/* Judge the run (topo may be NULL: then the run's own topology snapshot, if any): its causes
 * and matching reference rows, each written only when a bandwidth flow was there to judge. */
void cli_judge_fill(struct results_run *run, const struct topo_model *topo);

/* Before a run: is baseline name there and a results document? 0, or the exit status
 * after one line on stderr (64 bad name, 66 missing, 65 malformed). */
int cli_baseline_check(const char *name);

/* The run against baseline name (NULL: the baseline whose mix has the run's mix name, if
 * any): the ratio and unfair-condition lines, into sb. Nothing when there is none. */
void cli_baseline_show(struct strbuf *sb, const struct results_run *run, const char *name);

#endif
