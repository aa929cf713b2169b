/* xport_sim: the "sim" transport. The sim flows of one phase of a run share one simulated
 * fabric (engine/sim/), driven by one thread: simulated time runs decoupled from wall time (at
 * full speed by default, or at a playback scale), and each completed message goes into its
 * flow's histogram and counters through flow_record / flow_progress, as a real worker's would.
 * At the end every flow's results carry what was measured in simulated time. */
#include "engine/xport/sim/xport_sim.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/sim/sim.h"
#include "engine/xport/xport.h"

#define BARRIER_S    60 /* wait at most this long for every sim flow of the phase */
#define PUBLISH_NS   50000000ull
#define SLICE_EVENTS 200000

struct sess_flow {
    int mix_index;
    int app;
    struct flow_rt *f; /* NULL until the flow binds */
    cJSON *cond;       /* its conditions object, for the results at the end */
    uint64_t tx, rx;   /* payload already reported */
    bool sim_failed;   /* failed by the simulation (a QP error), not stopped */
    bool torn_down;
};

struct sess {
    struct sess *next;
    const struct mix *mix;
    const struct flow_host *run; /* the run it belongs to (flow_rt.host) */
    int phase;
    struct sim *sim;
    char topo_name[64];
    int nflows, nbound, ntorn;
    struct sess_flow flows[MIX_MAX_FLOWS];
    int app_flow[MIX_MAX_FLOWS]; /* app index -> flows[] */
    pthread_t thread;
    bool started;
    struct sim_params params;
    pthread_mutex_t lock; /* guards everything below and the binding above */
    pthread_cond_t cond;
    bool finished, aborted;
    /* what the views read (published by the thread) */
    uint64_t pub_now, pub_events;
    bool pub_finished;
    int npub_ports, npub_ctrs;
    struct sim_port_snap *pub_ports;
    struct counters_value *pub_ctrs;
    struct fabric_snap_flow *pub_flows; /* nflows */
    bool published;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sess *reg;
/* Sessions that ended, kept for their final state (one per run at most); reg_lock. */
static struct sess *retired;

static bool is_sim(const struct mix_flow *f)
{
    return !strcmp(f->transport, "sim");
}

/* ---- validation (before the run starts) ---- */

static const char *const flow_keys[] = {"topology", "fabric",   "playback", "src",
                                        "dst",      "start_us", NULL};

static const char *const *sim_param_keys(enum mix_op op)
{
    (void)op;
    return flow_keys;
}

static int host_num(const char *s)
{
    if (!s || s[0] != 'h' || !s[1])
        return -1;
    char *end;
    long v = strtol(s + 1, &end, 10);
    return *end || v < 0 || v >= SIM_MAX_HOSTS ? -1 : (int)v;
}

static int load_fabric(const cJSON *params, const char *what, cJSON **topo, struct sim_params *p,
                       struct ft_err *err)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(params, "topology");
    int rc;
    if (cJSON_IsString(t)) {
        rc = sim_topology_load(t->valuestring, topo, err);
    } else if (cJSON_IsObject(t)) {
        *topo = cJSON_Duplicate(t, 1);
        rc = 0;
    } else {
        return ft_err_set(err, -EINVAL,
                          "%s: params.topology must name a simulator topology (e.g. "
                          "\"star16-100g\") or hold one",
                          what);
    }
    if (rc < 0)
        return rc;
    const char *fab = jsonutil_str(*topo, "fabric");
    sim_params_default(p, fab && !strcmp(fab, "ib") ? SIM_FABRIC_IB : SIM_FABRIC_ROCE);
    rc = sim_params_from_json(cJSON_GetObjectItemCaseSensitive(params, "fabric"), what, p, err);
    if (rc < 0) {
        cJSON_Delete(*topo);
        *topo = NULL;
    }
    return rc;
}

/* params.playback.moments of flow f: up to SIM_MAX_MOMENTS {"from_us", "to_us"} in order,
 * not overlapping, into ps (NULL: check only). Returns how many, or -EINVAL naming the
 * flow and the moment. */
static int parse_moments(const struct mix_flow *f, uint64_t (*ps)[2], struct ft_err *err)
{
    const cJSON *pb = cJSON_GetObjectItemCaseSensitive(f->params, "playback");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(pb, "moments");
    if (!m)
        return 0;
    int n = cJSON_GetArraySize(m);
    if (!cJSON_IsArray(m) || n < 1 || n > SIM_MAX_MOMENTS)
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.playback.moments must be a list of 1 to %d "
                          "{\"from_us\", \"to_us\"} stretches of simulated time",
                          f->name, SIM_MAX_MOMENTS);
    double prev = -1;
    for (int i = 0; i < n; i++) {
        const cJSON *e = cJSON_GetArrayItem(m, i);
        double a, b;
        char where[96];
        snprintf(where, sizeof(where), "flow %s: params.playback.moments[%d]", f->name, i);
        int krc =
            jsonutil_check_keys(e, (const char *const[]){"from_us", "to_us", NULL}, where, err);
        if (krc < 0)
            return krc;
        if (!jsonutil_num(e, "from_us", &a) || !jsonutil_num(e, "to_us", &b) || !(a >= 0) ||
            !(b > a) || !(b <= 1e9) || a < prev)
            return ft_err_set(err, -EINVAL,
                              "%s: from_us and to_us must be 0 <= from_us < to_us <= 1e9, in "
                              "order and not overlapping",
                              where);
        prev = b;
        if (ps) {
            ps[i][0] = (uint64_t)llround(a * SIM_PS_PER_US);
            ps[i][1] = (uint64_t)llround(b * SIM_PS_PER_US);
        }
    }
    return n;
}

static int sim_validate(const struct mix_flow *f, struct ft_err *err)
{
    char where[96];
    snprintf(where, sizeof(where), "flow %s: params.playback", f->name);
    int krc = jsonutil_check_keys(cJSON_GetObjectItemCaseSensitive(f->params, "playback"),
                                  (const char *const[]){"scale_ns_per_us", "skip_idle", "paused",
                                                        "moments", "highlight", NULL},
                                  where, err);
    if (krc < 0)
        return krc;
    krc = parse_moments(f, NULL, err);
    if (krc < 0)
        return krc;
    /* highlight: the ports that prove the lesson, by the names the counters give them. */
    const cJSON *hl = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(f->params, "playback"), "highlight");
    const cJSON *e;
    if (hl && (!cJSON_IsArray(hl) || cJSON_GetArraySize(hl) > 16))
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.playback.highlight must be a list of at most 16 port "
                          "names (\"sw0/0\", \"leaf1/8\", \"h3\")",
                          f->name);
    cJSON_ArrayForEach(e, hl)
    {
        if (!cJSON_IsString(e) || !e->valuestring[0] || strlen(e->valuestring) > 31)
            return ft_err_set(err, -EINVAL,
                              "flow %s: params.playback.highlight holds a port name that is not "
                              "a string of 1 to 31 characters",
                              f->name);
    }
    int src = host_num(jsonutil_str(f->params, "src"));
    int dst = host_num(jsonutil_str(f->params, "dst"));
    if (src < 0 || dst < 0 || src == dst)
        return ft_err_set(err, -EINVAL,
                          "flow %s: a sim flow needs params.src and params.dst, two different "
                          "simulated hosts (\"h1\", \"h0\")",
                          f->name);
    if (f->size.kind == MIX_SIZE_SWEEP)
        return ft_err_set(err, -EINVAL,
                          "flow %s: the simulator runs fixed sizes or a distribution, not a sweep",
                          f->name);
    if (f->start_s > 0)
        return ft_err_set(err, -EINVAL,
                          "flow %s: start_s counts wall time; a sim flow starts at params.start_us "
                          "of simulated time",
                          f->name);
    if (f->role == MIX_ROLE_FOREGROUND && !f->iterations)
        return ft_err_set(err, -EINVAL,
                          "flow %s: a foreground sim flow needs \"iterations\" (messages to "
                          "complete): duration_s is wall time, and simulated time runs apart from "
                          "it",
                          f->name);
    if (f->local_gpu >= 0 || f->local_rdma[0] || f->local_netdev[0] || f->local_ip[0])
        return ft_err_set(err, -EINVAL,
                          "flow %s: a sim flow has simulated endpoints only (params.src, "
                          "params.dst), no local device",
                          f->name);
    double v;
    if (jsonutil_num(f->params, "start_us", &v) && !(v >= 0 && v <= 1e9))
        return ft_err_set(err, -EINVAL, "flow %s: params.start_us must be 0 to 1e9", f->name);
    if (cJSON_GetObjectItemCaseSensitive(f->params, "topology")) {
        cJSON *topo = NULL;
        struct sim_params p;
        char what[64];
        snprintf(what, sizeof(what), "flow %s", f->name);
        int rc = load_fabric(f->params, what, &topo, &p, err);
        if (rc < 0)
            return rc;
        struct sim *s;
        rc = sim_new(topo, what, &p, &s, err);
        if (rc == 0) {
            if (src >= sim_nhosts(s) || dst >= sim_nhosts(s))
                rc = ft_err_set(err, -EINVAL, "flow %s: the topology has hosts h0-h%d", f->name,
                                sim_nhosts(s) - 1);
            sim_free(s);
        }
        cJSON_Delete(topo);
        return rc;
    }
    return 0;
}

static int sim_available(char *why, size_t len)
{
    (void)why;
    (void)len;
    return 0;
}

/* ---- the simulation thread ---- */

static uint64_t wall_ns(void)
{
    return flow_now_ns();
}

/* Report payload moved since the last report (worker 0 carries a flow's bytes). */
static void flush_progress(struct sess *ss, int k)
{
    struct sess_flow *sf = &ss->flows[k];
    if (!sf->f)
        return;
    struct sim_app_stats st;
    sim_app_stats(ss->sim, sf->app, &st);
    uint64_t tx = st.tx_acked, rx = st.rx_bytes;
    const struct mix_flow *spec = sf->f->spec;
    if (spec->op != MIX_OP_STREAM) {
        tx = st.peer_rx_bytes; /* requests delivered to the peer */
    } else if (spec->dir == MIX_DIR_RX) {
        tx = 0;
    } else if (spec->dir == MIX_DIR_TX) {
        rx = 0;
    }
    if (tx > sf->tx || rx > sf->rx) {
        flow_progress(&sf->f->workers[0], tx - sf->tx, rx - sf->rx, 0);
        sf->tx = tx;
        sf->rx = rx;
    }
}

static void on_op(void *user, int app, int worker, uint64_t latency_ps)
{
    struct sess *ss = user;
    int k = ss->app_flow[app];
    struct flow_rt *f = ss->flows[k].f;
    if (!f || worker < 0 || worker >= f->nworkers)
        return;
    flush_progress(ss, k); /* bytes first: once ops reach the target the runner reads them */
    struct flow_worker *w = &f->workers[worker];
    flow_record(w, (latency_ps + 500) / 1000);
    flow_progress(w, 0, 0, 1);
}

static void on_fail(void *user, int app, const char *why)
{
    struct sess *ss = user;
    int k = ss->app_flow[app];
    struct flow_rt *f = ss->flows[k].f;
    ss->flows[k].sim_failed = true;
    if (f)
        flow_fail(f, "simulated %s", why);
}

static void touch_alive(struct sess *ss)
{
    uint64_t now = wall_ns();
    for (int k = 0; k < ss->nflows; k++) {
        struct flow_rt *f = ss->flows[k].f;
        for (int i = 0; f && i < f->nworkers; i++)
            atomic_store_explicit(&f->workers[i].last_progress_ns, now, memory_order_relaxed);
    }
}

static void publish(struct sess *ss)
{
    int np = sim_nports(ss->sim);
    int nc = sim_counters(ss->sim, NULL, 0);
    pthread_mutex_lock(&ss->lock);
    if (!ss->pub_ports)
        ss->pub_ports = xalloc_zero((size_t)np, sizeof(*ss->pub_ports));
    if (!ss->pub_ctrs)
        ss->pub_ctrs = xalloc_zero((size_t)nc, sizeof(*ss->pub_ctrs));
    if (!ss->pub_flows)
        ss->pub_flows = xalloc_zero((size_t)ss->nflows + 1, sizeof(*ss->pub_flows));
    for (int k = 0; k < ss->nflows; k++)
        sim_app_stats(ss->sim, ss->flows[k].app, &ss->pub_flows[k].st);
    ss->published = true;
    sim_port_snapshot(ss->sim, ss->pub_ports, np);
    ss->npub_ports = np;
    ss->npub_ctrs = sim_counters(ss->sim, ss->pub_ctrs, nc);
    ss->pub_now = sim_now(ss->sim);
    ss->pub_events = sim_events(ss->sim);
    ss->pub_finished = sim_finished(ss->sim);
    pthread_mutex_unlock(&ss->lock);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Every flow of the phase is bound and measuring (or gone). */
static bool all_ready(struct sess *ss, bool *stopped)
{
    bool ready = true;
    pthread_mutex_lock(&ss->lock);
    if (ss->nbound < ss->nflows)
        ready = false;
    for (int k = 0; k < ss->nflows; k++) {
        struct flow_rt *f = ss->flows[k].f;
        if (!f)
            continue;
        enum flow_state st = flow_state(f);
        if (st == FLOW_ST_STOP)
            *stopped = true;
        else if (st != FLOW_ST_MEASURE)
            ready = false;
    }
    pthread_mutex_unlock(&ss->lock);
    return ready;
}

/* A flow stopped (the run was interrupted, or a non-simulated failure) before its app was
 * done: the simulation cannot go on meaningfully. */
static bool someone_stopped(struct sess *ss)
{
    for (int k = 0; k < ss->nflows; k++) {
        struct sess_flow *sf = &ss->flows[k];
        if (!sf->f || sf->sim_failed || flow_state(sf->f) != FLOW_ST_STOP)
            continue;
        struct sim_app_stats st;
        sim_app_stats(ss->sim, sf->app, &st);
        if (!st.done || sf->f->spec->role == MIX_ROLE_BACKGROUND)
            return true;
    }
    return false;
}

static void *sess_main(void *arg)
{
    struct sess *ss = arg;
    uint64_t t0 = wall_ns();
    bool stopped = false;
    while (!all_ready(ss, &stopped) && !stopped) {
        touch_alive(ss);
        if (wall_ns() - t0 > BARRIER_S * 1000000000ull) {
            pthread_mutex_lock(&ss->lock);
            for (int k = 0; k < ss->nflows; k++)
                if (ss->flows[k].f)
                    flow_fail(ss->flows[k].f,
                              "simulator: not every sim flow of the phase started within %d s",
                              BARRIER_S);
            pthread_mutex_unlock(&ss->lock);
            stopped = true;
            break;
        }
        sleep_ms(1);
    }
    uint64_t last_pub = 0;
    while (!stopped) {
        if (someone_stopped(ss)) {
            sim_abort(ss->sim);
            break;
        }
        uint64_t now = wall_ns();
        uint64_t n = sim_play(ss->sim, now, SLICE_EVENTS);
        for (int k = 0; k < ss->nflows; k++)
            flush_progress(ss, k);
        touch_alive(ss);
        if (now - last_pub >= PUBLISH_NS) {
            publish(ss);
            last_pub = now;
        }
        if (sim_finished(ss->sim) || (!n && sim_next_time(ss->sim) == UINT64_MAX))
            break;
        struct sim_ctl_state c;
        sim_ctl_get(ss->sim, &c);
        if (c.paused || (c.scale && !n))
            sleep_ms(1);
    }
    for (int k = 0; k < ss->nflows; k++)
        flush_progress(ss, k);
    publish(ss);
    pthread_mutex_lock(&ss->lock);
    ss->finished = true;
    ss->aborted = stopped;
    pthread_cond_broadcast(&ss->cond);
    pthread_mutex_unlock(&ss->lock);
    return NULL;
}

/* ---- sessions ---- */

static enum sim_op op_of(enum mix_op op)
{
    return op == MIX_OP_PINGPONG ? SIM_OP_PINGPONG : op == MIX_OP_RR ? SIM_OP_RR : SIM_OP_STREAM;
}

static int sess_create(const struct flow_rt *f, int phase, struct sess **out, struct ft_err *err)
{
    const struct mix *m = f->mix;
    const struct mix_flow *def = NULL;
    for (int i = 0; i < m->nflows && !def; i++)
        if (is_sim(&m->flows[i]) &&
            cJSON_GetObjectItemCaseSensitive(m->flows[i].params, "topology"))
            def = &m->flows[i];
    if (!def)
        return ft_err_set(err, -EINVAL,
                          "mix %s: one sim flow must give params.topology (and params.fabric)",
                          m->name);
    for (int i = 0; i < m->nflows; i++) {
        const struct mix_flow *o = &m->flows[i];
        if (!is_sim(o) || o == def)
            continue;
        for (const char *const *k = (const char *const[]){"topology", "fabric", NULL}; *k; k++) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(o->params, *k);
            if (a && !cJSON_Compare(a, cJSON_GetObjectItemCaseSensitive(def->params, *k), 1))
                return ft_err_set(err, -EINVAL,
                                  "mix %s: flows %s and %s describe different fabrics (one "
                                  "simulated fabric per run: give params.%s once)",
                                  m->name, def->name, o->name, *k);
        }
    }
    char what[64];
    snprintf(what, sizeof(what), "flow %s", def->name);
    cJSON *topo = NULL;
    struct sim_params p;
    int rc = load_fabric(def->params, what, &topo, &p, err);
    if (rc < 0)
        return rc;
    struct sess *ss = xalloc_zero(1, sizeof(*ss));
    pthread_mutex_init(&ss->lock, NULL);
    pthread_cond_init(&ss->cond, NULL);
    ss->mix = m;
    ss->run = f->host;
    ss->phase = phase;
    ss->params = p;
    jsonutil_strcpy(topo, "name", ss->topo_name, sizeof(ss->topo_name));
    rc = sim_new(topo, what, &p, &ss->sim, err);
    cJSON_Delete(topo);
    bool quiet = m->quiet_then_loaded && phase == 0;
    for (int i = 0; rc == 0 && i < m->nflows; i++) {
        const struct mix_flow *mf = &m->flows[i];
        if (!is_sim(mf) || (quiet && mf->role == MIX_ROLE_BACKGROUND))
            continue;
        double start_us = 0;
        jsonutil_num(mf->params, "start_us", &start_us);
        struct sim_app a = {
            .src = sim_host_index(ss->sim, jsonutil_str(mf->params, "src")),
            .dst = sim_host_index(ss->sim, jsonutil_str(mf->params, "dst")),
            .op = op_of(mf->op),
            .dir = mf->dir == MIX_DIR_RX      ? SIM_DIR_RX
                   : mf->dir == MIX_DIR_BIDIR ? SIM_DIR_BIDIR
                                              : SIM_DIR_TX,
            .size = mf->size.kind == MIX_SIZE_FIXED ? mf->size.bytes[0] : 0,
            .nsizes = mf->size.kind == MIX_SIZE_DIST ? mf->size.n : 0,
            .sizes = mf->size.bytes,
            .weights = mf->size.weight,
            .resp_size = mf->size.response_bytes,
            .nqps = mf->concurrency,
            .messages = mf->iterations,
            .start = (uint64_t)llround(start_us * SIM_PS_PER_US),
            .rate_gbps = mf->rate_gbps,
            .background = mf->role == MIX_ROLE_BACKGROUND,
            .cb = on_op,
            .fail = on_fail,
            .user = ss,
        };
        rc = sim_app_add(ss->sim, &a, err);
        if (rc < 0)
            break;
        struct sess_flow *sf = &ss->flows[ss->nflows];
        sf->mix_index = i;
        sf->app = rc;
        ss->app_flow[rc] = ss->nflows++;
        rc = 0;
    }
    /* Playback: the run's (the explorer's), then the defining flow's. */
    if (rc == 0 && f->host && f->host->playback) {
        const struct sim_ctl_state *c = f->host->playback;
        if (sim_ctl_set_scale(ss->sim, c->scale) < 0)
            rc = ft_err_set(err, -EINVAL,
                            "playback: the scale must be 0 (full speed) or 10000 to 100000000 "
                            "wall ns per simulated us");
        sim_ctl_skip_idle(ss->sim, c->skip_idle);
        sim_ctl_pause(ss->sim, c->paused);
    }
    const cJSON *pb = cJSON_GetObjectItemCaseSensitive(def->params, "playback");
    double scale = 0;
    bool b;
    if (rc == 0 && jsonutil_num(pb, "scale_ns_per_us", &scale) &&
        sim_ctl_set_scale(ss->sim, (uint64_t)scale) < 0)
        rc = ft_err_set(err, -EINVAL,
                        "%s: params.playback.scale_ns_per_us must be 0 (full speed) or 10000 to "
                        "100000000",
                        what);
    if (rc == 0 && jsonutil_bool(pb, "skip_idle", &b))
        sim_ctl_skip_idle(ss->sim, b);
    if (rc == 0 && jsonutil_bool(pb, "paused", &b))
        sim_ctl_pause(ss->sim, b);
    uint64_t moments[SIM_MAX_MOMENTS][2];
    int nm = rc == 0 ? parse_moments(def, moments, err) : 0;
    if (nm < 0)
        rc = nm;
    else if (nm > 0)
        rc = sim_ctl_moments(ss->sim, (const uint64_t(*)[2])moments, nm);
    if (rc < 0) {
        sim_free(ss->sim);
        pthread_mutex_destroy(&ss->lock);
        pthread_cond_destroy(&ss->cond);
        free(ss);
        return rc;
    }
    *out = ss;
    return 0;
}

static void sess_free(struct sess *ss)
{
    sim_free(ss->sim);
    free(ss->pub_ports);
    free(ss->pub_ctrs);
    free(ss->pub_flows);
    pthread_mutex_destroy(&ss->lock);
    pthread_cond_destroy(&ss->cond);
    free(ss);
}

/* Free the final state kept for run (NULL: every run's); call with reg_lock. */
static void drop_retired_locked(const struct flow_host *run)
{
    for (struct sess **pp = &retired; *pp;) {
        struct sess *ss = *pp;
        if (run && ss->run != run) {
            pp = &ss->next;
            continue;
        }
        *pp = ss->next;
        sess_free(ss);
    }
}

/* The flow's place in its session (xdata points at it). */
struct bind {
    struct sess *ss;
    int k;
};

static int sim_setup(struct flow_rt *f, struct ft_err *err)
{
    int phase = f->phase;
    const struct mix *m = f->mix;
    pthread_mutex_lock(&reg_lock);
    struct sess *ss = reg;
    while (ss && !(ss->mix == m && ss->run == f->host && ss->phase == phase))
        ss = ss->next;
    if (!ss) {
        int rc = sess_create(f, phase, &ss, err);
        if (rc < 0) {
            pthread_mutex_unlock(&reg_lock);
            return rc;
        }
        drop_retired_locked(f->host);
        ss->next = reg;
        reg = ss;
        if (pthread_create(&ss->thread, NULL, sess_main, ss) == 0)
            ss->started = true;
    }
    int k = 0;
    while (k < ss->nflows && ss->flows[k].mix_index != f->index)
        k++;
    if (k == ss->nflows) {
        pthread_mutex_unlock(&reg_lock);
        return ft_err_set(err, -EINVAL, "flow %s: not part of this phase's simulation",
                          f->spec->name);
    }
    pthread_mutex_lock(&ss->lock);
    ss->flows[k].f = f;
    ss->nbound++;
    pthread_mutex_unlock(&ss->lock);
    struct bind *b = xalloc_zero(1, sizeof(*b));
    b->ss = ss;
    b->k = k;
    f->xdata = b;
    snprintf(f->peer_desc, sizeof(f->peer_desc), "simulated %s -> %s (%s)",
             jsonutil_str(f->spec->params, "src"), jsonutil_str(f->spec->params, "dst"),
             ss->topo_name);
    pthread_mutex_unlock(&reg_lock);
    return ss->started ? 0 : ft_err_set(err, -EAGAIN, "simulator: cannot start its thread");
}

static int sim_start(struct flow_rt *f, struct ft_err *err)
{
    (void)err;
    uint64_t now = wall_ns();
    for (int i = 0; i < f->nworkers; i++) {
        atomic_store(&f->workers[i].last_progress_ns, now);
        atomic_store(&f->workers[i].last_tx_ns, now);
    }
    return 0;
}

/* Hold the flow until the simulation is over, so every flow's final counts are in before the
 * runner reads them (background flows end when the foreground is done). */
static void sim_stop(struct flow_rt *f)
{
    struct bind *b = f->xdata;
    if (!b)
        return;
    struct sess *ss = b->ss;
    pthread_mutex_lock(&ss->lock);
    while (!ss->finished && ss->started)
        pthread_cond_wait(&ss->cond, &ss->lock);
    pthread_mutex_unlock(&ss->lock);
}

static void sim_conditions(const struct flow_rt *f, cJSON *out)
{
    struct bind *b = f->xdata;
    if (!b)
        return;
    const struct mix_flow *s = f->spec;
    cJSON *o = cJSON_AddObjectToObject(out, "sim");
    cJSON_AddStringToObject(o, "note",
                            "simulated fabric (teaching mode): latencies, counters and the "
                            "results below are in simulated time; the points' measure_s, "
                            "goodput_gbps and the timeline are wall-clock");
    cJSON_AddStringToObject(o, "topology", b->ss->topo_name);
    cJSON_AddStringToObject(o, "src", jsonutil_str(s->params, "src"));
    cJSON_AddStringToObject(o, "dst", jsonutil_str(s->params, "dst"));
    pthread_mutex_lock(&b->ss->lock);
    b->ss->flows[b->k].cond = o;
    pthread_mutex_unlock(&b->ss->lock);
}

static void sim_teardown(struct flow_rt *f)
{
    struct bind *b = f->xdata;
    if (!b)
        return;
    struct sess *ss = b->ss;
    int k = b->k;
    free(b);
    f->xdata = NULL;
    pthread_mutex_lock(&reg_lock);
    pthread_mutex_lock(&ss->lock);
    ss->flows[k].torn_down = true;
    bool last = ++ss->ntorn == ss->nbound;
    pthread_mutex_unlock(&ss->lock);
    if (!last) {
        pthread_mutex_unlock(&reg_lock);
        return;
    }
    for (struct sess **pp = &reg; *pp; pp = &(*pp)->next)
        if (*pp == ss) {
            *pp = ss->next;
            break;
        }
    pthread_mutex_unlock(&reg_lock);
    if (ss->started) {
        sim_abort(ss->sim); /* flows that never bound would keep it waiting */
        pthread_join(ss->thread, NULL);
    }
    /* Results in simulated time: each flow's app; the whole fabric with the first flow. */
    cJSON *all = sim_results_json(ss->sim);
    cJSON *apps = cJSON_GetObjectItemCaseSensitive(all, "apps");
    for (int i = 0; i < ss->nflows; i++) {
        struct sess_flow *sf = &ss->flows[i];
        if (!sf->cond)
            continue;
        cJSON_AddItemToObject(sf->cond, "results",
                              cJSON_Duplicate(cJSON_GetArrayItem(apps, sf->app), 1));
        if (i == 0) {
            cJSON_AddBoolToObject(all, "interrupted", ss->aborted);
            cJSON_AddItemToObject(sf->cond, "fabric", all);
            all = NULL;
        }
    }
    cJSON_Delete(all);
    /* Keep the final state for the explorer (the run's last look at the fabric). */
    pthread_mutex_lock(&reg_lock);
    if (ss->published) {
        drop_retired_locked(ss->run);
        ss->next = retired;
        retired = ss;
        ss = NULL;
    }
    pthread_mutex_unlock(&reg_lock);
    if (ss)
        sess_free(ss);
}

/* ---- the front door: snapshots, playback, release ---- */

static struct sess *find_in(struct sess *list, const struct flow_host *run)
{
    struct sess *ss = list;
    while (ss && ss->run != run)
        ss = ss->next;
    return ss;
}

static int sim_snapshot(const struct flow_host *run, struct fabric_snap *out)
{
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&reg_lock);
    struct sess *ss = find_in(reg, run);
    out->retired = !ss;
    if (!ss)
        ss = find_in(retired, run);
    if (!ss) {
        pthread_mutex_unlock(&reg_lock);
        return -ENOENT;
    }
    pthread_mutex_lock(&ss->lock);
    out->valid = FABRIC_SNAP_V_STATE | (ss->published ? FABRIC_SNAP_V_FLOWS : 0);
    snprintf(out->topology, sizeof(out->topology), "%s", ss->topo_name);
    out->sim_now_ps = ss->pub_now;
    out->events = ss->pub_events;
    out->finished = ss->pub_finished || out->retired;
    out->phase = ss->phase;
    out->fabric = ss->params.fabric;
    out->pfc = ss->params.pfc;
    out->ecn = ss->params.ecn;
    out->cc = ss->params.cc;
    out->buffer_bytes = ss->params.buffer_bytes;
    sim_ctl_get(ss->sim, &out->ctl);
    out->nmoments = sim_ctl_get_moments(ss->sim, out->moments);
    out->nflows = ss->published ? ss->nflows : 0;
    out->flows = xalloc_zero((size_t)out->nflows + 1, sizeof(*out->flows));
    for (int k = 0; k < out->nflows; k++) {
        struct fabric_snap_flow *o = &out->flows[k];
        const struct mix_flow *mf = &ss->mix->flows[ss->flows[k].mix_index];
        snprintf(o->name, sizeof(o->name), "%s", mf->name);
        o->src = sim_host_index(ss->sim, jsonutil_str(mf->params, "src"));
        o->dst = sim_host_index(ss->sim, jsonutil_str(mf->params, "dst"));
        o->background = mf->role == MIX_ROLE_BACKGROUND;
        o->target = o->background ? 0 : mf->iterations;
        o->st = ss->pub_flows[k].st;
    }
    int nn = sim_nnodes(ss->sim);
    out->nnodes = nn;
    out->node_names = xalloc_zero((size_t)nn + 1, sizeof(*out->node_names));
    out->node_host = xalloc_zero((size_t)nn + 1, sizeof(bool));
    for (int i = 0; i < nn; i++) {
        snprintf(out->node_names[i], sizeof(out->node_names[i]), "%s", sim_node_name(ss->sim, i));
        out->node_host[i] = i < sim_nhosts(ss->sim);
    }
    out->nports = ss->npub_ports;
    out->ports = xalloc_zero((size_t)out->nports + 1, sizeof(*out->ports));
    if (out->nports)
        memcpy(out->ports, ss->pub_ports, (size_t)out->nports * sizeof(*out->ports));
    out->ncounters = ss->npub_ctrs;
    out->counters = xalloc_zero((size_t)out->ncounters + 1, sizeof(*out->counters));
    if (out->ncounters)
        memcpy(out->counters, ss->pub_ctrs, (size_t)out->ncounters * sizeof(*out->counters));
    pthread_mutex_unlock(&ss->lock);
    pthread_mutex_unlock(&reg_lock);
    return 0;
}

/* Playback of the run's simulation in progress (sim_ctl_*). */
static int sim_control(const struct flow_host *run, enum fabric_play what, uint64_t arg)
{
    pthread_mutex_lock(&reg_lock);
    struct sess *ss = find_in(reg, run);
    int rc = ss ? 0 : -ENOENT;
    if (ss) {
        switch (what) {
        case FABRIC_PLAY_SCALE:
            rc = sim_ctl_set_scale(ss->sim, arg);
            break;
        case FABRIC_PLAY_PAUSE:
            sim_ctl_pause(ss->sim, arg != 0);
            break;
        case FABRIC_PLAY_STEP:
            sim_ctl_step(ss->sim, arg);
            break;
        case FABRIC_PLAY_SKIP_IDLE:
            sim_ctl_skip_idle(ss->sim, arg != 0);
            break;
        default:
            rc = -EINVAL;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return rc;
}

static void sim_release(const struct flow_host *run)
{
    pthread_mutex_lock(&reg_lock);
    drop_retired_locked(run);
    pthread_mutex_unlock(&reg_lock);
}

const struct xport_ops xport_sim = {
    .name = "sim",
    .ops = (1u << MIX_OP_PINGPONG) | (1u << MIX_OP_STREAM) | (1u << MIX_OP_RR),
    .needs_peer = false,
    .available = sim_available,
    .param_keys = sim_param_keys,
    .validate = sim_validate,
    .setup = sim_setup,
    .start = sim_start,
    .stop = sim_stop,
    .teardown = sim_teardown,
    .sample = NULL,
    .conditions = sim_conditions,
    .snapshot = sim_snapshot,
    .control = sim_control,
    .release = sim_release,
    .handlers = NULL,
};
