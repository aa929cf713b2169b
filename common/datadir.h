/* datadir: the directories fabtop's shipped files (themes, mixes, models, reference figures)
 * are searched in, most personal first: the user's own, then the build tree's sources when
 * this program runs from its build tree, then the prefix this program is installed under,
 * the configured data directory, and $XDG_DATA_DIRS (XDG Base Directory Specification 0.8). */
#ifndef DATADIR_H
#define DATADIR_H

#define DATADIR_MAX 10
#define DATADIR_LEN 512

/* Fill dirs with the directories to search for files of kind sub ("mixes", "themes"), in
 * order, without repeats:
 *   $XDG_CONFIG_HOME/fabtop/SUB (else ~/.config/fabtop/SUB), $XDG_DATA_HOME/fabtop/SUB (else
 *   ~/.local/share/fabtop/SUB); source_dir when exe lies under the build directory this
 *   program was built in; EXEDIR/../share/fabtop/SUB (a relocated install); the configured
 *   DATADIR/fabtop/SUB; each $XDG_DATA_DIRS entry's fabtop/SUB (default /usr/local/share,
 *   /usr/share). exe is the program's path (NULL: /proc/self/exe's target). Returns how many
 *   were written. */
int datadir_search_exe(const char *sub, const char *source_dir, const char *exe,
                       char dirs[DATADIR_MAX][DATADIR_LEN]);
/* The same for this program. */
int datadir_search(const char *sub, const char *source_dir, char dirs[DATADIR_MAX][DATADIR_LEN]);
/* The configured data directory (DATADIR/fabtop, e.g. /usr/share/fabtop) and the build
 * directory, as compiled in. */
const char *datadir_installed(void);
const char *datadir_build_dir(void);

#endif
