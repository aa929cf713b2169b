/* kv: a KV-cache transfer as serving engines move it, as pure functions: the flow's params
 * (engine, layout, depth, arrival process), the pages a request moves (prefix reuse from a
 * Mooncake-format trace), the descriptor list per engine, and request arrival times. */
#ifndef KV_H
#define KV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/flow/hist.h"

struct mix_flow;

/* Tokens one hash id of a Mooncake trace covers. */
#define KV_TRACE_BLOCK_TOKENS 512
/* The most descriptors one request may carry (a Llama-3.1-70B 8k prompt at TP 8 is 81,920). */
#define KV_MAX_DESCS (1u << 22)
/* The most records read from a trace. */
#define KV_MAX_TRACE 100000

enum kv_engine { KV_ENGINE_VLLM = 0, KV_ENGINE_SGLANG, KV_ENGINE_TRTLLM };
/* flash: K and V of a page apart (FlashAttention); flashinfer: K and V of a page together;
 * mla: one latent per (layer, page). */
enum kv_layout { KV_LAYOUT_FLASH = 0, KV_LAYOUT_FLASHINFER, KV_LAYOUT_MLA };
enum kv_arrival { KV_ARRIVAL_FIXED = 0, KV_ARRIVAL_POISSON, KV_ARRIVAL_TRACE };

struct kv_params {
    enum kv_engine engine;
    enum kv_layout layout;
    int layers;           /* layers on this rank */
    int pages;            /* pages per request (without a trace) */
    int page_tokens;      /* tokens per page (a trace's lengths into pages) */
    int run_pages;        /* sglang: pages per contiguous run the decode side allocated */
    int layers_per_block; /* trtllm: layers packed into one block (0: all of them) */
    int depth;            /* descriptors in flight (TCP: iovecs per vectored call) */
    int qps;              /* queue pairs (verbs); recorded */
    int doorbell_batch;   /* work requests per post (verbs); recorded */
    enum kv_arrival arrival;
    double rate_per_s; /* fixed and poisson: requests per second, whole flow (0: back to back) */
    char trace[256];   /* trace: the Mooncake-format JSON lines file */
};

/* One descriptor: `npages` pages from `page` of one layer (or a block of layers), K (0),
 * V (1) or both (2), at byte offset `offset` of the logical region [layer][kv][page]. */
struct kv_desc {
    uint32_t layer, nlayers;
    uint32_t kv;
    uint32_t page, npages;
    uint64_t offset, len;
};

/* One request of a trace. */
struct kv_trace_rec {
    uint64_t t_ns; /* arrival, from the trace's first (timestamp in ms) */
    uint32_t input_tokens, output_tokens;
    uint32_t nhash;
    uint64_t *hash;
};

struct kv_trace {
    int n;
    struct kv_trace_rec *rec;
};

const char *kv_engine_str(enum kv_engine e);
const char *kv_layout_str(enum kv_layout l);
const char *kv_arrival_str(enum kv_arrival a);

/* The params keys of a kv flow (NULL-terminated), for a transport's param_keys. */
const char *const *kv_param_keys(void);
/* Read a kv flow's params (NULL: all defaults): 0, or -EINVAL with one line naming the
 * flow and the field ("flow kv: params.depth must be a whole number from 1 to 4096"). */
int kv_params_from_json(const cJSON *params, const char *flow, struct kv_params *p,
                        struct ft_err *err);
/* The params as the results record them. */
cJSON *kv_params_to_json(const struct kv_params *p);

/* Load a trace: 0, or -errno naming the file, line and field. Free with kv_trace_free. */
int kv_trace_load(const char *path, struct kv_trace *t, struct ft_err *err);
/* Parse one line into rec (hash owned by rec): 0 or -EINVAL with the field in err. */
int kv_trace_parse_line(const char *line, struct kv_trace_rec *rec, struct ft_err *err);
void kv_trace_free(struct kv_trace *t);

/* Blocks already moved (prefix reuse): a set of hash ids. */
struct kv_seen {
    size_t n, cap;
    uint64_t *slot; /* open addressing; 0 marks empty, ids stored + 1 */
};
void kv_seen_free(struct kv_seen *s);

/* The pages a request moves, ascending, into pages[cap]: all ceil(tokens / page_tokens)
 * of them, less those whose every token lies in a block whose hash id is in seen (when
 * seen is not NULL); the request's ids are then added to seen. rec NULL: params' pages.
 * Returns the count (at most cap), or -E2BIG when more than cap. */
int kv_request_pages(const struct kv_params *p, const struct kv_trace_rec *rec,
                     struct kv_seen *seen, uint32_t *pages, int cap);

/* The descriptors of `page_bytes`-sized units (a page of one layer: K alone for flash,
 * K and V for flashinfer, the latent for mla) for the pages given (ascending), per engine:
 * vllm one per (layer, K or V, page) with flash, per (layer, page) otherwise; sglang one per
 * (layer, K or V, run of contiguous pages, at most run_pages long); trtllm one per (block
 * of layers_per_block layers, page) holding K and V of those layers. out may be NULL to
 * count. Returns the count (written up to cap), or -E2BIG past KV_MAX_DESCS. */
long kv_build(const struct kv_params *p, uint64_t page_bytes, const uint32_t *pages, int npages,
              struct kv_desc *out, size_t cap);

/* The gap before the next request for one of `workers` equal shares of the flow's rate, in
 * ns: fixed 1/rate, poisson an exponential draw from *rng (xorshift state, not 0); 0 when
 * the rate is 0 (back to back). Trace arrivals come from the records. */
uint64_t kv_next_gap_ns(const struct kv_params *p, int workers, uint64_t *rng);

/* ---- a flow's plan, shared by the transports ---- */

/* One request's descriptor list, offsets folded into a region of the plan's size. */
struct kv_job {
    long ndesc;
    uint64_t bytes;
    uint64_t t_ns; /* trace arrival (0 without a trace) */
    uint64_t *off, *len;
};

/* Every request's list, built before the clock starts (one list without a trace, one per trace
 * record with prefix reuse over the trace in its order), and what the workers record beside
 * the per-request histogram: per descriptor, and the requests posted late. */
struct kv_plan {
    struct kv_params p;
    uint64_t unit;   /* the mix's size: one page of one layer (K, K and V, or the latent) */
    uint64_t region; /* bytes of each side's region per connection or queue pair */
    int njobs;
    struct kv_job *jobs;
    uint64_t trace_span_ns; /* a trace replays from its start after this */
    long desc_min, desc_max;
    uint64_t bytes_min, bytes_max, len_max;
    int nworkers, npoints;
    struct hist *desc;        /* [worker][point]: per descriptor, request posted to done */
    _Atomic uint64_t *late;   /* [worker][point]: posted over 1 ms after its arrival */
    _Atomic uint64_t *queued; /* [worker][point]: their ns from arrival to post, summed */
    /* [worker][point]: the requests whose time the point holds, and their bytes (one reading
     * of the flow's state decides for a request's time, descriptors and count together). */
    _Atomic uint64_t *measured, *measured_bytes;
};

/* The plan of kv flow s for nworkers workers and npoints points, its region at least
 * region_min bytes (and the largest descriptor): 0, or -errno naming the flow (params, the
 * trace, too many descriptors). */
int kv_plan_build(const struct mix_flow *s, int nworkers, int npoints, uint64_t region_min,
                  struct kv_plan **out, struct ft_err *err);
void kv_plan_free(struct kv_plan *k);
/* Worker widx's request number idx (from 0 in a point) of nworkers: the job, and its arrival
 * (base: the point's start; *next, *rng: the worker's schedule, *next = base at idx 0). */
const struct kv_job *kv_plan_request(const struct kv_plan *k, int widx, int nworkers, uint64_t idx,
                                     uint64_t base, uint64_t *next, uint64_t *rng, uint64_t *due);
/* Does the plan have arrival times (a rate or a trace), so that a request can be late? */
bool kv_plan_paced(const struct kv_plan *k);
/* The per-point figures (conditions.point_figures): {"kv": {descriptors, per_descriptor
 * {kind, p50_us, p99_us, p99.9_us, max_us}, ...}} for each point; kind says what ends a
 * descriptor's time. */
cJSON *kv_plan_figures(const struct kv_plan *k, const char *kind);
/* The conditions: params, region, requests prepared, what is timed. */
cJSON *kv_plan_conditions(const struct kv_plan *k);

#endif
