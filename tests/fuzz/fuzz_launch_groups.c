/* fuzz_launch_groups: the --groups FILE of `fabtop sweep` (where the job's hosts sit) as
 * rank 0 reads it: launch_groups_load (the size and NUL checks, then launch_groups_parse),
 * launch_groups_check against the file's own hosts (must pass) and a fixed job of hosts, then
 * launch_groups_of for each of the job's hosts and each host the file names. The input is the file.
 * load reads into a 1 MiB buffer, which costs more than the parse under ASan: it reads the files
 * with a NUL (which it must refuse) and one in eight others; the rest go to launch_groups_parse as
 * load would pass them. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/ft_err.h"
#include "common/xalloc.h"
#include "engine/launch/launch_groups.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const job[] = {"rk-h1", "rk-h2", "rk-h3", "rk-h4",  "rk-h5",
                                  "rk-h6", "rk-h7", "rk-h8", "node-1", "a"};
#define NJOB ((int)(sizeof(job) / sizeof(job[0])))

static int printable_name(const char *s)
{
    size_t n = strnlen(s, LAUNCH_NAME);
    if (n == 0 || n >= LAUNCH_NAME)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct launch_groups g;
    struct ft_err err = {0};
    int nul = memchr(data, 0, size) != NULL, rc;
    if (nul || size % 8 == 0) {
        rc = launch_groups_load(fuzz_file(0, data, size), &g, &err);
        fuzz_require(!nul || (rc == -EBADMSG && strstr(err.msg, "NUL")),
                     "a file with a NUL byte: load gave %d", rc);
    } else {
        char *text = fuzz_str(data, size);
        rc = launch_groups_parse(text, "groups", &g, &err);
        free(text);
    }
    if (rc < 0) {
        fuzz_require((rc == -EBADMSG || rc == -EFBIG) && err.msg[0] != '\0',
                     "launch_groups_load: %d without a message", rc);
        fuzz_require(g.ngroups == 0 && g.nhosts == 0 && !g.names && !g.hosts,
                     "a refused file left groups behind");
        return 0;
    }
    fuzz_require(g.ngroups > 0 && g.nhosts >= g.ngroups, "%d groups, %d hosts", g.ngroups,
                 g.nhosts);
    for (int k = 0; k < g.ngroups; k++) {
        fuzz_require(printable_name(g.names[k]), "group %d's name is not a printable word", k);
        for (int j = 0; j < k; j++)
            fuzz_require(strcmp(g.names[j], g.names[k]) != 0, "group '%s' twice", g.names[k]);
    }
    int last_line = 0;
    for (int i = 0; i < g.nhosts; i++) {
        const struct launch_group_host *h = &g.hosts[i];
        fuzz_require(printable_name(h->host), "host %d's name is not a printable word", i);
        fuzz_require(h->group >= 0 && h->group < g.ngroups, "host '%s' in group %d of %d", h->host,
                     h->group, g.ngroups);
        fuzz_require(h->line >= last_line && h->line >= 1, "host '%s' on line %d after %d", h->host,
                     h->line, last_line);
        last_line = h->line;
        fuzz_require(launch_groups_of(&g, h->host) == h->group,
                     "host '%s' found in group %d, not %d", h->host, launch_groups_of(&g, h->host),
                     h->group);
    }
    /* A job of exactly the hosts the file names passes. */
    const char **own = xalloc((size_t)g.nhosts * sizeof(*own));
    for (int i = 0; i < g.nhosts; i++)
        own[i] = g.hosts[i].host;
    int crc = launch_groups_check(&g, "groups", own, g.nhosts, &err);
    fuzz_require(crc == 0, "a job of the file's own hosts refused: %s", err.msg);
    free(own);
    crc = launch_groups_check(&g, "groups", job, NJOB, &err);
    fuzz_require(crc == 0 || (crc == -EBADMSG && err.msg[0]), "launch_groups_check: %d", crc);
    ft_err_clear(&err);
    crc = launch_groups_check(&g, "groups", job, 0, &err);
    fuzz_require(crc == -EBADMSG && err.msg[0], "no host of an empty job: check gave %d", crc);
    for (int i = 0; i < NJOB; i++) {
        int k = launch_groups_of(&g, job[i]);
        fuzz_require(k >= -1 && k < g.ngroups, "host '%s' in group %d of %d", job[i], k, g.ngroups);
    }
    launch_groups_free(&g);
    return 0;
}
