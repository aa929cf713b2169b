/* results_causes_json: the "causes" and "references" arrays of a run document (results_model.h,
 * struct results_causes), its writer and reader, used by results_json.c. Internal to
 * engine/results/. */
#ifndef RESULTS_CAUSES_JSON_H
#define RESULTS_CAUSES_JSON_H

#include <cjson/cJSON.h>

#include "engine/results/results_field.h"
#include "engine/results/results_model.h"

/* Writes "causes" into doc when present (null when RESULTS_NULL). */
void results_causes_json_write(cJSON *doc, const struct results_causes *c);
/* Reads the "causes" member of j; a malformed one is refused through r. */
void results_causes_json_read(struct results_rd *r, const cJSON *j, struct results_causes *c);
/* The same for "references" (struct results_ref_matches). */
void results_refs_json_write(cJSON *doc, const struct results_ref_matches *m);
void results_refs_json_read(struct results_rd *r, const cJSON *j, struct results_ref_matches *m);

#endif
