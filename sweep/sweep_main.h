/* sweep_main: fabtop-sweep's body: launcher check, rendezvous, refusals, the plan's header.
 * version is the fabtop version this rank announces (FABTOP_VERSION in fabtop-sweep; the
 * tests build a second binary announcing another, to see a mismatch refused). */
#ifndef SWEEP_MAIN_H
#define SWEEP_MAIN_H

int sweep_main(int argc, char **argv, const char *version);

#endif
