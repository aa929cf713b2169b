/* path_text: the path lines of the run summary (path_text.h). */
#include "text/path_text.h"

#include <string.h>

static const char *class_words(const char *c)
{
    if (!c)
        return "n/a";
    if (!strcmp(c, "host"))
        return "same host";
    if (!strcmp(c, "leaf"))
        return "same leaf (one L2 segment, no router)";
    if (!strcmp(c, "site"))
        return "same site (routed, near)";
    if (!strcmp(c, "wan"))
        return "wide area";
    return "unknown";
}

static void num(struct strbuf *sb, const struct results_num *f, const char *fmt)
{
    double v;
    if (results_num_get(f, &v))
        strbuf_printf(sb, fmt, v);
    else
        strbuf_add(sb, "n/a");
}

static void end_line(struct strbuf *sb, const char *who, const struct results_path_end *e)
{
    strbuf_printf(sb, "    %-6s qdisc peak ", who);
    if (e->st != RESULTS_SET) {
        strbuf_add(sb, "n/a (not sampled)\n");
        return;
    }
    num(sb, &e->peak_packets, "%.0f packets");
    strbuf_add(sb, ", ");
    num(sb, &e->peak_bytes, "%.0f bytes");
    strbuf_add(sb, ", drops ");
    num(sb, &e->drops, "%.0f");
    const char *q = results_str_get(&e->netdev);
    strbuf_printf(sb, " (%s)\n", q ? q : "no queueing qdisc");
}

void path_text(struct strbuf *sb, const struct results_path *p)
{
    if (p->st != RESULTS_SET)
        return;
    const char *c = results_str_get(&p->cls), *ev = results_str_get(&p->evidence);
    strbuf_printf(sb, "\nPath: %s: %s\n", class_words(c), ev ? ev : "n/a");
    const char *sl = results_str_get(&p->site_local), *sp = results_str_get(&p->site_peer);
    if (sl || sp)
        strbuf_printf(sb, "    sites: here %s, peer %s\n", sl ? sl : "n/a", sp ? sp : "n/a");
    const char *from = results_str_get(&p->site_from);
    if (from)
        strbuf_printf(sb, "      from the sites file %s\n", from);
    bool any = false;
    for (int i = 0; i < p->nrtt; i++)
        any |= p->rtt[i].st == RESULTS_SET;
    if (any) {
        strbuf_add(sb,
                   "    transport RTT (TCP srtt, us)   min     median        max  retrans segs\n");
        for (int i = 0; i < p->nrtt; i++) {
            const struct results_path_rtt *t = &p->rtt[i];
            strbuf_printf(sb, "    %-26s", t->phase);
            if (t->st != RESULTS_SET) {
                strbuf_add(sb, "     n/a\n");
                continue;
            }
            double a, b, m, r;
            if (results_num_get(&t->min_us, &a) && results_num_get(&t->median_us, &m) &&
                results_num_get(&t->max_us, &b))
                strbuf_printf(sb, " %8.0f %10.0f %10.0f", a, m, b);
            if (results_num_get(&t->retrans_segments, &r))
                strbuf_printf(sb, " %13.0f", r);
            strbuf_add(sb, "\n");
        }
    }
    if (p->local.st == RESULTS_SET || p->peer.st == RESULTS_SET) {
        end_line(sb, "here", &p->local);
        end_line(sb, "peer", &p->peer);
    }
    const char *v = results_str_get(&p->verdict);
    if (v)
        strbuf_printf(sb, "    where the queue was: %s\n", v);
    for (int i = 0; i < p->nwarnings; i++)
        strbuf_printf(sb, "    WARNING: %s\n", p->warnings[i]);
}
