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
    char peer[2][INET_ADDRSTRLEN];
};

static void *echo_main(void *arg)
{
    struct echo *e = arg;
    unsigned char buf[65536];
    int answered = 0;
    while (!atomic_load(&e->stop) && answered < ECHO_MAX_DATAGRAMS) {
        struct pollfd p = {e->fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(e->fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 4 || from.sin_family != AF_INET)
            continue;
        char t[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &from.sin_addr, t, sizeof(t));
        if (strcmp(t, e->peer[0]) && strcmp(t, e->peer[1]))
            continue;
        uint32_t size = htonl((uint32_t)(n + 28)); /* the IP packet: IPv4 20 + UDP 8 */
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
    snprintf(e->peer[0], sizeof(e->peer[0]), "%s", agent_session_peer_host(s));
    struct in_addr x;
    const char *from = jsonutil_str(req, "from");
    if (from && inet_pton(AF_INET, from, &x) == 1)
        snprintf(e->peer[1], sizeof(e->peer[1]), "%s", from);
    e->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    if (e->fd < 0 || bind(e->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        getsockname(e->fd, (struct sockaddr *)&sa, &len) < 0) {
        int rc = ft_err_set(err, -errno, "doctor.probe: UDP socket: %s", strerror(errno));
        if (e->fd >= 0)
            close(e->fd);
        free(e);
        return rc;
    }
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
    cJSON_AddNumberToObject(resp, "port", ntohs(sa.sin_port));
    agent_session_log(s, "doctor: UDP echo on port %u for %s", ntohs(sa.sin_port), e->peer[0]);
    return 0;
}

const struct agent_handler doctor_facts_handler = {"doctor.facts", h_facts};
const struct agent_handler doctor_probe_handler = {"doctor.probe", h_probe};
