/* path_text: the run summary's path lines: the path's class with its evidence, the
 * transport's own RTT quiet against loaded, both ends' queues, the verdict on where the
 * queue was and the warnings for tightly coupled flows over a wide-area path. No curses. */
#ifndef PATH_TEXT_H
#define PATH_TEXT_H

#include "common/strbuf.h"
#include "engine/results/results_model.h"

void path_text(struct strbuf *sb, const struct results_path *p);

#endif
