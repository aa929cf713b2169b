/* results_field: the results documents' field readers and writers with their presence
 * (results_model.h: absent, null, set), shared by the run document's reader and writer
 * (results_json.c) and the sweep document's (results_sweep_json.c), so both spell presence
 * and their refusals one way. Internal to engine/results/. */
#ifndef RESULTS_FIELD_H
#define RESULTS_FIELD_H

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "engine/results/results_model.h"

/* Writers: a field absent writes no key, null writes null, set writes its value. */
void results_field_put_num(cJSON *o, const char *k, const struct results_num *f);
void results_field_put_str(cJSON *o, const char *k, const struct results_str *f);
void results_field_put_bool(cJSON *o, const char *k, const struct results_bool *f);
/* A carried member (copied), nothing when v is NULL. */
void results_field_put_carried(cJSON *o, const char *k, const cJSON *v);

/* A reader's state: the first refusal wins and the others are not said. */
struct results_rd {
    const char *what; /* the file, in messages */
    struct ft_err *err;
    int rc;
    int nranks; /* the sweep reader: the bound of every rank index */
};

/* "WHAT: WHERE.KEY is not WANT", -EBADMSG, unless a refusal was already made. */
void results_field_bad(struct results_rd *r, const char *where, const char *key, const char *want);
/* Member k of o and its presence. */
const cJSON *results_field_member(const cJSON *o, const char *k, enum results_state *st);
void results_field_get_num(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                           struct results_num *f);
void results_field_get_str(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                           struct results_str *f);
void results_field_get_bool(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                            struct results_bool *f);
/* Member k when it is an object (an array), its presence in *st; NULL when absent or null,
 * and a refusal ("an object or null") when it is anything else. */
const cJSON *results_field_obj(struct results_rd *r, const cJSON *o, const char *where,
                               const char *k, enum results_state *st);
const cJSON *results_field_arr(struct results_rd *r, const cJSON *o, const char *where,
                               const char *k, enum results_state *st);

#endif
