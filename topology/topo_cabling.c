/* topo_cabling: cabling plans (ibnetdiscover topology format or a small JSON list) and
 * their comparison with the discovered fabric: missing nodes, ports without a link,
 * ports cabled elsewhere, and cables between planned nodes that the plan lacks. */
#include "topology/topo_cabling.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "topology/topo_fabric.h"

static int add_node(struct topo_cabling *p)
{
    p->nodes = xalloc_resize(p->nodes, (size_t)(p->nnodes + 1) * sizeof(*p->nodes));
    memset(&p->nodes[p->nnodes], 0, sizeof(p->nodes[0]));
    return p->nnodes++;
}

static void add_link(struct topo_cabling *p, int a, int pa, int b, int pb, int line)
{
    /* Each cable appears from both ends in an ibnetdiscover file: keep it once. */
    for (int i = 0; i < p->nlinks; i++) {
        const struct topo_cabling_link *l = &p->links[i];
        if ((l->a == a && l->pa == pa && l->b == b && l->pb == pb) ||
            (l->a == b && l->pa == pb && l->b == a && l->pb == pa))
            return;
    }
    p->links = xalloc_resize(p->links, (size_t)(p->nlinks + 1) * sizeof(*p->links));
    p->links[p->nlinks++] = (struct topo_cabling_link){a, pa, b, pb, line};
}

/* Node ids ibnetdiscover writes carry the GUID: "S-0002c90300a1b2c3", "H-...". */
static bool guid_from_id(const char *id, uint64_t *g)
{
    if (strlen(id) != 18 || id[1] != '-' || !strchr("SHR", id[0]))
        return false;
    for (int i = 2; i < 18; i++)
        if (!isxdigit((unsigned char)id[i]))
            return false;
    *g = strtoull(id + 2, NULL, 16);
    return true;
}

static int find_id(const struct topo_cabling *p, const char *id)
{
    for (int i = 0; i < p->nnodes; i++)
        if (!strcmp(p->nodes[i].id, id))
            return i;
    return -1;
}

/* Copy the text between the first pair of double quotes after s; return what follows
 * the closing quote, or NULL. */
static const char *quoted(const char *s, char *buf, size_t len)
{
    const char *a = strchr(s, '"');
    const char *b = a ? strchr(a + 1, '"') : NULL;
    if (!b)
        return NULL;
    snprintf(buf, len, "%.*s", (int)(b - a - 1), a + 1);
    return b + 1;
}

struct pending {
    char remote[TOPO_TEXT];
    int from, port, rport, line;
};

/* ibnetdiscover topology format (infiniband-diags ibnetdiscover(8); ibsim reads the
 * same): node headers `Switch|Ca|Hca|Rt NPORTS "ID" [# "DESC" ...]`, each followed by
 * port lines `[N](guid) "REMOTE-ID"[M](guid) ...`; `switchguid=`/`caguid=` lines give the
 * next node's GUID. Everything else (vendid=, devid=, comments) is skipped. */
static int parse_ibnd(const char *text, const char *what, struct topo_cabling *p,
                      struct ft_err *err)
{
    struct pending *pend = NULL;
    int npend = 0, cur = -1, lineno = 0;
    uint64_t next_guid = 0;
    bool have_next = false;
    const char *s = text;
    int rc = 0;
    while (*s && rc == 0) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char line[1024];
        snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), s);
        s = e ? e + 1 : s + n;
        lineno++;
        char *l = line;
        while (isspace((unsigned char)*l))
            l++;
        if (!*l || *l == '#')
            continue;
        if (!strncmp(l, "switchguid=", 11) || !strncmp(l, "caguid=", 7) ||
            !strncmp(l, "rtguid=", 7)) {
            next_guid = strtoull(strchr(l, '=') + 1, NULL, 16);
            have_next = true;
            continue;
        }
        if (!strncmp(l, "Switch", 6) || !strncmp(l, "Hca", 3) || !strncmp(l, "Ca", 2) ||
            !strncmp(l, "Rt", 2)) {
            char id[TOPO_TEXT];
            const char *rest = quoted(l, id, sizeof(id));
            if (!rest) {
                rc = ft_err_set(err, -EBADMSG, "%s:%d: a node line needs a quoted id: %s", what,
                                lineno, l);
                break;
            }
            if (find_id(p, id) >= 0) {
                rc =
                    ft_err_set(err, -EBADMSG, "%s:%d: node \"%s\" appears twice", what, lineno, id);
                break;
            }
            cur = add_node(p);
            struct topo_cabling_node *nd = &p->nodes[cur];
            snprintf(nd->id, sizeof(nd->id), "%s", id);
            nd->line = lineno;
            const char *hash = strchr(rest, '#');
            if (hash) {
                char desc[TOPO_TEXT];
                if (quoted(hash, desc, sizeof(desc)))
                    snprintf(nd->desc, sizeof(nd->desc), "%s", desc);
            }
            if (have_next) {
                nd->guid = next_guid;
                nd->has_guid = true;
            } else {
                nd->has_guid = guid_from_id(id, &nd->guid);
            }
            have_next = false;
            continue;
        }
        if (*l == '[') {
            if (cur < 0) {
                rc = ft_err_set(err, -EBADMSG, "%s:%d: a port line before any node line", what,
                                lineno);
                break;
            }
            int port = atoi(l + 1);
            char remote[TOPO_TEXT];
            const char *rest = quoted(l, remote, sizeof(remote));
            if (port < 0 || port > 255 || !rest) {
                rc = ft_err_set(err, -EBADMSG,
                                "%s:%d: a port line is [PORT] \"REMOTE-ID\"[PORT]: %s", what,
                                lineno, l);
                break;
            }
            int rport = 1; /* ibsim's default when the remote port is left out */
            if (*rest == '[')
                rport = atoi(rest + 1);
            pend = xalloc_resize(pend, (size_t)(npend + 1) * sizeof(*pend));
            struct pending *pp = &pend[npend++];
            snprintf(pp->remote, sizeof(pp->remote), "%s", remote);
            pp->from = cur;
            pp->port = port;
            pp->rport = rport;
            pp->line = lineno;
            continue;
        }
        /* vendid=, devid=, sysimgguid=, ibsim's "do"/"include"/width= lines: not cabling. */
    }
    for (int i = 0; i < npend && rc == 0; i++) {
        int b = find_id(p, pend[i].remote);
        if (b < 0) {
            /* A remote that has no node record of its own: plan it by its id alone. */
            b = add_node(p);
            snprintf(p->nodes[b].id, sizeof(p->nodes[b].id), "%s", pend[i].remote);
            p->nodes[b].has_guid = guid_from_id(pend[i].remote, &p->nodes[b].guid);
            p->nodes[b].line = pend[i].line;
        }
        add_link(p, pend[i].from, pend[i].port, b, pend[i].rport, pend[i].line);
    }
    free(pend);
    if (rc == 0 && p->nlinks == 0)
        rc = ft_err_set(err, -EBADMSG,
                        "%s: no cabling found (expected ibnetdiscover lines like "
                        "'Switch 36 \"S-...\"' and '[1] \"H-...\"[1]', or a JSON list)",
                        what);
    p->whole = true;
    return rc;
}

static int json_node(struct topo_cabling *p, const char *name)
{
    for (int i = 0; i < p->nnodes; i++)
        if (!strcmp(p->nodes[i].id, name))
            return i;
    int k = add_node(p);
    struct topo_cabling_node *nd = &p->nodes[k];
    snprintf(nd->id, sizeof(nd->id), "%s", name);
    if (!strncmp(name, "0x", 2) && strlen(name) > 2) {
        char *end;
        uint64_t g = strtoull(name, &end, 16);
        if (!*end) {
            nd->guid = g;
            nd->has_guid = true;
        }
    }
    return k;
}

/* [{"node": "node01 HCA-1", "port": 1, "switch": "leaf-1", "switch_port": 1}, ...], or the
 * same list under "links". Names are node descriptions or "0x..." GUIDs. */
static int parse_json(const char *text, const char *what, struct topo_cabling *p,
                      struct ft_err *err)
{
    cJSON *doc;
    int rc = jsonutil_parse(text, strlen(text), what, &doc, err);
    if (rc < 0)
        return rc;
    const cJSON *a = cJSON_IsArray(doc) ? doc : cJSON_GetObjectItemCaseSensitive(doc, "links");
    if (!cJSON_IsArray(a)) {
        cJSON_Delete(doc);
        return ft_err_set(err, -EBADMSG,
                          "%s: a cabling plan in JSON is a list of {\"node\", \"port\", "
                          "\"switch\", \"switch_port\"} (or that list under \"links\")",
                          what);
    }
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, a)
    {
        const char *node = jsonutil_str(o, "node"), *sw = jsonutil_str(o, "switch");
        double port = 1, sport = 0;
        bool has_sport = jsonutil_num(o, "switch_port", &sport);
        jsonutil_num(o, "port", &port);
        if (!node || !sw || !has_sport || port < 0 || port > 255 || sport < 0 || sport > 255) {
            rc = ft_err_set(err, -EBADMSG,
                            "%s: entry %d needs \"node\" and \"switch\" (descriptions or GUIDs) "
                            "and \"switch_port\" (\"port\" defaults to 1)",
                            what, i);
            break;
        }
        int na = json_node(p, node), nb = json_node(p, sw);
        add_link(p, na, (int)port, nb, (int)sport, i + 1);
        i++;
    }
    cJSON_Delete(doc);
    if (rc == 0 && p->nlinks == 0)
        rc = ft_err_set(err, -EBADMSG, "%s: the cabling plan lists no links", what);
    p->whole = false;
    return rc;
}

int topo_cabling_parse(const char *text, const char *what, struct topo_cabling **out,
                       struct ft_err *err)
{
    *out = NULL;
    struct topo_cabling *p = xalloc_zero(1, sizeof(*p));
    snprintf(p->path, sizeof(p->path), "%s", what);
    const char *t = text;
    while (isspace((unsigned char)*t))
        t++;
    /* JSON starts with '{' or a list of objects; an ibnetdiscover port line is "[1] ...". */
    const char *u = t + 1;
    while (*t == '[' && isspace((unsigned char)*u))
        u++;
    bool json = *t == '{' || (*t == '[' && (*u == '{' || *u == ']' || !*u));
    int rc = json ? parse_json(text, what, p, err) : parse_ibnd(text, what, p, err);
    if (rc < 0) {
        topo_cabling_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int topo_cabling_load(const char *path, struct topo_cabling **out, struct ft_err *err)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = jsonutil_slurp(path, &text, &len, 16u << 20, err);
    if (rc < 0)
        return rc;
    rc = topo_cabling_parse(text, path, out, err);
    free(text);
    return rc;
}

void topo_cabling_free(struct topo_cabling *p)
{
    if (!p)
        return;
    free(p->nodes);
    free(p->links);
    free(p);
}

/* ---- comparison ---- */

/* The fabric node a plan node means: by GUID, else by description (or id), which must be
 * unique. -1 none, -2 ambiguous. */
static int match_node(const struct topo_fabric *f, const struct topo_cabling_node *n)
{
    if (n->has_guid)
        return topo_fabric_find_node(f, n->guid);
    const char *want = n->desc[0] ? n->desc : n->id;
    int found = -1;
    for (int i = 0; i < f->nnodes; i++)
        if (!strcmp(f->nodes[i].desc, want)) {
            if (found >= 0)
                return -2;
            found = i;
        }
    return found;
}

static void plan_name(const struct topo_cabling_node *n, char *buf, size_t len)
{
    snprintf(buf, len, "%s", n->desc[0] ? n->desc : n->id);
}

struct diffs {
    struct topo_cabling_diff *v;
    int n;
};

static struct topo_cabling_diff *push(struct diffs *d, enum topo_cabling_kind k, int fport)
{
    d->v = xalloc_resize(d->v, (size_t)(d->n + 1) * sizeof(*d->v));
    struct topo_cabling_diff *x = &d->v[d->n++];
    memset(x, 0, sizeof(*x));
    x->kind = k;
    x->fport = fport;
    return x;
}

/* "has no link", or "is cabled to Z port 3". */
static void port_fate(const struct topo_fabric *f, int fp, char *buf, size_t len)
{
    if (fp < 0) {
        snprintf(buf, len, "was not discovered");
        return;
    }
    int r = f->ports[fp].remote;
    if (r < 0) {
        const struct topo_fport *p = &f->ports[fp];
        snprintf(buf, len, "has no link (%s/%s)",
                 p->valid & TOPO_FPORT_V_STATE ? topo_port_state_str(p->state) : "state n/a",
                 p->valid & TOPO_FPORT_V_STATE ? topo_phys_state_str(p->phys_state) : "n/a");
        return;
    }
    char lbl[TOPO_TEXT + 16];
    topo_fport_label(f, r, lbl, sizeof(lbl));
    snprintf(buf, len, "is cabled to %s", lbl);
}

int topo_cabling_compare(const struct topo_fabric *f, const struct topo_cabling *p,
                         struct topo_cabling_diff **out)
{
    struct diffs d = {0};
    int *match = xalloc_zero((size_t)(p->nnodes + 1), sizeof(int));
    char *planned = xalloc_zero((size_t)(f->nports + 1), 1);
    char a_name[TOPO_TEXT], b_name[TOPO_TEXT], fate[TOPO_TEXT * 2];
    for (int i = 0; i < p->nnodes; i++) {
        match[i] = match_node(f, &p->nodes[i]);
        plan_name(&p->nodes[i], a_name, sizeof(a_name));
        if (match[i] == -1) {
            struct topo_cabling_diff *x = push(&d, TOPO_CABLING_NO_NODE, -1);
            if (p->nodes[i].has_guid)
                snprintf(x->text, sizeof(x->text),
                         "planned node %s (GUID 0x%016" PRIx64
                         ", plan line %d) is not in the discovered fabric",
                         a_name, p->nodes[i].guid, p->nodes[i].line);
            else
                snprintf(x->text, sizeof(x->text),
                         "planned node \"%s\" (plan line %d) is not in the discovered fabric",
                         a_name, p->nodes[i].line);
        } else if (match[i] == -2) {
            struct topo_cabling_diff *x = push(&d, TOPO_CABLING_AMBIGUOUS, -1);
            snprintf(x->text, sizeof(x->text),
                     "planned node \"%s\" (plan line %d) matches several nodes of that "
                     "description; give its GUID in the plan",
                     a_name, p->nodes[i].line);
        }
    }
    for (int i = 0; i < p->nlinks; i++) {
        const struct topo_cabling_link *l = &p->links[i];
        int na = match[l->a], nb = match[l->b];
        if (na < 0 || nb < 0)
            continue;
        int fa = topo_fabric_port_of(f, na, l->pa), fb = topo_fabric_port_of(f, nb, l->pb);
        if (fa >= 0)
            planned[fa] = 1;
        if (fb >= 0)
            planned[fb] = 1;
        if (fa >= 0 && fb >= 0 && f->ports[fa].remote == fb)
            continue;
        plan_name(&p->nodes[l->a], a_name, sizeof(a_name));
        plan_name(&p->nodes[l->b], b_name, sizeof(b_name));
        bool a_linked = fa >= 0 && f->ports[fa].remote >= 0;
        bool b_linked = fb >= 0 && f->ports[fb].remote >= 0;
        char fa_txt[TOPO_TEXT], fb_txt[TOPO_TEXT];
        port_fate(f, fa, fa_txt, sizeof(fa_txt));
        port_fate(f, fb, fb_txt, sizeof(fb_txt));
        struct topo_cabling_diff *x =
            push(&d, a_linked || b_linked ? TOPO_CABLING_MISCABLED : TOPO_CABLING_NO_LINK,
                 fa >= 0 ? fa : fb);
        snprintf(fate, sizeof(fate), "%s port %d %s; %s port %d %s", a_name, l->pa, fa_txt, b_name,
                 l->pb, fb_txt);
        snprintf(x->text, sizeof(x->text), "plan line %d wants %s port %d <-> %s port %d, but %s",
                 l->line, a_name, l->pa, b_name, l->pb, fate);
    }
    /* Cables between planned nodes on ports the plan does not mention. */
    char *is_planned_node = xalloc_zero((size_t)(f->nnodes + 1), 1);
    for (int i = 0; i < p->nnodes; i++)
        if (match[i] >= 0)
            is_planned_node[match[i]] = 1;
    for (int i = 0; i < f->nlinks; i++) {
        int a = f->links[i].a, b = f->links[i].b;
        int na = f->ports[a].node, nb = f->ports[b].node;
        if (!is_planned_node[na] || !is_planned_node[nb] || planned[a] || planned[b])
            continue;
        if (!p->whole)
            continue;
        char la[TOPO_TEXT + 16], lb[TOPO_TEXT + 16];
        topo_fport_label(f, a, la, sizeof(la));
        topo_fport_label(f, b, lb, sizeof(lb));
        struct topo_cabling_diff *x = push(&d, TOPO_CABLING_UNPLANNED, a);
        snprintf(x->text, sizeof(x->text), "%s <-> %s is cabled, but the plan does not list it", la,
                 lb);
    }
    free(is_planned_node);
    free(match);
    free(planned);
    *out = d.v;
    return d.n;
}
