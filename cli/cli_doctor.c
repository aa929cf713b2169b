/* cli_doctor: `fabtop doctor --peer HOST[:PORT]`: both ends' facts side by side (this host's
 * and the agent's, over the control channel), the comparison rules over them and the queue
 * pair's attributes, and a path MTU probe with don't-fragment set; exit 0 clean, 1 warnings,
 * 2 errors, like `fabtop topo --lint`. */
#include "cli/cli.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "common/jsonutil.h"
#include "engine/doctor/doctor.h"
#include "engine/peer/channel.h"
#include "engine/run/qp_walk.h"

struct doctor_args {
    const char *peer, *key_file, *to, *device, *gid_type, *output;
    long port, gid_index, path_mtu, dscp;
    bool json, no_probe, no_walk;
};

#define A(f) offsetof(struct doctor_args, f)
static const struct cli_opt doctor_opts[] = {
    {"peer", 0, CLI_ARG_REQUIRED, "HOST[:PORT]", "the `fabtop serve` at the other end",
     CLI_V_STRING, CLI_C_HOST, .off = A(peer)},
    {"key-file", 0, CLI_ARG_REQUIRED, "FILE", "the key --peer shares", CLI_V_STRING, CLI_C_FILE,
     .off = A(key_file)},
    {"to", 0, CLI_ARG_REQUIRED, "ADDR",
     "the peer's IPv4 address the traffic will use (default:\nthe --peer address)", CLI_V_STRING,
     .off = A(to)},
    {"device", 0, CLI_ARG_REQUIRED, "DEV", "the RDMA device a queue pair will use (rxe0)",
     CLI_V_STRING, .off = A(device)},
    {"port", 0, CLI_ARG_REQUIRED, "N", "its port (default {default})", CLI_V_INTEGER, .min = 1,
     .max = 255, .def = 1, .off = A(port)},
    {"gid-index", 0, CLI_ARG_REQUIRED, "I", "the GID index both ends will use", CLI_V_INTEGER,
     .min = 0, .max = 255, .def = -1, .off = A(gid_index)},
    {"gid-type", 0, CLI_ARG_REQUIRED, "TYPE", "the GID type expected (default 'RoCE v2')",
     CLI_V_STRING, .off = A(gid_type)},
    {"path-mtu", 0, CLI_ARG_REQUIRED, "BYTES", "the queue pair's path MTU (256..4096)",
     CLI_V_INTEGER, .min = 256, .max = 4096, .def = 0, .off = A(path_mtu)},
    {"dscp", 0, CLI_ARG_REQUIRED, "D",
     "the DSCP the queue pair's packets carry (RoCE v2;\ndefault {default}): its priority, PFC, "
     "ETS "
     "and ECN\nare checked on both ends",
     CLI_V_INTEGER, .min = 0, .max = 63, .def = 26, .off = A(dscp)},
    {"no-probe", 0, CLI_ARG_NONE, NULL, "skip the UDP path MTU probe", CLI_V_SET,
     .off = A(no_probe)},
    {"no-walk", 0, CLI_ARG_NONE, NULL,
     "with --device: skip the queue-pair walk (a real queue\npair to RTS, then messages of the "
     "path MTU's size)",
     CLI_V_SET, .off = A(no_walk)},
    {"output", 'o', CLI_ARG_REQUIRED, "FILE", "also write the fabtop-doctor document to FILE",
     CLI_V_STRING, CLI_C_FILE, .off = A(output)},
    {"json", 0, CLI_ARG_NONE, NULL, "print the document instead of text", CLI_V_SET,
     .off = A(json)},
};
#undef A

int cli_doctor_main(int argc, char **argv);

const struct cli_command cli_doctor_command = {
    .name = "doctor",
    .summary = "compare both ends of a path before any traffic",
    .synopsis = "Usage: fabtop doctor --peer HOST[:PORT] [--device DEV --port N --gid-index I]\n"
                "Read this end's and the agent's facts (route, interface, MTU, rp_filter, ARP,\n"
                "ECN, offloads, memlock, RDMA ports and GIDs), compare them with the queue\n"
                "pair's attributes, and probe the path MTU with don't-fragment set. With\n"
                "--device, walk a real queue pair to the agent through INIT -> RTR -> RTS\n"
                "with those attributes and send messages of the path MTU's size; when they\n"
                "fail, walk again with the value that should work, to prove the fix.\n",
    .opts = doctor_opts,
    .nopts = sizeof(doctor_opts) / sizeof(doctor_opts[0]),
    .epilogue = "Exit status: 0 clean, 1 warnings, 2 errors, 64 usage, 69 no agent,\n"
                "73 cannot write FILE.\n",
    .help_col = 24,
    .main = cli_doctor_main,
};

static const char *ival(int v, char *buf, size_t len)
{
    if (v == DOCTOR_UNKNOWN)
        return "n/a";
    snprintf(buf, len, "%d", v);
    return buf;
}

static const char *onoff(int v)
{
    return v == DOCTOR_UNKNOWN ? "n/a" : v ? "on" : "off";
}

static const char *memlock(int64_t v, char *buf, size_t len)
{
    if (v == DOCTOR_UNKNOWN)
        return "n/a";
    if (v == DOCTOR_UNLIMITED)
        return "unlimited";
    snprintf(buf, len, "%lld KiB", (long long)(v >> 10));
    return buf;
}

/* One row; same: whether both ends are expected to agree (a difference is marked '!'). */
static void row(const char *attr, const char *l, const char *p, bool same)
{
    bool mark = same && strcmp(l, p) && strcmp(l, "n/a") && strcmp(p, "n/a");
    printf("%c %-22s %-26s %s\n", mark ? '!' : ' ', attr, l, p);
}

static void rowi(const char *attr, int l, int p, bool same)
{
    char a[32], b[32];
    row(attr, ival(l, a, sizeof(a)), ival(p, b, sizeof(b)), same);
}

/* The DCB rows: "n/a" without a RoCE port's DCB answer. */
static const char *dcb_trust(const struct doctor_rdma_port *r, char *buf, size_t len)
{
    if (!r || strcmp(r->link_layer, "Ethernet"))
        return "n/a";
    if (!r->dcb.available)
        return "n/a (not offered)";
    snprintf(buf, len, "%s trust", r->dcb.trust_dscp ? "DSCP" : "PCP");
    return buf;
}

static int dcb_prio_of(const struct doctor_rdma_port *r, int dscp)
{
    if (!r || !r->dcb.available)
        return -1;
    return r->dcb.trust_dscp ? topo_dcb_priority_of(&r->dcb, dscp) : 0;
}

static const char *dcb_prio(const struct doctor_rdma_port *r, int dscp, char *buf, size_t len)
{
    int p = dcb_prio_of(r, dscp);
    if (p < 0)
        return r && r->dcb.available ? "unmapped" : "n/a";
    snprintf(buf, len, "%d%s", p, r->dcb.trust_dscp ? "" : " (untagged, PCP trust)");
    return buf;
}

static const char *dcb_pfc(const struct doctor_rdma_port *r, char *buf, size_t len)
{
    if (!r || !r->dcb.available || !r->dcb.pfc_known)
        return "n/a";
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < 8 && o < len; i++)
        if ((r->dcb.pfc_en >> i) & 1)
            o += (size_t)snprintf(buf + o, len - o, "%s%d", o ? "," : "", i);
    return o ? buf : "none";
}

static const char *dcb_ets(const struct doctor_rdma_port *r, int dscp, char *buf, size_t len)
{
    int p = dcb_prio_of(r, dscp);
    if (p < 0 || !r->dcb.ets_known)
        return "n/a";
    int tc = r->dcb.prio_tc[p];
    if (tc < 0 || tc > 7)
        return "n/a";
    if (r->dcb.tc_tsa[tc] == TOPO_DCB_TSA_ETS)
        snprintf(buf, len, "TC %d, %d%% (ETS)", tc, r->dcb.tc_tx_bw[tc]);
    else
        snprintf(buf, len, "TC %d, %s", tc, r->dcb.tc_tsa[tc] == 0 ? "strict" : "other");
    return buf;
}

static const char *dcb_ecn(const struct doctor_rdma_port *r, int dscp, char *buf, size_t len)
{
    if (!r || !r->dcb.ecn_known)
        return "n/a";
    int p = dcb_prio_of(r, dscp);
    if (p < 0)
        p = 0;
    int np = r->dcb.ecn_np[p], rp = r->dcb.ecn_rp[p];
    snprintf(buf, len, "%s/%s",
             np == 1   ? "on"
             : np == 0 ? "off"
                       : "n/a",
             rp == 1   ? "on"
             : rp == 0 ? "off"
                       : "n/a");
    return buf;
}

static void print_table(const struct doctor_facts *l, const struct doctor_facts *p,
                        const struct doctor_args *o, const struct doctor_pmtu *pr)
{
    char a[64], b[64];
    row("", "this end", "peer", false);
    row("host", l->host, p->host, false);
    row("address", l->local_addr, p->local_addr, false);
    row("interface", l->addr_dev, p->addr_dev, false);
    char rl[96], rp[96];
    snprintf(rl, sizeof(rl), "%s%s%s", l->route_dev, l->route_via[0] ? " via " : "", l->route_via);
    snprintf(rp, sizeof(rp), "%s%s%s", p->route_dev, p->route_via[0] ? " via " : "", p->route_via);
    row("route to the other end", rl, rp, false);
    row("subnet", l->subnet, p->subnet, false);
    rowi("netdev MTU (bytes)", l->mtu, p->mtu, true);
    snprintf(a, sizeof(a), "all %s, %s %s", ival(l->rp_filter_all, rl, 16), l->addr_dev,
             ival(l->rp_filter_dev, rl + 16, 16));
    snprintf(b, sizeof(b), "all %s, %s %s", ival(p->rp_filter_all, rp, 16), p->addr_dev,
             ival(p->rp_filter_dev, rp + 16, 16));
    row("rp_filter", a, b, false);
    snprintf(a, sizeof(a), "all %s, %s %s", ival(l->arp_ignore_all, rl, 16), l->addr_dev,
             ival(l->arp_ignore_dev, rl + 16, 16));
    snprintf(b, sizeof(b), "all %s, %s %s", ival(p->arp_ignore_all, rp, 16), p->addr_dev,
             ival(p->arp_ignore_dev, rp + 16, 16));
    row("arp_ignore", a, b, false);
    snprintf(a, sizeof(a), "%d", l->nsib);
    snprintf(b, sizeof(b), "%d", p->nsib);
    row("other NICs in subnet", a, b, true);
    rowi("tcp_ecn", l->tcp_ecn, p->tcp_ecn, true);
    row("driver", l->driver[0] ? l->driver : "n/a", p->driver[0] ? p->driver : "n/a", true);
    row("driver version", l->driver_version[0] ? l->driver_version : "n/a",
        p->driver_version[0] ? p->driver_version : "n/a", true);
    row("firmware", l->firmware[0] ? l->firmware : "n/a", p->firmware[0] ? p->firmware : "n/a",
        true);
    row("TSO", onoff(l->tso), onoff(p->tso), true);
    row("GSO", onoff(l->gso), onoff(p->gso), true);
    row("GRO", onoff(l->gro), onoff(p->gro), true);
    row("RX checksum", onoff(l->rx_csum), onoff(p->rx_csum), true);
    row("TX checksum", onoff(l->tx_csum), onoff(p->tx_csum), true);
    row("memlock (soft)", memlock(l->memlock_soft, a, sizeof(a)),
        memlock(p->memlock_soft, b, sizeof(b)), false);
    rowi("IOMMU groups", l->iommu_groups, p->iommu_groups, true);
    if (o->device) {
        const struct doctor_rdma_port *x = doctor_port(l, o->device, (int)o->port);
        const struct doctor_rdma_port *y = doctor_port(p, NULL, (int)o->port);
        row("RDMA port", x ? x->dev : "none", y ? y->dev : "none", false);
        row("link layer", x ? x->link_layer : "n/a", y ? y->link_layer : "n/a", true);
        row("port state", x ? x->state : "n/a", y ? y->state : "n/a", true);
        rowi("active MTU (bytes)", x ? x->active_mtu : DOCTOR_UNKNOWN,
             y ? y->active_mtu : DOCTOR_UNKNOWN, true);
        rowi("RoCE netdev MTU (bytes)", x ? x->netdev_mtu : DOCTOR_UNKNOWN,
             y ? y->netdev_mtu : DOCTOR_UNKNOWN, true);
        char dl[64], dp[64];
        row("DCB", dcb_trust(x, dl, sizeof(dl)), dcb_trust(y, dp, sizeof(dp)), true);
        char pk[48];
        snprintf(pk, sizeof(pk), "priority of DSCP %ld", o->dscp);
        row(pk, dcb_prio(x, (int)o->dscp, dl, sizeof(dl)),
            dcb_prio(y, (int)o->dscp, dp, sizeof(dp)), true);
        row("PFC on priorities", dcb_pfc(x, dl, sizeof(dl)), dcb_pfc(y, dp, sizeof(dp)), true);
        row("ETS class and share", dcb_ets(x, (int)o->dscp, dl, sizeof(dl)),
            dcb_ets(y, (int)o->dscp, dp, sizeof(dp)), true);
        row("RoCE ECN np/rp", dcb_ecn(x, (int)o->dscp, dl, sizeof(dl)),
            dcb_ecn(y, (int)o->dscp, dp, sizeof(dp)), true);
        for (int i = 0; x && i < x->ngids; i++) {
            char k[32];
            snprintf(k, sizeof(k), "GID %d", x->gids[i].index);
            const char *pt = "n/a";
            for (int g = 0; y && g < y->ngids; g++)
                if (y->gids[g].index == x->gids[i].index)
                    pt = y->gids[g].type;
            row(k, x->gids[i].type, pt, true);
        }
    }
    if (pr->valid) {
        snprintf(a, sizeof(a), "%d of %d bytes", pr->largest_ok, pr->tried);
        row("path MTU (DF probe)", a, pr->icmp_mtu ? "ICMP frag-needed seen" : "", false);
    }
}

static cJSON *findings_json(const struct doctor_finding *f, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "severity", f[i].sev == DOCTOR_ERROR ? "error" : "warning");
        cJSON_AddStringToObject(x, "rule", f[i].rule);
        cJSON_AddStringToObject(x, "attribute", f[i].attr);
        cJSON_AddStringToObject(x, "local", f[i].local);
        cJSON_AddStringToObject(x, "peer", f[i].peer);
        cJSON_AddStringToObject(x, "message", f[i].msg);
        cJSON_AddItemToArray(arr, x);
    }
    return arr;
}

static int doctor(struct doctor_args *o)
{
    if (!o->peer)
        return cli_usage_error("doctor", "--peer is required");
    if (o->gid_index >= 0 && !o->device)
        return cli_usage_error("doctor", "--gid-index goes with --device");
    if (o->output) {
        int rc = cli_check_output(o->output);
        if (rc)
            return rc;
    }
    signal(SIGPIPE, SIG_IGN);
    struct ft_err err = {0};
    struct channel_key key;
    if (channel_key_load(o->key_file, &key, &err) < 0)
        return cli_fail(&err);
    struct channel_conn *c = NULL;
    int rc = channel_connect(o->peer, CHANNEL_DEFAULT_PORT, &key, 0, &c, &err);
    channel_key_wipe(&key);
    if (rc < 0)
        return cli_fail(&err);
    const char *to = o->to ? o->to : channel_peer_host(c);
    struct doctor_facts *l = calloc(2, sizeof(*l)), *p = l ? l + 1 : NULL;
    cJSON *resp = NULL, *doc = NULL;
    struct qp_walk *walk = NULL;
    int status = CLI_SOFTWARE;
    if (!l)
        goto out;
    rc = doctor_facts_collect(to, NULL, NULL, l, &err);
    if (rc < 0) {
        status = cli_fail(&err);
        goto out;
    }
    if (o->device)
        doctor_facts_rdma(l, NULL);
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "doctor.facts");
    cJSON_AddStringToObject(req, "peer_addr", l->local_addr);
    cJSON_AddStringToObject(req, "local_addr", to);
    rc = channel_request(c, req, &resp, 15000, &err);
    if (rc == 0)
        rc = doctor_facts_from_json(cJSON_GetObjectItemCaseSensitive(resp, "facts"), p, &err);
    if (rc < 0) {
        status = rc == -ENOSYS || rc == -EOPNOTSUPP ? CLI_UNAVAILABLE : cli_fail(&err);
        if (status == CLI_UNAVAILABLE)
            fprintf(stderr, "fabtop: %s\n", err.msg);
        goto out;
    }
    cJSON_Delete(resp);
    resp = NULL;
    struct doctor_pmtu pr = {0};
    if (!o->no_probe && l->mtu > 0) {
        req = cJSON_CreateObject();
        cJSON_AddStringToObject(req, "type", "doctor.probe");
        cJSON_AddStringToObject(req, "from", l->local_addr);
        double port = 0;
        rc = channel_request(c, req, &resp, 5000, &err);
        if (rc == 0 && jsonutil_num(resp, "port", &port) && port > 0 && port < 65536)
            rc = doctor_pmtu_probe(to, (uint16_t)port, l->mtu < 65535 ? l->mtu : 65535, &pr, &err);
        if (rc < 0)
            fprintf(stderr, "fabtop doctor: no path MTU probe: %s\n", err.msg);
    }
    struct doctor_qp qp = {.port = (int)o->port,
                           .gid_index = (int)o->gid_index,
                           .path_mtu = (int)o->path_mtu,
                           .dscp = (int)o->dscp};
    if (o->device)
        snprintf(qp.dev, sizeof(qp.dev), "%s", o->device);
    if (o->gid_type)
        snprintf(qp.gid_type, sizeof(qp.gid_type), "%s", o->gid_type);
    struct doctor_finding f[33];
    int n = doctor_compare(l, p, &qp, &pr, f, 32);
    if (n > 32)
        n = 32;
    /* The walk: a real queue pair with those attributes, where both ends have RDMA ports. */
    const struct doctor_rdma_port *lx = o->device ? doctor_port(l, o->device, (int)o->port) : NULL;
    const struct doctor_rdma_port *px = o->device ? doctor_port(p, NULL, (int)o->port) : NULL;
    struct qp_walk_want ww = {.port = (int)o->port,
                              .gid_index = (int)o->gid_index,
                              .path_mtu = (int)o->path_mtu,
                              .dscp = (int)o->dscp,
                              .messages = 5,
                              .timeout = 14,
                              .retry_cnt = 3};
    if (o->device && !o->no_walk && lx && px) {
        snprintf(ww.dev, sizeof(ww.dev), "%s", o->device);
        if (lx->active_mtu > 0 && px->active_mtu > 0)
            ww.smaller_active_mtu =
                lx->active_mtu < px->active_mtu ? lx->active_mtu : px->active_mtu;
        walk = calloc(1, sizeof(*walk));
        if (walk && qp_walk_run(c, channel_peer_desc(c), &ww, walk, &err) < 0) {
            fprintf(stderr, "fabtop doctor: no queue-pair walk: %s\n", err.msg);
            free(walk);
            walk = NULL;
        }
        if (walk)
            n += qp_walk_finding(&ww, walk, &f[n]);
    } else if (o->device && !o->no_walk) {
        fprintf(stderr, "fabtop doctor: no queue-pair walk: %s has no RDMA port %ld\n",
                lx ? "the peer" : o->device, o->port);
    }
    int st = doctor_status(f, n);
    doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "format", "fabtop-doctor");
    cJSON_AddNumberToObject(doc, "version", 1);
    cJSON_AddStringToObject(doc, "peer", channel_peer_desc(c));
    cJSON_AddItemToObject(doc, "local", doctor_facts_json(l));
    cJSON_AddItemToObject(doc, "remote", doctor_facts_json(p));
    if (pr.valid) {
        cJSON *j = cJSON_AddObjectToObject(doc, "probe");
        cJSON_AddNumberToObject(j, "tried_bytes", pr.tried);
        cJSON_AddNumberToObject(j, "largest_ok_bytes", pr.largest_ok);
        jsonutil_add_num_or_null(j, "icmp_mtu_bytes", pr.icmp_mtu > 0, pr.icmp_mtu);
    }
    if (walk)
        cJSON_AddItemToObject(doc, "qp_walk", qp_walk_json(walk));
    cJSON_AddItemToObject(doc, "findings", findings_json(f, n));
    cJSON_AddStringToObject(doc, "status", st == 2 ? "errors" : st == 1 ? "warnings" : "clean");
    if (!o->json) {
        print_table(l, p, o, &pr);
        printf("\n");
        if (walk) {
            char text[2048];
            qp_walk_text(walk, text, sizeof(text));
            printf("%s\n", text);
        }
        for (int i = 0; i < n; i++)
            printf("%s: %s: %s\n", f[i].sev == DOCTOR_ERROR ? "error" : "warning", f[i].rule,
                   f[i].msg);
        int ne = 0;
        for (int i = 0; i < n; i++)
            ne += f[i].sev == DOCTOR_ERROR;
        printf("%d error(s), %d warning(s)\n", ne, n - ne);
    }
    status = st;
    int erc = o->json || o->output ? cli_emit_json(doc, o->json, o->output, "doctor") : 0;
    if (erc)
        status = erc;
out:
    free(walk);
    cJSON_Delete(doc);
    cJSON_Delete(resp);
    free(l);
    channel_close(c);
    return status;
}

int cli_doctor_main(int argc, char **argv)
{
    struct doctor_args o = {.port = 1, .gid_index = -1, .dscp = 26};
    int first, prc = cli_parse_args(&cli_doctor_command, argc, argv, &o, &first);
    if (prc >= 0)
        return prc;
    int rc = first < argc ? cli_usage_error("doctor", "unexpected argument '%s'", argv[first])
                          : doctor(&o);
    cli_args_free(&cli_doctor_command, &o);
    return rc;
}
