/* flow_state: what a flow's workers are doing and how the flow is doing, as the runner sets them
 * (engine/flow/flow.h) and the snapshots carry them (struct snap_flow's state and status). */
#ifndef FLOW_STATE_H
#define FLOW_STATE_H

/* What the flow's workers should be doing now. */
enum flow_state {
    FLOW_ST_SETUP = 0, /* connections being made */
    FLOW_ST_WARMUP,    /* run, do not record */
    FLOW_ST_MEASURE,   /* run and record */
    FLOW_ST_PAUSE,     /* between size points: finish the current operation, then wait */
    FLOW_ST_STOP,      /* leave */
};

enum flow_status { FLOW_PENDING = 0, FLOW_RUNNING, FLOW_OK, FLOW_FAILED, FLOW_STOPPED };

#endif
