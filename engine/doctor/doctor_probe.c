/* doctor_probe: path MTU discovery with don't-fragment set. The client sends UDP datagrams
 * of a given IP packet size with IP_PMTUDISC_PROBE (DF set, the route's cached PMTU ignored:
 * ip(7)) to the agent's echo (doctor_agent.c), which answers each with 4 bytes: its size.
 * The largest size that comes back is the path's MTU; an ICMP "fragmentation needed" is read
 * from the error queue (IP_RECVERR), so a size that vanishes without one is a black hole. */
#include "engine/doctor/doctor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define IPUDP_HDR  28 /* IPv4 20 + UDP 8 bytes */
#define TRIES      3
#define WAIT_MS    200
#define MIN_PACKET 68 /* RFC 791: every IPv4 host and router passes 68 bytes */

static void read_errqueue(int fd, struct doctor_pmtu *out)
{
    for (;;) {
        char buf[64], cbuf[512];
        struct iovec iov = {buf, sizeof(buf)};
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
            return;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
            if (c->cmsg_level != IPPROTO_IP || c->cmsg_type != IP_RECVERR)
                continue;
            struct sock_extended_err ee;
            memcpy(&ee, CMSG_DATA(c), sizeof(ee));
            if (ee.ee_origin == SO_EE_ORIGIN_ICMP && ee.ee_type == ICMP_DEST_UNREACH &&
                ee.ee_code == ICMP_FRAG_NEEDED)
                out->icmp_mtu = (int)ee.ee_info;
        }
    }
}

/* Does a packet of size bytes come back? */
static bool try_size(int fd, int size, unsigned char *buf, struct doctor_pmtu *out)
{
    for (int t = 0; t < TRIES; t++) {
        uint32_t tag = htonl((uint32_t)size);
        memcpy(buf, &tag, 4);
        if (send(fd, buf, (size_t)(size - IPUDP_HDR), 0) < 0) {
            read_errqueue(fd, out);
            if (errno == EMSGSIZE)
                return false;
            continue;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int left = WAIT_MS;
        while (left > 0 && poll(&p, 1, left) > 0) {
            left -= 20;
            if (p.revents & POLLERR)
                read_errqueue(fd, out);
            uint32_t got;
            ssize_t n = recv(fd, &got, sizeof(got), MSG_DONTWAIT);
            if (n == 4 && ntohl(got) == (uint32_t)size)
                return true;
        }
        read_errqueue(fd, out);
    }
    return false;
}

int doctor_pmtu_probe(const char *addr, uint16_t port, int max_size, struct doctor_pmtu *out,
                      struct ft_err *err)
{
    memset(out, 0, sizeof(*out));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
        return ft_err_set(err, -EINVAL, "doctor: '%s' is not an IPv4 address", addr);
    if (max_size < MIN_PACKET || max_size > 65535)
        return ft_err_set(err, -EINVAL, "doctor: probe size %d is out of range", max_size);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return ft_err_set(err, -errno, "doctor: socket: %s", strerror(errno));
    int v = IP_PMTUDISC_PROBE, on = 1;
    if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v)) < 0 ||
        setsockopt(fd, IPPROTO_IP, IP_RECVERR, &on, sizeof(on)) < 0 ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int rc = ft_err_set(err, -errno, "doctor: UDP probe to %s: %s", addr, strerror(errno));
        close(fd);
        return rc;
    }
    unsigned char *buf = calloc(1, (size_t)max_size);
    if (!buf) {
        close(fd);
        return ft_err_set(err, -ENOMEM, "doctor: out of memory");
    }
    out->valid = true;
    out->tried = max_size;
    if (try_size(fd, max_size, buf, out)) {
        out->largest_ok = max_size;
    } else {
        /* Binary search between a size known to pass and one known to fail. */
        int lo = 576 < max_size ? 576 : MIN_PACKET, hi = max_size;
        if (!try_size(fd, lo, buf, out))
            lo = try_size(fd, MIN_PACKET, buf, out) ? MIN_PACKET : 0;
        if (lo) {
            while (hi - lo > 1) {
                int mid = lo + (hi - lo) / 2;
                if (try_size(fd, mid, buf, out))
                    lo = mid;
                else
                    hi = mid;
            }
        }
        out->largest_ok = lo;
    }
    read_errqueue(fd, out);
    free(buf);
    close(fd);
    return 0;
}
