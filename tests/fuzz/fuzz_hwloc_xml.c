/* fuzz_hwloc_xml: an hwloc XML export through fabtop's own loader (topo_load: the sniffing
 * and precheck in topo_load.c and topo_hwloc.c, libhwloc's XML import, fabtop's model
 * building from the hwloc tree), then what `fabtop topo --input FILE` does with the model
 * and the snapshot round trip (fuzz_util.c). libhwloc 2.9 itself crashes on some malformed
 * XML: README.md says how the runs tell those crashes from fabtop's.
 * hwloc's own XML parser always: where libhwloc-plugins is installed (OpenMPI pulls it in)
 * hwloc would parse with libxml2 from a plugin it unloads again, whose leaks and crashes then
 * point into an "<unknown module>" no blame rule can place, and the runs would depend on
 * what else the machine has installed. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("HWLOC_LIBXML_IMPORT", "0", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_first_byte(data, size) != '<')
        return -1; /* JSON snapshots: fuzz_topo_json */
    fuzz_topo_file(fuzz_file(0, data, size));
    return 0;
}
