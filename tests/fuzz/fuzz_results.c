/* fuzz_results: results documents as `fabtop report`, `fabtop compare` and the explorer's
 * results and live views read them. The input is one document, or two separated by a NUL
 * byte (A, then B; one alone is compared with itself). Each goes through results_load
 * (format and version), the report summary (run_text_summary), the results list's brief
 * (compare_brief) and every size point's histogram (hist_from_json, as the live view draws it,
 * with its statistics and the round trip hist_to_json -> hist_from_json); the pair goes
 * through compare_results, compare_to_json, and `fabtop compare --all` itself (stdout discarded).
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
#include "fuzz_util.h"
#include "cli/cli.h"
#include "text/run_text.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet_stdout();
    return 0;
}

static void histograms(const cJSON *doc)
{
    struct hist *h = malloc(sizeof(*h)), *h2 = malloc(sizeof(*h2));
    const cJSON *ph, *fl, *pt;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(doc, "phases"))
        cJSON_ArrayForEach(fl, cJSON_GetObjectItemCaseSensitive(ph, "flows"))
            cJSON_ArrayForEach(pt, cJSON_GetObjectItemCaseSensitive(fl, "points"))
    {
        const cJSON *hj = cJSON_GetObjectItemCaseSensitive(pt, "histogram");
        if (!hj || hist_from_json(hj, h) != 0)
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
    free(h);
    free(h2);
}

static void one(const cJSON *doc)
{
    struct strbuf sb;
    strbuf_init(&sb);
    run_text_summary(&sb, doc);
    strbuf_free(&sb);
    struct compare_brief b;
    compare_brief(doc, &b);
    histograms(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *ta, *tb;
    fuzz_split(data, size, &ta, &tb);
    char pa[32], pb[32];
    snprintf(pa, sizeof(pa), "%s", fuzz_file(0, ta, strlen(ta)));
    snprintf(pb, sizeof(pb), "%s", tb ? fuzz_file(1, tb, strlen(tb)) : pa);
    cJSON *a = NULL, *b = NULL;
    struct ft_err err = {0};
    if (results_load(pa, &a, &err) == 0)
        one(a);
    if (tb && results_load(pb, &b, &err) == 0)
        one(b);
    if (a && (b || !tb)) {
        struct compare_result r;
        struct ft_err cerr = {0};
        if (compare_results(a, b ? b : a, &r, &cerr) == 0) {
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
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
    free(ta);
    free(tb);
    return 0;
}
