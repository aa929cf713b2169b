/* nccl_env: the process-wide NCCL environment. NCCL reads NCCL_DEBUG* when its logging
 * (re)initialises and NCCL_ALGO/NCCL_PROTO when a communicator initialises; every change
 * happens under nccl_env_lock and the user's own values are put back afterwards. */
#define _GNU_SOURCE
#include "engine/xport/nccl/xport_nccl_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

extern char **environ;

/* NCCL reads NCCL_DEBUG* when its logging (re)initialises and NCCL_ALGO/NCCL_PROTO when a
 * communicator initialises; the environment is process-wide, so every change happens under
 * this lock, and the user's own values are put back afterwards. */
pthread_mutex_t nccl_env_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *const debug_vars[] = {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"};
static bool user_saved;
static char *user_val[3];
static unsigned log_seq;

static void save_user_env(void)
{
    if (user_saved)
        return;
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(debug_vars[i]);
        user_val[i] = v ? xalloc_strdup(v) : NULL;
    }
    user_saved = true;
}

void nccl_env_restore_var(const char *name, const char *val)
{
    if (val)
        setenv(name, val, 1);
    else
        unsetenv(name);
}

void nccl_env_log_file_name(char *buf, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, len, "%s/fabtop-nccl.%d.%u.log", tmp && *tmp ? tmp : "/tmp", (int)getpid(),
             ++log_seq);
}

/* Send NCCL's INFO lines (INIT, and TUNING when asked) to a fresh file. nccl_env_lock held.
 * Without ncclResetDebugInit the settings only take effect before NCCL's first log line. */
void nccl_env_log_on(const struct cudart *a, const char *path, bool tuning)
{
    save_user_env();
    setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_SUBSYS", tuning ? "INIT,TUNING" : "INIT", 1);
    setenv("NCCL_DEBUG_FILE", path, 1);
    if (a->ncclResetDebugInit)
        a->ncclResetDebugInit();
}

/* Back to the user's logging (usually none): TUNING prints a line for every operation, which
 * would distort the timing. nccl_env_lock held. */
void nccl_env_log_off(const struct cudart *a)
{
    if (!a->ncclResetDebugInit)
        return; /* cannot switch it off: leave INIT-only logging as it is */
    for (int i = 0; i < 3; i++)
        nccl_env_restore_var(debug_vars[i], user_val[i]);
    a->ncclResetDebugInit();
}

bool nccl_env_user_logs_tuning(void)
{
    save_user_env();
    return user_val[0] && (!strcasecmp(user_val[0], "INFO") || !strcasecmp(user_val[0], "TRACE")) &&
           user_val[1] && (strcasestr(user_val[1], "TUNING") || strcasestr(user_val[1], "ALL"));
}
