/* config: load and save the explorer's remembered settings. */
#include "tui/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fsutil.h"
#include "common/jsonutil.h"

void config_dir(const char *dir, char *buf, size_t len)
{
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (dir)
        snprintf(buf, len, "%s", dir);
    else if (xdg && *xdg)
        snprintf(buf, len, "%s/fabtop", xdg);
    else
        snprintf(buf, len, "%s/.config/fabtop", home && *home ? home : "/tmp");
}

void config_load(const char *dir, struct config *c)
{
    memset(c, 0, sizeof(*c));
    char d[512], path[600];
    config_dir(dir, d, sizeof(d));
    snprintf(path, sizeof(path), "%s/config.json", d);
    if (!fsutil_exists("/", path))
        return;
    cJSON *doc;
    struct ft_err err = {0};
    if (jsonutil_load(path, &doc, &err) < 0) {
        snprintf(c->error, sizeof(c->error), "%s", err.msg);
        return;
    }
    jsonutil_strcpy(doc, "theme", c->theme, sizeof(c->theme));
    jsonutil_strcpy(doc, "mix", c->mix, sizeof(c->mix));
    jsonutil_strcpy(doc, "peer", c->peer, sizeof(c->peer));
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "setup");
    if (cJSON_IsObject(s))
        c->setup = cJSON_Duplicate(s, 1);
    cJSON_Delete(doc);
}

int config_save(const char *dir, const struct config *c, struct ft_err *err)
{
    char d[512], path[600];
    config_dir(dir, d, sizeof(d));
    /* Create the directory (and its parent) if needed. */
    char parent[512];
    snprintf(parent, sizeof(parent), "%s", d);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        mkdir(parent, 0755);
    }
    if (mkdir(d, 0755) < 0 && errno != EEXIST)
        return ft_err_set(err, -errno, "%s: cannot create: %s", d, strerror(errno));
    snprintf(path, sizeof(path), "%s/config.json", d);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "theme", c->theme);
    cJSON_AddStringToObject(doc, "mix", c->mix);
    cJSON_AddStringToObject(doc, "peer", c->peer);
    if (c->setup)
        cJSON_AddItemToObject(doc, "setup", cJSON_Duplicate(c->setup, 1));
    int rc = jsonutil_save(path, doc, true, err);
    cJSON_Delete(doc);
    return rc;
}

void config_free(struct config *c)
{
    cJSON_Delete(c->setup);
    c->setup = NULL;
}
