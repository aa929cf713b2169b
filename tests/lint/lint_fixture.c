/* lint_fixture: builds the healthy node models the lint tests start from and offers small
 * helpers (finding queries, temporary sysfs trees). The tree mirrors a real two-socket
 * H100 + ConnectX-7 node: one GPU and one NIC below each socket's PCIe switch (PIX). */
#define _XOPEN_SOURCE 700
#include "lint_fixture.h"

#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "topology/topo_load.h"

static int add_pci(struct topo_model *m, enum topo_pci_kind kind, int parent, const char *bdf,
                   uint16_t vendor, uint16_t device, uint16_t class_id, int numa)
{
    int i = topo_model_add_pci(m);
    struct topo_pci *p = &m->pci[i];
    p->kind = kind;
    p->parent = parent;
    assert_int_equal(topo_bdf_parse(bdf, &p->addr), 0);
    p->vendor_id = vendor;
    p->device_id = device;
    p->class_id = class_id;
    p->valid |= TOPO_PCI_V_IDS;
    p->numa = numa;
    p->package = numa;
    snprintf(p->cpuset, sizeof(p->cpuset), "%s", numa ? "32-63" : "0-31");
    return i;
}

static void set_link(struct topo_model *m, int i, double cur_gts, int cur_w, double max_gts,
                     int max_w)
{
    struct topo_pci *p = &m->pci[i];
    p->cur_speed_gts = cur_gts;
    p->cur_width = cur_w;
    p->max_speed_gts = max_gts;
    p->max_width = max_w;
    p->valid |=
        TOPO_PCI_V_CUR_SPEED | TOPO_PCI_V_CUR_WIDTH | TOPO_PCI_V_MAX_SPEED | TOPO_PCI_V_MAX_WIDTH;
}

static void acs(struct topo_model *m, int i, uint16_t ctrl)
{
    m->pci[i].acs_ctrl = ctrl;
    m->pci[i].valid |= TOPO_PCI_V_ACS;
}

/* One socket's subtree: host bridge, root port, switch (up + 2 down), GPU, NIC. */
static void socket_tree(struct topo_model *m, int s)
{
    char bdf[16];
    int hb = topo_model_add_pci(m);
    m->pci[hb].kind = TOPO_PCI_HOSTBRIDGE;
    m->pci[hb].addr.bus = s ? 0x80 : 0x00;
    m->pci[hb].bus_first = s ? 0x80 : 0x00;
    m->pci[hb].bus_last = s ? 0x84 : 0x04;
    m->pci[hb].numa = s;
    m->pci[hb].package = s;
    int b = s ? 0x80 : 0x00;
    snprintf(bdf, sizeof(bdf), "0000:%02x:01.0", b);
    int rp = add_pci(m, TOPO_PCI_BRIDGE, hb, bdf, 0x8086, 0x352a, 0x0604, s);
    set_link(m, rp, 32, 16, 32, 16);
    acs(m, rp, 0x001d); /* root ports usually have SV|RR|CR|UF: not on a PIX path */
    snprintf(bdf, sizeof(bdf), "0000:%02x:00.0", b + 1);
    int up = add_pci(m, TOPO_PCI_BRIDGE, rp, bdf, 0x1000, 0xc030, 0x0604, s);
    set_link(m, up, 32, 16, 32, 16);
    acs(m, up, 0);
    snprintf(bdf, sizeof(bdf), "0000:%02x:00.0", b + 2);
    int dga = add_pci(m, TOPO_PCI_BRIDGE, up, bdf, 0x1000, 0xc030, 0x0604, s);
    set_link(m, dga, 32, 16, 32, 16);
    acs(m, dga, 0x0011); /* SV + UF: harmless */
    snprintf(bdf, sizeof(bdf), "0000:%02x:01.0", b + 2);
    int dnb = add_pci(m, TOPO_PCI_BRIDGE, up, bdf, 0x1000, 0xc030, 0x0604, s);
    set_link(m, dnb, 32, 16, 32, 16);
    acs(m, dnb, 0);
    snprintf(bdf, sizeof(bdf), "0000:%02x:00.0", b + 3);
    int gp = add_pci(m, TOPO_PCI_DEVICE, dga, bdf, 0x10de, 0x2330, 0x0302, s);
    set_link(m, gp, 2.5, 16, 32, 16); /* idle GPU: link slowed down */
    snprintf(m->pci[gp].device_name, sizeof(m->pci[gp].device_name), "GH100 [H100 SXM5 80GB]");
    snprintf(bdf, sizeof(bdf), "0000:%02x:00.0", b + 4);
    int np = add_pci(m, TOPO_PCI_DEVICE, dnb, bdf, 0x15b3, 0x1021, 0x0207, s);
    set_link(m, np, 32, 16, 32, 16);
    snprintf(m->pci[np].device_name, sizeof(m->pci[np].device_name), "MT2910 Family [ConnectX-7]");

    int g = topo_model_add_gpu(m);
    m->gpus[g].pci = gp;
    snprintf(m->gpus[g].vendor, sizeof(m->gpus[g].vendor), "NVIDIA");
    snprintf(m->gpus[g].model, sizeof(m->gpus[g].model), "NVIDIA H100 80GB HBM3");

    int n = topo_model_add_nic(m);
    struct topo_nic *nic = &m->nics[n];
    nic->pci = np;
    snprintf(nic->rdma_dev, sizeof(nic->rdma_dev), "mlx5_%d", s);
    snprintf(nic->driver, sizeof(nic->driver), "mlx5_core");
    snprintf(nic->fw_ver, sizeof(nic->fw_ver), "28.39.1002");
    snprintf(nic->hca_type, sizeof(nic->hca_type), "MT4129");
    int pi = topo_model_add_port(m);
    nic->first_port = pi;
    nic->nports = 1;
    struct topo_port *p = &m->ports[pi];
    p->nic = n;
    p->num = 1;
    p->state = TOPO_PORT_ACTIVE;
    p->phys_state = TOPO_PHYS_LINKUP;
    p->link_layer = TOPO_LL_INFINIBAND;
    p->rate_gbps = 400;
    p->width = 4;
    snprintf(p->speed, sizeof(p->speed), "NDR");
    p->active_mtu = 4096;
    p->max_mtu = 4096;
    p->lid = 5 + (uint32_t)s;
    p->sm_lid = 1;
    p->valid = TOPO_PORT_V_STATE | TOPO_PORT_V_PHYS | TOPO_PORT_V_LL | TOPO_PORT_V_RATE |
               TOPO_PORT_V_MTU | TOPO_PORT_V_MAXMTU | TOPO_PORT_V_LID | TOPO_PORT_V_SMLID |
               TOPO_PORT_V_GIDS | TOPO_PORT_V_GIDTYPES;
    struct topo_gid gid = {.index = 0, .type = TOPO_GID_IB};
    snprintf(gid.gid, sizeof(gid.gid), "fe80:0000:0000:0000:a088:c203:00%02x:0001", s);
    topo_port_add_gid(p, &gid);

    int d = topo_model_add_netdev(m);
    struct topo_netdev *nd = &m->netdevs[d];
    snprintf(nd->name, sizeof(nd->name), "ib%d", s);
    nd->pci = np;
    nd->nic = n;
    nd->mtu = 2044;
    snprintf(nd->operstate, sizeof(nd->operstate), "up");
    nd->valid = TOPO_NET_V_MTU | TOPO_NET_V_OPER;
}

struct topo_model *fx_ib_node(void)
{
    struct topo_model *m = topo_model_new();
    m->source = TOPO_SRC_JSON;
    for (int s = 0; s < 2; s++) {
        int pk = topo_model_add_package(m);
        m->packages[pk].os_index = s;
        snprintf(m->packages[pk].cpuset, sizeof(m->packages[pk].cpuset), "%s",
                 s ? "32-63" : "0-31");
        int nu = topo_model_add_numa(m);
        m->numa[nu].os_index = s;
        m->numa[nu].package = pk;
        snprintf(m->numa[nu].cpuset, sizeof(m->numa[nu].cpuset), "%s", s ? "32-63" : "0-31");
    }
    socket_tree(m, 0);
    socket_tree(m, 1);
    assert_int_equal(m->npci, FX_NPCI);
    struct topo_host *h = &m->host;
    snprintf(h->hostname, sizeof(h->hostname), "gpu-node-01");
    h->is_root = TOPO_NO;
    h->cap_ipc_lock = TOPO_NO;
    h->memlock_known = 1;
    h->memlock_soft = UINT64_MAX;
    h->memlock_hard = UINT64_MAX;
    h->nvidia_peermem = TOPO_YES;
    h->dmabuf = TOPO_UNKNOWN;
    topo_model_finalize(m);
    return m;
}

struct topo_model *fx_roce_node(void)
{
    struct topo_model *m = fx_ib_node();
    for (int i = 0; i < m->nports; i++) {
        struct topo_port *p = &m->ports[i];
        p->link_layer = TOPO_LL_ETHERNET;
        snprintf(p->speed, sizeof(p->speed), "100 Gb/s");
        p->lid = 0;
        p->sm_lid = 0;
        p->ngids = 0;
        static const enum topo_gid_type types[] = {TOPO_GID_ROCE_V1, TOPO_GID_ROCE_V2,
                                                   TOPO_GID_ROCE_V1, TOPO_GID_ROCE_V2};
        for (int g = 0; g < 4; g++) {
            struct topo_gid gid = {.index = g, .type = types[g]};
            snprintf(gid.gid, sizeof(gid.gid),
                     g < 2 ? "fe80:0000:0000:0000:0e42:a1ff:fe00:%04x"
                           : "0000:0000:0000:0000:0000:ffff:0a00:%04x",
                     i + 1);
            snprintf(gid.ndev, sizeof(gid.ndev), "eth%d", i);
            if (g >= 2)
                snprintf(gid.ip, sizeof(gid.ip), "10.0.0.%d", i + 1);
            topo_port_add_gid(p, &gid);
        }
        struct topo_netdev *nd = &m->netdevs[i];
        snprintf(nd->name, sizeof(nd->name), "eth%d", i);
        nd->mtu = 9000;
        nd->speed_mbps = 400000;
        nd->valid |= TOPO_NET_V_SPEED;
        p->netdev = -1;
    }
    fx_refinalize(m);
    return m;
}

void fx_refinalize(struct topo_model *m)
{
    topo_model_finalize(m);
}

void fx_lint(const struct topo_model *m, const struct topo_err_samples *s,
             struct topo_findings *out)
{
    memset(out, 0, sizeof(*out));
    struct topo_lint_opts o = {.errs = s};
    topo_lint_run(m, &o, out);
}

int fx_count(const struct topo_findings *f, const char *rule, int sev)
{
    int n = 0;
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->v[i].rule, rule) && (sev < 0 || (int)f->v[i].sev == sev))
            n++;
    return n;
}

const struct topo_finding *fx_find(const struct topo_findings *f, const char *rule)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->v[i].rule, rule))
            return &f->v[i];
    return NULL;
}

void fx_dump(const struct topo_findings *f)
{
    for (int i = 0; i < f->n; i++)
        print_message("  [%s] %s %s: %s | %s\n", topo_sev_str(f->v[i].sev), f->v[i].rule,
                      f->v[i].object, f->v[i].msg, f->v[i].remedy);
}

void fx_tmpdir(char *buf, size_t len)
{
    const char *t = getenv("TMPDIR");
    snprintf(buf, len, "%s/fabtop-lint-XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(buf));
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void fx_rm_rf(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void fx_write(const char *root, const char *rel, const char *text)
{
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s/%s", root, rel);
    assert_true(n > 0 && (size_t)n < sizeof(path));
    for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        if (mkdir(path, 0755) < 0)
            assert_int_equal(errno, EEXIST);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}
