/* test_launch: engine/launch: the launcher read from an environment (mpirun, srun with and
 * without PMIx, none, damaged values), the rail of a local rank, the rendezvous record
 * (a round trip; every corruption and every hostile field refused, the version readable
 * across layouts), unlike nodes named, and the --groups file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "engine/launch/launch_env.h"
#include "engine/launch/launch_groups.h"
#include "engine/launch/launch_record.h"
#include "topology/topo_load.h"

/* An environment as NAME=VALUE strings ending with NULL. */
static const char *table_get(const char *name, void *ctx)
{
    size_t n = strlen(name);
    for (const char *const *e = ctx; *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

static int read_env(const char *const *vars, struct launch_env *e, struct ft_err *err)
{
    return launch_env_read(table_get, (void *)vars, e, err);
}

static void test_env(void **state)
{
    (void)state;
    struct launch_env e;
    struct ft_err err = {0};
    const char *none[] = {"HOME=/root", "SLURM_JOB_ID=7", NULL}; /* an allocation, no step */
    assert_int_equal(read_env(none, &e, &err), 0);
    assert_int_equal(e.kind, LAUNCH_NONE);
    assert_int_equal(e.rank, -1);

    const char *ompi[] = {"OMPI_COMM_WORLD_SIZE=16",
                          "OMPI_COMM_WORLD_RANK=9",
                          "OMPI_COMM_WORLD_LOCAL_RANK=1",
                          "OMPI_COMM_WORLD_LOCAL_SIZE=8",
                          "PMIX_RANK=9",
                          NULL};
    assert_int_equal(read_env(ompi, &e, &err), 0);
    assert_int_equal(e.kind, LAUNCH_MPIRUN);
    assert_int_equal(e.size, 16);
    assert_int_equal(e.rank, 9);
    assert_int_equal(e.local_rank, 1);
    assert_int_equal(e.local_size, 8);
    assert_true(e.pmix);

    const char *srun[] = {"SLURM_STEP_ID=0", "SLURM_PROCID=5", "SLURM_NTASKS=8",
                          "SLURM_LOCALID=3", "PMIX_RANK=5",    NULL};
    assert_int_equal(read_env(srun, &e, &err), 0);
    assert_int_equal(e.kind, LAUNCH_SRUN);
    assert_int_equal(e.rank, 5);
    assert_int_equal(e.size, 8);
    assert_int_equal(e.local_rank, 3);
    assert_true(e.pmix);
    const char *srun_nopmix[] = {"SLURM_STEP_ID=0", "SLURM_PROCID=0", "SLURM_NTASKS=8",
                                 "SLURM_LOCALID=0", NULL};
    assert_int_equal(read_env(srun_nopmix, &e, &err), 0);
    assert_int_equal(e.kind, LAUNCH_SRUN);
    assert_false(e.pmix);
    const char *pmix[] = {"PMIX_RANK=2", "PMIX_NAMESPACE=prterun-x", NULL};
    assert_int_equal(read_env(pmix, &e, &err), 0);
    assert_int_equal(e.kind, LAUNCH_PMIX);
    assert_int_equal(e.rank, 2);

    const char *bad[][4] = {{"OMPI_COMM_WORLD_SIZE=x", NULL},
                            {"OMPI_COMM_WORLD_SIZE=0", NULL},
                            {"OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_RANK=4", NULL},
                            /* rank 0 would refuse its record (found by fuzz_launch_env) */
                            {"OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=2",
                             "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL},
                            {"OMPI_COMM_WORLD_SIZE=99999999999", NULL},
                            {"PMIX_RANK=-1", NULL}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ft_err_clear(&err);
        assert_int_equal(read_env(bad[i], &e, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "mpirun or srun"));
    }
    char line[512];
    launch_howto(line, sizeof(line), "not started by mpirun or srun");
    assert_non_null(strstr(line, "'mpirun -np 8"));
    assert_non_null(strstr(line, "'srun --mpi=pmix"));
}

static void test_rail(void **state)
{
    (void)state;
    assert_int_equal(launch_rail(0, 8), 0);
    assert_int_equal(launch_rail(7, 8), 7);
    assert_int_equal(launch_rail(9, 8), 1); /* more ranks than NICs: shared in turn */
    assert_int_equal(launch_rail(3, 0), -1);
    assert_int_equal(launch_rail(-1, 4), 0);
    /* One rank per NIC or more: its one rail; fewer ranks than NICs: NIC i to the rank
     * i % local_size, so one rank per node has them all. */
    assert_int_equal(launch_rails(3, 8, 8), 1u << 3);
    assert_int_equal(launch_rails(9, 16, 8), 1u << 1);
    assert_int_equal(launch_rails(0, 1, 4), 0xfu);
    assert_int_equal(launch_rails(1, 2, 4), (1u << 1) | (1u << 3));
    assert_int_equal(launch_rails(0, 2, 3), (1u << 0) | (1u << 2));
    assert_int_equal(launch_rails(0, 1, 0), 0u);
    assert_int_equal(launch_rails(-1, -1, 4), 1u);
}

static void sample(struct launch_record *r, int rank)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->version, sizeof(r->version), "0.1.0");
    r->layout = LAUNCH_LAYOUT;
    r->rank = (uint32_t)rank;
    r->size = 4;
    snprintf(r->hostname, sizeof(r->hostname), "rk-h%d", rank + 1);
    r->local_rank = 1;
    r->local_size = 2;
    r->rail = 1;
    r->ngpus = 8;
    r->nccl_gpus = 8;
    snprintf(r->nccl_gpu, sizeof(r->nccl_gpu), "0000:1a:00.0");
    r->nics_total = r->nnics = 2;
    for (int i = 0; i < 2; i++) {
        struct launch_nic *n = &r->nics[i];
        snprintf(n->model, sizeof(n->model), "MT2910 Family [ConnectX-7]");
        snprintf(n->firmware, sizeof(n->firmware), "28.40.1000");
        snprintf(n->rdma_dev, sizeof(n->rdma_dev), "mlx5_%d", i);
        snprintf(n->netdev, sizeof(n->netdev), "eth%d", i);
        n->link_layer = TOPO_LL_ETHERNET;
        n->mtu = 9000;
        n->ib_mtu = 4096;
        n->rate_mbps = 400000;
        snprintf(n->addr, sizeof(n->addr), "10.0.%d.%d", i, rank + 1);
    }
}

/* Recompute the checksum, as a hostile sender would. */
static void reseal(unsigned char *slot)
{
    crypto_generichash(slot + LAUNCH_SLOT - LAUNCH_SUM, LAUNCH_SUM, slot, LAUNCH_SLOT - LAUNCH_SUM,
                       NULL, 0);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Offsets of layout 2 (launch_record.h). */
#define O_HOST   64
#define O_LOCAL  (O_HOST + 64)
#define O_RAIL   (O_LOCAL + 8)
#define O_NGPUS  (O_RAIL + 4)
#define O_NTOTAL (O_NGPUS + 4)
#define O_NNICS  (O_NTOTAL + 4)
#define O_NCCL   (O_NNICS + 6)      /* after the control port */
#define O_NIC0   (O_NNICS + 8 + 16) /* after the NCCL GPU count and its bus id */
#define O_LL0    (O_NIC0 + 64 + 32 + 32 + 32)

static void test_record_roundtrip(void **state)
{
    (void)state;
    struct launch_record a, b;
    unsigned char slot[LAUNCH_SLOT];
    struct ft_err err = {0};
    sample(&a, 2);
    assert_int_equal(launch_record_encode(&a, slot, &err), 0);
    assert_memory_equal(slot, "FTSWEEP", 8);
    assert_int_equal(launch_record_decode(slot, &b, &err), 0);
    assert_string_equal(b.version, "0.1.0");
    assert_string_equal(b.hostname, "rk-h3");
    assert_int_equal(b.rank, 2);
    assert_int_equal(b.rail, 1);
    assert_int_equal(b.ngpus, 8);
    assert_int_equal(b.nccl_gpus, 8);
    assert_string_equal(b.nccl_gpu, "0000:1a:00.0");
    assert_int_equal(b.nnics, 2);
    assert_string_equal(b.nics[1].netdev, "eth1");
    assert_string_equal(b.nics[1].addr, "10.0.1.3");
    assert_int_equal(b.nics[0].mtu, 9000);
    assert_int_equal(b.nics[0].rate_mbps, 400000);
    assert_int_equal(memcmp(&a.nics, &b.nics, sizeof(a.nics)), 0);
    /* A field too long for the layout is refused, never cut. */
    memset(a.hostname, 'h', sizeof(a.hostname));
    assert_int_equal(launch_record_encode(&a, slot, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "hostname"));
}

/* Encode the sample, let damage() change the slot, reseal when asked; decode must refuse
 * with a message holding want. */
static void refused(void (*damage)(unsigned char *), int seal, int code, const char *want)
{
    struct launch_record a, b;
    unsigned char slot[LAUNCH_SLOT];
    struct ft_err err = {0};
    sample(&a, 0);
    assert_int_equal(launch_record_encode(&a, slot, NULL), 0);
    damage(slot);
    if (seal)
        reseal(slot);
    assert_int_equal(launch_record_decode(slot, &b, &err), code);
    if (!strstr(err.msg, want))
        fail_msg("'%s' does not say '%s'", err.msg, want);
}

static void d_flip(unsigned char *s)
{
    s[O_HOST + 2] ^= 0x01;
}
static void d_magic(unsigned char *s)
{
    s[0] = 'X';
}
static void d_host_unterminated(unsigned char *s)
{
    memset(s + O_HOST, 'a', 64);
}
static void d_host_control(unsigned char *s)
{
    s[O_HOST + 1] = '\n';
}
static void d_host_tail(unsigned char *s)
{
    s[O_HOST + 63] = 'z';
} /* after the NUL */
static void d_host_empty(unsigned char *s)
{
    memset(s + O_HOST, 0, 64);
}
static void d_nnics(unsigned char *s)
{
    put32(s + O_NNICS, 9);
}
static void d_ntotal(unsigned char *s)
{
    put32(s + O_NTOTAL, 1);
} /* fewer than listed */
static void d_rail(unsigned char *s)
{
    put32(s + O_RAIL, 2);
} /* it has NICs 0 and 1 */
static void d_ll(unsigned char *s)
{
    put32(s + O_LL0, 7);
}
static void d_gpus(unsigned char *s)
{
    put32(s + O_NGPUS, 0xffffffffu);
}
static void d_nccl(unsigned char *s)
{
    s[O_NCCL] = 0x01;
    s[O_NCCL + 1] = 0x20; /* 8193 GPUs */
}
static void d_nccl_gpu(unsigned char *s)
{
    s[O_NCCL + 2 + 4] = '\n'; /* a control byte in the bus id */
}
static void d_trailing(unsigned char *s)
{
    s[LAUNCH_SLOT - LAUNCH_SUM - 1] = 1;
}
static void d_bodylen(unsigned char *s)
{
    put32(s + 12, 100);
}
static void d_version(unsigned char *s)
{
    memset(s + 16, 'v', 32);
}
static void d_layout(unsigned char *s)
{
    s[8] = 3;
}

static void test_record_refused(void **state)
{
    (void)state;
    refused(d_flip, 0, -EBADMSG, "checksum does not match");
    refused(d_magic, 0, -EBADMSG, "no fabtop sweep magic");
    refused(d_host_unterminated, 1, -EBADMSG, "hostname");
    refused(d_host_control, 1, -EBADMSG, "hostname");
    refused(d_host_tail, 1, -EBADMSG, "hostname");
    refused(d_host_empty, 1, -EBADMSG, "hostname");
    refused(d_nnics, 1, -EBADMSG, "NIC count");
    refused(d_ntotal, 1, -EBADMSG, "NIC count");
    refused(d_rail, 1, -EBADMSG, "rail");
    refused(d_ll, 1, -EBADMSG, "NIC 0's link layer");
    refused(d_gpus, 1, -EBADMSG, "GPU count");
    refused(d_nccl, 1, -EBADMSG, "NCCL GPU count");
    refused(d_nccl_gpu, 1, -EBADMSG, "NCCL GPU's bus id");
    refused(d_trailing, 1, -EBADMSG, "past its body");
    refused(d_bodylen, 1, -EBADMSG, "body length");
    refused(d_version, 1, -EBADMSG, "fabtop version");
    /* Another layout: refused as such, its version still readable from the header. */
    refused(d_layout, 1, -EPROTO, "layout 3 from fabtop 0.1.0");
    struct launch_record a, h;
    unsigned char slot[LAUNCH_SLOT];
    sample(&a, 3);
    snprintf(a.version, sizeof(a.version), "0.2.0");
    assert_int_equal(launch_record_encode(&a, slot, NULL), 0);
    slot[8] = 2;
    memset(slot + LAUNCH_HEADER, 0xee, 200); /* a body this layout cannot read */
    assert_int_equal(launch_record_header(slot, &h, NULL), 0);
    assert_string_equal(h.version, "0.2.0");
    assert_int_equal(h.rank, 3);
    /* Random slots never decode. */
    for (int t = 0; t < 200; t++) {
        randombytes_buf(slot, sizeof(slot));
        assert_int_not_equal(launch_record_decode(slot, &h, NULL), 0);
    }
}

static void test_unlike(void **state)
{
    (void)state;
    struct launch_record r[4];
    for (int i = 0; i < 4; i++)
        sample(&r[i], i);
    snprintf(r[2].nics[1].firmware, sizeof(r[2].nics[1].firmware), "28.39.1002");
    r[2].ngpus = 7;
    r[3].nics[0].mtu = 1500;
    r[3].nccl_gpus = 0; /* CUDA or NCCL missing there */
    int u = launch_record_usual(r, 4);
    assert_true(u == 0 || u == 1);
    char buf[512];
    launch_record_diff(&r[u], &r[1], buf, sizeof(buf));
    assert_string_equal(buf, "");
    launch_record_diff(&r[u], &r[2], buf, sizeof(buf));
    assert_string_equal(buf, "GPUs 7 (others 8); NIC 1 firmware 28.39.1002 (others 28.40.1000)");
    launch_record_diff(&r[u], &r[3], buf, sizeof(buf));
    assert_string_equal(buf,
                        "GPUs NCCL can use 0 (others 8); NIC 0 MTU 1500 bytes (others 9000 bytes)");
    /* Addresses and hostnames differ on every node: not a difference of topology. */
    assert_string_not_equal(r[0].nics[0].addr, r[1].nics[0].addr);
}

/* --rails: the named netdevs in order, a virtual one with its MTU and address but no port
 * rate (veth's speed is no port's); the refusals. */
static void test_rails_named(void **state)
{
    (void)state;
    struct topo_netdev nd[2] = {0};
    snprintf(nd[0].name, sizeof(nd[0].name), "eth0");
    snprintf(nd[1].name, sizeof(nd[1].name), "eth1");
    for (int i = 0; i < 2; i++) {
        nd[i].nic = -1;
        nd[i].pci = -1;
        nd[i].valid = TOPO_NET_V_MTU | TOPO_NET_V_SPEED;
        nd[i].mtu = 1500 + i;
        nd[i].speed_mbps = 10000;
        snprintf(nd[i].addrs, sizeof(nd[i].addrs), "10.8%d.0.2 fe80::1", 6 + i);
    }
    struct topo_model m = {.netdevs = nd, .nnetdevs = 2};
    struct launch_record r;
    sample(&r, 0);
    struct ft_err err = {0};
    const char *two[] = {"eth1", "eth0"};
    assert_int_equal(launch_record_rails(&r, &m, two, 2, &err), 0);
    assert_int_equal(r.nnics, 2);
    assert_int_equal(r.nics_total, 2);
    assert_string_equal(r.nics[0].netdev, "eth1");
    assert_string_equal(r.nics[0].addr, "10.87.0.2");
    assert_int_equal(r.nics[0].mtu, 1501);
    assert_int_equal(r.nics[0].rate_mbps, 0);
    assert_string_equal(r.nics[0].rdma_dev, "");
    assert_string_equal(r.nics[1].netdev, "eth0");
    const char *none[] = {"eth0", "eth9"};
    assert_int_equal(launch_record_rails(&r, &m, none, 2, &err), -ENODEV);
    assert_string_equal(err.msg, "--rails: no netdev 'eth9' on this node");
    assert_string_equal(r.nics[0].netdev, "eth1"); /* unchanged */
    const char *twice[] = {"eth0", "eth0"};
    err = (struct ft_err){0}; /* the first error is kept: a fresh one */
    assert_int_equal(launch_record_rails(&r, &m, twice, 2, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "given twice"));
    assert_int_equal(launch_record_rails(&r, &m, two, 0, &err), -EINVAL);
}

static void test_groups(void **state)
{
    (void)state;
    struct launch_groups g;
    struct ft_err err = {0};
    assert_int_equal(launch_groups_parse("# rack 3\nleaf1 rk-h1 rk-h2  # two\n\n"
                                         "leaf2\trk-h3 rk-h4\r\n",
                                         "g.txt", &g, &err),
                     0);
    assert_int_equal(g.ngroups, 2);
    assert_int_equal(g.nhosts, 4);
    assert_int_equal(launch_groups_of(&g, "rk-h4"), 1);
    assert_int_equal(launch_groups_of(&g, "rk-h1"), 0);
    assert_int_equal(launch_groups_of(&g, "rk-h9"), -1);
    const char *job[] = {"rk-h1", "rk-h2", "rk-h3", "rk-h4", "rk-h5"};
    assert_int_equal(launch_groups_check(&g, "g.txt", job, 5, &err), 0);
    assert_int_equal(launch_groups_check(&g, "g.txt", job, 3, &err), -EBADMSG);
    assert_non_null(strstr(err.msg, "g.txt: line 4 names host 'rk-h4', which is not in this job"));
    launch_groups_free(&g);

    const char *bad[][2] = {
        {"leaf1\n", "line 1: group with no host: 'leaf1'"},
        {"a h1\nb h1\n", "line 2: a host already in a group: 'h1'"},
        {"a h1\na h2\n", "line 2: a second line for group 'a'"},
        {"a h\x01x\n", "line 1: a byte that is not printable ASCII"},
        {"# nothing\n\n", "no group in it"},
        {"a hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh\n",
         "line 1: a name longer than 63 bytes"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ft_err_clear(&err);
        assert_int_equal(launch_groups_parse(bad[i][0], "g.txt", &g, &err), -EBADMSG);
        if (!strstr(err.msg, bad[i][1]))
            fail_msg("'%s' does not say '%s'", err.msg, bad[i][1]);
        assert_int_equal(g.ngroups, 0);
    }
    ft_err_clear(&err);
    assert_int_equal(launch_groups_load("/nonexistent/groups", &g, &err), -ENOENT);
}

/* A real node's topology (a JUWELS Booster node's hwloc export in the reference data: 4 GPUs,
 * 4 RDMA NICs and 2 other network functions): its rails are its
 * RDMA NICs in the model's order, every one fits the record, and the record round-trips. */
static void test_topo_booster(void **state)
{
    (void)state;
    const char *dir = getenv("FABTOP_SHARED_DATA");
    char path[1024];
    snprintf(path, sizeof(path), "%s/hwloc-xml/psmgmt_topo.jwb0001.xml", dir ? dir : ".");
    if (access(path, R_OK)) {
        print_message("skipping: %s not here\n", path);
        skip();
    }
    struct topo_load_opts o = {.input = path, .no_verbs = true, .no_gpu_libs = true};
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    assert_int_equal(topo_load(&o, &m, &err), 0);
    struct launch_record r = {0}, b;
    snprintf(r.version, sizeof(r.version), "0.1.0");
    snprintf(r.hostname, sizeof(r.hostname), "jwb0001");
    r.local_rank = 3;
    r.local_size = 8;
    launch_record_topo(&r, m);
    r.rail = launch_rail(r.local_rank, (int)r.nics_total);
    int rdma = 0, first = -1;
    for (int i = 0; i < m->nnics; i++)
        if (m->nics[i].rdma_dev[0]) {
            if (first < 0)
                first = i;
            rdma++;
        }
    print_message("booster node: %d GPUs, %d NICs, %d RDMA; record: %u rails, %u listed\n",
                  m->ngpus, m->nnics, rdma, r.nics_total, r.nnics);
    assert_int_equal(r.ngpus, m->ngpus);
    assert_true(rdma > 0);
    assert_int_equal(r.nics_total, rdma);
    assert_true(r.nics_total < (uint32_t)m->nnics); /* the other network functions are no rails */
    assert_int_equal(r.nnics, rdma < LAUNCH_MAX_NICS ? rdma : LAUNCH_MAX_NICS);
    assert_string_equal(r.nics[0].rdma_dev, m->nics[first].rdma_dev);
    for (uint32_t i = 0; i < r.nnics; i++)
        assert_true(r.nics[i].rdma_dev[0] && r.nics[i].model[0]);
    assert_int_equal(r.rail, 3 % rdma);
    unsigned char slot[LAUNCH_SLOT];
    assert_int_equal(launch_record_encode(&r, slot, &err), 0);
    assert_int_equal(launch_record_decode(slot, &b, &err), 0);
    assert_int_equal(b.nics_total, r.nics_total);
    assert_string_equal(b.nics[r.nnics - 1].rdma_dev, r.nics[r.nnics - 1].rdma_dev);
    topo_model_free(m);
}

/* A node's own names in UTF-8 (an adapter's pci.ids name, a hostname) become printable ASCII
 * in its record, so rank 0 takes it instead of refusing the node. */
static void test_record_text(void **state)
{
    (void)state;
    struct launch_record r = {0}, b;
    struct ft_err err = {0};
    snprintf(r.version, sizeof(r.version), "0.1.0");
    r.size = 1;
    r.local_rank = r.local_size = -1;
    r.rail = 0;
    r.nics_total = r.nnics = 1;
    launch_record_text(r.hostname, sizeof(r.hostname), "n\xc5\x93ud-1");
    launch_record_text(r.nics[0].model, sizeof(r.nics[0].model), "Contr\xc3\xb4leur \t 100G");
    assert_string_equal(r.hostname, "n??ud-1");
    assert_string_equal(r.nics[0].model, "Contr??leur ? 100G");
    unsigned char slot[LAUNCH_SLOT];
    assert_int_equal(launch_record_encode(&r, slot, &err), 0);
    assert_int_equal(launch_record_decode(slot, &b, &err), 0);
    assert_string_equal(b.nics[0].model, "Contr??leur ? 100G");
    char small[4];
    launch_record_text(small, sizeof(small), "abcdef");
    assert_string_equal(small, "abc");
    launch_record_text(small, sizeof(small), NULL);
    assert_string_equal(small, "");
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env),
        cmocka_unit_test(test_rail),
        cmocka_unit_test(test_record_roundtrip),
        cmocka_unit_test(test_record_refused),
        cmocka_unit_test(test_unlike),
        cmocka_unit_test(test_rails_named),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_topo_booster),
        cmocka_unit_test(test_record_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
