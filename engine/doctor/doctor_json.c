/* doctor_json: one end's facts as JSON and back (the doctor.facts reply, `--json`). */
#include "engine/doctor/doctor.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonutil.h"

#define S(k)                                                                                       \
    {                                                                                              \
#k, offsetof(struct doctor_facts, k), sizeof(((struct doctor_facts *)0)->k)                \
    }
static const struct {
    const char *key;
    size_t off, len;
} strs[] = {S(host),      S(local_addr), S(peer_addr), S(addr_dev),       S(route_dev),
            S(route_via), S(subnet),     S(driver),    S(driver_version), S(firmware)};
#undef S
#define I(k)                                                                                       \
    {                                                                                              \
#k, offsetof(struct doctor_facts, k)                                                       \
    }
static const struct {
    const char *key;
    size_t off;
} ints[] = {I(mtu),
            I(addr_mtu),
            I(rp_filter_all),
            I(rp_filter_dev),
            I(arp_ignore_all),
            I(arp_ignore_dev),
            I(arp_announce_all),
            I(arp_announce_dev),
            I(tcp_ecn),
            I(tso),
            I(gso),
            I(gro),
            I(rx_csum),
            I(tx_csum),
            I(iommu_groups)};
#undef I

static void add_int(cJSON *o, const char *k, int64_t v)
{
    if (v == DOCTOR_UNKNOWN)
        cJSON_AddNullToObject(o, k);
    else if (v == DOCTOR_UNLIMITED)
        cJSON_AddStringToObject(o, k, "unlimited");
    else
        cJSON_AddNumberToObject(o, k, (double)v);
}

static int64_t get_int(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsString(v) && !strcmp(v->valuestring, "unlimited"))
        return DOCTOR_UNLIMITED;
    int64_t x;
    return jsonutil_int(o, k, &x) ? x : DOCTOR_UNKNOWN;
}

cJSON *doctor_facts_json(const struct doctor_facts *f)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        cJSON_AddStringToObject(o, strs[i].key, (const char *)f + strs[i].off);
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
        add_int(o, ints[i].key, *(const int *)((const char *)f + ints[i].off));
    add_int(o, "memlock_soft_bytes", f->memlock_soft);
    add_int(o, "memlock_hard_bytes", f->memlock_hard);
    cJSON *sib = cJSON_AddArrayToObject(o, "same_subnet");
    for (int i = 0; i < f->nsib; i++)
        cJSON_AddItemToArray(sib, cJSON_CreateString(f->sib[i]));
    cJSON *ports = cJSON_AddArrayToObject(o, "rdma");
    for (int i = 0; i < f->nrdma; i++) {
        const struct doctor_rdma_port *r = &f->rdma[i];
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "dev", r->dev);
        cJSON_AddNumberToObject(p, "port", r->port);
        cJSON_AddStringToObject(p, "link_layer", r->link_layer);
        cJSON_AddStringToObject(p, "state", r->state);
        add_int(p, "active_mtu", r->active_mtu);
        add_int(p, "max_mtu", r->max_mtu);
        cJSON_AddStringToObject(p, "netdev", r->netdev);
        add_int(p, "netdev_mtu", r->netdev_mtu);
        cJSON_AddStringToObject(p, "fw", r->fw);
        cJSON *gs = cJSON_AddArrayToObject(p, "gids");
        for (int g = 0; g < r->ngids; g++) {
            cJSON *x = cJSON_CreateObject();
            cJSON_AddNumberToObject(x, "index", r->gids[g].index);
            cJSON_AddStringToObject(x, "type", r->gids[g].type);
            cJSON_AddStringToObject(x, "ip", r->gids[g].ip);
            cJSON_AddItemToArray(gs, x);
        }
        cJSON_AddItemToObject(p, "dcb", topo_dcb_state_json(&r->dcb));
        cJSON_AddStringToObject(p, "acs_redirect", r->acs);
        cJSON_AddNumberToObject(p, "acs_gpus", r->acs_gpus);
        cJSON_AddItemToArray(ports, p);
    }
    return o;
}

int doctor_facts_from_json(const cJSON *j, struct doctor_facts *f, struct ft_err *err)
{
    if (!cJSON_IsObject(j))
        return ft_err_set(err, -EPROTO, "doctor: the peer's facts are not a JSON object");
    memset(f, 0, sizeof(*f));
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        jsonutil_strcpy(j, strs[i].key, (char *)f + strs[i].off, strs[i].len);
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
        *(int *)((char *)f + ints[i].off) = (int)get_int(j, ints[i].key);
    f->memlock_soft = get_int(j, "memlock_soft_bytes");
    f->memlock_hard = get_int(j, "memlock_hard_bytes");
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(j, "same_subnet"))
    {
        if (cJSON_IsString(x) && f->nsib < DOCTOR_MAX_SIB)
            snprintf(f->sib[f->nsib++], DOCTOR_NAME, "%s", x->valuestring);
    }
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(j, "rdma"))
    {
        if (f->nrdma == DOCTOR_MAX_RDMA)
            break;
        struct doctor_rdma_port *r = &f->rdma[f->nrdma++];
        jsonutil_strcpy(x, "dev", r->dev, sizeof(r->dev));
        r->port = (int)get_int(x, "port");
        jsonutil_strcpy(x, "link_layer", r->link_layer, sizeof(r->link_layer));
        jsonutil_strcpy(x, "state", r->state, sizeof(r->state));
        r->active_mtu = (int)get_int(x, "active_mtu");
        r->max_mtu = (int)get_int(x, "max_mtu");
        jsonutil_strcpy(x, "netdev", r->netdev, sizeof(r->netdev));
        r->netdev_mtu = (int)get_int(x, "netdev_mtu");
        jsonutil_strcpy(x, "fw", r->fw, sizeof(r->fw));
        const cJSON *g;
        cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(x, "gids"))
        {
            if (r->ngids == DOCTOR_MAX_GIDS)
                break;
            struct doctor_gid *d = &r->gids[r->ngids++];
            d->index = (int)get_int(g, "index");
            jsonutil_strcpy(g, "type", d->type, sizeof(d->type));
            jsonutil_strcpy(g, "ip", d->ip, sizeof(d->ip));
        }
        jsonutil_strcpy(x, "acs_redirect", r->acs, sizeof(r->acs));
        r->acs_gpus = (int)get_int(x, "acs_gpus");
        if (r->acs_gpus < 0 || r->acs_gpus > 1024)
            r->acs_gpus = 0;
        const cJSON *dcb = cJSON_GetObjectItemCaseSensitive(x, "dcb");
        if (topo_dcb_state_from_json(dcb, &r->dcb) < 0 && dcb)
            return ft_err_set(err, -EPROTO, "doctor: the peer's DCB facts of %s are malformed",
                              r->dev);
    }
    return 0;
}
