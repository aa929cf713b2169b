/* test_fabric: the fabric section without a fabric: PortInfo encodings, the snapshot round
 * trip (GUIDs and 64-bit counters as strings, no "fabric" key when none ran), refusals,
 * endpoint resolution, cabling plans in both formats and their comparison, and every
 * fabric lint rule triggered and kept quiet, on models built the way discovery builds them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <infiniband/mad.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "lint_fixture.h"
#include "topology/topo_cabling.h"
#include "topology/topo_fabric.h"
#include "topology/topo_ibfabric.h"
#include "topology/topo_json.h"
#include "topology/topo_lint.h"
#include "topology/topo_load.h"

#define G_LEAF  0x0002c90300001000ull
#define G_SPINE 0x0002c90300002000ull
#define G_A     0x0002c9030000a000ull
#define G_B     0x0002c9030000b000ull

/* Indices of the synthetic fabric's ports (see fab_model). */
enum { P_LEAF0, P_LEAF1, P_LEAF2, P_LEAF3, P_LEAF4, P_SPINE0, P_SPINE1, P_A1, P_B1, P_N };
enum { N_LEAF, N_SPINE, N_A, N_B };

static int add_node(struct topo_fabric *f, enum topo_fnode_type t, uint64_t guid, const char *desc,
                    int nports, uint32_t lid)
{
    int k = topo_fabric_add_node(f);
    struct topo_fnode *n = &f->nodes[k];
    n->type = t;
    n->guid = guid;
    n->sys_guid = guid;
    snprintf(n->desc, sizeof(n->desc), "%s", desc);
    n->nports = nports;
    n->vendor_id = 0x02c9;
    n->device_id = t == TOPO_FNODE_SWITCH ? 0xd2f0 : 0x1021;
    n->lid = lid;
    n->valid = TOPO_FNODE_V_IDS | TOPO_FNODE_V_LID;
    return k;
}

/* An NDR port, ACTIVE/LinkUp, 4X of 4X supported and enabled. */
static int add_port(struct topo_fabric *f, int node, int num, uint32_t lid)
{
    int k = topo_fabric_add_port(f);
    struct topo_fport *p = &f->ports[k];
    p->node = node;
    p->num = num;
    p->guid = f->nodes[node].guid + (f->nodes[node].type == TOPO_FNODE_SWITCH ? 0 : (uint64_t)num);
    p->state = TOPO_PORT_ACTIVE;
    p->phys_state = TOPO_PHYS_LINKUP;
    p->valid = TOPO_FPORT_V_STATE;
    if (lid) {
        p->lid = lid;
        p->valid |= TOPO_FPORT_V_LID;
    }
    if (num > 0 || f->nodes[node].type != TOPO_FNODE_SWITCH) {
        p->width = 4;
        p->width_sup = p->width_ena = 4;
        p->lane_gbps = p->lane_sup_gbps = p->lane_ena_gbps = 100;
        snprintf(p->speed, sizeof(p->speed), "NDR");
        p->valid |= TOPO_FPORT_V_WIDTH | TOPO_FPORT_V_SPEED | TOPO_FPORT_V_WIDTH_CAP |
                    TOPO_FPORT_V_SPEED_CAP;
    }
    struct topo_fnode *n = &f->nodes[node];
    if (n->first_port < 0)
        n->first_port = k;
    n->nfports++;
    return k;
}

static void cable(struct topo_fabric *f, int a, int b)
{
    f->ports[a].remote = b;
    f->ports[b].remote = a;
}

static void down(struct topo_fabric *f, int p)
{
    f->ports[p].state = TOPO_PORT_DOWN;
    f->ports[p].phys_state = TOPO_PHYS_POLLING;
    f->ports[p].valid &= ~(unsigned)(TOPO_FPORT_V_WIDTH | TOPO_FPORT_V_SPEED);
}

/* The healthy IB node (mlx5_0 port 1 = model port 0, 4X NDR) cabled to leaf-1 port 1;
 * node-b on leaf-1 port 2; leaf-1 port 3 up to spine-1 port 1; leaf-1 port 4 empty. One
 * route a -> b through leaf-1, counters on leaf-1 port 2, one LLDP neighbour. */
static struct topo_model *fab_model(void)
{
    struct topo_model *m = fx_ib_node();
    struct topo_fabric *f = &m->fabric;
    f->valid = TOPO_FAB_V_IB | TOPO_FAB_V_LLDP | TOPO_FAB_V_COUNTERS;
    snprintf(f->ib_status, sizeof(f->ib_status), "2 switches, 2 CAs, 3 links");
    snprintf(f->lldp_status, sizeof(f->lldp_status), "1 neighbour");
    f->mad_timeout_ms = 200;
    f->mad_retries = 1;
    f->window_s = 0.5;
    add_node(f, TOPO_FNODE_SWITCH, G_LEAF, "leaf-1", 8, 5);
    add_node(f, TOPO_FNODE_SWITCH, G_SPINE, "spine-1", 8, 6);
    add_node(f, TOPO_FNODE_CA, G_A, "node-a mlx5_0", 1, 7);
    add_node(f, TOPO_FNODE_CA, G_B, "node-b mlx5_0", 1, 8);
    for (int num = 0; num <= 4; num++)
        add_port(f, N_LEAF, num, num == 0 ? 5 : 0);
    add_port(f, N_SPINE, 0, 6);
    add_port(f, N_SPINE, 1, 0);
    add_port(f, N_A, 1, 7);
    add_port(f, N_B, 1, 8);
    assert_int_equal(f->nports, P_N);
    cable(f, P_LEAF1, P_A1);
    cable(f, P_LEAF2, P_B1);
    cable(f, P_LEAF3, P_SPINE1);
    down(f, P_LEAF4);
    int l = topo_fabric_add_local(f);
    snprintf(f->locals[l].ca, sizeof(f->locals[l].ca), "mlx5_0");
    f->locals[l].num = 1;
    f->locals[l].port = 0;
    f->locals[l].fport = P_A1;
    int hops[] = {1, 2, 0, 2};
    for (int i = 0; i < 4; i++) {
        f->nodes[i].hops = hops[i];
        f->nodes[i].local = 0;
        f->nodes[i].valid |= TOPO_FNODE_V_HOPS;
    }
    int r = topo_fabric_add_route(f);
    snprintf(f->routes[r].src_spec, sizeof(f->routes[r].src_spec), "7");
    snprintf(f->routes[r].dst_spec, sizeof(f->routes[r].dst_spec), "node-b");
    f->routes[r].src = P_A1;
    f->routes[r].dst = P_B1;
    f->routes[r].src_lid = 7;
    f->routes[r].dst_lid = 8;
    int h = topo_fabric_add_hop(f);
    f->hops[h].node = N_LEAF;
    f->hops[h].in_port = 1;
    f->hops[h].out_port = 2;
    f->routes[r].nhops = 1;
    static const struct {
        const char *name;
        uint64_t v0, v1;
    } ctr[] = {{"symbol_error", 3, 3},
               {"port_xmit_wait", 1000, 1000},
               {"port_rcv_errors", 0, 0},
               {"port_xmit_data_64", (1ull << 60) + 1, (1ull << 60) + 12345},
               {"port_rcv_data_64", 10, 20}};
    for (size_t i = 0; i < sizeof(ctr) / sizeof(ctr[0]); i++) {
        int k = topo_fabric_add_counter(f);
        f->counters[k].fport = P_LEAF2;
        snprintf(f->counters[k].name, sizeof(f->counters[k].name), "%s", ctr[i].name);
        f->counters[k].v0 = ctr[i].v0;
        f->counters[k].v1 = ctr[i].v1;
        f->counters[k].valid0 = f->counters[k].valid1 = true;
    }
    int nb = topo_fabric_add_neighbour(f);
    struct topo_neighbour *n = &f->neighbours[nb];
    snprintf(n->ifname, sizeof(n->ifname), "ib0");
    n->netdev = 0;
    snprintf(n->protocol, sizeof(n->protocol), "LLDP");
    snprintf(n->chassis_id, sizeof(n->chassis_id), "3e:ce:8b:6a:41:da");
    snprintf(n->chassis_id_type, sizeof(n->chassis_id_type), "mac");
    snprintf(n->sysname, sizeof(n->sysname), "leaf-sw-7");
    snprintf(n->port_id, sizeof(n->port_id), "Ethernet1/7");
    snprintf(n->port_id_type, sizeof(n->port_id_type), "ifname");
    snprintf(n->mgmt_addr, sizeof(n->mgmt_addr), "10.9.0.2");
    snprintf(n->vlans, sizeof(n->vlans), "10,20");
    n->vlan = 10;
    n->ttl = 120;
    n->valid = TOPO_NB_V_VLAN | TOPO_NB_V_TTL;
    topo_fabric_note(f, "a note");
    topo_fabric_finalize(f);
    return m;
}

static struct topo_findings lint(const struct topo_model *m, const struct topo_lint_opts *o)
{
    struct topo_findings f = {0};
    topo_lint_run(m, o, &f);
    /* No finding is more severe than its row in the rule table says. */
    for (int i = 0; i < f.n; i++)
        for (int r = 0; r < topo_lint_nrules; r++)
            if (!strcmp(topo_lint_rules[r].id, f.v[i].rule))
                assert_true(f.v[i].sev <= topo_lint_rules[r].sev);
    return f;
}

/* ---- encodings ---- */

static void test_encodings(void **state)
{
    (void)state;
    assert_int_equal(topo_ib_width_lanes(1), 1);
    assert_int_equal(topo_ib_width_lanes(2), 4);
    assert_int_equal(topo_ib_width_lanes(4), 8);
    assert_int_equal(topo_ib_width_lanes(8), 12);
    assert_int_equal(topo_ib_width_lanes(16), 2);
    assert_int_equal(topo_ib_width_lanes(3), 0);
    assert_int_equal(topo_ib_width_mask_max(0x3), 4);
    assert_int_equal(topo_ib_width_mask_max(0x13), 4); /* 1X, 4X, 2X */
    assert_int_equal(topo_ib_width_mask_max(0xb), 12);
    assert_int_equal(topo_ib_width_mask_max(0), 0);
    assert_true(topo_ib_speed_gbps(1, 0) == 2.5);
    assert_true(topo_ib_speed_gbps(4, 0) == 10);
    assert_true(topo_ib_speed_gbps(4, 2) == 25);  /* Ext overrides: EDR */
    assert_true(topo_ib_speed_gbps(4, 4) == 50);  /* HDR */
    assert_true(topo_ib_speed_gbps(4, 8) == 100); /* NDR */
    assert_true(topo_ib_speed_gbps(3, 0) == 0);   /* not one bit: unknown */
    assert_true(topo_ib_speed_mask_max(0x7, 0) == 10);
    assert_true(topo_ib_speed_mask_max(0x7, 0x7) == 50);
    assert_string_equal(topo_ib_speed_name(50), "HDR");
    assert_string_equal(topo_ib_speed_name(2.5), "SDR");
    assert_string_equal(topo_ib_speed_name(7), "?");
    struct topo_fport p = {.width = 4, .lane_gbps = 100, .valid = TOPO_FPORT_V_WIDTH};
    assert_true(topo_fport_rate_gbps(&p) == 0); /* speed unknown: n/a, not a number */
    p.valid |= TOPO_FPORT_V_SPEED;
    snprintf(p.speed, sizeof(p.speed), "NDR");
    assert_true(topo_fport_rate_gbps(&p) == 400);
    char buf[64];
    topo_fport_link_str(&p, buf, sizeof(buf));
    assert_string_equal(buf, "4X NDR, 400 Gb/s");
}

/* FDR10: PortInfo says QDR and Mellanox's ExtendedPortInfo sets bit 0 of its LinkSpeedActive;
 * an active extended speed wins; without the vendor MAD (zeros) it stays QDR. */
static void test_fdr10(void **state)
{
    (void)state;
    uint8_t pi[IB_SMP_DATA_SIZE] = {0}, epi[IB_SMP_DATA_SIZE] = {0};
    char name[16];
    mad_set_field(pi, 0, IB_PORT_LINK_SPEED_ACTIVE_F, 4); /* QDR */
    assert_true(topo_ib_active_lane(pi, NULL, true, name, sizeof(name)) == 10);
    assert_string_equal(name, "QDR");
    assert_true(topo_ib_active_lane(pi, epi, true, name, sizeof(name)) == 10);
    assert_string_equal(name, "QDR");
    mad_set_field(epi, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F, 1);
    assert_true(topo_ib_active_lane(pi, epi, true, name, sizeof(name)) == 10);
    assert_string_equal(name, "FDR10");
    struct topo_fport p = {.width = 4, .lane_gbps = 10};
    p.valid = TOPO_FPORT_V_WIDTH | TOPO_FPORT_V_SPEED;
    snprintf(p.speed, sizeof(p.speed), "%s", name);
    char buf[64];
    topo_fport_link_str(&p, buf, sizeof(buf));
    assert_string_equal(buf, "4X FDR10, 40 Gb/s");
    /* FDR active in LinkSpeedExtActive: FDR, 14 Gb/s a lane. */
    mad_set_field(pi, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F, 1);
    assert_true(topo_ib_active_lane(pi, epi, true, name, sizeof(name)) == 14);
    assert_string_equal(name, "FDR");
    /* Without IsExtendedSpeedsSupported the extended field means nothing. */
    assert_true(topo_ib_active_lane(pi, epi, false, name, sizeof(name)) == 10);
    assert_string_equal(name, "FDR10");
    /* The vendor bit only at QDR's signalling: an SDR link stays SDR. */
    mad_set_field(pi, 0, IB_PORT_LINK_SPEED_ACTIVE_F, 1);
    assert_true(topo_ib_active_lane(pi, epi, false, name, sizeof(name)) == 2.5);
    assert_string_equal(name, "SDR");
    mad_set_field(pi, 0, IB_PORT_LINK_SPEED_ACTIVE_F, 0);
    assert_true(topo_ib_active_lane(pi, epi, false, name, sizeof(name)) == 0);
    assert_string_equal(name, "");
}

/* ---- snapshot ---- */

static char *doc_text(const struct topo_model *m)
{
    cJSON *doc = topo_json_from_model(m);
    char *s = cJSON_Print(doc);
    cJSON_Delete(doc);
    return s;
}

static struct topo_model *reload(const char *text, struct ft_err *err)
{
    cJSON *doc;
    if (jsonutil_parse(text, strlen(text), "snap.json", &doc, err) < 0)
        return NULL;
    struct topo_model *m = topo_model_new();
    int rc = topo_json_to_model(doc, m, "snap.json", err);
    cJSON_Delete(doc);
    if (rc < 0) {
        topo_model_free(m);
        return NULL;
    }
    topo_model_finalize(m);
    return m;
}

static void test_round_trip(void **state)
{
    (void)state;
    struct topo_model *m = fab_model();
    char *a = doc_text(m);
    assert_non_null(strstr(a, "\"guid\":\t\"0x0002c90300001000\""));
    /* 2^60 + 1 does not fit a double exactly: it travels as a decimal string. */
    assert_non_null(strstr(a, "\"1152921504606846977\""));
    struct ft_err err = {0};
    struct topo_model *m2 = reload(a, &err);
    if (!m2)
        fail_msg("%s", err.msg);
    char *b = doc_text(m2);
    if (strcmp(a, b)) {
        size_t i = 0;
        while (a[i] && a[i] == b[i])
            i++;
        fail_msg("fabric differs after a round trip near: ...%.80s", a + (i > 40 ? i - 40 : 0));
    }
    const struct topo_fabric *f = &m2->fabric;
    assert_int_equal(f->nnodes, 4);
    assert_int_equal(f->nports, P_N);
    assert_int_equal(f->nlinks, 3);
    assert_int_equal(f->nodes[N_LEAF].first_port, P_LEAF0);
    assert_int_equal(f->nodes[N_LEAF].nfports, 5);
    assert_int_equal(f->ports[P_A1].remote, P_LEAF1);
    assert_false(f->ports[P_LEAF4].valid & TOPO_FPORT_V_WIDTH);
    assert_true(f->counters[3].v1 == (1ull << 60) + 12345);
    assert_int_equal(f->neighbours[0].vlan, 10);
    assert_int_equal(f->routes[0].nhops, 1);
    cJSON_free(b);
    cJSON_free(a);
    topo_model_free(m2);
    topo_model_free(m);

    /* A model where no fabric part ran writes no "fabric" key at all: older snapshots
     * stay byte-identical through save -> load -> save. */
    m = fx_ib_node();
    a = doc_text(m);
    assert_null(strstr(a, "\"fabric\""));
    m2 = reload(a, &err);
    assert_non_null(m2);
    assert_int_equal(m2->fabric.valid, 0);
    cJSON_free(a);
    topo_model_free(m2);
    topo_model_free(m);
}

/* What a fabric part may hold and the writer must write so that it loads again: a hop at a
 * switch that is not in the fabric (node -1) and a counter of an undiscovered port (port -1).
 * They were written as -1, which the reader refused: the saved snapshot did not load. */
static void test_round_trip_unknowns(void **state)
{
    (void)state;
    struct topo_model *m = fab_model();
    m->fabric.hops[0].node = -1;
    m->fabric.counters[0].fport = -1;
    char *a = doc_text(m);
    struct ft_err err = {0};
    struct topo_model *m2 = reload(a, &err);
    if (!m2)
        fail_msg("a snapshot fabtop wrote does not load: %s", err.msg);
    assert_int_equal(m2->fabric.hops[0].node, -1);
    assert_int_equal(m2->fabric.counters[0].fport, -1);
    char *b = doc_text(m2);
    assert_string_equal(a, b);
    cJSON_free(b);
    cJSON_free(a);
    topo_model_free(m2);
    topo_model_free(m);
}

static void expect_refused(const char *mutate_from, const char *mutate_to, const char *needle)
{
    struct topo_model *m = fab_model();
    char *a = doc_text(m);
    char *at = strstr(a, mutate_from);
    if (!at) {
        if (getenv("FABTOP_TEST_DUMP"))
            fputs(a, stderr);
        fail_msg("no '%s' in the document", mutate_from);
    }
    char *text = xalloc(strlen(a) + strlen(mutate_to) + 1);
    snprintf(text, strlen(a) + strlen(mutate_to) + 1, "%.*s%s%s", (int)(at - a), a, mutate_to,
             at + strlen(mutate_from));
    struct ft_err err = {0};
    struct topo_model *m2 = reload(text, &err);
    assert_null(m2);
    if (!strstr(err.msg, needle) || !strstr(err.msg, "snap.json"))
        fail_msg("message '%s' lacks '%s' or the file name", err.msg, needle);
    free(text);
    cJSON_free(a);
    topo_model_free(m);
}

static void test_refusals(void **state)
{
    (void)state;
    expect_refused("\"remote\":\t2", "\"remote\":\t99", "ports[8].remote");
    expect_refused("\"guid\":\t\"0x0002c90300001000\"", "\"guid\":\t12", "nodes[0].guid");
    expect_refused("\"type\":\t\"switch\"", "\"type\":\t\"hub\"", "nodes[0].type");
    expect_refused("\"status\":\t\"ok\"", "\"status\":\t\"fine\"", "routes[0].status");
    expect_refused("\"v0\":\t\"1152921504606846977\"", "\"v0\":\t\"-3\"", "counters[3].v0");
    /* Numbers out of the range of their field (converting them was undefined behaviour):
     * one message with the field and its range. */
    expect_refused("\"device_id\":\t54000", "\"device_id\":\t1e300",
                   "fabric nodes[0].device_id = 1e+300 is out of range 0-65535");
    expect_refused("\"vendor_id\":\t713", "\"vendor_id\":\t-4",
                   "fabric nodes[0].vendor_id = -4 is out of range 0-16777215");
    expect_refused("\"num\":\t0,", "\"num\":\t3.33e39,",
                   "fabric ports[0].num = 3.33e+39 is out of range 0-255");
    expect_refused("\"width\":\t4", "\"width\":\t4.5",
                   "snap.json: ports[0].width = 4.5 is not a whole number in 0-32");
    expect_refused("\"width_supported\":\t4", "\"width_supported\":\t40",
                   "fabric ports[1].width_supported = 40 is out of range 0-32");
    expect_refused("\"v1\":\t3", "\"v1\":\t1e20", "fabric counters[0].v1 must be a whole number");
    expect_refused("\"vlan\":\t10", "\"vlan\":\t5000",
                   "fabric neighbours[0].vlan = 5000 is out of range 0-4095");
    /* Hops count cables from one of the locals: hops without a local are refused (the text
     * view read locals[-1]). */
    expect_refused("\"local\":\t0", "\"local\":\tnull",
                   "fabric nodes[0].local must name a locals entry when hops is given");
    /* A member that must be an array and is not: named, and not walked. */
    expect_refused("\"nodes\":\t[", "\"nodes\":\t{\"x\": 1}, \"was\": [",
                   "fabric nodes must be an array");
}

/* ---- resolution ---- */

static void test_resolve(void **state)
{
    (void)state;
    struct topo_model *m = fab_model();
    const struct topo_fabric *f = &m->fabric;
    char why[128];
    assert_int_equal(topo_fabric_resolve(f, "7", why, sizeof(why)), P_A1);
    assert_int_equal(topo_fabric_resolve(f, "0x8", why, sizeof(why)), P_B1);
    assert_int_equal(topo_fabric_resolve(f, "5", why, sizeof(why)), P_LEAF0);
    assert_int_equal(topo_fabric_resolve(f, "0x0002c9030000b000", why, sizeof(why)), P_B1);
    assert_int_equal(topo_fabric_resolve(f, "0x0002c9030000a001", why, sizeof(why)), P_A1);
    assert_int_equal(topo_fabric_resolve(f, "node-b mlx5_0", why, sizeof(why)), P_B1);
    assert_int_equal(topo_fabric_resolve(f, "NODE-A", why, sizeof(why)), P_A1);
    assert_int_equal(topo_fabric_resolve(f, "spine-1", why, sizeof(why)), P_SPINE0);
    assert_int_equal(topo_fabric_resolve(f, "node", why, sizeof(why)), -1);
    assert_non_null(strstr(why, "matches 2"));
    assert_int_equal(topo_fabric_resolve(f, "99", why, sizeof(why)), -1);
    assert_non_null(strstr(why, "LID 99"));
    assert_int_equal(topo_fabric_resolve(f, "nosuch", why, sizeof(why)), -1);
    assert_int_equal(topo_fabric_find_lid(f, 0), -1);
    topo_model_free(m);
}

/* ---- cabling plans ---- */

/* The fabric as ibnetdiscover writes it (GUIDs in switchguid=/caguid= lines and in ids). */
static const char *plan_ibnd = "#\n# Topology file: generated by hand\n#\n"
                               "vendid=0x2c9\ndevid=0xd2f0\nsysimgguid=0x2c90300001000\n"
                               "switchguid=0x2c90300001000(2c90300001000)\n"
                               "Switch\t8 \"S-0002c90300001000\"\t\t# \"leaf-1\" enhanced port 0 "
                               "lid 5 lmc 0\n"
                               "[1]\t\"H-0002c9030000a000\"[1](2c9030000a001) \t\t# \"node-a "
                               "mlx5_0\" lid 7 4xNDR\n"
                               "[2]\t\"H-0002c9030000b000\"[1](2c9030000b001) \t\t# \"node-b "
                               "mlx5_0\" lid 8 4xNDR\n"
                               "[3]\t\"S-0002c90300002000\"[1]\t\t# \"spine-1\" lid 6 4xNDR\n"
                               "\n"
                               "caguid=0x2c9030000a000\n"
                               "Ca\t1 \"H-0002c9030000a000\"\t\t# \"node-a mlx5_0\"\n"
                               "[1](2c9030000a001) \t\"S-0002c90300001000\"[1]\t\t# lid 7 lmc 0 "
                               "\"leaf-1\" lid 5 4xNDR\n";

static int count_kind(const struct topo_cabling_diff *d, int n, enum topo_cabling_kind k)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += d[i].kind == k;
    return c;
}

static struct topo_cabling *parse_ok(const char *text)
{
    struct topo_cabling *p = NULL;
    struct ft_err err = {0};
    if (topo_cabling_parse(text, "plan", &p, &err) < 0)
        fail_msg("%s", err.msg);
    return p;
}

static void test_cabling_ibnd(void **state)
{
    (void)state;
    struct topo_model *m = fab_model();
    struct topo_cabling *p = parse_ok(plan_ibnd);
    assert_int_equal(p->nlinks, 3); /* leaf-1 <-> node-a appears from both ends: once */
    assert_true(p->whole);
    struct topo_cabling_diff *d = NULL;
    int n = topo_cabling_compare(&m->fabric, p, &d);
    if (n)
        fail_msg("a plan that matches reports: %s", d[0].text);
    free(d);

    /* node-a moved from leaf-1 port 1 to port 4 (empty): port 1 unplanned... */
    m->fabric.ports[P_LEAF1].remote = -1;
    m->fabric.ports[P_A1].remote = -1;
    m->fabric.ports[P_LEAF4].state = TOPO_PORT_ACTIVE;
    m->fabric.ports[P_LEAF4].phys_state = TOPO_PHYS_LINKUP;
    cable(&m->fabric, P_LEAF4, P_A1);
    topo_fabric_finalize(&m->fabric);
    n = topo_cabling_compare(&m->fabric, p, &d);
    assert_int_equal(count_kind(d, n, TOPO_CABLING_MISCABLED), 1);
    assert_non_null(strstr(d[0].text, "leaf-1 port 1 has no link"));
    assert_non_null(strstr(d[0].text, "node-a mlx5_0 port 1 is cabled to leaf-1 port 4"));
    free(d);
    topo_cabling_free(p);

    /* ibsim's own format: ids without GUIDs, descriptions after '#', remote port default. */
    p = parse_ok("# ibsim net file\nSwitch 8 \"L1\" # \"leaf-1\"\n[1] \"A\"[1] w=1\n"
                 "[2] \"B\"[1]\n[3] \"S\"\n\nSwitch 8 \"S\" # \"spine-1\"\n[1] \"L1\"[3]\n\n"
                 "Hca 1 \"A\" # \"node-a mlx5_0\"\n[1] \"L1\"[1]\n\n"
                 "Hca 1 \"B\" # \"node-c mlx5_0\"\n[1] \"L1\"[2]\n");
    assert_int_equal(p->nlinks, 3);
    n = topo_cabling_compare(&m->fabric, p, &d);
    assert_int_equal(count_kind(d, n, TOPO_CABLING_NO_NODE), 1); /* node-c */
    assert_int_equal(count_kind(d, n, TOPO_CABLING_MISCABLED), 1);
    assert_int_equal(count_kind(d, n, TOPO_CABLING_UNPLANNED), 0);
    free(d);
    topo_cabling_free(p);
    topo_model_free(m);
}

static void test_cabling_json(void **state)
{
    (void)state;
    struct topo_model *m = fab_model();
    struct topo_cabling *p =
        parse_ok("[{\"node\": \"node-a mlx5_0\", \"port\": 1, \"switch\": \"leaf-1\", "
                 "\"switch_port\": 1},\n {\"node\": \"0x0002c9030000b000\", \"switch\": "
                 "\"leaf-1\", \"switch_port\": 3}]");
    assert_false(p->whole);
    struct topo_cabling_diff *d = NULL;
    int n = topo_cabling_compare(&m->fabric, p, &d);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, TOPO_CABLING_MISCABLED);
    assert_non_null(strstr(d[0].text, "plan line 2"));
    assert_non_null(strstr(d[0].text, "is cabled to leaf-1 port 2"));
    free(d);
    topo_cabling_free(p);

    /* A planned port that is down: no link. */
    down(&m->fabric, P_LEAF2);
    down(&m->fabric, P_B1);
    m->fabric.ports[P_LEAF2].remote = m->fabric.ports[P_B1].remote = -1;
    topo_fabric_finalize(&m->fabric);
    p = parse_ok("{\"links\": [{\"node\": \"node-b mlx5_0\", \"switch\": \"leaf-1\", "
                 "\"switch_port\": 2}]}");
    n = topo_cabling_compare(&m->fabric, p, &d);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, TOPO_CABLING_NO_LINK);
    assert_non_null(strstr(d[0].text, "has no link (DOWN/Polling)"));
    free(d);
    topo_cabling_free(p);
    topo_model_free(m);
}

static void expect_plan_refused(const char *text, const char *needle)
{
    struct topo_cabling *p = NULL;
    struct ft_err err = {0};
    assert_true(topo_cabling_parse(text, "plan.txt", &p, &err) < 0);
    assert_null(p);
    if (!strstr(err.msg, needle) || !strstr(err.msg, "plan.txt"))
        fail_msg("message '%s' lacks '%s' or the file name", err.msg, needle);
}

static void test_cabling_refusals(void **state)
{
    (void)state;
    expect_plan_refused("hello\n", "no cabling found");
    expect_plan_refused("[1] \"A\"[1]\n", "plan.txt:1: a port line before any node line");
    expect_plan_refused("Switch 8 leaf\n", "plan.txt:1: a node line needs a quoted id");
    expect_plan_refused("Switch 8 \"A\"\n[1] \"B\"[1]\nSwitch 8 \"A\"\n", "plan.txt:3:");
    expect_plan_refused("[{\"node\": \"a\"}]", "entry 0 needs");
    expect_plan_refused("{\"x\": 1}", "list of");
    expect_plan_refused("[", "plan.txt:1:");
}

/* ---- lint ---- */

static const char *const fabric_rules[] = {
    "port-ll-mismatch", "fabric-link-mismatch",  "fabric-link-degraded",     "cabling-plan",
    "route-broken",     "switch-counter-rising", "switch-counter-saturated", "switch-xmit-wait",
};

static void test_lint_quiet(void **state)
{
    (void)state;
    struct topo_model *m = fab_model();
    struct topo_findings f = lint(m, NULL);
    for (size_t i = 0; i < sizeof(fabric_rules) / sizeof(fabric_rules[0]); i++)
        if (fx_count(&f, fabric_rules[i], -1)) {
            fx_dump(&f);
            fail_msg("a healthy fabric raised %s", fabric_rules[i]);
        }
    topo_findings_free(&f);
    /* Every rule is in the table that --help and the glossary show. */
    for (size_t i = 0; i < sizeof(fabric_rules) / sizeof(fabric_rules[0]); i++) {
        bool found = false;
        for (int k = 0; k < topo_lint_nrules; k++)
            found |= !strcmp(topo_lint_rules[k].id, fabric_rules[i]);
        if (!found)
            fail_msg("%s is not in topo_lint_rules", fabric_rules[i]);
    }
    topo_model_free(m);
}

static void test_lint_ll_polling(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    /* mlx5_1 (same model as mlx5_0) flipped to Ethernet: no link, stuck in Polling. */
    struct topo_port *p = &m->ports[1];
    p->link_layer = TOPO_LL_ETHERNET;
    p->state = TOPO_PORT_DOWN;
    p->phys_state = TOPO_PHYS_POLLING;
    struct topo_findings f = lint(m, NULL);
    assert_int_equal(fx_count(&f, "port-ll-mismatch", TOPO_SEV_ERROR), 1);
    const struct topo_finding *x = fx_find(&f, "port-ll-mismatch");
    assert_string_equal(x->object, "mlx5_1 port 1");
    assert_non_null(strstr(x->msg, "its sibling mlx5_0 port 1 runs InfiniBand with its link up"));
    assert_non_null(strstr(x->remedy, "mlxconfig -d mlx5_1 set LINK_TYPE_P1=1"));
    topo_findings_free(&f);

    /* Both ports Ethernet and Polling: no sibling disagrees, but the user says IB. */
    m->ports[0].link_layer = TOPO_LL_ETHERNET;
    m->ports[0].state = TOPO_PORT_DOWN;
    m->ports[0].phys_state = TOPO_PHYS_POLLING;
    f = lint(m, NULL);
    assert_int_equal(fx_count(&f, "port-ll-mismatch", -1), 0);
    topo_findings_free(&f);
    struct topo_lint_opts o = {.expect_ll = TOPO_LL_INFINIBAND};
    f = lint(m, &o);
    assert_int_equal(fx_count(&f, "port-ll-mismatch", TOPO_SEV_ERROR), 2);
    assert_non_null(strstr(fx_find(&f, "port-ll-mismatch")->msg, "--expect-link-layer"));
    topo_findings_free(&f);
    /* Stated Ethernet: they are what they should be (their own port-state finding stays). */
    o.expect_ll = TOPO_LL_ETHERNET;
    f = lint(m, &o);
    assert_int_equal(fx_count(&f, "port-ll-mismatch", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_lint_host_switch(void **state)
{
    (void)state;
    struct topo_model *m = fab_model();
    /* The switch port (and so the link) trained 2X while the host's sysfs says 4X. */
    m->fabric.ports[P_LEAF1].width = 2;
    struct topo_findings f = lint(m, NULL);
    assert_true(fx_count(&f, "fabric-link-mismatch", TOPO_SEV_WARN) >= 1);
    const struct topo_finding *x = fx_find(&f, "fabric-link-mismatch");
    assert_string_equal(x->object, "mlx5_0 port 1");
    assert_non_null(strstr(x->msg, "host sees 4X at 100 Gb/s per lane (400 Gb/s)"));
    assert_non_null(strstr(x->msg, "leaf-1 port 1 reports 2X NDR, 200 Gb/s"));
    topo_findings_free(&f);
    /* Same width, other speed. */
    m->fabric.ports[P_LEAF1].width = 4;
    m->fabric.ports[P_LEAF1].lane_gbps = 50;
    snprintf(m->fabric.ports[P_LEAF1].speed, sizeof(m->fabric.ports[P_LEAF1].speed), "HDR");
    f = lint(m, NULL);
    assert_true(fx_count(&f, "fabric-link-mismatch", TOPO_SEV_WARN) >= 1);
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_lint_degraded(void **state)
{
    (void)state;
    struct topo_model *m = fab_model();
    struct topo_fabric *fb = &m->fabric;
    /* Lanes lost: both ends enable 4X, the link trained 1X. */
    fb->ports[P_LEAF2].width = fb->ports[P_B1].width = 1;
    struct topo_findings f = lint(m, NULL);
    assert_int_equal(fx_count(&f, "fabric-link-degraded", TOPO_SEV_WARN), 1);
    assert_non_null(strstr(fx_find(&f, "fabric-link-degraded")->msg, "lanes failed"));
    topo_findings_free(&f);
    /* One end enables only 1X (ibsim's w=1): the ends disagree. */
    fb->ports[P_B1].width_ena = 1;
    f = lint(m, NULL);
    assert_int_equal(fx_count(&f, "fabric-link-degraded", TOPO_SEV_WARN), 1);
    const struct topo_finding *x = fx_find(&f, "fabric-link-degraded");
    assert_non_null(strstr(x->msg, "LinkWidthEnabled on node-b mlx5_0 port 1 allows only 1X"));
    assert_non_null(strstr(x->remedy, "node-b mlx5_0 port 1"));
    topo_findings_free(&f);
    /* Policy: both ends enable 4X of 12X supported, running 4X: one INFO for all. */
    fb->ports[P_B1].width_ena = 4;
    fb->ports[P_LEAF2].width = fb->ports[P_B1].width = 4;
    for (int i = 0; i < fb->nports; i++)
        fb->ports[i].width_sup = 12;
    f = lint(m, NULL);
    assert_int_equal(fx_count(&f, "fabric-link-degraded", TOPO_SEV_WARN), 0);
    assert_int_equal(fx_count(&f, "fabric-link-degraded", TOPO_SEV_INFO), 1);
    assert_non_null(strstr(fx_find(&f, "fabric-link-degraded")->msg, "3 links run below"));
    topo_findings_free(&f);
    /* Speed trained below what both enable. */
    for (int i = 0; i < fb->nports; i++)
        fb->ports[i].width_sup = 4;
    fb->ports[P_LEAF3].lane_gbps = fb->ports[P_SPINE1].lane_gbps = 50;
    f = lint(m, NULL);
    assert_int_equal(fx_count(&f, "fabric-link-degraded", TOPO_SEV_WARN), 1);
    assert_non_null(strstr(fx_find(&f, "fabric-link-degraded")->msg, "trained at HDR"));
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_lint_cabling_and_routes(void **state)
{
    (void)state;
    struct topo_model *m = fab_model();
    struct topo_cabling *p = parse_ok("[{\"node\": \"node-a mlx5_0\", \"switch\": \"leaf-1\", "
                                      "\"switch_port\": 2}, {\"node\": \"node-z\", \"switch\": "
                                      "\"leaf-1\", \"switch_port\": 4}]");
    struct topo_lint_opts o = {.cabling = p};
    m->fabric.routes[0].status = TOPO_ROUTE_DOWN;
    snprintf(m->fabric.routes[0].detail, sizeof(m->fabric.routes[0].detail),
             "leaf-1 forwards LID 8 out of port 2, which is DOWN/Polling");
    struct topo_findings f = lint(m, &o);
    assert_int_equal(fx_count(&f, "cabling-plan", TOPO_SEV_ERROR), 2);
    assert_int_equal(fx_count(&f, "route-broken", TOPO_SEV_ERROR), 1);
    const struct topo_finding *x = fx_find(&f, "route-broken");
    assert_string_equal(x->object, "route 7 -> node-b");
    assert_non_null(strstr(x->msg, "link-down: leaf-1 forwards LID 8"));
    topo_findings_free(&f);
    m->fabric.routes[0].status = TOPO_ROUTE_UNRESOLVED;
    f = lint(m, NULL);
    assert_int_equal(fx_count(&f, "route-broken", TOPO_SEV_WARN), 1);
    topo_findings_free(&f);
    topo_cabling_free(p);
    topo_model_free(m);
}

static struct topo_fcounter *ctr(struct topo_model *m, const char *name)
{
    for (int i = 0; i < m->fabric.ncounters; i++)
        if (!strcmp(m->fabric.counters[i].name, name))
            return &m->fabric.counters[i];
    fail_msg("no counter %s", name);
    return NULL;
}

static void test_lint_switch_counters(void **state)
{
    (void)state;
    struct topo_model *m = fab_model();
    ctr(m, "symbol_error")->v1 = 8;
    ctr(m, "port_xmit_wait")->v1 = 51000;
    struct topo_findings f = lint(m, NULL);
    assert_int_equal(fx_count(&f, "switch-counter-rising", TOPO_SEV_ERROR), 1);
    const struct topo_finding *x = fx_find(&f, "switch-counter-rising");
    assert_string_equal(x->object, "leaf-1 port 2");
    assert_non_null(strstr(x->msg, "SymbolErrorCounter (symbol_error) rose by 5, from 3 to 8"));
    assert_int_equal(fx_count(&f, "switch-xmit-wait", TOPO_SEV_WARN), 1);
    assert_non_null(strstr(fx_find(&f, "switch-xmit-wait")->msg, "rose by 50000 ticks in 0.5 s"));
    assert_int_equal(fx_count(&f, "switch-counter-saturated", -1), 0);
    topo_findings_free(&f);
    /* A 16-bit error counter at 65535 stopped counting. */
    ctr(m, "port_rcv_errors")->v0 = ctr(m, "port_rcv_errors")->v1 = 65535;
    f = lint(m, NULL);
    assert_int_equal(fx_count(&f, "switch-counter-saturated", TOPO_SEV_WARN), 1);
    topo_findings_free(&f);
    /* Cleared in between (v1 < v0) is no rise; a dead PMA (invalid) is silent. */
    ctr(m, "symbol_error")->v1 = 0;
    ctr(m, "port_xmit_wait")->valid1 = false;
    ctr(m, "port_rcv_errors")->v0 = ctr(m, "port_rcv_errors")->v1 = 0;
    f = lint(m, NULL);
    assert_int_equal(fx_count(&f, "switch-counter-rising", -1), 0);
    assert_int_equal(fx_count(&f, "switch-xmit-wait", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encodings),
        cmocka_unit_test(test_fdr10),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_round_trip_unknowns),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_cabling_ibnd),
        cmocka_unit_test(test_cabling_json),
        cmocka_unit_test(test_cabling_refusals),
        cmocka_unit_test(test_lint_quiet),
        cmocka_unit_test(test_lint_ll_polling),
        cmocka_unit_test(test_lint_host_switch),
        cmocka_unit_test(test_lint_degraded),
        cmocka_unit_test(test_lint_cabling_and_routes),
        cmocka_unit_test(test_lint_switch_counters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
