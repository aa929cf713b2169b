/* launch_env: the launcher from the environment, and the rail a local rank takes. */
#include "engine/launch/launch_env.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/ft_err.h"

static const char *process_getenv(const char *name, void *ctx)
{
    (void)ctx;
    return getenv(name);
}

/* The variable as an integer in [lo, hi]: 1 when set and valid, 0 unset, -EINVAL bad. */
static int env_int(launch_getenv_fn get, void *ctx, const char *name, long lo, long hi, int *out,
                   struct ft_err *err)
{
    const char *s = get(name, ctx);
    if (!s)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!s[0] || *end || errno || v < lo || v > hi)
        return ft_err_set(err, -EINVAL,
                          "%s='%.40s' is not a number from %ld to %ld; the launcher's environment "
                          "is damaged (start the sweep with mpirun or srun, not by hand)",
                          name, s, lo, hi);
    *out = (int)v;
    return 1;
}

int launch_env_read(launch_getenv_fn get, void *ctx, struct launch_env *e, struct ft_err *err)
{
    *e = (struct launch_env){
        .kind = LAUNCH_NONE, .rank = -1, .size = -1, .local_rank = -1, .local_size = -1};
    const long big = INT_MAX;
    int v, r;
    /* First the most specific: mpirun's own variables, then Slurm's, then bare PMIx. */
    struct {
        const char *name;
        long lo;
        int *out;
    } vars[] = {
        {"OMPI_COMM_WORLD_SIZE", 1, &e->size},
        {"OMPI_COMM_WORLD_RANK", 0, &e->rank},
        {"OMPI_COMM_WORLD_LOCAL_RANK", 0, &e->local_rank},
        {"OMPI_COMM_WORLD_LOCAL_SIZE", 1, &e->local_size},
    };
    if ((r = env_int(get, ctx, "OMPI_COMM_WORLD_SIZE", 1, big, &v, err)) < 0)
        return r;
    if (r) {
        e->kind = LAUNCH_MPIRUN;
        for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
            if ((r = env_int(get, ctx, vars[i].name, vars[i].lo, big, vars[i].out, err)) < 0)
                return r;
    } else if (get("SLURM_STEP_ID", ctx) && get("SLURM_PROCID", ctx)) {
        e->kind = LAUNCH_SRUN;
        if ((r = env_int(get, ctx, "SLURM_PROCID", 0, big, &e->rank, err)) < 0 ||
            (r = env_int(get, ctx, "SLURM_NTASKS", 1, big, &e->size, err)) < 0 ||
            (r = env_int(get, ctx, "SLURM_LOCALID", 0, big, &e->local_rank, err)) < 0)
            return r;
    }
    int prank = -1;
    if ((r = env_int(get, ctx, "PMIX_RANK", 0, big, &prank, err)) < 0)
        return r;
    if (r) {
        e->pmix = 1;
        if (e->kind == LAUNCH_NONE) {
            e->kind = LAUNCH_PMIX;
            e->rank = prank;
        }
    }
    if (e->size > 0 && e->rank >= e->size)
        return ft_err_set(err, -EINVAL,
                          "the launcher says rank %d of %d tasks; its environment is damaged "
                          "(start the sweep with mpirun or srun)",
                          e->rank, e->size);
    /* As rank 0 checks every rendezvous record (launch_record_decode). */
    if (e->local_size > 0 && e->local_rank >= e->local_size)
        return ft_err_set(err, -EINVAL,
                          "the launcher says local rank %d of %d tasks on this node; its "
                          "environment is damaged (start the sweep with mpirun or srun)",
                          e->local_rank, e->local_size);
    return 0;
}

int launch_env_read_process(struct launch_env *e, struct ft_err *err)
{
    return launch_env_read(process_getenv, NULL, e, err);
}

const char *launch_kind_str(enum launch_kind k)
{
    switch (k) {
    case LAUNCH_MPIRUN:
        return "mpirun";
    case LAUNCH_SRUN:
        return "srun";
    case LAUNCH_PMIX:
        return "pmix";
    case LAUNCH_NONE:
        break;
    }
    return "none";
}

void launch_howto(char *buf, int len, const char *why)
{
    snprintf(buf, (size_t)len,
             "%s: start one rank per node (or per NIC) with the cluster's launcher, e.g. "
             "'mpirun -np 8 --host h1,h2,...,h8 fabtop sweep --pattern pairs' or "
             "'srun --mpi=pmix -N 8 --ntasks-per-node=1 fabtop sweep --pattern pairs'",
             why);
}

int launch_rail(int local_rank, int nrails)
{
    if (nrails <= 0)
        return -1;
    if (local_rank < 0)
        return 0;
    return local_rank % nrails;
}

uint32_t launch_rails(int local_rank, int local_size, int nrails)
{
    int one = launch_rail(local_rank, nrails);
    if (one < 0)
        return 0;
    if (local_rank < 0 || local_size <= 0 || local_size >= nrails || local_rank >= local_size)
        return one < 32 ? 1u << one : 0;
    uint32_t m = 0;
    for (int i = local_rank; i < nrails && i < 32; i += local_size)
        m |= 1u << i;
    return m;
}
