/* verbs_cm: rdma_cm connection set-up for the verbs transport's queue pairs (see verbs_cm.h). */
#define _GNU_SOURCE
#include "engine/xport/verbs/verbs_cm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/rdma_cma.h>

#include "common/strbuf.h"

struct verbs_cm {
    struct rdma_event_channel *ch;
    struct rdma_cm_id *listen_id;
    struct rdma_cm_id *ids[VERBS_RES_MAX_QPS];
    struct verbs_res *res;
    int timeout, retry_cnt;
    /* agent side */
    pthread_t th;
    bool th_started;
    _Atomic bool stop;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int established;
    struct ft_err err;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

bool verbs_cm_local_addr(const struct verbs_res *r, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    const uint8_t *g = r->gid.raw;
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!memcmp(g, v4mapped, 12)) { /* RoCE v2 IPv4 GID: ::ffff:a.b.c.d */
        struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
        s4->sin_family = AF_INET;
        memcpy(&s4->sin_addr, g + 12, 4);
        return true;
    }
    if (!(g[0] == 0xfe && (g[1] & 0xc0) == 0x80) && r->link_layer == IBV_LINK_LAYER_ETHERNET) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss; /* a global IPv6 GID */
        s6->sin6_family = AF_INET6;
        memcpy(&s6->sin6_addr, g, 16);
        return true;
    }
    /* InfiniBand (IPoIB) or a link-local GID: the netdev's first IPv4 address. */
    struct ifaddrs *ifa = NULL, *i;
    bool found = false;
    if (!r->netdev[0] || getifaddrs(&ifa))
        return false;
    for (i = ifa; i && !found; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, r->netdev)) {
            memcpy(ss, i->ifa_addr, sizeof(struct sockaddr_in));
            found = true;
        }
    freeifaddrs(ifa);
    return found;
}

/* Next event of the channel within ms; checks its type and status. The caller acks it. */
static int cm_event(struct rdma_event_channel *ch, enum rdma_cm_event_type want, int ms,
                    struct rdma_cm_event **ev, struct ft_err *err)
{
    struct pollfd p = {ch->fd, POLLIN, 0};
    int rc = poll(&p, 1, ms);
    if (rc < 0)
        return ft_err_set(err, -errno, "rdma_cm: waiting for %s: %s", rdma_event_str(want),
                          strerror(errno));
    if (rc == 0)
        return ft_err_set(err, -ETIMEDOUT, "rdma_cm: no %s within %d ms", rdma_event_str(want), ms);
    if (rdma_get_cm_event(ch, ev))
        return ft_err_set(err, -errno, "rdma_cm: reading an event: %s", strerror(errno));
    if ((*ev)->event != want) {
        int st = (*ev)->status;
        enum rdma_cm_event_type got = (*ev)->event;
        rdma_ack_cm_event(*ev);
        *ev = NULL;
        return ft_err_set(err, -ECONNREFUSED, "rdma_cm: expected %s, got %s (status %d%s%s)",
                          rdma_event_str(want), rdma_event_str(got), st, st < 0 ? ": " : "",
                          st < 0 ? strerror(-st) : "");
    }
    return 0;
}

/* Move one of our QPs to state through the attributes rdma_cm computed for id; RTS also
 * takes the flow's own timeout and retry count. */
static int to_state(struct verbs_cm *cm, struct rdma_cm_id *id, struct ibv_qp *qp,
                    enum ibv_qp_state st, struct ft_err *err)
{
    struct ibv_qp_attr a;
    int mask = 0;
    memset(&a, 0, sizeof(a));
    a.qp_state = st;
    if (rdma_init_qp_attr(id, &a, &mask))
        return ft_err_set(err, -errno, "rdma_cm: QP attributes for %s: %s",
                          st == IBV_QPS_RTR ? "RTR" : "RTS", strerror(errno));
    if (st == IBV_QPS_RTR) {
        cm->res->active_mtu = a.path_mtu; /* the route's MTU is the one used */
    } else {
        a.timeout = (uint8_t)cm->timeout;
        a.retry_cnt = (uint8_t)cm->retry_cnt;
        mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT;
    }
    if (ibv_modify_qp(qp, &a, mask))
        return ft_err_set(err, -errno, "rdma_cm: queue pair to %s: %s",
                          st == IBV_QPS_RTR ? "RTR" : "RTS", strerror(errno));
    return 0;
}

static struct verbs_cm *cm_new(struct verbs_res *r, int timeout, int retry_cnt, struct ft_err *err)
{
    struct verbs_cm *cm = calloc(1, sizeof(*cm));
    if (!cm)
        return NULL;
    cm->res = r;
    cm->timeout = timeout;
    cm->retry_cnt = retry_cnt;
    pthread_mutex_init(&cm->lock, NULL);
    pthread_cond_init(&cm->cond, NULL);
    cm->ch = rdma_create_event_channel();
    if (!cm->ch) {
        ft_err_set(err, -errno,
                   "rdma_cm: cannot open /dev/infiniband/rdma_cm (%s): load rdma_ucm, or use "
                   "params.connect \"ctl\"",
                   strerror(errno));
        verbs_cm_close(cm);
        return NULL;
    }
    return cm;
}

/* rdma_cm picked the device by address; it must be the one our QPs live on. */
static int same_device(const struct verbs_res *r, const struct rdma_cm_id *id, struct ft_err *err)
{
    const char *dev = id->verbs ? ibv_get_device_name(id->verbs->device) : "?";
    if (strcmp(dev, r->dev))
        return ft_err_set(err, -EXDEV,
                          "rdma_cm resolved the address to %s, but the flow's queue pairs are "
                          "on %s: choose the device by the address (local_ip) or use "
                          "params.connect \"ctl\"",
                          dev, r->dev);
    return 0;
}

int verbs_cm_connect(struct verbs_res *r, const char *host, int port, int tos, int timeout,
                     int retry_cnt, struct verbs_cm **out, struct ft_err *err)
{
    double t0 = now_s();
    struct sockaddr_storage src;
    if (!verbs_cm_local_addr(r, &src))
        return ft_err_set(err, -EADDRNOTAVAIL,
                          "rdma_cm: %s port %d has no IP address (GID or netdev) to connect "
                          "from",
                          r->dev, r->port);
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV}, *ai = NULL;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    if (getaddrinfo(host, ps, &hints, &ai))
        return ft_err_set(err, -EINVAL, "rdma_cm: the agent sent a bad address %s", host);
    struct verbs_cm *cm = cm_new(r, timeout, retry_cnt, err);
    int rc = cm ? 0 : -ENODEV;
    uint8_t tos8 = (uint8_t)tos;
    for (int i = 0; rc == 0 && i < r->nqp; i++) {
        struct rdma_cm_event *ev = NULL;
        if (rdma_create_id(cm->ch, &cm->ids[i], NULL, RDMA_PS_TCP)) {
            rc = ft_err_set(err, -errno, "rdma_cm: rdma_create_id: %s", strerror(errno));
            break;
        }
        struct rdma_cm_id *id = cm->ids[i];
        if (rdma_resolve_addr(id, (struct sockaddr *)&src, ai->ai_addr, 2000)) {
            rc = ft_err_set(err, -errno, "rdma_cm: resolving %s: %s", host, strerror(errno));
            break;
        }
        if ((rc = cm_event(cm->ch, RDMA_CM_EVENT_ADDR_RESOLVED, 3000, &ev, err)) < 0)
            break;
        rdma_ack_cm_event(ev);
        if ((rc = same_device(r, id, err)) < 0)
            break;
        /* RoCE: the IP TOS byte (DSCP << 2) of the connection's packets. */
        rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos8, sizeof(tos8));
        if (rdma_resolve_route(id, 2000)) {
            rc = ft_err_set(err, -errno, "rdma_cm: route to %s: %s", host, strerror(errno));
            break;
        }
        if ((rc = cm_event(cm->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 3000, &ev, err)) < 0)
            break;
        rdma_ack_cm_event(ev);
        uint32_t idx = htonl((uint32_t)i);
        struct rdma_conn_param cp = {.private_data = &idx,
                                     .private_data_len = sizeof(idx),
                                     .responder_resources = 16,
                                     .initiator_depth = 16,
                                     .retry_count = (uint8_t)retry_cnt,
                                     .rnr_retry_count = 7,
                                     .qp_num = r->qp[i]->qp_num};
        if (rdma_connect(id, &cp)) {
            rc = ft_err_set(err, -errno, "rdma_cm: connect to %s port %d: %s", host, port,
                            strerror(errno));
            break;
        }
        /* Without a QP bound to the id, the reply arrives as CONNECT_RESPONSE and we move
         * the QP ourselves, then confirm with rdma_establish (rdma_connect(3)). */
        if ((rc = cm_event(cm->ch, RDMA_CM_EVENT_CONNECT_RESPONSE, 5000, &ev, err)) < 0)
            break;
        rdma_ack_cm_event(ev);
        if ((rc = to_state(cm, id, r->qp[i], IBV_QPS_RTR, err)) < 0 ||
            (rc = to_state(cm, id, r->qp[i], IBV_QPS_RTS, err)) < 0)
            break;
        if (rdma_establish(id)) {
            rc = ft_err_set(err, -errno, "rdma_cm: rdma_establish: %s", strerror(errno));
            break;
        }
    }
    freeaddrinfo(ai);
    if (rc < 0) {
        verbs_cm_close(cm);
        return rc;
    }
    r->t_connect = now_s() - t0;
    *out = cm;
    return 0;
}

/* Agent: accept connection requests for our QPs until all are established. */
static void *listen_main(void *arg)
{
    struct verbs_cm *cm = arg;
    struct verbs_res *r = cm->res;
    struct ft_err err = {0};
    while (!atomic_load(&cm->stop)) {
        struct pollfd p = {cm->ch->fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        struct rdma_cm_event *ev;
        if (rdma_get_cm_event(cm->ch, &ev))
            continue;
        if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
            struct rdma_cm_id *id = ev->id;
            uint32_t idx = UINT32_MAX;
            if (ev->param.conn.private_data_len >= sizeof(idx))
                memcpy(&idx, ev->param.conn.private_data, sizeof(idx));
            idx = ntohl(idx);
            if (idx >= (uint32_t)r->nqp || cm->ids[idx] || same_device(r, id, &err) < 0) {
                rdma_reject(id, NULL, 0);
                rdma_ack_cm_event(ev);
                rdma_destroy_id(id);
                continue;
            }
            cm->ids[idx] = id;
            struct rdma_conn_param cp = {.responder_resources = 16,
                                         .initiator_depth = 16,
                                         .rnr_retry_count = 7,
                                         .qp_num = r->qp[idx]->qp_num};
            if (to_state(cm, id, r->qp[idx], IBV_QPS_RTR, &err) < 0 ||
                to_state(cm, id, r->qp[idx], IBV_QPS_RTS, &err) < 0 || rdma_accept(id, &cp))
                ft_err_set(&err, -errno, "rdma_cm: accepting QP %u: %s", idx, strerror(errno));
        } else if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
            pthread_mutex_lock(&cm->lock);
            cm->established++;
            pthread_cond_broadcast(&cm->cond);
            pthread_mutex_unlock(&cm->lock);
        }
        rdma_ack_cm_event(ev);
        if (err.code) {
            pthread_mutex_lock(&cm->lock);
            cm->err = err;
            pthread_cond_broadcast(&cm->cond);
            pthread_mutex_unlock(&cm->lock);
            break;
        }
    }
    return NULL;
}

int verbs_cm_listen(struct verbs_res *r, int timeout, int retry_cnt, char *host, size_t hostlen,
                    int *port, struct verbs_cm **out, struct ft_err *err)
{
    struct sockaddr_storage ss;
    if (!verbs_cm_local_addr(r, &ss))
        return ft_err_set(err, -EADDRNOTAVAIL,
                          "rdma_cm: %s port %d has no IP address (GID or netdev) to listen on",
                          r->dev, r->port);
    struct verbs_cm *cm = cm_new(r, timeout, retry_cnt, err);
    if (!cm)
        return err->code;
    int rc = 0;
    if (rdma_create_id(cm->ch, &cm->listen_id, NULL, RDMA_PS_TCP) ||
        rdma_bind_addr(cm->listen_id, (struct sockaddr *)&ss) || rdma_listen(cm->listen_id, 16))
        rc = ft_err_set(err, -errno, "rdma_cm: listening on %s: %s", r->dev, strerror(errno));
    if (rc == 0) {
        struct sockaddr *sa = rdma_get_local_addr(cm->listen_id);
        *port = ntohs(rdma_get_src_port(cm->listen_id));
        getnameinfo(
            sa, sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6),
            host, (socklen_t)hostlen, NULL, 0, NI_NUMERICHOST);
        if (pthread_create(&cm->th, NULL, listen_main, cm) == 0)
            cm->th_started = true;
        else
            rc = ft_err_set(err, -EAGAIN, "rdma_cm: cannot start the listener thread");
    }
    if (rc < 0) {
        verbs_cm_close(cm);
        return rc;
    }
    *out = cm;
    return 0;
}

int verbs_cm_wait(struct verbs_cm *cm, int ms, struct ft_err *err)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    pthread_mutex_lock(&cm->lock);
    while (cm->established < cm->res->nqp && !cm->err.code && rc == 0)
        rc = pthread_cond_timedwait(&cm->cond, &cm->lock, &until);
    int n = cm->established;
    struct ft_err e = cm->err;
    pthread_mutex_unlock(&cm->lock);
    if (e.code)
        return ft_err_set(err, e.code, "%s", e.msg);
    if (n < cm->res->nqp)
        return ft_err_set(err, -ETIMEDOUT, "rdma_cm: %d of %d connections established", n,
                          cm->res->nqp);
    return 0;
}

void verbs_cm_close(struct verbs_cm *cm)
{
    if (!cm)
        return;
    atomic_store(&cm->stop, true);
    if (cm->th_started)
        pthread_join(cm->th, NULL);
    for (int i = 0; i < VERBS_RES_MAX_QPS; i++)
        if (cm->ids[i]) {
            rdma_disconnect(cm->ids[i]);
            rdma_destroy_id(cm->ids[i]);
        }
    if (cm->listen_id)
        rdma_destroy_id(cm->listen_id);
    if (cm->ch)
        rdma_destroy_event_channel(cm->ch);
    pthread_mutex_destroy(&cm->lock);
    pthread_cond_destroy(&cm->cond);
    free(cm);
}
