/* path: what kind of path a run measured (same host, same leaf, same site, wide area) and
 * where its queue was (this host's qdisc, the peer's, or the path between them), as pure
 * functions of evidence a run gathers: the quiet phase's minimum round trip, the hop count
 * from a received TTL, site labels, per-end queue peaks, the transport's RTT quiet vs
 * loaded. No I/O; thresholds and their reasoning in docs/diagnosis.md ("The path's class",
 * "Where is the queue?"). */
#ifndef PATH_H
#define PATH_H

#include <stdbool.h>
#include <stddef.h>

enum path_class {
    PATH_CLASS_UNKNOWN = 0,
    PATH_CLASS_HOST, /* loopback or an address of this host */
    PATH_CLASS_LEAF, /* one L2 segment (no router): the same leaf switch or bridge */
    PATH_CLASS_SITE, /* routed, but near: within one site */
    PATH_CLASS_WAN,  /* wide area: distance, many hops, or different site labels */
};

/* Thresholds (docs/diagnosis.md says why). Round trips in microseconds. */
#define PATH_LEAF_MAX_RTT_US 500.0  /* one switch, host stacks included, quiet */
#define PATH_SITE_MAX_RTT_US 2000.0 /* 2 ms is ~200 km of fibre round trip: no campus */
#define PATH_SITE_MAX_HOPS   8      /* routers a datacentre path crosses (leaf-spine-super) */

struct path_evidence {
    bool loopback;     /* the peer is loopback or an address of this host */
    bool have_min_rtt; /* the quiet phase's minimum round trip, us */
    double min_rtt_us;
    int ttl;       /* the TTL / hop limit of a packet received from the peer; < 0: unknown */
    int same_leaf; /* 1: fabric discovery/LLDP/--groups put both on one leaf; 0: not; -1: unknown */
    const char *site_local, *site_peer; /* --site labels; NULL or "": none */
};

struct path_class_out {
    enum path_class cls;
    int hops;      /* routers crossed (from the TTL), -1 unknown */
    int ttl_init;  /* the initial TTL assumed (64, 128, 255), 0 unknown */
    char why[240]; /* the evidence that decided, in words */
};

/* Routers a packet crossed, from the TTL it arrived with: the sender started at the
 * smallest of the common initial values (64: Linux/BSD/macOS, 128: Windows, 255: network
 * gear and Solaris) not below it. -1 for a TTL out of 1-255. *init gets the value assumed. */
int path_hops_from_ttl(int ttl, int *init);
/* Classify. Load cannot move the evidence: a minimum over the quiet phase, a hop count,
 * labels. Returns 0 (out->cls may be UNKNOWN when there is no evidence). */
int path_classify(const struct path_evidence *e, struct path_class_out *out);
const char *path_class_str(enum path_class c);
/* "host" ... "wan" -> the class; PATH_CLASS_UNKNOWN for anything else. */
enum path_class path_class_parse(const char *s);
/* Tightly coupled flow classes (a mix flow's class): "tp", "moe". */
bool path_class_tight(const char *flow_class);
/* The rule's warning for a tightly coupled flow over a wide-area path, into buf. */
void path_tight_warning(const char *flow, const char *flow_class, char *buf, size_t len);

/* Where is the queue? One end's queue peaks over the loaded phase. */
struct path_end_queue {
    bool have;           /* its counters were sampled */
    const char *netdev;  /* the netdev whose qdisc held the most */
    double peak_packets; /* qdisc qlen peak, packets; < 0 unknown */
    double peak_bytes;   /* qdisc backlog peak, bytes; < 0 unknown */
    double drops;        /* qdisc drops over the phase; < 0 unknown */
};
struct path_rtt {
    bool have;
    double quiet_us, loaded_us; /* the transport's own RTT (TCP srtt median), per phase */
};
enum path_queue_where {
    PATH_QUEUE_UNKNOWN = 0, /* not enough evidence */
    PATH_QUEUE_NONE,        /* the RTT did not rise: no queue worth naming */
    PATH_QUEUE_LOCAL,       /* this host's qdisc */
    PATH_QUEUE_PEER,        /* the peer's qdisc */
    PATH_QUEUE_BETWEEN,     /* neither end: the path between them (a switch egress) */
    PATH_QUEUE_BEYOND,      /* not here, and the peer's counters are unknown */
};
/* A host "held" the queue when its qdisc peaked above this many packets, or above that
 * many full Ethernet frames' bytes: with GSO/TSO a qdisc queues super-packets (one 64 KiB
 * skb counts as one packet in qlen, net/core/dev.c validate_xmit_skb segments it later),
 * so qlen alone undercounts a host's backlog. */
#define PATH_FEW_PACKETS 8.0
#define PATH_FRAME_BYTES 1514.0
/* The RTT "rose" when loaded/quiet is at least this and the growth at least PATH_RISE_US. */
#define PATH_RISE_RATIO 3.0
#define PATH_RISE_US    100.0

struct path_verdict {
    enum path_queue_where where;
    double ratio; /* loaded / quiet RTT, NAN unknown */
    char line[400];
};
/* The verdict from both ends' queues and the RTT. Returns 0. */
int path_queue_verdict(const struct path_end_queue *local, const struct path_end_queue *peer,
                       const struct path_rtt *rtt, struct path_verdict *out);
const char *path_queue_where_str(enum path_queue_where w);

/* The median of n values (sorted in place); NAN for n == 0. */
double path_median(double *v, int n);

#endif
