/* cli_report: `fabtop report FILE`: the end-of-run summary of a saved results file (the
 * table `fabtop run` prints), with the run's test conditions: the command-line equivalent
 * of opening a result in the explorer's results view. A sweep's document (fabtop sweep)
 * gets its own report: heat maps of the pair matrix, verdicts, the summary line. */
#include "cli/cli.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli_baseline.h"
#include "cli/cli_opts.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "engine/results/results.h"
#include "engine/results/results_json.h"
#include "engine/results/results_sweep.h"
#include "text/judge_text.h"
#include "text/prom_text.h"
#include "text/run_text.h"
#include "text/text_sweep.h"

/* What the command line sets. */
struct report_args {
    bool json, prometheus;
    const char *textfile;
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
};

const struct cli_command cli_report_command = {
    .name = "report",
    .summary = "the summary of a saved results file",
    .synopsis = "Usage: fabtop report [OPTIONS] FILE\n"
                "Print the summary of a saved results file, as `fabtop run` printed it;\n"
                "for a sweep's document (fabtop sweep), its heat maps, verdicts and summary.\n",
    .opts = report_opts,
    .nopts = sizeof(report_opts) / sizeof(report_opts[0]),
    .epilogue = "Latency is in microseconds with its kind named; Gb/s = 10^9 bit/s.\n"
                "--prometheus: seconds and bytes per second, as Prometheus names them\n"
                "(docs/prometheus.md).\n"
                "Exit status: 0 ok, 64 usage, 65 not a fabtop results file, 66 missing file,\n"
                "73 --textfile DIR missing, not a directory or not writable.\n",
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
static int report_sweep(const cJSON *j, const char *path, bool json, const struct report_args *o)
{
    struct ft_err err = {0};
    struct results_sweep s;
    if (results_sweep_read(j, path, &s, &err) < 0)
        return cli_fail(&err);
    int rc = CLI_OK;
    if (o->prometheus || o->textfile) {
        struct prom_text *p = prom_text_new();
        prom_text_sweep(p, &s);
        rc = emit_prom(p, o, TEXTFILE_SWEEP);
        prom_text_free(p);
    } else if (json) {
        cJSON *w = results_sweep_write(&s);
        rc = cli_emit_json(w, true, NULL, "report");
        cJSON_Delete(w);
    } else {
        text_sweep_report(stdout, &s, report_width());
    }
    results_sweep_free(&s);
    return rc;
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
    if (json && (o.prometheus || o.textfile))
        return cli_usage_error("report", "--json and --prometheus are two formats: choose one");
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
    int lrc = results_json_read(in, argv[first], &doc, &err);
    cJSON_Delete(in);
    if (lrc < 0)
        return cli_fail(&err);
    int rc = CLI_OK;
    if (o.prometheus || o.textfile) {
        struct prom_text *p = prom_text_new();
        prom_text_run(p, &doc.runs[0]);
        rc = emit_prom(p, &o, TEXTFILE_RUN);
        prom_text_free(p);
    } else if (json) {
        cJSON *j = results_json_write(&doc);
        rc = cli_emit_json(j, true, NULL, "report");
        cJSON_Delete(j);
    } else {
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
