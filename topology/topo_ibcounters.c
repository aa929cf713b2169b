/* topo_ibcounters: the InfiniBand port counter table (see topo_ibcounters.h).
 *
 * Sources for every width and offset below:
 *  [K]   Linux drivers/infiniband/core/sysfs.c: PORT_PMA_ATTR(name, counter, width, offset)
 *        reads the PortCounters attribute (PMA attribute 0x0012), PORT_PMA_ATTR_EXT(name,
 *        width, offset) the PortCountersExtended attribute (0x001D); show_pma_counter()
 *        prints "%u"/"%llu" of the field. The offsets are bit offsets into the attribute.
 *  [IBA] InfiniBand Architecture Specification Vol. 1, chapter 16.1 (Performance
 *        Management): PortCounters and PortCountersExtended. The PortCounters fields
 *        saturate: they stop at all ones and are cleared only by a PerfSet (perfquery -R).
 *  [MAD] rdma-core libibmad/fields.c, IB_PC_* entries (BITSOFFS(offset, width)): the same
 *        offsets and widths, as perfquery prints them.
 *  [ABI] Linux Documentation/ABI/stable/sysfs-class-infiniband (meanings, the /4 unit).
 *
 * Width of the traffic counters: get_counter_table() in [K] picks one of three groups
 * for "counters/". When ClassPortInfo.CapabilityMask has IsExtendedWidthSupported (bit 9)
 * or its NoIETF variant (bit 10), port_xmit_data, port_rcv_data, port_xmit_packets and
 * port_rcv_packets are the 64-bit PortCountersExtended fields under the same file names
 * (and with bit 9 unicast_ and multicast_ counters appear); otherwise they are the 32-bit
 * PortCounters fields. Hence ext_width. Error counters come from PortCounters in every
 * group, so their width is fixed.
 *
 * Note on the constraint counters: [K] and [MAD] both give PortXmitConstraintErrors and
 * PortRcvConstraintErrors 8 bits (offsets 128 and 136), not 16.
 *
 * "counters_ext/" is not created by the upstream kernel: older MLNX_OFED mlx4 drivers
 * made it (seen in prometheus/node_exporter's and procfs's sysfs fixtures); its counters
 * are the PortCountersExtended 64-bit fields. port_rcv_discards likewise appears only in
 * such vendor trees; its width is not documented, so it is left at 0 (unknown). */
#include "topology/topo_ibcounters.h"

#include <stdlib.h>
#include <string.h>

/* Shorthands for the table below. */
#define CNT "counters"
#define EXT "counters_ext"

#define PHYS_ACTION                                                                                \
    "reseat or replace the cable or transceiver; compare with the peer switch port "               \
    "(perfquery on its LID and port)"
#define LOSS_ACTION "check for congestion or a port going down on the path; see the SM log"
#define PKEY_ACTION "check the partition (P_Key) configuration of this port and of the SM"

/* Sorted by name (strcmp order); tests/lint/test_ibcounters.c checks it. */
const struct topo_ibcounter topo_ibcounters[] = {
    /* [K] PORT_PMA_ATTR(VL15_dropped, 11, 16, 176); [MAD] VL15Dropped 176/16 */
    {"VL15_dropped", CNT, "VL15Dropped", 16, 0, true, TOPO_IBC_EVENTS, 0, TOPO_IBC_LOSS, true,
     "Incoming subnet management packets (VL15) dropped for lack of buffers. A steady rise "
     "slows or breaks fabric management by the SM.",
     "check that the SM is not flooding this port; look at the HCA firmware and load"},
    /* [K] (excessive_buffer_overrun_errors, 10, 4, 156); [MAD] ExcBufOverrunErrors 156/4 */
    {"excessive_buffer_overrun_errors", CNT, "ExcessiveBufferOverrunErrors", 4, 0, true,
     TOPO_IBC_EVENTS, 0, TOPO_IBC_ERRORS, true,
     "Times consecutive receive buffer overruns passed the OverrunErrors threshold. Points "
     "to a flow-control (credit) misconfiguration or very poor signal integrity.",
     PHYS_ACTION},
    /* [K] (link_downed, 2, 8, 56); [MAD] LinkDowned 56/8 */
    {"link_downed", CNT, "LinkDownedCounter", 8, 0, true, TOPO_IBC_EVENTS, 0, TOPO_IBC_ERRORS, true,
     "Times the port training state machine failed link error recovery and took the link "
     "down. Each one interrupts all traffic on the port.",
     PHYS_ACTION},
    /* [K] (link_error_recovery, 1, 8, 48); [MAD] LinkRecovers 48/8 */
    {"link_error_recovery", CNT, "LinkErrorRecoveryCounter", 8, 0, true, TOPO_IBC_EVENTS, 0,
     TOPO_IBC_ERRORS, true,
     "Times the port training state machine retrained the link after errors without taking "
     "it down. Rising together with symbol_error means a marginal link.",
     PHYS_ACTION},
    /* [K] (local_link_integrity_errors, 9, 4, 152); [MAD] LinkIntegrityErrors 152/4 */
    {"local_link_integrity_errors", CNT, "LocalLinkIntegrityErrors", 4, 0, true, TOPO_IBC_EVENTS, 0,
     TOPO_IBC_ERRORS, true,
     "Times the count of local physical errors passed the LocalPhyErrors threshold. A sign of "
     "poor signal integrity on this link.",
     PHYS_ACTION},
    /* [K] PORT_PMA_ATTR_EXT(multicast_rcv_packets, 64, 512) */
    {"multicast_rcv_packets", CNT, "PortMulticastRcvPkts", 64, 0, true, TOPO_IBC_PACKETS, 0,
     TOPO_IBC_TRAFFIC, false,
     "Multicast packets received, including packets with errors (PortCountersExtended).", NULL},
    /* [K] PORT_PMA_ATTR_EXT(multicast_xmit_packets, 64, 448) */
    {"multicast_xmit_packets", CNT, "PortMulticastXmitPkts", 64, 0, true, TOPO_IBC_PACKETS, 0,
     TOPO_IBC_TRAFFIC, false,
     "Multicast packets transmitted, including packets with errors (PortCountersExtended).", NULL},
    /* vendor counters_ext/ (see the top of this file): PortCountersExtended field */
    {"port_multicast_rcv_packets", EXT, "PortMulticastRcvPkts", 64, 0, true, TOPO_IBC_PACKETS, 0,
     TOPO_IBC_TRAFFIC, false, "Multicast packets received (legacy MLNX_OFED counters_ext/ name).",
     NULL},
    {"port_multicast_xmit_packets", EXT, "PortMulticastXmitPkts", 64, 0, true, TOPO_IBC_PACKETS, 0,
     TOPO_IBC_TRAFFIC, false,
     "Multicast packets transmitted (legacy MLNX_OFED counters_ext/ name).", NULL},
    /* [K] (port_rcv_constraint_errors, 8, 8, 136); [MAD] RcvConstraintErrors 136/8 */
    {"port_rcv_constraint_errors", CNT, "PortRcvConstraintErrors", 8, 0, true, TOPO_IBC_EVENTS, 0,
     TOPO_IBC_LOSS, true,
     "Received packets dropped by inbound partition (P_Key) or raw-packet filtering. Points to "
     "a partition configuration mismatch between this port and its peers.",
     PKEY_ACTION},
    /* [K] (port_rcv_data, 13, 32, 224), ext (port_rcv_data, 64, 128); [ABI] octets / 4 */
    {"port_rcv_data", CNT, "PortRcvData", 32, 64, true, TOPO_IBC_WORDS, 4, TOPO_IBC_TRAFFIC, false,
     "Data octets received on all VLs, divided by 4 (bytes = 4 x value), including packets "
     "with errors.",
     NULL},
    {"port_rcv_data_64", EXT, "PortRcvData", 64, 0, true, TOPO_IBC_WORDS, 4, TOPO_IBC_TRAFFIC,
     false, "Data octets received, divided by 4 (legacy MLNX_OFED counters_ext/ name).", NULL},
    /* vendor only (see the top of this file); width undocumented */
    {"port_rcv_discards", CNT, "PortRcvDiscards", 0, 0, false, TOPO_IBC_PACKETS, 0, TOPO_IBC_LOSS,
     true,
     "Inbound packets discarded because the port was down or congested (vendor counter, not "
     "created by the upstream kernel).",
     LOSS_ACTION},
    /* [K] (port_rcv_errors, 3, 16, 64); [MAD] RcvErrors 64/16 */
    {"port_rcv_errors", CNT, "PortRcvErrors", 16, 0, true, TOPO_IBC_PACKETS, 0, TOPO_IBC_ERRORS,
     true,
     "Received packets that contained an error (bad CRC, malformed, buffer overrun). Points to "
     "this link or to the peer's transmitter.",
     PHYS_ACTION},
    /* [K] (port_rcv_packets, 15, 32, 288), ext (port_rcv_packets, 64, 256) */
    {"port_rcv_packets", CNT, "PortRcvPkts", 32, 64, true, TOPO_IBC_PACKETS, 0, TOPO_IBC_TRAFFIC,
     false, "Packets received on all VLs, including packets with errors.", NULL},
    {"port_rcv_packets_64", EXT, "PortRcvPkts", 64, 0, true, TOPO_IBC_PACKETS, 0, TOPO_IBC_TRAFFIC,
     false, "Packets received (legacy MLNX_OFED counters_ext/ name).", NULL},
    /* [K] (port_rcv_remote_physical_errors, 4, 16, 80); [MAD] RcvRemotePhysErrors 80/16 */
    {"port_rcv_remote_physical_errors", CNT, "PortRcvRemotePhysicalErrors", 16, 0, true,
     TOPO_IBC_PACKETS, 0, TOPO_IBC_ERRORS, true,
     "Received packets already marked bad (EBP delimiter) by an earlier hop: the physical "
     "error happened elsewhere in the fabric.",
     "look for the link upstream of this port whose own receive error counters rise"},
    /* [K] (port_rcv_switch_relay_errors, 5, 16, 96); [MAD] RcvSwRelayErrors 96/16 */
    {"port_rcv_switch_relay_errors", CNT, "PortRcvSwitchRelayErrors", 16, 0, true, TOPO_IBC_PACKETS,
     0, TOPO_IBC_LOSS, true,
     "Received packets discarded because they could not be relayed (no route for the "
     "destination LID, for example). Mostly seen on switches; points to routing by the SM.",
     "check the SM's routing (ibroute, the opensm log) for the destination LIDs"},
    /* vendor counters_ext/ */
    {"port_unicast_rcv_packets", EXT, "PortUnicastRcvPkts", 64, 0, true, TOPO_IBC_PACKETS, 0,
     TOPO_IBC_TRAFFIC, false, "Unicast packets received (legacy MLNX_OFED counters_ext/ name).",
     NULL},
    {"port_unicast_xmit_packets", EXT, "PortUnicastXmitPkts", 64, 0, true, TOPO_IBC_PACKETS, 0,
     TOPO_IBC_TRAFFIC, false, "Unicast packets transmitted (legacy MLNX_OFED counters_ext/ name).",
     NULL},
    /* [K] (port_xmit_constraint_errors, 7, 8, 128); [MAD] XmtConstraintErrors 128/8 */
    {"port_xmit_constraint_errors", CNT, "PortXmitConstraintErrors", 8, 0, true, TOPO_IBC_EVENTS, 0,
     TOPO_IBC_LOSS, true,
     "Packets not transmitted because of outbound partition (P_Key) or raw-packet filtering. "
     "Points to a partition configuration mismatch.",
     PKEY_ACTION},
    /* [K] (port_xmit_data, 12, 32, 192), ext (port_xmit_data, 64, 64); [ABI] octets / 4 */
    {"port_xmit_data", CNT, "PortXmitData", 32, 64, true, TOPO_IBC_WORDS, 4, TOPO_IBC_TRAFFIC,
     false,
     "Data octets transmitted on all VLs, divided by 4 (bytes = 4 x value), including packets "
     "with errors.",
     NULL},
    {"port_xmit_data_64", EXT, "PortXmitData", 64, 0, true, TOPO_IBC_WORDS, 4, TOPO_IBC_TRAFFIC,
     false, "Data octets transmitted, divided by 4 (legacy MLNX_OFED counters_ext/ name).", NULL},
    /* [K] (port_xmit_discards, 6, 16, 112); [MAD] XmtDiscards 112/16 */
    {"port_xmit_discards", CNT, "PortXmitDiscards", 16, 0, true, TOPO_IBC_PACKETS, 0, TOPO_IBC_LOSS,
     true,
     "Outbound packets discarded because the port was down or congested (head-of-queue "
     "lifetime expired, for example). Each one is a loss the sender must retransmit.",
     LOSS_ACTION},
    /* [K] (port_xmit_packets, 14, 32, 256), ext (port_xmit_packets, 64, 192) */
    {"port_xmit_packets", CNT, "PortXmitPkts", 32, 64, true, TOPO_IBC_PACKETS, 0, TOPO_IBC_TRAFFIC,
     false, "Packets transmitted on all VLs, including packets with errors.", NULL},
    {"port_xmit_packets_64", EXT, "PortXmitPkts", 64, 0, true, TOPO_IBC_PACKETS, 0,
     TOPO_IBC_TRAFFIC, false, "Packets transmitted (legacy MLNX_OFED counters_ext/ name).", NULL},
    /* [K] PORT_PMA_ATTR(port_xmit_wait, 0, 32, 320); PortCounters, present in all groups */
    {"port_xmit_wait", CNT, "PortXmitWait", 32, 0, true, TOPO_IBC_TICKS, 0, TOPO_IBC_CONGESTION,
     false,
     "Ticks in which the port had data to send but sent none (no flow-control credits or lost "
     "arbitration). The main InfiniBand congestion indicator; the tick length is "
     "device-specific.",
     "find the congested hop: compare port_xmit_wait along the path under load"},
    /* [K] (symbol_error, 0, 16, 32); [MAD] SymbolErrors 32/16 */
    {"symbol_error", CNT, "SymbolErrorCounter", 16, 0, true, TOPO_IBC_EVENTS, 0, TOPO_IBC_ERRORS,
     true,
     "Minor link errors detected on one or more physical lanes. A few after link training are "
     "normal; a steady rise means a marginal cable, transceiver or connector.",
     PHYS_ACTION},
    /* [K] PORT_PMA_ATTR_EXT(unicast_rcv_packets, 64, 384) */
    {"unicast_rcv_packets", CNT, "PortUnicastRcvPkts", 64, 0, true, TOPO_IBC_PACKETS, 0,
     TOPO_IBC_TRAFFIC, false,
     "Unicast packets received, including packets with errors (PortCountersExtended).", NULL},
    /* [K] PORT_PMA_ATTR_EXT(unicast_xmit_packets, 64, 320) */
    {"unicast_xmit_packets", CNT, "PortUnicastXmitPkts", 64, 0, true, TOPO_IBC_PACKETS, 0,
     TOPO_IBC_TRAFFIC, false,
     "Unicast packets transmitted, including packets with errors (PortCountersExtended).", NULL},
};

const int topo_ibcounters_n = (int)(sizeof(topo_ibcounters) / sizeof(topo_ibcounters[0]));

static int cmp_name(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const struct topo_ibcounter *)elem)->name);
}

const struct topo_ibcounter *topo_ibc_find(const char *name)
{
    if (!name)
        return NULL;
    return bsearch(name, topo_ibcounters, (size_t)topo_ibcounters_n, sizeof(topo_ibcounters[0]),
                   cmp_name);
}

uint64_t topo_ibc_max(int width)
{
    if (width <= 0 || width > 64)
        return 0;
    return width == 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}

bool topo_ibc_saturated(const struct topo_ibcounter *c, uint64_t v)
{
    if (!c || !c->saturating || !c->width)
        return false;
    return v == topo_ibc_max(c->width) || (c->ext_width && v == topo_ibc_max(c->ext_width));
}

uint64_t topo_ibc_bytes(const struct topo_ibcounter *c, uint64_t v)
{
    return c && c->bytes_per_unit ? v * c->bytes_per_unit : v;
}

const char *topo_ibc_group_str(enum topo_ibc_group g)
{
    static const char *const names[] = {"traffic", "congestion", "loss/retransmission", "errors"};
    return (unsigned)g < sizeof(names) / sizeof(names[0]) ? names[g] : "?";
}

const char *topo_ibc_unit_str(enum topo_ibc_unit u)
{
    static const char *const names[] = {"packets", "4-byte words", "events", "ticks"};
    return (unsigned)u < sizeof(names) / sizeof(names[0]) ? names[u] : "?";
}
