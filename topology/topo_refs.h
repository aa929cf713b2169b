/* topo_refs: the reference table shipped as data (topology/refs/reference.json): published
 * figures for common parts (adapters, GPUs, PCIe links), each with its source document,
 * the conditions it holds under and, for a pass line, the tolerance. One reader that
 * refuses a bad row with one line naming the row and the field (docs/diagnosis.md). */
#ifndef TOPO_REFS_H
#define TOPO_REFS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/ft_err.h"

/* What a row states. */
enum topo_ref_kind {
    TOPO_REF_PASS_LINE = 0, /* a measured figure at or above value x (1 - tolerance) passes */
    TOPO_REF_PEAK,          /* a vendor's published peak: no run reaches it; no tolerance */
};

struct topo_ref {
    char id[48];     /* unique, [a-z0-9_-]: "h100-sxm-nvlink-peak" */
    char part[64];   /* "NVIDIA H100 SXM5", "PCIe Gen5 x16" */
    char metric[40]; /* one of topo_refs_metrics() */
    enum topo_ref_kind kind;
    double value;         /* > 0, in unit */
    char unit[8];         /* "Gb/s" (10^9 bit/s) or "GB/s" (10^9 byte/s) */
    char direction[16];   /* "one" (per direction) or "both" (the two directions summed) */
    char conditions[256]; /* what the figure holds under */
    bool has_tolerance;
    double tolerance_pct; /* pass lines: how far below value still passes, 0..50 percent */
    char document[160];   /* the source document's name */
    char url[256];        /* where it is published ("" when only the name is known) */
};

struct topo_refs {
    int n;
    struct topo_ref *rows;
};

/* The metric names a row may carry, NULL-terminated. */
const char *const *topo_refs_metrics(void);

/* Parse a table from text (NUL-terminated at text[len]); what names it in messages.
 * 0, or -EINVAL with "WHAT: rows[3] (id 'x').unit: 'MB/s' is not Gb/s or GB/s". */
int topo_refs_parse(const char *text, size_t len, const char *what, struct topo_refs *out,
                    struct ft_err *err);
/* Read and parse a file. 0 or -errno. */
int topo_refs_load(const char *path, struct topo_refs *out, struct ft_err *err);
void topo_refs_free(struct topo_refs *r);

/* The row with this id, or NULL. */
const struct topo_ref *topo_refs_find(const struct topo_refs *r, const char *id);
/* A value in Gb/s of one direction: GB/s x 8, "both" halved. */
double topo_ref_gbps_one_way(const struct topo_ref *row);

#endif
