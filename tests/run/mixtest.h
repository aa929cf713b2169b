/* mixtest: what many tests do with mixes and results: parse a mix from JSON text (the test
 * fails with the parser's message when it does not parse), and find a flow of a phase in a
 * results document, look at a run's simulated fabric, and give a test a private directory
 * in which only the shipped presets are found. */
#ifndef MIXTEST_H
#define MIXTEST_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "engine/flow/mix.h"
#include "engine/run/runner.h"

/* The mix in text; fails the running cmocka test when it is not one. */
struct mix mixtest_parse(const char *text);
/* Flow name of phase number phase in results res, or NULL. */
const cJSON *mixtest_flow(const cJSON *res, int phase, const char *name);

/* The simulated fabric of r's latest snapshot: 0 with *v a copy of it whose arrays belong to
 * *sn (release it with runner_snapshot_release when done), or -ENOENT (none; *sn NULL). */
int mixtest_fabric(struct runner *r, struct fabric_snap *v, struct runner_snapshot **sn);

/* A new directory /tmp/fabtop-NAME-XXXXXX into dir (len bytes), with XDG_CONFIG_HOME set to
 * its xdg/ so that no mix of the user's is found: 0, or -1. */
int mixtest_tmp_home(char *dir, size_t len, const char *name);
/* Remove dir and everything in it: 0, or the shell's status. */
int mixtest_tmp_remove(const char *dir);

#endif
