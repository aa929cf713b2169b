/* ctr_test: helpers the counter tests share: a fake clock, lookups of one counter in a
 * set, and checks that fail the running cmocka test with the counter named. Test-only;
 * writes trees with tests/sysfs/sysfs_tree.h. */
#ifndef CTR_TEST_H
#define CTR_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/counters/counters.h"
#include "tests/sysfs/sysfs_tree.h"

static uint64_t fake_now_ns;

static inline uint64_t fake_clock(void *arg)
{
    (void)arg;
    return fake_now_ns;
}

/* The counter (object, name), or NULL. */
static inline const struct counters_value *ctr_find(const struct counters_set *s,
                                                    const char *object, const char *name)
{
    int n;
    const struct counters_value *v = counters_set_values(s, &n);
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].object, object) && !strcmp(v[i].name, name))
            return &v[i];
    return NULL;
}

static inline const struct counters_value *ctr_get(const struct counters_set *s, const char *object,
                                                   const char *name)
{
    const struct counters_value *v = ctr_find(s, object, name);
    if (!v)
        fail_msg("no counter %s %s in the set", object, name);
    return v;
}

static inline int ctr_count_object(const struct counters_set *s, const char *object)
{
    int n, k = 0;
    const struct counters_value *v = counters_set_values(s, &n);
    for (int i = 0; i < n; i++)
        k += !strcmp(v[i].object, object);
    return k;
}

#define assert_near(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (fabs(a_ - b_) > (tol))                                                                 \
            fail_msg("%s = %.6g, expected %.6g (+-%g)", #a, a_, b_, (double)(tol));                \
    } while (0)

static inline int ctr_has_note(const struct counters_set *s, const char *needle)
{
    const char *const *notes;
    int n = counters_set_notes(s, &notes);
    for (int i = 0; i < n; i++)
        if (strstr(notes[i], needle))
            return 1;
    for (int i = 0; i < n; i++)
        fprintf(stderr, "  note: %s\n", notes[i]);
    return 0;
}

#endif
