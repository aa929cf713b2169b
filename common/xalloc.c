/* xalloc: checked allocation. */
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

void *xalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        abort();
    return p;
}

void *xalloc_zero(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        abort();
    return p;
}

void *xalloc_resize(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        abort();
    return q;
}

char *xalloc_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xalloc(n);
    memcpy(d, s, n);
    return d;
}
