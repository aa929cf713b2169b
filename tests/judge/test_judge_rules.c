/* judge rules: every cause rule triggered by a made-up result and conditions on a real-shaped
 * node model (tests/lint's fixture: two sockets, a ConnectX-7 per socket on RoCE), and quiet
 * on a good one; ranking, the results round trip, and the reference rows (each metric's
 * figure, matching, verdicts and the conditions that withhold one). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/judge/judge.h"
#include "engine/results/results_json.h"
#include "lint_fixture.h"

/* A verbs bulk flow short of its ceiling (100 of 380 Gb/s) with every condition good. */
static const char *const VERBS_DOC =
    "{\"format\":\"fabtop-results\",\"version\":1,"
    "\"conditions\":{\"tcp_congestion_control\":\"cubic\",\"tcp_ecn\":\"2\","
    "\"tcp_rmem\":\"4096 131072 67108864\",\"tcp_wmem\":\"4096 16384 67108864\"},"
    "\"mix\":{\"name\":\"m\",\"flows\":[{\"name\":\"bulk\",\"params\":{\"depth\":64}}]},"
    "\"phases\":[{\"name\":\"loaded\",\"flows\":[{\"name\":\"bulk\",\"transport\":\"verbs\","
    "\"op\":\"stream\",\"connections_asked\":4,"
    "\"points\":[{\"size_bytes\":1048576,\"goodput_gbps\":100}],"
    "\"ceiling\":{\"path\":\"mlx5_0 port 1\",\"gbps\":380,\"narrowest\":\"NIC PCIe link\","
    "\"terms\":[{\"name\":\"NIC PCIe link\",\"kind\":\"limit\",\"unit\":\"Gb/s\",\"value\":380,"
    "\"detail\":\"0000:04:00.0: Gen5 x16, 63.015 GB/s\"}]},"
    "\"conditions\":{\"rdma_device\":\"mlx5_0\",\"port\":1,\"link_layer\":\"Ethernet\","
    "\"gid_type\":\"RoCE v2\",\"gid_index\":1,\"path_mtu\":4096,\"queue_pairs\":4,"
    "\"queue_depth\":64,\"dscp\":26,\"dcb\":{\"priority\":3,\"pfc_enabled\":true},"
    "\"worker_cpus\":\"0-31\",\"memory\":\"host\"}}]}]}";

/* A TCP stream short of its ceiling (20 of 90 Gb/s), 4 connections, ECN on request, no loss,
 * buffers well above the bandwidth-delay product at 100 us. */
static const char *const TCP_DOC =
    "{\"format\":\"fabtop-results\",\"version\":1,"
    "\"conditions\":{\"tcp_congestion_control\":\"cubic\",\"tcp_ecn\":\"2\","
    "\"tcp_rmem\":\"4096 131072 67108864\",\"tcp_wmem\":\"4096 16384 67108864\"},"
    "\"mix\":{\"name\":\"t\",\"flows\":[{\"name\":\"bulk\"}]},"
    "\"phases\":[{\"name\":\"loaded\",\"flows\":[{\"name\":\"bulk\",\"transport\":\"tcp\","
    "\"op\":\"stream\",\"connections_asked\":4,"
    "\"points\":[{\"size_bytes\":131072,\"goodput_gbps\":20,"
    "\"tcp\":{\"retrans_segments\":0,\"rtt_us\":100}}],"
    "\"ceiling\":{\"path\":\"eth0\",\"gbps\":90,\"narrowest\":\"port data rate\"},"
    "\"conditions\":{\"congestion_control\":\"cubic\",\"mss_bytes\":8948,"
    "\"worker_cpus\":\"0-31\"}}]}]}";

struct fx {
    cJSON *doc;
    struct topo_model *topo;
    struct results_run run;
    struct judge_causes c;
};

static cJSON *flow_of(cJSON *doc)
{
    cJSON *ph = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "phases"), 0);
    return cJSON_GetArrayItem(cJSON_GetObjectItem(ph, "flows"), 0);
}
static cJSON *cond_of(cJSON *doc)
{
    return cJSON_GetObjectItem(flow_of(doc), "conditions");
}
static cJSON *point_of(cJSON *doc)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(flow_of(doc), "points"), 0);
}
static void set_num(cJSON *o, const char *k, double v)
{
    cJSON_DeleteItemFromObject(o, k);
    cJSON_AddNumberToObject(o, k, v);
}
static void set_str(cJSON *o, const char *k, const char *v)
{
    cJSON_DeleteItemFromObject(o, k);
    cJSON_AddStringToObject(o, k, v);
}

static struct fx *fx_new(const char *text)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->doc = cJSON_Parse(text);
    assert_non_null(f->doc);
    f->topo = fx_roce_node();
    return f;
}

/* Read the (changed) document into the model and judge it. */
static void judge(struct fx *f)
{
    struct ft_err err = {0};
    results_run_free(&f->run);
    judge_causes_free(&f->c);
    if (results_json_read_run(f->doc, "test", &f->run, &err) < 0)
        fail_msg("read: %s", err.msg);
    judge_run(&f->run, f->topo, &f->c);
    for (int i = 0; i < f->c.n; i++)
        printf("  cause %s: %s\n", f->c.v[i].rule, f->c.v[i].msg);
}

static void fx_free(struct fx *f)
{
    results_run_free(&f->run);
    judge_causes_free(&f->c);
    cJSON_Delete(f->doc);
    topo_model_free(f->topo);
    free(f);
}

static int count(const struct fx *f, const char *rule)
{
    int n = 0;
    for (int i = 0; i < f->c.n; i++)
        n += !strcmp(f->c.v[i].rule, rule);
    return n;
}

static const struct judge_cause *find(const struct fx *f, const char *rule)
{
    for (int i = 0; i < f->c.n; i++)
        if (!strcmp(f->c.v[i].rule, rule))
            return &f->c.v[i];
    return NULL;
}

static double ev(const struct judge_cause *c, const char *name)
{
    for (int i = 0; i < c->nev; i++)
        if (!strcmp(c->ev[i].name, name))
            return c->ev[i].value;
    return NAN;
}

/* ---- quiet ---- */

static void quiet_on_good_verbs(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    judge(f);
    assert_int_equal(f->c.flows_seen, 1);
    assert_int_equal(f->c.flows_judged, 1); /* 26% of its ceiling: judged, nothing found */
    assert_int_equal(f->c.n, 0);
    fx_free(f);
}

static void quiet_on_good_tcp(void **state)
{
    (void)state;
    struct fx *f = fx_new(TCP_DOC);
    judge(f);
    assert_int_equal(f->c.flows_judged, 1);
    assert_int_equal(f->c.n, 0);
    fx_free(f);
}

/* At 92% of its ceiling nothing is named, even with depth 1 and one QP. */
static void quiet_when_not_short(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    set_num(point_of(f->doc), "goodput_gbps", 350);
    set_num(cond_of(f->doc), "queue_depth", 1);
    set_num(cond_of(f->doc), "queue_pairs", 1);
    judge(f);
    assert_int_equal(f->c.flows_seen, 1);
    assert_int_equal(f->c.flows_judged, 0);
    assert_int_equal(f->c.n, 0);
    /* At 79% it is short (the documented 80% line). */
    set_num(point_of(f->doc), "goodput_gbps", 0.79 * 380);
    judge(f);
    assert_int_equal(f->c.flows_judged, 1);
    assert_int_equal(count(f, "depth-1"), 1);
    fx_free(f);
}

/* A latency flow is no bandwidth figure. */
static void quiet_on_pingpong(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    set_str(flow_of(f->doc), "op", "pingpong");
    set_num(cond_of(f->doc), "queue_pairs", 1);
    judge(f);
    assert_int_equal(f->c.flows_seen, 0);
    assert_int_equal(f->c.n, 0);
    fx_free(f);
}

/* ---- each rule ---- */

static void one_connection(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    set_num(cond_of(f->doc), "queue_pairs", 1);
    judge(f);
    assert_int_equal(f->c.n, 1);
    const struct judge_cause *c = find(f, "one-connection");
    assert_non_null(c);
    assert_float_equal(ev(c, "queue pairs"), 1, 0);
    assert_float_equal(ev(c, "goodput"), 100, 1e-9);
    assert_float_equal(ev(c, "ceiling"), 380, 1e-9);
    assert_float_equal(c->percent, 100.0 * 100 / 380, 1e-9);
    assert_string_equal(c->flow, "bulk");
    assert_string_equal(c->phase, "loaded");
    fx_free(f);
    /* TCP: one connection asked. */
    f = fx_new(TCP_DOC);
    set_num(flow_of(f->doc), "connections_asked", 1);
    judge(f);
    assert_non_null(c = find(f, "one-connection"));
    assert_float_equal(ev(c, "connections"), 1, 0);
    fx_free(f);
}

/* One TCP connection out of a bond that hashes flows onto its links: the cause says the bond
 * puts it on one of them; an active-backup bond (one link carries all anyway) does not. */
static void one_connection_bond(void **state)
{
    (void)state;
    struct fx *f = fx_new(TCP_DOC);
    struct topo_model *m = f->topo;
    /* bond0 over two slaves of its own, added to the node. */
    int ib = topo_model_add_netdev(m), s1 = topo_model_add_netdev(m), s2 = topo_model_add_netdev(m);
    assert_true(ib >= 0 && s1 >= 0 && s2 >= 0);
    snprintf(m->netdevs[s1].name, sizeof(m->netdevs[s1].name), "ens1f0");
    snprintf(m->netdevs[s2].name, sizeof(m->netdevs[s2].name), "ens1f1");
    struct topo_netdev *b = &m->netdevs[ib];
    snprintf(b->name, sizeof(b->name), "bond0");
    snprintf(b->bond_mode, sizeof(b->bond_mode), "802.3ad");
    snprintf(b->bond_hash, sizeof(b->bond_hash), "layer3+4");
    snprintf(b->addrs, sizeof(b->addrs), "10.1.0.5 fd00::5");
    b->valid |= TOPO_NET_V_BOND;
    snprintf(m->netdevs[s1].master, sizeof(m->netdevs[s1].master), "bond0");
    snprintf(m->netdevs[s2].master, sizeof(m->netdevs[s2].master), "bond0");
    set_num(flow_of(f->doc), "connections_asked", 1);
    set_str(cond_of(f->doc), "local_address", "10.1.0.5");
    judge(f);
    const struct judge_cause *c = find(f, "one-connection");
    assert_non_null(c);
    char msg[sizeof(c->msg)];
    snprintf(msg, sizeof(msg), "%s", c->msg);
    assert_string_equal(msg, "flow bulk runs on one connection: one core moves all of it, and "
                             "bond0 (802.3ad, hash layer3+4) puts it on one of its 2 links");
    assert_float_equal(ev(c, "bond links"), 2, 0);
    /* The bond named by the flow's netdev works the same. */
    cJSON_DeleteItemFromObject(cond_of(f->doc), "local_address");
    set_str(cond_of(f->doc), "local_netdev", "bond0");
    judge(f);
    assert_non_null(strstr(find(f, "one-connection")->msg, "bond0 (802.3ad"));
    /* active-backup: no hash, no bond clause. */
    snprintf(b->bond_mode, sizeof(b->bond_mode), "active-backup");
    judge(f);
    c = find(f, "one-connection");
    assert_non_null(c);
    assert_null(strstr(c->msg, "bond0"));
    assert_true(isnan(ev(c, "bond links")));
    /* Another address: not the bond's. */
    snprintf(b->bond_mode, sizeof(b->bond_mode), "802.3ad");
    cJSON_DeleteItemFromObject(cond_of(f->doc), "local_netdev");
    set_str(cond_of(f->doc), "local_address", "10.1.0.50");
    judge(f);
    assert_null(strstr(find(f, "one-connection")->msg, "bond0"));
    fx_free(f);
}

static void depth_one(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    set_num(cond_of(f->doc), "queue_depth", 1);
    judge(f);
    assert_int_equal(f->c.n, 1);
    assert_float_equal(ev(find(f, "depth-1"), "queue depth"), 1, 0);
    fx_free(f);
    /* From the mix's params when the transport did not record it. */
    f = fx_new(VERBS_DOC);
    cJSON_DeleteItemFromObject(cond_of(f->doc), "queue_depth");
    cJSON *mf =
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(f->doc, "mix"), "flows"), 0);
    set_num(cJSON_GetObjectItem(mf, "params"), "depth", 1);
    judge(f);
    assert_int_equal(count(f, "depth-1"), 1);
    fx_free(f);
}

static void mtu_below_link(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    set_num(cond_of(f->doc), "path_mtu", 1024);
    judge(f);
    assert_int_equal(f->c.n, 1);
    const struct judge_cause *c = find(f, "mtu-below-link");
    assert_non_null(c);
    assert_float_equal(ev(c, "path MTU"), 1024, 0);
    assert_float_equal(ev(c, "port max MTU"), 4096, 0);
    fx_free(f);
    /* Without a topology the port's largest is unknown: quiet. */
    f = fx_new(VERBS_DOC);
    set_num(cond_of(f->doc), "path_mtu", 1024);
    topo_model_free(f->topo);
    f->topo = NULL;
    judge(f);
    assert_int_equal(count(f, "mtu-below-link"), 0);
    fx_free(f);
}

static void roce_v1(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    set_str(cond_of(f->doc), "gid_type", "IB/RoCE v1");
    judge(f);
    assert_int_equal(f->c.n, 1);
    const struct judge_cause *c = find(f, "roce-v1-gid");
    assert_non_null(c);
    assert_string_equal(c->ev[2].text, "IB/RoCE v1");
    fx_free(f);
}

static void pcie_downtrained(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    f->topo->pci[FX_NIC0].cur_speed_gts = 16; /* Gen4 in a Gen5 slot */
    f->topo->pci[FX_NIC0].cur_width = 8;
    judge(f);
    assert_int_equal(f->c.n, 1);
    const struct judge_cause *c = find(f, "pcie-downtrained");
    assert_non_null(c);
    assert_float_equal(ev(c, "link speed"), 16, 0);
    assert_float_equal(ev(c, "max link speed"), 32, 0);
    assert_float_equal(ev(c, "link width"), 8, 0);
    assert_float_equal(ev(c, "max link width"), 16, 0);
    fx_free(f);
}

static void numa_remote(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    set_str(cond_of(f->doc), "worker_cpus", "32-47,60"); /* socket 1; mlx5_0 is on socket 0 */
    judge(f);
    assert_int_equal(f->c.n, 1);
    const struct judge_cause *c = find(f, "numa-remote-buffer");
    assert_non_null(c);
    assert_float_equal(ev(c, "NIC's NUMA node"), 0, 0);
    fx_free(f);
    /* Not pinned: also named. */
    f = fx_new(VERBS_DOC);
    set_str(cond_of(f->doc), "worker_cpus", "not pinned (--no-pin)");
    judge(f);
    assert_int_equal(count(f, "numa-remote-buffer"), 1);
    fx_free(f);
    /* One CPU of the NIC's node among others: quiet. */
    f = fx_new(VERBS_DOC);
    set_str(cond_of(f->doc), "worker_cpus", "5,40-41");
    judge(f);
    assert_int_equal(count(f, "numa-remote-buffer"), 0);
    fx_free(f);
}

static void gpu_nic_sys(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    cJSON *mf =
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(f->doc, "mix"), "flows"), 0);
    cJSON *local = cJSON_AddObjectToObject(mf, "local");
    cJSON_AddNumberToObject(local, "gpu", 0);
    set_str(cond_of(f->doc), "memory", "GPU (dma-buf)");
    /* GPU0 beside mlx5_0 (one PCIe switch: PIX): quiet. */
    judge(f);
    assert_int_equal(f->c.n, 0);
    /* Leave only the NIC on the other socket: GPU0's nearest is SYS. */
    set_str(cond_of(f->doc), "rdma_device", "mlx5_1");
    f->topo->nics[0] = f->topo->nics[1];
    f->topo->nnics = 1;
    fx_refinalize(f->topo);
    judge(f);
    assert_int_equal(count(f, "gpu-nic-sys"), 1);
    assert_string_equal(find(f, "gpu-nic-sys")->ev[3].text, "SYS");
    fx_free(f);
}

static void pfc_off(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    cJSON *dcb = cJSON_GetObjectItem(cond_of(f->doc), "dcb");
    cJSON_ReplaceItemInObject(dcb, "pfc_enabled", cJSON_CreateFalse());
    judge(f);
    assert_int_equal(f->c.n, 1);
    const struct judge_cause *c = find(f, "pfc-off");
    assert_non_null(c);
    assert_float_equal(ev(c, "DSCP"), 26, 0);
    assert_float_equal(ev(c, "priority"), 3, 0);
    assert_non_null(strstr(c->msg, "priority 3"));
    fx_free(f);
}

static void ecn_off(void **state)
{
    (void)state;
    struct fx *f = fx_new(TCP_DOC);
    set_str(cJSON_GetObjectItem(f->doc, "conditions"), "tcp_ecn", "0");
    judge(f);
    assert_int_equal(f->c.n, 1);
    assert_non_null(find(f, "ecn-off"));
    fx_free(f);
    /* The same setting on a verbs flow: not TCP's business. */
    f = fx_new(VERBS_DOC);
    set_str(cJSON_GetObjectItem(f->doc, "conditions"), "tcp_ecn", "0");
    judge(f);
    assert_int_equal(f->c.n, 0);
    fx_free(f);
}

static void tcp_buffers(void **state)
{
    (void)state;
    struct fx *f = fx_new(TCP_DOC);
    /* 90 Gb/s x 1000 us = 11.25 MB in flight; the maximum is 6 MiB. */
    set_num(cJSON_GetObjectItem(point_of(f->doc), "tcp"), "rtt_us", 1000);
    set_str(cJSON_GetObjectItem(f->doc, "conditions"), "tcp_rmem", "4096 131072 6291456");
    judge(f);
    assert_int_equal(f->c.n, 1);
    const struct judge_cause *c = find(f, "tcp-buffers");
    assert_non_null(c);
    assert_float_equal(ev(c, "buffer max"), 6291456, 0);
    assert_float_equal(ev(c, "RTT"), 1000, 0);
    assert_float_equal(ev(c, "bandwidth-delay product"), 90e9 * 1e-3 / 8, 1);
    fx_free(f);
    /* At 100 us the product is 1.1 MB: the same buffer is enough. */
    f = fx_new(TCP_DOC);
    set_str(cJSON_GetObjectItem(f->doc, "conditions"), "tcp_rmem", "4096 131072 6291456");
    judge(f);
    assert_int_equal(f->c.n, 0);
    fx_free(f);
}

static void tcp_loss_cc(void **state)
{
    (void)state;
    struct fx *f = fx_new(TCP_DOC);
    set_num(cJSON_GetObjectItem(point_of(f->doc), "tcp"), "retrans_segments", 120);
    judge(f);
    assert_int_equal(f->c.n, 1);
    const struct judge_cause *c = find(f, "tcp-loss-cc");
    assert_non_null(c);
    assert_float_equal(ev(c, "retransmitted segments"), 120, 0);
    fx_free(f);
    /* bbr does not back off on loss that way: quiet. */
    f = fx_new(TCP_DOC);
    set_num(cJSON_GetObjectItem(point_of(f->doc), "tcp"), "retrans_segments", 120);
    set_str(cond_of(f->doc), "congestion_control", "bbr");
    judge(f);
    assert_int_equal(f->c.n, 0);
    fx_free(f);
}

/* RoCE ECN off for the flow's priority (the mlx5 switches in conditions.dcb.ecn): named with
 * the netdev's sysfs fix; quiet when both points are on, when unknown (null), or for TCP. */
static void roce_ecn_off(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    set_str(cond_of(f->doc), "netdev", "ens1f0np0");
    cJSON *dcb = cJSON_GetObjectItem(cond_of(f->doc), "dcb");
    cJSON *e = cJSON_AddObjectToObject(dcb, "ecn");
    set_num(e, "priority", 3);
    cJSON_AddBoolToObject(e, "np_enabled", true);
    cJSON_AddBoolToObject(e, "rp_enabled", false);
    judge(f);
    assert_int_equal(f->c.n, 1);
    const struct judge_cause *c = find(f, "roce-ecn-off");
    assert_non_null(c);
    assert_float_equal(ev(c, "priority"), 3, 0);
    assert_non_null(strstr(c->msg, "the reaction point"));
    assert_non_null(strstr(c->fix, "/sys/class/net/ens1f0np0/ecn/roce_np/enable/3"));
    cJSON_ReplaceItemInObject(e, "rp_enabled", cJSON_CreateTrue());
    judge(f);
    assert_int_equal(f->c.n, 0);
    cJSON_ReplaceItemInObject(e, "np_enabled", cJSON_CreateNull());
    judge(f);
    assert_int_equal(f->c.n, 0);
    fx_free(f);
    /* The same record on a TCP flow is not the rule's business. */
    f = fx_new(TCP_DOC);
    cJSON *d2 = cJSON_AddObjectToObject(cond_of(f->doc), "dcb");
    cJSON *e2 = cJSON_AddObjectToObject(d2, "ecn");
    set_num(e2, "priority", 3);
    cJSON_AddBoolToObject(e2, "np_enabled", false);
    cJSON_AddBoolToObject(e2, "rp_enabled", false);
    judge(f);
    assert_int_equal(f->c.n, 0);
    fx_free(f);
}

/* The workers waited on the run queue for 60% of the time they were runnable: busy cores.
 * Quiet at 5% (wake-up latency), and when the run recorded no scheduler times. */
static void busy_cpu(void **state)
{
    (void)state;
    struct fx *f = fx_new(TCP_DOC);
    cJSON *cpu = cJSON_AddObjectToObject(cond_of(f->doc), "cpu");
    set_num(cpu, "workers", 4);
    set_num(cpu, "wall_s", 20);
    set_num(cpu, "run_s", 6);
    set_num(cpu, "runqueue_wait_s", 9);
    set_num(cpu, "runqueue_wait_pct", 60);
    judge(f);
    assert_int_equal(f->c.n, 1);
    const struct judge_cause *c = find(f, "busy-cpu");
    assert_non_null(c);
    assert_float_equal(ev(c, "run-queue wait of runnable time"), 60, 0);
    assert_float_equal(ev(c, "waiting for a CPU"), 9, 0);
    assert_float_equal(ev(c, "workers"), 4, 0);
    assert_non_null(strstr(c->msg, "waited 60% of the time they were runnable"));
    set_num(cpu, "runqueue_wait_s", 0.3);
    set_num(cpu, "runqueue_wait_pct", 5);
    judge(f);
    assert_int_equal(f->c.n, 0);
    cJSON_DeleteItemFromObject(cond_of(f->doc), "cpu");
    judge(f);
    assert_int_equal(f->c.n, 0);
    fx_free(f);
}

/* The peer's threads waited for a CPU 66% of their runnable time while this side's waited
 * 7%: the peer is the bottleneck. One peer thread on a CPU 97% of its life: the same rule, the
 * other reason. Quiet when both sides wait alike (busy-cpu's case), when neither does, and
 * without the peer's times (an agent without tcp.cpu). */
static void peer_bottleneck(void **state)
{
    (void)state;
    struct fx *f = fx_new(TCP_DOC);
    cJSON *cpu = cJSON_AddObjectToObject(cond_of(f->doc), "cpu");
    set_num(cpu, "workers", 2);
    set_num(cpu, "runqueue_wait_pct", 7);
    set_num(cpu, "busiest_run_pct", 12);
    cJSON *pc = cJSON_AddObjectToObject(cond_of(f->doc), "peer_cpu");
    set_num(pc, "workers", 2);
    set_num(pc, "runqueue_wait_pct", 66);
    set_num(pc, "busiest_run_pct", 23);
    judge(f);
    assert_int_equal(f->c.n, 1);
    const struct judge_cause *c = find(f, "peer-bottleneck");
    assert_non_null(c);
    assert_float_equal(ev(c, "the peer's run-queue wait"), 66, 0);
    assert_float_equal(ev(c, "this side's run-queue wait"), 7, 0);
    assert_float_equal(ev(c, "the peer's threads"), 2, 0);
    assert_non_null(strstr(c->msg, "waited 66% of their runnable time for a CPU (this side 7%)"));
    set_num(pc, "runqueue_wait_pct", 3);
    set_num(pc, "busiest_run_pct", 97);
    judge(f);
    assert_int_equal(f->c.n, 1);
    const struct judge_cause *b = find(f, "peer-bottleneck");
    assert_non_null(b);
    char msg[sizeof(b->msg)];
    snprintf(msg, sizeof(msg), "%s", b->msg);
    assert_non_null(strstr(msg, "on a CPU 97% of its life"));
    assert_float_equal(ev(b, "the peer's busiest thread on a CPU"), 97, 0);
    set_num(pc, "busiest_run_pct", 40);
    judge(f);
    assert_int_equal(f->c.n, 0);
    /* Both sides waited: this host's busy-cpu, not the peer. */
    set_num(pc, "runqueue_wait_pct", 60);
    set_num(cpu, "runqueue_wait_pct", 55);
    set_num(cpu, "run_s", 2);
    set_num(cpu, "runqueue_wait_s", 2.4);
    judge(f);
    assert_null(find(f, "peer-bottleneck"));
    assert_non_null(find(f, "busy-cpu"));
    cJSON_DeleteItemFromObject(cond_of(f->doc), "peer_cpu");
    set_num(cpu, "runqueue_wait_pct", 7);
    judge(f);
    assert_int_equal(f->c.n, 0);
    fx_free(f);
}

/* Every rule in the table has its trigger above. */
static void every_rule_tested(void **state)
{
    (void)state;
    static const char *const tested[] = {
        "one-connection",     "depth-1",     "mtu-below-link", "roce-v1-gid",    "pcie-downtrained",
        "numa-remote-buffer", "gpu-nic-sys", "pfc-off",        "ecn-off",        "tcp-buffers",
        "tcp-loss-cc",        "busy-cpu",    "roce-ecn-off",   "peer-bottleneck"};
    assert_int_equal(judge_nrules, (int)(sizeof(tested) / sizeof(tested[0])));
    for (int i = 0; i < judge_nrules; i++) {
        bool found = false;
        for (size_t k = 0; k < sizeof(tested) / sizeof(tested[0]); k++)
            found = found || !strcmp(tested[k], judge_rules[i].id);
        if (!found)
            fail_msg("rule %s has no test", judge_rules[i].id);
        for (int k = 0; k < i; k++)
            assert_string_not_equal(judge_rules[k].id, judge_rules[i].id);
    }
}

/* Heavier rules first, whatever order they were found in; the model round trip keeps them. */
static void ranked_and_round_trip(void **state)
{
    (void)state;
    struct fx *f = fx_new(VERBS_DOC);
    set_str(cond_of(f->doc), "gid_type", "RoCE v1");
    set_num(cond_of(f->doc), "queue_pairs", 1);
    set_num(cond_of(f->doc), "queue_depth", 1);
    judge(f);
    assert_int_equal(f->c.n, 3);
    assert_string_equal(f->c.v[0].rule, "one-connection");
    assert_string_equal(f->c.v[1].rule, "depth-1");
    assert_string_equal(f->c.v[2].rule, "roce-v1-gid");
    judge_to_results(&f->c, &f->run.causes);
    cJSON *j = results_json_write_run(&f->run);
    struct results_run back;
    struct ft_err err = {0};
    assert_int_equal(results_json_read_run(j, "round trip", &back, &err), 0);
    assert_int_equal(back.causes.st, RESULTS_SET);
    assert_int_equal(back.causes.n, 3);
    assert_string_equal(back.causes.v[2].rule.s, "roce-v1-gid");
    assert_string_equal(back.causes.v[2].ev[2].text.s, "RoCE v1");
    double pct;
    assert_true(results_num_get(&back.causes.v[0].percent_of_ceiling, &pct));
    assert_float_equal(pct, 100.0 * 100 / 380, 1e-9);
    cJSON *j2 = results_json_write_run(&back);
    assert_true(cJSON_Compare(j, j2, true));
    cJSON_Delete(j2);
    /* A malformed causes array is refused with the field named. */
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "causes"), 0), "rule",
                              cJSON_CreateNumber(3));
    results_run_free(&back);
    assert_int_not_equal(results_json_read_run(j, "bad", &back, &err), 0);
    assert_non_null(strstr(err.msg, "causes[0].rule"));
    cJSON_Delete(j);
    fx_free(f);
}

/* The match of row id among m's, or NULL (the nth when a row matches twice). */
static const struct results_ref_match *ref(const struct results_ref_matches *m, const char *id,
                                           int nth)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->v[i].id.s, id) && nth-- == 0)
            return &m->v[i];
    return NULL;
}

static double num(const struct results_num *n)
{
    double v = NAN;
    results_num_get(n, &v);
    return v;
}

static void refs_of(struct fx *f, const struct topo_refs *refs, struct results_ref_matches *m)
{
    judge(f);
    judge_refs(&f->run, f->topo, refs, m);
    for (int i = 0; i < m->n; i++)
        printf("  ref %s: %s %.4g = %.1f%% %s%s\n", m->v[i].id.s, m->v[i].figure.s,
               num(&m->v[i].measured), num(&m->v[i].percent),
               results_str_get(&m->v[i].verdict) ?: "", results_str_get(&m->v[i].differs) ?: "");
}

/* The shipped table on a verbs stream: the PCIe Gen5 x16 row when the flow's narrowest term is
 * such a link; the ConnectX-7 port peak when the NIC is one (by name, or by PCI ids); the
 * WRITE pass lines only for a WRITE stream at their port rate, judged, or not judged where the
 * run differs from the row's conditions (size, memory). */
static void reference_rows(void **state)
{
    (void)state;
    struct topo_refs refs;
    struct ft_err err = {0};
    assert_int_equal(topo_refs_load(JUDGE_REFS_FILE, &refs, &err), 0);
    struct fx *f = fx_new(VERBS_DOC);
    /* An adapter known by ids no row names names no part. */
    struct topo_adapter *ad = &f->topo->adapters[f->topo->nics[0].adapter];
    snprintf(ad->model, TOPO_TEXT, "15b3:ffff");
    uint16_t dev = ad->device_id;
    ad->device_id = 0xffff;
    struct results_ref_matches m = {0};
    refs_of(f, &refs, &m);
    assert_non_null(ref(&m, "pcie-gen5-x16-peak", 0));
    assert_null(ref(&m, "connectx-7-port-peak", 0));
    /* Known by its PCI ids only (no name): ConnectX-7's 15b3:1021. */
    ad->device_id = dev;
    snprintf(ad->model, TOPO_TEXT, "15b3:%04x", dev);
    refs_of(f, &refs, &m);
    const struct results_ref_match *e = ref(&m, "connectx-7-port-peak", 0);
    assert_non_null(e);
    assert_float_equal(num(&e->percent), 100.0 * 100 / 400, 1e-9); /* 100 of 400 Gb/s */
    assert_string_equal(e->kind.s, "peak");
    assert_int_equal(e->verdict.st, RESULTS_ABSENT);
    snprintf(ad->model, TOPO_TEXT, "MT2910 Family [ConnectX-7]");
    /* Gen4 x16 does not match a Gen5 link, nor x1 an x16 one. */
    assert_null(ref(&m, "pcie-gen4-x16-peak", 0));
    /* No verb recorded: not a WRITE stream, no WRITE row. */
    assert_null(ref(&m, "ngc-rdma-write-connectx-7-400g", 0));

    /* A WRITE stream at 370 of 400 Gb/s, 1 MiB, host memory. */
    set_str(cond_of(f->doc), "verb", "write");
    set_num(point_of(f->doc), "goodput_gbps", 370);
    refs_of(f, &refs, &m);
    e = ref(&m, "ngc-rdma-write-connectx-7-400g", 0);
    assert_non_null(e);
    assert_string_equal(e->verdict.s, "pass"); /* 370 >= 90% of 400 */
    assert_float_equal(num(&e->measured), 370, 1e-9);
    assert_float_equal(num(&e->percent), 92.5, 1e-9);
    assert_non_null(strstr(e->tolerance_basis.s, "90%"));
    assert_null(ref(&m, "ngc-rdma-write-connectx-7-200g", 0)); /* a 400 G port */
    assert_null(ref(&m, "ngc-rdma-write-connectx-6-200g", 0));
    e = ref(&m, "azure-ndv5-ib-write-gdr-connectx-7-400g", 0);
    assert_non_null(e);
    assert_int_equal(e->verdict.st, RESULTS_ABSENT);
    assert_non_null(strstr(e->differs.s, "largest size 1 MiB; the row's figure holds from 8 MiB"));
    /* 8 MiB, still host memory: the row is GPUDirect RDMA. */
    set_num(point_of(f->doc), "size_bytes", 8388608);
    refs_of(f, &refs, &m);
    e = ref(&m, "azure-ndv5-ib-write-gdr-connectx-7-400g", 0);
    assert_non_null(strstr(e->differs.s, "buffers in host memory; the row's in GPU"));
    /* GPU memory: judged, and 370 is below Azure's 380 line (0 tolerance), 385 passes. */
    set_str(cond_of(f->doc), "memory", "GPU (dma-buf)");
    refs_of(f, &refs, &m);
    e = ref(&m, "azure-ndv5-ib-write-gdr-connectx-7-400g", 0);
    assert_int_equal(e->differs.st, RESULTS_ABSENT);
    assert_string_equal(e->verdict.s, "below");
    set_num(point_of(f->doc), "goodput_gbps", 385);
    refs_of(f, &refs, &m);
    assert_string_equal(ref(&m, "azure-ndv5-ib-write-gdr-connectx-7-400g", 0)->verdict.s, "pass");
    /* 300 Gb/s fails the NGC line too. */
    set_num(point_of(f->doc), "goodput_gbps", 300);
    refs_of(f, &refs, &m);
    assert_string_equal(ref(&m, "ngc-rdma-write-connectx-7-400g", 0)->verdict.s, "below");
    /* On a 200 G port: the 200 G row, not the 400 G ones. */
    f->topo->ports[f->topo->nics[0].first_port].rate_gbps = 200;
    refs_of(f, &refs, &m);
    assert_non_null(ref(&m, "ngc-rdma-write-connectx-7-200g", 0));
    assert_null(ref(&m, "ngc-rdma-write-connectx-7-400g", 0));
    assert_null(ref(&m, "azure-ndv5-ib-write-gdr-connectx-7-400g", 0));

    /* The document carries them and reads them back as written. */
    f->run.references = m;
    cJSON *j = results_json_write_run(&f->run);
    struct results_run back;
    assert_int_equal(results_json_read_run(j, "round trip", &back, &err), 0);
    assert_int_equal(back.references.n, m.n);
    cJSON *j2 = results_json_write_run(&back);
    assert_true(cJSON_Compare(j, j2, true));
    cJSON_Delete(j2);
    cJSON_Delete(j);
    results_run_free(&back);
    topo_refs_free(&refs);
    fx_free(f);
}

/* An NCCL all_reduce on the fixture's H100s (8 ranks over its two GPUs' PCI addresses). */
static const char *const NCCL_DOC =
    "{\"format\":\"fabtop-results\",\"version\":1,\"mix\":{\"name\":\"n\",\"flows\":[]},"
    "\"phases\":[{\"name\":\"loaded\",\"flows\":[{\"name\":\"ar\",\"transport\":\"nccl\","
    "\"op\":\"collective\",\"points\":[{\"size_bytes\":17179869184,\"goodput_gbps\":2200,"
    "\"nccl\":{\"busbw_GBps\":470,\"algo\":\"NVLS\"}}],"
    "\"conditions\":{\"nccl\":{\"collective\":\"all_reduce\",\"nranks\":8,\"local_ranks\":["
    "{\"rank\":0,\"cuda_device\":0,\"pci_bus_id\":\"0000:03:00.0\"},"
    "{\"rank\":1,\"cuda_device\":1,\"pci_bus_id\":\"0000:83:00.0\"}]}}}]}]}";

/* Host-to-device copies on both H100s, 100 GB/s together. */
static const char *const COPY_DOC =
    "{\"format\":\"fabtop-results\",\"version\":1,\"mix\":{\"name\":\"c\",\"flows\":[]},"
    "\"phases\":[{\"name\":\"loaded\",\"flows\":[{\"name\":\"h2d\",\"transport\":\"nccl\","
    "\"op\":\"copy\",\"points\":[{\"size_bytes\":67108864,\"goodput_gbps\":800,"
    "\"copy\":{\"h2d_GBps\":100,\"d2h_GBps\":null}}],"
    "\"conditions\":{\"copy\":{\"lanes\":[\"GPU 0 h2d\",\"GPU 1 h2d\"],"
    "\"lane_pci_bus_ids\":[\"0000:03:00.0\",\"0000:83:00.0\"]}}}]}]}";

/* The GPU rows: the all_reduce pass line at its rank count and size, the maintainer's result
 * and the NVLink peak beside busbw; host copies per GPU and direction against the Gen5 line;
 * a GPU known by PCI ids only; a flow beside others is not judged. */
static void reference_rows_gpu(void **state)
{
    (void)state;
    struct topo_refs refs;
    struct ft_err err = {0};
    assert_int_equal(topo_refs_load(JUDGE_REFS_FILE, &refs, &err), 0);
    struct results_ref_matches m = {0};
    struct fx *f = fx_new(NCCL_DOC);
    refs_of(f, &refs, &m);
    const struct results_ref_match *e = ref(&m, "azure-ndv5-h100-all-reduce-busbw", 0);
    assert_non_null(e);
    assert_string_equal(e->verdict.s, "pass"); /* 470 >= 460 */
    assert_string_equal(e->figure.s, "busbw at 16 GiB");
    assert_float_equal(num(&e->measured), 470, 1e-9);
    e = ref(&m, "nccl-h100-nvls-all-reduce-busbw", 0);
    assert_non_null(e);
    assert_string_equal(e->kind.s, "result");
    assert_int_equal(e->verdict.st, RESULTS_ABSENT);
    assert_float_equal(num(&e->percent), 100.0 * 470 / 480, 1e-9);
    /* NVLS busbw above the NVLink one-way peak (450 GB/s): NVLink SHARP reduces in the
     * switch, so busbw is not the bytes on the wire (the maintainer's point in the row). */
    e = ref(&m, "h100-sxm-nvlink-peak", 0);
    assert_non_null(e);
    assert_float_equal(num(&e->percent), 100.0 * 470 / 450, 1e-9);
    assert_null(ref(&m, "nccl-h100-ring-busbw", 0));             /* NVLS, not RING */
    assert_null(ref(&m, "azure-ndv5-h200-all-reduce-busbw", 0)); /* H100s */
    /* 1 GiB: the 16 GiB line is not judged; the maintainer's peak (large sizes) still set. */
    cJSON *pt = point_of(f->doc);
    set_num(pt, "size_bytes", 1073741824);
    refs_of(f, &refs, &m);
    e = ref(&m, "azure-ndv5-h100-all-reduce-busbw", 0);
    assert_int_equal(e->verdict.st, RESULTS_ABSENT);
    assert_non_null(strstr(e->differs.s, "largest size 1 GiB; the row's figure holds from 16 GiB"));
    /* 2 ranks with RING: not the 8-GPU rows; the ring figure is. 330 of 370 GB/s. */
    set_num(cJSON_GetObjectItem(cond_of(f->doc), "nccl"), "nranks", 2);
    set_str(cJSON_GetObjectItem(pt, "nccl"), "algo", "RING");
    set_num(cJSON_GetObjectItem(pt, "nccl"), "busbw_GBps", 330);
    refs_of(f, &refs, &m);
    assert_null(ref(&m, "azure-ndv5-h100-all-reduce-busbw", 0));
    assert_null(ref(&m, "nccl-h100-nvls-all-reduce-busbw", 0));
    e = ref(&m, "nccl-h100-ring-busbw", 0);
    assert_non_null(e);
    assert_float_equal(num(&e->percent), 100.0 * 330 / 370, 1e-9);
    /* An all_gather is not an all_reduce: only the NVLink peak. */
    set_str(cJSON_GetObjectItem(cond_of(f->doc), "nccl"), "collective", "all_gather");
    refs_of(f, &refs, &m);
    assert_null(ref(&m, "nccl-h100-ring-busbw", 0));
    assert_non_null(ref(&m, "h100-sxm-nvlink-peak", 0));
    /* Another GPU model: none of the H100 rows. */
    for (int g = 0; g < f->topo->ngpus; g++) {
        snprintf(f->topo->gpus[g].model, TOPO_TEXT, "NVIDIA A100-SXM4-80GB");
        f->topo->pci[f->topo->gpus[g].pci].device_id = 0x20b2;
    }
    refs_of(f, &refs, &m);
    assert_int_equal(m.n, 0);
    fx_free(f);

    f = fx_new(COPY_DOC);
    /* The GPUs known by their PCI ids only. */
    for (int g = 0; g < f->topo->ngpus; g++)
        snprintf(f->topo->gpus[g].model, TOPO_TEXT, "10de:2330");
    refs_of(f, &refs, &m);
    e = ref(&m, "azure-ndv5-h100-host-copy", 0);
    assert_non_null(e);
    assert_string_equal(e->figure.s, "h2d per GPU (2 GPUs)");
    assert_float_equal(num(&e->measured), 50, 1e-9); /* 100 GB/s over two GPUs */
    assert_string_equal(e->verdict.s, "pass");
    assert_null(ref(&m, "azure-ndv5-h100-host-copy", 1)); /* no d2h figure */
    e = ref(&m, "h100-sxm-pcie-peak", 0);                 /* 128 GB/s both ways: 64 one way */
    assert_non_null(e);
    assert_float_equal(num(&e->percent), 100.0 * 50 / 64, 1e-9);
    assert_null(ref(&m, "azure-ndv4-a100-host-copy", 0));
    /* 90 GB/s together: 45 per GPU, below the 48 line. */
    set_num(cJSON_GetObjectItem(point_of(f->doc), "copy"), "h2d_GBps", 90);
    refs_of(f, &refs, &m);
    assert_string_equal(ref(&m, "azure-ndv5-h100-host-copy", 0)->verdict.s, "below");
    /* Beside another flow in its phase: not judged (the row's copies ran alone). */
    cJSON *flows =
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(f->doc, "phases"), 0), "flows");
    cJSON *two = cJSON_Duplicate(cJSON_GetArrayItem(flows, 0), true);
    set_str(two, "name", "d2h");
    cJSON_AddItemToArray(flows, two);
    refs_of(f, &refs, &m);
    e = ref(&m, "azure-ndv5-h100-host-copy", 0);
    assert_int_equal(e->verdict.st, RESULTS_ABSENT);
    assert_non_null(strstr(e->differs.s, "ran beside 1 other flow in phase loaded"));
    /* A lane whose GPU is not in the model: no row. */
    cJSON_DeleteItemFromArray(flows, 1);
    cJSON *ids =
        cJSON_GetObjectItem(cJSON_GetObjectItem(cond_of(f->doc), "copy"), "lane_pci_bus_ids");
    cJSON_ReplaceItemInArray(ids, 1, cJSON_CreateString("0000:99:00.0"));
    cJSON_ReplaceItemInArray(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cond_of(f->doc), "copy"), "lanes"), 1,
        cJSON_CreateString("GPU 7 h2d"));
    refs_of(f, &refs, &m);
    assert_int_equal(m.n, 0);
    results_ref_matches_clear(&m);
    topo_refs_free(&refs);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quiet_on_good_verbs),
        cmocka_unit_test(quiet_on_good_tcp),
        cmocka_unit_test(quiet_when_not_short),
        cmocka_unit_test(quiet_on_pingpong),
        cmocka_unit_test(one_connection),
        cmocka_unit_test(one_connection_bond),
        cmocka_unit_test(depth_one),
        cmocka_unit_test(mtu_below_link),
        cmocka_unit_test(roce_v1),
        cmocka_unit_test(pcie_downtrained),
        cmocka_unit_test(numa_remote),
        cmocka_unit_test(gpu_nic_sys),
        cmocka_unit_test(pfc_off),
        cmocka_unit_test(ecn_off),
        cmocka_unit_test(tcp_buffers),
        cmocka_unit_test(tcp_loss_cc),
        cmocka_unit_test(busy_cpu),
        cmocka_unit_test(peer_bottleneck),
        cmocka_unit_test(roce_ecn_off),
        cmocka_unit_test(every_rule_tested),
        cmocka_unit_test(ranked_and_round_trip),
        cmocka_unit_test(reference_rows),
        cmocka_unit_test(reference_rows_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
