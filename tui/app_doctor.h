/* app_doctor: the handshake doctor (engine/run/doctor_run.h) that the explorer runs on a
 * thread of its own against the setup view's peer, so that the event loop never waits on its
 * exchanges (up to a minute with a failing queue-pair walk); its report as the lines `fabtop
 * doctor` prints, for the setup view's doctor panel. Pure state, no curses. */
#ifndef APP_DOCTOR_H
#define APP_DOCTOR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/ft_err.h"
#include "engine/run/doctor_run.h"

struct app_doctor {
    /* Set before the thread starts; read-only after. */
    char peer[128], key_file[512], device[64];
    int port;
    struct doctor_run_opts o;
    uint64_t start_ns;
    pthread_t thr;
    /* The thread's: rc, error and r are written before finished is set. */
    atomic_bool finished;
    atomic_int refs; /* the thread and the explorer: the last to let go frees */
    int rc;          /* doctor_run's 0 / -errno ... */
    char error[300]; /* ... and message */
    struct doctor_run *r;
    /* The loop's own, once finished (app_doctor_poll). */
    bool joined;
    char **lines; /* doctor_text's report, one line each (NULL on failure) */
    int nlines;
};

/* Start the doctor against peer (HOST[:PORT] of a `fabtop serve`) with key_file ("" or NULL:
 * the default lookup); rdma "mlx5_0:1" (or "" for none) adds the RDMA port's checks and the
 * queue-pair walk. -errno with a message when there is no peer or no thread. */
int app_doctor_start(const char *peer, const char *key_file, const char *rdma,
                     struct app_doctor **out, struct ft_err *err);
/* True once the doctor has ended: its thread joined, rc and lines (or error) ready. */
bool app_doctor_poll(struct app_doctor *d);
/* Seconds since the start. */
double app_doctor_elapsed_s(const struct app_doctor *d);
/* Let go of d: freed now when its thread has ended, else by the thread when it ends (the
 * explorer never waits for it). NULL is fine. */
void app_doctor_free(struct app_doctor *d);

#endif
