/* config: what the explorer remembers between sessions, in $XDG_CONFIG_HOME/fabtop/
 * config.json (or ~/.config/fabtop/config.json): the theme and the last test settings.
 * A missing file means defaults; a malformed one is reported and ignored. */
#ifndef CONFIG_H
#define CONFIG_H

#include <cjson/cJSON.h>

#include "common/ft_err.h"

struct config {
    char theme[64];  /* theme name, "" = default */
    char mix[128];   /* last preset or mix file chosen in setup */
    char peer[128];  /* last peer ("loopback" or HOST[:PORT]) */
    cJSON *setup;    /* the last setup's parameters (owned; may be NULL) */
    char error[512]; /* why the file was ignored, "" if it was fine or absent */
};

/* dir: NULL for the XDG default. Never fails: problems land in c->error. */
void config_load(const char *dir, struct config *c);
int config_save(const char *dir, const struct config *c, struct ft_err *err);
void config_free(struct config *c);
/* The directory in use ("/home/u/.config/fabtop"). */
void config_dir(const char *dir, char *buf, size_t len);

#endif
