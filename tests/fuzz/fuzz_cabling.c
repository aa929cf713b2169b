/* fuzz_cabling: a cabling plan as `fabtop topo --cabling PLAN --input SNAPSHOT` reads it
 * (topo_cabling_load: ibnetdiscover format or JSON) and compares it with a discovered
 * fabric (topo_cabling_compare, and lint's cabling-plan rule). The input is the plan,
 * optionally followed by a NUL byte and a topology snapshot with a "fabric" section to
 * compare it with; without one the plan is compared with an empty fabric. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/ft_err.h"
#include "topology/topo_cabling.h"
#include "topology/topo_lint.h"
#include "topology/topo_load.h"
#include "topology/topo_model.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *plan_text, *snap;
    fuzz_split(data, size, &plan_text, &snap);
    struct topo_cabling *plan;
    struct ft_err err = {0};
    if (topo_cabling_load(fuzz_file(0, plan_text, strlen(plan_text)), &plan, &err) < 0) {
        fuzz_require(err.msg[0] != '\0' && !plan, "topo_cabling_load failed without a message");
        goto out;
    }
    struct topo_model *m = NULL;
    if (snap && fuzz_first_byte((const uint8_t *)snap, strlen(snap)) == '{') {
        struct topo_load_opts lo = {
            .input = fuzz_file(1, snap, strlen(snap)), .no_verbs = true, .no_gpu_libs = true};
        if (topo_load(&lo, &m, &err) < 0)
            m = NULL;
    }
    if (!m)
        m = topo_model_new();
    struct topo_cabling_diff *d = NULL;
    int n = topo_cabling_compare(&m->fabric, plan, &d);
    fuzz_require(n >= 0 && (n == 0 || d), "topo_cabling_compare returned %d", n);
    free(d);
    struct topo_findings findings = {0};
    struct topo_lint_opts lo = {.cabling = plan};
    topo_lint_run(m, &lo, &findings);
    topo_findings_free(&findings);
    topo_model_free(m);
    topo_cabling_free(plan);
out:
    free(plan_text);
    free(snap);
    return 0;
}
