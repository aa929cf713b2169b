/* fuzz_sim_topo: a simulator topology file (format "fabtop-sim-topology"), named by a sim
 * flow's params.topology, as the sim transport loads it (sim_topology_load) and builds the
 * simulated fabric from it with the default settings of its fabric (sim_new: hosts,
 * switches, links, routes). */
#include <stdint.h>
#include <string.h>

#include "common/ft_err.h"
#include "common/jsonutil.h"
#include "engine/sim/sim.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *topo;
    struct ft_err err = {0};
    if (sim_topology_load(fuzz_file(0, data, size), &topo, &err) < 0) {
        fuzz_require(err.msg[0] != '\0', "sim_topology_load failed without a message");
        return 0;
    }
    const char *fab = jsonutil_str(topo, "fabric");
    struct sim_params p;
    sim_params_default(&p, fab && !strcmp(fab, "ib") ? SIM_FABRIC_IB : SIM_FABRIC_ROCE);
    struct sim *s;
    if (sim_new(topo, "topology", &p, &s, &err) == 0) {
        int n = sim_nnodes(s), h = sim_nhosts(s);
        fuzz_require(h >= 0 && h <= n, "%d hosts of %d nodes", h, n);
        for (int i = 0; i < n; i++)
            fuzz_require(sim_node_name(s, i) != NULL, "node %d has no name", i);
        for (int i = 0; i < h; i++)
            (void)sim_host_gbps(s, i);
        sim_free(s);
    } else {
        fuzz_require(err.msg[0] != '\0', "sim_new failed without a message");
    }
    cJSON_Delete(topo);
    return 0;
}
