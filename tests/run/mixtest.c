/* mixtest: mix and results helpers shared by the tests. */
#include "tests/run/mixtest.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonutil.h"
#include "engine/xport/xport.h"

struct mix mixtest_parse(const char *text)
{
    struct mix m;
    cJSON *doc;
    struct ft_err err = {0};
    if (jsonutil_parse(text, strlen(text), "mix", &doc, &err) < 0)
        fail_msg("%s", err.msg);
    if (mix_from_json(doc, "mix", &m, &err) < 0 || xport_check_params(&m, &err) < 0)
        fail_msg("%s", err.msg);
    cJSON_Delete(doc);
    return m;
}

const cJSON *mixtest_flow(const cJSON *res, int phase, const char *name)
{
    const cJSON *ph = cJSON_GetArrayItem(cJSON_GetObjectItem(res, "phases"), phase);
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(ph, "flows"))
    {
        const char *fn = jsonutil_str(f, "name");
        if (fn && !strcmp(fn, name))
            return f;
    }
    return NULL;
}

int mixtest_fabric(struct runner *r, struct fabric_snap *v, struct runner_snapshot **sn)
{
    *sn = runner_snapshot(r);
    if (!(*sn)->fabric) {
        runner_snapshot_release(*sn);
        *sn = NULL;
        memset(v, 0, sizeof(*v));
        return -ENOENT;
    }
    *v = *(*sn)->fabric;
    return 0;
}

int mixtest_tmp_home(char *dir, size_t len, const char *name)
{
    snprintf(dir, len, "/tmp/fabtop-%s-XXXXXX", name);
    if (!mkdtemp(dir))
        return -1;
    char xdg[256];
    snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
    return setenv("XDG_CONFIG_HOME", xdg, 1);
}

int mixtest_tmp_remove(const char *dir)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd);
}
