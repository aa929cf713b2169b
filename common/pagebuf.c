/* pagebuf: large data buffers from anonymous mmap (see pagebuf.h). */
#include "common/pagebuf.h"

#include <sys/mman.h>

void *pagebuf_alloc(size_t len)
{
    void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void pagebuf_free(void *p, size_t len)
{
    if (p)
        munmap(p, len ? len : 1);
}
