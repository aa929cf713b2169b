/* fuzz_results: results documents as `fabtop report`, `fabtop compare` and the explorer's
 * results and live views read them. The input is one document, or two separated by a NUL
 * byte (A, then B; one alone is compared with itself). Each goes through the results model's
 * reader (results_doc_load: format, version, types, sizes, histograms), the round trip
 * write -> read -> write (byte-identical), the report summary (run_text_summary), the results
 * list's brief (compare_run_brief) and every size point's histogram (its statistics and the
 * round trip hist_to_json -> hist_from_json); the pair goes through compare_runs,
 * compare_to_json, and `fabtop compare --all` itself (stdout discarded). A rack sweep's
 * document (results_sweep_is) goes through its own reader (results_sweep_read), the round
 * trip write -> read -> write (byte-identical) and its text (text_sweep_report at two widths,
 * stdout discarded).
 * The thresholds of `--expect` against a document: fuzz_expect. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ft_err.h"
#include "common/strbuf.h"
#include "engine/results/compare.h"
#include "engine/flow/hist.h"
#include "engine/results/results.h"
#include "engine/results/results_json.h"
#include "engine/results/results_sweep.h"
#include "common/jsonutil.h"
#include "fuzz_util.h"
#include "cli/cli.h"
#include "text/run_text.h"
#include "text/text_sweep.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet_stdout();
    return 0;
}

static void histograms(const struct results_run *run)
{
    struct hist *h2 = malloc(sizeof(*h2));
    for (int p = 0; p < run->nphases; p++)
        for (int f = 0; f < run->phases[p].nflows; f++)
            for (int k = 0; k < run->phases[p].flows[f].npoints; k++) {
                const struct hist *h = run->phases[p].flows[f].points[k].histogram;
                if (!h)
                    continue;
                struct hist_stats s;
                hist_stats(h, &s);
                (void)hist_percentile(h, 99.9);
                cJSON *back = hist_to_json(h);
                fuzz_require(hist_from_json(back, h2) == 0,
                             "hist_to_json wrote what hist_from_json refuses");
                cJSON *again = hist_to_json(h2);
                char *x = fuzz_print(back), *y = fuzz_print(again);
                fuzz_require(!strcmp(x, y), "histogram save -> load -> save differs");
                cJSON_free(x);
                cJSON_free(y);
                cJSON_Delete(back);
                cJSON_Delete(again);
            }
    free(h2);
}

/* What the model writes it reads back, and writes again byte for byte. */
static void round_trip(const struct results_doc *d)
{
    cJSON *w = results_json_write(d);
    struct results_doc back;
    struct ft_err err = {0};
    fuzz_require(results_json_read(w, "written", &back, &err) == 0,
                 "the reader refuses what the writer wrote: %s", err.msg);
    cJSON *w2 = results_json_write(&back);
    char *x = fuzz_print(w), *y = fuzz_print(w2);
    fuzz_require(!strcmp(x, y), "results write -> read -> write differs");
    cJSON_free(x);
    cJSON_free(y);
    cJSON_Delete(w);
    cJSON_Delete(w2);
    results_doc_free(&back);
}

/* A sweep document: what the reader takes, the writer writes, and what that writes reads
 * back and writes again byte for byte. */
static void sweep(const char *text)
{
    cJSON *j = NULL;
    if (jsonutil_parse(text, strlen(text), "fuzz", &j, NULL) < 0)
        return;
    struct results_sweep s;
    struct ft_err err = {0};
    if (results_sweep_is(j) && results_sweep_read(j, "fuzz", &s, &err) == 0) {
        cJSON *w = results_sweep_write(&s);
        struct results_sweep back;
        fuzz_require(results_sweep_read(w, "written", &back, &err) == 0,
                     "the sweep reader refuses what the writer wrote: %s", err.msg);
        cJSON *w2 = results_sweep_write(&back);
        char *x = fuzz_print(w), *y = fuzz_print(w2);
        fuzz_require(!strcmp(x, y), "sweep write -> read -> write differs");
        cJSON_free(x);
        cJSON_free(y);
        cJSON_Delete(w);
        cJSON_Delete(w2);
        results_sweep_free(&back);
        text_sweep_report(stdout, &s, 80);
        text_sweep_report(stdout, &s, 200);
        results_sweep_free(&s);
    }
    cJSON_Delete(j);
}

static void one(const struct results_doc *doc)
{
    struct strbuf sb;
    strbuf_init(&sb);
    run_text_summary(&sb, &doc->runs[0]);
    strbuf_free(&sb);
    struct compare_brief b;
    compare_run_brief(&doc->runs[0], &b);
    histograms(&doc->runs[0]);
    round_trip(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *ta, *tb;
    fuzz_split(data, size, &ta, &tb);
    char pa[32], pb[32];
    snprintf(pa, sizeof(pa), "%s", fuzz_file(0, ta, strlen(ta)));
    snprintf(pb, sizeof(pb), "%s", tb ? fuzz_file(1, tb, strlen(tb)) : pa);
    sweep(ta);
    if (tb)
        sweep(tb);
    struct results_doc a = {0}, b = {0};
    struct ft_err err = {0};
    if (results_doc_load(pa, &a, &err) == 0)
        one(&a);
    if (tb && results_doc_load(pb, &b, &err) == 0)
        one(&b);
    if (a.nruns && (b.nruns || !tb)) {
        struct compare_result r;
        compare_runs(&a.runs[0], b.nruns ? &b.runs[0] : &a.runs[0], &r);
        for (int i = 0; i < r.nrows; i++)
            for (int k = 0; k < COMPARE_NMETRICS; k++) {
                double ratio;
                (void)compare_ratio(&r.rows[i], k, &ratio);
            }
        cJSON_Delete(compare_to_json(&r));
        compare_free(&r);
        char cmd[] = "compare", all[] = "--all";
        char *argv[] = {cmd, all, pa, pb, NULL};
        (void)cli_compare_main(4, argv);
    }
    results_doc_free(&a);
    results_doc_free(&b);
    free(ta);
    free(tb);
    return 0;
}
