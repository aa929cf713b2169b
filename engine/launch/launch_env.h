/* launch_env: which launcher started this process, read from its environment before
 * MPI_Init (which, outside a launcher, would quietly start a singleton of one rank). OpenMPI's
 * mpirun sets OMPI_COMM_WORLD_{SIZE,RANK,LOCAL_RANK,LOCAL_SIZE}; a PMIx server (srun
 * --mpi=pmix, prterun) sets PMIX_RANK and PMIX_NAMESPACE; a Slurm step sets SLURM_STEP_ID,
 * SLURM_PROCID, SLURM_NTASKS and SLURM_LOCALID (srun(1), "OUTPUT ENVIRONMENT VARIABLES"). */
#ifndef LAUNCH_ENV_H
#define LAUNCH_ENV_H

#include <stdint.h>

enum launch_kind {
    LAUNCH_NONE = 0, /* no launcher: started by hand */
    LAUNCH_MPIRUN,   /* OpenMPI's mpirun (OMPI_COMM_WORLD_SIZE) */
    LAUNCH_SRUN,     /* a Slurm step (SLURM_STEP_ID), with or without PMIx */
    LAUNCH_PMIX,     /* a PMIx server without Slurm or mpirun's variables (prterun) */
};

struct launch_env {
    enum launch_kind kind;
    int pmix;       /* PMIX_RANK is set (srun --mpi=pmix, or OpenMPI's own PMIx) */
    int rank;       /* world rank the launcher gives, -1 unknown */
    int size;       /* tasks the launcher started (OMPI_COMM_WORLD_SIZE, SLURM_NTASKS); -1 */
    int local_rank; /* rank among this node's tasks (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID) */
    int local_size; /* tasks on this node (OMPI_COMM_WORLD_LOCAL_SIZE), -1 unknown */
};

/* The environment to read: get(name, ctx) returns the variable or NULL (getenv for the
 * program, a table for tests). */
typedef const char *(*launch_getenv_fn)(const char *name, void *ctx);

/* Fill e from the environment: 0 (kind LAUNCH_NONE when no launcher is there), or -EINVAL
 * with err naming a variable that is set but not a number in range, or a rank (local rank)
 * not below the launcher's task count (on the node). */
struct ft_err;
int launch_env_read(launch_getenv_fn get, void *ctx, struct launch_env *e, struct ft_err *err);
/* launch_env_read on the process's own environment. */
int launch_env_read_process(struct launch_env *e, struct ft_err *err);

const char *launch_kind_str(enum launch_kind k); /* "none", "mpirun", "srun", "pmix" */

/* The one line that says how to start the sweep ("...: start it with 'mpirun ...' or
 * 'srun --mpi=pmix ...'"), prefixed with why (e.g. "not started by mpirun or srun"). */
void launch_howto(char *buf, int len, const char *why);

/* Which rail (the node's NIC, 0-based) the rank at local_rank uses when the node has nrails:
 * local_rank modulo nrails (ranks beyond the NICs share them, in turn); -1 with no NIC;
 * 0 for an unknown local rank (-1). */
int launch_rail(int local_rank, int nrails);

/* The rails (bit i: NIC i, below 32) the rank at local_rank of local_size uses: with as many
 * ranks as NICs or more, its one rail (launch_rail); with fewer, every NIC i with
 * i % local_size == local_rank, so one rank per node tests all of its NICs, NIC i against
 * NIC i. 0 with no NIC; launch_rail's for an unknown local rank or size. */
uint32_t launch_rails(int local_rank, int local_size, int nrails);

#endif
