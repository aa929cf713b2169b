/* docs: results documents the compare tests write themselves: one foreground flow over an
 * RDMA port, optionally a neighbour, with every condition compare looks at set by options. */
#ifndef TEST_COMPARE_DOCS_H
#define TEST_COMPARE_DOCS_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct doc_opts {
    const char *mix;        /* mix name ("probe-test") */
    const char *started_at; /* ISO 8601 ("2026-01-02T03:04:05.000Z") */
    const char *link_layer; /* "InfiniBand" or "Ethernet" */
    int active_mtu;         /* bytes (4096) */
    double rate_gbps;       /* port rate (400) */
    const char *fw;         /* adapter firmware ("28.39.1002"); NULL: not recorded */
    const char *gid_type;   /* "RoCE v2", "IB" */
    int netdev_mtu;         /* bytes (9000) */
    const char *netdev;     /* the flow's local netdev, NULL: names only the RDMA port */
    uint64_t size;          /* foreground message size, bytes */
    double p50_us, p99_us, p999_us, gbps; /* the foreground's outcome */
    bool neighbour;                       /* a background stream in the loaded phase */
    double neighbour_gbps;                /* its goodput */
    const char *status;                   /* the foreground's status ("ok") */
};

/* Defaults: an InfiniBand port at 400 Gb/s, MTU 4096, 4 KiB ping-pong, no neighbour. */
void doc_defaults(struct doc_opts *o);
cJSON *doc_make(const struct doc_opts *o);
/* Write it to path; 0 or -1. */
int doc_write(const struct doc_opts *o, const char *path);

#endif
