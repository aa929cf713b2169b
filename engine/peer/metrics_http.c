/* metrics_http: GET /metrics over libmicrohttpd, the listening socket bound here (so that a
 * refused address is named with its errno) and handed to the daemon. */
#include "engine/peer/metrics_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/xalloc.h"

/* The text format's content type (Prometheus "Exposition formats", text-based format). */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* Scrapers at once, and how long one may sit idle (a client that opens connections and never
 * sends a request holds a slot no longer than this). */
#define MAX_CONNECTIONS 16
#define IDLE_TIMEOUT_S  10

struct metrics_http {
    struct MHD_Daemon *d;
    metrics_http_render_fn render;
    void *ctx;
    uint16_t port;
    char desc[80];
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
                             const char *body, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **req)
{
    (void)version;
    (void)upload;
    struct metrics_http *m = cls;
    static int started;
    if (!*req) { /* the headers are in; the body (if any) comes next */
        *req = &started;
        return MHD_YES;
    }
    if (*upload_size) { /* a body nobody asked for: read and dropped */
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
        static const char t[] = "only GET and HEAD: the metrics are at /metrics\n";
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", t, sizeof(t) - 1);
    }
    if (!strcmp(url, "/")) {
        static const char t[] = "fabtop serve: the Prometheus metrics are at /metrics\n";
        return reply(c, MHD_HTTP_OK, "text/plain", t, sizeof(t) - 1);
    }
    if (strcmp(url, "/metrics")) {
        static const char t[] = "not found: the metrics are at /metrics\n";
        return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", t, sizeof(t) - 1);
    }
    struct strbuf sb;
    strbuf_init(&sb);
    struct ft_err err = {0};
    enum MHD_Result ok;
    if (m->render(m->ctx, &sb, &err) < 0) {
        char t[sizeof(err.msg) + 32];
        int n = snprintf(t, sizeof(t), "cannot read the metrics: %s\n", err.msg);
        ok = reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", t, (size_t)n);
    } else {
        ok = reply(c, MHD_HTTP_OK, PROM_CONTENT_TYPE, sb.s ? sb.s : "", sb.len);
    }
    strbuf_free(&sb);
    return ok;
}

/* Bind and listen on host:port: the socket, or -errno with err set. */
static int listen_on(const char *host, uint16_t port, int *family, struct ft_err *err)
{
    char ps[8];
    snprintf(ps, sizeof(ps), "%u", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
                    *res = NULL;
    bool any = !host || !host[0];
    if (any)
        hints.ai_family = AF_INET6; /* [::], which takes IPv4 too (IPV6_V6ONLY off below) */
    int gai = getaddrinfo(any ? NULL : host, ps, &hints, &res);
    if (gai != 0)
        return ft_err_set(err, -EADDRNOTAVAIL, "--metrics %s: %s", any ? "[::]" : host,
                          gai_strerror(gai));
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1, zero = 0, e = 0;
    if (fd < 0) {
        e = errno;
    } else {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (res->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        if (bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, MAX_CONNECTIONS) < 0)
            e = errno;
    }
    *family = res->ai_family;
    freeaddrinfo(res);
    if (e) {
        if (fd >= 0)
            close(fd);
        return ft_err_set(err, -e, "cannot listen on %s%s%s:%u for --metrics: %s",
                          *family == AF_INET6 ? "[" : "", any ? "::" : host,
                          *family == AF_INET6 ? "]" : "", port, strerror(e));
    }
    return fd;
}

int metrics_http_start(const char *host, uint16_t port, metrics_http_render_fn render, void *ctx,
                       struct metrics_http **out, struct ft_err *err)
{
    int family = AF_INET;
    int fd = listen_on(host, port, &family, err);
    if (fd < 0)
        return fd;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    struct metrics_http *m = xalloc_zero(1, sizeof(*m));
    m->render = render;
    m->ctx = ctx;
    char ip[INET6_ADDRSTRLEN] = "?";
    if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &a6->sin6_addr, ip, sizeof(ip));
        m->port = ntohs(a6->sin6_port);
        snprintf(m->desc, sizeof(m->desc), "[%s]:%u", ip, m->port);
    } else {
        const struct sockaddr_in *a4 = (const struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &a4->sin_addr, ip, sizeof(ip));
        m->port = ntohs(a4->sin_port);
        snprintf(m->desc, sizeof(m->desc), "%s:%u", ip, m->port);
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
    if (family == AF_INET6)
        flags |= MHD_USE_IPv6;
    m->d =
        MHD_start_daemon(flags, 0, NULL, NULL, answer, m, MHD_OPTION_LISTEN_SOCKET, fd,
                         MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S, MHD_OPTION_END);
    if (!m->d) {
        ft_err_set(err, -EIO, "--metrics: libmicrohttpd could not serve on %s", m->desc);
        close(fd);
        free(m);
        return -EIO;
    }
    *out = m;
    return 0;
}

uint16_t metrics_http_port(const struct metrics_http *m)
{
    return m->port;
}

const char *metrics_http_desc(const struct metrics_http *m)
{
    return m->desc;
}

void metrics_http_stop(struct metrics_http *m)
{
    if (!m)
        return;
    MHD_stop_daemon(m->d); /* closes the listening socket */
    free(m);
}
