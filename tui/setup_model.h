/* setup_model: the setup view's model choices, pure (no curses): the layout a choice of
 * model and knobs makes, the derived sizes as short lines with units (KV per token, per
 * descriptor, all-reduce) or the one-line refusal, and the `fabtop run --model` line. */
#ifndef SETUP_MODEL_H
#define SETUP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"
#include "engine/model/model_config.h"
#include "engine/model/model_size.h"

/* "320 KiB", "68.62 KiB", "512 B": bytes in the largest binary unit under them. */
void setup_model_fmt_bytes(char *buf, size_t len, uint64_t b);
/* The sizes of m served as l into sb, at most three lines of at most width columns each
 * ending in '\n'; 0. A layout the model cannot take: -EINVAL (or -EOVERFLOW) and one line,
 * "refused: ..." naming the option. s gets the sizes (may be NULL). */
int setup_model_sizes_text(const struct model_config *m, const struct model_layout *l,
                           const char *transport, int width, struct strbuf *sb,
                           struct model_sizes *s);
/* The `fabtop run` line of this choice: "fabtop run --model NAME" plus a flag for each
 * value that is not model_size_layout_defaults' (and --transport always). */
void setup_model_command(const char *model, const struct model_layout *l, const char *transport,
                         struct strbuf *sb);

#endif
