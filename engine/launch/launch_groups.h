/* launch_groups: the --groups FILE of fabtop sweep: where the job's hosts sit (which leaf
 * switch), for the bisection split and the path classes when the fabric does not say. One
 * line per group: its name, then its hosts, separated by blanks; '#' starts a comment:
 *     # leaf switches of rack 3
 *     leaf1 rk-h1 rk-h2 rk-h3 rk-h4
 *     leaf2 rk-h5 rk-h6 rk-h7 rk-h8
 * A host in two groups, a group with no host, a name longer than 63 bytes or with a byte that
 * is not printable ASCII is refused; so is a host that is not in the job (launch_groups_check).
 * Hosts of the job in no group have an unknown group. */
#ifndef LAUNCH_GROUPS_H
#define LAUNCH_GROUPS_H

#include "common/ft_err.h"

#define LAUNCH_NAME 64

struct launch_group_host {
    char host[LAUNCH_NAME];
    int group; /* index into names */
    int line;  /* where the file names it, from 1 */
};

struct launch_groups {
    int ngroups, nhosts;
    char (*names)[LAUNCH_NAME];
    struct launch_group_host *hosts;
};

/* Parse text (the file's contents; path names it in messages): 0, or -EBADMSG with err
 * naming the line and what is wrong. g is empty on failure. */
int launch_groups_parse(const char *text, const char *path, struct launch_groups *g,
                        struct ft_err *err);
/* Read and parse the file: -ENOENT (missing), -EACCES, -EBADMSG, -EFBIG (over 1 MiB). */
int launch_groups_load(const char *path, struct launch_groups *g, struct ft_err *err);
/* Every host g names is one of the job's n hosts: 0, or -EBADMSG naming the first that is
 * not (and the file's line). */
int launch_groups_check(const struct launch_groups *g, const char *path, const char *const *hosts,
                        int n, struct ft_err *err);
/* The group of host (an index into g->names), -1 when it is in none. */
int launch_groups_of(const struct launch_groups *g, const char *host);
void launch_groups_free(struct launch_groups *g);

#endif
