/* fuzz_mix: a traffic mix file as `fabtop run --mix FILE` and the explorer's setup read
 * it: mix_load_file, then the checks runner_start makes before anything starts (the
 * params hold only keys the transport reads (xport_check_params), the transport exists, can
 * do the operation, and its validate() accepts the flow: the
 * simulator's validate loads the flow's topology and parameters and builds the simulated
 * fabric). Round trip: the explorer saves a mix with mix_to_json (last-setup.json), so a
 * mix that loaded must save, load again, and save the same document. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/ft_err.h"
#include "engine/flow/mix.h"
#include "engine/xport/xport.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void validate(const struct mix *m)
{
    struct ft_err kerr = {0};
    if (xport_check_params(m, &kerr) < 0) { /* runner_validate's first check */
        fuzz_require(kerr.msg[0] != '\0', "xport_check_params failed without a message");
        return;
    }
    for (int i = 0; i < m->nflows; i++) {
        const struct mix_flow *f = &m->flows[i];
        const struct xport_ops *xp = xport_find(f->transport);
        if (!xp || !(xp->ops & (1u << f->op)) || !xp->validate)
            continue;
        struct ft_err err = {0};
        if (xp->validate(f, &err) < 0)
            fuzz_require(err.msg[0] != '\0', "flow %s: validate failed without a message", f->name);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mix *m = calloc(1, sizeof(*m)), *m2 = calloc(1, sizeof(*m2));
    struct ft_err err = {0};
    if (mix_load_file(fuzz_file(0, data, size), m, &err) < 0) {
        fuzz_require(err.msg[0] != '\0', "mix_load_file failed without a message");
        free(m);
        free(m2);
        return 0;
    }
    validate(m);
    cJSON *doc = mix_to_json(m);
    char *first = fuzz_print(doc);
    cJSON_Delete(doc);
    struct ft_err err2 = {0};
    cJSON *again = cJSON_Parse(first);
    fuzz_require(again && mix_from_json(again, "saved mix", m2, &err2) == 0,
                 "a mix fabtop saved does not load: %s", err2.msg);
    cJSON_Delete(again);
    doc = mix_to_json(m2);
    char *second = fuzz_print(doc);
    cJSON_Delete(doc);
    fuzz_require(!strcmp(first, second), "mix save -> load -> save differs:\n  %s\n  %s", first,
                 second);
    cJSON_free(first);
    cJSON_free(second);
    mix_free(m);
    mix_free(m2);
    free(m);
    free(m2);
    return 0;
}
