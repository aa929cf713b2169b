/* topo_ibcounters: the InfiniBand PortCounters the kernel shows under
 * /sys/class/infiniband/DEV/ports/N/{counters,counters_ext}/, with width, saturation,
 * unit, group and meaning. Plain constant data plus name lookup; no I/O, no curses.
 * The table is sorted by file name so topo_ibc_find() is a binary search. */
#ifndef TOPO_IBCOUNTERS_H
#define TOPO_IBCOUNTERS_H

#include <stdbool.h>
#include <stdint.h>

/* What a counter tells about the port. */
enum topo_ibc_group {
    TOPO_IBC_TRAFFIC = 0, /* data and packets moved */
    TOPO_IBC_CONGESTION,  /* waiting for credits / arbitration */
    TOPO_IBC_LOSS,        /* packets dropped (discards, filters, relay): lost and retransmitted */
    TOPO_IBC_ERRORS,      /* physical / link integrity errors */
};

/* What one count is. */
enum topo_ibc_unit {
    TOPO_IBC_PACKETS = 0, /* packets */
    TOPO_IBC_WORDS,       /* 4-octet words: bytes = 4 x value */
    TOPO_IBC_EVENTS,      /* occurrences (errors, link events) */
    TOPO_IBC_TICKS,       /* device-specific sample ticks (PortXmitWait) */
};

struct topo_ibcounter {
    const char *name;     /* sysfs file name, e.g. "symbol_error" */
    const char *dir;      /* directory under ports/N/: "counters" or "counters_ext" */
    const char *iba_name; /* IBA / perfquery field name, e.g. "SymbolErrorCounter" */
    uint8_t width;        /* bits; 0 when not documented */
    uint8_t ext_width;    /* 64 when the kernel may show the 64-bit PortCountersExtended
                           * field under the same name (see topo_ibcounters.c), else 0 */
    bool saturating;      /* stops at 2^width - 1 instead of wrapping (IB PortCounters do) */
    enum topo_ibc_unit unit;
    uint8_t bytes_per_unit; /* 4 for the data counters (octets / 4), 0 when not bytes */
    enum topo_ibc_group group;
    bool is_error;       /* any increase is worth an alarm */
    const char *meaning; /* one or two sentences for the glossary */
    const char *action;  /* one line: what to check when it rises */
};

extern const struct topo_ibcounter topo_ibcounters[];
extern const int topo_ibcounters_n;

/* The entry for a sysfs file name, or NULL. O(log n). */
const struct topo_ibcounter *topo_ibc_find(const char *name);

/* Largest value of a width-bit counter: 2^width - 1 (UINT64_MAX for 64); 0 for width 0
 * or above 64 (unknown). */
uint64_t topo_ibc_max(int width);

/* Is v the ceiling a saturating counter stops at? With ext_width set, either ceiling
 * counts, since the file does not say which attribute the kernel read. */
bool topo_ibc_saturated(const struct topo_ibcounter *c, uint64_t v);

/* Value in the counter's natural unit converted to bytes (data counters), else v. */
uint64_t topo_ibc_bytes(const struct topo_ibcounter *c, uint64_t v);

const char *topo_ibc_group_str(enum topo_ibc_group g); /* "traffic", "congestion", ... */
const char *topo_ibc_unit_str(enum topo_ibc_unit u);   /* "packets", "4-byte words", ... */

#endif
