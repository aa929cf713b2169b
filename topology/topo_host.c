/* topo_host: facts about the running host that lint needs: who we run as, whether we may
 * lock memory for RDMA registration, and whether GPUDirect RDMA's kernel side is there. */
#include "topology/topo_enrich.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/fsutil.h"

static bool applies(const struct topo_model *m, const struct topo_load_opts *o)
{
    (void)m;
    return !o->input && !o->sysfs_root; /* the host we run on: live loads only */
}

/* CAP_IPC_LOCK is capability bit 14 (linux/capability.h); CapEff in /proc/self/status
 * is the effective set as a hex mask. */
static int has_cap_ipc_lock(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return TOPO_UNKNOWN;
    char line[256];
    int r = TOPO_UNKNOWN;
    while (fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "CapEff:", 7)) {
            unsigned long long mask = strtoull(line + 7, NULL, 16);
            r = (mask >> 14) & 1 ? TOPO_YES : TOPO_NO;
            break;
        }
    }
    fclose(f);
    return r;
}

static void enrich(struct topo_model *m, const struct topo_load_opts *o)
{
    (void)o;
    struct topo_host *h = &m->host;
    struct utsname u;
    if (uname(&u) == 0) {
        if (!h->kernel[0])
            snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
        if (!h->arch[0])
            snprintf(h->arch, sizeof(h->arch), "%s", u.machine);
        if (!h->hostname[0])
            snprintf(h->hostname, sizeof(h->hostname), "%s", u.nodename);
    }
    h->is_root = geteuid() == 0 ? TOPO_YES : TOPO_NO;
    h->cap_ipc_lock = has_cap_ipc_lock();
    struct rlimit rl;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
        h->memlock_known = 1;
        h->memlock_soft = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
        h->memlock_hard = rl.rlim_max == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_max;
    }
    /* nvidia_peermem (and the older out-of-tree nv_peer_mem) let RDMA NICs register GPU
     * memory; only meaningful when the NVIDIA driver is loaded at all. */
    if (fsutil_exists("/", "sys/module/nvidia_peermem") ||
        fsutil_exists("/", "sys/module/nv_peer_mem"))
        h->nvidia_peermem = TOPO_YES;
    else if (fsutil_exists("/", "sys/module/nvidia"))
        h->nvidia_peermem = TOPO_NO;
}

const struct topo_enricher topo_enrich_host = {"host", applies, enrich};
