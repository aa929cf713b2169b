/* sim_port: what a port sends back upstream: IB credit updates after their own delay (§12),
 * for switches (sim_net.c) and adapters (sim_nic.c) alike. Frames go on the wire through
 * sim_port_send, inline in sim_int.h (every frame passes there). */
#include "engine/sim/sim_int.h"

void sim_credit_send(struct sim *s, uint32_t pi, uint32_t blocks)
{
    /* §12: the blocks return to the upstream sender after processing, the flow-control
     * packet's serialisation and the propagation back. Updates do not take transmit slots
     * from data. */
    struct sim_port *p = &s->ports[pi];
    uint32_t c = sim_pkt_alloc(s);
    struct sim_pkt *k = &s->pkts[c];
    k->type = PK_CREDIT;
    k->payload = blocks;
    k->port = p->peer;
    k->wire = SIM_IB_FC_PACKET;
    k->t = s->now + s->p.ib_credit_delay + sim_port_ser(p, SIM_IB_FC_PACKET) + p->prop;
    k->next = SIM_NIL;
    if (p->cred_head == SIM_NIL) {
        p->cred_head = c;
        sim_ev_push(s, k->t, EV_CREDIT, pi);
    } else {
        s->pkts[p->cred_tail].next = c;
    }
    p->cred_tail = c;
}
