/* glossary: the terms the explorer uses, and the counters' meanings from their tables. */
#include "tui/glossary.h"

#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/counters/counters.h"
#include "topology/topo_ibcounters.h"

/* The terms (a counter's entry comes from the counter tables). */
static const struct {
    const char *term, *text;
} terms[] = {
    {"PIX", "At most one PCIe switch between the two devices: the shortest PCIe path. GPUDirect "
            "RDMA traffic between them stays inside the switch."},
    {"PXB", "Several PCIe switches between the devices, but not the CPU's host bridge."},
    {"PHB", "The path goes through a PCIe host bridge (the CPU's root complex). NCCL does not "
            "use GPUDirect RDMA this far by default."},
    {"NODE", "Same NUMA node, different host bridges: traffic crosses the CPU's internal "
             "fabric."},
    {"SYS", "Different NUMA nodes: traffic crosses the SMP interconnect (UPI, Infinity "
            "Fabric). 'Same socket' means both NUMA nodes sit in one CPU package."},
    {"NV#", "The GPUs are joined by # NVLinks (directly or through NVSwitches). Bandwidth is "
            "per direction."},
    {"XGMI", "AMD Infinity Fabric link between GPUs (rocm-smi's name)."},
    {"half round trip", "Ping-pong latency reported as half the time from sending a message "
                        "to receiving the reply, as perftest and sockperf report it."},
    {"round trip", "Request/response latency: from sending the request to receiving the whole "
                   "response."},
    {"per operation", "Latency of one operation from post to completion (one collective, one "
                      "copy)."},
    {"p99", "The 99th percentile (nearest rank): 99% of the samples are at or below it. The tail "
            "decides how fast a synchronised step finishes."},
    {"p99.9", "The 99.9th percentile: one sample in a thousand is slower."},
    {"goodput", "Payload delivered to the receiver per second, without headers or "
                "retransmissions. Gb/s is 10^9 bits per second."},
    {"wire", "Bytes on the wire as a Linux qdisc counts them: payload plus Ethernet, IP and TCP "
             "headers per segment (no preamble, FCS or inter-frame gap)."},
    {"quiet vs loaded", "The same foreground flow measured alone (quiet) and with background "
                        "neighbours (loaded); the difference is what contention costs."},
    {"incast", "Many senders to one receiver at once: the queue in front of the receiver's link "
               "grows until it drops or pauses, and every packet behind it waits."},
    {"retrans", "TCP segments sent again because they were lost or their acknowledgement was "
                "late (tcpi_total_retrans)."},
    {"cwnd", "TCP congestion window in bytes (snd_cwnd x MSS): how much unacknowledged data "
             "the sender allows itself."},
    {"RoCE", "RDMA over Converged Ethernet: InfiniBand transport carried in UDP/IP (v2) over "
             "Ethernet. Needs a lossless class (PFC) or good congestion control (ECN/DCQCN)."},
    {"GID", "Global identifier of an RDMA port (an IPv6-format address). For RoCE v2 the GID "
            "index chooses the IP address and version; a wrong index is the commonest failure."},
    {"LID", "InfiniBand local identifier, assigned by the subnet manager. LID 0 or SM LID 0 "
            "means no subnet manager has configured the port."},
    {"PFC", "Priority Flow Control (802.1Qbb): pause frames per priority that make a class "
            "lossless, and can spread congestion upstream (head-of-line blocking)."},
    {"ECN", "Explicit Congestion Notification: switches mark packets instead of dropping them; "
            "RoCE NICs answer marks with CNPs and slow down (DCQCN)."},
    {"DCQCN", "The RoCE congestion control in ConnectX NICs: the receiver returns CNPs for "
              "ECN-marked packets and the sender lowers its rate."},
    {"MTU", "Largest packet payload. RoCE's active MTU (256-4096) is derived from the netdev "
            "MTU; a mismatch across ports fragments or stalls traffic."},
    {"GPUDirect RDMA", "The NIC reads and writes GPU memory directly (nvidia_peermem or "
                       "dma-buf), without staging through host memory."},
    {"ACS", "PCIe Access Control Services: with P2P redirect on, peer-to-peer traffic between a "
            "GPU and a NIC detours through the root complex."},
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct glossary_entry *all;
static int nall;

static void build(void)
{
    int nterms = (int)(sizeof(terms) / sizeof(terms[0]));
    int nctr;
    const struct counters_info *ctr = counters_table(&nctr);
    all = xalloc_zero((size_t)(nterms + topo_ibcounters_n + nctr), sizeof(*all));
    for (int i = 0; i < nterms; i++) {
        all[nall].term = terms[i].term;
        all[nall++].text = terms[i].text;
    }
    for (int i = 0; i < topo_ibcounters_n; i++) {
        const struct topo_ibcounter *c = &topo_ibcounters[i];
        char buf[1024];
        snprintf(buf, sizeof(buf), "%s (%s, %s, %s%d-bit%s). %s If it rises: %s", c->meaning,
                 c->iba_name, topo_ibc_group_str(c->group), c->saturating ? "saturating " : "",
                 c->width,
                 c->unit == TOPO_IBC_WORDS ? ", counts 4-byte words: fabtop shows bytes" : "", "",
                 c->action);
        all[nall].term = c->name;
        all[nall].text = xalloc_strdup(buf);
        all[nall].where = "ib";
        nall++;
    }
    /* The other counters (engine/counters/counters.h): once per name and source, '#' standing
     * for a number. */
    for (int i = 0; i < nctr; i++) {
        const struct counters_info *c = &ctr[i];
        char where[64];
        snprintf(where, sizeof(where), "%s%s%s", counters_source_str(c->source),
                 c->provider ? " " : "", c->provider ? c->provider : "");
        bool dup = false;
        for (int j = 0; j < nall && !dup; j++)
            dup = !strcmp(all[j].term, c->name) && all[j].where && !strcmp(all[j].where, where);
        if (dup)
            continue;
        char buf[1024], width[48] = "";
        if (c->kind == COUNTERS_COUNTER)
            snprintf(width, sizeof(width), ", %d-bit, %s", c->width,
                     counters_behaviour_str(c->behaviour));
        snprintf(buf, sizeof(buf), "%s (%s%s%s, %s, %s%s%s)", c->meaning,
                 c->provider ? c->provider : "", c->provider ? " " : "",
                 counters_source_str(c->source), counters_group_str(c->group),
                 c->kind == COUNTERS_GAUGE ? "a level in " : "", c->unit, width);
        all[nall].term = c->name;
        all[nall].text = xalloc_strdup(buf);
        all[nall].where = xalloc_strdup(where);
        nall++;
    }
}

const struct glossary_entry *glossary_all(int *n)
{
    pthread_once(&once, build);
    *n = nall;
    return all;
}

/* Does the counter name match the entry's name, '#' standing for one or more digits? */
static bool name_match(const char *pat, const char *name)
{
    while (*pat && *name) {
        if (*pat == '#') {
            if (!isdigit((unsigned char)*name))
                return false;
            while (isdigit((unsigned char)*name))
                name++;
            pat++;
        } else if (tolower((unsigned char)*pat++) != tolower((unsigned char)*name++)) {
            return false;
        }
    }
    return !*pat && !*name;
}

const struct glossary_entry *glossary_counter(enum counters_source src, const char *name)
{
    int n;
    const struct glossary_entry *e = glossary_all(&n);
    const char *want = counters_source_str(src == COUNTERS_SRC_QP ? COUNTERS_SRC_HW : src);
    size_t wl = strlen(want);
    const struct glossary_entry *any = NULL;
    for (int i = 0; i < n; i++) {
        if (!e[i].where || !name_match(e[i].term, name))
            continue;
        /* "hw_counters mlx5" is a hw_counters entry. */
        if (!strncmp(e[i].where, want, wl) && (!e[i].where[wl] || e[i].where[wl] == ' '))
            return &e[i];
        if (!any)
            any = &e[i];
    }
    return any;
}

void glossary_label(const struct glossary_entry *e, char *buf, size_t len)
{
    if (e->where)
        snprintf(buf, len, "%s (%s)", e->term, e->where);
    else
        snprintf(buf, len, "%s", e->term);
}

const char *glossary_lookup(const char *term)
{
    int n;
    const struct glossary_entry *e = glossary_all(&n);
    for (int i = 0; i < n; i++)
        if (!strcasecmp(e[i].term, term))
            return e[i].text;
    return NULL;
}
