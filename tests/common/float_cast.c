/* float_cast: converts a double out of int's range, which the sanitizer build must report
 * and stop on (GCC's -fsanitize=undefined leaves float-cast-overflow out; FabtopFlags.cmake
 * names it). Registered only in that build: ctest passes when the report appears. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    double d = strtod(argc > 1 ? argv[1] : "1e300", NULL);
    int i = (int)d;
    printf("converted to %d: float-cast-overflow was not caught\n", i);
    return 0;
}
