/* metrics_http: the agent's Prometheus endpoint (`fabtop serve --metrics ADDR[:PORT]`). GET
 * (or HEAD) /metrics answers with the exposition a callback renders at each scrape, in the
 * text format's content type; / says where the metrics are; other paths get 404 and other
 * methods 405. The HTTP is libmicrohttpd's, on one internal polling thread, so scrapes run
 * one at a time and the callback needs no lock of its own; connections are limited in number
 * and time, so a peer that opens many or never finishes its request holds nothing for long. */
#ifndef METRICS_HTTP_H
#define METRICS_HTTP_H

#include <stdint.h>

#include "common/ft_err.h"
#include "common/strbuf.h"

/* The default port: 9470, next to the agent's 7470 (Prometheus's wiki of default port
 * allocations has no fabtop entry; operators choose theirs with ADDR:PORT). */
#define METRICS_HTTP_DEFAULT_PORT 9470

/* Append the exposition to out: 0, or -errno (the scrape gets 500 with err's message). */
typedef int (*metrics_http_render_fn)(void *ctx, struct strbuf *out, struct ft_err *err);

struct metrics_http;

/* Listen on host (a numeric IPv4 or IPv6 address or a name; NULL or "": every address) and
 * port (0: a free one, metrics_http_port says which) and serve. 0, or -errno with err naming
 * the address ("cannot listen on 127.0.0.1:9470: Address already in use"). */
int metrics_http_start(const char *host, uint16_t port, metrics_http_render_fn render, void *ctx,
                       struct metrics_http **out, struct ft_err *err);
/* The port listened on, and "127.0.0.1:9470" / "[::1]:9470" / "[::]:9470". */
uint16_t metrics_http_port(const struct metrics_http *m);
const char *metrics_http_desc(const struct metrics_http *m);
/* Stop serving (a scrape in progress finishes first) and free. NULL is fine. */
void metrics_http_stop(struct metrics_http *m);

#endif
