/* fuzz_util: what the libFuzzer targets share: the input as a file the loaders open by
 * path (a memfd, "/proc/self/fd/N", so nothing touches the disk), as a NUL-terminated
 * string, or split in two at its first NUL; a check that aborts with one line (libFuzzer
 * then saves the input as a crash); and the topology work `fabtop topo` does on a file. */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Write bytes to slot's memfd (slots 0 and 1) and return its path. */
const char *fuzz_file(int slot, const void *data, size_t size);
/* A malloc'd, NUL-terminated copy of the input. */
char *fuzz_str(const uint8_t *data, size_t size);
/* Split at the first NUL: *a is what comes before it, *b what comes after (NULL when the
 * input has no NUL). Both malloc'd and NUL-terminated; free *a and *b. */
void fuzz_split(const uint8_t *data, size_t size, char **a, char **b);
/* A directory of this process's own (removed at exit) holding name with these bytes. */
const char *fuzz_dir_with(const char *name, const void *data, size_t size);
/* The first non-blank byte of the input (after a UTF-8 byte order mark), or 0. */
int fuzz_first_byte(const uint8_t *data, size_t size);

/* Abort with "fuzz: MESSAGE" on stderr unless ok: a property of the code is broken. */
void fuzz_require(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* doc printed compactly (caller frees with cJSON_free). */
char *fuzz_print(const cJSON *doc);
/* Send stdout to /dev/null (the command's own text goes there; libFuzzer uses stderr). */
void fuzz_quiet_stdout(void);

/* What `fabtop topo --input FILE --fabric --lint --matrix --json` does with a file: load
 * it, compute the affinity matrix, run lint, build the JSON document and every text view;
 * then the round trip: the saved snapshot must load again, and saving what was loaded from
 * it must give the same document (load -> save -> load -> save). Returns whether the
 * file loaded. */
bool fuzz_topo_file(const char *path);

#endif
