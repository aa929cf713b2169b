/* version: build- and run-time versions for results. */
#include "engine/results/version.h"

#include <gnu/libc-version.h>
#include <stdio.h>
#include <sys/utsname.h>

#include <hwloc.h>
#include <sodium.h>

cJSON *version_json(void)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "fabtop", FABTOP_VERSION);
    struct utsname u;
    if (uname(&u) == 0) {
        char k[512];
        snprintf(k, sizeof(k), "%s %s %s", u.sysname, u.release, u.machine);
        cJSON_AddStringToObject(o, "kernel", k);
    }
    unsigned hv = hwloc_get_api_version();
    char buf[64];
    snprintf(buf, sizeof(buf), "%u.%u.%u (API)", hv >> 16, (hv >> 8) & 0xff, hv & 0xff);
    cJSON_AddStringToObject(o, "hwloc", buf);
    cJSON_AddStringToObject(o, "libibverbs", FABTOP_IBVERBS_VERSION " (build)");
    cJSON_AddStringToObject(o, "libcjson", cJSON_Version());
    cJSON_AddStringToObject(o, "libsodium", sodium_version_string());
    cJSON_AddStringToObject(o, "glibc", gnu_get_libc_version());
    return o;
}
