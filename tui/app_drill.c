/* app_drill: the explorer's fault drill in a thread of its own: drill_run there, its
 * progress documents handed to the event loop under a mutex, read into the results model on
 * the loop's side. */
#include "tui/app_drill.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/jsonutil.h"
#include "common/xalloc.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The default policy (app_drill.h) for a fault of for_s seconds. */
static void default_policy(struct mix_recover *r, double for_s)
{
    memset(r, 0, sizeof(*r));
    r->set = true;
    r->attempts = APP_DRILL_ATTEMPTS;
    r->backoff_min_ms = APP_DRILL_BACKOFF_MIN_MS;
    r->backoff_max_ms = APP_DRILL_BACKOFF_MAX_MS;
    r->deadline_s = APP_DRILL_DEADLINE_S;
    if (for_s + 4 > r->deadline_s) {
        r->deadline_s = for_s + 4;
        int n = (int)(r->deadline_s * 1000 / APP_DRILL_BACKOFF_MAX_MS) + 1;
        if (n > r->attempts)
            r->attempts = n;
    }
}

/* drill_run's progress, on the drill's thread: the document becomes the latest. */
static void on_progress(void *arg, const cJSON *doc)
{
    struct app_drill *d = arg;
    cJSON *copy = cJSON_Duplicate(doc, 1);
    pthread_mutex_lock(&d->lock);
    cJSON_Delete(d->latest);
    d->latest = copy;
    d->rep_ns = now_ns();
    d->gen++;
    pthread_mutex_unlock(&d->lock);
}

static void *drill_main(void *arg)
{
    struct app_drill *d = arg;
    struct drill_opts o = {.mix = &d->mix,
                           .fault = d->fault,
                           .at_s = d->at_s,
                           .for_s = d->for_s,
                           .repeat = d->repeat,
                           .peer = d->peer[0] ? d->peer : NULL,
                           .key_file = d->key_file[0] ? d->key_file : NULL,
                           .agent_exe = d->agent_exe[0] ? d->agent_exe : NULL,
                           .cancel = &d->cancel,
                           .progress = on_progress,
                           .arg = d};
    cJSON *doc = NULL;
    struct drill_summary sum;
    struct ft_err err = {0};
    int rc = drill_run(&o, &doc, &sum, &err);
    pthread_mutex_lock(&d->lock);
    if (doc) {
        /* The final document (the last repetition's, or what was measured before a
         * failure). */
        cJSON_Delete(d->latest);
        d->latest = doc;
    }
    d->ended = true;
    d->ended_rc = rc;
    snprintf(d->ended_error, sizeof(d->ended_error), "%s", rc < 0 ? err.msg : "");
    d->gen++;
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

int app_drill_check(const struct mix *m, enum drill_fault fault, const char *peer,
                    struct ft_err *err)
{
    int rc = drill_check_mix_fault(m, fault, err);
    if (rc < 0)
        return rc;
    if (fault == DRILL_RANK_LOSS && peer)
        return ft_err_set(err, -EINVAL,
                          "%s: rank-loss kills a victim agent the drill starts itself, not the "
                          "agent at %s: Del on the Peer field drills it here",
                          m->source, peer);
    if (fault == DRILL_LINK_DOWN)
        return ft_err_set(err, -EOPNOTSUPP,
                          "%s: link-down takes down a netdev that the explorer does not name: "
                          "`fabtop drill --netns NAME` (or --device DEV --owned) with "
                          "--data-peer HOST does",
                          m->source);
    const struct mix_flow *f = fault == DRILL_BLACKHOLE ? drill_blackhole_needs_netns(m) : NULL;
    if (f)
        return ft_err_set(err, -EOPNOTSUPP,
                          "%s: flow %s: a blackhole of %s traffic needs a network namespace the "
                          "drill owns (`fabtop drill --netns NAME`); the agent's own blackhole "
                          "takes verbs ping-pongs only",
                          m->source, f->name, f->transport);
    return 0;
}

static void add_opt(struct strbuf *sb, const char *opt, const char *value)
{
    strbuf_printf(sb, " %s ", opt);
    strbuf_add_shell_word(sb, value);
}

void app_drill_command(struct strbuf *sb, const char *mix_arg, const struct mix *m,
                       enum drill_fault fault, double for_s, int repeat, const char *peer,
                       const char *key_file)
{
    strbuf_add(sb, "fabtop drill --mix ");
    strbuf_add_shell_word(sb, mix_arg);
    add_opt(sb, "--fault", drill_fault_str(fault));
    bool hole = fault == DRILL_BLACKHOLE && drill_blackhole_needs_netns(m);
    /* A verbs lane's link is its RDMA device's netdev here (a VM's data NIC); a TCP one's,
     * the netdev in a namespace the drill owns. */
    bool verbs = false;
    for (int i = 0; i < m->nflows; i++)
        verbs |= m->flows[i].role != MIX_ROLE_BACKGROUND && !strcmp(m->flows[i].transport, "verbs");
    if (fault == DRILL_LINK_DOWN && verbs)
        strbuf_add(sb, " --device DEV --owned");
    else if (fault == DRILL_LINK_DOWN || hole)
        strbuf_add(sb, " --netns NAME");
    /* The faulted path must be the traffic's: an agent across it, not the in-process one. */
    if ((fault == DRILL_LINK_DOWN || hole) && !peer)
        strbuf_add(sb, " --peer HOST");
    if (peer && fault != DRILL_RANK_LOSS) {
        add_opt(sb, "--peer", peer);
        if (key_file && key_file[0])
            add_opt(sb, "--key-file", key_file);
    }
    if (fault == DRILL_LINK_DOWN)
        strbuf_add(sb, " --data-peer HOST");
    char t[32];
    snprintf(t, sizeof(t), "%g", for_s);
    add_opt(sb, "--for", t);
    if (repeat != 1)
        strbuf_printf(sb, " --repeat %d", repeat);
}

int app_drill_give_policy(struct mix *m, double for_s, struct mix_recover *policy, int *drilled)
{
    default_policy(policy, for_s);
    int given = 0;
    *drilled = 0;
    for (int i = 0; i < m->nflows; i++) {
        struct mix_flow *f = &m->flows[i];
        if (f->role == MIX_ROLE_BACKGROUND)
            continue; /* load: it reconnects until the repetition ends anyway */
        (*drilled)++;
        if (!f->recover.set) {
            f->recover = *policy;
            given++;
        }
    }
    return given;
}

int app_drill_save_mix(const struct mix *m, double for_s, const char *path, struct ft_err *err)
{
    struct mix c;
    struct mix_recover policy;
    int drilled;
    mix_copy(&c, m);
    app_drill_give_policy(&c, for_s, &policy, &drilled);
    cJSON *j = mix_to_json(&c);
    mix_free(&c);
    int rc = jsonutil_save(path, j, true, err);
    cJSON_Delete(j);
    return rc;
}

int app_drill_start(const struct app_drill_opts *o, struct app_drill **out, struct ft_err *err)
{
    *out = NULL;
    int rc = app_drill_check(o->mix, o->fault, o->peer, err);
    if (rc < 0)
        return rc;
    if (!(o->for_s >= APP_DRILL_MIN_FOR_S && o->for_s <= APP_DRILL_MAX_FOR_S))
        return ft_err_set(err, -EINVAL, "a drill's fault lasts %g to %g s, not %g s",
                          APP_DRILL_MIN_FOR_S, APP_DRILL_MAX_FOR_S, o->for_s);
    if (o->repeat < 1 || o->repeat > APP_DRILL_MAX_REPEAT)
        return ft_err_set(err, -EINVAL, "a drill has 1 to %d repetitions, not %d",
                          APP_DRILL_MAX_REPEAT, o->repeat);
    if (o->fault == DRILL_RANK_LOSS && (!o->agent_exe || !o->agent_exe[0]))
        return ft_err_set(err, -EINVAL,
                          "rank-loss: no fabtop executable to start the victim "
                          "agent");
    struct app_drill *d = xalloc_zero(1, sizeof(*d));
    mix_copy(&d->mix, o->mix);
    d->given = app_drill_give_policy(&d->mix, o->for_s, &d->policy, &d->drilled);
    d->fault = o->fault;
    d->at_s = APP_DRILL_AT_S;
    d->for_s = o->for_s;
    d->repeat = o->repeat;
    snprintf(d->peer, sizeof(d->peer), "%s", o->peer ? o->peer : "");
    snprintf(d->key_file, sizeof(d->key_file), "%s", o->key_file ? o->key_file : "");
    snprintf(d->agent_exe, sizeof(d->agent_exe), "%s", o->agent_exe ? o->agent_exe : "");
    d->start_ns = d->rep_ns = d->cur_rep_ns = now_ns();
    pthread_mutex_init(&d->lock, NULL);
    rc = pthread_create(&d->thr, NULL, drill_main, d);
    if (rc != 0) {
        pthread_mutex_destroy(&d->lock);
        mix_free(&d->mix);
        free(d);
        return ft_err_set(err, -rc, "cannot start the drill's thread: %s", strerror(rc));
    }
    *out = d;
    return 0;
}

bool app_drill_poll(struct app_drill *d)
{
    pthread_mutex_lock(&d->lock);
    bool changed = d->gen != d->seen_gen;
    cJSON *j = NULL;
    if (changed) {
        d->seen_gen = d->gen;
        j = d->latest; /* the loop's now */
        d->latest = NULL;
        d->cur_rep_ns = d->rep_ns;
        d->done = d->ended;
        d->rc = d->ended_rc;
        snprintf(d->error, sizeof(d->error), "%s", d->ended_error);
    }
    pthread_mutex_unlock(&d->lock);
    if (!changed)
        return false;
    if (j) {
        cJSON_Delete(d->json);
        d->json = j;
        if (d->doc_ok)
            results_drill_free(&d->doc);
        memset(&d->doc, 0, sizeof(d->doc));
        struct ft_err err = {0};
        d->doc_ok = results_drill_read(j, "the drill's document", &d->doc, &err) == 0;
        snprintf(d->doc_error, sizeof(d->doc_error), "%s", d->doc_ok ? "" : err.msg);
    }
    if (d->done && !d->joined) {
        pthread_join(d->thr, NULL); /* it has returned, or is about to */
        d->joined = true;
    }
    return true;
}

bool app_drill_running(const struct app_drill *d)
{
    return !d->done;
}

int app_drill_current(const struct app_drill *d)
{
    if (d->done)
        return 0;
    int k = (d->doc_ok ? d->doc.nreps : 0) + 1;
    return k > d->repeat ? d->repeat : k;
}

double app_drill_rep_elapsed_s(const struct app_drill *d)
{
    return (double)(now_ns() - d->cur_rep_ns) / 1e9;
}

void app_drill_stop(struct app_drill *d)
{
    if (d)
        atomic_store(&d->cancel, true);
}

void app_drill_free(struct app_drill *d)
{
    if (!d)
        return;
    app_drill_stop(d);
    if (!d->joined)
        pthread_join(d->thr, NULL);
    pthread_mutex_destroy(&d->lock);
    cJSON_Delete(d->latest);
    cJSON_Delete(d->json);
    if (d->doc_ok)
        results_drill_free(&d->doc);
    mix_free(&d->mix);
    free(d);
}
