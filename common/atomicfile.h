/* atomicfile: write a whole file so that readers see the old or the new content,
 * never a torn one (temporary file in the same directory, fsync, rename). */
#ifndef ATOMICFILE_H
#define ATOMICFILE_H

#include <stddef.h>

#include "common/ft_err.h"

int atomicfile_write(const char *path, const void *data, size_t len, struct ft_err *err);

#endif
