/* doctor_agent: the agent's side of `fabtop doctor`: doctor.facts (this end's facts toward
 * the client's address) and doctor.probe (a UDP echo for the path MTU probe that answers
 * only the session's client, with 4 bytes per datagram, until the session ends). */
#include "engine/doctor/doctor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/jsonutil.h"
#include "engine/peer/agent.h"

#define ECHO_MAX_DATAGRAMS 2000 /* per session: the probe needs a few dozen */

static int h_facts(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    const char *peer = jsonutil_str(req, "peer_addr");
    const char *local = jsonutil_str(req, "local_addr");
    if (!peer)
        peer = agent_session_peer_host(s);
    struct doctor_facts *f = calloc(1, sizeof(*f));
    if (!f)
        return ft_err_set(err, -ENOMEM, "doctor.facts: out of memory");
    int rc = doctor_facts_collect(peer, local, NULL, f, err);
    if (rc == 0) {
        doctor_facts_rdma(f, NULL);
        cJSON_AddItemToObject(resp, "facts", doctor_facts_json(f));
        agent_session_log(s, "doctor: facts toward %s from %s", f->peer_addr, f->local_addr);
    }
    free(f);
    return rc;
}

struct echo {
    int fd;
    pthread_t th;
    _Atomic bool stop;
    char peer[2][INET6_ADDRSTRLEN]; /* canonical text: an IPv4-mapped address as IPv4 */
};

/* An address as canonical text, an IPv4-mapped IPv6 one (a dual-stack socket's view of an
 * IPv4 sender) as plain IPv4; *ipv4 says which family the packet had. */
static void addr_text(const struct sockaddr_storage *ss, char *t, size_t len, bool *ipv4)
{
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
    *ipv4 = ss->ss_family == AF_INET ||
            (ss->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr));
    if (ss->ss_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, t, (socklen_t)len);
    else if (*ipv4)
        inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], t, (socklen_t)len);
    else
        inet_ntop(AF_INET6, &s6->sin6_addr, t, (socklen_t)len);
}

/* s as canonical text into out ("" when it is not an address). */
static void canon(const char *s, char *out, size_t len)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    bool v4;
    out[0] = 0;
    if (s && inet_pton(AF_INET, s, &((struct sockaddr_in *)&ss)->sin_addr) == 1)
        ss.ss_family = AF_INET;
    else if (s && inet_pton(AF_INET6, s, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1)
        ss.ss_family = AF_INET6;
    else
        return;
    addr_text(&ss, out, len, &v4);
}

static void *echo_main(void *arg)
{
    struct echo *e = arg;
    unsigned char buf[65536];
    int answered = 0;
    while (!atomic_load(&e->stop) && answered < ECHO_MAX_DATAGRAMS) {
        struct pollfd p = {e->fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        struct sockaddr_storage from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(e->fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        char t[INET6_ADDRSTRLEN];
        bool v4;
        if (n < 4 || (from.ss_family != AF_INET && from.ss_family != AF_INET6))
            continue;
        addr_text(&from, t, sizeof(t), &v4);
        if (strcmp(t, e->peer[0]) && strcmp(t, e->peer[1]))
            continue;
        /* The IP packet: IPv4 20 or IPv6 40, + UDP 8. */
        uint32_t size = htonl((uint32_t)(n + (v4 ? 28 : 48)));
        sendto(e->fd, &size, sizeof(size), 0, (struct sockaddr *)&from, fl);
        answered++;
    }
    return NULL;
}

static void echo_free(void *state)
{
    struct echo *e = state;
    atomic_store(&e->stop, true);
    pthread_join(e->th, NULL);
    close(e->fd);
    free(e);
}

/* {"from": the client's address on the probed path (optional)} -> {"port": N} */
static int h_probe(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    struct echo *e = calloc(1, sizeof(*e));
    if (!e)
        return ft_err_set(err, -ENOMEM, "doctor.probe: out of memory");
    canon(agent_session_peer_host(s), e->peer[0], sizeof(e->peer[0]));
    canon(jsonutil_str(req, "from"), e->peer[1], sizeof(e->peer[1]));
    /* One dual-stack socket answers both families (IPV6_V6ONLY off: ipv6(7)); a kernel
     * without IPv6 gets an IPv4 one. */
    struct sockaddr_storage sa;
    memset(&sa, 0, sizeof(sa));
    socklen_t len = sizeof(struct sockaddr_in6);
    int off = 0;
    e->fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (e->fd >= 0 && setsockopt(e->fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) == 0) {
        sa.ss_family = AF_INET6;
    } else {
        if (e->fd >= 0)
            close(e->fd);
        e->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sa.ss_family = AF_INET;
        len = sizeof(struct sockaddr_in);
    }
    if (e->fd < 0 || bind(e->fd, (struct sockaddr *)&sa, len) < 0 ||
        getsockname(e->fd, (struct sockaddr *)&sa, &len) < 0) {
        int rc = ft_err_set(err, -errno, "doctor.probe: UDP socket: %s", strerror(errno));
        if (e->fd >= 0)
            close(e->fd);
        free(e);
        return rc;
    }
    uint16_t port = ntohs(sa.ss_family == AF_INET ? ((struct sockaddr_in *)&sa)->sin_port
                                                  : ((struct sockaddr_in6 *)&sa)->sin6_port);
    int rc = pthread_create(&e->th, NULL, echo_main, e);
    if (rc) {
        close(e->fd);
        free(e);
        return ft_err_set(err, -rc, "doctor.probe: thread: %s", strerror(rc));
    }
    static const char tag = 0;
    rc = agent_session_set_state(s, &tag, e, echo_free);
    if (rc < 0) {
        echo_free(e);
        return ft_err_set(err, rc, "doctor.probe: no room for the echo's state");
    }
    cJSON_AddNumberToObject(resp, "port", port);
    agent_session_log(s, "doctor: UDP echo on port %u for %s", port, e->peer[0]);
    return 0;
}

const struct agent_handler doctor_facts_handler = {"doctor.facts", h_facts};
const struct agent_handler doctor_probe_handler = {"doctor.probe", h_probe};
