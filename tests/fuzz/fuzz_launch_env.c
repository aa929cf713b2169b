/* fuzz_launch_env: the launcher's environment as `fabtop sweep` reads it before MPI_Init
 * (launch_env_read: OMPI_COMM_WORLD_*, SLURM_*, PMIX_RANK). The input is the environment,
 * NAME=VALUE entries separated by NUL or newline bytes, read through launch_env_read's
 * getenv callback (the pure function launch_env_read_process wraps around getenv, so the
 * fuzzer's own environment is never touched); the first entry of a name wins, as getenv's
 * would. Then what the command does with the result: launch_kind_str, launch_rail of the
 * local rank, launch_howto with the refusal; and the rank's own rendezvous record made from
 * it as fabtop-sweep's own_record does (local rank and size, the rail on 0 to 8 NICs, the input's
 * length modulo 9) must encode and decode: what a rank's environment passes, rank 0 must not
 * refuse. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ft_err.h"
#include "engine/launch/launch_env.h"
#include "engine/launch/launch_record.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_VARS 64

struct table {
    int n;
    const char *var[MAX_VARS];
};

static const char *table_get(const char *name, void *ctx)
{
    const struct table *t = ctx;
    size_t n = strlen(name);
    for (int i = 0; i < t->n; i++)
        if (!strncmp(t->var[i], name, n) && t->var[i][n] == '=')
            return t->var[i] + n + 1;
    return NULL;
}

/* The record fabtop-sweep's own_record makes from e on a node of nics NICs. */
static void own_record(const struct launch_env *e, uint32_t nics)
{
    static struct launch_record r, back;
    static unsigned char slot[LAUNCH_SLOT];
    memset(&r, 0, sizeof(r));
    snprintf(r.version, sizeof(r.version), "0.1.0");
    r.layout = LAUNCH_LAYOUT;
    r.rank = e->rank < 0 ? 0 : (uint32_t)e->rank;
    r.size = (uint32_t)e->size;
    snprintf(r.hostname, sizeof(r.hostname), "rk-h1");
    r.local_rank = e->local_rank;
    r.local_size = e->local_size;
    r.nics_total = r.nnics = nics;
    for (uint32_t i = 0; i < nics; i++)
        snprintf(r.nics[i].rdma_dev, sizeof(r.nics[i].rdma_dev), "mlx5_%u", i);
    r.rail = launch_rail(r.local_rank, (int)r.nics_total);
    struct ft_err err = {0};
    fuzz_require(launch_record_encode(&r, slot, &err) == 0, "own record: %s", err.msg);
    fuzz_require(launch_record_decode(slot, &back, &err) == 0,
                 "the environment passed (local rank %d of %d, %u NICs) but rank 0 refuses its "
                 "record: %s",
                 e->local_rank, e->local_size, nics, err.msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_str(data, size);
    struct table t = {0};
    /* Cut at every NUL and newline; fuzz_str's terminator ends the last entry. */
    for (size_t i = 0, start = 0; i <= size; i++) {
        if (i < size && text[i] != '\0' && text[i] != '\n')
            continue;
        text[i] = '\0';
        if (i > start && t.n < MAX_VARS)
            t.var[t.n++] = text + start;
        start = i + 1;
    }
    struct launch_env e;
    struct ft_err err = {0};
    int rc = launch_env_read(table_get, &t, &e, &err);
    char line[768];
    if (rc < 0) {
        fuzz_require(rc == -EINVAL && err.msg[0] != '\0', "launch_env_read: %d without a message",
                     rc);
        fuzz_require(strstr(err.msg, "mpirun or srun") != NULL, "the refusal names no launcher: %s",
                     err.msg);
        launch_howto(line, (int)sizeof(line), err.msg);
        fuzz_require(strlen(line) < sizeof(line), "launch_howto overran");
        free(text);
        return 0;
    }
    fuzz_require(e.kind >= LAUNCH_NONE && e.kind <= LAUNCH_PMIX, "kind %d", (int)e.kind);
    fuzz_require(e.pmix == 0 || e.pmix == 1, "pmix %d", e.pmix);
    fuzz_require(e.rank >= -1 && e.size >= -1 && e.size != 0 && e.local_rank >= -1 &&
                     e.local_size >= -1 && e.local_size != 0,
                 "rank %d of %d, local %d of %d", e.rank, e.size, e.local_rank, e.local_size);
    fuzz_require(e.size < 0 || e.rank < e.size, "rank %d of %d accepted", e.rank, e.size);
    fuzz_require(e.kind != LAUNCH_NONE || (e.rank == -1 && e.size == -1 && e.local_rank == -1),
                 "no launcher, yet rank %d of %d", e.rank, e.size);
    fuzz_require(e.kind != LAUNCH_PMIX || (e.pmix && e.rank >= 0), "PMIx without its rank");
    const char *k = launch_kind_str(e.kind);
    fuzz_require(k && k[0], "no name for kind %d", (int)e.kind);
    for (int nrails = 0; nrails <= 9; nrails += 3) {
        int rail = launch_rail(e.local_rank, nrails);
        fuzz_require(nrails ? rail >= 0 && rail < nrails : rail == -1,
                     "local rank %d: rail %d of %d", e.local_rank, rail, nrails);
    }
    launch_howto(line, (int)sizeof(line), k);
    own_record(&e, (uint32_t)(size % (LAUNCH_MAX_NICS + 1)));
    free(text);
    return 0;
}
