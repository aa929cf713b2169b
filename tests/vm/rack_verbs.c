/* rack_verbs: fabtop sweep's runtime (engine/rack/) between rank nodes whose rail has an
 * RDMA device, run in the rxe-vm guest (rxe_verbs.guest.sh): three nodes in this process,
 * each a real agent on the rail's address (veth0's, which carries rxe0) with the job's key,
 * and rank 0's conductor running every pair over TCP and then over verbs through rxe0. The
 * sweep document goes to OUT (the host judges it, rack_verbs.sh); exit 0 when it was
 * written, 1 when the sweep could not run. No MPI here: the launchers are tested on the
 * namespace rack (tests/rack), the verbs path of the rounds here.
 * Usage: rack_verbs OUT ADDR RDMA_DEV */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/jsonutil.h"
#include "common/xalloc.h"
#include "engine/rack/rack_node.h"
#include "engine/rack/rack_sweep.h"

#define N 3

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: rack_verbs OUT ADDR RDMA_DEV\n");
        return 64;
    }
    const char *out = argv[1], *addr = argv[2], *dev = argv[3];
    char dir[] = "/tmp/rack-verbs-XXXXXX", key_file[64];
    if (!mkdtemp(dir))
        return 1;
    snprintf(key_file, sizeof(key_file), "%s/key", dir);
    struct ft_err err = {0};
    struct channel_key key;
    if (channel_key_generate_file(key_file, &err) < 0 ||
        channel_key_load(key_file, &key, &err) < 0) {
        fprintf(stderr, "rack_verbs: %s\n", err.msg);
        return 1;
    }
    struct rack_node *node[N] = {0};
    struct rack_member mem[N];
    struct sweep_rank ranks[N];
    char names[N][16];
    memset(mem, 0, sizeof(mem));
    struct results_sweep doc = {0};
    results_str_set(&doc.format, RESULTS_SWEEP_FORMAT);
    results_num_set(&doc.version, true, RESULTS_SWEEP_VERSION);
    doc.nranks = N;
    doc.ranks = xalloc_zero(N, sizeof(*doc.ranks));
    for (int i = 0; i < N; i++) {
        struct rack_node_cfg c = {.listen = addr, .key = &key, .key_file = key_file};
        if (rack_node_start(&c, &node[i], &err) < 0) {
            fprintf(stderr, "rack_verbs: %s\n", err.msg);
            return 1;
        }
        snprintf(names[i], sizeof(names[i]), "vm-r%d", i);
        snprintf(mem[i].host, sizeof(mem[i].host), "%s", names[i]);
        snprintf(mem[i].agent, sizeof(mem[i].agent), "%s:%u", addr, rack_node_port(node[i]));
        snprintf(mem[i].local_ip, sizeof(mem[i].local_ip), "%s", addr);
        snprintf(mem[i].rails[0].rdma, sizeof(mem[i].rails[0].rdma), "%s", dev);
        ranks[i] = (struct sweep_rank){.name = names[i], .rails = 1, .group = SWEEP_GROUP_UNKNOWN};
        doc.ranks[i].rank = i;
        doc.ranks[i].host = xalloc_strdup(names[i]);
    }
    struct rack_sweep_opts o = {
        .conduct = {.members = mem,
                    .n = N,
                    .key = &key,
                    /* Under TCG on a busy machine a 1 s window of 64 KiB WRITEs can end
                     * before one completes (0 Gb/s, status ok): 2 s of 16 KiB ones. */
                    .duration_s = 2.0,
                    .warmup_s = 0.3,
                    .fail_bound_s = 3.0,
                    .stream_bytes = 16384},
        .ranks = ranks,
        .pairs = true,
        .no_recheck = true,
    };
    int rc = rack_sweep_run(&o, &doc, &err);
    if (rc < 0)
        fprintf(stderr, "rack_verbs: the sweep: %s\n", err.msg);
    cJSON *j = results_sweep_write(&doc);
    int wrc = jsonutil_save(out, j, false, &err);
    if (wrc < 0)
        fprintf(stderr, "rack_verbs: %s\n", err.msg);
    cJSON_Delete(j);
    results_sweep_free(&doc);
    for (int i = 0; i < N; i++)
        rack_node_stop(node[i]);
    channel_key_wipe(&key);
    unlink(key_file);
    rmdir(dir);
    return wrc < 0 ? 1 : 0;
}
