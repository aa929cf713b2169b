/* topo_cabling: a cabling plan (which node port should be cabled to which switch port)
 * and its comparison with the discovered fabric, in the spirit of `ibnetdiscover --diff`.
 * Plans are either an ibnetdiscover-format topology file (also what ibsim reads) or a
 * small JSON list of {node, port, switch, switch_port}. Nodes are matched by GUID where
 * the plan gives one, else by node description. Pure data: no I/O beyond reading the
 * plan file, no curses. */
#ifndef TOPO_CABLING_H
#define TOPO_CABLING_H

#include <stdbool.h>
#include <stdint.h>

#include "common/ft_err.h"
#include "topology/topo_model.h"

/* A node the plan names. */
struct topo_cabling_node {
    char id[TOPO_TEXT];   /* the plan's own id ("S-0002c903...", "H1", a description) */
    char desc[TOPO_TEXT]; /* the description to match ("leaf-1"), "" to match the id */
    uint64_t guid;
    bool has_guid;
    int line;
};

/* One planned cable: node a port pa to node b port pb (indices into nodes). */
struct topo_cabling_link {
    int a, pa, b, pb;
    int line; /* where the plan says so */
};

struct topo_cabling {
    char path[256];
    bool whole; /* an ibnetdiscover-format plan lists whole nodes: unplanned ports count */
    int nnodes, nlinks;
    struct topo_cabling_node *nodes;
    struct topo_cabling_link *links;
};

/* Load a plan file: JSON when it starts with '{' or '[', else ibnetdiscover format. On
 * failure *out is NULL and err names the file, line and the problem. */
int topo_cabling_load(const char *path, struct topo_cabling **out, struct ft_err *err);
/* The same from text (what names it in errors). */
int topo_cabling_parse(const char *text, const char *what, struct topo_cabling **out,
                       struct ft_err *err);
void topo_cabling_free(struct topo_cabling *p);

enum topo_cabling_kind {
    TOPO_CABLING_NO_NODE = 0, /* a planned node is not in the fabric */
    TOPO_CABLING_AMBIGUOUS,   /* a planned description matches several nodes */
    TOPO_CABLING_NO_LINK,     /* a planned port has no link */
    TOPO_CABLING_MISCABLED,   /* a planned port is cabled somewhere else */
    TOPO_CABLING_UNPLANNED,   /* a cable between planned nodes that the plan does not list */
};

struct topo_cabling_diff {
    enum topo_cabling_kind kind;
    int fport;      /* the fabric port it is about, -1 */
    char text[320]; /* one sentence, with the plan's line */
};

/* Compare; returns the number of differences in *out (caller frees). */
int topo_cabling_compare(const struct topo_fabric *f, const struct topo_cabling *p,
                         struct topo_cabling_diff **out);

#endif
