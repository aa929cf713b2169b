/* datadir: where shipped files are searched (datadir.h). */
#include "common/datadir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FABTOP_DATADIR
#define FABTOP_DATADIR "/usr/local/share/fabtop"
#endif
#ifndef FABTOP_BUILD_DIR
#define FABTOP_BUILD_DIR ""
#endif

const char *datadir_installed(void)
{
    return FABTOP_DATADIR;
}

const char *datadir_build_dir(void)
{
    return FABTOP_BUILD_DIR;
}

/* Append a + b + c unless it is empty, too long, already there, or the list is full. */
static void add(char dirs[DATADIR_MAX][DATADIR_LEN], int *n, const char *a, const char *b,
                const char *c)
{
    char d[DATADIR_LEN];
    if (snprintf(d, sizeof(d), "%s%s%s", a, b, c) >= (int)sizeof(d) || !d[0] || *n >= DATADIR_MAX)
        return;
    for (int i = 0; i < *n; i++)
        if (!strcmp(dirs[i], d))
            return;
    memcpy(dirs[(*n)++], d, sizeof(d));
}

/* Is path under dir (dir itself, or dir followed by '/')? */
static int under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return n > 0 && !strncmp(path, dir, n) && path[n] == '/';
}

int datadir_search_exe(const char *sub, const char *source_dir, const char *exe,
                       char dirs[DATADIR_MAX][DATADIR_LEN])
{
    int n = 0;
    const char *home = getenv("HOME");
    const char *cfg = getenv("XDG_CONFIG_HOME"), *data = getenv("XDG_DATA_HOME");
    if (cfg && *cfg)
        add(dirs, &n, cfg, "/fabtop/", sub);
    else if (home && *home)
        add(dirs, &n, home, "/.config/fabtop/", sub);
    if (data && *data)
        add(dirs, &n, data, "/fabtop/", sub);
    else if (home && *home)
        add(dirs, &n, home, "/.local/share/fabtop/", sub);

    char self[DATADIR_LEN] = "";
    if (!exe) {
        ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
        self[k > 0 ? k : 0] = '\0';
        exe = self;
    }
    /* A program in its build tree reads the tree's own files, not an older installed copy. */
    if (exe[0] && source_dir && *source_dir && *FABTOP_BUILD_DIR && under(exe, FABTOP_BUILD_DIR))
        add(dirs, &n, source_dir, "", "");
    /* PREFIX/bin/fabtop reads PREFIX/share/fabtop: an install moved as a whole still works. */
    const char *slash = exe[0] ? strrchr(exe, '/') : NULL;
    if (slash && slash > exe) {
        char bindir[DATADIR_LEN];
        snprintf(bindir, sizeof(bindir), "%.*s", (int)(slash - exe), exe);
        char *up = strrchr(bindir, '/');
        if (up && !strcmp(up, "/bin")) {
            *up = '\0';
            add(dirs, &n, bindir, "/share/fabtop/", sub);
        }
    }
    add(dirs, &n, FABTOP_DATADIR, "/", sub);
    /* XDG_DATA_DIRS: colon-separated, "/usr/local/share/:/usr/share/" when unset or empty. */
    const char *xdd = getenv("XDG_DATA_DIRS");
    if (!xdd || !*xdd)
        xdd = "/usr/local/share:/usr/share";
    while (*xdd) {
        const char *end = strchr(xdd, ':');
        size_t len = end ? (size_t)(end - xdd) : strlen(xdd);
        while (len > 1 && xdd[len - 1] == '/')
            len--;
        if (len > 0 && xdd[0] == '/' && len < DATADIR_LEN - 64) {
            char base[DATADIR_LEN];
            snprintf(base, sizeof(base), "%.*s", (int)len, xdd);
            add(dirs, &n, base, "/fabtop/", sub);
        }
        xdd += len;
        while (*xdd && *xdd != ':')
            xdd++;
        if (*xdd == ':')
            xdd++;
    }
    return n;
}

int datadir_search(const char *sub, const char *source_dir, char dirs[DATADIR_MAX][DATADIR_LEN])
{
    return datadir_search_exe(sub, source_dir, NULL, dirs);
}
