/* strbuf: a growable, always NUL-terminated string for building text output.
 * Allocation failure aborts (there is nothing sensible to do without memory). */
#ifndef STRBUF_H
#define STRBUF_H

#include <stddef.h>

struct strbuf {
    char *s;    /* text, NUL-terminated; never NULL after strbuf_init */
    size_t len; /* bytes used, excluding the NUL */
    size_t cap; /* bytes allocated */
};

void strbuf_init(struct strbuf *sb);
void strbuf_free(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_add(struct strbuf *sb, const char *s);
void strbuf_addn(struct strbuf *sb, const char *s, size_t n);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s padded with spaces (or cut) to exactly width display columns (ASCII). */
void strbuf_addpad(struct strbuf *sb, const char *s, int width);
/* Append w as one word of a POSIX shell command line: as it is when every character is safe
 * unquoted, else in single quotes (a ' inside as '\''); a leading "~/" stays outside them so
 * that the shell still expands it. */
void strbuf_add_shell_word(struct strbuf *sb, const char *w);
/* Give up ownership of the text (caller frees); sb is left empty. */
char *strbuf_steal(struct strbuf *sb);

#endif
