/* ctr_sem: the counter semantics table behind counters_info_get() and counters_meaning() in
 * counters.h: widths, wrap or saturate, gauge or counter, unit, group and meaning of every
 * counter fabtop knows, with the kernel/driver source of each width. No I/O. */
#ifndef COUNTERS_SEM_H
#define COUNTERS_SEM_H

#include <stdbool.h>

#include "engine/counters/counters.h"

/* Does name match pat, where '#' in pat stands for one or more decimal digits? */
bool counters_sem_match(const char *pat, const char *name);

#endif
