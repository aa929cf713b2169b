/* atomicfile: resolve the target, temporary file beside it, fsync, rename, fsync the
 * directory. */
#include "common/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

/* The symlinks followed before giving up (Linux's own limit, MAXSYMLINKS, is 40). */
#define MAX_LINKS 40

/* Where a write lands: the directory (its real path) and the name in it. */
struct target {
    char dir[PATH_MAX];
    char name[NAME_MAX + 1];
    char real[PATH_MAX + NAME_MAX + 2]; /* dir/name */
    bool exists;
    struct stat st; /* of the existing file */
    bool linked;    /* path is a symlink (real is where it ends) */
};

static const char *kind_of(mode_t m)
{
    return S_ISCHR(m)    ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
           : S_ISDIR(m)  ? "a directory"
                         : "not a plain file";
}

/* "PATH" or "PATH (a symlink to REAL)", for messages. */
static const char *shown(const char *path, const struct target *t, char *buf, size_t len)
{
    if (!t->linked)
        return path;
    snprintf(buf, len, "%s (a symlink to %s)", path, t->real);
    return buf;
}

/* Split p into its directory ("." when none) and last name. */
static int split(const char *path, const char *p, char *dir, size_t dlen, char *name,
                 struct ft_err *err)
{
    const char *slash = strrchr(p, '/');
    const char *base = slash ? slash + 1 : p;
    if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
        return ft_err_set(err, -EISDIR, "%s: names a directory; give a file name", path);
    if (strlen(base) > NAME_MAX)
        return ft_err_set(err, -ENAMETOOLONG, "%s: file name too long", path);
    snprintf(name, NAME_MAX + 1, "%s", base);
    if (!slash)
        snprintf(dir, dlen, ".");
    else if (slash == p)
        snprintf(dir, dlen, "/");
    else
        snprintf(dir, dlen, "%.*s", (int)(slash - p), p);
    return 0;
}

static int resolve(const char *path, struct target *t, struct ft_err *err)
{
    memset(t, 0, sizeof(*t));
    if (!*path)
        return ft_err_set(err, -ENOENT, "the output path is empty");
    char cur[PATH_MAX];
    if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur))
        return ft_err_set(err, -ENAMETOOLONG, "%s: path too long", path);
    struct stat st;
    for (int hops = 0;; hops++) {
        if (lstat(cur, &st) < 0) {
            int e = -errno;
            if (e != -ENOENT)
                return ft_err_set(err, e, "%s: %s", path, strerror(-e));
            break; /* nothing there yet: a new file (if its directory exists) */
        }
        if (!S_ISLNK(st.st_mode)) {
            t->exists = true;
            break;
        }
        if (hops == MAX_LINKS)
            return ft_err_set(err, -ELOOP, "%s: too many levels of symbolic links", path);
        char link[PATH_MAX];
        ssize_t n = readlink(cur, link, sizeof(link) - 1);
        if (n < 0) {
            int e = -errno;
            return ft_err_set(err, e, "%s: cannot read the symlink %s: %s", path, cur,
                              strerror(-e));
        }
        link[n] = '\0';
        t->linked = true;
        char next[PATH_MAX];
        const char *slash = strrchr(cur, '/');
        int w = link[0] == '/' || !slash
                    ? snprintf(next, sizeof(next), "%s", link)
                    : snprintf(next, sizeof(next), "%.*s/%s", (int)(slash - cur), cur, link);
        if (w >= (int)sizeof(next))
            return ft_err_set(err, -ENAMETOOLONG, "%s: the symlink's target is too long", path);
        memcpy(cur, next, (size_t)w + 1);
    }
    char dir[PATH_MAX];
    int rc = split(path, cur, dir, sizeof(dir), t->name, err);
    if (rc < 0)
        return rc;
    if (!realpath(dir, t->dir)) {
        int e = -errno;
        if (e == -ENOENT)
            return ft_err_set(err, e, "%s: %s: no such directory", path, dir);
        if (e == -ENOTDIR)
            return ft_err_set(err, e, "%s: %s is not a directory", path, dir);
        return ft_err_set(err, e, "%s: %s: %s", path, dir, strerror(-e));
    }
    snprintf(t->real, sizeof(t->real), "%s%s%s", t->dir, strcmp(t->dir, "/") ? "/" : "", t->name);
    char b[PATH_MAX * 2];
    if (t->exists) {
        t->st = st;
        if (S_ISDIR(st.st_mode))
            return ft_err_set(err, -EISDIR, "%s: is a directory; give a file name",
                              shown(path, t, b, sizeof(b)));
        if (!S_ISREG(st.st_mode))
            return ft_err_set(err, -EINVAL,
                              "%s: is %s, not a regular file; fabtop writes only regular files",
                              shown(path, t, b, sizeof(b)), kind_of(st.st_mode));
        if (faccessat(AT_FDCWD, t->real, W_OK, AT_EACCESS) < 0) {
            int e = -errno;
            return ft_err_set(err, e, "%s: not writable (mode %04o): %s",
                              shown(path, t, b, sizeof(b)), (unsigned)(st.st_mode & 07777),
                              strerror(-e));
        }
    }
    return 0;
}

/* Create a new temporary file in t->dir ("DIR/.NAME.tmp.PID.N"): 0666 less the umask, or the
 * existing file's owner and mode. Returns the descriptor, or -errno. */
static int make_temp(const char *path, const struct target *t, char *tmp, size_t len,
                     struct ft_err *err)
{
    static atomic_uint counter;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        unsigned n = atomic_fetch_add(&counter, 1) ^ (unsigned)ts.tv_nsec;
        /* NAME cut so that the temporary name fits in NAME_MAX. */
        snprintf(tmp, len, "%s%s.%.200s.tmp.%ld.%x", t->dir, strcmp(t->dir, "/") ? "/" : "",
                 t->name, (long)getpid(), n);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int e = -errno;
        if (e == -EACCES || e == -EPERM || e == -EROFS)
            return ft_err_set(err, e, "%s: %s: cannot create a file in this directory: %s", path,
                              t->dir, strerror(-e));
        return ft_err_set(err, e, "%s: cannot create a temporary file in %s: %s", path, t->dir,
                          strerror(-e));
    }
    if (t->exists) {
        /* Owner first: chown clears the set-ID bits that chmod then restores. Only root can
         * give a file away; anyone else's replacement is theirs. */
        if ((t->st.st_uid != geteuid() || t->st.st_gid != getegid()) &&
            fchown(fd, t->st.st_uid, t->st.st_gid) < 0) {
            /* not root: the new file is ours, with the old mode */
        }
        fchmod(fd, t->st.st_mode & 07777);
    }
    return fd;
}

static int room_for(const char *path, const struct target *t, struct ft_err *err)
{
    struct statvfs vfs;
    if (statvfs(t->dir, &vfs) < 0)
        return 0; /* cannot tell: the write will say */
    if (vfs.f_flag & ST_RDONLY)
        return ft_err_set(err, -EROFS, "%s: %s is on a read-only file system", path, t->dir);
    fsblkcnt_t avail = geteuid() == 0 ? vfs.f_bfree : vfs.f_bavail;
    if (avail == 0)
        return ft_err_set(err, -ENOSPC, "%s: the file system of %s is full", path, t->dir);
    return 0;
}

int atomicfile_check(const char *path, struct ft_err *err)
{
    struct target t;
    int rc = resolve(path, &t, err);
    if (rc < 0)
        return rc;
    if ((rc = room_for(path, &t, err)) < 0)
        return rc;
    char tmp[sizeof(t.real) + 64];
    int fd = make_temp(path, &t, tmp, sizeof(tmp), err);
    if (fd < 0)
        return fd;
    close(fd);
    unlink(tmp);
    return 0;
}

static int fail_temp(int fd, const char *tmp, int e, const char *path, const char *what,
                     struct ft_err *err)
{
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return ft_err_set(err, e, "%s: %s: %s", path, what, strerror(-e));
}

int atomicfile_write(const char *path, const void *data, size_t len, struct ft_err *err)
{
    struct target t;
    int rc = resolve(path, &t, err);
    if (rc < 0)
        return rc;
    char tmp[sizeof(t.real) + 64];
    int fd = make_temp(path, &t, tmp, sizeof(tmp), err);
    if (fd < 0)
        return fd;
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t n = write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return fail_temp(fd, tmp, -errno, path, "write failed", err);
        }
        p += n;
        left -= (size_t)n;
    }
    /* Delayed allocation reports a full disk or an I/O error only here. */
    if (fsync(fd) < 0 && errno != EINVAL)
        return fail_temp(fd, tmp, -errno, path, "write failed (fsync)", err);
    if (close(fd) < 0)
        return fail_temp(-1, tmp, -errno, path, "write failed (close)", err);
    if (rename(tmp, t.real) < 0)
        return fail_temp(-1, tmp, -errno, path, "rename failed", err);
    /* Make the rename itself durable. */
    int dfd = open(t.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}
