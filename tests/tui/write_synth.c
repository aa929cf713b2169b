/* write_synth: writes the synthetic topology of tests/topology/synth_xml.h (two GPUs, one
 * InfiniBand HCA, hwloc v2 XML, or v1 with --v1) to a file, for the shell tests that start
 * fabtop on it. */
#include <stdio.h>
#include <string.h>

#include "tests/topology/synth_xml.h"

int main(int argc, char **argv)
{
    int v1 = argc > 2 && !strcmp(argv[1], "--v1");
    const char *path = argv[argc - 1];
    if (argc < 2 || argc > 3 || (argc == 3 && !v1)) {
        fprintf(stderr, "usage: %s [--v1] FILE\n", argv[0]);
        return 64;
    }
    FILE *f = fopen(path, "w");
    if (!f || fputs(v1 ? synth_v1_xml : synth_v2_xml, f) < 0 || fclose(f) != 0) {
        perror(path);
        return 73;
    }
    return 0;
}
