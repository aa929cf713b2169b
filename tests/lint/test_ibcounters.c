/* test_ibcounters: the InfiniBand PortCounters table: every width, saturation ceiling,
 * unit and group checked against drivers/infiniband/core/sysfs.c (PORT_PMA_ATTR) and the
 * IBA PortCounters layout; the table is sorted and complete for counters/ and
 * counters_ext/; lookups by name work. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topology/topo_ibcounters.h"

struct expect {
    const char *name;
    int width, ext_width;
    enum topo_ibc_unit unit;
    enum topo_ibc_group group;
    bool is_error;
};

/* PORT_PMA_ATTR(name, counter, width, offset) in the kernel; the error counters keep their
 * PortCounters width in every counter group. */
static const struct expect expected[] = {
    {"port_xmit_data", 32, 64, TOPO_IBC_WORDS, TOPO_IBC_TRAFFIC, false},
    {"port_rcv_data", 32, 64, TOPO_IBC_WORDS, TOPO_IBC_TRAFFIC, false},
    {"port_xmit_packets", 32, 64, TOPO_IBC_PACKETS, TOPO_IBC_TRAFFIC, false},
    {"port_rcv_packets", 32, 64, TOPO_IBC_PACKETS, TOPO_IBC_TRAFFIC, false},
    {"port_xmit_wait", 32, 0, TOPO_IBC_TICKS, TOPO_IBC_CONGESTION, false},
    {"symbol_error", 16, 0, TOPO_IBC_EVENTS, TOPO_IBC_ERRORS, true},
    {"port_rcv_errors", 16, 0, TOPO_IBC_PACKETS, TOPO_IBC_ERRORS, true},
    {"port_xmit_discards", 16, 0, TOPO_IBC_PACKETS, TOPO_IBC_LOSS, true},
    {"port_rcv_remote_physical_errors", 16, 0, TOPO_IBC_PACKETS, TOPO_IBC_ERRORS, true},
    {"port_rcv_switch_relay_errors", 16, 0, TOPO_IBC_PACKETS, TOPO_IBC_LOSS, true},
    /* 8 bits in the kernel (offsets 128/136) and in libibmad, not 16. */
    {"port_xmit_constraint_errors", 8, 0, TOPO_IBC_EVENTS, TOPO_IBC_LOSS, true},
    {"port_rcv_constraint_errors", 8, 0, TOPO_IBC_EVENTS, TOPO_IBC_LOSS, true},
    {"VL15_dropped", 16, 0, TOPO_IBC_EVENTS, TOPO_IBC_LOSS, true},
    {"link_error_recovery", 8, 0, TOPO_IBC_EVENTS, TOPO_IBC_ERRORS, true},
    {"link_downed", 8, 0, TOPO_IBC_EVENTS, TOPO_IBC_ERRORS, true},
    {"local_link_integrity_errors", 4, 0, TOPO_IBC_EVENTS, TOPO_IBC_ERRORS, true},
    {"excessive_buffer_overrun_errors", 4, 0, TOPO_IBC_EVENTS, TOPO_IBC_ERRORS, true},
    /* PORT_PMA_ATTR_EXT: PortCountersExtended, 64 bits */
    {"unicast_xmit_packets", 64, 0, TOPO_IBC_PACKETS, TOPO_IBC_TRAFFIC, false},
    {"unicast_rcv_packets", 64, 0, TOPO_IBC_PACKETS, TOPO_IBC_TRAFFIC, false},
    {"multicast_xmit_packets", 64, 0, TOPO_IBC_PACKETS, TOPO_IBC_TRAFFIC, false},
    {"multicast_rcv_packets", 64, 0, TOPO_IBC_PACKETS, TOPO_IBC_TRAFFIC, false},
    /* legacy counters_ext/ */
    {"port_xmit_data_64", 64, 0, TOPO_IBC_WORDS, TOPO_IBC_TRAFFIC, false},
    {"port_rcv_data_64", 64, 0, TOPO_IBC_WORDS, TOPO_IBC_TRAFFIC, false},
    {"port_xmit_packets_64", 64, 0, TOPO_IBC_PACKETS, TOPO_IBC_TRAFFIC, false},
    {"port_rcv_packets_64", 64, 0, TOPO_IBC_PACKETS, TOPO_IBC_TRAFFIC, false},
    {"port_unicast_xmit_packets", 64, 0, TOPO_IBC_PACKETS, TOPO_IBC_TRAFFIC, false},
    {"port_unicast_rcv_packets", 64, 0, TOPO_IBC_PACKETS, TOPO_IBC_TRAFFIC, false},
    {"port_multicast_xmit_packets", 64, 0, TOPO_IBC_PACKETS, TOPO_IBC_TRAFFIC, false},
    {"port_multicast_rcv_packets", 64, 0, TOPO_IBC_PACKETS, TOPO_IBC_TRAFFIC, false},
    /* vendor-only, width undocumented */
    {"port_rcv_discards", 0, 0, TOPO_IBC_PACKETS, TOPO_IBC_LOSS, true},
};
#define NEXPECTED ((int)(sizeof(expected) / sizeof(expected[0])))

static void test_every_counter(void **state)
{
    (void)state;
    for (int i = 0; i < NEXPECTED; i++) {
        const struct expect *e = &expected[i];
        const struct topo_ibcounter *c = topo_ibc_find(e->name);
        print_message("%s\n", e->name);
        assert_non_null(c);
        assert_string_equal(c->name, e->name);
        assert_int_equal(c->width, e->width);
        assert_int_equal(c->ext_width, e->ext_width);
        assert_int_equal(c->unit, e->unit);
        assert_int_equal(c->group, e->group);
        assert_int_equal(c->is_error, e->is_error);
        /* IB PortCounters saturate; only the undocumented vendor counter is not claimed. */
        assert_int_equal(c->saturating, e->width != 0);
        assert_int_equal(c->bytes_per_unit, e->unit == TOPO_IBC_WORDS ? 4 : 0);
        bool ext = strstr(e->name, "_64") || !strncmp(e->name, "port_unicast", 12) ||
                   !strncmp(e->name, "port_multicast", 14);
        assert_string_equal(c->dir, ext ? "counters_ext" : "counters");
        assert_non_null(c->iba_name);
        assert_non_null(c->meaning);
        assert_true(strlen(c->meaning) > 20);
        if (c->is_error)
            assert_non_null(c->action);
    }
    /* Nothing in the table that is not checked above. */
    assert_int_equal(topo_ibcounters_n, NEXPECTED);
}

static void test_sorted_unique(void **state)
{
    (void)state;
    for (int i = 1; i < topo_ibcounters_n; i++)
        assert_true(strcmp(topo_ibcounters[i - 1].name, topo_ibcounters[i].name) < 0);
    for (int i = 0; i < topo_ibcounters_n; i++)
        assert_ptr_equal(topo_ibc_find(topo_ibcounters[i].name), &topo_ibcounters[i]);
    assert_null(topo_ibc_find("no_such_counter"));
    assert_null(topo_ibc_find(""));
    assert_null(topo_ibc_find(NULL));
    assert_null(topo_ibc_find("Symbol_error")); /* names are case-sensitive, as in sysfs */
}

static void test_saturation_ceilings(void **state)
{
    (void)state;
    assert_int_equal(topo_ibc_max(4), 15);
    assert_int_equal(topo_ibc_max(8), 255);
    assert_int_equal(topo_ibc_max(16), 65535);
    assert_true(topo_ibc_max(32) == 4294967295u);
    assert_true(topo_ibc_max(64) == UINT64_MAX);
    assert_int_equal(topo_ibc_max(0), 0);
    assert_int_equal(topo_ibc_max(65), 0);

    assert_true(topo_ibc_saturated(topo_ibc_find("local_link_integrity_errors"), 15));
    assert_false(topo_ibc_saturated(topo_ibc_find("local_link_integrity_errors"), 14));
    assert_true(topo_ibc_saturated(topo_ibc_find("link_downed"), 255));
    assert_true(topo_ibc_saturated(topo_ibc_find("port_rcv_constraint_errors"), 255));
    assert_true(topo_ibc_saturated(topo_ibc_find("symbol_error"), 65535));
    assert_false(topo_ibc_saturated(topo_ibc_find("symbol_error"), 65534));
    /* The node_exporter fixture's mlx4 port_xmit_wait reads 4294967295: saturated. */
    assert_true(topo_ibc_saturated(topo_ibc_find("port_xmit_wait"), 4294967295u));
    /* Data counters: 32-bit ceiling, or the 64-bit one when the kernel used the
     * extended attribute; a value above 2^32 - 1 proves the latter. */
    const struct topo_ibcounter *xd = topo_ibc_find("port_xmit_data");
    assert_true(topo_ibc_saturated(xd, 4294967295u));
    assert_true(topo_ibc_saturated(xd, UINT64_MAX));
    assert_false(topo_ibc_saturated(xd, 2880761508848ull));
    assert_false(topo_ibc_saturated(topo_ibc_find("port_rcv_discards"), 65535));
    assert_false(topo_ibc_saturated(NULL, 0));
}

static void test_units_and_names(void **state)
{
    (void)state;
    /* port_xmit_data counts 4-byte words: bytes = 4 x value. */
    assert_true(topo_ibc_bytes(topo_ibc_find("port_xmit_data"), 1000) == 4000);
    assert_true(topo_ibc_bytes(topo_ibc_find("port_rcv_data_64"), 1000) == 4000);
    assert_true(topo_ibc_bytes(topo_ibc_find("port_xmit_packets"), 1000) == 1000);
    assert_string_equal(topo_ibc_unit_str(TOPO_IBC_WORDS), "4-byte words");
    assert_string_equal(topo_ibc_group_str(TOPO_IBC_CONGESTION), "congestion");
    assert_string_equal(topo_ibc_group_str(TOPO_IBC_LOSS), "loss/retransmission");
    assert_string_equal(topo_ibc_group_str(TOPO_IBC_ERRORS), "errors");
    assert_string_equal(topo_ibc_group_str(TOPO_IBC_TRAFFIC), "traffic");
    assert_string_equal(topo_ibc_find("symbol_error")->iba_name, "SymbolErrorCounter");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_counter),
        cmocka_unit_test(test_sorted_unique),
        cmocka_unit_test(test_saturation_ceilings),
        cmocka_unit_test(test_units_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
