/* sim: a packet-level discrete-event model of a small RoCE or InfiniBand fabric, for teaching
 * and for reasoning about a design; never a stand-in for testing the real transports.
 * Single-threaded, integer picoseconds, a preallocated packet pool, a seeded generator: the
 * same inputs and seed give the same run, bit for bit. Formulas and reference figures are
 * ../shared/sim-reference.md (cited as §N). Functions return 0 or -errno with a struct
 * ft_err; nothing prints. The sim_ctl_* calls may come from another thread; all other calls
 * must come from the one thread that owns the simulation. */
#ifndef SIM_H
#define SIM_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "common/counters_value.h"

#define SIM_PS_PER_NS 1000ull
#define SIM_PS_PER_US 1000000ull
#define SIM_MAX_HOSTS 64

/* ---- Header model (§1): bytes a packet occupies on the wire besides its payload ---- */
#define SIM_ROCE_HDR      62  /* Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 */
#define SIM_ETH_GAP       20  /* preamble/SFD 8 + inter-frame gap 12 */
#define SIM_RETH          16  /* first packet of an RDMA WRITE */
#define SIM_AETH          4   /* ACK / NAK */
#define SIM_CNP_BYTES     78  /* Eth+IP+UDP+BTH, 16 reserved bytes, ICRC, FCS (RoCEv2 CNP) */
#define SIM_PFC_FRAME     64  /* 802.1Qbb MAC control frame, minimum Ethernet frame */
#define SIM_IB_HDR        26  /* LRH 8 + BTH 12 + ICRC 4 + VCRC 2 */
#define SIM_IB_FC_PACKET  8   /* flow-control (credit) packet */
#define SIM_IB_BLOCK      64  /* credits count 64-byte blocks (§12) */
#define SIM_PAUSE_QUANTUM 512 /* bit-times per PFC pause quantum (§9) */

enum sim_fabric { SIM_FABRIC_ROCE = 0, SIM_FABRIC_IB };
enum sim_cc { SIM_CC_NONE = 0, SIM_CC_DCQCN, SIM_CC_IBCC };

/* DCQCN reaction and notification points (Zhu et al., "Congestion Control for Large-Scale
 * RDMA Deployments", SIGCOMM 2015; §11). Rates in Gb/s, times in ps. */
struct sim_dcqcn {
    double g;               /* alpha gain (paper 1/256) */
    uint64_t alpha_period;  /* alpha decays by (1-g) per period without a CNP (55 us) */
    uint64_t rate_period;   /* increase timer T (55 us) */
    uint64_t byte_counter;  /* increase byte counter B (10 MB) */
    int fast_recovery;      /* F (5): events of fast recovery before additive increase */
    double rai_gbps;        /* additive increase R_AI (40 Mb/s) */
    double rhai_gbps;       /* hyper increase R_HAI (400 Mb/s) */
    uint64_t cnp_interval;  /* NP: at most one CNP per QP per interval (50 us) */
    uint64_t reduce_period; /* RP: at most one cut per period (0: every CNP; vendor 4 us) */
    double min_dec_factor;  /* a cut keeps at least this fraction of R_C (paper 0.5) */
    double min_rate_gbps;   /* floor of R_C */
    double initial_alpha;   /* 1 */
};

/* InfiniBand congestion control (IBA Annex A10), with ibccconfig's parameter names. */
struct sim_ibcc {
    /* SwitchCongestionSetting */
    int threshold;        /* Threshold 0 (off), 1 (high) .. 15 (low): queue > (16-T) x 8 KiB */
    int marking_rate;     /* Marking_Rate: eligible packets left unmarked between two marks */
    uint32_t victim_mask; /* Victim_Mask: switch ports (bit = port index) that mark even when
                           * they are victims (blocked by a congested neighbour) */
    /* CACongestionSetting */
    int ccti_timer;    /* CCTI_Timer, units of 1.024 us: CCTI drops by 1 each period */
    int ccti_increase; /* CCTI_Increase per BECN */
    int ccti_min;      /* CCTI_Min */
    /* CongestionControlTable */
    int ccti_limit;    /* CCTI_Limit */
    uint32_t cct[128]; /* inter-packet delay per CCTI, ns (the table's shift:multiplier read
                        * as nanoseconds) */
};

struct sim_link_event {
    uint64_t at;       /* ps */
    char a[24], b[24]; /* node names at the two ends (the first link between them) */
    bool up;
};

/* Fabric settings: everything but the topology. sim_params_default fills sensible values;
 * sim_params_from_json overrides them from a mix's "fabric" object. */
struct sim_params {
    enum sim_fabric fabric;
    uint32_t mtu;            /* payload bytes per packet */
    uint32_t ack_every;      /* the responder ACKs every N packets and each message's last */
    bool control_class;      /* ACKs, NAKs, CNPs in their own strict-priority class */
    uint64_t buffer_bytes;   /* shared switch buffer (RoCE) */
    uint64_t switch_latency; /* ps, store-and-forward traversal */
    /* PFC (802.1Qbb) on the lossless data priority */
    bool pfc;
    bool pfc_dynamic; /* Xoff = alpha x free shared buffer (§7) */
    double pfc_alpha;
    uint64_t pfc_xoff, pfc_xon; /* static thresholds, bytes per (ingress port, priority) */
    uint64_t pfc_xon_delta;     /* dynamic: Xon = Xoff - delta (0: two MTU frames) */
    uint64_t headroom;          /* bytes per (port, priority); 0: computed per §8 */
    uint16_t pause_quanta;      /* quanta in each XOFF frame (0xFFFF) */
    int data_prio, ctrl_prio;   /* 802.1p priorities, for counter names (3 and 6) */
    /* ECN (RED on the egress queue, §10); step marking: kmin = kmax, pmax = 1 */
    bool ecn;
    uint64_t kmin, kmax; /* bytes */
    double pmax;
    /* NICs */
    enum sim_cc cc;
    struct sim_dcqcn dcqcn;
    struct sim_ibcc ibcc;
    int timeout;    /* RC local ACK timeout: T_o = 4.096 us x 2^timeout (§14) */
    int retry_cnt;  /* the QP fails after retry_cnt + 1 timeouts without progress */
    uint32_t depth; /* stream: messages outstanding per QP */
    /* InfiniBand */
    uint64_t ib_vl_buffer;    /* receive buffer per (port, VL), bytes (credits: 64 B blocks) */
    uint64_t ib_credit_delay; /* ps from freeing a buffer to sending the credit update */
    /* routing */
    uint64_t route_update; /* ps after a link goes down until new routes take effect */
    uint64_t seed;
    uint64_t sample_period; /* ps between timeline samples in the results (0: none) */
    int nlink_events;
    struct sim_link_event link_events[8];
};

void sim_params_default(struct sim_params *p, enum sim_fabric fabric);
/* The paper's DCQCN parameters, and a vendor-style preset (values in the style of mlx5's
 * roce_rp/roce_np settings: rpg_time_reset 300 us, rpg_byte_reset 32767 B, rpg_threshold 1,
 * rpg_ai_rate 5 Mb/s, rpg_hai_rate 50 Mb/s, rpg_min_dec_fac 50 %, rate_reduce_monitor_period
 * 4 us, min_time_between_cnps 4 us). */
void sim_dcqcn_paper(struct sim_dcqcn *d);
void sim_dcqcn_vendor(struct sim_dcqcn *d);
void sim_ibcc_default(struct sim_ibcc *c);
/* Overrides from JSON ("what" names the source in errors). Unknown keys are errors. */
int sim_params_from_json(const cJSON *o, const char *what, struct sim_params *p,
                         struct ft_err *err);
cJSON *sim_params_to_json(const struct sim_params *p);

/* ---- Formulas (the model uses these; tests check them against §1-§14) ---- */
/* Bytes on the wire for a data packet with this payload (headers, RETH when first; RoCE adds
 * preamble and gap). Inline: the adapters call it for every packet. */
static inline uint32_t sim_wire_bytes(enum sim_fabric f, uint32_t payload, bool first)
{
    /* §1: RoCEv2 62 B of headers plus 20 B of preamble/SFD and gap; IB 26 B (LRH, BTH, ICRC,
     * VCRC; link-level delimiters and idles are not modelled). RETH on a WRITE's first. */
    uint32_t extra = first ? SIM_RETH : 0;
    if (f == SIM_FABRIC_IB)
        return payload + SIM_IB_HDR + extra;
    return payload + SIM_ROCE_HDR + SIM_ETH_GAP + extra;
}
/* Serialisation time of bytes at gbps, ps (rounded to the nearest ps). */
uint64_t sim_ser_ps(uint64_t bytes, double gbps);
/* One PFC pause quantum and a pause of q quanta at gbps, ps (§9). */
uint64_t sim_pause_ps(unsigned quanta, double gbps);
/* RED/step marking probability at queue q bytes (§10). */
double sim_red_prob(uint64_t q, uint64_t kmin, uint64_t kmax, double pmax);
/* PFC headroom per (port, priority), bytes (§8): 2 C t_prop + MTU frames both ways + C
 * t_response (IEEE bound, interpolated between 100 and 400 G) + the pause frame. */
uint64_t sim_pfc_headroom(double gbps, uint64_t prop_ps, uint32_t mtu_frame);
/* RC local ACK timeout, ps (§14). */
uint64_t sim_rc_timeout_ps(int timeout);
/* DCQCN reaction point state (§11): rates in Gb/s. */
struct sim_dcqcn_rp {
    double rc, rt, alpha, line;
    int t_count, b_count; /* increase events by timer and by byte counter since the cut */
};
void sim_dcqcn_on_cnp(const struct sim_dcqcn *p, struct sim_dcqcn_rp *rp);
void sim_dcqcn_alpha_decay(const struct sim_dcqcn *p, struct sim_dcqcn_rp *rp);
/* One increase event (timer when by_timer, else byte counter). */
void sim_dcqcn_increase(const struct sim_dcqcn *p, struct sim_dcqcn_rp *rp, bool by_timer);
/* IB credit-limited utilisation (§12): min(1, buffer / (C x RTT_credit)). */
double sim_ib_credit_util(uint64_t vl_buffer, double gbps, uint64_t rtt_credit_ps);

/* ---- The simulation ---- */
struct sim;

/* Build from a topology document (format "fabtop-sim-topology") and the settings. The
 * topology's own "fabric" (roce or ib), if present, must match p->fabric. */
int sim_new(const cJSON *topo, const char *what, const struct sim_params *p, struct sim **out,
            struct ft_err *err);
void sim_free(struct sim *s);
/* Load a topology: a file path, or NAME looked up as sim/topologies/NAME.json in the mix
 * search path (engine/mixes in this tree, the installed share/fabtop/mixes). */
int sim_topology_load(const char *name_or_path, cJSON **out, struct ft_err *err);

int sim_nhosts(const struct sim *s);
int sim_nnodes(const struct sim *s);                       /* hosts first (h0..), then switches */
int sim_host_index(const struct sim *s, const char *name); /* -1 if none */
const char *sim_node_name(const struct sim *s, int node);
double sim_host_gbps(const struct sim *s, int host);

enum sim_op { SIM_OP_STREAM = 0, SIM_OP_PINGPONG, SIM_OP_RR };
enum sim_dir { SIM_DIR_TX = 0, SIM_DIR_RX, SIM_DIR_BIDIR };

/* A message completed: worker = QP index (bidirectional streams: the receiving direction's
 * workers follow the sending ones), latency in ps (ping-pong: half the round trip; request/
 * response: the round trip; stream: post to completion at the sender), payload moved. */
typedef void (*sim_op_cb)(void *user, int app, int worker, uint64_t latency_ps);
/* A queue pair of the app failed (retry counter exceeded): why says so in words. */
typedef void (*sim_fail_cb)(void *user, int app, const char *why);

/* An application: QPs between two hosts running one operation. */
struct sim_app {
    int src, dst; /* host indices: src is "this host", dst the peer */
    enum sim_op op;
    enum sim_dir dir; /* stream only: tx = src sends, rx = dst sends, bidir = both */
    uint64_t size;    /* message bytes (fixed) */
    int nsizes;       /* > 0: draw sizes from sizes/weights instead */
    const uint64_t *sizes;
    const double *weights;
    uint64_t resp_size; /* request/response: reply bytes (0: same as request) */
    int nqps;           /* queue pairs (the flow's concurrency) */
    uint64_t messages;  /* operations in all (0: until the foreground apps finish) */
    uint64_t start;     /* ps */
    double rate_gbps;   /* per-app payload rate limit split over its QPs, 0: line rate */
    bool background;    /* the simulation ends when every foreground app is done */
    sim_op_cb cb;       /* may be NULL */
    sim_fail_cb fail;   /* may be NULL */
    void *user;
};
/* Add before the first event runs; returns the app index or -errno. */
int sim_app_add(struct sim *s, const struct sim_app *a, struct ft_err *err);

struct sim_app_stats {
    uint64_t ops;                       /* operations completed */
    uint64_t tx_acked, rx_bytes;        /* payload acknowledged to src / received in order at src */
    uint64_t peer_rx_bytes;             /* payload received in order at dst */
    uint64_t first_post, last_done;     /* ps; last_done 0 until one completes */
    uint64_t lat_min, lat_max, lat_sum; /* ps over ops */
    bool done, failed;
    char error[160];
};
void sim_app_stats(const struct sim *s, int app, struct sim_app_stats *out);

/* Run events with time <= until (ps); returns events run. */
uint64_t sim_run_until(struct sim *s, uint64_t until);
/* Run at most n events; returns events run. */
uint64_t sim_step(struct sim *s, uint64_t n);
/* Run until every foreground app is done (or no event is left, or max_ps passes). */
uint64_t sim_run(struct sim *s, uint64_t max_ps);
uint64_t sim_now(const struct sim *s);          /* ps */
uint64_t sim_next_time(const struct sim *s);    /* ps of the next event, UINT64_MAX if none */
uint64_t sim_events(const struct sim *s);       /* events run so far */
bool sim_finished(const struct sim *s);         /* every foreground app done or failed */
uint64_t sim_packets_live(const struct sim *s); /* packets queued or on a wire */
/* Stop every app (a run was interrupted): sim_finished becomes true. */
void sim_abort(struct sim *s);

/* ---- Playback (the explorer's fabric view): time scale, pause, step, skip idle. ----
 * Scale: wall nanoseconds per simulated microsecond; 0 = as fast as possible, otherwise
 * 10,000 (1 us per 10 us) to 100,000,000 (1 us per 100 ms). Thread-safe. */
int sim_ctl_set_scale(struct sim *s, uint64_t wall_ns_per_sim_us);
void sim_ctl_pause(struct sim *s, bool paused);
/* While paused: advance by sim_ps of simulated time (0: by one event). */
void sim_ctl_step(struct sim *s, uint64_t sim_ps);
/* Jump over stretches where no packet is queued or on a wire (a retransmission wait). */
void sim_ctl_skip_idle(struct sim *s, bool on);
struct sim_ctl_state {
    uint64_t scale; /* wall ns per simulated us, 0 = full speed */
    bool paused, skip_idle;
};
void sim_ctl_get(const struct sim *s, struct sim_ctl_state *out);
/* A scenario's key moments: stretches of simulated time [from, to) in ps that play at the
 * scale; outside them playback runs at SIM_SCALE_STEADY (1 us per 10 us), so that a lesson's
 * idle or steady stretches pass quickly (at most SIM_MAX_MOMENTS, sorted, not overlapping;
 * n = 0: all of the run plays at the scale). Set before the simulation plays; -EINVAL. */
#define SIM_MAX_MOMENTS  8
#define SIM_SCALE_STEADY 10000ull
/* The explorer's default pace for a lesson: 1 us per 1 ms (a 2.6 ms incast plays in 2.6 s). */
#define SIM_SCALE_LESSON 1000000ull
int sim_ctl_moments(struct sim *s, const uint64_t (*ps)[2], int n);
/* The moments set (into ps, SIM_MAX_MOMENTS rows); returns how many. */
int sim_ctl_get_moments(const struct sim *s, uint64_t (*ps)[2]);
/* Wall ns that sim_ps of simulated time from 0 takes at scale with those moments (the
 * playback's plan, without skipped idle stretches: an upper bound). */
double sim_playback_wall_ns(uint64_t scale, const uint64_t (*moments)[2], int n, uint64_t sim_ps);
/* Advance as the controls say, given the wall clock (ns, any monotonic origin): at full
 * speed runs up to max_events; at a scale, runs what is due by wall_ns. Returns events run. */
uint64_t sim_play(struct sim *s, uint64_t wall_ns, uint64_t max_events);

/* ---- Views ---- */
/* One port as a fabric view draws it. */
struct sim_port_snap {
    int node, port;           /* node index, port number on it */
    int peer_node, peer_port; /* the other end */
    bool host;                /* a NIC port */
    bool up;
    uint64_t queue_bytes;     /* data class, egress, now */
    uint64_t ctrl_bytes;      /* control class, egress, now */
    uint64_t watermark_bytes; /* largest data queue seen */
    uint64_t ingress_bytes;   /* bytes that entered here and still sit in this switch */
    bool paused;              /* egress held by the peer: PFC pause (RoCE) or no credits (IB) */
    bool pausing;             /* this port has asked its peer to pause (XOFF outstanding) */
    double mark_prob;         /* ECN marking probability at the current queue (RoCE) */
    uint64_t ecn_marked;      /* packets marked CE / FECN here */
    uint64_t xmit_bytes;      /* frames sent (port_xmit_data x 4) */
    double gbps;              /* link rate */
};
int sim_nports(const struct sim *s);
void sim_port_snapshot(const struct sim *s, struct sim_port_snap *out, int max);

/* Counters with the names real tools give them, per NIC ("h3") and per switch port
 * ("leaf0/2"); values follow engine/counters/counters.h (port_xmit_data already x4, durations in
 * us). Returns how many were written (at most max); with out NULL, how many there are. */
int sim_counters(const struct sim *s, struct counters_value *out, int max);
/* One raw counter as the hardware would show it (port_xmit_data in 4-byte words); -ENOENT
 * when the object or the name is unknown. */
int sim_counter(const struct sim *s, const char *object, const char *name, uint64_t *out);
/* Everything measured, deterministic: apps, ports, NICs (non-zero counters). */
cJSON *sim_results_json(const struct sim *s);

#endif
