/* cli_topo: `fabtop topo`: the node's GPU / NIC / port tree, the affinity matrix, the
 * bring-up lint, the JSON snapshot, and with --fabric the switches, links, routes and
 * Ethernet neighbours beyond the node's ports. */
#include "cli/cli.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "common/strbuf.h"
#include "topology/topo_cabling.h"
#include "topology/topo_json.h"
#include "topology/topo_pipeline.h"
#include "text/fabric_text.h"
#include "text/topo_text.h"

/* What the command line sets. */
struct topo_args {
    bool matrix, lint, json, fabric, ceiling;
    double window; /* -1: the default (1 s live, 0 on a captured tree) */
    const char *out, *input, *sysfs_root, *ca, *lldp_socket, *cabling;
    struct cli_list routes;
    long mad_timeout, mad_retries; /* 0 and -1: topo_ibfabric's defaults */
    int expect_ll;
};

/* --ca NAME[:PORT]: the port, when given, is 1 to 254. */
static int parse_ca(const struct cli_opt *o, const char *arg, void *args, struct cli_parse *p)
{
    (void)o;
    (void)p;
    const char *colon = strchr(arg, ':');
    if (colon) {
        char *end;
        long port = strtol(colon + 1, &end, 10);
        if (*end || port < 1 || port > 254)
            return cli_usage_error("topo", "--ca takes NAME or NAME:PORT, not '%s'", arg);
    }
    ((struct topo_args *)args)->ca = arg;
    return 0;
}

/* --route SRC,DST (repeatable): two non-empty ends. */
static int check_route(const struct cli_opt *o, const char *arg, void *args, struct cli_parse *p)
{
    (void)o;
    (void)p;
    (void)args;
    const char *comma = strchr(arg, ',');
    if (!comma || comma == arg || !comma[1])
        return cli_usage_error("topo",
                               "--route takes SRC,DST (each a LID, a GUID or a node "
                               "description), not '%s'",
                               arg);
    return 0;
}

static const struct cli_enum link_layers[] = {
    {"ib", TOPO_LL_INFINIBAND, 0},         {"ethernet", TOPO_LL_ETHERNET, 0},
    {"infiniband", TOPO_LL_INFINIBAND, 1}, {"eth", TOPO_LL_ETHERNET, 1},
    {"roce", TOPO_LL_ETHERNET, 1},         {NULL, 0, 0}};

#define A(f) offsetof(struct topo_args, f)
static const struct cli_opt topo_opts[] = {
    {"matrix", 0, CLI_ARG_NONE, NULL, "GPU x GPU x NIC affinity matrix (nvidia-smi topo -m words)",
     CLI_V_SET, .off = A(matrix)},
    {"ceiling", 0, CLI_ARG_NONE, NULL,
     "each NIC's and GPU's path ceiling with its terms\n(docs/diagnosis.md)", CLI_V_SET,
     .off = A(ceiling)},
    {"lint", 0, CLI_ARG_NONE, NULL, "bring-up checks; exit 0 clean, 1 warnings, 2 errors",
     CLI_V_SET, .off = A(lint)},
    {"window", 0, CLI_ARG_REQUIRED, "SEC",
     "lint: seconds between two error-counter samples\n(default 1 on a live system, 0 disables)",
     CLI_V_NUMBER, .min = 0, .max = 3600, .def = 1,
     .bad = "--window takes seconds from 0 to 3600, not '%s'", .off = A(window)},
    {"json", 0, CLI_ARG_NONE, NULL, "print everything as one JSON document on stdout", CLI_V_SET,
     .off = A(json)},
    {"output", 'o', CLI_ARG_REQUIRED, "FILE", "also save the JSON snapshot to FILE (atomically)",
     CLI_V_STRING, CLI_C_FILE, .off = A(out)},
    {"input", 0, CLI_ARG_REQUIRED, "FILE",
     "load an hwloc XML (v1 or v2) or a saved fabtop snapshot", CLI_V_STRING, CLI_C_FILE,
     .off = A(input)},
    {"sysfs-root", 0, CLI_ARG_REQUIRED, "DIR",
     "read a captured /sys and /proc tree instead of the live one", CLI_V_STRING, CLI_C_DIR,
     .off = A(sysfs_root)},
    CLI_SECTION("Fabric (switches, links and neighbours beyond the ports; live system):"),
    {"fabric", 0, CLI_ARG_NONE, NULL,
     "discover the InfiniBand subnet behind each IB port (needs\nroot or /dev/infiniband/umad* "
     "access) and ask lldpd for\neach netdev's Ethernet neighbour; with --input, show the\n"
     "snapshot's fabric",
     CLI_V_SET, .off = A(fabric)},
    {"ca", 0, CLI_ARG_REQUIRED, "NAME[:PORT]", "discover from this CA (and port) only",
     CLI_V_CUSTOM, .parse = parse_ca},
    {"route", 0, CLI_ARG_REQUIRED, "SRC,DST",
     "walk this route through the forwarding tables (LID, GUID\nor node description; "
     "repeatable; default: from each\nlocal port to every other CA, up to 32)",
     CLI_V_LIST, .off = A(routes), .parse = check_route},
    {"mad-timeout", 0, CLI_ARG_REQUIRED, "MS", "per-MAD timeout in milliseconds (default 200)",
     CLI_V_INTEGER, .min = 1, .max = 60000, .def = 200,
     .bad = "--mad-timeout takes 1 to 60000, not '%s'", .off = A(mad_timeout)},
    {"mad-retries", 0, CLI_ARG_REQUIRED, "N", "MADs sent again after a timeout (default 1)",
     CLI_V_INTEGER, .min = 0, .max = 20, .def = 1, .bad = "--mad-retries takes 0 to 20, not '%s'",
     .off = A(mad_retries)},
    {"lldp-socket", 0, CLI_ARG_REQUIRED, "PATH",
     "lldpd's control socket (lldpd -u; default lldpd's own)", CLI_V_STRING, CLI_C_FILE,
     .off = A(lldp_socket)},
    {"cabling", 0, CLI_ARG_REQUIRED, "FILE",
     "lint: compare the cabling with a plan (ibnetdiscover\nformat, or JSON [{node, port, "
     "switch, switch_port}])",
     CLI_V_STRING, CLI_C_FILE, .off = A(cabling)},
    {"expect-link-layer", 0, CLI_ARG_REQUIRED, "ib|ethernet",
     "lint: the fabric's link layer, to explain ports stuck in\nPolling on the other one",
     CLI_V_ENUM, .values = link_layers, .bad = "--expect-link-layer takes ib or ethernet, not '%s'",
     .off = A(expect_ll)},
};
#undef A

const struct cli_command cli_topo_command = {
    .name = "topo",
    .summary = "GPU / NIC / port topology, affinity matrix and bring-up lint",
    .synopsis = "Usage: fabtop topo [OPTIONS]\n"
                "Show how this node's GPUs, NICs, NUMA nodes and PCIe switches hang together.\n",
    .opts = topo_opts,
    .nopts = sizeof(topo_opts) / sizeof(topo_opts[0]),
    .epilogue = "Exit status: 0 ok, 1 lint warnings, 2 lint errors, 64 usage, 65 bad input data,\n"
                "66 missing input, 69 unavailable, 77 no permission.\n",
    .help_col = 22,
    .main = cli_topo_main,
};

int cli_topo_main(int argc, char **argv)
{
    struct topo_args o = {.window = -1, .mad_retries = -1, .expect_ll = TOPO_LL_UNKNOWN};
    int first, rc = cli_parse_args(&cli_topo_command, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    rc = CLI_OK;
    struct topo_cabling *plan = NULL;
    struct topo_pipeline tp = {0};
    char ca[64] = "";
    struct topo_ibfabric_opts io = {.timeout_ms = (int)o.mad_timeout,
                                    .retries = (int)o.mad_retries,
                                    .routes = o.routes.v,
                                    .nroutes = o.routes.n,
                                    .window_s = o.window >= 0 ? o.window : 1};
    if (o.ca) {
        snprintf(ca, sizeof(ca), "%s", o.ca);
        char *colon = strchr(ca, ':');
        if (colon) {
            *colon = 0;
            io.ca_port = atoi(colon + 1); /* checked by parse_ca */
        }
        io.ca = ca;
    }
    struct topo_lldp_opts ldo = {.socket = o.lldp_socket};
    bool lint = o.lint || o.cabling || o.expect_ll != TOPO_LL_UNKNOWN;
    struct ft_err err = {0};
    if (first < argc) {
        rc = cli_usage_error("topo", "unexpected argument '%s'", argv[first]);
        goto done;
    }
    if (o.input && o.sysfs_root) {
        rc = cli_usage_error("topo", "--input and --sysfs-root are exclusive");
        goto done;
    }
    /* Discovery can take a while (fabric MADs, error windows): know first that -o works. */
    if (o.out && (rc = cli_check_output(o.out)) != CLI_OK)
        goto done;
    if (o.cabling && topo_cabling_load(o.cabling, &plan, &err) < 0) {
        rc = cli_fail(&err);
        goto done;
    }
    struct topo_pipeline_opts po = {
        .load = {.input = o.input, .sysfs_root = o.sysfs_root},
        .ib = o.fabric ? &io : NULL,
        .lldp = &ldo,
        .lint = lint || o.json || o.out,
        .sample_errors = true,
        .window = lint ? o.window : 0,
        .expect_ll = (enum topo_link_layer)o.expect_ll,
        .cabling = plan,
    };
    if (topo_pipeline_run(&po, &tp, &err) < 0) {
        rc =
            tp.failed == TOPO_PIPE_FABRIC ? cli_usage_error("topo", "%s", err.msg) : cli_fail(&err);
        goto done;
    }
    const struct topo_model *m = tp.m;

    if (o.json || o.out) {
        cJSON *doc = topo_json_from_model(m);
        cJSON_AddItemToObject(doc, "affinity", topo_json_affinity(m, &tp.aff));
        cJSON_AddItemToObject(doc, "lint", topo_json_findings(&tp.findings));
        rc = cli_emit_json(doc, o.json, o.out, "topo");
        cJSON_Delete(doc);
    }
    if (!o.json && rc == CLI_OK) {
        struct strbuf sb;
        strbuf_init(&sb);
        topo_text_header(&sb, m);
        strbuf_add(&sb, "\n");
        if (!o.matrix && !lint)
            topo_text_tree(&sb, m);
        if (o.fabric) {
            if (!o.matrix && !lint)
                strbuf_add(&sb, "\n");
            fabric_text(&sb, m);
        }
        if (o.ceiling) {
            strbuf_add(&sb, "\n");
            topo_text_ceilings(&sb, m, true);
        }
        if (o.matrix) {
            if (o.fabric)
                strbuf_add(&sb, "\n");
            topo_text_matrix(&sb, m, &tp.aff);
        }
        if (lint) {
            if (o.matrix || o.fabric)
                strbuf_add(&sb, "\n");
            topo_text_findings(&sb, &tp.findings);
        }
        if (o.out)
            strbuf_printf(&sb, "\nSaved the JSON snapshot to %s\n", o.out);
        fputs(sb.s, stdout);
        strbuf_free(&sb);
    }
    if (rc == CLI_OK && lint) {
        int worst = topo_findings_worst(&tp.findings);
        rc = worst == TOPO_SEV_ERROR ? CLI_FAILED : worst == TOPO_SEV_WARN ? CLI_THRESHOLDS : 0;
    }
done:
    topo_pipeline_free(&tp);
    topo_cabling_free(plan);
    cli_args_free(&cli_topo_command, &o);
    return rc;
}
