/* ft_err: error values with one human message. */
#include "common/ft_err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ft_err_set(struct ft_err *e, int code, const char *fmt, ...)
{
    if (code >= 0)
        code = -EINVAL;
    if (e && e->code == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
        va_end(ap);
        e->code = code;
    }
    return code;
}

void ft_err_clear(struct ft_err *e)
{
    if (e) {
        e->code = 0;
        e->msg[0] = '\0';
    }
}

int ft_err_exit_status(int code)
{
    switch (-code) {
    case ENOENT:
    case ENOTDIR:
        return 66; /* EX_NOINPUT */
    case EINVAL:
    case EBADMSG:
    case EPROTO:
    case ERANGE:
    case E2BIG:
        return 65; /* EX_DATAERR */
    case EACCES:
    case EPERM:
        return 77; /* EX_NOPERM */
    case ENOSYS:
    case ELIBACC:
    case ENODEV:
    case ENETDOWN:
    case EAFNOSUPPORT:
    case ENXIO:
    case ECONNREFUSED:
    case EHOSTUNREACH:
    case ETIMEDOUT:
        return 69; /* EX_UNAVAILABLE */
    default:
        return 70; /* EX_SOFTWARE */
    }
}
