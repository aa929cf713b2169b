/* main: fabtop's entry point: dispatches subcommands from one table. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct cli_cmd commands[] = {
    {"topo", "GPU / NIC / port topology, affinity matrix and bring-up lint", cli_topo_main},
    {"run", "run a traffic mix and report latency, throughput, retransmissions", cli_run_main},
    {"serve", "peer agent for 'fabtop run --peer' (authenticated, capped)", cli_serve_main},
    {"compare", "two saved results side by side: differing conditions, ratios", cli_compare_main},
    {"report", "the summary of a saved results file", cli_report_main},
    {"counters", "congestion, loss and error counters of ports and netdevs", cli_counters_main},
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: fabtop [--input FILE | --sysfs-root DIR | --results FILE] [--theme NAME]\n"
               "              [--no-color]        the interactive explorer\n"
               "       fabtop COMMAND [OPTIONS]   batch commands for scripts\n"
               "An explorer for GPU-cluster fabrics: topology, traffic tests, counters.\n\n"
               "Commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'fabtop COMMAND --help' for a command's options.\n");
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
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].main(argc - 1, argv + 1);
    fprintf(stderr, "fabtop: unknown command '%s'; try 'fabtop --help'\n", argv[1]);
    return CLI_USAGE;
}
