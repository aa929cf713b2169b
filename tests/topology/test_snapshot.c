/* test_snapshot: topologies the test writes itself (hwloc XML v2 and v1) load with the
 * right objects and relations; the JSON snapshot round-trips exactly (save -> load ->
 * save gives the same document) for those and for every reference fixture present;
 * a snapshot with inconsistent references is refused with one clear message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonutil.h"
#include "topology/topo_affinity.h"
#include "topology/topo_json.h"
#include "topology/topo_load.h"

#include "synth_xml.h"

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/fabtop-snap-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd);
}

static char *write_tmp(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static struct topo_model *load_path(const char *path)
{
    struct topo_load_opts o = {.input = path, .no_verbs = true, .no_gpu_libs = true};
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    if (topo_load(&o, &m, &err) < 0)
        fail_msg("%s", err.msg);
    return m;
}

static void check_synth(struct topo_model *m)
{
    assert_int_equal(m->npackages, 2);
    assert_int_equal(m->nnuma, 2);
    assert_int_equal(m->ngpus, 2);
    assert_int_equal(m->nnics, 1);
    assert_string_equal(m->nics[0].rdma_dev, "mlx5_0");
    assert_string_equal(m->nics[0].node_guid, "0c42:a103:0000:0001");
    assert_int_equal(m->nports, 1);
    const struct topo_port *p = &m->ports[0];
    assert_int_equal(p->num, 1);
    assert_true(p->valid & TOPO_PORT_V_STATE);
    assert_int_equal(p->state, TOPO_PORT_ACTIVE);
    assert_int_equal(p->lid, 7);
    assert_int_equal(p->ngids, 1);
    assert_true(p->netdev >= 0);
    assert_string_equal(m->netdevs[p->netdev].name, "ib0");
    /* GPU0 03:00.0 carries cuda0 with 83026944 KiB; GPU1 81:00.0 only its PCI class. */
    assert_int_equal(m->gpus[0].cuda_index, 0);
    assert_true(m->gpus[0].valid & TOPO_GPU_V_MEM);
    assert_int_equal(m->gpus[0].mem_bytes, 83026944ull * 1024);
    assert_string_equal(m->gpus[1].found_by, "pci-class");
    assert_false(m->gpus[1].valid & TOPO_GPU_V_MEM);
    /* Bridge roles: root port, switch upstream, two downstream ports, root port. */
    int roots = 0, ups = 0, downs = 0;
    for (int i = 0; i < m->npci; i++) {
        roots += m->pci[i].role == TOPO_BRIDGE_ROOT_PORT;
        ups += m->pci[i].role == TOPO_BRIDGE_SWITCH_UP;
        downs += m->pci[i].role == TOPO_BRIDGE_SWITCH_DOWN;
    }
    assert_int_equal(roots, 2);
    assert_int_equal(ups, 1);
    assert_int_equal(downs, 2);

    struct topo_affinity a;
    topo_affinity_compute(m, &a);
    assert_int_equal(a.ncols, 1);
    assert_int_equal(a.gn[0].rel, TOPO_REL_PIX);
    assert_int_equal(a.gn[1].rel, TOPO_REL_SYS);
    assert_false(a.gn[1].same_package);
    assert_int_equal(a.gg[1].rel, TOPO_REL_SYS);
    assert_int_equal(a.nearest[0].rel, TOPO_REL_PIX);
    assert_int_equal(a.nearest[1].rel, TOPO_REL_SYS);
    assert_string_equal(m->pci[m->gpus[0].pci].cpuset, "0-1");
    assert_int_equal(m->pci[m->gpus[1].pci].numa, 1);
    topo_affinity_free(&a);
}

static void test_synth_v2(void **state)
{
    (void)state;
    struct topo_model *m = load_path(write_tmp("v2.xml", synth_v2_xml));
    check_synth(m);
    topo_model_free(m);
}

static void test_synth_v1(void **state)
{
    (void)state;
    struct topo_model *m = load_path(write_tmp("v1.xml", synth_v1_xml));
    check_synth(m);
    topo_model_free(m);
}

static char *model_text(const struct topo_model *m)
{
    cJSON *doc = topo_json_from_model(m);
    char *s = cJSON_Print(doc);
    cJSON_Delete(doc);
    return s;
}

/* save -> load -> save must give byte-identical documents and the same relations. */
static void round_trip(struct topo_model *m, const char *name)
{
    char *a = model_text(m);
    char path[256];
    snprintf(path, sizeof(path), "%s/%s.json", tmpdir, name);
    cJSON *doc = topo_json_from_model(m);
    struct ft_err err = {0};
    assert_int_equal(jsonutil_save(path, doc, true, &err), 0);
    cJSON_Delete(doc);
    struct topo_model *m2 = load_path(path);
    assert_string_equal(m2->snapshot, path);
    char *b = model_text(m2);
    if (strcmp(a, b)) {
        size_t i = 0;
        while (a[i] && a[i] == b[i])
            i++;
        fail_msg("%s: snapshot differs after a round trip near: ...%.80s", name,
                 a + (i > 40 ? i - 40 : 0));
    }
    struct topo_affinity x, y;
    topo_affinity_compute(m, &x);
    topo_affinity_compute(m2, &y);
    assert_int_equal(x.ngpus, y.ngpus);
    assert_int_equal(x.ncols, y.ncols);
    for (int i = 0; i < x.ngpus * x.ncols; i++)
        assert_int_equal(x.gn[i].rel, y.gn[i].rel);
    for (int i = 0; i < x.ngpus * x.ngpus; i++) {
        assert_int_equal(x.gg[i].rel, y.gg[i].rel);
        assert_int_equal(x.gg[i].nv_links, y.gg[i].nv_links);
    }
    topo_affinity_free(&x);
    topo_affinity_free(&y);
    cJSON_free(a);
    cJSON_free(b);
    topo_model_free(m2);
}

static void test_round_trip_synth(void **state)
{
    (void)state;
    struct topo_model *m = load_path(write_tmp("v2.xml", synth_v2_xml));
    round_trip(m, "synth");
    topo_model_free(m);
}

static void test_round_trip_fixtures(void **state)
{
    (void)state;
    const char *d = getenv("FABTOP_SHARED_DATA");
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/hwloc-xml", d && *d ? d : "../shared/data");
    FILE *p;
    char cmd[1100];
    snprintf(cmd, sizeof(cmd), "ls '%s'/*.xml 2>/dev/null", dir);
    p = popen(cmd, "r");
    assert_non_null(p);
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof(line), p)) {
        line[strcspn(line, "\n")] = '\0';
        struct topo_model *m = load_path(line);
        char name[32];
        snprintf(name, sizeof(name), "fixture%d", n++);
        round_trip(m, name);
        topo_model_free(m);
    }
    pclose(p);
    if (n == 0)
        skip();
}

static void expect_refused(const char *text, const char *needle)
{
    char *path = write_tmp("bad.json", text);
    struct topo_load_opts o = {.input = path};
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    int rc = topo_load(&o, &m, &err);
    assert_true(rc < 0);
    assert_null(m);
    if (!strstr(err.msg, needle) || !strstr(err.msg, "bad.json"))
        fail_msg("message '%s' lacks '%s' or the file name", err.msg, needle);
}

static void test_bad_snapshots(void **state)
{
    (void)state;
    expect_refused("{\"format\":\"fabtop-topology\",\"version\":1,\"pci\":[{\"kind\":\"device\","
                   "\"parent\":5,\"bdf\":\"0000:01:00.0\"}]}",
                   "pci[0].parent");
    expect_refused("{\"format\":\"fabtop-topology\",\"version\":1,\"pci\":[{\"kind\":\"device\","
                   "\"bdf\":\"zz\"}]}",
                   "pci[0].bdf");
    expect_refused("{\"format\":\"fabtop-topology\",\"version\":1,\"gpus\":[{\"pci\":3}]}",
                   "gpus[0].pci");
    expect_refused("{\"format\":\"fabtop-topology\",\"version\":9}", "version 9");
    expect_refused("{\"format\":\"fabtop-results\",\"version\":1}", "--results");
    expect_refused("{\"pci\": [1, 2,]}", "bad.json:1:");
}

#define HB      "{\"kind\":\"hostbridge\",\"bdf\":\"0000:00:00.0\""
#define SNAP(x) "{\"format\":\"fabtop-topology\",\"version\":1," x "}"

/* Numbers from the file that an integer field cannot hold: converting them was undefined
 * behaviour (a bus range [870,-95] loaded as [102,161]); now one message names the field and
 * the range it allows. */
static void test_out_of_range(void **state)
{
    (void)state;
    expect_refused(SNAP("\"pci\":[" HB ",\"buses\":[870,-95]}]"),
                   "bad.json: pci[0].buses[0] = 870 is out of range 0-255");
    expect_refused(SNAP("\"pci\":[" HB ",\"buses\":[0,-95]}]"),
                   "bad.json: pci[0].buses[1] = -95 is out of range 0-255");
    expect_refused(SNAP("\"pci\":[" HB ",\"cur_width\":1e10}]"),
                   "pci[0].cur_width = 10000000000 is out of range 1-32");
    expect_refused(SNAP("\"pci\":[" HB ",\"acs_ctrl\":65536}]"),
                   "pci[0].acs_ctrl = 65536 is out of range 0-65535");
    expect_refused(SNAP("\"numa\":[{\"mem_bytes\":1e30}]"),
                   "numa[0].mem_bytes must be a whole number");
    expect_refused(SNAP("\"host\":{\"memlock_soft_bytes\":-2,\"memlock_hard_bytes\":-1}"),
                   "bad.json: host.memlock_soft_bytes must be a whole number");
    expect_refused(SNAP("\"nics\":[{}],\"ports\":[{\"nic\":0,\"lid\":70000}]"),
                   "ports[0].lid = 70000 is out of range 0-65535");
    expect_refused(SNAP("\"netdevs\":[{\"name\":\"eth0\",\"mtu\":3e9}]"),
                   "netdevs[0].mtu = 3000000000 is out of range 0-2147483647");
    /* A GPU link belongs to a GPU: without one it was given GPU 0, which the reader then
     * refused in the snapshot fabtop saved from it. */
    expect_refused(SNAP("\"gpulinks\":[{\"peer_kind\":\"gpu\"}]"),
                   "gpulinks[0].gpu must name a GPU entry");
}

/* A snapshot fabtop saved loads back to the same model. A PCI function with a vendor id but
 * no device id is written with both unknown (null): the model read from the file must not
 * keep the half it had, or the adapters derived from it differ after the round trip. */
static void test_round_trip_partial_ids(void **state)
{
    (void)state;
    char *path = write_tmp("ids.json", SNAP("\"pci\":[" HB "},{\"kind\":\"device\",\"parent\":0,"
                                            "\"bdf\":\"0000:01:00.0\",\"vendor_id\":\"15b3\","
                                            "\"class_id\":\"0207\"}],\"nics\":[{\"pci\":1,"
                                            "\"rdma_dev\":\"mlx5_0\"}]"));
    struct topo_model *m = load_path(path);
    assert_false(m->pci[1].valid & TOPO_PCI_V_IDS);
    round_trip(m, "ids");
    topo_model_free(m);
}

/* hwloc XML with a package nested in another (malformed, but hwloc loads it): hwloc counts
 * no packages at any one depth, and the NUMA node's package index named an entry the model
 * does not have; the snapshot saved from it was refused ("numa[0].package = 0"). */
static void test_round_trip_nested_package(void **state)
{
    (void)state;
#define SETS(n)                                                                                    \
    "cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "             \
    "gp_index=\"" #n "\""
    static const char xml[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
        "<topology version=\"2.0\">\n"
        "<object type=\"Machine\" os_index=\"0\" allowed_cpuset=\"0x1\" "
        "allowed_nodeset=\"0x1\" " SETS(
            1) ">\n"
               "<object type=\"Package\" os_index=\"0\" " SETS(
                   2) ">\n"
                      "<object type=\"Package\" os_index=\"1\" " SETS(
                          3) ">\n"
                             "<object type=\"NUMANode\" os_index=\"0\" "
                             "local_memory=\"1073741824\" " SETS(
                                 4) "/>\n"
                                    "<object type=\"PU\" os_index=\"0\" " SETS(
                                        5) "/>\n"
                                           "</object>\n</object>\n</object>\n</topology>\n";
#undef SETS
    struct topo_model *m = load_path(write_tmp("nested.xml", xml));
    assert_int_equal(m->nnuma, 1);
    assert_true(m->numa[0].package >= -1 && m->numa[0].package < m->npackages);
    round_trip(m, "nested");
    topo_model_free(m);
}

/* An hwloc XML whose PCI object has device 0x3f and function 9 (hwloc takes any byte): the
 * model got an address the snapshot reader refuses, so the snapshot saved from it did not
 * load. Refused when the XML is loaded, naming the object. */
static void test_xml_bad_pci_address(void **state)
{
    (void)state;
    static const char from[] = "pci_busid=\"0000:00:01.0\"";
    const char *at = strstr(synth_v2_xml, from);
    assert_non_null(at);
    char xml[sizeof(synth_v2_xml) + 8];
    snprintf(xml, sizeof(xml), "%.*spci_busid=\"0000:00:3f.9\"%s", (int)(at - synth_v2_xml),
             synth_v2_xml, at + strlen(from));
    char *path = write_tmp("baddev.xml", xml);
    struct topo_load_opts o = {.input = path, .no_verbs = true, .no_gpu_libs = true};
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    assert_true(topo_load(&o, &m, &err) < 0);
    assert_null(m);
    if (!strstr(err.msg, "baddev.xml: PCI object 0000:00:3f.9 is not a PCI address"))
        fail_msg("message '%s'", err.msg);
}

/* hwloc XML objects without an os_index (hwloc: HWLOC_UNKNOWN_INDEX): the model said -1, the
 * snapshot wrote it and the reader refused "numa[0].os_index = -1". Now -1 (unknown) is a
 * value the snapshot carries, shown as n/a, and no PCI tree hangs below an unknown node. */
static void test_round_trip_unknown_os_index(void **state)
{
    (void)state;
    static const char from[] = "<object type=\"NUMANode\" os_index=\"0\"";
    const char *at = strstr(synth_v2_xml, from);
    assert_non_null(at);
    char xml[sizeof(synth_v2_xml)];
    snprintf(xml, sizeof(xml), "%.*s<object type=\"NUMANode\"%s", (int)(at - synth_v2_xml),
             synth_v2_xml, at + strlen(from));
    struct topo_model *m = load_path(write_tmp("noos.xml", xml));
    int unknown = 0;
    for (int i = 0; i < m->nnuma; i++)
        unknown += m->numa[i].os_index == -1;
    assert_int_equal(unknown, 1);
    round_trip(m, "noos");
    topo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synth_v2),
        cmocka_unit_test(test_synth_v1),
        cmocka_unit_test(test_round_trip_synth),
        cmocka_unit_test(test_round_trip_fixtures),
        cmocka_unit_test(test_bad_snapshots),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_round_trip_partial_ids),
        cmocka_unit_test(test_round_trip_nested_package),
        cmocka_unit_test(test_xml_bad_pci_address),
        cmocka_unit_test(test_round_trip_unknown_os_index),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
