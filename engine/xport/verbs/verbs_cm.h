/* verbs_cm: connecting the verbs transport's own queue pairs through librdmacm (rdma_cm)
 * instead of the control channel. The QPs stay ours (created by verbs_res_alloc on the chosen
 * device); rdma_cm resolves the address and route, carries the CM handshake, and hands
 * over the attributes for RTR and RTS (rdma_init_qp_attr), as rdma_cm(7) describes for
 * QPs not associated with an rdma_cm_id. */
#ifndef VERBS_CM_H
#define VERBS_CM_H

#include <stdbool.h>
#include <sys/socket.h>

#include "common/ft_err.h"
#include "engine/xport/verbs/verbs_res.h"

struct verbs_cm;

/* The IP address rdma_cm should use for this port: the GID's own address (RoCE), else the
 * port's netdev's first address. false when there is none. */
bool verbs_cm_local_addr(const struct verbs_res *r, struct sockaddr_storage *ss);

/* Client: connect every QP of r to the agent listening at host:port. QP i sends its index
 * as private data. tos is the IP TOS byte (DSCP << 2); timeout and retry_cnt go into RTS. */
int verbs_cm_connect(struct verbs_res *r, const char *host, int port, int tos, int timeout,
                     int retry_cnt, struct verbs_cm **out, struct ft_err *err);

/* Agent: listen on r's address (host and port returned) and accept the client's
 * connections for r's QPs on a thread, which ends once all are established or on
 * verbs_cm_close(). */
int verbs_cm_listen(struct verbs_res *r, int timeout, int retry_cnt, char *host, size_t hostlen,
                    int *port, struct verbs_cm **out, struct ft_err *err);

/* Agent: wait up to ms for every QP to be connected; 0 or -errno with the reason. */
int verbs_cm_wait(struct verbs_cm *cm, int ms, struct ft_err *err);

/* Disconnect and free (NULL is fine). The QPs themselves belong to verbs_res. */
void verbs_cm_close(struct verbs_cm *cm);

#endif
