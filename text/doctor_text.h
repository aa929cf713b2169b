/* doctor_text: the doctor's report as text, for `fabtop doctor` and the explorer's doctor
 * pane alike: both ends side by side (a difference where they should agree marked '!'), the
 * queue-pair walk's tries, the findings and their count. */
#ifndef DOCTOR_TEXT_H
#define DOCTOR_TEXT_H

#include "common/strbuf.h"
#include "engine/run/doctor_run.h"

/* Append r's report to sb, one line per row, finding and try, each ending in '\n'. */
void doctor_text(const struct doctor_run *r, struct strbuf *sb);

#endif
