/* topo_lint: the bring-up checklist (rules being written; see topo_lint.h). */
#include "topology/topo_lint.h"

#include <stdlib.h>
#include <string.h>

const struct topo_lint_rule topo_lint_rules[] = {{NULL, NULL}};
const int topo_lint_nrules = 0;

void topo_lint_run(const struct topo_model *m, const struct topo_lint_opts *o,
                   struct topo_findings *out)
{
    (void)m;
    (void)o;
    (void)out;
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

int topo_lint_sample(const struct topo_model *m, const char *root, bool second,
                     struct topo_err_samples *s)
{
    (void)m;
    (void)root;
    (void)second;
    (void)s;
    return 0;
}

void topo_err_samples_free(struct topo_err_samples *s)
{
    free(s->v);
    memset(s, 0, sizeof(*s));
}

const char *topo_sev_str(enum topo_sev s)
{
    return s == TOPO_SEV_ERROR ? "error" : s == TOPO_SEV_WARN ? "warning" : "info";
}
