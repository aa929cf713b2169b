/* views: the registry of explorer views. */
#include "tui/views.h"

const struct view_ops *const app_views[VIEW_COUNT] = {
    [VIEW_TOPO] = &view_topo,       [VIEW_SETUP] = &view_setup, [VIEW_LIVE] = &view_live,
    [VIEW_RESULTS] = &view_results, [VIEW_HELP] = &view_help,   [VIEW_FABRIC] = &view_fabric,
    [VIEW_SWEEP] = &view_sweep,
};
