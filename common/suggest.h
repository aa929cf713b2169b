/* suggest: the known word nearest to a misspelled one (edit distance), for messages such as
 * "unknown key 'duraton_s' (did you mean 'duration_s'?)". */
#ifndef SUGGEST_H
#define SUGGEST_H

#include <stddef.h>

/* Edits (insert, delete, substitute, swap two neighbours) that turn a into b, ignoring ASCII
 * case. Words longer than 63 characters count as far from everything. */
size_t suggest_distance(const char *a, const char *b);

/* The word of known (NULL-terminated) nearest to word, or NULL when none is near enough to be
 * a likely misspelling (at most 1 edit for words up to 4 characters, 2 up to 8, then 3). */
const char *suggest_nearest(const char *word, const char *const *known);

#endif
