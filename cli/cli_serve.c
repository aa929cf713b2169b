/* cli_serve: `fabtop serve`: the peer agent for `fabtop run --peer HOST[:PORT]`, with its
 * keys, allowlist, caps and NCCL permission from the command line; runs until
 * SIGINT/SIGTERM and writes one line per session start and end, refusals (summarised under
 * a flood) to standard error or --log FILE. */
#include "cli/cli.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_opts.h"
#include "common/strbuf.h"
#include "engine/counters/counters.h"
#include "engine/doctor/doctor.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/peer/metrics_http.h"
#include "engine/xport/xport.h"
#include "text/prom_text.h"

#define MAX_ALLOW AGENT_MAX_ALLOW

/* Is f the journal's stream? systemd sets JOURNAL_STREAM to "DEVICE:INODE" of the stream
 * stderr is connected to (systemd.exec(5)); the journal stamps each line itself. */
static bool is_journal(FILE *f)
{
    const char *js = getenv("JOURNAL_STREAM");
    struct stat st;
    unsigned long long dev, ino;
    return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(fileno(f), &st) == 0 &&
           (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static void log_line(void *arg, const char *line)
{
    FILE *f = arg;
    if (is_journal(f)) {
        fprintf(f, "%s\n", line);
        fflush(f);
        return;
    }
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(f, "%s fabtop serve: %s\n", ts, line);
    fflush(f);
}

/* What the command line sets (the agent's configuration is filled from it). */
struct serve_args {
    struct agent_cfg cfg;
    struct cli_list keys, allow, nccl_files;
    bool nccl_all;
    const char *gen_key, *log_file;
    const char *site; /* --site */
    double max_rate, max_duration, max_fault;
    long max_sessions, max_streams, max_flows;
    bool with_parent; /* --exit-with-parent */
    /* --metrics ADDR[:PORT] */
    bool metrics;
    char metrics_host[256];
    uint16_t metrics_port;
};

/* --listen ADDR[:PORT] */
static int parse_listen(const struct cli_opt *o, const char *arg, void *args, struct cli_parse *p)
{
    (void)o;
    (void)p;
    struct agent_cfg *cfg = &((struct serve_args *)args)->cfg;
    struct ft_err err = {0};
    if (channel_split_host_port(arg, CHANNEL_DEFAULT_PORT, cfg->listen, sizeof(cfg->listen),
                                &cfg->port, &err) < 0)
        return cli_usage_error("serve", "--listen: %s", err.msg);
    return 0;
}

/* --metrics ADDR[:PORT] ("" host: every address) */
static int parse_metrics(const struct cli_opt *o, const char *arg, void *args, struct cli_parse *p)
{
    (void)o;
    (void)p;
    struct serve_args *a = args;
    struct ft_err err = {0};
    if (channel_split_host_port(arg, METRICS_HTTP_DEFAULT_PORT, a->metrics_host,
                                sizeof(a->metrics_host), &a->metrics_port, &err) < 0)
        return cli_usage_error("serve", "--metrics: %s", err.msg);
    a->metrics = true;
    return 0;
}

/* --allow-nccl alone: to every key (--allow-nccl=FILE: to that key, the list). */
static int allow_nccl_all(const struct cli_opt *o, const char *arg, void *args, struct cli_parse *p)
{
    (void)o;
    (void)p;
    if (!arg)
        ((struct serve_args *)args)->nccl_all = true;
    return 0;
}

#define A(f) offsetof(struct serve_args, f)
static const struct cli_opt serve_opts[] = {
    {"listen", 0, CLI_ARG_REQUIRED, "ADDR[:PORT]",
     "where to listen (default: all addresses, port {default};\n':PORT' all addresses, "
     "'[::1]:7470' for IPv6)",
     CLI_V_CUSTOM, CLI_C_HOST, .def = CHANNEL_DEFAULT_PORT, .parse = parse_listen},
    {"site", 0, CLI_ARG_REQUIRED, "NAME",
     "this agent's site label, reported to clients for the\npath's class (docs/diagnosis.md)",
     CLI_V_STRING, .off = A(site)},
    {"key-file", 0, CLI_ARG_REQUIRED, "FILE",
     "a pre-shared key (default: FABTOP_KEY in hex, then\n$CREDENTIALS_DIRECTORY/key (a "
     "systemd credential),\nthen $XDG_CONFIG_HOME/fabtop/key or ~/.config/fabtop/key);\nrepeat for "
     "several client keys (up to {max}), each with\nits own "
     "rate cap",
     CLI_V_LIST, CLI_C_FILE, .max_count = AGENT_MAX_KEYS, .bad = "at most %d --key-file entries",
     .off = A(keys)},
    {"allow", 0, CLI_ARG_REQUIRED, "CIDR",
     "accept clients only from CIDR, IPv4 or IPv6 (repeatable;\ndefault: any client that has "
     "the key)",
     CLI_V_LIST, .max_count = MAX_ALLOW, .bad = "at most %d --allow entries", .off = A(allow)},
    {"allow-nccl", 0, CLI_ARG_OPTIONAL, "[=FILE]",
     "serve NCCL collectives (off by default: NCCL's ranks\nconnect to addresses the client's "
     "ranks advertise); to\nevery key, or =FILE only to that --key-file's key\n(repeatable)",
     CLI_V_LIST, CLI_C_FILE, .max_count = AGENT_MAX_KEYS,
     .bad = "at most %d --allow-nccl=FILE entries", .off = A(nccl_files), .parse = allow_nccl_all},
    {"max-rate", 0, CLI_ARG_REQUIRED, "GBPS",
     "Gb/s per client key: every flow of every session with\nthat key together (default "
     "{default})",
     CLI_V_NUMBER, .min = 0.001, .max = 100000, .def = AGENT_DEF_MAX_RATE_GBPS, .off = A(max_rate)},
    {"max-duration", 0, CLI_ARG_REQUIRED, "S", "seconds per test (default {default})", CLI_V_NUMBER,
     .min = 0.1, .max = 86400, .def = AGENT_DEF_MAX_DURATION_S, .off = A(max_duration)},
    {"max-sessions", 0, CLI_ARG_REQUIRED, "N", "sessions at once (default {default})",
     CLI_V_INTEGER, .min = 1, .max = 4096, .def = AGENT_DEF_MAX_SESSIONS, .off = A(max_sessions)},
    {"max-streams", 0, CLI_ARG_REQUIRED, "N", "connections per flow (default {default})",
     CLI_V_INTEGER, .min = 1, .max = 4096, .def = AGENT_DEF_MAX_STREAMS, .off = A(max_streams)},
    {"max-flows", 0, CLI_ARG_REQUIRED, "N",
     "flows per session (default {default}; a run opens one session\nper flow)", CLI_V_INTEGER,
     .min = 1, .max = 64, .def = AGENT_DEF_MAX_FLOWS, .off = A(max_flows)},
    {"max-fault", 0, CLI_ARG_REQUIRED, "S",
     "longest fault a client may inject into its own test\nsessions (`fabtop drill`; default "
     "{default}; 0 refuses all)",
     CLI_V_NUMBER, .min = 0, .max = 3600, .def = AGENT_DEF_MAX_FAULT_S, .off = A(max_fault)},
    {"gen-key", 0, CLI_ARG_REQUIRED, "FILE",
     "write a new random key to FILE (mode 0600) and exit;\ncopy the same file to every peer",
     CLI_V_STRING, CLI_C_FILE, .off = A(gen_key)},
    {"log", 0, CLI_ARG_REQUIRED, "FILE", "append the session lines to FILE instead of stderr",
     CLI_V_STRING, CLI_C_FILE, .off = A(log_file)},
    {"metrics", 0, CLI_ARG_REQUIRED, "ADDR[:PORT]",
     "also serve Prometheus metrics over HTTP at\nhttp://ADDR:PORT/metrics (port {default}; no "
     "key: bind it\nto a management address): the agent's sessions and\nthis host's counters "
     "node_exporter leaves out",
     CLI_V_CUSTOM, CLI_C_HOST, .def = METRICS_HTTP_DEFAULT_PORT, .parse = parse_metrics},
    {"exit-with-parent", 0, CLI_ARG_NONE, NULL,
     "stop when the process that started this one ends\n(a drill's victim agent: none outlives "
     "its drill)",
     CLI_V_SET, .off = A(with_parent)},
};
#undef A

const struct cli_command cli_serve_command = {
    .name = "serve",
    .summary = "peer agent for 'fabtop run --peer' (authenticated, capped)",
    .synopsis = "Usage: fabtop serve [OPTIONS]\n"
                "Run the peer agent: accept authenticated test sessions from\n"
                "'fabtop run --peer HOST[:PORT]'. Test traffic only ever goes to the client's own\n"
                "address (TCP) or where the client shows it receives (verbs: a nonce over each\n"
                "queue pair), within the caps below, which no client can raise.\n",
    .opts = serve_opts,
    .nopts = sizeof(serve_opts) / sizeof(serve_opts[0]),
    .epilogue = "Exit status: 0 stopped by SIGINT or SIGTERM, 64 usage, 65 malformed key,\n"
                "66 key file missing, 69 cannot listen, 73 cannot create the key file,\n"
                "77 key file permissions.\n"
                "--metrics: GET /metrics in the Prometheus text format, each scrape read fresh: "
                "\nfabtop_agent_* (sessions now, the limit, admitted and refused since the\n"
                "start, the start time) and the counters `fabtop counters --prometheus --snmp\n"
                "--qdisc --ethtool` prints (docs/prometheus.md).\n",
    .help_col = 24,
    .main = cli_serve_main,
};

static int serve(struct serve_args *o, int nrest, char **rest);

/* What a scrape of --metrics reads: the agent (set once it listens) and this host's
 * counters. Scrapes come one at a time (engine/peer/metrics_http.h), so nothing here
 * needs a lock. */
struct serve_metrics {
    struct agent *a;
    struct counters_set *cs;
    double start_s; /* the wall-clock start, for fabtop_agent_start_time_seconds */
};

static void agent_gauge(struct prom_text *p, const char *name, enum prom_type t, const char *help,
                        double v)
{
    prom_text_add(p, name, "", t, help, NULL, 0, v);
}

static int render_metrics(void *ctx, struct strbuf *out, struct ft_err *err)
{
    struct serve_metrics *m = ctx;
    struct prom_text *p = prom_text_new();
    if (m->a) {
        struct agent_stats st;
        agent_get_stats(m->a, &st);
        agent_gauge(p, "fabtop_agent_sessions", PROM_GAUGE, "Authenticated test sessions now.",
                    st.active);
        agent_gauge(p, "fabtop_agent_max_sessions", PROM_GAUGE,
                    "Sessions the agent admits at once (fabtop serve --max-sessions).", st.max);
        agent_gauge(p, "fabtop_agent_sessions_admitted_total", PROM_COUNTER,
                    "Test sessions admitted since the agent started.", (double)st.admitted_total);
        agent_gauge(p, "fabtop_agent_connections_refused_total", PROM_COUNTER,
                    "Connections refused since the agent started (bad key, address not allowed, "
                    "busy, handshake cut off).",
                    (double)st.refused_total);
        agent_gauge(p, "fabtop_agent_start_time_seconds", PROM_GAUGE,
                    "When the agent started, seconds since the epoch.", m->start_s);
    }
    if (m->cs) {
        if (counters_set_sample_all(m->cs) < 0) {
            prom_text_free(p);
            return ft_err_set(err, -EIO, "no counter of this host is readable now");
        }
        int n;
        const struct counters_value *v = counters_set_values(m->cs, &n);
        struct prom_counters_opts po = {0};
        prom_text_counters(p, v, n, &po);
    }
    prom_text_render(p, out);
    prom_text_free(p);
    return 0;
}

int cli_serve_main(int argc, char **argv)
{
    struct serve_args o = {0};
    agent_cfg_defaults(&o.cfg);
    o.cfg.port = CHANNEL_DEFAULT_PORT;
    o.max_rate = o.cfg.max_rate_gbps;
    o.max_duration = o.cfg.max_duration_s;
    o.max_fault = o.cfg.max_fault_s;
    o.max_sessions = o.cfg.max_sessions;
    o.max_streams = o.cfg.max_streams;
    o.max_flows = o.cfg.max_flows;
    int first, prc = cli_parse_args(&cli_serve_command, argc, argv, &o, &first);
    if (prc >= 0)
        return prc;
    int rc = serve(&o, argc - first, argv + first);
    cli_args_free(&cli_serve_command, &o);
    return rc;
}

/* Serve per o until SIGINT or SIGTERM; the exit status. */
static int serve(struct serve_args *o, int nrest, char **rest)
{
    struct agent_cfg cfg = o->cfg;
    cfg.max_rate_gbps = o->max_rate;
    cfg.max_duration_s = o->max_duration;
    cfg.max_fault_s = o->max_fault;
    cfg.max_sessions = (int)o->max_sessions;
    cfg.max_streams = (int)o->max_streams;
    cfg.max_flows = (int)o->max_flows;
    cfg.site = o->site;
    const char *const *key_files = o->keys.v, *const *nccl_files = o->nccl_files.v;
    const char **allow = o->allow.v;
    const char *gen_key = o->gen_key, *log_file = o->log_file;
    int nallow = o->allow.n, nkey_files = o->keys.n, nnccl = o->nccl_files.n;
    bool nccl_all = o->nccl_all;
    if (nrest > 0)
        return cli_usage_error("serve", "unexpected argument '%s'", rest[0]);

    struct ft_err err = {0};
    if (gen_key) {
        if (nkey_files || nallow || log_file)
            return cli_usage_error("serve", "--gen-key only writes a key; run 'fabtop serve' "
                                            "again to serve");
        if (channel_key_generate_file(gen_key, &err) < 0) {
            fprintf(stderr, "fabtop: %s\n", err.msg);
            return CLI_CANTCREAT;
        }
        printf("Wrote a new key to %s (mode 0600); copy it to every peer.\n", gen_key);
        return CLI_OK;
    }
    /* --allow-nccl=FILE names one of the --key-file's. */
    for (int i = 0; i < nnccl; i++) {
        int k = 0;
        while (k < nkey_files && strcmp(key_files[k], nccl_files[i]))
            k++;
        if (k == nkey_files)
            return cli_usage_error("serve", "--allow-nccl=%s: not one of the --key-file's",
                                   nccl_files[i]);
    }
    char fps[AGENT_MAX_KEYS][17];
    int nkeys = nkey_files ? nkey_files : 1;
    for (int i = 0; i < nkeys; i++) {
        struct agent_key *k = &cfg.keys[i];
        if (channel_key_load(nkey_files ? key_files[i] : NULL, &k->key, &err) < 0) {
            for (int j = 0; j < i; j++)
                channel_key_wipe(&cfg.keys[j].key);
            return cli_fail(&err);
        }
        k->allow_nccl = nccl_all;
        for (int j = 0; j < nnccl; j++)
            k->allow_nccl |= !strcmp(nccl_files[j], key_files[i]);
        channel_key_fingerprint(&k->key, fps[i]);
    }
    cfg.nkeys = nkeys;
    cfg.allow = allow;
    cfg.nallow = nallow;

    FILE *logf = stderr;
    if (log_file) {
        logf = fopen(log_file, "ae");
        if (!logf) {
            int e = errno;
            for (int i = 0; i < nkeys; i++)
                channel_key_wipe(&cfg.keys[i].key);
            fprintf(stderr, "fabtop: %s: cannot open the log file: %s\n", log_file, strerror(e));
            return CLI_CANTCREAT;
        }
    }
    cfg.log = log_line;
    cfg.log_arg = logf;

    /* A long-running process of many short threads: bound glibc's per-thread arenas (8 per
     * core by default, each keeping what it once held; mallopt(3)). The big data buffers come
     * from mmap anyway (common/pagebuf.h). */
    mallopt(M_ARENA_MAX, 4);

    /* Every thread inherits the blocked signals; this one waits for them. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* SIGTERM when the starting thread's process goes (prctl(2) PR_SET_PDEATHSIG), waited for
     * below as any SIGTERM; a parent already gone leaves us to init: stop at once. */
    pid_t parent = getppid();
    if (o->with_parent &&
        (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent || parent == 1)) {
        for (int i = 0; i < nkeys; i++)
            channel_key_wipe(&cfg.keys[i].key);
        if (logf != stderr)
            fclose(logf);
        return CLI_OK;
    }

    int nh = 0;
    const struct agent_handler *const *xh = xport_agent_handlers(&nh);
    /* The transports' handlers, then the handshake doctor's (fabtop doctor). */
    const struct agent_handler *handlers[72];
    int nall = 0;
    for (int i = 0; i < nh && nall < 70; i++)
        handlers[nall++] = xh[i];
    handlers[nall++] = &doctor_facts_handler;
    handlers[nall++] = &doctor_probe_handler;
    struct agent *a;
    int rc = agent_start(&cfg, handlers, nall, &a, &err);
    for (int i = 0; i < nkeys; i++)
        channel_key_wipe(&cfg.keys[i].key);
    if (rc < 0) {
        fprintf(stderr, "fabtop: %s\n", err.msg);
        if (logf != stderr)
            fclose(logf);
        return rc == -EINVAL ? CLI_USAGE : CLI_UNAVAILABLE;
    }
    /* --metrics: this host's counters (a set that cannot open leaves the agent's own
     * metrics), then the endpoint; one that cannot listen stops the agent (69). */
    struct serve_metrics sm = {.a = a, .start_s = (double)time(NULL)};
    struct metrics_http *mh = NULL;
    if (o->metrics) {
        struct counters_opts co = {.with_snmp = true, .with_qdisc = true, .with_ethtool = true};
        struct ft_err cerr = {0};
        if (counters_set_open(&co, &sm.cs, &cerr) < 0) {
            char why[sizeof(cerr.msg) + 64];
            snprintf(why, sizeof(why), "--metrics: no host counters (%s); serving the agent's",
                     cerr.msg);
            log_line(logf, why);
            sm.cs = NULL;
        }
        if (metrics_http_start(o->metrics_host, o->metrics_port, render_metrics, &sm, &mh, &err) <
            0) {
            fprintf(stderr, "fabtop: %s\n", err.msg);
            agent_stop(a);
            if (sm.cs)
                counters_set_close(sm.cs);
            if (logf != stderr)
                fclose(logf);
            return CLI_UNAVAILABLE;
        }
    }
    char clients[1024] = "any with the key";
    for (int i = 0; i < nallow; i++) {
        size_t n = i ? strlen(clients) : 0;
        snprintf(clients + n, sizeof(clients) - n, "%s%s", i ? ", " : "", allow[i]);
    }
    char keys[400] = "", nccl[400] = "";
    int nn = 0;
    for (int i = 0; i < nkeys; i++) {
        size_t n = strlen(keys);
        snprintf(keys + n, sizeof(keys) - n, "%s%s", i ? ", " : "", fps[i]);
        if (cfg.keys[i].allow_nccl) {
            n = strlen(nccl);
            snprintf(nccl + n, sizeof(nccl) - n, "%s%s", nn++ ? ", " : "", fps[i]);
        }
    }
    char line[1400];
    snprintf(line, sizeof(line),
             "listening on %s: at most %d sessions, %g Gb/s per client key, %g s per test, "
             "%d connections per flow, %d flows per session, faults up to %g s; clients: %s; key "
             "fingerprint%s %s; NCCL: %s",
             agent_listen_desc(a), cfg.max_sessions, cfg.max_rate_gbps, cfg.max_duration_s,
             cfg.max_streams, cfg.max_flows ? cfg.max_flows : AGENT_DEF_MAX_FLOWS, cfg.max_fault_s,
             clients, nkeys > 1 ? "s" : "", keys,
             nn == 0       ? "off (--allow-nccl)"
             : nn == nkeys ? "every key"
                           : nccl);
    log_line(logf, line);
    if (mh) {
        snprintf(line, sizeof(line), "metrics on http://%s/metrics", metrics_http_desc(mh));
        log_line(logf, line);
    }

    int sig = 0;
    while (sigwait(&set, &sig) != 0)
        ;
    snprintf(line, sizeof(line), "%s: stopping (%d session%s active)",
             sig == SIGINT ? "SIGINT" : "SIGTERM", agent_sessions(a),
             agent_sessions(a) == 1 ? "" : "s");
    log_line(logf, line);
    metrics_http_stop(mh);
    if (sm.cs)
        counters_set_close(sm.cs);
    agent_stop(a);
    log_line(logf, "stopped");
    if (logf != stderr)
        fclose(logf);
    return CLI_OK;
}
