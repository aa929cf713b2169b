/* fuzz_config: the explorer's remembered settings, $XDG_CONFIG_HOME/fabtop/config.json, as
 * app_init and the setup view read them (config_load), the theme it names loaded as
 * app_init loads it (names only: a path would read whatever file the input names), the
 * setup's remembered size as setup parses it (mix_parse_bytes), and the round trip the
 * setup view makes when it remembers settings: load -> save -> load gives the same. */
#include <stdint.h>
#include <string.h>

#include "common/ft_err.h"
#include "common/jsonutil.h"
#include "engine/flow/mix.h"
#include "fuzz_util.h"
#include "tui/config.h"
#include "tui/theme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *setup_text(const struct config *c)
{
    return c->setup ? fuzz_print(c->setup) : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = fuzz_dir_with("config.json", data, size);
    struct config c;
    config_load(dir, &c);
    if (c.error[0]) {
        config_free(&c);
        return 0;
    }
    if (c.theme[0] && !strchr(c.theme, '/') && !strstr(c.theme, ".json")) {
        struct theme t;
        struct ft_err err = {0};
        if (theme_load(c.theme, &t, &err) < 0)
            fuzz_require(err.msg[0] != '\0', "theme_load failed without a message");
    }
    const char *sz = c.setup ? jsonutil_str(c.setup, "size") : NULL;
    uint64_t bytes;
    if (sz)
        (void)mix_parse_bytes(sz, &bytes);

    struct ft_err err = {0};
    fuzz_require(config_save(dir, &c, &err) == 0, "config_save: %s", err.msg);
    struct config c2;
    config_load(dir, &c2);
    fuzz_require(!c2.error[0], "a config.json fabtop saved does not load: %s", c2.error);
    char *s1 = setup_text(&c), *s2 = setup_text(&c2);
    fuzz_require(!strcmp(c.theme, c2.theme) && !strcmp(c.mix, c2.mix) && !strcmp(c.peer, c2.peer) &&
                     !s1 == !s2 && (!s1 || !strcmp(s1, s2)),
                 "config load -> save -> load differs");
    cJSON_free(s1);
    cJSON_free(s2);
    config_free(&c);
    config_free(&c2);
    return 0;
}
