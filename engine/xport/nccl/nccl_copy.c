/* nccl_copy: the copy flow: host<->GPU cudaMemcpyAsync in lanes of non-blocking streams,
 * NC_COPY_DEPTH copies in flight per lane, one worker per lane. */
#define _GNU_SOURCE
#include "engine/xport/nccl/xport_nccl_int.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

struct nccl_lane {
    int dev, dir; /* CU_MEMCPY_H2D or CU_MEMCPY_D2H */
    cu_stream_t s;
    void *dbuf, *hbuf;
    cu_event_t ev[16][2];
    uint64_t issued[16], size[16];
    int head, inflight;
};

struct nccl_copy {
    int nlanes;
    struct nccl_lane lanes[NC_MAX_LANES];
    uint64_t max_bytes;
    int nthreads;
    pthread_t threads[NC_MAX_LANES];
    bool started[NC_MAX_LANES];
    char err[320];
};

void nccl_copy_lanes(const struct nccl_copy *cp, cJSON *out)
{
    for (int l = 0; l < cp->nlanes; l++) {
        char b[48];
        snprintf(b, sizeof(b), "GPU %d %s", cp->lanes[l].dev,
                 cp->lanes[l].dir == CU_MEMCPY_H2D ? "h2d" : "d2h");
        cJSON_AddItemToArray(out, cJSON_CreateString(b));
    }
}

void nccl_copy_lane_busids(const struct nccl_copy *cp, const struct cudart *a, cJSON *out)
{
    for (int l = 0; l < cp->nlanes; l++) {
        char b[CU_DEVICE_PCI_BUS_ID_LEN] = "";
        if (a->cudaDeviceGetPCIBusId(b, (int)sizeof(b), cp->lanes[l].dev) == 0 && b[0])
            cJSON_AddItemToArray(out, cJSON_CreateString(b));
        else
            cJSON_AddItemToArray(out, cJSON_CreateNull());
    }
}

void *nccl_copy_main(void *arg)
{
    struct flow_worker *w = arg;
    struct flow_rt *f = w->flow;
    struct nccl_flow *x = f->xdata;
    struct nccl_copy *cp = x->copy;
    const struct cudart *a = x->a;
    uint64_t bound = (uint64_t)(f->fail_bound_s * 1e9);
    flow_worker_begin(w);
    char eb[160];
    int depth = x->prm.depth;
    uint64_t last_done = flow_now_ns();
    bool stopping = false;
    for (;;) {
        bool run = flow_wait_running(w);
        if (!run)
            stopping = true;
        uint64_t size = run ? flow_next_size(w) : 0;
        if (size > cp->max_bytes)
            size = cp->max_bytes;
        bool progressed = false, busy = false;
        for (int l = w->idx; l < cp->nlanes; l += f->nworkers) {
            struct nccl_lane *ln = &cp->lanes[l];
            while (!stopping && ln->inflight < depth) {
                int slot = (ln->head + ln->inflight) % depth;
                void *dst = ln->dir == CU_MEMCPY_H2D ? ln->dbuf : ln->hbuf;
                const void *src = ln->dir == CU_MEMCPY_H2D ? ln->hbuf : ln->dbuf;
                a->cudaEventRecord(ln->ev[slot][0], ln->s);
                cu_err_t e = a->cudaMemcpyAsync(dst, src, (size_t)size, ln->dir, ln->s);
                a->cudaEventRecord(ln->ev[slot][1], ln->s);
                if (e) {
                    flow_fail(f, "nccl copy: cudaMemcpyAsync on GPU %d: %s", ln->dev,
                              cudart_err_str(a, e, eb, sizeof(eb)));
                    return NULL;
                }
                ln->issued[slot] = flow_now_ns();
                ln->size[slot] = size;
                ln->inflight++;
            }
            if (!ln->inflight)
                continue;
            busy = true;
            int slot = ln->head;
            cu_err_t e = a->cudaEventQuery(ln->ev[slot][1]);
            if (e == CU_ERR_NOT_READY) {
                uint64_t due = ln->issued[slot] > last_done ? ln->issued[slot] : last_done;
                if (flow_now_ns() - due > bound) {
                    flow_fail(f,
                              "nccl copy: a %s copy of %llu B on GPU %d did not complete within "
                              "%.2f s",
                              ln->dir == CU_MEMCPY_H2D ? "host-to-device" : "device-to-host",
                              (unsigned long long)ln->size[slot], ln->dev, bound / 1e9);
                    return NULL;
                }
                continue;
            }
            if (e != CU_SUCCESS) {
                flow_fail(f, "nccl copy: GPU %d: %s", ln->dev,
                          cudart_err_str(a, e, eb, sizeof(eb)));
                return NULL;
            }
            float ms = 0;
            a->cudaEventElapsedTime(&ms, ln->ev[slot][0], ln->ev[slot][1]);
            if (!stopping)
                flow_record(w, (uint64_t)llround(ms * 1e6));
            flow_progress(w, ln->dir == CU_MEMCPY_H2D ? ln->size[slot] : 0,
                          ln->dir == CU_MEMCPY_D2H ? ln->size[slot] : 0, 1);
            ln->head = (ln->head + 1) % depth;
            ln->inflight--;
            last_done = flow_now_ns();
            progressed = true;
        }
        if (stopping && !busy)
            break;
        if (!progressed) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

int nccl_copy_setup(struct flow_rt *f, struct nccl_flow *x, struct ft_err *err)
{
    const struct mix_flow *s = f->spec;
    const struct cudart *a = x->a;
    struct nccl_copy *cp = x->copy = xalloc_zero(1, sizeof(*cp));
    f->peer_desc[0] = '\0'; /* copies stay on this host */
    int gpus[NC_MAX_GPUS];
    int n = nccl_coll_pick_gpus(a, x->prm.all_gpus, x->prm.ngpus, x->prm.gpus, gpus, s->name,
                                "on this host", err);
    if (n < 0)
        return n;
    for (int i = 0; i < s->size.n; i++)
        if (s->size.bytes[i] > cp->max_bytes)
            cp->max_bytes = s->size.bytes[i];
    char eb[160];
    for (int g = 0; g < n; g++)
        for (int d = 1; d <= 2; d++) {
            if (!(x->prm.copy_dir & d))
                continue;
            struct nccl_lane *ln = &cp->lanes[cp->nlanes++];
            ln->dev = gpus[g];
            ln->dir = d == 1 ? CU_MEMCPY_H2D : CU_MEMCPY_D2H;
            cu_err_t e = a->cudaSetDevice(ln->dev);
            if (!e)
                e = a->cudaStreamCreateWithFlags(&ln->s, CU_STREAM_NON_BLOCKING);
            if (!e)
                e = a->cudaMalloc(&ln->dbuf, (size_t)cp->max_bytes);
            if (!e && x->prm.pinned)
                e = a->cudaHostAlloc(&ln->hbuf, (size_t)cp->max_bytes, CU_HOST_ALLOC_PORTABLE);
            if (!e && !x->prm.pinned) {
                ln->hbuf = malloc((size_t)cp->max_bytes);
                if (!ln->hbuf)
                    return ft_err_set(err, -ENOMEM,
                                      "flow %s: cannot allocate %llu B of host "
                                      "memory",
                                      s->name, (unsigned long long)cp->max_bytes);
                memset(ln->hbuf, 1, (size_t)cp->max_bytes); /* fault the pages in */
            }
            for (int j = 0; j < x->prm.depth && !e; j++) {
                e = a->cudaEventCreateWithFlags(&ln->ev[j][0], CU_EVENT_DEFAULT);
                if (!e)
                    e = a->cudaEventCreateWithFlags(&ln->ev[j][1], CU_EVENT_DEFAULT);
            }
            if (e)
                return ft_err_set(err, -EIO, "flow %s: GPU %d: %s", s->name, ln->dev,
                                  cudart_err_str(a, e, eb, sizeof(eb)));
        }
    if (f->nworkers > cp->nlanes)
        f->nworkers = cp->nlanes;
    return 0;
}

void nccl_copy_free(struct nccl_flow *x)
{
    struct nccl_copy *cp = x->copy;
    const struct cudart *a = x->a;
    if (!cp)
        return;
    for (int l = 0; l < cp->nlanes; l++) {
        struct nccl_lane *ln = &cp->lanes[l];
        a->cudaSetDevice(ln->dev);
        if (ln->s)
            a->cudaStreamSynchronize(ln->s);
        for (int j = 0; j < 16; j++)
            for (int q = 0; q < 2; q++)
                if (ln->ev[j][q])
                    a->cudaEventDestroy(ln->ev[j][q]);
        if (ln->dbuf)
            a->cudaFree(ln->dbuf);
        if (ln->hbuf) {
            if (x->prm.pinned)
                a->cudaFreeHost(ln->hbuf);
            else
                free(ln->hbuf);
        }
        if (ln->s)
            a->cudaStreamDestroy(ln->s);
    }
    free(cp);
    x->copy = NULL;
}
