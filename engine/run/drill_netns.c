/* drill_netns: the blackhole's nftables table and link-down's netdev in an owned network
 * namespace, set and undone by a guardian process (drill_netns.h). */
#define _GNU_SOURCE /* setns */
#include "engine/run/drill_netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/peer/channel.h"

/* RoCE v2 carries its packets in UDP to this port (IBTA, Annex A17 RoCEv2). */
#define ROCEV2_UDP_PORT 4791

static bool find_nft(char *out, size_t len)
{
    static const char *const dirs[] = {"/usr/sbin", "/sbin", "/usr/bin", "/bin"};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        snprintf(out, len, "%s/nft", dirs[i]);
        if (access(out, X_OK) == 0)
            return true;
    }
    return false;
}

static int guard(struct drill_netns *h, double max_s, bool probe, struct ft_err *err);

/* host (NULL: the loopback) as a numeric address. */
static int resolve(const char *host, char *out, size_t len, struct ft_err *err)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    int g = getaddrinfo(host && host[0] ? host : "127.0.0.1", NULL, &hints, &ai);
    if (g != 0 || !ai)
        return ft_err_set(err, -EHOSTUNREACH, "the peer %s does not resolve: %s", host,
                          gai_strerror(g));
    struct sockaddr_storage ss = {0};
    memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    channel_format_addr(&ss, false, out, len);
    return 0;
}

int drill_netns_init(struct drill_netns *h, enum drill_netns_kind kind, const char *ns, bool owned,
                     const char *ctl_hp, const char *data_host, const char *dev,
                     unsigned default_port, struct ft_err *err)
{
    memset(h, 0, sizeof(*h));
    h->ctl = -1;
    h->kind = kind;
    bool hole = kind == DRILL_NETNS_BLACKHOLE;
    const char *what = hole ? "a blackhole" : "a link-down";
    h->owned = owned && !hole && (!ns || !*ns) && dev && *dev;
    if (h->owned) /* the guardian enters this process's own namespace: a no-op */
        ns = "/proc/self/ns/net";
    if (!ns || !*ns)
        return ft_err_set(err, -EINVAL,
                          "--fault %s needs --netns NAME: a network namespace this drill owns, "
                          "%s",
                          hole ? "blackhole" : "link-down",
                          hole ? "where its nftables rules go" : "whose netdev goes down");
    if (strchr(ns, '/'))
        snprintf(h->path, sizeof(h->path), "%s", ns);
    else
        snprintf(h->path, sizeof(h->path), "/run/netns/%s", ns);
    struct stat st, host;

    if (stat(h->path, &st) < 0) {
        int e = errno;
        return ft_err_set(err, -e,
                          "--netns %s: %s (%s): give a namespace `ip netns list` "
                          "shows, or its path",
                          ns, strerror(e), h->path);
    }
    /* The host's namespace is PID 1's; a drill never faults anything there, but a netdev
     * the caller said it owns (--device DEV --owned). */
    if (!h->owned && stat("/proc/1/ns/net", &host) == 0 && st.st_dev == host.st_dev &&
        st.st_ino == host.st_ino)
        return ft_err_set(err, -EPERM,
                          "--netns %s is the host's network namespace (PID 1's): %s goes "
                          "only into a namespace the drill owns",
                          ns, what);
    if (hole && !find_nft(h->nft, sizeof(h->nft)))
        return ft_err_set(err, -ELIBACC,
                          "--fault blackhole needs nft (install the nftables package)");
    char host_s[256];
    uint16_t port = 0;
    int rc =
        channel_split_host_port(ctl_hp, (uint16_t)default_port, host_s, sizeof(host_s), &port, err);
    if (rc == 0)
        rc = resolve(host_s, h->ctl_peer, sizeof(h->ctl_peer), err);
    if (rc == 0)
        rc = resolve(data_host ? data_host : host_s, h->peer, sizeof(h->peer), err);
    if (rc < 0)
        return rc;
    h->v6 = strchr(h->peer, ':') != NULL;
    h->ctl_port = port;
    /* Linux removes a link's IPv6 addresses when it goes down (unless keep_addr_on_down,
     * Documentation/networking/ip-sysctl.rst), so its up would not bring the path back. */
    if (!hole && h->v6)
        return ft_err_set(err, -EAFNOSUPPORT,
                          "--fault link-down drills an IPv4 data path for now (%s is IPv6: "
                          "Linux removes a link's IPv6 addresses when it goes down)",
                          h->peer);
    if (dev) {
        if (!*dev || strlen(dev) >= sizeof(h->dev) || strchr(dev, '/'))
            return ft_err_set(err, -EINVAL, "--device '%s' is not a netdev name", dev);
        snprintf(h->dev, sizeof(h->dev), "%s", dev);
    }
    return guard(h, 0, true, err); /* enter it once now: refusals before any traffic */
}

/* The nft script that sets the table (on) or removes it. Both start by removing a table of
 * that name left by a drill that could not lift it (add, then delete, is idempotent). */
static void script(const struct drill_netns *h, bool on, char *buf, size_t len)
{
    const char *fam = h->v6 ? "ip6" : "ip";
    int n = snprintf(buf, len, "add table inet %s\ndelete table inet %s\n", DRILL_NETNS_TABLE,
                     DRILL_NETNS_TABLE);
    if (!on || n < 0 || (size_t)n >= len)
        return;
    /* prerouting sees what arrives (and what a router namespace forwards), output what this
     * namespace sends; priority -300 puts the drop before conntrack. */
    static const char *const chains[] = {"prerouting", "output"};
    n += snprintf(buf + n, len - (size_t)n, "add table inet %s\n", DRILL_NETNS_TABLE);
    for (int c = 0; c < 2 && (size_t)n < len; c++) {
        n += snprintf(
            buf + n, len - (size_t)n,
            "add chain inet %s %s { type filter hook %s priority -300 ; policy accept ; }\n"
            "add rule inet %s %s %s daddr %s tcp dport != %u drop\n"
            "add rule inet %s %s %s saddr %s tcp sport != %u drop\n"
            "add rule inet %s %s %s daddr %s udp dport %d drop\n"
            "add rule inet %s %s %s saddr %s udp dport %d drop\n",
            DRILL_NETNS_TABLE, chains[c], chains[c], DRILL_NETNS_TABLE, chains[c], fam, h->peer,
            h->ctl_port, DRILL_NETNS_TABLE, chains[c], fam, h->peer, h->ctl_port, DRILL_NETNS_TABLE,
            chains[c], fam, h->peer, ROCEV2_UDP_PORT, DRILL_NETNS_TABLE, chains[c], fam, h->peer,
            ROCEV2_UDP_PORT);
    }
}

/* In the guardian, after setns, single-threaded and allocation-free: the namespace's routes,
 * read from /proc/self/net/route (IPv4's main table: hex fields in network byte order) and
 * /proc/self/net/ipv6_route, one fixed buffer, lines as they come. */
static char route_buf[65536];

static char *read_proc(const char *file)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t n = 0;
    ssize_t k;
    while (n < sizeof(route_buf) - 1 &&
           (k = read(fd, route_buf + n, sizeof(route_buf) - 1 - n)) > 0)
        n += (size_t)k;
    close(fd);
    route_buf[n] = '\0';
    return n ? route_buf : NULL;
}

static char *next_line(char **line)
{
    char *l = *line;
    if (!l || !*l)
        return NULL;
    char *nl = strchr(l, '\n');
    if (nl)
        *nl++ = '\0';
    *line = nl;
    return l;
}

/* Is there a default route (IPv4 0/0, or IPv6 ::/0 not on lo) through dev, or through any
 * netdev when dev is NULL? A namespace with a way off the machine is not one a drill owns,
 * and a drill never takes down the netdev of one. */
static bool default_route(const char *dev)
{
    char *buf = read_proc("/proc/self/net/route"), *l;
    while ((l = next_line(&buf))) {
        char d[32] = "";
        unsigned dst, gw, flags, mask;
        if (sscanf(l, "%31s %x %x %x %*d %*d %*d %x", d, &dst, &gw, &flags, &mask) == 5 &&
            dst == 0 && mask == 0 && (!dev || !strcmp(d, dev)))
            return true;
    }
    buf = read_proc("/proc/self/net/ipv6_route");
    while ((l = next_line(&buf))) {
        /* dest, prefix length, src, src length, next hop, metric, refs, use, flags, dev */
        char a[64] = "", b[64] = "", d[32] = "";
        if (sscanf(l, "%63s %63s %*s %*s %*s %*s %*s %*s %*s %31s", a, b, d) == 3 &&
            !strcmp(a, "00000000000000000000000000000000") && !strcmp(b, "00") && strcmp(d, "lo") &&
            (!dev || !strcmp(d, dev)))
            return true;
    }
    return false;
}

/* The netdev of the longest-prefix IPv4 route to addr (numeric text) in the main table, as
 * the kernel would choose it for a connection there (lowest metric among equals). */
static bool route_dev(const char *addr, char *dev, size_t len)
{
    struct in_addr a;
    if (inet_pton(AF_INET, addr, &a) != 1)
        return false;
    char *buf = read_proc("/proc/self/net/route"), *l;
    int best = -1, best_metric = 0;
    while ((l = next_line(&buf))) {
        char d[32] = "";
        unsigned dst, gw, flags, mask;
        int metric;
        if (sscanf(l, "%31s %x %x %x %*d %*d %d %x", d, &dst, &gw, &flags, &metric, &mask) != 6 ||
            !(flags & 0x1 /* RTF_UP */) || (a.s_addr & mask) != dst)
            continue;
        int plen = __builtin_popcount(mask);
        if (plen > best || (plen == best && metric < best_metric)) {
            best = plen;
            best_metric = metric;
            snprintf(dev, len, "%s", d);
        }
    }
    return best >= 0;
}

/* SIOCGIFFLAGS / SIOCSIFFLAGS on dev (netdevice(7)), in the namespace the socket is made in:
 * its flags into *flags, then, when set, IFF_UP set (up) or cleared. 0 or -errno. */
static int link_flags(const char *dev, short *flags, bool set, bool up)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
    int rc = ioctl(fd, SIOCGIFFLAGS, &ifr) < 0 ? -errno : 0;
    if (rc == 0 && flags)
        *flags = ifr.ifr_flags;
    if (rc == 0 && set) {
        if (up)
            ifr.ifr_flags |= IFF_UP;
        else
            ifr.ifr_flags &= (short)~IFF_UP;
        rc = ioctl(fd, SIOCSIFFLAGS, &ifr) < 0 ? -errno : 0;
    }
    close(fd);
    return rc;
}

/* Guardian's codes (the first byte on its status pipe; the second: an errno). */
enum {
    G_OK,
    G_SETNS_PERM,
    G_NOT_NETNS,
    G_NFT,
    G_NS_DEFAULT,  /* blackhole: the namespace routes off the machine */
    G_DEV_DEFAULT, /* link-down: the netdev carries a default route */
    G_DEV_CONTROL, /* link-down: the netdev carries the control connection */
    G_NO_ROUTE,    /* link-down: no route to the data peer */
    G_NO_DEV,      /* link-down: no such netdev, or the loopback */
    G_DEV_DOWN,    /* link-down: the netdev is down already */
    G_IOCTL,       /* link-down: the flags could not be set */
    G_NO_ANSWER
};

/* In the guardian: the link-down checks (the netdev, found by its route when not given, into
 * h->dev), then, unless probe, the netdev set down, *at_ns the CLOCK_MONOTONIC time just
 * before (the clock is the system's, the parent's too). A G_ code; *e the errno of G_IOCTL. */
static int link_guard(struct drill_netns *h, bool probe, int *e, uint64_t *at_ns)
{
    if (!h->dev[0] && !route_dev(h->peer, h->dev, sizeof(h->dev)))
        return G_NO_ROUTE;
    short flags = 0;
    int rc = link_flags(h->dev, &flags, false, false);
    if (rc < 0 || (flags & IFF_LOOPBACK))
        return G_NO_DEV;
    if (default_route(h->dev))
        return G_DEV_DEFAULT;
    char cdev[32] = "";
    if (route_dev(h->ctl_peer, cdev, sizeof(cdev)) && !strcmp(cdev, h->dev))
        return G_DEV_CONTROL;
    if (!(flags & IFF_UP))
        return G_DEV_DOWN;
    if (probe)
        return G_OK;
    /* The netdev's notifiers run inside the ioctl (NETDEV_DOWN: Soft-RoCE's port goes DOWN,
     * its routes go), so a verbs lane can see its queue pair fail before this process has
     * told the parent: the fault's time is taken here, not when the parent hears of it. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *at_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    rc = link_flags(h->dev, NULL, true, false);
    *e = -rc;
    return rc < 0 ? G_IOCTL : G_OK;
}

/* In the guardian (single-threaded after fork, so plain calls; no allocation): nft -f - with
 * the script on stdin, its messages to errfd. The exit status of nft, or 127. */
static int run_nft(const char *nft, const char *text, int errfd)
{
    int in[2];
    if (pipe(in) < 0)
        return 127;
    pid_t p = fork();
    if (p < 0)
        return 127;
    if (p == 0) {
        dup2(in[0], 0);
        dup2(errfd, 1);
        dup2(errfd, 2);
        close(in[0]);
        close(in[1]);
        static char a0[] = "nft", a1[] = "-f", a2[] = "-";
        char *const argv[] = {a0, a1, a2, NULL};
        execv(nft, argv);
        _exit(127);
    }
    close(in[0]);
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t k = write(in[1], text + off, len - off);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    close(in[1]);
    int st = 0;
    while (waitpid(p, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 127;
}

/* The parent's line for a guardian's refusal or failure. */
static int guard_error(const struct drill_netns *h, int code, int e, const char *text,
                       struct ft_err *err)
{
    const char *ns = h->owned ? "this process's namespace" : h->path;
    switch (code) {
    case G_SETNS_PERM:
        return ft_err_set(err, -EPERM,
                          "--netns %s: cannot enter it (Operation not permitted): a drill's "
                          "fault needs root",
                          ns);
    case G_NOT_NETNS:
        return ft_err_set(err, -EINVAL, "--netns %s: not a network namespace", ns);
    case G_NS_DEFAULT:
        return ft_err_set(err, -EPERM,
                          "--netns %s has a default route: a blackhole goes only into a "
                          "namespace the drill owns, with no way off this machine",
                          ns);
    case G_DEV_DEFAULT:
        return ft_err_set(err, -EPERM,
                          "%s in %s carries a default route: a drill never takes down a way off "
                          "this machine (give the data path's netdev with --device)",
                          h->dev, ns);
    case G_DEV_CONTROL:
        return ft_err_set(err, -EPERM,
                          "%s in %s carries the control connection to %s: a drill never takes "
                          "it down; give the data path a netdev of its own (TCP: --data-peer, "
                          "the agent's address on it; verbs: the RDMA device's netdev, "
                          "--device)",
                          h->dev, ns, h->ctl_peer);
    case G_NO_ROUTE:
        return ft_err_set(err, -ENODEV,
                          "no route to %s in %s: the data path must leave through a netdev of "
                          "that namespace (or name it with --device)",
                          h->peer, ns);
    case G_NO_DEV:
        return ft_err_set(err, -ENODEV, "--device %s: no such netdev in %s (or the loopback)",
                          h->dev, ns);
    case G_DEV_DOWN:
        return ft_err_set(err, -ENETDOWN,
                          "%s in %s is down already: a drill takes down only a link that is up",
                          h->dev, ns);
    case G_IOCTL:
        return ft_err_set(err, e ? -e : -EIO, "%s in %s: cannot set it down: %s", h->dev, ns,
                          strerror(e ? e : EIO));
    default:
        return ft_err_set(err, code == G_NFT && strstr(text, "ermission") ? -EPERM : -EIO,
                          "nft in %s could not set the blackhole: %s", ns,
                          text[0] ? text : "no answer");
    }
}

/* Start the guardian; probe: it only enters the namespace and checks it, then ends. */
static int guard(struct drill_netns *h, double max_s, bool probe, struct ft_err *err)
{
    bool hole = h->kind == DRILL_NETNS_BLACKHOLE;
    static char on[4096], off[512];
    if (hole) {
        script(h, true, on, sizeof(on));
        script(h, false, off, sizeof(off));
    }
    int nsfd = open(h->path, O_RDONLY | O_CLOEXEC);
    if (nsfd < 0)
        return ft_err_set(err, -errno, "--netns %s: %s", h->path, strerror(errno));
    int ctl[2], status[2], msg[2];
    if (pipe2(ctl, O_CLOEXEC) < 0) {
        close(nsfd);
        return ft_err_set(err, -errno, "pipe: %s", strerror(errno));
    }
    if (pipe2(status, O_CLOEXEC) < 0 || pipe2(msg, O_CLOEXEC) < 0) {
        int e = errno;
        close(nsfd);
        close(ctl[0]);
        close(ctl[1]);
        return ft_err_set(err, -e, "pipe: %s", strerror(e));
    }
    int timeout_ms = (int)(max_s * 1000) + 1000;
    long maxfd = sysconf(_SC_OPEN_MAX);
    if (maxfd < 0 || maxfd > 65536)
        maxfd = 65536;
    pid_t g = fork();
    if (g < 0) {
        int e = errno;
        close(nsfd);
        close(ctl[0]);
        close(ctl[1]);
        close(status[0]);
        close(status[1]);
        close(msg[0]);
        close(msg[1]);
        return ft_err_set(err, -e, "fork: %s", strerror(e));
    }
    if (g == 0) {
        /* The guardian: enter the namespace, set the fault, report, then wait for the pipe
         * to close (told, or the drill ended) or its own deadline, and undo it. */
        /* Nothing of the drill's stays open in it (a lane's socket held here would not close
         * when the lane closes it), only its three pipes and the namespace. */
        for (int fd = 3; fd < (int)maxfd; fd++)
            if (fd != nsfd && fd != ctl[0] && fd != status[1] && fd != msg[1])
                close(fd);
        signal(SIGINT, SIG_IGN); /* a Ctrl-C of the drill ends it first: the pipe closes */
        /* The status: the G_ code, an errno, then (link-down) the time it was set. */
        unsigned char code[2 + sizeof(uint64_t)] = {G_OK, 0};
        uint64_t at_ns = 0;
        int e = 0;
        if (setns(nsfd, CLONE_NEWNET) < 0) {
            code[0] = (unsigned char)(errno == EPERM ? G_SETNS_PERM : G_NOT_NETNS);
        } else if (!hole) {
            code[0] = (unsigned char)link_guard(h, probe, &e, &at_ns);
            code[1] = (unsigned char)(e < 256 ? e : EIO);
            /* The netdev's name first (the parent names it in its lines). */
            if (write(msg[1], h->dev, strlen(h->dev)) < 0 || write(msg[1], "\n", 1) < 0)
                _exit(G_NO_ANSWER);
        } else if (default_route(NULL)) {
            code[0] = G_NS_DEFAULT;
        } else if (!probe) {
            int rc = run_nft(h->nft, on, msg[1]);
            code[0] = (unsigned char)(rc == 0 ? G_OK : G_NFT);
        }
        memcpy(code + 2, &at_ns, sizeof(at_ns));
        if (write(status[1], code, sizeof(code)) != (ssize_t)sizeof(code) || code[0] != G_OK ||
            probe)
            _exit(code[0]);
        close(msg[1]);
        struct pollfd p = {ctl[0], POLLIN, 0};
        while (poll(&p, 1, timeout_ms) < 0 && errno == EINTR)
            ;
        if (hole) {
            int devnull = open("/dev/null", O_WRONLY);
            run_nft(h->nft, off, devnull);
        } else {
            link_flags(h->dev, NULL, true, true);
        }
        _exit(0);
    }
    close(nsfd);
    close(ctl[0]);
    close(status[1]);
    close(msg[1]);
    unsigned char code[2 + sizeof(uint64_t)] = {G_NO_ANSWER, 0};
    struct pollfd p = {status[0], POLLIN, 0};
    int pr = poll(&p, 1, 10000);
    /* One write of 10 bytes into a pipe is atomic (pipe(7), PIPE_BUF): one read takes it. */
    if (pr <= 0 || read(status[0], code, sizeof(code)) != (ssize_t)sizeof(code))
        code[0] = G_NO_ANSWER;
    memcpy(&h->set_ns, code + 2, sizeof(h->set_ns));
    char text[400] = "";
    if (code[0] != G_OK || !hole) {
        ssize_t k = read(msg[0], text, sizeof(text) - 1);
        text[k > 0 ? k : 0] = '\0';
    }
    char *line = text;
    if (!hole) { /* the netdev's name, then nothing */
        char *nl = strchr(text, '\n');
        if (nl) {
            *nl = '\0';
            if (text[0])
                snprintf(h->dev, sizeof(h->dev), "%s", text);
            line = nl + 1;
        }
    }
    char *nl = strchr(line, '\n');
    if (nl)
        *nl = '\0';
    close(status[0]);
    close(msg[0]);
    if (code[0] != G_OK) {
        close(ctl[1]);
        kill(g, SIGKILL);
        waitpid(g, NULL, 0);
        return guard_error(h, code[0], code[1], line, err);
    }
    if (probe) {
        close(ctl[1]);
        waitpid(g, NULL, 0);
        return 0;
    }
    h->guard = g;
    h->ctl = ctl[1];
    return 0;
}

int drill_netns_on(struct drill_netns *h, double max_s, struct ft_err *err)
{
    return guard(h, max_s, false, err);
}

void drill_netns_off(struct drill_netns *h)
{
    if (!h->guard)
        return;
    close(h->ctl);
    h->ctl = -1;
    while (waitpid(h->guard, NULL, 0) < 0 && errno == EINTR)
        ;
    h->guard = 0;
}
