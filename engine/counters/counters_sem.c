/* ctr_sem: what each counter is: width, wrap or saturate, gauge or counter, unit, group
 * and meaning. The InfiniBand PortCounters are not repeated here: they come from
 * topology/topo_ibcounters.c (PORT_PMA_ATTR widths, saturating).
 *
 * Sources for the widths and behaviours below:
 *  [MLX5]  Linux drivers/infiniband/hw/mlx5/counters.c: the names come from the arrays
 *          basic_q_cnts, out_of_seq_q_cnts, retrans_q_cnts, extended_err_cnts,
 *          roce_accl_cnts (Q counters), cong_cnts, ext_ppcnt_cnts and the op counters.
 *          mlx5_ib_query_q_counters() reads each Q counter as a big-endian 32-bit field of
 *          query_q_counter_out (be32_to_cpu) and widens it to u64, so they wrap at 2^32;
 *          mlx5_ib_query_cong_counters() and mlx5_ib_query_ext_ppcnt_counters() read 64-bit
 *          fields (be64_to_cpup); op counters are flow counters (u64 packets/bytes).
 *          hw_counters are refreshed by a firmware command (cached for "lifespan" ms).
 *  [RXE]   drivers/infiniband/sw/rxe/rxe_hw_counters.c: atomic64_t software counters.
 *  [NET]   net/core/net-sysfs.c: statistics/X is netstat_show() of one u64 field of
 *          struct rtnl_link_stats64 (include/uapi/linux/if_link.h, which documents each).
 *  [ETHT]  net/ethtool/ioctl.c ethtool_get_stats(): every ETHTOOL_GSTATS value is a u64.
 *  [MLX5E] Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst:
 *          names and meanings of the mlx5 ethtool counters (pause durations in us).
 *  [GEN]   include/uapi/linux/gen_stats.h: struct gnet_stats_basic { __u64 bytes; __u32
 *          packets; } (TCA_STATS_PKT64 carries a 64-bit packet count on newer kernels) and
 *          struct gnet_stats_queue { __u32 qlen, backlog, drops, requeues, overlimits; }.
 *  [SNMP]  net/ipv4/proc.c: snmp_seq_show_tcp_udp() and netstat_seq_show() print unsigned
 *          long sums (64 bits on the 64-bit kernels fabtop runs on), IP and IpExt counters
 *          u64; Tcp MaxConn is signed (-1: no limit). Meanings after RFC 4022 (TCP-MIB),
 *          RFC 4293 (IP-MIB), RFC 4113 (UDP-MIB) and include/uapi/linux/snmp.h. */
#include "engine/counters/counters_sem.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topo_ibcounters.h"

#define C(nm, src, prov, w, unit, grp, err, text)                                                  \
    {                                                                                              \
        nm, src, prov, w, 0, COUNTERS_WRAPS, COUNTERS_COUNTER, unit, 1, grp, err, text, false      \
    }
#define G(nm, src, prov, unit, grp, text)                                                          \
    {                                                                                              \
        nm, src, prov, 0, 0, COUNTERS_WIDTH_UNKNOWN, COUNTERS_GAUGE, unit, 1, grp, false, text,    \
            false                                                                                  \
    }

/* A configuration value read beside the counters: shown as a value, never as moving. */
#define S(nm, src, prov, unit, grp, text)                                                          \
    {                                                                                              \
        nm, src, prov, 0, 0, COUNTERS_WIDTH_UNKNOWN, COUNTERS_GAUGE, unit, 1, grp, false, text,    \
            true                                                                                   \
    }

#define HW      COUNTERS_SRC_HW
#define NETDEV  COUNTERS_SRC_NETDEV
#define ETHTOOL COUNTERS_SRC_ETHTOOL
#define QDISC   COUNTERS_SRC_QDISC
#define SNMP    COUNTERS_SRC_SNMP

static const struct counters_info table[] = {
    /* ---- mlx5 hw_counters [MLX5]: Q counters, 32-bit ---- */
    C("rx_write_requests", HW, "mlx5", 32, "requests", COUNTERS_TRAFFIC, false,
      "RDMA WRITE requests received by the queue pairs counted here."),
    C("rx_read_requests", HW, "mlx5", 32, "requests", COUNTERS_TRAFFIC, false,
      "RDMA READ requests received."),
    C("rx_atomic_requests", HW, "mlx5", 32, "requests", COUNTERS_TRAFFIC, false,
      "ATOMIC requests received."),
    C("rx_dct_connect", HW, "mlx5", 32, "requests", COUNTERS_TRAFFIC, false,
      "Connection requests received by DC targets."),
    C("out_of_buffer", HW, "mlx5", 32, "packets", COUNTERS_LOSS, true,
      "Packets dropped because no receive WQE was posted: the receiver was too slow to "
      "replenish its receive queue."),
    C("out_of_sequence", HW, "mlx5", 32, "packets", COUNTERS_LOSS, true,
      "Out-of-sequence packets received: packets were lost (or reordered) on the way; each "
      "loss costs a go-back-N retransmission."),
    C("duplicate_request", HW, "mlx5", 32, "packets", COUNTERS_LOSS, true,
      "Duplicate requests received: the peer retransmitted a request that had already been "
      "executed (its ACK was lost or late)."),
    C("rnr_nak_retry_err", HW, "mlx5", 32, "events", COUNTERS_LOSS, true,
      "Receiver-not-ready NAKs received (the peer had no receive WQE posted); the queue pair "
      "retries."),
    C("packet_seq_err", HW, "mlx5", 32, "events", COUNTERS_LOSS, true,
      "NAK sequence errors received: the peer saw a gap in packet sequence numbers (loss)."),
    C("implied_nak_seq_err", HW, "mlx5", 32, "events", COUNTERS_LOSS, true,
      "The requester inferred a NAK: an ACK or READ response arrived with a later sequence "
      "number than expected."),
    C("local_ack_timeout_err", HW, "mlx5", 32, "events", COUNTERS_LOSS, true,
      "ACK timer expirations on the sender (RC, XRC, DC): a packet or its ACK was lost and "
      "the sender waited a full timeout before retransmitting."),
    C("resp_local_length_error", HW, "mlx5", 32, "events", COUNTERS_ERRORS, true,
      "The responder detected a local length error (message longer than the receive "
      "buffer)."),
    C("resp_cqe_error", HW, "mlx5", 32, "events", COUNTERS_ERRORS, true,
      "Responder completions with an error status."),
    C("req_cqe_error", HW, "mlx5", 32, "events", COUNTERS_ERRORS, true,
      "Requester completions with an error status."),
    C("req_remote_invalid_request", HW, "mlx5", 32, "events", COUNTERS_ERRORS, true,
      "Remote invalid request NAKs received by the requester."),
    C("req_remote_access_errors", HW, "mlx5", 32, "events", COUNTERS_ERRORS, true,
      "Remote access error NAKs received by the requester (bad rkey or permissions)."),
    C("resp_remote_access_errors", HW, "mlx5", 32, "events", COUNTERS_ERRORS, true,
      "Remote access errors detected by the responder."),
    C("resp_cqe_flush_error", HW, "mlx5", 32, "events", COUNTERS_ERRORS, true,
      "Responder completions flushed because the queue pair went to the error state."),
    C("req_cqe_flush_error", HW, "mlx5", 32, "events", COUNTERS_ERRORS, true,
      "Requester completions flushed because the queue pair went to the error state."),
    C("req_transport_retries_exceeded", HW, "mlx5", 32, "events", COUNTERS_ERRORS, true,
      "Transport retries exhausted: the queue pair failed (IBV_WC_RETRY_EXC_ERR)."),
    C("req_rnr_retries_exceeded", HW, "mlx5", 32, "events", COUNTERS_ERRORS, true,
      "RNR NAK retries exhausted: the queue pair failed."),
    C("roce_adp_retrans", HW, "mlx5", 32, "events", COUNTERS_LOSS, true,
      "Adaptive retransmissions of RoCE traffic (per-QP timeouts that back off)."),
    C("roce_adp_retrans_to", HW, "mlx5", 32, "events", COUNTERS_LOSS, true,
      "Timeouts hit by RoCE traffic under adaptive retransmission."),
    C("roce_slow_restart", HW, "mlx5", 32, "events", COUNTERS_CONGESTION, false,
      "Times RoCE slow restart was used after a loss."),
    C("roce_slow_restart_cnps", HW, "mlx5", 32, "packets", COUNTERS_CONGESTION, false,
      "CNPs generated by slow restart."),
    C("roce_slow_restart_trans", HW, "mlx5", 32, "events", COUNTERS_CONGESTION, false,
      "Transitions into the slow-restart state."),
    /* cong_cnts and ext_ppcnt_cnts: 64-bit [MLX5] */
    C("np_cnp_sent", HW, "mlx5", 64, "packets", COUNTERS_CONGESTION, false,
      "CNPs sent by this notification point in answer to ECN-marked RoCE packets: the "
      "fabric is marking traffic towards this port."),
    C("np_ecn_marked_roce_packets", HW, "mlx5", 64, "packets", COUNTERS_CONGESTION, false,
      "RoCE v2 packets received with the ECN CE mark: a switch queue on the way was "
      "filling."),
    C("rp_cnp_handled", HW, "mlx5", 64, "packets", COUNTERS_CONGESTION, false,
      "CNPs handled by this reaction point: times this sender lowered its rate (DCQCN)."),
    C("rp_cnp_ignored", HW, "mlx5", 64, "packets", COUNTERS_CONGESTION, true,
      "CNPs received and ignored; should stay 0 with RoCE congestion control on. If it "
      "rises, check that ECN/DCQCN is enabled on the adapter."),
    C("rx_icrc_encapsulated", HW, "mlx5", 64, "packets", COUNTERS_ERRORS, true,
      "RoCE packets received with an ICRC error."),
    /* op counters (optional, rdma statistic set link ... optional-counters) */
    C("cc_rx_ce_pkts", HW, "mlx5", 64, "packets", COUNTERS_CONGESTION, false,
      "CE-marked RoCE packets received (optional flow counter)."),
    C("cc_rx_cnp_pkts", HW, "mlx5", 64, "packets", COUNTERS_CONGESTION, false,
      "CNPs received (optional flow counter)."),
    C("cc_tx_cnp_pkts", HW, "mlx5", 64, "packets", COUNTERS_CONGESTION, false,
      "CNPs sent (optional flow counter)."),
    C("rdma_tx_packets", HW, "mlx5", 64, "packets", COUNTERS_TRAFFIC, false,
      "RDMA packets sent on the link (optional flow counter)."),
    C("rdma_tx_bytes", HW, "mlx5", 64, "bytes", COUNTERS_TRAFFIC, false,
      "RDMA bytes sent on the link (optional flow counter)."),
    C("rdma_rx_packets", HW, "mlx5", 64, "packets", COUNTERS_TRAFFIC, false,
      "RDMA packets received on the link (optional flow counter)."),
    C("rdma_rx_bytes", HW, "mlx5", 64, "bytes", COUNTERS_TRAFFIC, false,
      "RDMA bytes received on the link (optional flow counter)."),

    /* ---- rxe (Soft-RoCE) hw_counters [RXE]: atomic64 ---- */
    C("sent_pkts", HW, "rxe", 64, "packets", COUNTERS_TRAFFIC, false,
      "Packets Soft-RoCE handed to the network stack."),
    C("rcvd_pkts", HW, "rxe", 64, "packets", COUNTERS_TRAFFIC, false,
      "Packets received that passed the header and ICRC checks."),
    C("duplicate_request", HW, "rxe", 64, "packets", COUNTERS_LOSS, true,
      "RC responder got a sequence number lower than expected: a duplicate (retransmitted) "
      "request."),
    C("out_of_seq_request", HW, "rxe", 64, "packets", COUNTERS_LOSS, true,
      "RC responder got a sequence number higher than expected: packets were lost."),
    C("rcvd_rnr_err", HW, "rxe", 64, "events", COUNTERS_LOSS, true,
      "Receiver-not-ready NAKs received by the requester."),
    C("send_rnr_err", HW, "rxe", 64, "events", COUNTERS_LOSS, true,
      "Receiver-not-ready NAKs sent (no receive WQE posted)."),
    C("rcvd_seq_err", HW, "rxe", 64, "events", COUNTERS_LOSS, true,
      "Sequence-error NAKs received by the completer (the peer saw a gap)."),
    C("ack_deferred", HW, "rxe", 64, "packets", COUNTERS_CONGESTION, false,
      "Responses queued while the completer was busy (a load indicator, not an error)."),
    C("retry_exceeded_err", HW, "rxe", 64, "events", COUNTERS_ERRORS, true,
      "Transport retries exhausted (IB_WC_RETRY_EXC_ERR)."),
    C("retry_rnr_exceeded_err", HW, "rxe", 64, "events", COUNTERS_ERRORS, true,
      "RNR retries exhausted."),
    C("completer_retry_err", HW, "rxe", 64, "events", COUNTERS_LOSS, true,
      "The completer asked the requester to retransmit (timeout or NAK)."),
    C("send_err", HW, "rxe", 64, "events", COUNTERS_ERRORS, true,
      "Transmissions to the underlying netdev that failed."),
    C("link_downed", HW, "rxe", 64, "events", COUNTERS_ERRORS, true,
      "The underlying netdev went down."),
    C("rdma_sends", HW, "rxe", 64, "operations", COUNTERS_TRAFFIC, false,
      "SEND work requests completed by the requester."),
    C("rdma_recvs", HW, "rxe", 64, "operations", COUNTERS_TRAFFIC, false,
      "Receive completions with success status."),

    /* ---- netdev statistics [NET]: u64 ---- */
    C("rx_bytes", NETDEV, NULL, 64, "bytes", COUNTERS_TRAFFIC, false, "Bytes received."),
    C("tx_bytes", NETDEV, NULL, 64, "bytes", COUNTERS_TRAFFIC, false, "Bytes transmitted."),
    C("rx_packets", NETDEV, NULL, 64, "packets", COUNTERS_TRAFFIC, false, "Packets received."),
    C("tx_packets", NETDEV, NULL, 64, "packets", COUNTERS_TRAFFIC, false, "Packets transmitted."),
    C("multicast", NETDEV, NULL, 64, "packets", COUNTERS_TRAFFIC, false,
      "Multicast packets received."),
    C("rx_compressed", NETDEV, NULL, 64, "packets", COUNTERS_TRAFFIC, false,
      "Compressed packets received (CSLIP, PPP)."),
    C("tx_compressed", NETDEV, NULL, 64, "packets", COUNTERS_TRAFFIC, false,
      "Compressed packets transmitted."),
    C("rx_dropped", NETDEV, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Packets received but dropped by the host (no buffer, unknown protocol, full "
      "backlog)."),
    C("tx_dropped", NETDEV, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Packets dropped on the way out (no buffer, driver refused)."),
    C("rx_missed_errors", NETDEV, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Packets the NIC dropped because the host did not take them in time (ring full)."),
    C("rx_over_errors", NETDEV, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Receive ring overflows."),
    C("rx_fifo_errors", NETDEV, NULL, 64, "packets", COUNTERS_LOSS, true, "Receive FIFO overruns."),
    C("rx_nohandler", NETDEV, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Packets dropped because no protocol handler took them (inactive bond slave...)."),
    C("tx_fifo_errors", NETDEV, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Transmit FIFO underruns."),
    C("rx_errors", NETDEV, NULL, 64, "packets", COUNTERS_ERRORS, true,
      "Bad packets received (the total of the rx_*_errors)."),
    C("tx_errors", NETDEV, NULL, 64, "packets", COUNTERS_ERRORS, true,
      "Packets that failed to be sent."),
    C("rx_crc_errors", NETDEV, NULL, 64, "packets", COUNTERS_ERRORS, true,
      "Packets received with a bad FCS: the link (cable, transceiver) corrupts frames."),
    C("rx_frame_errors", NETDEV, NULL, 64, "packets", COUNTERS_ERRORS, true,
      "Frame alignment errors."),
    C("rx_length_errors", NETDEV, NULL, 64, "packets", COUNTERS_ERRORS, true,
      "Packets with a bad length field or too long for the buffer."),
    C("collisions", NETDEV, NULL, 64, "events", COUNTERS_ERRORS, true,
      "Collisions on a half-duplex link: should never rise on a data-centre link."),
    C("tx_aborted_errors", NETDEV, NULL, 64, "packets", COUNTERS_ERRORS, true,
      "Transmissions aborted (excessive collisions, link loss)."),
    C("tx_carrier_errors", NETDEV, NULL, 64, "packets", COUNTERS_ERRORS, true,
      "Transmissions that lost the carrier: the link went down."),
    C("tx_heartbeat_errors", NETDEV, NULL, 64, "packets", COUNTERS_ERRORS, true,
      "SQE heartbeat errors (old half-duplex media)."),
    C("tx_window_errors", NETDEV, NULL, 64, "packets", COUNTERS_ERRORS, true, "Late collisions."),

    /* ---- ethtool statistics [ETHT] u64; mlx5 names [MLX5E]; '#' = priority or ring ---- */
    C("rx_prio#_pause", ETHTOOL, NULL, 64, "frames", COUNTERS_CONGESTION, false,
      "PFC pause frames received on this priority: the switch asks this port to stop "
      "sending (the network is congested downstream)."),
    C("tx_prio#_pause", ETHTOOL, NULL, 64, "frames", COUNTERS_CONGESTION, false,
      "PFC pause frames sent on this priority: this NIC cannot absorb what arrives and "
      "pushes back on the switch."),
    C("rx_prio#_pause_duration", ETHTOOL, NULL, 64, "us", COUNTERS_CONGESTION, false,
      "Time the port was paused on this priority by received pause frames (microseconds)."),
    C("tx_prio#_pause_duration", ETHTOOL, NULL, 64, "us", COUNTERS_CONGESTION, false,
      "Time of pause this port requested on this priority (microseconds)."),
    C("rx_prio#_pause_transition", ETHTOOL, NULL, 64, "events", COUNTERS_CONGESTION, false,
      "XOFF to XON transitions on this priority."),
    C("rx_prio#_discards", ETHTOOL, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Packets the device dropped on this priority for lack of receive buffers."),
    C("rx_prio#_buf_discard", ETHTOOL, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Packets dropped on this priority for lack of per-host receive buffers."),
    C("rx_prio#_cong_discard", ETHTOOL, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Packets dropped on this priority because of per-host congestion."),
    C("rx_prio#_marked", ETHTOOL, NULL, 64, "packets", COUNTERS_CONGESTION, false,
      "Packets the device ECN-marked on this priority because of per-host congestion."),
    C("rx_prio#_bytes", ETHTOOL, NULL, 64, "bytes", COUNTERS_TRAFFIC, false,
      "Bytes received on this priority."),
    C("tx_prio#_bytes", ETHTOOL, NULL, 64, "bytes", COUNTERS_TRAFFIC, false,
      "Bytes sent on this priority."),
    C("rx_prio#_packets", ETHTOOL, NULL, 64, "packets", COUNTERS_TRAFFIC, false,
      "Packets received on this priority."),
    C("tx_prio#_packets", ETHTOOL, NULL, 64, "packets", COUNTERS_TRAFFIC, false,
      "Packets sent on this priority."),
    C("rx_pause_ctrl_phy", ETHTOOL, NULL, 64, "frames", COUNTERS_CONGESTION, false,
      "Link-layer pause frames received on the physical port."),
    C("tx_pause_ctrl_phy", ETHTOOL, NULL, 64, "frames", COUNTERS_CONGESTION, false,
      "Link-layer pause frames sent on the physical port."),
    C("rx_global_pause", ETHTOOL, NULL, 64, "frames", COUNTERS_CONGESTION, false,
      "Global (802.3x) pause frames received."),
    C("tx_global_pause", ETHTOOL, NULL, 64, "frames", COUNTERS_CONGESTION, false,
      "Global (802.3x) pause frames sent."),
    C("rx_global_pause_duration", ETHTOOL, NULL, 64, "us", COUNTERS_CONGESTION, false,
      "Time paused by received global pause frames (microseconds)."),
    C("tx_global_pause_duration", ETHTOOL, NULL, 64, "us", COUNTERS_CONGESTION, false,
      "Time of global pause this port requested (microseconds)."),
    C("rx_global_pause_transition", ETHTOOL, NULL, 64, "events", COUNTERS_CONGESTION, false,
      "Global pause XOFF to XON transitions."),
    C("tx_pause_storm_warning_events", ETHTOOL, NULL, 64, "events", COUNTERS_CONGESTION, true,
      "Times the device kept sending pauses past the warning watermark (a pause storm "
      "starting)."),
    C("tx_pause_storm_error_events", ETHTOOL, NULL, 64, "events", COUNTERS_CONGESTION, true,
      "Times pause sending hit its timeout and was disabled: a pause storm; drops follow."),
    C("rx_discards_phy", ETHTOOL, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Packets the physical port dropped for lack of buffers: the adapter is congested."),
    C("tx_discards_phy", ETHTOOL, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Packets discarded on transmit (link down, head-of-line drop, pause from the "
      "network)."),
    C("rx_buffer_passed_thres_phy", ETHTOOL, NULL, 64, "events", COUNTERS_CONGESTION, false,
      "Times the port's receive buffer was more than 85% full."),
    C("rx_out_of_buffer", ETHTOOL, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Times the receive queue had no software buffers posted (the host is too slow)."),
    C("dev_out_of_buffer", ETHTOOL, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Times a device-owned queue had too few buffers."),
    C("rx_crc_errors_phy", ETHTOOL, NULL, 64, "packets", COUNTERS_ERRORS, true,
      "Frames received with a bad CRC on the physical port."),
    C("rx_symbol_err_phy", ETHTOOL, NULL, 64, "events", COUNTERS_ERRORS, true,
      "Symbol errors on the physical port: a marginal cable or transceiver."),
    C("rx_pcs_symbol_err_phy", ETHTOOL, NULL, 64, "events", COUNTERS_ERRORS, true,
      "PCS symbol errors on the physical port."),
    C("rx_corrected_bits_phy", ETHTOOL, NULL, 64, "bits", COUNTERS_ERRORS, false,
      "Bits corrected by forward error correction (a pre-FEC error rate indicator)."),
    C("link_down_events_phy", ETHTOOL, NULL, 64, "events", COUNTERS_ERRORS, true,
      "Times the link went down: a flapping link points to a cable or transceiver."),
    C("outbound_pci_buffer_overflow", ETHTOOL, NULL, 64, "packets", COUNTERS_LOSS, true,
      "Packets dropped because the PCIe buffer overflowed: the host PCIe link is slower than "
      "the receive rate."),
    C("outbound_pci_stalled_rd_events", ETHTOOL, NULL, 64, "seconds", COUNTERS_CONGESTION, false,
      "Seconds in which outbound PCIe reads were stalled more than 30% of the time."),
    C("outbound_pci_stalled_wr_events", ETHTOOL, NULL, 64, "seconds", COUNTERS_CONGESTION, false,
      "Seconds in which outbound PCIe writes were stalled more than 30% of the time."),
    G("outbound_pci_stalled_rd", ETHTOOL, NULL, "%", COUNTERS_CONGESTION,
      "Share of the last second with outbound PCIe reads stalled for lack of credits."),
    G("outbound_pci_stalled_wr", ETHTOOL, NULL, "%", COUNTERS_CONGESTION,
      "Share of the last second with outbound PCIe writes stalled for lack of credits."),
    C("rx_ecn_mark", ETHTOOL, NULL, 64, "packets", COUNTERS_CONGESTION, false,
      "Received Ethernet packets with an ECN mark."),
    C("rx#_ecn_mark", ETHTOOL, NULL, 64, "packets", COUNTERS_CONGESTION, false,
      "Received packets with an ECN mark on this ring."),
    G("peer_ifindex", ETHTOOL, NULL, "index", COUNTERS_TRAFFIC,
      "veth: the interface index of the other end (an attribute, not a counter)."),

    /* ---- qdisc statistics [GEN] ---- */
    C("bytes", QDISC, NULL, 64, "bytes", COUNTERS_TRAFFIC, false, "Bytes the qdisc sent."),
    C("packets", QDISC, NULL, 32, "packets", COUNTERS_TRAFFIC, false,
      "Packets the qdisc sent (32-bit unless the kernel gives TCA_STATS_PKT64)."),
    C("drops", QDISC, NULL, 32, "packets", COUNTERS_LOSS, true,
      "Packets the qdisc dropped: its queue was full (tail drop) or a policy dropped them."),
    C("overlimits", QDISC, NULL, 32, "events", COUNTERS_CONGESTION, false,
      "Times the qdisc held packets back because a rate limit was reached (shaping)."),
    C("requeues", QDISC, NULL, 32, "events", COUNTERS_CONGESTION, false,
      "Times the driver refused a packet and the qdisc had to requeue it (device busy)."),
    G("backlog", QDISC, NULL, "bytes", COUNTERS_CONGESTION,
      "Bytes waiting in the qdisc's queue now: every packet behind them waits too."),
    G("qlen", QDISC, NULL, "packets", COUNTERS_CONGESTION,
      "Packets waiting in the qdisc's queue now."),

    /* ---- /proc/net/snmp and netstat [SNMP] ---- */
    S("RtoAlgorithm", SNMP, "Tcp", "setting", COUNTERS_TRAFFIC,
      "TCP retransmission timer algorithm."),
    S("RtoMin", SNMP, "Tcp", "ms", COUNTERS_TRAFFIC, "Smallest TCP retransmission timeout."),
    S("RtoMax", SNMP, "Tcp", "ms", COUNTERS_TRAFFIC, "Largest TCP retransmission timeout."),
    S("MaxConn", SNMP, "Tcp", "connections", COUNTERS_TRAFFIC,
      "Limit on TCP connections (-1: none)."),
    G("CurrEstab", SNMP, "Tcp", "connections", COUNTERS_TRAFFIC,
      "TCP connections established or closing now."),
    C("ActiveOpens", SNMP, "Tcp", 64, "connections", COUNTERS_TRAFFIC, false,
      "TCP connections this host opened."),
    C("PassiveOpens", SNMP, "Tcp", 64, "connections", COUNTERS_TRAFFIC, false,
      "TCP connections this host accepted."),
    C("AttemptFails", SNMP, "Tcp", 64, "connections", COUNTERS_ERRORS, true,
      "TCP connection attempts that failed."),
    C("EstabResets", SNMP, "Tcp", 64, "connections", COUNTERS_ERRORS, true,
      "Established TCP connections that were reset."),
    C("InSegs", SNMP, "Tcp", 64, "segments", COUNTERS_TRAFFIC, false, "TCP segments received."),
    C("OutSegs", SNMP, "Tcp", 64, "segments", COUNTERS_TRAFFIC, false,
      "TCP segments sent, not counting retransmissions."),
    C("RetransSegs", SNMP, "Tcp", 64, "segments", COUNTERS_LOSS, true,
      "TCP segments retransmitted: data was lost (or its ACK was late) somewhere on the "
      "path."),
    C("InErrs", SNMP, "Tcp", 64, "segments", COUNTERS_ERRORS, true,
      "TCP segments received with errors (bad checksum, ...)."),
    C("OutRsts", SNMP, "Tcp", 64, "segments", COUNTERS_ERRORS, false, "TCP resets sent."),
    C("InCsumErrors", SNMP, "Tcp", 64, "segments", COUNTERS_ERRORS, true,
      "TCP segments received with a bad checksum."),
    C("TCPTimeouts", SNMP, "TcpExt", 64, "events", COUNTERS_LOSS, true,
      "TCP retransmission timeouts: a sender waited a full RTO (200 ms or more) before "
      "resending. Each one stalls its flow."),
    C("TCPLostRetransmit", SNMP, "TcpExt", 64, "segments", COUNTERS_LOSS, true,
      "Retransmitted TCP segments that were lost again."),
    C("TCPFastRetrans", SNMP, "TcpExt", 64, "segments", COUNTERS_LOSS, true,
      "TCP fast retransmissions (after duplicate ACKs or SACK), without a timeout."),
    C("TCPSlowStartRetrans", SNMP, "TcpExt", 64, "segments", COUNTERS_LOSS, true,
      "TCP retransmissions in slow start after a loss."),
    C("TCPSynRetrans", SNMP, "TcpExt", 64, "segments", COUNTERS_LOSS, true,
      "SYN and SYN-ACK retransmissions: connection set-up packets were lost."),
    C("TCPRetransFail", SNMP, "TcpExt", 64, "events", COUNTERS_ERRORS, true,
      "TCP retransmissions that failed to be sent (local device queue full)."),
    C("TCPLossProbes", SNMP, "TcpExt", 64, "segments", COUNTERS_LOSS, false,
      "Tail loss probes sent: the sender suspected a loss at the end of a burst."),
    C("TCPSpuriousRTOs", SNMP, "TcpExt", 64, "events", COUNTERS_LOSS, false,
      "Retransmission timeouts later found to be unnecessary (the data had arrived)."),
    C("TCPAbortOnTimeout", SNMP, "TcpExt", 64, "connections", COUNTERS_ERRORS, true,
      "TCP connections aborted after too many retransmission timeouts."),
    C("TCPOFOQueue", SNMP, "TcpExt", 64, "segments", COUNTERS_LOSS, false,
      "TCP segments received out of order and queued (loss or reordering before them)."),
    C("TCPOFODrop", SNMP, "TcpExt", 64, "segments", COUNTERS_LOSS, true,
      "Out-of-order TCP segments dropped for lack of receive memory."),
    C("TCPBacklogDrop", SNMP, "TcpExt", 64, "segments", COUNTERS_LOSS, true,
      "TCP segments dropped because the socket backlog was full."),
    C("TCPRcvQDrop", SNMP, "TcpExt", 64, "segments", COUNTERS_LOSS, true,
      "TCP segments dropped because the receive queue was over its memory limit."),
    C("ListenOverflows", SNMP, "TcpExt", 64, "connections", COUNTERS_LOSS, true,
      "Connection requests dropped because a listen queue was full."),
    C("ListenDrops", SNMP, "TcpExt", 64, "connections", COUNTERS_LOSS, true,
      "Connection requests dropped by a listening socket for any reason."),
    C("DelayedACKs", SNMP, "TcpExt", 64, "segments", COUNTERS_TRAFFIC, false, "Delayed ACKs sent."),
    C("TCPDeliveredCE", SNMP, "TcpExt", 64, "segments", COUNTERS_CONGESTION, false,
      "TCP segments delivered with the ECN CE mark reported by the receiver."),
    C("TCPMemoryPressures", SNMP, "TcpExt", 64, "events", COUNTERS_CONGESTION, false,
      "Times TCP entered memory pressure (host-wide socket memory nearly exhausted)."),
    C("InCEPkts", SNMP, "IpExt", 64, "packets", COUNTERS_CONGESTION, false,
      "IP packets received with the ECN CE mark: a router or switch queue was filling."),
    C("InECT0Pkts", SNMP, "IpExt", 64, "packets", COUNTERS_TRAFFIC, false,
      "IP packets received marked ECN-capable (ECT(0))."),
    C("InECT1Pkts", SNMP, "IpExt", 64, "packets", COUNTERS_TRAFFIC, false,
      "IP packets received marked ECN-capable (ECT(1))."),
    C("InNoECTPkts", SNMP, "IpExt", 64, "packets", COUNTERS_TRAFFIC, false,
      "IP packets received without ECN capability."),
    C("InOctets", SNMP, "IpExt", 64, "bytes", COUNTERS_TRAFFIC, false, "IP bytes received."),
    C("OutOctets", SNMP, "IpExt", 64, "bytes", COUNTERS_TRAFFIC, false, "IP bytes sent."),
    S("Forwarding", SNMP, "Ip", "setting", COUNTERS_TRAFFIC, "IP forwarding: 1 router, 2 host."),
    S("DefaultTTL", SNMP, "Ip", "hops", COUNTERS_TRAFFIC, "Default IP time to live."),
    C("InReceives", SNMP, "Ip", 64, "packets", COUNTERS_TRAFFIC, false, "IP packets received."),
    C("InDelivers", SNMP, "Ip", 64, "packets", COUNTERS_TRAFFIC, false,
      "IP packets delivered to upper layers."),
    C("OutRequests", SNMP, "Ip", 64, "packets", COUNTERS_TRAFFIC, false, "IP packets sent."),
    C("ForwDatagrams", SNMP, "Ip", 64, "packets", COUNTERS_TRAFFIC, false, "IP packets forwarded."),
    C("InDiscards", SNMP, "Ip", 64, "packets", COUNTERS_LOSS, true,
      "IP packets received and discarded without an error (no buffer)."),
    C("OutDiscards", SNMP, "Ip", 64, "packets", COUNTERS_LOSS, true,
      "IP packets discarded on the way out without an error (no buffer)."),
    C("OutNoRoutes", SNMP, "Ip", 64, "packets", COUNTERS_LOSS, true,
      "IP packets discarded because no route was found."),
    C("InHdrErrors", SNMP, "Ip", 64, "packets", COUNTERS_ERRORS, true,
      "IP packets received with header errors."),
    C("InAddrErrors", SNMP, "Ip", 64, "packets", COUNTERS_ERRORS, true,
      "IP packets received for an address that is not this host's."),
    C("ReasmFails", SNMP, "Ip", 64, "packets", COUNTERS_ERRORS, true,
      "IP reassembly failures (fragments lost)."),
    C("FragFails", SNMP, "Ip", 64, "packets", COUNTERS_ERRORS, true,
      "IP packets that needed fragmenting but could not be (DF set): an MTU problem."),
    C("InDatagrams", SNMP, "Udp", 64, "datagrams", COUNTERS_TRAFFIC, false,
      "UDP datagrams received."),
    C("OutDatagrams", SNMP, "Udp", 64, "datagrams", COUNTERS_TRAFFIC, false, "UDP datagrams sent."),
    C("NoPorts", SNMP, "Udp", 64, "datagrams", COUNTERS_LOSS, false,
      "UDP datagrams for a port nobody listens on."),
    C("InErrors", SNMP, "Udp", 64, "datagrams", COUNTERS_LOSS, true,
      "UDP datagrams that could not be delivered (mostly a full receive buffer)."),
    C("RcvbufErrors", SNMP, "Udp", 64, "datagrams", COUNTERS_LOSS, true,
      "UDP datagrams dropped because the socket receive buffer was full."),
    C("SndbufErrors", SNMP, "Udp", 64, "datagrams", COUNTERS_LOSS, true,
      "UDP datagrams dropped because the socket send buffer was full."),
    C("InCsumErrors", SNMP, "Udp", 64, "datagrams", COUNTERS_ERRORS, true,
      "UDP datagrams received with a bad checksum."),
};

#define NTABLE ((int)(sizeof(table) / sizeof(table[0])))

bool counters_sem_match(const char *pat, const char *name)
{
    while (*pat) {
        if (*pat == '#') {
            if (!isdigit((unsigned char)*name))
                return false;
            while (isdigit((unsigned char)*name))
                name++;
            pat++;
            continue;
        }
        if (*pat++ != *name++)
            return false;
    }
    return *name == '\0';
}

const struct counters_info *counters_table(int *n)
{
    *n = NTABLE;
    return table;
}

static bool has(const char *s, const char *sub)
{
    return strstr(s, sub) != NULL;
}

/* Group, unit and error flag guessed from a counter's name (unknown counters). */
static void guess(enum counters_source src, const char *provider, const char *name,
                  struct counters_info *out)
{
    memset(out, 0, sizeof(*out));
    out->name = NULL;
    out->source = src;
    out->provider = provider;
    out->width = 0;
    out->behaviour = COUNTERS_WIDTH_UNKNOWN;
    out->kind = COUNTERS_COUNTER;
    out->scale = 1;
    out->group = COUNTERS_TRAFFIC;
    out->unit = "count";
    char low[96];
    size_t i;
    for (i = 0; name[i] && i < sizeof(low) - 1; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[i] = '\0';
    if (has(low, "pause") || has(low, "ecn") || has(low, "cnp") || has(low, "_ce_") ||
        has(low, "congest") || has(low, "xmit_wait") || has(low, "backlog")) {
        out->group = COUNTERS_CONGESTION;
    } else if (has(low, "discard") || has(low, "drop") || has(low, "retrans") ||
               has(low, "timeout") || has(low, "out_of_seq") || has(low, "seq_err") ||
               has(low, "rnr") || has(low, "missed") || has(low, "out_of_buffer")) {
        out->group = COUNTERS_LOSS;
        out->error_like = true;
    } else if (has(low, "err") || has(low, "crc") || has(low, "symbol") || has(low, "fail") ||
               has(low, "link_down") || has(low, "downed")) {
        out->group = COUNTERS_ERRORS;
        out->error_like = true;
    }
    if (has(low, "bytes") || has(low, "octets"))
        out->unit = "bytes";
    else if (has(low, "packets") || has(low, "pkts"))
        out->unit = "packets";
    else if (out->group != COUNTERS_TRAFFIC)
        out->unit = "events";
}

static enum counters_group ib_group(enum topo_ibc_group g)
{
    switch (g) {
    case TOPO_IBC_CONGESTION:
        return COUNTERS_CONGESTION;
    case TOPO_IBC_LOSS:
        return COUNTERS_LOSS;
    case TOPO_IBC_ERRORS:
        return COUNTERS_ERRORS;
    default:
        return COUNTERS_TRAFFIC;
    }
}

static const char *ib_unit(enum topo_ibc_unit u)
{
    switch (u) {
    case TOPO_IBC_WORDS:
        return "bytes"; /* shown x4 */
    case TOPO_IBC_EVENTS:
        return "events";
    case TOPO_IBC_TICKS:
        return "ticks";
    default:
        return "packets";
    }
}

bool counters_info_get(enum counters_source src, const char *provider, const char *name,
                       struct counters_info *out)
{
    if (src == COUNTERS_SRC_QP) {
        /* A counter bound to QPs counts what the port's hw_counters count, per QP: the
         * same names and widths (mlx5_ib_counter_alloc_stats() takes the Q counters). */
        bool known = counters_info_get(COUNTERS_SRC_HW, provider, name, out);
        out->source = COUNTERS_SRC_QP;
        return known;
    }
    if (src == COUNTERS_SRC_IB) {
        const struct topo_ibcounter *c = topo_ibc_find(name);
        if (!c) {
            guess(src, provider, name, out);
            return false;
        }
        memset(out, 0, sizeof(*out));
        out->name = c->name;
        out->source = src;
        out->provider = NULL;
        out->width = c->width;
        out->ext_width = c->ext_width;
        out->behaviour = !c->width       ? COUNTERS_WIDTH_UNKNOWN
                         : c->saturating ? COUNTERS_SATURATES
                                         : COUNTERS_WRAPS;
        out->kind = COUNTERS_COUNTER;
        out->unit = ib_unit(c->unit);
        out->scale = c->bytes_per_unit ? c->bytes_per_unit : 1;
        out->group = ib_group(c->group);
        out->error_like = c->is_error;
        out->meaning = c->meaning;
        return true;
    }
    /* mlx5 shows the Q counters of an eSwitch representor as vport_NAME. */
    const char *base = name;
    if (src == COUNTERS_SRC_HW && !strncmp(name, "vport_", 6))
        base = name + 6;
    for (int i = 0; i < NTABLE; i++) {
        const struct counters_info *t = &table[i];
        if (t->source != src)
            continue;
        if (t->provider && (!provider || strcmp(t->provider, provider)))
            continue;
        if (strchr(t->name, '#') ? !counters_sem_match(t->name, base) : strcmp(t->name, base))
            continue;
        *out = *t;
        return true;
    }
    guess(src, provider, name, out);
    return false;
}

const char *counters_meaning(const char *name)
{
    if (!name)
        return NULL;
    const struct topo_ibcounter *c = topo_ibc_find(name);
    if (c)
        return c->meaning;
    /* A real name ("rx_prio3_pause"), or a pattern as the glossary lists it. */
    for (int i = 0; i < NTABLE; i++)
        if (!strcmp(table[i].name, name) ||
            (strchr(table[i].name, '#') && counters_sem_match(table[i].name, name)))
            return table[i].meaning;
    return NULL;
}

const char *counters_source_str(enum counters_source s)
{
    static const char *const names[] = {"ib",    "hw_counters", "netdev",    "ethtool",
                                        "qdisc", "snmp",        "qp_counter"};
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *counters_group_str(enum counters_group g)
{
    static const char *const names[] = {"traffic", "congestion", "loss/retransmission", "errors"};
    return (unsigned)g < sizeof(names) / sizeof(names[0]) ? names[g] : "?";
}

const char *counters_kind_str(enum counters_kind k)
{
    return k == COUNTERS_GAUGE ? "gauge" : "counter";
}

const char *counters_behaviour_str(enum counters_behaviour b)
{
    static const char *const names[] = {"wraps", "saturates", "width unknown"};
    return (unsigned)b < sizeof(names) / sizeof(names[0]) ? names[b] : "?";
}
