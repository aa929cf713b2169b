/* sweep_other_version: fabtop-sweep announcing another fabtop version (tests/sweep_start only),
 * to start one rank of a job from a second binary and see the rendezvous refuse it. */
#include "sweep/sweep_main.h"

#define OTHER_VERSION "0.0.0-other"

int main(int argc, char **argv)
{
    return sweep_main(argc, argv, OTHER_VERSION);
}
