/* strbuf: a growable, always NUL-terminated string for building text output.
 * Allocation failure aborts (there is nothing sensible to do without memory). */
#ifndef STRBUF_H
#define STRBUF_H

#include <stddef.h>

struct strbuf {
    char *s;    /* text, NUL-terminated; never NULL after sb_init */
    size_t len; /* bytes used, excluding the NUL */
    size_t cap; /* bytes allocated */
};

void sb_init(struct strbuf *sb);
void sb_free(struct strbuf *sb);
void sb_reset(struct strbuf *sb);
void sb_add(struct strbuf *sb, const char *s);
void sb_addn(struct strbuf *sb, const char *s, size_t n);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s padded with spaces (or cut) to exactly width display columns (ASCII). */
void sb_addpad(struct strbuf *sb, const char *s, int width);
/* Give up ownership of the text (caller frees); sb is left empty. */
char *sb_steal(struct strbuf *sb);

/* Checked allocation helpers used across the project. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

#endif
