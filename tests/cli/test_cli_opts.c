/* test_cli_opts: every command's option table (cli/cli_opts.h) is well formed and walkable
 * (what man pages and completion will be generated from); --help shows every documented
 * option; the parser checks values per the table (ranges, enums with
 * aliases, lists with a cap, bytes), words errors as the table does, stops at --help, and
 * leaves the operands. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <fcntl.h>

#include "cli/cli.h"
#include "cli/cli_opts.h"

static void test_tables_walkable(void **state)
{
    (void)state;
    int n;
    const struct cli_command *const *cmds = cli_commands(&n);
    assert_int_equal(n, 12); /* the explorer, topo, run, serve, compare, report, counters, sweep,
                                mix, drill, baseline, doctor */
    for (int c = 0; c < n; c++) {
        const struct cli_command *cmd = cmds[c];
        assert_non_null(cmd->synopsis);
        assert_non_null(cmd->main);
        assert_true(cmd->help_col >= 20 && cmd->help_col <= 30);
        assert_true(cmd->nopts > 0 && cmd->nopts <= 64);
        assert_ptr_equal(cli_command_find(cmd->name), cmd);
        for (int d = 0; d < c; d++)
            assert_string_not_equal(cmds[d]->name, cmd->name);
        for (int i = 0; i < cmd->nopts; i++) {
            const struct cli_opt *o = &cmd->opts[i];
            if (o->kind == CLI_V_SECTION) {
                assert_null(o->name);
                assert_non_null(o->help);
                continue;
            }
            assert_non_null(o->name);
            /* Unique long and short names, --help and --version included. */
            for (int k = 0; k < 2; k++) {
                assert_string_not_equal(o->name, cli_std_opts[k].name);
                assert_true(o->short_name != cli_std_opts[k].short_name);
            }
            for (int j = 0; j < i; j++) {
                const struct cli_opt *p = &cmd->opts[j];
                if (p->kind == CLI_V_SECTION)
                    continue;
                assert_string_not_equal(o->name, p->name);
                assert_true(!o->short_name || o->short_name != p->short_name);
            }
            /* An argument has a name; flags have none. */
            bool flag = o->kind == CLI_V_SET || o->kind == CLI_V_CLEAR;
            assert_int_equal(flag, o->arg == CLI_ARG_NONE);
            assert_int_equal(o->arg_name != NULL, o->arg != CLI_ARG_NONE);
            if (o->kind == CLI_V_NUMBER || o->kind == CLI_V_INTEGER)
                assert_true(o->min <= o->max);
            if (o->kind == CLI_V_ENUM) {
                assert_non_null(o->values);
                int offered = 0;
                for (const struct cli_enum *e = o->values; e->name; e++)
                    offered += !e->alias;
                assert_true(offered >= 2);
            }
            /* A custom value is parsed by its own function; a list may check each value. */
            if (o->kind == CLI_V_CUSTOM)
                assert_non_null(o->parse);
            else if (o->kind != CLI_V_LIST)
                assert_null(o->parse);
            /* A help text is documented unless it is a test hook of the explorer. */
            if (!o->help)
                assert_string_equal(cmd->name, "");
        }
    }
}

/* cmd's --help text in a malloc'ed string. */
static char *help_text(const struct cli_command *cmd)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    cli_print_help(cmd, f);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void test_help_shows_every_option(void **state)
{
    (void)state;
    int n;
    const struct cli_command *const *cmds = cli_commands(&n);
    for (int c = 0; c < n; c++) {
        char *text = help_text(cmds[c]);
        assert_true(!strncmp(text, "Usage: fabtop", 13));
        for (int i = 0; i < cmds[c]->nopts + 2; i++) {
            const struct cli_opt *o =
                i < cmds[c]->nopts ? &cmds[c]->opts[i] : &cli_std_opts[i - cmds[c]->nopts];
            if (o->kind == CLI_V_SECTION || !o->help)
                continue;
            char label[128], line[140];
            cli_opt_label(o, label, sizeof(label));
            snprintf(line, sizeof(line), "\n  %s ", label);
            if (!strstr(text, line)) {
                snprintf(line, sizeof(line), "\n  %s\n", label);
                if (!strstr(text, line))
                    fail_msg("fabtop %s --help lacks '%s'", cmds[c]->name, label);
            }
            assert_null(strstr(o->help, "{default}") && o->def == 0 ? o->help : NULL);
        }
        assert_null(strstr(text, "{default}"));
        assert_null(strstr(text, "{max}"));
        free(text);
    }
}

/* A command of every kind, for the parser. */
struct t_args {
    bool on, off;
    const char *s;
    double num;
    long whole;
    uint64_t bytes;
    int color;
    struct cli_list list;
};

static const struct cli_enum colors[] = {
    {"red", 1, 0}, {"green", 2, 0}, {"verde", 2, 1}, {NULL, 0, 0}};

/* A list's check: "bad" is refused before it is added. */
static int check_item(const struct cli_opt *o, const char *arg, void *args, struct cli_parse *p)
{
    (void)o;
    (void)args;
    return strcmp(arg, "bad") ? 0 : cli_usage_error(p->cmd->name, "--item: not '%s'", arg);
}

#define A(f) offsetof(struct t_args, f)
static const struct cli_opt t_opts[] = {
    {"on", 'n', CLI_ARG_NONE, NULL, "set", CLI_V_SET, .off = A(on)},
    {"no-off", 0, CLI_ARG_NONE, NULL, "clear", CLI_V_CLEAR, .off = A(off)},
    {"str", 's', CLI_ARG_REQUIRED, "TEXT", "text", CLI_V_STRING, .off = A(s)},
    {"num", 0, CLI_ARG_REQUIRED, "SEC", "seconds", CLI_V_NUMBER, .min = 0, .min_open = 1, .max = 10,
     .off = A(num)},
    {"whole", 0, CLI_ARG_REQUIRED, "N", "a count", CLI_V_INTEGER, .min = 1, .max = 5,
     .bad = "--whole takes 1 to 5, not '%s'", .off = A(whole)},
    {"bytes", 0, CLI_ARG_REQUIRED, "BYTES", "size", CLI_V_BYTES, .off = A(bytes)},
    {"color", 0, CLI_ARG_REQUIRED, "red|green", "a colour", CLI_V_ENUM, .values = colors,
     .off = A(color)},
    {"item", 0, CLI_ARG_REQUIRED, "X", "repeatable", CLI_V_LIST, .max_count = 2, .off = A(list),
     .parse = check_item},
};
#undef A

static int t_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static const struct cli_command t_cmd = {
    .name = "t",
    .summary = "test",
    .synopsis = "Usage: fabtop t\n",
    .opts = t_opts,
    .nopts = sizeof(t_opts) / sizeof(t_opts[0]),
    .help_col = 22,
    .main = t_main,
};

static char err_text[1024];

/* Parse the words (after the command name) into a; its status, stderr in err_text. */
static int parse(struct t_args *a, int *first, ...)
{
    static char name[] = "t";
    char *argv[32] = {name};
    int argc = 1;
    va_list ap;
    va_start(ap, first);
    for (char *w; (w = va_arg(ap, char *));)
        argv[argc++] = w;
    va_end(ap);
    memset(a, 0, sizeof(*a));
    a->off = true;
    fflush(stderr);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    int rc = cli_parse_args(&t_cmd, argc, argv, a, first);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(err_text, 1, sizeof(err_text) - 1, tmp);
    err_text[n] = '\0';
    fclose(tmp);
    return rc;
}

static void test_parse(void **state)
{
    (void)state;
    struct t_args a;
    int first = 0;
    assert_int_equal(parse(&a, &first, "-n", "--no-off", "-s", "x", "--num=2.5", "--whole", "5",
                           "--bytes", "64KiB", "--color", "VERDE", "--item", "a", "--item", "b",
                           "op1", "op2", NULL),
                     -1);
    assert_true(a.on);
    assert_false(a.off);
    assert_string_equal(a.s, "x");
    assert_true(a.num == 2.5);
    assert_int_equal(a.whole, 5);
    assert_int_equal(a.bytes, 64 * 1024);
    assert_int_equal(a.color, 2);
    assert_int_equal(a.list.n, 2);
    assert_string_equal(a.list.v[1], "b");
    assert_int_equal(first, 16); /* the operands, after the options */
    cli_args_free(&t_cmd, &a);
    assert_null(a.list.v);

    /* Values outside the table's checks: 64 and one line in the table's words. */
    assert_int_equal(parse(&a, &first, "--num", "0", NULL), 64);
    assert_string_equal(err_text, "fabtop t: --num takes a number from 0 to 10, not '0'\n"
                                  "Try 'fabtop t --help'.\n");
    assert_int_equal(parse(&a, &first, "--num", "nan", NULL), 64);
    assert_int_equal(parse(&a, &first, "--num", "", NULL), 64);
    assert_int_equal(parse(&a, &first, "--whole", "2.5", NULL), 64);
    assert_non_null(strstr(err_text, "--whole takes 1 to 5, not '2.5'"));
    assert_int_equal(parse(&a, &first, "--bytes", "lots", NULL), 64);
    assert_int_equal(parse(&a, &first, "--color", "blue", NULL), 64);
    assert_non_null(strstr(err_text, "--color takes red or green, not 'blue'"));
    assert_int_equal(parse(&a, &first, "--item", "a", "--item", "b", "--item", "c", NULL), 64);
    assert_non_null(strstr(err_text, "at most 2 --item"));
    assert_int_equal(parse(&a, &first, "--item", "a", "--item", "bad", NULL), 64);
    assert_non_null(strstr(err_text, "--item: not 'bad'"));
    /* Bad options, as every command words them. */
    assert_int_equal(parse(&a, &first, "--bogus", NULL), 64);
    assert_non_null(strstr(err_text, "unknown option or missing argument: '--bogus'"));
    assert_int_equal(parse(&a, &first, "-s", NULL), 64);
    assert_non_null(strstr(err_text, "option -s needs an argument"));
    assert_int_equal(parse(&a, &first, "-q", NULL), 64);
    assert_non_null(strstr(err_text, "option -q is unknown"));
    /* --help and --version end parsing with 0. */
    fflush(stdout);
    int saved = dup(1), null = open("/dev/null", 1);
    dup2(null, 1);
    int h = parse(&a, &first, "--item", "a", "-h", "--bogus", NULL);
    int v = parse(&a, &first, "--version", NULL);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(null);
    assert_int_equal(h, 0);
    assert_int_equal(v, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_walkable),
        cmocka_unit_test(test_help_shows_every_option),
        cmocka_unit_test(test_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
