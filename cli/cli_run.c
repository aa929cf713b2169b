/* cli_run: `fabtop run`: run a mix against a peer agent (or the in-process loopback agent),
 * show a one-line live progress, print a summary table, save the results atomically (also
 * on Ctrl-C / SIGTERM, with what was measured), and check --expect thresholds. */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "engine/run/thresholds.h"
#include "engine/flow/mix.h"
#include "engine/results/results.h"
#include "engine/results/results_json.h"
#include "engine/run/runner.h"
#include "topology/topo_load.h"
#include "text/run_text.h"

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    char b = (char)sig;
    if (write(sig_pipe[1], &b, 1) < 0) {
        /* nothing to do in a signal handler */
    }
}

static void usage(FILE *f)
{
    fprintf(
        f, "Usage: fabtop run --mix NAME|FILE [OPTIONS]\n"
           "Run a traffic mix and report latency percentiles, throughput and retransmissions.\n"
           "\n"
           "  -m, --mix NAME|FILE   a preset (see --list) or a mix JSON file\n"
           "  -p, --peer HOST[:PORT] a `fabtop serve` agent for flows whose peer is loopback\n"
           "                        (default: an agent started inside this process)\n"
           "  -k, --key-file FILE   pre-shared key for remote agents\n"
           "  -d, --duration S      measured seconds per size point (every foreground flow)\n"
           "  -s, --size BYTES      the foreground flow's message size (e.g. 4096, 64KiB)\n"
           "  -e, --expect TERMS    thresholds, e.g. 'p99<50us,gbps>9' or 'probe.quiet.p99<20us';\n"
           "                        exit 1 when one is violated\n"
           "  -o, --output FILE     save the results JSON (atomically; also when interrupted):\n"
           "                        a regular file or a symlink to one (written through),\n"
           "                        checked before the run starts\n"
           "      --json            print the results JSON on stdout instead of the table\n"
           "      --reproducible    leave out what measures this machine rather than the test\n"
           "                        (wall-clock times, durations and rates, event times, host\n"
           "                        counters): two runs of a sim/ mix with one seed then give\n"
           "                        byte-identical results\n"
           "      --no-pin          do not pin workers near their NIC's NUMA node\n"
           "      --nccl PATH       the libnccl.so NCCL flows load (the exact library a serving\n"
           "                        stack uses; sets FABTOP_NCCL)\n"
           "  -l, --list            list the preset mixes\n"
           "  -h, --help, -V, --version\n"
           "\n"
           "Latency is in microseconds with its kind named (ping-pong: half round trip, as\n"
           "sockperf and perftest report; request/response: round trip). Gb/s = 10^9 bit/s.\n"
           "Exit status: 0 ok, 1 thresholds violated, 2 a flow failed, 64 usage (a bad --peer or\n"
           "--expect), 65 bad mix or key, 66 missing mix or key file, 69 transport or peer\n"
           "unavailable, 73 cannot write -o FILE (checked before the run; if the final write\n"
           "fails the results go to a named fallback file), 77 key file permissions or the\n"
           "peer refused the key. Ctrl-C / SIGTERM: the results so far are saved, then fabtop\n"
           "ends by that signal (130 / 143 in sh).\n");
}

static void list_presets(void)
{
    char **names = mix_list_presets();
    for (char **p = names; *p; p++) {
        struct mix m;
        struct ft_err err = {0};
        if (mix_load(*p, &m, &err) == 0) {
            printf("%-16s %s\n", *p, m.description);
            mix_free(&m);
        } else {
            printf("%-16s (unreadable: %s)\n", *p, err.msg);
        }
    }
    mix_free_names(names);
}

/* One line, rewritten in place, on a terminal. */
static void progress(const struct runner_snapshot *s, bool tty)
{
    static const char *const ph[] = {"setup", "warm-up", "measure", "teardown", "done"};
    if (!tty || s->fg < 0)
        return;
    const struct snap_flow *f = &s->flows[s->fg];
    char line[256];
    int n = snprintf(line, sizeof(line), "[%s %s] %.1f/%.0f s %s", s->phase_name, ph[s->run_phase],
                     s->phase_elapsed_s, s->phase_total_s, f->name);
    if (f->npoints > 1)
        n += snprintf(line + n, sizeof(line) - (size_t)n, " %d/%d", f->point + 1, f->npoints);
    if (f->valid & SNAP_V_LAT)
        n += snprintf(line + n, sizeof(line) - (size_t)n, " p50 %.1fus p99 %.1fus",
                      f->lat.p50 / 1e3, f->lat.p99 / 1e3);
    if (f->valid & SNAP_V_RATE)
        n += snprintf(line + n, sizeof(line) - (size_t)n, " %.3f Gb/s", f->goodput_gbps);
    fprintf(stderr, "\r%-100.100s", line);
    fflush(stderr);
}

int cli_run_main(int argc, char **argv)
{
    static const char shortopts[] = "m:p:k:d:s:e:o:lhV";
    static const struct option opts[] = {{"mix", required_argument, NULL, 'm'},
                                         {"peer", required_argument, NULL, 'p'},
                                         {"key-file", required_argument, NULL, 'k'},
                                         {"duration", required_argument, NULL, 'd'},
                                         {"size", required_argument, NULL, 's'},
                                         {"expect", required_argument, NULL, 'e'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"no-pin", no_argument, NULL, 'P'},
                                         {"nccl", required_argument, NULL, 'N'}, /* no short form */
                                         {"reproducible", no_argument, NULL, 'R'},
                                         {"list", no_argument, NULL, 'l'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"version", no_argument, NULL, 'V'},
                                         {NULL, 0, NULL, 0}};
    const char *mixname = NULL, *peer = NULL, *key = NULL, *out = NULL, *expect_s = NULL;
    double duration = 0;
    uint64_t size = 0;
    bool json = false, pin = true, repro = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            mixname = optarg;
            break;
        case 'p':
            peer = optarg;
            break;
        case 'k':
            key = optarg;
            break;
        case 'd': {
            char *end;
            duration = strtod(optarg, &end);
            if (*end || !(duration > 0 && duration <= 86400))
                return cli_usage_error("run",
                                       "--duration takes seconds (0 < S <= 86400), not "
                                       "'%s'",
                                       optarg);
            break;
        }
        case 's':
            if (mix_parse_bytes(optarg, &size) < 0)
                return cli_usage_error("run", "--size takes bytes like 4096 or 64KiB, not '%s'",
                                       optarg);
            break;
        case 'e':
            expect_s = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 'R':
            repro = true;
            break;
        case 'P':
            pin = false;
            break;
        case 'N':
            /* Read by engine/xport/nccl/cudart.c when the NCCL transport first loads. */
            setenv("FABTOP_NCCL", optarg, 1);
            break;
        case 'l':
            list_presets();
            return CLI_OK;
        case 'h':
            usage(stdout);
            return CLI_OK;
        case 'V':
            cli_print_version();
            return CLI_OK;
        default:
            return cli_bad_option("run", argv, shortopts);
        }
    }
    if (optind < argc)
        return cli_usage_error("run", "unexpected argument '%s'", argv[optind]);
    if (!mixname)
        return cli_usage_error("run", "--mix is required (try --list)");

    struct ft_err err = {0};
    struct thresholds ex = {0};
    if (expect_s && thresholds_parse(expect_s, &ex, &err) < 0)
        return cli_usage_error("run", "%s", err.msg);
    struct mix mix;
    if (mix_load(mixname, &mix, &err) < 0)
        return cli_fail(&err);
    if (size)
        mix_set_size(&mix, size);
    if (duration > 0)
        mix_set_duration(&mix, duration);
    if (ex.n && thresholds_check_mix(&ex, &mix, &err) < 0) {
        mix_free(&mix);
        return cli_usage_error("run", "%s", err.msg);
    }
    /* Know before the test runs that its results can be saved and its peers answer. */
    if (out && cli_check_output(out) != CLI_OK) {
        mix_free(&mix);
        return CLI_CANTCREAT;
    }
    if (runner_validate(&mix, &err) < 0) {
        mix_free(&mix);
        return cli_fail(&err);
    }
    enum runner_peer_fault pf;
    struct runner_opts po = {.mix = &mix, .peer_override = peer, .key_file = key};
    if (runner_check_peers(&po, &pf, &err) < 0) {
        /* A bad --peer is a usage error, a bad peer in the mix bad data; a key file missing
         * (66), unreadable or open to others (77) or malformed (65); an agent that refuses
         * our key or address 77; no agent answering 69. */
        int st = pf == RUNNER_PEER_OPTION    ? CLI_USAGE
                 : pf == RUNNER_PEER_ADDRESS ? CLI_DATAERR
                 : pf == RUNNER_PEER_KEY     ? ft_err_exit_status(err.code)
                 : pf == RUNNER_PEER_DENIED  ? CLI_NOPERM
                                             : CLI_UNAVAILABLE;
        fprintf(stderr, "fabtop: %s\n", err.msg);
        mix_free(&mix);
        return st;
    }

    /* The topology, for pinning and for the results; a run works without it, and a simulated
     * one touches nothing on this host. */
    struct topo_load_opts lo = {.no_gpu_libs = true};
    struct topo_model *topo = NULL;
    struct ft_err terr = {0};
    if (!mix_all_simulated(&mix) && topo_load(&lo, &topo, &terr) < 0)
        fprintf(stderr, "fabtop: topology unavailable (%s); running without pinning\n", terr.msg);

    if (pipe(sig_pipe) < 0) {
        perror("fabtop: pipe");
        return CLI_SOFTWARE;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct runner_opts ro = {
        .mix = &mix, .peer_override = peer, .key_file = key, .topo = topo, .pin = pin};
    struct runner *r;
    if (runner_start(&ro, &r, &err) < 0) {
        mix_free(&mix);
        topo_model_free(topo);
        return cli_fail(&err);
    }
    bool tty = isatty(2);
    int signals = 0, caught = 0;
    while (!runner_done(r)) {
        struct pollfd p[2] = {{runner_wake_fd(r), POLLIN, 0}, {sig_pipe[0], POLLIN, 0}};
        if (poll(p, 2, 500) < 0 && errno != EINTR)
            break;
        char buf[64];
        if (p[0].revents & POLLIN)
            while (read(p[0].fd, buf, sizeof(buf)) > 0)
                ;
        if (p[1].revents & POLLIN) {
            if (read(p[1].fd, buf, sizeof(buf)) > 0 && ++signals == 1) {
                caught = buf[0];
                if (tty)
                    fprintf(stderr, "\nfabtop: stopping; keeping what was measured\n");
                runner_stop(r);
            }
        }
        struct runner_snapshot *s = runner_snapshot(r);
        progress(s, tty);
        runner_snapshot_release(s);
    }
    /* A signal that came as the run ended still ends the process (below). */
    struct pollfd sp = {sig_pipe[0], POLLIN, 0};
    char sb0;
    if (!caught && poll(&sp, 1, 0) == 1 && read(sig_pipe[0], &sb0, 1) == 1)
        caught = sb0;
    if (tty)
        fprintf(stderr, "\r%-100s\r", "");
    const cJSON *run_res = runner_wait(r);
    const struct results_doc *run_doc = runner_results(r);
    int rc = runner_status(r) ? CLI_FAILED : CLI_OK;
    struct results_doc repro_doc = {0};
    cJSON *repro_res = NULL;
    if (repro && run_doc) {
        results_doc_copy(run_doc, &repro_doc);
        results_doc_make_reproducible(&repro_doc);
        repro_res = results_json_write(&repro_doc);
    }
    const cJSON *res = repro_res ? repro_res : run_res;
    if (out && res && cli_save_json(res, out, "results") != CLI_OK)
        rc = CLI_CANTCREAT;
    if (json && res) {
        char *text = cJSON_Print(res);
        puts(text);
        cJSON_free(text);
    } else if (res) {
        struct strbuf sb;
        strbuf_init(&sb);
        run_text_summary(&sb, repro_res ? &repro_doc.runs[0] : &run_doc->runs[0]);
        if (out && rc != CLI_CANTCREAT)
            strbuf_printf(&sb, "\nresults saved to %s\n", out);
        fputs(sb.s, stdout);
        strbuf_free(&sb);
    }
    if (ex.n && run_doc) {
        char report[4096];
        int bad = thresholds_check_run(&ex, &run_doc->runs[0], report, sizeof(report));
        fputs(report, stderr);
        if (bad && rc == CLI_OK)
            rc = CLI_THRESHOLDS;
    }
    cJSON_Delete(repro_res);
    results_doc_free(&repro_doc);
    runner_free(r);
    mix_free(&mix);
    topo_model_free(topo);
    close(sig_pipe[0]);
    close(sig_pipe[1]);
    if (caught) {
        /* What was measured is saved: now end as the signal would have, so that the shell
         * and any caller see an interrupted command (128 + signal number in sh). */
        fflush(stdout);
        fflush(stderr);
        signal(caught, SIG_DFL);
        raise(caught);
    }
    return rc;
}
