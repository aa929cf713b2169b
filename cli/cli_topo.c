/* cli_topo: `fabtop topo`: the node's GPU / NIC / port tree, the affinity matrix, the
 * bring-up lint, the JSON snapshot, and with --fabric the switches, links, routes and
 * Ethernet neighbours beyond the node's ports. */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "topology/topo_affinity.h"
#include "topology/topo_cabling.h"
#include "topology/topo_ibfabric.h"
#include "topology/topo_json.h"
#include "topology/topo_lint.h"
#include "topology/topo_load.h"
#include "topology/topo_lldp.h"
#include "text/fabric_text.h"
#include "text/topo_text.h"

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
               "\n"
               "Fabric (switches, links and neighbours beyond the ports; live system):\n"
               "  --fabric            discover the InfiniBand subnet behind each IB port (needs\n"
               "                      root or /dev/infiniband/umad* access) and ask lldpd for\n"
               "                      each netdev's Ethernet neighbour; with --input, show the\n"
               "                      snapshot's fabric\n"
               "  --ca NAME[:PORT]    discover from this CA (and port) only\n"
               "  --route SRC,DST     walk this route through the forwarding tables (LID, GUID\n"
               "                      or node description; repeatable; default: from each\n"
               "                      local port to every other CA, up to 32)\n"
               "  --mad-timeout MS    per-MAD timeout (default 200) and --mad-retries N (1)\n"
               "  --lldp-socket PATH  lldpd's control socket (lldpd -u; default lldpd's own)\n"
               "  --cabling FILE      lint: compare the cabling with a plan (ibnetdiscover\n"
               "                      format, or JSON [{node, port, switch, switch_port}])\n"
               "  --expect-link-layer ib|ethernet\n"
               "                      lint: the fabric's link layer, to explain ports stuck in\n"
               "                      Polling on the other one\n"
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
    static const struct option opts[] = {{"matrix", no_argument, NULL, 'm'},
                                         {"lint", no_argument, NULL, 'l'},
                                         {"window", required_argument, NULL, 'w'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"input", required_argument, NULL, 'i'},
                                         {"sysfs-root", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"version", no_argument, NULL, 'V'},
                                         {"fabric", no_argument, NULL, 'F'},
                                         {"ca", required_argument, NULL, 'C'},
                                         {"route", required_argument, NULL, 'R'},
                                         {"mad-timeout", required_argument, NULL, 'T'},
                                         {"mad-retries", required_argument, NULL, 'r'},
                                         {"lldp-socket", required_argument, NULL, 'L'},
                                         {"cabling", required_argument, NULL, 'P'},
                                         {"expect-link-layer", required_argument, NULL, 'E'},
                                         {NULL, 0, NULL, 0}};
    static const char shortopts[] = "o:hV";
    bool matrix = false, lint = false, json = false;
    double window = -1;
    const char *out = NULL;
    struct topo_load_opts lo = {0};
    bool fabric = false;
    char ca[64] = "";
    const char **routes = NULL;
    int nroutes = 0;
    struct topo_ibfabric_opts io = {.retries = -1};
    struct topo_lldp_opts ldo = {0};
    const char *cabling_path = NULL;
    enum topo_link_layer expect_ll = TOPO_LL_UNKNOWN;
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
        case 'F':
            fabric = true;
            break;
        case 'C': {
            snprintf(ca, sizeof(ca), "%s", optarg);
            char *colon = strchr(ca, ':');
            if (colon) {
                char *end;
                long port = strtol(colon + 1, &end, 10);
                if (*end || port < 1 || port > 254) {
                    free(routes);
                    return cli_usage_error("topo", "--ca takes NAME or NAME:PORT, not '%s'",
                                           optarg);
                }
                *colon = 0;
                io.ca_port = (int)port;
            }
            io.ca = ca;
            break;
        }
        case 'R': {
            const char *comma = strchr(optarg, ',');
            if (!comma || comma == optarg || !comma[1]) {
                free(routes);
                return cli_usage_error("topo",
                                       "--route takes SRC,DST (each a LID, a GUID or a node "
                                       "description), not '%s'",
                                       optarg);
            }
            routes = xalloc_resize(routes, (size_t)(nroutes + 1) * sizeof(*routes));
            routes[nroutes++] = optarg;
            break;
        }
        case 'T':
        case 'r': {
            char *end;
            long v = strtol(optarg, &end, 10);
            long lo_v = c == 'T' ? 1 : 0, hi_v = c == 'T' ? 60000 : 20;
            if (*end || v < lo_v || v > hi_v) {
                free(routes);
                return cli_usage_error("topo", "%s takes %ld to %ld, not '%s'",
                                       c == 'T' ? "--mad-timeout" : "--mad-retries", lo_v, hi_v,
                                       optarg);
            }
            if (c == 'T')
                io.timeout_ms = (int)v;
            else
                io.retries = (int)v;
            break;
        }
        case 'L':
            ldo.socket = optarg;
            break;
        case 'P':
            cabling_path = optarg;
            lint = true;
            break;
        case 'E':
            if (!strcasecmp(optarg, "ib") || !strcasecmp(optarg, "infiniband"))
                expect_ll = TOPO_LL_INFINIBAND;
            else if (!strcasecmp(optarg, "eth") || !strcasecmp(optarg, "ethernet") ||
                     !strcasecmp(optarg, "roce"))
                expect_ll = TOPO_LL_ETHERNET;
            else {
                free(routes);
                return cli_usage_error("topo", "--expect-link-layer takes ib or ethernet, not '%s'",
                                       optarg);
            }
            lint = true;
            break;
        case 'h':
            usage(stdout);
            return CLI_OK;
        case 'V':
            cli_print_version();
            return CLI_OK;
        default:
            free(routes);
            return cli_bad_option("topo", argv, shortopts);
        }
    }
    if (optind < argc) {
        free(routes);
        return cli_usage_error("topo", "unexpected argument '%s'", argv[optind]);
    }
    if (lo.input && lo.sysfs_root) {
        free(routes);
        return cli_usage_error("topo", "--input and --sysfs-root are exclusive");
    }
    /* Discovery can take a while (fabric MADs, error windows): know first that -o works. */
    if (out && cli_check_output(out) != CLI_OK) {
        free(routes);
        return CLI_CANTCREAT;
    }

    struct ft_err err = {0};
    struct topo_cabling *plan = NULL;
    if (cabling_path && topo_cabling_load(cabling_path, &plan, &err) < 0) {
        free(routes);
        return cli_fail(&err);
    }
    struct topo_model *m;
    if (cli_topo_load(&lo, &m, &err) < 0) {
        free(routes);
        topo_cabling_free(plan);
        return cli_fail(&err);
    }
    /* Fabric discovery runs only when asked: umad needs root and one MAD round trip per
     * port, too slow and too privileged for every load. A file keeps its saved fabric. */
    if (fabric && !lo.input && !lo.sysfs_root) {
        io.routes = routes;
        io.nroutes = nroutes;
        io.window_s = window >= 0 ? window : 1;
        if (topo_ibfabric_discover(m, &io, &err) < 0) {
            free(routes);
            topo_cabling_free(plan);
            topo_model_free(m);
            return cli_usage_error("topo", "%s", err.msg);
        }
        topo_lldp_discover(m, &ldo, &err);
    }
    free(routes);

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
        struct topo_lint_opts lopts = {
            .errs = root ? &errs : NULL, .expect_ll = expect_ll, .cabling = plan};
        topo_lint_run(m, &lopts, &findings);
    }

    int rc = CLI_OK;
    if (json || out) {
        cJSON *doc = topo_json_from_model(m);
        cJSON_AddItemToObject(doc, "affinity", topo_json_affinity(m, &aff));
        cJSON_AddItemToObject(doc, "lint", topo_json_findings(&findings));
        rc = cli_emit_json(doc, json, out, "topo");
        cJSON_Delete(doc);
    }
    if (!json && rc == CLI_OK) {
        struct strbuf sb;
        strbuf_init(&sb);
        topo_text_header(&sb, m);
        strbuf_add(&sb, "\n");
        if (!matrix && !lint)
            topo_text_tree(&sb, m);
        if (fabric) {
            if (!matrix && !lint)
                strbuf_add(&sb, "\n");
            fabric_text(&sb, m);
        }
        if (matrix) {
            if (fabric)
                strbuf_add(&sb, "\n");
            topo_text_matrix(&sb, m, &aff);
        }
        if (lint) {
            if (matrix || fabric)
                strbuf_add(&sb, "\n");
            topo_text_findings(&sb, &findings);
        }
        if (out)
            strbuf_printf(&sb, "\nSaved the JSON snapshot to %s\n", out);
        fputs(sb.s, stdout);
        strbuf_free(&sb);
    }
    if (rc == CLI_OK && lint) {
        int worst = topo_findings_worst(&findings);
        rc = worst == TOPO_SEV_ERROR ? CLI_FAILED : worst == TOPO_SEV_WARN ? CLI_THRESHOLDS : 0;
    }
    topo_err_samples_free(&errs);
    topo_findings_free(&findings);
    topo_affinity_free(&aff);
    topo_model_free(m);
    topo_cabling_free(plan);
    return rc;
}
