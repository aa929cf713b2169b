/* fuzz_sim_params: the simulator's settings, a sim flow's "params": {"fabric": {...}} in a
 * mix, as the sim transport reads them (sim_params_from_json over the RoCE and the
 * InfiniBand defaults), then the simulated fabric built with them on a shipped topology
 * (sim_new: buffers, PFC headroom, credits) and the settings written as the results
 * record them (sim_params_to_json). The input is the "fabric" object. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/ft_err.h"
#include "common/jsonutil.h"
#include "engine/sim/sim.h"
#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cJSON *topo[2]; /* RoCE, InfiniBand */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static const char *const names[2] = {"star8-100g", "ib-star16-200g"};
    for (int i = 0; i < 2; i++) {
        struct ft_err err = {0};
        fuzz_require(sim_topology_load(names[i], &topo[i], &err) == 0, "%s", err.msg);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_str(data, size);
    cJSON *o;
    if (jsonutil_parse(text, size, "fabric", &o, NULL) < 0) {
        free(text);
        return 0;
    }
    for (int f = 0; f < 2; f++) {
        struct sim_params p;
        struct ft_err err = {0};
        sim_params_default(&p, f ? SIM_FABRIC_IB : SIM_FABRIC_ROCE);
        if (sim_params_from_json(o, "fabric", &p, &err) < 0) {
            fuzz_require(err.msg[0] != '\0', "sim_params_from_json failed without a message");
            continue;
        }
        cJSON_Delete(sim_params_to_json(&p));
        struct sim *s;
        if (sim_new(topo[f], f ? "ib-star16-200g" : "star8-100g", &p, &s, &err) == 0)
            sim_free(s);
        else
            fuzz_require(err.msg[0] != '\0', "sim_new failed without a message");
    }
    cJSON_Delete(o);
    free(text);
    return 0;
}
