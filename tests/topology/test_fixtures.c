/* test_fixtures: every hwloc XML and sysfs tarball in ../shared/data loads with the right
 * number of GPUs, RDMA NICs and ports, and the right nearest-NIC relation for every GPU.
 * The expected values were derived by reading each file's PCI tree (see the comments),
 * and the object counts are cross-checked against lstopo-no-graphics at run time.
 * Skips (77) when the shared data folder is absent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "topology/topo_affinity.h"
#include "topology/topo_load.h"

struct near_exp {
    const char *gpu;  /* GPU PCI address */
    const char *rel;  /* nearest relation */
    const char *nics; /* the tied nearest NICs, comma separated, in model order */
};

struct fixture {
    const char *path; /* relative to the shared data folder */
    bool tarball;     /* a hwloc-gather-topology tarball, loaded as a sysfs root */
    int gpus, rdma_nics, rdma_ports, other_nics, adapters;
    struct near_exp near[17];
};

static const struct fixture fixtures[] = {
    /* XE8640: GPU+NIC pairs behind Broadcom switches (root port -> switch up -> down);
     * GPU cb:00.0 sits alone on NUMA 7, the nearest NIC is mlx5_3 on NUMA 5, same socket.
     * mlx5_0/mlx5_1 are the two functions of one ConnectX-6 (4d:00.0/.1). */
    {"hwloc-xml/flux-core_ipa20.xml",
     false,
     4,
     4,
     4,
     2,
     4,
     {{"0000:4e:00.0", "PIX", "mlx5_0,mlx5_1"},
      {"0000:5f:00.0", "PIX", "mlx5_2"},
      {"0000:cb:00.0", "SYS", "mlx5_3"},
      {"0000:db:00.0", "PIX", "mlx5_3"}}},
    /* Hand-edited hwloc test: 3 Tesla M2075 + one AMD VGA with an OpenCL device; the
     * Matrox BMC VGA is not a GPU. The IB function 04:00.0 hangs below bus 84's root port,
     * beside 84:00.0/84:00.1 (PIX); 83:00.0 is another root port of that host bridge (PHB);
     * 03:00.0 is on the other socket (SYS). */
    {"hwloc-xml/hwloc-tests_32em64t-2n8c2t-pci-wholeio.xml",
     false,
     4,
     1,
     1,
     2,
     2,
     {{"0000:03:00.0", "SYS", "mlx5_0"},
      {"0000:83:00.0", "PHB", "mlx5_0"},
      {"0000:84:00.0", "PIX", "mlx5_0"},
      {"0000:84:00.1", "PIX", "mlx5_0"}}},
    /* DGX-2: 16 V100 typed as co-processors without subtype; 12 NVSwitches (class 0680,
     * one with id 0000:0000) are not GPUs; no NICs in the export. */
    {"hwloc-xml/hwloc-tests_nvidiaDGX2.xml", false, 16, 0, 0, 0, 0, {{NULL, NULL, NULL}}},
    {"hwloc-xml/hwloc-tests_power8gpudistances.xml", false, 4, 0, 0, 0, 0, {{NULL, NULL, NULL}}},
    /* Lassen (POWER9): GPUs and HCAs hang off different PHBs of the same socket: NODE. */
    {"hwloc-xml/mpibind_coral-lassen.xml",
     false,
     4,
     4,
     4,
     2,
     3,
     {{"0004:04:00.0", "NODE", "mlx5_0,mlx5_1"},
      {"0004:05:00.0", "NODE", "mlx5_0,mlx5_1"},
      {"0035:03:00.0", "NODE", "mlx5_2,mlx5_3"},
      {"0035:04:00.0", "NODE", "mlx5_2,mlx5_3"}}},
    /* Tioga: 8 MI250X GCDs (class 0380, RSMI), Slingshot NICs without verbs: no RDMA NIC,
     * so the nearest network function is reported. Each GCD pair shares a host bridge with
     * one hsi NIC (PHB) and the other GCD of the NUMA node reaches it through the node
     * (NODE); on NUMA 0 the management NIC ens2 ties with hsi2. */
    {"hwloc-xml/mpibind_eas-tioga.xml",
     false,
     8,
     0,
     0,
     5,
     5,
     {{"0000:c1:00.0", "NODE", "hsi0"},
      {"0000:c6:00.0", "PHB", "hsi0"},
      {"0000:c9:00.0", "NODE", "hsi1"},
      {"0000:ce:00.0", "PHB", "hsi1"},
      {"0000:d1:00.0", "NODE", "ens2,hsi2"},
      {"0000:d6:00.0", "PHB", "hsi2"},
      {"0000:d9:00.0", "NODE", "hsi3"},
      {"0000:de:00.0", "PHB", "hsi3"}}},
    /* Corona: 8 MI50 behind their own internal switches; one ConnectX-6 on socket 1 beside
     * GPU c3:00.0's switch under the same host bridge (PHB). */
    {"hwloc-xml/mpibind_epyc-corona-p2.xml",
     false,
     8,
     1,
     1,
     2,
     2,
     {{"0000:03:00.0", "SYS", "mlx5_0"},
      {"0000:27:00.0", "SYS", "mlx5_0"},
      {"0000:43:00.0", "SYS", "mlx5_0"},
      {"0000:63:00.0", "SYS", "mlx5_0"},
      {"0000:83:00.0", "NODE", "mlx5_0"},
      {"0000:a3:00.0", "NODE", "mlx5_0"},
      {"0000:c3:00.0", "PHB", "mlx5_0"},
      {"0000:e3:00.0", "NODE", "mlx5_0"}}},
    /* g4dn.metal: 8 T4, one EFA (RDMA) and one ENA on socket 1. */
    {"hwloc-xml/mpibind_g4dnmetal.xml",
     false,
     8,
     1,
     1,
     1,
     2,
     {{"0000:18:00.0", "SYS", "rdmap197s0"},
      {"0000:19:00.0", "SYS", "rdmap197s0"},
      {"0000:35:00.0", "SYS", "rdmap197s0"},
      {"0000:36:00.0", "SYS", "rdmap197s0"},
      {"0000:e7:00.0", "NODE", "rdmap197s0"},
      {"0000:e8:00.0", "NODE", "rdmap197s0"},
      {"0000:f4:00.0", "NODE", "rdmap197s0"},
      {"0000:f5:00.0", "NODE", "rdmap197s0"}}},
    /* JUWELS Booster (hwloc 1.11 v1 XML): A100s have no OS device at all, found by class
     * 0302 + NVIDIA; each shares a Broadcom switch with one HDR HCA; the ASPEED VGA is no
     * GPU. */
    {"hwloc-xml/psmgmt_topo.jwb0001.xml",
     false,
     4,
     4,
     4,
     2,
     5,
     {{"0000:03:00.0", "PIX", "mlx5_1"},
      {"0000:44:00.0", "PIX", "mlx5_0"},
      {"0000:84:00.0", "PIX", "mlx5_3"},
      {"0000:c4:00.0", "PIX", "mlx5_2"}}},
    /* MeluXina (v1 XML): GPUs only as DRM cards; two HCAs, each beside one GPU; the other
     * two GPUs reach the HCA of their own socket across NUMA nodes (SYS, same socket). */
    {"hwloc-xml/psmgmt_topo.mel2001.xml",
     false,
     4,
     2,
     2,
     2,
     3,
     {{"0000:03:00.0", "SYS", "mlx5_0"},
      {"0000:44:00.0", "PIX", "mlx5_0"},
      {"0000:84:00.0", "PIX", "mlx5_1"},
      {"0000:c3:00.0", "SYS", "mlx5_1"}}},
    /* POWER9 sysfs capture: PCI ids pruned (vendor 0000, class VGA); the six V100s are
     * known from /proc/driver/nvidia/gpus and their memory NUMA nodes 250-255. */
    {"hwloc-fsroot/hwloc-tests_nvidiagpunumanodes.tar.bz2",
     true,
     6,
     0,
     0,
     0,
     0,
     {{NULL, NULL, NULL}}},
    /* Xeon E5 with an FDR ConnectX-3 (mlx4_0) and a Xeon Phi (not a GPU; its scif0 verbs
     * device is a dangling link in the capture). */
    {"hwloc-fsroot/hwloc-tests_32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2",
     true,
     0,
     1,
     1,
     2,
     2,
     {{NULL, NULL, NULL}}},
};

static const char *data_dir(void)
{
    const char *d = getenv("FABTOP_SHARED_DATA");
    return d && *d ? d : "../shared/data";
}

/* Extract a tarball into a fresh temp dir; returns the single top directory inside. */
static char *extract(const char *tar)
{
    char tmpl[] = "/tmp/fabtop-fx-XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "tar xjf '%s' -C '%s' && ls '%s'", tar, dir, dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char top[256] = "";
    assert_non_null(fgets(top, sizeof(top), p));
    pclose(p);
    top[strcspn(top, "\n")] = '\0';
    char *root = malloc(strlen(dir) + strlen(top) + 2);
    sprintf(root, "%s/%s", dir, top);
    return root;
}

static void cleanup(const char *root)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "rm -rf \"$(dirname '%s')\"", root);
    assert_int_equal(system(cmd), 0);
}

static struct topo_model *load_fixture(const struct fixture *fx, char **root)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", data_dir(), fx->path);
    struct topo_load_opts o = {.no_verbs = true, .no_gpu_libs = true};
    *root = NULL;
    if (fx->tarball) {
        *root = extract(path);
        o.sysfs_root = *root;
    } else {
        o.input = path;
    }
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    int rc = topo_load(&o, &m, &err);
    if (rc < 0)
        fail_msg("%s: %s", fx->path, err.msg);
    return m;
}

/* Count lines of lstopo's console output that start (after indentation) with word. */
static int lstopo_count(const struct fixture *fx, const char *root, const char *word)
{
    char cmd[2048], path[1024];
    snprintf(path, sizeof(path), "%s/%s", data_dir(), fx->path);
    if (fx->tarball)
        snprintf(cmd, sizeof(cmd),
                 "HWLOC_COMPONENTS=linux,stop HWLOC_FSROOT='%s' lstopo-no-graphics --whole-io "
                 "--no-collapse "
                 "--of console 2>/dev/null",
                 root);
    else
        snprintf(cmd, sizeof(cmd),
                 "lstopo-no-graphics -i '%s' --whole-io --no-collapse --of console 2>/dev/null",
                 path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof(line), p)) {
        const char *s = line + strspn(line, " ");
        if (!strncmp(s, word, strlen(word)) && (strcmp(word, "PCI") || strncmp(s, "PCIBridge", 9)))
            n++;
    }
    return pclose(p) == 0 ? n : -1;
}

static int count_rdma(const struct topo_model *m, int *ports)
{
    int n = 0;
    *ports = 0;
    for (int i = 0; i < m->nnics; i++)
        if (m->nics[i].rdma_dev[0]) {
            n++;
            *ports += m->nics[i].nports;
        }
    return n;
}

static void check_fixture(const struct fixture *fx)
{
    char *root;
    struct topo_model *m = load_fixture(fx, &root);
    int ports, rdma = count_rdma(m, &ports);
    if (m->ngpus != fx->gpus || rdma != fx->rdma_nics || ports != fx->rdma_ports ||
        m->nnics - rdma != fx->other_nics || m->nadapters != fx->adapters)
        fail_msg("%s: gpus %d (want %d), rdma nics %d (%d), ports %d (%d), other nics %d (%d), "
                 "adapters %d (%d)",
                 fx->path, m->ngpus, fx->gpus, rdma, fx->rdma_nics, ports, fx->rdma_ports,
                 m->nnics - rdma, fx->other_nics, m->nadapters, fx->adapters);

    /* Cross-check with lstopo on the same input: every OpenFabrics OS device it shows is an
     * RDMA NIC of ours, and we keep every PCI device and bridge it shows. */
    int lst_ofed = lstopo_count(fx, root, "OpenFabrics");
    int lst_pci = lstopo_count(fx, root, "PCI");
    int lst_br = lstopo_count(fx, root, "PCIBridge");
    int lst_hb = lstopo_count(fx, root, "HostBridge");
    if (lst_ofed >= 0) {
        int devs = 0, bridges = 0;
        for (int i = 0; i < m->npci; i++) {
            devs += m->pci[i].kind == TOPO_PCI_DEVICE;
            bridges += m->pci[i].kind != TOPO_PCI_DEVICE;
        }
        if (!fx->tarball) /* the tarball's scif0 is not attached by hwloc either */
            assert_int_equal(lst_ofed, rdma);
        assert_int_equal(lst_pci, devs);
        assert_int_equal(lst_br + lst_hb, bridges);
    } else {
        print_message("lstopo-no-graphics not available: cross-check skipped for %s\n", fx->path);
    }

    struct topo_affinity a;
    topo_affinity_compute(m, &a);
    for (int k = 0; fx->near[k].gpu; k++) {
        struct topo_bdf bdf;
        assert_int_equal(topo_bdf_parse(fx->near[k].gpu, &bdf), 0);
        int pci = topo_model_find_pci(m, &bdf);
        int g = pci >= 0 ? topo_model_gpu_of_pci(m, pci) : -1;
        if (g < 0)
            fail_msg("%s: no GPU at %s", fx->path, fx->near[k].gpu);
        char got[256] = "";
        for (int j = 0; j < a.nearest[g].n; j++) {
            char name[64];
            topo_nic_name(m, a.nearest[g].nics[j], name, sizeof(name));
            snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", j ? "," : "", name);
        }
        if (strcmp(got, fx->near[k].nics) ||
            strcmp(topo_rel_str(a.nearest[g].rel), fx->near[k].rel))
            fail_msg("%s: GPU %s nearest %s (%s), want %s (%s)", fx->path, fx->near[k].gpu, got,
                     topo_rel_str(a.nearest[g].rel), fx->near[k].nics, fx->near[k].rel);
    }
    topo_affinity_free(&a);
    topo_model_free(m);
    if (root) {
        cleanup(root);
        free(root);
    }
}

static void test_fixture(void **state)
{
    check_fixture((const struct fixture *)*state);
}

/* GPU x GPU links where the exports carry them. */
static void test_nvlink(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        int g0, g1;
        const char *cell;
        double mbs;
    } cases[] = {
        {"hwloc-xml/flux-core_ipa20.xml", 0, 3, "NV6", 150000}, /* H100: 6 x 25 GB/s */
        {"hwloc-xml/hwloc-tests_power8gpudistances.xml", 0, 1, "NV2", 40000}, /* P100 */
        {"hwloc-xml/hwloc-tests_power8gpudistances.xml", 0, 2, "SYS", 0},
        {"hwloc-xml/hwloc-tests_nvidiaDGX2.xml", 0, 15, "NV6", 150000}, /* via 6 NVSwitches */
        {"hwloc-xml/mpibind_eas-tioga.xml", 0, 7, "XGMI", 100000},
        {"hwloc-xml/mpibind_g4dnmetal.xml", 0, 1, "PHB", 0}, /* T4s: no NVLink */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fixture fx = {.path = cases[i].path};
        char *root;
        struct topo_model *m = load_fixture(&fx, &root);
        struct topo_affinity a;
        topo_affinity_compute(m, &a);
        const struct topo_cell *c = &a.gg[cases[i].g0 * a.ngpus + cases[i].g1];
        char cell[16];
        topo_cell_str(c, cell, sizeof(cell));
        if (strcmp(cell, cases[i].cell) || c->nv_bw_mbs != cases[i].mbs)
            fail_msg("%s GPU%d-GPU%d: %s %.0f MB/s, want %s %.0f", cases[i].path, cases[i].g0,
                     cases[i].g1, cell, c->nv_bw_mbs, cases[i].cell, cases[i].mbs);
        topo_affinity_free(&a);
        topo_model_free(m);
    }
}

/* Each GPU's nearest NICs, usable first and the DOWN ones marked, with the nearest usable NIC
 * when all of them are down (ipa20: mlx5_0's port is ACTIVE, mlx5_1..3's DOWN); an export
 * without port states marks nothing. */
static void test_nearest_up(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        int gpu;
        const char *want;
    } cases[] = {
        {"hwloc-xml/flux-core_ipa20.xml", 0, "mlx5_0, mlx5_1 DOWN (PIX)"},
        {"hwloc-xml/flux-core_ipa20.xml", 1,
         "mlx5_2 DOWN (PIX); usable: mlx5_0 (SYS, same socket)"},
        {"hwloc-xml/flux-core_ipa20.xml", 3, "mlx5_3 DOWN (PIX); usable: mlx5_0 (SYS)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fixture fx = {.path = cases[i].path};
        char *root;
        struct topo_model *m = load_fixture(&fx, &root);
        struct topo_affinity a;
        topo_affinity_compute(m, &a);
        char line[512];
        topo_nearest_str(m, &a.nearest[cases[i].gpu], line, sizeof(line));
        if (strcmp(line, cases[i].want))
            fail_msg("%s GPU%d: \"%s\", want \"%s\"", cases[i].path, cases[i].gpu, line,
                     cases[i].want);
        topo_affinity_free(&a);
        topo_model_free(m);
    }
    /* The DGX-2 export has no port states: nothing is called down. */
    struct fixture fx = {.path = "hwloc-xml/hwloc-tests_nvidiaDGX2.xml"};
    char *root;
    struct topo_model *m = load_fixture(&fx, &root);
    struct topo_affinity a;
    topo_affinity_compute(m, &a);
    for (int g = 0; g < a.ngpus; g++) {
        char line[512];
        topo_nearest_str(m, &a.nearest[g], line, sizeof(line));
        assert_null(strstr(line, "DOWN"));
        assert_int_equal(a.nearest[g].nup, a.nearest[g].n);
    }
    topo_affinity_free(&a);
    topo_model_free(m);
}

/* Whether the export says anything of NVLink: jwb0001 (hwloc 1.11, four V100s) does not, so
 * its SYS pairs are "unknown", not "no NVLink"; ipa20 and the DGX-2 carry the matrix. */
static void test_links_known(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        bool known;
    } cases[] = {
        {"hwloc-xml/psmgmt_topo.jwb0001.xml", false},
        {"hwloc-xml/flux-core_ipa20.xml", true},
        {"hwloc-xml/hwloc-tests_nvidiaDGX2.xml", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fixture fx = {.path = cases[i].path};
        char *root;
        struct topo_model *m = load_fixture(&fx, &root);
        if (m->gpu_links_known != cases[i].known)
            fail_msg("%s: gpu_links_known %d, want %d", cases[i].path, m->gpu_links_known,
                     cases[i].known);
        assert_true(m->ngpus >= 2);
        topo_model_free(m);
    }
}

int main(void)
{
    char probe[1024];
    snprintf(probe, sizeof(probe), "%s/hwloc-xml", data_dir());
    if (access(probe, R_OK) != 0) {
        printf("SKIP: shared reference data not found at %s\n", data_dir());
        return 77;
    }
    struct CMUnitTest tests[sizeof(fixtures) / sizeof(fixtures[0]) + 3];
    size_t n = 0;
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(test_fixture, (void *)&fixtures[i]);
        tests[n].name = fixtures[i].path;
        n++;
    }
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_nvlink);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_nearest_up);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_links_known);
    return _cmocka_run_group_tests("fixtures", tests, n, NULL, NULL);
}
