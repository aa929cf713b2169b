/* test_lint_rules: every model rule of topo_lint, once triggered and once on a healthy (or
 * near-miss) case that must stay quiet; the healthy idle node as a whole has no warnings or
 * errors; JSON snapshots (round trip and a hand-written file) lint the same as the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/ft_err.h"
#include "lint_fixture.h"
#include "topology/topo_json.h"
#include "topology/topo_load.h"

/* Lint m into f and check every finding against the rule table and the object fields. */
static void lint(const struct topo_model *m, struct topo_findings *f)
{
    fx_lint(m, NULL, f);
    for (int i = 0; i < f->n; i++) {
        const struct topo_finding *x = &f->v[i];
        bool known = false;
        for (int r = 0; r < topo_lint_nrules; r++)
            if (!strcmp(topo_lint_rules[r].id, x->rule)) {
                known = true;
                assert_true(x->sev <= topo_lint_rules[r].sev); /* the table's worst */
            }
        assert_true(known);
        assert_true(x->object[0] && x->msg[0] && x->remedy[0]);
        assert_true(x->pci >= -1 && x->pci < m->npci);
        assert_true(x->port >= -1 && x->port < m->nports);
        if (i > 0)
            assert_true(f->v[i - 1].sev >= x->sev); /* errors first */
    }
}

#define HAS(s, sub) assert_non_null(strstr((s), (sub)))

/* ---- the whole healthy node ---- */

static void test_healthy_ib_node(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(topo_findings_worst(&f), -1);
    /* Only the idle GPUs' slowed links, as INFO. */
    assert_int_equal(f.n, 2);
    assert_int_equal(fx_count(&f, "pcie-speed", TOPO_SEV_INFO), 2);
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_healthy_roce_node(void **state)
{
    (void)state;
    struct topo_model *m = fx_roce_node();
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(topo_findings_worst(&f), -1);
    assert_int_equal(f.n, fx_count(&f, "pcie-speed", TOPO_SEV_INFO));
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 1. pcie-width ---- */

static void test_pcie_width_trigger(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->pci[FX_NIC0].cur_width = 8;
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "pcie-width", TOPO_SEV_WARN), 1);
    const struct topo_finding *x = fx_find(&f, "pcie-width");
    assert_int_equal(x->pci, FX_NIC0);
    HAS(x->object, "mlx5_0");
    HAS(x->object, "0000:04:00.0");
    HAS(x->msg, "x8");
    HAS(x->msg, "x16");
    topo_findings_free(&f);

    /* The port above can only do x8: the remedy says to move the card. */
    m->pci[FX_DN0B].max_width = 8;
    m->pci[FX_DN0B].cur_width = 8;
    lint(m, &f);
    x = fx_find(&f, "pcie-width");
    assert_non_null(x);
    HAS(x->msg, "supports only x8");
    HAS(x->remedy, "slot");
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_pcie_width_dual_function_once(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->pci[FX_NIC0].cur_width = 8;
    /* Function .1 of the same card shares the degraded link. */
    int p1 = topo_model_add_pci(m);
    m->pci[p1] = m->pci[FX_NIC0];
    m->pci[p1].addr.func = 1;
    int n = topo_model_add_nic(m);
    m->nics[n].pci = p1;
    snprintf(m->nics[n].rdma_dev, sizeof(m->nics[n].rdma_dev), "mlx5_2");
    fx_refinalize(m);
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "pcie-width", -1), 1);
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_pcie_width_healthy(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    /* An x4 NVMe drive on an x16-capable root port: the root port's own link shows x4 of
     * x16, but the device is at its full width, so nothing is wrong. */
    int rp = topo_model_add_pci(m);
    m->pci[rp].kind = TOPO_PCI_BRIDGE;
    m->pci[rp].parent = FX_HB0;
    topo_bdf_parse("0000:00:03.0", &m->pci[rp].addr);
    m->pci[rp].cur_width = 4;
    m->pci[rp].max_width = 16;
    m->pci[rp].cur_speed_gts = m->pci[rp].max_speed_gts = 16;
    m->pci[rp].valid |=
        TOPO_PCI_V_CUR_WIDTH | TOPO_PCI_V_MAX_WIDTH | TOPO_PCI_V_CUR_SPEED | TOPO_PCI_V_MAX_SPEED;
    int nv = topo_model_add_pci(m);
    m->pci[nv].kind = TOPO_PCI_DEVICE;
    m->pci[nv].parent = rp;
    topo_bdf_parse("0000:05:00.0", &m->pci[nv].addr);
    m->pci[nv].class_id = 0x0108;
    m->pci[nv].cur_width = m->pci[nv].max_width = 4;
    m->pci[nv].cur_speed_gts = m->pci[nv].max_speed_gts = 16;
    m->pci[nv].valid = m->pci[rp].valid;
    /* Unknown widths (a VF reports none) say nothing either. */
    m->pci[FX_NIC1].cur_width = 0;
    fx_refinalize(m);
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "pcie-width", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 2. pcie-speed ---- */

static void test_pcie_speed_trigger_is_info(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->pci[FX_NIC0].cur_speed_gts = 16;
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "pcie-speed", TOPO_SEV_INFO), 3);
    assert_int_equal(fx_count(&f, "pcie-speed", TOPO_SEV_WARN), 0);
    for (int i = 0; i < f.n; i++)
        if (!strcmp(f.v[i].rule, "pcie-speed"))
            HAS(f.v[i].msg, "check under load");
    assert_int_equal(topo_findings_worst(&f), -1);
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_pcie_speed_healthy(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->pci[FX_GPU0].cur_speed_gts = 32;
    m->pci[FX_GPU1].cur_speed_gts = 32;
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(f.n, 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 3. nic-pcie-bottleneck ---- */

static void set_nic_link(struct topo_model *m, int pci, double gts, int width)
{
    m->pci[pci].cur_speed_gts = m->pci[pci].max_speed_gts = gts;
    m->pci[pci].cur_width = m->pci[pci].max_width = width;
}

static void test_nic_pcie_trigger_gen4_x8(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    set_nic_link(m, FX_NIC0, 16, 8);
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "nic-pcie-bottleneck", TOPO_SEV_WARN), 1);
    const struct topo_finding *x = fx_find(&f, "nic-pcie-bottleneck");
    assert_int_equal(x->pci, FX_NIC0);
    assert_int_equal(x->port, 0);
    HAS(x->msg, "x8");
    HAS(x->msg, "126 Gb/s"); /* 16 GT/s x 8 x 128/130 */
    HAS(x->msg, "128b/130b");
    HAS(x->msg, "400 Gb/s");
    HAS(x->remedy, "x16 Gen5"); /* 504 Gb/s is the first x16 link above 400 */
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_nic_pcie_trigger_gen2_and_parent_cap(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    /* Gen2 x8 = 5 x 8 x 0.8 = 32 Gb/s behind a 40 Gb/s port: 8b/10b counts. */
    set_nic_link(m, FX_NIC0, 5, 8);
    m->ports[0].rate_gbps = 40;
    /* NIC1 can do Gen5 x16 but the switch port above it only Gen4: 252 < 400. */
    m->pci[FX_DN1B].max_speed_gts = 16;
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "nic-pcie-bottleneck", TOPO_SEV_WARN), 2);
    const struct topo_finding *x = fx_find(&f, "nic-pcie-bottleneck");
    HAS(x->msg, "32 Gb/s");
    HAS(x->msg, "8b/10b");
    x = &f.v[x - f.v + 1];
    assert_string_equal(x->rule, "nic-pcie-bottleneck");
    HAS(x->msg, "252 Gb/s");
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_nic_pcie_healthy(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    /* Gen5 x16 idling at 2.5 GT/s: the maximum speed counts, 504 Gb/s > 400. */
    m->pci[FX_NIC0].cur_speed_gts = 2.5;
    /* Gen3 x16 (126 Gb/s) behind a 100 Gb/s port is fine. */
    set_nic_link(m, FX_NIC1, 8, 16);
    m->ports[1].rate_gbps = 100;
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "nic-pcie-bottleneck", -1), 0);
    topo_findings_free(&f);

    /* Gen6 x16 (64 x 16 x 236/256 = 944 Gb/s) behind 800 Gb/s is fine too. */
    set_nic_link(m, FX_NIC1, 64, 16);
    m->pci[FX_DN1B].max_speed_gts = 64;
    m->ports[1].rate_gbps = 800;
    /* A slow link behind a port that is down carries nothing: no bottleneck. */
    set_nic_link(m, FX_NIC0, 16, 8);
    m->ports[0].state = TOPO_PORT_DOWN;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "nic-pcie-bottleneck", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 4. port-state ---- */

static void test_port_state_trigger(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->ports[0].state = TOPO_PORT_DOWN;
    m->ports[0].phys_state = TOPO_PHYS_POLLING;
    m->ports[1].state = TOPO_PORT_INIT;
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "port-state", TOPO_SEV_ERROR), 2);
    const struct topo_finding *x = fx_find(&f, "port-state");
    assert_string_equal(x->object, "mlx5_0 port 1");
    assert_int_equal(x->port, 0);
    assert_int_equal(x->pci, FX_NIC0);
    HAS(x->msg, "DOWN");
    HAS(x->msg, "Polling");
    HAS(x->remedy, "cable");
    x = &f.v[1];
    assert_string_equal(x->rule, "port-state");
    HAS(x->msg, "INIT");
    HAS(x->remedy, "opensm");
    assert_int_equal(topo_findings_worst(&f), TOPO_SEV_ERROR);
    topo_findings_free(&f);

    m->ports[1].state = TOPO_PORT_DOWN;
    m->ports[1].phys_state = TOPO_PHYS_DISABLED;
    lint(m, &f);
    HAS(f.v[1].msg, "Disabled");
    HAS(f.v[1].remedy, "enable");
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_port_state_healthy(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->ports[0].state = TOPO_PORT_ACTIVE_DEFER;
    m->ports[1].valid &= ~(unsigned)(TOPO_PORT_V_STATE | TOPO_PORT_V_PHYS); /* unknown */
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "port-state", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 5. ib-no-sm ---- */

static void test_ib_no_sm_trigger(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->ports[0].state = TOPO_PORT_INIT;
    m->ports[0].lid = 0;
    m->ports[0].sm_lid = 0;
    m->ports[1].lid = 0xffff;
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "ib-no-sm", TOPO_SEV_ERROR), 2);
    const struct topo_finding *x = fx_find(&f, "ib-no-sm");
    HAS(x->msg, "no subnet manager");
    HAS(x->msg, "SM LID 0x0");
    HAS(x->remedy, "opensm");
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_ib_no_sm_healthy(void **state)
{
    (void)state;
    /* RoCE ports report LID 0 and SM LID 0: not an InfiniBand fabric, no SM needed. */
    struct topo_model *m = fx_roce_node();
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "ib-no-sm", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);

    /* An IB port without a physical link: port-state reports it, not ib-no-sm. */
    m = fx_ib_node();
    m->ports[0].state = TOPO_PORT_DOWN;
    m->ports[0].phys_state = TOPO_PHYS_POLLING;
    m->ports[0].lid = 0;
    m->ports[0].sm_lid = 0;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "ib-no-sm", -1), 0);
    assert_int_equal(fx_count(&f, "port-state", -1), 1);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 6. port-rate-mismatch ---- */

static void test_port_rate_trigger(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->ports[1].rate_gbps = 200;
    snprintf(m->ports[1].speed, sizeof(m->ports[1].speed), "HDR");
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "port-rate-mismatch", TOPO_SEV_WARN), 1);
    const struct topo_finding *x = fx_find(&f, "port-rate-mismatch");
    assert_string_equal(x->object, "mlx5_1 port 1");
    HAS(x->msg, "200 Gb/s");
    HAS(x->msg, "4X HDR");
    HAS(x->msg, "400 Gb/s");
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_port_rate_healthy(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    /* Different link layers are different fabrics. */
    m->ports[1].link_layer = TOPO_LL_ETHERNET;
    m->ports[1].rate_gbps = 100;
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "port-rate-mismatch", -1), 0);
    topo_findings_free(&f);
    /* A port that is down has no rate that matters. */
    m->ports[1].link_layer = TOPO_LL_INFINIBAND;
    m->ports[1].state = TOPO_PORT_DOWN;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "port-rate-mismatch", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 7. roce-no-v2-gid ---- */

static void test_roce_gid_trigger(void **state)
{
    (void)state;
    struct topo_model *m = fx_roce_node();
    /* Port 0: only RoCE v1 GIDs. Port 1: GID table read and empty. */
    for (int g = 0; g < m->ports[0].ngids; g++)
        m->ports[0].gids[g].type = TOPO_GID_ROCE_V1;
    m->ports[1].ngids = 0;
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "roce-no-v2-gid", TOPO_SEV_WARN), 2);
    const struct topo_finding *x = fx_find(&f, "roce-no-v2-gid");
    assert_string_equal(x->object, "mlx5_0 port 1");
    HAS(x->msg, "no RoCE v2 GID");
    HAS(x->remedy, "eth0");
    HAS(f.v[1].msg, "empty");
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_roce_gid_healthy(void **state)
{
    (void)state;
    struct topo_model *m = fx_roce_node();
    /* Port 1: GIDs read but their types unknown (old kernel): say nothing. */
    for (int g = 0; g < m->ports[1].ngids; g++)
        m->ports[1].gids[g].type = TOPO_GID_IB;
    m->ports[1].valid &= ~(unsigned)TOPO_PORT_V_GIDTYPES;
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "roce-no-v2-gid", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
    /* InfiniBand ports have IB GIDs only, as they should. */
    m = fx_ib_node();
    lint(m, &f);
    assert_int_equal(fx_count(&f, "roce-no-v2-gid", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 8. roce-mtu and mtu-mismatch ---- */

static void test_roce_mtu_trigger(void **state)
{
    (void)state;
    struct topo_model *m = fx_roce_node();
    m->ports[0].active_mtu = 1024;
    m->netdevs[0].mtu = 1500;
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "roce-mtu", TOPO_SEV_WARN), 1);
    /* The same port is not reported twice as a fabric mismatch. */
    assert_int_equal(fx_count(&f, "mtu-mismatch", -1), 0);
    const struct topo_finding *x = fx_find(&f, "roce-mtu");
    HAS(x->msg, "1024");
    HAS(x->msg, "4096");
    HAS(x->msg, "eth0's MTU 1500");
    HAS(x->remedy, "4200");
    HAS(x->remedy, "9000");
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_roce_mtu_healthy(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    /* InfiniBand ports at 2048 of 4096: the SM sets IB MTU; one MTU everywhere is fine. */
    m->ports[0].active_mtu = m->ports[1].active_mtu = 2048;
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "roce-mtu", -1), 0);
    assert_int_equal(fx_count(&f, "mtu-mismatch", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_mtu_mismatch_trigger(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->ports[1].active_mtu = 2048;
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "mtu-mismatch", TOPO_SEV_WARN), 1);
    const struct topo_finding *x = fx_find(&f, "mtu-mismatch");
    assert_string_equal(x->object, "mlx5_1 port 1");
    HAS(x->msg, "2048");
    HAS(x->msg, "4096");
    topo_findings_free(&f);
    topo_model_free(m);

    /* RoCE ports at their (different) maximums still disagree. */
    m = fx_roce_node();
    m->ports[1].active_mtu = m->ports[1].max_mtu = 1024;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "mtu-mismatch", TOPO_SEV_WARN), 1);
    assert_int_equal(fx_count(&f, "roce-mtu", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_mtu_mismatch_healthy(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    /* A port that is down does not take part. */
    m->ports[1].active_mtu = 256;
    m->ports[1].state = TOPO_PORT_DOWN;
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "mtu-mismatch", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 9. gpu-nic-far ---- */

/* Move NIC0 to its own root port on socket 0's host bridge: GPU0-NIC0 becomes PHB. */
static void nic0_on_own_root_port(struct topo_model *m, uint16_t acs_ctrl)
{
    int rp = topo_model_add_pci(m);
    m->pci[rp].kind = TOPO_PCI_BRIDGE;
    m->pci[rp].parent = FX_HB0;
    topo_bdf_parse("0000:00:02.0", &m->pci[rp].addr);
    m->pci[rp].acs_ctrl = acs_ctrl;
    m->pci[rp].valid |= TOPO_PCI_V_ACS;
    m->pci[FX_NIC0].parent = rp;
    fx_refinalize(m);
}

static void test_gpu_nic_far_trigger(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    nic0_on_own_root_port(m, 0);
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "gpu-nic-far", TOPO_SEV_WARN), 1);
    const struct topo_finding *x = fx_find(&f, "gpu-nic-far");
    assert_int_equal(x->pci, FX_GPU0);
    HAS(x->object, "GPU0");
    HAS(x->msg, "mlx5_0");
    HAS(x->msg, "PHB");
    HAS(x->msg, "PXB");
    topo_findings_free(&f);
    topo_model_free(m);

    /* Both NICs on socket 1: GPU0 reaches them only across sockets. */
    m = fx_ib_node();
    m->pci[FX_NIC0].parent = FX_DN1B;
    m->pci[FX_NIC0].numa = m->pci[FX_NIC0].package = 1;
    fx_refinalize(m);
    lint(m, &f);
    x = fx_find(&f, "gpu-nic-far");
    assert_non_null(x);
    HAS(x->msg, "SYS");
    HAS(x->msg, "mlx5_0, mlx5_1");
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_gpu_nic_far_healthy(void **state)
{
    (void)state;
    /* Plain Ethernet NICs far away: no RDMA NIC, no GPUDirect RDMA to lose. */
    struct topo_model *m = fx_ib_node();
    nic0_on_own_root_port(m, 0);
    m->nics[0].rdma_dev[0] = '\0';
    m->nics[1].rdma_dev[0] = '\0';
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "gpu-nic-far", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 10. fw-mismatch ---- */

static void test_fw_mismatch_trigger(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    snprintf(m->nics[1].fw_ver, sizeof(m->nics[1].fw_ver), "28.36.1010");
    fx_refinalize(m);
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "fw-mismatch", TOPO_SEV_WARN), 1);
    const struct topo_finding *x = fx_find(&f, "fw-mismatch");
    HAS(x->object, "ConnectX-7");
    HAS(x->msg, "15b3:1021");
    HAS(x->msg, "28.39.1002 (mlx5_0)");
    HAS(x->msg, "28.36.1010 (mlx5_1)");
    assert_true(x->pci == FX_NIC0 || x->pci == FX_NIC1);
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_fw_mismatch_healthy(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    /* A ConnectX-6 next to a ConnectX-7: different models run different firmware. */
    m->pci[FX_NIC1].device_id = 0x101b;
    snprintf(m->nics[1].fw_ver, sizeof(m->nics[1].fw_ver), "20.38.1002");
    fx_refinalize(m);
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "fw-mismatch", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 11. memlock ---- */

static void test_memlock_trigger(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->host.memlock_soft = m->host.memlock_hard = 8u << 20;
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "memlock", TOPO_SEV_WARN), 1);
    const struct topo_finding *x = fx_find(&f, "memlock");
    HAS(x->msg, "8 MiB");
    HAS(x->remedy, "limits.conf");
    HAS(x->remedy, "ulimit -l unlimited");
    assert_int_equal(x->pci, -1);
    topo_findings_free(&f);
    /* Hard limit unlimited: the user can raise the soft limit alone. */
    m->host.memlock_soft = 64u << 10;
    m->host.memlock_hard = UINT64_MAX;
    lint(m, &f);
    x = fx_find(&f, "memlock");
    assert_non_null(x);
    HAS(x->msg, "64 KiB");
    HAS(x->remedy, "ulimit -l unlimited");
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_memlock_healthy(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    struct topo_findings f;
    static const struct {
        uint64_t soft;
        int root, cap;
    } ok[] = {
        {UINT64_MAX, TOPO_NO, TOPO_NO}, /* unlimited */
        {1ull << 30, TOPO_NO, TOPO_NO}, /* 1 GiB */
        {64u << 10, TOPO_YES, TOPO_NO}, /* root */
        {64u << 10, TOPO_NO, TOPO_YES}, /* CAP_IPC_LOCK */
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        m->host.memlock_soft = ok[i].soft;
        m->host.is_root = ok[i].root;
        m->host.cap_ipc_lock = ok[i].cap;
        lint(m, &f);
        assert_int_equal(fx_count(&f, "memlock", -1), 0);
        topo_findings_free(&f);
    }
    /* A node without RDMA devices does not register memory. */
    m->host.memlock_soft = 64u << 10;
    m->host.is_root = m->host.cap_ipc_lock = TOPO_NO;
    m->nics[0].rdma_dev[0] = m->nics[1].rdma_dev[0] = '\0';
    lint(m, &f);
    assert_int_equal(fx_count(&f, "memlock", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 12. gdr-missing ---- */

static void test_gdr_missing_trigger(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->host.nvidia_peermem = TOPO_NO;
    m->host.dmabuf = TOPO_NO;
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "gdr-missing", TOPO_SEV_WARN), 1);
    HAS(fx_find(&f, "gdr-missing")->remedy, "nvidia_peermem");
    topo_findings_free(&f);
    /* One fact unknown: only INFO, never a warning. */
    m->host.dmabuf = TOPO_UNKNOWN;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "gdr-missing", TOPO_SEV_WARN), 0);
    assert_int_equal(fx_count(&f, "gdr-missing", TOPO_SEV_INFO), 1);
    assert_int_equal(topo_findings_worst(&f), -1);
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_gdr_missing_healthy(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->host.nvidia_peermem = TOPO_NO;
    m->host.dmabuf = TOPO_YES; /* dma-buf alone is enough */
    struct topo_findings f;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "gdr-missing", -1), 0);
    topo_findings_free(&f);
    /* No GPUs: nothing to do. */
    m->host.dmabuf = TOPO_NO;
    m->ngpus = 0;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "gdr-missing", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- 13. acs-redirect ---- */

static void test_acs_trigger(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->pci[FX_DN0A].acs_ctrl = 0x001d; /* SV | RR | CR | UF above GPU0 */
    m->pci[FX_DN1B].acs_ctrl = 0x0004; /* RR only, above NIC1 */
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "acs-redirect", TOPO_SEV_WARN), 2);
    const struct topo_finding *x = fx_find(&f, "acs-redirect");
    assert_int_equal(x->pci, FX_DN0A);
    assert_string_equal(x->object, "0000:02:00.0");
    HAS(x->msg, "Request and Completion");
    HAS(x->msg, "GPU0-mlx5_0");
    HAS(x->remedy, "setpci -s 0000:02:00.0");
    HAS(f.v[x - f.v + 1].msg, "P2P Request redirect");
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_acs_healthy(void **state)
{
    (void)state;
    /* The healthy node has RR|CR on its root ports, above the switch the pairs share. */
    struct topo_model *m = fx_ib_node();
    struct topo_findings f;
    /* ACS bits present but not readable (no TOPO_PCI_V_ACS): not trusted. */
    m->pci[FX_DN0A].acs_ctrl = 0x001d;
    m->pci[FX_DN0A].valid &= ~(unsigned)TOPO_PCI_V_ACS;
    lint(m, &f);
    assert_int_equal(fx_count(&f, "acs-redirect", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
    /* A PHB path already goes through the root complex: redirect changes nothing. */
    m = fx_ib_node();
    nic0_on_own_root_port(m, 0x001d);
    lint(m, &f);
    assert_int_equal(fx_count(&f, "acs-redirect", -1), 0);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* ---- table, order, JSON ---- */

static void test_rule_table(void **state)
{
    (void)state;
    static const char *const expected[] = {
        "pcie-width", "pcie-speed", "nic-pcie-bottleneck", "port-state", "ib-no-sm",
        "port-rate-mismatch", "roce-no-v2-gid", "roce-mtu", "mtu-mismatch", "gpu-nic-far",
        "fw-mismatch", "memlock", "gdr-missing", "acs-redirect", "err-counter-rising",
        "err-counter-saturated", "err-counter-reset",
        /* fabric rules (topo_fablint.c; triggered in tests/fabric/test_fabric.c) */
        "port-ll-mismatch", "fabric-link-mismatch", "fabric-link-degraded", "cabling-plan",
        "route-broken", "switch-counter-rising", "switch-counter-saturated", "switch-xmit-wait"};
    assert_int_equal(topo_lint_nrules, (int)(sizeof(expected) / sizeof(expected[0])));
    for (int i = 0; i < topo_lint_nrules; i++) {
        assert_string_equal(topo_lint_rules[i].id, expected[i]);
        assert_non_null(topo_lint_rules[i].what);
        assert_true(strlen(topo_lint_rules[i].what) > 10);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(topo_lint_rules[i].id, topo_lint_rules[j].id);
        /* Every rule has its check; the rows of one check are adjacent (it runs once). */
        assert_non_null(topo_lint_rules[i].check);
        for (int j = 0; j + 1 < i; j++)
            if (topo_lint_rules[j].check == topo_lint_rules[i].check)
                assert_ptr_equal(topo_lint_rules[j + 1].check, topo_lint_rules[i].check);
    }
}

static void test_sorted_errors_first(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->pci[FX_NIC1].cur_width = 4;      /* warning */
    m->ports[1].state = TOPO_PORT_DOWN; /* error, found after the PCIe rules */
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_true(f.n >= 4);
    assert_string_equal(f.v[0].rule, "port-state");
    assert_int_equal(f.v[0].sev, TOPO_SEV_ERROR);
    assert_int_equal(f.v[f.n - 1].sev, TOPO_SEV_INFO);
    assert_int_equal(topo_findings_worst(&f), TOPO_SEV_ERROR);
    topo_findings_free(&f);
    topo_model_free(m);
}

/* Save as a snapshot, load it back as a user's --input would, lint both the same. */
static struct topo_model *round_trip(const struct topo_model *m)
{
    cJSON *doc = topo_json_from_model(m);
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    struct topo_model *b = topo_model_new();
    struct ft_err err = {0};
    assert_int_equal(topo_json_to_model(doc, b, "round-trip.json", &err), 0);
    cJSON_Delete(doc);
    topo_model_finalize(b);
    return b;
}

static void test_json_round_trip_lints_the_same(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    m->pci[FX_NIC0].cur_width = 8;
    m->ports[1].active_mtu = 2048;
    m->pci[FX_DN0A].acs_ctrl = 0x000c;
    m->host.memlock_soft = m->host.memlock_hard = 8u << 20;
    snprintf(m->nics[1].fw_ver, sizeof(m->nics[1].fw_ver), "28.36.1010");
    fx_refinalize(m);
    struct topo_model *b = round_trip(m);
    struct topo_findings fa, fb;
    lint(m, &fa);
    lint(b, &fb);
    fx_dump(&fb);
    assert_int_equal(fa.n, fb.n);
    for (int i = 0; i < fa.n; i++) {
        assert_string_equal(fa.v[i].rule, fb.v[i].rule);
        assert_string_equal(fa.v[i].msg, fb.v[i].msg);
        assert_int_equal(fa.v[i].pci, fb.v[i].pci);
        assert_int_equal(fa.v[i].port, fb.v[i].port);
    }
    assert_int_equal(fx_count(&fb, "pcie-width", -1), 1);
    assert_int_equal(fx_count(&fb, "mtu-mismatch", -1), 1);
    assert_int_equal(fx_count(&fb, "acs-redirect", -1), 1);
    assert_int_equal(fx_count(&fb, "memlock", -1), 1);
    assert_int_equal(fx_count(&fb, "fw-mismatch", -1), 1);
    topo_findings_free(&fa);
    topo_findings_free(&fb);
    topo_model_free(b);
    topo_model_free(m);
}

/* Hand-written snapshots in tests/lint/data, loaded through topo_load like
 * 'fabtop topo --input FILE --lint'. */
static struct topo_model *load_data(const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", LINT_DATA_DIR, name);
    struct topo_load_opts o = {.input = path, .no_verbs = true, .no_gpu_libs = true};
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    int rc = topo_load(&o, &m, &err);
    if (rc < 0)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    return m;
}

static void test_json_file_x8_gen4_ndr(void **state)
{
    (void)state;
    struct topo_model *m = load_data("x8-gen4-ndr.json");
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "nic-pcie-bottleneck", TOPO_SEV_WARN), 1);
    HAS(fx_find(&f, "nic-pcie-bottleneck")->msg, "126 Gb/s");
    assert_int_equal(topo_findings_worst(&f), TOPO_SEV_WARN);
    assert_int_equal(f.n, 1);
    topo_findings_free(&f);
    topo_model_free(m);
}

static void test_json_file_roce_small_mtu(void **state)
{
    (void)state;
    struct topo_model *m = load_data("roce-mtu1500.json");
    struct topo_findings f;
    lint(m, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "roce-mtu", TOPO_SEV_WARN), 1);
    HAS(fx_find(&f, "roce-mtu")->msg, "MTU 1500");
    assert_int_equal(fx_count(&f, "roce-no-v2-gid", TOPO_SEV_WARN), 0);
    assert_int_equal(f.n, 1);
    topo_findings_free(&f);
    topo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_healthy_ib_node),
        cmocka_unit_test(test_healthy_roce_node),
        cmocka_unit_test(test_pcie_width_trigger),
        cmocka_unit_test(test_pcie_width_dual_function_once),
        cmocka_unit_test(test_pcie_width_healthy),
        cmocka_unit_test(test_pcie_speed_trigger_is_info),
        cmocka_unit_test(test_pcie_speed_healthy),
        cmocka_unit_test(test_nic_pcie_trigger_gen4_x8),
        cmocka_unit_test(test_nic_pcie_trigger_gen2_and_parent_cap),
        cmocka_unit_test(test_nic_pcie_healthy),
        cmocka_unit_test(test_port_state_trigger),
        cmocka_unit_test(test_port_state_healthy),
        cmocka_unit_test(test_ib_no_sm_trigger),
        cmocka_unit_test(test_ib_no_sm_healthy),
        cmocka_unit_test(test_port_rate_trigger),
        cmocka_unit_test(test_port_rate_healthy),
        cmocka_unit_test(test_roce_gid_trigger),
        cmocka_unit_test(test_roce_gid_healthy),
        cmocka_unit_test(test_roce_mtu_trigger),
        cmocka_unit_test(test_roce_mtu_healthy),
        cmocka_unit_test(test_mtu_mismatch_trigger),
        cmocka_unit_test(test_mtu_mismatch_healthy),
        cmocka_unit_test(test_gpu_nic_far_trigger),
        cmocka_unit_test(test_gpu_nic_far_healthy),
        cmocka_unit_test(test_fw_mismatch_trigger),
        cmocka_unit_test(test_fw_mismatch_healthy),
        cmocka_unit_test(test_memlock_trigger),
        cmocka_unit_test(test_memlock_healthy),
        cmocka_unit_test(test_gdr_missing_trigger),
        cmocka_unit_test(test_gdr_missing_healthy),
        cmocka_unit_test(test_acs_trigger),
        cmocka_unit_test(test_acs_healthy),
        cmocka_unit_test(test_rule_table),
        cmocka_unit_test(test_sorted_errors_first),
        cmocka_unit_test(test_json_round_trip_lints_the_same),
        cmocka_unit_test(test_json_file_x8_gen4_ndr),
        cmocka_unit_test(test_json_file_roce_small_mtu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
