/* test_sysfs_live: the enrichers on the running system. The sysfs enricher must list every
 * netdev but lo with its MTU and the IP addresses getifaddrs() reports, and explain a
 * missing /sys/class/infiniband; the verbs enricher applies to live loads only and, on a
 * kernel without RDMA (ibv_get_device_list fails with ENOSYS), leaves one note and no
 * change. With RDMA present, the no-RDMA checks are skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <infiniband/verbs.h>

#include "common/fsutil.h"
#include "topology/topo_enrich.h"
#include "topology/topo_load.h"

#include "sysfs_tree.h"

static void test_live_netdevs(void **state)
{
    (void)state;
    struct topo_load_opts o = {.no_verbs = true, .no_gpu_libs = true};
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    if (topo_load(&o, &m, &err) < 0)
        fail_msg("%s", err.msg);

    char **names = NULL;
    assert_true(fsutil_list("/", "sys/class/net", &names) >= 0);
    for (char **n = names; *n; n++) {
        int d = topo_model_find_netdev(m, *n);
        if (!strcmp(*n, "lo")) {
            assert_int_equal(d, -1);
            continue;
        }
        if (d < 0)
            fail_msg("netdev %s missing from the live model", *n);
        char rel[300];
        uint64_t mtu;
        snprintf(rel, sizeof(rel), "sys/class/net/%s/mtu", *n);
        if (fsutil_read_u64("/", rel, &mtu) == 0) {
            assert_true(m->netdevs[d].valid & TOPO_NET_V_MTU);
            assert_int_equal(m->netdevs[d].mtu, (int)mtu);
        }
    }
    fsutil_free_list(names);

    struct ifaddrs *ifa = NULL;
    assert_int_equal(getifaddrs(&ifa), 0);
    for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !strcmp(i->ifa_name, "lo"))
            continue;
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, ip, sizeof(ip));
        int d = topo_model_find_netdev(m, i->ifa_name);
        if (d < 0)
            continue; /* an alias label such as eth0:1 */
        if (!strstr(m->netdevs[d].addrs, ip))
            fail_msg("%s: address %s not in \"%s\"", i->ifa_name, ip, m->netdevs[d].addrs);
    }
    freeifaddrs(ifa);

    if (!fsutil_exists("/", "sys/class/infiniband"))
        assert_note(m, "no /sys/class/infiniband: no RDMA driver loaded (modprobe mlx5_ib, "
                       "or rdma_rxe for Soft-RoCE)");
    topo_model_free(m);
}

static void test_verbs_applies(void **state)
{
    (void)state;
    struct topo_model *m = topo_model_new();
    struct topo_load_opts live = {0}, nov = {.no_verbs = true}, sys = {.sysfs_root = "/x"},
                          file = {.input = "a.json"};
    assert_true(topo_enrich_verbs.applies(m, &live));
    assert_false(topo_enrich_verbs.applies(m, &nov));
    assert_false(topo_enrich_verbs.applies(m, &sys));
    assert_false(topo_enrich_verbs.applies(m, &file));
    topo_model_free(m);
}

static void test_verbs_without_rdma(void **state)
{
    (void)state;
    int num = 0;
    errno = 0;
    struct ibv_device **list = ibv_get_device_list(&num);
    int e = errno;
    if (list) {
        ibv_free_device_list(list);
        skip(); /* this kernel has RDMA: the no-RDMA path cannot be observed */
    }
    struct topo_model *m = topo_model_new();
    int n = topo_model_add_nic(m);
    snprintf(m->nics[n].rdma_dev, sizeof(m->nics[n].rdma_dev), "mlx5_0");
    int k = topo_model_add_port(m);
    m->ports[k].nic = n;
    m->ports[k].num = 1;
    m->nics[n].first_port = k;
    m->nics[n].nports = 1;
    struct topo_load_opts o = {0};
    topo_enrich_verbs.enrich(m, &o);
    assert_int_equal(m->nnotes, 1);
    if (e == ENOSYS)
        assert_note(m, "verbs: this kernel has no RDMA support (ibv_get_device_list: Function "
                       "not implemented); verbs facts skipped");
    else
        assert_note(m, "verbs facts skipped");
    assert_int_equal(m->ports[k].valid, 0);
    assert_string_equal(m->nics[n].fw_ver, "");
    topo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_netdevs),
        cmocka_unit_test(test_verbs_applies),
        cmocka_unit_test(test_verbs_without_rdma),
    };
    return cmocka_run_group_tests_name("sysfs_live", tests, NULL, NULL);
}
