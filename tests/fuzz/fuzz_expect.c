/* fuzz_expect: the thresholds of `fabtop run --expect TERMS` (thresholds_parse) and their check
 * against a results document (thresholds_check), as `fabtop run` does at the end of a run. The
 * input is the terms, optionally followed by a NUL byte and a results document. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/ft_err.h"
#include "engine/results/results.h"
#include "engine/run/thresholds.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *terms, *doc_text;
    fuzz_split(data, size, &terms, &doc_text);
    struct thresholds e;
    struct ft_err err = {0};
    if (thresholds_parse(terms, &e, &err) < 0) {
        fuzz_require(err.msg[0] != '\0', "thresholds_parse failed without a message");
    } else if (doc_text) {
        cJSON *doc;
        if (results_load(fuzz_file(0, doc_text, strlen(doc_text)), &doc, &err) == 0) {
            char report[4096];
            int bad = thresholds_check(&e, doc, report, sizeof(report));
            fuzz_require(bad >= 0 && bad <= 64 * THRESHOLDS_MAX, "thresholds_check returned %d",
                         bad);
            cJSON_Delete(doc);
        }
    }
    free(terms);
    free(doc_text);
    return 0;
}
