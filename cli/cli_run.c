/* cli_run: `fabtop run`: run a mix against a peer agent (or the in-process loopback agent),
 * show a one-line live progress, print a summary table, save the results atomically (also
 * on Ctrl-C / SIGTERM, with what was measured), and check --expect thresholds. */
#include "cli/cli.h"
#include "cli/cli_baseline.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli_mix.h"
#include "engine/run/mix_model.h"
#include "cli/cli_opts.h"
#include "common/jsonutil.h"
#include "common/xalloc.h"
#include "common/strbuf.h"
#include "engine/run/thresholds.h"
#include "engine/flow/mix.h"
#include "engine/run/mix_build.h"
#include "engine/results/results.h"
#include "engine/results/results_json.h"
#include "engine/results/score.h"
#include "engine/path/path_sites.h"
#include "engine/run/runner.h"
#include "topology/topo_load.h"
#include "text/judge_text.h"
#include "report/report_trace.h"
#include "text/run_text.h"
#include "text/text_units.h"

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    char b = (char)sig;
    if (write(sig_pipe[1], &b, 1) < 0) {
        /* nothing to do in a signal handler */
    }
}

/* What the command line sets. */
struct run_args {
    const char *mix, *peer, *key, *out, *expect, *nccl;
    const char *trace; /* --trace FILE: the timeline as Chrome trace events */
    const char *site;  /* --site: this host's site label, for the path's class */
    const char *sites; /* --sites FILE: sites by address prefix (engine/path/path_sites.h) */
    const char *slo, *step_budget, *target_tps; /* the scoreboard (engine/results/score.h) */
    const char *baseline;                       /* --baseline NAME (cli_baseline.h) */
    double duration;
    uint64_t size;
    bool json, no_pin, repro, list;
    /* The setup form's knobs (engine/run/mix_build.h); 0 / NULL: the preset's. */
    const char *endpoint;
    int transport, neighbours; /* 0: not given; else the enum's value */
    long concurrency, senders;
    /* --model: the serving mix of a model instead of --mix (cli_mix.h). */
    struct cli_mix_model model;
};

/* --transport and --neighbours: 0 means not given. */
static const struct cli_enum run_transports[] = {
    {"tcp", 1, 0}, {"verbs", 2, 0}, {"nccl", 3, 0}, {"sim", 4, 0}, {NULL, 0, 0}};
static const struct cli_enum on_off[] = {{"on", 1, 0}, {"off", 2, 0}, {NULL, 0, 0}};

#define A(f) offsetof(struct run_args, f)
static const struct cli_opt run_opts[] = {
    {"mix", 'm', CLI_ARG_REQUIRED, "NAME|FILE", "a preset (see --list) or a mix JSON file",
     CLI_V_STRING, CLI_C_MIX, .off = A(mix)},
    {"peer", 'p', CLI_ARG_REQUIRED, "HOST[:PORT]",
     "a `fabtop serve` agent for flows whose peer is loopback\n(default: an agent started "
     "inside this process)",
     CLI_V_STRING, CLI_C_HOST, .off = A(peer)},
    {"key-file", 'k', CLI_ARG_REQUIRED, "FILE", "pre-shared key for remote agents", CLI_V_STRING,
     CLI_C_FILE, .off = A(key)},
    {"site", 0, CLI_ARG_REQUIRED, "NAME",
     "this host's site label; a peer agent with another --site\nmakes the path wide area "
     "(docs/diagnosis.md)",
     CLI_V_STRING, .off = A(site)},
    {"sites", 0, CLI_ARG_REQUIRED, "FILE",
     "sites by address: lines of NAME CIDR [CIDR ...]; an end\nwithout --site takes the site "
     "of its address on the path",
     CLI_V_STRING, CLI_C_FILE, .off = A(sites)},
    {"duration", 'd', CLI_ARG_REQUIRED, "S",
     "measured seconds per size point (every foreground flow)", CLI_V_NUMBER, .min = 0,
     .min_open = 1, .max = 86400, .bad = "--duration takes seconds (0 < S <= 86400), not '%s'",
     .off = A(duration)},
    {"size", 's', CLI_ARG_REQUIRED, "BYTES",
     "the foreground flow's message size (e.g. 4096, 64KiB)", CLI_V_BYTES,
     .bad = "--size takes bytes like 4096 or 64KiB, not '%s'", .off = A(size)},
    {"expect", 'e', CLI_ARG_REQUIRED, "TERMS",
     "thresholds, e.g. 'p99<50us,gbps>9' or 'probe.quiet.p99<20us';\nexit 1 when one is "
     "violated",
     CLI_V_STRING, .off = A(expect)},
    {"slo", 0, CLI_ARG_REQUIRED, "TERMS",
     "targets per flow class, e.g. 'kv:p99<30ms,tp:p99<80us':\nthe scoreboard gives each "
     "class's share of operations\nwithin its bound",
     CLI_V_STRING, .off = A(slo)},
    {"step-budget", 0, CLI_ARG_REQUIRED, "TIME",
     "one decode step's budget (25ms): the scoreboard gives\nthe share of it communication "
     "takes",
     CLI_V_STRING, .off = A(step_budget)},
    {"target-tps", 0, CLI_ARG_REQUIRED, "N",
     "or the tokens/s one sequence must decode (the budget is\n1/N s)", CLI_V_STRING,
     .off = A(target_tps)},
    {"output", 'o', CLI_ARG_REQUIRED, "FILE",
     "save the results JSON (atomically; also when interrupted):\na regular file or a symlink "
     "to one (written through),\nchecked before the run starts",
     CLI_V_STRING, CLI_C_FILE, .off = A(out)},
    {"trace", 0, CLI_ARG_REQUIRED, "FILE",
     "also save the run's timeline as Chrome trace events (JSON;\nPerfetto and chrome://tracing "
     "open it): phases, each flow's\nsetup and size points, goodput and ops/s counter tracks,"
     "\nevents and failures, and sampled operations (one in N\nof each worker's, a clock read "
     "each)",
     CLI_V_STRING, CLI_C_FILE, .off = A(trace)},
    {"json", 0, CLI_ARG_NONE, NULL, "print the results JSON on stdout instead of the table",
     CLI_V_SET, .off = A(json)},
    {"reproducible", 0, CLI_ARG_NONE, NULL,
     "leave out what measures this machine rather than the test\n(wall-clock times, durations "
     "and rates, event times, host\ncounters): two runs of a sim/ mix with one seed then give\n"
     "byte-identical results",
     CLI_V_SET, .off = A(repro)},
    {"no-pin", 0, CLI_ARG_NONE, NULL, "do not pin workers near their NIC's NUMA node", CLI_V_SET,
     .off = A(no_pin)},
    {"baseline", 0, CLI_ARG_REQUIRED, "NAME",
     "show the headline figures as ratios to this saved baseline\n(fabtop baseline; default: "
     "the baseline of the same mix)",
     CLI_V_STRING, .off = A(baseline)},
    {"nccl", 0, CLI_ARG_REQUIRED, "PATH",
     "the libnccl.so NCCL flows load (the exact library a serving\nstack uses; without it "
     "$FABTOP_NCCL, else libnccl.so.2)",
     CLI_V_STRING, CLI_C_FILE, .off = A(nccl)},
    {"list", 'l', CLI_ARG_NONE, NULL, "list the preset mixes", CLI_V_SET, .off = A(list)},
    /* The setup form's knobs, as mix_build_knobs words them (a test checks the words). */
    CLI_SECTION("Building the mix from the preset, as the explorer's setup form does:"),
    {"endpoint", 0, CLI_ARG_REQUIRED, "ENDPOINT",
     "local endpoint of every flow: any, netdev:NAME, ip:ADDR,\nrdma:DEV:PORT or gpu:N",
     CLI_V_STRING, .off = A(endpoint)},
    {"transport", 0, CLI_ARG_REQUIRED, "NAME", "transport of every flow: tcp, verbs, nccl",
     CLI_V_ENUM, .values = run_transports, .off = A(transport)},
    {"concurrency", 0, CLI_ARG_REQUIRED, "N",
     "the foreground's operations, requests or connections in\nflight, 1 to 1024", CLI_V_INTEGER,
     .min = 1, .max = MIX_BUILD_MAX_CONC, .off = A(concurrency)},
    {"senders", 0, CLI_ARG_REQUIRED, "N",
     "incast senders streaming into this host at once (incast\npresets)", CLI_V_INTEGER, .min = 1,
     .max = MIX_MAX_FLOWS, .off = A(senders)},
    {"neighbours", 0, CLI_ARG_REQUIRED, "on|off",
     "off: drop the background flows (the quiet phase alone)", CLI_V_ENUM, .values = on_off,
     .off = A(neighbours)},
    CLI_SECTION("Or the serving mix of a model (as `fabtop mix --model` prints it; --transport\n"
                "nccl, verbs or tcp, default nccl):"),
    CLI_MIX_MODEL_OPTS(A(model)),
};
#undef A

const struct cli_command cli_run_command = {
    .name = "run",
    .summary = "run a traffic mix and report latency, throughput, retransmissions",
    .synopsis = "Usage: fabtop run --mix NAME|FILE [OPTIONS]\n"
                "       fabtop run --model NAME|config.json [--tp N ...] [OPTIONS]\n"
                "Run a traffic mix and report latency percentiles, throughput and "
                "retransmissions.\n",
    .opts = run_opts,
    .nopts = sizeof(run_opts) / sizeof(run_opts[0]),
    .epilogue =
        "Latency is in microseconds with its kind named (ping-pong: half round trip, as\n"
        "sockperf and perftest report; request/response: round trip). Gb/s = 10^9 bit/s.\n"
        "Exit status: 0 ok, 1 --expect thresholds violated or an --slo missed, 2 a flow\n"
        "failed, 64 usage (a bad --peer or --expect), 65 bad mix or key, 66 missing mix or\n"
        "key file, 69 transport or peer unavailable, 73 cannot write -o FILE (checked\n"
        "before the run; if the final write fails the results go to a named fallback\n"
        "file), 77 key file permissions or the peer refused the key. Ctrl-C / SIGTERM: the\n"
        "results so far are saved, then fabtop ends by that signal (130 / 143 in sh).\n",
    .help_col = 24,
    .main = cli_run_main,
};

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

/* The terminal's width on stderr, less one column (a line as wide as the terminal wraps on
 * some terminals, and then each rewrite lands on a new line); 79 when it is not known. */
static int progress_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
        return ws.ws_col - 1 < 255 ? ws.ws_col - 1 : 255;
    return 79;
}

/* One line, rewritten in place, on a terminal: cut to the terminal's width, the elapsed time
 * never past the phase's total. */
static void progress(const struct runner_snapshot *s, bool tty)
{
    static const char *const ph[] = {"setup", "warm-up", "measure", "teardown", "done"};
    if (!tty || s->fg < 0)
        return;
    const struct snap_flow *f = &s->flows[s->fg];
    char line[256];
    double el = s->phase_elapsed_s;
    if (s->phase_total_s > 0 && el > s->phase_total_s)
        el = s->phase_total_s;
    int n = snprintf(line, sizeof(line), "[%s %s] %.1f/%g s %s", s->phase_name, ph[s->run_phase],
                     el, s->phase_total_s, f->name);
    if (f->npoints > 1)
        n += snprintf(line + n, sizeof(line) - (size_t)n, " %d/%d", f->point + 1, f->npoints);
    if (f->valid & SNAP_V_LAT) {
        char p50[32], p99[32];
        text_lat_auto(p50, sizeof(p50), f->lat.p50 / 1e3);
        text_lat_auto(p99, sizeof(p99), f->lat.p99 / 1e3);
        n += snprintf(line + n, sizeof(line) - (size_t)n, " p50 %s p99 %s", p50, p99);
    }
    if (f->valid & SNAP_V_RATE)
        snprintf(line + n, sizeof(line) - (size_t)n, " %.3f Gb/s", f->goodput_gbps);
    int w = progress_width();
    fprintf(stderr, "\r%-*.*s", w, w, line);
    fflush(stderr);
}

/* The RDMA port's netdev and its first address, for TCP over that port, from this node's
 * topology (as the setup form takes them from the explorer's). */
static void rdma_endpoint_netdev(struct mix_build_endpoint *ep)
{
    struct topo_load_opts lo = {.no_gpu_libs = true};
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    if (topo_load(&lo, &m, &err) < 0)
        return;
    for (int p = 0; p < m->nports; p++) {
        const struct topo_port *pt = &m->ports[p];
        char id[96];
        snprintf(id, sizeof(id), "%s:%d", m->nics[pt->nic].rdma_dev, pt->num);
        if (!strcmp(id, ep->rdma))
            mix_build_rdma_netdev(m, p, ep);
    }
    topo_model_free(m);
}

/* The mix per o: the preset, built further by the setup form's knobs when any is given
 * (mix_build, as the form builds it), then --size, --duration and --nccl. 0, or the exit
 * status after one line saying why. */
static int build_mix(const struct run_args *o, struct mix *mix)
{
    struct ft_err err = {0};
    bool knobs = o->endpoint || o->transport || o->concurrency || o->senders || o->neighbours;
    if (o->model.model) {
        if (o->mix)
            return cli_usage_error("run", "--mix and --model: give one of them");
        if (o->endpoint || o->concurrency || o->senders || o->neighbours)
            return cli_usage_error("run", "--endpoint, --concurrency, --senders and --neighbours "
                                          "build a --mix preset, not a --model mix");
        if (o->transport == 4)
            return cli_usage_error("run", "--model runs over nccl, verbs or tcp, not sim");
        char why[600] = "";
        const char *tr = o->transport ? run_transports[o->transport - 1].name
                                      : mix_model_best_transport(why, sizeof(why));
        if (!o->transport && why[0])
            fprintf(stderr, "fabtop run: --model over %s, the best available here (%s)\n", tr, why);
        int rc = cli_mix_build("run", &o->model, tr, mix, NULL);
        if (rc)
            return rc;
    } else if (!knobs) {
        if (mix_load(o->mix, mix, &err) < 0)
            return cli_fail(&err);
    } else {
        struct mix_build b;
        mix_build_init(&b);
        b.edited_by = "the command line";
        if (mix_build_load(&b, o->mix, &err) < 0) {
            mix_build_free(&b);
            return cli_fail(&err);
        }
        char conc[16], senders[16];
        snprintf(conc, sizeof(conc), "%ld", o->concurrency);
        snprintf(senders, sizeof(senders), "%ld", o->senders);
        const char *v[MIX_KNOB_COUNT] = {
            [MIX_KNOB_ENDPOINT] = o->endpoint,
            [MIX_KNOB_TRANSPORT] = o->transport ? run_transports[o->transport - 1].name : NULL,
            [MIX_KNOB_CONC] = o->concurrency ? conc : NULL,
            [MIX_KNOB_SENDERS] = o->senders ? senders : NULL,
            [MIX_KNOB_NEIGHBOURS] = o->neighbours ? on_off[o->neighbours - 1].name : NULL};
        int rc = 0;
        for (int k = 0; k < MIX_KNOB_COUNT && !rc; k++)
            if (v[k] && mix_build_set(&b, (enum mix_knob)k, v[k], &err) < 0)
                rc = cli_usage_error("run", "--%s: %s", mix_build_knobs[k].flag, err.msg);
        if (!rc && b.ep.kind == MIX_EP_RDMA)
            rdma_endpoint_netdev(&b.ep);
        char why[512];
        if (!rc && mix_build_make(&b, mix, why, sizeof(why)) < 0)
            rc = cli_usage_error("run", "%s", why);
        mix_build_free(&b);
        if (rc)
            return rc;
    }
    if (o->size)
        mix_set_size(mix, o->size);
    if (o->duration > 0)
        mix_set_duration(mix, o->duration);
    /* The NCCL flows load this library (engine/xport/nccl/cudart.h: cudart_load_lib). */
    if (o->nccl && mix_set_library(mix, "nccl", o->nccl) < 0) {
        mix_free(mix);
        return cli_usage_error("run", "--nccl takes a path of at most 255 bytes");
    }
    return 0;
}

int cli_run_mix(int argc, char **argv, struct mix *mix)
{
    struct run_args o = {0};
    int first, rc = cli_parse_args(&cli_run_command, argc, argv, &o, &first);
    if (rc >= 0)
        return rc ? rc : CLI_USAGE; /* --help is no mix */
    if (!o.mix && !o.model.model)
        return cli_usage_error("run", "--mix or --model is required (try --list)");
    return build_mix(&o, mix);
}

/* Print "fabtop: --slo missed: class CLASS TERM ..." for each class whose SLO the scoreboard
 * says was not met; true when any was. */
static bool slo_missed(const struct results_scoreboard *b)
{
    bool any = false;
    for (int i = 0; b->st == RESULTS_SET && i < b->nclasses; i++) {
        const struct results_score_class *c = &b->classes[i];
        if (c->slo_met.st != RESULTS_SET || c->slo_met.v)
            continue;
        double within;
        bool w = results_num_get(&c->loaded.within_slo, &within) ||
                 results_num_get(&c->quiet.within_slo, &within);
        const char *term = results_str_get(&c->slo);
        fprintf(stderr, "fabtop: --slo missed: class %s %s", c->name, term ? term : "?");
        if (w)
            fprintf(stderr, " (%.1f%% of its operations within the bound)", 100 * within);
        fputc('\n', stderr);
        any = true;
    }
    return any;
}

/* The operations the runner sampled for --trace, named by their flows. */
struct trace_ops {
    const struct mix *mix;
    struct report_trace_op *v;
    int n, cap;
};

static void trace_op(void *arg, int phase, int flow, int worker, double t0_s, double t1_s,
                     int point)
{
    struct trace_ops *t = arg;
    (void)point;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 4096;
        t->v = xalloc_resize(t->v, (size_t)t->cap * sizeof(*t->v));
    }
    t->v[t->n++] = (struct report_trace_op){phase, t->mix->flows[flow].name, worker, t0_s, t1_s};
}

int cli_run_main(int argc, char **argv)
{
    struct run_args o = {0};
    int first, prc = cli_parse_args(&cli_run_command, argc, argv, &o, &first);
    if (prc >= 0)
        return prc;
    if (o.list) {
        list_presets();
        return CLI_OK;
    }
    const char *mixname = o.mix, *peer = o.peer, *key = o.key, *out = o.out;
    const char *expect_s = o.expect;
    bool json = o.json, pin = !o.no_pin, repro = o.repro;
    if (first < argc)
        return cli_usage_error("run", "unexpected argument '%s'", argv[first]);
    if (!mixname && !o.model.model)
        return cli_usage_error("run", "--mix or --model is required (try --list)");

    struct ft_err err = {0};
    struct thresholds ex = {0};
    if (expect_s && thresholds_parse(expect_s, &ex, &err) < 0)
        return cli_usage_error("run", "%s", err.msg);
    struct score_opts score = {0};
    if (o.step_budget && o.target_tps)
        return cli_usage_error("run", "--step-budget and --target-tps both set the step "
                                      "budget: give one");
    if ((o.slo && score_slo_parse(o.slo, &score, &err) < 0) ||
        (o.step_budget && score_set_step_budget(&score, o.step_budget, &err) < 0) ||
        (o.target_tps && score_set_target_tps(&score, o.target_tps, &err) < 0))
        return cli_usage_error("run", "%s", err.msg);
    struct mix mix;
    int brc = build_mix(&o, &mix);
    if (brc)
        return brc;
    if ((ex.n && thresholds_check_mix(&ex, &mix, &err) < 0) ||
        score_slo_check_mix(&score, &mix, &err) < 0) {
        mix_free(&mix);
        return cli_usage_error("run", "%s", err.msg);
    }
    /* Know before the test runs that its results can be saved and its peers answer. */
    if ((out && cli_check_output(out) != CLI_OK) ||
        (o.trace && cli_check_output(o.trace) != CLI_OK)) {
        mix_free(&mix);
        return CLI_CANTCREAT;
    }
    if (runner_validate(&mix, &err) < 0) {
        mix_free(&mix);
        return cli_fail(&err);
    }
    /* Process-long: the runner reads it at the end of the run. */
    static struct path_sites sites;
    if (o.sites) {
        char *text = NULL;
        size_t len = 0;
        int src = jsonutil_slurp(o.sites, &text, &len, 16u << 20, &err);
        if (src == 0)
            src = path_sites_parse(text, o.sites, &sites, &err);
        free(text);
        if (src < 0) {
            mix_free(&mix);
            return cli_fail(&err);
        }
    }
    int blrc = o.baseline ? cli_baseline_check(o.baseline) : 0;
    if (blrc) {
        mix_free(&mix);
        return blrc;
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

    struct runner_opts ro = {.mix = &mix,
                             .peer_override = peer,
                             .key_file = key,
                             .topo = topo,
                             .pin = pin,
                             .site = o.site,
                             .sites = o.sites ? &sites : NULL,
                             .sites_file = o.sites,
                             .score = &score,
                             .trace_ops = o.trace != NULL};
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
        fprintf(stderr, "\r%-*s\r", progress_width(), "");
    const cJSON *run_res = runner_wait(r);
    const struct results_doc *run_doc = runner_results(r);
    int rc = runner_status(r) ? CLI_FAILED : CLI_OK;
    struct results_doc repro_doc = {0};
    cJSON *repro_res = NULL;
    if (run_doc) {
        /* The judgement (causes, reference rows) goes into the document it prints and saves. */
        results_doc_copy(run_doc, &repro_doc);
        if (repro_doc.nruns > 0) {
            if (repro)
                results_doc_make_reproducible(&repro_doc);
            cli_judge_fill(&repro_doc.runs[0], topo);
            repro_res = results_json_write(&repro_doc);
        }
    }
    const cJSON *res = repro_res ? repro_res : run_res;
    if (out && res && cli_save_json(res, out, "results") != CLI_OK)
        rc = CLI_CANTCREAT;
    const struct results_run *traced = repro_res                   ? &repro_doc.runs[0]
                                       : run_doc && run_doc->nruns ? &run_doc->runs[0]
                                                                   : NULL;
    if (o.trace && traced) {
        struct trace_ops ops = {.mix = &mix};
        runner_trace_ops(r, trace_op, &ops);
        cJSON *tr = report_trace_run_ops(traced, ops.v, ops.n);
        free(ops.v);
        if (!tr || cli_save_json(tr, o.trace, "trace") != CLI_OK)
            rc = CLI_CANTCREAT;
        cJSON_Delete(tr);
    }
    if (json && res) {
        char *text = cJSON_Print(res);
        puts(text);
        cJSON_free(text);
    } else if (res) {
        struct strbuf sb;
        strbuf_init(&sb);
        const struct results_run *shown = repro_res ? &repro_doc.runs[0] : &run_doc->runs[0];
        run_text_summary(&sb, shown);
        judge_text_summary(&sb, shown);
        cli_baseline_show(&sb, shown, o.baseline);
        if (out && rc != CLI_CANTCREAT)
            strbuf_printf(&sb, "\nresults saved to %s\n", out);
        fputs(sb.s, stdout);
        strbuf_free(&sb);
    }
    /* A missed --slo is a violated threshold: one line per class on stderr, exit 1 (the
     * scoreboard judges the loaded phase, or the only one). */
    if (run_doc && slo_missed(&run_doc->runs[0].scoreboard) && rc == CLI_OK)
        rc = CLI_THRESHOLDS;
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
