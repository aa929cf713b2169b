/* fabtop-sweep: the entry point (fabtop sweep executes it under mpirun or srun). */
#include "sweep/sweep_main.h"

int main(int argc, char **argv)
{
    return sweep_main(argc, argv, FABTOP_VERSION);
}
