/* test_rrcheck: the return-routability bookkeeping without a device: fresh nonces, the
 * echo accepted only once, in time, whole and exact; every refusal with its errno and text,
 * and a failed check staying failed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <errno.h>
#include <string.h>

#include <cmocka.h>

#include "engine/peer/rrcheck.h"

static cJSON *echo_of(const struct rrcheck_check *c)
{
    return rrcheck_echo_json((const unsigned char(*)[RRCHECK_NONCE_BYTES])c->nonce, c->n);
}

static void armed(struct rrcheck_check *c, int n, int64_t t)
{
    struct ft_err err = {0};
    assert_int_equal(rrcheck_init(c, n, &err), 0);
    rrcheck_sent(c, t);
}

static void expect(struct rrcheck_check *c, cJSON *echo, int64_t now, int rc, const char *msg)
{
    struct ft_err err = {0};
    assert_int_equal(rrcheck_verify(c, echo, now, "verbs.echo", &err), rc);
    if (msg)
        assert_string_equal(err.msg, msg);
    cJSON_Delete(echo);
}

static void test_accept_once(void **state)
{
    (void)state;
    struct rrcheck_check c, d;
    armed(&c, 3, 1000);
    armed(&d, 3, 1000);
    assert_memory_not_equal(c.nonce[0], c.nonce[1], RRCHECK_NONCE_BYTES);
    assert_memory_not_equal(c.nonce[0], d.nonce[0], RRCHECK_NONCE_BYTES);
    assert_int_equal(rrcheck_left_ms(&c, 1400), 600);
    expect(&c, echo_of(&c), 1000 + RRCHECK_ECHO_MS, 0, NULL);
    assert_int_equal(c.state, RRCHECK_PROVEN);
    assert_int_equal(rrcheck_left_ms(&c, 1500), -1);
    expect(&c, echo_of(&c), 1500, -EPROTO,
           "verbs.echo: no nonce is waiting for its echo (already echoed)");
}

static void test_refusals(void **state)
{
    (void)state;
    struct rrcheck_check c;
    struct ft_err err = {0};
    assert_int_equal(rrcheck_init(&c, 2, &err), 0);
    expect(&c, echo_of(&c), 0, -EPROTO,
           "verbs.echo: no nonce is waiting for its echo (none was sent yet)");

    armed(&c, 2, 0);
    assert_int_equal(rrcheck_left_ms(&c, 5000), 0);
    expect(&c, echo_of(&c), RRCHECK_ECHO_MS + 1, -ETIMEDOUT,
           "verbs.echo: the echo came 1001 ms after the nonces, more than 1000 ms");
    assert_int_equal(c.state, RRCHECK_FAILED);
    expect(&c, echo_of(&c), 10, -EPROTO,
           "verbs.echo: no nonce is waiting for its echo (the check failed before)");

    armed(&c, 2, 0);
    cJSON *e = echo_of(&c);
    char *h = cJSON_GetArrayItem(e, 1)->valuestring;
    h[63] = h[63] == '0' ? '1' : '0'; /* one nibble of the second nonce */
    expect(&c, e, 5, -EACCES,
           "verbs.echo: the nonce of queue pair 1 differs from the one the agent wrote over it");

    armed(&c, 2, 0);
    e = echo_of(&c);
    cJSON_DeleteItemFromArray(e, 0);
    expect(&c, e, 5, -EINVAL, "verbs.echo: expected 2 nonces as hex");
    armed(&c, 2, 0);
    e = echo_of(&c);
    cJSON_GetArrayItem(e, 0)->valuestring[10] = 'x';
    expect(&c, e, 5, -EINVAL, "verbs.echo: nonce 0 is not 32 bytes of hex");
    armed(&c, 1, 0);
    expect(&c, cJSON_CreateString("nope"), 5, -EINVAL, "verbs.echo: expected 1 nonce as hex");
    armed(&c, 1, 0);
    expect(&c, NULL, 5, -EINVAL, "verbs.echo: expected 1 nonce as hex");

    assert_int_equal(rrcheck_init(&c, 0, &err), -EINVAL);
    assert_string_equal(err.msg, "return-routability check of 0 nonces (1 to 64)");
    ft_err_clear(&err);
    assert_int_equal(rrcheck_init(&c, RRCHECK_MAX + 1, &err), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accept_once),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
