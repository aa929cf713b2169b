/* app_doctor: the doctor's thread and its report's lines. */
#include "tui/app_doctor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "text/doctor_text.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void destroy(struct app_doctor *d)
{
    if (d->r)
        doctor_run_free(d->r);
    free(d->r);
    for (int i = 0; i < d->nlines; i++)
        free(d->lines[i]);
    free(d->lines);
    free(d);
}

static void release(struct app_doctor *d)
{
    if (atomic_fetch_sub(&d->refs, 1) == 1)
        destroy(d);
}

static void *main_thread(void *arg)
{
    struct app_doctor *d = arg;
    struct ft_err err = {0};
    d->r = xalloc_zero(1, sizeof(*d->r));
    d->rc = doctor_run(&d->o, d->r, &err);
    if (d->rc < 0)
        snprintf(d->error, sizeof(d->error), "%s", err.msg);
    atomic_store(&d->finished, true);
    release(d);
    return NULL;
}

int app_doctor_start(const char *peer, const char *key_file, const char *rdma,
                     struct app_doctor **out, struct ft_err *err)
{
    *out = NULL;
    if (!peer || !peer[0])
        return ft_err_set(err, -EINVAL,
                          "the doctor compares this end with a `fabtop serve` elsewhere: set "
                          "the Peer field first");
    struct app_doctor *d = xalloc_zero(1, sizeof(*d));
    snprintf(d->peer, sizeof(d->peer), "%s", peer);
    snprintf(d->key_file, sizeof(d->key_file), "%s", key_file ? key_file : "");
    d->port = 1;
    if (rdma && rdma[0]) {
        snprintf(d->device, sizeof(d->device), "%s", rdma);
        char *colon = strchr(d->device, ':');
        if (colon) {
            d->port = atoi(colon + 1) > 0 ? atoi(colon + 1) : 1;
            *colon = '\0';
        }
    }
    d->o = (struct doctor_run_opts){.peer = d->peer,
                                    .key_file = d->key_file[0] ? d->key_file : NULL,
                                    .device = d->device[0] ? d->device : NULL,
                                    .port = d->port,
                                    .gid_index = -1,
                                    .dscp = 26};
    d->start_ns = now_ns();
    atomic_store(&d->refs, 2);
    if (pthread_create(&d->thr, NULL, main_thread, d) != 0) {
        free(d);
        return ft_err_set(err, -EAGAIN, "cannot start the doctor's thread");
    }
    *out = d;
    return 0;
}

/* The report's lines, split at newlines. */
static void split(struct app_doctor *d)
{
    struct strbuf sb;
    strbuf_init(&sb);
    doctor_text(d->r, &sb);
    for (char *p = sb.s; *p;) {
        char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        d->lines = xalloc_resize(d->lines, (size_t)(d->nlines + 1) * sizeof(*d->lines));
        d->lines[d->nlines] = xalloc_zero(1, n + 1);
        memcpy(d->lines[d->nlines++], p, n);
        p += n + (nl ? 1 : 0);
    }
    strbuf_free(&sb);
}

bool app_doctor_poll(struct app_doctor *d)
{
    if (!d)
        return false;
    if (d->joined)
        return true;
    if (!atomic_load(&d->finished))
        return false;
    pthread_join(d->thr, NULL);
    d->joined = true;
    if (d->rc == 0)
        split(d);
    return true;
}

double app_doctor_elapsed_s(const struct app_doctor *d)
{
    return (now_ns() - d->start_ns) / 1e9;
}

void app_doctor_free(struct app_doctor *d)
{
    if (!d)
        return;
    if (!d->joined) {
        if (atomic_load(&d->finished)) {
            pthread_join(d->thr, NULL);
        } else {
            pthread_detach(d->thr);
            release(d); /* the thread frees d when it ends */
            return;
        }
    }
    release(d);
}
