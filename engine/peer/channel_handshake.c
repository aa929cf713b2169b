/* channel_handshake: the pieces of the mutual PSK handshake both sides use: the
 * transcript, the proofs, the session key, the hello texts and their checks, refusals. */
#include "engine/peer/channel_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "common/jsonutil.h"

/* ---- handshake ---- */

void channel_handshake_transcript(const char *hc, size_t nhc, const char *ha, size_t nha,
                                  unsigned char t[32])
{
    unsigned char l[4];
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 32);
    channel_put_u32(l, (uint32_t)nhc);
    crypto_generichash_update(&st, l, 4);
    crypto_generichash_update(&st, (const unsigned char *)hc, nhc);
    channel_put_u32(l, (uint32_t)nha);
    crypto_generichash_update(&st, l, 4);
    crypto_generichash_update(&st, (const unsigned char *)ha, nha);
    crypto_generichash_final(&st, t, 32);
}

void channel_handshake_proof(const struct channel_key *k, const char *role, const unsigned char *nc,
                             const unsigned char *na, const unsigned char *t, unsigned char out[32])
{
    unsigned char v[2];
    channel_put_u16(v, CHANNEL_VERSION);
    crypto_auth_hmacsha512256_state st;
    crypto_auth_hmacsha512256_init(&st, k->k, sizeof(k->k));
    crypto_auth_hmacsha512256_update(&st, (const unsigned char *)CHANNEL_PROTO,
                                     sizeof(CHANNEL_PROTO));
    crypto_auth_hmacsha512256_update(&st, v, 2);
    crypto_auth_hmacsha512256_update(&st, (const unsigned char *)role, strlen(role) + 1);
    crypto_auth_hmacsha512256_update(&st, nc, CHANNEL_NONCE_BYTES);
    crypto_auth_hmacsha512256_update(&st, na, CHANNEL_NONCE_BYTES);
    crypto_auth_hmacsha512256_update(&st, t, 32);
    crypto_auth_hmacsha512256_final(&st, out);
    sodium_memzero(&st, sizeof(st));
}

void channel_handshake_session_key(const struct channel_key *k, const unsigned char *nc,
                                   const unsigned char *na, const unsigned char *t,
                                   unsigned char out[CHANNEL_KEY_BYTES])
{
    static const char label[] = "fabtop-ctl session";
    unsigned char v[2];
    channel_put_u16(v, CHANNEL_VERSION);
    crypto_generichash_state st;
    crypto_generichash_init(&st, k->k, sizeof(k->k), CHANNEL_KEY_BYTES);
    crypto_generichash_update(&st, (const unsigned char *)label, sizeof(label));
    crypto_generichash_update(&st, v, 2);
    crypto_generichash_update(&st, nc, CHANNEL_NONCE_BYTES);
    crypto_generichash_update(&st, na, CHANNEL_NONCE_BYTES);
    crypto_generichash_update(&st, t, 32);
    crypto_generichash_final(&st, out, CHANNEL_KEY_BYTES);
    sodium_memzero(&st, sizeof(st));
}

/* early = HMAC-SHA-512-256(PSK, "fabtop-ctl early" 0 | u16 version | Nc | u64 time): the
 * client proves it holds the key in its first frame, so an agent under load can tell it
 * from connections without the key before spending anything on it (ctl.h). */
static void early_proof(const struct channel_key *k, const unsigned char *nc, uint64_t t,
                        unsigned char out[32])
{
    static const char label[] = "fabtop-ctl early";
    unsigned char v[2], tb[8];
    channel_put_u16(v, CHANNEL_VERSION);
    channel_put_u64(tb, t);
    crypto_auth_hmacsha512256_state st;
    crypto_auth_hmacsha512256_init(&st, k->k, sizeof(k->k));
    crypto_auth_hmacsha512256_update(&st, (const unsigned char *)label, sizeof(label));
    crypto_auth_hmacsha512256_update(&st, v, 2);
    crypto_auth_hmacsha512256_update(&st, nc, CHANNEL_NONCE_BYTES);
    crypto_auth_hmacsha512256_update(&st, tb, 8);
    crypto_auth_hmacsha512256_final(&st, out);
    sodium_memzero(&st, sizeof(st));
}

/* A hello; with key (the client's), also its time and early proof. */
char *channel_handshake_hello_text(const char *role, const unsigned char *nonce,
                                   const struct channel_key *key)
{
    char hex[2 * CHANNEL_NONCE_BYTES + 1];
    sodium_bin2hex(hex, sizeof(hex), nonce, CHANNEL_NONCE_BYTES);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "proto", CHANNEL_PROTO);
    cJSON_AddNumberToObject(j, "version", CHANNEL_VERSION);
    cJSON_AddStringToObject(j, "role", role);
    cJSON_AddStringToObject(j, "nonce", hex);
    if (key) {
        uint64_t t = (uint64_t)time(NULL);
        unsigned char e[32];
        char ehex[65];
        early_proof(key, nonce, t, e);
        sodium_bin2hex(ehex, sizeof(ehex), e, sizeof(e));
        cJSON_AddNumberToObject(j, "time", (double)t);
        cJSON_AddStringToObject(j, "early", ehex);
    }
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return text;
}

/* Which key made the client hello's early proof, if its time is within CHANNEL_EARLY_SKEW_S of
 * ours: the key's index, or -1. Every key is tried. */
int channel_handshake_early_check(const char *text, size_t len, const struct channel_key *keys,
                                  int nkeys, const unsigned char *nc)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    const cJSON *tj = cJSON_GetObjectItemCaseSensitive(j, "time");
    const cJSON *ej = cJSON_GetObjectItemCaseSensitive(j, "early");
    unsigned char e[32];
    size_t got = 0;
    int found = -1;
    double now = (double)time(NULL);
    if (cJSON_IsNumber(tj) && tj->valuedouble >= 0 && tj->valuedouble < 1e15 &&
        fabs(tj->valuedouble - now) <= CHANNEL_EARLY_SKEW_S && cJSON_IsString(ej) &&
        strlen(ej->valuestring) == 64 &&
        sodium_hex2bin(e, sizeof(e), ej->valuestring, 64, NULL, &got, NULL) == 0 && got == 32) {
        for (int i = 0; i < nkeys; i++) {
            unsigned char want[32];
            early_proof(&keys[i], nc, (uint64_t)tj->valuedouble, want);
            int bad = sodium_memcmp(want, e, 32);
            found = !bad && found < 0 ? i : found;
        }
    }
    cJSON_Delete(j);
    return found;
}

/* Check a peer's hello. Returns 0, or -EPROTO (with why) / -EPROTONOSUPPORT (*version set). */
int channel_handshake_hello_check(const char *text, size_t len, const char *want_role,
                                  unsigned char nonce[CHANNEL_NONCE_BYTES], int *version, char *why,
                                  size_t whylen)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    int rc = -EPROTO;
    const cJSON *proto = cJSON_GetObjectItemCaseSensitive(j, "proto");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "version");
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(j, "role");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "nonce");
    size_t binlen = 0;
    if (!cJSON_IsObject(j))
        snprintf(why, whylen, "not a JSON object");
    else if (!cJSON_IsString(proto) || strcmp(proto->valuestring, CHANNEL_PROTO))
        snprintf(why, whylen, "not a %s %s", CHANNEL_PROTO, want_role);
    else if (!cJSON_IsNumber(ver) || ver->valuedouble != (double)ver->valueint || ver->valueint < 0)
        snprintf(why, whylen, "no protocol version");
    else if (ver->valueint != CHANNEL_VERSION) {
        *version = ver->valueint;
        rc = -EPROTONOSUPPORT;
    } else if (!cJSON_IsString(role) || strcmp(role->valuestring, want_role))
        snprintf(why, whylen, "role must be '%s'", want_role);
    else if (!cJSON_IsString(n) || strlen(n->valuestring) != 2 * CHANNEL_NONCE_BYTES ||
             sodium_hex2bin(nonce, CHANNEL_NONCE_BYTES, n->valuestring, 2 * CHANNEL_NONCE_BYTES,
                            NULL, &binlen, NULL) != 0 ||
             binlen != CHANNEL_NONCE_BYTES)
        snprintf(why, whylen, "bad nonce");
    else
        rc = 0;
    cJSON_Delete(j);
    return rc;
}

void channel_handshake_refusal_parse(const char *text, size_t len, struct channel_refusal *r)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    snprintf(r->code, sizeof(r->code), "unknown");
    snprintf(r->msg, sizeof(r->msg), "(no reason given)");
    r->version = -1;
    r->retry_ms = 0;
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(j, "code");
    const cJSON *retry = cJSON_GetObjectItemCaseSensitive(j, "retry_ms");
    if (cJSON_IsNumber(retry) && retry->valuedouble >= 1 && retry->valuedouble <= 10000)
        r->retry_ms = (int)retry->valuedouble;
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(j, "message");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "version");
    if (cJSON_IsString(code))
        snprintf(r->code, sizeof(r->code), "%s", code->valuestring);
    if (cJSON_IsString(msg))
        snprintf(r->msg, sizeof(r->msg), "%s", msg->valuestring);
    if (cJSON_IsNumber(ver))
        r->version = ver->valueint;
    cJSON_Delete(j);
}

int channel_handshake_refusal_errno(const char *code)
{
    static const struct {
        const char *code;
        int e;
    } map[] = {
        {"version", EPROTONOSUPPORT}, {"auth", EACCES},      {"busy", EBUSY},
        {"denied", EACCES},           {"malformed", EPROTO}, {"toolarge", EMSGSIZE},
        {"timeout", ETIMEDOUT},       {"mac", EBADMSG},      {"idle", ETIMEDOUT},
        {"shutdown", ESHUTDOWN},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcmp(code, map[i].code))
            return map[i].e;
    return EPROTO;
}
