/* Verbs transport pieces that need no RDMA device: the RLIMIT_MEMLOCK check (with
 * CAP_IPC_LOCK dropped), the peer-loss bound, parameter validation, the "no device" reason,
 * and GPU memory through dma-buf (exported on a machine with a CUDA GPU, else the reason). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonutil.h"
#include "engine/flow/mix.h"
#include "engine/results/results.h"
#include "topology/topo_dcb.h"
#include "engine/xport/verbs/verbs_res.h"
#include "engine/xport/xport.h"

/* Clear CAP_IPC_LOCK from the effective set (capget/capset, capabilities(7)). */
static void drop_ipc_lock(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    assert_int_equal(syscall(SYS_capget, &h, d), 0);
    d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
    assert_int_equal(syscall(SYS_capset, &h, d), 0);
}

static void memlock_check(void **state)
{
    (void)state;
    struct rlimit old, low = {64 * 1024, 64 * 1024};
    getrlimit(RLIMIT_MEMLOCK, &old);
    drop_ipc_lock();
    assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &low), 0);
    struct ft_err err = {0};
    assert_int_equal(verbs_res_memlock_check(1 << 20, &err), -ENOMEM);
    assert_non_null(strstr(err.msg, "RLIMIT_MEMLOCK is 64 KiB"));
    assert_non_null(strstr(err.msg, "1.00 MiB"));
    assert_non_null(strstr(err.msg, "ulimit -l unlimited"));
    assert_non_null(strstr(err.msg, "CAP_IPC_LOCK"));
    assert_int_equal(verbs_res_memlock_check(32 * 1024, &err), 0);
    /* Lowering a limit is always allowed; raising it back needs privilege, so only an
     * unprivileged run leaves it low (the process ends here anyway). */
    setrlimit(RLIMIT_MEMLOCK, &old);
}

static void timeout_bound(void **state)
{
    (void)state;
    /* T_o = 4.096 us x 2^timeout; (retry_cnt + 1) attempts of up to 4 T_o each. */
    assert_float_equal(verbs_res_timeout_bound_s(14, 7, "mlx5"), 8 * 4 * 4.096e-6 * 16384, 1e-9);
    assert_float_equal(verbs_res_timeout_bound_s(12, 6, "rxe"), 7 * 4 * 4.096e-6 * 4096, 1e-9);
    /* rdma_rxe: at least one 4 ms tick per attempt; retry_cnt 7 retries forever. */
    assert_float_equal(verbs_res_timeout_bound_s(1, 0, "rxe"), 4 * 0.004, 1e-12);
    assert_float_equal(verbs_res_timeout_bound_s(1, 0, "mlx5"), 4 * 8.192e-6, 1e-12);
    assert_true(isinf(verbs_res_timeout_bound_s(14, 7, "rxe")));
}

static int check_flow(const char *params, struct ft_err *err)
{
    *err = (struct ft_err){0}; /* ft_err keeps the first message */
    char js[512];
    snprintf(js, sizeof(js),
             "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"t\", \"flows\": "
             "[{\"name\": \"f\", \"transport\": \"verbs\", \"op\": \"pingpong\", \"size\": 2, "
             "\"params\": %s}]}",
             params);
    cJSON *doc = cJSON_Parse(js);
    assert_non_null(doc);
    struct mix m;
    int rc = mix_from_json(doc, "test", &m, err);
    cJSON_Delete(doc);
    if (rc < 0)
        return rc;
    rc = xport_check_params(&m, err); /* as runner_validate does first */
    if (rc < 0) {
        mix_free(&m);
        return rc;
    }
    rc = xport_find("verbs")->validate(&m.flows[0], err);
    mix_free(&m);
    return rc;
}

static void validation(void **state)
{
    (void)state;
    struct ft_err err = {0};
    assert_int_equal(check_flow("{\"verb\": \"write\", \"timeout\": 12, \"retry_cnt\": 6}", &err),
                     0);
    assert_true(check_flow("{\"verb\": \"atomic\"}", &err) < 0);
    assert_non_null(strstr(err.msg, "verb"));
    assert_true(check_flow("{\"timeout\": 32}", &err) < 0);
    assert_non_null(strstr(err.msg, "timeout 0-31"));
    assert_true(check_flow("{\"retry_cnt\": 8}", &err) < 0);
    assert_true(check_flow("{\"dscp\": 64}", &err) < 0);
    /* Numbers no int holds, or fractions: refused, never converted (undefined behaviour that
     * the sanitizer build stops on). */
    assert_true(check_flow("{\"timeout\": 4294967306}", &err) < 0);
    assert_non_null(strstr(err.msg, "timeout 0-31"));
    assert_true(check_flow("{\"sl\": -1e300}", &err) < 0);
    assert_true(check_flow("{\"depth\": 2.5}", &err) < 0);
    assert_true(check_flow("{\"gid_index\": 1e19}", &err) < 0);
    assert_non_null(strstr(err.msg, "gid_index -1-65535"));
    assert_int_equal(check_flow("{\"gid_index\": 3}", &err), 0);
    /* path_mtu: one of the IB MTUs in bytes, nothing in between, nothing a double holds only. */
    assert_int_equal(check_flow("{\"path_mtu\": 4096}", &err), 0);
    assert_int_equal(check_flow("{\"path_mtu\": 256}", &err), 0);
    assert_true(check_flow("{\"path_mtu\": 1500}", &err) < 0);
    assert_non_null(strstr(err.msg, "params.path_mtu must be 256, 512, 1024, 2048 or 4096"));
    assert_true(check_flow("{\"path_mtu\": 8192}", &err) < 0);
    assert_true(check_flow("{\"path_mtu\": 1e19}", &err) < 0);
}

static void no_device_reason(void **state)
{
    (void)state;
    char why[256] = "";
    if (access("/sys/class/infiniband", F_OK) == 0)
        skip(); /* this machine has RDMA devices: nothing to check here */
    assert_true(xport_find("verbs")->available(why, sizeof(why)) < 0);
    assert_non_null(strstr(why, "no RDMA device"));
    assert_non_null(strstr(why, "rdma_rxe"));
}

static void gpu_dmabuf(void **state)
{
    (void)state;
    struct ft_err err = {0};
    int rc = verbs_res_gpu_dmabuf_check(0, &err);
    if (rc == -ELIBACC || rc == -ENODEV) {
        /* No CUDA driver or GPU: the reason says which. */
        assert_true(strstr(err.msg, "no CUDA driver") || strstr(err.msg, "CUDA device 0"));
        skip();
    }
    if (rc == -EOPNOTSUPP) {
        assert_non_null(strstr(err.msg, "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED"));
        return;
    }
    assert_int_equal(rc, 0);
    /* The real export: device memory as a dma-buf file descriptor, ready for
     * ibv_reg_dmabuf_mr (which needs an RDMA NIC, absent on the GPU machines here). */
    struct verbs_res r = {.dmabuf_fd = -1};
    assert_int_equal(verbs_res_gpu_buffer(&r, 0, 100000, &err), 0);
    assert_true(r.buf_gpu);
    assert_true(r.dmabuf_fd >= 0);
    struct stat st;
    assert_int_equal(fstat(r.dmabuf_fd, &st), 0);
    assert_true(r.buf_addr != 0 && r.buf_addr % 65536 == 0);
    verbs_res_close(&r);
}

/* The one-line header of what was chosen: RoCE with DCB, InfiniBand, and no DCB. */
static void conditions_brief(void **state)
{
    (void)state;
    char b[200];
    cJSON *c = cJSON_Parse("{\"rdma_device\": \"mlx5_0\", \"port\": 1, \"link_layer\": "
                           "\"Ethernet (RoCE)\", \"gid_index\": 3, \"gid\": \"::ffff:10.0.0.1\", "
                           "\"gid_type\": \"RoCE v2\", \"path_mtu\": 4096, \"dscp\": 26, "
                           "\"traffic_class\": 104, \"queue_pairs\": 4, \"connection\": "
                           "\"librdmacm (rdma_cm)\", \"memory\": \"host\", \"dcb\": "
                           "{\"available\": true, \"priority\": 3, \"pfc_enabled\": true}}");
    results_conditions_brief(c, b, sizeof(b));
    assert_string_equal(b, "mlx5_0:1 RoCE v2 GID 3 ::ffff:10.0.0.1, MTU 4096, DSCP 26 (TC 104) "
                           "prio 3 PFC on, 4 QPs, rdma_cm");
    cJSON_Delete(c);
    c = cJSON_Parse("{\"rdma_device\": \"mlx5_1\", \"port\": 1, \"link_layer\": "
                    "\"InfiniBand\", \"lid\": 12, \"sl\": 2, \"path_mtu\": 4096, "
                    "\"queue_pairs\": 1, \"memory\": \"GPU (dma-buf)\"}");
    results_conditions_brief(c, b, sizeof(b));
    assert_string_equal(b, "mlx5_1:1 IB LID 12 SL 2, MTU 4096, 1 QP, GPU (dma-buf) memory");
    cJSON_Delete(c);
    c = cJSON_Parse("{\"rdma_device\": \"rxe0\", \"port\": 1, \"link_layer\": \"Ethernet "
                    "(RoCE)\", \"gid_index\": 1, \"gid\": \"::ffff:10.0.0.1\", \"gid_type\": "
                    "\"RoCE v2\", \"path_mtu\": 1024, \"dscp\": 26, \"dcb\": "
                    "{\"available\": false}}");
    results_conditions_brief(c, b, sizeof(b));
    assert_non_null(strstr(b, "DSCP 26 (TC 104) prio ? (no DCB)"));
    cJSON_Delete(c);
}

/* The peer's queue pair information is hostile input: every number whole and in range. */
static int parse_with(const char *key, const char *value)
{
    char doc[512];
    const char *fields[][2] = {{"gid", "\"fe800000000000000000000000000001\""},
                               {"addr", "\"7f0000001000\""},
                               {"qpn", "[17]"},
                               {"psn", "[4660]"},
                               {"lid", "0"},
                               {"mtu", "3"},
                               {"link_layer", "2"},
                               {"rkey", "4096"},
                               {"slot", "65536"},
                               {"nonce_addr", "\"7f0000002000\""},
                               {"nonce_rkey", "8192"}};
    size_t n = 0;
    n += (size_t)snprintf(doc + n, sizeof(doc) - n, "{");
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        n += (size_t)snprintf(doc + n, sizeof(doc) - n, "%s\"%s\": %s", i ? ", " : "", fields[i][0],
                              key && !strcmp(key, fields[i][0]) ? value : fields[i][1]);
    snprintf(doc + n, sizeof(doc) - n, "}");
    cJSON *j = cJSON_Parse(doc);
    assert_non_null(j);
    struct verbs_res_peer p;
    struct ft_err err = {0};
    int rc = verbs_res_peer_parse(j, &p, &err);
    if (rc == 0) {
        assert_int_equal(p.qpn[0], 17);
        assert_int_equal(p.psn[0], 4660);
        assert_int_equal(p.rkey, 4096);
    } else {
        assert_int_equal(rc, -EPROTO);
        assert_non_null(strstr(err.msg, "verbs: "));
    }
    cJSON_Delete(j);
    return rc;
}

static void peer_parse_ranges(void **state)
{
    (void)state;
    assert_int_equal(parse_with(NULL, NULL), 0);
    const char *bad[][2] = {{"qpn", "[1e300]"}, {"qpn", "[16777216]"}, {"psn", "[-1]"},
                            {"psn", "[0.5]"},   {"lid", "65536"},      {"mtu", "9"},
                            {"mtu", "1e20"},    {"rkey", "-1"},        {"rkey", "4294967296"},
                            {"slot", "-5"},     {"link_layer", "1e9"}, {"nonce_rkey", "1e19"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (parse_with(bad[i][0], bad[i][1]) != -EPROTO)
            fail_msg("%s = %s was accepted", bad[i][0], bad[i][1]);
    }
}

static void put_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* RoCE ECN switches from a made-up mlx5 sysfs tree: np on for priority 3, rp off; the flow's
 * priority (DSCP 26 -> 3 in the APP table) in "ecn"; unmapped, priority 0 assumed; a netdev
 * without the files (rxe, veth) is -ENOENT and no "ecn" key. */
static void roce_ecn_sysfs(void **state)
{
    (void)state;
    char root[] = "/tmp/fabtop-ecn-XXXXXX";
    assert_non_null(mkdtemp(root));
    char np[600], rp[600], cmd[700];
    snprintf(np, sizeof(np), "%s/sys/class/net/ens1f0np0/ecn/roce_np/enable", root);
    snprintf(rp, sizeof(rp), "%s/sys/class/net/ens1f0np0/ecn/roce_rp/enable", root);
    snprintf(cmd, sizeof(cmd), "mkdir -p %s %s", np, rp);
    assert_int_equal(system(cmd), 0);
    for (int p = 0; p < 8; p++) {
        char name[8];
        snprintf(name, sizeof(name), "%d", p);
        put_file(np, name, p == 3 ? "1\n" : "0\n");
        put_file(rp, name, "0\n");
    }
    struct topo_dcb_info d;
    memset(&d, 0, sizeof(d));
    for (int i = 0; i < 64; i++)
        d.dscp_prio[i] = -1;
    d.available = true;
    d.trust_dscp = true;
    d.dscp_prio[26] = 3;
    assert_int_equal(topo_dcb_ecn_read(root, "ens1f0np0", &d), 0);
    assert_true(d.ecn_known);
    assert_int_equal(d.ecn_np[3], 1);
    assert_int_equal(d.ecn_np[0], 0);
    assert_int_equal(d.ecn_rp[3], 0);
    cJSON *j = topo_dcb_json(&d, 26);
    const cJSON *e = cJSON_GetObjectItem(j, "ecn");
    double prio = -1;
    assert_true(jsonutil_num(e, "priority", &prio) && prio == 3);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "np_enabled")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(e, "rp_enabled")));
    assert_null(cJSON_GetObjectItem(e, "priority_assumed"));
    cJSON_Delete(j);
    j = topo_dcb_json(&d, 10); /* not in the APP table */
    e = cJSON_GetObjectItem(j, "ecn");
    assert_true(jsonutil_num(e, "priority", &prio) && prio == 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "priority_assumed")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(e, "np_enabled")));
    cJSON_Delete(j);
    assert_int_equal(topo_dcb_ecn_read(root, "veth0", &d), -ENOENT);
    assert_false(d.ecn_known);
    j = topo_dcb_json(&d, 26);
    assert_null(cJSON_GetObjectItem(j, "ecn"));
    cJSON_Delete(j);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(peer_parse_ranges),
        cmocka_unit_test(timeout_bound),
        cmocka_unit_test(validation),
        cmocka_unit_test(no_device_reason),
        cmocka_unit_test(gpu_dmabuf),
        cmocka_unit_test(conditions_brief),
        cmocka_unit_test(roce_ecn_sysfs),
        cmocka_unit_test(memlock_check), /* last: it leaves the process unprivileged */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
