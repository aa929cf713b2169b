/* rrcheck: the nonce bookkeeping of the return-routability check (see rrcheck.h). */
#include "engine/peer/rrcheck.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

int64_t rrcheck_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int rrcheck_init(struct rrcheck_check *c, int n, struct ft_err *err)
{
    memset(c, 0, sizeof(*c));
    if (n < 1 || n > RRCHECK_MAX)
        return ft_err_set(err, -EINVAL, "return-routability check of %d nonces (1 to %d)", n,
                          RRCHECK_MAX);
    if (sodium_init() < 0)
        return ft_err_set(err, -ENOSYS, "libsodium failed to initialise");
    c->n = n;
    for (int i = 0; i < n; i++)
        randombytes_buf(c->nonce[i], RRCHECK_NONCE_BYTES);
    c->state = RRCHECK_READY;
    return 0;
}

void rrcheck_sent(struct rrcheck_check *c, int64_t now_ms)
{
    c->state = RRCHECK_SENT;
    c->sent_ms = now_ms;
}

int64_t rrcheck_left_ms(const struct rrcheck_check *c, int64_t now_ms)
{
    if (c->state != RRCHECK_SENT)
        return -1;
    int64_t left = c->sent_ms + RRCHECK_ECHO_MS - now_ms;
    return left > 0 ? left : 0;
}

int rrcheck_verify(struct rrcheck_check *c, const cJSON *echo, int64_t now_ms, const char *what,
                   struct ft_err *err)
{
    if (c->state != RRCHECK_SENT)
        return ft_err_set(err, -EPROTO, "%s: no nonce is waiting for its echo (%s)", what,
                          c->state == RRCHECK_READY    ? "none was sent yet"
                          : c->state == RRCHECK_PROVEN ? "already echoed"
                                                       : "the check failed before");
    c->state = RRCHECK_FAILED; /* one try */
    if (now_ms - c->sent_ms > RRCHECK_ECHO_MS)
        return ft_err_set(err, -ETIMEDOUT,
                          "%s: the echo came %lld ms after the nonces, more than %d ms", what,
                          (long long)(now_ms - c->sent_ms), RRCHECK_ECHO_MS);
    if (!cJSON_IsArray(echo) || cJSON_GetArraySize(echo) != c->n)
        return ft_err_set(err, -EINVAL, "%s: expected %d nonce%s as hex", what, c->n,
                          c->n == 1 ? "" : "s");
    int bad = -1;
    for (int i = 0; i < c->n; i++) {
        const cJSON *h = cJSON_GetArrayItem(echo, i);
        unsigned char got[RRCHECK_NONCE_BYTES];
        size_t len = 0;
        if (!cJSON_IsString(h) || strlen(h->valuestring) != 2 * RRCHECK_NONCE_BYTES ||
            sodium_hex2bin(got, sizeof(got), h->valuestring, 2 * RRCHECK_NONCE_BYTES, NULL, &len,
                           NULL) != 0 ||
            len != RRCHECK_NONCE_BYTES)
            return ft_err_set(err, -EINVAL, "%s: nonce %d is not %d bytes of hex", what, i,
                              RRCHECK_NONCE_BYTES);
        if (sodium_memcmp(got, c->nonce[i], RRCHECK_NONCE_BYTES) != 0 && bad < 0)
            bad = i;
    }
    if (bad >= 0)
        return ft_err_set(err, -EACCES,
                          "%s: the nonce of queue pair %d differs from the one the agent wrote "
                          "over it",
                          what, bad);
    c->state = RRCHECK_PROVEN;
    return 0;
}

cJSON *rrcheck_echo_json(const unsigned char (*nonce)[RRCHECK_NONCE_BYTES], int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        char hex[2 * RRCHECK_NONCE_BYTES + 1];
        sodium_bin2hex(hex, sizeof(hex), nonce[i], RRCHECK_NONCE_BYTES);
        cJSON_AddItemToArray(a, cJSON_CreateString(hex));
    }
    return a;
}
