/* strbuf: growable strings and checked allocation. */
#include "common/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        abort();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        abort();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        abort();
    return q;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n);
    memcpy(d, s, n);
    return d;
}

void sb_init(struct strbuf *sb)
{
    sb->cap = 64;
    sb->len = 0;
    sb->s = xmalloc(sb->cap);
    sb->s[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
    free(sb->s);
    sb->s = NULL;
    sb->len = sb->cap = 0;
}

void sb_reset(struct strbuf *sb)
{
    sb->len = 0;
    sb->s[0] = '\0';
}

static void sb_grow(struct strbuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap)
        return;
    while (sb->len + extra + 1 > sb->cap)
        sb->cap *= 2;
    sb->s = xrealloc(sb->s, sb->cap);
}

void sb_addn(struct strbuf *sb, const char *s, size_t n)
{
    sb_grow(sb, n);
    memcpy(sb->s + sb->len, s, n);
    sb->len += n;
    sb->s[sb->len] = '\0';
}

void sb_add(struct strbuf *sb, const char *s)
{
    sb_addn(sb, s, strlen(s));
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    sb_grow(sb, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(sb->s + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

void sb_addpad(struct strbuf *sb, const char *s, int width)
{
    int n = (int)strlen(s);
    if (n > width)
        n = width;
    sb_addn(sb, s, (size_t)n);
    for (; n < width; n++)
        sb_addn(sb, " ", 1);
}

char *sb_steal(struct strbuf *sb)
{
    char *s = sb->s;
    sb_init(sb);
    return s;
}
