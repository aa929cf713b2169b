/* fuzz_model: a model's config.json as `fabtop mix --model FILE` and `fabtop run --model
 * FILE` read it: model_config_load_file, then the sizes of several layouts
 * (model_size_compute: each refused with a message, or sizes that agree with each other), and
 * the mix built from them (mix_model_json), which must load through the mix reader
 * (mix_from_json) whenever it was built. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/ft_err.h"
#include "engine/flow/mix.h"
#include "engine/model/model_config.h"
#include "engine/model/model_size.h"
#include "engine/run/mix_model.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void layout(const struct model_config *m, const struct model_layout *l, struct mix *mix)
{
    struct model_sizes s;
    struct ft_err err = {0};
    if (model_size_compute(m, l, &s, &err) < 0) {
        fuzz_require(err.msg[0] != '\0', "model_size_compute failed without a message");
        return;
    }
    fuzz_require(s.descs * s.desc_bytes == s.kv_request_rank,
                 "descriptors x descriptor size != the request's KV");
    fuzz_require(l->pp > 1 || s.kv_token_rank <= s.kv_token, "more KV on a rank than in all");
    fuzz_require(s.layers_stage >= 1 && s.layers_stage * l->pp >= m->layers,
                 "the stages do not hold every layer");
    static const char *const transports[] = {"nccl", "verbs", "tcp"};
    for (int t = 0; t < 3; t++) {
        struct ft_err gerr = {0};
        cJSON *doc = mix_model_json(m, l, &s, transports[t], &gerr);
        if (!doc) {
            fuzz_require(gerr.msg[0] != '\0', "mix_model_json failed without a message");
            continue;
        }
        struct ft_err merr = {0};
        fuzz_require(mix_from_json(doc, "model mix", mix, &merr) == 0,
                     "a model's mix does not load: %s", merr.msg);
        mix_free(mix);
        cJSON_Delete(doc);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct model_config m;
    struct ft_err err = {0};
    if (model_config_load_file(fuzz_file(0, data, size), &m, &err) < 0) {
        fuzz_require(err.msg[0] != '\0', "model_config_load_file failed without a message");
        return 0;
    }
    struct mix *mix = calloc(1, sizeof(*mix));
    struct model_layout l;
    model_size_layout_defaults(&l);
    layout(&m, &l, mix);
    l.tp = m.kv_heads;
    l.ep = m.moe ? m.experts : 1;
    l.engine = MODEL_ENGINE_SGLANG;
    layout(&m, &l, mix);
    l.tp = 8;
    l.pp = 2;
    l.ep = 8;
    l.dtype = MODEL_DTYPE_FP8;
    l.batch = 1;
    l.prompt = 100;
    l.page = 64;
    layout(&m, &l, mix);
    free(mix);
    return 0;
}
