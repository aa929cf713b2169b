/* cli_counters: `fabtop counters`: congestion, loss, error and traffic counters of this
 * node's RDMA ports and netdevs (plus ethtool, qdisc and snmp on request), grouped, with
 * units, rates per second, n/a, "saturated" and "reset"; --watch redraws every interval. */
#include "cli/cli.h"

#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli_opts.h"
#include "common/xalloc.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "engine/counters/counters.h"
#include "text/prom_text.h"

#define MAX_PORTS 64

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static bool parse_secs(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || v < 0.05 || v > 3600)
        return false;
    *out = v;
    return true;
}

/* What the command line sets. */
struct counters_args {
    struct counters_opts co;
    struct cli_list ports;
    bool watch, json, all, prometheus, overlap;
    double interval;
    long count;
    const char *out;
    const char *textfile;
};

/* The file --textfile writes in its directory. */
#define TEXTFILE_NAME "fabtop.prom"

/* --watch=SEC, or --watch SEC when the next word is a number. */
static int parse_watch(const struct cli_opt *o, const char *arg, void *args, struct cli_parse *p)
{
    (void)o;
    struct counters_args *c = args;
    c->watch = true;
    if (arg) {
        if (!parse_secs(arg, &c->interval))
            return cli_usage_error("counters", "--watch takes seconds from 0.05 to 3600, not '%s'",
                                   arg);
    } else if (optind < p->argc && parse_secs(p->argv[optind], &c->interval)) {
        optind++;
    }
    return 0;
}

/* --port DEV:N|DEV|NETDEV (repeatable): not empty. */
static int check_port(const struct cli_opt *o, const char *arg, void *args, struct cli_parse *p)
{
    (void)o;
    (void)args;
    (void)p;
    if (!*arg)
        return cli_usage_error("counters", "--port needs DEV:N, DEV or NETDEV");
    return 0;
}

#define A(f) offsetof(struct counters_args, f)
static const struct cli_opt counters_opts[] = {
    {"watch", 0, CLI_ARG_OPTIONAL, " [SEC]",
     "redraw every SEC seconds (default 1) with rates and growth\nsince the start; Ctrl-C ends "
     "it",
     CLI_V_CUSTOM, .min = 0.05, .max = 3600, .def = 1, .parse = parse_watch},
    {"count", 0, CLI_ARG_REQUIRED, "N", "with --watch: stop after N redraws", CLI_V_INTEGER,
     .min = 1, .max = 1e15, .bad = "--count takes a positive number, not '%s'", .off = A(count)},
    {"port", 0, CLI_ARG_REQUIRED, "DEV:N|NETDEV",
     "only this RDMA port (mlx5_0:1), device (mlx5_0) or netdev\n(eth0); repeat it for more",
     CLI_V_LIST, .max_count = MAX_PORTS, .bad = "at most %d --port options", .off = A(ports),
     .parse = check_port},
    {"snmp", 0, CLI_ARG_NONE, NULL,
     "add /proc/net/snmp and netstat (TCP retransmissions,\ntimeouts, ECN) of this network "
     "namespace",
     CLI_V_SET, .off = A(co.with_snmp)},
    {"qdisc", 0, CLI_ARG_NONE, NULL, "add qdisc statistics (backlog, drops, overlimits)", CLI_V_SET,
     .off = A(co.with_qdisc)},
    {"ethtool", 0, CLI_ARG_NONE, NULL, "add ethtool statistics (PFC pause per priority, discards)",
     CLI_V_SET, .off = A(co.with_ethtool)},
    {"all", 0, CLI_ARG_NONE, NULL,
     "also show unknown counters that did not move; with\n--watch at a terminal: every counter by "
     "object, not\nthe table of what moved (sorted by rate, fitting the\nscreen)",
     CLI_V_SET, .off = A(all)},
    {"json", 0, CLI_ARG_NONE, NULL, "print JSON on stdout (with --watch: one line per redraw)",
     CLI_V_SET, .off = A(json)},
    {"output", 'o', CLI_ARG_REQUIRED, "FILE", "also save the JSON document to FILE (atomically)",
     CLI_V_STRING, CLI_C_FILE, .off = A(out)},
    {"prometheus", 0, CLI_ARG_NONE, NULL,
     "print the Prometheus text exposition format on stdout\n(with --watch: one exposition per "
     "redraw);\nwhat node_exporter exports already is left out",
     CLI_V_SET, .off = A(prometheus)},
    {"textfile", 0, CLI_ARG_REQUIRED, "DIR",
     "write the exposition to DIR/" TEXTFILE_NAME " atomically for\nnode_exporter's textfile "
     "collector (with --watch:\nat every interval)",
     CLI_V_STRING, CLI_C_DIR, .off = A(textfile)},
    {"overlap", 0, CLI_ARG_NONE, NULL,
     "with --prometheus or --textfile: also export what\nnode_exporter exports (IB "
     "PortCounters, netdev\nstatistics, its netstat fields), for hosts without it",
     CLI_V_SET, .off = A(overlap)},
    {"sysfs-root", 0, CLI_ARG_REQUIRED, "DIR",
     "read a captured /sys tree (DIR/sys/...), not the live one", CLI_V_STRING, CLI_C_DIR,
     .off = A(co.sys_root)},
    {"proc-root", 0, CLI_ARG_REQUIRED, "DIR", "read a captured /proc tree (DIR/proc/net/...)",
     CLI_V_STRING, CLI_C_DIR, .off = A(co.proc_root)},
};
#undef A

const struct cli_command cli_counters_command = {
    .name = "counters",
    .summary = "congestion, loss and error counters of ports and netdevs",
    .synopsis = "Usage: fabtop counters [OPTIONS]\n"
                "Congestion, loss/retransmission, error and traffic counters of this node's RDMA\n"
                "ports and netdevs, with their real semantics (widths, saturation, resets).\n",
    .opts = counters_opts,
    .nopts = sizeof(counters_opts) / sizeof(counters_opts[0]),
    .epilogue = "Counters are port-wide: they include all traffic on the port, not only yours.\n"
                "On a live system the counters are read twice, one interval apart, for rates;\n"
                "firmware-backed ones (IB PortCounters, mlx5 hw_counters) at most once a second.\n"
                "n/a: not readable (never shown as 0). saturated: stuck at its maximum, the true\n"
                "count is unknown. reset: it went down (cleared), no rate for that interval.\n"
                "IB data counters count 4-byte words; fabtop shows bytes.\n"
                "--prometheus and --textfile: base units (bytes, seconds), counters as counters\n"
                "(_total), gauges as gauges, fabtop_port_saturated 1 for a saturated\n"
                "counter; the metrics and what is left to node_exporter: docs/prometheus.md.\n"
                "\n"
                "Exit status: 0 ok, 64 usage, 66 no such port or no counters, 73 cannot write\n"
                "(-o FILE, or --textfile DIR missing, not a directory or not writable).\n",
    .help_col = 22,
    .main = cli_counters_main,
};

/* ---- text ---- */

/* 1234567 -> "1.23 M" (SI, 10^3 steps). */
static void si(double v, char *buf, size_t len)
{
    static const char *const pre[] = {"", "k", "M", "G", "T", "P", "E"};
    double a = v < 0 ? -v : v;
    int k = 0;
    while (a >= 1000 && k < 6) {
        a /= 1000;
        v /= 1000;
        k++;
    }
    if (k == 0)
        snprintf(buf, len, "%.*f ", v == (long long)v ? 0 : 1, v);
    else
        snprintf(buf, len, "%.2f %s", v, pre[k]);
}

/* A value with its unit: "4294967295 ticks", "32.16 MB". */
static void fmt_value(double v, const char *unit, char *buf, size_t len)
{
    char n[32];
    if (!strcmp(unit, "bytes")) {
        si(v, n, sizeof(n));
        snprintf(buf, len, "%sB", n);
    } else if (v == (long long)v && v < 1e15 && v > -1e15) {
        snprintf(buf, len, "%lld %s", (long long)v, unit);
    } else {
        si(v, n, sizeof(n));
        snprintf(buf, len, "%s%s", n, unit);
    }
}

/* A rate or a growth in the row's unit, which the value column names: "1.23 MB/s",
 * "12/s", "+4.10 k". */
static void fmt_short(double v, const char *unit, const char *pfx, const char *sfx, char *buf,
                      size_t len)
{
    char n[32];
    bool bytes = !strcmp(unit, "bytes");
    if (!bytes && v == (long long)v && v < 1e9)
        snprintf(n, sizeof(n), "%lld", (long long)v);
    else
        si(v, n, sizeof(n));
    size_t l = strlen(n);
    if (!bytes && l && n[l - 1] == ' ')
        n[l - 1] = '\0';
    snprintf(buf, len, "%s%s%s%s", pfx, n, bytes ? "B" : "", sfx);
}

static void row(struct strbuf *sb, const struct counters_value *v, bool watch)
{
    char val[48], rate[48], delta[48];
    if (!(v->valid & COUNTERS_V_VALUE))
        snprintf(val, sizeof(val), "n/a");
    else
        fmt_value(v->value, v->unit, val, sizeof(val));
    if (v->kind == COUNTERS_GAUGE) {
        snprintf(rate, sizeof(rate), "(level)");
        if (v->valid & COUNTERS_V_PEAK)
            fmt_short(v->peak, v->unit, "peak ", "", delta, sizeof(delta));
        else
            snprintf(delta, sizeof(delta), "n/a");
    } else {
        if (!(v->valid & COUNTERS_V_VALUE))
            snprintf(rate, sizeof(rate), "n/a");
        else if (v->saturated)
            snprintf(rate, sizeof(rate), "saturated");
        else if (v->reset)
            snprintf(rate, sizeof(rate), "reset");
        else if (!(v->valid & COUNTERS_V_RATE))
            snprintf(rate, sizeof(rate), "n/a");
        else
            fmt_short(v->rate, v->unit, "", "/s", rate, sizeof(rate));
        if (v->saturated)
            snprintf(delta, sizeof(delta), "saturated");
        else if (!(v->valid & COUNTERS_V_DELTA))
            snprintf(delta, sizeof(delta), "n/a");
        else
            fmt_short(v->delta, v->unit, "+", v->reset_since_mark ? " reset" : "", delta,
                      sizeof(delta));
    }
    bool alarm = v->error_like && (((v->valid & COUNTERS_V_RATE) && v->rate > 0) ||
                                   ((v->valid & COUNTERS_V_DELTA) && v->delta > 0));
    /* 80 columns with --watch: flags, name 30, value 19, rate 11, growth 12. */
    strbuf_printf(sb, "  %c%c %-30s %19s %11s", alarm ? '!' : ' ', v->known ? ' ' : '?', v->name,
                  val, rate);
    if (watch)
        strbuf_printf(sb, " %12s", delta);
    strbuf_add(sb, "\n");
}

static const enum counters_group group_order[] = {COUNTERS_CONGESTION, COUNTERS_LOSS,
                                                  COUNTERS_ERRORS, COUNTERS_TRAFFIC};

static void render(struct strbuf *sb, const struct counters_set *s, bool watch, bool all,
                   double interval, double since_s, bool rates_read)
{
    int n;
    const struct counters_value *v = counters_set_values(s, &n);
    const char *const *objs;
    int nobj = counters_set_objects(s, &objs);
    strbuf_printf(sb, "fabtop counters: %d objects, %d counters", nobj, n);
    if (rates_read)
        strbuf_printf(sb, ", rates over %.2f s", interval);
    if (watch)
        strbuf_printf(sb, ", growth over %.1f s", since_s);
    strbuf_add(sb, "\nPort-wide: each counter counts all traffic of its port or netdev.\n");
    if (!rates_read)
        strbuf_add(sb, "A captured tree: one reading, so no rates (--watch reads it again).\n");
    int hidden = 0;
    /* Objects in the order they were found; the counters of one object are contiguous. */
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && !strcmp(v[j].object, v[i].object))
            j++;
        int shown = 0;
        for (int k = i; k < j; k++)
            shown += all || counters_value_interesting(&v[k]);
        if (shown) {
            /* The object's description ("mlx5_0/1 (RDMA port, mlx5)"), else the source. */
            const char *desc = NULL;
            size_t ol = strlen(v[i].object);
            for (int k = 0; k < nobj && !desc; k++)
                if (!strncmp(objs[k], v[i].object, ol) && !strncmp(objs[k] + ol, " (", 2))
                    desc = objs[k];
            if (desc)
                strbuf_printf(sb, "\n%s\n", desc);
            else
                strbuf_printf(sb, "\n%s  (%s)\n", v[i].object, counters_source_str(v[i].source));
            strbuf_printf(sb, "     %-30s %19s %11s%s\n", "", "value", "rate",
                          watch ? "  since start" : "");
        }
        for (size_t g = 0; g < sizeof(group_order) / sizeof(group_order[0]); g++) {
            bool head = false;
            for (int k = i; k < j; k++) {
                if (v[k].group != group_order[g])
                    continue;
                if (!all && !counters_value_interesting(&v[k])) {
                    hidden++;
                    continue;
                }
                if (!head) {
                    strbuf_printf(sb, "  %s\n", counters_group_str(group_order[g]));
                    head = true;
                }
                row(sb, &v[k], watch);
            }
        }
        i = j;
    }
    if (hidden)
        strbuf_printf(
            sb, "\n(%d unknown counters that did not move are hidden; --all shows them)\n", hidden);
    const char *const *notes;
    int nn = counters_set_notes(s, &notes);
    if (nn)
        strbuf_add(sb, "\n");
    for (int i = 0; i < nn; i++)
        strbuf_printf(sb, "note: %s\n", notes[i]);
    strbuf_add(sb, "'!' an error-like counter that rose.\n'?' a counter fabtop does not know (its "
                   "group is guessed from its name).\nRates and growth are in the unit of the "
                   "value.\n");
}

/* ---- --watch at a terminal: what moved ---- */

/* Did the counter move over the last interval or since the start? */
static bool moved(const struct counters_value *v)
{
    if (v->setting || !(v->valid & COUNTERS_V_VALUE))
        return false;
    if (v->kind == COUNTERS_GAUGE)
        return v->value != 0;
    return v->saturated || v->reset || ((v->valid & COUNTERS_V_RATE) && v->rate != 0) ||
           ((v->valid & COUNTERS_V_DELTA) && v->delta != 0);
}

static bool alarmed(const struct counters_value *v)
{
    return v->error_like && (((v->valid & COUNTERS_V_RATE) && v->rate > 0) ||
                             ((v->valid & COUNTERS_V_DELTA) && v->delta > 0));
}

static int group_rank(enum counters_group g)
{
    for (size_t i = 0; i < sizeof(group_order) / sizeof(group_order[0]); i++)
        if (group_order[i] == g)
            return (int)i;
    return (int)(sizeof(group_order) / sizeof(group_order[0]));
}

/* Errors that rose first, then congestion, loss, errors, traffic; in each, the fastest first. */
static int moved_cmp(const void *a, const void *b)
{
    const struct counters_value *x = *(const struct counters_value *const *)a,
                                *y = *(const struct counters_value *const *)b;
    if (alarmed(x) != alarmed(y))
        return alarmed(x) ? -1 : 1;
    int gx = group_rank(x->group), gy = group_rank(y->group);
    if (gx != gy)
        return gx < gy ? -1 : 1;
    double rx = (x->valid & COUNTERS_V_RATE) ? x->rate : 0;
    double ry = (y->valid & COUNTERS_V_RATE) ? y->rate : 0;
    if (rx != ry)
        return rx > ry ? -1 : 1;
    int c = strcmp(x->object, y->object);
    return c ? c : strcmp(x->name, y->name);
}

/* The counters that moved, one table sorted as moved_cmp says, cut to rows x cols (as sar -n
 * DEV and mlnx_perf show a live host): what a console needs at a glance; --all gives the
 * full list by object. */
static void render_moved(struct strbuf *sb, const struct counters_set *s, double interval,
                         double since_s, int rows, int cols)
{
    int n;
    const struct counters_value *v = counters_set_values(s, &n);
    const struct counters_value **m = xalloc_zero((size_t)(n ? n : 1), sizeof(*m));
    int nm = 0;
    for (int i = 0; i < n; i++)
        if (moved(&v[i]))
            m[nm++] = &v[i];
    qsort(m, (size_t)nm, sizeof(*m), moved_cmp);
    char line[512];
    snprintf(line, sizeof(line),
             "fabtop counters: %d of %d moved (rates over %.2f s, growth over %.1f s)", nm, n,
             interval, since_s);
    strbuf_printf(sb, "%.*s\n", cols, line);
    snprintf(line, sizeof(line), "  %-16s %-30s %12s %13s", "object", "counter", "rate",
             "since start");
    strbuf_printf(sb, "%.*s\n", cols, line);
    int fit = rows - 4 > 1 ? rows - 4 : 1, shown = 0;
    for (int i = 0; i < nm && shown < fit; i++, shown++) {
        const struct counters_value *c = m[i];
        char rate[48], delta[48];
        if (c->kind == COUNTERS_GAUGE) {
            fmt_value(c->value, c->unit, rate, sizeof(rate));
            snprintf(delta, sizeof(delta), "(level)");
        } else {
            if (c->saturated)
                snprintf(rate, sizeof(rate), "saturated");
            else if (c->reset)
                snprintf(rate, sizeof(rate), "reset");
            else if (c->valid & COUNTERS_V_RATE)
                fmt_short(c->rate, c->unit, "", "/s", rate, sizeof(rate));
            else
                snprintf(rate, sizeof(rate), "n/a");
            if (c->valid & COUNTERS_V_DELTA)
                fmt_short(c->delta, c->unit, "+", "", delta, sizeof(delta));
            else
                snprintf(delta, sizeof(delta), "n/a");
        }
        /* A unit that is not bytes goes after the rate ("12/s packets" reads badly). */
        char name[64];
        snprintf(name, sizeof(name), "%s%s%s", c->name, strcmp(c->unit, "bytes") ? " " : "",
                 strcmp(c->unit, "bytes") ? c->unit : "");
        snprintf(line, sizeof(line), "%c %-16.16s %-30.30s %12s %13s", alarmed(c) ? '!' : ' ',
                 c->object, name, rate, delta);
        strbuf_printf(sb, "%.*s\n", cols, line);
    }
    if (nm == 0)
        strbuf_add(sb, "  nothing moved yet\n");
    if (nm > shown)
        snprintf(line, sizeof(line),
                 "%d more moved (the terminal is full); --all lists every counter by object",
                 nm - shown);
    else
        snprintf(line, sizeof(line),
                 "'!' an error-like counter that rose; --all lists every counter by object");
    strbuf_printf(sb, "%.*s\n", cols, line);
    free(m);
}

static void sleep_s(double secs)
{
    struct timespec ts = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
    while (!stop_flag && nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Many counters, one open file each: lift the soft limit on open files to the hard one. */
static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int counters(struct counters_args *o, int nrest, char **rest);

/* The exposition of the set as last sampled: on stdout (--prometheus) and to the textfile
 * directory. A write that fails keeps what was measured: the JSON document goes to a fallback
 * file (jsonutil_save_fallback), and the status is 73. */
static int emit_prom(const struct counters_set *s, const struct counters_args *o, bool say)
{
    int n;
    const struct counters_value *v = counters_set_values(s, &n);
    struct prom_text *p = prom_text_new();
    struct prom_counters_opts po = {.all = o->all, .overlap = o->overlap};
    prom_text_counters(p, v, n, &po);
    struct strbuf sb;
    strbuf_init(&sb);
    prom_text_render(p, &sb);
    int samples = prom_text_count(p);
    prom_text_free(p);
    int rc = CLI_OK;
    if (o->prometheus) {
        fputs(sb.s, stdout);
        fflush(stdout);
    }
    if (o->textfile) {
        struct ft_err err = {0};
        if (cli_write_textfile(o->textfile, TEXTFILE_NAME, sb.s, &err) < 0) {
            fprintf(stderr, "fabtop: --textfile: %s\n", err.msg);
            cJSON *doc = counters_set_report_json(s, false);
            cJSON_AddStringToObject(doc, "format", "fabtop-counters");
            char fallback[1200];
            if (jsonutil_save_fallback(doc, "counters", fallback, sizeof(fallback)) == 0)
                fprintf(stderr, "fabtop: the counters are saved in %s instead\n", fallback);
            cJSON_Delete(doc);
            rc = CLI_CANTCREAT;
        } else if (say && !o->prometheus) {
            printf("Wrote %d samples to %s/%s\n", samples, o->textfile, TEXTFILE_NAME);
        }
    }
    strbuf_free(&sb);
    return rc;
}

int cli_counters_main(int argc, char **argv)
{
    struct counters_args o = {.interval = 1.0};
    int first, prc = cli_parse_args(&cli_counters_command, argc, argv, &o, &first);
    if (prc >= 0)
        return prc;
    int rc = counters(&o, argc - first, argv + first);
    cli_args_free(&cli_counters_command, &o);
    return rc;
}

/* The command per o; the exit status. */
static int counters(struct counters_args *o, int nrest, char **rest)
{
    bool watch = o->watch, json = o->json, all = o->all;
    double interval = o->interval;
    long count = o->count;
    const char *out = o->out;
    struct counters_opts co = o->co;
    if (nrest > 0)
        return cli_usage_error("counters", "unexpected argument '%s'", rest[0]);
    if (count && !watch)
        return cli_usage_error("counters", "--count goes with --watch");
    if (out && watch)
        return cli_usage_error("counters", "-o writes one document; it does not go with --watch");
    bool prom = o->prometheus || o->textfile;
    if (prom && json)
        return cli_usage_error("counters", "--json and --prometheus are two formats: choose one");
    if (o->overlap && !prom)
        return cli_usage_error("counters", "--overlap goes with --prometheus or --textfile");
    if (out && cli_check_output(out) != CLI_OK)
        return CLI_CANTCREAT;
    if (o->textfile && cli_check_textfile_dir(o->textfile, TEXTFILE_NAME) != CLI_OK)
        return CLI_CANTCREAT;
    co.only = o->ports.n ? o->ports.v : NULL;
    co.nonly = o->ports.n;
    bool live = !co.sys_root && !co.proc_root;

    raise_nofile();
    struct ft_err err = {0};
    struct counters_set *s;
    if (counters_set_open(&co, &s, &err) < 0)
        return cli_fail(&err);

    int rc = CLI_OK;
    if (!watch && prom) {
        /* Prometheus takes rates itself: one reading is enough. */
        counters_set_sample_all(s);
        rc = emit_prom(s, o, true);
        if (rc == CLI_OK && out) {
            cJSON *doc = counters_set_report_json(s, false);
            cJSON_AddStringToObject(doc, "format", "fabtop-counters");
            cJSON_AddNumberToObject(doc, "interval_s", 0);
            rc = cli_save_json(doc, out, "counters");
            cJSON_Delete(doc);
        }
        counters_set_close(s);
        return rc;
    }
    if (!watch) {
        counters_set_sample_all(s);
        counters_set_mark(s);
        if (live) {
            sleep_s(interval);
            counters_set_sample_all(s);
        }
        if (json || out) {
            cJSON *doc = counters_set_report_json(s, false);
            cJSON_AddStringToObject(doc, "format", "fabtop-counters");
            cJSON_AddNumberToObject(doc, "interval_s", live ? interval : 0);
            rc = cli_emit_json(doc, json, out, "counters");
            cJSON_Delete(doc);
        }
        if (!json && rc == CLI_OK) {
            struct strbuf sb;
            strbuf_init(&sb);
            render(&sb, s, false, all, interval, 0, live);
            if (out)
                strbuf_printf(&sb, "Saved the JSON document to %s\n", out);
            fputs(sb.s, stdout);
            strbuf_free(&sb);
        }
        counters_set_close(s);
        return rc;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    bool tty = isatty(STDOUT_FILENO);
    counters_set_sample_all(s);
    counters_set_mark(s);
    if (o->textfile) {
        /* The file is there from the start, not one interval later. */
        struct counters_args first = *o;
        first.prometheus = false;
        rc = emit_prom(s, &first, false);
        if (rc != CLI_OK) {
            counters_set_close(s);
            return rc;
        }
    }
    double t0 = mono_s();
    for (long frame = 1; !stop_flag && (!count || frame <= count); frame++) {
        sleep_s(interval);
        if (stop_flag)
            break;
        counters_set_sample(s);
        if (prom) {
            rc = emit_prom(s, o, false);
            if (rc != CLI_OK)
                break;
        } else if (json) {
            cJSON *doc = counters_set_report_json(s, false);
            cJSON_AddStringToObject(doc, "format", "fabtop-counters");
            cJSON_AddNumberToObject(doc, "t_s", mono_s() - t0);
            cJSON_AddNumberToObject(doc, "interval_s", interval);
            char *text = cJSON_PrintUnformatted(doc);
            puts(text);
            cJSON_free(text);
            cJSON_Delete(doc);
        } else {
            struct strbuf sb;
            strbuf_init(&sb);
            struct winsize ws;
            if (tty)
                strbuf_add(&sb, "\033[H\033[2J");
            else if (frame > 1)
                strbuf_add(&sb, "\n");
            if (tty && !all && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 4)
                render_moved(&sb, s, interval, mono_s() - t0, ws.ws_row, ws.ws_col);
            else
                render(&sb, s, true, all, interval, mono_s() - t0, true);
            fputs(sb.s, stdout);
            strbuf_free(&sb);
        }
        fflush(stdout);
    }
    counters_set_close(s);
    return rc;
}
