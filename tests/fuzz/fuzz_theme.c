/* fuzz_theme: a theme file as `fabtop --theme FILE` (and the t key, and config.json's
 * "theme") loads it: theme_load, then every role resolved to a colour pair as the
 * explorer's ui does on 8-, 16- and 256-colour terminals, with and without default
 * colours. */
#include <stdint.h>

#include "common/ft_err.h"
#include "fuzz_util.h"
#include "tui/theme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct theme t;
    struct ft_err err = {0};
    if (theme_load(fuzz_file(0, data, size), &t, &err) < 0) {
        fuzz_require(err.msg[0] != '\0', "theme_load failed without a message");
        return 0;
    }
    static const int ncolors[] = {8, 16, 256};
    for (int r = 0; r < ROLE_COUNT; r++)
        for (int c = 0; c < 3; c++)
            for (int d = 0; d < 2; d++) {
                short fg, bg;
                theme_resolve(&t.role[r], ncolors[c], d, &fg, &bg);
                fuzz_require(fg >= -1 && fg < ncolors[c] && bg >= -1 && bg < ncolors[c],
                             "role %s on %d colours: pair %d/%d", theme_role_name(r), ncolors[c],
                             fg, bg);
            }
    return 0;
}
