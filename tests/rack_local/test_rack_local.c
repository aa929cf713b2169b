/* rack_local: fabtop sweep's runtime (engine/rack/) without MPI, on 127.0.0.1: several rank
 * nodes in this process, each a real agent with the job's key, and rank 0's conductor running
 * real TCP tests between them through the runner. A pairs sweep measures every pair once in
 * N-1 rounds; a node that dies mid-sweep is named with its tests failed or skipped and the
 * rest kept (continue), or the sweep stops cleanly (stop); a sweep request naming a peer
 * outside the job is refused; a node learns when the conductor ends, or vanishes. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "common/xalloc.h"
#include "engine/flow/mix.h"
#include "engine/rack/rack_expect.h"
#include "engine/rack/rack_node.h"
#include "engine/rack/rack_sweep.h"

#define MAXN 6

struct rack {
    int n;
    char dir[64], key_file[96];
    struct channel_key key;
    struct rack_node *node[MAXN];
    struct rack_member mem[MAXN];
    struct sweep_rank ranks[MAXN];
    char names[MAXN][16];
};

static void rack_up(struct rack *r, int n)
{
    memset(r, 0, sizeof(*r));
    r->n = n;
    snprintf(r->dir, sizeof(r->dir), "/tmp/fabtop-racklocal-XXXXXX");
    assert_non_null(mkdtemp(r->dir));
    snprintf(r->key_file, sizeof(r->key_file), "%s/key", r->dir);
    struct ft_err err = {0};
    assert_int_equal(channel_key_generate_file(r->key_file, &err), 0);
    assert_int_equal(channel_key_load(r->key_file, &r->key, &err), 0);
    for (int i = 0; i < n; i++) {
        struct rack_node_cfg c = {.listen = "127.0.0.1", .key = &r->key, .key_file = r->key_file};
        assert_int_equal(rack_node_start(&c, &r->node[i], &err), 0);
        snprintf(r->mem[i].host, sizeof(r->mem[i].host), "n%d", i);
        snprintf(r->mem[i].agent, sizeof(r->mem[i].agent), "127.0.0.1:%u",
                 rack_node_port(r->node[i]));
        snprintf(r->mem[i].local_ip, sizeof(r->mem[i].local_ip), "127.0.0.1");
        snprintf(r->names[i], sizeof(r->names[i]), "n%d", i);
        r->ranks[i] =
            (struct sweep_rank){.name = r->names[i], .rails = 1, .group = SWEEP_GROUP_UNKNOWN};
    }
}

static void rack_down(struct rack *r)
{
    for (int i = 0; i < r->n; i++)
        rack_node_stop(r->node[i]);
    unlink(r->key_file);
    rmdir(r->dir);
}

static void doc_init(struct results_sweep *d, const struct rack *r)
{
    memset(d, 0, sizeof(*d));
    d->nranks = r->n;
    d->ranks = xalloc_zero((size_t)r->n, sizeof(*d->ranks));
    for (int i = 0; i < r->n; i++) {
        d->ranks[i].rank = i;
        d->ranks[i].host = xalloc_strdup(r->names[i]);
    }
}

static struct rack_sweep_opts opts(struct rack *r, double duration)
{
    return (struct rack_sweep_opts){
        .conduct = {.members = r->mem,
                    .n = (uint32_t)r->n,
                    .key = &r->key,
                    .duration_s = duration,
                    .warmup_s = 0.1,
                    .fail_bound_s = 1.0},
        .ranks = r->ranks,
        .pairs = true,
        .no_recheck = true,
    };
}

/* What went wrong, for a failing assertion's reader. */
static void dump(const struct results_sweep *d)
{
    for (int i = 0; i < d->nevents; i++)
        fprintf(stderr, "event: %s\n", d->events[i]);
    for (int i = 0; i < d->ntests; i++)
        fprintf(stderr, "test round %d step %d %d->%d %s %s\n", d->tests[i].round, d->tests[i].step,
                d->tests[i].src, d->tests[i].dst, d->tests[i].status,
                results_str_get(&d->tests[i].error) ? results_str_get(&d->tests[i].error) : "");
}

static int count_tests(const struct results_sweep *d, const char *status)
{
    int k = 0;
    for (int i = 0; i < d->ntests; i++)
        k += !strcmp(d->tests[i].status, status);
    return k;
}

/* Every pair of 4 ranks once, in 3 rounds of 2 pairs, each with a latency step and a
 * bandwidth step per direction; every figure real. */
static void test_pairs(void **state)
{
    (void)state;
    struct rack r;
    rack_up(&r, 4);
    struct results_sweep d;
    doc_init(&d, &r);
    struct rack_sweep_opts o = opts(&r, 0.3);
    struct ft_err err = {0};
    int rc = rack_sweep_run(&o, &d, &err);
    if (rc != 0 || strcmp(results_str_get(&d.status), "ok"))
        dump(&d);
    assert_int_equal(rc, 0);
    assert_string_equal(results_str_get(&d.status), "ok");
    assert_int_equal(d.ntests, 18);
    assert_int_equal(count_tests(&d, "ok"), 18);
    double rounds = 0;
    assert_true(results_num_get(&d.rounds_done, &rounds));
    assert_int_equal((int)rounds, 3);
    assert_int_equal(d.npairs, 6);
    int seen[MAXN][MAXN] = {{0}};
    for (int i = 0; i < d.npairs; i++) {
        const struct results_sweep_pair *p = &d.pairs[i];
        double p50 = 0, p99 = 0, ab = 0, ba = 0;
        assert_true(results_num_get(&p->lat_p50_us, &p50));
        assert_true(results_num_get(&p->lat_p99_us, &p99));
        assert_true(results_num_get(&p->bw_ab_gbps, &ab));
        assert_true(results_num_get(&p->bw_ba_gbps, &ba));
        assert_true(p50 > 0 && p99 >= p50 && p50 < 100000); /* us: loopback, under 0.1 s */
        double p999 = 0;
        assert_true(results_num_get(&p->lat_p999_us, &p999) && p999 >= p99);
        assert_string_equal(results_str_get(&p->latency_kind), "half_round_trip");
        assert_true(ab > 0.01 && ba > 0.01); /* Gb/s */
        seen[p->a][p->b]++;
        seen[p->b][p->a]++;
    }
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            assert_int_equal(seen[a][b], a == b ? 0 : 1);
    /* Each rank is in one test per step: every round's tests started together. */
    for (int i = 0; i < d.ntests; i++)
        for (int j = i + 1; j < d.ntests; j++) {
            const struct results_sweep_test *x = &d.tests[i], *y = &d.tests[j];
            if (x->round != y->round || x->step != y->step)
                continue;
            assert_true(x->src != y->src && x->src != y->dst && x->dst != y->src &&
                        x->dst != y->dst);
        }
    /* The runs' host conditions went to the ranks, not into each run. */
    int with_cond = 0;
    for (int i = 0; i < d.nranks; i++)
        with_cond += d.ranks[i].conditions != NULL;
    assert_int_equal(with_cond, 4);
    for (int i = 0; i < d.ntests; i++) {
        assert_int_equal(d.tests[i].run_st, RESULTS_SET);
        assert_int_equal(d.tests[i].run.topology_st, RESULTS_ABSENT);
    }
    results_sweep_free(&d);
    rack_down(&r);
}

/* The local and peer address a TCP test's first flow used, from its conditions. */
static void flow_addrs(const struct results_sweep_test *t, const char **local, const char **peer)
{
    *local = *peer = NULL;
    assert_int_equal(t->run_st, RESULTS_SET);
    assert_true(t->run.nphases > 0 && t->run.phases[0].nflows > 0);
    const cJSON *c = t->run.phases[0].flows[0].conditions;
    *local = cJSON_GetStringValue(cJSON_GetObjectItem(c, "local_address"));
    *peer = cJSON_GetStringValue(cJSON_GetObjectItem(c, "peer_address"));
}

/* Ranks of two rails each (one rank per node, two NICs: 127.0.0.1 and 127.0.0.2 stand for
 * them), their agents on all addresses: every pair is measured on both rails in the same
 * rounds, NIC i to NIC i (rail 1's traffic leaves from and goes to 127.0.0.2), and the
 * matrix has a cell per pair and rail. */
static void test_rails(void **state)
{
    (void)state;
    struct rack r;
    rack_up(&r, 3);
    for (int i = 0; i < r.n; i++) {
        rack_node_stop(r.node[i]);
        struct ft_err err = {0};
        struct rack_node_cfg c = {.listen = "", .key = &r.key, .key_file = r.key_file};
        assert_int_equal(rack_node_start(&c, &r.node[i], &err), 0);
        unsigned port = rack_node_port(r.node[i]);
        snprintf(r.mem[i].agent, sizeof(r.mem[i].agent), "127.0.0.1:%u", port);
        for (int k = 0; k < 2; k++) {
            snprintf(r.mem[i].rails[k].agent, sizeof(r.mem[i].rails[k].agent), "127.0.0.%d:%u",
                     k + 1, port);
            snprintf(r.mem[i].rails[k].local_ip, sizeof(r.mem[i].rails[k].local_ip), "127.0.0.%d",
                     k + 1);
        }
        r.ranks[i].rails = 3;
    }
    struct results_sweep d;
    doc_init(&d, &r);
    struct rack_sweep_opts o = opts(&r, 0.2);
    struct ft_err err = {0};
    int rc = rack_sweep_run(&o, &d, &err);
    if (rc != 0 || strcmp(results_str_get(&d.status), "ok"))
        dump(&d);
    assert_int_equal(rc, 0);
    /* 3 ranks: 3 rounds (one idle each), 1 pair per round on 2 rails, 3 TCP steps. */
    assert_int_equal(d.ntests, 3 * 2 * 3);
    assert_int_equal(count_tests(&d, "ok"), d.ntests);
    assert_int_equal(d.npairs, 6);
    int cells[2] = {0, 0};
    for (int i = 0; i < d.npairs; i++) {
        const struct results_sweep_pair *p = &d.pairs[i];
        assert_true(p->rail == 0 || p->rail == 1);
        assert_string_equal(results_sweep_transport(&p->transport), "tcp");
        assert_true(p->bw_ab_gbps.st == RESULTS_SET && p->bw_ba_gbps.st == RESULTS_SET);
        cells[p->rail]++;
    }
    assert_int_equal(cells[0], 3);
    assert_int_equal(cells[1], 3);
    for (int i = 0; i < d.ntests; i++) {
        const struct results_sweep_test *t = &d.tests[i];
        const char *local, *peer;
        flow_addrs(t, &local, &peer);
        char want[16];
        snprintf(want, sizeof(want), "127.0.0.%d", t->rail + 1);
        assert_non_null(local);
        assert_non_null(peer);
        assert_non_null(strstr(local, want));
        assert_non_null(strstr(peer, want));
        /* Both rails of a pair ran in the same round and step. */
        int twins = 0;
        for (int j = 0; j < d.ntests; j++)
            twins += d.tests[j].round == t->round && d.tests[j].step == t->step &&
                     d.tests[j].rail != t->rail && d.tests[j].src == t->src;
        assert_int_equal(twins, 1);
    }
    results_sweep_free(&d);
    rack_down(&r);
}

/* rack_conduct_can and the mixes: TCP always, verbs only where both ranks have an RDMA
 * device on the rail (the flow names this rank's), NCCL only where both have a GPU for it
 * (a sendrecv between this rank's GPU and the peer's). */
static void test_transport_choice(void **state)
{
    (void)state;
    struct rack_member m[3] = {0};
    for (int i = 0; i < 3; i++)
        snprintf(m[i].agent, sizeof(m[i].agent), "10.0.0.%d:7470", i + 1);
    snprintf(m[0].rails[1].rdma, sizeof(m[0].rails[1].rdma), "mlx5_1");
    snprintf(m[1].rails[1].rdma, sizeof(m[1].rails[1].rdma), "mlx5_3");
    snprintf(m[1].rails[1].agent, sizeof(m[1].rails[1].agent), "10.1.0.2:7470");
    snprintf(m[0].rails[1].local_ip, sizeof(m[0].rails[1].local_ip), "10.1.0.1");
    snprintf(m[0].rails[1].agent, sizeof(m[0].rails[1].agent), "10.1.0.1:7470");
    m[0].nccl = m[2].nccl = true;
    m[0].gpu = 3;
    m[2].gpu = 5;
    struct rack_conduct_opts o = {.members = m, .n = 3, .duration_s = 1};
    assert_true(rack_conduct_can(&o, RACK_XPORT_TCP, 0, 1, 0));
    assert_true(rack_conduct_can(&o, RACK_XPORT_VERBS, 0, 1, 1));
    assert_false(rack_conduct_can(&o, RACK_XPORT_VERBS, 0, 1, 0));
    assert_false(rack_conduct_can(&o, RACK_XPORT_VERBS, 0, 2, 1));
    assert_true(rack_conduct_can(&o, RACK_XPORT_NCCL, 0, 2, 0));
    assert_false(rack_conduct_can(&o, RACK_XPORT_NCCL, 0, 1, 0));
    o.transports = RACK_XPORT_TCP;
    assert_false(rack_conduct_can(&o, RACK_XPORT_NCCL, 0, 2, 0));
    o.transports = RACK_XPORT_AUTO;
    /* Two ranks of one host that hold the same GPU (by bus id, whatever their indexes say)
     * get no NCCL test: NCCL refuses a GPU twice in one communicator. The same bus id on
     * two hosts is two GPUs; unknown ids are never the same. */
    snprintf(m[0].host, sizeof(m[0].host), "node-a");
    snprintf(m[2].host, sizeof(m[2].host), "node-a");
    snprintf(m[0].gpu_id, sizeof(m[0].gpu_id), "0000:18:00.0");
    assert_true(rack_conduct_can(&o, RACK_XPORT_NCCL, 0, 2, 0));
    snprintf(m[2].gpu_id, sizeof(m[2].gpu_id), "0000:18:00.0");
    assert_true(rack_conduct_same_gpu(&m[0], &m[2]));
    assert_false(rack_conduct_can(&o, RACK_XPORT_NCCL, 0, 2, 0));
    assert_false(rack_conduct_can(&o, RACK_XPORT_NCCL, 2, 0, 0));
    assert_true(rack_conduct_can(&o, RACK_XPORT_TCP, 0, 2, 0));
    snprintf(m[2].host, sizeof(m[2].host), "node-b");
    assert_false(rack_conduct_same_gpu(&m[0], &m[2]));
    assert_true(rack_conduct_can(&o, RACK_XPORT_NCCL, 0, 2, 0));
    m[0].gpu_id[0] = m[2].gpu_id[0] = '\0';
    snprintf(m[2].host, sizeof(m[2].host), "node-a");
    assert_true(rack_conduct_can(&o, RACK_XPORT_NCCL, 0, 2, 0));

    cJSON *mix = rack_conduct_mix(&o, RACK_XPORT_VERBS, "bandwidth-ab", 0, 1, 1);
    cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(mix, "flows"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(f, "transport")), "verbs");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(f, "peer")), "10.1.0.2:7470");
    cJSON *l = cJSON_GetObjectItem(f, "local");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(l, "rdma")), "mlx5_1");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(l, "ip")), "10.1.0.1");
    cJSON_Delete(mix);

    mix = rack_conduct_mix(&o, RACK_XPORT_NCCL, "bandwidth", 0, 2, 0);
    f = cJSON_GetArrayItem(cJSON_GetObjectItem(mix, "flows"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(f, "transport")), "nccl");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(f, "op")), "collective");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(f, "peer")), "10.0.0.3:7470");
    cJSON *p = cJSON_GetObjectItem(f, "params");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "collective")), "sendrecv");
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "gpus"), 0)->valueint, 3);
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "peer_gpus"), 0)->valueint, 5);
    /* Every mix the sweep sends loads through the mix reader as `fabtop run` would. */
    struct mix mx;
    struct ft_err err = {0};
    int rc = mix_from_json(mix, "nccl mix", &mx, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(mx.flows[0].local_gpu, 3);
    mix_free(&mx);
    cJSON_Delete(mix);
}

/* Incast of 4 ranks (2 senders and a probe per receiver, quiet then loaded): each sender's
 * stream is in doc->shares against the equal share of its receiver (the senders' aggregate
 * / senders), so a round's shares sum to its senders. */
static void test_incast_shares(void **state)
{
    (void)state;
    struct rack r;
    rack_up(&r, 4);
    struct results_sweep d;
    doc_init(&d, &r);
    struct rack_sweep_opts o = opts(&r, 0.3);
    o.pairs = false;
    o.incast = true;
    struct ft_err err = {0};
    int rc = rack_sweep_run(&o, &d, &err);
    if (rc)
        dump(&d);
    assert_int_equal(rc, 0);
    assert_int_equal(d.nshares, 4 * 2);
    for (int i = 0; i < d.nshares; i++) {
        const struct results_sweep_share *h = &d.shares[i];
        assert_string_equal(h->pattern, "incast");
        assert_true(h->gbps.st == RESULTS_SET && h->gbps.v > 0);
        double sum = 0, agg = 0;
        int k = 0;
        for (int j = 0; j < d.nshares; j++)
            if (d.shares[j].round == h->round) {
                assert_int_equal(d.shares[j].dst, h->dst);
                sum += d.shares[j].share.v;
                agg += d.shares[j].gbps.v;
                k++;
            }
        assert_int_equal(k, 2);
        assert_true(fabs(sum - 2) < 1e-9);
        assert_true(fabs(h->fair_gbps.v - agg / 2) < 1e-9 * agg);
    }
    results_sweep_free(&d);
    rack_down(&r);
}

struct waiter {
    struct rack_node *node;
    double idle_s;
    int rc, status;
    pthread_t th;
};

static void *wait_main(void *arg)
{
    struct waiter *w = arg;
    w->rc = rack_node_wait(w->node, w->idle_s, &w->status);
    return NULL;
}

/* Three ranks: one sits out each round, for a step of 1.5 s and more; every rank waits with
 * an idle limit of 1.2 s. The conductor's beats reach the idle rank too, so every wait ends
 * with the sweep's end (0), none with -ETIMEDOUT. */
static void test_beats_keep_idle_ranks(void **state)
{
    (void)state;
    struct rack r;
    rack_up(&r, 3);
    struct waiter w[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (struct waiter){.node = r.node[i], .idle_s = 1.2, .rc = 1};
        assert_int_equal(pthread_create(&w[i].th, NULL, wait_main, &w[i]), 0);
    }
    struct results_sweep d;
    doc_init(&d, &r);
    struct rack_sweep_opts o = opts(&r, 1.5);
    o.conduct.transports = RACK_XPORT_TCP;
    struct ft_err err = {0};
    int rc = rack_sweep_run(&o, &d, &err);
    if (rc)
        dump(&d);
    assert_int_equal(rc, 0);
    for (int i = 0; i < 3; i++) {
        pthread_join(w[i].th, NULL);
        assert_int_equal(w[i].rc, 0);
    }
    results_sweep_free(&d);
    rack_down(&r);
}

struct killer {
    struct rack *r;
    int victim;
    useconds_t after_us;
};

static void *kill_later(void *arg)
{
    struct killer *k = arg;
    usleep(k->after_us);
    rack_node_stop(k->r->node[k->victim]);
    k->r->node[k->victim] = NULL;
    return NULL;
}

/* Rank 3 vanishes in the first round: it is named with the reason, its later tests are
 * skipped with that reason, and every pair of the others is still measured. */
/* A pairs sweep of 4 ranks whose rank 3 is stopped 0.3 s in; rack_sweep_run's status. */
static int sweep_killing_3(struct rack *r, struct results_sweep *d, bool stop)
{
    rack_up(r, 4);
    doc_init(d, r);
    struct rack_sweep_opts o = opts(r, 0.6);
    o.conduct.stop_on_failure = stop;
    struct killer k = {r, 3, 300000};
    pthread_t t;
    pthread_create(&t, NULL, kill_later, &k);
    struct ft_err err = {0};
    int rc = rack_sweep_run(&o, d, &err);
    pthread_join(t, NULL);
    return rc;
}

static void test_dead_rank_continue(void **state)
{
    (void)state;
    struct rack r;
    struct results_sweep d;
    assert_int_equal(sweep_killing_3(&r, &d, false), 0);
    assert_string_equal(results_str_get(&d.status), "failed");
    assert_string_equal(results_str_get(&d.ranks[3].status), "failed");
    assert_non_null(results_str_get(&d.ranks[3].error));
    int skipped = 0, others_ok = 0;
    for (int i = 0; i < d.ntests; i++) {
        const struct results_sweep_test *x = &d.tests[i];
        bool with3 = x->src == 3 || x->dst == 3;
        if (!with3) {
            assert_string_equal(x->status, "ok");
            others_ok++;
        } else if (!strcmp(x->status, "skipped")) {
            assert_non_null(strstr(results_str_get(&x->error), "rank 3 (n3) failed earlier"));
            skipped++;
        }
    }
    assert_int_equal(others_ok, 9); /* 3 pairs of the others, 3 steps each */
    assert_true(skipped >= 2);      /* its later rounds */
    bool named = false;
    for (int i = 0; i < d.nevents; i++)
        named |= strstr(d.events[i], "rank 3 (n3) failed") != NULL;
    assert_true(named);
    results_sweep_free(&d);
    rack_down(&r);
}

/* The same with stop: the sweep ends after the round it failed in, keeping what it measured. */
static void test_dead_rank_stop(void **state)
{
    (void)state;
    struct rack r;
    struct results_sweep d;
    assert_int_equal(sweep_killing_3(&r, &d, true), -ECANCELED);
    assert_string_equal(results_str_get(&d.status), "failed");
    assert_true(d.ntests < 18);
    assert_true(count_tests(&d, "ok") >= 1);
    bool stopped = false;
    for (int i = 0; i < d.nevents; i++)
        stopped |= strstr(d.events[i], "--on-failure stop") != NULL;
    assert_true(stopped);
    results_sweep_free(&d);
    rack_down(&r);
}

/* A sweep request whose flow goes anywhere but the job's agents is refused. */
static void test_foreign_peer_refused(void **state)
{
    (void)state;
    struct rack r;
    rack_up(&r, 2);
    struct ft_err err = {0};
    struct channel_conn *c;
    assert_int_equal(channel_connect(r.mem[0].agent, 0, &r.key, 3000, &c, &err), 0);
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    cJSON_AddStringToObject(req, "type", "sweep.peers");
    cJSON *peers = cJSON_AddArrayToObject(req, "peers");
    cJSON_AddItemToArray(peers, cJSON_CreateString(r.mem[1].agent));
    assert_int_equal(channel_request(c, req, &resp, 3000, &err), 0);
    cJSON_Delete(resp);
    struct rack_conduct_opts co = {.members = r.mem, .n = 2, .duration_s = 0.1};
    cJSON *mix = rack_conduct_mix(&co, RACK_XPORT_TCP, "stream", 0, 1, 0);
    cJSON *flow = cJSON_GetArrayItem(cJSON_GetObjectItem(mix, "flows"), 0);
    cJSON_ReplaceItemInObject(flow, "peer", cJSON_CreateString("127.0.0.2:7470"));
    req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "sweep.run");
    cJSON_AddNumberToObject(req, "test", 1);
    cJSON_AddItemToObject(req, "mix", mix);
    assert_int_equal(channel_request(c, req, &resp, 3000, &err), -EACCES);
    assert_non_null(strstr(err.msg, "peer 127.0.0.2:7470 is not one of this sweep's ranks"));
    /* Without sweep.end the node hears the conductor leave. */
    channel_close(c);
    int status = -1;
    assert_int_equal(rack_node_wait(r.node[0], 5, &status), -ECONNRESET);
    rack_down(&r);
}

/* sweep.end reaches a waiting node with its status. */
static void test_end(void **state)
{
    (void)state;
    struct rack r;
    rack_up(&r, 2);
    struct ft_err err = {0};
    struct channel_conn *c;
    assert_int_equal(channel_connect(r.mem[1].agent, 0, &r.key, 3000, &c, &err), 0);
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    cJSON_AddStringToObject(req, "type", "sweep.end");
    cJSON_AddNumberToObject(req, "status", 2);
    assert_int_equal(channel_request(c, req, &resp, 3000, &err), 0);
    cJSON_Delete(resp);
    channel_close(c);
    int status = -1;
    assert_int_equal(rack_node_wait(r.node[1], 5, &status), 0);
    assert_int_equal(status, 2);
    /* No conductor at all: the idle limit. */
    assert_int_equal(rack_node_wait(r.node[0], 0.3, &status), -ETIMEDOUT);
    rack_down(&r);
}

/* --expect on a hand-made matrix: 3 ranks, rank 2 slow, the pair 0-1 failed. */
static void test_expect(void **state)
{
    (void)state;
    struct results_sweep d = {0};
    struct rack r = {.n = 3};
    for (int i = 0; i < 3; i++)
        snprintf(r.names[i], sizeof(r.names[i]), "n%d", i);
    doc_init(&d, &r);
    d.npairs = 3;
    d.pairs = xalloc_zero(3, sizeof(*d.pairs));
    const int ab[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    for (int i = 0; i < 3; i++) {
        struct results_sweep_pair *p = &d.pairs[i];
        p->a = ab[i][0];
        p->b = ab[i][1];
        bool slow = p->b == 2;
        results_num_set(&p->lat_p50_us, true, slow ? 300 : 20);
        results_num_set(&p->lat_p99_us, true, slow ? 900 : 40);
        results_num_set(&p->bw_ab_gbps, true, slow ? 0.025 : 0.095);
        results_num_set(&p->bw_ba_gbps, true, slow ? 0.024 : 0.094);
        p->failed = (struct results_bool){RESULTS_SET, i == 0};
        if (i == 0)
            results_str_set(&p->error, "peer n1 did not answer");
    }
    struct thresholds e;
    struct ft_err err = {0};
    assert_int_equal(rack_expect_parse("pair.gbps>0.09,rank.p50<100us", &e, &err), 0);
    char rep[2048] = "";
    /* pair 0-1 failed (1), pairs 0-2 and 1-2 both directions slow (4); rank 2's median p50
     * 300 us (1); ranks 0 and 1 have one pair each left, the slow one (2). */
    assert_int_equal(rack_expect_check(&e, &d, rep, sizeof(rep)), 8);
    assert_non_null(
        strstr(rep, "n0 <-> n1: failed (peer n1 did not answer), expected pair.gbps>0.09"));
    assert_non_null(
        strstr(rep, "n0 <-> n2: gbps a->b 0.025 Gb/s, expected > 0.09 (pair.gbps>0.09)"));
    assert_non_null(
        strstr(rep, "n2: median p50 300 us over its pairs, expected < 100 (rank.p50<100us)"));
    rep[0] = '\0';
    assert_int_equal(rack_expect_parse("gbps>0.01,p99<1ms", &e, &err), 0);
    assert_int_equal(rack_expect_check(&e, &d, rep, sizeof(rep)), 2); /* the failed pair */
    /* What a sweep cannot judge is refused at once. */
    assert_int_equal(rack_expect_parse("probe.quiet.p99<20us", &e, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "a sweep judges pair.STAT or rank.STAT"));
    assert_int_equal(rack_expect_parse("pair.retrans<1", &e, &err), -EINVAL);
    assert_int_equal(rack_expect_parse("pair.gbps>", &e, &err) < 0, 1);
    results_sweep_free(&d);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pairs),
        cmocka_unit_test(test_dead_rank_continue),
        cmocka_unit_test(test_dead_rank_stop),
        cmocka_unit_test(test_foreign_peer_refused),
        cmocka_unit_test(test_end),
        cmocka_unit_test(test_expect),
        cmocka_unit_test(test_rails),
        cmocka_unit_test(test_beats_keep_idle_ranks),
        cmocka_unit_test(test_incast_shares),
        cmocka_unit_test(test_transport_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
