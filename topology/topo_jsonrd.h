/* topo_jsonrd: what the two halves of fabtop's topology snapshot (topo_json.c for the
 * node, topo_fabric_json.c for its "fabric" section) share when writing and reading it:
 * enum names, optional indexes, and a reader that keeps the first problem as one error
 * naming the file, the array, the entry and the member. Internal to topology/. */
#ifndef TOPO_JSONRD_H
#define TOPO_JSONRD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Record "WHAT: SCOPEARR[I].KEY MUST" (I < 0: "WHAT: SCOPEOBJ.KEY MUST", a member of an
 * object that is not in an array) unless a problem is already recorded; returns rc. */
int topo_jrd_bad(struct topo_jrd *c, const char *arr, int i, const char *key, const char *must);
/* An optional number: absent or null -> false; another type -> a problem, false. */
bool topo_jrd_num(struct topo_jrd *c, const cJSON *o, const char *arr, int i, const char *key,
                  double *out);
/* An optional whole number in [lo, hi]: absent or null -> false; another type, a fraction
 * or a number out of the range -> the problem "KEY = V is out of range LO-HI", false. Every
 * number the snapshot reader converts to an integer comes through here or topo_jrd_u64. */
bool topo_jrd_int(struct topo_jrd *c, const cJSON *o, const char *arr, int i, const char *key,
                  int64_t lo, int64_t hi, int64_t *out);
/* The same over the whole uint64_t range; strings of decimal digits are accepted too (64-bit
 * counters a double cannot hold exactly are written as strings). */
bool topo_jrd_u64(struct topo_jrd *c, const cJSON *o, const char *arr, int i, const char *key,
                  uint64_t *out);
/* The problem "ARR[I].KEY = V is out of range LO-HI" for a number already taken. */
int topo_jrd_range(struct topo_jrd *c, const char *arr, int i, const char *key, double v,
                   int64_t lo, int64_t hi);
/* An array member: absent -> NULL; null -> NULL where null_ok, else a problem; another type
 * -> a problem and NULL. */
const cJSON *topo_jrd_array(struct topo_jrd *c, const cJSON *o, const char *key, bool null_ok);
/* A string member into buf, "" when absent or not a string. */
void topo_jrd_str(const cJSON *o, const char *key, char *buf, size_t len);

#endif
