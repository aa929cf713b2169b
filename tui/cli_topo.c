/* cli_topo: `fabtop topo`: the node's GPU / NIC / port tree, the affinity matrix, the
 * bring-up lint, and the JSON snapshot. */
#include "tui/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/strbuf.h"
#include "topology/topo_affinity.h"
#include "topology/topo_json.h"
#include "topology/topo_lint.h"
#include "topology/topo_load.h"
#include "tui/topo_text.h"

static void usage(FILE *f)
{
    fprintf(f, "Usage: fabtop topo [OPTIONS]\n"
               "Show how this node's GPUs, NICs, NUMA nodes and PCIe switches hang together.\n"
               "\n"
               "  --matrix            GPU x GPU x NIC affinity matrix (nvidia-smi topo -m words)\n"
               "  --lint              bring-up checks; exit 0 clean, 1 warnings, 2 errors\n"
               "  --window SEC        lint: seconds between two error-counter samples\n"
               "                      (default 1 on a live system, 0 disables)\n"
               "  --json              print everything as one JSON document on stdout\n"
               "  -o, --output FILE   also save the JSON snapshot to FILE (atomically)\n"
               "  --input FILE        load an hwloc XML (v1 or v2) or a saved fabtop snapshot\n"
               "  --sysfs-root DIR    read a captured /sys and /proc tree instead of the live one\n"
               "  -h, --help          this help\n"
               "  -V, --version       print the version\n"
               "\n"
               "Exit status: 0 ok, 1 lint warnings, 2 lint errors, 64 usage, 65 bad input data,\n"
               "66 missing input, 69 unavailable, 77 no permission.\n");
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

int cli_topo_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"matrix", no_argument, NULL, 'm'},           {"lint", no_argument, NULL, 'l'},
        {"window", required_argument, NULL, 'w'},     {"json", no_argument, NULL, 'j'},
        {"output", required_argument, NULL, 'o'},     {"input", required_argument, NULL, 'i'},
        {"sysfs-root", required_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},          {NULL, 0, NULL, 0}};
    static const char shortopts[] = "o:hV";
    bool matrix = false, lint = false, json = false;
    double window = -1;
    const char *out = NULL;
    struct topo_load_opts lo = {0};
    int c;
    optind = 1;
    opterr = 0; /* report bad options ourselves, in one line */
    while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            matrix = true;
            break;
        case 'l':
            lint = true;
            break;
        case 'w': {
            char *end;
            window = strtod(optarg, &end);
            if (*end || window < 0 || window > 3600)
                return cli_usage_error("topo", "--window takes seconds from 0 to 3600, not '%s'",
                                       optarg);
            break;
        }
        case 'j':
            json = true;
            break;
        case 'o':
            out = optarg;
            break;
        case 'i':
            lo.input = optarg;
            break;
        case 's':
            lo.sysfs_root = optarg;
            break;
        case 'h':
            usage(stdout);
            return CLI_OK;
        case 'V':
            cli_print_version();
            return CLI_OK;
        default:
            return cli_bad_option("topo", argv, shortopts);
        }
    }
    if (optind < argc)
        return cli_usage_error("topo", "unexpected argument '%s'", argv[optind]);
    if (lo.input && lo.sysfs_root)
        return cli_usage_error("topo", "--input and --sysfs-root are exclusive");

    struct ft_err err = {0};
    struct topo_model *m;
    if (topo_load(&lo, &m, &err) < 0)
        return cli_fail(&err);

    struct topo_affinity aff;
    topo_affinity_compute(m, &aff);
    struct topo_findings findings = {0};
    struct topo_err_samples errs = {0};
    /* Counters exist only on a live system or a captured tree; a file has none. */
    const char *root = lo.sysfs_root ? lo.sysfs_root : (lo.input ? NULL : "/");
    if (lint || json || out) {
        if (root) {
            if (window < 0)
                window = lo.sysfs_root ? 0 : 1;
            sample_errors(m, root, lint ? window : 0, &errs);
        }
        struct topo_lint_opts lopts = {.errs = root ? &errs : NULL};
        topo_lint_run(m, &lopts, &findings);
    }

    int rc = CLI_OK;
    if (json || out) {
        cJSON *doc = topo_json_from_model(m);
        cJSON_AddItemToObject(doc, "affinity", topo_json_affinity(m, &aff));
        cJSON_AddItemToObject(doc, "lint", topo_json_findings(&findings));
        rc = cli_emit_json(doc, json, out);
        cJSON_Delete(doc);
    }
    if (!json && rc == CLI_OK) {
        struct strbuf sb;
        sb_init(&sb);
        topo_text_header(&sb, m);
        sb_add(&sb, "\n");
        if (!matrix && !lint)
            topo_text_tree(&sb, m);
        if (matrix)
            topo_text_matrix(&sb, m, &aff);
        if (lint) {
            if (matrix)
                sb_add(&sb, "\n");
            topo_text_findings(&sb, &findings);
        }
        if (out)
            sb_printf(&sb, "\nSaved the JSON snapshot to %s\n", out);
        fputs(sb.s, stdout);
        sb_free(&sb);
    }
    if (rc == CLI_OK && lint) {
        int worst = topo_findings_worst(&findings);
        rc = worst == TOPO_SEV_ERROR ? CLI_FAILED : worst == TOPO_SEV_WARN ? CLI_THRESHOLDS : 0;
    }
    topo_err_samples_free(&errs);
    topo_findings_free(&findings);
    topo_affinity_free(&aff);
    topo_model_free(m);
    return rc;
}
