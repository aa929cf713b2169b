/* test_cli_run_flags: `fabtop run`'s mix-building flags (--endpoint, --transport,
 * --concurrency, --senders, --neighbours, with --size and --duration) build the same mix the
 * explorer's setup form builds: each case gives the flags the choices of a mix the form
 * wrote (tests/run/mix_build/, see tests/run/test_mix_build.c) and the mix cli_run_mix makes
 * (the run's own code) must be that document byte for byte, but for the description, which
 * names the command line instead of the explorer. The flags' help words are the builder's
 * (mix_build_knobs); bad values are usage errors (64) naming the flag or the knob. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cli.h"
#include "cli/cli_opts.h"
#include "engine/flow/mix.h"
#include "engine/run/mix_build.h"
#include "tests/run/mixtest.h"

struct flag_case {
    const char *golden;   /* tests/run/mix_build/NAME.json */
    const char *argv[16]; /* after "run" */
};

static const struct flag_case cases[] = {
    {"api-default", {"--mix", "api", "--neighbours", "on"}},
    {"api-ip-size-conc-duration",
     {"--mix", "api", "--endpoint", "ip:127.0.0.1", "--size", "1KiB", "--concurrency", "2",
      "--duration", "0.3"}},
    {"api-netdev-size-duration",
     {"--mix", "api", "--endpoint", "netdev:lo", "--size", "64KiB", "--duration", "2"}},
    {"api-size-duration-flags", {"--mix", "api", "--size", "4MiB", "--duration", "1.5"}},
    {"incast-default", {"--mix", "incast", "--transport", "tcp"}},
    {"incast-5-senders",
     {"--mix", "incast", "--size", "1KiB", "--duration", "0.2", "--senders", "5"}},
    {"incast-2-senders", {"--mix", "incast", "--senders", "2"}},
    {"incast-no-neighbours", {"--mix", "incast", "--neighbours", "off"}},
    {"quiet-vs-loaded-no-neighbours",
     {"--mix", "quiet-vs-loaded", "--concurrency", "1", "--neighbours", "off"}},
    {"neighbour-conc-8", {"--mix", "neighbour", "--concurrency", "8"}},
    {"tp-decode-size-256", {"--mix", "tp-decode", "--size", "256"}},
    {"sim-baseline-size", {"--mix", "sim/baseline", "--size", "64KiB", "--transport", "sim"}},
};

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    return mixtest_tmp_home(tmpdir, sizeof(tmpdir), "runflags"); /* the shipped presets only */
}

static int teardown(void **state)
{
    (void)state;
    return mixtest_tmp_remove(tmpdir);
}

/* cli_run_mix on "run" + words. */
static int run_mix(const char *const *words, struct mix *m)
{
    char *argv[20];
    int argc = 0;
    argv[argc++] = (char *)"run";
    for (int i = 0; words[i]; i++)
        argv[argc++] = (char *)words[i];
    argv[argc] = NULL;
    return cli_run_mix(argc, argv, m);
}

/* The document as text without its description. */
static char *without_description(cJSON *doc)
{
    cJSON_DeleteItemFromObject(doc, "description");
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    return text;
}

static void same_mix_as_the_form(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct flag_case *c = &cases[i];
        struct mix m;
        if (run_mix(c->argv, &m) != 0)
            fail_msg("%s: cli_run_mix refused the flags", c->golden);
        char path[512];
        snprintf(path, sizeof(path), "%s/mix_build/%s.json", MIX_BUILD_GOLDEN_DIR, c->golden);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        static char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        char *want = without_description(cJSON_Parse(buf));
        cJSON *doc = mix_to_json(&m);
        const cJSON *d = cJSON_GetObjectItem(doc, "description");
        assert_true(cJSON_IsString(d));
        /* Edited beyond --size/--duration: the description says where. */
        bool edited = strstr(c->golden, "senders") || strstr(c->golden, "conc") ||
                      strstr(c->golden, "neighbours") || strstr(c->golden, "ip-") ||
                      strstr(c->golden, "netdev");
        assert_int_equal(strstr(d->valuestring, "edited in the command line") != NULL, edited);
        char *got = without_description(doc);
        if (strcmp(got, want))
            fail_msg("%s: the flags' mix differs from the form's:\n%s\nvs\n%s", c->golden, got,
                     want);
        free(got);
        free(want);
        mix_free(&m);
    }
}

/* The flags' help is the builder's own words (mix_build_knobs), line breaks aside. */
static void help_words_are_the_builders(void **state)
{
    (void)state;
    const struct cli_command *run = cli_command_find("run");
    assert_non_null(run);
    static const enum mix_knob knobs[] = {MIX_KNOB_ENDPOINT, MIX_KNOB_TRANSPORT, MIX_KNOB_CONC,
                                          MIX_KNOB_SENDERS, MIX_KNOB_NEIGHBOURS};
    for (size_t k = 0; k < sizeof(knobs) / sizeof(knobs[0]); k++) {
        const struct mix_knob_info *info = &mix_build_knobs[knobs[k]];
        const struct cli_opt *o = NULL;
        for (int i = 0; i < run->nopts && !o; i++)
            if (run->opts[i].name && !strcmp(run->opts[i].name, info->flag))
                o = &run->opts[i];
        if (!o)
            fail_msg("fabtop run has no --%s", info->flag);
        assert_string_equal(o->arg_name, info->arg);
        char help[512];
        snprintf(help, sizeof(help), "%s", o->help);
        for (char *p = help; *p; p++)
            if (*p == '\n')
                *p = ' ';
        assert_string_equal(help, info->help);
    }
}

static void bad_values(void **state)
{
    (void)state;
    static const struct {
        const char *argv[8];
    } bad[] = {
        {{"--mix", "api", "--concurrency", "0"}},
        {{"--mix", "api", "--concurrency", "2000"}},
        {{"--mix", "api", "--neighbours", "maybe"}},
        {{"--mix", "api", "--transport", "smoke-signals"}},
        {{"--mix", "api", "--endpoint", "carrier-pigeon"}},
        {{"--mix", "incast", "--senders", "99"}},
        {{"--mix", "tp-decode", "--concurrency", "4"}},
        {{"--mix", "api", "--transport", "sim"}},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct mix m;
        int rc = run_mix(bad[i].argv, &m);
        if (rc != 64)
            fail_msg("case %zu: status %d, want 64", i, rc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_mix_as_the_form),
        cmocka_unit_test(help_words_are_the_builders),
        cmocka_unit_test(bad_values),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
