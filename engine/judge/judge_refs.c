/* judge_refs: each flow's headline figure set beside the reference-table rows that apply to
 * it (judge.h, docs/diagnosis.md section 6): which figure a row's metric compares, what the
 * run must be for the row to apply (its match), and a pass line's verdict. Pure: no I/O. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/jsonutil.h"
#include "common/xalloc.h"
#include "engine/judge/judge.h"
#include "engine/results/results.h"

/* What one flow offers one row: the figure (Gb/s one direction), what it is, and a condition
 * of the row the run does not meet. */
struct ref_fig {
    double gbps;
    char what[64];
    char differs[200];
};

/* The NIC's adapter (or a GPU's) model and PCI ids, as a row names parts. */
static bool names_pci(const struct topo_ref *row, const char *model, unsigned vendor,
                      unsigned device)
{
    char ids[16];
    snprintf(ids, sizeof(ids), "%04x:%04x", vendor & 0xffff, device & 0xffff);
    return topo_ref_names(row, model) || (vendor && topo_ref_names(row, ids));
}

static bool names_nic(const struct topo_ref *row, const struct topo_model *topo, int nic)
{
    if (!topo || nic < 0 || topo->nics[nic].adapter < 0 ||
        topo->nics[nic].adapter >= topo->nadapters)
        return false;
    const struct topo_adapter *a = &topo->adapters[topo->nics[nic].adapter];
    return names_pci(row, a->model, a->vendor_id, a->device_id);
}

static bool names_gpu(const struct topo_ref *row, const struct topo_model *topo, int g)
{
    if (!topo || g < 0 || g >= topo->ngpus)
        return false;
    const struct topo_gpu *gpu = &topo->gpus[g];
    int pci = gpu->pci;
    bool have_pci = pci >= 0 && pci < topo->npci;
    return names_pci(row, gpu->model, have_pci ? topo->pci[pci].vendor_id : 0,
                     have_pci ? topo->pci[pci].device_id : 0);
}

/* The NIC port the flow ran on (its conditions' port, else the first), or -1. */
static int port_of(const struct topo_model *topo, int nic, const struct results_flow *f)
{
    int num = f->cond.have_port ? f->cond.port : 1;
    for (int k = 0; nic >= 0 && k < topo->nics[nic].nports; k++)
        if (topo->ports[topo->nics[nic].first_port + k].num == num)
            return topo->nics[nic].first_port + k;
    return -1;
}

static double largest_size(const struct results_flow *f)
{
    double best = 0, s;
    for (int k = 0; k < f->npoints; k++)
        if (results_num_get(&f->points[k].size_bytes, &s) && s > best)
            best = s;
    return best;
}

static void size_str(double b, char *buf, size_t len)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (b >= 1024 && i < 4 && fmod(b, 1024) == 0) {
        b /= 1024;
        i++;
    }
    snprintf(buf, len, "%g %s", b, u[i]);
}

/* The row's min_bytes against the flow's largest size: a condition the run does not meet. */
static void check_size(const struct topo_ref *row, double size, struct ref_fig *out)
{
    if (row->match.min_bytes > 0 && size < row->match.min_bytes) {
        char have[32], want[32];
        size_str(size, have, sizeof(have));
        size_str(row->match.min_bytes, want, sizeof(want));
        snprintf(out->differs, sizeof(out->differs),
                 "largest size %s; the row's figure holds from %s", have, want);
    }
}

/* The row's memory against the flow's buffers (verbs conditions.memory: "host" or "GPU
 * (dma-buf)"). */
static void check_memory(const struct topo_ref *row, const struct results_flow *f,
                         struct ref_fig *out)
{
    const char *want = row->match.memory, *have = f->cond.memory;
    if (!want[0] || out->differs[0])
        return;
    bool gpu = have && !strncmp(have, "GPU", 3);
    if (!have || gpu != !strcmp(want, "gpu"))
        snprintf(out->differs, sizeof(out->differs), "buffers in %s memory; the row's in %s",
                 have ? (gpu ? "GPU" : "host") : "unrecorded",
                 strcmp(want, "gpu") ? "host" : "GPU");
}

/* port_rate, rdma_write_bw: a bandwidth flow's goodput on a NIC the row names (rdma_write_bw:
 * a verbs WRITE stream on a port at the row's rate). */
static bool fig_nic(const struct topo_ref *row, const struct results_flow *f,
                    const struct topo_model *topo, struct ref_fig *out)
{
    double best = judge_flow_best_goodput(f);
    int nic = judge_flow_nic(topo, f);
    if (best < 0 || !names_nic(row, topo, nic))
        return false;
    if (!strcmp(row->metric, "rdma_write_bw")) {
        const char *t = results_str_get(&f->transport), *op = results_str_get(&f->op);
        const char *verb = jsonutil_str(f->conditions, "verb");
        int port = port_of(topo, nic, f);
        if (!t || strcmp(t, "verbs") || !op || strcmp(op, "stream") || !verb ||
            strcmp(verb, "write") || port < 0 || !(topo->ports[port].valid & TOPO_PORT_V_RATE) ||
            fabs(topo->ports[port].rate_gbps - row->match.port_gbps) > 0.5)
            return false;
        check_size(row, largest_size(f), out);
        check_memory(row, f, out);
    }
    out->gbps = best;
    snprintf(out->what, sizeof(out->what), "goodput");
    return true;
}

/* A PCIe link row ("PCIe Gen5 x16"): the flow's narrowest ceiling term is such a link. */
static bool fig_pcie_link(const struct topo_ref *row, const struct results_flow *f,
                          struct ref_fig *out)
{
    double best = judge_flow_best_goodput(f), n;
    if (best < 0 || strncmp(row->part, "PCIe ", 5) || f->ceiling.st != RESULTS_SET ||
        !results_num_get(&f->ceiling.gbps, &n))
        return false;
    const char *gen = row->part + 5; /* "Gen5 x16" */
    const char *by = results_str_get(&f->ceiling.narrowest);
    for (int i = 0; by && i < f->ceiling.nterms; i++) {
        const struct results_ceil_term *t = &f->ceiling.terms[i];
        const char *name = results_str_get(&t->name), *d = results_str_get(&t->detail);
        if (name && !strcmp(name, by) && d && strstr(d, gen)) {
            const char *after = strstr(d, gen) + strlen(gen);
            if (*after >= '0' && *after <= '9') /* "x16", not "x1" of "x16" */
                return false;
            out->gbps = best;
            snprintf(out->what, sizeof(out->what), "goodput");
            return true;
        }
    }
    return false;
}

/* Host<->GPU copies on GPUs the row names, per GPU in one direction (dir "h2d" or "d2h"):
 * the flow's GB/s of that direction (all lanes together) over its GPUs. */
static bool fig_copy(const struct topo_ref *row, const struct results_flow *f,
                     const struct topo_model *topo, const char *dir, struct ref_fig *out)
{
    const char *t = results_str_get(&f->transport), *op = results_str_get(&f->op);
    int gpus[64];
    int n = t && op && !strcmp(t, "nccl") && !strcmp(op, "copy")
                ? results_copy_gpus(f, topo, gpus, 64)
                : -1;
    if (n <= 0)
        return false;
    for (int i = 0; i < n; i++)
        if (!names_gpu(row, topo, gpus[i]))
            return false;
    char key[16];
    snprintf(key, sizeof(key), "%s_GBps", dir);
    double best = -1, size = 0, v, s;
    for (int k = 0; k < f->npoints; k++) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(f->points[k].figures, "copy");
        if (jsonutil_num(c, key, &v) && v > 0 && v > best) {
            best = v;
            size = results_num_get(&f->points[k].size_bytes, &s) ? s : 0;
        }
    }
    if (best < 0)
        return false;
    out->gbps = best / n * 8;
    snprintf(out->what, sizeof(out->what), "%s per GPU (%d GPU%s)", dir, n, n == 1 ? "" : "s");
    check_size(row, size, out);
    return true;
}

/* An NCCL collective on GPUs the row names: its busbw at its largest size (nccl-tests'
 * busbw, GB/s; docs/serving.md). nccl_all_reduce_busbw: an all_reduce of the row's rank count
 * and algorithm. */
static bool fig_collective(const struct topo_ref *row, const struct results_flow *f,
                           const struct topo_model *topo, struct ref_fig *out)
{
    const char *t = results_str_get(&f->transport), *op = results_str_get(&f->op);
    const cJSON *nc = cJSON_GetObjectItemCaseSensitive(f->conditions, "nccl");
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(nc, "local_ranks"), *r;
    if (!t || !op || strcmp(t, "nccl") || strcmp(op, "collective") || !cJSON_IsArray(ranks) ||
        cJSON_GetArraySize(ranks) == 0)
        return false;
    cJSON_ArrayForEach(r, ranks)
    {
        double dev = -1;
        jsonutil_num(r, "cuda_device", &dev);
        if (!names_gpu(row, topo, results_gpu_find(topo, jsonutil_str(r, "pci_bus_id"), (int)dev)))
            return false;
    }
    const struct results_point *at = NULL;
    double size = -1, s;
    for (int k = 0; k < f->npoints; k++)
        if (results_num_get(&f->points[k].size_bytes, &s) && s > size &&
            cJSON_GetObjectItemCaseSensitive(f->points[k].figures, "nccl")) {
            size = s;
            at = &f->points[k];
        }
    const cJSON *fig = at ? cJSON_GetObjectItemCaseSensitive(at->figures, "nccl") : NULL;
    double busbw, nranks = 0;
    if (!jsonutil_num(fig, "busbw_GBps", &busbw) || !(busbw > 0))
        return false;
    if (!strcmp(row->metric, "nccl_all_reduce_busbw")) {
        const char *coll = jsonutil_str(nc, "collective"), *algo = jsonutil_str(fig, "algo");
        jsonutil_num(nc, "nranks", &nranks);
        if (!coll || strcmp(coll, "all_reduce") ||
            (row->match.gpus && (int)nranks != row->match.gpus) ||
            (row->match.algo[0] && (!algo || strcasecmp(algo, row->match.algo))))
            return false;
        check_size(row, size, out);
    }
    char sz[32];
    size_str(size, sz, sizeof(sz));
    out->gbps = busbw * 8;
    snprintf(out->what, sizeof(out->what), "busbw at %s", sz);
    return true;
}

static struct results_ref_match *add_match(struct results_ref_matches *out, int *cap)
{
    if (out->n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        out->v = xalloc_resize(out->v, (size_t)*cap * sizeof(*out->v));
    }
    struct results_ref_match *m = &out->v[out->n++];
    memset(m, 0, sizeof(*m));
    return m;
}

static void fill(struct results_ref_match *m, const struct topo_ref *row,
                 const struct results_flow *f, const struct results_phase *ph,
                 const struct ref_fig *fg)
{
    results_str_set(&m->flow, results_str_get(&f->name));
    results_str_set(&m->phase, results_str_get(&ph->name));
    results_str_set(&m->id, row->id);
    results_str_set(&m->part, row->part);
    results_str_set(&m->metric, row->metric);
    results_str_set(&m->kind, topo_ref_kind_str(row->kind));
    results_str_set(&m->unit, row->unit);
    results_str_set(&m->direction, row->direction);
    results_str_set(&m->conditions, row->conditions);
    results_str_set(&m->figure, fg->what);
    results_num_set(&m->value, true, row->value);
    double one = topo_ref_gbps_one_way(row);
    results_num_set(&m->measured, true, fg->gbps / (!strcmp(row->unit, "GB/s") ? 8 : 1));
    results_num_set(&m->percent, one > 0, one > 0 ? 100 * fg->gbps / one : 0);
    if (row->has_tolerance) {
        results_num_set(&m->tolerance_pct, true, row->tolerance_pct);
        results_str_set(&m->tolerance_basis, row->tolerance_basis);
    }
    int others = 0;
    for (int k = 0; k < ph->nflows; k++)
        others += &ph->flows[k] != f;
    char alone[200] = "";
    if (row->kind != TOPO_REF_PEAK && others > 0)
        snprintf(alone, sizeof(alone),
                 "ran beside %d other flow%s in phase %s; the row's figure is measured alone",
                 others, others == 1 ? "" : "s", results_str_get(&ph->name) ?: "?");
    if (fg->differs[0] || alone[0])
        results_str_set(&m->differs, fg->differs[0] ? fg->differs : alone);
    else if (row->kind == TOPO_REF_PASS_LINE)
        /* A small slack for the rounding of figures printed to two decimals. */
        results_str_set(&m->verdict,
                        fg->gbps >= one * (1 - row->tolerance_pct / 100) - 1e-9 ? "pass" : "below");
    results_str_set(&m->document, row->document);
    if (row->url[0])
        results_str_set(&m->url, row->url);
}

void judge_refs(const struct results_run *run, const struct topo_model *topo,
                const struct topo_refs *refs, struct results_ref_matches *out)
{
    results_ref_matches_clear(out);
    out->st = RESULTS_SET;
    int cap = 0;
    for (int p = 0; refs && p < run->nphases; p++)
        for (int i = 0; i < run->phases[p].nflows; i++) {
            const struct results_flow *f = &run->phases[p].flows[i];
            for (int r = 0; r < refs->n; r++) {
                const struct topo_ref *row = &refs->rows[r];
                const char *m = row->metric;
                bool gpu_row = row->match.nmodels + row->match.npci_ids > 0;
                if (!strcmp(m, "host_copy_bw") || (!strcmp(m, "pcie_link_bw") && gpu_row)) {
                    for (int d = 0; d < 2; d++) {
                        struct ref_fig fg = {0};
                        if (fig_copy(row, f, topo, d ? "d2h" : "h2d", &fg))
                            fill(add_match(out, &cap), row, f, &run->phases[p], &fg);
                    }
                    continue;
                }
                struct ref_fig fg = {0};
                bool hit = !strcmp(m, "pcie_link_bw") ? fig_pcie_link(row, f, &fg)
                           : !strcmp(m, "nvlink_bw") || !strcmp(m, "nccl_all_reduce_busbw")
                               ? fig_collective(row, f, topo, &fg)
                               : fig_nic(row, f, topo, &fg);
                if (hit)
                    fill(add_match(out, &cap), row, f, &run->phases[p], &fg);
            }
        }
}
