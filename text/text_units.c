/* text_units: latencies in the unit they read best in (text_units.h). */
#include "text/text_units.h"

#include <math.h>
#include <stdio.h>

struct text_lat_unit text_lat_unit_for(double us)
{
    if (us >= 1e7)
        return (struct text_lat_unit){"s", "seconds", 1e6};
    if (us >= 1e4)
        return (struct text_lat_unit){"ms", "milliseconds", 1e3};
    return (struct text_lat_unit){"us", "microseconds", 1};
}

void text_lat_in(char *buf, size_t len, double us, struct text_lat_unit u)
{
    if (isnan(us)) {
        snprintf(buf, len, "n/a");
        return;
    }
    double v = us / u.us;
    double a = fabs(v);
    /* As the summary's microsecond cells always were: two decimals below 1000, one below
     * 100000. */
    const char *fmt = a < 1000 ? "%.2f" : a < 100000 ? "%.1f" : "%.0f";
    snprintf(buf, len, fmt, v);
}

void text_lat_auto(char *buf, size_t len, double us)
{
    if (isnan(us)) {
        snprintf(buf, len, "n/a");
        return;
    }
    struct text_lat_unit u = text_lat_unit_for(us);
    char v[32];
    text_lat_in(v, sizeof(v), us, u);
    snprintf(buf, len, "%s %s", v, u.abbr);
}

void text_size(char *buf, size_t len, double b)
{
    if (b >= 1048576 && fmod(b, 1048576) == 0)
        snprintf(buf, len, "%.0fMiB", b / 1048576);
    else if (b >= 1024 && fmod(b, 1024) == 0)
        snprintf(buf, len, "%.0fKiB", b / 1024);
    else
        snprintf(buf, len, "%.0fB", b);
}
