/* counters: congestion, loss, error and traffic counters from every source a node has
 * (IB PortCounters, RDMA hw_counters, netdev statistics, ethtool statistics, qdisc
 * statistics, /proc/net/snmp and netstat), read with their real semantics: widths,
 * saturating vs wrapping counters, resets, gauges, 4-byte words shown as bytes, and n/a
 * (never 0) for what cannot be read. Rates per second; deltas since a mark (a test's start).
 * Reads go through files kept open (pread) so sampling is cheap.
 *
 * Errors: functions return 0 or -errno and fill an optional struct ft_err; nothing here
 * prints. A set is used by one thread at a time (the caller locks if it shares one). */
#ifndef COUNTERS_H
#define COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/counters_value.h"
#include "common/ft_err.h"

struct topo_model;
struct mix;
struct mix_flow;

struct counters_opts {
    const char *sys_root;  /* "/" or a captured tree holding sys/ (NULL: "/") */
    const char *proc_root; /* "/" or a captured tree holding proc/ (NULL: "/") */
    /* Which objects: NULL = everything found. Otherwise "mlx5_0:1" (or "mlx5_0/1"), an RDMA
     * device "mlx5_0" (all its ports), or a netdev "eth0". Each must exist (-ENOENT). */
    const char *const *only;
    int nonly;
    bool with_snmp;       /* include /proc/net/snmp + netstat */
    bool with_qdisc;      /* include qdisc statistics of the selected netdevs (live only) */
    bool with_ethtool;    /* include ETHTOOL_GSTATS of the selected netdevs (live only) */
    double slow_period_s; /* firmware-backed counters (IB counters/, hardware hw_counters,
                           * mlx5 ethtool) are read at most this often (<= 0: 1 s); the
                           * rest at every sample */
    /* Clock for rates (CLOCK_MONOTONIC ns when NULL); tests inject their own. */
    uint64_t (*clock_ns)(void *arg);
    void *clock_arg;
};

/* Width and behaviour of one known counter: the semantics table (engine/counters/counters_sem.c; IB
 * PortCounters come from topology/topo_ibcounters.h). */
struct counters_info {
    const char *name; /* exact name; '#' stands for a number ("rx_prio#_pause") */
    enum counters_source source;
    const char *provider; /* hw_counters: "mlx5"/"rxe"; snmp: "Tcp", "TcpExt", ...; NULL any */
    uint8_t width;        /* bits, 0 unknown */
    uint8_t ext_width;    /* IB: also this width (PortCountersExtended under the same name) */
    enum counters_behaviour behaviour;
    enum counters_kind kind;
    const char *unit;
    uint8_t scale; /* unit per raw count: 4 for 4-byte words (then unit is "bytes") */
    enum counters_group group;
    bool error_like;
    const char *meaning;
    bool setting; /* a configuration value (IP forwarding, TTL, RTO bounds): never "moved" */
};

/* Semantics of a counter: true and *out from the table when known; otherwise false and
 * *out guessed from the name (group, unit; a counter of unknown width). provider as in
 * counters_info ("mlx5", "rxe", the driver for ethtool, the snmp line prefix). */
bool counters_info_get(enum counters_source src, const char *provider, const char *name,
                       struct counters_info *out);
/* The table of known counters other than the IB PortCounters (for the glossary). */
const struct counters_info *counters_table(int *n);

struct counters_set;

int counters_set_open(const struct counters_opts *o, struct counters_set **out, struct ft_err *err);
/* Read every counter now (slow ones only when due). 0, or -errno if nothing is readable. */
int counters_set_sample(struct counters_set *s);
/* Read every counter now, slow ones included (before a mark and at a phase's end). */
int counters_set_sample_all(struct counters_set *s);
/* Remember the current values as the start for deltas (a test or a phase starts). */
void counters_set_mark(struct counters_set *s);
/* The counters as last sampled; the array stays valid until the next sample or close. */
const struct counters_value *counters_set_values(const struct counters_set *s, int *n);
/* Worth showing: known counters, and unknown ones (ethtool per-queue, TcpExt...) that moved. */
bool counters_value_interesting(const struct counters_value *v);
/* A JSON list of the counters with value, rate, delta and flags (n/a as null). With
 * deltas_only: delta (peak for gauges) and flags, without value and rate. */
cJSON *counters_set_json(const struct counters_set *s, bool deltas_only);
/* The list wrapped with its scope: {"scope", "objects", "notes", "counters"}; with
 * deltas_only the unknown counters that did not move are left out. */
cJSON *counters_set_report_json(const struct counters_set *s, bool deltas_only);
/* Objects the set reads ("mlx5_0/1", "eth0", ...), and what could not be read and why. */
int counters_set_objects(const struct counters_set *s, const char *const **names);
int counters_set_notes(const struct counters_set *s, const char *const **notes);
void counters_set_close(struct counters_set *s);

/* A set whose readings the caller supplies (counters read by other means: an RDMA counter
 * over netlink, engine/counters/counters_qp.h), with the same semantics as the rest. scope replaces
 * the port-wide scope of counters_set_report_json(). Sample it with counters_set_sample_all() after
 * putting this round's readings: a counter given none is n/a for that sample. */
struct counters_set *counters_set_new_fed(const char *scope);
/* Add a counter (its semantics from the table for src and provider); returns its index. */
int counters_set_fed_add(struct counters_set *s, enum counters_source src, const char *provider,
                         const char *object, const char *name);
void counters_set_fed_put(struct counters_set *s, int idx, uint64_t raw);
/* Describe the set: an object it reads, a note on what could not be read and why. */
void counters_set_add_object(struct counters_set *s, const char *desc);
void counters_set_add_note(struct counters_set *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Counters for the ports and netdevs a test uses (from the topology: the RDMA ports on
 * those netdevs and the netdevs of those ports), labelled port-wide since they include
 * everyone else's traffic. base gives roots and sources (NULL: live, with snmp, qdisc and
 * ethtool). */
int counters_set_for_test(const struct counters_opts *base, const struct topo_model *m,
                          const char *const *netdevs, int nnetdevs, const char *const *rdma_ports,
                          int nports, struct counters_set **out, struct ft_err *err);
/* The same for a mix: each TCP flow's netdev is the one holding its local address (its
 * local_netdev, its local_ip, or the address the route to its peer leaves from: lo for
 * loopback); each flow's local_rdma port. peer_override as for the runner (--peer).
 * The verbs transport binds the test's own queue pairs to an RDMA counter of their own
 * (`rdma statistic qp bind`, RDMA_NLDEV_CMD_STAT_SET: engine/counters/counters_qp.h) and reads it
 * per flow; these port-wide counters stay as the context around it. -ENOENT when every flow is
 * simulated (transport "sim": nothing on this host to watch). */
/* port_of (may be NULL) gives the RDMA port and netdev a flow will use when its mix names no
 * RDMA port, chosen as its transport will choose them (xport_local_port, engine/xport/xport.h):
 * 0 with them filled (both empty: by the route to the peer, as for TCP), 1 when the transport
 * does not say, or -errno with the reason. */
typedef int (*counters_port_fn)(const struct mix_flow *f, char *rdma, size_t rlen, char *netdev,
                                size_t nlen, struct ft_err *err);
int counters_set_for_mix(const struct mix *mix, const char *peer_override, counters_port_fn port_of,
                         const struct topo_model *m, struct counters_set **out, struct ft_err *err);
/* The netdev that holds local_ip, or else the address a socket connected to peer_host
 * would use ("loopback" -> "lo"). peer_host may carry ":PORT" or be "[v6]:PORT". */
int counters_route_netdev(const char *peer_host, const char *local_ip, char *ifname, int len,
                          struct ft_err *err);

const char *counters_source_str(enum counters_source s);
const char *counters_group_str(enum counters_group g);
const char *counters_kind_str(enum counters_kind k);
const char *counters_behaviour_str(enum counters_behaviour b);
/* The glossary text for a counter name (what it counts, what a rising value means). */
const char *counters_meaning(const char *name);

#endif
