/* tcp_path: the peer's counters and a TTL probe for a run's path evidence (tcp_path.h). */
#include "engine/xport/tcp/tcp_path.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonutil.h"
#include "engine/counters/counters.h"

/* ---- agent side ---- */

struct path_sampler {
    pthread_mutex_t mu;
    struct counters_set *set;
    pthread_t thr;
    atomic_bool stop;
};

static void *sampler_main(void *arg)
{
    struct path_sampler *p = arg;
    while (!atomic_load(&p->stop)) {
        struct timespec ts = {0, TCP_PATH_SAMPLE_MS * 1000000L};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&p->mu);
        counters_set_sample(p->set);
        pthread_mutex_unlock(&p->mu);
    }
    return NULL;
}

static void sampler_free(void *arg)
{
    struct path_sampler *p = arg;
    atomic_store(&p->stop, true);
    pthread_join(p->thr, NULL);
    counters_set_close(p->set);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

static const char tag = 0; /* this file's state slot */

static int counters_start(struct agent_session *s, cJSON *resp, struct ft_err *err)
{
    struct sockaddr_storage local;
    socklen_t len;
    agent_session_local(s, &local, &len);
    char lip[INET6_ADDRSTRLEN] = "";
    channel_format_addr(&local, false, lip, sizeof(lip));
    char ifname[64];
    int rc = counters_route_netdev(agent_session_peer_host(s), lip, ifname, sizeof(ifname), err);
    if (rc < 0)
        return rc;
    const char *only[] = {ifname};
    struct counters_opts o = {.only = only, .nonly = 1, .with_snmp = true, .with_qdisc = true};
    struct path_sampler *p = calloc(1, sizeof(*p));
    if (!p)
        return ft_err_set(err, -ENOMEM, "path.counters: out of memory");
    rc = counters_set_open(&o, &p->set, err);
    if (rc < 0) {
        free(p);
        return rc;
    }
    pthread_mutex_init(&p->mu, NULL);
    counters_set_sample_all(p->set);
    counters_set_mark(p->set);
    if ((rc = pthread_create(&p->thr, NULL, sampler_main, p)) != 0) {
        counters_set_close(p->set);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return ft_err_set(err, -rc, "path.counters: cannot start the sampler: %s", strerror(rc));
    }
    rc = agent_session_set_state(s, &tag, p, sampler_free);
    if (rc < 0) {
        sampler_free(p);
        return ft_err_set(err, rc, "path.counters: no state slot left on this session");
    }
    cJSON_AddStringToObject(resp, "netdev", ifname);
    const char *site = agent_session_cfg(s)->site;
    if (site && *site)
        cJSON_AddStringToObject(resp, "site", site);
    else
        cJSON_AddNullToObject(resp, "site");
    return 0;
}

static int h_counters(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    const char *op = jsonutil_str(req, "op");
    if (op && !strcmp(op, "start"))
        return counters_start(s, resp, err);
    struct path_sampler *p = agent_session_state(s, &tag);
    if (!op || strcmp(op, "report"))
        return ft_err_set(err, -EINVAL, "path.counters: op must be \"start\" or \"report\"");
    if (!p)
        return ft_err_set(err, -ENOENT, "path.counters: report before start");
    pthread_mutex_lock(&p->mu);
    counters_set_sample_all(p->set);
    cJSON *rep = counters_set_report_json(p->set, true);
    counters_set_mark(p->set);
    pthread_mutex_unlock(&p->mu);
    cJSON_AddItemToObject(resp, "report", rep);
    return 0;
}

static int read_int_file(const char *path)
{
    FILE *f = fopen(path, "r");
    int v = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%d", &v) != 1)
        v = 0;
    fclose(f);
    return v;
}

static int h_ttl(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    double port;
    if (!jsonutil_num(req, "port", &port) || port < 1 || port > 65535)
        return ft_err_set(err, -EINVAL, "path.ttl: port must be 1-65535");
    struct sockaddr_storage local, to = *agent_session_peer(s);
    socklen_t len;
    agent_session_local(s, &local, &len);
    if (to.ss_family != local.ss_family)
        return ft_err_set(err, -EAFNOSUPPORT, "path.ttl: the session's addresses differ in family");
    if (to.ss_family == AF_INET) {
        ((struct sockaddr_in *)&to)->sin_port = htons((uint16_t)port);
        ((struct sockaddr_in *)&local)->sin_port = 0;
    } else {
        ((struct sockaddr_in6 *)&to)->sin6_port = htons((uint16_t)port);
        ((struct sockaddr_in6 *)&local)->sin6_port = 0;
    }
    int fd = socket(to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return ft_err_set(err, -errno, "path.ttl: socket: %s", strerror(errno));
    char msg[64];
    int n =
        snprintf(msg, sizeof(msg), "fabtop path.ttl %llu", (unsigned long long)agent_session_id(s));
    int rc = 0;
    if (bind(fd, (struct sockaddr *)&local, len) < 0 ||
        sendto(fd, msg, (size_t)n, 0, (struct sockaddr *)&to, len) < 0)
        rc = ft_err_set(err, -errno, "path.ttl: %s", strerror(errno));
    close(fd);
    if (rc < 0)
        return rc;
    /* What this host starts at: ip(7) net.ipv4.ip_default_ttl; ipv6(7) hop_limit. */
    int init = read_int_file(to.ss_family == AF_INET ? "/proc/sys/net/ipv4/ip_default_ttl"
                                                     : "/proc/sys/net/ipv6/conf/default/hop_limit");
    if (init > 0)
        cJSON_AddNumberToObject(resp, "ttl_initial", init);
    return 0;
}

const struct agent_handler tcp_path_counters_handler = {"path.counters", h_counters};
const struct agent_handler tcp_path_ttl_handler = {"path.ttl", h_ttl};

/* ---- client side ---- */

int tcp_path_counters_start(struct channel_conn *c, char *netdev, size_t nlen, char *site,
                            size_t slen, struct ft_err *err)
{
    cJSON *req = cJSON_CreateObject(), *r = NULL;
    cJSON_AddStringToObject(req, "type", "path.counters");
    cJSON_AddStringToObject(req, "op", "start");
    int rc = channel_request(c, req, &r, 0, err);
    if (rc < 0)
        return rc;
    const char *nd = jsonutil_str(r, "netdev"), *st = jsonutil_str(r, "site");
    snprintf(netdev, nlen, "%s", nd ? nd : "");
    snprintf(site, slen, "%s", st ? st : "");
    cJSON_Delete(r);
    return 0;
}

int tcp_path_counters_report(struct channel_conn *c, cJSON **report, struct ft_err *err)
{
    *report = NULL;
    cJSON *req = cJSON_CreateObject(), *r = NULL;
    cJSON_AddStringToObject(req, "type", "path.counters");
    cJSON_AddStringToObject(req, "op", "report");
    int rc = channel_request(c, req, &r, 0, err);
    if (rc < 0)
        return rc;
    cJSON *rep = cJSON_DetachItemFromObjectCaseSensitive(r, "report");
    cJSON_Delete(r);
    if (!cJSON_IsObject(rep)) {
        cJSON_Delete(rep);
        return ft_err_set(err, -EPROTO, "path.counters: the agent sent no report");
    }
    *report = rep;
    return 0;
}

/* The TTL or hop limit in a received datagram's ancillary data; -1 when absent. */
static int cmsg_ttl(struct msghdr *m)
{
    for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h; h = CMSG_NXTHDR(m, h)) {
        int v;
        if ((h->cmsg_level == IPPROTO_IP && h->cmsg_type == IP_TTL) ||
            (h->cmsg_level == IPPROTO_IPV6 && h->cmsg_type == IPV6_HOPLIMIT)) {
            memcpy(&v, CMSG_DATA(h), sizeof(v));
            return v;
        }
    }
    return -1;
}

int tcp_path_ttl_probe(struct channel_conn *c, int timeout_ms, int *ttl, int *ttl_initial,
                       struct ft_err *err)
{
    *ttl = -1;
    *ttl_initial = 0;
    struct sockaddr_storage local;
    socklen_t len = sizeof(local);
    if (getsockname(channel_conn_fd(c), (struct sockaddr *)&local, &len) < 0)
        return ft_err_set(err, -errno, "path.ttl: getsockname: %s", strerror(errno));
    int fd = socket(local.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return ft_err_set(err, -errno, "path.ttl: socket: %s", strerror(errno));
    int one = 1, rc = 0;
    if (local.ss_family == AF_INET) {
        ((struct sockaddr_in *)&local)->sin_port = 0;
        setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
    } else {
        ((struct sockaddr_in6 *)&local)->sin6_port = 0;
        setsockopt(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one));
        setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one)); /* v4-mapped */
    }
    if (bind(fd, (struct sockaddr *)&local, len) < 0 ||
        getsockname(fd, (struct sockaddr *)&local, &len) < 0) {
        rc = ft_err_set(err, -errno, "path.ttl: bind: %s", strerror(errno));
        close(fd);
        return rc;
    }
    unsigned port = local.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&local)->sin_port)
                                               : ntohs(((struct sockaddr_in6 *)&local)->sin6_port);
    cJSON *req = cJSON_CreateObject(), *r = NULL;
    cJSON_AddStringToObject(req, "type", "path.ttl");
    cJSON_AddNumberToObject(req, "port", port);
    rc = channel_request(c, req, &r, timeout_ms, err);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    double init;
    if (jsonutil_num(r, "ttl_initial", &init) && init >= 1 && init <= 255)
        *ttl_initial = (int)init;
    cJSON_Delete(r);
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    if (poll(&pfd, 1, timeout_ms) <= 0) {
        close(fd);
        return ft_err_set(err, -ETIMEDOUT, "path.ttl: no datagram from the peer within %d ms",
                          timeout_ms);
    }
    char buf[128], cbuf[256];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    ssize_t n = recvmsg(fd, &m, 0);
    if (n < 0)
        rc = ft_err_set(err, -errno, "path.ttl: recvmsg: %s", strerror(errno));
    else if ((*ttl = cmsg_ttl(&m)) < 0)
        rc = ft_err_set(err, -ENODATA, "path.ttl: the datagram carried no TTL");
    close(fd);
    return rc;
}
