/* doctor_probe: path MTU discovery with don't-fragment set. The client sends UDP datagrams
 * of a given IP packet size with IP_PMTUDISC_PROBE (DF set, the route's cached PMTU ignored:
 * ip(7)) or, over IPv6, IPV6_PMTUDISC_PROBE (ipv6(7); IPv6 routers never fragment) to the
 * agent's echo (doctor_agent.c), which answers each with 4 bytes: its size. The largest size
 * that comes back is the path's MTU; an ICMP "fragmentation needed" (ICMPv6 "packet too
 * big") is read from the error queue (IP_RECVERR, IPV6_RECVERR), so a size that vanishes
 * without one is a black hole. */
#include "engine/doctor/doctor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/icmp6.h>
#include <netinet/ip_icmp.h>
#include <stdbool.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define IPUDP_HDR   28 /* IPv4 20 + UDP 8 bytes */
#define IP6UDP_HDR  48 /* IPv6 40 + UDP 8 bytes */
#define TRIES       3
#define WAIT_MS     200
#define MIN_PACKET  68   /* RFC 791: every IPv4 host and router passes 68 bytes */
#define MIN_PACKET6 1280 /* RFC 8200 section 5: every IPv6 link carries 1280 bytes */

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
            bool v4 = c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR,
                 v6 = c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR;
            if (!v4 && !v6)
                continue;
            struct sock_extended_err ee;
            memcpy(&ee, CMSG_DATA(c), sizeof(ee));
            if ((v4 && ee.ee_origin == SO_EE_ORIGIN_ICMP && ee.ee_type == ICMP_DEST_UNREACH &&
                 ee.ee_code == ICMP_FRAG_NEEDED) ||
                (v6 && ee.ee_origin == SO_EE_ORIGIN_ICMP6 && ee.ee_type == ICMP6_PACKET_TOO_BIG))
                out->icmp_mtu = (int)ee.ee_info;
        }
    }
}

/* Does a packet of size bytes come back? */
static bool try_size(int fd, int size, int hdr, unsigned char *buf, struct doctor_pmtu *out)
{
    for (int t = 0; t < TRIES; t++) {
        uint32_t tag = htonl((uint32_t)size);
        memcpy(buf, &tag, 4);
        if (send(fd, buf, (size_t)(size - hdr), 0) < 0) {
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
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    socklen_t sl;
    int family, hdr, min;
    if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
        s4->sin_family = family = AF_INET;
        s4->sin_port = htons(port);
        sl = sizeof(*s4);
        hdr = IPUDP_HDR;
        min = MIN_PACKET;
    } else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
        s6->sin6_family = family = AF_INET6;
        s6->sin6_port = htons(port);
        sl = sizeof(*s6);
        hdr = IP6UDP_HDR;
        min = MIN_PACKET6;
    } else {
        return ft_err_set(err, -EINVAL, "doctor: '%s' is not an IPv4 or IPv6 address", addr);
    }
    if (max_size < min || max_size > 65535)
        return ft_err_set(err, -EINVAL, "doctor: probe size %d is out of range", max_size);
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return ft_err_set(err, -errno, "doctor: socket: %s", strerror(errno));
    int v = family == AF_INET ? IP_PMTUDISC_PROBE : IPV6_PMTUDISC_PROBE, on = 1;
    int level = family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
    if (setsockopt(fd, level, family == AF_INET ? IP_MTU_DISCOVER : IPV6_MTU_DISCOVER, &v,
                   sizeof(v)) < 0 ||
        setsockopt(fd, level, family == AF_INET ? IP_RECVERR : IPV6_RECVERR, &on, sizeof(on)) < 0 ||
        connect(fd, (struct sockaddr *)&ss, sl) < 0) {
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
    if (try_size(fd, max_size, hdr, buf, out)) {
        out->largest_ok = max_size;
    } else {
        /* Binary search between a size known to pass and one known to fail. */
        int lo = family == AF_INET && 576 < max_size ? 576 : min, hi = max_size;
        if (!try_size(fd, lo, hdr, buf, out))
            lo = lo != min && try_size(fd, min, hdr, buf, out) ? min : 0;
        if (lo) {
            while (hi - lo > 1) {
                int mid = lo + (hi - lo) / 2;
                if (try_size(fd, mid, hdr, buf, out))
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
