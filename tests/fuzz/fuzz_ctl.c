/* fuzz_ctl: helpers of the control-channel targets (see fuzz_ctl.h). */
#include "fuzz_ctl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "fuzz_util.h"

void fuzz_ctl_key(int n, struct channel_key *k)
{
    char seed[32];
    snprintf(seed, sizeof(seed), "fabtop fuzz key %d", n);
    crypto_generichash(k->k, sizeof(k->k), (const unsigned char *)seed, strlen(seed), NULL, 0);
}

void fuzz_ctl_pair(int sv[2])
{
    fuzz_require(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair: %s",
                 strerror(errno));
    int buf = 4 * FUZZ_CTL_MAX_INPUT;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
}

void fuzz_ctl_write(int fd, const void *data, size_t size)
{
    const char *p = data;
    while (size) {
        ssize_t w = send(fd, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
        fuzz_require(w > 0, "the fuzz input does not fit the socket: %s", strerror(errno));
        p += w;
        size -= (size_t)w;
    }
}

int fuzz_ctl_next(struct fuzz_frames *f, const uint8_t **p, size_t *n)
{
    if (f->off >= f->size)
        return -1;
    int type = f->data[f->off++];
    size_t len = 0;
    if (f->off + 2 <= f->size) {
        len = (size_t)f->data[f->off] << 8 | f->data[f->off + 1];
        f->off += 2;
    }
    if (len > f->size - f->off)
        len = f->size - f->off;
    *p = f->data + f->off;
    *n = len;
    f->off += len;
    return type;
}

void fuzz_ctl_check_agent_output(int fd)
{
    static unsigned char buf[1 << 16];
    size_t n = 0;
    for (;;) {
        ssize_t r = recv(fd, buf + n, sizeof(buf) - n, MSG_DONTWAIT);
        if (r <= 0)
            break;
        n += (size_t)r;
        fuzz_require(n < sizeof(buf), "the agent sent more than %zu bytes in a handshake",
                     sizeof(buf));
    }
    for (size_t off = 0; off < n;) {
        fuzz_require(n - off >= 5, "the agent sent a cut frame header");
        uint32_t len = (uint32_t)buf[off] << 24 | (uint32_t)buf[off + 1] << 16 |
                       (uint32_t)buf[off + 2] << 8 | buf[off + 3];
        int type = buf[off + 4];
        fuzz_require(len >= 1 && len <= CHANNEL_MAX_HANDSHAKE_FRAME && off + 4 + len <= n,
                     "the agent sent a frame of %u bytes", len);
        fuzz_require(type == CHANNEL_T_HELLO || type == CHANNEL_T_AUTH || type == CHANNEL_T_ERROR,
                     "the agent sent frame type %d in a handshake", type);
        if (type == CHANNEL_T_ERROR) {
            cJSON *j = cJSON_ParseWithLength((const char *)buf + off + 5, len - 1);
            const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "code"));
            const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "message"));
            fuzz_require(code && msg && msg[0], "the agent's refusal has no code or message");
            cJSON_Delete(j);
        }
        off += 4 + len;
    }
}
