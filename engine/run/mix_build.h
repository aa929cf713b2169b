/* mix_build: a mix built from a preset (or mix file) and a few settings ("knobs"): the
 * local endpoint, the peer and its key file, the transport, the message size, the
 * concurrency, the duration, the incast senders and whether the neighbours (background
 * flows) run. The explorer's setup form edits one builder and `fabtop run` can say every
 * knob as a flag (mix_build_knobs: the flag, its argument, its range); both then build the
 * same mix (mix_build_make) and show the same command line (mix_build_command_line).
 *
 * Knobs are kept as given (text; "" = the preset's value) and checked when the mix is
 * built, which names the one thing wrong. The order of the checks, and so which message a
 * wrong setting gets, is: size, concurrency (and ping-pong's 1 in flight), duration,
 * senders, peer, key file, transport, then the transport's own validate on every flow.
 *
 *   struct mix_build b;
 *   mix_build_init(&b);
 *   if (mix_build_load(&b, "incast", &err) < 0) ...           -- the preset (b.base)
 *   mix_build_set(&b, MIX_KNOB_SENDERS, "5", &err);            -- each knob given
 *   if (mix_build_make(&b, &m, why, sizeof(why)) == 0) ...     -- the mix, or why not
 *   mix_build_free(&b);
 *
 * The endpoint "rdma:DEV:PORT" with TCP leaves through the port's netdev: the caller that
 * knows the topology fills ep.netdev/ep.ip with mix_build_rdma_netdev (the explorer and
 * `fabtop run` do; mix_build_parse_endpoint alone cannot). No printing, no exit; the builder owns
 * b.base. */
#ifndef MIX_BUILD_H
#define MIX_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ft_err.h"
#include "common/strbuf.h"
#include "engine/flow/mix.h"
#include "topology/topo_model.h"

/* Bytes: the largest message size a knob may give (1 GiB). */
#define MIX_BUILD_MAX_SIZE (1ull << 30)
/* The concurrency's range (operations, requests or connections in flight). */
#define MIX_BUILD_MAX_CONC 1024
/* Seconds: the longest duration per size (a day). */
#define MIX_BUILD_MAX_DURATION 86400

/* The knobs, in the order of the command line (and of the form, after the preset). */
enum mix_knob {
    MIX_KNOB_PEER = 0,   /* --peer HOST[:PORT] | [IPv6]:PORT | loopback (a `fabtop serve`) */
    MIX_KNOB_KEY_FILE,   /* --key-file FILE: the agent's pre-shared key (remote peers only) */
    MIX_KNOB_SIZE,       /* --size BYTES: 1 B .. 1 GiB (4096, 64KiB, 1MiB): every flow */
    MIX_KNOB_DURATION,   /* --duration SECONDS: > 0 .. 86400, per size (not sim/ presets) */
    MIX_KNOB_ENDPOINT,   /* --endpoint any | netdev:NAME | ip:ADDR | rdma:DEV:PORT | gpu:N */
    MIX_KNOB_TRANSPORT,  /* --transport tcp | verbs | nccl | sim: every flow */
    MIX_KNOB_CONC,       /* --concurrency N: 1 .. 1024, the foreground flow */
    MIX_KNOB_SENDERS,    /* --senders N: 1 .. mix_build_max_senders (incast presets) */
    MIX_KNOB_NEIGHBOURS, /* --neighbours on|off: off drops the background flows */
    MIX_KNOB_COUNT
};

/* A knob as a command-line option: "--" flag, its argument's name, one help line. */
struct mix_knob_info {
    const char *flag; /* "size": --size */
    const char *arg;  /* "BYTES" */
    const char *help; /* "message size of every flow, 1 B to 1 GiB (4096, 64KiB, 1MiB)" */
};
/* The MIX_KNOB_COUNT knobs, indexed by enum mix_knob. */
extern const struct mix_knob_info mix_build_knobs[MIX_KNOB_COUNT];

enum mix_ep_kind { MIX_EP_ANY = 0, MIX_EP_NETDEV, MIX_EP_IP, MIX_EP_RDMA, MIX_EP_GPU };

/* The local endpoint of every flow. */
struct mix_build_endpoint {
    enum mix_ep_kind kind;
    char id[96];     /* as given and shown: "any", "netdev:eth0", "ip:10.0.0.1",
                      * "rdma:mlx5_0:1", "gpu:0" */
    char netdev[32]; /* NETDEV: the device; RDMA: the port's netdev ("" none: no TCP) */
    char ip[64];     /* IP: the address; RDMA: its netdev's first address ("" none) */
    char rdma[48];   /* RDMA: "mlx5_0:1" */
    int gpu;         /* GPU: its index; -1 otherwise */
};

struct mix_build {
    /* The preset as loaded (have_base), or why it could not be (base_error). */
    char preset[128]; /* the name or path given to mix_build_load */
    struct mix base;
    bool have_base;
    char base_error[512];
    /* The knobs; text as given, "" = the preset's value. */
    struct mix_build_endpoint ep;
    char peer[128]; /* "" = the in-process loopback agent */
    char key_file[256];
    char transport[16]; /* "" = none chosen (mix_build_load sets the preset's) */
    char size[32], conc[16], duration[16], senders[16];
    bool neighbours;
    /* What this node has, only for the words of why a transport cannot run here. */
    bool node_has_rdma, node_has_gpu;
    /* Named in the description of a mix that goes beyond the preset's own settings
     * ("Preset P edited in the explorer. ..."); NULL: the description stays the preset's. */
    const char *edited_by;
};

/* Empty: no preset, endpoint any, neighbours on, nothing edited. */
void mix_build_init(struct mix_build *b);
void mix_build_free(struct mix_build *b);
/* Load a preset or mix file (mix_load's name_or_path; NULL: there is none) and set the
 * knobs back to its values (mix_build_reset). On failure have_base is false and base_error
 * (and err) say why; -errno. */
int mix_build_load(struct mix_build *b, const char *name_or_path, struct ft_err *err);
/* Size, concurrency, duration and senders back to the preset's, neighbours on, the
 * transport the preset's foreground one. The endpoint, peer and key file stay. */
void mix_build_reset(struct mix_build *b);
/* Give knob k as text (the flag's argument). The endpoint and neighbours are parsed at
 * once (-EINVAL naming the value); the others are kept and checked by mix_build_make.
 * NULL or "" gives the knob back to the preset (peer: loopback; endpoint: any). */
int mix_build_set(struct mix_build *b, enum mix_knob k, const char *value, struct ft_err *err);
/* "any", "netdev:NAME", "ip:ADDR", "rdma:DEV:PORT" or "gpu:N" into ep (netdev and ip of an
 * RDMA port are left empty); -EINVAL with one line otherwise. */
int mix_build_parse_endpoint(const char *id, struct mix_build_endpoint *ep, struct ft_err *err);
/* The TCP side of RDMA port p of m (an index into m->ports) into ep: the port's netdev and
 * that netdev's first address; left "" where the port has no netdev or the netdev no
 * address. Returns the netdev's index in m->netdevs, or -1 when the port has none. */
int mix_build_rdma_netdev(const struct topo_model *m, int p, struct mix_build_endpoint *ep);

/* ---- the preset's shape ---- */

int mix_build_fg(const struct mix_build *b);         /* its foreground flow, -1 none */
int mix_build_background(const struct mix_build *b); /* background flows */
int mix_build_senders(const struct mix_build *b);    /* incast senders (background rx) */
/* The most senders the mix can hold next to its other flows. */
int mix_build_max_senders(const struct mix_build *b);
/* A sim/ preset: flows between simulated hosts (no endpoint, peer, key file, duration). */
bool mix_build_sim(const struct mix_build *b);
/* In a sim/ preset, the most simulated streams that converge on one host (its name into
 * dst), when two or more do: the scenario's incast, fixed by the scenario. 0 otherwise. */
int mix_build_sim_incast(const struct mix_build *b, char *dst, size_t len);
/* Does knob k apply to this preset and these settings (senders: only with neighbours)? */
bool mix_build_applies(const struct mix_build *b, enum mix_knob k);
/* Does flow f run with these settings (background flows only with neighbours on)? */
bool mix_build_flow_runs(const struct mix_build *b, const struct mix_flow *f);
/* The transports offered for this preset, at most max into names (static strings): those
 * registered in this build, then the known ones it lacks (tcp, verbs, nccl); sim for the
 * sim/ presets only and only it for them. Returns the count. */
int mix_build_transports(const struct mix_build *b, const char **names, int max);
/* Is name one of mix_build_transports? */
bool mix_build_transport_offered(const struct mix_build *b, const char *name);
/* Can transport name run these settings? false with the reason in why (not in this build,
 * unavailable here, an operation it lacks, the endpoint it needs). */
bool mix_build_transport_ok(const struct mix_build *b, const char *name, char *why, size_t len);
/* Do the settings go beyond the preset's --size/--duration/--peer/--key-file (another
 * endpoint or transport, concurrency, senders, neighbours off)? Such a mix carries the
 * edited_by note in its description. */
bool mix_build_edited(const struct mix_build *b);

/* ---- the mix ---- */

/* Build the mix the settings describe into m (mix_free it), or say in why the one thing
 * that is wrong: -EINVAL. */
int mix_build_make(const struct mix_build *b, struct mix *m, char *why, size_t len);
/* The `fabtop run` command line that builds the same mix: --mix PRESET, then a flag for
 * each knob away from the preset's value, in enum mix_knob order; words that need it are
 * quoted for a POSIX shell. */
void mix_build_command_line(const struct mix_build *b, struct strbuf *sb);

/* ---- text the form shares ---- */

/* "64KiB", "4MiB", or plain bytes ("256"); unit suffixes only when exact. */
void mix_build_fmt_bytes(char *buf, size_t len, uint64_t b);
/* A whole number in [lo, hi] (spaces after it allowed). */
bool mix_build_parse_long(const char *s, long lo, long hi, long *out);
/* Seconds > 0 up to MIX_BUILD_MAX_DURATION, optionally followed by "s". */
bool mix_build_parse_seconds(const char *s, double *out);

#endif
