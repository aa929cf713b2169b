/* bench_topo: time fabtop's topology load plus the affinity matrix in-process, the way
 * `fabtop topo --matrix` does it, without process start-up. Prints one line per run:
 * milliseconds. Usage: bench_topo [--input FILE | --sysfs-root DIR | --live] RUNS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topology/topo_affinity.h"
#include "topology/topo_load.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    struct topo_load_opts o = {0};
    int runs = 11;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--input") && i + 1 < argc)
            o.input = argv[++i];
        else if (!strcmp(argv[i], "--sysfs-root") && i + 1 < argc)
            o.sysfs_root = argv[++i];
        else if (!strcmp(argv[i], "--live"))
            ;
        else
            runs = atoi(argv[i]);
    }
    for (int r = 0; r < runs; r++) {
        double t0 = now_ms();
        struct topo_model *m;
        struct ft_err err = {0};
        if (topo_load(&o, &m, &err) < 0) {
            fprintf(stderr, "bench_topo: %s\n", err.msg);
            return 1;
        }
        struct topo_affinity a;
        topo_affinity_compute(m, &a);
        double t1 = now_ms();
        printf("%.3f\n", t1 - t0);
        topo_affinity_free(&a);
        topo_model_free(m);
    }
    return 0;
}
