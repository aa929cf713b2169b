/* tcp_drill: one request/response lane of a fault drill (`fabtop drill`, engine/run/drill.h)
 * over the TCP transport's wire format: tcp.open on a control session, one data connection
 * with the session's token, then one request at a time, each with its own deadline, so a
 * drill sees every request's outcome (answered, failed with an error, abandoned at its
 * deadline) and can reconnect after a failure. */
#ifndef TCP_DRILL_H
#define TCP_DRILL_H

#include <stdint.h>

#include "common/ft_err.h"
#include "engine/flow/mix.h"
#include "engine/peer/channel.h"

struct tcp_drill_lane;

/* Open a lane on ctl (an authenticated session, still the caller's): op pingpong or rr,
 * requests of up to size bytes (16 B to 1 GiB), response resp bytes (0: the same), TCP_USER_TIMEOUT
 * user_timeout_s on the data connection; timeout_ms for the request and the connection. data_host:
 * the data connection goes to this address of the agent (another link than the control
 * connection's: the agent listens there and accepts only this host's address on that path); NULL:
 * to the control connection's host. 0 or -errno with the message. */
int tcp_drill_open(struct channel_conn *ctl, const char *data_host, enum mix_op op, uint64_t size,
                   uint64_t resp, double user_timeout_s, int timeout_ms,
                   struct tcp_drill_lane **out, struct ft_err *err);
/* One request of size bytes (0: the lane's size; at most it, which is the largest a lane of
 * a size distribution opens with) and its whole response within timeout_ms: 0 (round trip in
 * *rtt_ns), -ETIMEDOUT when the deadline passed first (the request is abandoned: the lane
 * must be closed), or the connection's -errno (-ENODATA: the peer closed it). A ping-pong's
 * answer is as large as its request; an rr's is the lane's response size. */
int tcp_drill_request(struct tcp_drill_lane *l, uint64_t size, int timeout_ms, uint64_t *rtt_ns,
                      struct ft_err *err);
/* A load stream beside the drilled lanes (a mix's background flow): op stream in direction
 * dir (tx: this side sends, rx: the agent does), chunk bytes at a time, at rate_gbps (0:
 * unpaced; rx: the agent paces). 0 or -errno with the message. */
int tcp_drill_stream_open(struct channel_conn *ctl, const char *data_host, enum mix_dir dir,
                          uint64_t chunk, double rate_gbps, double user_timeout_s, int timeout_ms,
                          struct tcp_drill_lane **out, struct ft_err *err);
/* Move a stream's bytes for ms milliseconds (*bytes: how many): 0, or the connection's -errno
 * (-ENODATA: the peer closed it). */
int tcp_drill_stream(struct tcp_drill_lane *l, int ms, uint64_t *bytes, struct ft_err *err);
void tcp_drill_close(struct tcp_drill_lane *l);

#endif
