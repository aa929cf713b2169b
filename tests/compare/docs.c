/* docs: builds results documents in the shape results_build writes (format, hosts,
 * versions, conditions, mix, phases with flows and points, topology with NICs, adapters,
 * ports and netdevs), small enough to read in a test. */
#include "tests/compare/docs.h"

#include <stdio.h>
#include <stdlib.h>

void doc_defaults(struct doc_opts *o)
{
    *o = (struct doc_opts){.mix = "probe-test",
                           .started_at = "2026-01-02T03:04:05.000Z",
                           .link_layer = "InfiniBand",
                           .active_mtu = 4096,
                           .rate_gbps = 400,
                           .fw = "28.39.1002",
                           .gid_type = "IB",
                           .netdev_mtu = 9000,
                           .size = 4096,
                           .p50_us = 2.5,
                           .p99_us = 4.0,
                           .p999_us = 9.0,
                           .gbps = 12.5,
                           .neighbour_gbps = 300,
                           .status = "ok"};
}

static cJSON *mix_flow(const char *name, const char *role, const char *op, const char *kind,
                       uint64_t size, const struct doc_opts *o)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "name", name);
    cJSON_AddStringToObject(f, "role", role);
    cJSON_AddStringToObject(f, "transport", "verbs");
    cJSON_AddStringToObject(f, "op", op);
    cJSON_AddStringToObject(f, "direction", "tx");
    cJSON_AddStringToObject(f, "latency_kind", kind);
    cJSON *lo = cJSON_AddObjectToObject(f, "local");
    cJSON_AddStringToObject(lo, "ip", "");
    cJSON_AddStringToObject(lo, "netdev", o->netdev ? o->netdev : "");
    cJSON_AddStringToObject(lo, "rdma", o->netdev ? "" : "mlx5_0:1");
    cJSON_AddNullToObject(lo, "gpu");
    cJSON_AddStringToObject(f, "peer", "node2:7000");
    cJSON_AddNumberToObject(f, "size", (double)size);
    cJSON_AddNumberToObject(f, "concurrency", 1);
    cJSON_AddNumberToObject(f, "rate_gbps", 0);
    cJSON_AddNumberToObject(f, "warmup_s", 0.5);
    cJSON_AddNumberToObject(f, "duration_s", 2);
    cJSON_AddNumberToObject(f, "iterations", 0);
    cJSON_AddNumberToObject(f, "start_s", 0);
    cJSON_AddNumberToObject(f, "seed", 1);
    return f;
}

static cJSON *result_flow(const char *name, const char *role, const char *op, const char *kind,
                          const char *status, uint64_t size, bool lat, double p50, double p99,
                          double p999, double gbps)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "name", name);
    cJSON_AddStringToObject(f, "transport", "verbs");
    cJSON_AddStringToObject(f, "op", op);
    cJSON_AddStringToObject(f, "role", role);
    cJSON_AddStringToObject(f, "direction", "tx");
    cJSON_AddStringToObject(f, "latency_kind", kind);
    cJSON_AddStringToObject(f, "peer", "node2:7000");
    cJSON_AddStringToObject(f, "status", status);
    cJSON *pts = cJSON_AddArrayToObject(f, "points");
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "size_bytes", (double)size);
    cJSON_AddBoolToObject(p, "measured", 1);
    cJSON_AddBoolToObject(p, "complete", 1);
    cJSON_AddNumberToObject(p, "measure_s", 2);
    cJSON_AddNumberToObject(p, "ops", 1000);
    cJSON_AddNumberToObject(p, "goodput_gbps", gbps);
    if (lat) {
        cJSON *l = cJSON_AddObjectToObject(p, "latency");
        cJSON_AddStringToObject(l, "kind", kind);
        cJSON_AddStringToObject(l, "unit", "us");
        cJSON_AddNumberToObject(l, "p50", p50);
        cJSON_AddNumberToObject(l, "p99", p99);
        cJSON_AddNumberToObject(l, "p99.9", p999);
    } else {
        cJSON_AddNullToObject(p, "latency");
    }
    cJSON_AddItemToArray(pts, p);
    cJSON *c = cJSON_AddObjectToObject(f, "conditions");
    cJSON_AddStringToObject(c, "local_rdma", "mlx5_0:1");
    cJSON_AddNumberToObject(c, "qp_mtu_bytes", 4096);
    return f;
}

cJSON *doc_make(const struct doc_opts *o)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "format", "fabtop-results");
    cJSON_AddNumberToObject(d, "version", 1);
    cJSON_AddStringToObject(d, "started_at", o->started_at);
    cJSON_AddStringToObject(d, "ended_at", o->started_at);
    cJSON_AddNumberToObject(d, "duration_s", 3);
    cJSON_AddBoolToObject(d, "interrupted", 0);
    cJSON *h = cJSON_AddObjectToObject(d, "hosts");
    cJSON_AddStringToObject(h, "local", "node1");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(h, "peers"), cJSON_CreateString("node2:7000"));
    cJSON *v = cJSON_AddObjectToObject(d, "versions");
    cJSON_AddStringToObject(v, "fabtop", "0.1.0");
    cJSON_AddStringToObject(v, "kernel", "Linux 6.1.0-18-amd64 x86_64");
    cJSON_AddStringToObject(v, "libcjson", "1.7.15");
    cJSON *c = cJSON_AddObjectToObject(d, "conditions");
    cJSON_AddStringToObject(c, "tcp_congestion_control", "cubic");
    cJSON_AddStringToObject(c, "tcp_ecn", "2");
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(c, "netdev_mtu"), "ib0", o->netdev_mtu);

    cJSON *mix = cJSON_AddObjectToObject(d, "mix");
    cJSON_AddStringToObject(mix, "format", "fabtop-mix");
    cJSON_AddStringToObject(mix, "name", o->mix);
    cJSON_AddStringToObject(mix, "description", "a test mix");
    cJSON *mf = cJSON_AddArrayToObject(mix, "flows");
    cJSON_AddItemToArray(
        mf, mix_flow("probe", "foreground", "pingpong", "half_round_trip", o->size, o));
    if (o->neighbour)
        cJSON_AddItemToArray(mf, mix_flow("bulk", "background", "stream", "none", 1 << 20, o));

    cJSON *phases = cJSON_AddArrayToObject(d, "phases");
    cJSON *ph = cJSON_CreateObject();
    cJSON_AddStringToObject(ph, "name", "loaded");
    cJSON_AddNumberToObject(ph, "duration_s", 3);
    cJSON *fl = cJSON_AddArrayToObject(ph, "flows");
    cJSON_AddItemToArray(fl, result_flow("probe", "foreground", "pingpong", "half_round_trip",
                                         o->status, o->size, true, o->p50_us, o->p99_us, o->p999_us,
                                         o->gbps));
    if (o->neighbour)
        cJSON_AddItemToArray(fl, result_flow("bulk", "background", "stream", "none", "ok", 1 << 20,
                                             false, 0, 0, 0, o->neighbour_gbps));
    cJSON_AddItemToArray(phases, ph);
    cJSON *sum = cJSON_AddObjectToObject(d, "summary");
    cJSON_AddStringToObject(sum, "foreground", "probe");
    cJSON_AddArrayToObject(d, "events");

    cJSON *t = cJSON_AddObjectToObject(d, "topology");
    cJSON_AddStringToObject(t, "format", "fabtop-topology");
    cJSON *ad = cJSON_CreateObject();
    cJSON_AddStringToObject(ad, "model", "ConnectX-7");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(t, "adapters"), ad);
    cJSON *nic = cJSON_CreateObject();
    cJSON_AddNumberToObject(nic, "adapter", 0);
    cJSON_AddStringToObject(nic, "rdma_dev", "mlx5_0");
    cJSON_AddStringToObject(nic, "fw_ver", o->fw ? o->fw : "");
    cJSON_AddNumberToObject(nic, "first_port", 0);
    cJSON_AddNumberToObject(nic, "nports", 1);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(t, "nics"), nic);
    cJSON *port = cJSON_CreateObject();
    cJSON_AddNumberToObject(port, "nic", 0);
    cJSON_AddNumberToObject(port, "num", 1);
    cJSON_AddStringToObject(port, "state", "ACTIVE");
    cJSON_AddStringToObject(port, "link_layer", o->link_layer);
    cJSON_AddNumberToObject(port, "rate_gbps", o->rate_gbps);
    cJSON_AddNumberToObject(port, "active_mtu", o->active_mtu);
    cJSON_AddNumberToObject(port, "netdev", 0);
    cJSON *gid = cJSON_CreateObject();
    cJSON_AddNumberToObject(gid, "index", 0);
    cJSON_AddStringToObject(gid, "gid", "fe80:0000:0000:0000:0000:0000:0000:0001");
    cJSON_AddStringToObject(gid, "type", o->gid_type);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(port, "gids"), gid);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(t, "ports"), port);
    cJSON *nd = cJSON_CreateObject();
    cJSON_AddStringToObject(nd, "name", "ib0");
    cJSON_AddNumberToObject(nd, "mtu", o->netdev_mtu);
    cJSON_AddStringToObject(nd, "operstate", "up");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(t, "netdevs"), nd);
    return d;
}

int doc_write(const struct doc_opts *o, const char *path)
{
    cJSON *d = doc_make(o);
    char *text = cJSON_Print(d);
    cJSON_Delete(d);
    FILE *f = fopen(path, "w");
    if (!f || !text) {
        if (f)
            fclose(f);
        free(text);
        return -1;
    }
    fputs(text, f);
    free(text);
    return fclose(f) == 0 ? 0 : -1;
}
