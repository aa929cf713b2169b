/* topo_fabric: building and reading the model's fabric section (struct topo_fabric in
 * topo_model.h): appenders, derived links, lookups, names, the PortInfo width and speed
 * encodings, and the section's JSON form. No MAD I/O here and no curses: discovery
 * (topo_ibfabric.c, topo_lldp.c), the snapshot, lint and the text views all share it. */
#ifndef TOPO_FABRIC_H
#define TOPO_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "topology/topo_model.h"

/* Append a zeroed element (references set to -1) and return its index. As with the
 * model's appenders, take the index first: pointers move when the array grows. */
int topo_fabric_add_node(struct topo_fabric *f);
int topo_fabric_add_port(struct topo_fabric *f);
int topo_fabric_add_local(struct topo_fabric *f);
int topo_fabric_add_route(struct topo_fabric *f);
int topo_fabric_add_hop(struct topo_fabric *f);
int topo_fabric_add_counter(struct topo_fabric *f);
int topo_fabric_add_neighbour(struct topo_fabric *f);
void topo_fabric_note(struct topo_fabric *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void topo_fabric_free(struct topo_fabric *f);

/* Make every port's remote symmetric (a port whose peer does not point back loses it)
 * and rebuild the links from them, in port order. Run after discovery and after load. */
void topo_fabric_finalize(struct topo_fabric *f);

/* Lookups; an index or -1. */
int topo_fabric_find_node(const struct topo_fabric *f, uint64_t guid);
int topo_fabric_port_of(const struct topo_fabric *f, int node, int num);
/* The port that owns a LID: a CA port whose LID range (LMC) covers it, or a switch's
 * port 0. */
int topo_fabric_find_lid(const struct topo_fabric *f, uint32_t lid);
/* A node's port to route from or to: a switch's port 0; a CA's first active port with a
 * LID, else its first port. */
int topo_fabric_node_endpoint(const struct topo_fabric *f, int node);
/* Resolve a route endpoint: a LID ("13", "0xd"), a node or port GUID ("0x0002c903..."),
 * or a node description (exact, else a unique case-insensitive substring). Returns the
 * fabric port or -1 with why filled. */
int topo_fabric_resolve(const struct topo_fabric *f, const char *spec, char *why, size_t len);

/* Names. */
const char *topo_fnode_type_str(enum topo_fnode_type t); /* "switch", "CA", "router" */
const char *topo_route_status_str(enum topo_route_status s);
/* The node description, or "switch 0x0002c90300a1b2c3" when it has none. */
void topo_fnode_label(const struct topo_fabric *f, int node, char *buf, size_t len);
/* "leaf-1 port 5". */
void topo_fport_label(const struct topo_fabric *f, int port, char *buf, size_t len);
/* "4X QDR, 40 Gb/s", or what of it is known; "" when nothing is. */
void topo_fport_link_str(const struct topo_fport *p, char *buf, size_t len);
/* Active width x lane speed in nominal Gb/s, the way sysfs "rate" counts; 0 if unknown. */
double topo_fport_rate_gbps(const struct topo_fport *p);
/* "0x0002c90300a1b2c3". */
void topo_guid_str(uint64_t guid, char *buf, size_t len);

/* PortInfo encodings (IBA vol 1 release 1.5, 14.2.5.6, PortInfo; the same numbers as
 * rdma-core libibmad's dump.c and the kernel's ib_verbs.h ib_port_width/ib_port_speed).
 * LinkWidthActive is one bit: 1 1X, 2 4X, 4 8X, 8 12X, 16 2X. Returns lanes, 0 unknown. */
int topo_ib_width_lanes(unsigned code);
/* The widest lanes in a LinkWidthSupported/Enabled bit mask (same bits), 0 if none. */
int topo_ib_width_mask_max(unsigned mask);
/* Active lane speed, nominal Gb/s: LinkSpeedExtActive when non-zero (1 FDR 14, 2 EDR 25,
 * 4 HDR 50, 8 NDR 100), else LinkSpeedActive (1 SDR 2.5, 2 DDR 5, 4 QDR 10); 0 unknown.
 * Nominal rates are the ones sysfs prints (drivers/infiniband/core/sysfs.c); the line
 * rates behind them are 14.0625, 25.78125, 53.125 and 106.25 Gb/s. */
double topo_ib_speed_gbps(unsigned active, unsigned ext_active);
/* The fastest nominal lane speed in LinkSpeedSupported/Enabled and their Ext masks (same
 * bit order as the active codes); 0 if none. */
double topo_ib_speed_mask_max(unsigned mask, unsigned ext_mask);
/* "SDR" .. "NDR" for a nominal lane speed, "?" otherwise. */
const char *topo_ib_speed_name(double lane_gbps);

/* The section as JSON (NULL when no fabric part ran: valid == 0), and back. Numbers that
 * may not fit a double exactly (GUIDs, 64-bit counters) travel as strings. */
cJSON *topo_fabric_to_json(const struct topo_model *m);
int topo_fabric_from_json(const cJSON *o, struct topo_model *m, const char *what,
                          struct ft_err *err);

#endif
