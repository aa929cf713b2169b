/* fuzz_launch_record: the rendezvous record a rank of `fabtop sweep` sends rank 0 (one
 * LAUNCH_SLOT-byte slot of the gather; a hostile or broken rank controls every byte). The
 * first input byte is the mode, the rest the slot (zero-padded or cut to LAUNCH_SLOT bytes).
 * Mode bit 0: recompute the BLAKE2b checksum over the mutated bytes first, as a hostile
 * sender would, so the field checks themselves are fuzzed (random bytes otherwise fail at
 * the checksum). Bits 1-2: how many records the comparison takes (1 to 4); bit 3: a small
 * text buffer for the differences.
 * launch_record_header, launch_record_decode; a decoded record must encode again
 * (launch_record_encode) into the very same slot, which decodes to an equal record; then
 * launch_record_usual and launch_record_diff across it and two fixed records, as rank 0
 * names the nodes unlike the others. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "common/ft_err.h"
#include "engine/launch/launch_record.h"
#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_require(sodium_init() >= 0, "sodium_init failed"); /* as fabtop-sweep's main does */
    return 0;
}

/* A node like most of a job's: 8 GPUs, two ConnectX-7 rails. */
static void usual_node(struct launch_record *r, const char *firmware)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->version, sizeof(r->version), "0.1.0");
    r->layout = LAUNCH_LAYOUT;
    r->size = 4;
    snprintf(r->hostname, sizeof(r->hostname), "rk-h1");
    r->local_rank = 0;
    r->local_size = 1;
    r->rail = 0;
    r->ngpus = 8;
    r->nics_total = r->nnics = 2;
    for (int i = 0; i < 2; i++) {
        struct launch_nic *n = &r->nics[i];
        snprintf(n->model, sizeof(n->model), "MT2910 Family [ConnectX-7]");
        snprintf(n->firmware, sizeof(n->firmware), "%s", firmware);
        snprintf(n->rdma_dev, sizeof(n->rdma_dev), "mlx5_%d", i);
        snprintf(n->netdev, sizeof(n->netdev), "eth%d", i);
        n->link_layer = TOPO_LL_INFINIBAND;
        n->mtu = 4092;
        n->ib_mtu = 4096;
        n->rate_mbps = 400000;
    }
}

static int str_ok(const char *s, size_t len)
{
    size_t n = strnlen(s, len);
    if (n >= len)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
            return 0;
    return 1;
}

/* The first field in which a and b differ, or NULL. */
static const char *differs(const struct launch_record *a, const struct launch_record *b)
{
    if (strcmp(a->version, b->version))
        return "version";
    if (a->layout != b->layout || a->rank != b->rank || a->size != b->size)
        return "layout, rank or size";
    if (strcmp(a->hostname, b->hostname))
        return "hostname";
    if (a->local_rank != b->local_rank || a->local_size != b->local_size || a->rail != b->rail)
        return "local rank, local size or rail";
    if (a->ngpus != b->ngpus || a->nics_total != b->nics_total || a->nnics != b->nnics ||
        a->ctl_port != b->ctl_port)
        return "GPUs, NIC counts or control port";
    for (uint32_t i = 0; i < a->nnics && i < LAUNCH_MAX_NICS; i++) {
        const struct launch_nic *x = &a->nics[i], *y = &b->nics[i];
        if (strcmp(x->model, y->model) || strcmp(x->firmware, y->firmware) ||
            strcmp(x->rdma_dev, y->rdma_dev) || strcmp(x->netdev, y->netdev) ||
            strcmp(x->addr, y->addr))
            return "a NIC's text";
        if (x->link_layer != y->link_layer || x->mtu != y->mtu || x->ib_mtu != y->ib_mtu ||
            x->rate_mbps != y->rate_mbps)
            return "a NIC's numbers";
    }
    return NULL;
}

/* The checks decode promises (launch_record.h) hold for what it accepted. */
static void check_fields(const struct launch_record *r)
{
    fuzz_require(r->layout == LAUNCH_LAYOUT, "decoded layout %u", r->layout);
    fuzz_require(str_ok(r->version, sizeof(r->version)) &&
                     str_ok(r->hostname, sizeof(r->hostname)) && r->hostname[0],
                 "decoded version or hostname not printable text");
    fuzz_require(r->nnics <= LAUNCH_MAX_NICS && r->nnics <= r->nics_total, "decoded %u of %u NICs",
                 r->nnics, r->nics_total);
    fuzz_require(r->rail >= -1 && (r->rail < 0 || (uint32_t)r->rail < r->nics_total),
                 "decoded rail %d of %u NICs", r->rail, r->nics_total);
    fuzz_require(r->local_size == -1 || (r->local_size > 0 && r->local_rank < r->local_size),
                 "decoded local rank %d of %d", r->local_rank, r->local_size);
    for (uint32_t i = 0; i < r->nnics; i++) {
        const struct launch_nic *n = &r->nics[i];
        fuzz_require(str_ok(n->model, sizeof(n->model)) &&
                         str_ok(n->firmware, sizeof(n->firmware)) &&
                         str_ok(n->rdma_dev, sizeof(n->rdma_dev)) &&
                         str_ok(n->netdev, sizeof(n->netdev)) && str_ok(n->addr, sizeof(n->addr)),
                     "decoded NIC %u's text not printable", i);
        fuzz_require(n->link_layer <= TOPO_LL_ETHERNET, "decoded NIC %u link layer %u", i,
                     n->link_layer);
    }
}

static void compare(const struct launch_record *r, int mode)
{
    struct launch_record recs[4];
    recs[0] = *r;
    usual_node(&recs[1], "28.40.1000");
    usual_node(&recs[2], "28.39.2048");
    recs[3] = *r;
    int n = 1 + ((mode >> 1) & 3);
    char buf[512];
    size_t len = (mode & 8) ? 24 : sizeof(buf);
    int u = launch_record_usual(recs, n);
    fuzz_require(u >= 0 && u < n, "launch_record_usual: %d of %d", u, n);
    for (int i = 0; i < n; i++) {
        memset(buf, 'x', sizeof(buf));
        launch_record_diff(&recs[u], &recs[i], buf, len);
        fuzz_require(memchr(buf, 0, len) != NULL, "launch_record_diff: no NUL within %zu", len);
        launch_record_diff(&recs[i], &recs[u], buf, len);
        fuzz_require(memchr(buf, 0, len) != NULL, "launch_record_diff: no NUL within %zu", len);
    }
    launch_record_diff(r, r, buf, sizeof(buf));
    fuzz_require(buf[0] == '\0', "a record differs from itself: %s", buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int mode = data[0];
    static unsigned char slot[LAUNCH_SLOT], again[LAUNCH_SLOT];
    size_t n = size - 1 < LAUNCH_SLOT ? size - 1 : LAUNCH_SLOT;
    memset(slot, 0, sizeof(slot));
    memcpy(slot, data + 1, n);
    if (mode & 1)
        crypto_generichash(slot + LAUNCH_SLOT - LAUNCH_SUM, LAUNCH_SUM, slot,
                           LAUNCH_SLOT - LAUNCH_SUM, NULL, 0);

    struct launch_record h, r, r2;
    struct ft_err err = {0};
    int hrc = launch_record_header(slot, &h, &err);
    fuzz_require(hrc == 0 || (hrc == -EBADMSG && err.msg[0]),
                 "launch_record_header: %d without a message", hrc);
    ft_err_clear(&err);
    int rc = launch_record_decode(slot, &r, &err);
    if (rc < 0) {
        fuzz_require((rc == -EBADMSG || rc == -EPROTO) && err.msg[0] != '\0',
                     "launch_record_decode: %d without a message", rc);
        fuzz_require(hrc == 0 || rc == hrc, "header refused (%d), decode %d", hrc, rc);
        if (rc == -EPROTO)
            fuzz_require(hrc == 0 && r.layout != LAUNCH_LAYOUT &&
                             str_ok(r.version, sizeof(r.version)),
                         "-EPROTO without a readable header of another layout");
        return 0;
    }
    fuzz_require(hrc == 0, "decode accepted what header refused");
    fuzz_require(!strcmp(h.version, r.version) && h.rank == r.rank && h.size == r.size &&
                     h.layout == r.layout,
                 "header and decode read different headers");
    check_fields(&r);

    ft_err_clear(&err);
    rc = launch_record_encode(&r, again, &err);
    fuzz_require(rc == 0, "a decoded record does not encode: %s", err.msg);
    /* Every byte of an accepted slot is checked, so it is the one encoding of its record. */
    fuzz_require(!memcmp(again, slot, LAUNCH_SLOT), "re-encoding an accepted slot changed it");
    rc = launch_record_decode(again, &r2, &err);
    fuzz_require(rc == 0, "a re-encoded record does not decode: %s", err.msg);
    const char *f = differs(&r, &r2);
    fuzz_require(!f, "the round trip changed the %s", f);

    compare(&r, mode);
    return 0;
}
