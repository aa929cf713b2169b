/* cli_drill: `fabtop drill`: a fault drill of a mix's TCP request/response flows against the
 * in-process agent or a `fabtop serve` (--peer), or of its NCCL collectives against a victim
 * agent the drill starts and kills (rank-loss): the fault, the detection and recovery times
 * against their bounds, every request's outcome, --expect, and the "fabtop-drill" document
 * (-o FILE, written again after every repetition). */
#include "cli/cli.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_opts.h"
#include "common/jsonutil.h"
#include "engine/flow/mix.h"
#include "engine/run/drill.h"

/* Ctrl-C / SIGTERM: the drill stops (drill_opts.cancel), what it measured is kept, then the
 * command ends by that signal. */
static atomic_bool stop_drill;
static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
    caught = sig;
    atomic_store(&stop_drill, true);
}

struct drill_args {
    const char *mix, *expect, *peer, *key_file, *output, *netns, *device, *data_peer;
    int fault;
    double at, for_s;
    long repeat;
    bool json, owned;
};

static const struct cli_enum fault_kinds[] = {
    {"peer-stall", DRILL_PEER_STALL, 0}, {"peer-kill", DRILL_PEER_KILL, 0},
    {"blackhole", DRILL_BLACKHOLE, 0},   {"link-down", DRILL_LINK_DOWN, 0},
    {"rank-loss", DRILL_RANK_LOSS, 0},   {NULL, 0, 0}};

#define A(f) offsetof(struct drill_args, f)
static const struct cli_opt drill_opts[] = {
    {"mix", 'm', CLI_ARG_REQUIRED, "NAME|FILE",
     "a preset or a mix JSON file: TCP pingpong and rr flows\n(NCCL collectives for rank-loss), "
     "each with its\n\"recover\" policy",
     CLI_V_STRING, CLI_C_MIX, .off = A(mix)},
    {"fault", 0, CLI_ARG_REQUIRED, "KIND",
     "peer-stall: the agent answers none of this client's\nsessions for --for seconds; "
     "peer-kill: it ends them\nand refuses new ones meanwhile; blackhole: the test\n"
     "traffic to and from the peer is dropped in --netns\n(verbs ping-pongs without --netns: the "
     "agent moves\ntheir queue pairs to the error state);\nlink-down: the data path's netdev in "
     "--netns is set\ndown, then up again; rank-loss: NCCL collectives with\nthe ranks of "
     "a victim agent the drill starts, then\nkills; the survivors shrink their communicators "
     "or\nreconnect to it, restarted after --for",
     CLI_V_ENUM, .values = fault_kinds,
     .bad = "--fault takes peer-stall, peer-kill, blackhole, link-down or rank-loss, not '%s'",
     .off = A(fault)},
    {"at", 0, CLI_ARG_REQUIRED, "S", "inject this long into each repetition (default {default})",
     CLI_V_NUMBER, .min = 0.2, .max = 3600, .def = 1, .off = A(at)},
    {"for", 0, CLI_ARG_REQUIRED, "S", "how long the fault lasts (default {default})", CLI_V_NUMBER,
     .min = 0.05, .max = 3600, .def = 2, .off = A(for_s)},
    {"repeat", 0, CLI_ARG_REQUIRED, "N", "repetitions (default {default})", CLI_V_INTEGER, .min = 1,
     .max = 1000, .def = 1, .off = A(repeat)},
    {"expect", 0, CLI_ARG_REQUIRED, "LIST",
     "e.g. 'detect<2s,recover<5s,failed<=4': the worst\nrepetition's detection and recovery "
     "times, failed and\nabandoned requests of one flow (< or <=)",
     CLI_V_STRING, .off = A(expect)},
    {"peer", 0, CLI_ARG_REQUIRED, "HOST[:PORT]",
     "a `fabtop serve` to drill (default: an agent in this\nprocess)", CLI_V_STRING, CLI_C_HOST,
     .off = A(peer)},
    {"key-file", 0, CLI_ARG_REQUIRED, "FILE", "the key --peer shares", CLI_V_STRING, CLI_C_FILE,
     .off = A(key_file)},
    {"data-peer", 0, CLI_ARG_REQUIRED, "HOST",
     "the agent's address on a data path of its own: the\ndata connections go there, the control "
     "connection\nto --peer (default: --peer's host)",
     CLI_V_STRING, CLI_C_HOST, .off = A(data_peer)},
    {"netns", 0, CLI_ARG_REQUIRED, "NAME",
     "blackhole, link-down: the network namespace this\ndrill owns (a name in /run/netns, or a "
     "path), where\nnftables drops the peer's traffic but the agent's\ncontrol port, or whose "
     "netdev goes down",
     CLI_V_STRING, .off = A(netns)},
    {"device", 0, CLI_ARG_REQUIRED, "DEV",
     "link-down: the netdev in --netns to take down\n(default: the one that routes to the data "
     "peer);\nnever one of a default route or of the control\nconnection",
     CLI_V_STRING, .off = A(device)},
    {"owned", 0, CLI_ARG_NONE, NULL,
     "link-down without --netns: --device is this drill's\nto take down in its own namespace "
     "(a VM's data NIC),\nthe host's included",
     CLI_V_SET, .off = A(owned)},
    {"output", 'o', CLI_ARG_REQUIRED, "FILE",
     "write the fabtop-drill document to FILE (atomically,\nafter every repetition)", CLI_V_STRING,
     CLI_C_FILE, .off = A(output)},
    {"json", 0, CLI_ARG_NONE, NULL, "print the document instead of text", CLI_V_SET,
     .off = A(json)},
};
#undef A

int cli_drill_main(int argc, char **argv);

const struct cli_command cli_drill_command = {
    .name = "drill",
    .summary = "fault drill: detection and recovery times of TCP and NCCL flows",
    .synopsis = "Usage: fabtop drill --mix NAME|FILE --fault peer-stall|peer-kill [OPTIONS]\n"
                "       fabtop drill --mix NAME|FILE --fault blackhole --netns NAME [OPTIONS]\n"
                "       fabtop drill --mix NAME|FILE --fault link-down --netns NAME\n"
                "                    [--device DEV] --peer HOST --data-peer HOST [OPTIONS]\n"
                "       fabtop drill --mix NAME|FILE --fault link-down --device DEV --owned\n"
                "                    --peer HOST --data-peer HOST [OPTIONS]\n"
                "       fabtop drill --mix NAME|FILE --fault rank-loss [OPTIONS]\n"
                "Run the mix's TCP pingpong and rr flows, inject a fault into this client's own\n"
                "sessions on the agent (fault.inject, capped by `fabtop serve --max-fault`),\n"
                "drop their traffic in a namespace the drill owns (blackhole) or take its data\n"
                "path's netdev down there (link-down), and\n"
                "time the detection (the first error or request deadline) against the mix's\n"
                "fail_bound_s and the recovery against each flow's \"recover\" deadline.\n"
                "A verbs ping-pong is drilled under peer-kill (its queue pair's completion error\n"
                "is the detection, new queue pairs the recovery), peer-stall (the request's\n"
                "deadline), blackhole (the agent's) and link-down of its RDMA device's netdev\n"
                "(--device DEV --owned, a VM's data NIC).\n"
                "rank-loss runs the mix's NCCL collectives with the ranks of a victim agent the\n"
                "drill starts (fabtop serve on 127.0.0.1), kills it, and times the survivors'\n"
                "detection and their recovery (ncclCommShrink, or a new communicator with the\n"
                "victim restarted after --for).\n",
    .opts = drill_opts,
    .nopts = sizeof(drill_opts) / sizeof(drill_opts[0]),
    .epilogue = "Exit status: 0 every --expect holds, 1 one does not, 2 a flow never recovered,\n"
                "64 usage, 65 a mix a drill cannot run, 66 no such mix or namespace, 69 no\n"
                "agent, no nft, no such netdev, a link down already or a --device that a verbs\n"
                "lane's GID is not on, 73 cannot write FILE,\n"
                "77 the agent refused the fault, or the namespace's fault has no permission,\n"
                "names the host's namespace or the netdev of a default route or of the control\n"
                "connection. Ctrl-C / SIGTERM: the drill stops (a fault it set is undone, a\n"
                "victim agent ends), the repetitions done stay in FILE, then fabtop ends by that\n"
                "signal (130 / 143 in sh).\n",
    .help_col = 24,
    .main = cli_drill_main,
};

/* One clause of --expect. */
struct expect {
    char name[16];
    bool le;
    double v;
};

static int parse_expect(const char *text, struct expect *e, int max, int *n)
{
    *n = 0;
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", text);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ')
            t++;
        char *op = strchr(t, '<');
        if (!op || *n == max)
            return cli_usage_error("drill", "--expect: '%s' is not NAME<VALUE or NAME<=VALUE", t);
        struct expect *x = &e[(*n)++];
        snprintf(x->name, sizeof(x->name), "%.*s", (int)(op - t), t);
        x->le = op[1] == '=';
        bool secs = !strcmp(x->name, "detect") || !strcmp(x->name, "recover");
        if (!secs && strcmp(x->name, "failed") && strcmp(x->name, "abandoned"))
            return cli_usage_error(
                "drill", "--expect: unknown '%s' (detect, recover, failed, abandoned)", x->name);
        char *end;
        x->v = strtod(op + 1 + x->le, &end);
        if (secs && *end == 's')
            end++;
        if (end == op + 1 + x->le || *end)
            return cli_usage_error("drill", "--expect: '%s': the value is not a number%s", t,
                                   secs ? " of seconds" : "");
    }
    return 0;
}

struct progress {
    const char *output;
    int save_rc;
};

static void on_progress(void *arg, const cJSON *doc)
{
    struct progress *p = arg;
    if (p->output && cli_save_json(doc, p->output, "drill") != 0)
        p->save_rc = CLI_CANTCREAT;
}

static void print_num(const cJSON *o, const char *k, const char *fmt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsNumber(v))
        printf(fmt, v->valuedouble);
    else
        printf("n/a");
}

static void print_text(const cJSON *doc)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(doc, "repetitions"))
    {
        double idx = 0;
        jsonutil_num(r, "index", &idx);
        printf("repetition %d: %s injected at ", (int)idx + 1,
               jsonutil_str(cJSON_GetObjectItemCaseSensitive(doc, "fault"), "kind"));
        print_num(r, "injected_at_s", "%.3f s");
        printf("\n");
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(r, "flows"))
        {
            const cJSON *rq = cJSON_GetObjectItemCaseSensitive(f, "requests");
            printf("  %s (%s): detected after ", jsonutil_str(f, "name"), jsonutil_str(f, "op"));
            print_num(f, "detect_s", "%.3f s");
            printf(" (bound ");
            print_num(f, "detect_bound_s", "%.2f s");
            printf(", %s) by %s\n",
                   cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "detect_ok")) ? "ok" : "BROKEN",
                   jsonutil_str_or(f, "detection", "nothing"));
            printf("    recovered after ");
            print_num(f, "recover_s", "%.3f s");
            printf(" (deadline ");
            print_num(f, "recover_deadline_s", "%g s");
            printf(", %s), back at the quiet p99 (",
                   cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "recover_ok")) ? "ok"
                                                                                   : "BROKEN");
            bool coll = !strcmp(jsonutil_str_or(f, "op", ""), "collective");
            print_num(f, "quiet_p99_us", coll ? "%.1f us per operation" : "%.1f us round trip");
            printf(") at ");
            print_num(f, "returned_at_s", "%.3f s");
            printf("\n    requests: ");
            print_num(rq, "issued", "%.0f issued, ");
            print_num(rq, "completed", "%.0f completed, ");
            print_num(rq, "failed", "%.0f failed, ");
            print_num(rq, "abandoned", "%.0f abandoned at their deadline, ");
            print_num(rq, "hanging", "%.0f hanging");
            printf("\n");
            const cJSON *sb = cJSON_GetObjectItemCaseSensitive(f, "seen_by");
            if (cJSON_IsObject(sb)) {
                printf("    seen by: %s\n", jsonutil_str_or(sb, "text", "n/a"));
                const char *lists[2] = {"could", "did"};
                for (int i = 0; i < 2; i++) {
                    printf("%s", i ? "; did: " : "      could: ");
                    const cJSON *x, *a = cJSON_GetObjectItemCaseSensitive(sb, lists[i]);
                    int n = 0;
                    cJSON_ArrayForEach(x, a)
                    {
                        if (cJSON_IsString(x))
                            printf("%s%s", n++ ? ", " : "", x->valuestring);
                    }
                    if (!n)
                        printf("nothing");
                }
                printf("\n");
            }
            const cJSON *rb = cJSON_GetObjectItemCaseSensitive(f, "ranks_before");
            if (cJSON_IsNumber(rb)) {
                printf("    ranks: %.0f before, ", rb->valuedouble);
                print_num(f, "ranks_after", "%.0f after");
                printf("; rebuilt by %s\n", jsonutil_str_or(f, "rebuilt", "nothing"));
            }
            const cJSON *fo = cJSON_GetObjectItemCaseSensitive(f, "failovers");
            if (cJSON_IsNumber(fo))
                printf("    failed over: %.0f of its connections recovered on %s\n",
                       fo->valuedouble, jsonutil_str_or(f, "recovered_on", "no failover agent"));
        }
        const cJSON *lo;
        cJSON_ArrayForEach(lo, cJSON_GetObjectItemCaseSensitive(r, "load"))
        {
            printf("  load %s (%s, connections ", jsonutil_str(lo, "name"),
                   jsonutil_str(lo, "direction"));
            print_num(lo, "connections", "%.0f): ");
            print_num(lo, "before_gbps", "%.3f Gb/s before the fault, ");
            print_num(lo, "during_gbps", "%.3f during it, ");
            print_num(lo, "after_gbps", "%.3f after; ");
            print_num(lo, "reconnects", "%.0f reconnects\n");
        }
        const cJSON *ag = cJSON_GetObjectItemCaseSensitive(r, "agent");
        if (!ag)
            continue; /* rank-loss: the victim is gone, nothing counted its answers */
        printf("  the agent answered ");
        print_num(ag, "answered", "%.0f");
        printf(", the client completed ");
        print_num(ag, "client_completed", "%.0f");
        printf(": %s\n",
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ag, "agree")) ? "agree" : "DISAGREE");
    }
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "summary");
    const char *nm[2] = {"detect", "recover"};
    for (int i = 0; i < 2; i++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(s, nm[i]);
        printf("%s: min ", nm[i]);
        print_num(x, "min_s", "%.3f s");
        printf(", p50 ");
        print_num(x, "p50_s", "%.3f s");
        printf(", max ");
        print_num(x, "max_s", "%.3f s");
        printf("\n");
    }
    printf("drills: ");
    print_num(s, "drills", "%.0f, ");
    print_num(s, "broke_bound", "%.0f broke a bound, ");
    print_num(s, "never_recovered", "%.0f never recovered\n");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(doc, "process");
    if (p) {
        printf("this process: ");
        print_num(p, "fds_before", "%.0f descriptors before, ");
        print_num(p, "fds_after", "%.0f after; ");
        print_num(p, "threads_before", "%.0f threads before, ");
        print_num(p, "threads_after", "%.0f after\n");
    }
}

static int drill(struct drill_args *o)
{
    if (!o->mix)
        return cli_usage_error("drill", "--mix is required");
    if (!o->fault)
        return cli_usage_error(
            "drill",
            "--fault is required (peer-stall, peer-kill, blackhole, link-down or rank-loss)");
    bool in_ns = o->fault == DRILL_BLACKHOLE || o->fault == DRILL_LINK_DOWN;
    if (o->netns && !in_ns)
        return cli_usage_error("drill", "--netns goes with --fault blackhole or link-down");
    if (o->owned && (o->fault != DRILL_LINK_DOWN || !o->device || o->netns))
        return cli_usage_error("drill", "--owned goes with --fault link-down and --device DEV, "
                                        "without --netns");
    /* A blackhole without a namespace is the agent's, for verbs lanes alone (their queue
     * pairs to the error state): checked once the mix is read. */
    bool agent_hole = o->fault == DRILL_BLACKHOLE && !o->netns;
    if (in_ns && !o->netns && !o->owned && !agent_hole)
        return cli_usage_error("drill",
                               "--fault %s needs --netns NAME: a network namespace this drill owns",
                               o->fault == DRILL_BLACKHOLE ? "blackhole" : "link-down");
    if (o->device && o->fault != DRILL_LINK_DOWN)
        return cli_usage_error("drill", "--device goes with --fault link-down");
    if (o->key_file && !o->peer)
        return cli_usage_error("drill", "--key-file goes with --peer");
    if (o->fault == DRILL_RANK_LOSS && (o->peer || o->data_peer))
        return cli_usage_error("drill", "--fault rank-loss kills its victim agent, which the drill "
                                        "starts itself: no --peer or --data-peer");
    struct expect ex[16];
    int nex = 0;
    if (o->expect) {
        int rc = parse_expect(o->expect, ex, 16, &nex);
        if (rc)
            return rc;
    }
    if (o->output) {
        int rc = cli_check_output(o->output);
        if (rc)
            return rc;
    }
    struct ft_err err = {0};
    struct mix m;
    if (mix_load(o->mix, &m, &err) < 0)
        return cli_fail(&err);
    if (agent_hole && drill_blackhole_needs_netns(&m)) {
        mix_free(&m);
        return cli_usage_error("drill", "--fault blackhole needs --netns NAME: a network namespace "
                                        "this drill owns (a mix of verbs ping-pongs alone takes it "
                                        "from the agent: their queue pairs to the error state)");
    }
    if (drill_check_mix_fault(&m, (enum drill_fault)o->fault, &err) < 0) {
        mix_free(&m);
        return cli_fail(&err);
    }
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* rank-loss: the victim is this same fabtop, as `fabtop serve` */
    char self[4096] = "";
    ssize_t sn = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[sn > 0 ? sn : 0] = '\0';
    struct progress pr = {o->output, 0};
    struct drill_opts d = {.mix = &m,
                           .fault = (enum drill_fault)o->fault,
                           .at_s = o->at,
                           .for_s = o->for_s,
                           .repeat = (int)o->repeat,
                           .peer = o->peer,
                           .key_file = o->key_file,
                           .netns = o->netns,
                           .device = o->device,
                           .owned = o->owned,
                           .data_peer = o->data_peer,
                           .agent_exe = self,
                           .cancel = &stop_drill,
                           .progress = on_progress,
                           .arg = &pr};
    cJSON *doc = NULL;
    struct drill_summary sum;
    int rc = drill_run(&d, &doc, &sum, &err);
    mix_free(&m);
    if (rc < 0 && caught) {
        /* The repetitions done are in FILE already (written after each one). */
        cJSON_Delete(doc);
        fprintf(stderr, "fabtop drill: %s\n", err.msg);
        fflush(stdout);
        fflush(stderr);
        signal(caught, SIG_DFL);
        raise(caught);
    }
    if (rc < 0) {
        cJSON_Delete(doc);
        return cli_fail(&err);
    }
    if (o->json) {
        char *t = cJSON_Print(doc);
        printf("%s\n", t);
        cJSON_free(t);
    } else {
        print_text(doc);
    }
    int status = CLI_OK;
    for (int i = 0; i < nex; i++) {
        const struct expect *x = &ex[i];
        double v = !strcmp(x->name, "detect")    ? sum.detect_max_s
                   : !strcmp(x->name, "recover") ? sum.recover_max_s
                   : !strcmp(x->name, "failed")  ? (double)sum.failed_max
                                                 : (double)sum.abandoned_max;
        bool ok = x->le ? v <= x->v : v < x->v;
        if (!ok) {
            fprintf(stderr, "fabtop drill: expected %s%s%g, got %g\n", x->name, x->le ? "<=" : "<",
                    x->v, v);
            status = CLI_THRESHOLDS;
        }
    }
    if (sum.never_recovered)
        status = CLI_FAILED;
    cJSON_Delete(doc);
    return pr.save_rc ? pr.save_rc : status;
}

int cli_drill_main(int argc, char **argv)
{
    struct drill_args o = {.at = 1, .for_s = 2, .repeat = 1};
    int first, prc = cli_parse_args(&cli_drill_command, argc, argv, &o, &first);
    if (prc >= 0)
        return prc;
    int rc = first < argc ? cli_usage_error("drill", "unexpected argument '%s'", argv[first])
                          : drill(&o);
    cli_args_free(&cli_drill_command, &o);
    return rc;
}
