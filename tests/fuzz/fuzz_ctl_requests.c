/* fuzz_ctl_requests: requests after authentication, to every request type of every
 * transport (`fabtop serve`'s handlers: hello, info, echo, bye, tcp.*, verbs.*, nccl.*),
 * through a real agent (agent_start on 127.0.0.1) and a real session (channel_connect with the
 * agent's key), so each request is MAC'd as a client sends it and reaches the handlers, not
 * only the MAC check. The input is one request payload per line (raw bytes, JSON or not),
 * at most 16, sent in one session; each answer is read and checked: a response is a JSON
 * object with its "type", "id" and "ok", a refusal has an errno and a message; an ERROR
 * frame ends the session. The session ends before the next input (its state, threads and
 * sockets gone). Side effects stay here: the agent listens on loopback only, so tcp.open
 * listens there; CUDA and NCCL are not loaded (nccl.open refuses after checking its
 * request); and if this host has an RDMA device, the verbs handlers are left out rather
 * than let queue pairs connect where the fuzzer says. */
#include <infiniband/verbs.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/ft_err.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/xport/xport.h"
#include "fuzz_ctl.h"
#include "fuzz_util.h"

#define MAX_REQUESTS 16

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct agent *agent;
static struct channel_key key;
static char hp[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("FABTOP_CUDART", "/nonexistent/fuzz/libcudart.so", 1);
    setenv("FABTOP_NCCL", "/nonexistent/fuzz/libnccl.so", 1);
    int ndev = 0;
    struct ibv_device **devs = ibv_get_device_list(&ndev);
    if (devs)
        ibv_free_device_list(devs);
    int nh = 0;
    const struct agent_handler *const *all = xport_agent_handlers(&nh);
    static const struct agent_handler *handlers[64];
    int n = 0;
    for (int i = 0; i < nh && n < 63; i++)
        if (ndev == 0 || strncmp(all[i]->type, "verbs.", 6))
            handlers[n++] = all[i];
    if (ndev > 0)
        fprintf(stderr, "fuzz_ctl_requests: %d RDMA device(s) here: verbs.* left out\n", ndev);
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1");
    cfg.port = 0;
    fuzz_ctl_key(0, &key);
    cfg.key = key;
    cfg.allow_nccl = true; /* past the permission, into nccl.*'s own checks */
    cfg.max_duration_s = 5;
    struct ft_err err = {0};
    fuzz_require(agent_start(&cfg, handlers, n, &agent, &err) == 0, "agent_start: %s", err.msg);
    snprintf(hp, sizeof(hp), "127.0.0.1:%u", agent_port(agent));
    return 0;
}

/* One answer: a well-formed response, or false when the session is over. */
static bool answer(struct channel_conn *c)
{
    int type = 0;
    char *payload = NULL;
    size_t len = 0;
    struct ft_err err = {0};
    int rc = channel_recv(c, &type, &payload, &len, 5000, 5000, &err);
    if (rc < 0) {
        fuzz_require(rc != -ETIMEDOUT, "no answer within 5 s");
        fuzz_require(rc != -EBADMSG, "a frame from the agent failed its MAC: %s", err.msg);
        return false;
    }
    cJSON *j = cJSON_ParseWithLength(payload, len);
    if (type == CHANNEL_T_ERROR) {
        const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "message"));
        fuzz_require(msg && msg[0], "the agent ended the session without a message");
    } else {
        fuzz_require(type == CHANNEL_T_RESPONSE, "the agent answered with frame type %d", type);
        fuzz_require(cJSON_IsObject(j), "a response that is not a JSON object");
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(j, "ok");
        fuzz_require(cJSON_IsBool(ok) && cJSON_GetObjectItemCaseSensitive(j, "id") &&
                         cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "type")),
                     "a response without type, id or ok");
        if (cJSON_IsFalse(ok)) {
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "errno");
            const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "error"));
            fuzz_require(cJSON_IsNumber(e) && e->valueint > 0 && e->valueint < 4096 && m && m[0],
                         "a refusal without errno or message");
        }
    }
    cJSON_Delete(j);
    free(payload);
    return type == CHANNEL_T_RESPONSE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct channel_conn *c = NULL;
    struct ft_err err = {0};
    fuzz_require(channel_connect(hp, 0, &key, 5000, &c, &err) == 0, "channel_connect: %s", err.msg);
    size_t off = 0;
    for (int i = 0; i < MAX_REQUESTS && off < size; i++) {
        const uint8_t *nl = memchr(data + off, '\n', size - off);
        size_t n = nl ? (size_t)(nl - (data + off)) : size - off;
        if (n > CHANNEL_MAX_PAYLOAD)
            n = CHANNEL_MAX_PAYLOAD;
        if (channel_send(c, CHANNEL_T_REQUEST, data + off, n, NULL) < 0 || !answer(c))
            break;
        off += n + 1;
    }
    channel_close(c);
    /* The session (its flows, threads, sockets) is over before the next input. */
    for (int i = 0; i < 500 && agent_sessions(agent) > 0; i++) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    fuzz_require(agent_sessions(agent) == 0, "a session did not end within 1 s of its client");
    return 0;
}
