/* rdmanl_capture: prints, as hex, the RDMA netlink replies a real kernel sends to the
 * requests engine/counters/rdmanl.c builds, for test_ctr_rdmanl.c's captured vectors. Not part of
 * the build: compile it by hand and run it where an RDMA device exists, e.g. in the
 * Soft-RoCE VM (as root; again unprivileged for the EPERM answer):
 *
 *   cc -O2 -I. -o /tmp/rdmanl_capture tests/counters/rdmanl_capture.c engine/counters/rdmanl.c \
 *       -libverbs
 *   tests/vm/rxe-vm.sh --bin /tmp/rdmanl_capture --bin /usr/bin/setpriv -- \
 *       sh -c 'rdmanl_capture rxe0 1; setpriv --reuid=65534 --regid=65534 --clear-groups \
 *              --inh-caps=-all rdmanl_capture rxe0 1 eperm'
 *
 * Each exchange prints "REQ <name> <hex>" and one "REP <name> <hex>" per datagram. The bind
 * goes to a real RC QP (modified to INIT on the port, so the kernel knows its port), which
 * is what the kernel needs before it can refuse or accept it. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <linux/netlink.h>
#include <poll.h>
#include <rdma/rdma_netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/counters/rdmanl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

static void hex(const char *tag, const char *name, const void *p, size_t n)
{
    printf("%s %s ", tag, name);
    for (size_t i = 0; i < n; i++)
        printf("%02x", ((const unsigned char *)p)[i]);
    printf("\n");
}

static int sock(int cap_ack)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
    if (fd < 0) {
        perror("socket");
        exit(1);
    }
    int one = 1;
    setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
    if (cap_ack)
        setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
        perror("bind");
        exit(1);
    }
    return fd;
}

/* Send req, print every reply datagram until an error/ack/done. */
static void xchg(int fd, const char *name, const void *req, size_t len)
{
    static unsigned char buf[65536];
    hex("REQ", name, req, len);
    if (send(fd, req, len, 0) < 0) {
        perror("send");
        return;
    }
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 3000) <= 0) {
            printf("TIMEOUT %s\n", name);
            return;
        }
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0)
            return;
        hex("REP", name, buf, (size_t)n);
        int left = (int)n, end = 0;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
             h = NLMSG_NEXT(h, left))
            end |= h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_DONE;
        if (end)
            return;
    }
}

int main(int argc, char **argv)
{
    const char *dev = argc > 1 ? argv[1] : "rxe0";
    uint32_t port = argc > 2 ? (uint32_t)atoi(argv[2]) : 1;
    int eperm = argc > 3 && !strcmp(argv[3], "eperm");
    unsigned char req[256];
    struct rdmanl nl;
    if (rdmanl_open(&nl) < 0)
        return 1;
    uint32_t idx;
    if (rdmanl_dev_index(&nl, dev, &idx) < 0) {
        fprintf(stderr, "no %s\n", dev);
        return 1;
    }
    rdmanl_close(&nl);
    /* A real QP in INIT on the port. */
    int n;
    struct ibv_device **l = ibv_get_device_list(&n);
    struct ibv_context *ctx = NULL;
    for (int i = 0; l && i < n; i++)
        if (!strcmp(ibv_get_device_name(l[i]), dev))
            ctx = ibv_open_device(l[i]);
    uint32_t qpn = 0;
    if (ctx) {
        struct ibv_pd *pd = ibv_alloc_pd(ctx);
        struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
        struct ibv_qp_init_attr ia = {
            .send_cq = cq,
            .recv_cq = cq,
            .qp_type = IBV_QPT_RC,
            .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
        struct ibv_qp *qp = cq ? ibv_create_qp(pd, &ia) : NULL;
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
                                .port_num = (uint8_t)port,
                                .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
        if (qp && !ibv_modify_qp(
                      qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
            qpn = qp->qp_num;
    }
    printf("DEV %s index %u port %u qpn %u\n", dev, idx, port, qpn);
    int fd = sock(1);
    if (eperm) {
        xchg(fd, "bind_eperm", req,
             rdmanl_build_bind(req, sizeof(req), 1, idx, port, qpn, true, 0));
        return 0;
    }
    xchg(fd, "dev_dump", req, rdmanl_build_dev_dump(req, sizeof(req), 1));
    xchg(fd, "mode", req, rdmanl_build_mode_get(req, sizeof(req), 2, idx, port));
    /* The port's own hw counters (no STAT_RES): the same HWCOUNTERS nest as a counter's. */
    {
        size_t l2 = rdmanl_build_counter_get(req, sizeof(req), 3, idx, port, 0);
        /* drop STAT_RES and STAT_COUNTER_ID (the last two u32 attributes) */
        struct nlmsghdr *h = (struct nlmsghdr *)req;
        h->nlmsg_len = (uint32_t)(l2 - 16);
        xchg(fd, "port_stats", req, l2 - 16);
    }
    xchg(fd, "bind_new", req, rdmanl_build_bind(req, sizeof(req), 4, idx, port, qpn, true, 0));
    xchg(fd, "bind_noqp", req,
         rdmanl_build_bind(req, sizeof(req), 5, idx, port, 0xfffff0u, true, 0));
    xchg(fd, "counter_get_none", req, rdmanl_build_counter_get(req, sizeof(req), 6, idx, port, 0));
    xchg(fd, "unbind_none", req, rdmanl_build_unbind(req, sizeof(req), 7, idx, port, qpn, 0));
    close(fd);
    fd = sock(0); /* errors echo the whole request */
    xchg(fd, "bind_new_echo", req, rdmanl_build_bind(req, sizeof(req), 8, idx, port, qpn, true, 0));
    return 0;
}
