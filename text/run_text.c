/* run_text: the summary table printed at the end of `fabtop run`, in the perftest /
 * sockperf tradition, rendered from a results document (so saved results print alike). */
#include "text/run_text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonutil.h"
#include "engine/results/results.h"

static double num(const cJSON *o, const char *key)
{
    double v = 0;
    return jsonutil_num(o, key, &v) ? v : -1;
}

static void cell(struct strbuf *sb, const cJSON *o, const char *key, int width, const char *fmt)
{
    char buf[32];
    double v;
    if (jsonutil_num(o, key, &v))
        snprintf(buf, sizeof(buf), fmt, v);
    else
        snprintf(buf, sizeof(buf), "n/a");
    strbuf_printf(sb, " %*s", width - 1, buf);
}

/* A latency in microseconds with as many decimals as fit the column. */
static void lat_cell(struct strbuf *sb, const cJSON *o, const char *key)
{
    double v;
    if (!jsonutil_num(o, key, &v))
        cell(sb, o, key, 10, "%.2f");
    else
        cell(sb, o, key, 10, v < 1000 ? "%.2f" : v < 100000 ? "%.1f" : "%.0f");
}

static void size_text(double b, char *buf, size_t len)
{
    if (b < 0)
        snprintf(buf, len, "mixed");
    else if (b >= 1048576 && fmod(b, 1048576) == 0)
        snprintf(buf, len, "%.0fMiB", b / 1048576);
    else if (b >= 1024 && fmod(b, 1024) == 0)
        snprintf(buf, len, "%.0fKiB", b / 1024);
    else
        snprintf(buf, len, "%.0fB", b);
}

static void flow_table(struct strbuf *sb, const cJSON *fl)
{
    const char *kind = jsonutil_str(fl, "latency_kind"), *peer = jsonutil_str(fl, "peer");
    strbuf_printf(sb, "  %s (%s, %s %s %s%s%s)\n", jsonutil_str_or(fl, "name", "n/a"),
                  jsonutil_str_or(fl, "role", "n/a"), jsonutil_str_or(fl, "transport", "n/a"),
                  jsonutil_str_or(fl, "op", "n/a"), jsonutil_str_or(fl, "direction", "n/a"),
                  peer && *peer ? ", " : "", peer && *peer ? peer : "");
    char brief[200];
    results_conditions_brief(cJSON_GetObjectItemCaseSensitive(fl, "conditions"), brief,
                             sizeof(brief));
    if (brief[0])
        strbuf_printf(sb, "    %s\n", brief);
    const char *status = jsonutil_str(fl, "status");
    if (status && strcmp(status, "ok")) {
        double at = num(fl, "failed_at_s");
        strbuf_printf(sb, "    %s", !strcmp(status, "failed") ? "FAILED" : status);
        if (at >= 0)
            strbuf_printf(sb, " %.2f s into the phase", at);
        const char *e = jsonutil_str(fl, "error");
        if (e)
            strbuf_printf(sb, ": %s", e);
        double det = num(fl, "detected_after_last_progress_s");
        if (det >= 0)
            strbuf_printf(sb, " (declared %.2f s after the last byte moved)", det);
        strbuf_add(sb, "\n");
    }
    bool lat = kind && strcmp(kind, "none");
    /* A simulated flow's times and rates are the fabric's, in simulated time; per wall-clock
     * second they would describe this machine's speed at simulating. */
    const char *tr = jsonutil_str(fl, "transport");
    bool sim = tr && !strcmp(tr, "sim");
    const cJSON *simres = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(fl, "conditions"), "sim"), "results");
    /* A collective reads as nccl-tests prints it: the host-timed time per operation and the
     * algorithm and bus bandwidth (GB/s = 10^9 B/s) from it, and what NCCL chose; the loop's
     * own goodput would mislead (each operation waits on an enqueue). */
    const char *op = jsonutil_str(fl, "op");
    bool coll = tr && !strcmp(tr, "nccl") && op && !strcmp(op, "collective");
    /* Host<->GPU copies: GB/s per direction, as the copy engines are rated. */
    bool copy = tr && !strcmp(tr, "nccl") && op && !strcmp(op, "copy");
    if (sim)
        strbuf_printf(sb, "    in simulated time: %s%s%sgoodput, last completion (end)\n",
                      lat ? "latency " : "", lat ? kind : "", lat ? " (us), " : "");
    else if (lat)
        strbuf_printf(sb, "    latency: %s, microseconds\n", kind);
    strbuf_printf(sb, "    %9s %9s", "size", "ops");
    if (lat)
        strbuf_printf(sb, " %9s %9s %9s %9s %9s %9s", "p50", "p90", "p99", "p99.9", "p99.99",
                      "max");
    if (sim)
        strbuf_printf(sb, " %9s %10s\n", "sim Gb/s", "end us");
    else if (coll)
        strbuf_printf(sb, " %9s %9s %9s  %s\n", "time us", "alg GB/s", "bus GB/s", "algo/proto");
    else if (copy)
        strbuf_printf(sb, " %9s %9s %10s\n", "h2d GB/s", "d2h GB/s", "ops/s");
    else
        strbuf_printf(sb, " %9s %9s %10s %7s\n", "Gb/s", "wire Gb/s", "ops/s", "retrans");
    const cJSON *pt;
    cJSON_ArrayForEach(pt, cJSON_GetObjectItem(fl, "points"))
    {
        if (!cJSON_IsTrue(cJSON_GetObjectItem(pt, "measured")))
            continue;
        char size[16];
        size_text(num(pt, "size_bytes"), size, sizeof(size));
        strbuf_printf(sb, "    %9s", size);
        cell(sb, pt, "ops", 10, "%.0f");
        const cJSON *l = cJSON_GetObjectItem(pt, "latency");
        if (lat) {
            static const char *const keys[] = {"p50", "p90", "p99", "p99.9", "p99.99", "max"};
            for (int k = 0; k < 6; k++)
                lat_cell(sb, l, keys[k]);
        }
        if (sim) {
            cell(sb, simres, "goodput_gbps", 10, "%.3f");
            cell(sb, simres, "completion_us", 11, "%.1f");
        } else if (copy) {
            const cJSON *c = cJSON_GetObjectItem(pt, "copy");
            cell(sb, c, "h2d_GBps", 10, "%.2f");
            cell(sb, c, "d2h_GBps", 10, "%.2f");
            cell(sb, pt, "ops_per_s", 11, "%.0f");
        } else if (coll) {
            /* bw_from says which time the bandwidths use: host-timed, else per-iteration. */
            const cJSON *nc = cJSON_GetObjectItem(pt, "nccl");
            const cJSON *t = cJSON_GetObjectItem(nc, "host_timed");
            if (!cJSON_IsObject(t) || !cJSON_GetObjectItem(t, "time_us"))
                t = cJSON_GetObjectItem(nc, "per_iteration");
            lat_cell(sb, t, cJSON_GetObjectItem(t, "time_us") ? "time_us" : "mean_us");
            cell(sb, nc, "algbw_GBps", 10, "%.2f");
            cell(sb, nc, "busbw_GBps", 10, "%.2f");
            const char *al = jsonutil_str(nc, "algo"), *pr = jsonutil_str(nc, "proto");
            strbuf_printf(sb, "  %s/%s", al ? al : "n/a", pr ? pr : "n/a");
        } else {
            cell(sb, pt, "goodput_gbps", 10, "%.3f");
            cell(sb, pt, "wire_gbps", 10, "%.3f");
            cell(sb, pt, "ops_per_s", 11, "%.0f");
            cell(sb, cJSON_GetObjectItem(pt, "tcp"), "retrans_segments", 8, "%.0f");
        }
        if (!cJSON_IsTrue(cJSON_GetObjectItem(pt, "complete")))
            strbuf_add(sb, "  (partial)");
        strbuf_add(sb, "\n");
    }
}

void run_text_summary(struct strbuf *sb, const cJSON *results)
{
    const cJSON *mix = cJSON_GetObjectItem(results, "mix");
    strbuf_printf(sb, "mix %s: %s\n", jsonutil_str_or(mix, "name", "n/a"),
                  jsonutil_str_or(mix, "description", ""));
    const char *started = jsonutil_str(results, "started_at");
    double dur = num(results, "duration_s");
    char took[32] = "n/a";
    if (dur >= 0)
        snprintf(took, sizeof(took), "%.1f s", dur);
    strbuf_printf(sb, "started %s, %s%s\n", started ? started : "n/a", took,
                  cJSON_IsTrue(cJSON_GetObjectItem(results, "interrupted"))
                      ? ", INTERRUPTED: partial results"
                      : "");
    const cJSON *ph;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItem(results, "phases"))
    {
        double pd = num(ph, "duration_s");
        if (pd >= 0)
            strbuf_printf(sb, "\nPhase %s (%.1f s)\n", jsonutil_str_or(ph, "name", "n/a"), pd);
        else
            strbuf_printf(sb, "\nPhase %s\n", jsonutil_str_or(ph, "name", "n/a"));
        const cJSON *fl;
        cJSON_ArrayForEach(fl, cJSON_GetObjectItem(ph, "flows")) flow_table(sb, fl);
    }
    const cJSON *sum = cJSON_GetObjectItem(results, "summary");
    const cJSON *q = cJSON_GetObjectItem(sum, "quiet"), *l = cJSON_GetObjectItem(sum, "loaded");
    if (q && l) {
        strbuf_printf(sb, "\nQuiet vs loaded, %s (last size point, us):\n",
                      jsonutil_str(sum, "foreground"));
        strbuf_printf(sb, "    %-8s %10s %10s\n", "", "quiet", "loaded");
        for (const char *const *k = (const char *const[]){"p50", "p99", "p99.9", "max", NULL}; *k;
             k++) {
            strbuf_printf(sb, "    %-8s", *k);
            lat_cell(sb, q, *k);
            lat_cell(sb, l, *k);
            strbuf_add(sb, "\n");
        }
        double r, qp50, lp50;
        if (jsonutil_num(sum, "p99_loaded_over_quiet", &r))
            strbuf_printf(sb, "    p99 loaded / quiet = %.2f\n", r);
        /* Loaded faster than quiet surprises newcomers: say what it does and does not mean
         * (on this 2-core VM's loopback: quiet p50 26 us, loaded 8 us; disabling the halt
         * idle state did not change the quiet one, so no single cause is claimed). */
        if (jsonutil_num(q, "p50", &qp50) && jsonutil_num(l, "p50", &lp50) && qp50 > 0 &&
            lp50 < 0.8 * qp50)
            strbuf_add(sb,
                       "    note: the loaded median is below the quiet one, so the path's capacity "
                       "did not set the\n    quiet median: per-message host costs (thread "
                       "wake-ups, CPU power states,\n    scheduling) can fall while neighbours "
                       "keep the host busy. Judge the neighbours\n    by the tail (p99.9, "
                       "max).\n");
    }
}
