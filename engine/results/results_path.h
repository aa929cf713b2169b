/* results_path: a run's path class and queue verdict (struct results_path in
 * results_model.h): built from the run's own figures and what the runner learnt of the peer
 * (results_path_fill, with engine/path/path.h's rules), written and read as the run's "path"
 * object (results_path_write / results_path_read, called by results_json.c). */
#ifndef RESULTS_PATH_H
#define RESULTS_PATH_H

#include <cjson/cJSON.h>

#include "engine/results/results_field.h"
#include "engine/results/results_model.h"

struct mix;

/* What the runner learnt of the path beside the run's figures. */
struct results_path_in {
    const char *site_local, *site_peer; /* --site labels (NULL: none) */
    const char *site_from;         /* a sites file gave one of them: which, for which address */
    int ttl;                       /* a probe from the peer arrived with it; < 0 unknown */
    int ttl_initial;               /* the peer's default TTL, when it said; 0 unknown */
    const cJSON *peer_counters[2]; /* per phase, the peer agent's counters (deltas) */
    int same_leaf;                 /* 1 / 0 / -1 unknown (fabric, LLDP, --groups) */
};

/* Fill run->path from its phases, summary and mix (run->mix) and in (NULL: nothing more). */
void results_path_fill(struct results_run *run, const struct mix *mix,
                       const struct results_path_in *in);
/* The writer's and the reader's halves of the "path" object. */
void results_path_write(cJSON *o, const struct results_path *p);
void results_path_read(struct results_rd *r, const cJSON *o, struct results_path *p);

#endif
