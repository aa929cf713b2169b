/* test_ceiling: the path ceiling's arithmetic (topo_ceiling.h): line encodings, RoCE v2,
 * InfiniBand and TCP framing, PCIe links, NVLink, each checked against a hand calculation
 * written beside it; then every NIC and GPU of the real exports in ../shared/data gets a
 * ceiling where the export records a rate or a link (skipped when the data is absent). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topology/topo_ceiling.h"
#include "topology/topo_load.h"

#define NEAR(a, b, eps)                                                                            \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (eps)))                                                             \
            fail_msg("%s = %.9g, want %.9g (within %g)", #a, a_, b_, (double)(eps));               \
    } while (0)

static double data_rate(double rate, const char *speed, enum topo_link_layer ll)
{
    double d = -1;
    char how[160];
    assert_int_equal(topo_ceiling_port_data(rate, speed, ll, &d, how, sizeof(how)), 0);
    return d;
}

/* sysfs `rate` as it is, the encoding taken off where the name is a signalling rate. */
static void test_encoding(void **state)
{
    (void)state;
    NEAR(data_rate(40, "QDR", TOPO_LL_INFINIBAND), 32, 1e-9);     /* 40 x 8/10 */
    NEAR(data_rate(10, "SDR", TOPO_LL_INFINIBAND), 8, 1e-9);      /* "10 Gb/sec (4X)": 4 x 2.5 */
    NEAR(data_rate(20, "DDR", TOPO_LL_INFINIBAND), 16, 1e-9);     /* 20 x 8/10 */
    NEAR(data_rate(56, "FDR", TOPO_LL_INFINIBAND), 54.545, 1e-3); /* 4 x 14.0625 x 64/66 */
    NEAR(data_rate(14, "FDR", TOPO_LL_INFINIBAND), 13.636, 1e-3); /* 1X: 14.0625 x 64/66 */
    NEAR(data_rate(40, "FDR10", TOPO_LL_INFINIBAND), 40, 1e-9);
    NEAR(data_rate(100, "EDR", TOPO_LL_INFINIBAND), 100, 1e-9);
    NEAR(data_rate(200, "HDR", TOPO_LL_INFINIBAND), 200, 1e-9);
    NEAR(data_rate(400, "NDR", TOPO_LL_INFINIBAND), 400, 1e-9);
    /* RoCE: the kernel writes 100 GbE as "100 Gb/sec (4X EDR)" and 40 GbE as "4X QDR"; both
     * are MAC data rates. */
    NEAR(data_rate(100, "EDR", TOPO_LL_ETHERNET), 100, 1e-9);
    NEAR(data_rate(40, "QDR", TOPO_LL_ETHERNET), 40, 1e-9);
    NEAR(data_rate(100, "", TOPO_LL_ETHERNET), 100, 1e-9);
    double d;
    assert_int_equal(topo_ceiling_port_data(0, "EDR", TOPO_LL_INFINIBAND, &d, NULL, 0), -EINVAL);
    assert_int_equal(topo_ceiling_port_data(NAN, "EDR", TOPO_LL_INFINIBAND, &d, NULL, 0), -EINVAL);
}

static double fraction(const struct topo_ceil_wire *w)
{
    double f = -1;
    struct topo_ceiling t = {0};
    assert_int_equal(topo_ceiling_wire_fraction(w, &f, &t), 0);
    assert_true(t.nterms > 0);
    return f;
}

/* RoCE v2 WRITE of 1 MiB, path MTU 4096, IPv4, no VLAN, on 100 GbE:
 *   per packet 8 preamble + 14 Ethernet + 20 IPv4 + 8 UDP + 12 BTH + 4 ICRC + 4 FCS + 12 gap
 *   = 82 B; 1048576 / 4096 = 256 packets; RETH 16 B once:
 *   256 x (4096 + 82) + 16 = 1069584 B on the link, 1048576 / 1069584 = 0.9803587,
 *   100 Gb/s x 0.9803587 = 98.0359 Gb/s of payload.
 * With the other direction streaming too, its one ACK per message shares the link:
 *   14 + (20 + 8 + 12 + 4 AETH + 4 ICRC) + 4 = 66 B frame (>= 64), + 20 = 86 B;
 *   1048576 / (1069584 + 86) = 0.9802799. */
static void test_roce_v2(void **state)
{
    (void)state;
    struct topo_ceil_wire w = {
        .proto = TOPO_CEIL_ROCE_V2, .op = TOPO_CEIL_WRITE, .mtu = 4096, .msg_bytes = 1 << 20};
    double f = fraction(&w);
    NEAR(f, 1048576.0 / 1069584.0, 1e-12);
    NEAR(100 * f, 98.0359, 1e-4);
    w.bidir = true;
    NEAR(fraction(&w), 1048576.0 / 1069670.0, 1e-12);
    /* VLAN and IPv6: 82 + 4 + 20 = 106 B a packet: 256 x 4202 + 16 = 1075728 */
    w.bidir = false;
    w.vlan = w.ipv6 = true;
    NEAR(fraction(&w), 1048576.0 / 1075728.0, 1e-12);
    /* SEND of 64 B: one packet, 64 + 82 = 146 B (the frame 14 + 20 + 8 + 12 + 64 + 4 + 4 = 126
     * is over 64) */
    w = (struct topo_ceil_wire){
        .proto = TOPO_CEIL_ROCE_V2, .op = TOPO_CEIL_SEND, .mtu = 1024, .msg_bytes = 64};
    NEAR(fraction(&w), 64.0 / 146.0, 1e-12);
    /* READ of 8 KiB at MTU 4096: 2 responses of 4096 + 82, AETH on the first and the last:
     * 8356 + 8 = 8364; the request (20 + 8 + 12 + 16 RETH + 4 = 60 -> 78 frame + 20 = 98 B)
     * goes the other way, counted in with bidir. */
    w = (struct topo_ceil_wire){
        .proto = TOPO_CEIL_ROCE_V2, .op = TOPO_CEIL_READ, .mtu = 4096, .msg_bytes = 8192};
    NEAR(fraction(&w), 8192.0 / 8364.0, 1e-12);
    w.bidir = true;
    NEAR(fraction(&w), 8192.0 / (8364.0 + 98.0), 1e-12);
    /* refused */
    w.mtu = 9000;
    double x;
    assert_int_equal(topo_ceiling_wire_fraction(&w, &x, NULL), -EINVAL);
    w.mtu = 4096;
    w.msg_bytes = 0;
    assert_int_equal(topo_ceiling_wire_fraction(&w, &x, NULL), -EINVAL);
}

/* InfiniBand WRITE of 1 MiB at 4096: 8 LRH + 12 BTH + 4 ICRC + 2 VCRC = 26 B a packet,
 * 256 x 4122 + 16 = 1055248: EDR 100 Gb/s x 0.9936773 = 99.3677; routed (+40 GRH):
 * 256 x 4162 + 16 = 1065488. */
static void test_ib(void **state)
{
    (void)state;
    struct topo_ceil_wire w = {
        .proto = TOPO_CEIL_IB, .op = TOPO_CEIL_WRITE, .mtu = 4096, .msg_bytes = 1 << 20};
    NEAR(100 * fraction(&w), 99.3677, 1e-4);
    w.grh = true;
    NEAR(fraction(&w), 1048576.0 / 1065488.0, 1e-12);
}

/* TCP, IPv4 with timestamps: MSS = MTU - 52; every segment MTU + 14 + 4 + 8 + 12 on the link.
 *   MTU 1500: MSS 1448; 1 MiB = 724 full segments + 224 B: 724 x 1538 + (224 + 90) = 1113826,
 *             1048576 / 1113826 = 0.941418 (a long stream: 1448 / 1538 = 0.941482).
 *   MTU 9000: MSS 8948; 117 full + 1660 B: 117 x 9038 + (1660 + 90) = 1059196, 0.989974.
 * Without timestamps MTU 1500 gives MSS 1460: 1460 / 1538 for full segments. */
static void test_tcp(void **state)
{
    (void)state;
    struct topo_ceil_wire w = {.proto = TOPO_CEIL_TCP, .mtu = 1500, .msg_bytes = 1 << 20};
    NEAR(fraction(&w), 1048576.0 / 1113826.0, 1e-12);
    w.msg_bytes = 1448 * 1000;
    NEAR(fraction(&w), 1448.0 / 1538.0, 1e-12);
    w.mtu = 9000;
    w.msg_bytes = 1 << 20;
    NEAR(fraction(&w), 1048576.0 / 1059196.0, 1e-12);
    w = (struct topo_ceil_wire){
        .proto = TOPO_CEIL_TCP, .mtu = 1500, .msg_bytes = 1460 * 10, .no_timestamps = true};
    NEAR(fraction(&w), 1460.0 / 1538.0, 1e-12);
    /* bidir: one 90 B ACK per two segments (the ACK frame 14 + 52 + 4 = 70, + 20): 10
     * segments, 5 ACKs: 14600 / (15380 + 450) */
    w.bidir = true;
    w.no_timestamps = false;
    w.msg_bytes = 1448 * 10;
    NEAR(fraction(&w), 14480.0 / (15380.0 + 450.0), 1e-12);
}

/* PCIe: hwloc's link speed is after encoding: Gen4 x16 16 x 16 x 128/130 / 8 = 31.5077 GB/s,
 * Gen5 x16 63.0154 GB/s; payload x 8 x 256 / (256 + 24):
 *   Gen4 x16: 31.5077 x 8 x 0.914286 = 230.456 Gb/s; Gen5 x16: 460.913 Gb/s;
 *   Gen3 x16: 15.7538 -> 115.228; Gen6 x16: 64 x 16 / 8 x 236/256 = 118 GB/s,
 *   x 8 x 256 / (256 + 16) = 888.471 Gb/s. */
static void test_pcie(void **state)
{
    (void)state;
    double pay, link;
    assert_int_equal(topo_ceiling_pcie(31.507692, 0, 0, 256, &pay, &link), 0);
    NEAR(pay, 230.456, 1e-3);
    NEAR(link, 31.507692, 1e-9);
    /* from GT/s and width alone: the same, encoding applied once */
    assert_int_equal(topo_ceiling_pcie(0, 16, 16, 256, &pay, &link), 0);
    NEAR(pay, 230.456, 1e-3);
    /* hwloc's 63.015 GB/s with GT/s and width known: not divided by 130/128 again */
    assert_int_equal(topo_ceiling_pcie(63.015385, 32, 16, 256, &pay, &link), 0);
    NEAR(pay, 460.913, 1e-3);
    NEAR(link, 63.015385, 1e-9);
    assert_int_equal(topo_ceiling_pcie(0, 8, 16, 256, &pay, NULL), 0);
    NEAR(pay, 115.228, 1e-3);
    assert_int_equal(topo_ceiling_pcie(0, 64, 16, 256, &pay, &link), 0);
    NEAR(link, 118, 1e-9);
    NEAR(pay, 888.471, 1e-3);
    /* Gen2 x8: 5 x 8 x 8/10 / 8 = 4 GB/s */
    assert_int_equal(topo_ceiling_pcie(0, 5, 8, 256, &pay, &link), 0);
    NEAR(link, 4, 1e-12);
    assert_int_equal(topo_ceiling_pcie(0, 0, 0, 256, &pay, &link), -EINVAL);
    assert_int_equal(topo_ceiling_pcie(31.5, 0, 0, 64, &pay, &link), -EINVAL);
}

/* A synthetic node: a 100 GbE RoCE port (MTU 4096) on a Gen4 x16 NIC; a GPU on Gen5 x16 with
 * two NVLink peers of 18 links at 25 GB/s. */
static struct topo_model *synth(void)
{
    struct topo_model *m = topo_model_new();
    int hb = topo_model_add_pci(m);
    m->pci[hb].kind = TOPO_PCI_HOSTBRIDGE;
    m->pci[hb].parent = -1;
    int np = topo_model_add_pci(m);
    m->pci[np].kind = TOPO_PCI_DEVICE;
    m->pci[np].parent = hb;
    m->pci[np].valid = TOPO_PCI_V_LINK_GBS | TOPO_PCI_V_CUR_SPEED | TOPO_PCI_V_CUR_WIDTH;
    m->pci[np].link_gbs = 31.507692;
    m->pci[np].cur_speed_gts = 16;
    m->pci[np].cur_width = 16;
    int gp = topo_model_add_pci(m);
    m->pci[gp].kind = TOPO_PCI_DEVICE;
    m->pci[gp].parent = hb;
    m->pci[gp].valid = TOPO_PCI_V_LINK_GBS;
    m->pci[gp].link_gbs = 63.015385;
    m->pci[gp].addr.bus = 1;
    int a = topo_model_add_adapter(m);
    int n = topo_model_add_nic(m);
    m->nics[n].pci = np;
    m->nics[n].adapter = a;
    snprintf(m->nics[n].rdma_dev, sizeof(m->nics[n].rdma_dev), "mlx5_0");
    int p = topo_model_add_port(m);
    m->nics[n].first_port = p;
    m->nics[n].nports = 1;
    struct topo_port *pt = &m->ports[p];
    pt->nic = n;
    pt->num = 1;
    pt->netdev = -1;
    pt->valid = TOPO_PORT_V_LL | TOPO_PORT_V_RATE | TOPO_PORT_V_MTU;
    pt->link_layer = TOPO_LL_ETHERNET;
    pt->rate_gbps = 100;
    pt->width = 4;
    snprintf(pt->speed, sizeof(pt->speed), "EDR");
    pt->active_mtu = 4096;
    for (int k = 0; k < 3; k++) {
        int g = topo_model_add_gpu(m);
        m->gpus[g].pci = k == 0 ? gp : -1;
        m->gpus[g].mem_numa = -1;
    }
    for (int k = 1; k < 3; k++) {
        int l = topo_model_add_gpulink(m);
        m->gpulinks[l] = (struct topo_gpulink){
            .gpu = 0, .peer_kind = TOPO_PEER_GPU, .peer = k, .bw_mbs = 450000, .links = 18};
        snprintf(m->gpulinks[l].kind, sizeof(m->gpulinks[l].kind), "NVLink");
    }
    return m;
}

static void test_synthetic_paths(void **state)
{
    (void)state;
    struct topo_model *m = synth();
    struct topo_ceiling c;
    assert_int_equal(topo_ceiling_nic(m, 0, 0, NULL, &c), 0);
    assert_true(c.valid);
    /* 98.0359 (port payload, as test_roce_v2) < 230.456 (Gen4 x16) */
    NEAR(c.gbps, 98.0359, 1e-4);
    assert_string_equal(c.terms[c.narrowest].name, "port payload");
    assert_string_equal(c.terms[c.narrowest].unit, "Gb/s");
    NEAR(topo_ceiling_percent(&c, 90), 100 * 90 / 98.03587, 1e-3); /* 91.80 % */
    assert_true(isnan(topo_ceiling_percent(&c, -1)));
    /* a 1 KiB MTU: 1024 x 1024 packets of 82 B: 1048576 / (1024 x 1106 + 16): 92.5842 */
    struct topo_ceil_wire w;
    assert_int_equal(topo_ceiling_default_wire(m, 0, 0, &w), 0);
    assert_int_equal(w.proto, TOPO_CEIL_ROCE_V2);
    w.mtu = 1024;
    assert_int_equal(topo_ceiling_nic(m, 0, 0, &w, &c), 0);
    NEAR(c.gbps, 100 * 1048576.0 / (1024 * 1106 + 16), 1e-9);
    /* the GPU: host path Gen5 x16 460.913; NVLink 2 x 450 GB/s = 900 GB/s = 7200 Gb/s */
    assert_int_equal(topo_ceiling_gpu_host(m, 0, &c), 0);
    NEAR(c.gbps, 460.913, 1e-3);
    assert_int_equal(topo_ceiling_gpu_nvlink(m, 0, &c), 0);
    NEAR(c.gbps, 7200, 1e-9);
    /* a GPU with no PCI link and no NVLink: no ceiling, not a made-up one */
    assert_int_equal(topo_ceiling_gpu_host(m, 1, &c), 0);
    assert_false(c.valid);
    assert_int_equal(topo_ceiling_gpu_nvlink(m, 1, &c), 0);
    assert_false(c.valid);
    /* TCP over the NIC's netdev (100 GbE, MTU 9000), 1 MiB writes: 100 x 0.989974 (as
     * test_tcp) = 98.9974 < 230.456; a netdev of no NIC (a veth) has no PCIe term */
    int d = topo_model_add_netdev(m);
    snprintf(m->netdevs[d].name, sizeof(m->netdevs[d].name), "eth0");
    m->netdevs[d].nic = 0;
    m->netdevs[d].pci = -1;
    m->netdevs[d].valid = TOPO_NET_V_MTU | TOPO_NET_V_SPEED;
    m->netdevs[d].mtu = 9000;
    m->netdevs[d].speed_mbps = 100000;
    struct topo_ceil_wire tw = {.proto = TOPO_CEIL_TCP, .mtu = 9000, .msg_bytes = 1 << 20};
    assert_int_equal(topo_ceiling_netdev(m, d, &tw, &c), 0);
    NEAR(c.gbps, 100 * 1048576.0 / 1059196.0, 1e-9);
    assert_string_equal(c.terms[c.narrowest].name, "port payload");
    m->netdevs[d].nic = -1;
    assert_int_equal(topo_ceiling_netdev(m, d, &tw, &c), 0);
    for (int i = 0; i < c.nterms; i++)
        assert_string_not_equal(c.terms[i].name, "NIC PCIe link");
    assert_int_equal(topo_ceiling_netdev(m, 7, &tw, &c), -EINVAL);
    struct topo_ceiling none = {.valid = false};
    assert_true(isnan(topo_ceiling_percent(&none, 1)));
    assert_int_equal(topo_ceiling_nic(m, 5, 0, NULL, &c), -EINVAL);
    topo_model_free(m);
}

/* Copies on several GPUs at once: their host paths add up, unless a switch uplink they share
 * is narrower. Two GPUs at Gen5 x16 (460.913 Gb/s each) below one switch whose uplink is
 * Gen4 x16 (230.456 Gb/s): each GPU's own host ceiling is already 230.456 (the uplink is on
 * its path), the sum 460.913, the shared uplink 230.456: the ceiling. */
static void test_gpus_host(void **state)
{
    (void)state;
    struct topo_model *m = topo_model_new();
    int hb = topo_model_add_pci(m);
    m->pci[hb].kind = TOPO_PCI_HOSTBRIDGE;
    m->pci[hb].parent = -1;
    int up = topo_model_add_pci(m);
    m->pci[up].kind = TOPO_PCI_BRIDGE;
    m->pci[up].role = TOPO_BRIDGE_SWITCH_UP;
    m->pci[up].parent = hb;
    m->pci[up].valid = TOPO_PCI_V_LINK_GBS;
    m->pci[up].link_gbs = 31.507692;
    for (int k = 0; k < 2; k++) {
        int p = topo_model_add_pci(m);
        m->pci[p].kind = TOPO_PCI_DEVICE;
        m->pci[p].parent = up;
        m->pci[p].valid = TOPO_PCI_V_LINK_GBS;
        m->pci[p].link_gbs = 63.015385;
        m->pci[p].addr.bus = (uint8_t)(2 + k);
        int g = topo_model_add_gpu(m);
        m->gpus[g].pci = p;
        m->gpus[g].mem_numa = -1;
    }
    struct topo_ceiling c;
    int both[] = {0, 1}, one[] = {1};
    assert_int_equal(topo_ceiling_gpus_host(m, both, 2, &c), 0);
    NEAR(c.gbps, 230.456, 1e-3);
    assert_string_equal(c.terms[c.narrowest].name, "shared PCIe switch uplink");
    assert_int_equal(topo_ceiling_gpus_host(m, one, 1, &c), 0);
    NEAR(c.gbps, 230.456, 1e-3);
    /* without the switch: 2 x 460.913 = 921.825 */
    m->pci[up].role = TOPO_BRIDGE_ROOT_PORT;
    m->pci[up].valid = 0;
    assert_int_equal(topo_ceiling_gpus_host(m, both, 2, &c), 0);
    NEAR(c.gbps, 921.825, 1e-3);
    assert_string_equal(c.terms[c.narrowest].name, "host paths, summed");
    int bad[] = {0, 5};
    assert_int_equal(topo_ceiling_gpus_host(m, bad, 2, &c), -EINVAL);
    topo_model_free(m);
}

/* The H200 x2 machine's snapshot (bench/device/h200x2-2026-11-30/topo.json, in the tree):
 * two Gen5 x16 host paths, 2 x 460.913 = 921.825 Gb/s; NV18 each, 3600 Gb/s. */
static void test_h200_snapshot(void **state)
{
    (void)state;
    const char *src = getenv("FABTOP_SRC");
    char path[1024];
    snprintf(path, sizeof(path), "%s/bench/device/h200x2-2026-11-30/topo.json",
             src && *src ? src : ".");
    struct topo_load_opts o = {.input = path, .no_verbs = true, .no_gpu_libs = true};
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    if (topo_load(&o, &m, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(m->ngpus, 2);
    struct topo_ceiling c;
    int both[] = {0, 1};
    assert_int_equal(topo_ceiling_gpus_host(m, both, 2, &c), 0);
    NEAR(c.gbps, 921.825, 1e-3);
    assert_int_equal(topo_ceiling_gpu_nvlink(m, 1, &c), 0);
    NEAR(c.gbps, 3600, 1e-6);
    topo_model_free(m);
}

/* ---- the real exports ---- */

static const char *data_dir(void)
{
    const char *d = getenv("FABTOP_SHARED_DATA");
    return d && *d ? d : "../shared/data";
}

static bool exists(const char *rel)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/%s", data_dir(), rel);
    FILE *f = fopen(p, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

static struct topo_model *load_xml(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", data_dir(), rel);
    struct topo_load_opts o = {.input = path, .no_verbs = true, .no_gpu_libs = true};
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    if (topo_load(&o, &m, &err) < 0)
        fail_msg("%s: %s", rel, err.msg);
    return m;
}

/* Every NIC port (or plain network function) and GPU: a ceiling, or for files that record
 * no link speed at all, an explicit "not valid". Returns how many were valid. */
static int all_ceilings(const struct topo_model *m, bool want_valid, const char *file)
{
    int valid = 0;
    struct topo_ceiling c;
    for (int n = 0; n < m->nnics; n++) {
        int nports = m->nics[n].nports;
        for (int k = nports ? 0 : -1; k < (nports ? nports : 0); k++) {
            int port = k < 0 ? -1 : m->nics[n].first_port + k;
            assert_int_equal(topo_ceiling_nic(m, n, port, NULL, &c), 0);
            if (c.valid != want_valid)
                fail_msg("%s: %s: valid %d", file, c.path, c.valid);
            valid += c.valid;
            if (c.valid)
                assert_true(c.gbps > 0 && c.terms[c.narrowest].kind == TOPO_CEIL_LIMIT);
        }
    }
    for (int g = 0; g < m->ngpus; g++) {
        assert_int_equal(topo_ceiling_gpu_host(m, g, &c), 0);
        struct topo_ceiling nv;
        assert_int_equal(topo_ceiling_gpu_nvlink(m, g, &nv), 0);
        if ((c.valid || nv.valid) != want_valid)
            fail_msg("%s: %s: valid %d", file, c.path, c.valid);
        valid += c.valid || nv.valid;
    }
    return valid;
}

static void test_real_exports(void **state)
{
    (void)state;
    static const char *const files[] = {
        "hwloc-xml/flux-core_ipa20.xml",
        "hwloc-xml/hwloc-tests_nvidiaDGX2.xml",
        "hwloc-xml/hwloc-tests_power8gpudistances.xml",
        "hwloc-xml/mpibind_coral-lassen.xml",
        "hwloc-xml/mpibind_g4dnmetal.xml",
        "hwloc-xml/mpibind_epyc-corona-p2.xml",
        "hwloc-xml/mpibind_eas-tioga.xml",
        "hwloc-xml/psmgmt_topo.jwb0001.xml",
        "hwloc-xml/psmgmt_topo.mel2001.xml",
    };
    if (!exists(files[0]))
        skip();
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        struct topo_model *m = load_xml(files[i]);
        int v = all_ceilings(m, true, files[i]);
        assert_true(v > 0);
        topo_model_free(m);
    }
    /* The hand-edited hwloc test file records no link speed anywhere: every path n/a. */
    struct topo_model *m = load_xml("hwloc-xml/hwloc-tests_32em64t-2n8c2t-pci-wholeio.xml");
    assert_int_equal(all_ceilings(m, false, "32em64t"), 0);
    topo_model_free(m);
}

/* Three by hand. */
static void test_by_hand(void **state)
{
    (void)state;
    if (!exists("hwloc-xml/flux-core_ipa20.xml"))
        skip();
    struct topo_model *m = load_xml("hwloc-xml/flux-core_ipa20.xml");
    struct topo_ceiling c;
    /* 1. XE8640 mlx5_0 (ConnectX-6 4d:00.0): hwloc pci_link_speed 31.507692 GB/s (Gen4 x16),
     *    x 8 x 256/280 = 230.456 Gb/s; the Broadcom switch uplink above (49:00.0) 63.015385 GB/s
     *    -> 460.913; the XML has no port rate: the NIC's PCIe link is the ceiling. */
    int n = topo_model_find_nic_by_rdma(m, "mlx5_0");
    assert_true(n >= 0);
    assert_int_equal(topo_ceiling_nic(m, n, m->nics[n].first_port, NULL, &c), 0);
    NEAR(c.gbps, 230.456, 1e-3);
    assert_string_equal(c.terms[c.narrowest].name, "NIC PCIe link");
    bool uplink = false;
    for (int i = 0; i < c.nterms; i++)
        if (!strcmp(c.terms[i].name, "PCIe switch uplink")) {
            NEAR(c.terms[i].value, 460.913, 1e-3);
            uplink = true;
        }
    assert_true(uplink);
    /* 2. XE8640 GPU0 (H100 SXM): NVLinkBandwidth 150000 MB/s to each of 3 peers (6 links x
     *    25 GB/s), 450 GB/s x 8 = 3600 Gb/s; host path Gen5 x16 63.015385 -> 460.913 Gb/s. */
    assert_int_equal(topo_ceiling_gpu_nvlink(m, 0, &c), 0);
    NEAR(c.gbps, 3600, 1e-6);
    assert_int_equal(topo_ceiling_gpu_host(m, 0, &c), 0);
    NEAR(c.gbps, 460.913, 1e-3);
    topo_model_free(m);
    /* 3. DGX-2 GPU0 (V100): Gen3 x16, hwloc 15.753846 GB/s x 8 x 256/280 = 115.228 Gb/s. */
    m = load_xml("hwloc-xml/hwloc-tests_nvidiaDGX2.xml");
    assert_int_equal(topo_ceiling_gpu_host(m, 0, &c), 0);
    NEAR(c.gbps, 115.228, 1e-3);
    topo_model_free(m);
}

/* The sysfs `rate` of every captured port, through the encoding rule:
 * 56 FDR -> 54.545, 40 QDR -> 32, "10 Gb/sec (4X)" (SDR) -> 8, 100 and 25 EDR as they are. */
static void test_sysfs_rates(void **state)
{
    (void)state;
    static const struct {
        const char *rel;
        double want;
    } ports[] = {
        {"sysfs-infiniband/hwloc-32em64t/sys/class/infiniband/mlx4_0/ports/1", 54.545},
        {"sysfs-infiniband/node_exporter/sys/class/infiniband/i40iw0/ports/1", 8},
        {"sysfs-infiniband/node_exporter/sys/class/infiniband/mlx4_0/ports/1", 32},
        {"sysfs-infiniband/node_exporter/sys/class/infiniband/mlx4_0/ports/2", 32},
        {"sysfs-infiniband/prometheus-procfs/sys/class/infiniband/hfi1_0/ports/1", 100},
        {"sysfs-infiniband/prometheus-procfs/sys/class/infiniband/mlx4_0/ports/1", 32},
        {"sysfs-infiniband/prometheus-procfs/sys/class/infiniband/mlx4_0/ports/2", 32},
        {"sysfs-infiniband/prometheus-procfs/sys/class/infiniband/mlx5_0/ports/1", 25},
    };
    char rel[512];
    snprintf(rel, sizeof(rel), "%s/rate", ports[0].rel);
    if (!exists(rel))
        skip();
    for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
        char path[1024], line[128];
        snprintf(path, sizeof(path), "%s/%s/rate", data_dir(), ports[i].rel);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        assert_non_null(fgets(line, sizeof(line), f));
        fclose(f);
        double rate;
        int width;
        char name[16] = "SDR"; /* older kernels print no name for SDR */
        assert_true(sscanf(line, "%lf Gb/sec (%dX %15[^)])", &rate, &width, name) >= 2);
        NEAR(data_rate(rate, name, TOPO_LL_INFINIBAND), ports[i].want, 1e-3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoding),
        cmocka_unit_test(test_roce_v2),
        cmocka_unit_test(test_ib),
        cmocka_unit_test(test_tcp),
        cmocka_unit_test(test_pcie),
        cmocka_unit_test(test_synthetic_paths),
        cmocka_unit_test(test_real_exports),
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_sysfs_rates),
        cmocka_unit_test(test_gpus_host),
        cmocka_unit_test(test_h200_snapshot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
