/* ctr_sem: the counter semantics table behind ctr_info_get() and ctr_meaning() in
 * counters.h: widths, wrap or saturate, gauge or counter, unit, group and meaning of every
 * counter fabtop knows, with the kernel/driver source of each width. No I/O. */
#ifndef CTR_SEM_H
#define CTR_SEM_H

#include <stdbool.h>

#include "engine/counters.h"

/* Does name match pat, where '#' in pat stands for one or more decimal digits? */
bool ctr_sem_match(const char *pat, const char *name);

#endif
