/* topo_xmlchild: parse an untrusted hwloc XML in a helper process (fabtop-hwloc-xml) under
 * memory and CPU limits, and take the topology back as fabtop's own JSON snapshot, so
 * that a crash of libhwloc on a malformed file (2.9 dies with SIGSEGV on some) costs one
 * clear error instead of the caller. The helper's main is topo_xmlchild_main.c. */
#ifndef TOPO_XMLCHILD_H
#define TOPO_XMLCHILD_H

#include "common/ft_err.h"
#include "topology/topo_model.h"

#define TOPO_XMLCHILD_NAME      "fabtop-hwloc-xml"
#define TOPO_XMLCHILD_AS_MIB    2048 /* RLIMIT_AS of the helper */
#define TOPO_XMLCHILD_CPU_S     20   /* RLIMIT_CPU of the helper */
#define TOPO_XMLCHILD_WALL_MS   60000
#define TOPO_XMLCHILD_MAX_BYTES (256u << 20) /* snapshot text taken back */

/* Run helper (a path to fabtop-hwloc-xml) on the XML at path and fill the empty model m
 * with the skeleton it loaded (what topo_source_xml.load gives in process). Errors name
 * the file: the helper's own message (malformed XML, hwloc 3.x, ...) with its code, or
 * -EBADMSG when libhwloc crashed or ran past the CPU or wall-clock limits, -E2BIG for an
 * absurdly large result, -ELIBACC when the helper cannot run, -EIO when it misbehaved. */
int topo_xmlchild_load(const char *helper, const char *path, struct topo_model *m,
                       struct ft_err *err);

/* The helper's side: load path in this process (after setting the limits above), print the
 * snapshot, or {"error": {"code": -errno, "message": "..."}}, on stdout. Returns the exit
 * status (0 loaded, 1 refused, 64 usage). */
int topo_xmlchild_serve(int argc, char **argv);

#endif
