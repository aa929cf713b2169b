/* fabtop-hwloc-xml: the helper process fabtop runs to parse an untrusted hwloc XML
 * (topo_xmlchild.h); prints the topology as a fabtop snapshot on stdout. */
#include "topology/topo_xmlchild.h"

int main(int argc, char **argv)
{
    return topo_xmlchild_serve(argc, argv);
}
