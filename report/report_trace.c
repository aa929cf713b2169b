/* report_trace: the Chrome trace event format as documented in "Trace Event Format"
 * (Google, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU): every
 * event has ph, ts (microseconds), pid and tid; "X" events carry dur and must nest on one
 * thread (Perfetto refuses complete events that overlap without nesting, so each flow has a
 * thread of its own, its setup and points inside its span, one after another); "M" events
 * name the process and threads; "C" events are counter samples, one series per args key;
 * "i" events are instants with a scope ("g" global, "t" thread).
 *
 * Times: the document's events are "  1.505s text", seconds since the run started, as are
 * its timelines' t_s. A phase starts at its "phase NAME:" event (else where the one before
 * ended) and lasts its duration_s; a flow spans its "NAME: setting up" to "NAME: done"
 * events within the phase (else the phase); its setup lasts setup_s, then after the mix's
 * start_s for the flow each size point warms up for warmup_s and measures for its measure_s
 * (engine/run/runner.c runs them so). The document records no start time per
 * point, so a point's place is derived this way: the events' args say so. */
#include "report/report_trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "text/text_units.h"

#define MAX_TIDS 64
/* engine/flow/flow.h's FLOW_OPS_MAX, named in the document (report/ stays off the engine's
 * internals). */
#define FLOW_OPS_MAX_DOC 2048

/* An event line's time (s) and text; false for a line without one. */
static bool event_time(const char *line, double *t, const char **text)
{
    char *end;
    while (*line == ' ')
        line++;
    double v = strtod(line, &end);
    if (end == line || *end != 's' || end[1] != ' ' || !isfinite(v))
        return false;
    *t = v;
    *text = end + 2;
    return true;
}

/* The time of the first event at or after from whose text starts with prefix; NAN: none. */
static double find_event(const struct results_run *r, const char *prefix, double from)
{
    size_t n = strlen(prefix);
    for (int i = 0; i < r->nevents; i++) {
        double t;
        const char *text;
        if (r->events[i] && event_time(r->events[i], &t, &text) && t >= from - 1e-9 &&
            !strncmp(text, prefix, n))
            return t;
    }
    return NAN;
}

static double num(const struct results_num *f)
{
    double v;
    return results_num_get(f, &v) ? v : NAN;
}

/* Seconds as whole nanoseconds, so that a child's end is never past its parent's. */
static long long ns(double s)
{
    return llround(s * 1e9);
}

static cJSON *event(cJSON *evs, const char *ph, const char *name, double ts_s, int tid)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddStringToObject(e, "ph", ph);
    cJSON_AddNumberToObject(e, "ts", (double)ns(ts_s) / 1e3); /* microseconds */
    cJSON_AddNumberToObject(e, "pid", 1);
    cJSON_AddNumberToObject(e, "tid", tid);
    cJSON_AddItemToArray(evs, e);
    return e;
}

static cJSON *complete(cJSON *evs, const char *cat, const char *name, double t0, double t1, int tid)
{
    cJSON *e = event(evs, "X", name, t0, tid);
    cJSON_AddStringToObject(e, "cat", cat);
    cJSON_AddNumberToObject(e, "dur", (double)(ns(t1) - ns(t0)) / 1e3);
    return e;
}

static void meta(cJSON *evs, const char *what, int tid, const char *name)
{
    cJSON *e = event(evs, "M", what, 0, tid);
    cJSON *a = cJSON_AddObjectToObject(e, "args");
    cJSON_AddStringToObject(a, "name", name);
}

static void add_str(cJSON *o, const char *key, const struct results_str *f)
{
    const char *s = results_str_get(f);
    if (s)
        cJSON_AddStringToObject(o, key, s);
}

static void add_num(cJSON *o, const char *key, const struct results_num *f)
{
    double v;
    if (results_num_get(f, &v))
        cJSON_AddNumberToObject(o, key, v);
}

static void size_name(char *buf, size_t len, double b)
{
    if (!isfinite(b))
        snprintf(buf, len, "point");
    else
        text_size(buf, len, b);
}

/* The thread of flow name (1...), named on first use; 0 when there are too many. */
static int flow_tid(cJSON *evs, const char *names[], int *n, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(names[i], name))
            return i + 1;
    if (*n == MAX_TIDS)
        return 0;
    names[(*n)++] = name;
    char b[200];
    snprintf(b, sizeof(b), "flow %s", name);
    meta(evs, "thread_name", *n, b);
    cJSON *e = event(evs, "M", "thread_sort_index", 0, *n);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(e, "args"), "sort_index", *n);
    return *n;
}

/* A flow's timeline as counter samples, then a 0 where the flow ended. */
static void counters(cJSON *evs, const struct results_flow *fl, const char *name, double end)
{
    const struct results_timeline *tl = &fl->timeline;
    if (fl->timeline_st != RESULTS_SET || tl->t_s.st != RESULTS_SET)
        return;
    const struct {
        const struct results_series *s;
        const char *track, *unit;
    } tr[] = {{&tl->goodput_gbps, "goodput", "Gb/s"}, {&tl->ops_per_s, "operations", "ops/s"}};
    for (size_t k = 0; k < sizeof(tr) / sizeof(tr[0]); k++) {
        if (tr[k].s->st != RESULTS_SET)
            continue;
        char b[200];
        snprintf(b, sizeof(b), "%s %s (%s)", tr[k].track, name, tr[k].unit);
        int n = tl->t_s.n < tr[k].s->n ? tl->t_s.n : tr[k].s->n;
        double last = -INFINITY;
        for (int j = 0; j < n; j++) {
            if (!isfinite(tl->t_s.v[j]) || !isfinite(tr[k].s->v[j]))
                continue;
            cJSON *e = event(evs, "C", b, tl->t_s.v[j], 0);
            cJSON_AddNumberToObject(cJSON_AddObjectToObject(e, "args"), tr[k].unit, tr[k].s->v[j]);
            last = tl->t_s.v[j];
        }
        if (n && isfinite(end) && end > last) {
            cJSON *e = event(evs, "C", b, end, 0);
            cJSON_AddNumberToObject(cJSON_AddObjectToObject(e, "args"), tr[k].unit, 0);
        }
    }
}

/* The sampled operations: a "b" and an "e" each, their id unique in the document. */
static void trace_ops(cJSON *evs, const struct results_run *r, const struct report_trace_op *ops,
                      int n, const char *names[], int nnames)
{
    for (int i = 0; i < n; i++) {
        const struct report_trace_op *op = &ops[i];
        if (op->phase < 0 || op->phase >= r->nphases || !op->flow || !(op->t1_s >= op->t0_s))
            continue;
        int tid = 0;
        for (int k = 0; k < nnames; k++)
            if (!strcmp(names[k], op->flow))
                tid = k + 1;
        if (!tid)
            continue;
        char name[200], id[24];
        snprintf(name, sizeof(name), "op %s", op->flow);
        snprintf(id, sizeof(id), "0x%x", i + 1);
        cJSON *b = event(evs, "b", name, op->t0_s, tid);
        cJSON_AddStringToObject(b, "cat", "op");
        cJSON_AddStringToObject(b, "id", id);
        cJSON *a = cJSON_AddObjectToObject(b, "args");
        cJSON_AddNumberToObject(a, "worker", op->worker);
        cJSON_AddNumberToObject(a, "us", (double)(ns(op->t1_s) - ns(op->t0_s)) / 1e3);
        cJSON *e = event(evs, "e", name, op->t1_s, tid);
        cJSON_AddStringToObject(e, "cat", "op");
        cJSON_AddStringToObject(e, "id", id);
    }
}

cJSON *report_trace_run(const struct results_run *r)
{
    return report_trace_run_ops(r, NULL, 0);
}

cJSON *report_trace_run_ops(const struct results_run *r, const struct report_trace_op *ops,
                            int nops)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *evs = cJSON_AddArrayToObject(doc, "traceEvents");
    cJSON_AddStringToObject(doc, "displayTimeUnit", "ms");
    const char *mix = jsonutil_str_or(r->mix, "name", "n/a");
    cJSON *other = cJSON_AddObjectToObject(doc, "otherData");
    cJSON_AddStringToObject(other, "mix", mix);
    add_str(other, "started_at", &r->started_at);
    add_str(other, "host", &r->host_local);
    cJSON_AddStringToObject(other, "fabtop", FABTOP_VERSION);
    cJSON_AddStringToObject(other, "times", "microseconds since the run started");
    if (nops) {
        char ob[200];
        snprintf(ob, sizeof(ob),
                 "%d sampled evenly: one in N of each worker's operations, N doubling each "
                 "time its %d fill; async events of category op",
                 nops, FLOW_OPS_MAX_DOC);
        cJSON_AddStringToObject(other, "operations", ob);
    } else {
        cJSON_AddStringToObject(other, "operations",
                                "not sampled (a saved results file holds histograms only: "
                                "fabtop run --trace samples them as it runs)");
    }
    char b[300];
    snprintf(b, sizeof(b), "fabtop run %s", mix);
    meta(evs, "process_name", 0, b);
    meta(evs, "thread_name", 0, "phases and events");
    const char *names[MAX_TIDS];
    int nnames = 0;
    double tid_end[MAX_TIDS + 1];
    for (int i = 0; i <= MAX_TIDS; i++)
        tid_end[i] = 0;
    double start = 0;
    for (int p = 0; p < r->nphases; p++) {
        const struct results_phase *ph = &r->phases[p];
        const char *pname = results_str_get(&ph->name);
        snprintf(b, sizeof(b), "phase %s:", pname ? pname : "");
        double t0 = find_event(r, b, start);
        if (!isfinite(t0))
            t0 = start;
        double d = num(&ph->duration_s), t1 = isfinite(d) ? t0 + d : t0;
        if (!isfinite(d))
            for (int i = 0; i < ph->nflows; i++)
                for (int j = 0; j < ph->flows[i].timeline.t_s.n; j++)
                    t1 = fmax(t1, ph->flows[i].timeline.t_s.v[j]);
        if (t0 < tid_end[0])
            t0 = tid_end[0];
        if (t1 < t0)
            t1 = t0;
        snprintf(b, sizeof(b), "phase %s", pname ? pname : "n/a");
        cJSON *e = complete(evs, "phase", b, t0, t1, 0);
        cJSON *a = cJSON_AddObjectToObject(e, "args");
        add_num(a, "duration_s", &ph->duration_s);
        cJSON_AddNumberToObject(a, "flows", ph->nflows);
        tid_end[0] = t1;
        for (int i = 0; i < ph->nflows; i++) {
            const struct results_flow *fl = &ph->flows[i];
            const char *name = results_str_get(&fl->name);
            if (!name)
                continue;
            int tid = flow_tid(evs, names, &nnames, name);
            if (!tid)
                continue;
            snprintf(b, sizeof(b), "%s: setting up", name);
            double fs = find_event(r, b, t0);
            if (!isfinite(fs) || fs > t1)
                fs = t0;
            snprintf(b, sizeof(b), "%s: done", name);
            double fe = find_event(r, b, fs);
            double fail = num(&fl->failed_at_run_s);
            if (isfinite(fail) && (!isfinite(fe) || fail < fe))
                fe = fail;
            if (!isfinite(fe) || fe < fs)
                fe = fmax(t1, fs);
            if (fs < tid_end[tid])
                fs = tid_end[tid];
            if (fe < fs)
                fe = fs;
            e = complete(evs, "flow", name, fs, fe, tid);
            a = cJSON_AddObjectToObject(e, "args");
            if (pname)
                cJSON_AddStringToObject(a, "phase", pname);
            add_str(a, "role", &fl->role);
            add_str(a, "transport", &fl->transport);
            add_str(a, "op", &fl->op);
            add_str(a, "direction", &fl->direction);
            add_str(a, "peer", &fl->peer);
            add_str(a, "status", &fl->status);
            add_str(a, "error", &fl->error);
            tid_end[tid] = fe;
            double t = fs, setup = num(&fl->setup_s);
            if (isfinite(setup) && setup > 0) {
                double se = fmin(fs + setup, fe);
                e = complete(evs, "setup", "setup", fs, se, tid);
                add_num(cJSON_AddObjectToObject(e, "args"), "setup_s", &fl->setup_s);
                t = se;
            }
            /* The mix's start_s and warmup_s for the flow: each point warms up first. */
            double delay = 0, warm = 0;
            const cJSON *mf;
            cJSON_ArrayForEach(mf, cJSON_GetObjectItem(r->mix, "flows"))
            {
                const char *mn = jsonutil_str(mf, "name");
                if (mn && !strcmp(mn, name)) {
                    if (!jsonutil_num(mf, "start_s", &delay) || !(delay >= 0))
                        delay = 0;
                    if (!jsonutil_num(mf, "warmup_s", &warm) || !(warm >= 0))
                        warm = 0;
                    break;
                }
            }
            t = fmin(t + delay, fe);
            /* Where the derived places run past the flow's end (its events are stamped to the
             * millisecond and the setup is timed apart, so under load the sum can overrun),
             * the warmups and points are shortened in proportion to fit: every measured point
             * keeps its event, in order, inside the flow's span. */
            double need = 0;
            for (int k = 0; k < fl->npoints; k++) {
                double m = num(&fl->points[k].measure_s);
                if (isfinite(m) && m > 0)
                    need += warm + m;
            }
            double fit = need > 0 && t + need > fe ? fmax(fe - t, 0) / need : 1;
            for (int k = 0; k < fl->npoints; k++) {
                const struct results_point *pt = &fl->points[k];
                double m = num(&pt->measure_s);
                if (!isfinite(m) || m <= 0)
                    continue;
                if (warm > 0) {
                    double we = fmin(t + warm * fit, fe);
                    complete(evs, "warmup", "warmup", t, we, tid);
                    t = we;
                }
                double pe = fmin(t + m * fit, fe);
                size_name(b, sizeof(b), num(&pt->size_bytes));
                e = complete(evs, "point", b, t, pe, tid);
                a = cJSON_AddObjectToObject(e, "args");
                add_num(a, "size_bytes", &pt->size_bytes);
                add_num(a, "measure_s", &pt->measure_s);
                add_num(a, "ops", &pt->ops);
                add_num(a, "goodput_gbps", &pt->goodput_gbps);
                if (pt->latency_st == RESULTS_SET) {
                    add_str(a, "latency_kind", &fl->latency_kind);
                    add_num(a, "p50_us", &pt->latency.p50);
                    add_num(a, "p99_us", &pt->latency.p99);
                    add_num(a, "p99.9_us", &pt->latency.p999);
                    add_num(a, "max_us", &pt->latency.max);
                }
                cJSON_AddStringToObject(a, "placement",
                                        fit < 1 ? "derived, shortened to fit the flow's span: "
                                                  "after the setup and the mix's start_s, each "
                                                  "point after its warmup_s (the document has no "
                                                  "start time per point)"
                                                : "derived: after the setup and the mix's "
                                                  "start_s, each point after its warmup_s for its "
                                                  "measure_s (the document has no start time per "
                                                  "point)");
                t = pe;
            }
            if (isfinite(fail)) {
                snprintf(b, sizeof(b), "%s failed", name);
                e = event(evs, "i", b, fail, tid);
                cJSON_AddStringToObject(e, "s", "t");
                a = cJSON_AddObjectToObject(e, "args");
                add_str(a, "error", &fl->error);
                add_num(a, "detected_after_last_progress_s", &fl->detected_after_last_progress_s);
            }
            counters(evs, fl, name, fe);
        }
        start = t1;
    }
    trace_ops(evs, r, ops, nops, names, nnames);
    for (int i = 0; i < r->nevents; i++) {
        double t;
        const char *text;
        if (!r->events[i] || !event_time(r->events[i], &t, &text))
            continue;
        cJSON *e = event(evs, "i", text, t, 0);
        cJSON_AddStringToObject(e, "cat", "event");
        cJSON_AddStringToObject(e, "s", "g");
    }
    return doc;
}
