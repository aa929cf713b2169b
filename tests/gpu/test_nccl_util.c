/* test_nccl_util: what the NCCL transport computes without a GPU: bus-bandwidth factors and
 * algbw/busbw against hand-computed values (nccl-tests' method), size layouts, names, the
 * NCCL debug-output parser on real-format lines, the correctness-check pattern against a host
 * simulation of every collective, half/bfloat16 conversions, mix validation through the
 * transport table, the shipped nccl presets, and a clear reason when CUDA/NCCL is missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonutil.h"
#include "engine/xport/nccl/cudart.h"
#include "engine/flow/mix.h"
#include "engine/xport/nccl/nccl_util.h"
#include "engine/xport/xport.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1))

static void test_factors(void **state)
{
    (void)state;
    /* nccl-tests-method.md: AllReduce 2(n-1)/n; ReduceScatter, AllGather, AlltoAll (n-1)/n;
     * Broadcast, Reduce, SendRecv 1. By hand: */
    static const struct {
        enum nccl_util_coll c;
        int n;
        double f;
    } cases[] = {
        {NCCL_COLL_ALL_REDUCE, 2, 1.0},       {NCCL_COLL_ALL_REDUCE, 4, 1.5},
        {NCCL_COLL_ALL_REDUCE, 8, 1.75},      {NCCL_COLL_ALL_GATHER, 2, 0.5},
        {NCCL_COLL_ALL_GATHER, 8, 0.875},     {NCCL_COLL_REDUCE_SCATTER, 4, 0.75},
        {NCCL_COLL_REDUCE_SCATTER, 8, 0.875}, {NCCL_COLL_ALLTOALL, 2, 0.5},
        {NCCL_COLL_ALLTOALL, 16, 0.9375},     {NCCL_COLL_BROADCAST, 8, 1.0},
        {NCCL_COLL_REDUCE, 8, 1.0},           {NCCL_COLL_SENDRECV, 2, 1.0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        NEAR(nccl_util_busbw_factor(cases[i].c, cases[i].n), cases[i].f);
    assert_string_equal(nccl_util_busbw_formula(NCCL_COLL_ALL_REDUCE), "2(n-1)/n");
    assert_string_equal(nccl_util_busbw_formula(NCCL_COLL_ALLTOALL), "(n-1)/n");
    assert_string_equal(nccl_util_busbw_formula(NCCL_COLL_BROADCAST), "1");

    /* GB/s are 10^9 bytes/s: 1 GiB in 3.425 ms is 313.5 GB/s algbw; on 2 ranks all_reduce
     * busbw equals algbw, on 8 ranks it is 1.75 x. */
    double alg, bus;
    nccl_util_bw(NCCL_COLL_ALL_REDUCE, 1073741824ull, 2, 0.003425, &alg, &bus);
    NEAR(alg, 1073741824.0 / 1e9 / 0.003425);
    assert_true(alg > 313.4 && alg < 313.6);
    NEAR(bus, alg);
    nccl_util_bw(NCCL_COLL_ALL_REDUCE, 1073741824ull, 8, 0.003425, &alg, &bus);
    NEAR(bus, 1.75 * alg);
    /* all_gather of S = 64 MiB over 4 ranks in 1 ms: algbw 67.108864, busbw x 3/4. */
    nccl_util_bw(NCCL_COLL_ALL_GATHER, 64ull << 20, 4, 0.001, &alg, &bus);
    NEAR(alg, 67.108864);
    NEAR(bus, 50.331648);
    /* 8 B in 12.3 us: 0.00065 GB/s. */
    nccl_util_bw(NCCL_COLL_ALL_REDUCE, 8, 2, 12.3e-6, &alg, &bus);
    NEAR(alg, 8 / 1e9 / 12.3e-6);
    /* No time: 0, not infinity. */
    nccl_util_bw(NCCL_COLL_ALL_REDUCE, 8, 2, 0, &alg, &bus);
    assert_true(alg == 0 && bus == 0);
}

static void test_layout(void **state)
{
    (void)state;
    struct nccl_util_layout l;
    /* all_reduce: S per rank. */
    assert_int_equal(nccl_util_layout(NCCL_COLL_ALL_REDUCE, 65536, 4, 2, &l), 0);
    assert_int_equal(l.count, 16384);
    assert_int_equal(l.bytes, 65536);
    assert_int_equal(l.send_bytes, 65536);
    assert_int_equal(l.recv_bytes, 65536);
    assert_int_equal(l.elements, 16384);
    /* 8 B float: 2 elements; 10 B rounds down to 8. */
    assert_int_equal(nccl_util_layout(NCCL_COLL_ALL_REDUCE, 8, 4, 2, &l), 0);
    assert_int_equal(l.count, 2);
    assert_int_equal(nccl_util_layout(NCCL_COLL_ALL_REDUCE, 10, 4, 2, &l), 0);
    assert_int_equal(l.bytes, 8);
    /* all_gather: S is the gathered total; each rank sends S/n. */
    assert_int_equal(nccl_util_layout(NCCL_COLL_ALL_GATHER, 1 << 20, 4, 2, &l), 0);
    assert_int_equal(l.count, 131072);
    assert_int_equal(l.send_bytes, 512 << 10);
    assert_int_equal(l.recv_bytes, 1 << 20);
    assert_int_equal(l.bytes, 1 << 20);
    /* reduce_scatter: S is the total input; each rank receives S/n. */
    assert_int_equal(nccl_util_layout(NCCL_COLL_REDUCE_SCATTER, 1 << 20, 2, 4, &l), 0);
    assert_int_equal(l.count, 131072);
    assert_int_equal(l.send_bytes, 1 << 20);
    assert_int_equal(l.recv_bytes, 256 << 10);
    /* alltoall: S is each rank's buffer, count per peer. */
    assert_int_equal(nccl_util_layout(NCCL_COLL_ALLTOALL, 1 << 20, 4, 4, &l), 0);
    assert_int_equal(l.count, 65536);
    assert_int_equal(l.send_bytes, 1 << 20);
    assert_int_equal(l.recv_bytes, 1 << 20);
    /* Rounded to whole chunks: 1000 B of float over 3 ranks = 83 per rank, 996 B. */
    assert_int_equal(nccl_util_layout(NCCL_COLL_ALL_GATHER, 1000, 4, 3, &l), 0);
    assert_int_equal(l.count, 83);
    assert_int_equal(l.bytes, 996);
    /* Too small: less than one element per rank. */
    assert_int_equal(nccl_util_layout(NCCL_COLL_ALL_GATHER, 8, 4, 4, &l), -EINVAL);
    assert_int_equal(nccl_util_layout(NCCL_COLL_ALL_REDUCE, 2, 4, 2, &l), -EINVAL);
    /* broadcast, reduce, sendrecv: like all_reduce. */
    assert_int_equal(nccl_util_layout(NCCL_COLL_SENDRECV, 4096, 2, 8, &l), 0);
    assert_int_equal(l.count, 2048);
    assert_int_equal(l.recv_bytes, 4096);
}

static void test_names(void **state)
{
    (void)state;
    assert_int_equal(nccl_util_coll_parse("all_reduce"), NCCL_COLL_ALL_REDUCE);
    assert_int_equal(nccl_util_coll_parse("AllReduce"), NCCL_COLL_ALL_REDUCE);
    assert_int_equal(nccl_util_coll_parse("all-gather"), NCCL_COLL_ALL_GATHER);
    assert_int_equal(nccl_util_coll_parse("reducescatter"), NCCL_COLL_REDUCE_SCATTER);
    assert_int_equal(nccl_util_coll_parse("alltoall"), NCCL_COLL_ALLTOALL);
    assert_int_equal(nccl_util_coll_parse("all_to_all"), NCCL_COLL_ALLTOALL);
    assert_int_equal(nccl_util_coll_parse("send_recv"), NCCL_COLL_SENDRECV);
    assert_int_equal(nccl_util_coll_parse("broadcast"), NCCL_COLL_BROADCAST);
    assert_int_equal(nccl_util_coll_parse("gather"), -1);
    assert_int_equal(nccl_util_coll_parse(NULL), -1);
    for (int c = 0; c < NCCL_COLL_COUNT; c++)
        assert_int_equal(nccl_util_coll_parse(nccl_util_coll_name((enum nccl_util_coll)c)), c);
    assert_string_equal(nccl_util_coll_func(NCCL_COLL_REDUCE_SCATTER), "ReduceScatter");
    assert_null(nccl_util_coll_func(NCCL_COLL_SENDRECV));

    const struct nccl_util_dtype *t = nccl_util_dtype_find("bf16");
    assert_non_null(t);
    assert_string_equal(t->name, "bfloat16");
    assert_int_equal(t->nccl, 9);
    assert_int_equal(t->size, 2);
    assert_int_equal(nccl_util_dtype_find("fp32")->nccl, 7);
    assert_int_equal(nccl_util_dtype_find("float16")->nccl, 6);
    assert_int_equal(nccl_util_dtype_find("double")->size, 8);
    assert_int_equal(nccl_util_dtype_find("uint8")->nccl, 1);
    assert_false(nccl_util_dtype_find("fp8_e4m3")->checkable);
    assert_null(nccl_util_dtype_find("complex"));
    assert_int_equal(nccl_util_redop_parse("sum"), 0);
    assert_int_equal(nccl_util_redop_parse("AVG"), 4);
    assert_int_equal(nccl_util_redop_parse("xor"), -1);
    assert_string_equal(nccl_util_redop_name(2), "max");
}

static void test_log_parser(void **state)
{
    (void)state;
    /* Lines as NCCL 2.2x writes them to NCCL_DEBUG_FILE (host:pid:tid [cudaDev] NCCL INFO). */
    static const char *const lines[] = {
        "node7:4242:4242 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n",
        "node7:4242:4242 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.7<0>\n",
        "node7:4242:4250 [0] NCCL INFO comm 0x55d0c1b0e8a0 rank 0 nRanks 2 nNodes 1 "
        "localRanks 2 localRank 0 MNNVL 0\n",
        "node7:4242:4250 [0] NCCL INFO NVLS multicast support is not available on dev 0 "
        "(NVLS_NCHANNELS 16)\n",
        "node7:4242:4250 [0] NCCL INFO comm 0x55d0c1b0e8a0, 24 coll channels, 24 collnet "
        "channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer\n",
        "node7:4242:4261 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n",
        "node7:4242:4261 [1] NCCL INFO Channel 01/0 : 1[1] -> 0[0] via P2P/CUMEM/read\n",
        "node7:4242:4261 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n",
        "node7:4242:4242 [0] NCCL INFO AllReduce: 65536 Bytes -> Algo RING proto LL "
        "channel{Lo..Hi}={0..7}\n",
        "node7:4242:4242 [0] NCCL INFO AllReduce: 1073741824 Bytes -> Algo RING proto SIMPLE "
        "channel{Lo..Hi}={0..23} cgaClusterSize 4\n",
        "node7:4242:4242 [0] NCCL INFO AllReduce: 65536 Bytes -> Algo TREE proto LL128 "
        "channel{Lo..Hi}={0..1}\n",
        "node7:4242:4242 [0] NCCL INFO AllGather: 4096 Bytes -> Algo RING proto LL "
        "channel{Lo..Hi}={0..0}\n",
        "node7:4242:4242 [0] NCCL INFO Init timings - ncclCommInitRankConfig: rank 0 nranks 2 "
        "total 0.41\n",
        "\n",
        "node7:4242:4290 [0] transport/net_socket.cc:538 NCCL WARN NET/Socket : peer "
        "127.0.0.1<43215> closed the connection\n",
        "not an NCCL line at all\n",
        "node7:4242:4242 [0] NCCL INFO AllReduce: many Bytes -> Algo X proto Y\n",
    };
    struct nccl_util_log l;
    nccl_util_log_init(&l);
    int recognised = 0;
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        recognised += nccl_util_log_line(&l, lines[i]);
    assert_int_equal(recognised, 12);
    assert_string_equal(l.version, "2.28.9+cuda13.0");
    assert_int_equal(l.nranks, 2);
    assert_int_equal(l.nnodes, 1);
    assert_int_equal(l.nvls, 0);
    assert_int_equal(l.coll_channels, 24);
    assert_int_equal(l.nvls_channels, 0);
    assert_int_equal(l.p2p_channels, 32);
    assert_int_equal(l.ntransports, 2); /* P2P/CUMEM/read once, SHM/direct/direct */
    assert_string_equal(l.transports[0], "P2P/CUMEM/read");
    assert_string_equal(l.transports[1], "SHM/direct/direct");
    assert_string_equal(l.last_warn, "NET/Socket : peer 127.0.0.1<43215> closed the connection");
    /* The latest decision per (function, size) wins. */
    const struct nccl_util_tuning *t = nccl_util_log_tuning(&l, "AllReduce", 65536);
    assert_non_null(t);
    assert_string_equal(t->algo, "TREE");
    assert_string_equal(t->proto, "LL128");
    assert_int_equal(t->ch_lo, 0);
    assert_int_equal(t->ch_hi, 1);
    t = nccl_util_log_tuning(&l, "AllReduce", 1073741824ull);
    assert_non_null(t);
    assert_string_equal(t->proto, "SIMPLE");
    assert_int_equal(t->ch_hi, 23);
    assert_non_null(nccl_util_log_tuning(&l, "AllGather", 4096));
    assert_null(nccl_util_log_tuning(&l, "AllGather", 8192));
    assert_int_equal(l.ntuning, 3);

    /* Older layout of the channel summary, the socket network, a NET connection, and the
     * version line printed without the INFO prefix. */
    nccl_util_log_init(&l);
    assert_true(nccl_util_log_line(&l, "NCCL version 2.21.5+cuda12.4"));
    assert_true(nccl_util_log_line(&l, "h:1:2 [0] NCCL INFO Using network Socket"));
    assert_true(nccl_util_log_line(&l, "h:1:2 [0] NCCL INFO 2 coll channels, 2 collnet channels, 0 "
                                       "nvls channels, 2 p2p channels, 2 p2p channels per peer"));
    assert_true(nccl_util_log_line(
        &l, "h:1:3 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0"));
    assert_true(nccl_util_log_line(&l, "h:1:3 [0] NCCL INFO NVLS multicast support is available on "
                                       "dev 0 (NVLS_NCHANNELS 16)"));
    assert_string_equal(l.version, "2.21.5+cuda12.4");
    assert_string_equal(l.network, "Socket");
    assert_int_equal(l.coll_channels, 2);
    assert_int_equal(l.p2p_channels, 2);
    assert_string_equal(l.transports[0], "NET/Socket/0");
    assert_int_equal(l.nvls, 1);
    assert_int_equal(l.nranks, -1);

    /* From a file, with an over-long line in the middle. */
    char path[] = "/tmp/fabtop-nccl-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(lines[0], f);
    for (int i = 0; i < 3000; i++)
        fputc('x', f);
    fputc('\n', f);
    fputs(lines[8], f);
    fclose(f);
    nccl_util_log_init(&l);
    assert_int_equal(nccl_util_log_file(&l, path), 0);
    assert_string_equal(l.version, "2.28.9+cuda13.0");
    assert_non_null(nccl_util_log_tuning(&l, "AllReduce", 65536));
    unlink(path);
    assert_int_equal(nccl_util_log_file(&l, "/nonexistent/nccl.log"), -ENOENT);
}

static void test_half_bf16(void **state)
{
    (void)state;
    assert_int_equal(nccl_util_float_to_half(1.0f), 0x3c00);
    assert_int_equal(nccl_util_float_to_half(-2.0f), 0xc000);
    assert_int_equal(nccl_util_float_to_half(0.5f), 0x3800);
    assert_int_equal(nccl_util_float_to_half(65504.0f), 0x7bff);
    assert_int_equal(nccl_util_float_to_half(1e6f), 0x7c00); /* overflow: infinity */
    assert_int_equal(nccl_util_float_to_half(0.0f), 0);
    assert_int_equal(nccl_util_float_to_half(5.9604645e-8f), 0x0001); /* smallest subnormal */
    /* 2049 is not representable: ties to even gives 2048. */
    assert_int_equal(nccl_util_float_to_half(2049.0f), nccl_util_float_to_half(2048.0f));
    assert_true(nccl_util_half_to_float(0x3c00) == 1.0f);
    assert_true(nccl_util_half_to_float(0x7bff) == 65504.0f);
    assert_true(nccl_util_half_to_float(0x0001) == 5.9604645e-8f);
    for (int v = -2048; v <= 2048; v++)
        assert_true(nccl_util_half_to_float(nccl_util_float_to_half((float)v)) == (float)v);
    assert_int_equal(nccl_util_float_to_bf16(1.0f), 0x3f80);
    assert_int_equal(nccl_util_float_to_bf16(-3.0f), 0xc040);
    assert_true(nccl_util_bf16_to_float(0x3f80) == 1.0f);
    for (int v = -256; v <= 256; v++)
        assert_true(nccl_util_bf16_to_float(nccl_util_float_to_bf16((float)v)) == (float)v);
    /* 257 rounds to even (256). */
    assert_true(nccl_util_bf16_to_float(nccl_util_float_to_bf16(257.0f)) == 256.0f);
}

/* ---- the check pattern against an independent host simulation of each collective ---- */

static double ld(const struct nccl_util_dtype *t, const void *b, uint64_t i)
{
    switch (t->size) {
    case 2:
        return t->nccl == 6 ? nccl_util_half_to_float(((const uint16_t *)b)[i])
                            : nccl_util_bf16_to_float(((const uint16_t *)b)[i]);
    case 4:
        return t->is_float ? ((const float *)b)[i] : ((const int32_t *)b)[i];
    case 8:
        return ((const double *)b)[i];
    default:
        return ((const int8_t *)b)[i];
    }
}

static void st(const struct nccl_util_dtype *t, void *b, uint64_t i, double v)
{
    switch (t->size) {
    case 2:
        ((uint16_t *)b)[i] =
            t->nccl == 6 ? nccl_util_float_to_half((float)v) : nccl_util_float_to_bf16((float)v);
        break;
    case 4:
        if (t->is_float)
            ((float *)b)[i] = (float)v;
        else
            ((int32_t *)b)[i] = (int32_t)v;
        break;
    case 8:
        ((double *)b)[i] = v;
        break;
    default:
        ((int8_t *)b)[i] = (int8_t)v;
        break;
    }
}

static double red(int op, double a, double b)
{
    switch (op) {
    case 1:
        return a * b;
    case 2:
        return a > b ? a : b;
    case 3:
        return a < b ? a : b;
    default:
        return a + b;
    }
}

/* What each rank's receive buffer holds after the collective, computed from the send buffers
 * the way the collective is defined (not through nccl_util_check_expected). */
static void simulate(enum nccl_util_coll c, const struct nccl_util_dtype *t, int op, int n,
                     int root, const struct nccl_util_layout *l, void **send, void **recv)
{
    uint64_t cnt = l->count;
    for (int r = 0; r < n; r++) {
        memset(recv[r], 0, l->recv_bytes);
        for (uint64_t i = 0; i < l->recv_bytes / (uint64_t)t->size; i++) {
            double v = 0;
            switch (c) {
            case NCCL_COLL_ALL_REDUCE:
            case NCCL_COLL_REDUCE:
                if (c == NCCL_COLL_REDUCE && r != root)
                    continue;
                v = ld(t, send[0], i);
                for (int q = 1; q < n; q++)
                    v = red(op, v, ld(t, send[q], i));
                if (op == 4)
                    v /= n;
                break;
            case NCCL_COLL_BROADCAST:
                v = ld(t, send[root], i);
                break;
            case NCCL_COLL_ALL_GATHER:
                v = ld(t, send[i / cnt], i % cnt);
                break;
            case NCCL_COLL_REDUCE_SCATTER:
                v = ld(t, send[0], (uint64_t)r * cnt + i);
                for (int q = 1; q < n; q++)
                    v = red(op, v, ld(t, send[q], (uint64_t)r * cnt + i));
                if (op == 4)
                    v /= n;
                break;
            case NCCL_COLL_ALLTOALL:
                v = ld(t, send[i / cnt], (uint64_t)r * cnt + i % cnt);
                break;
            case NCCL_COLL_SENDRECV:
                v = ld(t, send[(r + n - 1) % n], i);
                break;
            default:
                break;
            }
            st(t, recv[r], i, v);
        }
    }
}

static void test_check_pattern(void **state)
{
    (void)state;
    static const char *const types[] = {"float", "half", "bfloat16", "double", "int32", "int8"};
    for (int c = 0; c < NCCL_COLL_COUNT; c++)
        for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++)
            for (int n = 2; n <= 4; n++)
                for (int op = 0; op < 5; op++) {
                    const struct nccl_util_dtype *t = nccl_util_dtype_find(types[ti]);
                    if (!nccl_util_coll_reduces((enum nccl_util_coll)c) && op)
                        continue;
                    if (op == 4 && !t->is_float)
                        continue;
                    int root = n - 1;
                    struct nccl_util_layout l;
                    assert_int_equal(nccl_util_layout((enum nccl_util_coll)c, 1000, t->size, n, &l),
                                     0);
                    void *send[4], *recv[4];
                    for (int r = 0; r < n; r++) {
                        send[r] = calloc(1, l.send_bytes);
                        recv[r] = calloc(1, l.recv_bytes);
                        uint64_t ne = l.send_bytes / (uint64_t)t->size;
                        /* in two chunks, as the transport fills large buffers */
                        nccl_util_check_fill(t, op, r, send[r], 0, ne / 2);
                        nccl_util_check_fill(t, op, r, (char *)send[r] + ne / 2 * (uint64_t)t->size,
                                             ne / 2, ne - ne / 2);
                    }
                    simulate((enum nccl_util_coll)c, t, op, n, root, &l, send, recv);
                    for (int r = 0; r < n; r++) {
                        uint64_t ne = l.recv_bytes / (uint64_t)t->size;
                        uint64_t w = nccl_util_check_verify((enum nccl_util_coll)c, t, op, n, r,
                                                            root, &l, recv[r], 0, ne);
                        if (w)
                            fail_msg("%s %s n=%d op=%s rank %d: %llu wrong", nccl_util_coll_name(c),
                                     t->name, n, nccl_util_redop_name(op), r,
                                     (unsigned long long)w);
                        /* One corrupted element is found (where the buffer is defined), also
                         * through a verify of a sub-range. */
                        if (c == NCCL_COLL_REDUCE && r != root)
                            continue;
                        st(t, recv[r], ne - 1, ld(t, recv[r], ne - 1) + 7);
                        assert_int_equal(nccl_util_check_verify((enum nccl_util_coll)c, t, op, n, r,
                                                                root, &l, recv[r], 0, ne),
                                         1);
                        assert_int_equal(
                            nccl_util_check_verify((enum nccl_util_coll)c, t, op, n, r, root, &l,
                                                   (char *)recv[r] + (ne - 3) * (uint64_t)t->size,
                                                   ne - 3, 3),
                            1);
                    }
                    for (int r = 0; r < n; r++) {
                        free(send[r]);
                        free(recv[r]);
                    }
                }
    /* Products of many ranks stay exact: the prod pattern is 1 or 2. */
    for (uint64_t j = 0; j < 100; j++)
        assert_true(nccl_util_check_value(1, 3, j) == 1 || nccl_util_check_value(1, 3, j) == 2);
}

/* ---- mixes ---- */

static int validate_text(const char *json, struct ft_err *err)
{
    cJSON *doc = cJSON_Parse(json);
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
    const struct xport_ops *x = xport_find("nccl");
    assert_non_null(x);
    rc = 0;
    for (int i = 0; i < m.nflows && !rc; i++) {
        assert_true(x->ops & (1u << m.flows[i].op));
        rc = x->validate(&m.flows[i], err);
    }
    mix_free(&m);
    return rc;
}

#define MIX_HEAD "{\"format\":\"fabtop-mix\",\"version\":1,\"name\":\"t\",\"flows\":["
#define FLOW(extra)                                                                                \
    "{\"name\":\"f\",\"transport\":\"nccl\",\"op\":\"collective\",\"size\":\"64KiB\"" extra "}"

static void expect_invalid(const char *json, const char *needle)
{
    struct ft_err err = {0};
    int rc = validate_text(json, &err);
    if (rc != -EINVAL || !strstr(err.msg, needle))
        fail_msg("want -EINVAL with '%s', got %d '%s' for %s", needle, rc, err.msg, json);
}

static void test_validate(void **state)
{
    (void)state;
    struct ft_err err = {0};
    assert_int_equal(validate_text(MIX_HEAD FLOW("") "]}", &err), 0);
    assert_int_equal(validate_text(MIX_HEAD FLOW(",\"params\":{\"collective\":\"reduce_scatter\","
                                                 "\"dtype\":\"bf16\",\"redop\":\"max\",\"gpus\":"
                                                 "[0,1],\"graph\":true,\"check\":true,"
                                                 "\"timing\":\"events\",\"algo\":\"Ring\","
                                                 "\"proto\":\"LL\"}") "]}",
                                   &err),
                     0);
    /* A copy neighbour next to the collective. */
    assert_int_equal(validate_text(MIX_HEAD FLOW("") ",{\"name\":\"c\",\"role\":\"background\","
                                                     "\"transport\":\"nccl\",\"op\":\"copy\","
                                                     "\"size\":\"64MiB\",\"params\":{\"copy\":"
                                                     "\"both\",\"pinned\":false}}]}",
                                   &err),
                     0);
    expect_invalid(MIX_HEAD FLOW(",\"params\":{\"collective\":\"gather\"}") "]}",
                   "params.collective 'gather' is not one of");
    expect_invalid(MIX_HEAD FLOW(",\"params\":{\"dtype\":\"complex64\"}") "]}",
                   "params.dtype 'complex64' is not one of float, half");
    expect_invalid(MIX_HEAD FLOW(",\"params\":{\"redop\":\"xor\"}") "]}", "params.redop 'xor'");
    expect_invalid(MIX_HEAD FLOW(",\"params\":{\"gpus\":[0,0]}") "]}", "lists GPU 0 twice");
    expect_invalid(MIX_HEAD FLOW(",\"params\":{\"gpus\":\"some\"}") "]}",
                   "params.gpus must be \"all\" or a list");
    expect_invalid(MIX_HEAD FLOW(",\"params\":{\"colective\":\"all_reduce\"}") "]}",
                   "flows[0].params: unknown key 'colective' (did you mean 'collective'?)");
    expect_invalid(MIX_HEAD FLOW(",\"params\":{\"graph\":1}") "]}",
                   "params.graph must be true or false");
    expect_invalid(MIX_HEAD FLOW(",\"params\":{\"timing\":\"gpu\"}") "]}",
                   "params.timing must be both, events or host");
    expect_invalid(MIX_HEAD FLOW(",\"params\":{\"event_iters\":1000}") "]}",
                   "params.event_iters must be an integer from 1 to 256");
    expect_invalid(
        MIX_HEAD FLOW(",\"params\":{\"collective\":\"alltoall\",\"in_place\":true}") "]}",
        "alltoall cannot run in place");
    expect_invalid(MIX_HEAD FLOW(",\"params\":{\"dtype\":\"fp8_e4m3\",\"check\":true}") "]}",
                   "the correctness check does not support fp8_e4m3");
    expect_invalid(MIX_HEAD FLOW(",\"params\":{\"dtype\":\"int32\",\"redop\":\"avg\"}") "]}",
                   "avg needs a floating-point dtype");
    expect_invalid(MIX_HEAD FLOW(",\"concurrency\":17") "]}", "concurrency (communicators");
    expect_invalid(MIX_HEAD FLOW(",\"rate_gbps\":10") "]}", "not paced");
    expect_invalid(MIX_HEAD "{\"name\":\"f\",\"transport\":\"nccl\",\"op\":\"collective\","
                            "\"size\":{\"dist\":[[4096,1],[8192,1]]}}]}",
                   "fixed size or a sweep");
    expect_invalid(MIX_HEAD "{\"name\":\"f\",\"transport\":\"nccl\",\"op\":\"collective\","
                            "\"size\":4,\"params\":{\"dtype\":\"double\"}}]}",
                   "size 4 B is smaller than one double element (8 B)");
    expect_invalid(MIX_HEAD "{\"name\":\"c\",\"transport\":\"nccl\",\"op\":\"copy\","
                            "\"size\":4096,\"params\":{\"copy\":\"p2p\"}}]}",
                   "params.copy must be h2d, d2h or both");
    /* The transport does not take ping-pong. */
    const struct xport_ops *x = xport_find("nccl");
    assert_false(x->ops & (1u << MIX_OP_PINGPONG));
    assert_true(x->needs_peer);
}

static void test_presets(void **state)
{
    (void)state;
    static const char *const names[] = {"nccl-decode", "nccl-prefill", "nccl-contention"};
    const struct xport_ops *x = xport_find("nccl");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct mix m;
        struct ft_err err = {0};
        if (mix_load(names[i], &m, &err) < 0)
            fail_msg("%s", err.msg);
        assert_true(m.description[0] && m.lesson[0]);
        for (int f = 0; f < m.nflows; f++) {
            assert_string_equal(m.flows[f].transport, "nccl");
            if (x->validate(&m.flows[f], &err) < 0)
                fail_msg("%s: %s", names[i], err.msg);
        }
        int fg = mix_foreground(&m);
        assert_int_equal(m.flows[fg].op, MIX_OP_COLLECTIVE);
        assert_int_equal(mix_latency_kind_of(&m.flows[fg]), MIX_LAT_PER_OP);
        if (!strcmp(names[i], "nccl-decode")) {
            assert_int_equal(m.flows[fg].size.bytes[0], 16384);
            assert_int_equal(m.flows[fg].size.bytes[m.flows[fg].size.n - 1], 2u << 20);
            bool graph = false;
            assert_true(jsonutil_bool(m.flows[fg].params, "graph", &graph) && graph);
        }
        if (!strcmp(names[i], "nccl-prefill")) {
            assert_int_equal(m.flows[fg].size.bytes[0], 16u << 20);
            assert_int_equal(m.flows[fg].size.bytes[m.flows[fg].size.n - 1], 256u << 20);
        }
        if (!strcmp(names[i], "nccl-contention")) {
            assert_true(m.quiet_then_loaded);
            assert_int_equal(m.flows[fg].size.bytes[0], 65536);
            int copies = 0;
            for (int f = 0; f < m.nflows; f++)
                copies += m.flows[f].op == MIX_OP_COPY && m.flows[f].role == MIX_ROLE_BACKGROUND;
            assert_int_equal(copies, 2);
        }
        mix_free(&m);
    }
}

static void test_available_and_config(void **state)
{
    (void)state;
    /* Here the answer depends on the machine; either way it is 0 or a reason. */
    const struct xport_ops *x = xport_find("nccl");
    char why[768] = "";
    int rc = x->available(why, sizeof(why));
    if (rc < 0) {
        assert_true(strlen(why) > 20);
        assert_true(rc == -ELIBACC || rc == -ENODEV || rc == -ENOTSUP);
    }
    /* The same answer again (remembered). */
    char why2[768] = "";
    assert_int_equal(x->available(why2, sizeof(why2)), rc);
    assert_string_equal(why, why2);

    struct cudart_nccl_config c;
    cudart_nccl_config_init(&c);
    assert_int_equal(c.size, sizeof(c));
    assert_int_equal(c.magic, 0xcafebeefu);
    assert_int_equal(c.version, 22809);
    assert_int_equal(c.blocking, CUDART_NCCL_UNDEF_INT);
    assert_int_equal(c.nvlinkCentricSched, CUDART_NCCL_UNDEF_INT);
    assert_null(c.netName);
    char v[32];
    cudart_version_str(22809, true, v, sizeof(v));
    assert_string_equal(v, "2.28.9");
    cudart_version_str(2804, true, v, sizeof(v)); /* before 2.9: X*1000 + Y*100 + Z */
    assert_string_equal(v, "2.8.4");
    cudart_version_str(13000, false, v, sizeof(v));
    assert_string_equal(v, "13.0");
    cudart_version_str(12040, false, v, sizeof(v));
    assert_string_equal(v, "12.4");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factors),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_log_parser),
        cmocka_unit_test(test_half_bf16),
        cmocka_unit_test(test_check_pattern),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_available_and_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
