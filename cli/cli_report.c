/* cli_report: `fabtop report FILE`: the end-of-run summary of a saved results file (the
 * table `fabtop run` prints), with the run's test conditions: the command-line equivalent
 * of opening a result in the explorer's results view. */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>

#include "common/strbuf.h"
#include "engine/results/results.h"
#include "engine/results/results_json.h"
#include "text/run_text.h"

static void usage(FILE *f)
{
    fprintf(f, "Usage: fabtop report [OPTIONS] FILE\n"
               "Print the summary of a saved results file, as `fabtop run` printed it.\n"
               "\n"
               "  --json              print the results document itself on stdout\n"
               "  -h, --help          this help\n"
               "  -V, --version       print the version\n"
               "\n"
               "Latency is in microseconds with its kind named; Gb/s = 10^9 bit/s.\n"
               "Exit status: 0 ok, 64 usage, 65 not a fabtop results file, 66 missing file.\n");
}

int cli_report_main(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"version", no_argument, NULL, 'V'},
                                         {NULL, 0, NULL, 0}};
    static const char shortopts[] = "hV";
    bool json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = true;
            break;
        case 'h':
            usage(stdout);
            return CLI_OK;
        case 'V':
            cli_print_version();
            return CLI_OK;
        default:
            return cli_bad_option("report", argv, shortopts);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error("report", "needs one results file (got %d)", argc - optind);
    struct ft_err err = {0};
    struct results_doc doc;
    if (results_doc_load(argv[optind], &doc, &err) < 0)
        return cli_fail(&err);
    int rc = CLI_OK;
    if (json) {
        cJSON *j = results_json_write(&doc);
        rc = cli_emit_json(j, true, NULL, "report");
        cJSON_Delete(j);
    } else {
        struct strbuf sb;
        strbuf_init(&sb);
        run_text_summary(&sb, &doc.runs[0]);
        fputs(sb.s, stdout);
        strbuf_free(&sb);
    }
    results_doc_free(&doc);
    return rc;
}
