/* jsonutil: cJSON helpers shared by the topology snapshot, mixes, results and themes:
 * load a file with one clear error (file, line, column), typed getters, atomic save. */
#ifndef JSONUTIL_H
#define JSONUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"

/* Largest JSON document fabtop reads (results with histograms stay far below it). */
#define JSONUTIL_MAX_BYTES (256u << 20)

/* Read a whole file into memory (NUL-terminated). Returns 0 or -errno. */
int jsonutil_slurp(const char *path, char **out, size_t *len, size_t max, struct ft_err *err);

/* Parse a JSON file; on failure the message names the file, line and column. */
int jsonutil_load(const char *path, cJSON **out, struct ft_err *err);

/* Parse text (NUL-terminated at text[len]); what names the source in error messages. */
int jsonutil_parse(const char *text, size_t len, const char *what, cJSON **out, struct ft_err *err);

/* Print compactly or indented and write atomically. */
int jsonutil_save(const char *path, const cJSON *doc, bool pretty, struct ft_err *err);
/* When a document could not go where it should: save it (indented) to a new file,
 * fabtop-KIND-DATE-TIME-PID.json, in the current directory, else in $TMPDIR (default /tmp),
 * never replacing anything, so that what was measured is not lost. 0 and its path in out,
 * or -errno. Prints nothing. kind: "results", "topo", "counters", "compare". */
int jsonutil_save_fallback(const cJSON *doc, const char *kind, char *out, size_t len);

/* Every member of the object obj must be named in known (NULL-terminated). Otherwise -EINVAL
 * with "WHERE: unknown key 'duraton_s' (did you mean 'duration_s'?)", or the known keys
 * listed when none is near. A NULL or non-object obj passes (the caller checks types). */
int jsonutil_check_keys(const cJSON *obj, const char *const *known, const char *where,
                        struct ft_err *err);

/* Getters: return true and set *out when key exists with the right type. */
bool jsonutil_num(const cJSON *obj, const char *key, double *out);
bool jsonutil_int(const cJSON *obj, const char *key, int64_t *out);
bool jsonutil_bool(const cJSON *obj, const char *key, bool *out);
const char *jsonutil_str(const cJSON *obj, const char *key);
/* The string member, or dflt when it is absent or not a string (for printing). */
const char *jsonutil_str_or(const cJSON *obj, const char *key, const char *dflt);
/* Copy a string member into buf (cut to fit); true if present. */
bool jsonutil_strcpy(const cJSON *obj, const char *key, char *buf, size_t len);

/* A number from a file as an integer: true and *out set when v is a whole number in
 * [lo, hi]. Converting a double outside the integer type's range is undefined behaviour
 * (C11 6.3.1.4), so every reader checks a file's number here before it converts it. */
bool jsonutil_whole(double v, int64_t lo, int64_t hi, int64_t *out);
/* The same for the whole uint64_t range, [0, 2^64 - 1]. */
bool jsonutil_whole_u64(double v, uint64_t *out);
/* A member that is a whole number in [lo, hi] (for display: one out of range is treated as
 * absent, shown as n/a, never converted). */
bool jsonutil_int_in(const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t *out);

/* Adders that write null for invalid values, so readers never mistake n/a for 0. */
void jsonutil_add_num_or_null(cJSON *obj, const char *key, bool valid, double v);
void jsonutil_add_str_or_null(cJSON *obj, const char *key, const char *s);

#endif
