/* xport: the registry of transports. */
#include "engine/xport/xport.h"

#include <stdio.h>
#include <string.h>

#include "common/jsonutil.h"
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

int xport_check_params(const struct mix *m, struct ft_err *err)
{
    for (int i = 0; i < m->nflows; i++) {
        const struct mix_flow *f = &m->flows[i];
        const struct xport_ops *xp = xport_find(f->transport);
        if (!f->params || !xp || !xp->param_keys)
            continue;
        char where[600];
        snprintf(where, sizeof(where), "%s: flows[%d].params", m->source, i);
        int rc = jsonutil_check_keys(f->params, xp->param_keys(f->op), where, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int xport_local_port(const struct mix_flow *f, char *rdma, size_t rlen, char *netdev, size_t nlen,
                     struct ft_err *err)
{
    const struct xport_ops *x = xport_find(f->transport);
    if (!x || !x->local_port)
        return 1;
    int rc = x->local_port(f, rdma, rlen, netdev, nlen, err);
    return rc < 0 ? rc : 0;
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
