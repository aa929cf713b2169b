/* topo_dcb: DCB netlink (RTM_GETDCB, DCB_CMD_IEEE_GET) over a plain rtnetlink socket. Message
 * and attribute layout from include/uapi/linux/dcbnl.h: a struct dcbmsg after the netlink
 * header, DCB_ATTR_IFNAME in the request, DCB_ATTR_IEEE (nested) in the answer holding
 * DCB_ATTR_IEEE_PFC (struct ieee_pfc) and DCB_ATTR_IEEE_APP_TABLE (struct dcb_app list). */
#include "topology/topo_dcb.h"

#include <errno.h>
#include <net/if.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define NLA_OK(a, len)                                                                             \
    ((len) >= (int)sizeof(struct nlattr) && (a)->nla_len >= sizeof(struct nlattr) &&               \
     (a)->nla_len <= (len))
#define NLA_NEXT(a, len)                                                                           \
    ((len) -= NLA_ALIGN((a)->nla_len), (struct nlattr *)((char *)(a) + NLA_ALIGN((a)->nla_len)))
#define NLA_DATA(a) ((void *)((char *)(a) + NLA_HDRLEN))

static void parse_ieee(struct topo_dcb_info *d, struct nlattr *a, int len)
{
    for (; NLA_OK(a, len); a = NLA_NEXT(a, len)) {
        int type = a->nla_type & NLA_TYPE_MASK;
        if (type == DCB_ATTR_IEEE_PFC && a->nla_len >= NLA_HDRLEN + sizeof(struct ieee_pfc)) {
            /* Copied out: struct ieee_pfc holds __u64 counters (8-byte alignment) and a
             * netlink attribute's payload is aligned to 4 only. */
            struct ieee_pfc pfc;
            memcpy(&pfc, NLA_DATA(a), sizeof(pfc));
            d->pfc_en = pfc.pfc_en;
            d->pfc_known = true;
        } else if (type == DCB_ATTR_IEEE_ETS &&
                   a->nla_len >= NLA_HDRLEN + sizeof(struct ieee_ets)) {
            const struct ieee_ets *ets = NLA_DATA(a);
            for (int i = 0; i < 8; i++) {
                d->prio_tc[i] = ets->prio_tc[i];
                d->tc_tx_bw[i] = ets->tc_tx_bw[i];
                d->tc_tsa[i] = ets->tc_tsa[i];
            }
            d->ets_known = true;
        } else if (type == DCB_ATTR_IEEE_APP_TABLE) {
            struct nlattr *e = NLA_DATA(a);
            int elen = a->nla_len - NLA_HDRLEN;
            for (; NLA_OK(e, elen); e = NLA_NEXT(e, elen)) {
                if ((e->nla_type & NLA_TYPE_MASK) != DCB_ATTR_IEEE_APP ||
                    e->nla_len < NLA_HDRLEN + sizeof(struct dcb_app))
                    continue;
                const struct dcb_app *app = NLA_DATA(e);
                if (app->selector == IEEE_8021QAZ_APP_SEL_DSCP && app->protocol < 64) {
                    d->dscp_prio[app->protocol] = app->priority;
                    d->trust_dscp = true;
                }
            }
        }
    }
}

void topo_dcb_init(struct topo_dcb_info *d)
{
    memset(d, 0, sizeof(*d));
    for (int i = 0; i < 64; i++)
        d->dscp_prio[i] = -1;
    for (int i = 0; i < 8; i++)
        d->ecn_np[i] = d->ecn_rp[i] = -1;
}

int topo_dcb_parse(const void *buf, size_t n, const char *netdev, struct topo_dcb_info *out)
{
    const struct nlmsghdr *nh = buf;
    int len = n > INT32_MAX ? INT32_MAX : (int)n;
    for (; NLMSG_OK(nh, (unsigned)len); nh = NLMSG_NEXT(nh, len)) {
        if (nh->nlmsg_type == NLMSG_ERROR) {
            if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                return -EPROTO;
            const struct nlmsgerr *e = NLMSG_DATA(nh);
            if (e->error) {
                snprintf(out->why, sizeof(out->why), "%s does not offer DCB (%s)", netdev,
                         strerror(-e->error));
                return 0;
            }
            continue;
        }
        if (nh->nlmsg_type != RTM_GETDCB ||
            nh->nlmsg_len < NLMSG_LENGTH(NLA_ALIGN(sizeof(struct dcbmsg))))
            continue;
        struct nlattr *a =
            (struct nlattr *)((char *)NLMSG_DATA(nh) + NLA_ALIGN(sizeof(struct dcbmsg)));
        int alen = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(NLA_ALIGN(sizeof(struct dcbmsg)));
        for (; NLA_OK(a, alen); a = NLA_NEXT(a, alen))
            if ((a->nla_type & NLA_TYPE_MASK) == DCB_ATTR_IEEE)
                parse_ieee(out, NLA_DATA(a), a->nla_len - NLA_HDRLEN);
        out->available = true;
        return 0;
    }
    snprintf(out->why, sizeof(out->why), "%s: no DCB answer", netdev);
    return -EPROTO;
}

int topo_dcb_query(const char *netdev, struct topo_dcb_info *out, struct ft_err *err)
{
    topo_dcb_init(out);
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return ft_err_set(err, -errno, "DCB netlink socket: %s", strerror(errno));
    struct timeval tv = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    struct {
        struct nlmsghdr nh;
        struct dcbmsg dm;
        char attrs[64];
    } req;
    memset(&req, 0, sizeof(req));
    size_t nlen = strlen(netdev) + 1;
    if (nlen > IFNAMSIZ) {
        close(fd);
        return ft_err_set(err, -EINVAL, "DCB: bad netdev name '%s'", netdev);
    }
    struct nlattr *na = (struct nlattr *)req.attrs;
    na->nla_type = DCB_ATTR_IFNAME;
    na->nla_len = (unsigned short)(NLA_HDRLEN + nlen);
    memcpy(NLA_DATA(na), netdev, nlen);
    req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct dcbmsg)) + NLA_ALIGN(na->nla_len);
    req.nh.nlmsg_type = RTM_GETDCB;
    req.nh.nlmsg_flags = NLM_F_REQUEST;
    req.nh.nlmsg_seq = 1;
    req.dm.dcb_family = AF_UNSPEC;
    req.dm.cmd = DCB_CMD_IEEE_GET;
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = -errno;
        close(fd);
        return ft_err_set(err, e, "DCB netlink request: %s", strerror(-e));
    }
    char buf[16384] __attribute__((aligned(8))); /* netlink headers and attributes in it */
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    close(fd);
    if (n < 0)
        return ft_err_set(err, -errno, "DCB netlink answer: %s", strerror(errno));
    topo_dcb_parse(buf, (size_t)n, netdev, out);
    return 0;
}

int topo_dcb_priority_of(const struct topo_dcb_info *d, int dscp)
{
    if (!d->available || !d->trust_dscp || dscp < 0 || dscp > 63)
        return -1;
    return d->dscp_prio[dscp];
}

/* 1, 0, or -1 when the file is missing or holds something else. */
static int read_switch(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int v = -1;
    if (fscanf(f, "%d", &v) != 1 || (v != 0 && v != 1))
        v = -1;
    fclose(f);
    return v;
}

int topo_dcb_ecn_read(const char *root, const char *netdev, struct topo_dcb_info *d)
{
    d->ecn_known = false;
    for (int p = 0; p < 8; p++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/sys/class/net/%s/ecn/roce_np/enable/%d", root, netdev, p);
        d->ecn_np[p] = read_switch(path);
        snprintf(path, sizeof(path), "%s/sys/class/net/%s/ecn/roce_rp/enable/%d", root, netdev, p);
        d->ecn_rp[p] = read_switch(path);
        d->ecn_known |= d->ecn_np[p] >= 0 || d->ecn_rp[p] >= 0;
    }
    return d->ecn_known ? 0 : -ENOENT;
}

/* The ECN switches of priority prio (assumed: the priority is not mapped, 0 untagged). */
static void ecn_json(cJSON *o, const struct topo_dcb_info *d, int prio, bool assumed)
{
    if (!d->ecn_known)
        return;
    cJSON *e = cJSON_AddObjectToObject(o, "ecn");
    cJSON_AddNumberToObject(e, "priority", prio);
    if (assumed)
        cJSON_AddBoolToObject(e, "priority_assumed", true);
    const int *v[2] = {d->ecn_np, d->ecn_rp};
    const char *k[2] = {"np_enabled", "rp_enabled"};
    for (int i = 0; i < 2; i++) {
        if (v[i][prio] < 0)
            cJSON_AddNullToObject(e, k[i]);
        else
            cJSON_AddBoolToObject(e, k[i], v[i][prio] == 1);
    }
}

cJSON *topo_dcb_json(const struct topo_dcb_info *d, int dscp)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "available", d->available);
    if (!d->available) {
        cJSON_AddStringToObject(o, "why", d->why);
        ecn_json(o, d, 0, true);
        return o;
    }
    cJSON_AddStringToObject(o, "trust", d->trust_dscp ? "dscp" : "pcp");
    cJSON_AddNumberToObject(o, "dscp", dscp);
    int prio = topo_dcb_priority_of(d, dscp);
    if (prio >= 0) {
        cJSON_AddNumberToObject(o, "priority", prio);
        if (d->pfc_known)
            cJSON_AddBoolToObject(o, "pfc_enabled", (d->pfc_en >> prio) & 1);
    } else {
        /* Without DSCP trust the priority comes from the VLAN PCP (the QP's SL reaches it
         * only with a VLAN), or is 0 untagged. */
        cJSON_AddNullToObject(o, "priority");
    }
    if (d->pfc_known)
        cJSON_AddNumberToObject(o, "pfc_en_mask", d->pfc_en);
    ecn_json(o, d, prio >= 0 ? prio : 0, prio < 0);
    return o;
}

/* An array of 8 small integers from j[key] into v; false when absent or malformed. */
static bool ints8(const cJSON *j, const char *key, int *v, int lo, int hi)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 8)
        return false;
    int i = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, a)
    {
        if (!cJSON_IsNumber(x) || x->valuedouble < lo || x->valuedouble > hi ||
            x->valuedouble != (int)x->valuedouble)
            return false;
        v[i++] = (int)x->valuedouble;
    }
    return true;
}

cJSON *topo_dcb_state_json(const struct topo_dcb_info *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "available", d->available);
    cJSON_AddStringToObject(o, "why", d->why);
    cJSON_AddBoolToObject(o, "trust_dscp", d->trust_dscp);
    cJSON *m = cJSON_AddObjectToObject(o, "dscp_priority");
    for (int i = 0; i < 64; i++)
        if (d->dscp_prio[i] >= 0) {
            char k[8];
            snprintf(k, sizeof(k), "%d", i);
            cJSON_AddNumberToObject(m, k, d->dscp_prio[i]);
        }
    if (d->pfc_known)
        cJSON_AddNumberToObject(o, "pfc_en_mask", d->pfc_en);
    if (d->ets_known) {
        cJSON *e = cJSON_AddObjectToObject(o, "ets");
        cJSON_AddItemToObject(e, "prio_tc", cJSON_CreateIntArray(d->prio_tc, 8));
        cJSON_AddItemToObject(e, "tc_tx_bw_pct", cJSON_CreateIntArray(d->tc_tx_bw, 8));
        cJSON_AddItemToObject(e, "tc_tsa", cJSON_CreateIntArray(d->tc_tsa, 8));
    }
    if (d->ecn_known) {
        cJSON_AddItemToObject(o, "ecn_np", cJSON_CreateIntArray(d->ecn_np, 8));
        cJSON_AddItemToObject(o, "ecn_rp", cJSON_CreateIntArray(d->ecn_rp, 8));
    }
    return o;
}

int topo_dcb_state_from_json(const cJSON *j, struct topo_dcb_info *d)
{
    topo_dcb_init(d);
    if (!cJSON_IsObject(j))
        return -EPROTO;
    d->available = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "available"));
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(j, "why");
    if (cJSON_IsString(why))
        snprintf(d->why, sizeof(d->why), "%s", why->valuestring);
    d->trust_dscp = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "trust_dscp"));
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "dscp_priority"), *x;
    if (m && !cJSON_IsObject(m))
        goto bad;
    cJSON_ArrayForEach(x, m)
    {
        char *end;
        long k = strtol(x->string, &end, 10);
        if (*end || k < 0 || k > 63 || !cJSON_IsNumber(x) || x->valuedouble < 0 ||
            x->valuedouble > 7)
            goto bad;
        d->dscp_prio[k] = (int)x->valuedouble;
    }
    const cJSON *pfc = cJSON_GetObjectItemCaseSensitive(j, "pfc_en_mask");
    if (pfc) {
        if (!cJSON_IsNumber(pfc) || pfc->valuedouble < 0 || pfc->valuedouble > 255)
            goto bad;
        d->pfc_en = (unsigned)pfc->valuedouble;
        d->pfc_known = true;
    }
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "ets");
    if (e) {
        if (!ints8(e, "prio_tc", d->prio_tc, 0, 7) ||
            !ints8(e, "tc_tx_bw_pct", d->tc_tx_bw, 0, 100) ||
            !ints8(e, "tc_tsa", d->tc_tsa, 0, 255))
            goto bad;
        d->ets_known = true;
    }
    if (cJSON_GetObjectItemCaseSensitive(j, "ecn_np")) {
        if (!ints8(j, "ecn_np", d->ecn_np, -1, 1) || !ints8(j, "ecn_rp", d->ecn_rp, -1, 1))
            goto bad;
        d->ecn_known = true;
    }
    return 0;
bad:
    topo_dcb_init(d);
    return -EPROTO;
}
