/* test_sysfs_synth: sysfs trees the test writes itself, loaded through topo_load() with
 * opts.sysfs_root (hwloc reads the same tree), so the sysfs enricher runs exactly as for
 * `fabtop topo --sysfs-root`: RoCE and IB mlx5 functions, an RDMA device hwloc cannot
 * place, Soft-RoCE devices on veths, dangling and unplaceable devices, garbage and
 * unreadable attributes, PCIe link files and config space with and without ACS. Every
 * field is checked, then the snapshot must round-trip exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "topology/topo_enrich.h"
#include "topology/topo_json.h"
#include "topology/topo_load.h"

#include "sysfs_tree.h"

static char root[64];

/* A relative symlink at root/link to root/target, as sysfs writes them. */
static void rlink(const char *link, const char *target)
{
    char t[1024] = "";
    for (const char *p = strchr(link, '/'); p; p = strchr(p + 1, '/'))
        strcat(t, "../");
    strcat(t, target);
    tree_link(root, link, t);
}

static void put(const char *rel, const char *text)
{
    tree_file(root, rel, text);
}

/* Two CPUs in one package and one NUMA node: what hwloc's Linux backend needs. */
static void write_cpus(void)
{
    tree_cpus(root);
}

struct pcidev {
    const char *dir; /* below sys/devices */
    uint16_t vendor, device;
    uint32_t class_code; /* base, sub, prog-if: 0x060400 */
    int sec, sub;        /* bridges: bus range */
    size_t cfglen;       /* 64 (what a non-root reader sees) or 4096 */
    int acs;             /* -1: no ACS capability; else the ACS Control value */
    const char *link[4]; /* current_link_speed, current_link_width, max_link_speed, max_width */
    const char *driver;
};

static void write_pci(const struct pcidev *d)
{
    char dir[256], rel[512];
    snprintf(dir, sizeof(dir), "sys/devices/%s", d->dir);
    const char *bdf = strrchr(d->dir, '/') + 1;
    char v[32];
#define ATTR(name, ...)                                                                            \
    do {                                                                                           \
        snprintf(rel, sizeof(rel), "%s/%s", dir, name);                                            \
        snprintf(v, sizeof(v), __VA_ARGS__);                                                       \
        put(rel, v);                                                                               \
    } while (0)
    ATTR("vendor", "0x%04x", d->vendor);
    ATTR("device", "0x%04x", d->device);
    ATTR("class", "0x%06x", d->class_code);
    ATTR("subsystem_vendor", "0x%04x", d->vendor);
    ATTR("subsystem_device", "0x0001");
    ATTR("numa_node", "0");
    ATTR("local_cpus", "3");
    ATTR("local_cpulist", "0-1");
#undef ATTR
    static const char *const lf[4] = {"current_link_speed", "current_link_width", "max_link_speed",
                                      "max_link_width"};
    for (int i = 0; i < 4; i++)
        if (d->link[i]) {
            snprintf(rel, sizeof(rel), "%s/%s", dir, lf[i]);
            put(rel, d->link[i]);
        }
    /* Configuration space header (PCI Local Bus spec): IDs, class, header type 1 for
     * bridges with primary/secondary/subordinate bus numbers at 18h-1Ah. */
    uint8_t cfg[4096] = {0};
    cfg[0] = d->vendor & 0xff;
    cfg[1] = d->vendor >> 8;
    cfg[2] = d->device & 0xff;
    cfg[3] = d->device >> 8;
    cfg[9] = d->class_code & 0xff;
    cfg[10] = (d->class_code >> 8) & 0xff;
    cfg[11] = (d->class_code >> 16) & 0xff;
    if (d->sec) {
        cfg[0x0e] = 0x01;
        cfg[0x19] = (uint8_t)d->sec;
        cfg[0x1a] = (uint8_t)d->sub;
    }
    if (d->cfglen == 4096) {
        /* AER (ID 0001h) at 100h pointing at ACS (000Dh) at 148h, or ending the list. */
        uint32_t aer = 0x0001 | 2u << 16 | (d->acs >= 0 ? 0x148u << 20 : 0);
        memcpy(cfg + 0x100, &aer, 4);
        if (d->acs >= 0) {
            uint32_t acs = 0x000d | 1u << 16;
            memcpy(cfg + 0x148, &acs, 4);
            cfg[0x14c] = 0x5f; /* ACS Capability: SV TB RR CR UF DT */
            cfg[0x14e] = d->acs & 0xff;
            cfg[0x14f] = (d->acs >> 8) & 0xff;
        }
    }
    snprintf(rel, sizeof(rel), "%s/config", dir);
    tree_bin(root, rel, cfg, d->cfglen);
    if (d->driver) {
        char t[128];
        snprintf(rel, sizeof(rel), "%s/driver", dir);
        snprintf(t, sizeof(t), "sys/bus/pci/drivers/%s", d->driver);
        tree_mkdirs(root, t, 1);
        rlink(rel, t);
    }
    snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s", bdf);
    rlink(rel, dir);
}

/* An RDMA device below devdir (sys/devices/...), registered in sys/class/infiniband by a
 * link (class_link) or, when class_link is false, as a plain directory there that only a
 * `device` link ties to its PCI function (hwloc cannot place such a device). */
static void write_ibdev(const char *devdir, const char *name, bool class_link, const char *pci)
{
    char rel[512], tgt[512];
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s", name);
    if (class_link) {
        snprintf(tgt, sizeof(tgt), "sys/devices/%s/infiniband/%s", devdir, name);
        tree_mkdirs(root, tgt, 1);
        rlink(rel, tgt);
        if (pci) {
            snprintf(rel, sizeof(rel), "%s/device", tgt);
            snprintf(tgt, sizeof(tgt), "sys/devices/%s", pci);
            rlink(rel, tgt);
        }
    } else {
        tree_mkdirs(root, rel, 1);
        snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/device", name);
        snprintf(tgt, sizeof(tgt), "sys/devices/%s", pci);
        rlink(rel, tgt);
    }
}

static void ib(const char *dev, const char *file, const char *text)
{
    char rel[512];
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/%s", dev, file);
    put(rel, text);
}

static void ib_unreadable(const char *dev, const char *file)
{
    char rel[512];
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/%s", dev, file);
    tree_unreadable(root, rel);
}

static void gid(const char *dev, int port, int idx, const char *g, const char *type,
                const char *ndev)
{
    char f[128];
    snprintf(f, sizeof(f), "ports/%d/gids/%d", port, idx);
    ib(dev, f, g);
    snprintf(f, sizeof(f), "ports/%d/gid_attrs/types/%d", port, idx);
    if (type)
        ib(dev, f, type);
    else
        ib_unreadable(dev, f);
    snprintf(f, sizeof(f), "ports/%d/gid_attrs/ndevs/%d", port, idx);
    if (ndev)
        ib(dev, f, ndev);
    else
        ib_unreadable(dev, f);
}

static void port_basic(const char *dev, int port, const char *state, const char *phys,
                       const char *ll, const char *rate)
{
    char f[128];
    const char *names[] = {"state", "phys_state", "link_layer", "rate"};
    const char *vals[] = {state, phys, ll, rate};
    for (int i = 0; i < 4; i++) {
        snprintf(f, sizeof(f), "ports/%d/%s", port, names[i]);
        ib(dev, f, vals[i]);
    }
}

static void port_lids(const char *dev, int port, const char *lid, const char *lmc,
                      const char *sm_lid, const char *sm_sl)
{
    char f[128];
    const char *names[] = {"lid", "lid_mask_count", "sm_lid", "sm_sl"};
    const char *vals[] = {lid, lmc, sm_lid, sm_sl};
    for (int i = 0; i < 4; i++) {
        snprintf(f, sizeof(f), "ports/%d/%s", port, names[i]);
        ib(dev, f, vals[i]);
    }
}

/* A netdev below devdir; pci (below sys/devices) gets a `device` link when not NULL. */
static void write_net(const char *devdir, const char *name, const char *pci, const char *mtu,
                      const char *oper, const char *speed, const char *mac, const char *dev_port)
{
    char rel[512], tgt[512];
    snprintf(tgt, sizeof(tgt), "sys/devices/%s/net/%s", devdir, name);
    tree_mkdirs(root, tgt, 1);
    snprintf(rel, sizeof(rel), "sys/class/net/%s", name);
    rlink(rel, tgt);
    if (pci) {
        char d[512];
        snprintf(rel, sizeof(rel), "%s/device", tgt);
        snprintf(d, sizeof(d), "sys/devices/%s", pci);
        rlink(rel, d);
    }
    const char *names[] = {"mtu", "operstate", "speed", "address", "dev_port", "type"};
    const char *vals[] = {mtu, oper, speed, mac, dev_port, "1"};
    for (int i = 0; i < 6; i++) {
        snprintf(rel, sizeof(rel), "%s/%s", tgt, names[i]);
        if (!vals[i])
            continue;
        if (!strcmp(vals[i], "<unreadable>"))
            tree_unreadable(root, rel);
        else
            put(rel, vals[i]);
    }
}

#define RP1  "pci0000:00/0000:00:01.0"
#define CX6A RP1 "/0000:01:00.0"
#define CX6B RP1 "/0000:01:00.1"
#define RP2  "pci0000:00/0000:00:02.0"
#define CX7  RP2 "/0000:02:00.0"
#define RP3  "pci0000:00/0000:00:03.0"
#define EFA  RP3 "/0000:03:00.0"

static void write_tree(void)
{
    write_cpus();
    const struct pcidev pci[] = {
        {RP1,
         0x8086,
         0x2030,
         0x060400,
         1,
         1,
         4096,
         0x001d,
         {"16.0 GT/s PCIe", "16", "16.0 GT/s PCIe", "16"},
         "pcieport"},
        {CX6A,
         0x15b3,
         0x101d,
         0x020000,
         0,
         0,
         64,
         -1,
         {"16.0 GT/s PCIe", "8", "16.0 GT/s PCIe", "16"},
         "mlx5_core"},
        {CX6B,
         0x15b3,
         0x101d,
         0x020000,
         0,
         0,
         64,
         -1,
         {"16.0 GT/s PCIe", "8", "16.0 GT/s PCIe", "16"},
         "mlx5_core"},
        {RP2,
         0x8086,
         0x2031,
         0x060400,
         2,
         2,
         64,
         -1,
         {"8.0 GT/s PCIe", "4", "Unknown", "16"},
         "pcieport"},
        {CX7,
         0x15b3,
         0x1021,
         0x020700,
         0,
         0,
         64,
         -1,
         {"Unknown", "0", "32.0 GT/s PCIe", "16"},
         "mlx5_core"},
        {RP3, 0x8086, 0x2032, 0x060400, 3, 3, 4096, -1, {NULL, NULL, NULL, NULL}, "pcieport"},
        {EFA, 0x1d0f, 0xefa1, 0x088000, 0, 0, 64, -1, {"8 GT/s", "8", "garbage", "x"}, "efa"},
    };
    for (size_t i = 0; i < sizeof(pci) / sizeof(pci[0]); i++)
        write_pci(&pci[i]);

    /* mlx5_0: a RoCE function. GIDs: link-local v1+v2, IPv4-mapped v1+v2, a global IPv6
     * v2, an all-zero entry whose type read fails (EINVAL on a live kernel). */
    write_ibdev(CX6A, "mlx5_0", true, CX6A);
    ib("mlx5_0", "node_guid", "0c42:a103:0012:3456");
    ib("mlx5_0", "sys_image_guid", "0c42:a103:0012:3456");
    ib("mlx5_0", "fw_ver", "22.31.1014");
    ib("mlx5_0", "board_id", "MT_0000000359");
    ib("mlx5_0", "hca_type", "MT4125");
    port_basic("mlx5_0", 1, "4: ACTIVE", "5: LinkUp", "Ethernet", "100 Gb/sec (2X HDR)");
    port_lids("mlx5_0", 1, "0x0", "0", "0x0", "0");
    gid("mlx5_0", 1, 0, "fe80:0000:0000:0000:0e42:a1ff:fe12:3456", "IB/RoCE v1", "eth2");
    gid("mlx5_0", 1, 1, "fe80:0000:0000:0000:0e42:a1ff:fe12:3456", "RoCE v2", "eth2");
    gid("mlx5_0", 1, 2, "0000:0000:0000:0000:0000:ffff:c0a8:0a05", "IB/RoCE v1", "eth2");
    gid("mlx5_0", 1, 3, "0000:0000:0000:0000:0000:ffff:c0a8:0a05", "RoCE v2", "eth2");
    gid("mlx5_0", 1, 4, "2001:0db8:0000:0000:0000:0000:0000:0005", "RoCE v2", "eth2");
    gid("mlx5_0", 1, 5, "0000:0000:0000:0000:0000:0000:0000:0000", NULL, NULL);
    write_net(CX6A, "eth2", CX6A, "9000", "up", "100000", "0c:42:a1:12:34:56", "0");
    /* eth7: the netdev of an mlx5 sub-function, an auxiliary device below the PF */
    tree_mkdirs(root, "sys/devices/" CX6A "/mlx5_core.sf.2", 1);
    write_net(CX6A "/mlx5_core.sf.2", "eth7", CX6A "/mlx5_core.sf.2", "1500", "up", "25000",
              "0c:42:a1:12:34:60", "0");

    /* mlx5_1: an InfiniBand function. Port 1 normal (LID, SM LID, one GID, an fe80:: entry
     * with a zero GUID that is unused); port 2 full of garbage; port 10 with a state only,
     * which hwloc (it stops at the first missing port number) does not report. */
    write_ibdev(CX6B, "mlx5_1", true, CX6B);
    ib("mlx5_1", "node_guid", "0c42:a103:0012:3457");
    ib("mlx5_1", "fw_ver", "22.31.1014");
    port_basic("mlx5_1", 1, "4: ACTIVE", "5: LinkUp", "InfiniBand", "200 Gb/sec (4X HDR)");
    port_lids("mlx5_1", 1, "0x12", "2", "0x1", "3");
    gid("mlx5_1", 1, 0, "fe80:0000:0000:0000:0c42:a103:0012:3457", "IB/RoCE v1", NULL);
    gid("mlx5_1", 1, 1, "fe80:0000:0000:0000:0000:0000:0000:0000", "IB/RoCE v1", NULL);
    port_basic("mlx5_1", 2, "bogus", "4: ACTIVE", "Token Ring", "fast");
    port_lids("mlx5_1", 2, "zzz", "0", "0x1", "x");
    ib("mlx5_1", "ports/2/gids", "not a directory");
    ib("mlx5_1", "ports/10/state", "1: DOWN");
    ib("mlx5_1", "ports/10/lid", ""); /* empty: unknown, not garbage */
    write_net(CX6B, "ib1", CX6B, "4092", "up", "-1", "00:00:10:87:fe:80", "0");

    /* mlx5_2: a class directory (not a link) with a `device` link to its function, which
     * is a NIC by class. Rate "Unknown", link down. */
    write_ibdev(NULL, "mlx5_2", false, CX7);
    ib("mlx5_2", "fw_ver", "28.39.1002");
    ib("mlx5_2", "hca_type", "MT4129");
    port_basic("mlx5_2", 1, "1: DOWN", "2: Polling", "InfiniBand", "Unknown");
    port_lids("mlx5_2", 1, "0x0", "0", "0x0", "0");

    /* efa_0: the same, on a function that is not a NIC by class. */
    write_ibdev(NULL, "efa_0", false, EFA);
    ib("efa_0", "fw_ver", "0.0.0.0");
    port_basic("efa_0", 1, "4: ACTIVE", "5: LinkUp", "Unknown", "100 Gb/sec (4X EDR)");

    /* Soft-RoCE: rxe0 names its netdev in `parent`, rxe1 only through its GID table. */
    write_ibdev("virtual", "rxe0", true, NULL);
    ib("rxe0", "parent", "veth0");
    ib("rxe0", "node_guid", "a2b5:c6ff:fed7:e8f9");
    port_basic("rxe0", 1, "4: ACTIVE", "5: LinkUp", "Ethernet", "10 Gb/sec (1X QDR)");
    gid("rxe0", 1, 0, "fe80:0000:0000:0000:a0b5:c6ff:fed7:e8f9", "RoCE v2", "veth0");
    gid("rxe0", 1, 1, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2", "veth0");
    write_ibdev("virtual", "rxe1", true, NULL);
    port_basic("rxe1", 1, "4: ACTIVE", "5: LinkUp", "Ethernet", "10 Gb/sec (1X QDR)");
    gid("rxe1", 1, 0, "fe80:0000:0000:0000:a0b5:c6ff:fed7:e8fa", "RoCE v2", "veth1");
    write_net("virtual", "veth0", NULL, "1500", "up", "10000", "a2:b5:c6:d7:e8:f9", NULL);
    write_net("virtual", "veth1", NULL, "1500", "up", "<unreadable>", "a2:b5:c6:d7:e8:fa", NULL);
    write_net("virtual", "br0", NULL, "1500", "unknown", "-1", "a2:b5:c6:d7:e8:fb", NULL);
    write_net("virtual", "lo", NULL, "65536", "unknown", NULL, "00:00:00:00:00:00", NULL);

    /* Not placeable: a dangling class link (the Xeon Phi scif0 of the hwloc tarball), a
     * virtual device with neither parent nor GID netdevs, a netdev whose device is gone. */
    tree_link(root, "sys/class/infiniband/scif0", "../../devices/scif_dma_0/infiniband/scif0");
    write_ibdev("virtual", "ghost0", true, NULL);
    ib("ghost0", "ports/1/state", "4: ACTIVE");
    tree_link(root, "sys/class/net/eth9", "../../devices/pci0000:00/0000:00:09.0/net/eth9");
}

static struct topo_model *model;

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/fabtop-sysfs-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    write_tree();
    struct topo_load_opts o = {.sysfs_root = root, .no_verbs = true, .no_gpu_libs = true};
    struct ft_err err = {0};
    if (topo_load(&o, &model, &err) < 0) {
        fprintf(stderr, "topo_load(%s): %s\n", root, err.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    topo_model_free(model);
    if (!getenv("FABTOP_KEEP_TREE"))
        tree_remove(root);
    else
        fprintf(stderr, "tree kept in %s\n", root);
    return 0;
}

static void test_roce_function(void **state)
{
    (void)state;
    const struct topo_model *m = model;
    int n = model_nic(m, "mlx5_0");
    const struct topo_nic *nic = &m->nics[n];
    assert_int_equal(nic->pci, model_pci(m, "0000:01:00.0"));
    assert_string_equal(nic->driver, "mlx5_core");
    assert_string_equal(nic->node_guid, "0c42:a103:0012:3456");
    assert_string_equal(nic->sys_image_guid, "0c42:a103:0012:3456");
    assert_string_equal(nic->fw_ver, "22.31.1014");
    assert_string_equal(nic->board_id, "MT_0000000359");
    assert_string_equal(nic->hca_type, "MT4125");
    assert_int_equal(nic->nports, 1);

    const struct topo_port *p = model_port(m, n, 1);
    assert_int_equal(p->valid, TOPO_PORT_V_STATE | TOPO_PORT_V_PHYS | TOPO_PORT_V_LL |
                                   TOPO_PORT_V_RATE | TOPO_PORT_V_LID | TOPO_PORT_V_SMLID |
                                   TOPO_PORT_V_GIDS | TOPO_PORT_V_GIDTYPES);
    assert_int_equal(p->state, TOPO_PORT_ACTIVE);
    assert_int_equal(p->phys_state, TOPO_PHYS_LINKUP);
    assert_int_equal(p->link_layer, TOPO_LL_ETHERNET);
    assert_true(p->rate_gbps == 100.0);
    assert_int_equal(p->width, 2);
    assert_string_equal(p->speed, "HDR");
    assert_int_equal(p->lid, 0);
    assert_int_equal(p->lmc, 0);
    assert_int_equal(p->sm_lid, 0);
    assert_int_equal(p->sm_sl, 0);

    assert_int_equal(p->ngids, 5);
    static const struct {
        int index;
        enum topo_gid_type type;
        const char *gid, *ip;
    } want[] = {
        {0, TOPO_GID_ROCE_V1, "fe80:0000:0000:0000:0e42:a1ff:fe12:3456", ""},
        {1, TOPO_GID_ROCE_V2, "fe80:0000:0000:0000:0e42:a1ff:fe12:3456", ""},
        {2, TOPO_GID_ROCE_V1, "0000:0000:0000:0000:0000:ffff:c0a8:0a05", "192.168.10.5"},
        {3, TOPO_GID_ROCE_V2, "0000:0000:0000:0000:0000:ffff:c0a8:0a05", "192.168.10.5"},
        {4, TOPO_GID_ROCE_V2, "2001:0db8:0000:0000:0000:0000:0000:0005", "2001:db8::5"},
    };
    for (int i = 0; i < 5; i++) {
        const struct topo_gid *g = &p->gids[i];
        assert_int_equal(g->index, want[i].index);
        assert_int_equal(g->type, want[i].type);
        assert_string_equal(g->gid, want[i].gid);
        assert_string_equal(g->ip, want[i].ip);
        assert_string_equal(g->ndev, "eth2");
    }
    assert_int_equal(p->netdev, topo_model_find_netdev(m, "eth2"));
}

static void test_ib_function(void **state)
{
    (void)state;
    const struct topo_model *m = model;
    int n = model_nic(m, "mlx5_1");
    const struct topo_nic *nic = &m->nics[n];
    assert_int_equal(nic->pci, model_pci(m, "0000:01:00.1"));
    assert_string_equal(nic->node_guid, "0c42:a103:0012:3457");
    assert_string_equal(nic->sys_image_guid, "");
    assert_string_equal(nic->board_id, "");
    /* ports 1, 2 and 10, contiguous and in port-number order */
    assert_int_equal(nic->nports, 3);
    assert_int_equal(m->ports[nic->first_port].num, 1);
    assert_int_equal(m->ports[nic->first_port + 1].num, 2);
    assert_int_equal(m->ports[nic->first_port + 2].num, 10);

    const struct topo_port *p = model_port(m, n, 1);
    assert_int_equal(p->valid, TOPO_PORT_V_STATE | TOPO_PORT_V_PHYS | TOPO_PORT_V_LL |
                                   TOPO_PORT_V_RATE | TOPO_PORT_V_LID | TOPO_PORT_V_SMLID |
                                   TOPO_PORT_V_GIDS | TOPO_PORT_V_GIDTYPES);
    assert_int_equal(p->link_layer, TOPO_LL_INFINIBAND);
    assert_true(p->rate_gbps == 200.0);
    assert_int_equal(p->width, 4);
    assert_string_equal(p->speed, "HDR");
    assert_int_equal(p->lid, 0x12);
    assert_int_equal(p->lmc, 2);
    assert_int_equal(p->sm_lid, 1);
    assert_int_equal(p->sm_sl, 3);
    assert_int_equal(p->ngids, 1);
    const struct topo_gid *g = port_gid(p, 0);
    assert_int_equal(g->type, TOPO_GID_IB);
    assert_string_equal(g->gid, "fe80:0000:0000:0000:0c42:a103:0012:3457");
    assert_string_equal(g->ndev, "");
    assert_string_equal(g->ip, "");
    assert_int_equal(p->netdev, topo_model_find_netdev(m, "ib1"));

    /* garbage everywhere: nothing valid, even where hwloc had copied a value; the
     * unreadable GID table leaves no GID facts; each bad file is named in a note */
    p = model_port(m, n, 2);
    assert_int_equal(p->valid, TOPO_PORT_V_SMLID);
    assert_int_equal(p->sm_lid, 1);
    assert_int_equal(p->ngids, 0);
    assert_note(m, "mlx5_1 port 2: state \"bogus\"");
    assert_note(m, "mlx5_1 port 2: phys_state \"4: ACTIVE\"");
    assert_note(m, "mlx5_1 port 2: link_layer \"Token Ring\"");
    assert_note(m, "mlx5_1 port 2: rate \"fast\"");
    assert_note(m, "mlx5_1 port 2: lid \"zzz\"");
    assert_note(m, "mlx5_1 port 2: sm_sl \"x\"");
    assert_int_equal(p->sm_sl, 0);

    p = model_port(m, n, 10);
    assert_int_equal(p->valid, TOPO_PORT_V_STATE);
    assert_no_note(m, "mlx5_1 port 10");
    assert_int_equal(p->state, TOPO_PORT_DOWN);
}

static void test_device_link_only(void **state)
{
    (void)state;
    const struct topo_model *m = model;
    /* mlx5_2 is on the NIC of its IB-class function: no second NIC there */
    int n = model_nic(m, "mlx5_2");
    int pci = model_pci(m, "0000:02:00.0");
    assert_int_equal(m->nics[n].pci, pci);
    assert_int_equal(topo_model_nic_of_pci(m, pci), n);
    int count = 0;
    for (int i = 0; i < m->nnics; i++)
        count += m->nics[i].pci == pci;
    assert_int_equal(count, 1);
    assert_string_equal(m->nics[n].driver, "mlx5_core");
    assert_string_equal(m->nics[n].fw_ver, "28.39.1002");
    assert_string_equal(m->nics[n].hca_type, "MT4129");
    const struct topo_port *p = model_port(m, n, 1);
    assert_int_equal(p->valid, TOPO_PORT_V_STATE | TOPO_PORT_V_PHYS | TOPO_PORT_V_LL |
                                   TOPO_PORT_V_LID | TOPO_PORT_V_SMLID);
    assert_int_equal(p->state, TOPO_PORT_DOWN);
    assert_int_equal(p->phys_state, TOPO_PHYS_POLLING);
    assert_no_note(m, "mlx5_2 port 1: rate"); /* "Unknown" is a kernel answer, not garbage */

    n = model_nic(m, "efa_0");
    assert_int_equal(m->nics[n].pci, model_pci(m, "0000:03:00.0"));
    assert_string_equal(m->nics[n].driver, "efa");
    p = model_port(m, n, 1);
    assert_int_equal(p->valid, TOPO_PORT_V_STATE | TOPO_PORT_V_PHYS | TOPO_PORT_V_RATE);
    assert_true(p->rate_gbps == 100.0);
    assert_int_equal(p->width, 4);
    assert_string_equal(p->speed, "EDR");
}

static void test_soft_roce(void **state)
{
    (void)state;
    const struct topo_model *m = model;
    int n = model_nic(m, "rxe0");
    assert_int_equal(m->nics[n].pci, -1);
    assert_string_equal(m->nics[n].driver, "rxe");
    assert_string_equal(m->nics[n].node_guid, "a2b5:c6ff:fed7:e8f9");
    assert_string_equal(m->adapters[m->nics[n].adapter].model, "software RDMA (rxe)");
    const struct topo_port *p = model_port(m, n, 1);
    assert_int_equal(p->link_layer, TOPO_LL_ETHERNET);
    assert_true(p->rate_gbps == 10.0);
    assert_int_equal(p->width, 1);
    assert_string_equal(p->speed, "QDR");
    assert_false(p->valid & TOPO_PORT_V_LID);
    assert_int_equal(p->ngids, 2);
    assert_int_equal(port_gid(p, 0)->type, TOPO_GID_ROCE_V2);
    assert_string_equal(port_gid(p, 0)->ip, "");
    assert_int_equal(port_gid(p, 1)->type, TOPO_GID_ROCE_V2);
    assert_string_equal(port_gid(p, 1)->ip, "10.0.0.1");
    int veth0 = topo_model_find_netdev(m, "veth0");
    assert_true(veth0 >= 0);
    assert_int_equal(p->netdev, veth0);
    assert_int_equal(m->netdevs[veth0].nic, n);
    assert_int_equal(m->netdevs[veth0].pci, -1);

    n = model_nic(m, "rxe1");
    assert_int_equal(m->nics[n].pci, -1);
    assert_string_equal(m->nics[n].driver, "rxe");
    int veth1 = topo_model_find_netdev(m, "veth1");
    assert_int_equal(m->netdevs[veth1].nic, n);
    assert_int_equal(model_port(m, n, 1)->netdev, veth1);
}

static void test_skipped(void **state)
{
    (void)state;
    const struct topo_model *m = model;
    assert_int_equal(topo_model_find_nic_by_rdma(m, "scif0"), -1);
    assert_int_equal(topo_model_find_nic_by_rdma(m, "ghost0"), -1);
    assert_note(m, "scif0: /sys/class/infiniband/scif0 is a dangling link");
    assert_note(m, "ghost0: neither a PCI device nor a parent network device");
    assert_note(m, "eth9: its device link dangles");
    assert_no_note(m, "no /sys/class/infiniband");
    int rdma = 0;
    for (int i = 0; i < m->nnics; i++)
        rdma += m->nics[i].rdma_dev[0] != 0;
    assert_int_equal(rdma, 6); /* mlx5_0..2, efa_0, rxe0, rxe1 */
}

static void test_netdevs(void **state)
{
    (void)state;
    const struct topo_model *m = model;
    assert_int_equal(topo_model_find_netdev(m, "lo"), -1);
    int count = 0;
    for (int i = 0; i < m->nnetdevs; i++)
        count += !strcmp(m->netdevs[i].name, "eth2");
    assert_int_equal(count, 1); /* hwloc's entry, filled in, not a duplicate */

    const struct topo_netdev *d = &m->netdevs[topo_model_find_netdev(m, "eth2")];
    assert_int_equal(d->pci, model_pci(m, "0000:01:00.0"));
    assert_int_equal(d->nic, model_nic(m, "mlx5_0"));
    assert_int_equal(d->valid, TOPO_NET_V_MTU | TOPO_NET_V_SPEED | TOPO_NET_V_OPER);
    assert_int_equal(d->mtu, 9000);
    assert_int_equal(d->speed_mbps, 100000);
    assert_string_equal(d->operstate, "up");
    assert_string_equal(d->mac, "0c:42:a1:12:34:56");
    assert_int_equal(d->dev_port, 0);
    assert_string_equal(d->addrs, ""); /* addresses only on a live load */

    d = &m->netdevs[topo_model_find_netdev(m, "ib1")];
    assert_int_equal(d->nic, model_nic(m, "mlx5_1"));
    assert_int_equal(d->valid, TOPO_NET_V_MTU | TOPO_NET_V_OPER); /* speed -1: unknown */
    assert_int_equal(d->mtu, 4092);

    d = &m->netdevs[topo_model_find_netdev(m, "veth1")];
    assert_int_equal(d->valid, TOPO_NET_V_MTU | TOPO_NET_V_OPER); /* speed unreadable */
    d = &m->netdevs[topo_model_find_netdev(m, "veth0")];
    assert_int_equal(d->speed_mbps, 10000);
    d = &m->netdevs[topo_model_find_netdev(m, "br0")];
    assert_int_equal(d->pci, -1);
    assert_int_equal(d->nic, -1);
    assert_int_equal(d->valid, TOPO_NET_V_MTU | TOPO_NET_V_OPER);
    assert_string_equal(d->operstate, "unknown");
    d = &m->netdevs[topo_model_find_netdev(m, "eth9")];
    assert_int_equal(d->pci, -1);
    assert_int_equal(d->valid, 0);
}

static void test_pci(void **state)
{
    (void)state;
    const struct topo_model *m = model;
    const unsigned link4 =
        TOPO_PCI_V_CUR_SPEED | TOPO_PCI_V_CUR_WIDTH | TOPO_PCI_V_MAX_SPEED | TOPO_PCI_V_MAX_WIDTH;
    const struct topo_pci *p = &m->pci[model_pci(m, "0000:00:01.0")];
    assert_int_equal(p->kind, TOPO_PCI_BRIDGE);
    assert_int_equal(p->valid & (link4 | TOPO_PCI_V_ACS), link4 | TOPO_PCI_V_ACS);
    assert_true(p->cur_speed_gts == 16.0 && p->max_speed_gts == 16.0);
    assert_int_equal(p->cur_width, 16);
    assert_int_equal(p->max_width, 16);
    assert_int_equal(p->acs_ctrl, 0x001d);

    p = &m->pci[model_pci(m, "0000:01:00.0")]; /* trained down to x8 */
    assert_int_equal(p->valid & (link4 | TOPO_PCI_V_ACS), link4);
    assert_int_equal(p->cur_width, 8);
    assert_int_equal(p->max_width, 16);

    p = &m->pci[model_pci(m, "0000:00:02.0")]; /* max speed "Unknown"; 64-byte config */
    assert_int_equal(p->valid & (link4 | TOPO_PCI_V_ACS),
                     TOPO_PCI_V_CUR_SPEED | TOPO_PCI_V_CUR_WIDTH | TOPO_PCI_V_MAX_WIDTH);
    assert_true(p->cur_speed_gts == 8.0);
    assert_int_equal(p->cur_width, 4);
    assert_int_equal(p->acs_ctrl, 0);

    p = &m->pci[model_pci(m, "0000:02:00.0")]; /* link down: "Unknown", width 0 */
    assert_int_equal(p->valid & (link4 | TOPO_PCI_V_ACS),
                     TOPO_PCI_V_MAX_SPEED | TOPO_PCI_V_MAX_WIDTH);
    assert_true(p->max_speed_gts == 32.0);

    p = &m->pci[model_pci(m, "0000:03:00.0")]; /* older kernel text "8 GT/s"; garbage */
    assert_int_equal(p->valid & (link4 | TOPO_PCI_V_ACS),
                     TOPO_PCI_V_CUR_SPEED | TOPO_PCI_V_CUR_WIDTH);
    assert_true(p->cur_speed_gts == 8.0);

    p = &m->pci[model_pci(m, "0000:00:03.0")]; /* full config space, no ACS capability */
    assert_int_equal(p->valid & (link4 | TOPO_PCI_V_ACS), TOPO_PCI_V_ACS);
    assert_int_equal(p->acs_ctrl, 0);
}

static int add_pci(struct topo_model *m, const char *bdf)
{
    int k = topo_model_add_pci(m);
    m->pci[k].kind = TOPO_PCI_DEVICE;
    assert_int_equal(topo_bdf_parse(bdf, &m->pci[k].addr), 0);
    return k;
}

/* The enricher on a model built by hand (as another source would leave it): NICs are
 * added to bare PCI functions, an Ethernet NIC gains its RDMA device, hwloc-style ports
 * without GID types are replaced, a function already carrying another RDMA device and a
 * function missing from the model are skipped with notes. */
static void test_handbuilt_model(void **state)
{
    (void)state;
    struct topo_model *m = topo_model_new();
    int host = topo_model_add_pci(m);
    m->pci[host].kind = TOPO_PCI_HOSTBRIDGE;
    int cx6a = add_pci(m, "0000:01:00.0");
    int cx6b = add_pci(m, "0000:01:00.1");
    int cx7 = add_pci(m, "0000:02:00.0");
    int eth = topo_model_add_nic(m); /* an Ethernet function as hwloc reports it */
    m->nics[eth].pci = cx6b;
    int other = topo_model_add_nic(m);
    m->nics[other].pci = cx7;
    snprintf(m->nics[other].rdma_dev, sizeof(m->nics[other].rdma_dev), "mlx5_9");
    int k = topo_model_add_port(m); /* hwloc's port: state and type-less GIDs */
    m->ports[k].nic = eth;
    m->ports[k].num = 1;
    m->ports[k].valid = TOPO_PORT_V_STATE | TOPO_PORT_V_GIDS;
    m->ports[k].state = TOPO_PORT_INIT;
    for (int i = 0; i < 3; i++) {
        struct topo_gid g = {.index = i};
        snprintf(g.gid, sizeof(g.gid), "fe80:0000:0000:0000:0000:0000:0000:000%d", i + 1);
        topo_port_add_gid(&m->ports[k], &g);
    }
    m->nics[eth].first_port = k;
    m->nics[eth].nports = 1;

    struct topo_load_opts o = {.sysfs_root = root, .no_verbs = true};
    topo_enrich_sysfs.enrich(m, &o);
    topo_model_finalize(m);

    int n = model_nic(m, "mlx5_0");
    assert_int_equal(m->nics[n].pci, cx6a);
    assert_true(n != eth && n != other);
    assert_string_equal(m->nics[n].driver, "mlx5_core");
    assert_string_equal(m->nics[n].hca_type, "MT4125");
    assert_int_equal(model_port(m, n, 1)->ngids, 5);

    assert_int_equal(model_nic(m, "mlx5_1"), eth);
    assert_int_equal(m->nics[eth].nports, 3);
    const struct topo_port *p = model_port(m, eth, 1);
    assert_int_equal(p->state, TOPO_PORT_ACTIVE);
    assert_true(p->valid & TOPO_PORT_V_GIDTYPES);
    assert_int_equal(p->ngids, 1);
    assert_string_equal(port_gid(p, 0)->gid, "fe80:0000:0000:0000:0c42:a103:0012:3457");

    assert_string_equal(m->nics[other].rdma_dev, "mlx5_9");
    assert_int_equal(topo_model_find_nic_by_rdma(m, "mlx5_2"), -1);
    assert_note(m, "mlx5_2: PCI function 0000:02:00.0 already carries RDMA device mlx5_9; skipped");
    assert_int_equal(topo_model_find_nic_by_rdma(m, "efa_0"), -1);
    assert_note(m, "efa_0: its PCI function 0000:03:00.0 is not in the topology; skipped");
    assert_int_equal(model_port(m, model_nic(m, "rxe0"), 1)->netdev,
                     topo_model_find_netdev(m, "veth0"));

    int d = topo_model_find_netdev(m, "eth2");
    assert_int_equal(m->netdevs[d].pci, cx6a);
    assert_int_equal(m->netdevs[d].nic, n);
    d = topo_model_find_netdev(m, "eth7"); /* placed on the PF its sub-function hangs from */
    assert_int_equal(m->netdevs[d].pci, cx6a);
    assert_int_equal(m->netdevs[d].nic, n);
    assert_int_equal(m->netdevs[d].speed_mbps, 25000);
    d = topo_model_find_netdev(m, "ib1");
    assert_int_equal(m->netdevs[d].nic, eth);
    assert_string_equal(m->nics[eth].driver, "mlx5_core");
    topo_model_free(m);
}

/* Text formats of the port attributes, one port each on a Soft-RoCE device: what the
 * kernel writes (rate_show, state_show, phys_state_show in drivers/infiniband/core/
 * sysfs.c, across kernel versions) and what it never writes. */
static void test_port_formats(void **state)
{
    (void)state;
    static const struct {
        const char *state, *phys, *rate;
        enum topo_port_state st; /* 0: not valid */
        enum topo_phys_state ph;
        double gbps; /* 0: not valid */
        int width;
        const char *speed;
    } t[] = {
        {"4: ACTIVE", "5: LinkUp", "100 Gb/sec (4X EDR)", 4, 5, 100, 4, "EDR"},
        {"5: ACTIVE_DEFER", "7: Phy Test", "2.5 Gb/sec (1X SDR)", 5, 7, 2.5, 1, "SDR"},
        {"1: DOWN", "3: Disabled", "10 Gb/sec (4X)", 1, 3, 10, 4, "SDR"},
        {"2: INIT", "4: PortConfigurationTraining", "56 Gb/sec (4X FDR)", 2, 4, 56, 4, "FDR"},
        {"3: ARMED", "6: LinkErrorRecovery", "800 Gb/sec (8X NDR)", 3, 6, 800, 8, "NDR"},
        {"4", "1: Sleep", "300 Gb/sec (12X EDR)", 4, 1, 300, 12, "EDR"},
        {"0: NOP", "0: <unknown>", "5 Gb/sec (2X SDR)", 0, 0, 5, 2, "SDR"},
        {"4: DOWN", "2: polling", "40 Gb/sec (4X FDR10)", 0, 2, 40, 4, "FDR10"},
        {"9: UNKNOWN", "8: <unknown>", "1600 Gb/sec (8X XDR)", 0, 0, 1600, 8, "XDR"},
        {"ACTIVE", "LinkUp", "100 Gb/sec (3X EDR)", 0, 0, 0, 0, ""},
        {"-1: DOWN", "5:LinkUp", "100 Gb/sec (4X HDR)", 0, 0, 0, 0, ""},
        {"4: ACTIVE extra", "", "40 Gb/sec (4X QDR) extra", 0, 0, 0, 0, ""},
        {"", "5: LinkUp", "Unknown", 0, 5, 0, 0, ""},
        {"4: ACTIVE", "5: LinkUp", "-10 Gb/sec (4X QDR)", 4, 5, 0, 0, ""},
        {"4: ACTIVE", "5: LinkUp", "25 Gb/sec (1X GDR)", 4, 5, 25, 1, "GDR"},
    };
    char r[64], f[128];
    snprintf(r, sizeof(r), "/tmp/fabtop-sysfs-XXXXXX");
    assert_non_null(mkdtemp(r));
    tree_file(r, "sys/class/infiniband/fmt0/parent", "veth0");
    const size_t nt = sizeof(t) / sizeof(t[0]);
    for (size_t i = 0; i < nt; i++) {
        snprintf(f, sizeof(f), "sys/class/infiniband/fmt0/ports/%zu/state", i + 1);
        tree_file(r, f, t[i].state);
        snprintf(f, sizeof(f), "sys/class/infiniband/fmt0/ports/%zu/phys_state", i + 1);
        tree_file(r, f, t[i].phys);
        snprintf(f, sizeof(f), "sys/class/infiniband/fmt0/ports/%zu/rate", i + 1);
        tree_file(r, f, t[i].rate);
    }
    struct topo_model *m = topo_model_new();
    struct topo_load_opts o = {.sysfs_root = r};
    topo_enrich_sysfs.enrich(m, &o);
    int n = model_nic(m, "fmt0");
    assert_int_equal(m->nics[n].nports, (int)nt);
    for (size_t i = 0; i < nt; i++) {
        const struct topo_port *p = model_port(m, n, (int)i + 1);
        if (t[i].st) {
            assert_true(p->valid & TOPO_PORT_V_STATE);
            assert_int_equal(p->state, t[i].st);
        } else if (p->valid & TOPO_PORT_V_STATE) {
            fail_msg("port %zu: state \"%s\" accepted", i + 1, t[i].state);
        }
        if (t[i].ph) {
            assert_true(p->valid & TOPO_PORT_V_PHYS);
            assert_int_equal(p->phys_state, t[i].ph);
        } else if (p->valid & TOPO_PORT_V_PHYS) {
            fail_msg("port %zu: phys_state \"%s\" accepted", i + 1, t[i].phys);
        }
        if (t[i].gbps > 0) {
            if (!(p->valid & TOPO_PORT_V_RATE))
                fail_msg("port %zu: rate \"%s\" refused", i + 1, t[i].rate);
            assert_true(p->rate_gbps == t[i].gbps);
            assert_int_equal(p->width, t[i].width);
            assert_string_equal(p->speed, t[i].speed);
        } else if (p->valid & TOPO_PORT_V_RATE) {
            fail_msg("port %zu: rate \"%s\" accepted", i + 1, t[i].rate);
        }
    }
    assert_note(m, "fmt0 port 10: rate \"100 Gb/sec (3X EDR)\"");
    assert_note(m, "fmt0 port 11: rate \"100 Gb/sec (4X HDR)\""); /* 4X HDR is 200 */
    assert_no_note(m, "fmt0 port 13: rate");                      /* "Unknown" */
    topo_model_free(m);
    tree_remove(r);
}

/* The enriched model survives save -> load (through topo_load, as --input does) -> save
 * unchanged. */
static void test_round_trip(void **state)
{
    (void)state;
    cJSON *a = topo_json_from_model(model);
    char *ta = cJSON_Print(a);
    char path[128];
    snprintf(path, sizeof(path), "%s/snapshot.json", root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(ta, f);
    fclose(f);
    struct topo_load_opts o = {.input = path, .no_verbs = true, .no_gpu_libs = true};
    struct topo_model *m2 = NULL;
    struct ft_err err = {0};
    if (topo_load(&o, &m2, &err) < 0)
        fail_msg("%s", err.msg);
    cJSON *b = topo_json_from_model(m2);
    char *tb = cJSON_Print(b);
    if (strcmp(ta, tb)) {
        size_t i = 0;
        while (ta[i] && ta[i] == tb[i])
            i++;
        fail_msg("snapshot differs after a round trip at byte %zu:\n--- saved: %.200s\n--- "
                 "reloaded: %.200s",
                 i, ta + (i > 100 ? i - 100 : 0), tb + (i > 100 ? i - 100 : 0));
    }
    free(ta);
    free(tb);
    cJSON_Delete(a);
    cJSON_Delete(b);
    topo_model_free(m2);
}

/* No /sys/class/infiniband at all: one note that says what to load. */
static void test_no_rdma(void **state)
{
    (void)state;
    char r2[64];
    snprintf(r2, sizeof(r2), "/tmp/fabtop-sysfs-XXXXXX");
    assert_non_null(mkdtemp(r2));
    tree_file(r2, "sys/class/net/eth0/mtu", "1500");
    struct topo_model *m = topo_model_new();
    struct topo_load_opts o = {.sysfs_root = r2, .no_verbs = true};
    topo_enrich_sysfs.enrich(m, &o);
    assert_note(m, "no /sys/class/infiniband: no RDMA driver loaded (modprobe mlx5_ib, or "
                   "rdma_rxe for Soft-RoCE)");
    assert_int_equal(m->nnics, 0);
    assert_int_equal(m->nnetdevs, 1);
    assert_int_equal(m->netdevs[0].mtu, 1500);
    topo_model_free(m);
    tree_remove(r2);
}

/* A bond (Documentation/networking/bonding.rst's sysfs): bond0 in 802.3ad with a layer3+4
 * hash over eth0 and eth1 (their master links), bond1 in active-backup: modes, hashes, the
 * slaves' master, the links counted, which modes hash, and the JSON snapshot keeping them. */
static void test_bond(void **state)
{
    (void)state;
    char r2[64];
    snprintf(r2, sizeof(r2), "/tmp/fabtop-sysfs-XXXXXX");
    assert_non_null(mkdtemp(r2));
    tree_file(r2, "sys/class/net/bond0/mtu", "9000");
    tree_file(r2, "sys/class/net/bond0/bonding/mode", "802.3ad 4");
    tree_file(r2, "sys/class/net/bond0/bonding/xmit_hash_policy", "layer3+4 1");
    tree_file(r2, "sys/class/net/bond1/mtu", "1500");
    tree_file(r2, "sys/class/net/bond1/bonding/mode", "active-backup 1");
    const char *slaves[][2] = {{"eth0", "bond0"}, {"eth1", "bond0"}, {"eth2", "bond1"}};
    for (int i = 0; i < 3; i++) {
        char rel[128], tgt[64];
        snprintf(rel, sizeof(rel), "sys/class/net/%s/mtu", slaves[i][0]);
        tree_file(r2, rel, "9000");
        snprintf(rel, sizeof(rel), "sys/class/net/%s/master", slaves[i][0]);
        snprintf(tgt, sizeof(tgt), "../%s", slaves[i][1]);
        tree_link(r2, rel, tgt);
    }
    tree_file(r2, "sys/class/net/eth3/mtu", "1500");
    struct topo_model *m = topo_model_new();
    struct topo_load_opts o = {.sysfs_root = r2, .no_verbs = true};
    topo_enrich_sysfs.enrich(m, &o);
    int b0 = topo_model_find_netdev(m, "bond0"), b1 = topo_model_find_netdev(m, "bond1");
    int e0 = topo_model_find_netdev(m, "eth0"), e3 = topo_model_find_netdev(m, "eth3");
    assert_true(b0 >= 0 && b1 >= 0 && e0 >= 0 && e3 >= 0);
    assert_true(m->netdevs[b0].valid & TOPO_NET_V_BOND);
    assert_string_equal(m->netdevs[b0].bond_mode, "802.3ad");
    assert_string_equal(m->netdevs[b0].bond_hash, "layer3+4");
    assert_string_equal(m->netdevs[b1].bond_mode, "active-backup");
    assert_string_equal(m->netdevs[b1].bond_hash, "");
    assert_string_equal(m->netdevs[e0].master, "bond0");
    assert_string_equal(m->netdevs[e3].master, "");
    assert_false(m->netdevs[e0].valid & TOPO_NET_V_BOND);
    assert_int_equal(topo_model_bond_links(m, b0), 2);
    assert_int_equal(topo_model_bond_links(m, b1), 1);
    assert_int_equal(topo_model_bond_links(m, e0), 0);
    assert_true(topo_bond_hashes("802.3ad"));
    assert_true(topo_bond_hashes("balance-xor"));
    assert_false(topo_bond_hashes("active-backup"));
    assert_false(topo_bond_hashes("balance-rr"));
    /* The snapshot keeps them. */
    cJSON *j = topo_json_from_model(m);
    struct topo_model *m2 = topo_model_new();
    struct ft_err err = {0};
    assert_int_equal(topo_json_to_model(j, m2, "the bond snapshot", &err), 0);
    b0 = topo_model_find_netdev(m2, "bond0");
    assert_string_equal(m2->netdevs[b0].bond_hash, "layer3+4");
    assert_string_equal(m2->netdevs[topo_model_find_netdev(m2, "eth1")].master, "bond0");
    assert_int_equal(topo_model_bond_links(m2, b0), 2);
    cJSON_Delete(j);
    topo_model_free(m2);
    topo_model_free(m);
    tree_remove(r2);
}

static void test_applies(void **state)
{
    (void)state;
    struct topo_model *m = topo_model_new();
    struct topo_load_opts live = {0}, sys = {.sysfs_root = "/x"}, file = {.input = "a.xml"};
    assert_true(topo_enrich_sysfs.applies(m, &live));
    assert_true(topo_enrich_sysfs.applies(m, &sys));
    assert_false(topo_enrich_sysfs.applies(m, &file));
    topo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roce_function),
        cmocka_unit_test(test_ib_function),
        cmocka_unit_test(test_device_link_only),
        cmocka_unit_test(test_soft_roce),
        cmocka_unit_test(test_skipped),
        cmocka_unit_test(test_netdevs),
        cmocka_unit_test(test_pci),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_handbuilt_model),
        cmocka_unit_test(test_port_formats),
        cmocka_unit_test(test_no_rdma),
        cmocka_unit_test(test_bond),
        cmocka_unit_test(test_applies),
    };
    return cmocka_run_group_tests_name("sysfs_synth", tests, setup, teardown);
}
