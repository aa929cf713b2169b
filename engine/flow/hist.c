/* hist: the log-linear latency histogram of hist.h. One thread records with relaxed atomic
 * loads and stores (ordinary moves on x86-64 and AArch64), readers copy with relaxed loads;
 * the sum of squares is an exact 128-bit integer; JSON keeps every integer exact. */
#include "engine/flow/hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* Why plain load + store (and not atomic_fetch_add) is safe for the recording thread:
 *
 * - Only one thread ever stores into a given histogram, so no other store can land
 *   between its load and its store; the atomicity of a read-modify-write (the locked
 *   instruction fetch_add costs on x86) only protects against concurrent writers.
 * - Readers need each 64-bit field to be either the old or the new value, never torn.
 *   Every access goes through atomic_load/atomic_store on an _Atomic object, which
 *   guarantees that even with memory_order_relaxed; on x86-64 and AArch64 a relaxed
 *   aligned 64-bit atomic load or store is a single ordinary mov / ldr / str.
 * - Relaxed accesses to one object still have a single modification order, and a thread's
 *   successive loads of it never go back in that order (read-read coherence). Since the
 *   writer only increases buckets and count, every bucket, and a count summed from them,
 *   never decreases from one snapshot to the next, and never exceeds its final value.
 * - Relaxed gives no order between different fields, so a snapshot taken during a record
 *   may see a bucket without the matching sum, min or max. hist_snapshot recomputes count
 *   from the buckets it copied and brings min and max inside the buckets it copied; sum
 *   and the sum of squares may be a sample behind (or, in the nanoseconds while the
 *   128-bit sum of squares carries between its halves, off by 2^64 ns^2, which the
 *   Popoviciu bound in hist_stats caps). Once the writer has stopped (joined), every
 *   field is exact. */

#define HALF_BITS    (HIST_SUB_BITS - 1)   /* log2 of the buckets per power of two */
#define EXACT_MAX    (1u << HIST_SUB_BITS) /* values below get one bucket each */
#define JSON_INT_MAX ((uint64_t)1 << 53)   /* integers below are exact in a double */

_Static_assert(HIST_NBUCKETS == ((HIST_MAX_EXP - HALF_BITS) << HALF_BITS) + (2 << HALF_BITS),
               "bucket count and geometry disagree");
_Static_assert(HIST_MAX_EXP < 63, "HIST_RANGE_END must fit in 64 bits");

static inline uint64_t ld(const _Atomic uint64_t *a)
{
    return atomic_load_explicit(a, memory_order_relaxed);
}

static inline void st(_Atomic uint64_t *a, uint64_t v)
{
    atomic_store_explicit(a, v, memory_order_relaxed);
}

/* Single-writer increment: a plain load and a plain store (see above). */
static inline void bump(_Atomic uint64_t *a, uint64_t by)
{
    st(a, ld(a) + by);
}

/* Index of the highest set bit of v (v != 0). */
static inline unsigned top_bit(uint64_t v)
{
#if defined(__GNUC__) || defined(__clang__)
    return 63u - (unsigned)__builtin_clzll(v);
#else
    unsigned n = 0;
    while (v >>= 1)
        n++;
    return n;
#endif
}

/* 64 x 64 -> 128-bit product. */
static inline void mul64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
#ifdef __SIZEOF_INT128__
    __extension__ unsigned __int128 p = (unsigned __int128)a * b;
    *hi = (uint64_t)(p >> 64);
    *lo = (uint64_t)p;
#else
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

/* Bucket of ns < HIST_RANGE_END. With e = max(HALF_BITS, top bit of ns) and s = e - HALF_BITS,
 * ns >> s has HALF_BITS + 1 significant bits, so (s << HALF_BITS) + (ns >> s) numbers the
 * buckets contiguously: ns itself below EXACT_MAX, then 2^HALF_BITS buckets per power of two. */
static inline int bucket_index(uint64_t ns)
{
    unsigned s = top_bit(ns | (1u << HALF_BITS)) - HALF_BITS;
    return (int)(((uint64_t)s << HALF_BITS) + (ns >> s));
}

int hist_bucket_of(uint64_t ns)
{
    return ns < HIST_RANGE_END ? bucket_index(ns) : -ERANGE;
}

uint64_t hist_bucket_low(int b)
{
    if (b < 0 || b >= HIST_NBUCKETS)
        return 0;
    if (b < (int)EXACT_MAX)
        return (uint64_t)b;
    unsigned s = ((unsigned)b >> HALF_BITS) - 1;
    uint64_t mant = ((unsigned)b & ((1u << HALF_BITS) - 1)) | (1u << HALF_BITS);
    return mant << s;
}

uint64_t hist_bucket_high(int b)
{
    if (b < 0 || b >= HIST_NBUCKETS)
        return 0;
    if (b < (int)EXACT_MAX)
        return (uint64_t)b;
    unsigned s = ((unsigned)b >> HALF_BITS) - 1;
    return hist_bucket_low(b) + ((uint64_t)1 << s) - 1;
}

void hist_init(struct hist *h)
{
    st(&h->count, 0);
    st(&h->sum, 0);
    st(&h->sumsq_lo, 0);
    st(&h->sumsq_hi, 0);
    st(&h->min, UINT64_MAX);
    st(&h->max, 0);
    st(&h->overflow, 0);
    for (int i = 0; i < HIST_NBUCKETS; i++)
        st(&h->b[i], 0);
}

void hist_record(struct hist *h, uint64_t ns)
{
    if (ns < HIST_RANGE_END)
        bump(&h->b[bucket_index(ns)], 1);
    else
        bump(&h->overflow, 1);
    bump(&h->count, 1);
    bump(&h->sum, ns);

    uint64_t sq_hi, sq_lo;
    mul64(ns, ns, &sq_hi, &sq_lo);
    uint64_t lo = ld(&h->sumsq_lo), nlo = lo + sq_lo;
    st(&h->sumsq_lo, nlo);
    if (sq_hi | (nlo < lo)) /* high half changes rarely: only store it then */
        bump(&h->sumsq_hi, sq_hi + (nlo < lo));

    if (ns < ld(&h->min))
        st(&h->min, ns);
    if (ns > ld(&h->max))
        st(&h->max, ns);
}

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void hist_snapshot(const struct hist *h, struct hist *out)
{
    /* Buckets first, then the scalars (see the comment at the top). */
    uint64_t n = 0;
    int first = -1, last = -1;
    for (int i = 0; i < HIST_NBUCKETS; i++) {
        uint64_t c = ld(&h->b[i]);
        st(&out->b[i], c);
        n += c;
        if (c) {
            if (first < 0)
                first = i;
            last = i;
        }
    }
    uint64_t ovf = ld(&h->overflow);
    n += ovf;
    uint64_t sum = ld(&h->sum), lo = ld(&h->sumsq_lo), hi = ld(&h->sumsq_hi);
    uint64_t mn = ld(&h->min), mx = ld(&h->max);

    if (n == 0) {
        sum = lo = hi = 0;
        mn = UINT64_MAX;
        mx = 0;
    } else {
        if (first >= 0)
            mn = clamp_u64(mn, hist_bucket_low(first), hist_bucket_high(first));
        else if (mn < HIST_RANGE_END)
            mn = HIST_RANGE_END;
        if (ovf)
            mx = mx < HIST_RANGE_END ? HIST_RANGE_END : mx;
        else
            mx = clamp_u64(mx, hist_bucket_low(last), hist_bucket_high(last));
        if (mn > mx) /* both read before the first sample's min/max stores */
            mn = mx;
    }
    st(&out->count, n);
    st(&out->overflow, ovf);
    st(&out->sum, sum);
    st(&out->sumsq_lo, lo);
    st(&out->sumsq_hi, hi);
    st(&out->min, mn);
    st(&out->max, mx);
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    for (int i = 0; i < HIST_NBUCKETS; i++) {
        uint64_t c = ld(&src->b[i]);
        if (c)
            bump(&dst->b[i], c);
    }
    bump(&dst->overflow, ld(&src->overflow));
    bump(&dst->count, ld(&src->count));
    bump(&dst->sum, ld(&src->sum));
    uint64_t lo = ld(&dst->sumsq_lo), nlo = lo + ld(&src->sumsq_lo);
    st(&dst->sumsq_lo, nlo);
    bump(&dst->sumsq_hi, ld(&src->sumsq_hi) + (nlo < lo));
    uint64_t mn = ld(&src->min), mx = ld(&src->max);
    if (mn < ld(&dst->min))
        st(&dst->min, mn);
    if (mx > ld(&dst->max))
        st(&dst->max, mx);
}

/* Samples in h as the buckets count them (equal to count unless h is live). */
static uint64_t total(const struct hist *h)
{
    uint64_t n = ld(&h->overflow);
    for (int i = 0; i < HIST_NBUCKETS; i++)
        n += ld(&h->b[i]);
    return n;
}

/* ceil(n * num / den) without overflow, for num <= den <= 10^9. */
static uint64_t rank_of(uint64_t n, uint64_t num, uint64_t den)
{
    uint64_t q = n / den, r = n % den;
    return q * num + (r * num + den - 1) / den;
}

/* The values at the k ascending ranks (1-based) among the n samples of h, by one walk
 * over the buckets: rank 1 is min, rank n is max, the others their bucket's midpoint
 * clamped to [min, max], or max for a rank among the overflow samples. */
static void values_at(const struct hist *h, uint64_t n, const uint64_t *ranks, double *out, int k)
{
    double mn = (double)ld(&h->min), mx = (double)ld(&h->max);
    uint64_t cum = 0;
    int b = -1;
    for (int i = 0; i < k; i++) {
        uint64_t r = ranks[i];
        if (r <= 1) {
            out[i] = mn;
            continue;
        }
        if (r >= n) {
            out[i] = mx;
            continue;
        }
        while (cum < r && b < HIST_NBUCKETS - 1)
            cum += ld(&h->b[++b]);
        if (cum < r) { /* among the overflow samples */
            out[i] = mx;
            continue;
        }
        double mid = ((double)hist_bucket_low(b) + (double)hist_bucket_high(b)) / 2;
        out[i] = mid < mn ? mn : mid > mx ? mx : mid;
    }
}

double hist_percentile(const struct hist *h, double p)
{
    if (!(p >= 0 && p <= 100))
        return NAN;
    uint64_t n = total(h);
    if (n == 0)
        return NAN;
    /* p / 100 as the fraction P / 10^9, p read to 7 decimal places */
    uint64_t r = rank_of(n, (uint64_t)llround(p * 1e7), 1000000000u);
    double v;
    values_at(h, n, &r, &v, 1);
    return v;
}

/* Population variance n*S2 - S1^2 over n^2, with the numerator exact in 192 bits. */
static double variance(uint64_t n, uint64_t s1, uint64_t s2_hi, uint64_t s2_lo)
{
    uint64_t a1, a0, b1, b0, c1, c0;
    mul64(n, s2_lo, &a1, &a0);
    mul64(n, s2_hi, &b1, &b0);
    uint64_t r0 = a0, r1 = a1 + b0, r2 = b1 + (r1 < a1); /* n * S2 */
    mul64(s1, s1, &c1, &c0);                             /* S1^2 */
    uint64_t borrow = r0 < c0;
    r0 -= c0;
    uint64_t t = r1 - c1, borrow2 = (r1 < c1) | (t < borrow);
    r1 = t - borrow;
    if (r2 < borrow2) /* negative: only from a torn read of a live histogram */
        return 0;
    r2 -= borrow2;
    double num = ldexp((double)r2, 128) + ldexp((double)r1, 64) + (double)r0;
    return num / (double)n / (double)n;
}

void hist_stats(const struct hist *h, struct hist_stats *s)
{
    uint64_t n = total(h);
    s->count = n;
    if (n == 0) {
        s->min = s->mean = s->stdev = s->max = NAN;
        s->p50 = s->p90 = s->p99 = s->p999 = s->p9999 = NAN;
        return;
    }
    uint64_t mn = ld(&h->min), mx = ld(&h->max), sum = ld(&h->sum);
    s->min = (double)mn;
    s->max = (double)mx;
    /* sum / n with the integer part exact */
    double mean = (double)(sum / n) + (double)(sum % n) / (double)n;
    s->mean = mean < s->min ? s->min : mean > s->max ? s->max : mean;
    double var = variance(n, sum, ld(&h->sumsq_hi), ld(&h->sumsq_lo));
    double half_range = (s->max - s->min) / 2; /* Popoviciu: var <= (range / 2)^2 */
    s->stdev = var > half_range * half_range ? half_range : sqrt(var);

    const uint64_t ranks[5] = {rank_of(n, 1, 2), rank_of(n, 9, 10), rank_of(n, 99, 100),
                               rank_of(n, 999, 1000), rank_of(n, 9999, 10000)};
    double v[5];
    values_at(h, n, ranks, v, 5);
    s->p50 = v[0];
    s->p90 = v[1];
    s->p99 = v[2];
    s->p999 = v[3];
    s->p9999 = v[4];
}

/* JSON integers: a number while exact in a double, a decimal string above. */

static cJSON *json_uint(uint64_t hi, uint64_t lo)
{
    if (hi == 0 && lo < JSON_INT_MAX)
        return cJSON_CreateNumber((double)lo);
    uint32_t limb[4] = {(uint32_t)(hi >> 32), (uint32_t)hi, (uint32_t)(lo >> 32), (uint32_t)lo};
    char buf[48], *p = buf + sizeof(buf) - 1;
    *p = '\0';
    bool nonzero;
    do { /* divide the 128-bit value by 10, most significant limb first */
        uint64_t rem = 0;
        nonzero = false;
        for (int i = 0; i < 4; i++) {
            uint64_t cur = (rem << 32) | limb[i];
            limb[i] = (uint32_t)(cur / 10);
            rem = cur % 10;
            nonzero |= limb[i] != 0;
        }
        *--p = (char)('0' + rem);
    } while (nonzero);
    return cJSON_CreateString(p);
}

/* Add item (NULL when its creation failed) to an object or, with key NULL, an array. */
static bool add(cJSON *to, const char *key, cJSON *item)
{
    if (!item)
        return false;
    if (key)
        cJSON_AddItemToObject(to, key, item);
    else
        cJSON_AddItemToArray(to, item);
    return true;
}

static bool get_u128(const cJSON *it, uint64_t *hi, uint64_t *lo)
{
    if (cJSON_IsNumber(it)) {
        double d = it->valuedouble;
        if (!(d >= 0 && d < (double)JSON_INT_MAX && d == floor(d)))
            return false;
        *hi = 0;
        *lo = (uint64_t)d;
        return true;
    }
    if (!cJSON_IsString(it) || !it->valuestring || !it->valuestring[0])
        return false;
    uint64_t h = 0, l = 0;
    for (const char *c = it->valuestring; *c; c++) {
        if (*c < '0' || *c > '9')
            return false;
        uint64_t carry, nl, nh_hi, nh;
        mul64(l, 10, &carry, &nl);
        mul64(h, 10, &nh_hi, &nh);
        if (nh_hi || nh > UINT64_MAX - carry)
            return false;
        nh += carry;
        l = nl + (uint64_t)(*c - '0');
        if (l < nl) {
            if (nh == UINT64_MAX)
                return false;
            nh++;
        }
        h = nh;
    }
    *hi = h;
    *lo = l;
    return true;
}

static bool get_u64(const cJSON *it, uint64_t *v)
{
    uint64_t hi;
    return get_u128(it, &hi, v) && hi == 0;
}

cJSON *hist_to_json(const struct hist *h)
{
    /* Serialise a snapshot so that the document is consistent even while h is live. */
    struct hist *s = malloc(sizeof(*s));
    cJSON *j = cJSON_CreateObject(), *bk = NULL;
    if (!s || !j)
        goto fail;
    hist_snapshot(h, s);
    uint64_t n = ld(&s->count);
    bool ok = add(j, "count", json_uint(0, n)) &&
              add(j, "min_ns", n ? json_uint(0, ld(&s->min)) : cJSON_CreateNull()) &&
              add(j, "max_ns", n ? json_uint(0, ld(&s->max)) : cJSON_CreateNull()) &&
              add(j, "sum_ns", json_uint(0, ld(&s->sum))) &&
              add(j, "sumsq_ns2", json_uint(ld(&s->sumsq_hi), ld(&s->sumsq_lo))) &&
              add(j, "overflow", json_uint(0, ld(&s->overflow))) &&
              add(j, "buckets", bk = cJSON_CreateArray());
    for (int i = 0; ok && i < HIST_NBUCKETS; i++) {
        uint64_t c = ld(&s->b[i]);
        cJSON *pair;
        if (c)
            ok = add(bk, NULL, pair = cJSON_CreateArray()) &&
                 add(pair, NULL, json_uint(0, hist_bucket_low(i))) &&
                 add(pair, NULL, json_uint(0, c));
    }
    if (!ok)
        goto fail;
    free(s);
    return j;
fail:
    free(s);
    cJSON_Delete(j);
    return NULL;
}

static int parse(const cJSON *j, struct hist *h)
{
    uint64_t n, sum, sq_hi, sq_lo, ovf, mn = UINT64_MAX, mx = 0;
    if (!cJSON_IsObject(j))
        return -EINVAL;
    const cJSON *jmin = cJSON_GetObjectItemCaseSensitive(j, "min_ns");
    const cJSON *jmax = cJSON_GetObjectItemCaseSensitive(j, "max_ns");
    const cJSON *bk = cJSON_GetObjectItemCaseSensitive(j, "buckets");
    if (!get_u64(cJSON_GetObjectItemCaseSensitive(j, "count"), &n) ||
        !get_u64(cJSON_GetObjectItemCaseSensitive(j, "sum_ns"), &sum) ||
        !get_u128(cJSON_GetObjectItemCaseSensitive(j, "sumsq_ns2"), &sq_hi, &sq_lo) ||
        !get_u64(cJSON_GetObjectItemCaseSensitive(j, "overflow"), &ovf) || !cJSON_IsArray(bk))
        return -EINVAL;
    if (n == 0) {
        if (!cJSON_IsNull(jmin) || !cJSON_IsNull(jmax) || sum || sq_hi || sq_lo)
            return -EINVAL;
    } else if (!get_u64(jmin, &mn) || !get_u64(jmax, &mx) || mn > mx) {
        return -EINVAL;
    }

    uint64_t seen = ovf;
    int first = -1, last = -1;
    const cJSON *pair;
    cJSON_ArrayForEach(pair, bk)
    {
        uint64_t low, c;
        if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 ||
            !get_u64(cJSON_GetArrayItem(pair, 0), &low) ||
            !get_u64(cJSON_GetArrayItem(pair, 1), &c) || c == 0)
            return -EINVAL;
        int b = hist_bucket_of(low);
        if (b < 0 || hist_bucket_low(b) != low || b <= last || seen > UINT64_MAX - c)
            return -EINVAL;
        seen += c;
        st(&h->b[b], c);
        if (first < 0)
            first = b;
        last = b;
    }
    if (seen != n)
        return -EINVAL;
    if (n) {
        bool min_ok = first >= 0 ? mn >= hist_bucket_low(first) && mn <= hist_bucket_high(first)
                                 : mn >= HIST_RANGE_END;
        bool max_ok = ovf ? mx >= HIST_RANGE_END
                          : mx >= hist_bucket_low(last) && mx <= hist_bucket_high(last);
        if (!min_ok || !max_ok)
            return -EINVAL;
    }
    st(&h->count, n);
    st(&h->sum, sum);
    st(&h->sumsq_lo, sq_lo);
    st(&h->sumsq_hi, sq_hi);
    st(&h->min, mn);
    st(&h->max, mx);
    st(&h->overflow, ovf);
    return 0;
}

int hist_from_json(const cJSON *j, struct hist *h)
{
    hist_init(h);
    int rc = parse(j, h);
    if (rc)
        hist_init(h);
    return rc;
}
