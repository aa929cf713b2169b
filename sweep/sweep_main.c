/* sweep_main: fabtop-sweep's start. Before MPI_Init: the launcher from the environment
 * (engine/launch/launch_env.h; outside one MPI_Init would start a singleton and hide the
 * mistake) and the node's topology (its rail: the NIC of its local rank). Then MPI's one
 * gather of every rank's record (engine/launch/launch_record.h) at rank 0, which refuses what
 * cannot be swept (damaged records, mismatched versions, rank counts the patterns cannot use,
 * a --groups file naming hosts not in the job, an -o that cannot be written) and broadcasts
 * its verdict, so that every rank exits with the same status. The rounds come later. */
#include "sweep/sweep_main.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <sodium.h>

#include "cli/cli.h"
#include "cli/cli_sweep.h"
#include "common/xalloc.h"
#include "engine/launch/launch_env.h"
#include "engine/launch/launch_groups.h"
#include "engine/launch/launch_record.h"
#include "topology/topo_pipeline.h"

#define ME "fabtop sweep"
/* Ranks listed one by one in the header; beyond, a count. */
#define HEADER_RANKS 64

/* Only rank 0 (or a process whose rank is unknown) speaks, so that N ranks do not print the
 * same line N times. */
static int speaks;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    if (!speaks)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", ME);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Parse the command line; ranks other than 0 keep quiet about usage errors (rank 0 says
 * it). -1 to go on, else the exit status. */
static int parse(int argc, char **argv, struct sweep_args *a)
{
    *a = (struct sweep_args){.duration = SWEEP_DEFAULT_DURATION};
    int saved = -1;
    if (!speaks) {
        fflush(stderr);
        saved = dup(2);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, 2);
            close(null);
        }
    }
    int first, rc = cli_parse_args(&cli_sweep_command, argc, argv, a, &first);
    if (rc < 0 && first < argc)
        rc = cli_usage_error("sweep", "takes no operands, not '%s'", argv[first]);
    if (saved >= 0) {
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
    }
    if (rc < 0)
        sweep_args_finish(a);
    return rc;
}

/* This rank's record: its host, rail and topology summary. */
static void own_record(struct launch_record *r, const struct launch_env *env, const char *version,
                       int rank, int size)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->version, sizeof(r->version), "%s", version);
    r->layout = LAUNCH_LAYOUT;
    r->rank = (uint32_t)rank;
    r->size = (uint32_t)size;
    if (gethostname(r->hostname, sizeof(r->hostname)) < 0 || !r->hostname[0])
        snprintf(r->hostname, sizeof(r->hostname), "rank-%d", rank);
    r->hostname[sizeof(r->hostname) - 1] = '\0';
    r->local_rank = env->local_rank;
    r->local_size = env->local_size;

    struct topo_pipeline_opts po = {.window = 0};
    struct topo_pipeline tp = {0};
    struct ft_err err = {0};
    if (topo_pipeline_load(&po, &tp, &err) == 0 && tp.m)
        launch_record_topo(r, tp.m);
    else
        fprintf(stderr, "%s: rank %d: the topology was not read (%s); its record lists no NIC\n",
                ME, rank, err.msg);
    topo_pipeline_free(&tp);
    r->rail = launch_rail(r->local_rank, (int)r->nics_total);
}

/* "0-2,5" for the ranks whose flag is set. */
static void rank_list(const int *flag, int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used + 16 < len; i++) {
        if (!flag[i])
            continue;
        int j = i;
        while (j + 1 < n && flag[j + 1])
            j++;
        used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? "," : "", i);
        if (j > i)
            used += (size_t)snprintf(buf + used, len - used, "-%d", j);
        i = j;
    }
}

/* Rank 0: decode every slot and refuse the rendezvous if it cannot go on. 0, or the status. */
static int check_records(const unsigned char *slots, int n, struct launch_record *recs)
{
    /* Headers first: a rank of another version may lay its body out differently. */
    int *other = xalloc_zero((size_t)n, sizeof(int));
    int mismatch = -1, rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        struct ft_err err = {0};
        if (launch_record_header(slots + (size_t)i * LAUNCH_SLOT, &recs[i], &err) < 0) {
            say("rank %d: %s", i, err.msg);
            rc = CLI_DATAERR;
        } else if (strcmp(recs[i].version, recs[0].version)) {
            other[i] = 1;
            if (mismatch < 0)
                mismatch = i;
        }
    }
    if (!rc && mismatch >= 0) {
        char same[256], diff[256];
        rank_list(other, n, diff, sizeof(diff));
        for (int i = 0; i < n; i++)
            other[i] = !other[i];
        rank_list(other, n, same, sizeof(same));
        say("mismatched fabtop versions: %s on rank%s %s, %s on rank%s %s; install one fabtop "
            "on every node",
            recs[0].version, strpbrk(same, ",-") ? "s" : "", same, recs[mismatch].version,
            strpbrk(diff, ",-") ? "s" : "", diff);
        rc = CLI_DATAERR;
    }
    free(other);
    for (int i = 0; i < n && !rc; i++) {
        struct ft_err err = {0};
        if (launch_record_decode(slots + (size_t)i * LAUNCH_SLOT, &recs[i], &err) < 0) {
            say("rank %d: %s", i, err.msg);
            rc = CLI_DATAERR;
        } else if (recs[i].rank != (uint32_t)i || recs[i].size != (uint32_t)n) {
            say("rank %d: rendezvous record refused: it says rank %u of %u, MPI says %d of %d", i,
                recs[i].rank, recs[i].size, i, n);
            rc = CLI_DATAERR;
        }
    }
    return rc;
}

/* The job's distinct hostnames, in rank order. */
static const char **job_hosts(const struct launch_record *recs, int n, int *nhosts)
{
    const char **hosts = xalloc_zero((size_t)n, sizeof(*hosts));
    int k = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < k && !seen; j++)
            seen = !strcmp(hosts[j], recs[i].hostname);
        if (!seen)
            hosts[k++] = recs[i].hostname;
    }
    *nhosts = k;
    return hosts;
}

/* Rank 0's verdict on the plan: rank counts, --groups, -o. 0, or the status. */
static int check_plan(const struct sweep_args *a, const struct launch_record *recs, int n,
                      struct launch_groups *groups)
{
    if (n < 2) {
        say("1 rank: a sweep needs at least 2 (one per node or NIC: 'mpirun -np N ...' or "
            "'srun --mpi=pmix -N N ...')");
        return CLI_USAGE;
    }
    if ((a->patterns & SWEEP_BISECTION) && n % 2) {
        say("--pattern bisection splits the ranks half against half and needs an even number "
            "of them, not %d; start one more rank or leave bisection out",
            n);
        return CLI_USAGE;
    }
    if (a->groups) {
        struct ft_err err = {0};
        int nhosts, rc = launch_groups_load(a->groups, groups, &err);
        if (rc == 0) {
            const char **hosts = job_hosts(recs, n, &nhosts);
            rc = launch_groups_check(groups, a->groups, hosts, nhosts, &err);
            free(hosts);
        }
        if (rc < 0) {
            say("%s", err.msg);
            return rc == -EBADMSG ? CLI_DATAERR : ft_err_exit_status(rc);
        }
    }
    if (a->out && cli_check_output(a->out))
        return CLI_CANTCREAT;
    return 0;
}

static void print_header(FILE *f, const struct sweep_args *a, const struct launch_env *env,
                         const struct launch_record *recs, int n, const struct launch_groups *g)
{
    int nhosts;
    const char **hosts = job_hosts(recs, n, &nhosts);
    free(hosts);
    fprintf(f, "fabtop sweep %s: %d ranks on %d host%s, started by %s%s\n", recs[0].version, n,
            nhosts, nhosts == 1 ? "" : "s", launch_kind_str(env->kind), env->pmix ? " (PMIx)" : "");
    fprintf(f, "patterns:");
    for (int i = 0; i < SWEEP_NPATTERNS; i++)
        if (a->patterns & (1u << i))
            fprintf(f, " %s", sweep_pattern_name(i));
    fprintf(f, "; %g s per test; on failure: %s", a->duration,
            a->on_failure == SWEEP_STOP ? "stop" : "continue");
    if (a->groups)
        fprintf(f, "; groups: %d from %s", g->ngroups, a->groups);
    fprintf(f, "\n%-5s %-24s %-7s %-5s %-24s %s\n", "rank", "host", "local", "rail", "NIC (netdev)",
            "address");
    for (int i = 0; i < n && i < HEADER_RANKS; i++) {
        const struct launch_record *r = &recs[i];
        char local[24], rail[16], nic[72] = "none";
        const char *addr = "-";
        if (r->local_rank < 0)
            snprintf(local, sizeof(local), "?");
        else if (r->local_size > 0)
            snprintf(local, sizeof(local), "%d/%d", r->local_rank, r->local_size);
        else
            snprintf(local, sizeof(local), "%d", r->local_rank);
        snprintf(rail, sizeof(rail), r->rail < 0 ? "-" : "%d", r->rail);
        if (r->rail >= 0 && (uint32_t)r->rail < r->nnics) {
            const struct launch_nic *c = &r->nics[r->rail];
            if (c->rdma_dev[0] && c->netdev[0])
                snprintf(nic, sizeof(nic), "%s (%s)", c->rdma_dev, c->netdev);
            else
                snprintf(nic, sizeof(nic), "%s", c->rdma_dev[0] ? c->rdma_dev : c->netdev);
            if (c->addr[0])
                addr = c->addr;
        }
        fprintf(f, "%-5d %-24s %-7s %-5s %-24s %s\n", i, r->hostname, local, rail, nic, addr);
    }
    if (n > HEADER_RANKS)
        fprintf(f, "... and %d more ranks\n", n - HEADER_RANKS);
    /* Nodes unlike the others: their comparisons will be flagged. */
    int usual = launch_record_usual(recs, n), nunlike = 0;
    for (int i = 0; i < n; i++) {
        char diff[512];
        launch_record_diff(&recs[usual], &recs[i], diff, sizeof(diff));
        if (!diff[0])
            continue;
        if (!nunlike++)
            fprintf(f, "unlike the others (their comparisons are flagged):\n");
        fprintf(f, "  rank %d (%s): %s\n", i, recs[i].hostname, diff);
    }
}

static cJSON *header_json(const struct sweep_args *a, const struct launch_env *env,
                          const struct launch_record *recs, int n, const struct launch_groups *g)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "kind", "fabtop-sweep-plan");
    cJSON_AddStringToObject(doc, "fabtop_version", recs[0].version);
    cJSON_AddStringToObject(doc, "launcher", launch_kind_str(env->kind));
    cJSON *pats = cJSON_AddArrayToObject(doc, "patterns");
    for (int i = 0; i < SWEEP_NPATTERNS; i++)
        if (a->patterns & (1u << i))
            cJSON_AddItemToArray(pats, cJSON_CreateString(sweep_pattern_name(i)));
    cJSON_AddNumberToObject(doc, "duration_s", a->duration);
    cJSON_AddStringToObject(doc, "on_failure", a->on_failure == SWEEP_STOP ? "stop" : "continue");
    int usual = launch_record_usual(recs, n);
    cJSON *ranks = cJSON_AddArrayToObject(doc, "ranks");
    for (int i = 0; i < n; i++) {
        const struct launch_record *r = &recs[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", i);
        cJSON_AddStringToObject(o, "host", r->hostname);
        if (a->groups) {
            int k = launch_groups_of(g, r->hostname);
            if (k >= 0)
                cJSON_AddStringToObject(o, "group", g->names[k]);
        }
        if (r->local_rank >= 0)
            cJSON_AddNumberToObject(o, "local_rank", r->local_rank);
        if (r->rail >= 0)
            cJSON_AddNumberToObject(o, "rail", r->rail);
        cJSON_AddNumberToObject(o, "gpus", r->ngpus);
        cJSON_AddNumberToObject(o, "nics_total", r->nics_total);
        cJSON *nics = cJSON_AddArrayToObject(o, "nics");
        for (uint32_t k = 0; k < r->nnics; k++) {
            const struct launch_nic *c = &r->nics[k];
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "model", c->model);
            cJSON_AddStringToObject(x, "firmware", c->firmware);
            cJSON_AddStringToObject(x, "rdma_dev", c->rdma_dev);
            cJSON_AddStringToObject(x, "netdev", c->netdev);
            cJSON_AddStringToObject(x, "link_layer",
                                    topo_link_layer_str((enum topo_link_layer)c->link_layer));
            if (c->mtu)
                cJSON_AddNumberToObject(x, "mtu_bytes", c->mtu);
            if (c->ib_mtu)
                cJSON_AddNumberToObject(x, "rdma_mtu_bytes", c->ib_mtu);
            if (c->rate_mbps)
                cJSON_AddNumberToObject(x, "rate_mbps", c->rate_mbps);
            if (c->addr[0])
                cJSON_AddStringToObject(x, "address", c->addr);
            cJSON_AddItemToArray(nics, x);
        }
        char diff[512];
        launch_record_diff(&recs[usual], r, diff, sizeof(diff));
        if (diff[0])
            cJSON_AddStringToObject(o, "unlike", diff);
        cJSON_AddItemToArray(ranks, o);
    }
    return doc;
}

int sweep_main(int argc, char **argv, const char *version)
{
    if (sodium_init() < 0) {
        fprintf(stderr, "%s: libsodium cannot start (no entropy source?)\n", ME);
        return CLI_SOFTWARE;
    }
    struct launch_env env;
    struct ft_err err = {0};
    int env_rc = launch_env_read_process(&env, &err);
    speaks = env.rank <= 0;
    struct sweep_args a;
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (env_rc < 0) {
        say("%s", err.msg);
        cli_args_free(&cli_sweep_command, &a);
        return CLI_USAGE;
    }
    if (env.kind == LAUNCH_NONE) {
        char line[512];
        launch_howto(line, sizeof(line), "not started by mpirun or srun");
        say("%s", line);
        cli_args_free(&cli_sweep_command, &a);
        return CLI_USAGE;
    }

    struct launch_record own;
    own_record(&own, &env, version, env.rank < 0 ? 0 : env.rank, env.size);

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    speaks = rank == 0;
    own.rank = (uint32_t)rank;
    own.size = (uint32_t)size;
    if (env.size > 1 && size == 1) {
        /* srun without --mpi=pmix: every task is a singleton of its own. */
        char why[160], line[512];
        snprintf(why, sizeof(why),
                 "%s started %d tasks but MPI sees a world of 1 (srun without --mpi=pmix?)",
                 launch_kind_str(env.kind), env.size);
        launch_howto(line, sizeof(line), why);
        speaks = env.rank <= 0;
        say("%s", line);
        MPI_Finalize();
        cli_args_free(&cli_sweep_command, &a);
        return CLI_USAGE;
    }

    unsigned char slot[LAUNCH_SLOT];
    if (launch_record_encode(&own, slot, &err) < 0) {
        fprintf(stderr, "%s: rank %d: %s\n", ME, rank, err.msg);
        memset(slot, 0, sizeof(slot)); /* rank 0 refuses it, naming this rank */
    }
    unsigned char *slots = rank == 0 ? xalloc((size_t)size * LAUNCH_SLOT) : NULL;
    MPI_Gather(slot, LAUNCH_SLOT, MPI_BYTE, slots, LAUNCH_SLOT, MPI_BYTE, 0, MPI_COMM_WORLD);

    struct launch_record *recs = NULL;
    struct launch_groups groups = {0};
    int status = 0;
    if (rank == 0) {
        recs = xalloc_zero((size_t)size, sizeof(*recs));
        status = check_records(slots, size, recs);
        if (!status)
            status = check_plan(&a, recs, size, &groups);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!status && rank == 0) {
        if (a.json || a.out) {
            cJSON *doc = header_json(&a, &env, recs, size, &groups);
            status = cli_emit_json(doc, a.json, a.out, "sweep");
            cJSON_Delete(doc);
        }
        if (!a.json)
            print_header(stdout, &a, &env, recs, size, &groups);
        fflush(stdout);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(slots);
    free(recs);
    launch_groups_free(&groups);
    cli_args_free(&cli_sweep_command, &a);
    MPI_Finalize();
    return status;
}
