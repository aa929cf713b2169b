/* topo_findings: the findings lint appends and the front end reads. */
#include "topology/topo_findings.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

struct topo_finding *topo_findings_add(struct topo_findings *out, const char *rule,
                                       enum topo_sev sev, int pci, int port)
{
    if (out->n == out->cap) {
        out->cap = out->cap ? 2 * out->cap : 16;
        out->v = xalloc_resize(out->v, (size_t)out->cap * sizeof(*out->v));
    }
    struct topo_finding *f = &out->v[out->n++];
    memset(f, 0, sizeof(*f));
    f->rule = rule;
    f->sev = sev;
    f->pci = pci;
    f->port = port;
    return f;
}

static int sev_cmp(const void *a, const void *b)
{
    const struct topo_finding *x = a, *y = b;
    return (int)y->sev - (int)x->sev;
}

/* Insertion sort: stable, and n is small. */
void topo_findings_sort(struct topo_findings *out)
{
    for (int i = 1; i < out->n; i++) {
        struct topo_finding t = out->v[i];
        int j = i;
        while (j > 0 && sev_cmp(&out->v[j - 1], &t) > 0) {
            out->v[j] = out->v[j - 1];
            j--;
        }
        out->v[j] = t;
    }
}

void topo_findings_free(struct topo_findings *f)
{
    free(f->v);
    memset(f, 0, sizeof(*f));
}

int topo_findings_worst(const struct topo_findings *f)
{
    int worst = -1;
    for (int i = 0; i < f->n; i++)
        if (f->v[i].sev > TOPO_SEV_INFO && (int)f->v[i].sev > worst)
            worst = (int)f->v[i].sev;
    return worst;
}
