/* xalloc: checked allocation: a failure aborts (there is nothing sensible to do
 * without memory); a request of 0 bytes gets a valid pointer. */
#ifndef XALLOC_H
#define XALLOC_H

#include <stddef.h>

void *xalloc(size_t n);
void *xalloc_zero(size_t n, size_t size);
void *xalloc_resize(void *p, size_t n);
char *xalloc_strdup(const char *s);

#endif
