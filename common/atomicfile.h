/* atomicfile: write a whole file so that readers see the old or the new content, never a
 * torn one, and only ever a regular file: devices, FIFOs, sockets and directories are
 * refused; a symlink is followed on purpose (the file it ends at is replaced, the link stays).
 * The temporary file lies in the target's directory with the existing file's mode (a new
 * file: 0666 less the umask); it is fsynced, renamed over the target, and the directory is
 * fsynced. */
#ifndef ATOMICFILE_H
#define ATOMICFILE_H

#include <stddef.h>

#include "common/ft_err.h"

/* Could path be written now? The checks atomicfile_write makes (the path resolves through its
 * symlinks to a regular file or to nothing, in an existing directory; an existing file is
 * writable; the file system has room), and a temporary file created beside the target and
 * removed again. It never opens the target (a FIFO cannot block it), creates nothing and
 * truncates nothing. 0 or -errno with one sentence naming the path. */
int atomicfile_check(const char *path, struct ft_err *err);

/* Write data as the whole content of path (see above). 0 or -errno; on failure the old
 * content, if any, is intact and no temporary file is left. */
int atomicfile_write(const char *path, const void *data, size_t len, struct ft_err *err);

#endif
