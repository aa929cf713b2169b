/* sweep_run: rank 0's sweep (sweep_run.h). */
#include "sweep/sweep_run.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/jsonutil.h"
#include "common/xalloc.h"
#include "engine/rack/rack_expect.h"
#include "engine/rack/rack_sweep.h"
#include "engine/results/results_sweep.h"
#include "text/text_sweep.h"
#include "topology/topo_model.h"

const char *sweep_run_addr(const struct launch_record *r)
{
    if (r->rail >= 0 && (uint32_t)r->rail < r->nnics)
        return r->nics[r->rail].addr;
    return "";
}

uint32_t sweep_run_rails(const struct launch_record *r, bool listen)
{
    if (listen)
        return r->rail >= 0 && r->rail < SWEEP_MAX_RAILS ? 1u << r->rail : 0;
    uint32_t m = launch_rails(r->local_rank, r->local_size, (int)r->nics_total), ok = 0;
    for (uint32_t k = 0; k < r->nnics && k < SWEEP_MAX_RAILS; k++)
        if ((m & (1u << k)) && (k == (uint32_t)r->rail || r->nics[k].addr[0]))
            ok |= 1u << k;
    return ok;
}

/* "addr:port", bracketed for IPv6. */
static void agent_of(char *buf, size_t len, const char *host, unsigned port)
{
    snprintf(buf, len, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
}

static void iso_now(char *buf, size_t len)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    struct tm tm;
    gmtime_r(&t.tv_sec, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Rank i's entry of the document, from its record. */
static void doc_rank(struct results_sweep_rank *k, const struct launch_record *r, int i,
                     const struct launch_record *usual, const struct launch_groups *g,
                     const char *agent)
{
    memset(k, 0, sizeof(*k));
    k->rank = i;
    k->host = xalloc_strdup(r->hostname);
    int gi = g ? launch_groups_of(g, r->hostname) : -1;
    if (gi >= 0)
        results_str_set(&k->group, g->names[gi]);
    results_num_set(&k->local_rank, r->local_rank >= 0, r->local_rank);
    results_num_set(&k->rail, r->rail >= 0, r->rail);
    results_str_set(&k->address, agent);
    results_num_set(&k->gpus, true, r->ngpus);
    k->nics = cJSON_CreateArray();
    for (uint32_t j = 0; j < r->nnics; j++) {
        const struct launch_nic *c = &r->nics[j];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "model", c->model);
        cJSON_AddStringToObject(x, "firmware", c->firmware);
        cJSON_AddStringToObject(x, "rdma_dev", c->rdma_dev);
        cJSON_AddStringToObject(x, "netdev", c->netdev);
        cJSON_AddStringToObject(x, "link_layer",
                                topo_link_layer_str((enum topo_link_layer)c->link_layer));
        if (c->mtu)
            cJSON_AddNumberToObject(x, "mtu_bytes", c->mtu);
        if (c->rate_mbps)
            cJSON_AddNumberToObject(x, "rate_mbps", c->rate_mbps);
        if (c->addr[0])
            cJSON_AddStringToObject(x, "address", c->addr);
        cJSON_AddItemToArray(k->nics, x);
    }
    char diff[512];
    launch_record_diff(usual, r, diff, sizeof(diff));
    if (diff[0])
        results_str_set(&k->unlike, diff);
}

/* The live document (--publish): rewritten atomically after every step, for
 * `fabtop --attach FILE` on this node. */
struct live_doc {
    char path[4096];
    bool keep; /* given with --publish: left in place at the end */
    struct timespec t0;
};

/* Where to publish: --publish FILE, or $XDG_RUNTIME_DIR/fabtop/, or /run/fabtop/ for root,
 * in a directory only this user may enter. "" when nowhere. */
static void live_path(const struct sweep_args *a, struct live_doc *l)
{
    l->path[0] = '\0';
    if (a->publish) {
        l->keep = true;
        if (strcmp(a->publish, "none"))
            snprintf(l->path, sizeof(l->path), "%s", a->publish);
        return;
    }
    const char *rt = getenv("XDG_RUNTIME_DIR");
    char dir[3000];
    if (rt && rt[0] == '/')
        snprintf(dir, sizeof(dir), "%s/fabtop", rt);
    else if (geteuid() == 0)
        snprintf(dir, sizeof(dir), "/run/fabtop");
    else
        return;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return;
    snprintf(l->path, sizeof(l->path), "%s/sweep-%ld.json", dir, (long)getpid());
}

static void publish(void *arg, struct results_sweep *doc, size_t round, size_t nrounds)
{
    (void)round;
    (void)nrounds;
    struct live_doc *l = arg;
    if (!l->path[0])
        return;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    /* The elapsed time so far (the view estimates what is left from it). */
    results_num_set(&doc->duration_s, true,
                    (double)(t.tv_sec - l->t0.tv_sec) + (double)(t.tv_nsec - l->t0.tv_nsec) / 1e9);
    cJSON *j = rack_sweep_live_json(doc);
    struct ft_err err = {0};
    if (jsonutil_save(l->path, j, false, &err) < 0) {
        fprintf(stderr, "fabtop sweep: the live document: %s; no longer published\n", err.msg);
        l->path[0] = '\0';
    }
    cJSON_Delete(j);
}

int sweep_run_conduct(const struct sweep_args *a, const struct launch_env *env,
                      const struct launch_record *recs, int n, const struct launch_groups *g,
                      const char *sites_text, const struct channel_key *key,
                      const _Atomic bool *interrupt)
{
    struct rack_member *mem = xalloc_zero((size_t)n, sizeof(*mem));
    struct sweep_rank *ranks = xalloc_zero((size_t)n, sizeof(*ranks));
    struct results_sweep doc = {0};
    results_str_set(&doc.format, RESULTS_SWEEP_FORMAT);
    results_num_set(&doc.version, true, RESULTS_SWEEP_VERSION);
    results_str_set(&doc.fabtop_version, recs[0].version);
    results_str_set(&doc.launcher, launch_kind_str(env->kind));
    char t[32];
    iso_now(t, sizeof(t));
    results_str_set(&doc.started_at, t);
    doc.patterns = xalloc_zero(SWEEP_NPATTERNS, sizeof(char *));
    for (int i = 0; i < SWEEP_NPATTERNS; i++)
        if (a->patterns & (1u << i))
            doc.patterns[doc.npatterns++] = xalloc_strdup(sweep_pattern_name(i));
    results_num_set(&doc.test_duration_s, true, a->duration);
    results_str_set(&doc.on_failure, a->on_failure == SWEEP_STOP ? "stop" : "continue");
    doc.nranks = n;
    doc.ranks = xalloc_zero((size_t)n, sizeof(*doc.ranks));
    int usual = launch_record_usual(recs, n);
    for (int i = 0; i < n; i++) {
        const struct launch_record *r = &recs[i];
        const char *addr = a->listen ? a->listen : sweep_run_addr(r);
        const char *host = addr[0] ? addr : r->hostname;
        snprintf(mem[i].host, sizeof(mem[i].host), "%s", r->hostname);
        agent_of(mem[i].agent, sizeof(mem[i].agent), host, r->ctl_port);
        snprintf(mem[i].local_ip, sizeof(mem[i].local_ip), "%s", addr);
        doc_rank(&doc.ranks[i], r, i, &recs[usual], g, mem[i].agent);
        /* Its rails (launch_rails: its local rank's NIC, or several NICs when the node has
         * fewer ranks than NICs); pairs are made within a rail, NIC i to NIC i. A rank of
         * several rails listens on all its addresses and is reached over each rail at the
         * rail's own address. */
        uint32_t rails = sweep_run_rails(r, a->listen != NULL);
        bool multi = rails & (rails - 1);
        ranks[i].name = r->hostname;
        ranks[i].rails = rails ? rails : 1;
        ranks[i].group = g && g->ngroups ? launch_groups_of(g, r->hostname) : SWEEP_GROUP_UNKNOWN;
        if (ranks[i].group < 0)
            ranks[i].group = SWEEP_GROUP_UNKNOWN;
        for (uint32_t k = 0; k < r->nnics && k < SWEEP_MAX_RAILS; k++) {
            if (!(rails & (1u << k)))
                continue;
            const struct launch_nic *c = &r->nics[k];
            struct rack_rail *rr = &mem[i].rails[k];
            ranks[i].rail_name[k] = c->netdev[0] ? c->netdev : c->rdma_dev;
            ranks[i].port_gbps[k] = c->rate_mbps / 1e3;
            if (multi && c->addr[0]) {
                agent_of(rr->agent, sizeof(rr->agent), c->addr, r->ctl_port);
                snprintf(rr->local_ip, sizeof(rr->local_ip), "%s", c->addr);
            }
            snprintf(rr->rdma, sizeof(rr->rdma), "%s", c->rdma_dev);
        }
        /* NCCL between ranks: the GPU of its local rank, as one rank per GPU binds. */
        mem[i].nccl = r->nccl_gpus > 0;
        mem[i].gpu = launch_rank_gpu(r);
        snprintf(mem[i].gpu_id, sizeof(mem[i].gpu_id), "%s", r->nccl_gpu);
    }
    const char **gnames = NULL;
    if (g && g->ngroups) {
        gnames = xalloc_zero((size_t)g->ngroups, sizeof(*gnames));
        for (int i = 0; i < g->ngroups; i++)
            gnames[i] = g->names[i];
    }
    struct rack_sweep_opts o = {
        .conduct = {.members = mem,
                    .n = (uint32_t)n,
                    .key = key,
                    .duration_s = a->duration,
                    .allreduce_bytes = a->allreduce_bytes,
                    .alltoall_bytes = a->alltoall_bytes,
                    .stop_on_failure = a->on_failure == SWEEP_STOP,
                    .sites_text = sites_text,
                    .sites_file = a->sites,
                    .interrupt = interrupt},
        .ranks = ranks,
        .group_names = gnames,
        .pairs = a->patterns & SWEEP_BIT_PAIRS,
        .incast = a->patterns & SWEEP_BIT_INCAST,
        .bisection = a->patterns & SWEEP_BIT_BISECTION,
        .ring = a->patterns & SWEEP_BIT_RING,
        .allreduce = a->patterns & SWEEP_BIT_ALLREDUCE,
        .alltoall = a->patterns & SWEEP_BIT_ALLTOALL,
        .seed = 1,
    };
    struct live_doc live = {0};
    live_path(a, &live);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    live.t0 = t0;
    if (live.path[0]) {
        o.conduct.progress = publish;
        o.conduct.progress_arg = &live;
        results_str_set(&doc.status, "running");
        publish(&live, &doc, 0, 0);
        if (live.path[0] && !a->json)
            printf("live: fabtop --attach %s\n", live.path);
        fflush(stdout);
    }
    struct ft_err err = {0};
    if (a->model_note[0])
        rack_conduct_event(&doc, "%s", a->model_note);
    int rc = rack_sweep_run(&o, &doc, &err);
    if (rc < 0 && rc != -ECANCELED)
        fprintf(stderr, "fabtop sweep: %s\n", err.msg);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    iso_now(t, sizeof(t));
    results_str_set(&doc.ended_at, t);
    results_num_set(&doc.duration_s, true,
                    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    char line[1024];
    text_sweep_summary(&doc, line, sizeof(line));
    results_str_set(&doc.summary, line);

    if (live.path[0]) {
        if (live.keep)
            publish(&live, &doc, 0, 0);
        else
            unlink(live.path);
    }
    int status = 0;
    if (a->json || a->out) {
        cJSON *j = results_sweep_write(&doc);
        status = cli_emit_json(j, a->json, a->out, "sweep");
        cJSON_Delete(j);
    }
    if (!a->json)
        text_sweep_report(stdout, &doc, 80);
    const char *st = results_str_get(&doc.status);
    if (!status)
        status = st && !strcmp(st, "interrupted") ? 130 : st && !strcmp(st, "ok") ? 0 : CLI_FAILED;
    struct thresholds ex;
    if (a->expect && rack_expect_parse(a->expect, &ex, &err) == 0) {
        char report[16384] = "";
        int nv = rack_expect_check(&ex, &doc, report, sizeof(report));
        FILE *to = a->json ? stderr : stdout;
        if (nv) {
            fprintf(to, "expect: %d miss%s of %s:\n%s", nv, nv == 1 ? "" : "es", a->expect, report);
            if (!status)
                status = CLI_THRESHOLDS;
        } else {
            fprintf(to, "expect: every pair and rank within %s\n", a->expect);
        }
    }
    fflush(stdout);
    results_sweep_free(&doc);
    free(gnames);
    free(ranks);
    free(mem);
    return status;
}
