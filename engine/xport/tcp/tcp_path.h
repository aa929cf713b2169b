/* tcp_path: the peer's side of a run's path evidence, over the control channel. Agent side:
 * "path.counters" samples the agent host's counters for the netdev the session's own
 * address is on (qdisc backlog and drops, netdev and /proc/net/snmp counters) with
 * engine/counters/ every PATH_SAMPLE_MS from "start" until the session ends, and answers
 * "report" with the deltas (peaks for gauges) since the last report; "path.ttl" sends one
 * UDP datagram to a port the client names on its own address, so the client reads the TTL
 * it arrived with (IP_RECVTTL, ip(7); IPV6_RECVHOPLIMIT, ipv6(7), RFC 3542), and says the
 * TTL it starts at (net.ipv4.ip_default_ttl). Client side: the three requests. */
#ifndef TCP_PATH_H
#define TCP_PATH_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"

#define TCP_PATH_SAMPLE_MS 50

extern const struct agent_handler tcp_path_counters_handler; /* "path.counters" */
extern const struct agent_handler tcp_path_ttl_handler;      /* "path.ttl" */

/* Start the peer's sampling: its netdev and its --site label ("" when it has none). */
int tcp_path_counters_start(struct channel_conn *c, char *netdev, size_t nlen, char *site,
                            size_t slen, struct ft_err *err);
/* The peer's counters since the last report (or the start), as counters_set_report_json
 * with deltas writes them; *report is the caller's. */
int tcp_path_counters_report(struct channel_conn *c, cJSON **report, struct ft_err *err);
/* The TTL (IPv6: hop limit) of a datagram the peer sent over the path, and the peer's
 * initial TTL (0 when it did not say); -ETIMEDOUT when none came within timeout_ms. */
int tcp_path_ttl_probe(struct channel_conn *c, int timeout_ms, int *ttl, int *ttl_initial,
                       struct ft_err *err);

#endif
