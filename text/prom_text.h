/* prom_text: the Prometheus text exposition format (version 0.0.4) for fabtop's counters and
 * results: metric families with # HELP and # TYPE, samples grouped by family, label values
 * escaped, names in base units (bytes, seconds, ratios) with _total on counters. What
 * node_exporter's default collectors already export is left out (docs/prometheus.md). */
#ifndef PROM_TEXT_H
#define PROM_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/counters_value.h"
#include "common/strbuf.h"

struct results_run;
struct results_sweep;

enum prom_type { PROM_COUNTER = 0, PROM_GAUGE, PROM_SUMMARY };

struct prom_label {
    const char *name;
    const char *value;
};

/* An exposition being built: families in the order first added, each family's samples
 * together (the format wants a family's lines contiguous, one HELP and one TYPE). */
struct prom_text;

struct prom_text *prom_text_new(void);
void prom_text_free(struct prom_text *p);
/* Add one sample. family: the metric name (for a summary also the name of its quantile
 * samples); sample_suffix: "" or, for a summary, "_sum" / "_count". help and type are the
 * family's (the first add's win). 0; -EEXIST when the series (sample name and labels) is
 * there already (the first value stays); -EINVAL for a name or label name the format does
 * not allow, or a type other than the family's. */
int prom_text_add(struct prom_text *p, const char *family, const char *sample_suffix,
                  enum prom_type type, const char *help, const struct prom_label *labels,
                  int nlabels, double value);
/* Samples in the exposition. */
int prom_text_count(const struct prom_text *p);
/* Append the exposition to out (ends with a newline; empty when there is no sample). */
void prom_text_render(const struct prom_text *p, struct strbuf *out);

/* A label value as the format writes it between double quotes: backslash, double quote and
 * newline escaped as \\, \" and \n. */
void prom_text_escape_label(struct strbuf *out, const char *value);
/* HELP text: backslash and newline escaped (a double quote stays as it is). */
void prom_text_escape_help(struct strbuf *out, const char *text);
/* A value: integers exactly ("4000", "4294967295"), others in the shortest form that reads
 * back to the same double, at most 15 significant digits; NaN, +Inf, -Inf as the format
 * spells them. */
void prom_text_value(struct strbuf *out, double v);
/* snake_case of any name, for the metric names the format's linters accept: "TCPTimeouts" ->
 * "tcp_timeouts", "InECT0Pkts" -> "in_ect0_pkts", "VL15_dropped" -> "vl15_dropped";
 * characters other than letters, digits and '_' become '_'. */
void prom_text_snake(const char *in, char *out, size_t len);
/* A counter unit in base units: the factor to multiply by and the suffix the name gets
 * ("bytes": 1 and "bytes"; "us": 1e-6 and "seconds"; "ms": 1e-3; "%": 0.01 and "ratio").
 * false for units that are counts of things (packets, events, frames...): factor 1, no suffix. */
bool prom_text_unit(const char *unit, double *factor, const char **suffix);
/* v times factor, a factor of 10^-k applied as a division by 10^k (exact where it can be). */
double prom_text_convert(double v, double factor);

/* Whether node_exporter's collectors that are on by default export this counter already
 * (infiniband: every PortCounter of counters/ and counters_ext/; netdev: every netdev
 * statistic; netstat: its default --collector.netstat.fields). */
bool prom_text_node_exporter_has(enum counters_source src, const char *object, const char *name);

/* One counter's metric: its family name ("fabtop_rdma_local_ack_timeout_err_total"), the labels
 * taken from its object and name (device, port; device, handle, kind for a qdisc; priority and
 * queue numbers out of names such as rx_prio3_pause), and the factor to base units. false when
 * the counter has no metric (its source is not one fabtop exports). labels holds at most 6;
 * their values point into buf. */
struct prom_counter_name {
    char family[160];
    char pattern[96]; /* the counter's name with the numbers made labels as '#' */
    struct prom_label labels[6];
    int nlabels;
    double factor;
    char buf[256];
};
bool prom_text_counter_name(const struct counters_value *v, struct prom_counter_name *out);

struct prom_counters_opts {
    bool all;     /* also unknown counters (not in fabtop's table) */
    bool overlap; /* also what node_exporter exports (prom_text_node_exporter_has) */
};
/* The counters' samples (values as last sampled; n/a ones left out; settings left out) and,
 * for each saturating counter of an RDMA port, fabtop_port_saturated 0 or 1. */
void prom_text_counters(struct prom_text *p, const struct counters_value *v, int n,
                        const struct prom_counters_opts *o);
/* A run's results: its start time, duration, each flow's latency (a summary in seconds per
 * flow, phase and size, with the latency kind as a label), goodput in bytes per second,
 * operations per second, and whether it failed; each phase's counter deltas (the port-wide
 * counters of what the test used, and each flow's own queue pairs' RDMA counter) as gauges
 * fabtop_run_phase_* in base units. */
void prom_text_run(struct prom_text *p, const struct results_run *r);
/* A sweep's results: its start time and each pair's latency and goodput per direction. */
void prom_text_sweep(struct prom_text *p, const struct results_sweep *s);
/* "2026-12-01T22:10:02.600Z" as seconds since the epoch; false when it is not that form. */
bool prom_text_iso_time(const char *iso, double *out);

#endif
