/* counters_value: one counter as last sampled, with its source, group, kind, width and
 * validity: the value type that counter readers (engine/counters/), the simulated fabric
 * (engine/sim/) and the snapshots share, so that none of them needs another's code. */
#ifndef COUNTERS_VALUE_H
#define COUNTERS_VALUE_H

#include <stdbool.h>
#include <stdint.h>

enum counters_source {
    COUNTERS_SRC_IB = 0,  /* /sys/class/infiniband/DEV/ports/N/counters (IB PortCounters) */
    COUNTERS_SRC_HW,      /* /sys/class/infiniband/DEV/ports/N/hw_counters (mlx5, rxe, ...) */
    COUNTERS_SRC_NETDEV,  /* /sys/class/net/IF/statistics */
    COUNTERS_SRC_ETHTOOL, /* ETHTOOL_GSTATS (PFC pause per priority, discards, ...) */
    COUNTERS_SRC_QDISC,   /* qdisc statistics via rtnetlink (backlog, drops, overlimits) */
    COUNTERS_SRC_SNMP,    /* /proc/net/snmp and /proc/net/netstat (TCP, IP, UDP ...) */
    COUNTERS_SRC_QP,      /* an RDMA counter bound to the test's own queue pairs, read over RDMA
                           * netlink (engine/counters/counters_qp.h): hw_counters names and semantics */
    COUNTERS_SRC_COUNT
};

enum counters_group {
    COUNTERS_TRAFFIC = 0,
    COUNTERS_CONGESTION,
    COUNTERS_LOSS,
    COUNTERS_ERRORS,
    COUNTERS_GROUP_COUNT
};

enum counters_kind {
    COUNTERS_COUNTER = 0, /* only grows (until it saturates, wraps or is reset) */
    COUNTERS_GAUGE,       /* a level (qdisc backlog, current connections): shown as a value */
};

/* What a counter does at the top of its width. */
enum counters_behaviour {
    COUNTERS_WRAPS = 0,     /* modulo 2^width: a drop from the upper half is a wrap */
    COUNTERS_SATURATES,     /* stops at 2^width - 1 (IB PortCounters): the count is then unknown */
    COUNTERS_WIDTH_UNKNOWN, /* width not documented: every decrease is a reset */
};

enum {
    COUNTERS_V_VALUE = 1u << 0, /* value is known (the last read of it succeeded) */
    COUNTERS_V_RATE = 1u << 1,  /* rate is known (two good samples in a row, no reset) */
    COUNTERS_V_DELTA = 1u << 2, /* delta since the mark is known (counters only) */
    COUNTERS_V_PEAK = 1u << 3,  /* peak since the mark is known (gauges only) */
};

/* One counter as last sampled. */
struct counters_value {
    enum counters_source source;
    char object[48]; /* "mlx5_0/1", "eth0", "eth0 qdisc 1: htb", "Tcp" */
    char name[64];   /* the real name: "port_xmit_wait", "rx_prio3_pause", ... */
    enum counters_group group;
    enum counters_kind kind;
    enum counters_behaviour behaviour;
    uint8_t width;         /* bits (0 unknown); 32-or-64 IB counters show what the value proves */
    bool known;            /* in fabtop's table (else group and unit are guessed from the name) */
    bool setting;          /* a configuration value, not a measurement (counters_info.setting) */
    const char *unit;      /* "bytes", "packets", "events", "ticks", "us", ... */
    unsigned valid;        /* CTR_V_* */
    bool saturated;        /* stuck at its maximum: the true count is unknown (no rate, no delta) */
    bool reset;            /* went down since the last sample (someone cleared it) */
    bool reset_since_mark; /* a reset happened since the mark (the delta counts from it) */
    bool error_like;       /* any increase is bad (errors, drops, discards) */
    bool simulated;        /* from the fabric simulator (engine/sim/): rate is per simulated s */
    double value;          /* current value in unit (4-byte words already x4) */
    double rate;           /* per second over the last interval, in unit/s */
    double delta;          /* growth since counters_set_mark, in unit (resets and wraps handled) */
    double peak;           /* gauges: highest value seen since the mark */
};

#endif
