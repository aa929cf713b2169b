/* sweep_run: fabtop-sweep after the rendezvous passed: rank 0 builds the sweep's document
 * from every rank's record, runs the rounds over the control channel (engine/rack/), prints
 * the heat maps and verdicts and saves the document; the others serve until rank 0 says the
 * sweep is over. No MPI here: sweep_main.c decides how the process ends. */
#ifndef SWEEP_RUN_H
#define SWEEP_RUN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli/cli_sweep.h"
#include "engine/launch/launch_env.h"
#include "engine/launch/launch_groups.h"
#include "engine/launch/launch_record.h"
#include "engine/peer/channel.h"

/* The address rank r's agent listens on and its traffic leaves from (its rail's first
 * address; "" when it has none: all addresses, and the host name to reach it). */
const char *sweep_run_addr(const struct launch_record *r);

/* The rails rank r tests on (bit i: NIC i): launch_rails of its local rank, those of its
 * listed NICs with an address (its own rail always); with --listen (listen set) its one
 * rail, at that address. */
uint32_t sweep_run_rails(const struct launch_record *r, bool listen);

/* Rank 0: the sweep. sites_text: --sites FILE's text (NULL: none), for every rank's agent, so
 * that each test's path class knows the sites. Returns the exit status: 0 all ok, 2 a test or
 * rank failed, 130 interrupted (the document is saved in every case). */
int sweep_run_conduct(const struct sweep_args *a, const struct launch_env *env,
                      const struct launch_record *recs, int n, const struct launch_groups *g,
                      const char *sites_text, const struct channel_key *key,
                      const _Atomic bool *interrupt);

#endif
