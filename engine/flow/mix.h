/* mix: a traffic mix, the JSON document that says what a test runs: flows with their
 * transport, endpoints, operation, sizes, concurrency, rate, timing and role (the
 * foreground under measurement, or a background neighbour), and the phases (quiet, then
 * loaded). Presets named after serving operations ship as JSON files in engine/mixes/. */
#ifndef MIX_H
#define MIX_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"

#define MIX_FORMAT    "fabtop-mix"
#define MIX_VERSION   1
#define MIX_MAX_FLOWS 64
#define MIX_MAX_SIZES 64
/* The largest message size a mix takes: 16 GiB. */
#define MIX_MAX_BYTES (16ull << 30)

enum mix_op {
    MIX_OP_PINGPONG = 0, /* one message each way, one in flight: latency = half round trip */
    MIX_OP_STREAM,       /* one direction as fast as allowed: throughput */
    MIX_OP_RR,           /* request/response with `concurrency` outstanding: round trip */
    MIX_OP_COLLECTIVE,   /* GPU collective (NCCL), or over tcp a ring all-reduce's message
                          * pattern (engine/flow/ring.h): per operation */
    MIX_OP_COPY,         /* host<->GPU copies (background contention) */
    MIX_OP_KV,           /* KV-cache transfer: a request is a list of descriptors (params:
                          * engine/flow/kv.h), timed from the first posted to the notification */
    MIX_OP_COUNT
};

/* How each latency sample is defined (DESIGN.md): ping-pong reports half the round trip as
 * perftest and sockperf do; request/response and RDMA READ the whole round trip; one
 * collective or one post-to-completion is "per operation"; a KV transfer's request, from its
 * first descriptor posted to its notification received, is "per request". */
enum mix_latency_kind {
    MIX_LAT_HALF_RTT = 0,
    MIX_LAT_RTT,
    MIX_LAT_PER_OP,
    MIX_LAT_PER_REQUEST, /* a KV request: first descriptor posted to the notification received */
    MIX_LAT_NONE
};

enum mix_role { MIX_ROLE_FOREGROUND = 0, MIX_ROLE_BACKGROUND };

/* Direction of bulk data, seen from this host: tx = we send to the peer, rx = the peer
 * sends to us (incast into this host), bidir = both at once. */
enum mix_dir { MIX_DIR_TX = 0, MIX_DIR_RX, MIX_DIR_BIDIR };

enum mix_size_kind { MIX_SIZE_FIXED = 0, MIX_SIZE_SWEEP, MIX_SIZE_DIST };

struct mix_sizes {
    enum mix_size_kind kind;
    int n;                         /* sweep points or distribution entries */
    uint64_t bytes[MIX_MAX_SIZES]; /* fixed: bytes[0]; sweep: each point; dist: each size */
    double weight[MIX_MAX_SIZES];  /* dist only: relative weights */
    uint64_t sweep_to;             /* sweep only: "to" and "factor" as the mix gave them, */
    double sweep_factor;           /* so that the mix saved again sweeps the same points */
    uint64_t response_bytes;       /* request/response: reply size (0: same as request) */
};

/* After a failure, how a flow reconnects and goes on measuring (`fabtop drill`; a mix's
 * "recover": {"attempts": 5, "backoff_ms": [50, 1000], "deadline_s": 10,
 * "failover": ["hostB:7470"]}). */
#define MIX_MAX_FAILOVER 4
struct mix_recover {
    bool set;     /* the flow has a policy (else a failure ends it, as in a run) */
    int attempts; /* reconnections tried after one failure, 1 to 1000 */
    double backoff_min_ms, backoff_max_ms; /* the wait before each, doubling from min to max */
    double deadline_s; /* recovered within this long of the detection, or never */
    /* Other agents (HOST[:PORT], the same key) the attempts turn to in order after the one
     * that failed, round and round. */
    char failover[MIX_MAX_FAILOVER][128];
    int nfailover;
};

struct mix_flow {
    char name[32];
    /* The serving operation it stands for ("tp", "kv", "moe", "pp", "api", or any name of
     * at most 15 bytes): the results' scoreboard groups flows by it. "": none given. */
    char class_name[16];
    /* Operations of this flow on one decode step's critical path (the TP all-reduces, whole
     * ones when emulated as a ring, the PP sends, the MoE dispatches). When whole, every
     * per_step consecutive operations of a connection are timed as one step (flow.h); the
     * step's communication adds its flows' steps (engine/results/score.h). 0: not on it. */
    double per_step;
    char transport[16]; /* "tcp", "verbs", "nccl", "sim" */
    enum mix_op op;
    enum mix_role role;
    enum mix_dir dir;
    /* Local endpoint: any of these narrows where traffic leaves (empty: the default route). */
    char local_ip[64];
    char local_netdev[32];
    char local_rdma[48]; /* "mlx5_0:1" */
    int local_gpu;       /* -1 none */
    /* Remote end: "loopback" (the in-process agent) or HOST[:PORT] of a `fabtop serve`. */
    char peer[128];
    /* The library the flow's transport loads (NCCL: `fabtop run --nccl PATH`); "": its
     * default. A run option, not part of the mix document (mix_set_library). */
    char library[256];
    struct mix_sizes size;
    int concurrency;  /* connections / queue pairs / outstanding operations */
    double rate_gbps; /* pacing limit per flow, Gb/s of payload; 0 = unlimited */
    double warmup_s;
    double duration_s;   /* measured time per size point; 0 = use iterations */
    uint64_t iterations; /* measured operations per size point; 0 = use duration */
    double start_s;      /* start offset inside its phase */
    uint64_t seed;       /* size distribution and pacing jitter */
    cJSON *params;       /* transport-specific settings, owned by the mix (may be NULL) */
    struct mix_recover recover;
};

struct mix {
    char source[256]; /* what it was read from (mix_from_json's what), for messages */
    char name[64];
    char description[512];
    char lesson[1024];          /* teaching text shown in the explorer */
    bool quiet_then_loaded;     /* run the foreground alone, then with its neighbours */
    double progress_deadline_s; /* a flow with no progress for this long fails */
    double fail_bound_s;        /* TCP: detect a dead peer or link within this bound */
    int nflows;
    struct mix_flow flows[MIX_MAX_FLOWS];
};

/* The keys (NULL-terminated) the reader accepts in the document, a flow, its local, its size
 * object and its recover; any other is refused, naming the nearest. A flow's params are the
 * transport's (xport_ops.param_keys). docs/schema/mix.schema.json documents every one. */
extern const char *const mix_doc_keys[];
extern const char *const mix_flow_keys[];
extern const char *const mix_local_keys[];
extern const char *const mix_size_keys[];
extern const char *const mix_recover_keys[];

/* Parse and validate; every error names the file (what), the flow and the field. */
int mix_from_json(const cJSON *doc, const char *what, struct mix *m, struct ft_err *err);
int mix_load_file(const char *path, struct mix *m, struct ft_err *err);
/* NAME (a preset in the search path) or a FILE path. Search path: common/datadir.h's for
 * "mixes" (the user's directories, the build tree's engine/mixes for a program run from it,
 * the installed share/fabtop/mixes, $XDG_DATA_DIRS). */
int mix_load(const char *name_or_path, struct mix *m, struct ft_err *err);
/* List preset names (NULL-terminated, caller frees with mix_free_names): those at the top of
 * the search path first, then those one folder down as "FOLDER/NAME" ("sim/incast-pfc"). */
char **mix_list_presets(void);
void mix_free_names(char **names);
cJSON *mix_to_json(const struct mix *m);
void mix_free(struct mix *m); /* frees per-flow params */
/* Every flow of transport loads the library at path (`fabtop run --nccl`): 0, or
 * -ENAMETOOLONG (at most 255 bytes). */
int mix_set_library(struct mix *m, const char *transport, const char *path);
/* Deep copy (params duplicated). */
void mix_copy(struct mix *dst, const struct mix *src);

/* Is every flow simulated (transport "sim")? Such a run touches nothing on this host. */
bool mix_all_simulated(const struct mix *m);
/* Index of the foreground flow (the first one with that role), or -1. */
int mix_foreground(const struct mix *m);
/* Apply `--size BYTES` to the foreground flow (a fixed size). */
void mix_set_size(struct mix *m, uint64_t bytes);
/* Apply `--duration S` to every flow (measured time per size point). */
void mix_set_duration(struct mix *m, double s);

/* One message size: a distribution's, drawn by its weights with the generator state *rng
 * (splitmix64, seeded by the caller); otherwise the first size. */
uint64_t mix_sizes_draw(const struct mix_sizes *s, uint64_t *rng);
/* The largest size it can give. */
uint64_t mix_sizes_largest(const struct mix_sizes *s);
const char *mix_op_str(enum mix_op op);
const char *mix_latency_kind_str(enum mix_latency_kind k);
enum mix_latency_kind mix_latency_kind_of(const struct mix_flow *f);
const char *mix_dir_str(enum mix_dir d);

/* "64KiB", "4MiB", "1000": bytes with binary suffixes (K/Ki = 1024). 0 or -EINVAL. */
int mix_parse_bytes(const char *s, uint64_t *out);

#endif
