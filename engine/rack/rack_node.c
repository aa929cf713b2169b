/* rack_node: a rank's agent with the sweep's requests (rack_node.h). Each sweep.run gets a
 * thread that runs the mix through the runner (engine/run/runner.h) exactly as `fabtop run`
 * would, and keeps the printed results document until the conductor has fetched it. */
#include "engine/rack/rack_node.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "common/jsonutil.h"
#include "common/xalloc.h"
#include "engine/flow/mix.h"
#include "engine/path/path_sites.h"
#include "engine/peer/agent.h"
#include "engine/results/results.h"
#include "engine/results/results_json.h"
#include "engine/run/runner.h"
#include "engine/xport/xport.h"
#include "topology/topo_json.h"

#define MAX_PEERS   4096
#define MAX_WAIT_MS 2000

struct rack_run {
    bool used;
    int64_t id;
    pthread_t thread;
    bool joined;
    struct mix mix;
    struct runner *runner; /* while it runs (under node->lock) */
    bool done;
    int status; /* runner_status: 0 ok, 2 some flow failed; -errno: did not start */
    char error[320];
    char *text; /* the results document, printed */
    size_t len;
    struct rack_node *node;
};

struct rack_node {
    struct agent *agent;
    char key_file[4096];
    const struct topo_model *topo;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    char **peers;
    int npeers;
    /* The sweep's sites (sweep.peers' "sites": `fabtop sweep --sites`), for every test's
     * path class; NULL: none. Set once, before the first run, and kept to the end. */
    struct path_sites *sites;
    char sites_file[256];
    struct rack_run runs[RACK_MAX_RUNS];
    bool conductor_seen, ended, conductor_gone;
    int end_status;
    double last_request; /* CLOCK_MONOTONIC seconds of the conductor's last request */
    bool stopping;
};

static const char conductor_tag;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static struct rack_node *node_of(struct agent_session *s)
{
    return agent_session_cfg(s)->handler_arg;
}

/* A session's conductor marker: when the session ends without sweep.end, the conductor is
 * gone. */
static void conductor_gone(void *state)
{
    struct rack_node *n = state;
    pthread_mutex_lock(&n->lock);
    if (!n->ended)
        n->conductor_gone = true;
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->lock);
}

/* Every sweep request: this session is the conductor's. */
static void seen(struct agent_session *s, struct rack_node *n)
{
    if (!agent_session_state(s, &conductor_tag))
        agent_session_set_state(s, &conductor_tag, n, conductor_gone);
    pthread_mutex_lock(&n->lock);
    n->conductor_seen = true;
    n->conductor_gone = false;
    n->last_request = now_s();
    pthread_mutex_unlock(&n->lock);
}

static bool known_peer(const struct rack_node *n, const char *peer)
{
    for (int i = 0; i < n->npeers; i++)
        if (!strcmp(n->peers[i], peer))
            return true;
    return false;
}

static struct rack_run *find_run(struct rack_node *n, int64_t id)
{
    for (int i = 0; i < RACK_MAX_RUNS; i++)
        if (n->runs[i].used && n->runs[i].id == id)
            return &n->runs[i];
    return NULL;
}

static void *run_thread(void *arg)
{
    struct rack_run *r = arg;
    struct rack_node *n = r->node;
    struct runner_opts o = {.mix = &r->mix,
                            .key_file = n->key_file,
                            .topo = n->topo,
                            .sites = n->sites,
                            .sites_file = n->sites ? n->sites_file : NULL};
    struct runner *run = NULL;
    struct ft_err err = {0};
    int rc = runner_start(&o, &run, &err);
    char *text = NULL;
    int status;
    if (rc < 0) {
        status = rc;
    } else {
        pthread_mutex_lock(&n->lock);
        r->runner = run;
        bool stop = n->stopping;
        pthread_mutex_unlock(&n->lock);
        if (stop)
            runner_stop(run);
        const cJSON *doc = runner_wait(run);
        status = runner_status(run);
        text = doc ? cJSON_PrintUnformatted(doc) : NULL;
    }
    pthread_mutex_lock(&n->lock);
    r->runner = NULL;
    r->status = status;
    if (rc < 0)
        snprintf(r->error, sizeof(r->error), "%s", err.msg);
    else if (!text)
        snprintf(r->error, sizeof(r->error), "the run made no results document");
    r->text = text;
    r->len = text ? strlen(text) : 0;
    r->done = true;
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->lock);
    if (run)
        runner_free(run);
    return NULL;
}

static int h_peers(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    struct rack_node *n = node_of(s);
    seen(s, n);
    const cJSON *peers = cJSON_GetObjectItemCaseSensitive(req, "peers");
    int np = cJSON_GetArraySize(peers);
    if (!cJSON_IsArray(peers) || np < 1 || np > MAX_PEERS)
        return ft_err_set(err, -EINVAL, "sweep.peers: peers must be a list of 1 to %d addresses",
                          MAX_PEERS);
    const cJSON *p;
    cJSON_ArrayForEach(
        p,
        peers) if (!cJSON_IsString(p) ||
                   strlen(p->valuestring) >
                       128) return ft_err_set(err, -EINVAL,
                                              "sweep.peers: each peer is an \"addr:port\" string");
    pthread_mutex_lock(&n->lock);
    for (int i = 0; i < n->npeers; i++)
        free(n->peers[i]);
    free(n->peers);
    n->peers = xalloc_zero((size_t)np, sizeof(char *));
    n->npeers = 0;
    cJSON_ArrayForEach(p, peers) n->peers[n->npeers++] = xalloc_strdup(p->valuestring);
    pthread_mutex_unlock(&n->lock);
    cJSON_AddNumberToObject(resp, "peers", np);
    /* The sites, once: a run already going keeps what it was given. */
    const char *sites = jsonutil_str(req, "sites"), *file = jsonutil_str(req, "sites_file");
    if (sites) {
        struct path_sites *ps = xalloc_zero(1, sizeof(*ps));
        int rc = path_sites_parse(sites, file ? file : "sweep.peers sites", ps, err);
        if (rc < 0) {
            free(ps);
            return rc;
        }
        pthread_mutex_lock(&n->lock);
        bool idle = !n->sites;
        for (int i = 0; i < RACK_MAX_RUNS && idle; i++)
            idle = !n->runs[i].used;
        if (idle) {
            n->sites = ps;
            snprintf(n->sites_file, sizeof(n->sites_file), "%s", file ? file : "sites");
            ps = NULL;
        }
        int nsites = n->sites ? n->sites->n : 0;
        pthread_mutex_unlock(&n->lock);
        free(ps);
        cJSON_AddNumberToObject(resp, "site_prefixes", nsites);
    }
    return 0;
}

static int h_run(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    struct rack_node *n = node_of(s);
    seen(s, n);
    int64_t id;
    if (!jsonutil_int_in(req, "test", 0, INT64_MAX / 2, &id))
        return ft_err_set(err, -EINVAL, "sweep.run: test must be a whole number >= 0");
    const cJSON *mj = cJSON_GetObjectItemCaseSensitive(req, "mix");
    /* On the heap: a struct mix is some 150 KB, and this runs on a session thread's small
     * stack (agent.c: 256 KiB; a sanitizer's red zones make a frame bigger still). */
    struct mix *m = xalloc_zero(1, sizeof(*m));
    char what[64];
    snprintf(what, sizeof(what), "sweep test %lld", (long long)id);
    int rc = mix_from_json(mj, what, m, err);
    if (rc < 0) {
        free(m);
        return rc;
    }
    pthread_mutex_lock(&n->lock);
    const char *why = NULL;
    for (int i = 0; i < m->nflows && !why; i++)
        if (!known_peer(n, m->flows[i].peer)) {
            rc = ft_err_set(err, -EACCES,
                            "%s: flow %s: peer %s is not one of this sweep's ranks (sweep.peers)",
                            what, m->flows[i].name, m->flows[i].peer);
            why = "unknown peer";
        }
    if (!why && find_run(n, id)) {
        rc = ft_err_set(err, -EEXIST, "%s: already started", what);
        why = "started";
    }
    struct rack_run *r = NULL;
    for (int i = 0; !why && i < RACK_MAX_RUNS && !r; i++)
        if (!n->runs[i].used)
            r = &n->runs[i];
    if (!why && !r) {
        rc = ft_err_set(err, -ENOSPC, "%s: this rank already holds %d runs", what, RACK_MAX_RUNS);
        why = "full";
    }
    if (why) {
        pthread_mutex_unlock(&n->lock);
        mix_free(m);
        free(m);
        return rc;
    }
    memset(r, 0, sizeof(*r));
    r->used = true;
    r->id = id;
    r->node = n;
    memcpy(&r->mix, m, sizeof(*m)); /* the run owns what the mix holds now */
    free(m);
    if (pthread_create(&r->thread, NULL, run_thread, r) != 0) {
        mix_free(&r->mix);
        r->used = false;
        pthread_mutex_unlock(&n->lock);
        return ft_err_set(err, -EAGAIN, "%s: cannot start a thread", what);
    }
    pthread_mutex_unlock(&n->lock);
    cJSON_AddNumberToObject(resp, "test", (double)id);
    return 0;
}

/* Free a finished run's slot (under lock; joins its thread). */
static void release(struct rack_run *r)
{
    if (!r->joined) {
        pthread_join(r->thread, NULL);
        r->joined = true;
    }
    free(r->text);
    mix_free(&r->mix);
    *r = (struct rack_run){0};
}

static int get_run(struct agent_session *s, const cJSON *req, const char *what,
                   struct rack_node **np, struct rack_run **rp, struct ft_err *err)
{
    struct rack_node *n = node_of(s);
    seen(s, n);
    int64_t id;
    if (!jsonutil_int_in(req, "test", 0, INT64_MAX / 2, &id))
        return ft_err_set(err, -EINVAL, "%s: test must be a whole number >= 0", what);
    pthread_mutex_lock(&n->lock);
    struct rack_run *r = find_run(n, id);
    if (!r) {
        pthread_mutex_unlock(&n->lock);
        return ft_err_set(err, -ENOENT, "%s: no test %lld on this rank", what, (long long)id);
    }
    *np = n;
    *rp = r;
    return 0; /* locked */
}

static int h_result(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    struct rack_node *n;
    struct rack_run *r;
    int rc = get_run(s, req, "sweep.result", &n, &r, err);
    if (rc < 0)
        return rc;
    int64_t wait_ms = 0;
    jsonutil_int_in(req, "wait_ms", 0, MAX_WAIT_MS, &wait_ms);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += wait_ms / 1000;
    until.tv_nsec += (wait_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (!r->done && !agent_session_stopping(s))
        if (pthread_cond_timedwait(&n->cond, &n->lock, &until) == ETIMEDOUT)
            break;
    cJSON_AddBoolToObject(resp, "done", r->done);
    if (r->done) {
        cJSON_AddNumberToObject(resp, "status", r->status);
        if (r->error[0])
            cJSON_AddStringToObject(resp, "error", r->error);
        cJSON_AddNumberToObject(resp, "bytes", (double)r->len);
        if (!r->text)
            release(r);
    }
    pthread_mutex_unlock(&n->lock);
    return 0;
}

static int h_fetch(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    struct rack_node *n;
    struct rack_run *r;
    int rc = get_run(s, req, "sweep.fetch", &n, &r, err);
    if (rc < 0)
        return rc;
    int64_t off = 0;
    if (!r->done || !r->text) {
        pthread_mutex_unlock(&n->lock);
        return ft_err_set(err, -EAGAIN, "sweep.fetch: test %lld has no document (yet)",
                          (long long)r->id);
    }
    if (!jsonutil_int_in(req, "offset", 0, (int64_t)r->len, &off)) {
        pthread_mutex_unlock(&n->lock);
        return ft_err_set(err, -EINVAL, "sweep.fetch: offset must be 0 to %zu", r->len);
    }
    size_t k = r->len - (size_t)off < RACK_CHUNK ? r->len - (size_t)off : RACK_CHUNK;
    char *chunk = xalloc(k + 1);
    memcpy(chunk, r->text + off, k);
    chunk[k] = '\0';
    cJSON_AddStringToObject(resp, "data", chunk);
    free(chunk);
    bool last = (size_t)off + k == r->len;
    cJSON_AddNumberToObject(resp, "next", (double)((size_t)off + k));
    cJSON_AddBoolToObject(resp, "last", last);
    if (last)
        release(r);
    pthread_mutex_unlock(&n->lock);
    return 0;
}

/* This rank's host conditions and topology, once per sweep, as a document to fetch:
 * {"conditions": ..., "topology": ...} in the run document's own words. */
static int h_info(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    struct rack_node *n = node_of(s);
    seen(s, n);
    int64_t id;
    if (!jsonutil_int_in(req, "test", 0, INT64_MAX / 2, &id))
        return ft_err_set(err, -EINVAL, "sweep.info: test must be a whole number >= 0");
    struct results_run run = {0};
    run.conditions_st = RESULTS_SET;
    results_host_conditions(&run.conditions, n->topo);
    run.topology_st = n->topo ? RESULTS_SET : RESULTS_NULL;
    run.topology = n->topo ? topo_json_from_model(n->topo) : NULL;
    cJSON *w = results_json_write_run(&run);
    results_run_free(&run);
    cJSON *info = cJSON_CreateObject();
    cJSON *c = cJSON_DetachItemFromObjectCaseSensitive(w, "conditions");
    cJSON *t = cJSON_DetachItemFromObjectCaseSensitive(w, "topology");
    cJSON_AddItemToObject(info, "conditions", c ? c : cJSON_CreateNull());
    cJSON_AddItemToObject(info, "topology", t ? t : cJSON_CreateNull());
    cJSON_Delete(w);
    char *text = cJSON_PrintUnformatted(info);
    cJSON_Delete(info);
    pthread_mutex_lock(&n->lock);
    struct rack_run *r = NULL;
    for (int i = 0; i < RACK_MAX_RUNS && !r; i++)
        if (!n->runs[i].used)
            r = &n->runs[i];
    if (!r || find_run(n, id)) {
        pthread_mutex_unlock(&n->lock);
        free(text);
        return ft_err_set(err, r ? -EEXIST : -ENOSPC, "sweep.info: no room for test %lld",
                          (long long)id);
    }
    /* A finished run with no thread: sweep.fetch hands it out and frees it. */
    *r = (struct rack_run){.used = true,
                           .id = id,
                           .joined = true,
                           .done = true,
                           .text = text,
                           .len = strlen(text),
                           .node = n};
    pthread_mutex_unlock(&n->lock);
    cJSON_AddNumberToObject(resp, "bytes", (double)r->len);
    return 0;
}

static int h_stop(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    struct rack_node *n;
    struct rack_run *r;
    int rc = get_run(s, req, "sweep.stop", &n, &r, err);
    if (rc < 0)
        return rc;
    if (r->runner)
        runner_stop(r->runner);
    pthread_mutex_unlock(&n->lock);
    cJSON_AddBoolToObject(resp, "stopping", true);
    return 0;
}

static int h_end(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)err;
    struct rack_node *n = node_of(s);
    seen(s, n);
    int64_t status = 0;
    jsonutil_int_in(req, "status", 0, 255, &status);
    pthread_mutex_lock(&n->lock);
    n->ended = true;
    n->end_status = (int)status;
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->lock);
    cJSON_AddBoolToObject(resp, "ended", true);
    return 0;
}

/* The conductor is alive (it beats every rank about once a second, busy or not). */
static int h_beat(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)req;
    (void)err;
    seen(s, node_of(s));
    cJSON_AddBoolToObject(resp, "alive", true);
    return 0;
}

static const struct agent_handler beat_h = {"sweep.beat", h_beat};
static const struct agent_handler peers_h = {"sweep.peers", h_peers};
static const struct agent_handler run_h = {"sweep.run", h_run};
static const struct agent_handler result_h = {"sweep.result", h_result};
static const struct agent_handler fetch_h = {"sweep.fetch", h_fetch};
static const struct agent_handler stop_h = {"sweep.stop", h_stop};
static const struct agent_handler end_h = {"sweep.end", h_end};
static const struct agent_handler info_h = {"sweep.info", h_info};

int rack_node_start(const struct rack_node_cfg *cfg, struct rack_node **out, struct ft_err *err)
{
    if (!cfg->key || !cfg->key_file ||
        strlen(cfg->key_file) >= sizeof(((struct rack_node *)0)->key_file))
        return ft_err_set(err, -EINVAL, "rack node: a key and its file are needed");
    struct rack_node *n = xalloc_zero(1, sizeof(*n));
    snprintf(n->key_file, sizeof(n->key_file), "%s", cfg->key_file);
    n->topo = cfg->topo;
    pthread_mutex_init(&n->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&n->cond, &ca);
    pthread_condattr_destroy(&ca);

    struct agent_cfg ac;
    agent_cfg_defaults(&ac);
    snprintf(ac.listen, sizeof(ac.listen), "%s", cfg->listen ? cfg->listen : "");
    ac.port = cfg->port;
    ac.key = *cfg->key;
    /* The job's own agent: every rank may send to it at once (incast), each flow a session. */
    ac.max_sessions = cfg->max_sessions > 0 ? cfg->max_sessions : 256;
    ac.max_handshakes = ac.max_handshakes_addr = ac.max_sessions;
    ac.max_rate_gbps = 0;
    ac.max_duration_s = 0;
    ac.max_streams = 64;
    /* NCCL between the job's ranks is what a sweep over GPUs tests; the key is the job's
     * alone (drawn by rank 0 for this job), and NCCL's connections go to the ranks' own
     * addresses. */
    ac.allow_nccl = true;

    int nx;
    const struct agent_handler *const *xh = xport_agent_handlers(&nx);
    const struct agent_handler *hs[64];
    int nh = 0;
    for (int i = 0; i < nx && nh < 56; i++)
        hs[nh++] = xh[i];
    const struct agent_handler *own[] = {&peers_h, &run_h, &result_h, &fetch_h,
                                         &stop_h,  &end_h, &info_h,   &beat_h};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        hs[nh++] = own[i];

    ac.handler_arg = n;
    int rc = agent_start(&ac, hs, nh, &n->agent, err);
    channel_key_wipe(&ac.key);
    if (rc < 0) {
        pthread_mutex_destroy(&n->lock);
        pthread_cond_destroy(&n->cond);
        free(n);
        return rc;
    }
    n->last_request = now_s();
    *out = n;
    return 0;
}

uint16_t rack_node_port(const struct rack_node *n)
{
    return agent_port(n->agent);
}

int rack_node_wait(struct rack_node *n, double idle_s, int *status)
{
    pthread_mutex_lock(&n->lock);
    n->last_request = now_s();
    int rc = 0;
    for (;;) {
        if (n->ended) {
            *status = n->end_status;
            break;
        }
        if (n->conductor_gone) {
            rc = -ECONNRESET;
            break;
        }
        double left = idle_s > 0 ? n->last_request + idle_s - now_s() : 1.0;
        if (left <= 0) {
            rc = -ETIMEDOUT;
            break;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double w = left < 0.5 ? left : 0.5;
        until.tv_sec += (time_t)w;
        until.tv_nsec += (long)((w - floor(w)) * 1e9);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&n->cond, &n->lock, &until);
    }
    pthread_mutex_unlock(&n->lock);
    return rc;
}

void rack_node_stop(struct rack_node *n)
{
    if (!n)
        return;
    pthread_mutex_lock(&n->lock);
    n->stopping = true;
    for (int i = 0; i < RACK_MAX_RUNS; i++)
        if (n->runs[i].used && n->runs[i].runner)
            runner_stop(n->runs[i].runner);
    pthread_mutex_unlock(&n->lock);
    /* The agent first (its sessions end; their handlers take the lock), then the runs. */
    agent_stop(n->agent);
    for (int i = 0; i < RACK_MAX_RUNS; i++) {
        struct rack_run *r = &n->runs[i];
        if (!r->used)
            continue;
        release(r); /* joins its thread */
    }
    for (int i = 0; i < n->npeers; i++)
        free(n->peers[i]);
    free(n->peers);
    free(n->sites);
    pthread_mutex_destroy(&n->lock);
    pthread_cond_destroy(&n->cond);
    free(n);
}
