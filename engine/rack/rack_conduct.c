/* rack_conduct: rank 0's rounds over the control channel (rack_conduct.h). */
#include "engine/rack/rack_conduct.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "common/jsonutil.h"
#include "common/xalloc.h"
#include "engine/flow/mix.h"
#include "engine/flow/ring_gate.h"
#include "engine/rack/rack_node.h"
#include "engine/results/results_json.h"

#define CONNECT_MS  5000
#define SLACK_S     5.0  /* setup and teardown of a step, beyond warm-up, measure, fail bound */
#define POLL_MS     500  /* a result is awaited in waits this long, with beats between */
#define REPLY_MS    3000 /* a live rank answers a request within this, beyond its wait */
#define NCCL_INIT_S 20.0 /* a step's allowance for NCCL's communicator set-up */

struct rank_conn {
    struct channel_conn *c;
    bool failed;
};

struct rack_conduct {
    struct rack_conduct_opts o;
    struct rank_conn *ranks;
    int64_t next_id;
    double t0, last_beat;
    size_t n_failed;
};

/* One test step in flight. */
struct live {
    size_t test; /* index into doc->tests */
    uint32_t src, dst;
    int64_t id;
    bool running;
};

static const char *const pattern_names[] = {"pairs",   "incast",    "bisection", "ring",
                                            "recheck", "allreduce", "alltoall"};
static const char *const role_names[] = {"pair", "stream", "probe", "ring", "alltoall"};
static const char *const phase_names[] = {NULL, "quiet", "loaded"};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void rack_conduct_event(struct results_sweep *doc, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    doc->events = xalloc_resize(doc->events, (size_t)(doc->nevents + 1) * sizeof(char *));
    doc->events[doc->nevents++] = xalloc_strdup(line);
}

/* Rank r is out: say why once. */
static void rank_failed(struct rack_conduct *c, struct results_sweep *doc, uint32_t r,
                        const char *why)
{
    if (c->ranks[r].failed)
        return;
    c->ranks[r].failed = true;
    c->n_failed++;
    struct results_sweep_rank *k = &doc->ranks[r];
    results_str_set(&k->status, "failed");
    results_str_set(&k->error, why);
    rack_conduct_event(doc, "rank %u (%s) failed: %s", r, c->o.members[r].host, why);
    if (c->ranks[r].c) {
        channel_close(c->ranks[r].c);
        c->ranks[r].c = NULL;
    }
}

/* A request to rank r; a failure of the channel itself (not a refusal) fails the rank. */
static int ask(struct rack_conduct *c, struct results_sweep *doc, uint32_t r, cJSON *req,
               cJSON **resp, int timeout_ms, struct ft_err *err)
{
    *resp = NULL;
    if (c->ranks[r].failed || !c->ranks[r].c) {
        cJSON_Delete(req);
        return ft_err_set(err, -ENOTCONN, "rank %u failed earlier", r);
    }
    int rc = channel_request(c->ranks[r].c, req, resp, timeout_ms, err);
    /* The sweep's handlers refuse with these (rack_node.c); anything else is the channel's
     * own failure: the rank died, was killed, or hangs. */
    bool refusal = rc == -EINVAL || rc == -ENOENT || rc == -EACCES || rc == -EEXIST ||
                   rc == -ENOSPC || rc == -EAGAIN;
    if (rc == -ETIMEDOUT) {
        char why[400];
        snprintf(why, sizeof(why), "it did not answer within %.1f s (hung?)", timeout_ms / 1e3);
        rank_failed(c, doc, r, why);
    } else if (rc < 0 && !refusal) {
        char why[400];
        snprintf(why, sizeof(why), "its control channel closed (died or killed): %s", err->msg);
        rank_failed(c, doc, r, why);
    }
    return rc;
}

const char *const rack_conduct_xport_names[3] = {"tcp", "verbs", "nccl"};

/* Rank r's agent and local address on rail (its own for the rail, else its defaults). */
static const char *rail_agent(const struct rack_member *m, unsigned rail)
{
    return rail < SWEEP_MAX_RAILS && m->rails[rail].agent[0] ? m->rails[rail].agent : m->agent;
}

static const char *rail_ip(const struct rack_member *m, unsigned rail)
{
    return rail < SWEEP_MAX_RAILS && m->rails[rail].agent[0] ? m->rails[rail].local_ip
                                                             : m->local_ip;
}

bool rack_conduct_same_gpu(const struct rack_member *a, const struct rack_member *b)
{
    return a->gpu_id[0] && !strcmp(a->gpu_id, b->gpu_id) && !strcmp(a->host, b->host);
}

bool rack_conduct_can(const struct rack_conduct_opts *o, unsigned x, uint32_t src, uint32_t dst,
                      unsigned rail)
{
    unsigned want =
        o->transports ? o->transports : RACK_XPORT_TCP | RACK_XPORT_VERBS | RACK_XPORT_NCCL;
    if (!(want & x) || src >= o->n || dst >= o->n)
        return false;
    const struct rack_member *a = &o->members[src], *b = &o->members[dst];
    switch (x) {
    case RACK_XPORT_TCP:
        return true;
    case RACK_XPORT_VERBS:
        return rail < SWEEP_MAX_RAILS && a->rails[rail].rdma[0] && b->rails[rail].rdma[0];
    case RACK_XPORT_NCCL:
        return a->nccl && b->nccl && !rack_conduct_same_gpu(a, b);
    default:
        return false;
    }
}

/* Every live rank hears from the conductor at least every RACK_BEAT_S, whether it is in a
 * test or idle, so that a rank whose conductor hangs with its sessions open can tell
 * (RACK_CONDUCTOR_IDLE_S); a rank that does not answer is failed here, as in a test. */
static void beat(struct rack_conduct *c, struct results_sweep *doc)
{
    double t = now_s();
    if (t - c->last_beat < RACK_BEAT_S / 2) /* called between waits of POLL_MS */
        return;
    c->last_beat = t;
    for (uint32_t r = 0; r < c->o.n; r++) {
        if (c->ranks[r].failed || !c->ranks[r].c)
            continue;
        cJSON *req = cJSON_CreateObject(), *resp;
        cJSON_AddStringToObject(req, "type", "sweep.beat");
        struct ft_err e = {0};
        ask(c, doc, r, req, &resp, REPLY_MS, &e);
        cJSON_Delete(resp);
    }
}

static cJSON *flow_obj(const char *name, unsigned x, const char *op, const char *dir, uint64_t size,
                       const struct rack_conduct_opts *o, uint32_t src, uint32_t dst, unsigned rail)
{
    const struct rack_member *a = &o->members[src], *b = &o->members[dst];
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "name", name);
    cJSON_AddStringToObject(f, "transport",
                            rack_conduct_xport_names[x == RACK_XPORT_VERBS  ? 1
                                                     : x == RACK_XPORT_NCCL ? 2
                                                                            : 0]);
    cJSON_AddStringToObject(f, "op", op);
    if (dir)
        cJSON_AddStringToObject(f, "direction", dir);
    cJSON_AddNumberToObject(f, "size", (double)size);
    cJSON_AddNumberToObject(f, "warmup_s", o->warmup_s > 0 ? o->warmup_s : 0.3);
    cJSON_AddNumberToObject(f, "duration_s", o->duration_s);
    /* The peer's agent as reached over this rail: the data follows the control
     * connection's addresses (TCP), and the peer's agent takes the RDMA port holding the
     * address it was reached at (verbs), so NIC i meets NIC i. */
    cJSON_AddStringToObject(f, "peer", rail_agent(b, rail));
    const char *ip = rail_ip(a, rail);
    bool rdma = x == RACK_XPORT_VERBS && rail < SWEEP_MAX_RAILS && a->rails[rail].rdma[0];
    if (ip[0] || rdma || x == RACK_XPORT_NCCL) {
        cJSON *l = cJSON_AddObjectToObject(f, "local");
        if (ip[0] && x != RACK_XPORT_NCCL)
            cJSON_AddStringToObject(l, "ip", ip);
        if (rdma)
            cJSON_AddStringToObject(l, "rdma", a->rails[rail].rdma);
        if (x == RACK_XPORT_NCCL)
            cJSON_AddNumberToObject(l, "gpu", a->gpu);
    }
    if (x == RACK_XPORT_NCCL) {
        /* One rank on each side: a's GPU here, b's on its agent (the bootstrap root). */
        cJSON *p = cJSON_AddObjectToObject(f, "params");
        cJSON_AddStringToObject(p, "collective", "sendrecv");
        cJSON *g = cJSON_AddArrayToObject(p, "gpus");
        cJSON_AddItemToArray(g, cJSON_CreateNumber(a->gpu));
        cJSON *pg = cJSON_AddArrayToObject(p, "peer_gpus");
        cJSON_AddItemToArray(pg, cJSON_CreateNumber(b->gpu));
    }
    return f;
}

/* A test's mix, its flows still to add (*fl): named for the transport and kind. */
static cJSON *mix_head(const struct rack_conduct_opts *o, unsigned x, const char *kind, cJSON **fl)
{
    double fb = o->fail_bound_s > 0 ? o->fail_bound_s : 3.0;
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "format", "fabtop-mix");
    cJSON_AddNumberToObject(m, "version", 1);
    char name[64];
    snprintf(name, sizeof(name), "sweep-%s%s%s",
             x == RACK_XPORT_TCP ? "" : rack_conduct_xport_names[x == RACK_XPORT_VERBS ? 1 : 2],
             x == RACK_XPORT_TCP ? "" : "-", kind);
    cJSON_AddStringToObject(m, "name", name);
    cJSON *ph = cJSON_AddArrayToObject(m, "phases");
    cJSON_AddItemToArray(ph, cJSON_CreateString("loaded"));
    cJSON_AddNumberToObject(m, "progress_deadline_s", fb);
    cJSON_AddNumberToObject(m, "fail_bound_s", fb);
    *fl = cJSON_AddArrayToObject(m, "flows");
    return m;
}

cJSON *rack_conduct_mix(const struct rack_conduct_opts *o, unsigned x, const char *kind,
                        uint32_t src, uint32_t dst, unsigned rail)
{
    uint64_t lat = o->latency_bytes ? o->latency_bytes : 64;
    uint64_t bw = o->stream_bytes ? o->stream_bytes : 128 * 1024;
    uint64_t nb = o->nccl_bytes ? o->nccl_bytes : 64ull << 20;
    cJSON *fl, *m = mix_head(o, x, kind, &fl);
    if (x == RACK_XPORT_NCCL) {
        bool l = !strcmp(kind, "latency");
        cJSON_AddItemToArray(fl, flow_obj(l ? "latency" : "sendrecv", x, "collective", NULL,
                                          l ? 8 : nb, o, src, dst, rail));
    } else if (!strcmp(kind, "latency") || !strcmp(kind, "probe")) {
        cJSON_AddItemToArray(fl, flow_obj("latency", x, "pingpong", NULL, lat, o, src, dst, rail));
    } else if (!strcmp(kind, "bandwidth-ab")) {
        cJSON_AddItemToArray(fl, flow_obj("a-to-b", x, "stream", "tx", bw, o, src, dst, rail));
    } else if (!strcmp(kind, "bandwidth-ba")) {
        /* From src's side: the peer sends. */
        cJSON_AddItemToArray(fl, flow_obj("b-to-a", x, "stream", "rx", bw, o, src, dst, rail));
    } else {
        cJSON_AddItemToArray(fl, flow_obj("stream", x, "stream", "tx", bw, o, src, dst, rail));
    }
    return m;
}

static char *fetch_text(struct rack_conduct *c, struct results_sweep *doc, uint32_t r, int64_t id,
                        size_t bytes, struct ft_err *e);

/* Rank r's host conditions and topology, into doc->ranks[r]. */
static void rank_info(struct rack_conduct *c, struct results_sweep *doc, uint32_t r)
{
    cJSON *req = cJSON_CreateObject(), *resp;
    cJSON_AddStringToObject(req, "type", "sweep.info");
    int64_t id = c->next_id++;
    cJSON_AddNumberToObject(req, "test", (double)id);
    struct ft_err e = {0};
    int64_t bytes = 0;
    char *text = NULL;
    if (ask(c, doc, r, req, &resp, REPLY_MS, &e) == 0 && jsonutil_int(resp, "bytes", &bytes) &&
        bytes > 0)
        text = fetch_text(c, doc, r, id, (size_t)bytes, &e);
    cJSON_Delete(resp);
    cJSON *info = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!info) {
        if (!c->ranks[r].failed)
            rack_conduct_event(doc, "rank %u (%s): its conditions and topology were not read: %s",
                               r, c->o.members[r].host, e.msg[0] ? e.msg : "damaged");
        return;
    }
    struct results_sweep_rank *k = &doc->ranks[r];
    cJSON *cond = cJSON_DetachItemFromObjectCaseSensitive(info, "conditions");
    cJSON *topo = cJSON_DetachItemFromObjectCaseSensitive(info, "topology");
    if (cond && !cJSON_IsNull(cond) && !k->conditions)
        k->conditions = cond;
    else
        cJSON_Delete(cond);
    if (topo && !cJSON_IsNull(topo) && !k->topology)
        k->topology = topo;
    else
        cJSON_Delete(topo);
    cJSON_Delete(info);
}

/* One event per GPU that several ranks of one host would use for NCCL: their NCCL pairs are
 * not planned (rack_conduct_can), and the document says why rather than leaving cells blank. */
static void shared_gpus(const struct rack_conduct_opts *o, struct results_sweep *doc)
{
    for (uint32_t r = 0; r < o->n; r++) {
        const struct rack_member *a = &o->members[r];
        if (!a->nccl || !a->gpu_id[0])
            continue;
        bool first = true, shared = false;
        char list[256] = "";
        size_t len = 0;
        for (uint32_t q = 0; q < o->n && first; q++) {
            const struct rack_member *b = &o->members[q];
            if (!b->nccl || !rack_conduct_same_gpu(a, b))
                continue;
            if (q < r) /* listed with the first rank that holds it */
                first = false;
            else if (len < sizeof(list))
                len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%u", len ? ", " : "", q);
            shared |= q != r;
        }
        if (first && shared)
            rack_conduct_event(doc,
                               "nccl: ranks %s on %s share GPU %s: no NCCL test between them "
                               "(NCCL takes a GPU once per communicator); run one rank per GPU",
                               list, a->host, a->gpu_id);
    }
}

int rack_conduct_open(const struct rack_conduct_opts *o, struct results_sweep *doc,
                      struct rack_conduct **out, struct ft_err *err)
{
    if (o->n < 2 || !(o->duration_s > 0))
        return ft_err_set(err, -EINVAL, "rack sweep: needs 2 ranks or more and a duration");
    struct rack_conduct *c = xalloc_zero(1, sizeof(*c));
    c->o = *o;
    c->ranks = xalloc_zero(o->n, sizeof(*c->ranks));
    c->t0 = now_s();
    if (!o->transports || (o->transports & RACK_XPORT_NCCL))
        shared_gpus(o, doc);
    cJSON *peers = cJSON_CreateArray();
    for (uint32_t r = 0; r < o->n; r++) {
        cJSON_AddItemToArray(peers, cJSON_CreateString(o->members[r].agent));
        for (unsigned k = 0; k < SWEEP_MAX_RAILS; k++)
            if (o->members[r].rails[k].agent[0] &&
                strcmp(o->members[r].rails[k].agent, o->members[r].agent))
                cJSON_AddItemToArray(peers, cJSON_CreateString(o->members[r].rails[k].agent));
    }
    for (uint32_t r = 0; r < o->n; r++) {
        struct ft_err e = {0};
        if (channel_connect(o->members[r].agent, CHANNEL_DEFAULT_PORT, o->key, CONNECT_MS,
                            &c->ranks[r].c, &e) < 0) {
            char why[400];
            snprintf(why, sizeof(why), "cannot reach its agent: %s", e.msg);
            rank_failed(c, doc, r, why);
            continue;
        }
        cJSON *req = cJSON_CreateObject();
        cJSON_AddStringToObject(req, "type", "sweep.peers");
        cJSON_AddItemToObject(req, "peers", cJSON_Duplicate(peers, 1));
        if (o->sites_text) {
            cJSON_AddStringToObject(req, "sites", o->sites_text);
            cJSON_AddStringToObject(req, "sites_file", o->sites_file ? o->sites_file : "sites");
        }
        cJSON *resp;
        if (ask(c, doc, r, req, &resp, CONNECT_MS, &e) < 0 && !c->ranks[r].failed) {
            char why[400];
            snprintf(why, sizeof(why), "refused the sweep's peers: %s", e.msg);
            rank_failed(c, doc, r, why);
        }
        cJSON_Delete(resp);
        if (!c->ranks[r].failed)
            rank_info(c, doc, r);
        beat(c, doc); /* those reached already, while later ones take their time */
    }
    cJSON_Delete(peers);
    *out = c;
    if (o->n - c->n_failed < 2 || (c->n_failed && o->stop_on_failure))
        return ft_err_set(err, -ECANCELED, "%zu of %u ranks cannot be reached", c->n_failed, o->n);
    return 0;
}

bool rack_conduct_failed(const struct rack_conduct *c, uint32_t r)
{
    return r < c->o.n && c->ranks[r].failed;
}

/* The mix of src's part in a collective across hosts on rail, over TCP, among the members
 * (n ranks, src one of them) of its round's tests on that rail: a ring all-reduce (role
 * ring), one flow to dst, its successor, waiting at the gate (a name all the members share)
 * for its predecessor's chunks; or an all-to-all (role alltoall), one flow to each other
 * member, all waiting there for every member's share (engine/flow/ring_gate.h). */
static cJSON *coll_mix(const struct rack_conduct_opts *o, const struct sweep_test *t,
                       const uint32_t *members, uint32_t n, const char *gate)
{
    bool a2a = t->role == SWEEP_ROLE_ALLTOALL;
    cJSON *fl, *m = mix_head(o, RACK_XPORT_TCP, a2a ? "alltoall" : "allreduce", &fl);
    uint64_t size = a2a ? (o->alltoall_bytes ? o->alltoall_bytes : 16ull << 20)
                        : (o->allreduce_bytes ? o->allreduce_bytes : 16ull << 20);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t q = members[k];
        if (a2a ? q == t->src : q != t->dst)
            continue;
        char name[32];
        snprintf(name, sizeof(name), a2a ? "to-rank%u" : "allreduce", q);
        cJSON *f = flow_obj(name, RACK_XPORT_TCP, "collective", NULL, size, o, t->src, q, t->rail);
        cJSON *pa = cJSON_AddObjectToObject(f, "params");
        cJSON_AddStringToObject(pa, "collective", a2a ? "alltoall" : "all_reduce");
        cJSON_AddNumberToObject(pa, "ranks", n);
        cJSON_AddStringToObject(pa, "gate", gate);
        cJSON_AddNumberToObject(pa, "rank", t->src);
        cJSON_AddNumberToObject(pa, "peer_rank", q);
        cJSON_AddItemToArray(fl, f);
    }
    return m;
}

/* One step of a round: its transport and what its tests measure (NULL: by their role). */
struct step {
    unsigned x;
    const char *kind;
    int index; /* the test's step: 0 latency, 1 a to b (NCCL: both ways), 2 b to a */
};

/* A pairs round, transport by transport (each only where both ranks of a test can). */
static const struct step pair_steps[] = {
    {RACK_XPORT_TCP, "latency", 0},        {RACK_XPORT_TCP, "bandwidth-ab", 1},
    {RACK_XPORT_TCP, "bandwidth-ba", 2},   {RACK_XPORT_VERBS, "latency", 0},
    {RACK_XPORT_VERBS, "bandwidth-ab", 1}, {RACK_XPORT_VERBS, "bandwidth-ba", 2},
    {RACK_XPORT_NCCL, "latency", 0},       {RACK_XPORT_NCCL, "bandwidth", 1},
};

static const char *xport_name(unsigned x)
{
    return rack_conduct_xport_names[x == RACK_XPORT_VERBS ? 1 : x == RACK_XPORT_NCCL ? 2 : 0];
}

static struct results_sweep_test *new_test(struct results_sweep *doc, size_t round, int step,
                                           unsigned xp, const struct sweep_round *rd,
                                           const struct sweep_test *t, double t_s)
{
    doc->tests = xalloc_resize(doc->tests, (size_t)(doc->ntests + 1) * sizeof(*doc->tests));
    struct results_sweep_test *x = &doc->tests[doc->ntests++];
    memset(x, 0, sizeof(*x));
    x->round = (int)round;
    x->step = step;
    x->pattern = xalloc_strdup(t->pattern < 7 ? pattern_names[t->pattern] : "?");
    x->role = xalloc_strdup(t->role < 5 ? role_names[t->role] : "?");
    if (rd->phase && rd->phase < 3)
        results_str_set(&x->phase, phase_names[rd->phase]);
    results_num_set(&x->subject, true, rd->subject);
    x->src = (int)t->src;
    x->dst = (int)t->dst;
    x->rail = t->rail;
    results_str_set(&x->transport, xport_name(xp));
    results_num_set(&x->started_s, true, t_s);
    return x;
}

static void set_status(struct results_sweep_test *x, const char *status, const char *error)
{
    free(x->status);
    x->status = xalloc_strdup(status);
    if (error)
        results_str_set(&x->error, error);
}

/* The first failed flow's error of a run document, or NULL. */
static const char *run_error(const cJSON *doc)
{
    const cJSON *ph, *f;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(doc, "phases"))
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(ph, "flows"))
    {
        const char *st = jsonutil_str(f, "status");
        if (st && strcmp(st, "ok"))
            return jsonutil_str_or(f, "error", st);
    }
    return NULL;
}

/* Fetch the document of test id from rank r: bytes of text, in chunks. NULL on failure
 * (err says why). */
static char *fetch_text(struct rack_conduct *c, struct results_sweep *doc, uint32_t r, int64_t id,
                        size_t bytes, struct ft_err *e)
{
    char *text = xalloc(bytes + 1);
    size_t off = 0;
    while (off < bytes) {
        cJSON *req = cJSON_CreateObject(), *resp;
        cJSON_AddStringToObject(req, "type", "sweep.fetch");
        cJSON_AddNumberToObject(req, "test", (double)id);
        cJSON_AddNumberToObject(req, "offset", (double)off);
        if (ask(c, doc, r, req, &resp, REPLY_MS, e) < 0) {
            free(text);
            return NULL;
        }
        const char *data = jsonutil_str(resp, "data");
        size_t k = data ? strlen(data) : 0;
        if (!k || off + k > bytes) {
            cJSON_Delete(resp);
            free(text);
            ft_err_set(e, -EBADMSG, "its results came back damaged (chunk sizes)");
            return NULL;
        }
        memcpy(text + off, data, k);
        off += k;
        cJSON_Delete(resp);
    }
    text[bytes] = '\0';
    return text;
}

/* Fetch test l's document from its src and store it. */
static void collect(struct rack_conduct *c, struct results_sweep *doc, struct live *l, int status,
                    size_t bytes, const char *error)
{
    struct results_sweep_test *x = &doc->tests[l->test];
    if (!bytes) {
        set_status(x, "failed", error ? error : "the test made no results");
        return;
    }
    struct ft_err e = {0};
    char *text = fetch_text(c, doc, l->src, l->id, bytes, &e);
    if (!text) {
        set_status(x, "failed", e.msg);
        return;
    }
    cJSON *run = cJSON_Parse(text);
    free(text);
    if (!run) {
        set_status(x, "failed", "its results document does not parse");
        return;
    }
    /* The rank's host conditions and topology are in doc->ranks once (sweep.info). */
    cJSON_DeleteItemFromObjectCaseSensitive(run, "topology");
    cJSON_DeleteItemFromObjectCaseSensitive(run, "conditions");
    char what[96];
    snprintf(what, sizeof(what), "round %d's test of rank %d to %d", x->round, x->src, x->dst);
    const char *ferr = run_error(run);
    char ferr_copy[320] = "";
    if (ferr)
        snprintf(ferr_copy, sizeof(ferr_copy), "%s", ferr);
    if (results_json_read_run(run, what, &x->run, &e) == 0)
        x->run_st = RESULTS_SET;
    else
        rack_conduct_event(doc, "%s", e.msg);
    cJSON_Delete(run);
    if (status == 0)
        set_status(x, "ok", NULL);
    else
        set_status(x, "failed", ferr_copy[0] ? ferr_copy : (error ? error : "a flow failed"));
}

/* After a failed test: is its dst still there? */
static void check_alive(struct rack_conduct *c, struct results_sweep *doc, uint32_t r)
{
    cJSON *req = cJSON_CreateObject(), *resp;
    cJSON_AddStringToObject(req, "type", "echo");
    struct ft_err e = {0};
    ask(c, doc, r, req, &resp, REPLY_MS, &e);
    cJSON_Delete(resp);
}

static bool interrupted(const struct rack_conduct *c)
{
    return c->o.interrupt && atomic_load(c->o.interrupt);
}

/* Start every test of one step, wait for each within the step's deadline, collect. */
static void run_step(struct rack_conduct *c, struct results_sweep *doc, const struct sweep_plan *p,
                     size_t ri, const struct step *st)
{
    const struct sweep_round *rd = &p->rounds[ri];
    struct live *lv = xalloc_zero(rd->count ? rd->count : 1, sizeof(*lv));
    size_t nl = 0;
    double t_s = now_s() - c->t0;
    /* A collective's tests (all-reduce, all-to-all), per rail: its members, and one of them
     * that failed earlier (it needs every one: none of its tests runs then). */
    uint32_t *members =
        xalloc_zero(SWEEP_MAX_RAILS * (rd->count ? rd->count : 1), sizeof(uint32_t));
    uint32_t coll_n[SWEEP_MAX_RAILS] = {0}, coll_dead[SWEEP_MAX_RAILS];
    for (unsigned k = 0; k < SWEEP_MAX_RAILS; k++)
        coll_dead[k] = UINT32_MAX;
    for (size_t i = 0; i < rd->count; i++) {
        const struct sweep_test *t = &p->tests[rd->first + i];
        if ((t->role != SWEEP_ROLE_RING && t->role != SWEEP_ROLE_ALLTOALL) ||
            t->rail >= SWEEP_MAX_RAILS)
            continue;
        members[t->rail * rd->count + coll_n[t->rail]++] = t->src;
        if (c->ranks[t->src].failed && coll_dead[t->rail] == UINT32_MAX)
            coll_dead[t->rail] = t->src;
    }
    for (size_t i = 0; i < rd->count; i++) {
        const struct sweep_test *t = &p->tests[rd->first + i];
        if (t->role == SWEEP_ROLE_PAIR && !rack_conduct_can(&c->o, st->x, t->src, t->dst, t->rail))
            continue;
        struct results_sweep_test *x = new_test(doc, ri, st->index, st->x, rd, t, t_s);
        size_t xi = (size_t)(x - doc->tests);
        bool coll = (t->role == SWEEP_ROLE_RING || t->role == SWEEP_ROLE_ALLTOALL) &&
                    t->rail < SWEEP_MAX_RAILS;
        uint32_t dead = c->ranks[t->src].failed   ? t->src
                        : c->ranks[t->dst].failed ? t->dst
                        : coll                    ? coll_dead[t->rail]
                                                  : UINT32_MAX;
        if (dead != UINT32_MAX) {
            char why[400];
            snprintf(why, sizeof(why), "rank %u (%s) failed earlier%s: %s", dead,
                     c->o.members[dead].host, coll ? " (the collective needs all its ranks)" : "",
                     results_str_get(&doc->ranks[dead].error));
            set_status(x, "skipped", why);
            continue;
        }
        const char *kind = t->role == SWEEP_ROLE_PAIR    ? st->kind
                           : t->role == SWEEP_ROLE_PROBE ? "probe"
                                                         : "stream";
        cJSON *req = cJSON_CreateObject(), *resp;
        cJSON_AddStringToObject(req, "type", "sweep.run");
        int64_t id = c->next_id++;
        cJSON_AddNumberToObject(req, "test", (double)id);
        if (coll) {
            /* The gate's name: this round's collective on this rail, unique in the sweep. */
            char gate[RING_GATE_ID_MAX];
            snprintf(gate, sizeof(gate), "sweep-round%zu-rail%u", ri, (unsigned)t->rail);
            cJSON_AddItemToObject(
                req, "mix",
                coll_mix(&c->o, t, &members[t->rail * rd->count], coll_n[t->rail], gate));
        } else {
            cJSON_AddItemToObject(req, "mix",
                                  rack_conduct_mix(&c->o, st->x, kind, t->src, t->dst, t->rail));
        }
        struct ft_err e = {0};
        if (ask(c, doc, t->src, req, &resp, REPLY_MS, &e) < 0) {
            set_status(x, "failed", e.msg);
            continue;
        }
        cJSON_Delete(resp);
        lv[nl++] =
            (struct live){.test = xi, .src = t->src, .dst = t->dst, .id = id, .running = true};
    }
    beat(c, doc);
    double fb = c->o.fail_bound_s > 0 ? c->o.fail_bound_s : 3.0;
    double warm = c->o.warmup_s > 0 ? c->o.warmup_s : 0.3;
    /* NCCL makes a communicator per test first (seconds on real GPUs). */
    double deadline = now_s() + warm + c->o.duration_s + fb + SLACK_S +
                      (st->x == RACK_XPORT_NCCL ? NCCL_INIT_S : 0);
    bool stopped = false;
    for (size_t i = 0; i < nl; i++) {
        struct live *l = &lv[i];
        while (l->running) {
            if (!stopped && (interrupted(c) || now_s() > deadline)) {
                /* Past the deadline (or Ctrl-C): stop what still runs; each still reports. */
                for (size_t j = i; j < nl; j++) {
                    if (!lv[j].running)
                        continue;
                    cJSON *req = cJSON_CreateObject(), *resp;
                    cJSON_AddStringToObject(req, "type", "sweep.stop");
                    cJSON_AddNumberToObject(req, "test", (double)lv[j].id);
                    struct ft_err e = {0};
                    ask(c, doc, lv[j].src, req, &resp, REPLY_MS, &e);
                    cJSON_Delete(resp);
                }
                stopped = true;
                deadline = now_s() + fb + SLACK_S;
            }
            if (c->ranks[l->src].failed) {
                set_status(&doc->tests[l->test], "failed",
                           results_str_get(&doc->ranks[l->src].error));
                l->running = false;
                break;
            }
            if (stopped && now_s() > deadline) {
                char why[400];
                snprintf(why, sizeof(why), "its test did not end within %.1f s of being stopped",
                         fb + SLACK_S);
                rank_failed(c, doc, l->src, why);
                continue;
            }
            beat(c, doc);
            cJSON *req = cJSON_CreateObject(), *resp;
            cJSON_AddStringToObject(req, "type", "sweep.result");
            cJSON_AddNumberToObject(req, "test", (double)l->id);
            cJSON_AddNumberToObject(req, "wait_ms", POLL_MS);
            struct ft_err e = {0};
            if (ask(c, doc, l->src, req, &resp, POLL_MS + REPLY_MS, &e) < 0) {
                if (!c->ranks[l->src].failed) {
                    set_status(&doc->tests[l->test], "failed", e.msg);
                    l->running = false;
                }
                continue;
            }
            bool done = false;
            jsonutil_bool(resp, "done", &done);
            if (done) {
                int64_t status = 0, bytes = 0;
                jsonutil_int(resp, "status", &status);
                jsonutil_int(resp, "bytes", &bytes);
                char error[320] = "";
                jsonutil_strcpy(resp, "error", error, sizeof(error));
                l->running = false;
                collect(c, doc, l, (int)status, bytes > 0 ? (size_t)bytes : 0,
                        error[0] ? error : NULL);
                if (status != 0 && !c->ranks[l->src].failed)
                    check_alive(c, doc, l->dst);
            }
            cJSON_Delete(resp);
        }
    }
    free(lv);
    free(members);
}

int rack_conduct_rounds(struct rack_conduct *c, const struct sweep_plan *p, size_t first,
                        struct results_sweep *doc)
{
    for (size_t ri = first; ri < p->n_rounds; ri++) {
        const struct sweep_round *rd = &p->rounds[ri];
        bool pairs = false;
        for (size_t i = 0; i < rd->count; i++)
            pairs |= p->tests[rd->first + i].role == SWEEP_ROLE_PAIR;
        static const struct step one = {RACK_XPORT_TCP, NULL, 0};
        size_t nsteps = pairs ? sizeof(pair_steps) / sizeof(pair_steps[0]) : 1;
        for (size_t s = 0; s < nsteps; s++) {
            const struct step *st = pairs ? &pair_steps[s] : &one;
            bool any = !pairs;
            for (size_t i = 0; i < rd->count && !any; i++) {
                const struct sweep_test *t = &p->tests[rd->first + i];
                any = rack_conduct_can(&c->o, st->x, t->src, t->dst, t->rail);
            }
            if (!any)
                continue;
            size_t before = c->n_failed;
            run_step(c, doc, p, ri, st);
            if (c->o.progress)
                c->o.progress(c->o.progress_arg, doc, ri, p->n_rounds);
            if (interrupted(c)) {
                rack_conduct_event(doc, "interrupted in round %zu of %zu", ri + 1, p->n_rounds);
                return -ECANCELED;
            }
            if (c->n_failed > before && c->o.stop_on_failure) {
                rack_conduct_event(
                    doc, "stopped after round %zu of %zu: a rank failed (--on-failure stop)",
                    ri + 1, p->n_rounds);
                return -ECANCELED;
            }
            if (c->o.n - c->n_failed < 2) {
                rack_conduct_event(doc, "stopped after round %zu of %zu: fewer than 2 ranks left",
                                   ri + 1, p->n_rounds);
                return -ECANCELED;
            }
        }
        results_num_set(&doc->rounds_done, true, (double)(ri + 1));
    }
    return 0;
}

void rack_conduct_close(struct rack_conduct *c, int status)
{
    if (!c)
        return;
    for (uint32_t r = 0; r < c->o.n; r++) {
        if (!c->ranks[r].c)
            continue;
        cJSON *req = cJSON_CreateObject(), *resp = NULL;
        cJSON_AddStringToObject(req, "type", "sweep.end");
        cJSON_AddNumberToObject(req, "status", status);
        struct ft_err e = {0};
        channel_request(c->ranks[r].c, req, &resp, REPLY_MS, &e);
        cJSON_Delete(resp);
        channel_close(c->ranks[r].c);
    }
    free(c->ranks);
    free(c);
}
