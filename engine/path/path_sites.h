/* path_sites: a sites file (`fabtop run --sites FILE`): which site an address belongs to, for
 * the path's class when the ends carry no --site label. Text, one site per line:
 *     NAME CIDR [CIDR ...]        # comment
 * IPv4 or IPv6 prefixes; an address takes the site of its longest matching prefix. Pure: the
 * caller reads the file. */
#ifndef PATH_SITES_H
#define PATH_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ft_err.h"

#define PATH_SITES_MAX 1024 /* prefixes in one file */

struct path_site_prefix {
    int family; /* AF_INET or AF_INET6 */
    uint8_t addr[16];
    int len;       /* prefix length in bits */
    char name[64]; /* the site */
    char text[64]; /* the prefix as written ("10.0.0.0/16") */
};

struct path_sites {
    int n;
    struct path_site_prefix p[PATH_SITES_MAX];
};

/* Parse text (what names it in messages: the file's name). 0, or -EINVAL with the line and
 * what is wrong there (a name without a prefix, a prefix that does not parse or has host bits
 * set, one prefix given to two sites, too many prefixes). */
int path_sites_parse(const char *text, const char *what, struct path_sites *out,
                     struct ft_err *err);
/* The prefix a numeric address (IPv4, IPv6, IPv4-mapped IPv6) falls in, the longest; NULL when
 * none does or addr does not parse. */
const struct path_site_prefix *path_sites_lookup(const struct path_sites *s, const char *addr);

#endif
