/* sysfs_tree: helpers the sysfs tests use to write fake /sys and /proc trees in a temp
 * directory (files, binary files, symlinks, unreadable entries), plus shared lookups
 * into a loaded model. Test-only; every helper fails the running cmocka test on error. */
#ifndef SYSFS_TREE_H
#define SYSFS_TREE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topology/topo_model.h"

/* mkdir -p of every directory above root/rel (and of rel itself when last is true). */
static inline void tree_mkdirs(const char *root, const char *rel, int last)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    size_t rl = strlen(root) + 1;
    for (char *p = path + rl; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
            fail_msg("mkdir %s: %s", path, strerror(errno));
        *p = '/';
    }
    if (last && mkdir(path, 0755) < 0 && errno != EEXIST)
        fail_msg("mkdir %s: %s", path, strerror(errno));
}

/* A binary file of exactly len bytes. */
static inline void tree_bin(const char *root, const char *rel, const void *buf, size_t len)
{
    char path[4096];
    tree_mkdirs(root, rel, 0);
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("open %s: %s", path, strerror(errno));
    if (len && fwrite(buf, 1, len, f) != len)
        fail_msg("write %s", path);
    fclose(f);
}

/* A sysfs attribute: the text plus the newline the kernel's show() functions add. */
static inline void tree_file(const char *root, const char *rel, const char *text)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s\n", text);
    tree_bin(root, rel, buf, strlen(buf));
}

static inline void tree_link(const char *root, const char *rel, const char *target)
{
    char path[4096];
    tree_mkdirs(root, rel, 0);
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    if (symlink(target, path) < 0)
        fail_msg("symlink %s -> %s: %s", path, target, strerror(errno));
}

/* An entry that cannot be read as a file, even by root: a directory (read gives EISDIR),
 * standing in for attributes whose show() fails (EINVAL) on a live kernel. */
static inline void tree_unreadable(const char *root, const char *rel)
{
    tree_mkdirs(root, rel, 1);
}

/* Two CPUs in one package and one NUMA node: what hwloc's Linux backend needs. */
static inline void tree_cpus(const char *root)
{
    tree_file(root, "proc/cpuinfo",
              "processor\t: 0\nmodel name\t: Synthetic CPU\n\nprocessor\t: 1\n"
              "model name\t: Synthetic CPU\n");
    for (int c = 0; c < 2; c++) {
        char rel[128], v[8];
        const char *files[][2] = {{"physical_package_id", "0"},
                                  {"core_id", NULL},
                                  {"thread_siblings", NULL},
                                  {"core_siblings", "3"}};
        for (size_t i = 0; i < 4; i++) {
            snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/topology/%s", c, files[i][0]);
            snprintf(v, sizeof(v), "%d", i == 1 ? c : 1 << c);
            tree_file(root, rel, files[i][1] ? files[i][1] : v);
        }
        snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/online", c);
        tree_file(root, rel, "1");
    }
    tree_file(root, "sys/devices/system/cpu/online", "0-1");
    tree_file(root, "sys/devices/system/cpu/possible", "0-1");
    tree_file(root, "sys/devices/system/cpu/present", "0-1");
    tree_file(root, "sys/devices/system/node/online", "0");
    tree_file(root, "sys/devices/system/node/possible", "0");
    tree_file(root, "sys/devices/system/node/node0/cpumap", "3");
    tree_file(root, "sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       16777216 kB");
}

static inline void tree_remove(const char *root)
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
}

/* ---- model lookups ---- */

static inline int model_pci(const struct topo_model *m, const char *bdf)
{
    struct topo_bdf a;
    if (topo_bdf_parse(bdf, &a) < 0)
        fail_msg("bad BDF %s", bdf);
    return topo_model_find_pci(m, &a);
}

static inline int model_nic(const struct topo_model *m, const char *rdma)
{
    int n = topo_model_find_nic_by_rdma(m, rdma);
    if (n < 0)
        fail_msg("no NIC with RDMA device %s", rdma);
    return n;
}

/* The port numbered num of a NIC, checking it lies in the NIC's port range. */
static inline const struct topo_port *model_port(const struct topo_model *m, int nic, int num)
{
    const struct topo_nic *n = &m->nics[nic];
    for (int i = n->first_port; i >= 0 && i < n->first_port + n->nports; i++)
        if (m->ports[i].num == num) {
            if (m->ports[i].nic != nic)
                fail_msg("port %d of NIC %d says it belongs to NIC %d", num, nic, m->ports[i].nic);
            return &m->ports[i];
        }
    fail_msg("NIC %d (%s) has no port %d", nic, n->rdma_dev, num);
    return NULL;
}

static inline const struct topo_gid *port_gid(const struct topo_port *p, int index)
{
    for (int i = 0; i < p->ngids; i++)
        if (p->gids[i].index == index)
            return &p->gids[i];
    fail_msg("port %d has no GID index %d", p->num, index);
    return NULL;
}

static inline int has_note(const struct topo_model *m, const char *needle)
{
    for (int i = 0; i < m->nnotes; i++)
        if (strstr(m->notes[i], needle))
            return 1;
    return 0;
}

static inline void dump_notes(const struct topo_model *m)
{
    for (int i = 0; i < m->nnotes; i++)
        fprintf(stderr, "  note: %s\n", m->notes[i]);
}

#define assert_note(m, needle)                                                                     \
    do {                                                                                           \
        if (!has_note((m), (needle))) {                                                            \
            dump_notes(m);                                                                         \
            fail_msg("no note containing \"%s\"", (needle));                                       \
        }                                                                                          \
    } while (0)

#define assert_no_note(m, needle)                                                                  \
    do {                                                                                           \
        if (has_note((m), (needle))) {                                                             \
            dump_notes(m);                                                                         \
            fail_msg("unexpected note containing \"%s\"", (needle));                               \
        }                                                                                          \
    } while (0)

#endif
