/* lint_fixture: healthy node models for the lint tests, built the way the sources build
 * them (topo_model_add_* then topo_model_finalize), plus small helpers to query findings
 * and to write synthetic sysfs counter trees. Tests break one fact and re-finalize. */
#ifndef LINT_FIXTURE_H
#define LINT_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "topology/topo_lint.h"
#include "topology/topo_model.h"

/* PCI indices of the healthy two-socket node (see lint_fixture.c for the tree). */
enum {
    FX_HB0 = 0, /* host bridge, socket 0 */
    FX_RP0,     /* root port 0000:00:01.0 */
    FX_UP0,     /* PCIe switch upstream port 0000:01:00.0 */
    FX_DN0A,    /* switch downstream port 0000:02:00.0 (above GPU0) */
    FX_DN0B,    /* switch downstream port 0000:02:01.0 (above NIC0) */
    FX_GPU0,    /* 0000:03:00.0 */
    FX_NIC0,    /* 0000:04:00.0 */
    FX_HB1,     /* host bridge, socket 1 */
    FX_RP1,     /* 0000:80:01.0 */
    FX_UP1,     /* 0000:81:00.0 */
    FX_DN1A,    /* 0000:82:00.0 */
    FX_DN1B,    /* 0000:82:01.0 */
    FX_GPU1,    /* 0000:83:00.0 */
    FX_NIC1,    /* 0000:84:00.0 */
    FX_NPCI
};

/* Healthy idle GPU node: 2 sockets, per socket one PCIe Gen5 switch with an H100 GPU and a
 * ConnectX-7 (15b3:1021, same firmware) at x16; InfiniBand NDR ports ACTIVE/LinkUp at
 * 400 Gb/s, MTU 4096, SM present; GPUs idle at 2.5 GT/s (INFO only); ACS readable and off;
 * non-root user with unlimited memlock, nvidia_peermem loaded. nics 0/1 = mlx5_0/mlx5_1,
 * ports 0/1, netdevs ib0/ib1. */
struct topo_model *fx_ib_node(void);

/* The same node with RoCE: Ethernet link layer, 400 Gb/s, active MTU 4096 of max 4096,
 * netdevs eth0/eth1 at MTU 9000 with RoCE v1 and v2 GIDs; SM/LID fields 0 as on RoCE. */
struct topo_model *fx_roce_node(void);

/* Re-derive bridge roles, adapters and netdev links after a test changed the model. */
void fx_refinalize(struct topo_model *m);

/* Run every rule (counters from s when not NULL); caller frees with topo_findings_free. */
void fx_lint(const struct topo_model *m, const struct topo_err_samples *s,
             struct topo_findings *out);

/* How many findings of a rule (sev < 0: any severity). */
int fx_count(const struct topo_findings *f, const char *rule, int sev);
/* The first finding of a rule, or NULL. */
const struct topo_finding *fx_find(const struct topo_findings *f, const char *rule);
/* Print findings (for a failing test's log). */
void fx_dump(const struct topo_findings *f);

/* A fresh temporary directory (mkdtemp); rm_rf removes it again. */
void fx_tmpdir(char *buf, size_t len);
void fx_rm_rf(const char *dir);
/* Write text to root/rel, creating directories. */
void fx_write(const char *root, const char *rel, const char *text);

#endif
