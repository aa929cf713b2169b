/* nccl_drill: a drill's collective lane on the NCCL transport's own flow state (setup and
 * teardown as in a run, so the communicators, GPUs and the agent's ranks are the same), with
 * single operations instead of the runner's timed batches. */
#include "engine/xport/nccl/nccl_drill.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "engine/flow/flow.h"
#include "engine/xport/nccl/xport_nccl_int.h"

struct nccl_drill {
    struct flow_rt *f;
    char version[32];
};

static struct nccl_flow *flow_of(const struct nccl_drill *l)
{
    return l->f->xdata;
}

int nccl_drill_open(struct channel_conn *ctl, const char *peer_desc, const struct mix *m, int index,
                    struct nccl_drill **out, struct ft_err *err)
{
    *out = NULL;
    const struct mix_flow *s = &m->flows[index];
    if (strcmp(s->transport, "nccl") || s->op != MIX_OP_COLLECTIVE)
        return ft_err_set(err, -EINVAL, "flow %s: a rank-loss drill runs NCCL collectives",
                          s->name);
    struct flow_rt *f = flow_new(m, index, 0, &xport_nccl, NULL);
    f->ctl = ctl;
    snprintf(f->peer_desc, sizeof(f->peer_desc), "%s", peer_desc);
    int rc = xport_nccl.setup(f, err);
    struct nccl_flow *x = f->xdata;
    if (rc == 0 && (!x || !x->remote))
        rc =
            ft_err_set(err, -EINVAL, "flow %s: a rank-loss drill needs the agent's ranks", s->name);
    if (rc < 0) {
        if (f->xdata)
            xport_nccl.teardown(f);
        flow_free(f);
        return rc;
    }
    struct nccl_drill *l = xalloc_zero(1, sizeof(*l));
    l->f = f;
    cudart_version_str(x->a->nccl_version, true, l->version, sizeof(l->version));
    *out = l;
    return 0;
}

int nccl_drill_op(struct nccl_drill *l, int timeout_ms, uint64_t *ns, struct ft_err *err)
{
    struct nccl_flow *x = flow_of(l);
    struct nccl_core *k = &x->core;
    uint64_t tmo = (uint64_t)timeout_ms * 1000000ull;
    /* The core's deadline for one operation: its estimate (none) plus the time-out. */
    k->op_timeout_ns = tmo;
    int rc = nccl_coll_remote_batch(x, 0, 0, 1, false, false, 0);
    if (rc < 0)
        return ft_err_set(err, rc, "%s", k->err);
    struct nccl_batch b = {.point = 0, .n = 1, .est_op_ns = 0};
    rc = nccl_core_batch(k, &b);
    if (rc < 0)
        return ft_err_set(err, rc, "%s", k->err[0] ? k->err : strerror(-rc));
    *ns = b.t1_ns - b.t0_ns;
    return 0;
}

int nccl_drill_shrink(struct nccl_drill *l, double timeout_s, struct ft_err *err)
{
    struct nccl_flow *x = flow_of(l);
    int rc = nccl_core_shrink(&x->core, timeout_s);
    if (rc < 0)
        return ft_err_set(err, rc, "%s", x->core.err);
    x->remote = false; /* nothing is announced to the agent any more: its ranks are gone */
    return 0;
}

int nccl_drill_ranks(const struct nccl_drill *l)
{
    return flow_of(l)->core.nranks;
}

const char *nccl_drill_version(const struct nccl_drill *l)
{
    return l->version;
}

void nccl_drill_close(struct nccl_drill *l)
{
    if (!l)
        return;
    /* A failed lane's peer may be gone: abort rather than wait for it (the teardown does
     * for a failed flow), and no nccl.close on a channel that is dead. */
    struct nccl_flow *x = flow_of(l);
    if (x->core.err[0])
        flow_fail(l->f, "nccl: %s", x->core.err);
    xport_nccl.teardown(l->f);
    flow_free(l->f);
    free(l);
}
