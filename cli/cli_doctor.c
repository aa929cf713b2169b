/* cli_doctor: `fabtop doctor --peer HOST[:PORT]`: both ends' facts side by side (this host's
 * and the agent's, over the control channel), the comparison rules over them and the queue
 * pair's attributes, and a path MTU probe with don't-fragment set; exit 0 clean, 1 warnings,
 * 2 errors, like `fabtop topo --lint`. */
#include "cli/cli.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "engine/doctor/doctor.h"
#include "common/strbuf.h"
#include "engine/run/doctor_run.h"
#include "text/doctor_text.h"

struct doctor_args {
    const char *peer, *key_file, *to, *device, *gid_type, *output;
    long port, gid_index, path_mtu, dscp;
    bool json, no_probe, no_walk;
};

#define A(f) offsetof(struct doctor_args, f)
static const struct cli_opt doctor_opts[] = {
    {"peer", 0, CLI_ARG_REQUIRED, "HOST[:PORT]", "the `fabtop serve` at the other end",
     CLI_V_STRING, CLI_C_HOST, .off = A(peer)},
    {"key-file", 0, CLI_ARG_REQUIRED, "FILE", "the key --peer shares", CLI_V_STRING, CLI_C_FILE,
     .off = A(key_file)},
    {"to", 0, CLI_ARG_REQUIRED, "ADDR",
     "the peer's address the traffic will use, IPv4 or IPv6\n(default: the --peer address)",
     CLI_V_STRING, .off = A(to)},
    {"device", 0, CLI_ARG_REQUIRED, "DEV", "the RDMA device a queue pair will use (rxe0)",
     CLI_V_STRING, .off = A(device)},
    {"port", 0, CLI_ARG_REQUIRED, "N", "its port (default {default})", CLI_V_INTEGER, .min = 1,
     .max = 255, .def = 1, .off = A(port)},
    {"gid-index", 0, CLI_ARG_REQUIRED, "I", "the GID index both ends will use", CLI_V_INTEGER,
     .min = 0, .max = 255, .def = -1, .off = A(gid_index)},
    {"gid-type", 0, CLI_ARG_REQUIRED, "TYPE", "the GID type expected (default 'RoCE v2')",
     CLI_V_STRING, .off = A(gid_type)},
    {"path-mtu", 0, CLI_ARG_REQUIRED, "BYTES", "the queue pair's path MTU (256..4096)",
     CLI_V_INTEGER, .min = 256, .max = 4096, .def = 0, .off = A(path_mtu)},
    {"dscp", 0, CLI_ARG_REQUIRED, "D",
     "the DSCP the queue pair's packets carry (RoCE v2;\ndefault {default}): its priority, PFC, "
     "ETS "
     "and ECN\nare checked on both ends",
     CLI_V_INTEGER, .min = 0, .max = 63, .def = 26, .off = A(dscp)},
    {"no-probe", 0, CLI_ARG_NONE, NULL, "skip the UDP path MTU probe", CLI_V_SET,
     .off = A(no_probe)},
    {"no-walk", 0, CLI_ARG_NONE, NULL,
     "with --device: skip the queue-pair walk (a real queue\npair to RTS, then messages of the "
     "path MTU's size)",
     CLI_V_SET, .off = A(no_walk)},
    {"output", 'o', CLI_ARG_REQUIRED, "FILE", "also write the fabtop-doctor document to FILE",
     CLI_V_STRING, CLI_C_FILE, .off = A(output)},
    {"json", 0, CLI_ARG_NONE, NULL, "print the document instead of text", CLI_V_SET,
     .off = A(json)},
};
#undef A

int cli_doctor_main(int argc, char **argv);

const struct cli_command cli_doctor_command = {
    .name = "doctor",
    .summary = "compare both ends of a path before any traffic",
    .synopsis = "Usage: fabtop doctor --peer HOST[:PORT] [--device DEV --port N --gid-index I]\n"
                "Read this end's and the agent's facts (route, interface, MTU, rp_filter, ARP,\n"
                "ECN, offloads, memlock, RDMA ports and GIDs), compare them with the queue\n"
                "pair's attributes, and probe the path MTU with don't-fragment set. With\n"
                "--device, walk a real queue pair to the agent through INIT -> RTR -> RTS\n"
                "with those attributes and send messages of the path MTU's size; when they\n"
                "fail, walk again with the value that should work, to prove the fix.\n",
    .opts = doctor_opts,
    .nopts = sizeof(doctor_opts) / sizeof(doctor_opts[0]),
    .epilogue = "Exit status: 0 clean, 1 warnings, 2 errors, 64 usage, 69 no agent,\n"
                "73 cannot write FILE.\n",
    .help_col = 24,
    .main = cli_doctor_main,
};

static int doctor(struct doctor_args *o)
{
    if (!o->peer)
        return cli_usage_error("doctor", "--peer is required");
    if (o->gid_index >= 0 && !o->device)
        return cli_usage_error("doctor", "--gid-index goes with --device");
    if (o->output) {
        int rc = cli_check_output(o->output);
        if (rc)
            return rc;
    }
    signal(SIGPIPE, SIG_IGN);
    struct doctor_run_opts ro = {.peer = o->peer,
                                 .key_file = o->key_file,
                                 .to = o->to,
                                 .device = o->device,
                                 .port = (int)o->port,
                                 .gid_index = (int)o->gid_index,
                                 .path_mtu = (int)o->path_mtu,
                                 .dscp = (int)o->dscp,
                                 .gid_type = o->gid_type,
                                 .no_probe = o->no_probe,
                                 .no_walk = o->no_walk};
    struct doctor_run *r = calloc(1, sizeof(*r));
    if (!r) {
        fprintf(stderr, "fabtop doctor: out of memory\n");
        return CLI_SOFTWARE;
    }
    struct ft_err err = {0};
    int rc = doctor_run(&ro, r, &err);
    if (rc < 0) {
        free(r);
        if (rc == -ENOSYS || rc == -EOPNOTSUPP) {
            fprintf(stderr, "fabtop: %s\n", err.msg);
            return CLI_UNAVAILABLE;
        }
        return cli_fail(&err);
    }
    if (r->probe_note[0])
        fprintf(stderr, "fabtop doctor: %s\n", r->probe_note);
    if (r->walk_note[0])
        fprintf(stderr, "fabtop doctor: %s\n", r->walk_note);
    if (!o->json) {
        struct strbuf sb;
        strbuf_init(&sb);
        doctor_text(r, &sb);
        fputs(sb.s, stdout);
        strbuf_free(&sb);
    }
    int status = r->status;
    int erc = o->json || o->output ? cli_emit_json(r->doc, o->json, o->output, "doctor") : 0;
    if (erc)
        status = erc;
    doctor_run_free(r);
    free(r);
    return status;
}

int cli_doctor_main(int argc, char **argv)
{
    struct doctor_args o = {.port = 1, .gid_index = -1, .dscp = 26};
    int first, prc = cli_parse_args(&cli_doctor_command, argc, argv, &o, &first);
    if (prc >= 0)
        return prc;
    int rc = first < argc ? cli_usage_error("doctor", "unexpected argument '%s'", argv[first])
                          : doctor(&o);
    cli_args_free(&cli_doctor_command, &o);
    return rc;
}
