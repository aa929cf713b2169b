/* topo_json: fabtop's own topology snapshot (save and load round-trip exactly) and the
 * JSON forms of the affinity matrix and lint findings used by `fabtop topo --json`. */
#ifndef TOPO_JSON_H
#define TOPO_JSON_H

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "topology/topo_affinity.h"
#include "topology/topo_lint.h"
#include "topology/topo_model.h"

#define TOPO_JSON_FORMAT  "fabtop-topology"
#define TOPO_JSON_VERSION 1

/* The model as a JSON object (caller owns it). */
cJSON *topo_json_from_model(const struct topo_model *m);

/* Fill an empty model from a snapshot object; what names the file in errors. */
int topo_json_to_model(const cJSON *doc, struct topo_model *m, const char *what,
                       struct ft_err *err);

cJSON *topo_json_affinity(const struct topo_model *m, const struct topo_affinity *a);
cJSON *topo_json_findings(const struct topo_findings *f);

#endif
