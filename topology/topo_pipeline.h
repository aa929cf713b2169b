/* topo_pipeline: the one way a front end gets a node's topology: load (with the XML helper)
 * -> fabric discovery when asked -> affinity -> error-counter samples -> lint. Shared by
 * `fabtop topo` and the explorer, so both show the same model and the same findings. */
#ifndef TOPO_PIPELINE_H
#define TOPO_PIPELINE_H

#include <stdbool.h>

#include "common/ft_err.h"
#include "topology/topo_affinity.h"
#include "topology/topo_ibfabric.h"
#include "topology/topo_lint.h"
#include "topology/topo_load.h"
#include "topology/topo_lldp.h"

struct topo_pipeline_opts {
    /* What to load; load.xml_helper NULL: topo_pipeline_xml_helper() (then, with none
     * there, the XML is parsed in this process and the model gets a note saying so). */
    struct topo_load_opts load;
    /* Fabric discovery (InfiniBand subnet, LLDP neighbours) on a live system; NULL: none. */
    const struct topo_ibfabric_opts *ib;
    const struct topo_lldp_opts *lldp;
    bool lint;          /* run the lint rules */
    bool sample_errors; /* with lint: sample error counters (live system or sysfs root) */
    double window;      /* seconds between the two samples; < 0: 1 live, 0 on a sysfs root */
    enum topo_link_layer expect_ll;
    const struct topo_cabling *cabling; /* lint: a cabling plan; NULL: none */
};

/* Where a run of the pipeline stopped. */
enum topo_pipeline_stage { TOPO_PIPE_OK, TOPO_PIPE_LOAD, TOPO_PIPE_FABRIC };

struct topo_pipeline {
    struct topo_model *m; /* NULL until loaded */
    struct topo_affinity aff;
    struct topo_findings findings;
    struct topo_err_samples errs;
    double window; /* the counter window used (seconds; 0 when not sampled) */
    enum topo_pipeline_stage failed;
};

/* The fabtop-hwloc-xml helper: $FABTOP_XML_HELPER, else beside the running binary (the
 * build tree), else in the installed libexec directory; NULL when none is there. */
const char *topo_pipeline_xml_helper(void);

/* Load (and discover the fabric when o->ib): 0, or -errno with err set, p->failed naming
 * the stage (a bad --route is TOPO_PIPE_FABRIC with -EINVAL) and p->m NULL. */
int topo_pipeline_load(const struct topo_pipeline_opts *o, struct topo_pipeline *p,
                       struct ft_err *err);
/* On a loaded p->m (or one the caller set, e.g. an empty model after a failed load):
 * affinity, then the counter samples and the lint per o. Never fails. */
void topo_pipeline_analyse(const struct topo_pipeline_opts *o, struct topo_pipeline *p);
/* Both. */
int topo_pipeline_run(const struct topo_pipeline_opts *o, struct topo_pipeline *p,
                      struct ft_err *err);
/* Free everything in p (the model too) and zero it. */
void topo_pipeline_free(struct topo_pipeline *p);

#endif
