/* ring: a ring all-reduce's steps, bytes and bus bandwidth, and its per-point figures. */
#include "engine/flow/ring.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonutil.h"

int ring_steps(int ranks)
{
    return ranks >= 2 ? 2 * (ranks - 1) : 0;
}

uint64_t ring_chunk(uint64_t size, int ranks)
{
    if (ranks < 1)
        return 0;
    return size / (uint64_t)ranks + (size % (uint64_t)ranks ? 1 : 0);
}

uint64_t ring_op_bytes(uint64_t size, int ranks)
{
    return (uint64_t)ring_steps(ranks) * ring_chunk(size, ranks);
}

/* nccl-tests doc/PERFORMANCE.md, AllReduce: busbw = algbw x 2 (n - 1) / n. */
double ring_busbw_factor(int ranks)
{
    return ranks >= 2 ? 2.0 * (ranks - 1) / ranks : 0;
}

void ring_label(const char *transport, int ranks, bool hosts, char *buf, size_t len)
{
    if (hosts)
        snprintf(buf, len,
                 "ring all-reduce pattern over %s, %d ranks on %d hosts, this one sending to its "
                 "successor (the peer) and receiving from its predecessor (not NCCL)",
                 transport, ranks, ranks);
    else
        snprintf(buf, len,
                 "ring all-reduce pattern over %s, %d ranks emulated between this host and its "
                 "peer (not NCCL)",
                 transport, ranks);
}

/* params.KEY: absent (-1), or a whole number 0 to RING_MAX_RANKS - 1. */
static int rank_label(const struct mix_flow *f, const char *key, int *out, struct ft_err *err)
{
    *out = -1;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->params, key);
    if (!v)
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= RING_MAX_RANKS ||
        v->valuedouble != (int)v->valuedouble)
        return ft_err_set(err, -EINVAL, "flow %s: params.%s is a rank, 0 to %d", f->name, key,
                          RING_MAX_RANKS - 1);
    *out = (int)v->valuedouble;
    return 0;
}

int ring_params_from(const struct mix_flow *f, struct ring_params *p, struct ft_err *err)
{
    memset(p, 0, sizeof(*p));
    const char *c = jsonutil_str(f->params, "collective");
    if (!c || (strcmp(c, "all_reduce") && strcmp(c, "alltoall")))
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.collective over %s must be \"all_reduce\" (emulated as "
                          "a ring's message pattern) or, across hosts, \"alltoall\"; other "
                          "collectives need NCCL",
                          f->name, f->transport);
    p->alltoall = !strcmp(c, "alltoall");
    double n = 0;
    if (!jsonutil_num(f->params, "ranks", &n) || n < 2 || n > RING_MAX_RANKS || n != (int)n)
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.ranks must be a whole number from 2 to %d (the ring's "
                          "rank count N)",
                          f->name, RING_MAX_RANKS);
    if (f->size.kind != MIX_SIZE_FIXED)
        return ft_err_set(err, -EINVAL,
                          "flow %s: size of an emulated all-reduce is one number of bytes (S), "
                          "not a sweep or distribution",
                          f->name);
    p->ranks = (int)n;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(f->params, "gate");
    if (g) {
        if (!cJSON_IsString(g) || !g->valuestring[0] || strlen(g->valuestring) >= sizeof(p->gate))
            return ft_err_set(err, -EINVAL,
                              "flow %s: params.gate names the ring across hosts this rank is in: "
                              "a string of 1 to %d characters",
                              f->name, RING_GATE_ID_MAX - 1);
        if (f->concurrency != 1)
            return ft_err_set(err, -EINVAL,
                              "flow %s: a ring across hosts has one connection to the successor "
                              "(concurrency 1)",
                              f->name);
        snprintf(p->gate, sizeof(p->gate), "%s", g->valuestring);
        if (p->alltoall && (!cJSON_GetObjectItemCaseSensitive(f->params, "rank") ||
                            !cJSON_GetObjectItemCaseSensitive(f->params, "peer_rank")))
            return ft_err_set(err, -EINVAL,
                              "flow %s: an alltoall across hosts needs params.rank and "
                              "params.peer_rank (each peer's share is told apart by them)",
                              f->name);
    } else if (p->alltoall) {
        return ft_err_set(err, -EINVAL,
                          "flow %s: an alltoall over %s runs across hosts only (params.gate: "
                          "fabtop sweep --pattern alltoall)",
                          f->name, f->transport);
    }
    int rc = rank_label(f, "rank", &p->rank, err);
    if (!rc)
        rc = rank_label(f, "peer_rank", &p->peer_rank, err);
    return rc;
}

double ring_alltoall_busbw_factor(int ranks)
{
    /* nccl-tests doc/PERFORMANCE.md, AllToAll: busbw = algbw x (n - 1) / n. */
    return ranks >= 2 ? (double)(ranks - 1) / ranks : 0;
}

/* A gate's arrival rate: chunks x chunk bytes x 8 over their arrival time, Gb/s. */
static void add_arrival(cJSON *r, const char *key, const struct ring_gate_stats *s, uint64_t chunk)
{
    cJSON *p = cJSON_AddObjectToObject(r, key);
    cJSON_AddNumberToObject(p, "chunks", (double)s->chunks);
    if (s->chunks && s->arrival_ns)
        cJSON_AddNumberToObject(p, "arrival_Gbps",
                                (double)s->chunks * (double)chunk * 8.0 / (double)s->arrival_ns);
    cJSON_AddStringToObject(p, "arrival",
                            "Gb/s = 10^9 bits per second: chunk bytes x 8 over the time from "
                            "the receive that brought a chunk's first byte to the one that "
                            "brought its last, summed over the chunks (the whole test, warm-up "
                            "included: the link's pace, not the measured window's)");
}

cJSON *ring_alltoall_figures(const char *transport, int ranks, uint64_t size,
                             const struct ring_acc *a, const struct ring_gate_stats *from_peer)
{
    char label[200];
    snprintf(label, sizeof(label),
             "all-to-all pattern over %s, %d ranks on %d hosts, this one sending ceil(S / N) to "
             "each of its N - 1 peers and receiving as much from each (not NCCL)",
             transport, ranks, ranks);
    cJSON *o = cJSON_CreateObject(), *r = cJSON_AddObjectToObject(o, "alltoall");
    cJSON_AddStringToObject(r, "pattern", label);
    cJSON_AddNumberToObject(r, "ranks", ranks);
    cJSON_AddNumberToObject(r, "size_bytes", (double)size);
    cJSON_AddNumberToObject(r, "peer_bytes", (double)ring_chunk(size, ranks));
    cJSON_AddNumberToObject(r, "alltoalls", a ? (double)a->ops : 0);
    cJSON_AddNumberToObject(r, "busbw_factor", ring_alltoall_busbw_factor(ranks));
    if (a && a->ops && a->op_ns) {
        double op = (double)a->op_ns / (double)a->ops, alg = (double)size / op;
        cJSON_AddNumberToObject(r, "alltoall_mean_us", op / 1e3);
        cJSON_AddNumberToObject(r, "algbw_GBps", alg);
        cJSON_AddNumberToObject(r, "busbw_GBps", alg * ring_alltoall_busbw_factor(ranks));
        cJSON_AddNumberToObject(r, "wait_share", (double)a->wait_ns / (double)a->op_ns);
        cJSON_AddNumberToObject(r, "send_share", (double)a->send_ns / (double)a->op_ns);
    }
    if (from_peer)
        add_arrival(r, "from_peer", from_peer, ring_chunk(size, ranks));
    cJSON_AddStringToObject(r, "bandwidth",
                            "GB/s = 10^9 bytes per second; algbw = S / mean all-to-all time "
                            "(S: a rank's whole buffer, nccl-tests' meaning), busbw = algbw x "
                            "(N - 1) / N (nccl-tests, alltoall)");
    return o;
}

void ring_acc_add(struct ring_acc *a, uint64_t op_ns, int steps, uint64_t step_ns,
                  uint64_t step_min, uint64_t step_max)
{
    a->ops++;
    a->op_ns += op_ns;
    if (!a->steps || step_min < a->step_min)
        a->step_min = step_min;
    if (step_max > a->step_max)
        a->step_max = step_max;
    a->steps += (uint64_t)steps;
    a->step_ns += step_ns;
}

void ring_acc_merge(struct ring_acc *a, const struct ring_acc *b)
{
    if (!b->steps)
        return;
    if (!a->steps || b->step_min < a->step_min)
        a->step_min = b->step_min;
    if (b->step_max > a->step_max)
        a->step_max = b->step_max;
    a->ops += b->ops;
    a->op_ns += b->op_ns;
    a->steps += b->steps;
    a->step_ns += b->step_ns;
    a->wait_ns += b->wait_ns;
    a->send_ns += b->send_ns;
}

cJSON *ring_figures(const char *transport, int ranks, uint64_t size, const struct ring_acc *a,
                    const struct ring_gate_stats *arrived)
{
    char label[200];
    ring_label(transport, ranks, arrived != NULL, label, sizeof(label));
    cJSON *o = cJSON_CreateObject(), *r = cJSON_AddObjectToObject(o, "ring");
    cJSON_AddStringToObject(r, "pattern", label);
    cJSON_AddNumberToObject(r, "ranks", ranks);
    cJSON_AddNumberToObject(r, "size_bytes", (double)size);
    cJSON_AddNumberToObject(r, "chunk_bytes", (double)ring_chunk(size, ranks));
    cJSON_AddStringToObject(r, "remainder",
                            "padded: every step moves ceil(S / N) bytes; algbw uses S");
    cJSON_AddNumberToObject(r, "steps_per_allreduce", ring_steps(ranks));
    cJSON_AddNumberToObject(r, "bytes_per_allreduce_each_way", (double)ring_op_bytes(size, ranks));
    cJSON_AddNumberToObject(r, "allreduces", a ? (double)a->ops : 0);
    cJSON_AddNumberToObject(r, "steps", a ? (double)a->steps : 0);
    cJSON_AddNumberToObject(r, "busbw_factor", ring_busbw_factor(ranks));
    if (a && a->ops && a->steps && a->op_ns) {
        double op = (double)a->op_ns / (double)a->ops, step = (double)a->step_ns / (double)a->steps;
        double alg = (double)size / op; /* bytes per ns = GB/s */
        cJSON_AddNumberToObject(r, "allreduce_mean_us", op / 1e3);
        cJSON_AddNumberToObject(r, "step_mean_us", step / 1e3);
        cJSON_AddNumberToObject(r, "step_min_us", (double)a->step_min / 1e3);
        cJSON_AddNumberToObject(r, "step_max_us", (double)a->step_max / 1e3);
        cJSON_AddNumberToObject(r, "algbw_GBps", alg);
        cJSON_AddNumberToObject(r, "busbw_GBps", alg * ring_busbw_factor(ranks));
        if (arrived) {
            cJSON_AddNumberToObject(r, "wait_share", (double)a->wait_ns / (double)a->op_ns);
            cJSON_AddNumberToObject(r, "send_share", (double)a->send_ns / (double)a->op_ns);
        }
    }
    if (arrived)
        add_arrival(r, "from_predecessor", arrived, ring_chunk(size, ranks));
    cJSON_AddStringToObject(r, "bandwidth",
                            "GB/s = 10^9 bytes per second; algbw = S / mean all-reduce time, "
                            "busbw = algbw x 2 (N - 1) / N (nccl-tests, all_reduce)");
    return o;
}
