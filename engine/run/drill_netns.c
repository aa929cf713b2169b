/* drill_netns: the blackhole's nftables table in an owned network namespace, set and lifted
 * by a guardian process (drill_netns.h). */
#define _GNU_SOURCE /* setns */
#include "engine/run/drill_netns.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

int drill_netns_init(struct drill_netns *h, const char *ns, const char *peer_hp,
                     unsigned default_port, struct ft_err *err)
{
    memset(h, 0, sizeof(*h));
    h->ctl = -1;
    if (!ns || !*ns)
        return ft_err_set(err, -EINVAL,
                          "--fault blackhole needs --netns NAME: a network namespace this drill "
                          "owns, where its nftables rules go");
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
    /* The host's namespace is PID 1's; a drill never drops traffic there. */
    if (stat("/proc/1/ns/net", &host) == 0 && st.st_dev == host.st_dev && st.st_ino == host.st_ino)
        return ft_err_set(err, -EPERM,
                          "--netns %s is the host's network namespace (PID 1's): a blackhole goes "
                          "only into a namespace the drill owns",
                          ns);
    if (!find_nft(h->nft, sizeof(h->nft)))
        return ft_err_set(err, -ELIBACC,
                          "--fault blackhole needs nft (install the nftables package)");
    char host_s[256];
    uint16_t port = 0;
    int rc = channel_split_host_port(peer_hp, (uint16_t)default_port, host_s, sizeof(host_s), &port,
                                     err);
    if (rc < 0)
        return rc;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    int g = getaddrinfo(host_s[0] ? host_s : "127.0.0.1", NULL, &hints, &ai);
    if (g != 0 || !ai)
        return ft_err_set(err, -EHOSTUNREACH, "the peer %s does not resolve: %s", host_s,
                          gai_strerror(g));
    struct sockaddr_storage ss = {0};
    memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    channel_format_addr(&ss, false, h->peer, sizeof(h->peer));
    h->v6 = strchr(h->peer, ':') != NULL;
    h->ctl_port = port;
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

/* In the guardian, after setns: does this namespace route anywhere by default? An IPv4 route
 * of destination and mask 0 (/proc/net/route, hex fields), or an IPv6 ::/0 not on lo
 * (/proc/net/ipv6_route); a namespace with a way off the machine is not one a drill owns.
 * No allocation: a fixed buffer, lines as they come. */
static bool has_default_route(void)
{
    static const char *const files[] = {"/proc/self/net/route", "/proc/self/net/ipv6_route"};
    static char buf[65536];
    for (int f = 0; f < 2; f++) {
        int fd = open(files[f], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        for (char *line = buf; line && *line;) {
            char *next = strchr(line, '\n');
            if (next)
                *next++ = '\0';
            char a[64] = "", b[64] = "", c[64] = "", dev[32] = "";
            if (f == 0 && sscanf(line, "%31s %63s %*s %*s %*s %*s %*s %63s", dev, a, c) == 3 &&
                !strcmp(a, "00000000") && !strcmp(c, "00000000"))
                return true;
            /* dest, prefix length, src, src length, next hop, metric, refs, use, flags, dev */
            if (f == 1 &&
                sscanf(line, "%63s %63s %*s %*s %*s %*s %*s %*s %*s %31s", a, b, dev) == 3 &&
                !strcmp(a, "00000000000000000000000000000000") && !strcmp(b, "00") &&
                strcmp(dev, "lo"))
                return true;
            line = next;
        }
    }
    return false;
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

/* Start the guardian; probe: it only enters the namespace and checks it, then ends. */
static int guard(struct drill_netns *h, double max_s, bool probe, struct ft_err *err)
{
    static char on[4096], off[512];
    script(h, true, on, sizeof(on));
    script(h, false, off, sizeof(off));
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
        /* The guardian: enter the namespace, set the rules, report, then wait for the pipe
         * to close (told, or the drill ended) or its own deadline, and lift them. */
        /* Nothing of the drill's stays open in it (a lane's socket held here would not close
         * when the lane closes it), only its three pipes and the namespace. */
        for (int fd = 3; fd < (int)maxfd; fd++)
            if (fd != nsfd && fd != ctl[0] && fd != status[1] && fd != msg[1])
                close(fd);
        signal(SIGINT, SIG_IGN); /* a Ctrl-C of the drill ends it first: the pipe closes */
        unsigned char code = 0;
        if (setns(nsfd, CLONE_NEWNET) < 0) {
            code = (unsigned char)(errno == EPERM ? 1 : 2);
        } else if (has_default_route()) {
            code = 4;
        } else if (!probe) {
            int rc = run_nft(h->nft, on, msg[1]);
            code = (unsigned char)(rc == 0 ? 0 : 3);
        }
        if (write(status[1], &code, 1) != 1 || code != 0 || probe)
            _exit(code);
        close(msg[1]);
        struct pollfd p = {ctl[0], POLLIN, 0};
        while (poll(&p, 1, timeout_ms) < 0 && errno == EINTR)
            ;
        int devnull = open("/dev/null", O_WRONLY);
        run_nft(h->nft, off, devnull);
        _exit(0);
    }
    close(nsfd);
    close(ctl[0]);
    close(status[1]);
    close(msg[1]);
    unsigned char code = 9;
    struct pollfd p = {status[0], POLLIN, 0};
    int pr = poll(&p, 1, 10000);
    if (pr <= 0 || read(status[0], &code, 1) != 1)
        code = 9;
    char text[400] = "";
    if (code != 0) {
        ssize_t k = read(msg[0], text, sizeof(text) - 1);
        text[k > 0 ? k : 0] = '\0';
        char *nl = strchr(text, '\n');
        if (nl)
            *nl = '\0';
    }
    close(status[0]);
    close(msg[0]);
    if (code != 0) {
        close(ctl[1]);
        kill(g, SIGKILL);
        waitpid(g, NULL, 0);
        if (code == 1)
            return ft_err_set(err, -EPERM,
                              "--netns %s: cannot enter it (Operation not permitted): a blackhole "
                              "needs root",
                              h->path);
        if (code == 2)
            return ft_err_set(err, -EINVAL, "--netns %s: not a network namespace", h->path);
        if (code == 4)
            return ft_err_set(err, -EPERM,
                              "--netns %s has a default route: a blackhole goes only into a "
                              "namespace the drill owns, with no way off this machine",
                              h->path);
        return ft_err_set(err, code == 3 && strstr(text, "ermission") ? -EPERM : -EIO,
                          "nft in %s could not set the blackhole: %s", h->path,
                          text[0] ? text : "no answer");
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
