/* bench_counters: fabtop's own CPU cost of reading every counter of an 8-NIC node ten times
 * a second. Writes a synthetic tree (8 mlx5-like devices with counters/ and hw_counters/,
 * 8 netdevs with statistics/), samples it with a counter set (files kept open, pread,
 * firmware-backed counters at 1 Hz) and reports getrusage CPU time as % of one core; then
 * the same with every counter read every time, and with open/read/close per file per
 * sample (a naive reader) for comparison.
 *   bench_counters [SECONDS [COMPARE_SECONDS]]   (defaults 30 and 10) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/counters/counters.h"
#include "topology/topo_ibcounters.h"

#define NDEV 8
#define HZ   10

static char root[256];
static char **files;
static int nfiles;

static void mkdirs(const char *path)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    mkdir(p, 0755);
}

static void put(const char *dir, const char *name, unsigned long long v)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f, "%llu\n", v);
    fclose(f);
    files = realloc(files, (size_t)(nfiles + 1) * sizeof(*files));
    files[nfiles++] = strdup(path);
}

static void build_tree(void)
{
    static const char *const netstats[] = {
        "collisions",        "multicast",           "rx_bytes",          "rx_compressed",
        "rx_crc_errors",     "rx_dropped",          "rx_errors",         "rx_fifo_errors",
        "rx_frame_errors",   "rx_length_errors",    "rx_missed_errors",  "rx_nohandler",
        "rx_over_errors",    "rx_packets",          "tx_aborted_errors", "tx_bytes",
        "tx_carrier_errors", "tx_compressed",       "tx_dropped",        "tx_errors",
        "tx_fifo_errors",    "tx_heartbeat_errors", "tx_packets",        "tx_window_errors"};
    int nctr;
    const struct counters_info *t = counters_table(&nctr);
    for (int d = 0; d < NDEV; d++) {
        char dir[512];
        snprintf(dir, sizeof(dir), "%s/sys/class/infiniband/mlx5_%d/ports/1/counters", root, d);
        mkdirs(dir);
        for (int i = 0; i < topo_ibcounters_n; i++)
            if (!strcmp(topo_ibcounters[i].dir, "counters") && topo_ibcounters[i].width)
                put(dir, topo_ibcounters[i].name, 123456789ull * (unsigned)(i + 1));
        snprintf(dir, sizeof(dir), "%s/sys/class/infiniband/mlx5_%d/ports/1/hw_counters", root, d);
        mkdirs(dir);
        for (int i = 0; i < nctr; i++)
            if (t[i].source == COUNTERS_SRC_HW && t[i].provider && !strcmp(t[i].provider, "mlx5"))
                put(dir, t[i].name, 4242ull * (unsigned)(i + 1));
        snprintf(dir, sizeof(dir), "%s/sys/class/net/eth%d/statistics", root, d);
        mkdirs(dir);
        for (size_t i = 0; i < sizeof(netstats) / sizeof(netstats[0]); i++)
            put(dir, netstats[i], 987654321ull * (i + 1));
    }
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep until the next 1/HZ tick (absolute, so the rate holds). */
static void tick(struct timespec *next)
{
    next->tv_nsec += 1000000000L / HZ;
    if (next->tv_nsec >= 1000000000L) {
        next->tv_nsec -= 1000000000L;
        next->tv_sec++;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) == EINTR)
        ;
}

/* A naive reader: open, read, close every file at every sample. */
static void naive_sample(void)
{
    char buf[64];
    for (int i = 0; i < nfiles; i++) {
        int fd = open(files[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n > 0) {
            buf[n] = '\0';
            (void)strtoull(buf, NULL, 10);
        }
    }
}

/* CPU % of one core over secs of HZ sampling; mode 0 fabtop (1 Hz firmware counters),
 * 1 fabtop reading everything every time, 2 naive. */
static double run(int mode, double secs, int *ncounters, double *us_per_sample)
{
    struct counters_set *s = NULL;
    if (mode < 2) {
        struct counters_opts o = {.sys_root = root, .slow_period_s = mode == 0 ? 1.0 : 1e-9};
        struct ft_err err = {0};
        if (counters_set_open(&o, &s, &err) < 0) {
            fprintf(stderr, "bench_counters: %s\n", err.msg);
            exit(1);
        }
        counters_set_values(s, ncounters);
    }
    int samples = (int)(secs * HZ);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    double c0 = cpu_s(), w0 = mono_s();
    for (int i = 0; i < samples; i++) {
        if (s)
            counters_set_sample(s);
        else
            naive_sample();
        tick(&next);
    }
    double cpu = cpu_s() - c0, wall = mono_s() - w0;
    *us_per_sample = cpu / samples * 1e6;
    counters_set_close(s);
    return cpu / wall * 100;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 30, cmp = argc > 2 ? atof(argv[2]) : 10;
    if (secs <= 0 || cmp < 0) {
        fprintf(stderr, "usage: bench_counters [SECONDS [COMPARE_SECONDS]]\n");
        return 64;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    snprintf(root, sizeof(root), "/tmp/fabtop-bench-ctr-XXXXXX");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    build_tree();
    int n = 0, n2;
    double us, us2, us3;
    double pct = run(0, secs, &n, &us);
    printf("Synthetic 8-NIC node: %d mlx5-like ports (counters/ + hw_counters/), %d netdevs, "
           "%d counter files\n",
           NDEV, NDEV, nfiles);
    printf("fabtop counter set, %d Hz for %.0f s (firmware-backed counters at 1 Hz):\n", HZ, secs);
    printf("  %d counters, %.1f us CPU per sample, %.3f%% of one core\n", n, us, pct);
    if (cmp > 0) {
        double all = run(1, cmp, &n2, &us2);
        double naive = run(2, cmp, &n2, &us3);
        printf("Same tree, %d Hz for %.0f s each:\n", HZ, cmp);
        printf("  fabtop, every counter every sample: %.1f us per sample, %.3f%% of one core\n",
               us2, all);
        printf("  open/read/close per file per sample: %.1f us per sample, %.3f%% of one core\n",
               us3, naive);
        printf("  ratio naive / fabtop (every counter): %.2f\n", us2 > 0 ? us3 / us2 : 0);
    }
    printf("target: under 1%% of one core at %d Hz: %s\n", HZ, pct < 1.0 ? "met" : "NOT met");
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return pct < 1.0 ? 0 : 1;
}
