/* cli_explore: `fabtop` with no subcommand: the interactive explorer. Restores the
 * terminal on every exit path; stderr is kept off the screen while curses draws and
 * replayed afterwards. */
#include "cli/cli.h"

#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>

#include "engine/flow/mix.h"
#include "tui/app.h"

static void usage(FILE *f)
{
    fprintf(f, "Usage: fabtop [OPTIONS]\n"
               "The interactive explorer: topology, test setup, live runs, results.\n"
               "\n"
               "  --input FILE        explore a saved topology (hwloc XML or fabtop snapshot)\n"
               "  --sysfs-root DIR    explore a captured /sys + /proc tree\n"
               "  --results FILE      open a saved results file\n"
               "  --theme NAME|FILE   colour theme (default, high-contrast, monochrome, light)\n"
               "  --no-color          monochrome (also when NO_COLOR is set)\n"
               "  --iterations N      draw N frames and exit (smoke tests)\n"
               "  --run NAME|FILE     start this mix at once and show it live (F4)\n"
               "  -h, --help, -V, --version\n"
               "\n"
               "Keys: F1 help, F2 setup, F3 topology, F4 live, F5 results, F10 or q quit.\n"
               "Subcommands for scripts: fabtop topo | run | serve | compare (fabtop --help).\n");
}

static int stderr_copy = -1;
static FILE *stderr_log;

/* While curses owns the screen, stderr (libibverbs may warn there) goes to a file. */
static void capture_stderr(void)
{
    stderr_log = tmpfile();
    if (!stderr_log)
        return;
    fflush(stderr);
    stderr_copy = dup(2);
    dup2(fileno(stderr_log), 2);
}

static void replay_stderr(void)
{
    if (stderr_copy < 0)
        return;
    fflush(stderr);
    dup2(stderr_copy, 2);
    close(stderr_copy);
    stderr_copy = -1;
    rewind(stderr_log);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), stderr_log)) > 0)
        fwrite(buf, 1, n, stderr);
    fclose(stderr_log);
}

static void on_fatal(int sig)
{
    endwin();
    replay_stderr();
    signal(sig, SIG_DFL);
    raise(sig);
}

int cli_explore_main(int argc, char **argv)
{
    static const char shortopts[] = "hV";
    static const struct option opts[] = {
        {"input", required_argument, NULL, 'i'},   {"sysfs-root", required_argument, NULL, 's'},
        {"results", required_argument, NULL, 'r'}, {"theme", required_argument, NULL, 't'},
        {"no-color", no_argument, NULL, 'n'},      {"iterations", required_argument, NULL, 'N'},
        {"keys", required_argument, NULL, 'k'},    {"config-dir", required_argument, NULL, 'c'},
        {"run", required_argument, NULL, 'R'},     {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},       {NULL, 0, NULL, 0}};
    struct app_opts o = {0};
    const char *run = NULL;
    const char *nc = getenv("NO_COLOR");
    o.no_color = nc && *nc;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            o.input = optarg;
            break;
        case 's':
            o.sysfs_root = optarg;
            break;
        case 'r':
            o.results = optarg;
            break;
        case 't':
            o.theme = optarg;
            break;
        case 'n':
            o.no_color = true;
            break;
        case 'N':
            o.iterations = atoi(optarg);
            if (o.iterations <= 0)
                return cli_usage_error("", "--iterations takes a positive number");
            break;
        case 'k':
            o.keys = optarg;
            break;
        case 'c':
            o.config_dir = optarg;
            break;
        case 'R':
            run = optarg;
            break;
        case 'h':
            usage(stdout);
            return CLI_OK;
        case 'V':
            cli_print_version();
            return CLI_OK;
        default:
            return cli_bad_option("", argv, shortopts);
        }
    }
    if (optind < argc)
        return cli_usage_error("", "unknown command '%s'; try 'fabtop --help'", argv[optind]);
    if (o.input && o.sysfs_root)
        return cli_usage_error("", "--input and --sysfs-root are exclusive");

    setlocale(LC_ALL, "");
    bool tty = isatty(0) && isatty(1);
    if (!tty && !o.iterations) {
        fprintf(stderr, "fabtop: the explorer needs a terminal; in scripts use 'fabtop topo', "
                        "'fabtop run' or 'fabtop serve' (see fabtop --help)\n");
        return CLI_UNAVAILABLE;
    }
    struct app a;
    struct ft_err err = {0};
    if (app_init(&a, &o, &err) < 0)
        return cli_fail(&err);
    if (run) {
        /* --run: the mix starts before the first frame; the live view follows it. */
        struct mix m;
        int rc = mix_load(run, &m, &err);
        if (rc == 0) {
            rc = app_start_run(&a, &m, NULL, &err);
            mix_free(&m);
        }
        if (rc < 0) {
            app_fini(&a);
            return cli_fail(&err);
        }
    }

    signal(SIGPIPE, SIG_IGN);
    signal(SIGSEGV, on_fatal);
    signal(SIGABRT, on_fatal);
    signal(SIGTERM, on_fatal);
    capture_stderr();
    SCREEN *scr = NULL;
    FILE *out = NULL, *in = NULL;
    if (tty) {
        initscr();
    } else {
        /* Headless smoke run: draw into /dev/null. */
        out = fopen("/dev/null", "w");
        in = fopen("/dev/null", "r");
        const char *term = getenv("TERM");
        scr = newterm(term && *term ? term : "xterm-256color", out, in);
        if (!scr) {
            replay_stderr();
            fprintf(stderr, "fabtop: cannot set up a screen for TERM=%s\n", term ? term : "");
            app_fini(&a);
            return CLI_UNAVAILABLE;
        }
        set_term(scr);
    }
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    int rc = app_run(&a);
    endwin();
    if (scr)
        delscreen(scr);
    if (out)
        fclose(out);
    if (in)
        fclose(in);
    replay_stderr();
    app_fini(&a);
    return rc;
}
