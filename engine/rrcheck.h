/* rrcheck: return routability of a transport's data path. Before an agent sends test data
 * over a queue pair the client pointed it at, it writes a random nonce over that queue pair
 * and the client must echo it on the authenticated control channel within RR_ECHO_MS; only
 * a client that receives at that address can. This keeps the bookkeeping (nonces, the
 * deadline, a constant-time comparison, one try) apart from any device. */
#ifndef RRCHECK_H
#define RRCHECK_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"

#define RR_NONCE_BYTES 32
#define RR_MAX         64   /* nonces (queue pairs) per check */
#define RR_ECHO_MS     1000 /* from the nonces' sending to the echo */

enum rr_state { RR_READY, RR_SENT, RR_PROVEN, RR_FAILED };

struct rr_check {
    enum rr_state state;
    int n;
    unsigned char nonce[RR_MAX][RR_NONCE_BYTES];
    int64_t sent_ms; /* CLOCK_MONOTONIC ms */
};

/* n (1 to RR_MAX) fresh random nonces, not yet sent. */
int rr_init(struct rr_check *c, int n, struct ft_err *err);
/* The nonces went out now (their deadline starts). */
void rr_sent(struct rr_check *c, int64_t now_ms);
/* ms left for the echo (0 when past); -1 when not waiting for one. */
int64_t rr_left_ms(const struct rr_check *c, int64_t now_ms);
/* The client's echo: an array of n hex strings. 0 (proven; once only), or -ETIMEDOUT late,
 * -EACCES a nonce differs, -EINVAL malformed, -EPROTO nothing was sent or the check is
 * already over; what names the request in err. Any failure ends the check (RR_FAILED). */
int rr_verify(struct rr_check *c, const cJSON *echo, int64_t now_ms, const char *what,
              struct ft_err *err);
/* Client side: the echo of n nonces read from where the agent wrote them. */
cJSON *rr_echo_json(const unsigned char (*nonce)[RR_NONCE_BYTES], int n);
/* Monotonic ms. */
int64_t rr_now_ms(void);

#endif
