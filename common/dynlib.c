/* dynlib: dlopen with a readable reason when a library is missing. */
#include "common/dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

int dynlib_open(struct dynlib *dl, const char *const *candidates)
{
    memset(dl, 0, sizeof(*dl));
    size_t used = 0;
    for (const char *const *c = candidates; *c; c++) {
        dlerror();
        void *h = dlopen(*c, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            dl->handle = h;
            snprintf(dl->path, sizeof(dl->path), "%s", *c);
            dl->why[0] = '\0';
            return 0;
        }
        const char *e = dlerror();
        if (used < sizeof(dl->why)) {
            int n = snprintf(dl->why + used, sizeof(dl->why) - used, "%s%s", used ? "; " : "",
                             e ? e : *c);
            if (n > 0)
                used += (size_t)n;
        }
    }
    return -ELIBACC;
}

void *dynlib_sym(struct dynlib *dl, const char *name)
{
    if (!dl->handle)
        return NULL;
    dlerror();
    void *p = dlsym(dl->handle, name);
    if (!p) {
        const char *e = dlerror();
        snprintf(dl->why, sizeof(dl->why), "%s: symbol %s missing (%s)", dl->path, name,
                 e ? e : "?");
    }
    return p;
}

void dynlib_close(struct dynlib *dl)
{
    if (dl->handle)
        dlclose(dl->handle);
    dl->handle = NULL;
}
