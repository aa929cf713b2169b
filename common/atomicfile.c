/* atomicfile: temporary file + fsync + rename. */
#include "common/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int atomicfile_write(const char *path, const void *data, size_t len, struct ft_err *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
        return ft_err_set(err, -ENAMETOOLONG, "%s: path too long", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = -errno;
        return ft_err_set(err, e, "%s: cannot create a temporary file beside it: %s", path,
                          strerror(-e));
    }
    fchmod(fd, 0644);
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t n = write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = -errno;
            close(fd);
            unlink(tmp);
            return ft_err_set(err, e, "%s: write failed: %s", path, strerror(-e));
        }
        p += n;
        left -= (size_t)n;
    }
    if (fsync(fd) < 0 && errno != EINVAL) {
        int e = -errno;
        close(fd);
        unlink(tmp);
        return ft_err_set(err, e, "%s: fsync failed: %s", path, strerror(-e));
    }
    close(fd);
    if (rename(tmp, path) < 0) {
        int e = -errno;
        unlink(tmp);
        return ft_err_set(err, e, "%s: rename failed: %s", path, strerror(-e));
    }
    /* Make the rename itself durable. */
    char dirbuf[4096];
    snprintf(dirbuf, sizeof(dirbuf), "%s", path);
    int dfd = open(dirname(dirbuf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}
