/* launch_groups: the --groups file, parsed and checked against the job's hosts. */
#include "engine/launch/launch_groups.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

void launch_groups_free(struct launch_groups *g)
{
    free(g->names);
    free(g->hosts);
    memset(g, 0, sizeof(*g));
}

int launch_groups_of(const struct launch_groups *g, const char *host)
{
    for (int i = 0; i < g->nhosts; i++)
        if (!strcmp(g->hosts[i].host, host))
            return g->hosts[i].group;
    return -1;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static int fail(struct launch_groups *g, struct ft_err *err, const char *path, int line,
                const char *what, const char *word)
{
    /* word may lie in g: the message first, then free. */
    int rc = ft_err_set(err, -EBADMSG, "%s: line %d: %s%s%.64s%s; one line per group: NAME HOST...",
                        path, line, what, word ? " '" : "", word ? word : "", word ? "'" : "");
    launch_groups_free(g);
    return rc;
}

int launch_groups_parse(const char *text, const char *path, struct launch_groups *g,
                        struct ft_err *err)
{
    memset(g, 0, sizeof(*g));
    int line = 0;
    for (const char *s = text; *s;) {
        line++;
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        const char *hash = memchr(s, '#', len);
        size_t use = hash ? (size_t)(hash - s) : len;
        int nwords = 0;
        for (size_t i = 0; i < use;) {
            while (i < use && is_blank(s[i]))
                i++;
            if (i >= use)
                break;
            size_t w = i;
            while (w < use && !is_blank(s[w]))
                w++;
            char word[LAUNCH_NAME];
            if (w - i >= LAUNCH_NAME)
                return fail(g, err, path, line, "a name longer than 63 bytes", NULL);
            memcpy(word, s + i, w - i);
            word[w - i] = '\0';
            for (size_t k = 0; word[k]; k++)
                if ((unsigned char)word[k] < 0x21 || (unsigned char)word[k] > 0x7e)
                    return fail(g, err, path, line, "a byte that is not printable ASCII", NULL);
            if (nwords == 0) {
                for (int k = 0; k < g->ngroups; k++)
                    if (!strcmp(g->names[k], word))
                        return fail(g, err, path, line, "a second line for group", word);
                g->names = xalloc_resize(g->names, (size_t)(g->ngroups + 1) * sizeof(*g->names));
                memcpy(g->names[g->ngroups++], word, sizeof(word));
            } else {
                for (int k = 0; k < g->nhosts; k++)
                    if (!strcmp(g->hosts[k].host, word))
                        return fail(g, err, path, line, "a host already in a group:", word);
                g->hosts = xalloc_resize(g->hosts, (size_t)(g->nhosts + 1) * sizeof(*g->hosts));
                struct launch_group_host *h = &g->hosts[g->nhosts++];
                memcpy(h->host, word, sizeof(word));
                h->group = g->ngroups - 1;
                h->line = line;
            }
            nwords++;
            i = w;
        }
        if (nwords == 1)
            return fail(g, err, path, line, "group with no host:", g->names[g->ngroups - 1]);
        s += len + (eol ? 1 : 0);
    }
    if (g->ngroups == 0) {
        launch_groups_free(g);
        return ft_err_set(err, -EBADMSG, "%s: no group in it; one line per group: NAME HOST...",
                          path);
    }
    return 0;
}

int launch_groups_load(const char *path, struct launch_groups *g, struct ft_err *err)
{
    memset(g, 0, sizeof(*g));
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = errno;
        return ft_err_set(err, -e, "%s: %s; --groups takes a file of NAME HOST... lines", path,
                          strerror(e));
    }
    size_t cap = 1 << 20, n;
    char *buf = xalloc(cap + 1);
    n = fread(buf, 1, cap + 1, f);
    int rd = ferror(f);
    fclose(f);
    if (rd) {
        free(buf);
        return ft_err_set(err, -EIO, "%s: cannot be read", path);
    }
    if (n > cap) {
        free(buf);
        return ft_err_set(err, -EFBIG, "%s: over 1 MiB; a groups file is one line per switch",
                          path);
    }
    buf[n] = '\0';
    int rc = strlen(buf) != n
                 ? ft_err_set(err, -EBADMSG, "%s: holds a NUL byte; not a text file", path)
                 : launch_groups_parse(buf, path, g, err);
    free(buf);
    return rc;
}

int launch_groups_check(const struct launch_groups *g, const char *path, const char *const *hosts,
                        int n, struct ft_err *err)
{
    for (int i = 0; i < g->nhosts; i++) {
        int found = 0;
        for (int k = 0; k < n && !found; k++)
            found = !strcmp(hosts[k], g->hosts[i].host);
        if (!found)
            return ft_err_set(err, -EBADMSG,
                              "%s: line %d names host '%s', which is not in this job (%d "
                              "host%s, first '%s'); use the names `hostname` gives on the nodes",
                              path, g->hosts[i].line, g->hosts[i].host, n, n == 1 ? "" : "s",
                              n ? hosts[0] : "");
    }
    return 0;
}
