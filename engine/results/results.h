/* results: the results document of a run: the mix, every flow's statistics and histogram
 * per phase and size point, the per-interval timeline, the topology snapshot, versions,
 * hosts, test conditions, start and end times, errors and events. Written atomically. */
#ifndef RESULTS_H
#define RESULTS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/flow/flow.h"
#include "engine/flow/mix.h"
#include "engine/results/results_model.h"

struct topo_model;
struct score_opts;
struct results_path_in;

struct results_timeline_in {
    int n;
    const float *t, *goodput_gbps, *wire_gbps, *ops_per_s;
};

struct results_input {
    const struct mix *mix;
    const struct topo_model *topo;
    const struct score_opts *score; /* --slo and the step budget (score.h); NULL: none */
    int nphases;
    struct {
        const char *name;
        uint64_t t0_ns, t1_ns;
        struct flow_rt *flows[MIX_MAX_FLOWS]; /* NULL: not in this phase */
        struct results_timeline_in tl[MIX_MAX_FLOWS];
        /* The test's counters over the phase (counters_set_report_json with deltas), or NULL */
        const cJSON *counters;
    } phases[2];
    struct timespec wall_start, wall_end;
    uint64_t t_start_ns;
    bool interrupted;
    /* What the runner learnt of the path (results_path.h); NULL: the run's figures alone. */
    const struct results_path_in *path;
    int nevents;
    const char (*events)[160];
};

/* Fill out with the run (one run; free with results_doc_free). When every flow is
 * simulated, the conditions hold the simulated fabric only and the topology is null:
 * nothing of the host it ran on. results_json_write (results_json.h) writes it. */
void results_build(const struct results_input *in, struct results_doc *out);
/* The host's own conditions as a run records them (sysctls; the netdev MTUs of topo when
 * it is not NULL), into an empty cond: a sweep stores each rank's once. */
void results_host_conditions(struct results_run_cond *cond, const struct topo_model *topo);
/* One line of the values a transport chose for a flow (device, port, GID, MTU, DSCP and
 * the priority and PFC it maps to, QPs, connection method; TCP: congestion control, MSS),
 * from its decoded conditions, for the live header and the text summary. "" when none. */
void results_flow_cond_brief(const struct results_flow_cond *c, char *buf, size_t len);
/* The same from a conditions object (a transport's, or a document's). */
void results_conditions_brief(const cJSON *cond, char *buf, size_t len);
/* A path ceiling (topology/topo_ceiling.h) into the document's typed field, every term
 * (what the field held before is freed). */
struct topo_ceiling;
void results_ceiling_set(struct results_ceiling *out, const struct topo_ceiling *c);
/* Fill a built flow's ceiling (its points and conditions already there) from the topology
 * for the mix flow s it ran: a verbs flow (device, port, path MTU, verb, largest size), a TCP
 * stream out of a NIC's netdev, host<->GPU copies (their lanes' GPUs). Left absent when the
 * path is not in the model. results_build calls it for every flow. */
struct topo_model;
/* A GPU of the topology by its PCI address ("0000:18:00.0", may be NULL), else by its CUDA
 * index where the model knows CUDA indices, else the model's one GPU when it has one and no
 * CUDA indices: its index in topo->gpus, or -1. */
int results_gpu_find(const struct topo_model *topo, const char *pci_bus_id, int cuda_index);
/* The GPUs of a host<->GPU copy flow's lanes (conditions.copy: lanes "GPU 0 h2d",
 * lane_pci_bus_ids), each once, into gpus (at most max): how many, or -1 when a lane's GPU is
 * not in the model. */
int results_copy_gpus(const struct results_flow *o, const struct topo_model *topo, int *gpus,
                      int max);
void results_flow_ceiling(struct results_flow *o, const struct mix_flow *s,
                          const struct topo_model *topo);
/* A goodput (Gb/s of payload) as a percentage of the flow's path ceiling; NAN when the
 * document has no ceiling for it (or the goodput is not a number >= 0). */
double results_ceiling_percent(const struct results_ceiling *c, double goodput_gbps);
/* The goodput to show for a flow at one of its points (point may be NULL): a simulated
 * flow's (transport "sim") is its conditions.sim.results.goodput_gbps, payload over
 * simulated time (*simulated true); any other's the point's goodput_gbps per wall-clock
 * second. false when it was not recorded. */
bool results_point_goodput(const struct results_flow *flow, const struct results_point *point,
                           double *gbps, bool *simulated);
/* The same for a document still read as cJSON (phases[].flows[] and one of its points). */
bool results_goodput(const cJSON *flow, const cJSON *point, double *gbps, bool *simulated);
/* Leave out (null) what measures this machine rather than the test, so two runs of a
 * simulated mix with one seed give byte-identical files: the start and end times, wall-clock
 * durations and the rates computed from them, the wall-clock timelines, the events' times
 * (the events are sorted: flow threads log in any order) and the host's counters. The
 * host's topology stays (it holds no free memory or other moving state); an all-sim run has
 * no host topology or host conditions to begin with (results_build). Says so in
 * "reproducible". */
void results_doc_make_reproducible(struct results_doc *d);
/* The same on a written document, in place (through the model; left as it is when it is
 * no results document). */
void results_make_reproducible(cJSON *doc);
/* Save atomically (temporary file, then rename). */
int results_doc_save(const char *path, const struct results_doc *d, struct ft_err *err);
int results_save(const char *path, const cJSON *doc, struct ft_err *err);
/* Load and check (results_json_read: the format, the version, the fields' types, sizes);
 * one clear error naming the file and the field for anything else. */
int results_doc_load(const char *path, struct results_doc *d, struct ft_err *err);
/* The same, as the cJSON document the model writes (byte for byte what was read, for a
 * document fabtop wrote), for consumers that still walk JSON. */
int results_load(const char *path, cJSON **doc, struct ft_err *err);
/* A deep copy (empty on failure). */
void results_doc_copy(const struct results_doc *d, struct results_doc *out);

#endif
