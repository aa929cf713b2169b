/* fuzz_hwloc_xml: an hwloc XML export through fabtop's own loader (topo_load: the sniffing
 * and precheck in topo_load.c and topo_hwloc.c, libhwloc's XML import, fabtop's model
 * building from the hwloc tree), then what `fabtop topo --input FILE` does with the model
 * and the snapshot round trip (fuzz_util.c). libhwloc 2.9 itself crashes on some malformed
 * XML: README.md says how the runs tell those crashes from fabtop's. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_first_byte(data, size) != '<')
        return -1; /* JSON snapshots: fuzz_topo_json */
    fuzz_topo_file(fuzz_file(0, data, size));
    return 0;
}
