/* fuzz_topo_json: fabtop's topology snapshot (the node and its "fabric" section) as
 * `fabtop topo --input FILE` and the explorer's --input read it: topo_load, then the
 * affinity matrix, lint, the JSON document and every text view, and the round trip
 * load -> save -> load -> save with the two saves equal (fuzz_util.c). Inputs that start
 * with '<' go to hwloc: fuzz_hwloc_xml covers those. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_first_byte(data, size) == '<')
        return -1; /* not added to the corpus */
    fuzz_topo_file(fuzz_file(0, data, size));
    return 0;
}
