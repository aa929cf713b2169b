/* main: fabtop's entry point: dispatches subcommands from the command table (cli_opts.h). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_gendoc.h"
#include "cli/cli_opts.h"

static void usage(FILE *f)
{
    fprintf(f, "Usage: fabtop [--input FILE | --sysfs-root DIR] [--results FILE | --attach FILE]\n"
               "              [--theme NAME] [--no-color]   the interactive explorer\n"
               "       fabtop COMMAND [OPTIONS]             batch commands for scripts\n"
               "An explorer for GPU-cluster fabrics: topology, traffic tests, counters.\n\n"
               "Commands:\n");
    int n;
    const struct cli_command *const *commands = cli_commands(&n);
    for (int i = 0; i < n; i++)
        if (commands[i]->name[0])
            fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(f, "\nThe explorer's options:\n");
    cli_print_options(&cli_explore_command, f);
    fprintf(f, "\nRun 'fabtop COMMAND --help' for a command's options; man fabtop-COMMAND.\n");
}

int main(int argc, char **argv)
{
    /* No subcommand: the explorer (its options start with '-'). */
    if (argc < 2 || (argv[1][0] == '-' && strcmp(argv[1], "--help") && strcmp(argv[1], "-h") &&
                     strcmp(argv[1], "--version") && strcmp(argv[1], "-V")))
        return cli_explore_main(argc, argv);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return CLI_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        cli_print_version();
        return CLI_OK;
    }
    /* What the completion scripts offer at Tab time (cli_gendoc.h); not in --help. */
    if (!strcmp(argv[1], "__complete"))
        return argc == 3 ? cli_gendoc_complete(argv[2], stdout) : CLI_USAGE;
    const struct cli_command *cmd = argv[1][0] ? cli_command_find(argv[1]) : NULL;
    if (cmd)
        return cmd->main(argc - 1, argv + 1);
    fprintf(stderr, "fabtop: unknown command '%s'; try 'fabtop --help'\n", argv[1]);
    return CLI_USAGE;
}
