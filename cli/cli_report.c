/* cli_report: `fabtop report FILE`: the end-of-run summary of a saved results file (the
 * table `fabtop run` prints), with the run's test conditions: the command-line equivalent
 * of opening a result in the explorer's results view. A sweep's document (fabtop sweep)
 * gets its own report: heat maps of the pair matrix, verdicts, the summary line. */
#include "cli/cli.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli_baseline.h"
#include "cli/cli_opts.h"
#include "common/atomicfile.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "engine/results/results.h"
#include "engine/results/results_json.h"
#include "engine/results/results_drill.h"
#include "engine/results/results_sweep.h"
#include "report/report_html.h"
#include "report/report_trace.h"
#include "text/judge_text.h"
#include "text/prom_text.h"
#include "text/run_text.h"
#include "text/text_sweep.h"

/* Which document was read. */
enum report_kind { REPORT_KIND_RUN, REPORT_KIND_SWEEP, REPORT_KIND_DRILL };

/* What the command line sets. */
struct report_args {
    bool json, prometheus;
    const char *textfile;
    const char *html, *png, *svg, *trace;
};

/* The files --textfile writes: a run's and a sweep's, beside fabtop counters' fabtop.prom. */
#define TEXTFILE_RUN   "fabtop_run.prom"
#define TEXTFILE_SWEEP "fabtop_sweep.prom"

static const struct cli_opt report_opts[] = {
    {"json", 0, CLI_ARG_NONE, NULL, "print the results document itself on stdout", CLI_V_SET,
     .off = offsetof(struct report_args, json)},
    {"prometheus", 0, CLI_ARG_NONE, NULL,
     "print the results in the Prometheus text exposition\nformat (latency summaries in seconds, "
     "goodput in\nbytes per second, the start time)",
     CLI_V_SET, .off = offsetof(struct report_args, prometheus)},
    {"textfile", 0, CLI_ARG_REQUIRED, "DIR",
     "write that exposition to DIR/" TEXTFILE_RUN " (a sweep:\nDIR/" TEXTFILE_SWEEP
     ") atomically, for node_exporter's\ntextfile collector",
     CLI_V_STRING, CLI_C_DIR, .off = offsetof(struct report_args, textfile)},
    {"html", 0, CLI_ARG_REQUIRED, "OUT",
     "write the report as one self-contained HTML page to OUT\n"
     "(conditions, topology, latency histograms and CDF quiet vs\n"
     "loaded, timelines, the tables, counters, verdicts; a sweep's\n"
     "heat maps, a drill's timeline); nothing on stdout",
     CLI_V_STRING, CLI_C_FILE, .off = offsetof(struct report_args, html)},
    {"png", 0, CLI_ARG_REQUIRED, "OUT",
     "write the main figure alone as PNG to OUT: a run's latency\n"
     "histogram quiet vs loaded (a sweep: its bandwidth heat map;\n"
     "a drill: its timeline)",
     CLI_V_STRING, CLI_C_FILE, .off = offsetof(struct report_args, png)},
    {"svg", 0, CLI_ARG_REQUIRED, "OUT", "the same figure as SVG", CLI_V_STRING, CLI_C_FILE,
     .off = offsetof(struct report_args, svg)},
    {"trace", 0, CLI_ARG_REQUIRED, "OUT",
     "write a run's timeline as Chrome trace events (JSON, for\nPerfetto), as fabtop run "
     "--trace does",
     CLI_V_STRING, CLI_C_FILE, .off = offsetof(struct report_args, trace)},
};

const struct cli_command cli_report_command = {
    .name = "report",
    .summary = "the summary of a saved results file",
    .synopsis = "Usage: fabtop report [OPTIONS] FILE\n"
                "Print the summary of a saved results file, as `fabtop run` printed it;\n"
                "for a sweep's document (fabtop sweep), its heat maps, verdicts and summary.\n"
                "With --html, --png or --svg, the report or its main figure is written to\n"
                "files instead (also for a drill's document, fabtop drill); with --trace,\n"
                "a run's timeline as Chrome trace events.\n",
    .opts = report_opts,
    .nopts = sizeof(report_opts) / sizeof(report_opts[0]),
    .epilogue = "Latency is in microseconds with its kind named; Gb/s = 10^9 bit/s.\n"
                "--prometheus: seconds and bytes per second, as Prometheus names them\n"
                "(docs/prometheus.md).\n"
                "Files are written whole (a temporary file beside OUT, then renamed).\n"
                "Exit status: 0 ok, 64 usage, 65 not a fabtop results file, 66 missing file,\n"
                "73 cannot create OUT (no such directory, not writable, file system full)\n"
                "or --textfile DIR missing, not a directory or not writable.\n",
    .help_col = 22,
    .main = cli_report_main,
};

/* The width of the sweep's heat maps: the terminal's, $COLUMNS, or 80. */
static int report_width(void)
{
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *c = getenv("COLUMNS");
    int w = c ? atoi(c) : 0;
    return w >= 20 && w <= 1000 ? w : 80;
}

/* The exposition p: on stdout (--prometheus), and to DIR/file (--textfile). */
static int emit_prom(struct prom_text *p, const struct report_args *o, const char *file)
{
    struct strbuf sb;
    strbuf_init(&sb);
    prom_text_render(p, &sb);
    int rc = CLI_OK;
    if (o->prometheus)
        fputs(sb.s, stdout);
    if (o->textfile) {
        struct ft_err err = {0};
        if (cli_write_textfile(o->textfile, file, sb.s, &err) < 0) {
            fprintf(stderr, "fabtop: --textfile: %s (the results file is unchanged)\n", err.msg);
            rc = CLI_CANTCREAT;
        } else if (!o->prometheus) {
            printf("Wrote %d samples to %s/%s\n", prom_text_count(p), o->textfile, file);
        }
    }
    strbuf_free(&sb);
    return rc;
}

/* A sweep's document: its report, or the document itself (--json). */
static int report_files(const struct report_args *o, enum report_kind kind, const void *doc,
                        const char *what);

static int report_sweep(const cJSON *j, const char *path, bool json, const struct report_args *o)
{
    struct ft_err err = {0};
    struct results_sweep s;
    if (results_sweep_read(j, path, &s, &err) < 0)
        return cli_fail(&err);
    int rc = CLI_OK;
    bool files = o->html || o->png || o->svg || o->trace;
    if (files)
        rc = report_files(o, REPORT_KIND_SWEEP, &s, path);
    if (rc == CLI_OK && (o->prometheus || o->textfile)) {
        struct prom_text *p = prom_text_new();
        prom_text_sweep(p, &s);
        rc = emit_prom(p, o, TEXTFILE_SWEEP);
        prom_text_free(p);
    } else if (!files && json) {
        cJSON *w = results_sweep_write(&s);
        rc = cli_emit_json(w, true, NULL, "report");
        cJSON_Delete(w);
    } else if (!files) {
        text_sweep_report(stdout, &s, report_width());
    }
    results_sweep_free(&s);
    return rc;
}

/* Write what was rendered to path as a whole file; 73 with one line when it cannot. */
static int report_write(const char *path, const struct strbuf *sb)
{
    struct ft_err err = {0};
    if (atomicfile_write(path, sb->s, sb->len, &err) < 0) {
        fprintf(stderr,
                "fabtop: %s; nothing written: give a path in an existing, writable directory "
                "with free space\n",
                err.msg);
        return CLI_CANTCREAT;
    }
    return CLI_OK;
}

/* Each output asked for, checked before anything is rendered (73: cannot be created). */
static int report_check_outputs(const struct report_args *o)
{
    const char *outs[] = {o->html, o->png, o->svg, o->trace};
    for (int i = 0; i < 4; i++) {
        struct ft_err err = {0};
        if (outs[i] && atomicfile_check(outs[i], &err) < 0) {
            fprintf(stderr,
                    "fabtop: %s; nothing written: give a path in an existing, writable "
                    "directory with free space\n",
                    err.msg);
            return CLI_CANTCREAT;
        }
    }
    return CLI_OK;
}

/* The files --html, --png and --svg ask for, from whichever document was read. */
static int report_files(const struct report_args *o, enum report_kind kind, const void *doc,
                        const char *what)
{
    const char *outs[] = {o->html, o->png, o->svg, o->trace};
    if (o->trace && kind != REPORT_KIND_RUN) {
        fprintf(stderr, "fabtop: %s: --trace needs a run's results file (fabtop run -o)\n", what);
        return CLI_DATAERR;
    }
    for (int i = 0; i < 4; i++) {
        if (!outs[i])
            continue;
        struct strbuf sb;
        strbuf_init(&sb);
        struct ft_err err = {0};
        int rc;
        enum report_format fmt = i == 1 ? REPORT_PNG : REPORT_SVG;
        if (i == 3) {
            cJSON *t = report_trace_run(doc);
            char *text = t ? cJSON_Print(t) : NULL;
            cJSON_Delete(t);
            if (!text) {
                strbuf_free(&sb);
                fprintf(stderr, "fabtop: %s: out of memory\n", outs[i]);
                return CLI_SOFTWARE;
            }
            strbuf_add(&sb, text);
            strbuf_add(&sb, "\n");
            cJSON_free(text);
            rc = 0;
        } else if (kind == REPORT_KIND_RUN)
            rc = i == 0 ? report_html_run(&sb, doc, what, &err)
                        : report_figure_run(&sb, fmt, doc, &err);
        else if (kind == REPORT_KIND_SWEEP)
            rc = i == 0 ? report_html_sweep(&sb, doc, what, &err)
                        : report_figure_sweep(&sb, fmt, doc, &err);
        else
            rc = i == 0 ? report_html_drill(&sb, doc, what, &err)
                        : report_figure_drill(&sb, fmt, doc, &err);
        if (rc < 0) {
            strbuf_free(&sb);
            fprintf(stderr, "fabtop: %s: %s\n", outs[i], err.msg);
            return CLI_SOFTWARE;
        }
        rc = report_write(outs[i], &sb);
        strbuf_free(&sb);
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}

static bool report_drill_is(const cJSON *j)
{
    const char *f = jsonutil_str(j, "format");
    return f && !strcmp(f, RESULTS_DRILL_FORMAT);
}

int cli_report_main(int argc, char **argv)
{
    struct report_args o = {0};
    int first, prc = cli_parse_args(&cli_report_command, argc, argv, &o, &first);
    if (prc >= 0)
        return prc;
    bool json = o.json;
    if (argc - first != 1)
        return cli_usage_error("report", "needs one results file (got %d)", argc - first);
    bool files = o.html || o.png || o.svg || o.trace, prom = o.prometheus || o.textfile;
    if (files && json)
        return cli_usage_error("report", "--json prints the document; it does not go with "
                                         "--html, --png or --svg");
    if (json && prom)
        return cli_usage_error("report", "--json and --prometheus are two formats: choose one");
    if (files) {
        int crc = report_check_outputs(&o);
        if (crc != CLI_OK)
            return crc;
    }
    struct ft_err err = {0};
    struct results_doc doc;
    cJSON *in = NULL;
    if (jsonutil_load(argv[first], &in, &err) < 0)
        return cli_fail(&err);
    if (o.textfile &&
        cli_check_textfile_dir(o.textfile, results_sweep_is(in) ? TEXTFILE_SWEEP : TEXTFILE_RUN)) {
        cJSON_Delete(in);
        return CLI_CANTCREAT;
    }
    if (results_sweep_is(in)) {
        int src = report_sweep(in, argv[first], json, &o);
        cJSON_Delete(in);
        return src;
    }
    if (files && report_drill_is(in)) {
        struct results_drill_doc d;
        int drc = results_drill_read(in, argv[first], &d, &err);
        cJSON_Delete(in);
        if (drc < 0)
            return cli_fail(&err);
        drc = report_files(&o, REPORT_KIND_DRILL, &d, argv[first]);
        results_drill_free(&d);
        return drc;
    }
    int lrc = results_json_read(in, argv[first], &doc, &err);
    cJSON_Delete(in);
    if (lrc < 0)
        return cli_fail(&err);
    int rc = CLI_OK;
    if (files) {
        if (doc.runs[0].causes.st == RESULTS_ABSENT)
            cli_judge_fill(&doc.runs[0], NULL);
        rc = report_files(&o, REPORT_KIND_RUN, &doc.runs[0], argv[first]);
    }
    if (rc == CLI_OK && prom) {
        struct prom_text *p = prom_text_new();
        prom_text_run(p, &doc.runs[0]);
        rc = emit_prom(p, &o, TEXTFILE_RUN);
        prom_text_free(p);
    } else if (!files && json) {
        cJSON *j = results_json_write(&doc);
        rc = cli_emit_json(j, true, NULL, "report");
        cJSON_Delete(j);
    } else if (!files) {
        struct strbuf sb;
        strbuf_init(&sb);
        if (doc.runs[0].causes.st == RESULTS_ABSENT)
            cli_judge_fill(&doc.runs[0], NULL); /* a document from before the judgement */
        run_text_summary(&sb, &doc.runs[0]);
        judge_text_summary(&sb, &doc.runs[0]);
        fputs(sb.s, stdout);
        strbuf_free(&sb);
    }
    results_doc_free(&doc);
    return rc;
}
