/* sweep_main: fabtop-sweep's start. Before MPI_Init: the launcher from the environment
 * (engine/launch/launch_env.h; outside one MPI_Init would start a singleton and hide the
 * mistake) and the node's topology (its rail: the NIC of its local rank). Then MPI's one
 * gather of every rank's record (engine/launch/launch_record.h) at rank 0, which refuses what
 * cannot be swept (damaged records, mismatched versions, rank counts the patterns cannot use,
 * a --groups file naming hosts not in the job, an -o that cannot be written) and broadcasts
 * its verdict, so that every rank exits with the same status. Then the rounds
 * (sweep_run.h): rank 0 conducts them over the control channel, the others serve. */
#include "sweep/sweep_main.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <sodium.h>

#include "cli/cli.h"
#include "cli/cli_sweep.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/launch/launch_env.h"
#include "engine/launch/launch_groups.h"
#include "engine/launch/launch_record.h"
#include "engine/model/model_config.h"
#include "engine/model/model_size.h"
#include "engine/path/path_sites.h"
#include "engine/peer/channel.h"
#include "engine/rack/rack_expect.h"
#include "engine/rack/rack_node.h"
#include "engine/run/runner.h"
#include "sweep/sweep_run.h"
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
    *a = (struct sweep_args){.duration = SWEEP_DEFAULT_DURATION, .batch = 32};
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

/* This rank's record: its host, rail and topology summary (tp keeps the topology for the
 * runs this rank makes; free it with topo_pipeline_free). */
static void own_record(struct launch_record *r, const struct launch_env *env, const char *version,
                       int rank, int size, struct topo_pipeline *tp)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->version, sizeof(r->version), "%s", version);
    r->layout = LAUNCH_LAYOUT;
    r->rank = (uint32_t)rank;
    r->size = (uint32_t)size;
    char host[256] = "";
    if (gethostname(host, sizeof(host)) < 0 || !host[0])
        snprintf(host, sizeof(host), "rank-%d", rank);
    host[sizeof(host) - 1] = '\0';
    launch_record_text(r->hostname, sizeof(r->hostname), host);
    r->local_rank = env->local_rank;
    r->local_size = env->local_size;

    struct topo_pipeline_opts po = {.window = 0};
    struct ft_err err = {0};
    if (topo_pipeline_load(&po, tp, &err) == 0 && tp->m)
        launch_record_topo(r, tp->m);
    else
        fprintf(stderr, "%s: rank %d: the topology was not read (%s); its record lists no NIC\n",
                ME, rank, err.msg);
    r->rail = launch_rail(r->local_rank, (int)r->nics_total);
    /* NCCL between ranks where CUDA and NCCL load and see a GPU (not hwloc's PCI list: the
     * runtime decides what NCCL can use). */
    int g = runner_transport_devices("nccl");
    r->nccl_gpus = (uint16_t)(g > 0 && g <= 4096 ? g : 0);
    /* Which GPU that is, by PCI bus id, so that rank 0 plans no NCCL test between two ranks
     * that hold the same one (NCCL refuses a communicator with one GPU twice: "Duplicate GPU
     * detected"); the index alone cannot tell, as CUDA_VISIBLE_DEVICES renumbers per rank. */
    if (r->nccl_gpus &&
        runner_transport_device_id("nccl", launch_rank_gpu(r), r->nccl_gpu, sizeof(r->nccl_gpu)))
        r->nccl_gpu[0] = '\0';
}

/* --rails NETDEV,...: this rank's rails as named, in that order. 0, or -errno with the
 * reason in err. */
static int own_rails(struct launch_record *r, const struct topo_model *m, const char *list,
                     struct ft_err *err)
{
    if (!m)
        return ft_err_set(err, -ENODEV, "--rails: the topology was not read");
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", list);
    const char *names[LAUNCH_MAX_NICS + 1];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == LAUNCH_MAX_NICS + 1)
            return ft_err_set(err, -EINVAL, "--rails: at most %d netdevs", LAUNCH_MAX_NICS);
        names[n++] = t;
    }
    int rc = launch_record_rails(r, m, names, n, err);
    if (rc == 0)
        r->rail = launch_rail(r->local_rank, (int)r->nics_total);
    return rc;
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

/* A rank's address for its site: its rail's, else the first its host name resolves to. */
static const struct path_site_prefix *site_of(const struct path_sites *sites,
                                              const struct launch_record *r)
{
    const char *addr = sweep_run_addr(r);
    if (addr[0])
        return path_sites_lookup(sites, addr);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    if (getaddrinfo(r->hostname, NULL, &hints, &ai) != 0 || !ai)
        return NULL;
    char ip[INET6_ADDRSTRLEN] = "";
    getnameinfo(ai->ai_addr, ai->ai_addrlen, ip, sizeof(ip), NULL, 0, NI_NUMERICHOST);
    freeaddrinfo(ai);
    return path_sites_lookup(sites, ip);
}

/* --sites without --groups: the site of each host's first rank (its rail's address) is its
 * group, so that the verdicts set pairs within a site against pairs within a site and pairs
 * across sites against pairs across sites. 0, or -errno. */
static int groups_from_sites(const struct path_sites *sites, const char *path,
                             const struct launch_record *recs, int n, struct launch_groups *g,
                             struct ft_err *err)
{
    struct strbuf sb;
    strbuf_init(&sb);
    for (int i = 0; i < sites->n; i++) {
        const char *name = sites->p[i].name;
        bool dup = false;
        for (int k = 0; k < i && !dup; k++)
            dup = !strcmp(sites->p[k].name, name);
        if (dup)
            continue;
        bool any = false;
        for (int r = 0; r < n; r++) {
            bool first = true; /* the host's first rank decides */
            for (int q = 0; q < r && first; q++)
                first = strcmp(recs[q].hostname, recs[r].hostname) != 0;
            const struct path_site_prefix *s = site_of(sites, &recs[r]);
            if (!first || !s || strcmp(s->name, name))
                continue;
            if (!any)
                strbuf_add(&sb, name);
            strbuf_printf(&sb, " %s", recs[r].hostname);
            any = true;
        }
        if (any)
            strbuf_add(&sb, "\n");
    }
    int rc = launch_groups_parse(sb.s, path, g, err);
    strbuf_free(&sb);
    return rc;
}

/* Rank 0's verdict on the plan: rank counts, --groups, --sites, -o. 0, or the status. */
/* --model: the collectives' sizes from the model at TP (allreduce) or EP (alltoall) = n, the
 * layout checked as fabtop mix checks it; a size given as well is refused. 0 or the status. */
static int model_sizes(struct sweep_args *a, int n)
{
    bool ar = a->patterns & SWEEP_BIT_ALLREDUCE, a2a = a->patterns & SWEEP_BIT_ALLTOALL;
    if (!a->model) {
        a->allreduce_bytes = a->allreduce_bytes ? a->allreduce_bytes : SWEEP_DEFAULT_ALLREDUCE_SIZE;
        a->alltoall_bytes = a->alltoall_bytes ? a->alltoall_bytes : SWEEP_DEFAULT_ALLTOALL_SIZE;
        return 0;
    }
    if (!ar && !a2a) {
        say("--model sizes the allreduce and alltoall patterns: add --pattern allreduce or "
            "alltoall");
        return CLI_USAGE;
    }
    if ((ar && a->allreduce_bytes) || (a2a && a->alltoall_bytes)) {
        say("--model sets the collectives' sizes: leave out --allreduce-size and "
            "--alltoall-size, or --model");
        return CLI_USAGE;
    }
    struct model_config m;
    struct ft_err err = {0};
    int rc = model_config_load(a->model, &m, &err);
    if (rc < 0) {
        say("%s", err.msg);
        return rc == -ENOENT ? CLI_NOINPUT : CLI_DATAERR;
    }
    struct model_layout l;
    model_size_layout_defaults(&l);
    l.batch = a->batch;
    struct model_sizes s;
    int w = 0;
    if (ar) {
        l.tp = n;
        if (model_size_compute(&m, &l, &s, &err) < 0) {
            say("--model %s at TP %d (the ranks): %s", a->model, n, err.msg);
            return CLI_USAGE;
        }
        a->allreduce_bytes = s.tp_decode;
        w += snprintf(a->model_note + w, sizeof(a->model_note) - (size_t)w,
                      "model %s, batch %ld: allreduce S = hidden %ld x batch %ld x %d B = %" PRIu64
                      " B, a decode step's TP all-reduce at TP %d",
                      m.name, l.batch, m.hidden, l.batch, s.act_bytes, s.tp_decode, n);
    }
    if (a2a) {
        if (!m.moe) {
            say("--model %s has no experts (no n_routed_experts or num_local_experts): the "
                "alltoall pattern sizes an MoE dispatch",
                a->model);
            return CLI_USAGE;
        }
        l.tp = 1;
        l.ep = n;
        if (model_size_compute(&m, &l, &s, &err) < 0) {
            say("--model %s at EP %d (the ranks): %s", a->model, n, err.msg);
            return CLI_USAGE;
        }
        /* A rank's whole buffer, as nccl-tests' alltoall counts it: each of its batch tokens
         * to its k experts (fabtop mix --model's NCCL dispatch). */
        a->alltoall_bytes = (uint64_t)l.batch * (uint64_t)m.experts_per_tok * s.dispatch_token;
        snprintf(a->model_note + w, sizeof(a->model_note) - (size_t)w,
                 "%smodel %s, batch %ld: alltoall S = batch %ld x %ld experts per token x %" PRIu64
                 " B a token%s = %" PRIu64 " B, an MoE layer's dispatch at EP %d",
                 w ? "; " : "", m.name, l.batch, l.batch, m.experts_per_tok, s.dispatch_token,
                 s.dispatch_fp8 ? " (FP8 and its scales)" : "", a->alltoall_bytes, n);
    }
    return 0;
}

static int check_plan(struct sweep_args *a, const struct launch_record *recs, int n,
                      struct launch_groups *groups, char **sites_text)
{
    if (n < 2) {
        say("1 rank: a sweep needs at least 2 (one per node or NIC: 'mpirun -np N ...' or "
            "'srun --mpi=pmix -N N ...')");
        return CLI_USAGE;
    }
    if ((a->patterns & SWEEP_BIT_BISECTION) && n % 2) {
        say("--pattern bisection splits the ranks half against half and needs an even number "
            "of them, not %d; start one more rank or leave bisection out",
            n);
        return CLI_USAGE;
    }
    int ms = model_sizes(a, n);
    if (ms)
        return ms;
    if ((a->patterns & SWEEP_BIT_ALLREDUCE) &&
        (a->allreduce_bytes < (uint64_t)n || a->allreduce_bytes > ((uint64_t)n << 30))) {
        say("--allreduce-size is S of the all-reduce across the %d ranks: at least %d bytes (one "
            "per rank), at most %d GiB (1 GiB a step)",
            n, n, n);
        return CLI_USAGE;
    }
    if ((a->patterns & SWEEP_BIT_ALLTOALL) &&
        (a->alltoall_bytes < (uint64_t)n || a->alltoall_bytes > ((uint64_t)n << 30))) {
        say("--alltoall-size is S of the all-to-all across the %d ranks (a rank's whole buffer): "
            "at least %d bytes (one per rank), at most %d GiB (1 GiB a peer)",
            n, n, n);
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
    if (a->sites) {
        struct ft_err err = {0};
        static struct path_sites sites; /* a few KiB: not on the stack */
        size_t len = 0;
        /* It travels to every rank in one control-channel frame (64 KiB): 32 KiB at most,
         * room for PATH_SITES_MAX prefixes. */
        int rc = jsonutil_slurp(a->sites, sites_text, &len, 32u << 10, &err);
        if (rc == 0)
            rc = path_sites_parse(*sites_text, a->sites, &sites, &err);
        if (rc == 0 && !a->groups)
            rc = groups_from_sites(&sites, a->sites, recs, n, groups, &err);
        if (rc < 0) {
            say("%s", err.msg);
            return rc == -EINVAL || rc == -EBADMSG ? CLI_DATAERR : ft_err_exit_status(rc);
        }
    }
    if (a->expect) {
        struct thresholds ex;
        struct ft_err err = {0};
        if (rack_expect_parse(a->expect, &ex, &err) < 0) {
            say("%s", err.msg);
            return CLI_USAGE;
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

/* What every rank holds while the sweep runs: the job's key (as a private file too, for the
 * runs this rank makes) and its agent. */
struct rank_side {
    struct channel_key key;
    char dir[256], key_file[300];
    struct rack_node *node;
};

static _Atomic bool interrupted;
static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&interrupted, true);
}

/* Collective: rank 0 draws the key and every rank gets it; then this rank's agent starts on
 * its rail's address. 0, or -errno with the reason (the rank then sends an empty record,
 * which rank 0 refuses naming it). */
static int rank_side_start(struct rank_side *s, int rank, struct launch_record *own,
                           const char *listen, const struct topo_model *topo, struct ft_err *err)
{
    char hex[2 * CHANNEL_KEY_BYTES + 1] = "";
    if (rank == 0) {
        unsigned char raw[CHANNEL_KEY_BYTES];
        randombytes_buf(raw, sizeof(raw));
        sodium_bin2hex(hex, sizeof(hex), raw, sizeof(raw));
        sodium_memzero(raw, sizeof(raw));
    }
    MPI_Bcast(hex, sizeof(hex), MPI_CHAR, 0, MPI_COMM_WORLD);
    hex[sizeof(hex) - 1] = '\0';
    const char *tmp = getenv("TMPDIR");
    snprintf(s->dir, sizeof(s->dir), "%s/fabtop-sweep-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(s->dir)) {
        int e = -errno;
        s->dir[0] = '\0';
        sodium_memzero(hex, sizeof(hex));
        return ft_err_set(err, e, "cannot make a private directory for the job's key: %s",
                          strerror(-e));
    }
    snprintf(s->key_file, sizeof(s->key_file), "%s/key", s->dir);
    int fd = open(s->key_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -errno : 0;
    if (fd >= 0) {
        if (write(fd, hex, strlen(hex)) != (ssize_t)strlen(hex))
            rc = -EIO;
        close(fd);
    }
    sodium_memzero(hex, sizeof(hex));
    if (rc < 0)
        return ft_err_set(err, rc, "cannot write the job's key to %s: %s", s->key_file,
                          strerror(-rc));
    rc = channel_key_load(s->key_file, &s->key, err);
    if (rc < 0)
        return rc;
    /* --listen: the rank's rail address becomes that address (its record says so). */
    if (listen && own->rail >= 0 && (uint32_t)own->rail < own->nnics)
        snprintf(own->nics[own->rail].addr, sizeof(own->nics[own->rail].addr), "%s", listen);
    /* A rank of several rails listens on all its addresses (each rail reaches it at its own). */
    uint32_t rails = sweep_run_rails(own, listen != NULL);
    const char *addr = listen ? listen : rails & (rails - 1) ? "" : sweep_run_addr(own);
    struct rack_node_cfg nc = {
        .listen = addr, .key = &s->key, .key_file = s->key_file, .topo = topo};
    rc = rack_node_start(&nc, &s->node, err);
    if (rc < 0)
        return rc;
    own->ctl_port = rack_node_port(s->node);
    return 0;
}

static void rank_side_stop(struct rank_side *s)
{
    rack_node_stop(s->node);
    s->node = NULL;
    channel_key_wipe(&s->key);
    if (s->key_file[0])
        unlink(s->key_file);
    if (s->dir[0])
        rmdir(s->dir);
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
    struct topo_pipeline tp = {0};
    own_record(&own, &env, version, env.rank < 0 ? 0 : env.rank, env.size, &tp);

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

    /* The job's key (rank 0 draws it; MPI carries it, as it carries the records) and this
     * rank's agent on its rail's address, whose port goes into the record. */
    struct rank_side side = {0};
    int node_rc = a.rails ? own_rails(&own, tp.m, a.rails, &err) : 0;
    if (node_rc < 0)
        fprintf(stderr, "%s: rank %d (%s): %s\n", ME, rank, own.hostname, err.msg);
    else if ((node_rc = rank_side_start(&side, rank, &own, a.listen, tp.m, &err)) < 0)
        fprintf(stderr, "%s: rank %d: %s\n", ME, rank, err.msg);

    unsigned char slot[LAUNCH_SLOT];
    if (node_rc < 0 || launch_record_encode(&own, slot, &err) < 0) {
        if (node_rc == 0)
            fprintf(stderr, "%s: rank %d: %s\n", ME, rank, err.msg);
        memset(slot, 0, sizeof(slot)); /* rank 0 refuses it, naming this rank */
    }
    unsigned char *slots = rank == 0 ? xalloc((size_t)size * LAUNCH_SLOT) : NULL;
    MPI_Gather(slot, LAUNCH_SLOT, MPI_BYTE, slots, LAUNCH_SLOT, MPI_BYTE, 0, MPI_COMM_WORLD);

    struct launch_record *recs = NULL;
    struct launch_groups groups = {0};
    char *sites_text = NULL; /* rank 0: --sites FILE's text, for every rank's agent */
    int status = 0;
    if (rank == 0) {
        recs = xalloc_zero((size_t)size, sizeof(*recs));
        status = check_records(slots, size, recs);
        if (!status)
            status = check_plan(&a, recs, size, &groups, &sites_text);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!status && rank == 0 && !a.json) {
        print_header(stdout, &a, &env, recs, size, &groups);
        fflush(stdout);
    }
    free(slots);
    bool skip_finalize = false;
    if (!status) {
        /* The rounds: rank 0 conducts over the control channel; MPI waits. Ctrl-C (or the
         * launcher's SIGTERM) stops the running tests; what was measured is saved. */
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        if (rank == 0) {
            status = sweep_run_conduct(&a, &env, recs, size, &groups, sites_text, &side.key,
                                       &interrupted);
        } else {
            int end = 0;
            /* Rank 0 beats every rank about once a second: a minute of silence is a hung
             * rank 0 (its sessions still open), and this rank goes, rather than wait for
             * the launcher. */
            int wrc = rack_node_wait(side.node, RACK_CONDUCTOR_IDLE_S, &end);
            if (wrc == -ECONNRESET) {
                fprintf(stderr,
                        "%s: rank %d: rank 0's control session ended before the sweep "
                        "did (rank 0 died or was killed)\n",
                        ME, rank);
                status = CLI_FAILED;
            } else if (wrc == -ETIMEDOUT) {
                fprintf(stderr,
                        "%s: rank %d: no word from rank 0 for %.0f s (it beats every %.0f s): "
                        "rank 0 hangs; this rank ends\n",
                        ME, rank, RACK_CONDUCTOR_IDLE_S, RACK_BEAT_S);
                status = CLI_FAILED;
            } else {
                status = end;
            }
        }
        /* After a failure a rank may be gone: MPI_Finalize would wait for it. */
        skip_finalize = status != 0;
    }
    rank_side_stop(&side);
    topo_pipeline_free(&tp);
    free(recs);
    launch_groups_free(&groups);
    free(sites_text);
    cli_args_free(&cli_sweep_command, &a);
    if (!skip_finalize)
        MPI_Finalize();
    return status;
}
