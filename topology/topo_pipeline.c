/* topo_pipeline: load -> fabric -> affinity -> samples -> lint, in one place. */
#include "topology/topo_pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topology/topo_xmlchild.h"

const char *topo_pipeline_xml_helper(void)
{
    static char path[4096];
    const char *env = getenv("FABTOP_XML_HELPER");
    if (env && env[0])
        return env;
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    if (n > 0) {
        path[n] = '\0';
        char *slash = strrchr(path, '/');
        if (slash && (size_t)(slash - path) + sizeof("/" TOPO_XMLCHILD_NAME) <= sizeof(path)) {
            strcpy(slash + 1, TOPO_XMLCHILD_NAME);
            if (access(path, X_OK) == 0)
                return path;
        }
    }
    snprintf(path, sizeof(path), "%s/%s", FABTOP_LIBEXEC_DIR, TOPO_XMLCHILD_NAME);
    if (access(path, X_OK) == 0)
        return path;
    return NULL;
}

static bool live(const struct topo_load_opts *lo)
{
    return !lo->input && !lo->sysfs_root;
}

int topo_pipeline_load(const struct topo_pipeline_opts *o, struct topo_pipeline *p,
                       struct ft_err *err)
{
    memset(p, 0, sizeof(*p));
    struct topo_load_opts lo = o->load;
    if (!lo.xml_helper)
        lo.xml_helper = topo_pipeline_xml_helper();
    int rc = topo_load(&lo, &p->m, err);
    if (rc < 0) {
        p->failed = TOPO_PIPE_LOAD;
        return rc;
    }
    if (!lo.xml_helper && p->m->source == TOPO_SRC_XML)
        topo_model_note(p->m, "the XML was parsed inside fabtop: the " TOPO_XMLCHILD_NAME
                              " helper is not beside the fabtop binary nor in " FABTOP_LIBEXEC_DIR
                              ", so a malformed file could crash fabtop");
    /* Fabric discovery runs only when asked: umad needs root and one MAD round trip per
     * port, too slow and too privileged for every load. A file keeps its saved fabric. */
    if (o->ib && live(&o->load)) {
        if ((rc = topo_ibfabric_discover(p->m, o->ib, err)) < 0) {
            topo_model_free(p->m);
            p->m = NULL;
            p->failed = TOPO_PIPE_FABRIC;
            return rc;
        }
        struct topo_lldp_opts ldo = o->lldp ? *o->lldp : (struct topo_lldp_opts){0};
        struct ft_err lerr = {0}; /* what lldpd says becomes the model's notes */
        topo_lldp_discover(p->m, &ldo, &lerr);
    }
    return 0;
}

/* Sample error counters twice, a window apart, for the lint's counter rules. */
static void sample_errors(const struct topo_model *m, const char *root, double window,
                          struct topo_err_samples *s)
{
    topo_lint_sample(m, root, false, s);
    if (window > 0 && s->n > 0) {
        struct timespec ts = {(time_t)window, (long)((window - (time_t)window) * 1e9)};
        nanosleep(&ts, NULL);
    }
    topo_lint_sample(m, root, true, s);
    s->window_s = window;
}

void topo_pipeline_analyse(const struct topo_pipeline_opts *o, struct topo_pipeline *p)
{
    topo_affinity_compute(p->m, &p->aff);
    if (!o->lint)
        return;
    /* Counters exist only on a live system or a captured tree; a file has none. */
    const struct topo_load_opts *lo = &o->load;
    const char *root = lo->sysfs_root ? lo->sysfs_root : (lo->input ? NULL : "/");
    bool sampled = o->sample_errors && root;
    if (sampled) {
        p->window = o->window >= 0 ? o->window : lo->sysfs_root ? 0 : 1;
        sample_errors(p->m, root, p->window, &p->errs);
    }
    struct topo_lint_opts lopts = {
        .errs = sampled ? &p->errs : NULL, .expect_ll = o->expect_ll, .cabling = o->cabling};
    topo_lint_run(p->m, &lopts, &p->findings);
}

int topo_pipeline_run(const struct topo_pipeline_opts *o, struct topo_pipeline *p,
                      struct ft_err *err)
{
    int rc = topo_pipeline_load(o, p, err);
    if (rc == 0)
        topo_pipeline_analyse(o, p);
    return rc;
}

void topo_pipeline_free(struct topo_pipeline *p)
{
    topo_err_samples_free(&p->errs);
    topo_findings_free(&p->findings);
    if (p->m)
        topo_affinity_free(&p->aff);
    topo_model_free(p->m);
    memset(p, 0, sizeof(*p));
}
