/* cli_opts: every command's options as data. One table per command gives each option (long
 * and short name), its argument, its help line and its validator; from it getopt_long's
 * array is built, values are checked and stored, --help is printed, and man pages or shell
 * completion can be generated (cli_commands walks every command and every option). */
#ifndef CLI_OPTS_H
#define CLI_OPTS_H

#include <stddef.h>
#include <stdio.h>

/* Whether an option takes an argument (getopt_long's three cases). */
enum cli_argmode { CLI_ARG_NONE, CLI_ARG_REQUIRED, CLI_ARG_OPTIONAL };

/* What the value is and where it goes (off: a field of the command's own args struct). */
enum cli_kind {
    CLI_V_SECTION, /* not an option: a heading in --help (help is its text) */
    CLI_V_SET,     /* no argument: the bool at off becomes true */
    CLI_V_CLEAR,   /* no argument: the bool at off becomes false (--no-pin) */
    CLI_V_STRING,  /* the const char * at off: any text */
    CLI_V_NUMBER,  /* the double at off: a finite number in [min, max] ((min, max] if min_open) */
    CLI_V_INTEGER, /* the long at off: a whole number in [min, max] */
    CLI_V_BYTES,   /* the uint64_t at off: bytes like 4096 or 64KiB (mix_parse_bytes) */
    CLI_V_ENUM,    /* the int at off: the value of the name in values (case-insensitive) */
    CLI_V_LIST,    /* the struct cli_list at off: repeatable, at most max_count (0: any) */
    CLI_V_CUSTOM,  /* parse() stores it: a value with a grammar of its own */
};

/* How a shell completes the argument (man pages name it too). The command checks that a
 * file exists when it opens it, with that failure's own exit status (66, 65, 77). */
enum cli_complete {
    CLI_C_NONE,
    CLI_C_FILE,
    CLI_C_DIR,
    CLI_C_HOST,
    CLI_C_MIX,   /* a mix preset's name or a mix file (fabtop __complete mixes) */
    CLI_C_THEME, /* a theme's name or file (fabtop __complete themes) */
    CLI_C_MODEL, /* a model preset's name or a config.json (fabtop __complete models) */
};

/* One name of an enum option; aliases are accepted but not offered. */
struct cli_enum {
    const char *name;
    int value;
    int alias;
};

/* A repeatable option's values, in order (argv's own strings). */
struct cli_list {
    const char **v;
    int n;
};

struct cli_parse;

struct cli_opt {
    const char *name;     /* long name without "--"; NULL for a section */
    char short_name;      /* 0: long only */
    enum cli_argmode arg; /* none, required, optional (--name=VALUE only) */
    const char *arg_name; /* "FILE", "SEC"; for an optional one "[=FILE]" or " [SEC]" */
    const char *help;     /* help lines ('\n' between); "{default}" and "{max}" stand for
                             def and max_count; NULL: left out of --help (test hooks) */
    enum cli_kind kind;   /* the validator */
    enum cli_complete complete;
    double min, max;               /* CLI_V_NUMBER, CLI_V_INTEGER */
    int min_open;                  /* min itself is refused */
    double def;                    /* the default that "{default}" prints (%g) */
    int max_count;                 /* CLI_V_LIST */
    const struct cli_enum *values; /* CLI_V_ENUM: ends with a NULL name */
    /* The usage error for a bad value: a printf format whose one argument is the value
     * (%s; for CLI_V_LIST the count, %d). NULL: "--NAME takes a number from MIN to MAX, not
     * 'VALUE'". */
    const char *bad;
    size_t off; /* offsetof the field in the command's args struct */
    /* CLI_V_CUSTOM: check and store arg (NULL for an optional argument left out).
     * CLI_V_LIST: check arg before it is added, storing nothing (arg NULL: an optional
     * argument left out; it may set a flag of its own). 0, or the exit status after
     * printing the usage error (cli_usage_error). */
    int (*parse)(const struct cli_opt *o, const char *arg, void *args, struct cli_parse *p);
};

/* One command: its synopsis and description, the options, what --help prints after
 * them, and its entry point. The explorer is the command with the empty name. */
struct cli_command {
    const char *name;     /* "topo"; "" for the explorer */
    const char *summary;  /* one line for `fabtop --help` */
    const char *synopsis; /* "Usage: ..." and the description, each line ending in '\n' */
    const struct cli_opt *opts;
    int nopts;
    const char *epilogue; /* after the options (units, exit statuses); NULL: none */
    int help_col;         /* the column where help lines start */
    int (*main)(int argc, char **argv);
};

/* A heading in a table. */
#define CLI_SECTION(text)                                                                          \
    {                                                                                              \
        .help = (text), .kind = CLI_V_SECTION                                                      \
    }

/* The parser's state, for CLI_V_CUSTOM options that look at the next word. */
struct cli_parse {
    const struct cli_command *cmd;
    int argc;
    char **argv;
};

/* -h, --help and -V, --version: every command takes them after its own table. */
extern const struct cli_opt cli_std_opts[2];

/* Every command, the explorer first: the single source for --help, man pages and
 * completion. */
const struct cli_command *const *cli_commands(int *n);
/* The command called name ("" the explorer); NULL if none. */
const struct cli_command *cli_command_find(const char *name);

/* Parse argv[1..] into args (zeroed or given defaults by the caller) per cmd's table.
 * Returns -1 when parsing went through (argv[*first..argc-1] are the operands), else the
 * status to exit with: 0 after --help or --version (printed), 64 after a usage error
 * (printed in one line: the bad option or value, as the table words it). */
int cli_parse_args(const struct cli_command *cmd, int argc, char **argv, void *args, int *first);
/* Free what parsing allocated in args (the CLI_V_LIST arrays). */
void cli_args_free(const struct cli_command *cmd, void *args);
/* Print cmd's --help text. */
void cli_print_help(const struct cli_command *cmd, FILE *f);
/* Its options alone, as --help lists them (-h and -V last). */
void cli_print_options(const struct cli_command *cmd, FILE *f);
/* "--name ARG" (with "-x, " before it when it has a short name), as --help shows it. */
void cli_opt_label(const struct cli_opt *o, char *buf, size_t len);
/* o's help text with "{default}" and "{max}" filled in (lines split by '\n'). */
void cli_opt_help(const struct cli_opt *o, char *out, size_t len);

extern const struct cli_command cli_explore_command;
extern const struct cli_command cli_topo_command;
extern const struct cli_command cli_run_command;
extern const struct cli_command cli_serve_command;
extern const struct cli_command cli_compare_command;
extern const struct cli_command cli_report_command;
extern const struct cli_command cli_baseline_command;
extern const struct cli_command cli_counters_command;
extern const struct cli_command cli_sweep_command;
extern const struct cli_command cli_mix_command;
extern const struct cli_command cli_drill_command;
extern const struct cli_command cli_doctor_command;

#endif
