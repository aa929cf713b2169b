/* views: the explorer's views, each a const table of functions (struct view_ops in app.h),
 * listed in app_views[] (views.c). */
#ifndef VIEWS_H
#define VIEWS_H

#include "tui/app.h"

extern const struct view_ops view_topo;
extern const struct view_ops view_setup;
extern const struct view_ops view_live;
extern const struct view_ops view_help;
extern const struct view_ops view_results;
extern const struct view_ops view_fabric;
extern const struct view_ops view_sweep;

/* Open the help at the glossary entry for a term or counter name. */
void help_show_term(struct app *a, const char *term);

#endif
