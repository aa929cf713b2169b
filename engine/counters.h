/* counters: congestion, loss, error and traffic counters from every source a node has
 * (IB PortCounters, RDMA hw_counters, netdev statistics, ethtool statistics, qdisc
 * statistics, /proc/net/snmp and netstat), read with their real semantics: widths,
 * saturating vs wrapping counters, resets, gauges, 4-byte words shown as bytes, and n/a
 * (never 0) for what cannot be read. Rates per second; deltas since a mark (a test's start).
 * Reads go through files kept open (pread) so sampling is cheap. */
#ifndef COUNTERS_H
#define COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"

struct topo_model;

enum ctr_source {
    CTR_SRC_IB = 0,  /* /sys/class/infiniband/DEV/ports/N/counters (IB PortCounters) */
    CTR_SRC_HW,      /* /sys/class/infiniband/DEV/ports/N/hw_counters (mlx5, rxe, ...) */
    CTR_SRC_NETDEV,  /* /sys/class/net/IF/statistics */
    CTR_SRC_ETHTOOL, /* ETHTOOL_GSTATS (PFC pause per priority, discards, ...) */
    CTR_SRC_QDISC,   /* qdisc statistics via rtnetlink (backlog, drops, overlimits) */
    CTR_SRC_SNMP,    /* /proc/net/snmp and /proc/net/netstat (TCP, IP, UDP ...) */
    CTR_SRC_COUNT
};

enum ctr_group { CTR_TRAFFIC = 0, CTR_CONGESTION, CTR_LOSS, CTR_ERRORS, CTR_GROUP_COUNT };

enum ctr_kind {
    CTR_COUNTER = 0, /* only grows (until it saturates, wraps or is reset) */
    CTR_GAUGE,       /* a level (qdisc backlog, current connections): shown as a value */
};

enum {
    CTR_V_VALUE = 1u << 0, /* value was read this sample */
    CTR_V_RATE = 1u << 1,  /* rate is known (two good samples in a row, no reset) */
    CTR_V_DELTA = 1u << 2, /* delta since the mark is known */
};

/* One counter as last sampled. */
struct ctr_value {
    enum ctr_source source;
    char object[48]; /* "mlx5_0/1", "eth0", "eth0 qdisc 1:10", "Tcp" */
    char name[64];   /* the real name: "port_xmit_wait", "rx_prio3_pause", ... */
    enum ctr_group group;
    enum ctr_kind kind;
    const char *unit; /* "bytes", "packets", "events", "ticks", "us", ... */
    unsigned valid;   /* CTR_V_* */
    bool saturated;   /* stuck at its maximum: the true count is unknown */
    bool reset;       /* went down since the last sample (someone cleared it) */
    bool error_like;  /* any increase is bad (errors, drops, discards) */
    double value;     /* current value in unit (4-byte words already x4) */
    double rate;      /* per second over the last interval, in unit/s */
    double delta;     /* growth since ctr_set_mark, in unit (resets handled) */
};

struct ctr_opts {
    const char *sys_root;  /* "/" or a captured tree holding sys/ */
    const char *proc_root; /* "/" or a captured tree holding proc/ */
    /* Which objects: NULL = everything found. Otherwise "mlx5_0:1", "eth0", "veth0". */
    const char *const *only;
    int nonly;
    bool with_snmp;       /* include /proc/net/snmp + netstat */
    bool with_qdisc;      /* include qdisc statistics of the selected netdevs */
    bool with_ethtool;    /* include ETHTOOL_GSTATS of the selected netdevs */
    double slow_period_s; /* firmware-backed counters (mlx5 counters/) are read at most
                           * this often (default 1 s); the rest at every sample */
};

struct ctr_set;

int ctr_set_open(const struct ctr_opts *o, struct ctr_set **out, struct ft_err *err);
/* Read every counter now (slow ones only when due). 0, or -errno if nothing is readable. */
int ctr_set_sample(struct ctr_set *s);
/* Remember the current values as the start for deltas (a test or a phase starts). */
void ctr_set_mark(struct ctr_set *s);
/* The counters as last sampled; the array stays valid until the next sample or close. */
const struct ctr_value *ctr_set_values(const struct ctr_set *s, int *n);
/* A JSON list of the counters with value, rate, delta and flags (n/a as null). */
cJSON *ctr_set_json(const struct ctr_set *s, bool deltas_only);
void ctr_set_close(struct ctr_set *s);

/* Counters for the ports and netdevs a test uses (from the topology), labelled port-wide. */
int ctr_set_for_test(const struct topo_model *m, const char *const *netdevs, int nnetdevs,
                     const char *const *rdma_ports, int nports, struct ctr_set **out,
                     struct ft_err *err);

const char *ctr_source_str(enum ctr_source s);
const char *ctr_group_str(enum ctr_group g);
/* The glossary text for a counter name (what it counts, what a rising value means). */
const char *ctr_meaning(const char *name);

#endif
