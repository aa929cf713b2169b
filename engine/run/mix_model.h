/* mix_model: a serving mix from a model (engine/model/): the TP all-reduces of decode and
 * prefill, KV-cache transfers (descriptor size and count per request), MoE dispatch and
 * combine, PP activations, as a normal fabtop mix (format fabtop-mix, version 1) that the
 * mix reader loads. Flows are named by class: tp-, kv-, moe-, pp- (docs/serving.md). */
#ifndef MIX_MODEL_H
#define MIX_MODEL_H

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/flow/mix.h"
#include "engine/model/model_config.h"
#include "engine/model/model_size.h"

/* The largest message a tcp or verbs flow takes (both transports' limit). */
#define MIX_MODEL_MAX_MSG (1ull << 30)
/* The smallest message a tcp ping-pong takes (its header). */
#define MIX_MODEL_MIN_MSG 16

/* The mix document for model m served as l (sizes s from model_size_compute) over transport
 * "nccl", "verbs" or "tcp": NULL with err set when a flow cannot be expressed (a message
 * over a transport's limit, names the option to lower). Caller frees with cJSON_Delete. */
cJSON *mix_model_json(const struct model_config *m, const struct model_layout *l,
                      const struct model_sizes *s, const char *transport, struct ft_err *err);
/* The same, read through the mix reader into out (mix_from_json): 0 or -errno. */
int mix_model_make(const struct model_config *m, const struct model_layout *l,
                   const struct model_sizes *s, const char *transport, struct mix *out,
                   struct ft_err *err);

/* The best transport here for a model's mix when none is chosen (fabtop mix/run --model,
 * the explorer's setup view): "nccl" when CUDA and NCCL load and see a GPU, else "verbs"
 * when an RDMA device is usable, else "tcp"; why (may be NULL) says what the better ones
 * lacked ("" when nccl was chosen). */
const char *mix_model_best_transport(char *why, size_t len);

#endif
