/* sim_params: the simulator's settings (defaults, the DCQCN presets, IB CC defaults, reading
 * and writing them as JSON) and the closed-form formulas of ../shared/sim-reference.md that the
 * model is built from and the tests check. */
#include "engine/sim/sim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonutil.h"

/* ---- formulas ---- */

uint64_t sim_ser_ps(uint64_t bytes, double gbps)
{
    return (uint64_t)llround((double)bytes * 8000.0 / gbps);
}

uint64_t sim_pause_ps(unsigned quanta, double gbps)
{
    /* §9: one quantum is 512 bit-times. */
    return (uint64_t)llround((double)quanta * SIM_PAUSE_QUANTUM * 1000.0 / gbps);
}

double sim_red_prob(uint64_t q, uint64_t kmin, uint64_t kmax, double pmax)
{
    /* §10: 0 below Kmin, linear to Pmax at Kmax, 1 above; Kmin = Kmax is step marking. */
    if (q < kmin)
        return 0;
    if (q > kmax)
        return 1;
    if (kmax == kmin)
        return pmax;
    return pmax * (double)(q - kmin) / (double)(kmax - kmin);
}

uint64_t sim_pfc_headroom(double gbps, uint64_t prop_ps, uint32_t mtu_frame)
{
    /* §8: H >= 2 C t_prop + MTU_sender + MTU_receiver + C t_response + pause-frame time. The
     * response bound is 201,728 bit-times at 100 G and 463,360 at 400 G (IEEE, via a vendor
     * headroom guide); between them interpolated, outside clamped. */
    double resp_bits;
    if (gbps <= 100)
        resp_bits = 201728;
    else if (gbps >= 400)
        resp_bits = 463360;
    else
        resp_bits = 201728 + (463360.0 - 201728) * (gbps - 100) / 300;
    double cable = 2 * gbps * 1e9 / 8 * (double)prop_ps * 1e-12;
    return (uint64_t)llround(cable + 2.0 * mtu_frame + resp_bits / 8 + SIM_PFC_FRAME + SIM_ETH_GAP);
}

uint64_t sim_rc_timeout_ps(int timeout)
{
    /* §14: T_o = 4.096 us x 2^timeout (IB spec, Local ACK Timeout). */
    if (timeout < 0)
        timeout = 0;
    if (timeout > 31)
        timeout = 31;
    return 4096000ull << timeout;
}

void sim_dcqcn_on_cnp(const struct sim_dcqcn *p, struct sim_dcqcn_rp *rp)
{
    /* §11 (DCQCN paper, reaction point): R_T <- R_C, R_C <- R_C (1 - alpha/2),
     * alpha <- (1 - g) alpha + g; the increase counters restart. */
    rp->rt = rp->rc;
    double keep = 1 - rp->alpha / 2;
    if (keep < p->min_dec_factor)
        keep = p->min_dec_factor;
    rp->rc *= keep;
    if (rp->rc < p->min_rate_gbps)
        rp->rc = p->min_rate_gbps;
    rp->alpha = (1 - p->g) * rp->alpha + p->g;
    rp->t_count = rp->b_count = 0;
}

void sim_dcqcn_alpha_decay(const struct sim_dcqcn *p, struct sim_dcqcn_rp *rp)
{
    rp->alpha *= 1 - p->g;
}

void sim_dcqcn_increase(const struct sim_dcqcn *p, struct sim_dcqcn_rp *rp, bool by_timer)
{
    /* §11: the first F events are fast recovery (R_C <- (R_T + R_C)/2); then additive
     * increase (R_T += R_AI) while one counter has passed F, hyper increase (R_T += i R_HAI)
     * once both have. */
    if (by_timer)
        rp->t_count++;
    else
        rp->b_count++;
    int hi = rp->t_count > rp->b_count ? rp->t_count : rp->b_count;
    int lo = rp->t_count < rp->b_count ? rp->t_count : rp->b_count;
    if (hi > p->fast_recovery) {
        if (lo > p->fast_recovery)
            rp->rt += (lo - p->fast_recovery) * p->rhai_gbps;
        else
            rp->rt += p->rai_gbps;
    }
    if (rp->rt > rp->line)
        rp->rt = rp->line;
    rp->rc = (rp->rt + rp->rc) / 2;
    if (rp->rc > rp->line)
        rp->rc = rp->line;
}

double sim_ib_credit_util(uint64_t vl_buffer, double gbps, uint64_t rtt_credit_ps)
{
    /* §12: utilisation = min(1, B_VL / (C x RTT_credit)). */
    double bdp = gbps * 1e9 / 8 * (double)rtt_credit_ps * 1e-12;
    double u = (double)vl_buffer / bdp;
    return u > 1 ? 1 : u;
}

/* ---- defaults and presets ---- */

void sim_dcqcn_paper(struct sim_dcqcn *d)
{
    /* DCQCN paper (§11). R_HAI is not given in §11; 10 x R_AI is assumed. */
    *d = (struct sim_dcqcn){
        .g = 1.0 / 256,
        .alpha_period = 55 * SIM_PS_PER_US,
        .rate_period = 55 * SIM_PS_PER_US,
        .byte_counter = 10000000,
        .fast_recovery = 5,
        .rai_gbps = 0.040,
        .rhai_gbps = 0.400,
        .cnp_interval = 50 * SIM_PS_PER_US,
        .reduce_period = 0,
        .min_dec_factor = 0.5,
        .min_rate_gbps = 0.010,
        .initial_alpha = 1,
    };
}

void sim_dcqcn_vendor(struct sim_dcqcn *d)
{
    *d = (struct sim_dcqcn){
        .g = 1.0 / 256,
        .alpha_period = 1 * SIM_PS_PER_US,  /* dce_tcp_rtt */
        .rate_period = 300 * SIM_PS_PER_US, /* rpg_time_reset */
        .byte_counter = 32767,              /* rpg_byte_reset */
        .fast_recovery = 1,                 /* rpg_threshold */
        .rai_gbps = 0.005,                  /* rpg_ai_rate */
        .rhai_gbps = 0.050,                 /* rpg_hai_rate */
        .cnp_interval = 4 * SIM_PS_PER_US,  /* min_time_between_cnps */
        .reduce_period = 4 * SIM_PS_PER_US, /* rate_reduce_monitor_period */
        .min_dec_factor = 0.5,              /* rpg_min_dec_fac */
        .min_rate_gbps = 0.001,             /* rpg_min_rate */
        .initial_alpha = 1,
    };
}

void sim_ibcc_default(struct sim_ibcc *c)
{
    memset(c, 0, sizeof(*c));
    c->threshold = 15;
    c->marking_rate = 0;
    c->victim_mask = 0;
    c->ccti_timer = 5;
    c->ccti_increase = 1;
    c->ccti_min = 0;
    c->ccti_limit = 127;
    for (int i = 0; i < 128; i++)
        c->cct[i] = (uint32_t)i * 20;
}

void sim_params_default(struct sim_params *p, enum sim_fabric fabric)
{
    memset(p, 0, sizeof(*p));
    p->fabric = fabric;
    p->mtu = 4096;
    p->ack_every = 4;
    p->control_class = true;
    p->buffer_bytes = 32ull << 20;
    p->switch_latency = (fabric == SIM_FABRIC_IB ? 150 : 300) * SIM_PS_PER_NS;
    p->pfc = fabric == SIM_FABRIC_ROCE;
    p->pfc_dynamic = true;
    p->pfc_alpha = 1.0 / 8;
    p->pfc_xoff = 64 * 1024;
    p->pfc_xon = 32 * 1024;
    p->pfc_xon_delta = 0; /* 2 MTU frames */
    p->headroom = 0;
    p->pause_quanta = 0xFFFF;
    p->data_prio = 3;
    p->ctrl_prio = 6;
    p->ecn = false;
    p->kmin = 400 * 1000;
    p->kmax = 1600 * 1000;
    p->pmax = 0.2;
    p->cc = SIM_CC_NONE;
    sim_dcqcn_paper(&p->dcqcn);
    sim_ibcc_default(&p->ibcc);
    p->timeout = 14;
    p->retry_cnt = 7;
    p->depth = 8;
    p->ib_vl_buffer = 128 * 1024;
    p->ib_credit_delay = 50 * SIM_PS_PER_NS;
    p->route_update = 1000 * SIM_PS_PER_US;
    p->seed = 1;
}

/* ---- JSON ---- */

struct jctx {
    const char *what;
    struct ft_err *err;
    int rc;
};

static int jfail(struct jctx *c, const char *key, const char *msg)
{
    if (!c->rc)
        c->rc = ft_err_set(c->err, -EINVAL, "%s: fabric.%s %s", c->what, key, msg);
    return c->rc;
}

/* o must be an object and every key of it in the list (NULL-terminated); else the nearest
 * known one is named. */
static void only_keys(struct jctx *c, const cJSON *o, const char *where, const char *const *keys)
{
    if (c->rc)
        return;
    if (!cJSON_IsObject(o)) { /* an array's items have no keys */
        jfail(c, where, "must be an object {...}");
        return;
    }
    char at[256];
    snprintf(at, sizeof(at), "%s: fabric%s%s", c->what, *where ? "." : "", where);
    c->rc = jsonutil_check_keys(o, keys, at, c->err);
}

static bool jnum(struct jctx *c, const cJSON *o, const char *key, double lo, double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return false;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi)) {
        char msg[96];
        snprintf(msg, sizeof(msg), "must be a number from %g to %g", lo, hi);
        jfail(c, key, msg);
        return false;
    }
    *out = v->valuedouble;
    return true;
}

static void ju64(struct jctx *c, const cJSON *o, const char *key, double lo, double hi,
                 double scale, uint64_t *out)
{
    double v;
    if (jnum(c, o, key, lo, hi, &v))
        *out = (uint64_t)llround(v * scale);
}

static void jint(struct jctx *c, const cJSON *o, const char *key, int lo, int hi, int *out)
{
    double v;
    if (jnum(c, o, key, lo, hi, &v))
        *out = (int)v;
}

static void jbool(struct jctx *c, const cJSON *o, const char *key, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return;
    if (!cJSON_IsBool(v))
        jfail(c, key, "must be true or false");
    else
        *out = cJSON_IsTrue(v);
}

static void parse_dcqcn(struct jctx *c, const cJSON *o, struct sim_dcqcn *d)
{
    static const char *const keys[] = {"preset",          "g",
                                       "alpha_period_us", "rate_period_us",
                                       "byte_counter",    "F",
                                       "rai_gbps",        "rhai_gbps",
                                       "cnp_interval_us", "reduce_period_us",
                                       "min_dec_factor",  "min_rate_gbps",
                                       "initial_alpha",   NULL};
    only_keys(c, o, "dcqcn", keys);
    const char *preset = jsonutil_str(o, "preset");
    if (preset && !strcmp(preset, "paper"))
        sim_dcqcn_paper(d);
    else if (preset && !strcmp(preset, "vendor"))
        sim_dcqcn_vendor(d);
    else if (preset)
        jfail(c, "dcqcn.preset", "must be \"paper\" or \"vendor\"");
    jnum(c, o, "g", 0, 1, &d->g);
    ju64(c, o, "alpha_period_us", 0.001, 1e6, SIM_PS_PER_US, &d->alpha_period);
    ju64(c, o, "rate_period_us", 0.001, 1e6, SIM_PS_PER_US, &d->rate_period);
    ju64(c, o, "byte_counter", 1, 1e12, 1, &d->byte_counter);
    jint(c, o, "F", 0, 1000, &d->fast_recovery);
    jnum(c, o, "rai_gbps", 0, 1000, &d->rai_gbps);
    jnum(c, o, "rhai_gbps", 0, 1000, &d->rhai_gbps);
    ju64(c, o, "cnp_interval_us", 0, 1e6, SIM_PS_PER_US, &d->cnp_interval);
    ju64(c, o, "reduce_period_us", 0, 1e6, SIM_PS_PER_US, &d->reduce_period);
    jnum(c, o, "min_dec_factor", 0, 1, &d->min_dec_factor);
    jnum(c, o, "min_rate_gbps", 0.0001, 1000, &d->min_rate_gbps);
    jnum(c, o, "initial_alpha", 0, 1, &d->initial_alpha);
}

static void parse_ibcc(struct jctx *c, const cJSON *o, struct sim_ibcc *cc)
{
    static const char *const top[] = {"SwitchCongestionSetting", "CACongestionSetting",
                                      "CongestionControlTable", NULL};
    static const char *const sw[] = {"Threshold", "Marking_Rate", "Victim_Mask", NULL};
    static const char *const ca[] = {"CCTI_Timer", "CCTI_Increase", "CCTI_Min", NULL};
    static const char *const tbl[] = {"CCTI_Limit", "entries_ns", "step_ns", NULL};
    only_keys(c, o, "ibcc", top);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "SwitchCongestionSetting");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "CACongestionSetting");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "CongestionControlTable");
    if (s) {
        only_keys(c, s, "ibcc.SwitchCongestionSetting", sw);
        jint(c, s, "Threshold", 0, 15, &cc->threshold);
        jint(c, s, "Marking_Rate", 0, 65535, &cc->marking_rate);
        double vm;
        if (jnum(c, s, "Victim_Mask", 0, 4294967295.0, &vm))
            cc->victim_mask = (uint32_t)vm;
    }
    if (a) {
        only_keys(c, a, "ibcc.CACongestionSetting", ca);
        jint(c, a, "CCTI_Timer", 1, 65535, &cc->ccti_timer);
        jint(c, a, "CCTI_Increase", 0, 127, &cc->ccti_increase);
        jint(c, a, "CCTI_Min", 0, 127, &cc->ccti_min);
    }
    if (t) {
        only_keys(c, t, "ibcc.CongestionControlTable", tbl);
        jint(c, t, "CCTI_Limit", 0, 127, &cc->ccti_limit);
        double step;
        if (jnum(c, t, "step_ns", 0, 1e6, &step))
            for (int i = 0; i < 128; i++)
                cc->cct[i] = (uint32_t)llround(step * i);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(t, "entries_ns");
        if (e) {
            int n = cJSON_GetArraySize(e);
            if (!cJSON_IsArray(e) || n < 1 || n > 128) {
                jfail(c, "ibcc.CongestionControlTable.entries_ns", "must be 1 to 128 numbers");
            } else {
                for (int i = 0; i < 128; i++) {
                    const cJSON *v = cJSON_GetArrayItem(e, i < n ? i : n - 1);
                    /* Up to a second between packets: within uint32_t nanoseconds. */
                    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 1e9)) {
                        jfail(c, "ibcc.CongestionControlTable.entries_ns",
                              "must be numbers from 0 to 1e9 (ns)");
                        break;
                    }
                    cc->cct[i] = (uint32_t)llround(v->valuedouble);
                }
            }
        }
    }
    if (cc->ccti_min > cc->ccti_limit)
        jfail(c, "ibcc", "CCTI_Min must not exceed CCTI_Limit");
}

static void parse_links(struct jctx *c, const cJSON *o, struct sim_params *p)
{
    static const char *const keys[] = {"at_us", "link", "state", NULL};
    if (!cJSON_IsArray(o) || cJSON_GetArraySize(o) > 8) {
        jfail(c, "link_events", "must be a list of at most 8 events");
        return;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, o)
    {
        struct sim_link_event *le = &p->link_events[p->nlink_events];
        only_keys(c, e, "link_events[]", keys);
        double at = 0;
        if (!jnum(c, e, "at_us", 0, 1e9, &at)) {
            jfail(c, "link_events[].at_us", "is required (microseconds)");
            return;
        }
        le->at = (uint64_t)llround(at * SIM_PS_PER_US);
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(e, "link");
        const cJSON *a = cJSON_GetArrayItem(l, 0), *b = cJSON_GetArrayItem(l, 1);
        if (cJSON_GetArraySize(l) != 2 || !cJSON_IsString(a) || !cJSON_IsString(b) ||
            strlen(a->valuestring) >= sizeof(le->a) || strlen(b->valuestring) >= sizeof(le->b)) {
            jfail(c, "link_events[].link", "must be [\"node\", \"node\"]");
            return;
        }
        snprintf(le->a, sizeof(le->a), "%s", a->valuestring);
        snprintf(le->b, sizeof(le->b), "%s", b->valuestring);
        const char *st = jsonutil_str(e, "state");
        if (!st || (strcmp(st, "down") && strcmp(st, "up"))) {
            jfail(c, "link_events[].state", "must be \"down\" or \"up\"");
            return;
        }
        le->up = !strcmp(st, "up");
        p->nlink_events++;
    }
}

int sim_params_from_json(const cJSON *o, const char *what, struct sim_params *p, struct ft_err *err)
{
    struct jctx c = {.what = what, .err = err};
    if (!o)
        return 0;
    if (!cJSON_IsObject(o))
        return ft_err_set(err, -EINVAL, "%s: fabric must be an object", what);
    static const char *const keys[] = {"mtu",
                                       "ack_every",
                                       "control_class",
                                       "buffer_bytes",
                                       "switch_latency_ns",
                                       "pfc",
                                       "ecn",
                                       "cc",
                                       "dcqcn",
                                       "ibcc",
                                       "timeout",
                                       "retry_cnt",
                                       "depth",
                                       "ib_vl_buffer_bytes",
                                       "ib_credit_delay_ns",
                                       "route_update_us",
                                       "seed",
                                       "sample_us",
                                       "link_events",
                                       NULL};
    only_keys(&c, o, "", keys);
    double v;
    if (jnum(&c, o, "mtu", 64, 65536, &v))
        p->mtu = (uint32_t)v;
    if (jnum(&c, o, "ack_every", 1, 1024, &v))
        p->ack_every = (uint32_t)v;
    jbool(&c, o, "control_class", &p->control_class);
    ju64(&c, o, "buffer_bytes", 4096, 1e10, 1, &p->buffer_bytes);
    ju64(&c, o, "switch_latency_ns", 0, 1e7, SIM_PS_PER_NS, &p->switch_latency);
    const cJSON *pfc = cJSON_GetObjectItemCaseSensitive(o, "pfc");
    if (pfc) {
        static const char *const pk[] = {"enabled",     "mode",
                                         "alpha",       "xoff_bytes",
                                         "xon_bytes",   "xoff_packets",
                                         "xon_packets", "headroom_bytes",
                                         "quanta",      "xon_delta_bytes",
                                         NULL};
        only_keys(&c, pfc, "pfc", pk);
        jbool(&c, pfc, "enabled", &p->pfc);
        const char *mode = jsonutil_str(pfc, "mode");
        if (mode && !strcmp(mode, "static"))
            p->pfc_dynamic = false;
        else if (mode && !strcmp(mode, "dynamic"))
            p->pfc_dynamic = true;
        else if (mode)
            jfail(&c, "pfc.mode", "must be \"static\" or \"dynamic\"");
        jnum(&c, pfc, "alpha", 1.0 / 1024, 64, &p->pfc_alpha);
        uint64_t frame = p->mtu + SIM_ROCE_HDR;
        ju64(&c, pfc, "xoff_packets", 1, 1e6, (double)frame, &p->pfc_xoff);
        ju64(&c, pfc, "xon_packets", 0, 1e6, (double)frame, &p->pfc_xon);
        ju64(&c, pfc, "xoff_bytes", 1, 1e10, 1, &p->pfc_xoff);
        ju64(&c, pfc, "xon_bytes", 0, 1e10, 1, &p->pfc_xon);
        ju64(&c, pfc, "xon_delta_bytes", 0, 1e10, 1, &p->pfc_xon_delta);
        ju64(&c, pfc, "headroom_bytes", 1, 1e10, 1, &p->headroom);
        if (jnum(&c, pfc, "quanta", 1, 65535, &v))
            p->pause_quanta = (uint16_t)v;
        if (!p->pfc_dynamic && p->pfc_xon > p->pfc_xoff)
            jfail(&c, "pfc", "xon must not exceed xoff");
    }
    const cJSON *ecn = cJSON_GetObjectItemCaseSensitive(o, "ecn");
    if (ecn) {
        static const char *const ek[] = {"enabled", "kmin_bytes", "kmax_bytes",
                                         "pmax",    "step_bytes", NULL};
        only_keys(&c, ecn, "ecn", ek);
        p->ecn = true;
        jbool(&c, ecn, "enabled", &p->ecn);
        ju64(&c, ecn, "kmin_bytes", 0, 1e10, 1, &p->kmin);
        ju64(&c, ecn, "kmax_bytes", 0, 1e10, 1, &p->kmax);
        jnum(&c, ecn, "pmax", 0, 1, &p->pmax);
        uint64_t k;
        if (jnum(&c, ecn, "step_bytes", 0, 1e10, &v)) {
            k = (uint64_t)v;
            p->kmin = p->kmax = k;
            p->pmax = 1;
        }
        if (p->kmax < p->kmin)
            jfail(&c, "ecn", "kmax_bytes must not be below kmin_bytes");
    }
    const char *cc = jsonutil_str(o, "cc");
    if (cc) {
        if (!strcmp(cc, "none"))
            p->cc = SIM_CC_NONE;
        else if (!strcmp(cc, "dcqcn"))
            p->cc = SIM_CC_DCQCN;
        else if (!strcmp(cc, "ibcc"))
            p->cc = SIM_CC_IBCC;
        else
            jfail(&c, "cc", "must be \"none\", \"dcqcn\" or \"ibcc\"");
    }
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "dcqcn");
    if (d)
        parse_dcqcn(&c, d, &p->dcqcn);
    const cJSON *ib = cJSON_GetObjectItemCaseSensitive(o, "ibcc");
    if (ib)
        parse_ibcc(&c, ib, &p->ibcc);
    jint(&c, o, "timeout", 0, 31, &p->timeout);
    jint(&c, o, "retry_cnt", 0, 7, &p->retry_cnt);
    if (jnum(&c, o, "depth", 1, SIM_MAX_HOSTS, &v))
        p->depth = (uint32_t)v;
    ju64(&c, o, "ib_vl_buffer_bytes", 128, 1e9, 1, &p->ib_vl_buffer);
    ju64(&c, o, "ib_credit_delay_ns", 0, 1e6, SIM_PS_PER_NS, &p->ib_credit_delay);
    ju64(&c, o, "route_update_us", 0, 1e9, SIM_PS_PER_US, &p->route_update);
    ju64(&c, o, "sample_us", 0, 1e9, SIM_PS_PER_US, &p->sample_period);
    if (jnum(&c, o, "seed", 0, 9e15, &v))
        p->seed = (uint64_t)v;
    const cJSON *le = cJSON_GetObjectItemCaseSensitive(o, "link_events");
    if (le)
        parse_links(&c, le, p);
    if (!c.rc && p->cc == SIM_CC_DCQCN && p->fabric == SIM_FABRIC_IB)
        jfail(&c, "cc", "dcqcn is RoCE congestion control; InfiniBand uses \"ibcc\"");
    if (!c.rc && p->cc == SIM_CC_IBCC && p->fabric == SIM_FABRIC_ROCE)
        jfail(&c, "cc", "ibcc is InfiniBand congestion control; RoCE uses \"dcqcn\"");
    return c.rc;
}

cJSON *sim_params_to_json(const struct sim_params *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "fabric", p->fabric == SIM_FABRIC_IB ? "ib" : "roce");
    cJSON_AddNumberToObject(o, "mtu", p->mtu);
    cJSON_AddNumberToObject(o, "ack_every", p->ack_every);
    cJSON_AddBoolToObject(o, "control_class", p->control_class);
    cJSON_AddStringToObject(o, "header_model",
                            p->fabric == SIM_FABRIC_IB
                                ? "IB: payload + 26 B (LRH 8, BTH 12, ICRC 4, VCRC 2), RETH +16 "
                                  "on a message's first packet, ACK 30 B"
                                : "RoCEv2: payload + 62 B (Eth 14, IPv4 20, UDP 8, BTH 12, ICRC "
                                  "4, FCS 4) + 20 B preamble and gap, RETH +16 on a message's "
                                  "first packet, ACK 86 B, CNP 98 B, PFC 84 B on the wire");
    cJSON_AddNumberToObject(o, "switch_latency_ns", (double)p->switch_latency / SIM_PS_PER_NS);
    if (p->fabric == SIM_FABRIC_ROCE) {
        cJSON_AddNumberToObject(o, "buffer_bytes", (double)p->buffer_bytes);
        cJSON *pfc = cJSON_AddObjectToObject(o, "pfc");
        cJSON_AddBoolToObject(pfc, "enabled", p->pfc);
        cJSON_AddStringToObject(pfc, "mode", p->pfc_dynamic ? "dynamic" : "static");
        if (p->pfc_dynamic) {
            cJSON_AddNumberToObject(pfc, "alpha", p->pfc_alpha);
            cJSON_AddNumberToObject(pfc, "xon_delta_bytes", (double)p->pfc_xon_delta);
        } else {
            cJSON_AddNumberToObject(pfc, "xoff_bytes", (double)p->pfc_xoff);
            cJSON_AddNumberToObject(pfc, "xon_bytes", (double)p->pfc_xon);
        }
        if (p->headroom)
            cJSON_AddNumberToObject(pfc, "headroom_bytes", (double)p->headroom);
        else
            cJSON_AddStringToObject(pfc, "headroom_bytes", "per link, sim-reference §8");
        cJSON_AddNumberToObject(pfc, "quanta", p->pause_quanta);
        cJSON *ecn = cJSON_AddObjectToObject(o, "ecn");
        cJSON_AddBoolToObject(ecn, "enabled", p->ecn);
        cJSON_AddNumberToObject(ecn, "kmin_bytes", (double)p->kmin);
        cJSON_AddNumberToObject(ecn, "kmax_bytes", (double)p->kmax);
        cJSON_AddNumberToObject(ecn, "pmax", p->pmax);
    } else {
        cJSON_AddNumberToObject(o, "ib_vl_buffer_bytes", (double)p->ib_vl_buffer);
        cJSON_AddNumberToObject(o, "ib_credit_delay_ns", (double)p->ib_credit_delay / 1000);
    }
    cJSON_AddStringToObject(o, "cc",
                            p->cc == SIM_CC_DCQCN  ? "dcqcn"
                            : p->cc == SIM_CC_IBCC ? "ibcc"
                                                   : "none");
    if (p->cc == SIM_CC_DCQCN) {
        const struct sim_dcqcn *d = &p->dcqcn;
        cJSON *j = cJSON_AddObjectToObject(o, "dcqcn");
        cJSON_AddNumberToObject(j, "g", d->g);
        cJSON_AddNumberToObject(j, "alpha_period_us", (double)d->alpha_period / SIM_PS_PER_US);
        cJSON_AddNumberToObject(j, "rate_period_us", (double)d->rate_period / SIM_PS_PER_US);
        cJSON_AddNumberToObject(j, "byte_counter", (double)d->byte_counter);
        cJSON_AddNumberToObject(j, "F", d->fast_recovery);
        cJSON_AddNumberToObject(j, "rai_gbps", d->rai_gbps);
        cJSON_AddNumberToObject(j, "rhai_gbps", d->rhai_gbps);
        cJSON_AddNumberToObject(j, "cnp_interval_us", (double)d->cnp_interval / SIM_PS_PER_US);
        cJSON_AddNumberToObject(j, "reduce_period_us", (double)d->reduce_period / SIM_PS_PER_US);
        cJSON_AddNumberToObject(j, "min_dec_factor", d->min_dec_factor);
        cJSON_AddNumberToObject(j, "min_rate_gbps", d->min_rate_gbps);
    }
    if (p->cc == SIM_CC_IBCC) {
        const struct sim_ibcc *c = &p->ibcc;
        cJSON *j = cJSON_AddObjectToObject(o, "ibcc");
        cJSON *s = cJSON_AddObjectToObject(j, "SwitchCongestionSetting");
        cJSON_AddNumberToObject(s, "Threshold", c->threshold);
        cJSON_AddNumberToObject(s, "Marking_Rate", c->marking_rate);
        cJSON_AddNumberToObject(s, "Victim_Mask", c->victim_mask);
        cJSON *a = cJSON_AddObjectToObject(j, "CACongestionSetting");
        cJSON_AddNumberToObject(a, "CCTI_Timer", c->ccti_timer);
        cJSON_AddNumberToObject(a, "CCTI_Increase", c->ccti_increase);
        cJSON_AddNumberToObject(a, "CCTI_Min", c->ccti_min);
        cJSON *t = cJSON_AddObjectToObject(j, "CongestionControlTable");
        cJSON_AddNumberToObject(t, "CCTI_Limit", c->ccti_limit);
        cJSON *e = cJSON_AddArrayToObject(t, "entries_ns");
        for (int i = 0; i <= c->ccti_limit; i++)
            cJSON_AddItemToArray(e, cJSON_CreateNumber(c->cct[i]));
    }
    cJSON_AddNumberToObject(o, "timeout", p->timeout);
    cJSON_AddNumberToObject(o, "timeout_us", (double)sim_rc_timeout_ps(p->timeout) / 1e6);
    cJSON_AddNumberToObject(o, "retry_cnt", p->retry_cnt);
    cJSON_AddNumberToObject(o, "depth", p->depth);
    cJSON_AddNumberToObject(o, "route_update_us", (double)p->route_update / SIM_PS_PER_US);
    cJSON_AddNumberToObject(o, "seed", (double)p->seed);
    cJSON_AddNumberToObject(o, "sample_us", (double)p->sample_period / SIM_PS_PER_US);
    cJSON *le = cJSON_AddArrayToObject(o, "link_events");
    for (int i = 0; i < p->nlink_events; i++) {
        const struct sim_link_event *e = &p->link_events[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "at_us", (double)e->at / SIM_PS_PER_US);
        cJSON *l = cJSON_AddArrayToObject(j, "link");
        cJSON_AddItemToArray(l, cJSON_CreateString(e->a));
        cJSON_AddItemToArray(l, cJSON_CreateString(e->b));
        cJSON_AddStringToObject(j, "state", e->up ? "up" : "down");
        cJSON_AddItemToArray(le, j);
    }
    return o;
}
