/* launch_record: the rendezvous record (layout in launch_record.h): filled from the topology,
 * encoded into a fixed slot, checked field by field when decoded, compared across ranks. */
#include "engine/launch/launch_record.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

static const unsigned char magic[8] = {'F', 'T', 'S', 'W', 'E', 'E', 'P', 0};

/* Copy src into a field of len bytes, cut at len-1 (summaries only: names of the node's own
 * hardware, never what a peer sent). */
void launch_record_text(char *dst, size_t len, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < len; i++)
        dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
    dst[i] = '\0';
}

static void fill(char *dst, size_t len, const char *src)
{
    launch_record_text(dst, len, src);
}

/* A rail is an RDMA NIC when the node has any (a management Ethernet port beside them is not
 * a rail), else any NIC. */
static int is_rail(const struct topo_model *m, int i, int any_rdma)
{
    return !any_rdma || m->nics[i].rdma_dev[0];
}

/* NIC k of the model (k < 0: none, the netdev alone) with netdev d (< 0: its first) into n. */
static void fill_nic(struct launch_nic *n, const struct topo_model *m, int k, int d)
{
    memset(n, 0, sizeof(*n));
    const struct topo_nic *c = k >= 0 ? &m->nics[k] : NULL;
    const struct topo_port *p = NULL;
    if (c) {
        if (c->adapter >= 0 && c->adapter < m->nadapters)
            fill(n->model, sizeof(n->model), m->adapters[c->adapter].model);
        fill(n->firmware, sizeof(n->firmware), c->fw_ver);
        fill(n->rdma_dev, sizeof(n->rdma_dev), c->rdma_dev);
        if (c->nports > 0 && c->first_port >= 0 && c->first_port < m->nports)
            p = &m->ports[c->first_port];
    } else {
        fill(n->model, sizeof(n->model), "virtual network device");
    }
    if (p) {
        if (p->valid & TOPO_PORT_V_LL)
            n->link_layer = (uint32_t)p->link_layer;
        if (p->valid & TOPO_PORT_V_MTU)
            n->ib_mtu = p->active_mtu > 0 ? (uint32_t)p->active_mtu : 0;
        if ((p->valid & TOPO_PORT_V_RATE) && p->rate_gbps > 0 && p->rate_gbps <= 4000)
            n->rate_mbps = (uint32_t)(p->rate_gbps * 1000.0 + 0.5);
    }
    for (int i = 0; i < m->nnetdevs; i++) {
        const struct topo_netdev *nd = &m->netdevs[i];
        if (d >= 0 ? i != d : (c == NULL || nd->nic != k))
            continue;
        fill(n->netdev, sizeof(n->netdev), nd->name);
        if ((nd->valid & TOPO_NET_V_MTU) && nd->mtu > 0)
            n->mtu = (uint32_t)nd->mtu;
        /* A virtual device's speed is no port's (veth reports 10000 Mb/s whatever carries
         * it): its ceiling stays unknown. */
        if (c && !n->rate_mbps && (nd->valid & TOPO_NET_V_SPEED) && nd->speed_mbps > 0)
            n->rate_mbps = (uint32_t)nd->speed_mbps;
        if (!p || !(p->valid & TOPO_PORT_V_LL))
            n->link_layer = TOPO_LL_ETHERNET; /* a plain network function */
        size_t w = strcspn(nd->addrs, " ");
        if (w > 0 && w < sizeof(n->addr))
            memcpy(n->addr, nd->addrs, w);
        break;
    }
}

void launch_record_topo(struct launch_record *r, const struct topo_model *m)
{
    int any_rdma = 0;
    for (int i = 0; i < m->nnics; i++)
        any_rdma |= m->nics[i].rdma_dev[0] != '\0';
    r->ngpus = m->ngpus > 0 ? (uint32_t)m->ngpus : 0;
    r->nics_total = 0;
    r->nnics = 0;
    for (int k = 0; k < m->nnics; k++) {
        if (!is_rail(m, k, any_rdma))
            continue;
        r->nics_total++;
        if (r->nnics == LAUNCH_MAX_NICS)
            continue;
        fill_nic(&r->nics[r->nnics++], m, k, -1);
    }
}

int launch_record_rails(struct launch_record *r, const struct topo_model *m,
                        const char *const *netdevs, int n, struct ft_err *err)
{
    if (n < 1 || n > LAUNCH_MAX_NICS)
        return ft_err_set(err, -EINVAL, "--rails: 1 to %d netdevs, not %d", LAUNCH_MAX_NICS, n);
    struct launch_nic nics[LAUNCH_MAX_NICS];
    for (int i = 0; i < n; i++) {
        int d = -1;
        for (int j = 0; j < m->nnetdevs && d < 0; j++)
            if (!strcmp(m->netdevs[j].name, netdevs[i]))
                d = j;
        if (d < 0)
            return ft_err_set(err, -ENODEV, "--rails: no netdev '%s' on this node", netdevs[i]);
        for (int j = 0; j < i; j++)
            if (!strcmp(netdevs[j], netdevs[i]))
                return ft_err_set(err, -EINVAL, "--rails: netdev '%s' given twice", netdevs[i]);
        int k = m->netdevs[d].nic;
        fill_nic(&nics[i], m, k >= 0 && k < m->nnics ? k : -1, d);
    }
    memcpy(r->nics, nics, (size_t)n * sizeof(nics[0]));
    r->nnics = r->nics_total = (uint32_t)n;
    return 0;
}

/* ---- encoding ---- */

struct cur {
    unsigned char *p;
    const unsigned char *q;
    size_t off, end;
    const char *bad; /* the first field that did not fit or did not check */
};

static void put_u16(struct cur *c, uint16_t v)
{
    c->p[c->off] = (unsigned char)v;
    c->p[c->off + 1] = (unsigned char)(v >> 8);
    c->off += 2;
}

static void put_u32(struct cur *c, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        c->p[c->off + (size_t)i] = (unsigned char)(v >> (8 * i));
    c->off += 4;
}

static void put_str(struct cur *c, const char *s, size_t len, const char *name)
{
    size_t n = strnlen(s, len);
    if (n >= len) {
        if (!c->bad)
            c->bad = name;
        n = 0;
    }
    memset(c->p + c->off, 0, len);
    memcpy(c->p + c->off, s, n);
    c->off += len;
}

static uint16_t get_u16(struct cur *c)
{
    uint16_t v = (uint16_t)(c->q[c->off] | (c->q[c->off + 1] << 8));
    c->off += 2;
    return v;
}

static uint32_t get_u32(struct cur *c)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)c->q[c->off + (size_t)i] << (8 * i);
    c->off += 4;
    return v;
}

/* A text field: a NUL within len, printable ASCII before it, zeros after it. */
static void get_str(struct cur *c, char *dst, size_t len, const char *name)
{
    const unsigned char *s = c->q + c->off;
    size_t n = strnlen((const char *)s, len);
    int ok = n < len;
    for (size_t i = 0; ok && i < n; i++)
        ok = s[i] >= 0x20 && s[i] < 0x7f;
    for (size_t i = n; ok && i < len; i++)
        ok = s[i] == 0;
    if (!ok && !c->bad)
        c->bad = name;
    memset(dst, 0, len);
    if (ok)
        memcpy(dst, s, n);
    c->off += len;
}

int launch_rank_gpu(const struct launch_record *r)
{
    return r->nccl_gpus && r->local_rank > 0 ? r->local_rank % r->nccl_gpus : 0;
}

static size_t body_encode(const struct launch_record *r, struct cur *c)
{
    put_str(c, r->hostname, sizeof(r->hostname), "hostname");
    put_u32(c, (uint32_t)r->local_rank);
    put_u32(c, (uint32_t)r->local_size);
    put_u32(c, (uint32_t)r->rail);
    put_u32(c, r->ngpus);
    put_u32(c, r->nics_total);
    put_u32(c, r->nnics);
    put_u16(c, r->ctl_port);
    put_u16(c, r->nccl_gpus);
    put_str(c, r->nccl_gpu, sizeof(r->nccl_gpu), "NCCL GPU");
    for (uint32_t i = 0; i < r->nnics && i < LAUNCH_MAX_NICS; i++) {
        const struct launch_nic *n = &r->nics[i];
        put_str(c, n->model, sizeof(n->model), "NIC model");
        put_str(c, n->firmware, sizeof(n->firmware), "NIC firmware");
        put_str(c, n->rdma_dev, sizeof(n->rdma_dev), "RDMA device");
        put_str(c, n->netdev, sizeof(n->netdev), "netdev");
        put_u32(c, n->link_layer);
        put_u32(c, n->mtu);
        put_u32(c, n->ib_mtu);
        put_u32(c, n->rate_mbps);
        put_str(c, n->addr, sizeof(n->addr), "address");
    }
    return c->off - LAUNCH_HEADER;
}

int launch_record_encode(const struct launch_record *r, unsigned char *slot, struct ft_err *err)
{
    if (r->nnics > LAUNCH_MAX_NICS)
        return ft_err_set(err, -EINVAL, "rendezvous record: %u NICs, at most %d fit", r->nnics,
                          LAUNCH_MAX_NICS);
    memset(slot, 0, LAUNCH_SLOT);
    struct cur c = {.p = slot};
    memcpy(slot, magic, sizeof(magic));
    c.off = 8;
    put_u16(&c, LAUNCH_LAYOUT);
    put_u16(&c, 0);
    size_t lenpos = c.off;
    c.off += 4;
    put_str(&c, r->version, sizeof(r->version), "fabtop version");
    put_u32(&c, r->rank);
    put_u32(&c, r->size);
    c.off = LAUNCH_HEADER;
    size_t body = body_encode(r, &c);
    if (c.bad)
        return ft_err_set(err, -EINVAL, "rendezvous record: the %s does not fit its field", c.bad);
    struct cur l = {.p = slot, .off = lenpos};
    put_u32(&l, (uint32_t)body);
    crypto_generichash(slot + LAUNCH_SLOT - LAUNCH_SUM, LAUNCH_SUM, slot, LAUNCH_SLOT - LAUNCH_SUM,
                       NULL, 0);
    return 0;
}

/* ---- decoding ---- */

static int bad(struct ft_err *err, const char *what)
{
    return ft_err_set(err, -EBADMSG, "rendezvous record refused: %s", what);
}

int launch_record_header(const unsigned char *slot, struct launch_record *r, struct ft_err *err)
{
    memset(r, 0, sizeof(*r));
    if (memcmp(slot, magic, sizeof(magic)))
        return bad(err, "no fabtop sweep magic (not a fabtop rank, or a damaged slot)");
    struct cur c = {.q = slot, .off = 8};
    r->layout = get_u16(&c);
    if (get_u16(&c))
        return bad(err, "reserved header bytes are not zero");
    uint32_t body = get_u32(&c);
    get_str(&c, r->version, sizeof(r->version), "fabtop version");
    r->rank = get_u32(&c);
    r->size = get_u32(&c);
    for (size_t i = 56; i < LAUNCH_HEADER; i++)
        if (slot[i])
            return bad(err, "reserved header bytes are not zero");
    if (c.bad)
        return bad(err, "the fabtop version is not NUL-terminated printable text");
    if (body > LAUNCH_BODY_MAX)
        return bad(err, "its body length is beyond the slot");
    return 0;
}

int launch_record_decode(const unsigned char *slot, struct launch_record *r, struct ft_err *err)
{
    int rc = launch_record_header(slot, r, err);
    if (rc < 0)
        return rc;
    unsigned char sum[LAUNCH_SUM];
    crypto_generichash(sum, sizeof(sum), slot, LAUNCH_SLOT - LAUNCH_SUM, NULL, 0);
    if (sodium_memcmp(sum, slot + LAUNCH_SLOT - LAUNCH_SUM, sizeof(sum)))
        return bad(err, "its checksum does not match (damaged in transit)");
    if (r->layout != LAUNCH_LAYOUT)
        return ft_err_set(err, -EPROTO,
                          "rendezvous record of layout %u from fabtop %s; this fabtop reads "
                          "layout %d",
                          r->layout, r->version, LAUNCH_LAYOUT);
    struct cur l = {.q = slot, .off = 12};
    uint32_t body = get_u32(&l);
    struct cur c = {.q = slot, .off = LAUNCH_HEADER};
    get_str(&c, r->hostname, sizeof(r->hostname), "hostname");
    r->local_rank = (int32_t)get_u32(&c);
    r->local_size = (int32_t)get_u32(&c);
    r->rail = (int32_t)get_u32(&c);
    r->ngpus = get_u32(&c);
    r->nics_total = get_u32(&c);
    r->nnics = get_u32(&c);
    r->ctl_port = get_u16(&c);
    r->nccl_gpus = get_u16(&c);
    get_str(&c, r->nccl_gpu, sizeof(r->nccl_gpu), "NCCL GPU");
    if (r->nccl_gpus > 4096)
        return bad(err, "its NCCL GPU count is out of range");
    if (c.bad && !strcmp(c.bad, "NCCL GPU"))
        return bad(err, "its NCCL GPU's bus id is not NUL-terminated printable text");
    if (c.bad || !r->hostname[0])
        return bad(err, "the hostname is empty or not NUL-terminated printable text");
    if (r->local_rank < -1 || r->local_size < -1 || r->local_size == 0 ||
        (r->local_size > 0 && r->local_rank >= r->local_size))
        return bad(err, "its local rank is out of range");
    if (r->nnics > LAUNCH_MAX_NICS || r->nnics > r->nics_total || r->nics_total > 4096 ||
        (r->nics_total > r->nnics && r->nnics < LAUNCH_MAX_NICS))
        return bad(err, "its NIC count is out of range");
    if (r->ngpus > 4096)
        return bad(err, "its GPU count is out of range");
    if (r->rail < -1 || (r->rail >= 0 && (uint32_t)r->rail >= r->nics_total) ||
        (r->rail == -1 && r->nics_total > 0))
        return bad(err, "its rail is not one of its NICs");
    for (uint32_t i = 0; i < r->nnics; i++) {
        struct launch_nic *n = &r->nics[i];
        get_str(&c, n->model, sizeof(n->model), "NIC model");
        get_str(&c, n->firmware, sizeof(n->firmware), "NIC firmware");
        get_str(&c, n->rdma_dev, sizeof(n->rdma_dev), "RDMA device");
        get_str(&c, n->netdev, sizeof(n->netdev), "netdev");
        n->link_layer = get_u32(&c);
        n->mtu = get_u32(&c);
        n->ib_mtu = get_u32(&c);
        n->rate_mbps = get_u32(&c);
        get_str(&c, n->addr, sizeof(n->addr), "address");
        if (c.bad) {
            char why[96];
            snprintf(why, sizeof(why), "NIC %u's %s is not NUL-terminated printable text", i,
                     c.bad);
            return bad(err, why);
        }
        if (n->link_layer > TOPO_LL_ETHERNET || n->mtu > 1u << 20 || n->ib_mtu > 1u << 16 ||
            n->rate_mbps > 4000000u) {
            char why[96];
            snprintf(why, sizeof(why), "NIC %u's link layer, MTU or rate is out of range", i);
            return bad(err, why);
        }
    }
    if (c.off - LAUNCH_HEADER != body)
        return bad(err, "its body length does not match its NIC count");
    for (size_t i = c.off; i < LAUNCH_SLOT - LAUNCH_SUM; i++)
        if (slot[i])
            return bad(err, "bytes past its body are not zero");
    return 0;
}

/* ---- comparing ranks ---- */

/* The fields a comparison across nodes must match (issue 16: NIC model, firmware, MTU, link
 * layer, GPU count). */
static int same_topo(const struct launch_record *a, const struct launch_record *b)
{
    if (a->ngpus != b->ngpus || a->nics_total != b->nics_total || a->nnics != b->nnics)
        return 0;
    for (uint32_t i = 0; i < a->nnics; i++) {
        const struct launch_nic *x = &a->nics[i], *y = &b->nics[i];
        if (strcmp(x->model, y->model) || strcmp(x->firmware, y->firmware) ||
            x->link_layer != y->link_layer || x->mtu != y->mtu || x->ib_mtu != y->ib_mtu)
            return 0;
    }
    return 1;
}

int launch_record_usual(const struct launch_record *recs, int n)
{
    int best = 0, best_count = 0;
    for (int i = 0; i < n; i++) {
        int count = 0;
        for (int j = 0; j < n; j++)
            count += same_topo(&recs[i], &recs[j]);
        if (count > best_count) {
            best = i;
            best_count = count;
        }
    }
    return best;
}

/* Append "WHAT A (others B)" to buf. */
static void add(char *buf, size_t len, const char *a, const char *b, const char *what)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    snprintf(buf + used, len - used, "%s%s %s (others %s)", used ? "; " : "", what, a, b);
}

static const char *or_unknown(const char *s)
{
    return s[0] ? s : "unknown";
}

void launch_record_diff(const struct launch_record *usual, const struct launch_record *r, char *buf,
                        size_t len)
{
    buf[0] = '\0';
    char a[80], b[80], what[48];
    if (r->ngpus != usual->ngpus) {
        snprintf(a, sizeof(a), "%u", r->ngpus);
        snprintf(b, sizeof(b), "%u", usual->ngpus);
        add(buf, len, a, b, "GPUs");
    }
    if (r->nccl_gpus != usual->nccl_gpus) {
        snprintf(a, sizeof(a), "%u", r->nccl_gpus);
        snprintf(b, sizeof(b), "%u", usual->nccl_gpus);
        add(buf, len, a, b, "GPUs NCCL can use");
    }
    if (r->nics_total != usual->nics_total) {
        snprintf(a, sizeof(a), "%u", r->nics_total);
        snprintf(b, sizeof(b), "%u", usual->nics_total);
        add(buf, len, a, b, "NICs");
    }
    uint32_t n = r->nnics < usual->nnics ? r->nnics : usual->nnics;
    for (uint32_t i = 0; i < n; i++) {
        const struct launch_nic *x = &r->nics[i], *y = &usual->nics[i];
        if (strcmp(x->model, y->model)) {
            snprintf(what, sizeof(what), "NIC %u model", i);
            add(buf, len, or_unknown(x->model), or_unknown(y->model), what);
        }
        if (strcmp(x->firmware, y->firmware)) {
            snprintf(what, sizeof(what), "NIC %u firmware", i);
            add(buf, len, or_unknown(x->firmware), or_unknown(y->firmware), what);
        }
        if (x->link_layer != y->link_layer) {
            snprintf(what, sizeof(what), "NIC %u link layer", i);
            add(buf, len, topo_link_layer_str((enum topo_link_layer)x->link_layer),
                topo_link_layer_str((enum topo_link_layer)y->link_layer), what);
        }
        if (x->mtu != y->mtu) {
            snprintf(what, sizeof(what), "NIC %u MTU", i);
            snprintf(a, sizeof(a), "%u bytes", x->mtu);
            snprintf(b, sizeof(b), "%u bytes", y->mtu);
            add(buf, len, a, b, what);
        }
        if (x->ib_mtu != y->ib_mtu) {
            snprintf(what, sizeof(what), "NIC %u RDMA MTU", i);
            snprintf(a, sizeof(a), "%u bytes", x->ib_mtu);
            snprintf(b, sizeof(b), "%u bytes", y->ib_mtu);
            add(buf, len, a, b, what);
        }
    }
}
