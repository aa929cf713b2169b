/* text_units: latencies in the unit they read best in. A table takes one unit for all its
 * cells, chosen from its typical figure (kv-transfer's p99 of 271581 us reads "271.58" under
 * "ms"); a lone figure carries its own ("8.84 us", "271.58 ms", "12.00 s"). The JSON keeps
 * microseconds; only what is shown scales. */
#ifndef TEXT_UNITS_H
#define TEXT_UNITS_H

#include <stddef.h>

struct text_lat_unit {
    const char *abbr; /* "us", "ms", "s" */
    const char *word; /* "microseconds", "milliseconds", "seconds" */
    double us;        /* microseconds in one of it */
};

/* The unit for figures around us microseconds: us below 10 ms, ms below 10 s, else s (so a
 * cell never needs more than four digits before its point). NaN or negative: us. */
struct text_lat_unit text_lat_unit_for(double us);
/* us microseconds in unit u, with the decimals a 9-column cell has room for ("0.27",
 * "271.58", "2716.3"); "n/a" for NaN. */
void text_lat_in(char *buf, size_t len, double us, struct text_lat_unit u);
/* A lone latency with its own unit: "8.84 us", "271.58 ms"; "n/a" for NaN. */
void text_lat_auto(char *buf, size_t len, double us);
/* A message size as the tables name it: "4KiB", "1MiB" for whole multiples, else "1500B". */
void text_size(char *buf, size_t len, double bytes);

#endif
