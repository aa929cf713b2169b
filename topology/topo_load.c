/* topo_load: chooses the source for the options, runs the enrichers that apply, and
 * derives the structure every source must agree on (bridge roles, adapters,
 * netdev<->port links). */
#include "topology/topo_load.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topology/topo_enrich.h"
#include "topology/topo_xmlchild.h"

/* Enrichers in the order they run: sysfs first (it may add RDMA devices), then verbs
 * (it refines their ports), GPU libraries, host facts. */
static const struct topo_enricher *const enrichers[] = {
    &topo_enrich_sysfs,
    &topo_enrich_verbs,
    &topo_enrich_gpu,
    &topo_enrich_host,
};

/* JSON or XML? Look at the first non-blank byte. */
static int sniff_input(const char *path, const struct topo_source **src, struct ft_err *err)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        int e = -errno;
        return ft_err_set(err, e, "%s: %s", path,
                          e == -ENOENT ? "no such file (check the path given to --input)"
                                       : strerror(-e));
    }
    if (S_ISDIR(st.st_mode))
        return ft_err_set(err, -EINVAL,
                          "%s: is a directory; use --sysfs-root for a captured sysfs tree", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = -errno;
        return ft_err_set(err, e, "%s: cannot open: %s", path, strerror(-e));
    }
    char buf[256];
    ssize_t n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n < 0)
        return ft_err_set(err, -errno, "%s: cannot read: %s", path, strerror(errno));
    ssize_t i = 0;
    if (n >= 3 && (unsigned char)buf[0] == 0xef && (unsigned char)buf[1] == 0xbb)
        i = 3; /* UTF-8 byte order mark */
    while (i < n && isspace((unsigned char)buf[i]))
        i++;
    if (i == n)
        return ft_err_set(err, -EBADMSG,
                          "%s: empty file; expected an hwloc XML or a fabtop "
                          "JSON snapshot",
                          path);
    if (buf[i] == '{') {
        *src = &topo_source_json;
        return 0;
    }
    if (buf[i] == '<') {
        *src = &topo_source_xml;
        return 0;
    }
    return ft_err_set(err, -EBADMSG,
                      "%s: neither an hwloc XML nor a fabtop JSON snapshot (it starts with "
                      "neither '<' nor '{')",
                      path);
}

int topo_load(const struct topo_load_opts *o, struct topo_model **out, struct ft_err *err)
{
    const struct topo_source *src = &topo_source_live;
    *out = NULL;
    if (o->input) {
        int rc = sniff_input(o->input, &src, err);
        if (rc < 0)
            return rc;
    } else if (o->sysfs_root) {
        src = &topo_source_sysfs;
    }
    struct topo_model *m = topo_model_new();
    int rc;
    if (src == &topo_source_xml && o->xml_helper)
        rc = topo_xmlchild_load(o->xml_helper, o->input, m, err);
    else
        rc = src->load(m, o, err);
    if (rc < 0) {
        topo_model_free(m);
        return rc;
    }
    for (size_t i = 0; i < sizeof(enrichers) / sizeof(enrichers[0]); i++)
        if (enrichers[i]->applies(m, o))
            enrichers[i]->enrich(m, o);
    topo_model_finalize(m);
    *out = m;
    return 0;
}

/* Root ports hang directly below a host bridge; below them a switch's upstream port and
 * its downstream ports alternate (a PCIe switch shows in sysfs as one upstream bridge
 * with one bridge per downstream port). */
static void assign_bridge_roles(struct topo_model *m)
{
    for (int i = 0; i < m->npci; i++) {
        struct topo_pci *p = &m->pci[i];
        if (p->kind != TOPO_PCI_BRIDGE) {
            p->role = TOPO_BRIDGE_NONE;
            continue;
        }
        const struct topo_pci *par = p->parent >= 0 ? &m->pci[p->parent] : NULL;
        if (!par || par->kind == TOPO_PCI_HOSTBRIDGE)
            p->role = TOPO_BRIDGE_ROOT_PORT;
        else if (par->role == TOPO_BRIDGE_SWITCH_UP)
            p->role = TOPO_BRIDGE_SWITCH_DOWN;
        else
            p->role = TOPO_BRIDGE_SWITCH_UP;
    }
}

/* Functions on one domain:bus:device form one adapter (a dual-port card shows as two
 * functions, .0 and .1). Virtual devices (no PCI) are adapters of their own. */
static void group_adapters(struct topo_model *m)
{
    m->nadapters = 0;
    for (int i = 0; i < m->nnics; i++) {
        struct topo_nic *n = &m->nics[i];
        int found = -1;
        if (n->pci >= 0) {
            const struct topo_bdf *a = &m->pci[n->pci].addr;
            for (int j = 0; j < m->nadapters && found < 0; j++) {
                const struct topo_adapter *ad = &m->adapters[j];
                const struct topo_nic *f = &m->nics[ad->funcs[0]];
                if (f->pci < 0)
                    continue;
                const struct topo_bdf *b = &m->pci[f->pci].addr;
                if (a->domain == b->domain && a->bus == b->bus && a->dev == b->dev &&
                    ad->nfuncs < 8)
                    found = j;
            }
        }
        if (found < 0) {
            found = topo_model_add_adapter(m);
            struct topo_adapter *ad = &m->adapters[found];
            if (n->pci >= 0) {
                const struct topo_pci *p = &m->pci[n->pci];
                ad->vendor_id = p->vendor_id;
                ad->device_id = p->device_id;
                if (p->device_name[0])
                    snprintf(ad->model, sizeof(ad->model), "%s", p->device_name);
                else
                    snprintf(ad->model, sizeof(ad->model), "%04x:%04x", p->vendor_id, p->device_id);
            } else {
                snprintf(ad->model, sizeof(ad->model), "software RDMA (%s)",
                         n->driver[0] ? n->driver : n->rdma_dev);
            }
        }
        struct topo_adapter *ad = &m->adapters[found];
        ad->funcs[ad->nfuncs++] = i;
        n->adapter = found;
        if (!ad->fw_ver[0] && n->fw_ver[0])
            snprintf(ad->fw_ver, sizeof(ad->fw_ver), "%s", n->fw_ver);
    }
}

/* Give each port its netdev: the one named by a RoCE GID, else the function's netdev
 * whose dev_port matches the port (IPoIB and multi-port mlx4), else the only one. */
static void link_ports_netdevs(struct topo_model *m)
{
    for (int i = 0; i < m->nports; i++) {
        struct topo_port *p = &m->ports[i];
        if (p->netdev >= 0)
            continue;
        for (int g = 0; g < p->ngids && p->netdev < 0; g++)
            if (p->gids[g].ndev[0])
                p->netdev = topo_model_find_netdev(m, p->gids[g].ndev);
        if (p->netdev >= 0)
            continue;
        int only = -1, count = 0;
        for (int d = 0; d < m->nnetdevs; d++) {
            const struct topo_netdev *nd = &m->netdevs[d];
            if (nd->nic != p->nic)
                continue;
            count++;
            only = d;
            if (nd->dev_port == p->num - 1 && p->netdev < 0)
                p->netdev = d;
        }
        if (p->netdev < 0 && count == 1)
            p->netdev = only;
    }
}

void topo_model_finalize(struct topo_model *m)
{
    assign_bridge_roles(m);
    group_adapters(m);
    link_ports_netdevs(m);
}
