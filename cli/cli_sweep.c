/* cli_sweep: `fabtop sweep`'s option table and, in fabtop, its entry point: execute
 * fabtop-sweep (sweep/sweep_main.c, linked to OpenMPI) found beside the fabtop binary or in
 * PATH, so that fabtop starts on nodes without libmpi. */
#include "cli/cli_sweep.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cli.h"

static const char *const pattern_names[SWEEP_NPATTERNS] = {"pairs", "incast",    "bisection",
                                                           "ring",  "allreduce", "alltoall"};

const char *sweep_pattern_name(int i)
{
    return i >= 0 && i < SWEEP_NPATTERNS ? pattern_names[i] : "?";
}

static int check_pattern(const struct cli_opt *o, const char *arg, void *args, struct cli_parse *p)
{
    (void)o;
    (void)args;
    for (int i = 0; i < SWEEP_NPATTERNS; i++)
        if (!strcasecmp(arg, pattern_names[i]))
            return 0;
    return cli_usage_error(
        p->cmd->name,
        "--pattern takes pairs, incast, bisection, ring, allreduce or alltoall, not '%s'", arg);
}

void sweep_args_finish(struct sweep_args *a)
{
    a->patterns = 0;
    for (int k = 0; k < a->pattern_words.n; k++)
        for (int i = 0; i < SWEEP_NPATTERNS; i++)
            if (!strcasecmp(a->pattern_words.v[k], pattern_names[i]))
                a->patterns |= 1u << i;
    if (!a->patterns)
        a->patterns = SWEEP_BIT_PAIRS;
}

static const struct cli_enum on_failure_values[] = {
    {"continue", SWEEP_CONTINUE, 0}, {"stop", SWEEP_STOP, 0}, {NULL, 0, 0}};

#define A(f) offsetof(struct sweep_args, f)
static const struct cli_opt sweep_opts[] = {
    {"pattern", 'p', CLI_ARG_REQUIRED, "NAME",
     "pairs, incast, bisection, ring, allreduce or alltoall;\nrepeat for several (default pairs)",
     CLI_V_LIST, .max_count = 16, .parse = check_pattern, .off = A(pattern_words)},
    {"duration", 'd', CLI_ARG_REQUIRED, "S", "measured seconds per test (default {default})",
     CLI_V_NUMBER, .min = 0, .min_open = 1, .max = 86400, .def = SWEEP_DEFAULT_DURATION,
     .bad = "--duration takes seconds (0 < S <= 86400), not '%s'", .off = A(duration)},
    {"allreduce-size", 0, CLI_ARG_REQUIRED, "BYTES",
     "S of the allreduce pattern's ring all-reduce across all\nranks over TCP (default 16MiB, "
     "or --model's)",
     CLI_V_BYTES, .off = A(allreduce_bytes)},
    {"alltoall-size", 0, CLI_ARG_REQUIRED, "BYTES",
     "S of the alltoall pattern's all-to-all across all ranks\nover TCP, a rank's whole buffer "
     "(S / N to each peer;\ndefault 16MiB, or --model's)",
     CLI_V_BYTES, .off = A(alltoall_bytes)},
    {"model", 0, CLI_ARG_REQUIRED, "NAME|FILE",
     "size the collectives from a model (a preset or a Hugging\nFace config.json, as fabtop mix "
     "--model): allreduce a\ndecode step's TP all-reduce at TP = the ranks, alltoall\nits MoE "
     "dispatch at EP = the ranks",
     CLI_V_STRING, CLI_C_FILE, .off = A(model)},
    {"batch", 0, CLI_ARG_REQUIRED, "B", "sequences in the model's decode step (default {default})",
     CLI_V_INTEGER, .min = 1, .max = 1048576, .def = 32, .off = A(batch)},
    {"groups", 0, CLI_ARG_REQUIRED, "FILE",
     "where the hosts sit: one line per switch, NAME HOST...", CLI_V_STRING, CLI_C_FILE,
     .off = A(groups)},
    {"sites", 0, CLI_ARG_REQUIRED, "FILE",
     "sites by address: lines of NAME CIDR [CIDR ...] (as fabtop\nrun --sites); a pair in two "
     "sites is a wide-area path, its\ntests say so; without --groups the sites place the ranks",
     CLI_V_STRING, CLI_C_FILE, .off = A(sites)},
    {"on-failure", 0, CLI_ARG_REQUIRED, "continue|stop",
     "after a rank fails: go on with the others, or stop", CLI_V_ENUM, .values = on_failure_values,
     .off = A(on_failure)},
    {"expect", 'e', CLI_ARG_REQUIRED, "TERMS",
     "thresholds for scripts: exit 1 listing the pairs or ranks\nthat miss them, e.g. "
     "'pair.gbps>90,pair.p99<500us,rank.p50<100us'",
     CLI_V_STRING, .off = A(expect)},
    {"listen", 0, CLI_ARG_REQUIRED, "ADDR",
     "the address each rank's agent listens on and its tests\nleave from (default: its rail's "
     "first address)",
     CLI_V_STRING, .off = A(listen)},
    {"rails", 0, CLI_ARG_REQUIRED, "NETDEV,...",
     "the node's rails by netdev, in order (rail i is the i-th;\ndefault: its NICs, RDMA ones "
     "when it has any); needed\nwhere rails are virtual devices or the order differs",
     CLI_V_STRING, .off = A(rails)},
    {"publish", 0, CLI_ARG_REQUIRED, "FILE|none",
     "where rank 0 keeps the live document (the matrix so far,\nno test runs) for 'fabtop "
     "--attach' (default: "
     "$XDG_RUNTIME_DIR/fabtop/, as root /run/fabtop/,\nremoved at the end; a FILE given is kept)",
     CLI_V_STRING, .off = A(publish)},
    {"json", 0, CLI_ARG_NONE, NULL, "print the document as JSON on stdout (rank 0)", CLI_V_SET,
     .off = A(json)},
    {"output", 'o', CLI_ARG_REQUIRED, "FILE", "also save the JSON document to FILE (atomically)",
     CLI_V_STRING, CLI_C_FILE, .off = A(out)},
};
#undef A

static int sweep_exec_main(int argc, char **argv);

const struct cli_command cli_sweep_command = {
    .name = "sweep",
    .summary = "a rack's pairs, incast, bisection, ring, collectives (under mpirun or srun)",
    .synopsis = "Usage: fabtop sweep [OPTIONS]\n"
                "  under a launcher: mpirun -np N --host h1,... fabtop sweep ... or\n"
                "  srun --mpi=pmix -N N fabtop sweep ...\n"
                "Test a rack: one rank per node (or per NIC), started by the cluster's launcher;\n"
                "each rank takes the rail (NIC) of its local rank. Runs fabtop-sweep, built\n"
                "beside fabtop when OpenMPI is found.\n",
    .opts = sweep_opts,
    .nopts = sizeof(sweep_opts) / sizeof(sweep_opts[0]),
    .epilogue =
        "Exit status: 0 done, 64 usage (no launcher, srun without --mpi=pmix, a rank\n"
        "count the patterns or --model cannot use), 65 bad data (mismatched fabtop versions, a\n"
        "refused rendezvous record, a --groups file that does not parse or names a host\n"
        "not in the job, a --sites file or --model config.json that does not parse),\n"
        "66 missing --groups, --sites or --model file, 69 fabtop-sweep not installed,\n"
        "73 -o cannot be written.\n",
    .help_col = 24,
    .main = sweep_exec_main,
};

/* fabtop sweep ARGS: execute fabtop-sweep ARGS (beside this binary, else in PATH). */
static int sweep_exec_main(int argc, char **argv)
{
    /* --help and --version need no MPI: answered here from the same table. */
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") || !strcmp(argv[i], "--version") ||
            !strcmp(argv[i], "-V")) {
            struct sweep_args a = {.duration = SWEEP_DEFAULT_DURATION};
            int first, rc = cli_parse_args(&cli_sweep_command, argc, argv, &a, &first);
            cli_args_free(&cli_sweep_command, &a);
            return rc < 0 ? CLI_OK : rc;
        }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash && (size_t)(slash - self) + sizeof("/" SWEEP_BINARY) <= sizeof(self)) {
            strcpy(slash + 1, SWEEP_BINARY);
            if (access(self, X_OK) == 0) {
                argv[0] = self;
                execv(self, argv);
                fprintf(stderr, "fabtop sweep: cannot execute %s: %s\n", self, strerror(errno));
                return CLI_UNAVAILABLE;
            }
        }
    }
    argv[0] = (char *)SWEEP_BINARY;
    execvp(SWEEP_BINARY, argv);
    int e = errno;
    if (e == ENOENT)
        fprintf(stderr,
                "fabtop sweep: %s is neither beside fabtop nor in PATH; install the Debian "
                "packages openmpi-bin and libopenmpi-dev and rebuild fabtop (it builds %s when "
                "OpenMPI is found)\n",
                SWEEP_BINARY, SWEEP_BINARY);
    else
        fprintf(stderr, "fabtop sweep: cannot execute %s: %s\n", SWEEP_BINARY, strerror(e));
    return CLI_UNAVAILABLE;
}
