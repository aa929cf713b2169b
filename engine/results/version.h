/* version: the versions of fabtop, the kernel and the libraries a result depends on, so
 * every result states its test conditions. */
#ifndef VERSION_H
#define VERSION_H

#include <cjson/cJSON.h>

/* {"fabtop":..,"kernel":..,"hwloc":..,"libibverbs":..,"libcjson":..,"libsodium":..,"glibc":..} */
cJSON *version_json(void);

#endif
