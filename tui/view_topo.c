/* view_topo: the topology view: the tree of packages, NUMA nodes, host bridges, PCIe
 * switches, GPUs, NICs and ports; a detail pane for the selected object (or the affinity
 * matrix, its heads frozen while its rows and columns scroll); the lint findings coloured by
 * severity, the selected one whole with its fix in the detail pane, Enter on one jumps to
 * its object. Long detail lines wrap. */
#include "tui/views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "topology/topo_fabric.h"
#include "text/fabric_text.h"
#include "text/topo_text.h"
#include "tui/fabric_draw.h"
#include "tui/ui_list.h"

enum item_kind {
    IT_PACKAGE,
    IT_NUMA,
    IT_HOSTBRIDGE,
    IT_SWITCH,
    IT_GPU,
    IT_NIC,
    IT_PORT,
    IT_NVSWITCH,
    IT_NOTE,
    /* the Fabric section (see "Fabric" below) */
    IT_FABRIC,
    IT_FNODE,
    IT_FROUTE,
    IT_FNEIGH,
};

struct item {
    enum item_kind kind;
    int depth;
    int ref; /* index in the model's array for the kind (pci for bridges/switches) */
    int pci; /* PCI index, -1 if none (for jumps from findings) */
    char text[200];
};

struct topo_state {
    int nitems, cap;
    struct item *items;
    struct ui_list tree;   /* tree selection and scroll */
    struct ui_list find;   /* findings selection and scroll */
    struct ui_list detail; /* detail scroll (top only) */
    bool matrix;           /* show the matrix instead of the detail */
    int left;              /* the matrix's first visible column (Left/Right) */
    int detail_rows;       /* rows of the detail pane's text at the last draw */
    int detail_h;          /* and the rows it had to show them */
    struct ui_search search;
};

static struct topo_state *st(struct app *a)
{
    return a->vstate[VIEW_TOPO];
}

static struct item *add(struct topo_state *s, enum item_kind k, int depth, int ref, int pci)
{
    if (s->nitems == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->items = xalloc_resize(s->items, (size_t)s->cap * sizeof(*s->items));
    }
    struct item *it = &s->items[s->nitems++];
    memset(it, 0, sizeof(*it));
    it->kind = k;
    it->depth = depth;
    it->ref = ref;
    it->pci = pci;
    return it;
}

static void port_line(const struct topo_model *m, int p, char *buf, size_t len)
{
    const struct topo_port *pt = &m->ports[p];
    snprintf(buf, len, "port %d %s %s%s%s", pt->num,
             pt->valid & TOPO_PORT_V_STATE ? topo_port_state_str(pt->state) : "n/a",
             pt->valid & TOPO_PORT_V_LL ? topo_link_layer_str(pt->link_layer) : "",
             pt->valid & TOPO_PORT_V_RATE ? " " : "", "");
    if (pt->valid & TOPO_PORT_V_RATE)
        snprintf(buf + strlen(buf), len - strlen(buf), "%g Gb/s", pt->rate_gbps);
    if (pt->netdev >= 0)
        snprintf(buf + strlen(buf), len - strlen(buf), " %s", m->netdevs[pt->netdev].name);
}

static void add_pci(struct topo_state *s, const struct topo_model *m, const char *keep, int pci,
                    int depth)
{
    const struct topo_pci *p = &m->pci[pci];
    char bdf[32];
    topo_bdf_str(&p->addr, bdf, sizeof(bdf));
    if (p->kind == TOPO_PCI_DEVICE) {
        int g = topo_model_gpu_of_pci(m, pci), n = topo_model_nic_of_pci(m, pci);
        if (g >= 0) {
            struct item *it = add(s, IT_GPU, depth, g, pci);
            snprintf(it->text, sizeof(it->text), "GPU%d %s %s", g, bdf,
                     m->gpus[g].model[0] ? m->gpus[g].model : m->gpus[g].vendor);
        } else if (n >= 0) {
            char name[64];
            topo_nic_name(m, n, name, sizeof(name));
            struct item *it = add(s, IT_NIC, depth, n, pci);
            snprintf(it->text, sizeof(it->text), "NIC %s %s", name, bdf);
            for (int k = 0; k < m->nics[n].nports; k++) {
                int pi = m->nics[n].first_port + k;
                struct item *pit = add(s, IT_PORT, depth + 1, pi, pci);
                port_line(m, pi, pit->text, sizeof(pit->text));
            }
        } else if (!strcmp(p->subtype, "NVSwitch")) {
            struct item *it = add(s, IT_NVSWITCH, depth, pci, pci);
            snprintf(it->text, sizeof(it->text), "NVSwitch %s", bdf);
        }
        return;
    }
    int child = depth;
    if (p->kind == TOPO_PCI_HOSTBRIDGE) {
        struct item *it = add(s, IT_HOSTBRIDGE, depth, pci, pci);
        snprintf(it->text, sizeof(it->text), "Host bridge %04x:[%02x-%02x]", p->addr.domain,
                 p->bus_first, p->bus_last);
        child++;
    } else if (p->role == TOPO_BRIDGE_SWITCH_UP) {
        struct item *it = add(s, IT_SWITCH, depth, pci, pci);
        snprintf(it->text, sizeof(it->text), "PCIe switch %s %04x:%04x", bdf, p->vendor_id,
                 p->device_id);
        child++;
    }
    for (int i = 0; i < m->npci; i++)
        if (m->pci[i].parent == pci && keep[i])
            add_pci(s, m, keep, i, child);
}

/* ---- Fabric: switches, CAs, routes and LLDP neighbours beyond the node's ports, when the
 * model has them (a snapshot saved by `fabtop topo --fabric -o FILE`, opened with --input).
 * The details come from text/fabric_text.c. ---- */

#define FABRIC_MAX_CAS 64 /* CAs listed in the tree; the detail of the header lists all */

static void add_fabric_items(struct topo_state *s, const struct topo_model *m)
{
    const struct topo_fabric *f = &m->fabric;
    if (!f->valid)
        return;
    struct item *it = add(s, IT_FABRIC, 0, -1, -1);
    int nsw = 0, nca = 0;
    for (int i = 0; i < f->nnodes; i++) {
        nsw += f->nodes[i].type == TOPO_FNODE_SWITCH;
        nca += f->nodes[i].type != TOPO_FNODE_SWITCH;
    }
    snprintf(it->text, sizeof(it->text), "Fabric: %d switch%s, %d CA%s, %d link%s, %d neighbour%s",
             nsw, nsw == 1 ? "" : "es", nca, nca == 1 ? "" : "s", f->nlinks,
             f->nlinks == 1 ? "" : "s", f->nneighbours, f->nneighbours == 1 ? "" : "s");
    int cas = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < f->nnodes; i++) {
            const struct topo_fnode *n = &f->nodes[i];
            if ((pass == 0) != (n->type == TOPO_FNODE_SWITCH))
                continue;
            if (pass == 1 && cas++ >= FABRIC_MAX_CAS)
                continue;
            char lbl[TOPO_TEXT];
            topo_fnode_label(f, i, lbl, sizeof(lbl));
            int linked = 0;
            for (int k = 0; k < n->nfports; k++)
                linked += f->ports[n->first_port + k].remote >= 0;
            it = add(s, IT_FNODE, 1, i, -1);
            snprintf(it->text, sizeof(it->text), "%s %s, %d of %d ports cabled",
                     n->type == TOPO_FNODE_SWITCH ? "switch" : "CA", lbl, linked, n->nports);
        }
    for (int i = 0; i < f->nroutes; i++) {
        const struct topo_froute *r = &f->routes[i];
        it = add(s, IT_FROUTE, 1, i, -1);
        snprintf(it->text, sizeof(it->text), "route %s -> %s: %s", r->src_spec, r->dst_spec,
                 topo_route_status_str(r->status));
    }
    for (int i = 0; i < f->nneighbours; i++) {
        const struct topo_neighbour *n = &f->neighbours[i];
        it = add(s, IT_FNEIGH, 1, i, -1);
        snprintf(it->text, sizeof(it->text), "LLDP %s: %s %s", n->ifname,
                 n->sysname[0] ? n->sysname : n->chassis_id, n->port_id);
    }
}

static void build_items(struct app *a)
{
    struct topo_state *s = st(a);
    const struct topo_model *m = a->topo;
    s->nitems = 0;
    char *keep = xalloc_zero((size_t)(m->npci ? m->npci : 1), 1);
    for (int i = 0; i < m->npci; i++) {
        bool interesting = topo_model_gpu_of_pci(m, i) >= 0 || topo_model_nic_of_pci(m, i) >= 0 ||
                           !strcmp(m->pci[i].subtype, "NVSwitch");
        for (int k = i; interesting && k >= 0; k = m->pci[k].parent)
            keep[k] = 1;
    }
    char *shown = xalloc_zero((size_t)(m->npci ? m->npci : 1), 1);
    for (int pk = 0; pk < m->npackages; pk++) {
        struct item *it = add(s, IT_PACKAGE, 0, pk, -1);
        char osn[16];
        snprintf(it->text, sizeof(it->text), "Package %s %s",
                 topo_os_index_str(m->packages[pk].os_index, osn), m->packages[pk].cpu_model);
        for (int n = 0; n < m->nnuma; n++) {
            const struct topo_numa *N = &m->numa[n];
            if (N->package != pk || N->kind == TOPO_NUMA_GPU_MEMORY)
                continue;
            char mem[32];
            topo_text_bytes(mem, sizeof(mem), N->mem_bytes);
            it = add(s, IT_NUMA, 1, n, -1);
            snprintf(it->text, sizeof(it->text), "NUMA %s  %s  cpus %s",
                     topo_os_index_str(N->os_index, osn), mem, N->cpuset[0] ? N->cpuset : "none");
            for (int i = 0; i < m->npci; i++)
                if (m->pci[i].parent < 0 && N->os_index >= 0 && m->pci[i].numa == N->os_index &&
                    keep[i]) {
                    add_pci(s, m, keep, i, 2);
                    shown[i] = 1;
                }
        }
        for (int i = 0; i < m->npci; i++)
            if (m->pci[i].parent < 0 && !shown[i] && m->pci[i].package == pk && keep[i]) {
                add_pci(s, m, keep, i, 1);
                shown[i] = 1;
            }
    }
    for (int i = 0; i < m->npci; i++)
        if (m->pci[i].parent < 0 && !shown[i] && keep[i])
            add_pci(s, m, keep, i, 0);
    for (int n = 0; n < m->nnics; n++) {
        if (m->nics[n].pci >= 0)
            continue;
        struct item *it = add(s, IT_NIC, 0, n, -1);
        snprintf(it->text, sizeof(it->text), "Software RDMA %s (%s)", m->nics[n].rdma_dev,
                 m->nics[n].driver);
        for (int k = 0; k < m->nics[n].nports; k++) {
            int pi = m->nics[n].first_port + k;
            struct item *pit = add(s, IT_PORT, 1, pi, -1);
            port_line(m, pi, pit->text, sizeof(pit->text));
        }
    }
    if (m->ngpus == 0) {
        struct item *it = add(s, IT_NOTE, 0, -1, -1);
        snprintf(it->text, sizeof(it->text), "(no GPUs found)");
    }
    int rdma = 0;
    for (int i = 0; i < m->nnics; i++)
        rdma += m->nics[i].rdma_dev[0] != 0;
    if (!rdma) {
        struct item *it = add(s, IT_NOTE, 0, -1, -1);
        snprintf(it->text, sizeof(it->text), "(no RDMA devices found)");
    }
    add_fabric_items(s, m);
    free(keep);
    free(shown);
}

static void topo_init(struct app *a)
{
    a->vstate[VIEW_TOPO] = xalloc_zero(1, sizeof(struct topo_state));
    build_items(a);
}

static void topo_fini(struct app *a)
{
    struct topo_state *s = st(a);
    free(s->items);
    free(s);
}

static enum theme_role item_role(const struct app *a, const struct item *it)
{
    switch (it->kind) {
    case IT_GPU:
        return ROLE_GPU;
    case IT_NIC:
        return ROLE_NIC;
    case IT_SWITCH:
    case IT_NVSWITCH:
        return ROLE_SWITCH;
    case IT_PORT: {
        const struct topo_port *p = &a->topo->ports[it->ref];
        if (!(p->valid & TOPO_PORT_V_STATE))
            return ROLE_NORMAL;
        return p->state == TOPO_PORT_ACTIVE ? ROLE_OK : ROLE_ERROR;
    }
    case IT_NOTE:
        return ROLE_DIM;
    case IT_FABRIC:
    case IT_FNODE:
        return ROLE_SWITCH;
    case IT_FROUTE:
        return a->topo->fabric.routes[it->ref].status == TOPO_ROUTE_OK ? ROLE_OK : ROLE_ERROR;
    default:
        return ROLE_NORMAL;
    }
}

static void tree_row(void *ctx, struct ui *u, int y, int x, int w, int i, bool sel)
{
    struct app *a = ctx;
    const struct item *it = &st(a)->items[i];
    char line[256];
    snprintf(line, sizeof(line), "%*s%s", it->depth * 2, "", it->text);
    ui_text_pad(u, y, x, w, sel ? ROLE_SELECTED : item_role(a, it), line);
}

static void draw_tree(struct app *a, struct ui *u, const struct rect *r, bool focus)
{
    struct topo_state *s = st(a);
    char title[96];
    snprintf(title, sizeof(title), "Topology: %d GPU%s, %d NIC function%s", a->topo->ngpus,
             a->topo->ngpus == 1 ? "" : "s", a->topo->nnics, a->topo->nnics == 1 ? "" : "s");
    ui_box(u, r, title, focus);
    struct rect in = ui_inner(r);
    ui_list_follow(&s->tree, in.h);
    ui_list_draw(u, &in, &s->tree, s->nitems, true, tree_row, a);
}

/* Lines of the detail pane for the selected item. */
static void detail_text(struct app *a, struct strbuf *sb)
{
    struct topo_state *s = st(a);
    const struct topo_model *m = a->topo;
    if (s->nitems == 0)
        return;
    const struct item *it = &s->items[s->tree.sel];
    char bdf[32] = "";
    if (it->pci >= 0)
        topo_bdf_str(&m->pci[it->pci].addr, bdf, sizeof(bdf));
    const struct topo_pci *p = it->pci >= 0 ? &m->pci[it->pci] : NULL;
    char osn[16];
    switch (it->kind) {
    case IT_PACKAGE:
        strbuf_printf(sb, "Package %s\n%s\nCPUs %s\n",
                      topo_os_index_str(m->packages[it->ref].os_index, osn),
                      m->packages[it->ref].cpu_model, m->packages[it->ref].cpuset);
        break;
    case IT_NUMA: {
        const struct topo_numa *n = &m->numa[it->ref];
        char mem[32];
        topo_text_bytes(mem, sizeof(mem), n->mem_bytes);
        strbuf_printf(sb, "NUMA node %s\nmemory %s\nCPUs %s\n", topo_os_index_str(n->os_index, osn),
                      mem, n->cpuset[0] ? n->cpuset : "none");
        break;
    }
    case IT_GPU: {
        const struct topo_gpu *g = &m->gpus[it->ref];
        bool vendor_in_model = g->vendor[0] && !strncmp(g->model, g->vendor, strlen(g->vendor));
        strbuf_printf(sb, "GPU%d  %s\n%s%s%s\nPCI %s (%04x:%04x)\n", it->ref, bdf,
                      vendor_in_model ? "" : g->vendor, vendor_in_model ? "" : " ", g->model, bdf,
                      p->vendor_id, p->device_id);
        if (g->valid & TOPO_GPU_V_MEM) {
            char mem[32];
            topo_text_bytes(mem, sizeof(mem), g->mem_bytes);
            strbuf_printf(sb, "memory %s\n", mem);
        } else {
            strbuf_add(sb, "memory n/a\n");
        }
        char cuda[16] = "n/a", nvml[16] = "n/a";
        if (g->valid & TOPO_GPU_V_CUDA)
            snprintf(cuda, sizeof(cuda), "%d", g->cuda_index);
        if (g->valid & TOPO_GPU_V_NVML)
            snprintf(nvml, sizeof(nvml), "%d", g->nvml_index);
        strbuf_printf(sb, "CUDA index %s, NVML index %s\n", cuda, nvml);
        if (g->osdevs[0])
            strbuf_printf(sb, "OS devices: %s\n", g->osdevs);
        strbuf_printf(sb, "found by %s\n", g->found_by);
        char numa[16] = "n/a";
        if (p->numa >= 0)
            snprintf(numa, sizeof(numa), "%d", p->numa);
        strbuf_printf(sb, "NUMA node %s, CPUs %s\n", numa, p->cpuset[0] ? p->cpuset : "n/a");
        if (m->ngpus >= 2 && !m->gpu_links_known)
            strbuf_add(sb, "NVLink: unknown (this topology carries no NVLink data)\n");
        const struct topo_nearest *ne = &a->aff.nearest[it->ref];
        if (ne->n) {
            char line[512];
            topo_nearest_str(m, ne, line, sizeof(line));
            strbuf_printf(sb, "nearest NIC: %s\n", line);
        }
        break;
    }
    case IT_NIC: {
        const struct topo_nic *n = &m->nics[it->ref];
        char name[64];
        topo_nic_name(m, it->ref, name, sizeof(name));
        strbuf_printf(sb, "NIC %s\n%s\n", name,
                      n->adapter >= 0 && n->adapter < m->nadapters ? m->adapters[n->adapter].model
                                                                   : "");
        if (p)
            strbuf_printf(sb, "PCI %s (%04x:%04x), NUMA %d, CPUs %s\n", bdf, p->vendor_id,
                          p->device_id, p->numa, p->cpuset);
        strbuf_printf(sb, "driver %s\nfirmware %s\nnode GUID %s\nboard %s\n",
                      n->driver[0] ? n->driver : "n/a", n->fw_ver[0] ? n->fw_ver : "n/a",
                      n->node_guid[0] ? n->node_guid : "n/a", n->board_id[0] ? n->board_id : "n/a");
        break;
    }
    case IT_PORT: {
        topo_text_port(sb, m, it->ref);
        const struct topo_port *pt = &m->ports[it->ref];
        for (int g = 0; g < pt->ngids; g++)
            strbuf_printf(sb, "  GID[%d] %s %s %s %s\n", pt->gids[g].index, pt->gids[g].gid,
                          pt->valid & TOPO_PORT_V_GIDTYPES ? topo_gid_type_str(pt->gids[g].type)
                                                           : "",
                          pt->gids[g].ndev, pt->gids[g].ip);
        break;
    }
    case IT_SWITCH:
    case IT_HOSTBRIDGE:
    case IT_NVSWITCH:
        strbuf_printf(sb, "%s\n", it->text);
        if (p && p->vendor_name[0])
            strbuf_printf(sb, "%s %s\n", p->vendor_name, p->device_name);
        if (p && (p->valid & TOPO_PCI_V_LINK_GBS))
            strbuf_printf(sb, "link %.1f GB/s per direction\n", p->link_gbs);
        if (p && p->cpuset[0])
            strbuf_printf(sb, "local CPUs %s\n", p->cpuset);
        break;
    case IT_NOTE:
        strbuf_printf(sb, "%s\n", it->text);
        for (int i = 0; i < m->nnotes; i++)
            strbuf_printf(sb, "- %s\n", m->notes[i]);
        break;
    case IT_FABRIC:
        fabric_text(sb, m);
        break;
    case IT_FNODE:
        fabric_text_node(sb, m, it->ref, "");
        break;
    case IT_FROUTE:
        fabric_text_route(sb, m, it->ref, "");
        break;
    case IT_FNEIGH:
        fabric_text_neighbour(sb, m, it->ref, "");
        break;
    }
    if (p && (p->valid & TOPO_PCI_V_CUR_WIDTH))
        strbuf_printf(sb, "PCIe x%d at %.1f GT/s (max x%d at %.1f GT/s)\n", p->cur_width,
                      p->cur_speed_gts, p->max_width, p->max_speed_gts);
}

/* Lines of text (a strbuf's, '\n' separated) wrapped to w columns: a line longer than w
 * breaks at a space, its continuations indented two more than the line itself. The rows go
 * into rows (at most max); returns how many the text needs. */
static int wrap_text(const char *text, int w, char (*rows)[512], int max)
{
    int n = 0;
    char line[1024];
    char(*parts)[512] = xalloc_zero(32, sizeof(*parts));
    for (const char *s = text; *s;) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        snprintf(line, sizeof(line), "%.*s", (int)len, s);
        s += len + (e ? 1 : 0);
        int ind = (int)strspn(line, " ");
        if (ui_width(line) <= w || w <= ind + 8) {
            if (n < max)
                snprintf(rows[n], sizeof(rows[n]), "%s", line);
            n++;
            continue;
        }
        int np = ui_wrap_lines(line + ind, w - ind - 2, parts, 32);
        for (int k = 0; k < np && k < 32; k++, n++)
            if (n < max)
                snprintf(rows[n], sizeof(rows[n]), "%*s%s", ind + (k ? 2 : 0), "", parts[k]);
    }
    free(parts);
    return n;
}

/* Wrapped text from row top on; the rows it has (for scrolling). */
static int draw_wrapped(struct ui *u, const struct rect *in, const char *text, int top)
{
    enum { MAXROWS = 400 };
    char(*rows)[512] = xalloc_zero(MAXROWS, sizeof(*rows));
    int n = wrap_text(text, in->w, rows, MAXROWS);
    for (int r = 0; r < in->h && top + r < n && top + r < MAXROWS; r++)
        ui_text(u, in->y + r, in->x, in->w, ROLE_NORMAL, rows[top + r]);
    free(rows);
    return n;
}

/* The affinity matrix's grid: its first line (the column heads) and the row labels (the
 * first frozen columns) stay while the cells scroll, by whole columns from column left on;
 * the legend after the first blank line is wrapped below. Vertical scroll (top) moves the
 * grid's rows and then the legend. *leftp is clamped to where the last columns fill the
 * pane; how many columns there are and how many fit go into ncols and nvis. */
static int draw_matrix(struct ui *u, const struct rect *in, const char *text, int top, int *leftp,
                       int *ncols, int *nvis)
{
    const char *blank = strstr(text, "\n\n");
    size_t glen = blank ? (size_t)(blank - text) : strlen(text);
    char *grid = strndup(text, glen);
    const char *legend = blank ? blank + 2 : "";
    /* Columns start where the head line's names do; the label column is what precedes
     * the first of them. */
    char *head = grid, *nl = strchr(grid, '\n');
    if (nl)
        *nl = '\0';
    int pos[64], nc = 0;
    /* A column starts where a head does and a cell of some row does too ("CPU Affinity"
     * is one head: no cell starts under "Affinity"). */
    for (int x = 1; head[x] && nc < 64; x++) {
        if (head[x] == ' ' || head[x - 1] != ' ')
            continue;
        bool cell = false;
        for (const char *ln = nl ? nl + 1 : ""; *ln && !cell;) {
            const char *e = strchr(ln, '\n');
            int L = e ? (int)(e - ln) : (int)strlen(ln);
            cell = x < L && ln[x] != ' ' && ln[x - 1] == ' ';
            ln += L + (e ? 1 : 0);
        }
        if (cell)
            pos[nc++] = x;
    }
    int label = nc ? pos[0] : 0;
    /* Not past the place where the last columns fill the pane. */
    int most = nc ? nc - 1 : 0;
    while (most > 0 && label + (int)strlen(head) - pos[most - 1] <= in->w)
        most--;
    int left = *leftp < 0 ? 0 : *leftp > most ? most : *leftp;
    *leftp = left;
    int x0 = nc ? pos[left] : 0;
    int vis = 0;
    for (int c = left; c < nc; c++) {
        int end = c + 1 < nc ? pos[c + 1] : (int)strlen(head);
        if (label + (end - x0) > in->w && vis > 0)
            break;
        vis++;
    }
    *ncols = nc;
    *nvis = vis;
    int endx = left + vis < nc ? pos[left + vis] : 100000;
    /* One row of the grid: its label, then the visible cells. */
    char buf[1024];
    int y = in->y, rows_total = 0;
    char *lines = nl ? nl + 1 : NULL;
    for (int r = -1;; r++) {
        const char *ln;
        char *next = NULL;
        if (r < 0)
            ln = head;
        else if (lines && *lines) {
            ln = lines;
            next = strchr(lines, '\n');
            if (next)
                *next = '\0';
        } else
            break;
        if (r >= 0)
            rows_total++;
        if ((r < 0 || r >= top) && y < in->y + in->h) {
            int L = (int)strlen(ln);
            int a = x0 < L ? x0 : L, b = endx < L ? endx : L;
            snprintf(buf, sizeof(buf), "%-*.*s%.*s", label, label, ln, b - a, ln + a);
            ui_text(u, y++, in->x, in->w, r < 0 ? ROLE_DIM : ROLE_NORMAL, buf);
        }
        if (r >= 0)
            lines = next ? next + 1 : NULL;
    }
    /* The legend, wrapped, after a blank row. */
    if (*legend) {
        struct rect lr = *in;
        int skip = top > rows_total ? top - rows_total : 0;
        lr.y = y + 1;
        lr.h = in->y + in->h - lr.y;
        if (lr.h > 0)
            rows_total += 1 + draw_wrapped(u, &lr, legend, skip);
        else
            rows_total += 1 + wrap_text(legend, in->w, NULL, 0);
    }
    free(grid);
    return rows_total;
}

/* The selected finding whole: what is wrong and the fix. */
static void finding_text(const struct app *a, int i, struct strbuf *sb)
{
    static const char *const sev[] = {"note", "warning", "error"};
    const struct topo_finding *f = &a->findings.v[i];
    strbuf_printf(sb, "%s: %s (%s)\n\n%s\n", f->object, sev[f->sev], f->rule, f->msg);
    if (f->remedy[0])
        strbuf_printf(sb, "\nfix: %s\n", f->remedy);
    strbuf_printf(sb, "\nEnter: go to %s in the tree", f->object);
}

/* Scrolled no further than the text's last rows fill the pane: true when top moved. */
static bool clamp_top(struct topo_state *s)
{
    int most = s->detail_rows - s->detail_h;
    most = most > 0 ? most : 0;
    if (s->detail.top <= most)
        return false;
    s->detail.top = most;
    return true;
}

static void draw_detail(struct app *a, struct ui *u, const struct rect *r, bool focus)
{
    struct topo_state *s = st(a);
    struct strbuf sb;
    strbuf_init(&sb);
    struct rect in = ui_inner(r);
    s->detail_h = in.h - (s->matrix ? 1 : 0); /* the matrix's head row stays */
    char title[160];
    bool finding = a->focus == 2 && s->find.sel < a->findings.n;
    if (s->matrix && !finding) {
        topo_text_matrix(&sb, a->topo, &a->aff);
        int nc = 0, nv = 0;
        /* Drawn first to know what fits; the title then says which columns show. */
        s->detail_rows = draw_matrix(u, &in, sb.s, s->detail.top, &s->left, &nc, &nv);
        if (clamp_top(s)) {
            ui_fill(u, &in, ROLE_NORMAL);
            draw_matrix(u, &in, sb.s, s->detail.top, &s->left, &nc, &nv);
        }
        if (nv < nc && nv == 1)
            snprintf(title, sizeof(title), "Matrix: column %d of %d", s->left + 1, nc);
        else if (nv < nc)
            snprintf(title, sizeof(title), "Matrix: columns %d-%d of %d", s->left + 1, s->left + nv,
                     nc);
        else
            snprintf(title, sizeof(title), "Affinity matrix (m: detail)");
    } else if (finding) {
        finding_text(a, s->find.sel, &sb);
        s->detail_rows = draw_wrapped(u, &in, sb.s, 0);
        snprintf(title, sizeof(title), "Finding %d of %d", s->find.sel + 1, a->findings.n);
    } else {
        /* The fabric section and its routes: the subnet drawn above the text, the route's
         * ports marked; or, for the LLDP neighbours, the systems this node's ports hear. */
        const struct item *it = s->tree.sel < s->nitems ? &s->items[s->tree.sel] : NULL;
        const struct topo_fabric *fab = &a->topo->fabric;
        bool ib =
            it && (it->kind == IT_FABRIC || it->kind == IT_FROUTE) && fab->valid && fab->nnodes > 0;
        bool lldp = it && fab->valid && fab->nneighbours > 0 &&
                    (it->kind == IT_FNEIGH || (it->kind == IT_FABRIC && fab->nnodes == 0));
        if ((ib || lldp) && s->detail.top == 0) {
            struct fabric_draw_graph g;
            if (ib)
                fabric_draw_from_ib(fab, it->kind == IT_FROUTE ? it->ref : -1, u->utf8, &g);
            else
                fabric_draw_from_lldp(fab, a->topo->host.hostname, &g);
            int used = fabric_draw_render(u, &in, &g);
            fabric_draw_free(&g);
            in.y += used + 1;
            in.h -= used + 1;
        }
        detail_text(a, &sb);
        s->detail_rows = draw_wrapped(u, &in, sb.s, s->detail.top);
        if (clamp_top(s)) {
            ui_fill(u, &in, ROLE_NORMAL);
            draw_wrapped(u, &in, sb.s, s->detail.top);
        }
        snprintf(title, sizeof(title), "Detail (m: matrix)");
    }
    /* The box last: its title over the rows drawn. */
    ui_box(u, r, title, focus);
    strbuf_free(&sb);
}

static void finding_row(void *ctx, struct ui *u, int y, int x, int w, int i, bool sel)
{
    static const enum theme_role sev_role[] = {ROLE_INFO, ROLE_WARN, ROLE_ERROR};
    static const char *const tag[] = {"INFO ", "WARN ", "ERROR"};
    const struct topo_finding *f = &((struct app *)ctx)->findings.v[i];
    char line[512];
    snprintf(line, sizeof(line), "%s %s: %s", tag[f->sev], f->object, f->msg);
    ui_text_pad(u, y, x, w, sel ? ROLE_SELECTED : sev_role[f->sev], line);
}

static void draw_findings(struct app *a, struct ui *u, const struct rect *r, bool focus)
{
    struct topo_state *s = st(a);
    const struct topo_findings *f = &a->findings;
    int counts[3] = {0};
    for (int i = 0; i < f->n; i++)
        counts[f->v[i].sev]++;
    char title[128];
    snprintf(title, sizeof(title), "Lint: %d error%s, %d warning%s, %d note%s (Enter: go to)",
             counts[2], counts[2] == 1 ? "" : "s", counts[1], counts[1] == 1 ? "" : "s", counts[0],
             counts[0] == 1 ? "" : "s");
    ui_box(u, r, title, focus);
    struct rect in = ui_inner(r);
    if (f->n == 0) {
        ui_text(u, in.y, in.x, in.w, ROLE_OK, "No findings.");
        return;
    }
    ui_list_follow(&s->find, in.h);
    ui_list_draw(u, &in, &s->find, f->n, focus, finding_row, a);
}

static void topo_draw(struct app *a, struct ui *u, const struct layout *l)
{
    struct topo_state *s = st(a);
    draw_tree(a, u, &l->pane[0], a->focus == 0);
    draw_detail(a, u, &l->pane[1], a->focus == 1);
    draw_findings(a, u, &l->pane[2], a->focus == 2);
    ui_search_draw(u, l->status.y - 1, &s->search);
}

/* Jump the tree to the object a finding is about. */
static bool jump_to_finding(struct app *a)
{
    struct topo_state *s = st(a);
    if (s->find.sel >= a->findings.n)
        return false;
    const struct topo_finding *x = &a->findings.v[s->find.sel];
    for (int i = 0; i < s->nitems; i++) {
        const struct item *it = &s->items[i];
        if ((x->port >= 0 && it->kind == IT_PORT && it->ref == x->port) ||
            (x->port < 0 && x->pci >= 0 && it->pci == x->pci && it->kind != IT_PORT)) {
            s->tree.sel = i;
            s->detail.top = 0;
            a->focus = 0;
            return true;
        }
    }
    app_message(a, ROLE_WARN, "%s is not shown in the tree", x->object);
    return false;
}

static const char *item_text(void *ctx, int i, char *buf, size_t len)
{
    (void)buf;
    (void)len;
    return ((struct topo_state *)ctx)->items[i].text;
}

static void search_next(struct app *a)
{
    struct topo_state *s = st(a);
    if (!s->search.text[0])
        return;
    /* From the item after the selection, around the end, the selection itself last. */
    int i = s->nitems ? ui_list_find(s->nitems, (s->tree.sel + 1) % s->nitems, true, s->search.text,
                                     item_text, s)
                      : -1;
    if (i >= 0) {
        s->tree.sel = i;
        s->detail.top = 0;
        return;
    }
    app_message(a, ROLE_WARN, "'%s' not found", s->search.text);
}

static int topo_key(struct app *a, int ch)
{
    struct topo_state *s = st(a);
    if (s->search.active) {
        /* Esc closes the line and keeps what was typed (n searches for it). */
        if (ui_search_key(&s->search, ch) == UI_SEARCH_ENTER)
            search_next(a);
        return REACT_REDRAW;
    }
    /* Up/Down, PgUp/PgDn, Home/End (and hjkl, g/G) move the selection; the rest here. */
    int d = ui_nav_step(ch);
    if (!d) {
        switch (ch) {
        case 'm':
            s->matrix = !s->matrix;
            s->detail.top = 0;
            s->left = 0;
            return REACT_REDRAW;
        case '/':
            ui_search_start(&s->search);
            return REACT_REDRAW;
        case 'n':
            search_next(a);
            return REACT_REDRAW;
        case '\n':
        case KEY_ENTER:
            if (a->focus == 2 && jump_to_finding(a))
                return REACT_REDRAW;
            return REACT_HANDLED;
        case 'l':
        case KEY_RIGHT:
            /* In the matrix Left/Right scroll its columns (Tab leaves the pane). */
            if (a->focus == 1 && s->matrix) {
                s->left++; /* clamped where the last columns fill the pane */
                return REACT_REDRAW;
            }
            a->focus = (a->focus + 1) % 3;
            return REACT_REDRAW;
        case 'h':
        case KEY_LEFT:
            if (a->focus == 1 && s->matrix) {
                if (s->left > 0)
                    s->left--;
                return REACT_REDRAW;
            }
            a->focus = (a->focus + 2) % 3;
            return REACT_REDRAW;
        default:
            return REACT_NONE;
        }
    }
    if (a->focus == 2)
        return ui_list_move(&s->find, a->findings.n, d) ? REACT_REDRAW : REACT_HANDLED;
    if (a->focus == 1) {
        /* Scroll the text (clamped at its last rows when drawn). */
        ui_list_scroll(&s->detail, d);
        return REACT_REDRAW;
    }
    if (!ui_list_move(&s->tree, s->nitems, d))
        return REACT_HANDLED;
    s->detail.top = 0;
    return REACT_REDRAW;
}

/* A click on a tree row or a finding selects it (the detail follows). */
static int topo_click(struct app *a, int pane, int row, int col)
{
    (void)col;
    struct topo_state *s = st(a);
    if (pane == 0 && s->tree.top + row < s->nitems) {
        s->tree.sel = s->tree.top + row;
        s->detail.top = 0;
    } else if (pane == 2 && s->find.top + row < a->findings.n) {
        s->find.sel = s->find.top + row;
    }
    return REACT_REDRAW;
}

static const char *topo_keys(const struct app *a)
{
    /* Most used first: at 80 columns the key line drops whole keys from the end. */
    if (a->focus == 1 && st((struct app *)a)->matrix)
        return "Up/Down rows  Left/Right columns  Tab pane  m detail  / search  F2 setup";
    return "Up/Down move  Tab pane  Enter go to finding  m matrix  / search  n next  F2 setup";
}

const struct view_ops view_topo = {
    .name = "Topology",
    .fkey = 3,
    .layout = LAYOUT_TOPO,
    .init = topo_init,
    .fini = topo_fini,
    .draw = topo_draw,
    .key = topo_key,
    .keys = topo_keys,
    .click = topo_click,
};
