/* test_sim: the fabric simulator against ../shared/sim-reference.md: every exact check
 * (serialisation and propagation, incast completion B/C, per-port PFC fairness, the PFC queue
 * bound and headroom, pause quanta, the RED curve, DCQCN updates, IB credit-limited
 * throughput and IB CC, the RC timeout tail), the two reference runs (the 16-host 100 G star
 * with PFC only, the k=4 fat tree's same-rack sender), and bit-for-bit determinism. */
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

#include "common/jsonutil.h"
#include "engine/sim/sim.h"

#define US 1000000ull /* ps */
#define NS 1000ull

static cJSON *topo_json(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static cJSON *topo_json(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    cJSON *t = cJSON_Parse(buf);
    assert_non_null(t);
    return t;
}

static struct sim *make(cJSON *topo, const struct sim_params *p)
{
    struct sim *s;
    struct ft_err err = {0};
    if (sim_new(topo, "test", p, &s, &err) < 0)
        fail_msg("%s", err.msg);
    cJSON_Delete(topo);
    return s;
}

static struct sim *make_named(const char *name, const struct sim_params *p)
{
    cJSON *t;
    struct ft_err err = {0};
    if (sim_topology_load(name, &t, &err) < 0)
        fail_msg("%s", err.msg);
    return make(t, p);
}

static int add(struct sim *s, int src, int dst, enum sim_op op, uint64_t size, uint64_t msgs)
{
    struct sim_app a = {
        .src = src, .dst = dst, .op = op, .size = size, .nqps = 1, .messages = msgs};
    struct ft_err err = {0};
    int rc = sim_app_add(s, &a, &err);
    if (rc < 0)
        fail_msg("%s", err.msg);
    return rc;
}

static uint64_t ctr(const struct sim *s, const char *obj, const char *name)
{
    uint64_t v = 0;
    if (sim_counter(s, obj, name, &v) < 0)
        fail_msg("no counter %s %s", obj, name);
    return v;
}

static uint64_t done_at(const struct sim *s, int app)
{
    struct sim_app_stats st;
    sim_app_stats(s, app, &st);
    assert_true(st.done);
    assert_false(st.failed);
    return st.last_done;
}

static void near(double got, double want, double rel, const char *what)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("%s: got %.6g, want %.6g within %.2f%%", what, got, want, rel * 100);
}

/* Bytes on the wire for one message of size bytes (RoCE, RETH on the first packet). */
static uint64_t msg_wire(enum sim_fabric f, uint64_t size, uint32_t mtu)
{
    uint64_t n = (size + mtu - 1) / mtu, w = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t pl = i + 1 < n ? mtu : (uint32_t)(size - i * mtu);
        w += sim_wire_bytes(f, pl, i == 0);
    }
    return w;
}

/* ---- §1, §2: wire size, serialisation, propagation ---- */

static void test_serialisation(void **state)
{
    (void)state;
    /* 62 B of RoCEv2 headers + 20 B preamble and gap; RETH +16 on a WRITE's first packet. */
    assert_int_equal(sim_wire_bytes(SIM_FABRIC_ROCE, 4096, false), 4096 + 82);
    assert_int_equal(sim_wire_bytes(SIM_FABRIC_ROCE, 4096, true), 4096 + 98);
    assert_int_equal(sim_wire_bytes(SIM_FABRIC_IB, 4096, false), 4096 + 26);
    /* t_ser = (payload + 82) 8 / C: 83.6 ns at 400 G, 334 ns at 100 G. */
    assert_int_equal(sim_ser_ps(4178, 400), 83560);
    assert_int_equal(sim_ser_ps(4178, 100), 334240);
    /* Goodput ceiling 98.0 % for 4 KB at 400 G. */
    near(4096.0 / sim_wire_bytes(SIM_FABRIC_ROCE, 4096, false), 0.980, 0.0005, "ceiling");
    /* Queueing delay Q/C (§7): 1 MB is 20 us at 400 G and 80 us at 100 G. */
    assert_int_equal(sim_ser_ps(1000000, 400), 20 * US);
    assert_int_equal(sim_ser_ps(1000000, 100), 80 * US);
}

/* One-way latency, store and forward over one switch: sum over links of (t_ser + t_prop)
 * plus the switch traversal; a ping-pong's half round trip is exactly that. */
static void test_propagation(void **state)
{
    (void)state;
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    p.switch_latency = 450 * NS;
    struct sim *s = make(topo_json("{\"format\":\"fabtop-sim-topology\",\"kind\":\"star\","
                                   "\"hosts\":4,\"link_gbps\":400,\"link_delay_ns\":500}"),
                         &p);
    int a = add(s, 1, 2, SIM_OP_PINGPONG, 4096, 10);
    sim_run(s, UINT64_MAX);
    struct sim_app_stats st;
    sim_app_stats(s, a, &st);
    assert_int_equal(st.ops, 10);
    uint64_t ser = sim_ser_ps(sim_wire_bytes(SIM_FABRIC_ROCE, 4096, true), 400);
    uint64_t one_way = 2 * (ser + 500 * NS) + 450 * NS;
    /* The responder's adapter sends the request's ACK (86 B) just before the response, and
     * from the second operation on the requester likewise ACKs the previous response before
     * its next request: half, then all, of an ACK's serialisation shows. */
    uint64_t ack = sim_ser_ps(SIM_ROCE_HDR + SIM_AETH + SIM_ETH_GAP, 400);
    assert_int_equal(st.lat_min, one_way + ack / 2);
    assert_int_equal(st.lat_max, one_way + ack);
    assert_int_equal(st.lat_sum, 10 * one_way + ack / 2 + 9 * ack);
    /* 100 m of fibre at 5 ns/m is 500 ns: the link delay used above. */
    sim_free(s);
}

/* ---- §5: incast completion T = B (1 + overhead) / C + base RTT ---- */

static void test_incast_completion(void **state)
{
    (void)state;
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    struct sim *s = make_named("star8-100g", &p);
    const uint64_t size = 500000;
    for (int i = 1; i < 8; i++)
        add(s, i, 0, SIM_OP_STREAM, size, 1);
    sim_run(s, UINT64_MAX);
    uint64_t last = 0;
    for (int i = 0; i < 7; i++) {
        uint64_t t = done_at(s, i);
        last = t > last ? t : last;
    }
    /* Base RTT: the last packet's trip (2 hops, 1 us links, the switch) and the ACK back. */
    uint64_t wire = 7 * msg_wire(SIM_FABRIC_ROCE, size, p.mtu);
    uint64_t ack = sim_ser_ps(SIM_ROCE_HDR + SIM_AETH + SIM_ETH_GAP, 100);
    uint64_t rtt = 4 * 1000 * NS + 2 * p.switch_latency + sim_ser_ps(p.mtu + 82, 100) + 2 * ack;
    double t_ideal = (double)sim_ser_ps(wire, 100) + (double)rtt;
    near((double)last, t_ideal, 0.002, "incast completion");
    assert_int_equal(ctr(s, "sw0/0", "rx_prio3_discards"), 0);
    for (int i = 1; i < 8; i++) {
        char obj[16];
        snprintf(obj, sizeof(obj), "sw0/%d", i);
        assert_int_equal(ctr(s, obj, "rx_prio3_discards"), 0);
        assert_int_equal(ctr(s, obj, "port_xmit_discards"), 0);
    }
    assert_int_equal(ctr(s, "h0", "out_of_sequence"), 0);
    sim_free(s);
}

/* Reference run 1 (sim-reference.md): 16-host 100 G star, 15 -> 1 x 2 MB (10^6 B), 1000 B
 * payloads, 1 us links, 32 MB shared buffer, dynamic PFC, PFC only. ns-3: 2485-2494 us, fair.
 * Our header model puts 82 B on the wire per 1000 B payload (ns-3's HPCC artifact about 39 B:
 * (2490 - RTT) / 2400 - 1), so the same fabric ends about 4 % later; scaled by
 * (1000 + 39) / (1000 + 82) it lands inside the reference range. */
static void test_reference_star(void **state)
{
    (void)state;
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    p.mtu = 1000;
    p.pfc_dynamic = true;
    struct sim *s = make_named("star16-100g", &p);
    for (int i = 1; i < 16; i++)
        add(s, i, 0, SIM_OP_STREAM, 2000000, 1);
    sim_run(s, UINT64_MAX);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < 15; i++) {
        uint64_t t = done_at(s, i);
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    print_message("star: completion %.1f-%.1f us, pause frames %llu\n", (double)lo / US,
                  (double)hi / US, (unsigned long long)ctr(s, "sw0/1", "tx_prio3_pause"));
    /* T = B (1 + 82/1000) / C + RTT with our headers. */
    double t_ideal = 15.0 * (double)sim_ser_ps(msg_wire(SIM_FABRIC_ROCE, 2000000, 1000), 100);
    near((double)hi, t_ideal + 5 * US, 0.002, "T against B(1+overhead)/C + RTT");
    /* Within 5 % of the reference as it is, and inside it after the header correction. */
    near((double)hi, 2490 * US, 0.05, "reference 2485-2494 us");
    double adj = (double)hi / US * (1000.0 + 39) / (1000.0 + 82);
    assert_true(adj > 2485 * 0.995 && adj < 2494 * 1.005);
    /* Fair: every sender has its own ingress port; spread under 1 %. */
    assert_true((double)(hi - lo) < 0.01 * (double)hi);
    /* Lossless and really paused. */
    for (int i = 1; i < 16; i++) {
        char obj[16];
        snprintf(obj, sizeof(obj), "sw0/%d", i);
        assert_int_equal(ctr(s, obj, "rx_prio3_discards"), 0);
        assert_true(ctr(s, obj, "tx_prio3_pause") > 0);
        snprintf(obj, sizeof(obj), "h%d", i);
        assert_true(ctr(s, obj, "rx_prio3_pause") > 0);
    }
    sim_free(s);
}

/* ---- §6: PFC shares are per port; reference run 2, the k=4 fat tree ---- */

static void test_reference_fat_tree(void **state)
{
    (void)state;
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    p.mtu = 4096;
    p.pfc_dynamic = false;
    p.pfc_xoff = 15 * (4096 + SIM_ROCE_HDR);
    p.pfc_xon = 12 * (4096 + SIM_ROCE_HDR);
    struct sim *s = make_named("fattree4-100g", &p);
    for (int i = 1; i < 16; i++)
        add(s, i, 0, SIM_OP_STREAM, 2000000, 1);
    sim_run(s, UINT64_MAX);
    /* h1 shares h0's edge switch: it competes with the 2 uplinks, gets C/3 and finishes at
     * 3 S / C: 480 us for bare payload, 489.6 us with our headers; htsim measured 484.6 us. */
    uint64_t t1 = done_at(s, 0);
    double s_wire = (double)msg_wire(SIM_FABRIC_ROCE, 2000000, 4096);
    print_message("fat tree: same-rack sender %.1f us (3 S/C with headers %.1f us)\n",
                  (double)t1 / US, 3 * s_wire * 8 / 100e3);
    near((double)t1, 484.6 * US, 0.05, "same-rack sender against htsim's 484.6 us");
    near((double)t1, 3 * s_wire * 8 / 100e3 * US, 0.05, "same-rack sender against 3 S/C");
    /* The other 14 finish later, between about 1.1 and 2.5 ms depending on the hash. */
    for (int i = 1; i < 15; i++) {
        uint64_t t = done_at(s, i);
        assert_true(t > 1000 * US && t < 2600 * US);
    }
    sim_free(s);
}

/* ---- §7, §8: PFC queue bounds and headroom ---- */

static void test_pfc_queue_bound(void **state)
{
    (void)state;
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    p.pfc_dynamic = false;
    p.pfc_xoff = 64 * 1024;
    p.pfc_xon = 32 * 1024;
    p.switch_latency = 0;
    struct sim *s = make(topo_json("{\"format\":\"fabtop-sim-topology\",\"kind\":\"star\","
                                   "\"hosts\":16,\"link_gbps\":400,\"link_delay_ns\":10}"),
                         &p);
    for (int i = 1; i < 16; i++)
        add(s, i, 0, SIM_OP_STREAM, 1000000, 1);
    sim_run(s, UINT64_MAX);
    /* Each ingress (port, priority) holds at most Xoff + headroom; the egress at most the sum
     * of (Xoff + in flight) over the 15 ingress ports: ~1.0 MB, a packet model saw 1012 KB. */
    uint64_t h = sim_pfc_headroom(400, 10 * NS, 4096 + SIM_ROCE_HDR + SIM_RETH);
    struct sim_port_snap snap[64];
    sim_port_snapshot(s, snap, 64);
    uint64_t sum_max = 0;
    for (int i = 1; i < 16; i++) {
        char obj[16];
        snprintf(obj, sizeof(obj), "sw0/%d", i);
        assert_int_equal(ctr(s, obj, "rx_prio3_discards"), 0);
    }
    cJSON *r = sim_results_json(s);
    const cJSON *c = cJSON_GetObjectItem(r, "counters");
    for (int i = 1; i < 16; i++) {
        char obj[16];
        snprintf(obj, sizeof(obj), "sw0/%d", i);
        double in_max = 0;
        assert_true(jsonutil_num(cJSON_GetObjectItem(c, obj), "ingress_max_bytes", &in_max));
        assert_true(in_max > (double)p.pfc_xoff);
        assert_true(in_max <= (double)(p.pfc_xoff + h));
        sum_max += (uint64_t)in_max;
    }
    uint64_t wm = ctr(s, "sw0/0", "queue_watermark");
    print_message("queue bound: watermark %.0f KB, 15 x Xoff %.0f KB, bound %.0f KB\n", wm / 1e3,
                  15 * 65536 / 1e3, (15.0 * (double)(p.pfc_xoff + h)) / 1e3);
    assert_true(wm >= 15 * p.pfc_xoff);
    assert_true(wm <= sum_max);
    assert_true(wm <= 15 * (p.pfc_xoff + h));
    cJSON_Delete(r);
    sim_free(s);
}

static void test_headroom(void **state)
{
    (void)state;
    /* §8: 400 G, 100 m, 4 KB MTU: 50 KB of cable round trip + 8 KB of MTUs + 58 KB of
     * response (463,360 bit-times) + the pause frame: about 116 KB. */
    near((double)sim_pfc_headroom(400, 500 * NS, 4096 + 82), 116e3, 0.01, "headroom 400 G");
    near(201728 / 8.0, 25216, 1e-9, "100 G response bound");
    /* Too small a headroom: the lossless class drops, go-back-N repairs it. */
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    p.pfc_dynamic = false;
    p.pfc_xoff = 64 * 1024;
    p.pfc_xon = 32 * 1024;
    p.headroom = 2000;
    struct sim *s = make_named("star8-100g", &p);
    for (int i = 1; i < 8; i++)
        add(s, i, 0, SIM_OP_STREAM, 300000, 1);
    sim_run(s, UINT64_MAX);
    uint64_t drops = 0, seq = 0;
    for (int i = 1; i < 8; i++) {
        char obj[16];
        snprintf(obj, sizeof(obj), "sw0/%d", i);
        drops += ctr(s, obj, "rx_prio3_discards");
        snprintf(obj, sizeof(obj), "h%d", i);
        seq += ctr(s, obj, "packet_seq_err");
        done_at(s, i - 1);
    }
    assert_true(drops > 0);
    assert_true(ctr(s, "h0", "out_of_sequence") > 0);
    assert_true(seq > 0);
    sim_free(s);
}

/* ---- §9: pause quanta ---- */

static void test_pause_quanta(void **state)
{
    (void)state;
    assert_int_equal(sim_pause_ps(1, 400), 1280);
    assert_int_equal(sim_pause_ps(1, 100), 5120);
    near((double)sim_pause_ps(0xFFFF, 400) / US, 83.9, 0.001, "0xFFFF at 400 G");
    near((double)sim_pause_ps(0xFFFF, 100) / US, 335.5, 0.001, "0xFFFF at 100 G");
    /* In the model: short pauses (200 quanta = 1.024 us at 100 G) expire on their own, and the
     * time a sender is held never exceeds frames x quanta time; XON (0 quanta) resumes. */
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    p.pause_quanta = 200;
    p.pfc_dynamic = false;
    struct sim *s = make_named("star8-100g", &p);
    for (int i = 1; i < 8; i++)
        add(s, i, 0, SIM_OP_STREAM, 1000000, 1);
    sim_run(s, UINT64_MAX);
    for (int i = 1; i < 8; i++) {
        char obj[16];
        snprintf(obj, sizeof(obj), "h%d", i);
        uint64_t frames = ctr(s, obj, "rx_prio3_pause");
        uint64_t us = ctr(s, obj, "rx_prio3_pause_duration");
        assert_true(frames > 0);
        assert_true((double)us <= (double)frames * sim_pause_ps(200, 100) / US + 1);
        assert_true(ctr(s, obj, "rx_prio3_pause_transition") > 0);
    }
    sim_free(s);
}

/* ---- §10: ECN / RED marking ---- */

static void test_red_curve(void **state)
{
    (void)state;
    uint64_t kmin = 400000, kmax = 1600000;
    assert_true(sim_red_prob(0, kmin, kmax, 0.2) == 0);
    assert_true(sim_red_prob(kmin - 1, kmin, kmax, 0.2) == 0);
    near(sim_red_prob(kmin, kmin, kmax, 0.2), 0, 1e-12, "at Kmin");
    near(sim_red_prob(1000000, kmin, kmax, 0.2), 0.1, 1e-12, "half way");
    near(sim_red_prob(kmax, kmin, kmax, 0.2), 0.2, 1e-12, "at Kmax");
    assert_true(sim_red_prob(kmax + 1, kmin, kmax, 0.2) == 1);
    /* DCTCP-style step: Kmin = Kmax, Pmax = 1. */
    assert_true(sim_red_prob(99999, 100000, 100000, 1) == 0);
    assert_true(sim_red_prob(100000, 100000, 100000, 1) == 1);
    assert_true(sim_red_prob(100001, 100000, 100000, 1) == 1);
    /* In the model: step at 0 marks every data packet through the egress; above the largest
     * queue nothing is marked; a RED ramp marks some, not all. */
    for (int mode = 0; mode < 3; mode++) {
        struct sim_params p;
        sim_params_default(&p, SIM_FABRIC_ROCE);
        p.ecn = true;
        p.kmin = mode == 0 ? 0 : mode == 1 ? 1ull << 40 : 20000;
        p.kmax = mode == 0 ? 0 : mode == 1 ? 1ull << 40 : 200000;
        p.pmax = mode == 2 ? 0.5 : 1;
        struct sim *s = make_named("star8-100g", &p);
        add(s, 1, 0, SIM_OP_STREAM, 400000, 1);
        add(s, 2, 0, SIM_OP_STREAM, 400000, 1);
        sim_run(s, UINT64_MAX);
        uint64_t marked = ctr(s, "sw0/0", "ecn_marked");
        uint64_t rx = ctr(s, "h0", "np_ecn_marked_roce_packets");
        uint64_t data = 2 * ((400000 + p.mtu - 1) / p.mtu);
        assert_int_equal(marked, rx);
        if (mode == 0)
            assert_int_equal(marked, data);
        else if (mode == 1)
            assert_int_equal(marked, 0);
        else
            assert_true(marked > 0 && marked < data);
        sim_free(s);
    }
}

/* ---- §11: DCQCN ---- */

static void test_dcqcn_algebra(void **state)
{
    (void)state;
    struct sim_dcqcn d;
    sim_dcqcn_paper(&d);
    near(d.g, 1.0 / 256, 1e-12, "g");
    assert_int_equal(d.alpha_period, 55 * US);
    assert_int_equal(d.rate_period, 55 * US);
    assert_int_equal(d.cnp_interval, 50 * US);
    assert_int_equal(d.fast_recovery, 5);
    assert_int_equal(d.byte_counter, 10000000);
    near(d.rai_gbps, 0.040, 1e-12, "R_AI");
    /* k CNPs at alpha = 1 halve the rate k times (alpha stays 1). */
    struct sim_dcqcn_rp rp = {.rc = 100, .rt = 100, .alpha = 1, .line = 100};
    for (int k = 1; k <= 4; k++) {
        sim_dcqcn_on_cnp(&d, &rp);
        near(rp.rc, 100 / pow(2, k), 1e-12, "k CNPs");
        near(rp.alpha, 1, 1e-12, "alpha stays 1");
        near(rp.rt, 100 / pow(2, k - 1), 1e-12, "R_T <- R_C");
    }
    /* Fast recovery closes (1 - 2^-5) of the gap in F = 5 timer periods. */
    struct sim_dcqcn_rp r2 = {.rc = 80, .rt = 80, .alpha = 1, .line = 100};
    sim_dcqcn_on_cnp(&d, &r2); /* R_T = 80, R_C = 40 */
    for (int i = 0; i < 5; i++)
        sim_dcqcn_increase(&d, &r2, true);
    near(r2.rt, 80, 1e-12, "R_T unchanged in fast recovery");
    near((r2.rc - 40) / (80 - 40), 1 - pow(2, -5), 1e-12, "fast recovery closes 97 %");
    /* Then additive increase: R_T += R_AI, R_C <- (R_T + R_C)/2. */
    double rc = r2.rc;
    sim_dcqcn_increase(&d, &r2, true);
    near(r2.rt, 80.04, 1e-12, "additive increase");
    near(r2.rc, (80.04 + rc) / 2, 1e-12, "R_C halves the gap");
    /* Hyper increase once both counters passed F: R_T += i R_HAI. */
    for (int i = 0; i < 6; i++)
        sim_dcqcn_increase(&d, &r2, false);
    double rt = r2.rt;
    sim_dcqcn_increase(&d, &r2, false); /* b_count 7 > F, t_count 6 > F: i = 1 */
    near(r2.rt, rt + 1 * d.rhai_gbps, 1e-9, "hyper increase");
    /* Alpha decays by (255/256)^n after n quiet periods. */
    struct sim_dcqcn_rp r3 = {.alpha = 1};
    for (int i = 0; i < 10; i++)
        sim_dcqcn_alpha_decay(&d, &r3);
    near(r3.alpha, pow(255.0 / 256, 10), 1e-12, "alpha decay");
}

/* The notification point paces CNPs (one per QP per 50 us); the reaction point cuts. */
static void test_dcqcn_model(void **state)
{
    (void)state;
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    p.ecn = true;
    p.kmin = p.kmax = 0; /* mark everything */
    p.pmax = 1;
    p.cc = SIM_CC_DCQCN;
    struct sim *s = make_named("star8-100g", &p);
    int a = add(s, 1, 0, SIM_OP_STREAM, 4000000, 1);
    sim_run(s, UINT64_MAX);
    uint64_t t = done_at(s, a);
    uint64_t cnps = ctr(s, "h0", "np_cnp_sent");
    uint64_t bound = t / (50 * US) + 1;
    print_message("dcqcn: %llu CNPs in %.1f us (bound %llu), flow at %.2f Gb/s\n",
                  (unsigned long long)cnps, (double)t / US, (unsigned long long)bound,
                  4e6 * 8 / ((double)t / US) / 1e3);
    assert_true(cnps >= 10 && cnps <= bound);
    assert_int_equal(ctr(s, "h1", "rp_cnp_handled"), cnps);
    assert_int_equal(ctr(s, "h0", "np_ecn_marked_roce_packets"), (4000000 + 4095) / 4096);
    /* Marked all along, the sender ran well below line rate. */
    assert_true((double)t >
                2.0 * (double)sim_ser_ps(msg_wire(SIM_FABRIC_ROCE, 4000000, 4096), 100));
    sim_free(s);
}

/* ---- §12: the IB credit loop ---- */

static double ib_goodput(uint64_t vl_buffer, uint64_t *rtt_credit, uint64_t *wait, uint64_t *drops)
{
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_IB);
    p.ib_vl_buffer = vl_buffer;
    p.switch_latency = 150 * NS;
    p.ib_credit_delay = 50 * NS;
    struct sim *s = make(topo_json("{\"format\":\"fabtop-sim-topology\",\"fabric\":\"ib\","
                                   "\"kind\":\"star\",\"hosts\":2,\"link_gbps\":400,"
                                   "\"link_delay_ns\":500}"),
                         &p);
    int a = add(s, 0, 1, SIM_OP_STREAM, 20000000, 1);
    sim_run(s, UINT64_MAX);
    uint64_t t = done_at(s, a);
    /* The loop that limits: h0 -> switch. A packet's last bit reaches the switch after t_ser +
     * t_prop, the switch forwards it after its latency (the egress is idle), and the credits
     * come back after processing, the flow-control packet and t_prop. */
    *rtt_credit = sim_ser_ps(4096 + SIM_IB_HDR, 400) + 500 * NS + 150 * NS + 50 * NS +
                  sim_ser_ps(SIM_IB_FC_PACKET, 400) + 500 * NS;
    *wait = ctr(s, "h0", "port_xmit_wait");
    *drops = ctr(s, "sw0/0", "port_xmit_discards") + ctr(s, "sw0/1", "port_xmit_discards");
    sim_free(s);
    return 20e6 * 8 / ((double)t / US) / 1e3; /* Gb/s */
}

static void test_ib_credits(void **state)
{
    (void)state;
    /* §12 numbers: at 400 G and 100 m RTT is about 1.1 us: 55 KB of VL buffer for line rate. */
    near(sim_ib_credit_util(55000, 400, 1100 * NS), 1.0, 0.001, "55 KB at 1.1 us");
    near(sim_ib_credit_util(27500, 400, 1100 * NS), 0.5, 0.001, "half the buffer");
    /* In the model: k packets' worth of credits carry k packets per credit round trip; halve
     * the buffer and the throughput halves, with zero drops. */
    uint32_t blocks = (4096 + SIM_IB_HDR + 63) / 64;
    uint64_t rtt, wait, drops;
    double g8 = ib_goodput(8ull * blocks * 64, &rtt, &wait, &drops);
    double want8 = 8.0 * 4096 * 8 / ((double)rtt / US) / 1e3;
    print_message("ib: 8 packets of credit: %.1f Gb/s (model %.1f), RTT_credit %.3f us\n", g8,
                  want8, (double)rtt / US);
    near(g8, want8, 0.03, "8 packets of credit");
    assert_int_equal(drops, 0);
    assert_true(wait > 0);
    double g4 = ib_goodput(4ull * blocks * 64, &rtt, &wait, &drops);
    near(g4, g8 / 2, 0.03, "half the buffer, half the throughput");
    assert_int_equal(drops, 0);
    /* A buffer above the BDP: line rate less headers. */
    double gbig = ib_goodput(256 * 1024, &rtt, &wait, &drops);
    near(gbig, 400.0 * 4096 / (4096 + SIM_IB_HDR), 0.01, "line rate");
}

/* ---- §13: IB congestion control ---- */

static void test_ibcc(void **state)
{
    (void)state;
    uint64_t t_done[2];
    uint64_t fecn[2], becn[2], wait_root[2];
    for (int cc = 0; cc < 2; cc++) {
        struct sim_params p;
        sim_params_default(&p, SIM_FABRIC_IB);
        p.cc = cc ? SIM_CC_IBCC : SIM_CC_NONE;
        struct sim *s = make_named("ib-star16-200g", &p);
        for (int i = 1; i < 9; i++)
            add(s, i, 0, SIM_OP_STREAM, 1000000, 1);
        sim_run(s, UINT64_MAX);
        t_done[cc] = 0;
        for (int i = 0; i < 8; i++) {
            uint64_t t = done_at(s, i);
            t_done[cc] = t > t_done[cc] ? t : t_done[cc];
        }
        fecn[cc] = ctr(s, "sw0/0", "fecn_marked");
        becn[cc] = ctr(s, "h1", "sim_becn_received");
        wait_root[cc] = ctr(s, "h1", "port_xmit_wait");
        /* No pause frames, no drops: credits alone hold the senders back. */
        for (int i = 0; i < 16; i++) {
            char obj[16];
            snprintf(obj, sizeof(obj), "sw0/%d", i);
            assert_int_equal(ctr(s, obj, "port_xmit_discards"), 0);
        }
        /* The switch's egress to the receiver is the root; ports toward senders never mark. */
        for (int i = 1; i < 9; i++) {
            char obj[16];
            snprintf(obj, sizeof(obj), "sw0/%d", i);
            assert_int_equal(ctr(s, obj, "fecn_marked"), 0);
        }
        sim_free(s);
    }
    assert_int_equal(fecn[0], 0);
    assert_true(fecn[1] > 0);
    assert_true(becn[1] > 0);
    assert_true(wait_root[0] > 0);
    print_message("ibcc: incast %.1f us without CC, %.1f us with; FECN %llu\n",
                  (double)t_done[0] / US, (double)t_done[1] / US, (unsigned long long)fecn[1]);
}

/* ---- §14: the RC transport timeout ---- */

static void test_rc_timeout(void **state)
{
    (void)state;
    assert_int_equal(sim_rc_timeout_ps(14), 67108864ull * 1000);
    near((double)sim_rc_timeout_ps(18) / 1e12, 1.07, 0.005, "timeout 18");
    near((double)sim_rc_timeout_ps(20) / 1e12, 4.29, 0.005, "timeout 20");
    /* A link dies under a stream of request/response operations on a leaf-spine: the QPs
     * hashed onto it lose one message each; after the routes move, the local ACK timer
     * resends it and its latency grows by exactly one T_o. */
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    p.timeout = 14;
    p.route_update = 100 * US;
    p.nlink_events = 1;
    p.link_events[0] = (struct sim_link_event){.at = 200 * US, .a = "leaf0", .b = "spine0"};
    struct sim *s = make_named("leafspine32-200g", &p);
    struct sim_app a = {.src = 0,
                        .dst = 8,
                        .op = SIM_OP_RR,
                        .size = 65536,
                        .resp_size = 64,
                        .nqps = 8,
                        .messages = 2000};
    struct ft_err err = {0};
    assert_true(sim_app_add(s, &a, &err) >= 0);
    sim_run(s, UINT64_MAX);
    struct sim_app_stats st;
    sim_app_stats(s, 0, &st);
    assert_true(st.done);
    assert_false(st.failed);
    assert_int_equal(st.ops, 2000);
    uint64_t to = sim_rc_timeout_ps(14);
    print_message("rc timeout: latency %.2f us .. %.3f ms, T_o %.3f ms, timeouts %llu\n",
                  (double)st.lat_min / US, (double)st.lat_max / 1e9, (double)to / 1e9,
                  (unsigned long long)ctr(s, "h0", "local_ack_timeout_err"));
    assert_true(ctr(s, "h0", "local_ack_timeout_err") + ctr(s, "h8", "local_ack_timeout_err") >= 1);
    assert_true(st.lat_max > to);
    assert_true(st.lat_max < to + 50 * US); /* one T_o plus at most a few round trips */
    assert_int_equal(ctr(s, "leaf0/8", "link_downed"), 1);
    sim_free(s);
    /* No path at all: the QP goes to error after retry_cnt + 1 timeouts. */
    sim_params_default(&p, SIM_FABRIC_ROCE);
    p.timeout = 10;
    p.retry_cnt = 7;
    p.nlink_events = 1;
    p.link_events[0] = (struct sim_link_event){.at = 50 * US, .a = "h0", .b = "sw0"};
    s = make_named("star8-100g", &p);
    add(s, 1, 0, SIM_OP_STREAM, 100000000, 1);
    sim_run(s, UINT64_MAX);
    sim_app_stats(s, 0, &st);
    assert_true(st.failed);
    assert_non_null(strstr(st.error, "retry counter exceeded"));
    assert_int_equal(ctr(s, "h1", "local_ack_timeout_err"), 8);
    assert_int_equal(ctr(s, "h1", "req_transport_retries_exceeded"), 1);
    uint64_t t_err = sim_now(s);
    to = sim_rc_timeout_ps(10);
    assert_true(t_err >= 50 * US + 7 * to && t_err <= 50 * US + 8 * to + 10 * US);
    sim_free(s);
}

/* ---- determinism ---- */

static char *run_text(uint64_t seed)
{
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    p.seed = seed;
    p.ecn = true;
    p.kmin = 20000;
    p.kmax = 200000;
    p.pmax = 0.2;
    p.cc = SIM_CC_DCQCN;
    struct sim *s = make_named("fattree4-100g", &p);
    for (int i = 1; i < 16; i++)
        add(s, i, 0, SIM_OP_STREAM, 300000, 1);
    sim_run(s, UINT64_MAX);
    cJSON *j = sim_results_json(s);
    char *txt = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    sim_free(s);
    return txt;
}

static void test_determinism(void **state)
{
    (void)state;
    char *a = run_text(7), *b = run_text(7), *c = run_text(8);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c); /* ECN marks and ECMP hashes follow the seed */
    free(a);
    free(b);
    free(c);
}

/* ---- playback ---- */

/* Moments: inside one the scale holds (1 us per 1 ms), outside playback runs at 1 us per
 * 10 us; the plan's wall time is the sum of both. The wall clock is the caller's, so the
 * pacing is checked exactly. */
static void test_moments(void **state)
{
    (void)state;
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    struct sim *s = make_named("star8-100g", &p);
    add(s, 1, 0, SIM_OP_STREAM, 100000000, 1);
    const uint64_t m[2][2] = {{100 * US, 200 * US}, {1000 * US, 1100 * US}};
    assert_int_equal(sim_ctl_moments(s, m, 2), 0);
    const uint64_t bad[2][2] = {{100 * US, 200 * US}, {150 * US, 300 * US}};
    assert_int_equal(sim_ctl_moments(s, bad, 2), -EINVAL);
    assert_int_equal(sim_ctl_set_scale(s, SIM_SCALE_LESSON), 0);
    uint64_t w = 1000000000;
    sim_play(s, w, UINT64_MAX);
    /* Before the first moment: 1 ms of wall is 100 us of simulated time. */
    w += 1000000;
    sim_play(s, w, UINT64_MAX);
    assert_int_equal(sim_now(s), 100 * US);
    /* In it: 1 ms of wall is 1 us. */
    w += 1000000;
    sim_play(s, w, UINT64_MAX);
    assert_int_equal(sim_now(s), 101 * US);
    /* 99 ms more reach its end, then 1 ms is 100 us again. */
    w += 99000000;
    sim_play(s, w, UINT64_MAX);
    assert_int_equal(sim_now(s), 200 * US);
    w += 1000000;
    sim_play(s, w, UINT64_MAX);
    assert_int_equal(sim_now(s), 300 * US);
    /* The plan: 1200 us with 200 us of moments: 200 ms + 1000 us at 10 us/us = 210 ms. */
    assert_true(fabs(sim_playback_wall_ns(SIM_SCALE_LESSON, m, 2, 1200 * US) - 210e6) < 1);
    assert_true(fabs(sim_playback_wall_ns(SIM_SCALE_LESSON, NULL, 0, 1200 * US) - 1200e6) < 1);
    assert_true(sim_playback_wall_ns(0, m, 2, 1200 * US) == 0);
    sim_free(s);
}

static void test_playback(void **state)
{
    (void)state;
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    struct sim *s = make_named("star8-100g", &p);
    add(s, 1, 0, SIM_OP_STREAM, 10000000, 1);
    assert_int_equal(sim_ctl_set_scale(s, 5000), -22);
    /* 1 us of simulated time per 10 us of wall time: 1 ms of wall covers 100 us. */
    assert_int_equal(sim_ctl_set_scale(s, 10000), 0);
    sim_play(s, 1000000000, UINT64_MAX);
    sim_play(s, 1001000000, UINT64_MAX);
    assert_int_equal(sim_now(s), 100 * US);
    /* Paused: nothing moves; a step advances by the asked simulated time. */
    sim_ctl_pause(s, true);
    sim_play(s, 1002000000, UINT64_MAX);
    assert_int_equal(sim_now(s), 100 * US);
    sim_ctl_step(s, 5 * US);
    sim_play(s, 1002000001, UINT64_MAX);
    assert_int_equal(sim_now(s), 105 * US);
    /* Resume at full speed to the end; the port view shows the queue drained. */
    sim_ctl_pause(s, false);
    assert_int_equal(sim_ctl_set_scale(s, 0), 0);
    while (!sim_finished(s))
        sim_play(s, 1003000000, 100000);
    struct sim_port_snap snap[16];
    sim_port_snapshot(s, snap, 16);
    assert_int_equal(snap[0].queue_bytes, 0);
    assert_true(snap[0].xmit_bytes > 0);
    sim_free(s);
    /* Skip idle: a link failure leaves a 67 ms retransmission wait that plays in an instant
     * of wall time at a slow scale. */
    sim_params_default(&p, SIM_FABRIC_ROCE);
    p.nlink_events = 2;
    p.link_events[0] = (struct sim_link_event){.at = 3 * US, .a = "h0", .b = "sw0"};
    p.link_events[1] = (struct sim_link_event){.at = 20 * US, .a = "h0", .b = "sw0", .up = true};
    s = make_named("star8-100g", &p);
    add(s, 1, 0, SIM_OP_PINGPONG, 100000, 3);
    sim_ctl_set_scale(s, 10000);
    sim_ctl_skip_idle(s, true);
    uint64_t wall = 0;
    while (!sim_finished(s) && wall < 100000000000ull) {
        wall += 1000000; /* 1 ms steps: 100 us of simulated time each unless skipping */
        sim_play(s, wall, UINT64_MAX);
    }
    assert_true(sim_finished(s));
    assert_true(sim_now(s) > sim_rc_timeout_ps(14));
    assert_true(wall < 20000000); /* far less than the 671 ms of wall time without skipping */
    sim_free(s);
}

/* ---- views ---- */

static void test_counters_view(void **state)
{
    (void)state;
    struct sim_params p;
    sim_params_default(&p, SIM_FABRIC_ROCE);
    struct sim *s = make_named("star8-100g", &p);
    add(s, 1, 0, SIM_OP_STREAM, 100000, 1);
    sim_run(s, UINT64_MAX);
    int n = sim_counters(s, NULL, 0);
    assert_true(n > 100);
    struct counters_value *v = calloc((size_t)n, sizeof(*v));
    assert_int_equal(sim_counters(s, v, n), n);
    bool seen_data = false, seen_pause = false;
    for (int i = 0; i < n; i++) {
        if (!strcmp(v[i].object, "h1") && !strcmp(v[i].name, "port_xmit_data")) {
            /* port_xmit_data counts 4-byte words; the view shows bytes (words x 4). */
            assert_string_equal(v[i].unit, "bytes");
            assert_true(v[i].value == 4.0 * (double)ctr(s, "h1", "port_xmit_data"));
            seen_data = true;
        }
        seen_pause |= !strcmp(v[i].name, "rx_prio3_pause_duration");
    }
    assert_true(seen_data && seen_pause);
    /* Frames: 25 data packets (24 of 4096 B, one of 1696 B, RETH on the first) less
     * preamble and gap, in words. */
    uint64_t frames = msg_wire(SIM_FABRIC_ROCE, 100000, 4096) - 25 * SIM_ETH_GAP;
    assert_int_equal(ctr(s, "h1", "port_xmit_data"), frames / 4);
    free(v);
    sim_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serialisation),
        cmocka_unit_test(test_propagation),
        cmocka_unit_test(test_incast_completion),
        cmocka_unit_test(test_reference_star),
        cmocka_unit_test(test_reference_fat_tree),
        cmocka_unit_test(test_pfc_queue_bound),
        cmocka_unit_test(test_headroom),
        cmocka_unit_test(test_pause_quanta),
        cmocka_unit_test(test_red_curve),
        cmocka_unit_test(test_dcqcn_algebra),
        cmocka_unit_test(test_dcqcn_model),
        cmocka_unit_test(test_ib_credits),
        cmocka_unit_test(test_ibcc),
        cmocka_unit_test(test_rc_timeout),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_playback),
        cmocka_unit_test(test_moments),
        cmocka_unit_test(test_counters_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
