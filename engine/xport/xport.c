/* xport: the registry of transports. */
#include "engine/xport/xport.h"

#include <string.h>

#include "engine/peer/agent.h"

static const struct xport_ops *const transports[] = {
    &xport_tcp, &xport_verbs, &xport_nccl, &xport_sim, NULL,
};

const struct xport_ops *xport_find(const char *name)
{
    for (int i = 0; transports[i]; i++)
        if (!strcmp(transports[i]->name, name))
            return transports[i];
    return NULL;
}

const struct xport_ops *const *xport_all(void)
{
    return transports;
}

const struct agent_handler *const *xport_agent_handlers(int *n)
{
    static const struct agent_handler *all[64];
    static int count = -1;
    if (count < 0) {
        count = 0;
        for (int i = 0; transports[i]; i++)
            for (int k = 0; transports[i]->handlers && transports[i]->handlers[k]; k++)
                if (count < 63)
                    all[count++] = transports[i]->handlers[k];
        all[count] = NULL;
    }
    if (n)
        *n = count;
    return all;
}
