/* setup_model: the setup view's model choices as text (sizes, refusal, command line). */
#include "tui/setup_model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void setup_model_fmt_bytes(char *buf, size_t len, uint64_t b)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (b < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", b);
        return;
    }
    double v = (double)b;
    int u = -1;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%.4g %s", v, units[u]);
}

/* Add head, then more when the line still fits in width; then the newline. */
static void line(struct strbuf *sb, int width, const char *head, const char *more)
{
    strbuf_printf(sb, "%.*s", width, head);
    if (more[0] && (int)(strlen(head) + strlen(more)) <= width)
        strbuf_add(sb, more);
    strbuf_add(sb, "\n");
}

int setup_model_sizes_text(const struct model_config *m, const struct model_layout *l,
                           const char *transport, int width, struct strbuf *sb,
                           struct model_sizes *out)
{
    struct model_sizes local, *s = out ? out : &local;
    struct ft_err err = {0};
    int rc = model_size_compute(m, l, s, &err);
    if (rc < 0) {
        strbuf_printf(sb, "refused: %s\n", err.msg);
        return rc;
    }
    char a[32], b[32], c[32], head[256], more[256];
    setup_model_fmt_bytes(a, sizeof(a), s->kv_token);
    setup_model_fmt_bytes(b, sizeof(b), s->kv_token_rank);
    snprintf(head, sizeof(head), "KV per token %s, per rank %s", a, b);
    if (m->mla)
        snprintf(more, sizeof(more), " (the whole latent on every rank)");
    else
        snprintf(more, sizeof(more), " (%ld KV head%s per rank%s)", s->kv_heads_rank,
                 s->kv_heads_rank == 1 ? "" : "s", s->kv_replicated ? ", replicated" : "");
    line(sb, width, head, more);

    setup_model_fmt_bytes(a, sizeof(a), s->desc_bytes);
    setup_model_fmt_bytes(b, sizeof(b), s->kv_request_rank);
    snprintf(head, sizeof(head), "Per descriptor %s %s; a prompt: %" PRIu64 " of them", a,
             s->kv_layout == MODEL_KV_LAYER_KV_PAGE ? "(layer, K or V, page)" : "(layer, page)",
             s->descs);
    snprintf(more, sizeof(more), ", %s", b);
    line(sb, width, head, more);

    if (l->tp > 1) {
        setup_model_fmt_bytes(a, sizeof(a), s->tp_decode);
        setup_model_fmt_bytes(b, sizeof(b), s->tp_prefill);
        snprintf(head, sizeof(head), "All-reduce %s per decode (%ld a step), prefill %s", a,
                 s->tp_allreduces, b);
        more[0] = '\0';
        if (strcmp(transport, "nccl")) {
            setup_model_fmt_bytes(c, sizeof(c), s->ring_decode_chunk);
            snprintf(more, sizeof(more), "; ring %d x %s", s->ring_steps, c);
        }
        line(sb, width, head, more);
    } else {
        line(sb, width, "All-reduce: none at TP 1 (one rank holds every head)", "");
    }
    return 0;
}

void setup_model_command(const char *model, const struct model_layout *l, const char *transport,
                         struct strbuf *sb)
{
    struct model_layout d;
    model_size_layout_defaults(&d);
    strbuf_printf(sb, "fabtop run --model %s", model);
    if (l->tp != d.tp)
        strbuf_printf(sb, " --tp %ld", l->tp);
    if (l->pp != d.pp)
        strbuf_printf(sb, " --pp %ld", l->pp);
    if (l->ep != d.ep)
        strbuf_printf(sb, " --ep %ld", l->ep);
    if (l->batch != d.batch)
        strbuf_printf(sb, " --batch %ld", l->batch);
    if (l->context != d.context)
        strbuf_printf(sb, " --context %ld", l->context);
    if (l->prompt != d.prompt)
        strbuf_printf(sb, " --prompt %ld", l->prompt);
    if (l->page != d.page)
        strbuf_printf(sb, " --page %ld", l->page);
    if (l->dtype != MODEL_DTYPE_AUTO)
        strbuf_printf(sb, " --dtype %s", l->dtype == MODEL_DTYPE_FP8 ? "fp8" : "bf16");
    if (l->engine != d.engine)
        strbuf_printf(sb, " --engine %s", model_size_engine_str(l->engine));
    strbuf_printf(sb, " --transport %s", transport);
}
