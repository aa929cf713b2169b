/* test_doctor_rules: each comparison rule of the handshake doctor triggered by made-up facts
 * and quiet on matched ones; the facts' JSON round trip; a RoCE v1 GID read from a made-up
 * sysfs tree (gid_attrs/types "IB/RoCE v1") through the topology discovery. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../sysfs/sysfs_tree.h"
#include "engine/doctor/doctor.h"
#include "../lint/lint_fixture.h"
#include "topology/topo_model.h"

#include <errno.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

static void base(struct doctor_facts *f, const char *host, const char *addr, const char *peer,
                 const char *dev)
{
    memset(f, 0, sizeof(*f));
    snprintf(f->host, sizeof(f->host), "%s", host);
    snprintf(f->local_addr, sizeof(f->local_addr), "%s", addr);
    snprintf(f->peer_addr, sizeof(f->peer_addr), "%s", peer);
    snprintf(f->addr_dev, sizeof(f->addr_dev), "%s", dev);
    snprintf(f->route_dev, sizeof(f->route_dev), "%s", dev);
    snprintf(f->subnet, sizeof(f->subnet), "10.0.0.0/24");
    f->mtu = f->addr_mtu = 1500;
    f->tcp_ecn = 2;
    f->memlock_soft = f->memlock_hard = DOCTOR_UNLIMITED;
    f->iommu_groups = DOCTOR_UNKNOWN;
}

static void roce(struct doctor_facts *f, const char *dev, int netdev_mtu, const char *gid0)
{
    struct doctor_rdma_port *r = &f->rdma[f->nrdma++];
    memset(r, 0, sizeof(*r));
    snprintf(r->dev, sizeof(r->dev), "%s", dev);
    r->port = 1;
    snprintf(r->link_layer, sizeof(r->link_layer), "Ethernet");
    snprintf(r->state, sizeof(r->state), "ACTIVE");
    r->netdev_mtu = netdev_mtu;
    r->active_mtu = doctor_roce_mtu(netdev_mtu);
    r->max_mtu = 4096;
    snprintf(r->netdev, sizeof(r->netdev), "eth1");
    r->ngids = 2;
    r->gids[0].index = 0;
    snprintf(r->gids[0].type, sizeof(r->gids[0].type), "%s", gid0);
    r->gids[1].index = 1;
    snprintf(r->gids[1].type, sizeof(r->gids[1].type), "RoCE v2");
}

static struct doctor_facts L, P;
static struct doctor_finding F[16];

static int setup(void **st)
{
    (void)st;
    base(&L, "hostA", "10.0.0.1", "10.0.0.2", "eth1");
    base(&P, "hostB", "10.0.0.2", "10.0.0.1", "eth1");
    return 0;
}

static const struct doctor_finding *find(int n, const char *rule)
{
    for (int i = 0; i < n && i < 16; i++)
        if (!strcmp(F[i].rule, rule))
            return &F[i];
    return NULL;
}

static void test_clean(void **st)
{
    (void)st;
    struct doctor_pmtu pr = {true, 1500, 1500, 0};
    roce(&L, "rxe0", 4200, "RoCE v2");
    roce(&P, "rxe0", 4200, "RoCE v2");
    struct doctor_qp qp = {"rxe0", 1, 1, 4096, "", 26};
    int n = doctor_compare(&L, &P, &qp, &pr, F, 16);
    for (int i = 0; i < n; i++)
        fprintf(stderr, "unexpected: %s\n", F[i].msg);
    assert_int_equal(n, 0);
    assert_int_equal(doctor_status(F, n), 0);
}

static void test_roce_mtu(void **st)
{
    (void)st;
    assert_int_equal(doctor_roce_mtu(1500), 1024);
    assert_int_equal(doctor_roce_mtu(4200), 4096);
    assert_int_equal(doctor_roce_mtu(4192), 4096);
    assert_int_equal(doctor_roce_mtu(4191), 2048);
    assert_int_equal(doctor_roce_mtu(9000), 4096);
    assert_int_equal(doctor_roce_mtu(300), 0);
}

static void test_netdev_mtu(void **st)
{
    (void)st;
    P.mtu = 9000;
    int n = doctor_rule_mtu(&L, &P, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "mtu-mismatch");
    assert_string_equal(F[0].local, "1500");
    assert_string_equal(F[0].peer, "9000");
    assert_int_equal(F[0].sev, DOCTOR_WARN);
    P.mtu = 1500;
    assert_int_equal(doctor_rule_mtu(&L, &P, F, 16), 0);
}

static void test_path_mtu_vs_active(void **st)
{
    (void)st;
    roce(&L, "rxe0", 1500, "RoCE v2");
    roce(&P, "rxe0", 4200, "RoCE v2");
    struct doctor_qp qp = {"rxe0", 1, 1, 4096, "", 26};
    int n = doctor_rule_rdma(&L, &P, &qp, F, 16);
    const struct doctor_finding *f = find(n, "path-mtu");
    assert_non_null(f);
    assert_int_equal(f->sev, DOCTOR_ERROR);
    assert_string_equal(f->msg, "path MTU 4096 > rxe0 active MTU 1024 on hostA; set both "
                                "netdevs' MTU to 4200 or use 1024");
    const struct doctor_finding *m = find(n, "roce-netdev-mtu");
    assert_non_null(m);
    assert_string_equal(m->local, "1500");
    assert_string_equal(m->peer, "4200");
    /* 1024 fits both ends: no path MTU finding. */
    qp.path_mtu = 1024;
    n = doctor_rule_rdma(&L, &P, &qp, F, 16);
    assert_null(find(n, "path-mtu"));
}

static void test_gid_index_missing(void **st)
{
    (void)st;
    roce(&L, "rxe0", 4200, "RoCE v2");
    roce(&P, "rxe0", 4200, "RoCE v2");
    struct doctor_qp qp = {"rxe0", 1, 5, 0, "", 26};
    int n = doctor_rule_rdma(&L, &P, &qp, F, 16);
    assert_int_equal(n, 2); /* both ends */
    assert_string_equal(F[0].rule, "gid-index");
    assert_non_null(strstr(F[0].msg, "GID index 5 does not exist on rxe0 port 1 at hostA"));
    assert_non_null(strstr(F[1].msg, "at hostB"));
}

static void test_gid_type_v1(void **st)
{
    (void)st;
    roce(&L, "mlx5_0", 4200, "RoCE v1");
    roce(&P, "mlx5_0", 4200, "RoCE v2");
    struct doctor_qp qp = {"mlx5_0", 1, 0, 0, "", 26};
    int n = doctor_rule_rdma(&L, &P, &qp, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "gid-type");
    assert_string_equal(F[0].local, "RoCE v1");
    assert_non_null(strstr(F[0].msg, "no IP header"));
    assert_int_equal(F[0].sev, DOCTOR_WARN);
    qp.gid_index = 1;
    assert_int_equal(doctor_rule_rdma(&L, &P, &qp, F, 16), 0);
}

static void test_link_layer_and_state(void **st)
{
    (void)st;
    roce(&L, "mlx5_0", 4200, "RoCE v2");
    roce(&P, "mlx5_0", 4200, "RoCE v2");
    snprintf(P.rdma[0].link_layer, sizeof(P.rdma[0].link_layer), "InfiniBand");
    snprintf(P.rdma[0].state, sizeof(P.rdma[0].state), "DOWN");
    struct doctor_qp qp = {"mlx5_0", 1, -1, 0, "", 26};
    int n = doctor_rule_rdma(&L, &P, &qp, F, 16);
    assert_non_null(find(n, "link-layer"));
    const struct doctor_finding *s = find(n, "port-state");
    assert_non_null(s);
    assert_string_equal(s->peer, "DOWN");
}

static void test_rp_filter(void **st)
{
    (void)st;
    snprintf(P.route_dev, sizeof(P.route_dev), "eth2");
    P.rp_filter_all = 0;
    P.rp_filter_dev = 1;
    int n = doctor_rule_route(&L, &P, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "rp-filter");
    assert_int_equal(F[0].sev, DOCTOR_ERROR);
    assert_non_null(strstr(F[0].msg, "strict (1) on eth1 at hostB"));
    /* 'all' wins when larger (max of all and the interface), loose is fine. */
    P.rp_filter_dev = 0;
    P.rp_filter_all = 1;
    assert_int_equal(doctor_rule_route(&L, &P, F, 16), 1);
    P.rp_filter_all = 2;
    assert_int_equal(doctor_rule_route(&L, &P, F, 16), 0);
    /* Strict on a symmetric route: fine. */
    P.rp_filter_all = 1;
    snprintf(P.route_dev, sizeof(P.route_dev), "eth1");
    assert_int_equal(doctor_rule_route(&L, &P, F, 16), 0);
}

static void test_arp_flux(void **st)
{
    (void)st;
    L.nsib = 1;
    snprintf(L.sib[0], sizeof(L.sib[0]), "eth2");
    L.arp_ignore_all = L.arp_ignore_dev = 0;
    int n = doctor_rule_route(&L, &P, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "arp-flux");
    assert_non_null(strstr(F[0].msg, "eth1 and eth2 hold addresses in 10.0.0.0/24"));
    L.arp_ignore_all = 1;
    assert_int_equal(doctor_rule_route(&L, &P, F, 16), 0);
}

static void test_pmtu(void **st)
{
    (void)st;
    struct doctor_pmtu hole = {true, 1500, 1280, 0};
    int n = doctor_rule_pmtu(&L, &P, &hole, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "pmtu-blackhole");
    assert_non_null(strstr(F[0].msg, "packets above 1280 bytes vanish"));
    struct doctor_pmtu icmp = {true, 1500, 1280, 1280};
    n = doctor_rule_pmtu(&L, &P, &icmp, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "pmtu-smaller");
    assert_int_equal(F[0].sev, DOCTOR_WARN);
    struct doctor_pmtu none = {true, 1500, 0, 0};
    assert_int_equal(doctor_rule_pmtu(&L, &P, &none, F, 16), 1);
    assert_string_equal(F[0].rule, "pmtu-none");
    struct doctor_pmtu ok = {true, 1500, 1500, 0};
    assert_int_equal(doctor_rule_pmtu(&L, &P, &ok, F, 16), 0);
}

static void test_host(void **st)
{
    (void)st;
    roce(&L, "rxe0", 4200, "RoCE v2");
    roce(&P, "rxe0", 4200, "RoCE v2");
    struct doctor_qp qp = {"rxe0", 1, -1, 0, "", 26};
    P.memlock_soft = 8 << 20;
    L.tcp_ecn = 0;
    P.tcp_ecn = 1;
    int n = doctor_rule_host(&L, &P, &qp, F, 16);
    assert_int_equal(n, 2);
    assert_string_equal(F[0].rule, "memlock");
    assert_string_equal(F[0].peer, "8192 KiB");
    assert_string_equal(F[1].rule, "ecn");
    /* memlock matters for verbs only */
    assert_int_equal(doctor_rule_host(&L, &P, NULL, F, 16), 1);
}

static void test_json_round_trip(void **st)
{
    (void)st;
    roce(&L, "rxe0", 1500, "RoCE v1");
    L.nsib = 1;
    snprintf(L.sib[0], sizeof(L.sib[0]), "eth9");
    L.rp_filter_dev = DOCTOR_UNKNOWN;
    L.memlock_soft = 65536;
    cJSON *j = doctor_facts_json(&L);
    struct doctor_facts back;
    struct ft_err err = {0};
    assert_int_equal(doctor_facts_from_json(j, &back, &err), 0);
    cJSON_Delete(j);
    assert_string_equal(back.host, "hostA");
    assert_int_equal(back.mtu, 1500);
    assert_int_equal(back.rp_filter_dev, DOCTOR_UNKNOWN);
    assert_int_equal(back.memlock_soft, 65536);
    assert_int_equal(back.memlock_hard, DOCTOR_UNLIMITED);
    assert_int_equal(back.nsib, 1);
    assert_string_equal(back.sib[0], "eth9");
    assert_int_equal(back.nrdma, 1);
    assert_int_equal(back.rdma[0].active_mtu, 1024);
    assert_string_equal(back.rdma[0].gids[0].type, "RoCE v1");
    assert_int_equal(doctor_facts_from_json(NULL, &back, &err), -EPROTO);
}

/* ---- a made-up sysfs tree: a virtual RoCE device whose GID 0 is "IB/RoCE v1" ---- */

static char root[256];

static void put(const char *rel, const char *text)
{
    tree_file(root, rel, text);
}

static void write_tree(void)
{
    tree_cpus(root);
    const char *d = "sys/devices/virtual/infiniband/roce9";
    char rel[256];
#define P(f, v)                                                                                    \
    do {                                                                                           \
        snprintf(rel, sizeof(rel), "%s/%s", d, f);                                                 \
        put(rel, v);                                                                               \
    } while (0)
    P("ports/1/state", "4: ACTIVE");
    P("ports/1/phys_state", "5: LinkUp");
    P("ports/1/link_layer", "Ethernet");
    P("ports/1/rate", "10 Gb/sec (1X QDR)");
    P("ports/1/gids/0", "0000:0000:0000:0000:0000:ffff:0a00:0001");
    P("ports/1/gid_attrs/types/0", "IB/RoCE v1");
    P("ports/1/gid_attrs/ndevs/0", "eth1");
    P("ports/1/gids/1", "0000:0000:0000:0000:0000:ffff:0a00:0001");
    P("ports/1/gid_attrs/types/1", "RoCE v2");
    P("ports/1/gid_attrs/ndevs/1", "eth1");
    P("fw_ver", "1.2.3");
#undef P
    tree_link(root, "sys/class/infiniband/roce9", "../../devices/virtual/infiniband/roce9");
    put("sys/devices/virtual/net/eth1/mtu", "1500");
    put("sys/devices/virtual/net/eth1/operstate", "up");
    tree_link(root, "sys/class/net/eth1", "../../devices/virtual/net/eth1");
}

static void test_sysfs_roce_v1(void **st)
{
    (void)st;
    snprintf(root, sizeof(root), "/tmp/fabtop-doctor.XXXXXX");
    if (!mkdtemp(root))
        fail_msg("mkdtemp: %s", strerror(errno));
    write_tree();
    struct doctor_facts f;
    memset(&f, 0, sizeof(f));
    doctor_facts_rdma(&f, root);
    tree_remove(root);
    if (f.nrdma != 1)
        fail_msg("expected one RDMA port from the made-up tree, got %d", f.nrdma);
    assert_string_equal(f.rdma[0].dev, "roce9");
    assert_string_equal(f.rdma[0].link_layer, "Ethernet");
    assert_int_equal(f.rdma[0].ngids, 2);
    assert_string_equal(f.rdma[0].gids[0].type, "RoCE v1");
    assert_string_equal(f.rdma[0].gids[1].type, "RoCE v2");
    /* The v1 GID chosen for a queue pair is named, with what v1 costs. */
    struct doctor_facts p = f;
    snprintf(f.host, sizeof(f.host), "hostA");
    struct doctor_qp qp = {"roce9", 1, 0, 0, "", 26};
    int n = doctor_rule_rdma(&f, &p, &qp, F, 16);
    assert_int_equal(n, 2);
    assert_string_equal(F[0].rule, "gid-type");
    assert_non_null(strstr(F[0].msg, "GID index 0 on roce9 at hostA is RoCE v1, not RoCE v2"));
}

/* A RoCE port whose netdev trusts DSCP, maps DSCP 26 to priority 3, has PFC on 3, ETS gives
 * traffic class 3 (of priority 3) half the port, and both RoCE ECN roles are on. */
static void dcb_good(struct doctor_rdma_port *r)
{
    struct topo_dcb_info *d = &r->dcb;
    topo_dcb_init(d);
    d->available = d->trust_dscp = d->pfc_known = d->ets_known = d->ecn_known = true;
    d->dscp_prio[26] = 3;
    d->dscp_prio[48] = 6;
    d->pfc_en = 1u << 3;
    for (int i = 0; i < 8; i++) {
        d->prio_tc[i] = i == 3 ? 3 : 0;
        d->tc_tsa[i] = TOPO_DCB_TSA_ETS;
        d->tc_tx_bw[i] = i == 3 ? 50 : i == 0 ? 50 : 0;
        d->ecn_np[i] = d->ecn_rp[i] = 1;
    }
}

static int dcb_rules(const char *rule)
{
    struct doctor_qp qp = {"rxe0", 1, -1, 0, "", 26};
    int n = doctor_rule_dcb(&L, &P, &qp, F, 16);
    int hits = 0;
    for (int i = 0; i < n && i < 16; i++)
        hits += !rule || !strcmp(F[i].rule, rule);
    return rule ? hits : n;
}

static void test_dcb(void **st)
{
    (void)st;
    roce(&L, "rxe0", 1500, "RoCE v2");
    roce(&P, "rxe0", 1500, "RoCE v2");
    /* Neither offers DCB (veth, rxe): nothing to say. */
    topo_dcb_init(&L.rdma[0].dcb);
    topo_dcb_init(&P.rdma[0].dcb);
    assert_int_equal(dcb_rules(NULL), 0);
    /* Both lossless for DSCP 26 on priority 3: clean. */
    dcb_good(&L.rdma[0]);
    dcb_good(&P.rdma[0]);
    assert_int_equal(dcb_rules(NULL), 0);
    /* PFC off at the peer only: the two directions differ, an error naming both. */
    P.rdma[0].dcb.pfc_en = 0;
    assert_int_equal(dcb_rules(NULL), 1);
    assert_int_equal(F[0].sev, DOCTOR_ERROR);
    assert_string_equal(F[0].rule, "pfc");
    assert_string_equal(F[0].local, "priority 3 on");
    assert_string_equal(F[0].peer, "priority 3 off");
    assert_non_null(strstr(F[0].msg, "PFC is on for priority 3 at hostA but off for priority 3 "
                                     "at hostB (DSCP 26)"));
    /* Off on both: a warning per end. */
    L.rdma[0].dcb.pfc_en = 1u << 6;
    assert_int_equal(dcb_rules("pfc"), 2);
    assert_int_equal(F[0].sev, DOCTOR_WARN);
    assert_non_null(strstr(F[0].msg, "PFC is off for priority 3 (DSCP 26) on eth1 at hostA"));
    /* Another DSCP, whose priority (6) has PFC at this end: only the peer's warning. */
    struct doctor_qp qp48 = {"rxe0", 1, -1, 0, "", 48};
    P.rdma[0].dcb.pfc_en = 0;
    int n = doctor_rule_dcb(&L, &P, &qp48, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].peer, "priority 6 off");
    dcb_good(&L.rdma[0]);
    dcb_good(&P.rdma[0]);
    /* The peer classifies by PCP: DSCP 26 lands on priority 0 there (PFC off on it). */
    P.rdma[0].dcb.trust_dscp = false;
    assert_int_equal(dcb_rules("dcb-trust"), 1);
    assert_non_null(strstr(F[0].msg, "eth1 at hostA classifies by DSCP (DSCP 26 -> priority 3) "
                                     "but eth1 at hostB by PCP"));
    assert_int_equal(dcb_rules("pfc"), 1);
    dcb_good(&P.rdma[0]);
    /* DSCP trusted here but 26 unmapped. */
    L.rdma[0].dcb.dscp_prio[26] = -1;
    assert_int_equal(dcb_rules("dcb-trust"), 1);
    assert_non_null(strstr(F[0].msg, "maps no priority to DSCP 26"));
    dcb_good(&L.rdma[0]);
    /* ETS starves the class of priority 3 at the peer. */
    P.rdma[0].dcb.tc_tx_bw[3] = 0;
    assert_int_equal(dcb_rules(NULL), 1);
    assert_string_equal(F[0].rule, "ets");
    assert_non_null(strstr(F[0].msg, "traffic class 3 on eth1 at hostB, which ETS gives 0%"));
    /* Strict priority with no share is not starved. */
    P.rdma[0].dcb.tc_tsa[3] = 0;
    assert_int_equal(dcb_rules(NULL), 0);
    dcb_good(&P.rdma[0]);
    /* RoCE ECN: the reaction point off here. */
    L.rdma[0].dcb.ecn_rp[3] = 0;
    assert_int_equal(dcb_rules(NULL), 1);
    assert_string_equal(F[0].rule, "roce-ecn");
    assert_string_equal(F[0].local, "np on, rp off");
    assert_non_null(strstr(F[0].msg, "as a sender it ignores CNPs"));
    /* An InfiniBand port: DCB does not apply. */
    dcb_good(&L.rdma[0]);
    L.rdma[0].dcb.pfc_en = 0;
    snprintf(L.rdma[0].link_layer, sizeof(L.rdma[0].link_layer), "InfiniBand");
    assert_int_equal(dcb_rules("pfc"), 0);
}

/* The DCB state's JSON (how the agent's facts travel) round-trips; malformed is refused. */
static void test_dcb_json(void **st)
{
    (void)st;
    struct doctor_rdma_port r, back;
    memset(&r, 0, sizeof(r));
    dcb_good(&r);
    r.dcb.ecn_np[5] = -1;
    cJSON *j = topo_dcb_state_json(&r.dcb);
    assert_int_equal(topo_dcb_state_from_json(j, &back.dcb), 0);
    assert_memory_equal(&r.dcb, &back.dcb, sizeof(r.dcb));
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(j, "ets"), "prio_tc", cJSON_CreateString("x"));
    assert_int_equal(topo_dcb_state_from_json(j, &back.dcb), -EPROTO);
    assert_false(back.dcb.available);
    cJSON_Delete(j);
    j = cJSON_Parse("{\"available\": true, \"dscp_priority\": {\"64\": 3}}");
    assert_int_equal(topo_dcb_state_from_json(j, &back.dcb), -EPROTO);
    cJSON_Delete(j);
    /* An array where the map belongs (its members have no names). */
    j = cJSON_Parse("{\"available\": true, \"dscp_priority\": [3]}");
    assert_int_equal(topo_dcb_state_from_json(j, &back.dcb), -EPROTO);
    cJSON_Delete(j);
}

/* A dcbnl answer built by hand (include/uapi/linux/dcbnl.h): PFC, ETS and an APP table with
 * a DSCP entry and an Ethertype one; and an error answer. */
static void test_dcb_parse(void **st)
{
    (void)st;
    unsigned char buf[1024] __attribute__((aligned(8)));
    memset(buf, 0, sizeof(buf));
    struct nlmsghdr *nh = (struct nlmsghdr *)buf;
    nh->nlmsg_type = RTM_GETDCB;
    char *p = (char *)NLMSG_DATA(nh) + NLA_ALIGN(sizeof(struct dcbmsg));
    struct nlattr *ieee = (struct nlattr *)p;
    ieee->nla_type = DCB_ATTR_IEEE | NLA_F_NESTED;
    char *q = p + NLA_HDRLEN;
    struct nlattr *a = (struct nlattr *)q;
    a->nla_type = DCB_ATTR_IEEE_PFC;
    a->nla_len = NLA_HDRLEN + sizeof(struct ieee_pfc);
    struct ieee_pfc pfc = {.pfc_en = 0x08}; /* copied in: a 4-aligned payload, 8-aligned type */
    memcpy((char *)a + NLA_HDRLEN, &pfc, sizeof(pfc));
    q += NLA_ALIGN(a->nla_len);
    a = (struct nlattr *)q;
    a->nla_type = DCB_ATTR_IEEE_ETS;
    a->nla_len = NLA_HDRLEN + sizeof(struct ieee_ets);
    struct ieee_ets *ets = (struct ieee_ets *)((char *)a + NLA_HDRLEN);
    ets->prio_tc[3] = 2;
    ets->tc_tx_bw[2] = 60;
    ets->tc_tsa[2] = IEEE_8021QAZ_TSA_ETS;
    q += NLA_ALIGN(a->nla_len);
    struct nlattr *tab = (struct nlattr *)q;
    tab->nla_type = DCB_ATTR_IEEE_APP_TABLE;
    char *t = q + NLA_HDRLEN;
    struct dcb_app apps[2] = {
        {.selector = IEEE_8021QAZ_APP_SEL_DSCP, .priority = 3, .protocol = 26},
        {.selector = IEEE_8021QAZ_APP_SEL_ETHERTYPE, .priority = 5, .protocol = 0x8915}};
    for (int i = 0; i < 2; i++) {
        struct nlattr *e = (struct nlattr *)t;
        e->nla_type = DCB_ATTR_IEEE_APP;
        e->nla_len = NLA_HDRLEN + sizeof(struct dcb_app);
        memcpy((char *)e + NLA_HDRLEN, &apps[i], sizeof(apps[i]));
        t += NLA_ALIGN(e->nla_len);
    }
    tab->nla_len = (unsigned short)(t - q);
    ieee->nla_len = (unsigned short)(t - p);
    nh->nlmsg_len = (unsigned)(t - (char *)buf);
    struct topo_dcb_info d;
    topo_dcb_init(&d);
    assert_int_equal(topo_dcb_parse(buf, nh->nlmsg_len, "ens1", &d), 0);
    assert_true(d.available && d.trust_dscp && d.pfc_known && d.ets_known);
    assert_int_equal(d.pfc_en, 0x08);
    assert_int_equal(d.dscp_prio[26], 3);
    assert_int_equal(d.dscp_prio[27], -1);
    assert_int_equal(d.prio_tc[3], 2);
    assert_int_equal(d.tc_tx_bw[2], 60);
    assert_int_equal(topo_dcb_priority_of(&d, 26), 3);
    /* "Operation not supported", as veth answers. */
    memset(buf, 0, sizeof(buf));
    nh->nlmsg_type = NLMSG_ERROR;
    nh->nlmsg_len = NLMSG_LENGTH(sizeof(struct nlmsgerr));
    ((struct nlmsgerr *)NLMSG_DATA(nh))->error = -EOPNOTSUPP;
    topo_dcb_init(&d);
    assert_int_equal(topo_dcb_parse(buf, nh->nlmsg_len, "veth0", &d), 0);
    assert_false(d.available);
    assert_string_equal(d.why, "veth0 does not offer DCB (Operation not supported)");
    /* Truncated: refused. */
    topo_dcb_init(&d);
    assert_int_equal(topo_dcb_parse(buf, 8, "veth0", &d), -EPROTO);
}

/* ACS redirect on a bridge between the queue pair's NIC and a GPU under one switch with it
 * (the lint's acs-redirect on the end's model) is in its facts and named by pcie-acs; the
 * healthy node, and a queue pair on the other NIC, say nothing. */
static void test_acs(void **st)
{
    (void)st;
    struct topo_model *m = fx_ib_node();
    struct doctor_facts *f = calloc(1, sizeof(*f));
    doctor_facts_rdma_model(f, m, "/nonexistent");
    assert_int_equal(f->nrdma, 2);
    assert_string_equal(f->rdma[0].acs, "");
    assert_string_equal(f->rdma[1].acs, "");
    m->pci[FX_DN1B].acs_ctrl = 0x0004; /* P2P Request Redirect above mlx5_1 */
    doctor_facts_rdma_model(f, m, "/nonexistent");
    const struct doctor_rdma_port *r = doctor_port(f, "mlx5_1", 1);
    assert_non_null(r);
    assert_string_equal(r->acs, "0000:82:01.0 Request redirect");
    assert_int_equal(r->acs_gpus, 1);
    assert_string_equal(doctor_port(f, "mlx5_0", 1)->acs, "");
    snprintf(f->host, sizeof(f->host), "hostA");
    struct doctor_qp qp = {"mlx5_1", 1, -1, 0, "", 26};
    int n = doctor_rule_acs(f, NULL, &qp, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "pcie-acs");
    assert_non_null(strstr(F[0].msg, "PCIe ACS redirects peer-to-peer traffic between mlx5_1 at "
                                     "hostA and the 1 GPU under one switch with it "
                                     "(0000:82:01.0 Request redirect)"));
    struct doctor_qp qp0 = {"mlx5_0", 1, -1, 0, "", 26};
    assert_int_equal(doctor_rule_acs(f, NULL, &qp0, F, 16), 0);
    /* The facts' JSON carries it (the agent's end travels so). */
    cJSON *j = doctor_facts_json(f);
    struct doctor_facts *g = calloc(1, sizeof(*g));
    struct ft_err err = {0};
    assert_int_equal(doctor_facts_from_json(j, g, &err), 0);
    assert_string_equal(doctor_port(g, "mlx5_1", 1)->acs, "0000:82:01.0 Request redirect");
    assert_int_equal(doctor_port(g, "mlx5_1", 1)->acs_gpus, 1);
    cJSON_Delete(j);
    free(g);
    free(f);
    topo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test_setup(test_clean, setup),
        cmocka_unit_test_setup(test_roce_mtu, setup),
        cmocka_unit_test_setup(test_netdev_mtu, setup),
        cmocka_unit_test_setup(test_path_mtu_vs_active, setup),
        cmocka_unit_test_setup(test_gid_index_missing, setup),
        cmocka_unit_test_setup(test_gid_type_v1, setup),
        cmocka_unit_test_setup(test_link_layer_and_state, setup),
        cmocka_unit_test_setup(test_rp_filter, setup),
        cmocka_unit_test_setup(test_arp_flux, setup),
        cmocka_unit_test_setup(test_pmtu, setup),
        cmocka_unit_test_setup(test_host, setup),
        cmocka_unit_test_setup(test_json_round_trip, setup),
        cmocka_unit_test_setup(test_sysfs_roce_v1, setup),
        cmocka_unit_test_setup(test_dcb, setup),
        cmocka_unit_test_setup(test_dcb_json, setup),
        cmocka_unit_test_setup(test_dcb_parse, setup),
        cmocka_unit_test_setup(test_acs, setup),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
