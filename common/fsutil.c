/* fsutil: sysfs/procfs readers relative to a root directory. */
#include "common/fsutil.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/xalloc.h"

int fsutil_path(char *out, size_t outlen, const char *root, const char *rel)
{
    if (!root || !*root)
        root = "/";
    size_t rl = strlen(root);
    while (rl > 1 && root[rl - 1] == '/')
        rl--;
    while (*rel == '/')
        rel++;
    int n;
    if (rl == 1 && root[0] == '/')
        n = snprintf(out, outlen, "/%s", rel);
    else
        n = snprintf(out, outlen, "%.*s/%s", (int)rl, root, rel);
    return (n < 0 || (size_t)n >= outlen) ? -ENAMETOOLONG : 0;
}

int fsutil_read(const char *root, const char *rel, char *buf, size_t len)
{
    char path[4096];
    int rc = fsutil_path(path, sizeof(path), root, rel);
    if (rc < 0)
        return rc;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t got = 0;
    while (got + 1 < len) {
        ssize_t n = read(fd, buf + got, len - 1 - got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = -errno;
            close(fd);
            return e;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    while (got > 0 && isspace((unsigned char)buf[got - 1]))
        buf[--got] = '\0';
    return (int)got;
}

int fsutil_parse_u64(const char *s, uint64_t *out)
{
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno)
        return -errno;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -EINVAL;
    *out = v;
    return 0;
}

int fsutil_read_u64(const char *root, const char *rel, uint64_t *out)
{
    char buf[128];
    int rc = fsutil_read(root, rel, buf, sizeof(buf));
    if (rc < 0)
        return rc;
    return fsutil_parse_u64(buf, out);
}

int fsutil_link_base(const char *root, const char *rel, char *buf, size_t len)
{
    char path[4096], target[4096];
    int rc = fsutil_path(path, sizeof(path), root, rel);
    if (rc < 0)
        return rc;
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n < 0)
        return -errno;
    target[n] = '\0';
    const char *base = strrchr(target, '/');
    base = base ? base + 1 : target;
    if (strlen(base) + 1 > len)
        return -ENAMETOOLONG;
    strcpy(buf, base);
    return (int)strlen(buf);
}

int fsutil_exists(const char *root, const char *rel)
{
    char path[4096];
    struct stat st;
    if (fsutil_path(path, sizeof(path), root, rel) < 0)
        return 0;
    return stat(path, &st) == 0;
}

/* Natural order: runs of digits compare as numbers, so port 10 sorts after port 9. */
static int natural_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    while (*x && *y) {
        if (isdigit((unsigned char)*x) && isdigit((unsigned char)*y)) {
            unsigned long long u = strtoull(x, (char **)&x, 10);
            unsigned long long v = strtoull(y, (char **)&y, 10);
            if (u != v)
                return u < v ? -1 : 1;
        } else {
            if (*x != *y)
                return (unsigned char)*x - (unsigned char)*y;
            x++;
            y++;
        }
    }
    return (unsigned char)*x - (unsigned char)*y;
}

int fsutil_list(const char *root, const char *rel, char ***names)
{
    char path[4096];
    int rc = fsutil_path(path, sizeof(path), root, rel);
    if (rc < 0)
        return rc;
    DIR *d = opendir(path);
    if (!d)
        return -errno;
    size_t n = 0, cap = 16;
    char **v = xalloc(cap * sizeof(*v));
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (n + 2 > cap) {
            cap *= 2;
            v = xalloc_resize(v, cap * sizeof(*v));
        }
        v[n++] = xalloc_strdup(de->d_name);
    }
    closedir(d);
    qsort(v, n, sizeof(*v), natural_cmp);
    v[n] = NULL;
    *names = v;
    return (int)n;
}

void fsutil_add_json_names(const char *dir, const char *prefix, char ***names, int *count)
{
    char **ls;
    int k = fsutil_list("/", dir, &ls);
    for (int j = 0; j < k; j++) {
        size_t len = strlen(ls[j]);
        if (len < 6 || strcmp(ls[j] + len - 5, ".json"))
            continue;
        char name[320];
        snprintf(name, sizeof(name), "%s%.*s", prefix, (int)(len - 5), ls[j]);
        bool dup = false;
        for (int d = 0; d < *count; d++)
            dup |= !strcmp((*names)[d], name);
        if (dup)
            continue;
        *names = xalloc_resize(*names, (size_t)(*count + 2) * sizeof(char *));
        (*names)[(*count)++] = xalloc_strdup(name);
        (*names)[*count] = NULL;
    }
    if (k >= 0)
        fsutil_free_list(ls);
}

void fsutil_free_list(char **names)
{
    if (!names)
        return;
    for (char **p = names; *p; p++)
        free(*p);
    free(names);
}
