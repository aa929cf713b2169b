/* cli_serve: `fabtop serve`: the peer agent for `fabtop run --peer HOST[:PORT]`, with its
 * keys, allowlist, caps and NCCL permission from the command line; runs until
 * SIGINT/SIGTERM and writes one line per session start and end, refusals (summarised under
 * a flood) to standard error or --log FILE. */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/xport/xport.h"

#define MAX_ALLOW AGENT_MAX_ALLOW

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: fabtop serve [OPTIONS]\n"
            "Run the peer agent: accept authenticated test sessions from\n"
            "'fabtop run --peer HOST[:PORT]'. Test traffic only ever goes to the client's own\n"
            "address (TCP) or where the client shows it receives (verbs: a nonce over each\n"
            "queue pair), within the caps below, which no client can raise.\n"
            "\n"
            "  --listen ADDR[:PORT]  where to listen (default: all addresses, port %d;\n"
            "                        ':PORT' all addresses, '[::1]:7470' for IPv6)\n"
            "  --key-file FILE       a pre-shared key (default: FABTOP_KEY in hex, then\n"
            "                        $XDG_CONFIG_HOME/fabtop/key or ~/.config/fabtop/key);\n"
            "                        repeat for several client keys (up to %d), each with\n"
            "                        its own rate cap\n"
            "  --allow CIDR          accept clients only from CIDR, IPv4 or IPv6 (repeatable;\n"
            "                        default: any client that has the key)\n"
            "  --allow-nccl[=FILE]   serve NCCL collectives (off by default: NCCL's ranks\n"
            "                        connect to addresses the client's ranks advertise); to\n"
            "                        every key, or =FILE only to that --key-file's key\n"
            "                        (repeatable)\n"
            "  --max-rate GBPS       Gb/s per client key: every flow of every session with\n"
            "                        that key together (default %g)\n"
            "  --max-duration S      seconds per test (default %g)\n"
            "  --max-sessions N      sessions at once (default %d)\n"
            "  --max-streams N       connections per flow (default %d)\n"
            "  --max-flows N         flows per session (default %d; a run opens one session\n"
            "                        per flow)\n"
            "  --gen-key FILE        write a new random key to FILE (mode 0600) and exit;\n"
            "                        copy the same file to every peer\n"
            "  --log FILE            append the session lines to FILE instead of stderr\n"
            "  -h, --help            this help\n"
            "  -V, --version         print the version\n"
            "\n"
            "Exit status: 0 stopped by SIGINT or SIGTERM, 64 usage, 65 malformed key,\n"
            "66 key file missing, 69 cannot listen, 73 cannot create the key file,\n"
            "77 key file permissions.\n",
            CHANNEL_DEFAULT_PORT, AGENT_MAX_KEYS, AGENT_DEF_MAX_RATE_GBPS, AGENT_DEF_MAX_DURATION_S,
            AGENT_DEF_MAX_SESSIONS, AGENT_DEF_MAX_STREAMS, AGENT_DEF_MAX_FLOWS);
}

static void log_line(void *arg, const char *line)
{
    FILE *f = arg;
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(f, "%s fabtop serve: %s\n", ts, line);
    fflush(f);
}

/* Parse an option's number; -1 after printing the usage error. */
static int parse_num(const char *opt, const char *s, double lo, double hi, bool integer,
                     double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v >= lo && v <= hi) || (integer && v != (double)(long)v)) {
        cli_usage_error("serve", "%s takes %s from %g to %g, not '%s'", opt,
                        integer ? "a whole number" : "a number", lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_serve_main(int argc, char **argv)
{
    static const struct option opts[] = {{"listen", required_argument, NULL, 'l'},
                                         {"key-file", required_argument, NULL, 'k'},
                                         {"allow", required_argument, NULL, 'a'},
                                         {"max-rate", required_argument, NULL, 'r'},
                                         {"max-duration", required_argument, NULL, 'd'},
                                         {"max-sessions", required_argument, NULL, 's'},
                                         {"max-streams", required_argument, NULL, 'S'},
                                         {"max-flows", required_argument, NULL, 'F'},
                                         {"allow-nccl", optional_argument, NULL, 'n'},
                                         {"gen-key", required_argument, NULL, 'g'},
                                         {"log", required_argument, NULL, 'L'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"version", no_argument, NULL, 'V'},
                                         {NULL, 0, NULL, 0}};
    static const char shortopts[] = "hV";
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    cfg.port = CHANNEL_DEFAULT_PORT;
    const char *key_files[AGENT_MAX_KEYS], *nccl_files[AGENT_MAX_KEYS],
        *gen_key = NULL, *log_file = NULL, *allow[MAX_ALLOW];
    int nallow = 0, nkey_files = 0, nnccl = 0;
    bool nccl_all = false;
    double v;
    int c;
    optind = 1;
    opterr = 0; /* report bad options ourselves, in one line */
    while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        switch (c) {
        case 'l': {
            struct ft_err err = {0};
            if (channel_split_host_port(optarg, CHANNEL_DEFAULT_PORT, cfg.listen,
                                        sizeof(cfg.listen), &cfg.port, &err) < 0)
                return cli_usage_error("serve", "--listen: %s", err.msg);
            break;
        }
        case 'k':
            if (nkey_files == AGENT_MAX_KEYS)
                return cli_usage_error("serve", "at most %d --key-file entries", AGENT_MAX_KEYS);
            key_files[nkey_files++] = optarg;
            break;
        case 'n':
            if (!optarg)
                nccl_all = true;
            else if (nnccl == AGENT_MAX_KEYS)
                return cli_usage_error("serve", "at most %d --allow-nccl=FILE entries",
                                       AGENT_MAX_KEYS);
            else
                nccl_files[nnccl++] = optarg;
            break;
        case 'F':
            if (parse_num("--max-flows", optarg, 1, 64, true, &v) < 0)
                return CLI_USAGE;
            cfg.max_flows = (int)v;
            break;
        case 'a':
            if (nallow == MAX_ALLOW)
                return cli_usage_error("serve", "at most %d --allow entries", MAX_ALLOW);
            allow[nallow++] = optarg;
            break;
        case 'r':
            if (parse_num("--max-rate", optarg, 0.001, 100000, false, &v) < 0)
                return CLI_USAGE;
            cfg.max_rate_gbps = v;
            break;
        case 'd':
            if (parse_num("--max-duration", optarg, 0.1, 86400, false, &v) < 0)
                return CLI_USAGE;
            cfg.max_duration_s = v;
            break;
        case 's':
            if (parse_num("--max-sessions", optarg, 1, 4096, true, &v) < 0)
                return CLI_USAGE;
            cfg.max_sessions = (int)v;
            break;
        case 'S':
            if (parse_num("--max-streams", optarg, 1, 4096, true, &v) < 0)
                return CLI_USAGE;
            cfg.max_streams = (int)v;
            break;
        case 'g':
            gen_key = optarg;
            break;
        case 'L':
            log_file = optarg;
            break;
        case 'h':
            usage(stdout);
            return CLI_OK;
        case 'V':
            cli_print_version();
            return CLI_OK;
        default:
            return cli_bad_option("serve", argv, shortopts);
        }
    }
    if (optind < argc)
        return cli_usage_error("serve", "unexpected argument '%s'", argv[optind]);

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

    int nh = 0;
    const struct agent_handler *const *handlers = xport_agent_handlers(&nh);
    struct agent *a;
    int rc = agent_start(&cfg, handlers, nh, &a, &err);
    for (int i = 0; i < nkeys; i++)
        channel_key_wipe(&cfg.keys[i].key);
    if (rc < 0) {
        fprintf(stderr, "fabtop: %s\n", err.msg);
        if (logf != stderr)
            fclose(logf);
        return rc == -EINVAL ? CLI_USAGE : CLI_UNAVAILABLE;
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
             "%d connections per flow, %d flows per session; clients: %s; key fingerprint%s "
             "%s; NCCL: %s",
             agent_listen_desc(a), cfg.max_sessions, cfg.max_rate_gbps, cfg.max_duration_s,
             cfg.max_streams, cfg.max_flows ? cfg.max_flows : AGENT_DEF_MAX_FLOWS, clients,
             nkeys > 1 ? "s" : "", keys,
             nn == 0       ? "off (--allow-nccl)"
             : nn == nkeys ? "every key"
                           : nccl);
    log_line(logf, line);

    int sig = 0;
    while (sigwait(&set, &sig) != 0)
        ;
    snprintf(line, sizeof(line), "%s: stopping (%d session%s active)",
             sig == SIGINT ? "SIGINT" : "SIGTERM", agent_sessions(a),
             agent_sessions(a) == 1 ? "" : "s");
    log_line(logf, line);
    agent_stop(a);
    log_line(logf, "stopped");
    if (logf != stderr)
        fclose(logf);
    return CLI_OK;
}
