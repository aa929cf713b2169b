/* verbs_drill: a drill's verbs lane on the verbs transport's own flow state (set-up and
 * teardown as in a run: device, memory registration, queue pairs, the agent's side), with
 * single ping-pong operations instead of the runner's workers. */
#include "engine/xport/verbs/verbs_drill.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "engine/flow/flow.h"
#include "engine/xport/verbs/xport_verbs_int.h"

struct verbs_drill {
    struct flow_rt *f;
};

/* What the transport's set-up of f got to. */
static void setup_state(const struct flow_rt *f, struct verbs_drill_setup *st)
{
    const struct verbs_res *r = verbs_client_res(f);
    memset(st, 0, sizeof(*st));
    st->gid_index = -1;
    if (!r || !r->ctx)
        return;
    snprintf(st->qp_state, sizeof(st->qp_state), "%s", r->qp_state ? r->qp_state : "");
    snprintf(st->dev, sizeof(st->dev), "%s", r->dev);
    st->port = r->port;
    st->gid_index = r->gid_index;
    snprintf(st->netdev, sizeof(st->netdev), "%s", r->netdev);
    if (r->qp_state && strcmp(r->qp_state, "INIT"))
        st->path_mtu = verbs_res_mtu_bytes(r->active_mtu);
}

int verbs_drill_open(struct channel_conn *ctl, const char *peer_desc, const struct mix *m,
                     int index, struct verbs_drill **out, struct verbs_drill_setup *st,
                     struct ft_err *err)
{
    *out = NULL;
    if (st)
        setup_state(NULL, st);
    const struct mix_flow *s = &m->flows[index];
    if (strcmp(s->transport, "verbs") || s->op != MIX_OP_PINGPONG)
        return ft_err_set(err, -EINVAL, "flow %s: a drill's verbs lane is a ping-pong", s->name);
    struct flow_rt *f = flow_new(m, index, 0, &xport_verbs, NULL);
    f->ctl = ctl;
    snprintf(f->peer_desc, sizeof(f->peer_desc), "%s", peer_desc);
    int rc = xport_verbs.setup(f, err);
    if (st)
        setup_state(f, st);
    if (rc < 0) {
        if (f->xdata)
            xport_verbs.teardown(f);
        flow_free(f);
        return rc;
    }
    /* The operations run on this thread: the flow is in its measure state for them. */
    atomic_store(&f->state, FLOW_ST_MEASURE);
    struct verbs_drill *l = xalloc_zero(1, sizeof(*l));
    l->f = f;
    *out = l;
    return 0;
}

double verbs_drill_bound_s(const struct verbs_drill *l, double *timeout_s)
{
    *timeout_s = l->f->fail_bound_s; /* raised by the set-up to fit the queue pair's bound */
    return verbs_client_detect_bound_s(l->f);
}

int verbs_drill_op(struct verbs_drill *l, uint64_t size, int timeout_ms, uint64_t *ns,
                   struct ft_err *err)
{
    int rc = verbs_client_drill_op(l->f, size, timeout_ms, ns);
    if (rc == -ETIMEDOUT)
        return ft_err_set(err, rc, "no reply within %d ms", timeout_ms);
    if (rc < 0) {
        pthread_mutex_lock(&l->f->lock);
        ft_err_set(err, -EIO, "%s", l->f->error[0] ? l->f->error : "the queue pair failed");
        pthread_mutex_unlock(&l->f->lock);
        return -EIO;
    }
    return 0;
}

void verbs_drill_close(struct verbs_drill *l)
{
    if (!l)
        return;
    atomic_store(&l->f->state, FLOW_ST_STOP);
    xport_verbs.teardown(l->f);
    flow_free(l->f);
    free(l);
}
