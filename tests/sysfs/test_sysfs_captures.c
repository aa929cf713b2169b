/* test_sysfs_captures: the sysfs enricher on real captures from FABTOP_SHARED_DATA
 * (skipped, exit 77, when absent). The hwloc-gather tarball of a 2-socket Xeon loads
 * through topo_load like `fabtop topo --sysfs-root`; the trimmed sysfs-infiniband trees
 * (no CPU part for hwloc, and no `device` links) are read by the enricher on a model built
 * here, through a small overlay that only supplies the PCI placement the captures lost.
 * Expected values were read from the captured files by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "topology/topo_enrich.h"
#include "topology/topo_load.h"

#include "sysfs_tree.h"

static char data[1024];

static int exists(const char *rel)
{
    char p[2048];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", data, rel);
    return stat(p, &st) == 0;
}

#define TARBALL "hwloc-fsroot/hwloc-tests_32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2"

static const unsigned port_basic_v =
    TOPO_PORT_V_STATE | TOPO_PORT_V_PHYS | TOPO_PORT_V_LL | TOPO_PORT_V_RATE;

/* mlx4_0 of the 32em64t machine: ConnectX-3 FDR, port 1 ACTIVE, LID 0x3a4, SM LID 0x1. */
static void check_32em64t_mlx4(const struct topo_model *m, int n)
{
    const struct topo_nic *nic = &m->nics[n];
    assert_string_equal(nic->node_guid, "0002:c903:00f9:bfa0");
    assert_string_equal(nic->sys_image_guid, "0002:c903:00f9:bfa3");
    assert_string_equal(nic->fw_ver, "2.11.500");
    assert_string_equal(nic->board_id, "DEL0A30000019");
    assert_string_equal(nic->hca_type, "MT4099");
    assert_int_equal(nic->nports, 1);
    const struct topo_port *p = model_port(m, n, 1);
    assert_int_equal(p->valid, port_basic_v | TOPO_PORT_V_LID | TOPO_PORT_V_SMLID |
                                   TOPO_PORT_V_GIDS | TOPO_PORT_V_GIDTYPES);
    assert_int_equal(p->state, TOPO_PORT_ACTIVE);
    assert_int_equal(p->phys_state, TOPO_PHYS_LINKUP);
    assert_int_equal(p->link_layer, TOPO_LL_INFINIBAND);
    assert_true(p->rate_gbps == 56.0);
    assert_int_equal(p->width, 4);
    assert_string_equal(p->speed, "FDR");
    assert_int_equal(p->lid, 0x3a4);
    assert_int_equal(p->lmc, 0);
    assert_int_equal(p->sm_lid, 0x1);
    assert_int_equal(p->sm_sl, 0);
    /* gids/0 is the port GUID; the other entries are fe80:: with a zero GUID (unused) */
    assert_int_equal(p->ngids, 1);
    const struct topo_gid *g = port_gid(p, 0);
    assert_string_equal(g->gid, "fe80:0000:0000:0000:0002:c903:00f9:bfa1");
    assert_int_equal(g->type, TOPO_GID_IB);
    assert_string_equal(g->ip, "");
    assert_string_equal(g->ndev, "");
}

static void check_ib0(const struct topo_model *m, int n, int pci)
{
    int d = topo_model_find_netdev(m, "ib0");
    assert_true(d >= 0);
    const struct topo_netdev *nd = &m->netdevs[d];
    assert_int_equal(nd->pci, pci);
    assert_int_equal(nd->nic, n);
    assert_int_equal(nd->valid, TOPO_NET_V_MTU | TOPO_NET_V_OPER); /* speed file is empty */
    assert_int_equal(nd->mtu, 2044);
    assert_string_equal(nd->operstate, "up");
    assert_string_equal(nd->mac, "80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:f9:bf:a1");
}

/* The whole hwloc-gather tree, through hwloc and then the enricher. */
static void test_tarball(void **state)
{
    (void)state;
    if (!exists(TARBALL))
        skip();
    char dir[64], cmd[2300], root[128];
    snprintf(dir, sizeof(dir), "/tmp/fabtop-cap-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(cmd, sizeof(cmd), "tar xjf '%s/%s' -C '%s'", data, TARBALL, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(root, sizeof(root), "%s/32em64t-2n8c+1mic", dir);

    struct topo_load_opts o = {.sysfs_root = root, .no_verbs = true, .no_gpu_libs = true};
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    if (topo_load(&o, &m, &err) < 0)
        fail_msg("%s", err.msg);

    int pci = model_pci(m, "0000:82:00.0");
    assert_true(pci >= 0);
    int n = model_nic(m, "mlx4_0");
    assert_int_equal(m->nics[n].pci, pci);
    assert_string_equal(m->nics[n].driver, "mlx4_core");
    check_32em64t_mlx4(m, n);
    check_ib0(m, n, pci);
    assert_int_equal(model_port(m, n, 1)->netdev, topo_model_find_netdev(m, "ib0"));

    /* scif0 (Xeon Phi) is a dangling class link: no NIC, one note */
    assert_int_equal(topo_model_find_nic_by_rdma(m, "scif0"), -1);
    assert_note(m, "scif0: /sys/class/infiniband/scif0 is a dangling link");
    int rdma = 0;
    for (int i = 0; i < m->nnics; i++)
        rdma += m->nics[i].rdma_dev[0] != 0;
    assert_int_equal(rdma, 1);

    int d = topo_model_find_netdev(m, "eth0");
    assert_int_equal(m->netdevs[d].pci, model_pci(m, "0000:02:00.0"));
    assert_int_equal(m->netdevs[d].valid, TOPO_NET_V_MTU | TOPO_NET_V_SPEED | TOPO_NET_V_OPER);
    assert_int_equal(m->netdevs[d].speed_mbps, 1000);
    assert_string_equal(m->nics[m->netdevs[d].nic].driver, "igb");
    d = topo_model_find_netdev(m, "eth1");
    assert_int_equal(m->netdevs[d].valid, TOPO_NET_V_MTU | TOPO_NET_V_OPER);
    assert_string_equal(m->netdevs[d].operstate, "down");
    /* virtual netdevs whose directories were not captured: kept, quietly, without PCI */
    const char *virt[] = {"br0", "eth0.1015", "mic0"};
    for (int i = 0; i < 3; i++) {
        d = topo_model_find_netdev(m, virt[i]);
        assert_true(d >= 0);
        assert_int_equal(m->netdevs[d].pci, -1);
        assert_no_note(m, virt[i]);
    }
    assert_int_equal(topo_model_find_netdev(m, "lo"), -1);

    /* a 2013 kernel: no link speed files, 64-byte config files: all unknown */
    for (int i = 0; i < m->npci; i++) {
        assert_int_equal(m->pci[i].valid &
                             (TOPO_PCI_V_CUR_SPEED | TOPO_PCI_V_CUR_WIDTH | TOPO_PCI_V_MAX_SPEED |
                              TOPO_PCI_V_MAX_WIDTH | TOPO_PCI_V_ACS),
                         0);
    }
    topo_model_free(m);
    tree_remove(dir);
}

/* ---- the trimmed trees ---- */

struct overlay {
    char root[64];
    const char *cap; /* the capture's directory holding sys/ */
};

static void overlay_new(struct overlay *ov, const char *set)
{
    static char cap[1200];
    snprintf(cap, sizeof(cap), "%s/sysfs-infiniband/%s", data, set);
    ov->cap = cap;
    snprintf(ov->root, sizeof(ov->root), "/tmp/fabtop-cap-XXXXXX");
    assert_non_null(mkdtemp(ov->root));
}

/* Place the captured class entry CLS/NAME below a PCI function, as the kernel's class
 * links do: sys/class/CLS/NAME -> ../../devices/pci0000:00/BDF/CLS/NAME, which leads to
 * the captured directory. bdf NULL: a link straight to the capture (no placement). */
static void overlay_entry(struct overlay *ov, const char *cls, const char *name, const char *bdf)
{
    char rel[256], target[2048];
    snprintf(target, sizeof(target), "%s/sys/class/%s/%s", ov->cap, cls, name);
    snprintf(rel, sizeof(rel), "sys/class/%s/%s", cls, name);
    if (!bdf) {
        tree_link(ov->root, rel, target);
        return;
    }
    char dev[256], up[300];
    snprintf(dev, sizeof(dev), "sys/devices/pci0000:00/%s/%s/%s", bdf, cls, name);
    tree_link(ov->root, dev, target);
    snprintf(up, sizeof(up), "../../devices/pci0000:00/%s/%s/%s", bdf, cls, name);
    tree_link(ov->root, rel, up);
}

static struct topo_model *model_with(const char *const *bdfs, int n)
{
    struct topo_model *m = topo_model_new();
    int h = topo_model_add_pci(m);
    m->pci[h].kind = TOPO_PCI_HOSTBRIDGE;
    for (int i = 0; i < n; i++) {
        int k = topo_model_add_pci(m);
        m->pci[k].kind = TOPO_PCI_DEVICE;
        m->pci[k].parent = h;
        assert_int_equal(topo_bdf_parse(bdfs[i], &m->pci[k].addr), 0);
    }
    return m;
}

static void enrich_at(struct topo_model *m, const char *root)
{
    struct topo_load_opts o = {.sysfs_root = root, .no_verbs = true, .no_gpu_libs = true};
    topo_enrich_sysfs.enrich(m, &o);
    topo_model_finalize(m);
}

static void test_hwloc_32em64t_tree(void **state)
{
    (void)state;
    if (!exists("sysfs-infiniband/hwloc-32em64t/sys/class/infiniband"))
        skip();
    static const char *const bdfs[] = {"0000:82:00.0"};

    /* as captured: no `device` links, so mlx4_0 cannot be placed and ib0 has no PCI */
    char cap[1200];
    snprintf(cap, sizeof(cap), "%s/sysfs-infiniband/hwloc-32em64t", data);
    struct topo_model *m = model_with(bdfs, 1);
    enrich_at(m, cap);
    assert_int_equal(m->nnics, 0);
    assert_note(m, "mlx4_0: neither a PCI device nor a parent network device");
    int d = topo_model_find_netdev(m, "ib0");
    assert_int_equal(m->netdevs[d].pci, -1);
    assert_int_equal(m->netdevs[d].mtu, 2044);
    topo_model_free(m);

    /* placed at its real address 0000:82:00.0: the NIC is added there */
    struct overlay ov;
    overlay_new(&ov, "hwloc-32em64t");
    overlay_entry(&ov, "infiniband", "mlx4_0", "0000:82:00.0");
    overlay_entry(&ov, "net", "ib0", "0000:82:00.0");
    m = model_with(bdfs, 1);
    enrich_at(m, ov.root);
    int pci = model_pci(m, "0000:82:00.0");
    int n = model_nic(m, "mlx4_0");
    assert_int_equal(m->nics[n].pci, pci);
    assert_string_equal(m->nics[n].driver, ""); /* no driver link captured */
    check_32em64t_mlx4(m, n);
    check_ib0(m, n, pci);
    assert_int_equal(model_port(m, n, 1)->netdev, topo_model_find_netdev(m, "ib0"));
    assert_int_equal(m->nnotes, 0);
    topo_model_free(m);
    tree_remove(ov.root);
}

static void check_qdr_port(const struct topo_model *m, int n, int num)
{
    const struct topo_port *p = model_port(m, n, num);
    assert_int_equal(p->valid, port_basic_v); /* no lid, sm_lid or gids in the capture */
    assert_int_equal(p->state, TOPO_PORT_ACTIVE);
    assert_int_equal(p->phys_state, TOPO_PHYS_LINKUP);
    assert_int_equal(p->link_layer, TOPO_LL_INFINIBAND);
    assert_true(p->rate_gbps == 40.0);
    assert_int_equal(p->width, 4);
    assert_string_equal(p->speed, "QDR");
}

static void check_eth0(const struct topo_model *m)
{
    int d = topo_model_find_netdev(m, "eth0");
    assert_true(d >= 0);
    const struct topo_netdev *nd = &m->netdevs[d];
    assert_int_equal(nd->pci, -1);
    assert_int_equal(nd->valid, TOPO_NET_V_MTU | TOPO_NET_V_SPEED | TOPO_NET_V_OPER);
    assert_int_equal(nd->mtu, 1500);
    assert_int_equal(nd->speed_mbps, 1000);
    assert_string_equal(nd->operstate, "up");
    assert_string_equal(nd->mac, "01:01:01:01:01:01");
}

/* node_exporter: mlx4_0 (two QDR ports) and i40iw0 (Intel iWARP, old "(4X)" SDR text). */
static void test_node_exporter_tree(void **state)
{
    (void)state;
    if (!exists("sysfs-infiniband/node_exporter/sys/class/infiniband"))
        skip();
    struct overlay ov;
    overlay_new(&ov, "node_exporter");
    overlay_entry(&ov, "infiniband", "mlx4_0", "0000:0a:00.0");
    overlay_entry(&ov, "infiniband", "i40iw0", "0000:0b:00.0");
    overlay_entry(&ov, "net", "eth0", NULL);
    static const char *const bdfs[] = {"0000:0a:00.0", "0000:0b:00.0"};
    struct topo_model *m = model_with(bdfs, 2);
    enrich_at(m, ov.root);

    int n = model_nic(m, "mlx4_0");
    assert_int_equal(m->nics[n].pci, model_pci(m, "0000:0a:00.0"));
    assert_string_equal(m->nics[n].fw_ver, "2.31.5050");
    assert_string_equal(m->nics[n].board_id, "SM_1141000001000");
    assert_string_equal(m->nics[n].hca_type, "MT4099");
    assert_string_equal(m->nics[n].node_guid, "");
    assert_int_equal(m->nics[n].nports, 2);
    check_qdr_port(m, n, 1);
    check_qdr_port(m, n, 2);

    n = model_nic(m, "i40iw0");
    assert_int_equal(m->nics[n].pci, model_pci(m, "0000:0b:00.0"));
    assert_string_equal(m->nics[n].fw_ver, "0.2");
    assert_string_equal(m->nics[n].board_id, "I40IW Board ID");
    assert_string_equal(m->nics[n].hca_type, "I40IW");
    const struct topo_port *p = model_port(m, n, 1);
    assert_int_equal(p->valid, port_basic_v);
    assert_int_equal(p->link_layer, TOPO_LL_INFINIBAND); /* what the old kernel wrote */
    assert_true(p->rate_gbps == 10.0);
    assert_int_equal(p->width, 4);
    assert_string_equal(p->speed, "SDR");
    check_eth0(m);
    assert_int_equal(m->nnotes, 0);
    topo_model_free(m);
    tree_remove(ov.root);
}

/* prometheus-procfs: mlx5_0 (hand-assembled: phys_state "4: ACTIVE"), mlx4_0 (a link_layer
 * file with an extra blank line), hfi1_0 (Omni-Path, a board_id longer than the model
 * keeps); eth0's `device` is a plain file, not a link. */
static void test_prometheus_tree(void **state)
{
    (void)state;
    if (!exists("sysfs-infiniband/prometheus-procfs/sys/class/infiniband"))
        skip();
    struct overlay ov;
    overlay_new(&ov, "prometheus-procfs");
    overlay_entry(&ov, "infiniband", "mlx5_0", "0000:0c:00.0");
    overlay_entry(&ov, "infiniband", "mlx4_0", "0000:0d:00.0");
    overlay_entry(&ov, "infiniband", "hfi1_0", "0000:0e:00.0");
    overlay_entry(&ov, "net", "eth0", NULL);
    static const char *const bdfs[] = {"0000:0c:00.0", "0000:0d:00.0", "0000:0e:00.0"};
    struct topo_model *m = model_with(bdfs, 3);
    enrich_at(m, ov.root);

    int n = model_nic(m, "mlx5_0");
    assert_int_equal(m->nics[n].pci, model_pci(m, "0000:0c:00.0"));
    assert_string_equal(m->nics[n].node_guid, "0a7f:bc12:45ef:d23b");
    assert_string_equal(m->nics[n].fw_ver, "14.28.2006");
    assert_string_equal(m->nics[n].board_id, "SM_2001000001034");
    assert_string_equal(m->nics[n].hca_type, "MT4118");
    const struct topo_port *p = model_port(m, n, 1);
    assert_int_equal(p->valid, TOPO_PORT_V_STATE | TOPO_PORT_V_LL | TOPO_PORT_V_RATE);
    assert_int_equal(p->state, TOPO_PORT_ACTIVE);
    assert_true(p->rate_gbps == 25.0);
    assert_int_equal(p->width, 1);
    assert_string_equal(p->speed, "EDR");
    assert_note(m, "mlx5_0 port 1: phys_state \"4: ACTIVE\" is not in the kernel's format");

    n = model_nic(m, "mlx4_0");
    assert_int_equal(m->nics[n].nports, 2);
    check_qdr_port(m, n, 1);
    check_qdr_port(m, n, 2);

    n = model_nic(m, "hfi1_0");
    assert_string_equal(m->nics[n].fw_ver, "1.27.0");
    assert_string_equal(m->nics[n].hca_type, "");
    assert_string_equal(m->nics[n].board_id,
                        "HPE 100Gb 1-port OP101 QSFP28 x16 PCIe Gen3 with Intel Omni-Pat");
    p = model_port(m, n, 1);
    assert_int_equal(p->valid, port_basic_v);
    assert_true(p->rate_gbps == 100.0);
    assert_int_equal(p->width, 4);
    assert_string_equal(p->speed, "EDR");
    check_eth0(m);
    assert_int_equal(m->nnotes, 1);
    topo_model_free(m);
    tree_remove(ov.root);
}

int main(void)
{
    const char *d = getenv("FABTOP_SHARED_DATA");
    snprintf(data, sizeof(data), "%s", d && *d ? d : "/work/shared/data");
    if (!exists(TARBALL) && !exists("sysfs-infiniband")) {
        fprintf(stderr, "no reference captures in %s; skipped\n", data);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tarball),
        cmocka_unit_test(test_hwloc_32em64t_tree),
        cmocka_unit_test(test_node_exporter_tree),
        cmocka_unit_test(test_prometheus_tree),
    };
    return cmocka_run_group_tests_name("sysfs_captures", tests, NULL, NULL);
}
