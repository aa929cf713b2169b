/* counters_attrib: which counters belong to a test: the devices and netdevs a mix's flows
 * use (the route to each peer), as a counter set opened for them. */
#include "engine/counters/counters_int.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/counters/counters_kernel.h"
#include "engine/counters/counters_sem.h"
#include "engine/flow/mix.h"
#include "topology/topo_ibcounters.h"
#include "topology/topo_model.h"

/* ---- attribution to a test ---- */

static bool in_list(char **l, int n, const char *x)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(l[i], x))
            return true;
    return false;
}

static void add_unique(char ***l, int *n, const char *x)
{
    if (x && *x && !in_list(*l, *n, x))
        counters_add_str(l, n, x);
}

static void free_list(char **l, int n)
{
    for (int i = 0; i < n; i++)
        free(l[i]);
    free(l);
}

static int for_test(const struct counters_opts *base, const struct topo_model *m,
                    const char *const *netdevs, int nnetdevs, const char *const *rdma_ports,
                    int nports, char **pre_notes, int npre, struct counters_set **out,
                    struct ft_err *err)
{
    struct counters_opts o = {.with_snmp = true, .with_qdisc = true, .with_ethtool = true};
    if (base)
        o = *base;
    const char *sys = o.sys_root ? o.sys_root : "/";
    char **want = NULL, **missing = NULL;
    int nwant = 0, nmissing = 0;
    for (int i = 0; i < nnetdevs; i++)
        add_unique(&want, &nwant, netdevs[i]);
    for (int i = 0; i < nports; i++)
        add_unique(&want, &nwant, rdma_ports[i]);
    /* From the topology: the RDMA ports on those netdevs (RoCE), the netdevs of those ports. */
    for (int p = 0; m && p < m->nports; p++) {
        const struct topo_port *pt = &m->ports[p];
        if (pt->nic < 0 || pt->nic >= m->nnics || !m->nics[pt->nic].rdma_dev[0])
            continue;
        const char *dev = m->nics[pt->nic].rdma_dev;
        char pname[96];
        snprintf(pname, sizeof(pname), "%s:%d", dev, pt->num);
        const char *nd =
            pt->netdev >= 0 && pt->netdev < m->nnetdevs ? m->netdevs[pt->netdev].name : NULL;
        bool port_wanted = false;
        for (int i = 0; i < nports; i++)
            port_wanted |= !strcmp(rdma_ports[i], pname) || !strcmp(rdma_ports[i], dev);
        if (nd && in_list(want, nwant, nd))
            add_unique(&want, &nwant, pname);
        if (port_wanted && nd)
            add_unique(&want, &nwant, nd);
    }
    /* Keep what this root has; say what it lacks. */
    char **have = NULL;
    int nhave = 0;
    for (int i = 0; i < nwant; i++) {
        char dev[96], rel[256];
        snprintf(dev, sizeof(dev), "%s", want[i]);
        char *c = strpbrk(dev, ":/");
        if (c) {
            *c = '\0';
            snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/%s", dev, c + 1);
        } else {
            snprintf(rel, sizeof(rel), "sys/class/net/%s", dev);
            if (fsutil_exists(sys, rel) <= 0)
                snprintf(rel, sizeof(rel), "sys/class/infiniband/%s", dev);
        }
        if (fsutil_exists(sys, rel) > 0)
            add_unique(&have, &nhave, want[i]);
        else
            add_unique(&missing, &nmissing, want[i]);
    }
    int rc;
    if (nhave == 0 && !o.with_snmp) {
        rc = ft_err_set(err, -ENOENT, "no port or netdev of the test was found to watch");
    } else {
        o.only = (const char *const *)have;
        o.nonly = nhave;
        if (nhave == 0) {
            /* Nothing port-specific (a non-NULL empty list): the snmp counters only. */
            static const char *const none[] = {""};
            o.only = none;
            o.nonly = 0;
        }
        rc = counters_set_open(&o, out, err);
    }
    if (rc == 0) {
        for (int i = 0; i < npre; i++)
            counters_note(*out, "%s", pre_notes[i]);
        for (int i = 0; i < nmissing; i++)
            counters_note(*out, "%s: not found under %s; its counters are not watched", missing[i],
                          sys);
    }
    free_list(want, nwant);
    free_list(have, nhave);
    free_list(missing, nmissing);
    return rc;
}

int counters_set_for_test(const struct counters_opts *base, const struct topo_model *m,
                          const char *const *netdevs, int nnetdevs, const char *const *rdma_ports,
                          int nports, struct counters_set **out, struct ft_err *err)
{
    return for_test(base, m, netdevs, nnetdevs, rdma_ports, nports, NULL, 0, out, err);
}

int counters_route_netdev(const char *peer_host, const char *local_ip, char *ifname, int len,
                          struct ft_err *err)
{
    if (local_ip && *local_ip) {
        int rc = counters_kernel_netdev_of_addr(local_ip, ifname, (size_t)len);
        return rc < 0 ? ft_err_set(err, rc, "no netdev holds the local address %s", local_ip) : 0;
    }
    if (!peer_host || !*peer_host || !strcmp(peer_host, "loopback")) {
        snprintf(ifname, (size_t)len, "lo");
        return 0;
    }
    /* HOST, HOST:PORT, [V6]:PORT or a bare IPv6 address. */
    char host[256];
    snprintf(host, sizeof(host), "%s", peer_host);
    if (host[0] == '[') {
        char *e = strchr(host, ']');
        if (e)
            *e = '\0';
        memmove(host, host + 1, strlen(host));
    } else {
        char *c = strchr(host, ':');
        if (c && !strchr(c + 1, ':'))
            *c = '\0';
    }
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *ai;
    int g = getaddrinfo(host, "9", &hints, &ai);
    if (g != 0)
        return ft_err_set(err, -EHOSTUNREACH, "%s: %s", host, gai_strerror(g));
    int rc = ft_err_set(err, -EHOSTUNREACH, "%s: no route to it from any local address", host);
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        int fd = socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        char ip[INET6_ADDRSTRLEN] = "";
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
            getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
            const void *ad = ss.ss_family == AF_INET
                                 ? (const void *)&((struct sockaddr_in *)&ss)->sin_addr
                                 : (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr;
            inet_ntop(ss.ss_family, ad, ip, sizeof(ip));
        }
        close(fd);
        if (ip[0] && counters_kernel_netdev_of_addr(ip, ifname, (size_t)len) == 0) {
            if (err && err->code == -EHOSTUNREACH)
                ft_err_clear(err);
            rc = 0;
            break;
        }
    }
    freeaddrinfo(ai);
    return rc;
}

int counters_set_for_mix(const struct mix *mix, const char *peer_override, counters_port_fn port_of,
                         const struct topo_model *m, struct counters_set **out, struct ft_err *err)
{
    /* Simulated flows touch nothing on this host: their counters are the simulated
     * fabric's (struct runner_snapshot.fabric). */
    if (mix_all_simulated(mix))
        return ft_err_set(err, -ENOENT,
                          "every flow is simulated: no host counters; the simulated fabric's "
                          "come with the run");
    char **nds = NULL, **ports = NULL, **notes = NULL;
    int nnd = 0, nports = 0, nnotes = 0;
    for (int i = 0; i < mix->nflows; i++) {
        const struct mix_flow *f = &mix->flows[i];
        bool by_route = !strcmp(f->transport, "tcp");
        /* No RDMA port named: the one the transport will choose (verbs: verbs_res_open's). */
        char rdma[96] = "", nd[64] = "";
        struct ft_err pe = {0};
        int prc =
            !f->local_rdma[0] && port_of ? port_of(f, rdma, sizeof(rdma), nd, sizeof(nd), &pe) : 1;
        if (prc != 1) {
            if (prc < 0) {
                char buf[600];
                snprintf(buf, sizeof(buf), "flow %s: RDMA port unknown (%s)", f->name, pe.msg);
                counters_add_str(&notes, &nnotes, buf);
            } else {
                add_unique(&ports, &nports, rdma);
                if (!f->local_netdev[0])
                    add_unique(&nds, &nnd, nd);
                by_route = !rdma[0] && !nd[0];
            }
        }
        add_unique(&ports, &nports, f->local_rdma);
        if (f->local_netdev[0]) {
            add_unique(&nds, &nnd, f->local_netdev);
            continue;
        }
        if (!by_route)
            continue;
        const char *peer = f->peer;
        if (!strcmp(peer, "loopback") && peer_override)
            peer = peer_override;
        char ifn[64];
        struct ft_err e = {0};
        if (counters_route_netdev(peer, f->local_ip, ifn, sizeof(ifn), &e) == 0) {
            add_unique(&nds, &nnd, ifn);
        } else {
            char buf[600];
            snprintf(buf, sizeof(buf), "flow %s: netdev unknown (%s)", f->name, e.msg);
            counters_add_str(&notes, &nnotes, buf);
        }
    }
    int rc = for_test(NULL, m, (const char *const *)nds, nnd, (const char *const *)ports, nports,
                      notes, nnotes, out, err);
    free_list(nds, nnd);
    free_list(ports, nports);
    free_list(notes, nnotes);
    return rc;
}
