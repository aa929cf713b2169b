/* cli_opts: getopt_long's array, the checks and --help, all from a command's table. */
#include "cli/cli_opts.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "common/xalloc.h"
#include "engine/flow/mix.h"

#define OPT_VAL_BASE 256 /* getopt_long's val for entry i (the table, then help, version) */
#define OPT_MAX      64  /* entries in one table, sections included (a test checks them) */

const struct cli_opt cli_std_opts[2] = {
    {.name = "help", .short_name = 'h', .help = "this help", .kind = CLI_V_SET},
    {.name = "version", .short_name = 'V', .help = "print the version", .kind = CLI_V_SET},
};

static const struct cli_command *const commands[] = {
    &cli_explore_command, &cli_topo_command,   &cli_run_command,      &cli_serve_command,
    &cli_compare_command, &cli_report_command, &cli_counters_command, &cli_sweep_command,
    &cli_mix_command,     &cli_drill_command,  &cli_baseline_command, &cli_doctor_command,
};

const struct cli_command *const *cli_commands(int *n)
{
    *n = (int)(sizeof(commands) / sizeof(commands[0]));
    return commands;
}

const struct cli_command *cli_command_find(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(commands[i]->name, name))
            return commands[i];
    return NULL;
}

/* The usage error for a bad value of o, in the table's words. */
static int bad_value(const struct cli_command *cmd, const struct cli_opt *o, const char *arg)
{
    char msg[512];
    if (o->bad) {
        snprintf(msg, sizeof(msg), o->bad, arg);
    } else if (o->kind == CLI_V_NUMBER || o->kind == CLI_V_INTEGER) {
        snprintf(msg, sizeof(msg), "--%s takes %s from %g to %g, not '%s'", o->name,
                 o->kind == CLI_V_INTEGER ? "a whole number" : "a number", o->min, o->max, arg);
    } else if (o->kind == CLI_V_ENUM) {
        /* "--NAME takes a, b or c": the names offered, aliases left out. */
        int offered = 0, k = 0;
        for (const struct cli_enum *e = o->values; e->name; e++)
            offered += !e->alias;
        size_t n = (size_t)snprintf(msg, sizeof(msg), "--%s takes", o->name);
        for (const struct cli_enum *e = o->values; e->name && n < sizeof(msg); e++)
            if (!e->alias) {
                const char *sep = k == 0 ? " " : k == offered - 1 ? " or " : ", ";
                n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%s%s", sep, e->name);
                k++;
            }
        if (n < sizeof(msg))
            snprintf(msg + n, sizeof(msg) - n, ", not '%s'", arg);
    } else {
        snprintf(msg, sizeof(msg), "--%s: bad value '%s'", o->name, arg);
    }
    return cli_usage_error(cmd->name, "%s", msg);
}

static int parse_number(const struct cli_opt *o, const char *arg, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (!*arg || *end || errno || !isfinite(v) || v > o->max || v < o->min ||
        (o->min_open && v == o->min))
        return -1;
    if (o->kind == CLI_V_INTEGER && v != floor(v))
        return -1;
    *out = v;
    return 0;
}

/* Check arg per o's kind and store it in args; 0, or the exit status after the error. */
static int store(const struct cli_opt *o, const char *arg, void *args, struct cli_parse *p)
{
    char *field = (char *)args + o->off;
    double v;
    switch (o->kind) {
    case CLI_V_SECTION:
        return 0;
    case CLI_V_SET:
    case CLI_V_CLEAR:
        *(bool *)field = o->kind == CLI_V_SET;
        return 0;
    case CLI_V_STRING:
        *(const char **)field = arg;
        return 0;
    case CLI_V_NUMBER:
    case CLI_V_INTEGER:
        if (parse_number(o, arg, &v) < 0)
            return bad_value(p->cmd, o, arg);
        if (o->kind == CLI_V_NUMBER)
            *(double *)field = v;
        else
            *(long *)field = (long)v;
        return 0;
    case CLI_V_BYTES:
        if (mix_parse_bytes(arg, (uint64_t *)field) < 0)
            return bad_value(p->cmd, o, arg);
        return 0;
    case CLI_V_ENUM:
        for (const struct cli_enum *e = o->values; e->name; e++)
            if (!strcasecmp(e->name, arg)) {
                *(int *)field = e->value;
                return 0;
            }
        return bad_value(p->cmd, o, arg);
    case CLI_V_LIST: {
        struct cli_list *l = (struct cli_list *)field;
        int rc = o->parse ? o->parse(o, arg, args, p) : 0;
        if (rc || !arg)
            return rc; /* a bad value, or an optional argument left out */
        if (o->max_count && l->n == o->max_count) {
            /* A list's bad words the limit (%d), not the value. */
            char msg[256];
            snprintf(msg, sizeof(msg), o->bad ? o->bad : "at most %d --%s", o->max_count, o->name);
            return cli_usage_error(p->cmd->name, "%s", msg);
        }
        l->v = xalloc_resize(l->v, (size_t)(l->n + 1) * sizeof(*l->v));
        l->v[l->n++] = arg;
        return 0;
    }
    case CLI_V_CUSTOM:
        return o->parse(o, arg, args, p);
    }
    return 0;
}

void cli_args_free(const struct cli_command *cmd, void *args)
{
    for (int i = 0; i < cmd->nopts; i++)
        if (cmd->opts[i].kind == CLI_V_LIST) {
            struct cli_list *l = (struct cli_list *)((char *)args + cmd->opts[i].off);
            free(l->v);
            l->v = NULL;
            l->n = 0;
        }
}

/* After getopt_long returned '?' or ':' (opterr = 0): name the bad option in one line. */
static int bad_option(const char *cmd, char **argv, const char *shortopts)
{
    const char *opt = argv[optind - 1];
    if (optopt && (!opt || strncmp(opt, "--", 2))) {
        const char *k = strchr(shortopts, optopt);
        return cli_usage_error(cmd, "option -%c %s", optopt,
                               k && k[1] == ':' ? "needs an argument" : "is unknown");
    }
    return cli_usage_error(cmd, "unknown option or missing argument: '%s'", opt ? opt : "?");
}

/* Entry i of cmd: its table, then --help and --version. */
static const struct cli_opt *entry(const struct cli_command *cmd, int i)
{
    return i < cmd->nopts ? &cmd->opts[i] : &cli_std_opts[i - cmd->nopts];
}

int cli_parse_args(const struct cli_command *cmd, int argc, char **argv, void *args, int *first)
{
    /* getopt_long's array and short options, from the table and the two standard ones. */
    struct option lopts[OPT_MAX + 3];
    char shortopts[3 * (OPT_MAX + 2) + 1];
    int nl = 0, ns = 0, nent = cmd->nopts + 2;
    if (cmd->nopts > OPT_MAX)
        return CLI_SOFTWARE;
    for (int i = 0; i < nent; i++) {
        const struct cli_opt *o = entry(cmd, i);
        if (!o->name)
            continue;
        int has = o->arg == CLI_ARG_NONE       ? no_argument
                  : o->arg == CLI_ARG_REQUIRED ? required_argument
                                               : optional_argument;
        lopts[nl++] = (struct option){o->name, has, NULL, OPT_VAL_BASE + i};
        if (o->short_name) {
            shortopts[ns++] = o->short_name;
            for (int k = 0; k < (int)o->arg; k++)
                shortopts[ns++] = ':';
        }
    }
    lopts[nl] = (struct option){NULL, 0, NULL, 0};
    shortopts[ns] = '\0';

    struct cli_parse p = {cmd, argc, argv};
    optind = 1;
    opterr = 0; /* bad options are reported here, in one line */
    int c;
    while ((c = getopt_long(argc, argv, shortopts, lopts, NULL)) != -1) {
        int idx = c >= OPT_VAL_BASE ? c - OPT_VAL_BASE : -1;
        for (int i = 0; c > 0 && c < OPT_VAL_BASE && c != '?' && c != ':' && i < nent; i++)
            if (entry(cmd, i)->short_name == c)
                idx = i; /* a short option: the entry with that letter */
        int rc;
        if (idx < 0) {
            rc = bad_option(cmd->name, argv, shortopts);
        } else if (idx == cmd->nopts) {
            cli_print_help(cmd, stdout);
            rc = CLI_OK;
        } else if (idx == cmd->nopts + 1) {
            cli_print_version();
            rc = CLI_OK;
        } else if ((rc = store(&cmd->opts[idx], optarg, args, &p)) == 0) {
            continue;
        }
        cli_args_free(cmd, args);
        return rc;
    }
    *first = optind;
    return -1;
}

void cli_opt_label(const struct cli_opt *o, char *buf, size_t len)
{
    int n = 0;
    if (o->short_name)
        n = snprintf(buf, len, "-%c, ", o->short_name);
    if (n < 0 || (size_t)n >= len)
        return;
    const char *arg = o->arg_name ? o->arg_name : "";
    const char *sep = o->arg == CLI_ARG_NONE || o->arg == CLI_ARG_OPTIONAL ? "" : " ";
    snprintf(buf + n, len - (size_t)n, "--%s%s%s", o->name, sep, arg);
}

void cli_opt_help(const struct cli_opt *o, char *out, size_t len)
{
    size_t n = 0;
    for (const char *s = o->help; *s && n + 1 < len;) {
        if (!strncmp(s, "{default}", 9)) {
            n += (size_t)snprintf(out + n, len - n, "%g", o->def);
            s += 9;
        } else if (!strncmp(s, "{max}", 5)) {
            n += (size_t)snprintf(out + n, len - n, "%d", o->max_count);
            s += 5;
        } else {
            out[n++] = *s++;
        }
    }
    out[n < len ? n : len - 1] = '\0';
}

static void print_opt(const struct cli_opt *o, int col, FILE *f)
{
    char label[128], help[1024];
    cli_opt_label(o, label, sizeof(label));
    cli_opt_help(o, help, sizeof(help));
    int w = fprintf(f, "  %s", label);
    /* A label that leaves no room: its help starts on the next line. */
    if (w >= col) {
        fputc('\n', f);
        w = 0;
    }
    const char *line = help;
    for (;;) {
        const char *nl = strchr(line, '\n');
        int l = nl ? (int)(nl - line) : (int)strlen(line);
        fprintf(f, "%*s%.*s\n", col - w, "", l, line);
        if (!nl)
            break;
        line = nl + 1;
        w = 0;
    }
}

void cli_print_help(const struct cli_command *cmd, FILE *f)
{
    fputs(cmd->synopsis, f);
    fputc('\n', f);
    cli_print_options(cmd, f);
    if (cmd->epilogue) {
        fputc('\n', f);
        fputs(cmd->epilogue, f);
    }
}

void cli_print_options(const struct cli_command *cmd, FILE *f)
{
    for (int i = 0; i < cmd->nopts; i++) {
        const struct cli_opt *o = &cmd->opts[i];
        if (o->kind == CLI_V_SECTION)
            fprintf(f, "\n%s\n", o->help);
        else if (o->help)
            print_opt(o, cmd->help_col, f);
    }
    for (int i = 0; i < 2; i++)
        print_opt(&cli_std_opts[i], cmd->help_col, f);
}
