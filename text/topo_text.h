/* topo_text: plain-text renderings of the topology for `fabtop topo` and the explorer's
 * panes: the GPU/NIC/port tree, the nvidia-smi style matrix, lint findings. Pure
 * functions of the model (no curses), appended to a strbuf. */
#ifndef TOPO_TEXT_H
#define TOPO_TEXT_H

#include "common/strbuf.h"
#include "topology/topo_affinity.h"
#include "topology/topo_ceiling.h"
#include "topology/topo_lint.h"
#include "topology/topo_model.h"

/* Header line: host, product, source. */
void topo_text_header(struct strbuf *sb, const struct topo_model *m);
/* The tree focused on GPU / NIC / port paths, then what was not found. */
void topo_text_tree(struct strbuf *sb, const struct topo_model *m);
/* One port as a line: state, link layer, rate, MTU, LID, netdev, RoCE v2 GID. */
void topo_text_port(struct strbuf *sb, const struct topo_model *m, int port);
/* GPU x GPU x NIC matrix with CPU/NUMA affinity and nearest NICs, and the legend. */
void topo_text_matrix(struct strbuf *sb, const struct topo_model *m, const struct topo_affinity *a);
/* Each NIC's and GPU's path ceiling (topo_ceiling.h): the ceiling, the narrowest term, and
 * with terms every term of it, one line each. */
void topo_text_ceilings(struct strbuf *sb, const struct topo_model *m, bool terms);
/* One ceiling: "<path>: 98.04 Gb/s of payload, set by port payload", then its terms. */
void topo_text_ceiling(struct strbuf *sb, const struct topo_ceiling *c, bool terms, int depth);
/* Lint findings, worst first, each with its remedy. */
void topo_text_findings(struct strbuf *sb, const struct topo_findings *f);
/* Human size: "79.6 GiB". */
void topo_text_bytes(char *buf, size_t len, uint64_t bytes);

#endif
