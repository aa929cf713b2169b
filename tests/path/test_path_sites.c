/* test_path_sites: the sites file (engine/path/path_sites.h): a file of IPv4 and IPv6
 * prefixes read, addresses placed by their longest matching prefix (IPv4-mapped IPv6 as
 * IPv4), none for an address outside every prefix; malformed files refused with the file's
 * name, the line and what is wrong. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/path/path_sites.h"

static const char *site_of(const struct path_sites *s, const char *addr)
{
    const struct path_site_prefix *p = path_sites_lookup(s, addr);
    return p ? p->name : "-";
}

static void test_lookup(void **state)
{
    (void)state;
    struct path_sites *s = malloc(sizeof(*s));
    struct ft_err err = {0};
    const char *text = "# sites of the test fabric\n"
                       "east 10.82.0.0/16 2001:db8:1::/48   # the east hall\n"
                       "\n"
                       "east-lab\t10.82.7.0/24\n"
                       "west 10.83.0.0/16 2001:db8:2::/48\n"
                       "one 192.168.9.9\n";
    assert_int_equal(path_sites_parse(text, "sites.txt", s, &err), 0);
    assert_int_equal(s->n, 6);
    assert_string_equal(site_of(s, "10.82.1.2"), "east");
    assert_string_equal(site_of(s, "10.82.7.200"), "east-lab"); /* the longer prefix */
    assert_string_equal(site_of(s, "10.83.255.1"), "west");
    assert_string_equal(site_of(s, "2001:db8:2::5"), "west");
    assert_string_equal(site_of(s, "2001:db8:1:ffff::1"), "east");
    assert_string_equal(site_of(s, "::ffff:10.82.7.1"), "east-lab");
    assert_string_equal(site_of(s, "192.168.9.9"), "one"); /* a single address */
    assert_string_equal(site_of(s, "192.168.9.8"), "-");
    assert_string_equal(site_of(s, "10.84.0.1"), "-");
    assert_string_equal(site_of(s, "not an address"), "-");
    assert_string_equal(path_sites_lookup(s, "10.82.7.1")->text, "10.82.7.0/24");
    /* A /0 covers everything of its family, and loses to any longer prefix. */
    assert_int_equal(path_sites_parse("all 0.0.0.0/0\nnear 10.0.0.0/8\n", "f", s, &err), 0);
    assert_string_equal(site_of(s, "8.8.8.8"), "all");
    assert_string_equal(site_of(s, "10.1.1.1"), "near");
    assert_string_equal(site_of(s, "2001:db8::1"), "-");
    free(s);
}

static void refused(const char *text, const char *needle)
{
    struct path_sites *s = malloc(sizeof(*s));
    struct ft_err err = {0};
    assert_int_equal(path_sites_parse(text, "sites.txt", s, &err), -EINVAL);
    if (!strstr(err.msg, needle))
        fail_msg("'%s' does not say '%s'", err.msg, needle);
    free(s);
}

static void test_refused(void **state)
{
    (void)state;
    refused("east 10.82.0.0/16\nwest\n", "sites.txt:2: site west has no prefix");
    refused("east 10.82.0.0/33\n", "sites.txt:1: '10.82.0.0/33' is not a network prefix");
    refused("east 10.82.1.0/16\n", "'10.82.1.0/16' is not a network prefix"); /* host bits */
    refused("east 10.82.0.0/\n", "is not a network prefix");
    refused("east eth0\n", "'eth0' is not a network prefix");
    refused("east 2001:db8::/129\n", "is not a network prefix");
    refused("a 10.0.0.0/8\n\n# x\nb 10.0.0.0/8\n", "sites.txt:4: 10.0.0.0/8 is site a and site b");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
