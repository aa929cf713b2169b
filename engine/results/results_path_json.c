/* results_path_json: the "path" object of a run document (results_path.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "engine/results/results_path.h"

static void sfree(struct results_str *f)
{
    if (f->st == RESULTS_SET)
        free(f->s);
    memset(f, 0, sizeof(*f));
}

void results_path_free(struct results_path *p)
{
    struct results_str *s[] = {&p->cls,         &p->evidence,  &p->site_local,
                               &p->site_peer,   &p->site_from, &p->local.netdev,
                               &p->peer.netdev, &p->queue,     &p->verdict};
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
        sfree(s[i]);
    for (int i = 0; i < p->nrtt; i++)
        free(p->rtt[i].phase);
    free(p->rtt);
    for (int i = 0; i < p->nwarnings; i++)
        free(p->warnings[i]);
    free(p->warnings);
    memset(p, 0, sizeof(*p));
}

static void put_end(cJSON *o, const char *k, const struct results_path_end *e)
{
    if (e->st == RESULTS_NULL)
        cJSON_AddNullToObject(o, k);
    if (e->st != RESULTS_SET)
        return;
    cJSON *x = cJSON_AddObjectToObject(o, k);
    results_field_put_str(x, "qdisc", &e->netdev);
    results_field_put_num(x, "peak_packets", &e->peak_packets);
    results_field_put_num(x, "peak_bytes", &e->peak_bytes);
    results_field_put_num(x, "drops", &e->drops);
}

void results_path_write(cJSON *o, const struct results_path *p)
{
    results_field_put_str(o, "class", &p->cls);
    results_field_put_str(o, "evidence", &p->evidence);
    results_field_put_num(o, "min_rtt_us", &p->min_rtt_us);
    results_field_put_num(o, "ttl", &p->ttl);
    results_field_put_num(o, "ttl_initial", &p->ttl_initial);
    results_field_put_num(o, "hops", &p->hops);
    results_field_put_str(o, "site_local", &p->site_local);
    results_field_put_str(o, "site_peer", &p->site_peer);
    results_field_put_str(o, "site_from", &p->site_from);
    if (p->nrtt) {
        cJSON *a = cJSON_AddObjectToObject(o, "transport_rtt");
        for (int i = 0; i < p->nrtt; i++) {
            const struct results_path_rtt *t = &p->rtt[i];
            if (t->st == RESULTS_NULL) {
                cJSON_AddNullToObject(a, t->phase);
                continue;
            }
            cJSON *x = cJSON_AddObjectToObject(a, t->phase);
            results_field_put_num(x, "min_us", &t->min_us);
            results_field_put_num(x, "median_us", &t->median_us);
            results_field_put_num(x, "max_us", &t->max_us);
            results_field_put_num(x, "retrans_segments", &t->retrans_segments);
        }
    }
    put_end(o, "local", &p->local);
    put_end(o, "peer", &p->peer);
    results_field_put_str(o, "queue", &p->queue);
    results_field_put_str(o, "verdict", &p->verdict);
    if (p->warnings_st == RESULTS_SET) {
        cJSON *w = cJSON_AddArrayToObject(o, "warnings");
        for (int i = 0; i < p->nwarnings; i++)
            cJSON_AddItemToArray(w, cJSON_CreateString(p->warnings[i]));
    } else if (p->warnings_st == RESULTS_NULL) {
        cJSON_AddNullToObject(o, "warnings");
    }
}

static void get_end(struct results_rd *r, const cJSON *o, const char *k, struct results_path_end *e)
{
    char where[32];
    snprintf(where, sizeof(where), "path.%s", k);
    const cJSON *x = results_field_obj(r, o, "path", k, &e->st);
    if (!x)
        return;
    results_field_get_str(r, x, where, "qdisc", &e->netdev);
    results_field_get_num(r, x, where, "peak_packets", &e->peak_packets);
    results_field_get_num(r, x, where, "peak_bytes", &e->peak_bytes);
    results_field_get_num(r, x, where, "drops", &e->drops);
}

void results_path_read(struct results_rd *r, const cJSON *o, struct results_path *p)
{
    results_field_get_str(r, o, "path", "class", &p->cls);
    results_field_get_str(r, o, "path", "evidence", &p->evidence);
    results_field_get_num(r, o, "path", "min_rtt_us", &p->min_rtt_us);
    results_field_get_num(r, o, "path", "ttl", &p->ttl);
    results_field_get_num(r, o, "path", "ttl_initial", &p->ttl_initial);
    results_field_get_num(r, o, "path", "hops", &p->hops);
    results_field_get_str(r, o, "path", "site_local", &p->site_local);
    results_field_get_str(r, o, "path", "site_peer", &p->site_peer);
    results_field_get_str(r, o, "path", "site_from", &p->site_from);
    enum results_state st;
    const cJSON *a = results_field_obj(r, o, "path", "transport_rtt", &st);
    if (a) {
        p->rtt = xalloc_zero((size_t)cJSON_GetArraySize(a) + 1, sizeof(*p->rtt));
        const cJSON *e;
        cJSON_ArrayForEach(e, a)
        {
            char where[96];
            snprintf(where, sizeof(where), "path.transport_rtt.%.60s", e->string);
            struct results_path_rtt *t = &p->rtt[p->nrtt++];
            t->phase = xalloc_strdup(e->string);
            if (cJSON_IsNull(e)) {
                t->st = RESULTS_NULL;
                continue;
            }
            if (!cJSON_IsObject(e)) {
                results_field_bad(r, "path.transport_rtt", e->string, "an object or null");
                continue;
            }
            t->st = RESULTS_SET;
            results_field_get_num(r, e, where, "min_us", &t->min_us);
            results_field_get_num(r, e, where, "median_us", &t->median_us);
            results_field_get_num(r, e, where, "max_us", &t->max_us);
            results_field_get_num(r, e, where, "retrans_segments", &t->retrans_segments);
        }
    }
    get_end(r, o, "local", &p->local);
    get_end(r, o, "peer", &p->peer);
    results_field_get_str(r, o, "path", "queue", &p->queue);
    results_field_get_str(r, o, "path", "verdict", &p->verdict);
    const cJSON *w = results_field_arr(r, o, "path", "warnings", &p->warnings_st);
    if (w) {
        p->warnings = xalloc_zero((size_t)cJSON_GetArraySize(w) + 1, sizeof(char *));
        const cJSON *e;
        cJSON_ArrayForEach(e, w)
        {
            if (!cJSON_IsString(e)) {
                results_field_bad(r, "path", "warnings", "an array of strings");
                break;
            }
            p->warnings[p->nwarnings++] = xalloc_strdup(e->valuestring);
        }
    }
}
