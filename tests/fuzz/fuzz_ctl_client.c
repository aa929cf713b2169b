/* fuzz_ctl_client: the client's side of the control channel (channel_client_fd: the handshake
 * and the hello request, as `fabtop run` connects to a peer agent; then requests), the
 * fuzzer playing the agent. The first byte picks how:
 *   even: the rest is all the agent sends, unauthenticated (hellos, refusals, proofs);
 *   odd:  a real agent (channel_accept with the key, on a thread) completes the handshake and
 *         then sends the rest as frames ("u8 type | u16 length | payload", fuzz_ctl.h),
 *         each MAC'd with the session key, so they reach the client's reading of
 *         responses and refusals rather than only its MAC check.
 * Properties: the client never completes a handshake against a fuzzer without the key,
 * every failure has a message, a retry hint comes only with "busy", and a session that
 * opened answers requests or fails with a message. */
#include <pthread.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/ft_err.h"
#include "engine/peer/channel.h"
#include "fuzz_ctl.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct channel_key key;

struct agent_side {
    int fd;
    const uint8_t *data;
    size_t size;
    bool authenticated;
};

/* The agent: the real handshake, then the fuzzer's frames, MAC'd; then it hangs up. */
static void *agent_main(void *arg)
{
    struct agent_side *a = arg;
    struct channel_accept_opts o = {.timeout_ms = 2000, .cancel_fd = -1};
    struct channel_conn *c = NULL;
    struct ft_err err = {0};
    if (channel_accept(a->fd, &o, &key, 1, &c, &err) == 0) {
        a->authenticated = true;
        struct fuzz_frames f = {a->data, a->size, 0};
        const uint8_t *p;
        size_t n;
        int type;
        while ((type = fuzz_ctl_next(&f, &p, &n)) >= 0)
            if (channel_send(c, type, p, n, NULL) < 0)
                break;
        channel_close(c); /* closes a->fd */
    } else {
        close(a->fd);
    }
    return NULL;
}

static void use_session(struct channel_conn *c)
{
    fuzz_require(cJSON_IsObject(channel_peer_info(c)) && channel_peer_name(c) != NULL,
                 "a session without the agent's hello reply");
    for (int i = 0; i < 3; i++) {
        cJSON *req = cJSON_CreateObject(), *resp = NULL;
        cJSON_AddStringToObject(req, "type", "echo");
        struct ft_err err = {0};
        int rc = channel_request(c, req, &resp, 500, &err);
        fuzz_require(rc == 0 ? cJSON_IsObject(resp) : err.msg[0] != '\0' && !resp,
                     "channel_request returned %d with %s", rc, resp ? "a reply" : "no message");
        cJSON_Delete(resp);
        if (rc < 0)
            break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!key.k[0] && !key.k[1])
        fuzz_ctl_key(0, &key);
    if (size < 1)
        return 0;
    bool auth = data[0] & 1;
    data++;
    size--;
    if (size > FUZZ_CTL_MAX_INPUT)
        size = FUZZ_CTL_MAX_INPUT;
    int sv[2];
    fuzz_ctl_pair(sv);
    struct agent_side a = {sv[1], data, size, false};
    pthread_t t;
    if (auth) {
        fuzz_require(pthread_create(&t, NULL, agent_main, &a) == 0, "pthread_create");
    } else {
        fuzz_ctl_write(sv[1], data, size);
        shutdown(sv[1], SHUT_WR);
    }
    struct channel_conn *c = NULL;
    struct ft_err err = {0};
    int retry = -1;
    int rc = channel_client_fd(sv[0], "fuzz-agent:7470", &key, 2000, &retry, &c, &err);
    fuzz_require(rc == 0 ? c != NULL : err.msg[0] != '\0' && !c, "channel_client_fd returned %d %s",
                 rc, c ? "with a session" : "without a message");
    fuzz_require(retry == 0 || (rc == -EBUSY && retry > 0 && retry <= 10000),
                 "retry hint %d with %d", retry, rc);
    if (rc == 0) {
        fuzz_require(auth, "a handshake completed against a fuzzer without the key");
        use_session(c);
        channel_close(c); /* closes sv[0] */
    } else {
        close(sv[0]);
    }
    if (auth)
        pthread_join(t, NULL);
    else
        close(sv[1]);
    return 0;
}
