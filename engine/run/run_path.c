/* run_path: the run's path evidence from the peer agent (run_path.h). */
#include "engine/run/run_path.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/jsonutil.h"
#include "engine/xport/tcp/tcp_path.h"

void run_path_open(struct run_path *p, const char *peer, const char *local,
                   const struct channel_key *key, int timeout_ms, int flows)
{
    memset(p, 0, sizeof(*p));
    p->ttl = -1;
    struct ft_err e = {0};
    int rc;
    /* The check of the peers a moment ago may still hold a session there: "busy" for a
     * little while (as the runner's own connections retry). */
    for (int i = 0; i < 10; i++) {
        rc = channel_connect_from(peer, CHANNEL_DEFAULT_PORT, local, key, timeout_ms, &p->ctl, &e);
        if (rc != -EBUSY)
            break;
        struct timespec ts = {0, 50000000L};
        nanosleep(&ts, NULL);
    }
    if (rc < 0) {
        snprintf(p->note, sizeof(p->note), "path: no session with the peer for its counters: %s",
                 e.msg);
        p->ctl = NULL;
        return;
    }
    const cJSON *caps = cJSON_GetObjectItemCaseSensitive(channel_peer_info(p->ctl), "caps");
    double max = 0;
    if (jsonutil_num(caps, "max_sessions", &max) && max > 0 && max < flows + 1) {
        snprintf(p->note, sizeof(p->note),
                 "path: the peer's session limit (%.0f) leaves no room for a session beside the "
                 "run's %d: its counters and TTL are not read",
                 max, flows);
        channel_close(p->ctl);
        p->ctl = NULL;
        return;
    }
    if (tcp_path_ttl_probe(p->ctl, 1000, &p->ttl, &p->ttl_initial, &e) < 0) {
        snprintf(p->note, sizeof(p->note), "path: no TTL from the peer: %s", e.msg);
        p->ttl = -1;
    }
    struct ft_err e2 = {0};
    if (tcp_path_counters_start(p->ctl, p->netdev, sizeof(p->netdev), p->site_peer,
                                sizeof(p->site_peer), &e2) < 0)
        snprintf(p->note, sizeof(p->note), "path: the peer's counters are not sampled: %s", e2.msg);
    else
        p->counting = true;
}

void run_path_phase(struct run_path *p, int phi, bool start)
{
    if (!p->ctl || !p->counting || phi < 0 || phi > 1)
        return;
    cJSON *rep = NULL;
    struct ft_err e = {0};
    if (tcp_path_counters_report(p->ctl, &rep, &e) < 0) {
        snprintf(p->note, sizeof(p->note), "path: the peer's counters: %s", e.msg);
        p->counting = false;
        return;
    }
    if (start) {
        cJSON_Delete(rep);
        return;
    }
    cJSON_Delete(p->peer_ctrs[phi]);
    p->peer_ctrs[phi] = rep;
}

void run_path_input(const struct run_path *p, const char *site_local, struct results_path_in *in)
{
    memset(in, 0, sizeof(*in));
    in->site_local = site_local;
    in->site_peer = p->site_peer[0] ? p->site_peer : NULL;
    in->ttl = p->ttl;
    in->ttl_initial = p->ttl_initial;
    in->peer_counters[0] = p->peer_ctrs[0];
    in->peer_counters[1] = p->peer_ctrs[1];
    in->same_leaf = -1;
}

void run_path_close(struct run_path *p)
{
    if (p->ctl)
        channel_close(p->ctl);
    for (int i = 0; i < 2; i++)
        cJSON_Delete(p->peer_ctrs[i]);
    memset(p, 0, sizeof(*p));
    p->ttl = -1;
}
