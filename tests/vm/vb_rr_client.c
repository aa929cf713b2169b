/* vb_rr_client: a verbs client that breaks the agent's return-routability check, run in the
 * Soft-RoCE VM against a real `fabtop serve` (verbs.guest.sh; check_verbs.py judges). Modes:
 *   noecho    connects its QP, asks for the nonce, never echoes: the agent destroys its QP
 *             after 1 s and a late echo is refused saying so;
 *   wrongecho echoes a nonce with one bit flipped: refused, QP destroyed;
 *   redirect  gives the agent a queue pair number nobody owns (rxe drops what arrives for
 *             it): the nonce WRITE is never acknowledged, the agent destroys its QP and sends
 *             no test data (the port's sent_pkts delta is printed).
 * Prints "RESULT MODE rc=RC: MESSAGE" lines; exit 0 when it could run at all. Test code. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/peer/channel.h"
#include "engine/peer/rrcheck.h"
#include "engine/xport/verbs/verbs_res.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static long long hw(const char *dev, const char *name)
{
    char p[256];
    snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev, name);
    FILE *f = fopen(p, "r");
    long long v = -1;
    if (f) {
        if (fscanf(f, "%lld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static int request(struct channel_conn *c, cJSON *req, cJSON **resp, struct ft_err *err)
{
    *resp = NULL;
    return channel_request(c, req, resp, 10000, err);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: vb_rr_client HOST:PORT KEYFILE noecho|wrongecho|redirect\n");
        return 64;
    }
    const char *mode = argv[3];
    struct ft_err err = {0};
    struct channel_key key;
    if (channel_key_load(argv[2], &key, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 66;
    }
    struct channel_conn *c = NULL;
    if (channel_connect(argv[1], CHANNEL_DEFAULT_PORT, &key, 5000, &c, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 69;
    }
    struct verbs_res_want want = {.gid_index = -1, .dscp = 26, .numa = -1};
    struct verbs_res r;
    if (verbs_res_open(&r, &want, &err) < 0 || verbs_res_alloc(&r, &want, 1, 64, 16, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 69;
    }
    cJSON *peer = verbs_res_peer_json(&r);
    if (!strcmp(mode, "redirect")) {
        cJSON *q = cJSON_GetArrayItem(cJSON_GetObjectItem(peer, "qpn"), 0);
        cJSON_SetNumberValue(q, q->valuedouble + 1000);
    }
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "verbs.open");
    cJSON_AddStringToObject(req, "op", "stream");
    cJSON_AddStringToObject(req, "direction", "rx"); /* the agent would send at once */
    cJSON_AddStringToObject(req, "verb", "write");
    cJSON_AddStringToObject(req, "latency", "pingpong");
    cJSON_AddNumberToObject(req, "size", 64);
    cJSON_AddNumberToObject(req, "depth", 16);
    cJSON_AddNumberToObject(req, "timeout", 12);
    cJSON_AddNumberToObject(req, "retry_cnt", 3);
    cJSON_AddStringToObject(req, "connect", "ctl");
    cJSON_AddItemToObject(req, "peer", peer);
    cJSON *resp = NULL;
    int rc = request(c, req, &resp, &err);
    if (rc < 0) {
        printf("RESULT %s rc=%d: verbs.open: %s\n", mode, rc, err.msg);
        return 0;
    }
    struct verbs_res_peer ap;
    if (verbs_res_peer_parse(cJSON_GetObjectItem(resp, "peer"), &ap, &err) < 0 ||
        verbs_res_connect(&r, &ap, &want, 12, 3, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 69;
    }
    cJSON_Delete(resp);
    long long sent0 = hw(r.dev, "sent_pkts");
    req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "verbs.nonce");
    ft_err_clear(&err);
    rc = request(c, req, &resp, &err);
    cJSON_Delete(resp);
    if (!strcmp(mode, "redirect")) {
        sleep_ms(1500); /* would the agent send anything more? */
        printf("RESULT redirect rc=%d: %s\n", rc, err.msg);
        printf("RESULT redirect-packets sent_pkts delta %lld\n", hw(r.dev, "sent_pkts") - sent0);
        goto out;
    }
    if (rc < 0) {
        printf("RESULT %s rc=%d: verbs.nonce: %s\n", mode, rc, err.msg);
        goto out;
    }
    unsigned char n[1][RRCHECK_NONCE_BYTES];
    if (verbs_res_nonce_read(&r, n, 500, &err) < 0) {
        printf("RESULT %s rc=%d: %s\n", mode, err.code, err.msg);
        goto out;
    }
    if (!strcmp(mode, "noecho"))
        sleep_ms(1500);
    else
        n[0][7] ^= 0x10;
    req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "verbs.echo");
    cJSON_AddItemToObject(req, "nonces",
                          rrcheck_echo_json((const unsigned char(*)[RRCHECK_NONCE_BYTES])n, 1));
    ft_err_clear(&err);
    rc = request(c, req, &resp, &err);
    cJSON_Delete(resp);
    printf("RESULT %s rc=%d: %s\n", mode, rc, err.msg);
out:
    fflush(stdout);
    channel_close(c);
    verbs_res_close(&r);
    channel_key_wipe(&key);
    return 0;
}
