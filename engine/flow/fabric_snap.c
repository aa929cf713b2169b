/* fabric_snap: freeing a simulated fabric's snapshot. */
#include "engine/flow/fabric_snap.h"

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
