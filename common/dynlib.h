/* dynlib: load an optional vendor library (CUDA runtime, NVML, NCCL) at run time, so
 * that one build starts everywhere and says plainly what is missing and why. */
#ifndef DYNLIB_H
#define DYNLIB_H

struct dynlib {
    void *handle;   /* dlopen handle, NULL when unavailable */
    char path[256]; /* the name or path that loaded */
    char why[512];  /* why it is unavailable (dlerror text), "" when loaded */
};

/* Try each candidate name in order (NULL-terminated). Returns 0 or -ELIBACC. */
int dynlib_open(struct dynlib *dl, const char *const *candidates);

/* Resolve a symbol; returns NULL (and fills dl->why) when absent. */
void *dynlib_sym(struct dynlib *dl, const char *name);

void dynlib_close(struct dynlib *dl);

#endif
