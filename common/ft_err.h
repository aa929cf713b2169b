/* ft_err: how libraries report failure. Functions return 0 or -errno and, when the
 * caller passes a struct ft_err, one human sentence naming the thing and the remedy.
 * Libraries never print or exit; the front end decides how to show the message. */
#ifndef FT_ERR_H
#define FT_ERR_H

#include <stddef.h>

struct ft_err {
    int code;      /* negative errno of the first failure, 0 if none */
    char msg[512]; /* "FILE: what is wrong; what to do" */
};

/* Record the failure (if e is not NULL and holds none yet) and return code (< 0). */
int ft_err_set(struct ft_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clear e. */
void ft_err_clear(struct ft_err *e);

/* Map a negative errno to a sysexits.h status: 65 bad data, 66 missing input,
 * 69 unavailable, 77 permission, 70 otherwise. */
int ft_err_exit_status(int code);

#endif
