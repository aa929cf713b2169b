/* pagebuf: large data buffers straight from the kernel (anonymous mmap: page-aligned,
 * zeroed, given back on free). malloc would keep them: once glibc has freed one mmapped
 * chunk it raises its mmap threshold to that size (mallopt(3), M_MMAP_THRESHOLD), so the
 * next multi-MiB buffers come from per-thread arenas and stay resident after free; a
 * long-running agent grew by one buffer per arena (up to 8 per core). */
#ifndef PAGEBUF_H
#define PAGEBUF_H

#include <stddef.h>

/* len bytes of zeroed memory, or NULL (errno set). */
void *pagebuf_alloc(size_t len);
/* Give it back (p from pagebuf_alloc with the same len; NULL is fine). */
void pagebuf_free(void *p, size_t len);

#endif
