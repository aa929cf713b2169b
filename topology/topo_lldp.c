/* topo_lldp: LLDP neighbours from lldpd through liblldpctl, loaded with dlopen. We own the
 * control connection (liblldpctl's custom-callback mode) so every read and write is
 * bounded by poll() with a timeout. */
#include "topology/topo_lldp.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <lldpctl.h>

#include "common/dynlib.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "topology/topo_fabric.h"

#define DEF_TIMEOUT_MS 2000

/* The liblldpctl entry points we use (lldpctl.h, lldpd 1.0). */
struct lldp_api {
    struct dynlib dl;
    lldpctl_conn_t *(*new_conn)(lldpctl_send_callback, lldpctl_recv_callback, void *);
    int (*release)(lldpctl_conn_t *);
    const char *(*default_transport)(void);
    lldpctl_error_t (*last_error)(lldpctl_conn_t *);
    const char *(*strerror)(lldpctl_error_t);
    lldpctl_atom_t *(*get_interfaces)(lldpctl_conn_t *);
    lldpctl_atom_t *(*get_port)(lldpctl_atom_t *);
    lldpctl_atom_t *(*atom_get)(lldpctl_atom_t *, lldpctl_key_t);
    const char *(*atom_get_str)(lldpctl_atom_t *, lldpctl_key_t);
    long int (*atom_get_int)(lldpctl_atom_t *, lldpctl_key_t);
    void (*dec_ref)(lldpctl_atom_t *);
    lldpctl_atom_iter_t *(*iter)(lldpctl_atom_t *);
    lldpctl_atom_iter_t *(*iter_next)(lldpctl_atom_t *, lldpctl_atom_iter_t *);
    lldpctl_atom_t *(*iter_value)(lldpctl_atom_t *, lldpctl_atom_iter_t *);
};

#define RESOLVE(api, field, name)                                                                  \
    ((api)->field = (__typeof__((api)->field))dynlib_sym(&(api)->dl, name))

static int load_api(struct lldp_api *a)
{
    static const char *const names[] = {"liblldpctl.so.4", "liblldpctl.so", NULL};
    if (dynlib_open(&a->dl, names) < 0)
        return -ELIBACC;
    if (!RESOLVE(a, new_conn, "lldpctl_new") || !RESOLVE(a, release, "lldpctl_release") ||
        !RESOLVE(a, default_transport, "lldpctl_get_default_transport") ||
        !RESOLVE(a, last_error, "lldpctl_last_error") ||
        !RESOLVE(a, strerror, "lldpctl_strerror") ||
        !RESOLVE(a, get_interfaces, "lldpctl_get_interfaces") ||
        !RESOLVE(a, get_port, "lldpctl_get_port") || !RESOLVE(a, atom_get, "lldpctl_atom_get") ||
        !RESOLVE(a, atom_get_str, "lldpctl_atom_get_str") ||
        !RESOLVE(a, atom_get_int, "lldpctl_atom_get_int") ||
        !RESOLVE(a, dec_ref, "lldpctl_atom_dec_ref") || !RESOLVE(a, iter, "lldpctl_atom_iter") ||
        !RESOLVE(a, iter_next, "lldpctl_atom_iter_next") ||
        !RESOLVE(a, iter_value, "lldpctl_atom_iter_value")) {
        dynlib_close(&a->dl);
        return -ELIBACC;
    }
    return 0;
}

/* ---- the control connection, with deadlines ---- */

struct chan {
    int fd;
    int timeout_ms;
    bool timed_out;
};

static bool wait_fd(struct chan *ch, short ev)
{
    struct pollfd p = {.fd = ch->fd, .events = ev};
    int rc;
    do
        rc = poll(&p, 1, ch->timeout_ms);
    while (rc < 0 && errno == EINTR);
    if (rc == 0)
        ch->timed_out = true;
    return rc > 0;
}

static ssize_t chan_send(lldpctl_conn_t *conn, const uint8_t *data, size_t len, void *u)
{
    (void)conn;
    struct chan *ch = u;
    if (!wait_fd(ch, POLLOUT))
        return LLDPCTL_ERR_CALLBACK_FAILURE;
    ssize_t n;
    do
        n = send(ch->fd, data, len, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n < 0 ? LLDPCTL_ERR_CALLBACK_FAILURE : n;
}

static ssize_t chan_recv(lldpctl_conn_t *conn, const uint8_t *data, size_t len, void *u)
{
    (void)conn;
    struct chan *ch = u;
    if (!wait_fd(ch, POLLIN))
        return LLDPCTL_ERR_CALLBACK_FAILURE;
    ssize_t n;
    do
        n = read(ch->fd, (void *)data, len);
    while (n < 0 && errno == EINTR);
    if (n == 0)
        return LLDPCTL_ERR_EOF;
    return n < 0 ? LLDPCTL_ERR_CALLBACK_FAILURE : n;
}

static const char *HOW_TO_START =
    "start it with 'systemctl start lldpd' (or 'lldpd -I IFACE'); neighbours appear within one "
    "transmit interval of the switch (30 s by default)";

/* Connect to lldpd's socket; on failure fill the status and return -1. */
static int open_socket(const char *path, struct topo_fabric *f)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        snprintf(f->lldp_status, sizeof(f->lldp_status),
                 "lldpd is not running (no control socket at %s): %s", path, HOW_TO_START);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(f->lldp_status, sizeof(f->lldp_status), "cannot create a socket: %s",
                 strerror(errno));
        return -1;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path)) {
        snprintf(f->lldp_status, sizeof(f->lldp_status), "%s: socket path too long", path);
        close(fd);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;
        if (e == ECONNREFUSED || e == ENOENT)
            snprintf(f->lldp_status, sizeof(f->lldp_status),
                     "lldpd is not running (%s refuses connections: a stale socket): %s", path,
                     HOW_TO_START);
        else if (e == EACCES || e == EPERM)
            snprintf(f->lldp_status, sizeof(f->lldp_status),
                     "cannot talk to lldpd at %s: permission denied (run as root, or as a "
                     "member of lldpd's group, _lldpd on Debian)",
                     path);
        else
            snprintf(f->lldp_status, sizeof(f->lldp_status), "cannot connect to lldpd at %s: %s",
                     path, strerror(e));
        close(fd);
        return -1;
    }
    return fd;
}

/* ---- reading neighbours ---- */

static void copy_str(struct lldp_api *a, lldpctl_atom_t *at, lldpctl_key_t k, char *buf, size_t len)
{
    const char *s = at ? a->atom_get_str(at, k) : NULL;
    snprintf(buf, len, "%s", s ? s : "");
}

/* The first management address of a chassis. */
static void first_mgmt(struct lldp_api *a, lldpctl_atom_t *chassis, char *buf, size_t len)
{
    buf[0] = 0;
    lldpctl_atom_t *list = chassis ? a->atom_get(chassis, lldpctl_k_chassis_mgmt) : NULL;
    if (!list)
        return;
    for (lldpctl_atom_iter_t *it = a->iter(list); it && !buf[0]; it = a->iter_next(list, it)) {
        lldpctl_atom_t *v = a->iter_value(list, it);
        if (!v)
            break;
        copy_str(a, v, lldpctl_k_mgmt_ip, buf, len);
        a->dec_ref(v);
    }
    a->dec_ref(list);
}

static void read_vlans(struct lldp_api *a, lldpctl_atom_t *nb, struct topo_neighbour *n)
{
    long pvid = a->atom_get_int(nb, lldpctl_k_port_vlan_pvid);
    if (pvid > 0 && pvid < 4095) {
        n->vlan = (int)pvid;
        n->valid |= TOPO_NB_V_VLAN;
    }
    lldpctl_atom_t *list = a->atom_get(nb, lldpctl_k_port_vlans);
    if (!list)
        return;
    size_t used = 0;
    for (lldpctl_atom_iter_t *it = a->iter(list); it; it = a->iter_next(list, it)) {
        lldpctl_atom_t *v = a->iter_value(list, it);
        if (!v)
            break;
        long id = a->atom_get_int(v, lldpctl_k_vlan_id);
        a->dec_ref(v);
        if (id <= 0 || id >= 4095)
            continue;
        int w = snprintf(n->vlans + used, sizeof(n->vlans) - used, "%s%ld", used ? "," : "", id);
        if (w < 0 || (size_t)w >= sizeof(n->vlans) - used)
            break;
        used += (size_t)w;
        if (!(n->valid & TOPO_NB_V_VLAN)) {
            n->vlan = (int)id;
            n->valid |= TOPO_NB_V_VLAN;
        }
    }
    a->dec_ref(list);
}

static void add_neighbour(struct lldp_api *a, struct topo_model *m, const char *ifname,
                          lldpctl_atom_t *nb)
{
    struct topo_fabric *f = &m->fabric;
    int k = topo_fabric_add_neighbour(f);
    struct topo_neighbour *n = &f->neighbours[k];
    snprintf(n->ifname, sizeof(n->ifname), "%s", ifname);
    n->netdev = topo_model_find_netdev(m, ifname);
    copy_str(a, nb, lldpctl_k_port_protocol, n->protocol, sizeof(n->protocol));
    copy_str(a, nb, lldpctl_k_port_id, n->port_id, sizeof(n->port_id));
    copy_str(a, nb, lldpctl_k_port_id_subtype, n->port_id_type, sizeof(n->port_id_type));
    copy_str(a, nb, lldpctl_k_port_descr, n->port_desc, sizeof(n->port_desc));
    long ttl = a->atom_get_int(nb, lldpctl_k_port_ttl);
    if (ttl > 0) {
        n->ttl = (int)ttl;
        n->valid |= TOPO_NB_V_TTL;
    }
    lldpctl_atom_t *ch = a->atom_get(nb, lldpctl_k_port_chassis);
    copy_str(a, ch, lldpctl_k_chassis_id, n->chassis_id, sizeof(n->chassis_id));
    copy_str(a, ch, lldpctl_k_chassis_id_subtype, n->chassis_id_type, sizeof(n->chassis_id_type));
    copy_str(a, ch, lldpctl_k_chassis_name, n->sysname, sizeof(n->sysname));
    copy_str(a, ch, lldpctl_k_chassis_descr, n->sysdesc, sizeof(n->sysdesc));
    first_mgmt(a, ch, n->mgmt_addr, sizeof(n->mgmt_addr));
    if (ch)
        a->dec_ref(ch);
    read_vlans(a, nb, n);
}

/* Returns the number of interfaces lldpd watches, or -1 (status filled). */
static int read_interfaces(struct lldp_api *a, lldpctl_conn_t *conn, struct topo_model *m,
                           struct chan *ch, char ***watched)
{
    struct topo_fabric *f = &m->fabric;
    lldpctl_atom_t *ifs = a->get_interfaces(conn);
    if (!ifs) {
        snprintf(f->lldp_status, sizeof(f->lldp_status), "lldpd did not list its interfaces: %s",
                 ch->timed_out ? "no answer in time (is lldpd stuck?)"
                               : a->strerror(a->last_error(conn)));
        return -1;
    }
    int nif = 0;
    for (lldpctl_atom_iter_t *it = a->iter(ifs); it; it = a->iter_next(ifs, it)) {
        lldpctl_atom_t *iface = a->iter_value(ifs, it);
        if (!iface)
            break;
        char name[32];
        copy_str(a, iface, lldpctl_k_interface_name, name, sizeof(name));
        *watched = xalloc_resize(*watched, (size_t)(nif + 2) * sizeof(char *));
        (*watched)[nif++] = xalloc_strdup(name);
        (*watched)[nif] = NULL;
        lldpctl_atom_t *port = a->get_port(iface);
        lldpctl_atom_t *nbs = port ? a->atom_get(port, lldpctl_k_port_neighbors) : NULL;
        if (nbs) {
            for (lldpctl_atom_iter_t *j = a->iter(nbs); j; j = a->iter_next(nbs, j)) {
                lldpctl_atom_t *nb = a->iter_value(nbs, j);
                if (!nb)
                    break;
                if (a->atom_get_int(nb, lldpctl_k_port_hidden) != 1)
                    add_neighbour(a, m, name, nb);
                a->dec_ref(nb);
            }
            a->dec_ref(nbs);
        }
        if (port)
            a->dec_ref(port);
        a->dec_ref(iface);
    }
    a->dec_ref(ifs);
    return nif;
}

/* An RDMA NIC port on Ethernet (RoCE) with no neighbour: say why that happens. */
static void note_silent_rdma(struct topo_model *m, char **watched)
{
    struct topo_fabric *f = &m->fabric;
    for (int i = 0; i < m->nports; i++) {
        const struct topo_port *p = &m->ports[i];
        if (p->nic < 0 || !m->nics[p->nic].rdma_dev[0] || p->netdev < 0 ||
            !(p->valid & TOPO_PORT_V_LL) || p->link_layer != TOPO_LL_ETHERNET)
            continue;
        const char *nd = m->netdevs[p->netdev].name;
        bool seen = false, is_watched = false;
        for (int k = 0; k < f->nneighbours; k++)
            seen |= !strcmp(f->neighbours[k].ifname, nd);
        for (int k = 0; watched && watched[k]; k++)
            is_watched |= !strcmp(watched[k], nd);
        if (seen)
            continue;
        if (!is_watched)
            topo_fabric_note(f,
                             "%s (%s, RDMA NIC): lldpd does not watch this interface (it was "
                             "started with -I excluding it, or the link is down)",
                             m->nics[p->nic].rdma_dev, nd);
        else
            topo_fabric_note(
                f,
                "%s (%s, RDMA NIC): no LLDP neighbour. lldpd does not decode DCBX (PFC, ETS), "
                "and the NIC firmware's own LLDP/DCBX agent can consume LLDP frames before the "
                "host sees them (Intel ice: ethtool --set-priv-flags %s fw-lldp-agent off; "
                "i40e: disable-fw-lldp on; NVIDIA/Mellanox: the firmware LLDP settings in "
                "mlxconfig); or the switch does not send LLDP on that port",
                m->nics[p->nic].rdma_dev, nd, nd);
    }
}

int topo_lldp_discover(struct topo_model *m, const struct topo_lldp_opts *o, struct ft_err *err)
{
    (void)err;
    struct topo_fabric *f = &m->fabric;
    f->valid |= TOPO_FAB_V_LLDP;
    struct lldp_api a;
    memset(&a, 0, sizeof(a));
    if (load_api(&a) < 0) {
        snprintf(f->lldp_status, sizeof(f->lldp_status),
                 "liblldpctl is not available (%s): install lldpd (apt-get install lldpd) to "
                 "see Ethernet neighbours",
                 a.dl.why[0] ? a.dl.why : "not found");
        return 0;
    }
    const char *path = o && o->socket ? o->socket : a.default_transport();
    struct chan ch = {.fd = -1,
                      .timeout_ms = o && o->timeout_ms > 0 ? o->timeout_ms : DEF_TIMEOUT_MS};
    ch.fd = open_socket(path, f);
    if (ch.fd < 0) {
        note_silent_rdma(m, NULL);
        dynlib_close(&a.dl);
        return 0;
    }
    lldpctl_conn_t *conn = a.new_conn(chan_send, chan_recv, &ch);
    char **watched = NULL;
    int nif = conn ? read_interfaces(&a, conn, m, &ch, &watched) : -1;
    if (!conn)
        snprintf(f->lldp_status, sizeof(f->lldp_status), "liblldpctl: out of memory");
    if (nif >= 0) {
        snprintf(f->lldp_status, sizeof(f->lldp_status),
                 "%d neighbour%s on the %d interface%s lldpd watches (%s)", f->nneighbours,
                 f->nneighbours == 1 ? "" : "s", nif, nif == 1 ? "" : "s", path);
        note_silent_rdma(m, watched);
    }
    for (int i = 0; watched && watched[i]; i++)
        free(watched[i]);
    free(watched);
    if (conn)
        a.release(conn);
    close(ch.fd);
    dynlib_close(&a.dl);
    return 0;
}
