/* app_drill: a fault drill (engine/run/drill.h) that the explorer runs in a thread of its own,
 * so that the event loop never waits on it: the drill's progress callback leaves the latest
 * "fabtop-drill" document under a mutex, the loop takes it (app_drill_poll) into the results
 * model the live view draws, and the end brings the status and the error. Which faults the
 * explorer carries out itself (app_drill_check), and the `fabtop drill` line for those it
 * cannot. Pure state, no curses. */
#ifndef APP_DRILL_H
#define APP_DRILL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "common/strbuf.h"
#include "engine/flow/mix.h"
#include "engine/results/results_drill.h"
#include "engine/run/drill.h"

/* Seconds into each repetition the explorer injects its fault (fabtop drill's --at). */
#define APP_DRILL_AT_S 1.0
/* The fault's length (--for) and the repetitions (--repeat) the setup form takes. */
#define APP_DRILL_MIN_FOR_S  0.1
#define APP_DRILL_MAX_FOR_S  30.0
#define APP_DRILL_MAX_REPEAT 100

/* The recovery policy a drilled flow without one gets: 20 attempts, the wait doubling from
 * 20 to 300 ms, recovered within 8 s of the detection; a fault longer than 4 s lengthens the
 * deadline to its length + 4 s, with enough attempts at 300 ms to reach it. */
#define APP_DRILL_ATTEMPTS       20
#define APP_DRILL_BACKOFF_MIN_MS 20.0
#define APP_DRILL_BACKOFF_MAX_MS 300.0
#define APP_DRILL_DEADLINE_S     8.0

struct app_drill_opts {
    const struct mix *mix; /* copied; its timed flows without a "recover" policy get the
                            * default (the background flows run as load) */
    enum drill_fault fault;
    double for_s;
    int repeat;
    const char *peer;      /* HOST[:PORT] of a `fabtop serve`; NULL: the in-process agent */
    const char *key_file;  /* for peer; NULL: the default lookup */
    const char *agent_exe; /* rank-loss: the fabtop that serves as the victim agent */
};

struct app_drill {
    /* Set before the thread starts; read-only after. */
    struct mix mix;            /* as drilled, with the policies given */
    int drilled;               /* its timed flows (the foreground; the background is load) */
    int given;                 /* of those, the ones without a policy: given the default */
    struct mix_recover policy; /* the default given (when given > 0) */
    enum drill_fault fault;
    double at_s, for_s;
    int repeat;
    char peer[128], key_file[512]; /* "" = the in-process agent, the default key */
    char agent_exe[4096];          /* rank-loss: the victim agent's fabtop */
    uint64_t start_ns;
    pthread_t thr;

    atomic_bool cancel; /* app_drill_stop: the drill's own check (drill_opts.cancel) */
    /* Shared with the drill's thread: under lock. */
    pthread_mutex_t lock;
    cJSON *latest;         /* the newest document (owned), NULL before the first repetition */
    unsigned gen;          /* bumped with every document and at the end */
    uint64_t rep_ns;       /* when the current repetition started (the last document) */
    bool ended;            /* drill_run returned */
    int ended_rc;          /* its 0 / -errno ... */
    char ended_error[300]; /* ... and message */

    /* The loop's own (app_drill_poll): what the views read. */
    bool joined; /* the thread, once it has ended */
    unsigned seen_gen;
    cJSON *json;                  /* the latest document (owned) */
    struct results_drill_doc doc; /* json as the results model, when doc_ok */
    bool doc_ok;
    char doc_error[300]; /* why json could not be read */
    uint64_t cur_rep_ns; /* rep_ns as last seen */
    bool done;
    int rc;
    char error[300];
};

/* Can the explorer carry out the fault on the mix, against peer (NULL: the in-process agent;
 * rank-loss: its own victim)? It has no network namespace and names no netdev, so of the
 * kinds of `fabtop drill` it runs peer-stall, peer-kill, rank-loss and the agent's blackhole
 * (verbs ping-pongs: their queue pairs to the error state). 0; -EINVAL with
 * drill_check_mix_fault's line (the mix cannot take the fault at all) or with why not with
 * this peer; -EOPNOTSUPP when the mix takes it but only `fabtop drill` with arguments the
 * explorer does not have can carry it out (a link-down; a blackhole of TCP flows): the line
 * says which (app_drill_command writes that command). */
int app_drill_check(const struct mix *m, enum drill_fault fault, const char *peer,
                    struct ft_err *err);
/* The `fabtop drill` command line of the fault on mix_arg (a preset's name or a mix file, "~/"
 * for $HOME), words quoted for a POSIX shell where they need it: what the explorer does not know in
 * capitals (--netns NAME, or for a verbs link-down --device DEV --owned; --data-peer HOST;
 * --peer HOST without a peer: the agent across the faulted path). */
void app_drill_command(struct strbuf *sb, const char *mix_arg, const struct mix *m,
                       enum drill_fault fault, double for_s, int repeat, const char *peer,
                       const char *key_file);

/* Give the timed (foreground) flows of m without a "recover" policy the default one for a
 * fault of for_s seconds (into *policy): the number given, their count in *drilled. */
int app_drill_give_policy(struct mix *m, double for_s, struct mix_recover *policy, int *drilled);
/* Write m as the explorer drills it (app_drill_give_policy) to path, atomically: the mix of
 * an app_drill_command line. 0 or -errno with the message. */
int app_drill_save_mix(const struct mix *m, double for_s, const char *path, struct ft_err *err);

/* Copy the mix (giving the default policy where there is none) and start drill_run in a
 * thread: 0, or -errno with err (app_drill_check's, or the timing's message). */
int app_drill_start(const struct app_drill_opts *o, struct app_drill **out, struct ft_err *err);
/* Take what the drill's thread published since the last call (a repetition's document, the
 * end): true when something changed. */
bool app_drill_poll(struct app_drill *d);
/* Still running, as the last app_drill_poll saw it. */
bool app_drill_running(const struct app_drill *d);
/* The repetition running now (1-based), or 0 when the drill has ended. */
int app_drill_current(const struct app_drill *d);
/* Seconds since the running repetition started (as the last app_drill_poll saw). */
double app_drill_rep_elapsed_s(const struct app_drill *d);
/* Stop the drill: the repetition running is dropped, the ones done are kept (its end then
 * comes through app_drill_poll with -ECANCELED). */
void app_drill_stop(struct app_drill *d);
/* Stop the drill if it runs, wait for its thread, then free it all. */
void app_drill_free(struct app_drill *d);

#endif
