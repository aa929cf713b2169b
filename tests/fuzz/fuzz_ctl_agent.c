/* fuzz_ctl_agent: the agent's side of the control channel's handshake (channel_accept, as
 * `fabtop serve` runs it for every connection), the fuzzer playing the client: its bytes are
 * all the client sends, then the client's side closes. Properties: no client gets in or gets
 * an early proof accepted without the key (the fuzzer cannot make a proof), every failure
 * has a message, and what the agent sends back is well-formed frames (fuzz_ctl.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/ft_err.h"
#include "engine/peer/channel.h"
#include "fuzz_ctl.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int hello_cb(void *arg, int key_index, const unsigned char *nonce, int *timeout_ms,
                    struct ft_err *why)
{
    (void)arg;
    (void)timeout_ms;
    fuzz_require(key_index == -1, "an early proof verified with key %d", key_index);
    /* Now and then the agent is under pressure, so that path runs too. */
    if (nonce[0] == 0xbb)
        return ft_err_set(why, -EAGAIN, "busy: fuzz pressure");
    return 0;
}

static int admit_cb(void *arg, int key_index, struct ft_err *why)
{
    (void)arg;
    (void)why;
    fuzz_require(0, "a client without the key reached admission (key %d)", key_index);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct channel_key keys[2];
    if (!keys[0].k[0] && !keys[0].k[1]) {
        fuzz_ctl_key(0, &keys[0]);
        fuzz_ctl_key(1, &keys[1]);
    }
    if (size > FUZZ_CTL_MAX_INPUT)
        size = FUZZ_CTL_MAX_INPUT;
    int sv[2];
    fuzz_ctl_pair(sv);
    fuzz_ctl_write(sv[1], data, size);
    shutdown(sv[1], SHUT_WR);
    struct channel_accept_opts o = {.timeout_ms = 2000,
                                    .hello_timeout_ms = 1000,
                                    .cancel_fd = -1,
                                    .hello = hello_cb,
                                    .admit = admit_cb,
                                    .busy_retry_ms = 100};
    struct channel_conn *c = NULL;
    struct ft_err err = {0};
    int rc = channel_accept(sv[0], &o, keys, 2, &c, &err);
    fuzz_require(rc < 0 && !c, "channel_accept admitted a client without the key");
    fuzz_require(err.msg[0] != '\0', "channel_accept failed (%d) without a message", rc);
    fuzz_ctl_check_agent_output(sv[1]);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
