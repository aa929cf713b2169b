/* topo_refs: the reference table shipped as data (topology/refs/reference.json): published
 * figures for common parts (adapters, GPUs, PCIe links), each with its source document,
 * the conditions it holds under, what a run must match for the row to apply and, for a
 * pass line, the tolerance and where it comes from. One reader that refuses a bad row with
 * one line naming the row and the field (docs/diagnosis.md, section 6). */
#ifndef TOPO_REFS_H
#define TOPO_REFS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/ft_err.h"

/* What a row states. */
enum topo_ref_kind {
    TOPO_REF_PASS_LINE = 0, /* a measured figure at or above value x (1 - tolerance) passes */
    TOPO_REF_PEAK,          /* a vendor's published peak: no run reaches it; no tolerance */
    TOPO_REF_RESULT,        /* a published measured result: a run is set beside it, no verdict */
};

/* What a run must be for a row to apply (every member given must hold; an empty one holds).
 * models: a part's names as an adapter's or GPU's model string holds them ("ConnectX-7",
 * "H100"); pci_ids: "vvvv:dddd" for a model known only by its PCI ids. */
#define TOPO_REF_MAX_NAMES 8
struct topo_ref_match {
    int nmodels, npci_ids;
    char models[TOPO_REF_MAX_NAMES][40];
    char pci_ids[TOPO_REF_MAX_NAMES][10];
    double port_gbps; /* the port's rate (sysfs rate), Gb/s; 0: any */
    int gpus;         /* a collective's ranks; 0: any */
    double min_bytes; /* the message size the figure holds from; 0: any */
    char algo[16];    /* NCCL's algorithm ("RING"); "": any */
    char memory[8];   /* a verbs flow's buffers: "gpu" or "host"; "": any */
};

struct topo_ref {
    char id[48];     /* unique, [a-z0-9_-]: "h100-sxm-nvlink-peak" */
    char part[64];   /* "NVIDIA H100 SXM5", "PCIe Gen5 x16" */
    char metric[40]; /* one of topo_refs_metrics() */
    enum topo_ref_kind kind;
    double value;         /* > 0, in unit */
    char unit[8];         /* "Gb/s" (10^9 bit/s) or "GB/s" (10^9 byte/s) */
    char direction[16];   /* "one" (per direction) or "both" (the two directions summed) */
    char conditions[400]; /* what the figure holds under */
    bool has_tolerance;
    double tolerance_pct;      /* pass lines: how far below value still passes, 0..50 percent */
    char tolerance_basis[160]; /* pass lines: where the tolerance comes from */
    struct topo_ref_match match;
    char document[320]; /* the source document's name */
    char url[256];      /* where it is published ("" when only the name is known) */
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
/* "pass_line", "peak" or "result". */
const char *topo_ref_kind_str(enum topo_ref_kind k);
/* Whether a model string names one of the row's models (a whole name: "ConnectX-7" is not in
 * "ConnectX-70"), or is one of its PCI ids. A row without models or ids matches nothing. */
bool topo_ref_names(const struct topo_ref *row, const char *model);

#endif
