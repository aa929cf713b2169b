/* fsutil: small, careful readers for sysfs/procfs-style files under a root directory
 * ("/" live, or a captured tree), so every reader can run against test fixtures. */
#ifndef FSUTIL_H
#define FSUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Build "root/rel" (rel may start with '/'); returns -ENAMETOOLONG if it does not fit. */
int fsutil_path(char *out, size_t outlen, const char *root, const char *rel);

/* Read a whole small file (at most len-1 bytes) and strip trailing white space.
 * Returns the length, or -errno. */
int fsutil_read(const char *root, const char *rel, char *buf, size_t len);

/* Read a file holding one unsigned integer (decimal, or 0x hex).
 * Returns 0, -errno, or -EINVAL when the text is not a number (e.g. "N/A (no PMA)"). */
int fsutil_read_u64(const char *root, const char *rel, uint64_t *out);

/* Read a symlink's last path component (e.g. the driver name). Returns length or -errno. */
int fsutil_link_base(const char *root, const char *rel, char *buf, size_t len);

/* List a directory's entries (no "." or ".."), sorted by name with numbers compared
 * numerically. On success *names is a NULL-terminated array to free with fsutil_free_list.
 * Returns the count or -errno. */
int fsutil_list(const char *root, const char *rel, char ***names);
void fsutil_free_list(char **names);

/* Add the names of dir's *.json files, without ".json" and after prefix ("" or "sub/"), to
 * the NULL-terminated list *names of *count entries, skipping names already there (the first
 * directory of a search path wins). */
void fsutil_add_json_names(const char *dir, const char *prefix, char ***names, int *count);

/* Is there anything at root/rel? */
int fsutil_exists(const char *root, const char *rel);

/* Parse an unsigned integer written in decimal or 0x hex; -EINVAL if s is not one. */
int fsutil_parse_u64(const char *s, uint64_t *out);

#endif
