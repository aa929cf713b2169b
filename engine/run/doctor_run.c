/* doctor_run: the doctor's exchanges with the agent (doctor.facts, doctor.probe, the walk's
 * verbs.open) on one session, then the rules and the document. */
#include "engine/run/doctor_run.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonutil.h"
#include "engine/peer/channel.h"

static cJSON *findings_json(const struct doctor_finding *f, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "severity", f[i].sev == DOCTOR_ERROR ? "error" : "warning");
        cJSON_AddStringToObject(x, "rule", f[i].rule);
        cJSON_AddStringToObject(x, "attribute", f[i].attr);
        cJSON_AddStringToObject(x, "local", f[i].local);
        cJSON_AddStringToObject(x, "peer", f[i].peer);
        cJSON_AddStringToObject(x, "message", f[i].msg);
        cJSON_AddItemToArray(arr, x);
    }
    return arr;
}

static void probe(struct channel_conn *c, const char *to, struct doctor_run *r)
{
    struct ft_err err = {0};
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    cJSON_AddStringToObject(req, "type", "doctor.probe");
    cJSON_AddStringToObject(req, "from", r->local.local_addr);
    double port = 0;
    int rc = channel_request(c, req, &resp, 5000, &err);
    if (rc == 0 && !(jsonutil_num(resp, "port", &port) && port > 0 && port < 65536))
        rc = ft_err_set(&err, -EPROTO, "the agent named no UDP port for the probe");
    if (rc == 0)
        rc = doctor_pmtu_probe(to, (uint16_t)port, r->local.mtu < 65535 ? r->local.mtu : 65535,
                               &r->probe, &err);
    if (rc < 0)
        snprintf(r->probe_note, sizeof(r->probe_note), "no path MTU probe: %s", err.msg);
    cJSON_Delete(resp);
}

/* The walk, where both ends have an RDMA port for the queue pair. */
static void walk(struct channel_conn *c, const struct doctor_run_opts *o, struct doctor_run *r)
{
    const struct doctor_rdma_port *lx = doctor_port(&r->local, o->device, o->port);
    const struct doctor_rdma_port *px = doctor_port(&r->remote, NULL, o->port);
    if (!lx || !px) {
        snprintf(r->walk_note, sizeof(r->walk_note), "no queue-pair walk: %s has no RDMA port %d",
                 lx ? "the peer" : o->device, o->port);
        return;
    }
    struct qp_walk_want w = {.port = o->port,
                             .gid_index = o->gid_index,
                             .path_mtu = o->path_mtu,
                             .dscp = o->dscp,
                             .messages = 5,
                             .timeout = 14,
                             .retry_cnt = 3};
    snprintf(w.dev, sizeof(w.dev), "%s", o->device);
    if (lx->active_mtu > 0 && px->active_mtu > 0)
        w.smaller_active_mtu = lx->active_mtu < px->active_mtu ? lx->active_mtu : px->active_mtu;
    struct ft_err err = {0};
    if (qp_walk_run(c, channel_peer_desc(c), &w, &r->walk, &err) < 0) {
        snprintf(r->walk_note, sizeof(r->walk_note), "no queue-pair walk: %s", err.msg);
        return;
    }
    r->walked = true;
    if (r->n < DOCTOR_RUN_MAX_FINDINGS)
        r->n += qp_walk_finding(&w, &r->walk, &r->f[r->n]);
}

static void document(struct doctor_run *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "format", "fabtop-doctor");
    cJSON_AddNumberToObject(doc, "version", 1);
    cJSON_AddStringToObject(doc, "peer", r->peer_desc);
    cJSON_AddItemToObject(doc, "local", doctor_facts_json(&r->local));
    cJSON_AddItemToObject(doc, "remote", doctor_facts_json(&r->remote));
    if (r->probe.valid) {
        cJSON *j = cJSON_AddObjectToObject(doc, "probe");
        cJSON_AddNumberToObject(j, "tried_bytes", r->probe.tried);
        cJSON_AddNumberToObject(j, "largest_ok_bytes", r->probe.largest_ok);
        jsonutil_add_num_or_null(j, "icmp_mtu_bytes", r->probe.icmp_mtu > 0, r->probe.icmp_mtu);
    }
    if (r->walked)
        cJSON_AddItemToObject(doc, "qp_walk", qp_walk_json(&r->walk));
    cJSON_AddItemToObject(doc, "findings", findings_json(r->f, r->n));
    cJSON_AddStringToObject(doc, "status",
                            r->status == 2   ? "errors"
                            : r->status == 1 ? "warnings"
                                             : "clean");
    r->doc = doc;
}

int doctor_run(const struct doctor_run_opts *o, struct doctor_run *r, struct ft_err *err)
{
    memset(r, 0, sizeof(*r));
    if (!o->peer || !o->peer[0])
        return ft_err_set(err, -EINVAL, "the doctor needs a peer (a `fabtop serve` HOST[:PORT])");
    struct channel_key key;
    int rc = channel_key_load(o->key_file, &key, err);
    if (rc < 0)
        return rc;
    struct channel_conn *c = NULL;
    rc = channel_connect(o->peer, CHANNEL_DEFAULT_PORT, &key, 0, &c, err);
    channel_key_wipe(&key);
    if (rc < 0)
        return rc;
    snprintf(r->peer_desc, sizeof(r->peer_desc), "%s", channel_peer_desc(c));
    const char *to = o->to ? o->to : channel_peer_host(c);
    rc = doctor_facts_collect(to, NULL, NULL, &r->local, err);
    if (rc < 0)
        goto out;
    if (o->device)
        doctor_facts_rdma(&r->local, NULL);
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    cJSON_AddStringToObject(req, "type", "doctor.facts");
    cJSON_AddStringToObject(req, "peer_addr", r->local.local_addr);
    cJSON_AddStringToObject(req, "local_addr", to);
    rc = channel_request(c, req, &resp, 15000, err);
    if (rc == 0)
        rc = doctor_facts_from_json(cJSON_GetObjectItemCaseSensitive(resp, "facts"), &r->remote,
                                    err);
    cJSON_Delete(resp);
    if (rc < 0)
        goto out;
    if (!o->no_probe && r->local.mtu > 0)
        probe(c, to, r);
    r->qp = (struct doctor_qp){
        .port = o->port, .gid_index = o->gid_index, .path_mtu = o->path_mtu, .dscp = o->dscp};
    if (o->device)
        snprintf(r->qp.dev, sizeof(r->qp.dev), "%s", o->device);
    if (o->gid_type)
        snprintf(r->qp.gid_type, sizeof(r->qp.gid_type), "%s", o->gid_type);
    r->n =
        doctor_compare(&r->local, &r->remote, &r->qp, &r->probe, r->f, DOCTOR_RUN_MAX_FINDINGS - 1);
    if (r->n > DOCTOR_RUN_MAX_FINDINGS - 1)
        r->n = DOCTOR_RUN_MAX_FINDINGS - 1; /* room for the walk's */
    if (o->device && !o->no_walk)
        walk(c, o, r);
    r->status = doctor_status(r->f, r->n);
    document(r);
out:
    channel_close(c);
    return rc;
}

void doctor_run_free(struct doctor_run *r)
{
    cJSON_Delete(r->doc);
    r->doc = NULL;
}
