/* write_doc: writes a test results document for the shell tests:
 * write_doc PATH [mtu=BYTES] [ll=InfiniBand|Ethernet] [fw=VERSION] [size=BYTES]
 *           [neighbour=1] [mix=NAME] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/compare/docs.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: write_doc PATH [key=value...]\n");
        return 64;
    }
    struct doc_opts o;
    doc_defaults(&o);
    for (int i = 2; i < argc; i++) {
        const char *v = strchr(argv[i], '=');
        if (!v) {
            fprintf(stderr, "write_doc: '%s' is not key=value\n", argv[i]);
            return 64;
        }
        v++;
        if (!strncmp(argv[i], "mtu=", 4))
            o.active_mtu = atoi(v);
        else if (!strncmp(argv[i], "ll=", 3))
            o.link_layer = v;
        else if (!strncmp(argv[i], "fw=", 3))
            o.fw = v;
        else if (!strncmp(argv[i], "size=", 5))
            o.size = strtoull(v, NULL, 10);
        else if (!strncmp(argv[i], "neighbour=", 10))
            o.neighbour = atoi(v) != 0;
        else if (!strncmp(argv[i], "mix=", 4))
            o.mix = v;
        else {
            fprintf(stderr, "write_doc: unknown key in '%s'\n", argv[i]);
            return 64;
        }
    }
    return doc_write(&o, argv[1]) == 0 ? 0 : 73;
}
