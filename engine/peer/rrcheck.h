/* rrcheck: return routability of a transport's data path. Before an agent sends test data
 * over a queue pair the client pointed it at, it writes a random nonce over that queue pair
 * and the client must echo it on the authenticated control channel within RRCHECK_ECHO_MS; only
 * a client that receives at that address can. This keeps the bookkeeping (nonces, the
 * deadline, a constant-time comparison, one try) apart from any device. */
#ifndef RRCHECK_H
#define RRCHECK_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"

#define RRCHECK_NONCE_BYTES 32
#define RRCHECK_MAX         64   /* nonces (queue pairs) per check */
#define RRCHECK_ECHO_MS     1000 /* from the nonces' sending to the echo */

enum rrcheck_state { RRCHECK_READY, RRCHECK_SENT, RRCHECK_PROVEN, RRCHECK_FAILED };

struct rrcheck_check {
    enum rrcheck_state state;
    int n;
    unsigned char nonce[RRCHECK_MAX][RRCHECK_NONCE_BYTES];
    int64_t sent_ms; /* CLOCK_MONOTONIC ms */
};

/* n (1 to RRCHECK_MAX) fresh random nonces, not yet sent. */
int rrcheck_init(struct rrcheck_check *c, int n, struct ft_err *err);
/* The nonces went out now (their deadline starts). */
void rrcheck_sent(struct rrcheck_check *c, int64_t now_ms);
/* ms left for the echo (0 when past); -1 when not waiting for one. */
int64_t rrcheck_left_ms(const struct rrcheck_check *c, int64_t now_ms);
/* The client's echo: an array of n hex strings. 0 (proven; once only), or -ETIMEDOUT late,
 * -EACCES a nonce differs, -EINVAL malformed, -EPROTO nothing was sent or the check is
 * already over; what names the request in err. Any failure ends the check (RRCHECK_FAILED). */
int rrcheck_verify(struct rrcheck_check *c, const cJSON *echo, int64_t now_ms, const char *what,
                   struct ft_err *err);
/* Client side: the echo of n nonces read from where the agent wrote them. */
cJSON *rrcheck_echo_json(const unsigned char (*nonce)[RRCHECK_NONCE_BYTES], int n);
/* Monotonic ms. */
int64_t rrcheck_now_ms(void);

#endif
