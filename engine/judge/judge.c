/* judge: the rules that name why a bandwidth figure fell short of its ceiling, as a table
 * like topo_lint's. Each rule reads what the run recorded (the flow's conditions, the run's
 * sysctls, the mix) and, where it helps, the topology; none does I/O. */
#include "engine/judge/judge.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/xalloc.h"
#include "engine/results/results.h"
#include "topology/topo_affinity.h"

/* ---- causes ---- */

struct judge_cause *judge_cause_add(struct judge_causes *out, const struct judge_flow *jf,
                                    const char *rule, const char *fix, const char *fmt, ...)
{
    if (out->n == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 8;
        out->v = xalloc_resize(out->v, (size_t)out->cap * sizeof(*out->v));
    }
    struct judge_cause *c = &out->v[out->n++];
    memset(c, 0, sizeof(*c));
    c->rule = rule;
    for (int i = 0; i < judge_nrules; i++)
        if (!strcmp(judge_rules[i].id, rule))
            c->weight = judge_rules[i].weight;
    snprintf(c->flow, sizeof(c->flow), "%s", results_str_get(&jf->flow->name) ?: "?");
    snprintf(c->phase, sizeof(c->phase), "%s", results_str_get(&jf->phase->name) ?: "?");
    snprintf(c->figure, sizeof(c->figure), "goodput");
    c->percent = jf->percent;
    snprintf(c->fix, sizeof(c->fix), "%s", fix);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
    va_end(ap);
    judge_ev_num(c, "goodput", jf->goodput_gbps, "Gb/s");
    if (isfinite(jf->ceiling_gbps))
        judge_ev_num(c, "ceiling", jf->ceiling_gbps, "Gb/s");
    return c;
}

void judge_ev_num(struct judge_cause *c, const char *name, double v, const char *unit)
{
    if (c->nev == JUDGE_MAX_EV)
        return;
    struct judge_ev *e = &c->ev[c->nev++];
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->value = v;
    snprintf(e->unit, sizeof(e->unit), "%s", unit);
    e->text[0] = 0;
}

void judge_ev_text(struct judge_cause *c, const char *name, const char *text)
{
    if (c->nev == JUDGE_MAX_EV)
        return;
    struct judge_ev *e = &c->ev[c->nev++];
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->value = NAN;
    e->unit[0] = 0;
    snprintf(e->text, sizeof(e->text), "%s", text);
}

void judge_causes_free(struct judge_causes *c)
{
    free(c->v);
    memset(c, 0, sizeof(*c));
}

/* ---- what the rules read ---- */

static const char *sysctl(const struct judge_flow *jf, const char *key)
{
    const struct results_kv *kv = results_kvs_find(&jf->run->conditions.sysctls, key);
    return kv ? results_str_get(&kv->val) : NULL;
}

static bool is_tcp(const struct judge_flow *jf)
{
    const char *t = results_str_get(&jf->flow->transport);
    return t && !strcmp(t, "tcp");
}

static bool is_verbs(const struct judge_flow *jf)
{
    const char *t = results_str_get(&jf->flow->transport);
    return t && !strcmp(t, "verbs");
}

/* A whole number from the flow's conditions, or -1. */
static int cond_int(const struct judge_flow *jf, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(jf->flow->conditions, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e9 ? (int)v->valuedouble
                                                                            : -1;
}

/* A whole number from the mix flow's params, or -1. */
static int param_int(const struct judge_flow *jf, const char *key)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(jf->mix_flow, "params");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e9 ? (int)v->valuedouble
                                                                            : -1;
}

/* The third field of "4096 131072 6291456" (tcp_rmem, tcp_wmem), or a lone number
 * (rmem_max); -1 when not recorded. */
static double sysctl_max(const struct judge_flow *jf, const char *key)
{
    const char *s = sysctl(jf, key);
    double a, b, c;
    if (!s)
        return -1;
    int n = sscanf(s, "%lf %lf %lf", &a, &b, &c);
    return n == 3 ? c : n == 1 ? a : -1;
}

/* Is cpu in a cpu list ("0-3,8,10-11")? -1 when the list does not parse. */
static int cpulist_has(const char *list, int cpu)
{
    if (!list || !*list)
        return -1;
    const char *p = list;
    bool in = false;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            return -1;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1)
                return -1;
            p = end;
        }
        in = in || (cpu >= a && cpu <= b);
        if (*p == ',')
            p++;
        else if (*p && *p != '\n')
            return -1;
        else
            break;
    }
    return in;
}

/* Do two cpu lists share a CPU? -1 when either does not parse. */
static int cpulists_meet(const char *a, const char *b)
{
    if (cpulist_has(a, 0) < 0 || cpulist_has(b, 0) < 0)
        return -1;
    for (int c = 0; c < 4096; c++)
        if (cpulist_has(a, c) == 1 && cpulist_has(b, c) == 1)
            return 1;
    return 0;
}

static const struct topo_port *flow_port(const struct judge_flow *jf)
{
    if (!jf->topo || jf->nic < 0)
        return NULL;
    const struct topo_nic *n = &jf->topo->nics[jf->nic];
    int num = jf->flow->cond.have_port ? jf->flow->cond.port : 1;
    for (int k = 0; k < n->nports; k++)
        if (jf->topo->ports[n->first_port + k].num == num)
            return &jf->topo->ports[n->first_port + k];
    return NULL;
}

static const char *fname(const struct judge_flow *jf)
{
    return results_str_get(&jf->flow->name) ?: "?";
}

/* ---- rules ---- */

/* One connection or queue pair: one core moves it, and a bonded or multi-port NIC hashes
 * one flow onto one port (a bond's xmit_hash_policy, a multi-port HCA's QP affinity). */
/* The netdev the flow's traffic left by, in the topology: the one it was bound to, the RoCE
 * GID's, or the one holding its local address (live topologies list addresses); -1. */
static int flow_netdev(const struct judge_flow *jf)
{
    const struct topo_model *m = jf->topo;
    const cJSON *c = jf->flow->conditions;
    if (!m)
        return -1;
    const char *nd = jsonutil_str(c, "local_netdev");
    if (!nd || !*nd)
        nd = jsonutil_str(c, "netdev");
    if (nd && *nd)
        return topo_model_find_netdev(m, nd);
    const char *ip = jsonutil_str(c, "local_address");
    for (int i = 0; ip && *ip && i < m->nnetdevs; i++) {
        char addrs[sizeof(m->netdevs[i].addrs) + 2];
        snprintf(addrs, sizeof(addrs), " %s ", m->netdevs[i].addrs);
        char want[80];
        snprintf(want, sizeof(want), " %s ", ip);
        if (strstr(addrs, want))
            return i;
    }
    return -1;
}

static void check_one_connection(const struct judge_flow *jf, struct judge_causes *out)
{
    const struct results_flow *f = jf->flow;
    double c = -1;
    if (f->cond.have_queue_pairs)
        c = f->cond.queue_pairs;
    else if (!results_num_get(&f->connections_asked, &c))
        return;
    if (c != 1)
        return;
    int ports = jf->topo && jf->nic >= 0 ? jf->topo->nics[jf->nic].nports : 0;
    /* A bond that hashes flows onto its links carries one connection on one link
     * (bonding.rst, xmit_hash_policy): its other links idle for this flow. */
    int nd = flow_netdev(jf), links = nd >= 0 ? topo_model_bond_links(jf->topo, nd) : 0;
    const struct topo_netdev *bond = links > 1 ? &jf->topo->netdevs[nd] : NULL;
    if (bond && !topo_bond_hashes(bond->bond_mode))
        bond = NULL;
    char extra[160] = "";
    if (bond)
        snprintf(extra, sizeof(extra), ", and %s (%s%s%s) puts it on one of its %d links",
                 bond->name, bond->bond_mode, bond->bond_hash[0] ? ", hash " : "", bond->bond_hash,
                 links);
    else if (ports > 1)
        snprintf(extra, sizeof(extra), ", and a multi-port NIC carries it on one port");
    struct judge_cause *k = judge_cause_add(
        out, jf, "one-connection",
        "raise the flow's concurrency (\"concurrency\": 4 or more) so that several cores and "
        "ports carry it",
        "flow %s runs on one %s: one core moves all of it%s", fname(jf),
        is_verbs(jf) ? "queue pair" : "connection", extra);
    judge_ev_num(k, is_verbs(jf) ? "queue pairs" : "connections", 1, "count");
    if (ports > 0)
        judge_ev_num(k, "NIC ports", ports, "count");
    if (bond)
        judge_ev_num(k, "bond links", links, "count");
}

/* One operation in flight: each waits a round trip before the next is posted. */
static void check_depth_one(const struct judge_flow *jf, struct judge_causes *out)
{
    int d = cond_int(jf, "queue_depth");
    const char *what = "queue depth";
    if (d < 0)
        d = param_int(jf, "depth");
    if (d < 0) {
        d = param_int(jf, "batch");
        what = "batch";
    }
    if (d != 1)
        return;
    struct judge_cause *k = judge_cause_add(
        out, jf, "depth-1",
        "raise params.depth (or batch) to 16-64 so that the link stays busy across a round trip",
        "flow %s keeps one operation in flight (%s 1): the link idles for a round trip after "
        "each",
        fname(jf), what);
    judge_ev_num(k, what, 1, "operations");
}

/* The path MTU below what the port can carry: more packets, more headers, more
 * per-packet work for the same bytes (IBTA vol. 1 9.3: PMTU 256..4096; a RoCE port's
 * active MTU follows its netdev's MTU, less the RoCE headers). */
static void check_mtu_below_link(const struct judge_flow *jf, struct judge_causes *out)
{
    const struct results_flow *f = jf->flow;
    const struct topo_port *p = flow_port(jf);
    if (!is_verbs(jf) || !f->cond.have_path_mtu || !p || !(p->valid & TOPO_PORT_V_MAXMTU) ||
        f->cond.path_mtu >= p->max_mtu)
        return;
    struct judge_cause *k = judge_cause_add(
        out, jf, "mtu-below-link",
        "raise the netdev MTU (RoCE: 4200 or more carries a 4096 path MTU) on both ends",
        "flow %s uses path MTU %d B on a port that carries %d B: %.1fx the packets and headers",
        fname(jf), f->cond.path_mtu, p->max_mtu, (double)p->max_mtu / f->cond.path_mtu);
    judge_ev_num(k, "path MTU", f->cond.path_mtu, "B");
    judge_ev_num(k, "port max MTU", p->max_mtu, "B");
}

/* RoCE v1 has no IP header: DSCP-based PFC and ECN, and ECMP, do not apply to it. */
static void check_roce_v1(const struct judge_flow *jf, struct judge_causes *out)
{
    const char *g = jf->flow->cond.gid_type;
    if (!g || !strstr(g, "v1"))
        return;
    struct judge_cause *k = judge_cause_add(
        out, jf, "roce-v1-gid",
        "use a RoCE v2 GID index (params.gid_index; show_gids lists their types)",
        "flow %s uses a RoCE v1 GID: no IP header, so DSCP-based PFC, ECN and ECMP do not "
        "apply",
        fname(jf));
    judge_ev_text(k, "GID type", g);
    if (jf->flow->cond.have_gid_index)
        judge_ev_num(k, "GID index", jf->flow->cond.gid_index, "index");
}

/* The NIC's PCIe link trained below what both ends can do (sysfs current_link_speed /
 * max_link_speed, current_link_width / max_link_width). */
static void check_pcie_down(const struct judge_flow *jf, struct judge_causes *out)
{
    if (!jf->topo || jf->nic < 0 || jf->topo->nics[jf->nic].pci < 0)
        return;
    const struct topo_pci *p = &jf->topo->pci[jf->topo->nics[jf->nic].pci];
    bool speed = (p->valid & TOPO_PCI_V_CUR_SPEED) && (p->valid & TOPO_PCI_V_MAX_SPEED) &&
                 p->cur_speed_gts > 0 && p->cur_speed_gts < p->max_speed_gts;
    bool width = (p->valid & TOPO_PCI_V_CUR_WIDTH) && (p->valid & TOPO_PCI_V_MAX_WIDTH) &&
                 p->cur_width > 0 && p->cur_width < p->max_width;
    if (!speed && !width)
        return;
    struct judge_cause *k = judge_cause_add(
        out, jf, "pcie-downtrained",
        "reseat the card or check the slot and BIOS link settings; lspci -vv shows LnkSta "
        "against LnkCap",
        "flow %s's NIC PCIe link runs at %.1f GT/s x%d of %.1f GT/s x%d", fname(jf),
        p->cur_speed_gts, p->cur_width, p->max_speed_gts, p->max_width);
    judge_ev_num(k, "link speed", p->cur_speed_gts, "GT/s");
    judge_ev_num(k, "max link speed", p->max_speed_gts, "GT/s");
    judge_ev_num(k, "link width", p->cur_width, "lanes");
    judge_ev_num(k, "max link width", p->max_width, "lanes");
}

/* The worker (and the buffers it touches first, which Linux places on its node) on another
 * NUMA node than the NIC: every byte crosses the socket interconnect. */
static void check_numa_remote(const struct judge_flow *jf, struct judge_causes *out)
{
    if (!jf->topo || jf->nic < 0 || jf->topo->nics[jf->nic].pci < 0 || jf->topo->nnuma < 2)
        return;
    const char *mem = jsonutil_str(jf->flow->conditions, "memory");
    if (mem && !strncmp(mem, "GPU", 3))
        return;
    const struct topo_pci *p = &jf->topo->pci[jf->topo->nics[jf->nic].pci];
    const char *cpus = jsonutil_str(jf->flow->conditions, "worker_cpus");
    if (p->numa < 0 || !p->cpuset[0] || !cpus)
        return;
    int meet = cpulists_meet(cpus, p->cpuset);
    if (meet == 1)
        return;
    struct judge_cause *k = judge_cause_add(
        out, jf, "numa-remote-buffer",
        "pin the worker to the NIC's node (fabtop run pins by default; numactl --cpunodebind)",
        "flow %s's worker and buffer %s NUMA node %d, the NIC's", fname(jf),
        meet == 0 ? "sit outside" : "are not pinned to", p->numa);
    judge_ev_text(k, "worker CPUs", cpus);
    judge_ev_text(k, "NIC's CPUs", p->cpuset);
    judge_ev_num(k, "NIC's NUMA node", p->numa, "node");
}

/* A GPU buffer whose nearest NIC crosses the SMP interconnect (SYS, nvidia-smi topo -m):
 * GPUDirect RDMA then runs at the interconnect's peer-to-peer rate, if at all. */
static void check_gpu_sys(const struct judge_flow *jf, struct judge_causes *out)
{
    const cJSON *local = cJSON_GetObjectItemCaseSensitive(jf->mix_flow, "local");
    const cJSON *gv = cJSON_GetObjectItemCaseSensitive(local, "gpu");
    if (!jf->topo || !cJSON_IsNumber(gv) || gv->valuedouble < 0 || jf->topo->ngpus == 0)
        return;
    int dev = (int)gv->valuedouble, g = -1;
    for (int i = 0; i < jf->topo->ngpus && g < 0; i++)
        if ((jf->topo->gpus[i].valid & TOPO_GPU_V_CUDA) && jf->topo->gpus[i].cuda_index == dev)
            g = i;
    if (g < 0 && dev < jf->topo->ngpus)
        g = dev;
    struct topo_affinity a;
    if (g < 0 || topo_affinity_compute(jf->topo, &a) < 0)
        return;
    enum topo_rel rel = a.nearest && a.ncols > 0 ? a.nearest[g].rel : TOPO_REL_SELF;
    topo_affinity_free(&a);
    if (rel != TOPO_REL_SYS)
        return;
    struct judge_cause *k = judge_cause_add(
        out, jf, "gpu-nic-sys",
        "place the rank on a GPU that shares a PCIe switch with a NIC (fabtop topo shows the "
        "matrix)",
        "flow %s's GPU %d reaches its nearest NIC only across the CPU interconnect (SYS)",
        fname(jf), dev);
    judge_ev_num(k, "GPU", dev, "CUDA index");
    judge_ev_text(k, "nearest NIC", topo_rel_str(rel));
}

/* Lossless RoCE needs PFC on the priority its DSCP maps to (IEEE 802.1Qbb); without it a
 * drop costs a go-back-N retransmission of the whole window. */
static void check_pfc_off(const struct judge_flow *jf, struct judge_causes *out)
{
    const struct results_flow_cond *c = &jf->flow->cond;
    if (!c->dcb || c->dcb_pfc != 0)
        return;
    struct judge_cause *k =
        judge_cause_add(out, jf, "pfc-off",
                        "enable PFC for that priority on the NIC and the switch port "
                        "(mlnx_qos --pfc, dcb pfc set), or run with ECN-based congestion control",
                        "flow %s's traffic goes on priority %s with PFC off", fname(jf),
                        c->have_dcb_priority ? (const char *[]){"0", "1", "2", "3", "4", "5", "6",
                                                                "7"}[c->dcb_priority & 7]
                                             : "?");
    if (c->have_dscp)
        judge_ev_num(k, "DSCP", c->dscp, "code point");
    if (c->have_dcb_priority)
        judge_ev_num(k, "priority", c->dcb_priority, "802.1p");
    judge_ev_text(k, "PFC", "off");
}

/* RoCE ECN (DCQCN) off for the flow's priority on this NIC (conditions.dcb.ecn, from the
 * mlx5 driver's ecn/roce_np and ecn/roce_rp switches): without the notification point a
 * receiver answers no ECN mark with a CNP, without the reaction point a sender never slows
 * down on one, so a congested queue is signalled only by PFC pauses or by drops. */
static void check_roce_ecn(const struct judge_flow *jf, struct judge_causes *out)
{
    const cJSON *dcb = cJSON_GetObjectItemCaseSensitive(jf->flow->conditions, "dcb");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(dcb, "ecn");
    const cJSON *np = cJSON_GetObjectItemCaseSensitive(e, "np_enabled"),
                *rp = cJSON_GetObjectItemCaseSensitive(e, "rp_enabled");
    double prio = 0;
    if (!is_verbs(jf) || !e || !jsonutil_num(e, "priority", &prio) ||
        !(cJSON_IsFalse(np) || cJSON_IsFalse(rp)))
        return;
    const char *dev = jsonutil_str(jf->flow->conditions, "netdev");
    char fix[256];
    snprintf(fix, sizeof(fix),
             "echo 1 > /sys/class/net/%s/ecn/roce_np/enable/%d and .../roce_rp/enable/%d on "
             "both ends, and ECN marking on the switch queue",
             dev ? dev : "<netdev>", (int)prio, (int)prio);
    const char *off = cJSON_IsFalse(np) && cJSON_IsFalse(rp) ? "both points"
                      : cJSON_IsFalse(np) ? "the notification point (no CNPs for marks received)"
                                          : "the reaction point (no slowing on CNPs)";
    struct judge_cause *k = judge_cause_add(
        out, jf, "roce-ecn-off", fix,
        "flow %s's NIC has RoCE ECN off for priority %d, %s: a congested queue is signalled "
        "only by PFC pauses or drops",
        fname(jf), (int)prio, off);
    judge_ev_num(k, "priority", prio, "802.1p");
    judge_ev_text(k, "notification point",
                  cJSON_IsBool(np) ? (cJSON_IsTrue(np) ? "on" : "off") : "unknown");
    judge_ev_text(k, "reaction point",
                  cJSON_IsBool(rp) ? (cJSON_IsTrue(rp) ? "on" : "off") : "unknown");
}

/* TCP ECN off (net.ipv4.tcp_ecn 0): congestion shows only as loss (tcp(7)). */
static void check_ecn_off(const struct judge_flow *jf, struct judge_causes *out)
{
    const char *e = sysctl(jf, "tcp_ecn");
    if (!is_tcp(jf) || !e || atoi(e) != 0 || e[0] != '0')
        return;
    struct judge_cause *k = judge_cause_add(
        out, jf, "ecn-off",
        "sysctl -w net.ipv4.tcp_ecn=1 on both ends (and ECN marking on the switch)",
        "flow %s runs with TCP ECN off: a queue signals only by dropping", fname(jf));
    judge_ev_num(k, "net.ipv4.tcp_ecn", 0, "setting");
}

/* Of the time the workers were runnable, the share they waited on a run queue above which
 * their cores were busy with other work (a worker alone on its core waits a few per cent:
 * wake-up latency). */
#define BUSY_CPU_WAIT_PCT 25

/* The workers' scheduler time over their lives (conditions.cpu, from /proc/<tid>/schedstat,
 * Documentation/scheduler/sched-stats.rst): runnable but waiting for a CPU means another
 * thread or process held it. */
static void check_busy_cpu(const struct judge_flow *jf, struct judge_causes *out)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(jf->flow->conditions, "cpu");
    double pct, run, wait, n;
    if (!jsonutil_num(c, "runqueue_wait_pct", &pct) || !jsonutil_num(c, "run_s", &run) ||
        !jsonutil_num(c, "runqueue_wait_s", &wait) || !jsonutil_num(c, "workers", &n) ||
        !(pct >= BUSY_CPU_WAIT_PCT))
        return;
    struct judge_cause *k = judge_cause_add(
        out, jf, "busy-cpu",
        "give the workers cores of their own: move the other load off them, or run fewer busy "
        "threads than cores (on one host the receiving side counts too)",
        "flow %s's workers waited %.0f%% of the time they were runnable for a CPU: other "
        "threads or processes held their cores",
        fname(jf), pct);
    judge_ev_num(k, "run-queue wait of runnable time", pct, "%");
    judge_ev_num(k, "on a CPU", run, "s");
    judge_ev_num(k, "waiting for a CPU", wait, "s");
    judge_ev_num(k, "workers", n, "threads");
}

/* A thread on a CPU this share of its life or more was bound by its core. */
#define CPU_BOUND_RUN_PCT 90

static void cpu_ev(struct judge_cause *k, const char *side, const cJSON *c)
{
    double v;
    char name[64];
    snprintf(name, sizeof(name), "%s run-queue wait", side);
    if (jsonutil_num(c, "runqueue_wait_pct", &v))
        judge_ev_num(k, name, v, "%");
    snprintf(name, sizeof(name), "%s busiest thread on a CPU", side);
    if (jsonutil_num(c, "busiest_run_pct", &v))
        judge_ev_num(k, name, v, "%");
    snprintf(name, sizeof(name), "%s threads", side);
    if (jsonutil_num(c, "workers", &v))
        judge_ev_num(k, name, v, "threads");
}

/* The peer's side of the flow was the CPU-bound end: its data-connection threads
 * (conditions.peer_cpu, the agent's answer to tcp.cpu from the same schedstat as
 * conditions.cpu) waited for a CPU as busy-cpu counts, or one of them was on a CPU nearly
 * all its life, while this side's did neither. */
static void check_peer_cpu(const struct judge_flow *jf, struct judge_causes *out)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(jf->flow->conditions, "peer_cpu");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(jf->flow->conditions, "cpu");
    double pw, pb, lw = 0, lb = 0;
    if (!jsonutil_num(p, "runqueue_wait_pct", &pw) || !jsonutil_num(p, "busiest_run_pct", &pb))
        return;
    jsonutil_num(c, "runqueue_wait_pct", &lw);
    jsonutil_num(c, "busiest_run_pct", &lb);
    bool waited = pw >= BUSY_CPU_WAIT_PCT && lw < BUSY_CPU_WAIT_PCT;
    bool bound = pb >= CPU_BOUND_RUN_PCT && lb < CPU_BOUND_RUN_PCT;
    if (!waited && !bound)
        return;
    struct judge_cause *k =
        waited ? judge_cause_add(out, jf, "peer-bottleneck",
                                 "look at the peer: give its agent's threads cores of their own "
                                 "(move the other load off them, or run fewer busy threads than "
                                 "cores there)",
                                 "flow %s's peer was the bottleneck: its threads waited %.0f%% of "
                                 "their runnable time for a CPU (this side %.0f%%)",
                                 fname(jf), pw, lw)
               : judge_cause_add(out, jf, "peer-bottleneck",
                                 "look at the peer: spread the flow over more connections (one "
                                 "thread per connection there) or more peers",
                                 "flow %s's peer was the bottleneck: one of its threads was on a "
                                 "CPU %.0f%% of its life, bound by its core (this side's busiest "
                                 "%.0f%%)",
                                 fname(jf), pb, lb);
    cpu_ev(k, "the peer's", p);
    cpu_ev(k, "this side's", c);
}

/* The best point's TCP figures, or NULL. */
static const struct results_tcp *best_tcp(const struct judge_flow *jf)
{
    const struct results_tcp *t = NULL;
    double best = -1, g;
    for (int i = 0; i < jf->flow->npoints; i++) {
        const struct results_point *p = &jf->flow->points[i];
        if (p->tcp_st == RESULTS_SET && results_num_get(&p->goodput_gbps, &g) && g > best) {
            best = g;
            t = &p->tcp;
        }
    }
    return t;
}

/* A socket can keep at most its buffer in flight: rate <= buffer / RTT. Autotuning stops at
 * tcp_rmem / tcp_wmem's third field (tcp(7)); the bandwidth-delay product of the ceiling at
 * the measured RTT above that says the buffer bounds it. */
static void check_tcp_buffers(const struct judge_flow *jf, struct judge_causes *out)
{
    const struct results_tcp *t = best_tcp(jf);
    double rtt, r = sysctl_max(jf, "tcp_rmem"), w = sysctl_max(jf, "tcp_wmem");
    if (!is_tcp(jf) || !t || !results_num_get(&t->rtt_us, &rtt) || !(rtt > 0) || (r < 0 && w < 0))
        return;
    double buf = r < 0 ? w : w < 0 ? r : fmin(r, w);
    double limit_gbps = buf * 8 / (rtt * 1e3);
    double bdp = isfinite(jf->ceiling_gbps) ? jf->ceiling_gbps * rtt * 1e3 / 8 : NAN;
    /* Only against a ceiling: the smoothed RTT of a stream that fills its buffer includes
     * the queueing in that buffer, so goodput ~ buffer / RTT holds for any such stream. */
    if (!(isfinite(bdp) && bdp > buf))
        return;
    struct judge_cause *k = judge_cause_add(
        out, jf, "tcp-buffers",
        "raise net.ipv4.tcp_rmem / tcp_wmem's maximum (and net.core.rmem_max / wmem_max) above "
        "the bandwidth-delay product",
        "flow %s's socket buffers (%.0f B) at an RTT of %.0f us allow at most %.2f Gb/s", fname(jf),
        buf, rtt, limit_gbps);
    judge_ev_num(k, "buffer max", buf, "B");
    judge_ev_num(k, "RTT", rtt, "us");
    if (isfinite(bdp))
        judge_ev_num(k, "bandwidth-delay product", bdp, "B");
}

/* Loss-based congestion control (reno, cubic) halves or cuts its window on every loss
 * episode; retransmissions show it happened. */
static void check_tcp_cc(const struct judge_flow *jf, struct judge_causes *out)
{
    const struct results_tcp *t = best_tcp(jf);
    const char *cc =
        jf->flow->cond.tcp_cc ? jf->flow->cond.tcp_cc : sysctl(jf, "tcp_congestion_control");
    double re;
    if (!is_tcp(jf) || !t || !cc || !results_num_get(&t->retrans_segments, &re) || !(re > 0) ||
        (strncmp(cc, "reno", 4) && strncmp(cc, "cubic", 5)))
        return;
    struct judge_cause *k = judge_cause_add(
        out, jf, "tcp-loss-cc",
        "find the loss (a shallow switch buffer, a policer); or try bbr or dctcp "
        "(params.congestion_control)",
        "flow %s retransmitted %.0f segments under %s, which backs off on every loss", fname(jf),
        re, cc);
    judge_ev_num(k, "retransmitted segments", re, "segments");
    judge_ev_text(k, "congestion control", cc);
}

const struct judge_rule judge_rules[] = {
    {"one-connection", "one connection or queue pair carries a bandwidth flow", 90,
     check_one_connection},
    {"depth-1", "one operation in flight (depth or batch 1)", 85, check_depth_one},
    {"pcie-downtrained", "the NIC's PCIe link trained below its speed or width", 80,
     check_pcie_down},
    {"mtu-below-link", "the path MTU below the port's largest", 75, check_mtu_below_link},
    {"numa-remote-buffer", "the worker and its buffer off the NIC's NUMA node", 70,
     check_numa_remote},
    {"gpu-nic-sys", "a GPU whose nearest NIC is SYS", 65, check_gpu_sys},
    {"busy-cpu", "the workers waited for a CPU held by other work", 62, check_busy_cpu},
    {"peer-bottleneck", "the peer's side was the CPU-bound end", 61, check_peer_cpu},
    {"tcp-buffers", "TCP socket buffer limits below the bandwidth-delay product", 60,
     check_tcp_buffers},
    {"roce-v1-gid", "a RoCE v1 GID", 55, check_roce_v1},
    {"pfc-off", "PFC off for the flow's priority", 50, check_pfc_off},
    {"roce-ecn-off", "RoCE ECN (DCQCN) off for the flow's priority", 48, check_roce_ecn},
    {"tcp-loss-cc", "retransmissions under loss-based TCP congestion control", 45, check_tcp_cc},
    {"ecn-off", "TCP ECN off", 30, check_ecn_off},
};
const int judge_nrules = (int)(sizeof(judge_rules) / sizeof(judge_rules[0]));

/* ---- the run ---- */

static const cJSON *mix_flow_of(const struct results_run *run, const char *name)
{
    const cJSON *flows = cJSON_GetObjectItemCaseSensitive(run->mix, "flows"), *f;
    cJSON_ArrayForEach(f, flows)
    {
        const char *n = jsonutil_str(f, "name");
        if (n && name && !strcmp(n, name))
            return f;
    }
    return NULL;
}

int judge_flow_nic(const struct topo_model *topo, const struct results_flow *f)
{
    if (!topo)
        return -1;
    if (f->cond.rdma_device)
        return topo_model_find_nic_by_rdma(topo, f->cond.rdma_device);
    const char *nd = jsonutil_str(f->conditions, "local_netdev");
    int d = nd && *nd ? topo_model_find_netdev(topo, nd) : -1;
    return d >= 0 ? topo->netdevs[d].nic : -1;
}

static bool bandwidth_flow(const struct results_flow *f)
{
    const char *op = results_str_get(&f->op), *t = results_str_get(&f->transport);
    return op && t && strcmp(t, "sim") &&
           (!strcmp(op, "stream") || !strcmp(op, "copy") || !strcmp(op, "kv"));
}

double judge_flow_best_goodput(const struct results_flow *f)
{
    double best = -1, g;
    for (int k = 0; bandwidth_flow(f) && k < f->npoints; k++)
        if (results_num_get(&f->points[k].goodput_gbps, &g) && g > best)
            best = g;
    return best;
}

/* Heavier first; equal weights keep their order (insertion sort: stable). */
static void rank(struct judge_causes *c)
{
    for (int i = 1; i < c->n; i++) {
        struct judge_cause t = c->v[i];
        int j = i;
        for (; j > 0 && c->v[j - 1].weight < t.weight; j--)
            c->v[j] = c->v[j - 1];
        c->v[j] = t;
    }
}

void judge_run(const struct results_run *run, const struct topo_model *topo,
               struct judge_causes *out)
{
    for (int p = 0; p < run->nphases; p++)
        for (int i = 0; i < run->phases[p].nflows; i++) {
            const struct results_flow *f = &run->phases[p].flows[i];
            double best = judge_flow_best_goodput(f);
            if (best < 0)
                continue;
            out->flows_seen++;
            struct judge_flow jf = {.run = run,
                                    .topo = topo,
                                    .phase = &run->phases[p],
                                    .flow = f,
                                    .mix_flow = mix_flow_of(run, results_str_get(&f->name)),
                                    .goodput_gbps = best,
                                    .ceiling_gbps = NAN,
                                    .percent = results_ceiling_percent(&f->ceiling, best),
                                    .nic = judge_flow_nic(topo, f)};
            if (!results_num_get(&f->ceiling.gbps, &jf.ceiling_gbps) || !isfinite(jf.percent))
                jf.ceiling_gbps = NAN;
            if (isfinite(jf.percent) && jf.percent >= 100 * JUDGE_SHORT_FRACTION)
                continue;
            out->flows_judged++;
            for (int r = 0; r < judge_nrules; r++)
                judge_rules[r].check(&jf, out);
        }
    rank(out);
}

static void set_str(struct results_str *f, const char *s)
{
    results_str_set(f, s);
}

void judge_to_results(const struct judge_causes *c, struct results_causes *out)
{
    results_causes_clear(out);
    out->st = RESULTS_SET;
    out->n = c->n;
    out->v = xalloc_zero((size_t)c->n + 1, sizeof(*out->v));
    for (int i = 0; i < c->n; i++) {
        const struct judge_cause *s = &c->v[i];
        struct results_cause *d = &out->v[i];
        set_str(&d->rule, s->rule);
        set_str(&d->flow, s->flow);
        set_str(&d->phase, s->phase);
        set_str(&d->figure, s->figure);
        results_num_set(&d->percent_of_ceiling, isfinite(s->percent), s->percent);
        if (!isfinite(s->percent))
            d->percent_of_ceiling.st = RESULTS_NULL;
        set_str(&d->message, s->msg);
        set_str(&d->fix, s->fix);
        d->nev = s->nev;
        d->ev = xalloc_zero((size_t)s->nev + 1, sizeof(*d->ev));
        for (int k = 0; k < s->nev; k++) {
            set_str(&d->ev[k].name, s->ev[k].name);
            if (isfinite(s->ev[k].value)) {
                results_num_set(&d->ev[k].value, true, s->ev[k].value);
                set_str(&d->ev[k].unit, s->ev[k].unit);
            } else {
                set_str(&d->ev[k].text, s->ev[k].text);
            }
        }
    }
}
