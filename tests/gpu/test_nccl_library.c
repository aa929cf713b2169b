/* test_nccl_library: `fabtop run --nccl PATH` reaches the NCCL loader as a parameter (the
 * flows' library, mix_set_library -> runner_validate -> cudart_load_lib), never through the
 * environment: on the stand-in CUDA runtime and NCCL (fake_cudanccl.c), with $FABTOP_NCCL
 * unset, the named library is the one loaded and the environment stays as it was; another
 * library after that is refused (one NCCL per process); a path too long is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/flow/mix.h"
#include "engine/run/runner.h"
#include "engine/xport/nccl/cudart.h"

static const char *fake;

static void test_library_as_parameter(void **state)
{
    (void)state;
    struct mix m;
    struct ft_err err = {0};
    assert_int_equal(mix_load("nccl-decode", &m, &err), 0);
    char longpath[300];
    memset(longpath, 'x', sizeof(longpath) - 1);
    longpath[sizeof(longpath) - 1] = '\0';
    assert_int_equal(mix_set_library(&m, "nccl", longpath), -ENAMETOOLONG);
    assert_int_equal(mix_set_library(&m, "nccl", fake), 0);
    int nccl = 0;
    for (int i = 0; i < m.nflows; i++)
        if (!strcmp(m.flows[i].transport, "nccl")) {
            assert_string_equal(m.flows[i].library, fake);
            nccl++;
        } else {
            assert_string_equal(m.flows[i].library, "");
        }
    assert_true(nccl > 0);
    /* The JSON of the mix does not carry it: a run option, not the mix. */
    cJSON *doc = mix_to_json(&m);
    char *text = cJSON_PrintUnformatted(doc);
    assert_null(strstr(text, fake));
    cJSON_free(text);
    cJSON_Delete(doc);

    if (runner_validate(&m, &err) != 0)
        fail_msg("runner_validate: %s", err.msg);
    assert_null(getenv("FABTOP_NCCL"));
    const struct cudart *a = NULL;
    char why[768];
    assert_int_equal(cudart_load(&a, why, sizeof(why)), 0);
    assert_string_equal(a->nccl_path, fake);
    /* The same library again is fine; another one is refused, naming both. */
    assert_int_equal(cudart_load_lib(fake, &a, why, sizeof(why)), 0);
    assert_int_equal(cudart_load_lib("/nonexistent/libnccl.so.2", &a, why, sizeof(why)), -EBUSY);
    assert_null(a);
    assert_non_null(strstr(why, fake));
    assert_non_null(strstr(why, "/nonexistent/libnccl.so.2"));
    mix_free(&m);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gpu_nccl_library PATH/libfake_cudanccl.so\n");
        return 64;
    }
    fake = argv[1];
    setenv("FABTOP_CUDART", fake, 1);
    setenv("FAKE_CUDA_DEVICES", "2", 1);
    unsetenv("FABTOP_NCCL");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_as_parameter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
