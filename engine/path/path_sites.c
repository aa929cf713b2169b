/* path_sites: the sites file's parser and its longest-prefix lookup. */
#include "engine/path/path_sites.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* "ADDR/LEN" (LEN optional: the whole address) into p; false when it does not parse or has
 * bits set past LEN. */
static bool prefix_parse(const char *s, struct path_site_prefix *p)
{
    char a[64];
    const char *slash = strchr(s, '/');
    size_t al = slash ? (size_t)(slash - s) : strlen(s);
    if (al == 0 || al >= sizeof(a))
        return false;
    memcpy(a, s, al);
    a[al] = '\0';
    memset(p->addr, 0, sizeof(p->addr));
    if (inet_pton(AF_INET, a, p->addr) == 1)
        p->family = AF_INET;
    else if (inet_pton(AF_INET6, a, p->addr) == 1)
        p->family = AF_INET6;
    else
        return false;
    int max = p->family == AF_INET ? 32 : 128;
    p->len = max;
    if (slash) {
        char *end;
        long v = strtol(slash + 1, &end, 10);
        if (end == slash + 1 || *end || v < 0 || v > max)
            return false;
        p->len = (int)v;
    }
    for (int bit = p->len; bit < max; bit++)
        if (p->addr[bit / 8] & (0x80 >> (bit % 8)))
            return false; /* host bits set: say the network */
    snprintf(p->text, sizeof(p->text), "%s", s);
    return true;
}

static bool same_prefix(const struct path_site_prefix *a, const struct path_site_prefix *b)
{
    return a->family == b->family && a->len == b->len && !memcmp(a->addr, b->addr, 16);
}

int path_sites_parse(const char *text, const char *what, struct path_sites *out, struct ft_err *err)
{
    memset(out, 0, sizeof(*out));
    int line = 0;
    const char *s = text;
    while (*s) {
        line++;
        const char *eol = strchr(s, '\n');
        size_t n = eol ? (size_t)(eol - s) : strlen(s);
        char buf[1024];
        if (n >= sizeof(buf))
            return ft_err_set(err, -EINVAL, "%s:%d: the line is longer than %zu bytes", what, line,
                              sizeof(buf) - 1);
        memcpy(buf, s, n);
        buf[n] = '\0';
        s += n + (eol ? 1 : 0);
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        char *save = NULL, *name = strtok_r(buf, " \t\r", &save);
        if (!name)
            continue;
        if (strlen(name) >= sizeof(out->p[0].name))
            return ft_err_set(err, -EINVAL, "%s:%d: the site name '%s' is longer than %zu bytes",
                              what, line, name, sizeof(out->p[0].name) - 1);
        int got = 0;
        for (char *t = strtok_r(NULL, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
            if (out->n == PATH_SITES_MAX)
                return ft_err_set(err, -EINVAL, "%s:%d: more than %d prefixes", what, line,
                                  PATH_SITES_MAX);
            struct path_site_prefix *p = &out->p[out->n];
            if (!prefix_parse(t, p))
                return ft_err_set(err, -EINVAL,
                                  "%s:%d: '%s' is not a network prefix (CIDR such as 10.1.0.0/16 "
                                  "or 2001:db8::/48, no host bits set)",
                                  what, line, t);
            snprintf(p->name, sizeof(p->name), "%s", name);
            for (int i = 0; i < out->n; i++)
                if (same_prefix(&out->p[i], p))
                    return ft_err_set(err, -EINVAL, "%s:%d: %s is site %s and site %s", what, line,
                                      t, out->p[i].name, name);
            out->n++;
            got++;
        }
        if (!got)
            return ft_err_set(err, -EINVAL,
                              "%s:%d: site %s has no prefix (a line is NAME CIDR [CIDR ...])", what,
                              line, name);
    }
    return 0;
}

static bool covers(const struct path_site_prefix *p, int family, const uint8_t *a)
{
    if (p->family != family)
        return false;
    int full = p->len / 8, rest = p->len % 8;
    if (memcmp(p->addr, a, (size_t)full))
        return false;
    return !rest || ((p->addr[full] ^ a[full]) & (0xff00 >> rest)) == 0;
}

const struct path_site_prefix *path_sites_lookup(const struct path_sites *s, const char *addr)
{
    uint8_t a[16] = {0};
    int family;
    if (!s || !addr)
        return NULL;
    if (inet_pton(AF_INET, addr, a) == 1) {
        family = AF_INET;
    } else if (inet_pton(AF_INET6, addr, a) == 1) {
        family = AF_INET6;
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (!memcmp(a, mapped, 12)) { /* ::ffff:a.b.c.d is the IPv4 address */
            memmove(a, a + 12, 4);
            memset(a + 4, 0, 12);
            family = AF_INET;
        }
    } else {
        return NULL;
    }
    const struct path_site_prefix *best = NULL;
    for (int i = 0; i < s->n; i++)
        if (covers(&s->p[i], family, a) && (!best || s->p[i].len > best->len))
            best = &s->p[i];
    return best;
}
