/* fuzz_doctor_facts: the facts an agent answers `fabtop doctor`'s doctor.facts with (a hostile
 * agent controls every byte of them): doctor_facts_from_json, its RDMA ports and their DCB
 * state (topo_dcb_state_from_json); then every rule over them against this end's facts built
 * the same way, with a RoCE queue pair on the first port and the DSCP the input's first byte
 * picks; round trip: accepted facts must save (doctor_facts_json), load and save the same. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ft_err.h"
#include "engine/doctor/doctor.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_str(data, size);
    cJSON *j = cJSON_Parse(s);
    free(s);
    struct doctor_facts *f = calloc(2, sizeof(*f)), *g = f + 1;
    struct ft_err err = {0};
    if (doctor_facts_from_json(j, f, &err) < 0) {
        fuzz_require(err.msg[0] != '\0', "doctor_facts_from_json failed without a message");
        goto out;
    }
    struct doctor_qp qp = {.port = 1, .gid_index = 1, .path_mtu = 4096, .dscp = data[0] % 64};
    snprintf(qp.dev, sizeof(qp.dev), "%s", f->nrdma ? f->rdma[0].dev : "rxe0");
    struct doctor_pmtu pr = {.valid = true, .tried = 1500, .largest_ok = 1280};
    struct doctor_finding out[32];
    int n = doctor_compare(f, f, &qp, &pr, out, 32);
    for (int i = 0; i < n && i < 32; i++)
        fuzz_require(out[i].rule[0] && out[i].msg[0], "a finding without a rule or message");
    cJSON *a = doctor_facts_json(f);
    fuzz_require(doctor_facts_from_json(a, g, &err) == 0, "saved facts do not load: %s", err.msg);
    cJSON *b = doctor_facts_json(g);
    char *pa = fuzz_print(a), *pb = fuzz_print(b);
    fuzz_require(!strcmp(pa, pb), "facts: save -> load -> save differs");
    cJSON_free(pa);
    cJSON_free(pb);
    cJSON_Delete(a);
    cJSON_Delete(b);
out:
    free(f);
    cJSON_Delete(j);
    return 0;
}
