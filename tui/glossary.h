/* glossary: one or two sentences for every term and counter the explorer shows, for
 * teaching new staff. Terms are listed here; counters come from the counter tables
 * (topo_ibcounters and the engine's counter registry) so the text lives in one place. */
#ifndef GLOSSARY_H
#define GLOSSARY_H

#include <stddef.h>

#include "common/counters_value.h"

struct glossary_entry {
    const char *term;
    const char *text;
    /* A counter's source, where one name means different things in different places
     * (rx_bytes of a netdev, of ethtool, of mlx5's hw_counters): "netdev", "hw_counters mlx5",
     * "ib"; NULL for a term. */
    const char *where;
};

/* The explanation of a term or counter name, or NULL. Case-insensitive. */
const char *glossary_lookup(const char *term);
/* The entry for a counter as sampled: its name (a '#' in an entry's name stands for digits,
 * "rx_prio#_pause" for "rx_prio3_pause") from its own source (a queue pair's counter is a
 * hw_counters one), else from any source; NULL when there is none. */
const struct glossary_entry *glossary_counter(enum counters_source src, const char *name);
/* The entry's label as the help lists it: "rx_bytes (netdev)", "ECN". */
void glossary_label(const struct glossary_entry *e, char *buf, size_t len);
/* All entries (terms first, then counters), for the help view; *n gets the count. The
 * array is built once and stays valid. */
const struct glossary_entry *glossary_all(int *n);

#endif
