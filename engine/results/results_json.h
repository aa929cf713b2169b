/* results_json: the one reader and the one writer of the results document
 * (results_model.h); every key of the document is spelled in results_json.c. */
#ifndef RESULTS_JSON_H
#define RESULTS_JSON_H

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/results/results_model.h"

/* The document of d's first run (caller owns it); NULL when d holds no run. */
cJSON *results_json_write(const struct results_doc *d);
/* One run's members in the document's key order (caller owns it): what results_json_write
 * writes for d's first run, and a sweep's tests[].run (results_sweep_json.c). */
cJSON *results_json_write_run(const struct results_run *r);
/* Read a parsed document into d (one run). what names the source in messages. Refuses,
 * with -EBADMSG and one line naming the file and the field: another "format", a newer
 * major "version", a field of the wrong type, a size that is no number of bytes a mix
 * allows (1 B-16 GiB), a histogram that does not add up. On error d is empty. */
int results_json_read(const cJSON *j, const char *what, struct results_doc *d, struct ft_err *err);
/* Read one run's members without the format and version check (a sweep's runs[] entries
 * will be read through it; also documents fabtop built in memory and fragments in tests).
 * The same refusals otherwise; on error run is empty. */
int results_json_read_run(const cJSON *j, const char *what, struct results_run *run,
                          struct ft_err *err);
/* Decode the fields fabtop reads from a flow's conditions object (NULL: nothing). The
 * strings point into c. */
void results_json_flow_cond(const cJSON *c, struct results_flow_cond *out);

#endif
