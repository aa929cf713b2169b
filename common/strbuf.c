/* strbuf: growable strings. */
#include "common/strbuf.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

void strbuf_init(struct strbuf *sb)
{
    sb->cap = 64;
    sb->len = 0;
    sb->s = xalloc(sb->cap);
    sb->s[0] = '\0';
}

void strbuf_free(struct strbuf *sb)
{
    free(sb->s);
    sb->s = NULL;
    sb->len = sb->cap = 0;
}

void strbuf_reset(struct strbuf *sb)
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
    sb->s = xalloc_resize(sb->s, sb->cap);
}

void strbuf_addn(struct strbuf *sb, const char *s, size_t n)
{
    sb_grow(sb, n);
    memcpy(sb->s + sb->len, s, n);
    sb->len += n;
    sb->s[sb->len] = '\0';
}

void strbuf_add(struct strbuf *sb, const char *s)
{
    strbuf_addn(sb, s, strlen(s));
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
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

void strbuf_addpad(struct strbuf *sb, const char *s, int width)
{
    int n = (int)strlen(s);
    if (n > width)
        n = width;
    strbuf_addn(sb, s, (size_t)n);
    for (; n < width; n++)
        strbuf_addn(sb, " ", 1);
}

char *strbuf_steal(struct strbuf *sb)
{
    char *s = sb->s;
    strbuf_init(sb);
    return s;
}

void strbuf_add_shell_word(struct strbuf *sb, const char *w)
{
    if (!strncmp(w, "~/", 2) && w[2]) {
        strbuf_add(sb, "~/");
        w += 2;
    }
    bool safe = *w != '\0';
    for (const char *p = w; *p; p++)
        safe &= strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                       "_-.,:/@[]%+=",
                       *p) != NULL;
    if (safe) {
        strbuf_add(sb, w);
        return;
    }
    strbuf_add(sb, "'");
    for (const char *p = w; *p; p++)
        strbuf_add(sb, *p == '\'' ? "'\\''" : (char[2]){*p, '\0'});
    strbuf_add(sb, "'");
}
