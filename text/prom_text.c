/* prom_text: the Prometheus text exposition format for counters and results.
 *
 * Format: https://prometheus.io/docs/instrumenting/exposition_formats/ (text format 0.0.4:
 * "# HELP name text" with \\ and \n escaped; "# TYPE name counter|gauge|summary"; samples
 * "name{label="value",...} value", label values with \\, \" and \n escaped; all lines of a
 * family together). Naming: https://prometheus.io/docs/practices/naming/ (base units: seconds,
 * bytes, ratios; _total on counters; the unit before _total; snake_case). promtool check
 * metrics lints the rest (tests/prom/). */
#include "text/prom_text.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/xalloc.h"
#include "engine/counters/counters.h"
#include "engine/results/results.h"
#include "engine/results/results_model.h"
#include "engine/results/results_sweep.h"

/* ---- the builder ---- */

struct prom_sample {
    char *name;   /* the sample's name: family plus suffix */
    char *labels; /* "{a=\"b\",...}" or "" */
    double value;
};

struct prom_family {
    char *name;
    char *help;
    enum prom_type type;
    int n, cap;
    struct prom_sample *s;
};

struct prom_text {
    int n, cap;
    struct prom_family *f;
    int nsamples;
};

struct prom_text *prom_text_new(void)
{
    return xalloc_zero(1, sizeof(struct prom_text));
}

void prom_text_free(struct prom_text *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n; i++) {
        struct prom_family *f = &p->f[i];
        for (int k = 0; k < f->n; k++) {
            free(f->s[k].name);
            free(f->s[k].labels);
        }
        free(f->s);
        free(f->name);
        free(f->help);
    }
    free(p->f);
    free(p);
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* for metric names; labels: no ':' and no leading "__". */
static bool valid_name(const char *s, bool label)
{
    if (!s || !*s || isdigit((unsigned char)*s))
        return false;
    if (label && s[0] == '_' && s[1] == '_')
        return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_' || (!label && *s == ':')))
            return false;
    return true;
}

void prom_text_escape_label(struct strbuf *out, const char *value)
{
    for (const char *c = value ? value : ""; *c; c++) {
        if (*c == '\\')
            strbuf_add(out, "\\\\");
        else if (*c == '"')
            strbuf_add(out, "\\\"");
        else if (*c == '\n')
            strbuf_add(out, "\\n");
        else
            strbuf_addn(out, c, 1);
    }
}

void prom_text_escape_help(struct strbuf *out, const char *text)
{
    for (const char *c = text ? text : ""; *c; c++) {
        if (*c == '\\')
            strbuf_add(out, "\\\\");
        else if (*c == '\n')
            strbuf_add(out, "\\n");
        else
            strbuf_addn(out, c, 1);
    }
}

void prom_text_value(struct strbuf *out, double v)
{
    if (isnan(v)) {
        strbuf_add(out, "NaN");
    } else if (isinf(v)) {
        strbuf_add(out, v > 0 ? "+Inf" : "-Inf");
    } else if (v == floor(v) && fabs(v) < 1e18) {
        strbuf_printf(out, "%.0f", v);
    } else {
        /* The shortest form that reads back exactly, at most 15 significant digits: a
         * double holds 15 decimal digits faithfully, and what is measured has fewer; the
         * last binary digit of a unit conversion (7.1835 us / 10^6) is noise to drop. */
        char buf[40];
        for (int prec = 6; prec <= 15; prec++) {
            snprintf(buf, sizeof(buf), "%.*g", prec, v);
            if (strtod(buf, NULL) == v)
                break;
        }
        strbuf_add(out, buf);
    }
}

int prom_text_add(struct prom_text *p, const char *family, const char *sample_suffix,
                  enum prom_type type, const char *help, const struct prom_label *labels,
                  int nlabels, double value)
{
    if (!valid_name(family, false))
        return -EINVAL;
    for (int i = 0; i < nlabels; i++) {
        if (!valid_name(labels[i].name, true))
            return -EINVAL;
        for (int k = 0; k < i; k++)
            if (!strcmp(labels[k].name, labels[i].name))
                return -EINVAL;
    }
    struct prom_family *f = NULL;
    for (int i = 0; i < p->n && !f; i++)
        if (!strcmp(p->f[i].name, family))
            f = &p->f[i];
    if (f && f->type != type)
        return -EINVAL;
    struct strbuf name, lab;
    strbuf_init(&name);
    strbuf_init(&lab);
    strbuf_printf(&name, "%s%s", family, sample_suffix ? sample_suffix : "");
    for (int i = 0; i < nlabels; i++) {
        strbuf_printf(&lab, "%s%s=\"", i ? "," : "{", labels[i].name);
        prom_text_escape_label(&lab, labels[i].value);
        strbuf_add(&lab, "\"");
    }
    if (nlabels)
        strbuf_add(&lab, "}");
    if (f) {
        for (int k = 0; k < f->n; k++)
            if (!strcmp(f->s[k].name, name.s) && !strcmp(f->s[k].labels, lab.s)) {
                strbuf_free(&name);
                strbuf_free(&lab);
                return -EEXIST;
            }
    } else {
        if (p->n == p->cap) {
            p->cap = p->cap ? 2 * p->cap : 32;
            p->f = xalloc_resize(p->f, (size_t)p->cap * sizeof(*p->f));
        }
        f = &p->f[p->n++];
        memset(f, 0, sizeof(*f));
        f->name = xalloc_strdup(family);
        f->help = xalloc_strdup(help ? help : "");
        f->type = type;
    }
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 8;
        f->s = xalloc_resize(f->s, (size_t)f->cap * sizeof(*f->s));
    }
    f->s[f->n].name = strbuf_steal(&name);
    f->s[f->n].labels = strbuf_steal(&lab);
    strbuf_free(&name); /* steal leaves an empty buffer behind */
    strbuf_free(&lab);
    f->s[f->n].value = value;
    f->n++;
    p->nsamples++;
    return 0;
}

int prom_text_count(const struct prom_text *p)
{
    return p->nsamples;
}

void prom_text_render(const struct prom_text *p, struct strbuf *out)
{
    static const char *const types[] = {"counter", "gauge", "summary"};
    for (int i = 0; i < p->n; i++) {
        const struct prom_family *f = &p->f[i];
        strbuf_printf(out, "# HELP %s ", f->name);
        prom_text_escape_help(out, f->help);
        strbuf_printf(out, "\n# TYPE %s %s\n", f->name, types[f->type]);
        for (int k = 0; k < f->n; k++) {
            strbuf_printf(out, "%s%s ", f->s[k].name, f->s[k].labels);
            prom_text_value(out, f->s[k].value);
            strbuf_add(out, "\n");
        }
    }
}

/* ---- names and units ---- */

double prom_text_convert(double v, double factor)
{
    /* Divide by 10^k rather than multiply by 10^-k, which is not exact in binary: 7.045 us
     * is then 7.045e-06 s, not 7.0449999999999995e-06. */
    return factor < 1 && factor > 0 ? v / round(1 / factor) : v * factor;
}

void prom_text_snake(const char *in, char *out, size_t len)
{
    size_t o = 0;
    if (!len)
        return;
    size_t n = strlen(in);
    for (size_t i = 0; i < n && o + 2 < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (isupper(c)) {
            /* A word starts at an upper-case letter after a lower-case letter or digit, or at
             * the last capital of a run followed by a lower-case letter ("TCPOFOQueue"). */
            unsigned char prev = i ? (unsigned char)in[i - 1] : 0;
            unsigned char next = i + 1 < n ? (unsigned char)in[i + 1] : 0;
            bool start = i && (islower(prev) || isdigit(prev) || (isupper(prev) && islower(next)));
            if (start && o && out[o - 1] != '_')
                out[o++] = '_';
            out[o++] = (char)tolower(c);
        } else if (isalnum(c)) {
            out[o++] = (char)c;
        } else if (o && out[o - 1] != '_') {
            out[o++] = '_';
        }
    }
    while (o && out[o - 1] == '_')
        o--;
    out[o] = '\0';
}

bool prom_text_unit(const char *unit, double *factor, const char **suffix)
{
    static const struct {
        const char *unit;
        double factor;
        const char *suffix;
    } units[] = {
        {"bytes", 1, "bytes"},   {"us", 1e-6, "seconds"}, {"ms", 1e-3, "seconds"},
        {"ns", 1e-9, "seconds"}, {"s", 1, "seconds"},     {"seconds", 1, "seconds"},
        {"%", 0.01, "ratio"},
    };
    *factor = 1;
    *suffix = NULL;
    for (size_t i = 0; unit && i < sizeof(units) / sizeof(units[0]); i++)
        if (!strcmp(unit, units[i].unit)) {
            *factor = units[i].factor;
            *suffix = units[i].suffix;
            return true;
        }
    return false;
}

/* node_exporter's infiniband collector (collector/infiniband_linux.go, through procfs's
 * sysfs/class_infiniband.go) reads these files of counters/ and counters_ext/ and exports
 * each as node_infiniband_* (port_xmit_data as node_infiniband_port_data_transmitted_bytes_total,
 * port_xmit_wait as node_infiniband_port_transmit_wait_total, ...). */
static const char *const ne_ib[] = {
    "excessive_buffer_overrun_errors",
    "link_downed",
    "link_error_recovery",
    "local_link_integrity_errors",
    "multicast_rcv_packets",
    "multicast_xmit_packets",
    "port_rcv_constraint_errors",
    "port_rcv_data",
    "port_rcv_discards",
    "port_rcv_errors",
    "port_rcv_packets",
    "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors",
    "port_xmit_constraint_errors",
    "port_xmit_data",
    "port_xmit_discards",
    "port_xmit_packets",
    "port_xmit_wait",
    "symbol_error",
    "unicast_rcv_packets",
    "unicast_xmit_packets",
    "VL15_dropped",
    /* counters_ext/ (kernels before 4.5): node_infiniband_legacy_* */
    "port_multicast_rcv_packets",
    "port_multicast_xmit_packets",
    "port_rcv_data_64",
    "port_rcv_packets_64",
    "port_unicast_rcv_packets",
    "port_unicast_xmit_packets",
    "port_xmit_data_64",
    "port_xmit_packets_64",
};

/* node_exporter's netstat collector: the fields of /proc/net/snmp and netstat its default
 * --collector.netstat.fields selects ("PROTO_FIELD"; '*' at the end: any field so starting;
 * proto "*": any line). TCPOFOQueue and TCPRcvQDrop joined the default in later releases. */
static const struct {
    const char *proto, *field;
} ne_snmp[] = {
    {"*", "InErrors"},         {"*", "InErrs"},
    {"Ip", "Forwarding"},      {"Ip6", "InOctets"},
    {"Ip6", "OutOctets"},      {"IpExt", "InOctets"},
    {"IpExt", "OutOctets"},    {"Icmp", "InMsgs"},
    {"Icmp", "OutMsgs"},       {"Icmp6", "InMsgs"},
    {"Icmp6", "OutMsgs"},      {"TcpExt", "Listen*"},
    {"TcpExt", "Syncookies*"}, {"TcpExt", "TCPSynRetrans"},
    {"TcpExt", "TCPTimeouts"}, {"TcpExt", "TCPOFOQueue"},
    {"TcpExt", "TCPRcvQDrop"}, {"Tcp", "ActiveOpens"},
    {"Tcp", "InSegs"},         {"Tcp", "OutSegs"},
    {"Tcp", "OutRsts"},        {"Tcp", "PassiveOpens"},
    {"Tcp", "RetransSegs"},    {"Tcp", "CurrEstab"},
    {"Udp", "InDatagrams"},    {"Udp", "OutDatagrams"},
    {"Udp", "NoPorts"},        {"Udp", "RcvbufErrors"},
    {"Udp", "SndbufErrors"},   {"Udp6", "InDatagrams"},
    {"Udp6", "OutDatagrams"},  {"Udp6", "NoPorts"},
    {"Udp6", "RcvbufErrors"},  {"Udp6", "SndbufErrors"},
};

bool prom_text_node_exporter_has(enum counters_source src, const char *object, const char *name)
{
    switch (src) {
    case COUNTERS_SRC_IB:
        for (size_t i = 0; i < sizeof(ne_ib) / sizeof(ne_ib[0]); i++)
            if (!strcmp(ne_ib[i], name))
                return true;
        return false;
    case COUNTERS_SRC_NETDEV:
        /* The netdev collector (netlink, on by default) exports every rtnl_link_stats64
         * field as node_network_*_total: all of /sys/class/net/IF/statistics. */
        return true;
    case COUNTERS_SRC_SNMP:
        for (size_t i = 0; i < sizeof(ne_snmp) / sizeof(ne_snmp[0]); i++) {
            if (strcmp(ne_snmp[i].proto, "*") && strcmp(ne_snmp[i].proto, object))
                continue;
            const char *f = ne_snmp[i].field;
            size_t fl = strlen(f);
            if (f[fl - 1] == '*' ? !strncmp(f, name, fl - 1) : !strcmp(f, name))
                return true;
        }
        return false;
    default:
        return false;
    }
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

/* Append a label whose value is copied into out->buf. */
static void add_label(struct prom_counter_name *out, size_t *used, const char *name,
                      const char *value, size_t vlen)
{
    if (out->nlabels >= 6 || *used + vlen + 1 > sizeof(out->buf))
        return;
    for (int i = 0; i < out->nlabels; i++)
        if (!strcmp(out->labels[i].name, name))
            return;
    char *dst = out->buf + *used;
    memcpy(dst, value, vlen);
    dst[vlen] = '\0';
    *used += vlen + 1;
    out->labels[out->nlabels].name = name;
    out->labels[out->nlabels].value = dst;
    out->nlabels++;
}

static bool has_label(const struct prom_counter_name *out, const char *name)
{
    for (int i = 0; i < out->nlabels; i++)
        if (!strcmp(out->labels[i].name, name))
            return true;
    return false;
}

/* name's numbers that index a priority or a queue become labels: "rx_prio3_pause" ->
 * "rx_prio_pause" {priority="3"}; "rx3_ecn_mark" -> "rx_queue_ecn_mark" {queue="3"};
 * "rx_queue_0_xdp_packets" -> "rx_queue_xdp_packets" {queue="0"}. The rest is kept. */
static void split_numbers(const char *name, struct prom_counter_name *out, size_t *used, char *base,
                          size_t blen)
{
    char tmp[96];
    snprintf(tmp, sizeof(tmp), "%s", name);
    struct strbuf b, pat;
    strbuf_init(&b);
    strbuf_init(&pat);
    char *save = NULL;
    const char *prev = NULL;
    for (char *t = strtok_r(tmp, "_", &save); t; t = strtok_r(NULL, "_", &save)) {
        const char *sep = b.len ? "_" : "";
        if (!strncmp(t, "prio", 4) && all_digits(t + 4) && !has_label(out, "priority")) {
            add_label(out, used, "priority", t + 4, strlen(t + 4));
            strbuf_printf(&b, "%sprio", sep);
            strbuf_printf(&pat, "%sprio#", sep);
        } else if ((!strncmp(t, "rx", 2) || !strncmp(t, "tx", 2)) && all_digits(t + 2) &&
                   !has_label(out, "queue")) {
            add_label(out, used, "queue", t + 2, strlen(t + 2));
            strbuf_printf(&b, "%s%.2s_queue", sep, t);
            strbuf_printf(&pat, "%s%.2s#", sep, t);
        } else if (prev && !strcmp(prev, "queue") && all_digits(t) && !has_label(out, "queue")) {
            add_label(out, used, "queue", t, strlen(t));
            strbuf_add(&pat, "_#");
        } else {
            strbuf_printf(&b, "%s%s", sep, t);
            strbuf_printf(&pat, "%s%s", sep, t);
        }
        prev = t;
    }
    snprintf(base, blen, "%s", b.s);
    snprintf(out->pattern, sizeof(out->pattern), "%s", pat.s);
    strbuf_free(&b);
    strbuf_free(&pat);
}

/* promtool's linter takes a name token that spells a unit's abbreviation ("h", "ms", "b")
 * for one ("metric names should not contain abbreviated units"): such a token is joined to
 * the next ("mp_join_ack_h_mac_failure" -> "mp_join_ack_hmac_failure"). */
static void join_abbreviations(char *name)
{
    static const char *const abbr[] = {"s",  "ms", "us", "ns", "sec", "b", "kb",
                                       "mb", "gb", "tb", "pb", "m",   "h", "d"};
    char *t = name;
    while (*t) {
        char *end = strchr(t, '_');
        size_t len = end ? (size_t)(end - t) : strlen(t);
        bool is = false;
        for (size_t i = 0; i < sizeof(abbr) / sizeof(abbr[0]) && !is; i++)
            is = strlen(abbr[i]) == len && !strncmp(abbr[i], t, len);
        if (is && end && end[1]) {
            memmove(end, end + 1, strlen(end + 1) + 1);
            continue; /* the joined token is looked at again */
        }
        t = end ? end + 1 : t + len;
    }
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix) && (a == b || s[a - b - 1] == '_');
}

bool prom_text_counter_name(const struct counters_value *v, struct prom_counter_name *out)
{
    memset(out, 0, sizeof(*out));
    size_t used = 0;
    const char *family;
    char obj[48];
    snprintf(obj, sizeof(obj), "%s", v->object);
    const char *name = v->name;
    switch (v->source) {
    case COUNTERS_SRC_IB:
    case COUNTERS_SRC_HW:
    case COUNTERS_SRC_QP: {
        /* "mlx5_0/1": the device and the port */
        char *slash = strrchr(obj, '/');
        if (slash) {
            add_label(out, &used, "device", obj, (size_t)(slash - obj));
            add_label(out, &used, "port", slash + 1, strlen(slash + 1));
        } else {
            add_label(out, &used, "device", obj, strlen(obj));
        }
        family = v->source == COUNTERS_SRC_IB   ? "fabtop_port"
                 : v->source == COUNTERS_SRC_HW ? "fabtop_rdma"
                                                : "fabtop_qp";
        /* port_xmit_wait -> fabtop_port_xmit_wait_total; but counters_ext/'s
         * port_unicast_rcv_packets keeps its prefix: unicast_rcv_packets is a counter of
         * counters/ (and may differ from it). */
        struct counters_info ci;
        if (v->source == COUNTERS_SRC_IB && !strncmp(name, "port_", 5) &&
            !counters_info_get(COUNTERS_SRC_IB, NULL, name + 5, &ci))
            name += 5;
        break;
    }
    case COUNTERS_SRC_NETDEV:
    case COUNTERS_SRC_ETHTOOL:
        add_label(out, &used, "device", obj, strlen(obj));
        family = v->source == COUNTERS_SRC_NETDEV ? "fabtop_netdev" : "fabtop_ethtool";
        break;
    case COUNTERS_SRC_QDISC: {
        /* "eth0 qdisc 1: htb" */
        char dev[24], handle[16], kind[16];
        if (sscanf(obj, "%23s qdisc %15s %15s", dev, handle, kind) == 3) {
            add_label(out, &used, "device", dev, strlen(dev));
            add_label(out, &used, "handle", handle, strlen(handle));
            add_label(out, &used, "kind", kind, strlen(kind));
        } else {
            add_label(out, &used, "qdisc", obj, strlen(obj));
        }
        family = "fabtop_qdisc";
        break;
    }
    case COUNTERS_SRC_SNMP:
        family = "fabtop_snmp";
        break;
    default:
        return false;
    }
    char base[96], snake[128];
    split_numbers(name, out, &used, base, sizeof(base));
    prom_text_snake(base, snake, sizeof(snake));
    if (v->source == COUNTERS_SRC_SNMP) {
        char proto[48];
        prom_text_snake(obj, proto, sizeof(proto)); /* "TcpExt" -> "tcp_ext" */
        snprintf(out->family, sizeof(out->family), "%s_%s_%s", family, proto, snake);
    } else {
        snprintf(out->family, sizeof(out->family), "%s_%s", family, snake);
    }
    join_abbreviations(out->family);
    const char *suffix;
    prom_text_unit(v->unit, &out->factor, &suffix);
    size_t l = strlen(out->family);
    if (suffix && !ends_with(out->family, suffix))
        snprintf(out->family + l, sizeof(out->family) - l, "_%s", suffix);
    l = strlen(out->family);
    if (v->kind == COUNTERS_COUNTER && !ends_with(out->family, "total"))
        snprintf(out->family + l, sizeof(out->family) - l, "_total");
    return valid_name(out->family, false);
}

/* The family's HELP: what it counts, where it is read, and how it was converted. */
static void counter_help(const struct counters_value *v, const struct prom_counter_name *cn,
                         char *buf, size_t len)
{
    const char *meaning = counters_meaning(v->name);
    const char *where;
    switch (v->source) {
    case COUNTERS_SRC_IB:
        where = "/sys/class/infiniband/DEV/ports/N/counters";
        break;
    case COUNTERS_SRC_HW:
        where = "/sys/class/infiniband/DEV/ports/N/hw_counters";
        break;
    case COUNTERS_SRC_NETDEV:
        where = "/sys/class/net/IF/statistics";
        break;
    case COUNTERS_SRC_ETHTOOL:
        where = "ethtool -S";
        break;
    case COUNTERS_SRC_QDISC:
        where = "qdisc statistics (rtnetlink)";
        break;
    case COUNTERS_SRC_SNMP:
        where = "/proc/net/snmp or netstat";
        break;
    default:
        where = counters_source_str(v->source);
        break;
    }
    const char *conv = "";
    if (v->source == COUNTERS_SRC_IB && !strcmp(v->unit, "bytes"))
        conv = "; 4-byte words x4";
    else if (cn->factor != 1)
        conv = !strcmp(v->unit, "%") ? "; percent / 100" : "; converted to seconds";
    snprintf(buf, len, "%s%s(%s %s%s%s)", meaning ? meaning : "", meaning ? " " : "", where,
             cn->pattern, conv, v->known ? "" : "; not in fabtop's table: semantics guessed");
}

void prom_text_counters(struct prom_text *p, const struct counters_value *v, int n,
                        const struct prom_counters_opts *o)
{
    for (int i = 0; i < n; i++) {
        const struct counters_value *c = &v[i];
        if (!(c->valid & COUNTERS_V_VALUE) || c->setting || (!c->known && !o->all))
            continue;
        struct prom_counter_name cn;
        if (!prom_text_counter_name(c, &cn))
            continue;
        if (!o->overlap && prom_text_node_exporter_has(c->source, c->object, c->name))
            continue;
        char help[512];
        counter_help(c, &cn, help, sizeof(help));
        prom_text_add(p, cn.family, "", c->kind == COUNTERS_GAUGE ? PROM_GAUGE : PROM_COUNTER, help,
                      cn.labels, cn.nlabels, c->value * cn.factor);
    }
    /* Saturation: a gauge of its own, so the counter's series stays one series. */
    for (int i = 0; i < n; i++) {
        const struct counters_value *c = &v[i];
        if (c->behaviour != COUNTERS_SATURATES || !(c->valid & COUNTERS_V_VALUE) ||
            (c->source != COUNTERS_SRC_IB && c->source != COUNTERS_SRC_HW))
            continue;
        struct prom_counter_name cn;
        if (!prom_text_counter_name(c, &cn))
            continue;
        struct prom_label l[4];
        int nl = 0;
        for (int k = 0; k < cn.nlabels && nl < 3; k++)
            l[nl++] = cn.labels[k];
        l[nl++] = (struct prom_label){"counter", c->name};
        prom_text_add(p, "fabtop_port_saturated", "", PROM_GAUGE,
                      "1 when the port counter is stuck at its maximum (a saturating IB "
                      "PortCounter): its true count is unknown and it no longer grows until "
                      "it is reset; 0 otherwise",
                      l, nl, c->saturated ? 1 : 0);
    }
}

/* ---- results ---- */

bool prom_text_iso_time(const char *iso, double *out)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    int n = 0;
    if (!iso || sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                       &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
        return false;
    double frac = 0;
    const char *rest = iso + n;
    if (*rest == '.') {
        char *end;
        frac = strtod(rest, &end);
        rest = end;
    }
    if (strcmp(rest, "Z"))
        return false;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    *out = (double)timegm(&tm) + frac;
    return true;
}

/* The latency's unit to seconds. */
static bool latency_factor(const struct results_latency *l, double *f)
{
    const char *u = results_str_get(&l->unit);
    const char *suffix;
    if (!u)
        u = "us"; /* the documents' default */
    return prom_text_unit(u, f, &suffix) && suffix && !strcmp(suffix, "seconds");
}

static void latency_summary(struct prom_text *p, const char *family, const char *help,
                            const struct results_latency *l, struct prom_label *lab, int nl)
{
    double f;
    if (!latency_factor(l, &f))
        return;
    const struct {
        const char *q;
        const struct results_num *v;
    } qs[] = {{"0", &l->min},      {"0.5", &l->p50},      {"0.9", &l->p90}, {"0.99", &l->p99},
              {"0.999", &l->p999}, {"0.9999", &l->p9999}, {"1", &l->max}};
    double count = 0, mean = 0, x;
    bool have_count = results_num_get(&l->count, &count);
    if (have_count && count == 0)
        return;
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
        if (!results_num_get(qs[i].v, &x))
            continue;
        lab[nl] = (struct prom_label){"quantile", qs[i].q};
        prom_text_add(p, family, "", PROM_SUMMARY, help, lab, nl + 1, prom_text_convert(x, f));
    }
    if (have_count && results_num_get(&l->mean, &mean)) {
        prom_text_add(p, family, "_sum", PROM_SUMMARY, help, lab, nl,
                      prom_text_convert(mean * count, f));
        prom_text_add(p, family, "_count", PROM_SUMMARY, help, lab, nl, count);
    }
}

/* The source named as counters_source_str() names it. */
static bool source_from_str(const char *s, enum counters_source *out)
{
    for (int i = 0; s && i < COUNTERS_SRC_COUNT; i++)
        if (!strcmp(counters_source_str((enum counters_source)i), s)) {
            *out = (enum counters_source)i;
            return true;
        }
    return false;
}

/* A phase's counter deltas (counters_set_report_json with deltas: the port-wide counters of
 * the ports and netdevs the test used, or a flow's own queue pairs' RDMA counter): each
 * counter's growth over the phase, a gauge's peak, in base units, as gauges of the run. */
static void phase_counters(struct prom_text *p, const cJSON *doc, const char *phase,
                           const char *flow)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "counters");
    const cJSON *e;
    const cJSON *qdev = cJSON_GetObjectItemCaseSensitive(doc, "device");
    const cJSON *qport = cJSON_GetObjectItemCaseSensitive(doc, "port");
    cJSON_ArrayForEach(e, list)
    {
        struct counters_value v;
        memset(&v, 0, sizeof(v));
        const char *src = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "source"));
        const char *obj = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "object"));
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "kind"));
        const char *beh = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "behaviour"));
        v.unit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "unit"));
        if (!source_from_str(src, &v.source) || !obj || !name || !kind || !v.unit)
            continue;
        v.kind = !strcmp(kind, "gauge") ? COUNTERS_GAUGE : COUNTERS_COUNTER;
        v.known = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "known"));
        v.saturated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "saturated"));
        if (v.source == COUNTERS_SRC_QP && cJSON_IsString(qdev) && cJSON_IsNumber(qport))
            snprintf(v.object, sizeof(v.object), "%s/%d", qdev->valuestring, qport->valueint);
        else
            snprintf(v.object, sizeof(v.object), "%s", obj);
        snprintf(v.name, sizeof(v.name), "%s", name);
        struct prom_counter_name cn;
        if (!prom_text_counter_name(&v, &cn) || strncmp(cn.family, "fabtop_", 7))
            continue;
        struct prom_label l[8] = {{"phase", phase}};
        int nl = 1;
        if (flow)
            l[nl++] = (struct prom_label){"flow", flow};
        for (int k = 0; k < cn.nlabels && nl < 8; k++)
            l[nl++] = cn.labels[k];
        const char *scope = v.source == COUNTERS_SRC_QP
                                ? "the test's own queue pairs (an RDMA counter bound to them)"
                                : "port-wide: everyone's traffic on the port or netdev";
        if (beh && !strcmp(beh, "saturates")) {
            struct prom_label sl[9];
            memcpy(sl, l, sizeof(l[0]) * (size_t)nl);
            sl[nl] = (struct prom_label){"counter", name};
            prom_text_add(p, "fabtop_run_phase_saturated", "", PROM_GAUGE,
                          "1 when the counter was stuck at its maximum in the phase: its growth "
                          "is unknown",
                          sl, nl + 1, v.saturated ? 1 : 0);
        }
        const cJSON *x =
            cJSON_GetObjectItemCaseSensitive(e, v.kind == COUNTERS_GAUGE ? "peak" : "delta");
        if (!cJSON_IsNumber(x))
            continue; /* n/a, or saturated: no figure */
        /* fabtop_rdma_out_of_sequence_total -> fabtop_run_phase_rdma_out_of_sequence;
         * fabtop_qdisc_backlog_bytes -> fabtop_run_phase_peak_qdisc_backlog_bytes */
        char core[160], family[200], help[400];
        snprintf(core, sizeof(core), "%s", cn.family + 7);
        size_t cl = strlen(core);
        if (cl > 6 && !strcmp(core + cl - 6, "_total"))
            core[cl - 6] = '\0';
        snprintf(family, sizeof(family), "fabtop_run_phase_%s%s",
                 v.kind == COUNTERS_GAUGE ? "peak_" : "", core);
        snprintf(help, sizeof(help), "%s of %s %s over the phase (%s)",
                 v.kind == COUNTERS_GAUGE ? "The highest level" : "The growth",
                 counters_source_str(v.source), cn.pattern, scope);
        prom_text_add(p, family, "", PROM_GAUGE, help, l, nl,
                      prom_text_convert(x->valuedouble, cn.factor));
    }
}

void prom_text_run(struct prom_text *p, const struct results_run *r)
{
    double t;
    if (prom_text_iso_time(results_str_get(&r->started_at), &t))
        prom_text_add(p, "fabtop_run_start_timestamp_seconds", "", PROM_GAUGE,
                      "When the run started (seconds since the Unix epoch)", NULL, 0, t);
    if (results_num_get(&r->duration_s, &t))
        prom_text_add(p, "fabtop_run_duration_seconds", "", PROM_GAUGE,
                      "How long the run took, wall clock", NULL, 0, t);
    if (r->interrupted.st == RESULTS_SET)
        prom_text_add(p, "fabtop_run_interrupted", "", PROM_GAUGE,
                      "1 when the run was interrupted before its end", NULL, 0,
                      r->interrupted.v ? 1 : 0);
    for (int ph = 0; ph < r->nphases; ph++) {
        const struct results_phase *phase = &r->phases[ph];
        const char *pname = results_str_get(&phase->name);
        if (!pname)
            pname = "";
        if (results_num_get(&phase->duration_s, &t)) {
            struct prom_label l[1] = {{"phase", pname}};
            prom_text_add(p, "fabtop_run_phase_duration_seconds", "", PROM_GAUGE,
                          "How long the phase measured", l, 1, t);
        }
        if (phase->counters)
            phase_counters(p, phase->counters, pname, NULL);
        for (int fi = 0; fi < phase->nflows; fi++) {
            const struct results_flow *fl = &phase->flows[fi];
            const char *fname = results_str_get(&fl->name);
            if (fl->qp_counters)
                phase_counters(p, fl->qp_counters, pname, fname ? fname : "");
            const char *tr = results_str_get(&fl->transport);
            const char *status = results_str_get(&fl->status);
            struct prom_label fl_l[3] = {
                {"flow", fname ? fname : ""}, {"phase", pname}, {"transport", tr ? tr : ""}};
            if (status)
                prom_text_add(p, "fabtop_run_flow_failed", "", PROM_GAUGE,
                              "1 when the flow failed in the phase (its status is not ok)", fl_l, 3,
                              strcmp(status, "ok") ? 1 : 0);
            for (int pi = 0; pi < fl->npoints; pi++) {
                const struct results_point *pt = &fl->points[pi];
                char size[32] = "";
                double sz;
                if (results_num_get(&pt->size_bytes, &sz))
                    snprintf(size, sizeof(size), "%.0f", sz);
                struct prom_label l[6] = {{"flow", fname ? fname : ""},
                                          {"phase", pname},
                                          {"transport", tr ? tr : ""},
                                          {"size_bytes", size}};
                int nl = 4;
                double gbps, ops;
                bool sim;
                if (results_point_goodput(fl, pt, &gbps, &sim))
                    prom_text_add(p, "fabtop_run_goodput_bytes_per_second", "", PROM_GAUGE,
                                  "Payload delivered per second over the phase (one direction; a "
                                  "simulated flow's per simulated second)",
                                  l, nl, gbps * 1e9 / 8);
                if (results_num_get(&pt->ops_per_s, &ops))
                    prom_text_add(p, "fabtop_run_operations_per_second", "", PROM_GAUGE,
                                  "Operations completed per second over the phase", l, nl, ops);
                if (pt->latency_st == RESULTS_SET) {
                    const char *kind = results_str_get(&pt->latency.kind);
                    if (!kind)
                        kind = results_str_get(&fl->latency_kind);
                    l[nl] = (struct prom_label){"latency_kind", kind ? kind : ""};
                    latency_summary(p, "fabtop_run_latency_seconds",
                                    "Latency of the flow's operations over the phase, of the kind "
                                    "latency_kind names (half round trip, round trip, per "
                                    "operation); quantile 0 is the minimum, 1 the maximum "
                                    "(nearest rank)",
                                    &pt->latency, l, nl + 1);
                }
            }
        }
    }
}

void prom_text_sweep(struct prom_text *p, const struct results_sweep *s)
{
    double t;
    if (prom_text_iso_time(results_str_get(&s->started_at), &t))
        prom_text_add(p, "fabtop_sweep_start_timestamp_seconds", "", PROM_GAUGE,
                      "When the sweep started (seconds since the Unix epoch)", NULL, 0, t);
    if (results_num_get(&s->duration_s, &t))
        prom_text_add(p, "fabtop_sweep_duration_seconds", "", PROM_GAUGE,
                      "How long the sweep took, wall clock", NULL, 0, t);
    for (int i = 0; i < s->npairs; i++) {
        const struct results_sweep_pair *pr = &s->pairs[i];
        if (pr->a < 0 || pr->a >= s->nranks || pr->b < 0 || pr->b >= s->nranks)
            continue;
        const struct results_sweep_rank *ra = &s->ranks[pr->a], *rb = &s->ranks[pr->b];
        char arank[16], brank[16], rail[16];
        snprintf(arank, sizeof(arank), "%d", ra->rank);
        snprintf(brank, sizeof(brank), "%d", rb->rank);
        snprintf(rail, sizeof(rail), "%d", pr->rail);
        const char *tr = results_sweep_transport(&pr->transport);
        struct prom_label l[7] = {{"src", ra->host ? ra->host : ""},
                                  {"src_rank", arank},
                                  {"dst", rb->host ? rb->host : ""},
                                  {"dst_rank", brank},
                                  {"rail", rail},
                                  {"transport", tr}};
        double bw;
        if (results_num_get(&pr->bw_ab_gbps, &bw))
            prom_text_add(p, "fabtop_sweep_pair_goodput_bytes_per_second", "", PROM_GAUGE,
                          "Payload per second from src to dst in the sweep's bandwidth test", l, 6,
                          bw * 1e9 / 8);
        struct prom_label r[6] = {{"src", rb->host ? rb->host : ""},
                                  {"src_rank", brank},
                                  {"dst", ra->host ? ra->host : ""},
                                  {"dst_rank", arank},
                                  {"rail", rail},
                                  {"transport", tr}};
        if (results_num_get(&pr->bw_ba_gbps, &bw))
            prom_text_add(p, "fabtop_sweep_pair_goodput_bytes_per_second", "", PROM_GAUGE,
                          "Payload per second from src to dst in the sweep's bandwidth test", r, 6,
                          bw * 1e9 / 8);
        if (pr->failed.st == RESULTS_SET)
            prom_text_add(p, "fabtop_sweep_pair_failed", "", PROM_GAUGE,
                          "1 when a test between src and dst failed", l, 6, pr->failed.v ? 1 : 0);
        /* The pair's latency: a summary without _sum and _count (the matrix keeps the
         * percentiles only), microseconds as seconds. */
        const char *kind = results_str_get(&pr->latency_kind);
        l[6] = (struct prom_label){"latency_kind", kind ? kind : ""};
        struct prom_label lq[8];
        memcpy(lq, l, sizeof(l));
        const struct {
            const char *q;
            const struct results_num *v;
        } qs[] = {{"0.5", &pr->lat_p50_us}, {"0.99", &pr->lat_p99_us}, {"0.999", &pr->lat_p999_us}};
        for (size_t q = 0; q < sizeof(qs) / sizeof(qs[0]); q++) {
            double x;
            if (!results_num_get(qs[q].v, &x))
                continue;
            lq[7] = (struct prom_label){"quantile", qs[q].q};
            prom_text_add(p, "fabtop_sweep_pair_latency_seconds", "", PROM_SUMMARY,
                          "Latency from src to dst in the sweep's latency test, of the kind "
                          "latency_kind names",
                          lq, 8, x / 1e6);
        }
    }
}
