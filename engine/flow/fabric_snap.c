/* fabric_snap: freeing a simulated fabric's snapshot, and what the views read off it. */
#include "engine/flow/fabric_snap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void fabric_snap_free(struct fabric_snap *s)
{
    if (!s)
        return;
    free(s->flows);
    free(s->node_names);
    free(s->node_host);
    free(s->ports);
    free(s->counters);
    memset(s, 0, sizeof(*s));
}

const struct fabric_snap_flow *fabric_snap_flow(const struct fabric_snap *s, const char *name)
{
    if (!s || !(s->valid & FABRIC_SNAP_V_FLOWS))
        return NULL;
    for (int i = 0; i < s->nflows; i++)
        if (!strcmp(s->flows[i].name, name))
            return &s->flows[i];
    return NULL;
}

double fabric_snap_gbps(const struct fabric_snap *s, const struct fabric_snap_flow *f)
{
    /* Times are ps: bits / ps x 1e12 / 1e9 = bits x 1000 / ps. */
    uint64_t end = f->st.done && f->st.last_done ? f->st.last_done : s->sim_now_ps;
    if (!f->st.tx_acked || end <= f->st.first_post)
        return NAN;
    return (double)f->st.tx_acked * 8.0 * 1000.0 / (double)(end - f->st.first_post);
}
