/* rack_hello: an MPI program for the rack tests. Each rank prints one line with its rank,
 * the world size, its hostname and its IPv4 address on the rack subnet (argv[1], a CIDR such
 * as 10.79.0.0/24); then the hostnames are gathered at rank 0 (a real exchange through the
 * launcher's transport), which prints how many distinct ones the world has.
 *   rank R size S host H addr A
 *   world S hosts D
 * Exit 64 on a bad argument, 69 when the rank has no address on the subnet. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HELLO_HOST_MAX 64

static int hello_parse_cidr(const char *s, uint32_t *net, uint32_t *mask)
{
    char buf[32];
    const char *slash = strchr(s, '/');
    if (!slash || (size_t)(slash - s) >= sizeof(buf))
        return -1;
    memcpy(buf, s, (size_t)(slash - s));
    buf[slash - s] = '\0';
    char *end = NULL;
    long bits = strtol(slash + 1, &end, 10);
    struct in_addr a;
    if (*end != '\0' || bits < 0 || bits > 32 || inet_pton(AF_INET, buf, &a) != 1)
        return -1;
    *mask = bits == 0 ? 0 : htonl(0xffffffffu << (32 - bits));
    *net = a.s_addr & *mask;
    return 0;
}

/* The first IPv4 address of this host inside net/mask, as text, or -1. */
static int hello_addr_on(uint32_t net, uint32_t mask, char *out, size_t len)
{
    struct ifaddrs *ifs = NULL;
    int rc = -1;
    if (getifaddrs(&ifs) != 0)
        return -1;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        struct in_addr a = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
        if ((a.s_addr & mask) == net && inet_ntop(AF_INET, &a, out, (socklen_t)len)) {
            rc = 0;
            break;
        }
    }
    freeifaddrs(ifs);
    return rc;
}

int main(int argc, char **argv)
{
    uint32_t net = 0, mask = 0;
    if (argc != 2 || hello_parse_cidr(argv[1], &net, &mask) != 0) {
        fprintf(stderr, "rack_hello: usage: rack_hello SUBNET/BITS (like 10.79.0.0/24)\n");
        return 64;
    }
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char host[HELLO_HOST_MAX] = {0};
    if (gethostname(host, sizeof(host) - 1) != 0)
        snprintf(host, sizeof(host), "?");
    char addr[INET_ADDRSTRLEN] = "none";
    int have = hello_addr_on(net, mask, addr, sizeof(addr)) == 0;
    printf("rank %d size %d host %s addr %s\n", rank, size, host, addr);
    fflush(stdout);

    char *all = rank == 0 ? calloc((size_t)size, HELLO_HOST_MAX) : NULL;
    MPI_Gather(host, HELLO_HOST_MAX, MPI_CHAR, all, HELLO_HOST_MAX, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0 && all) {
        int distinct = 0;
        for (int i = 0; i < size; i++) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = strncmp(all + (size_t)i * HELLO_HOST_MAX, all + (size_t)j * HELLO_HOST_MAX,
                               HELLO_HOST_MAX) == 0;
            distinct += !seen;
        }
        printf("world %d hosts %d\n", size, distinct);
        fflush(stdout);
        free(all);
    }
    MPI_Finalize();
    return have ? 0 : 69;
}
