/* The glossary finds a counter's entry by its own source: ? on a netdev's rx_bytes explains
 * the netdev counter, not mlx5's rdma_rx_bytes; '#' in an entry matches a number; and every
 * entry's label, as the help lists it and ? searches for it, names that entry alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tui/glossary.h"

static void test_by_source(void **state)
{
    (void)state;
    char label[160];
    const struct glossary_entry *e = glossary_counter(COUNTERS_SRC_NETDEV, "rx_bytes");
    assert_non_null(e);
    glossary_label(e, label, sizeof(label));
    assert_string_equal(label, "rx_bytes (netdev)");
    e = glossary_counter(COUNTERS_SRC_HW, "rdma_rx_bytes");
    assert_non_null(e);
    glossary_label(e, label, sizeof(label));
    assert_string_equal(label, "rdma_rx_bytes (hw_counters mlx5)");
    /* A queue pair's counter reads hw_counters' entries. */
    assert_ptr_equal(glossary_counter(COUNTERS_SRC_QP, "rdma_rx_bytes"), e);
    /* '#' stands for the priority. */
    e = glossary_counter(COUNTERS_SRC_ETHTOOL, "rx_prio3_pause");
    assert_non_null(e);
    assert_string_equal(e->term, "rx_prio#_pause");
    assert_null(glossary_counter(COUNTERS_SRC_ETHTOOL, "rx_prio_pause"));
    assert_null(glossary_counter(COUNTERS_SRC_NETDEV, "no_such_counter"));
    /* The IB PortCounters have their own source. */
    e = glossary_counter(COUNTERS_SRC_IB, "port_xmit_wait");
    assert_non_null(e);
    assert_string_equal(e->where, "ib");
}

static void lower(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            *s = (char)(*s - 'A' + 'a');
}

/* The help searches for "  LABEL: " (its lines start with two spaces); no other entry's line
 * may contain it (before the fix, "rx_bytes: " was found first inside "rdma_rx_bytes: "). */
static void test_labels_unique(void **state)
{
    (void)state;
    int n;
    const struct glossary_entry *g = glossary_all(&n);
    assert_true(n > 50);
    for (int i = 0; i < n; i++) {
        char a[200], la[160];
        glossary_label(&g[i], la, sizeof(la));
        snprintf(a, sizeof(a), "  %s: ", la);
        lower(a);
        for (int j = 0; j < n; j++) {
            if (j == i)
                continue;
            char b[200], lb[160];
            glossary_label(&g[j], lb, sizeof(lb));
            snprintf(b, sizeof(b), "  %s: ", lb);
            lower(b);
            if (strstr(b, a))
                fail_msg("searching \"%s\" would find \"%s\" too", a, b);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_source),
        cmocka_unit_test(test_labels_unique),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
