/* topo_jsonrd: what the two halves of fabtop's topology snapshot (topo_json.c for the
 * node, topo_fabric_json.c for its "fabric" section) share when writing and reading it:
 * enum names, optional indexes, and a reader that keeps the first problem as one error
 * naming the file, the array, the entry and the member. Internal to topology/. */
#ifndef TOPO_JSONRD_H
#define TOPO_JSONRD_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"

/* An enum table's entries and count, for topo_name_to_enum. */
#define TOPO_NAMES(a) (a), (int)(sizeof(a) / sizeof((a)[0]))

/* The index of s in names (empty names never match), or -1. */
int topo_name_to_enum(const char *s, const char *const *names, int n);
/* An index member: its value, or null when v < 0 (unknown or none). */
void topo_json_add_idx(cJSON *o, const char *key, int v);

struct topo_jrd {
    const char *what;  /* the file, for messages */
    const char *scope; /* "" for the node, "fabric " for its fabric section */
    struct ft_err *err;
    int rc; /* 0, or the first problem's -EBADMSG */
};

/* Record "WHAT: SCOPEARR[I].KEY MUST" unless a problem is already recorded; returns rc. */
int topo_jrd_bad(struct topo_jrd *c, const char *arr, int i, const char *key, const char *must);
/* An optional number: absent or null -> false; another type -> a problem, false. */
bool topo_jrd_num(struct topo_jrd *c, const cJSON *o, const char *arr, int i, const char *key,
                  double *out);
/* An array member: absent -> NULL; null -> NULL where null_ok, else a problem; another type
 * -> a problem and NULL. */
const cJSON *topo_jrd_array(struct topo_jrd *c, const cJSON *o, const char *key, bool null_ok);
/* A string member into buf, "" when absent or not a string. */
void topo_jrd_str(const cJSON *o, const char *key, char *buf, size_t len);

#endif
