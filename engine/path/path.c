/* path: the path's class and the queue's place (path.h). */
#include "engine/path/path.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int path_hops_from_ttl(int ttl, int *init)
{
    static const int inits[] = {64, 128, 255};
    if (init)
        *init = 0;
    if (ttl < 1 || ttl > 255)
        return -1;
    for (size_t i = 0; i < sizeof(inits) / sizeof(inits[0]); i++)
        if (ttl <= inits[i]) {
            if (init)
                *init = inits[i];
            return inits[i] - ttl;
        }
    return -1;
}

const char *path_class_str(enum path_class c)
{
    switch (c) {
    case PATH_CLASS_HOST:
        return "host";
    case PATH_CLASS_LEAF:
        return "leaf";
    case PATH_CLASS_SITE:
        return "site";
    case PATH_CLASS_WAN:
        return "wan";
    default:
        return "unknown";
    }
}

enum path_class path_class_parse(const char *s)
{
    for (int c = PATH_CLASS_HOST; s && c <= PATH_CLASS_WAN; c++)
        if (!strcmp(s, path_class_str((enum path_class)c)))
            return (enum path_class)c;
    return PATH_CLASS_UNKNOWN;
}

static bool label(const char *s)
{
    return s && *s;
}

int path_classify(const struct path_evidence *e, struct path_class_out *out)
{
    memset(out, 0, sizeof(*out));
    out->hops = e->ttl >= 0 ? path_hops_from_ttl(e->ttl, &out->ttl_init) : -1;
    char rtt[48] = "", hops[64] = "";
    if (e->have_min_rtt)
        snprintf(rtt, sizeof(rtt), "quiet minimum RTT %.1f us", e->min_rtt_us);
    if (out->hops >= 0)
        snprintf(hops, sizeof(hops), "%d router hop%s (TTL %d of %d)", out->hops,
                 out->hops == 1 ? "" : "s", e->ttl, out->ttl_init);
    const char *sep = rtt[0] && hops[0] ? ", " : "";
    if (e->loopback) {
        out->cls = PATH_CLASS_HOST;
        snprintf(out->why, sizeof(out->why), "the peer is an address of this host");
        return 0;
    }
    if (label(e->site_local) && label(e->site_peer) && strcmp(e->site_local, e->site_peer)) {
        out->cls = PATH_CLASS_WAN;
        snprintf(out->why, sizeof(out->why), "site labels differ (%s here, %s at the peer)%s%s%s",
                 e->site_local, e->site_peer, rtt[0] || hops[0] ? "; " : "", rtt,
                 sep[0] ? sep : "");
        if (hops[0])
            snprintf(out->why + strlen(out->why), sizeof(out->why) - strlen(out->why), "%s", hops);
        return 0;
    }
    if (e->have_min_rtt && e->min_rtt_us > PATH_SITE_MAX_RTT_US) {
        out->cls = PATH_CLASS_WAN;
        snprintf(out->why, sizeof(out->why), "%s > %.0f us: farther than one site%s%s", rtt,
                 PATH_SITE_MAX_RTT_US, hops[0] ? "; " : "", hops);
        return 0;
    }
    if (out->hops > PATH_SITE_MAX_HOPS) {
        out->cls = PATH_CLASS_WAN;
        snprintf(out->why, sizeof(out->why), "%s%s%s: more than %d routers", rtt, sep, hops,
                 PATH_SITE_MAX_HOPS);
        return 0;
    }
    bool near = e->have_min_rtt && e->min_rtt_us <= PATH_LEAF_MAX_RTT_US;
    if (e->same_leaf == 1 || (out->hops == 0 && (near || !e->have_min_rtt))) {
        out->cls = PATH_CLASS_LEAF;
        snprintf(out->why, sizeof(out->why), "%s%s%s%s",
                 e->same_leaf == 1 ? "one leaf (fabric)" : "",
                 e->same_leaf == 1 && (rtt[0] || hops[0]) ? ", " : "", rtt, sep);
        if (hops[0])
            snprintf(out->why + strlen(out->why), sizeof(out->why) - strlen(out->why), "%s", hops);
        return 0;
    }
    if (out->hops >= 0 || e->have_min_rtt || label(e->site_local)) {
        out->cls = PATH_CLASS_SITE;
        snprintf(out->why, sizeof(out->why), "%s%s%s%s%s", rtt, sep, hops,
                 label(e->site_local) && label(e->site_peer) ? "; same site label " : "",
                 label(e->site_local) && label(e->site_peer) ? e->site_local : "");
        if (!out->why[0])
            snprintf(out->why, sizeof(out->why), "site label %s", e->site_local);
        return 0;
    }
    snprintf(out->why, sizeof(out->why), "no evidence (no RTT, TTL or site labels)");
    return 0;
}

bool path_class_tight(const char *c)
{
    return c && (!strcmp(c, "tp") || !strcmp(c, "moe"));
}

void path_tight_warning(const char *flow, const char *flow_class, char *buf, size_t len)
{
    snprintf(buf, len,
             "flow %s (class %s) is tightly coupled traffic over a wide-area path: keep tightly "
             "coupled ranks inside one validated site and send independent requests between sites",
             flow, flow_class);
}

const char *path_queue_where_str(enum path_queue_where w)
{
    static const char *const s[] = {"unknown", "none", "local", "peer", "between", "beyond"};
    return w >= PATH_QUEUE_UNKNOWN && w <= PATH_QUEUE_BEYOND ? s[w] : "unknown";
}

static bool holds(const struct path_end_queue *q)
{
    return q && q->have &&
           (q->peak_packets > PATH_FEW_PACKETS ||
            q->peak_bytes > PATH_FEW_PACKETS * PATH_FRAME_BYTES);
}

/* How much an end held, in bytes (packets as full frames when bytes are unknown). */
static double held(const struct path_end_queue *q)
{
    return q->peak_bytes >= 0 ? q->peak_bytes : q->peak_packets * PATH_FRAME_BYTES;
}

static void end_desc(const struct path_end_queue *q, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s: %.0f packets", q->netdev ? q->netdev : "?", q->peak_packets);
    if (q->peak_bytes >= 0 && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ", %.0f bytes", q->peak_bytes);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " at peak");
}

int path_queue_verdict(const struct path_end_queue *local, const struct path_end_queue *peer,
                       const struct path_rtt *rtt, struct path_verdict *out)
{
    memset(out, 0, sizeof(*out));
    out->ratio = NAN;
    bool rose = false;
    if (rtt && rtt->have && rtt->quiet_us > 0) {
        out->ratio = rtt->loaded_us / rtt->quiet_us;
        rose = out->ratio >= PATH_RISE_RATIO && rtt->loaded_us - rtt->quiet_us >= PATH_RISE_US;
    }
    char d[160];
    /* The larger backlog wins when both ends hold one. */
    bool l = holds(local), p = holds(peer);
    if (l && (!p || held(local) >= held(peer))) {
        out->where = PATH_QUEUE_LOCAL;
        end_desc(local, d, sizeof(d));
        snprintf(out->line, sizeof(out->line), "the backlog is on this host's qdisc (%s)", d);
        return 0;
    }
    if (p) {
        out->where = PATH_QUEUE_PEER;
        end_desc(peer, d, sizeof(d));
        snprintf(out->line, sizeof(out->line), "the backlog is at the peer (its qdisc %s)", d);
        return 0;
    }
    if (!rtt || !rtt->have) {
        out->where = PATH_QUEUE_UNKNOWN;
        snprintf(out->line, sizeof(out->line),
                 "no queue on %s, and no transport RTT to say whether one grew elsewhere",
                 peer && peer->have ? "either end" : "this host");
        return 0;
    }
    if (!rose) {
        out->where = PATH_QUEUE_NONE;
        snprintf(out->line, sizeof(out->line),
                 "no queue: the transport's RTT went from %.1f us quiet to %.1f us loaded (x%.1f)",
                 rtt->quiet_us, rtt->loaded_us, out->ratio);
        return 0;
    }
    if (peer && peer->have && local && local->have) {
        out->where = PATH_QUEUE_BETWEEN;
        snprintf(out->line, sizeof(out->line),
                 "the probe's RTT rose %.0fx while neither end's queues held more than a few "
                 "packets: the queue is in the path between them (a switch egress); `fabtop topo "
                 "--fabric` counters or the switch's counters will show it",
                 out->ratio);
        return 0;
    }
    out->where = PATH_QUEUE_BEYOND;
    snprintf(out->line, sizeof(out->line),
             "the probe's RTT rose %.0fx while this host's queues held no more than a few packets: "
             "the queue is beyond this host (in the path or at the peer, whose counters were not "
             "sampled)",
             out->ratio);
    return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double path_median(double *v, int n)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof(*v), dbl_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
