/* topo_sysfs: sysfs enrichment (being written; see topo_enrich.h for its contract). */
#include "topology/topo_enrich.h"

static bool applies(const struct topo_model *m, const struct topo_load_opts *o)
{
    (void)m;
    (void)o;
    return false;
}

static void enrich(struct topo_model *m, const struct topo_load_opts *o)
{
    (void)m;
    (void)o;
}

const struct topo_enricher topo_enrich_sysfs = {"sysfs", applies, enrich};
