/* cli_explore: `fabtop` with no subcommand: the interactive explorer. Restores the
 * terminal on every exit path; stderr is kept off the screen while curses draws and
 * replayed afterwards. */
#include "cli/cli.h"

#include <fcntl.h>
#include <stddef.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>

#include "cli/cli_opts.h"
#include "engine/flow/mix.h"
#include "tui/app.h"

/* What the command line sets: the app's options and a mix to start at once. */
struct explore_args {
    struct app_opts app;
    const char *run;
    long iterations;
};

#define A(f) offsetof(struct explore_args, f)
static const struct cli_opt explore_opts[] = {
    {"input", 0, CLI_ARG_REQUIRED, "FILE",
     "explore a saved topology (hwloc XML or fabtop snapshot)", CLI_V_STRING, CLI_C_FILE,
     .off = A(app.input)},
    {"sysfs-root", 0, CLI_ARG_REQUIRED, "DIR", "explore a captured /sys + /proc tree", CLI_V_STRING,
     CLI_C_DIR, .off = A(app.sysfs_root)},
    {"results", 0, CLI_ARG_REQUIRED, "FILE",
     "open a saved results file (a sweep's opens the sweep view)", CLI_V_STRING, CLI_C_FILE,
     .off = A(app.results)},
    {"attach", 0, CLI_ARG_REQUIRED, "FILE",
     "follow a running sweep: the document rank 0 of fabtop sweep publishes (fabtop sweep "
     "--publish), re-read when it changes",
     CLI_V_STRING, CLI_C_FILE, .off = A(app.attach)},
    {"theme", 0, CLI_ARG_REQUIRED, "NAME|FILE",
     "colour theme (default, high-contrast, monochrome, light)", CLI_V_STRING, CLI_C_THEME,
     .off = A(app.theme)},
    {"no-color", 0, CLI_ARG_NONE, NULL, "monochrome (also when NO_COLOR is set)", CLI_V_SET,
     .off = A(app.no_color)},
    {"no-mouse", 0, CLI_ARG_NONE, NULL,
     "leave the mouse to the terminal (select and paste) instead of clicks and the wheel",
     CLI_V_SET, .off = A(app.no_mouse)},
    {"iterations", 0, CLI_ARG_REQUIRED, "N", "draw N frames and exit (smoke tests)", CLI_V_INTEGER,
     .min = 1, .max = 1e9, .bad = "--iterations takes a positive number", .off = A(iterations)},
    /* Test hooks, left out of --help: keys to replay, and where the config lives. */
    {"keys", 0, CLI_ARG_REQUIRED, "KEYS", NULL, CLI_V_STRING, .off = A(app.keys)},
    {"config-dir", 0, CLI_ARG_REQUIRED, "DIR", NULL, CLI_V_STRING, CLI_C_DIR,
     .off = A(app.config_dir)},
    {"run", 0, CLI_ARG_REQUIRED, "NAME|FILE", "start this mix at once and show it live (F4)",
     CLI_V_STRING, CLI_C_MIX, .off = A(run)},
};
#undef A

const struct cli_command cli_explore_command = {
    .name = "",
    .summary = "the interactive explorer",
    .synopsis = "Usage: fabtop [OPTIONS]\n"
                "The interactive explorer: topology, test setup, live runs, results.\n",
    .opts = explore_opts,
    .nopts = sizeof(explore_opts) / sizeof(explore_opts[0]),
    .epilogue = "Keys: F1 help, F2 setup, F3 topology, F4 live, F5 results, F6 fabric, F7 sweep\n"
                "(--results of a sweep, --attach), F10 or q quit.\n"
                "Subcommands for scripts: fabtop topo | run | serve | compare (fabtop --help).\n",
    .help_col = 22,
    .main = cli_explore_main,
};

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
    struct explore_args x = {0};
    const char *nc = getenv("NO_COLOR");
    x.app.no_color = nc && *nc;
    int first, prc = cli_parse_args(&cli_explore_command, argc, argv, &x, &first);
    if (prc >= 0)
        return prc;
    struct app_opts o = x.app;
    const char *run = x.run;
    o.iterations = (int)x.iterations;
    if (first < argc)
        return cli_usage_error("", "unknown command '%s'; try 'fabtop --help'", argv[first]);
    if (o.input && o.sysfs_root)
        return cli_usage_error("", "--input and --sysfs-root are exclusive");
    if (o.results && o.attach)
        return cli_usage_error("", "--results and --attach are exclusive: --attach FILE follows "
                                   "a running sweep, --results FILE opens a finished one");

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
    /* Clicks and the wheel as htop and btop have them (--no-mouse leaves the mouse to the
     * terminal). The wheel arrives as buttons 4 and 5 (ncurses curs_mouse(3X)). The release
     * is in the mask although nothing acts on it: with a release outside the mask, wgetch
     * in ncurses 6.4 goes on reading for a reportable event after it, and a read with no
     * input behind it blocks even under nodelay, so the screen froze after a click until
     * the next key (seen in e2e_mouse under TERM=tmux-256color). */
    if (!a.o.no_mouse) {
        mousemask(BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON1_CLICKED | BUTTON4_PRESSED |
                      BUTTON5_PRESSED,
                  NULL);
        mouseinterval(0);
    }
    nodelay(stdscr, TRUE);
    /* No typeahead check: by default doupdate() stops part-way when input is pending
     * (curs_inopts(3X), typeahead) and finishes only at the next doupdate(). The app draws
     * only when something changed, so input that changes nothing (a mouse release) arriving
     * mid-draw would leave a half-old screen up until the next change. */
    typeahead(-1);
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
