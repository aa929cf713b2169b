/* fuzz_ctl: what the control-channel targets share: a fixed key (so a finding replays), a
 * socketpair carrying the fuzzer's bytes, the fuzzer's input cut into frames, and checks
 * that whatever one side sent the other is well-formed. */
#ifndef FUZZ_CTL_H
#define FUZZ_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/peer/channel.h"

#define FUZZ_CTL_MAX_INPUT 65536 /* bytes of an input used (they fit a socket's buffer) */

/* Key n (0, 1, ...) of the targets' agents: fixed, derived from n. */
void fuzz_ctl_key(int n, struct channel_key *k);
/* A connected AF_UNIX stream pair; both ends blocking, close-on-exec. */
void fuzz_ctl_pair(int sv[2]);
/* Write all of data to fd (it must fit the socket's buffer: at most FUZZ_CTL_MAX_INPUT). */
void fuzz_ctl_write(int fd, const void *data, size_t size);

/* The input as frames for one side to send: each "u8 type | u16 length (big-endian) |
 * payload" (a short last one takes what is left). Returns the next frame's type and sets
 * *p / *n, or -1 at the end. */
struct fuzz_frames {
    const uint8_t *data;
    size_t size, off;
};
int fuzz_ctl_next(struct fuzz_frames *f, const uint8_t **p, size_t *n);

/* Read what is waiting on fd (without blocking) and check it is a sequence of handshake
 * frames an agent may send: each within CHANNEL_MAX_HANDSHAKE_FRAME, type HELLO, AUTH or ERROR,
 * an ERROR's payload a JSON object with a string "code" and a non-empty "message". */
void fuzz_ctl_check_agent_output(int fd);

#endif
