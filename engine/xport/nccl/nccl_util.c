/* nccl_util: names, layouts, nccl-tests bandwidth arithmetic, the NCCL debug-output parser
 * and the correctness-check pattern; pure functions, no GPU. */
#include "engine/xport/nccl/nccl_util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ---- */

static const char *const coll_names[NCCL_COLL_COUNT] = {
    "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv"};
static const char *const coll_funcs[NCCL_COLL_COUNT] = {
    "AllReduce", "AllGather", "ReduceScatter", "AlltoAll", "Broadcast", "Reduce", NULL};

const char *nccl_util_coll_name(enum nccl_util_coll c)
{
    return (unsigned)c < NCCL_COLL_COUNT ? coll_names[c] : "?";
}

const char *nccl_util_coll_func(enum nccl_util_coll c)
{
    return (unsigned)c < NCCL_COLL_COUNT ? coll_funcs[c] : NULL;
}

/* Compare ignoring case, '_' and '-' ("AllReduce", "all-reduce", "all_reduce"). */
static bool loose_eq(const char *a, const char *b)
{
    for (;;) {
        while (*a == '_' || *a == '-')
            a++;
        while (*b == '_' || *b == '-')
            b++;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
        if (!*a)
            return true;
        a++;
        b++;
    }
}

int nccl_util_coll_parse(const char *s)
{
    if (!s)
        return -1;
    for (int i = 0; i < NCCL_COLL_COUNT; i++)
        if (loose_eq(s, coll_names[i]))
            return i;
    if (loose_eq(s, "send_recv") || loose_eq(s, "p2p"))
        return NCCL_COLL_SENDRECV;
    if (loose_eq(s, "all_to_all"))
        return NCCL_COLL_ALLTOALL;
    return -1;
}

bool nccl_util_coll_reduces(enum nccl_util_coll c)
{
    return c == NCCL_COLL_ALL_REDUCE || c == NCCL_COLL_REDUCE_SCATTER || c == NCCL_COLL_REDUCE;
}

bool nccl_util_coll_rooted(enum nccl_util_coll c)
{
    return c == NCCL_COLL_BROADCAST || c == NCCL_COLL_REDUCE;
}

static const struct nccl_util_dtype dtypes[] = {
    {"float", 7, 4, true, true},      {"half", 6, 2, true, true},
    {"bfloat16", 9, 2, true, true},   {"double", 8, 8, true, true},
    {"int8", 0, 1, false, true},      {"uint8", 1, 1, false, true},
    {"int32", 2, 4, false, true},     {"uint32", 3, 4, false, true},
    {"int64", 4, 8, false, true},     {"uint64", 5, 8, false, true},
    {"fp8_e4m3", 10, 1, true, false}, {"fp8_e5m2", 11, 1, true, false},
};

static const struct {
    const char *alias, *name;
} dtype_aliases[] = {
    {"float32", "float"}, {"fp32", "float"},      {"float16", "half"},    {"fp16", "half"},
    {"bf16", "bfloat16"}, {"float64", "double"},  {"fp64", "double"},     {"char", "int8"},
    {"int", "int32"},     {"f8e4m3", "fp8_e4m3"}, {"f8e5m2", "fp8_e5m2"},
};

const struct nccl_util_dtype *nccl_util_dtype_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof(dtype_aliases) / sizeof(dtype_aliases[0]); i++)
        if (loose_eq(name, dtype_aliases[i].alias))
            name = dtype_aliases[i].name;
    for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
        if (loose_eq(name, dtypes[i].name))
            return &dtypes[i];
    return NULL;
}

const char *nccl_util_dtype_names(void)
{
    return "float, half, bfloat16, double, int8, uint8, int32, uint32, int64, uint64, fp8_e4m3, "
           "fp8_e5m2";
}

static const char *const redop_names[] = {"sum", "prod", "max", "min", "avg"};

const char *nccl_util_redop_name(int op)
{
    return op >= 0 && op < 5 ? redop_names[op] : "?";
}

int nccl_util_redop_parse(const char *s)
{
    for (int i = 0; s && i < 5; i++)
        if (loose_eq(s, redop_names[i]))
            return i;
    return -1;
}

/* ---- layouts and bandwidth ---- */

int nccl_util_layout(enum nccl_util_coll c, uint64_t size, int type_size, int nranks,
                     struct nccl_util_layout *out)
{
    memset(out, 0, sizeof(*out));
    if (type_size <= 0 || nranks <= 0 || (unsigned)c >= NCCL_COLL_COUNT)
        return -EINVAL;
    uint64_t n = (uint64_t)nranks, ts = (uint64_t)type_size;
    uint64_t elems = size / ts;
    switch (c) {
    case NCCL_COLL_ALL_GATHER:
        out->count = elems / n; /* sendcount */
        out->bytes = out->count * ts * n;
        out->send_bytes = out->count * ts;
        out->recv_bytes = out->bytes;
        break;
    case NCCL_COLL_REDUCE_SCATTER:
        out->count = elems / n; /* recvcount */
        out->bytes = out->count * ts * n;
        out->send_bytes = out->bytes;
        out->recv_bytes = out->count * ts;
        break;
    case NCCL_COLL_ALLTOALL:
        out->count = elems / n; /* per peer */
        out->bytes = out->count * ts * n;
        out->send_bytes = out->recv_bytes = out->bytes;
        break;
    default: /* all_reduce, broadcast, reduce, sendrecv */
        out->count = elems;
        out->bytes = out->count * ts;
        out->send_bytes = out->recv_bytes = out->bytes;
        break;
    }
    out->elements = out->bytes / ts;
    return out->count ? 0 : -EINVAL;
}

double nccl_util_busbw_factor(enum nccl_util_coll c, int nranks)
{
    double n = nranks > 0 ? nranks : 1;
    switch (c) {
    case NCCL_COLL_ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case NCCL_COLL_ALL_GATHER:
    case NCCL_COLL_REDUCE_SCATTER:
    case NCCL_COLL_ALLTOALL:
        return (n - 1) / n;
    default:
        return 1.0;
    }
}

const char *nccl_util_busbw_formula(enum nccl_util_coll c)
{
    switch (c) {
    case NCCL_COLL_ALL_REDUCE:
        return "2(n-1)/n";
    case NCCL_COLL_ALL_GATHER:
    case NCCL_COLL_REDUCE_SCATTER:
    case NCCL_COLL_ALLTOALL:
        return "(n-1)/n";
    default:
        return "1";
    }
}

void nccl_util_bw(enum nccl_util_coll c, uint64_t bytes, int nranks, double seconds,
                  double *algbw_GBps, double *busbw_GBps)
{
    double alg = seconds > 0 ? (double)bytes / 1.0e9 / seconds : 0;
    if (algbw_GBps)
        *algbw_GBps = alg;
    if (busbw_GBps)
        *busbw_GBps = alg * nccl_util_busbw_factor(c, nranks);
}

/* ---- the debug-output parser ---- */

void nccl_util_log_init(struct nccl_util_log *l)
{
    memset(l, 0, sizeof(*l));
    l->nnodes = l->nranks = -1;
    l->coll_channels = l->nvls_channels = l->p2p_channels = -1;
    l->nvls = -1;
}

/* Copy the word at s (up to a space, comma or the end) into buf. */
static void word(const char *s, char *buf, size_t len)
{
    size_t n = 0;
    while (s[n] && !isspace((unsigned char)s[n]) && s[n] != ',' && n + 1 < len)
        n++;
    memcpy(buf, s, n);
    buf[n] = '\0';
}

/* The integer right before `what` in s ("24 coll channels"), or -1. */
static int number_before(const char *s, const char *what)
{
    const char *p = strstr(s, what);
    if (!p || p == s)
        return -1;
    const char *q = p;
    while (q > s && q[-1] == ' ')
        q--;
    const char *e = q;
    while (q > s && isdigit((unsigned char)q[-1]))
        q--;
    if (q == e)
        return -1;
    return atoi(q);
}

static bool parse_tuning(struct nccl_util_log *l, const char *msg)
{
    /* "AllReduce: 65536 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..7}" */
    const char *colon = strchr(msg, ':');
    const char *arrow = strstr(msg, " Bytes -> Algo ");
    if (!colon || !arrow || colon > arrow || colon - msg >= 24)
        return false;
    struct nccl_util_tuning t;
    memset(&t, 0, sizeof(t));
    memcpy(t.func, msg, (size_t)(colon - msg));
    char *end;
    t.bytes = strtoull(colon + 1, &end, 10);
    if (end != arrow)
        return false;
    const char *a = arrow + strlen(" Bytes -> Algo ");
    word(a, t.algo, sizeof(t.algo));
    const char *pr = strstr(a, " proto ");
    if (!pr)
        return false;
    word(pr + 7, t.proto, sizeof(t.proto));
    t.ch_lo = t.ch_hi = -1;
    const char *ch = strstr(a, "channel{Lo..Hi}={");
    if (ch)
        sscanf(ch + strlen("channel{Lo..Hi}={"), "%d..%d", &t.ch_lo, &t.ch_hi);
    /* Keep the latest decision per (func, bytes): replace an older entry. */
    for (int i = 0; i < l->ntuning; i++)
        if (!strcmp(l->tuning[i].func, t.func) && l->tuning[i].bytes == t.bytes) {
            l->tuning[i] = t;
            return true;
        }
    if (l->ntuning < NCCL_LOG_MAX_TUNING)
        l->tuning[l->ntuning++] = t;
    else
        l->tuning[NCCL_LOG_MAX_TUNING - 1] = t;
    return true;
}

static void add_transport(struct nccl_util_log *l, const char *via)
{
    char t[48];
    size_t n = 0;
    while (via[n] && via[n] != '\n' && via[n] != '\r' && n + 1 < sizeof(t))
        n++;
    while (n && isspace((unsigned char)via[n - 1]))
        n--;
    memcpy(t, via, n);
    t[n] = '\0';
    if (!n)
        return;
    for (int i = 0; i < l->ntransports; i++)
        if (!strcmp(l->transports[i], t))
            return;
    if (l->ntransports < NCCL_LOG_MAX_TRANSPORTS)
        snprintf(l->transports[l->ntransports++], sizeof(l->transports[0]), "%s", t);
}

bool nccl_util_log_line(struct nccl_util_log *l, const char *line)
{
    const char *v = strstr(line, "NCCL version ");
    if (v) {
        word(v + strlen("NCCL version "), l->version, sizeof(l->version));
        return true;
    }
    const char *w = strstr(line, "NCCL WARN ");
    if (w) {
        const char *m = w + strlen("NCCL WARN ");
        size_t n = strcspn(m, "\r\n");
        if (n >= sizeof(l->last_warn))
            n = sizeof(l->last_warn) - 1;
        memcpy(l->last_warn, m, n);
        l->last_warn[n] = '\0';
        return true;
    }
    const char *msg = strstr(line, "NCCL INFO ");
    msg = msg ? msg + strlen("NCCL INFO ") : line;
    if (parse_tuning(l, msg))
        return true;
    const char *via = strstr(msg, " via ");
    if (!strncmp(msg, "Channel ", 8) && via) {
        add_transport(l, via + 5);
        return true;
    }
    const char *net = strstr(msg, "Using network ");
    if (net == msg) {
        word(net + strlen("Using network "), l->network, sizeof(l->network));
        return true;
    }
    if (strstr(msg, " coll channels")) {
        l->coll_channels = number_before(msg, " coll channels");
        l->nvls_channels = number_before(msg, " nvls channels");
        l->p2p_channels = number_before(msg, " p2p channels,");
        if (l->p2p_channels < 0)
            l->p2p_channels = number_before(msg, " p2p channels");
        return true;
    }
    const char *nv = strstr(msg, "NVLS multicast support is ");
    if (nv) {
        l->nvls = strncmp(nv + strlen("NVLS multicast support is "), "not", 3) ? 1 : 0;
        return true;
    }
    const char *nr = strstr(msg, " nRanks ");
    const char *nn = strstr(msg, " nNodes ");
    if (!strncmp(msg, "comm ", 5) && nr && nn) {
        l->nranks = atoi(nr + 8);
        l->nnodes = atoi(nn + 8);
        return true;
    }
    return false;
}

int nccl_util_log_file(struct nccl_util_log *l, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        size_t n = strlen(line);
        if (n && line[n - 1] != '\n' && !feof(f)) {
            /* longer than the buffer: skip the rest of it */
            int ch;
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                ;
        }
        nccl_util_log_line(l, line);
    }
    fclose(f);
    return 0;
}

const struct nccl_util_tuning *nccl_util_log_tuning(const struct nccl_util_log *l, const char *func,
                                                    uint64_t bytes)
{
    for (int i = l->ntuning - 1; i >= 0; i--)
        if (!strcmp(l->tuning[i].func, func) && l->tuning[i].bytes == bytes)
            return &l->tuning[i];
    return NULL;
}

/* ---- half / bfloat16 ---- */

uint16_t nccl_util_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t man = x & 0x7fffffu;
    if (((x >> 23) & 0xff) == 0xff) /* inf / nan */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) { /* subnormal or zero */
        if (exp < -10)
            return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t h = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = sign | ((uint32_t)exp << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++; /* may carry into the exponent: still correct */
    return (uint16_t)h;
}

float nccl_util_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu, x;
    if (exp == 0) {
        if (!man) {
            x = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400u));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        x = sign | 0x7f800000u | (man << 13);
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

uint16_t nccl_util_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu))
        return (uint16_t)((x >> 16) | 0x40u); /* quiet nan */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

float nccl_util_bf16_to_float(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* ---- correctness check ---- */

double nccl_util_check_value(int redop, int rank, uint64_t j)
{
    if (redop == 1) /* prod: 1 or 2, so products of many ranks stay exact */
        return (double)(1 + (j + (uint64_t)rank) % 2);
    return (double)(1 + (j * 3 + (uint64_t)rank) % 5);
}

static void store(const struct nccl_util_dtype *t, void *buf, uint64_t i, double v)
{
    switch (t->nccl) {
    case 0:
        ((int8_t *)buf)[i] = (int8_t)v;
        break;
    case 1:
        ((uint8_t *)buf)[i] = (uint8_t)v;
        break;
    case 2:
        ((int32_t *)buf)[i] = (int32_t)v;
        break;
    case 3:
        ((uint32_t *)buf)[i] = (uint32_t)v;
        break;
    case 4:
        ((int64_t *)buf)[i] = (int64_t)v;
        break;
    case 5:
        ((uint64_t *)buf)[i] = (uint64_t)v;
        break;
    case 6:
        ((uint16_t *)buf)[i] = nccl_util_float_to_half((float)v);
        break;
    case 7:
        ((float *)buf)[i] = (float)v;
        break;
    case 8:
        ((double *)buf)[i] = v;
        break;
    case 9:
        ((uint16_t *)buf)[i] = nccl_util_float_to_bf16((float)v);
        break;
    default:
        break;
    }
}

static double load(const struct nccl_util_dtype *t, const void *buf, uint64_t i)
{
    switch (t->nccl) {
    case 0:
        return ((const int8_t *)buf)[i];
    case 1:
        return ((const uint8_t *)buf)[i];
    case 2:
        return ((const int32_t *)buf)[i];
    case 3:
        return ((const uint32_t *)buf)[i];
    case 4:
        return (double)((const int64_t *)buf)[i];
    case 5:
        return (double)((const uint64_t *)buf)[i];
    case 6:
        return nccl_util_half_to_float(((const uint16_t *)buf)[i]);
    case 7:
        return ((const float *)buf)[i];
    case 8:
        return ((const double *)buf)[i];
    case 9:
        return nccl_util_bf16_to_float(((const uint16_t *)buf)[i]);
    default:
        return NAN;
    }
}

void nccl_util_check_fill(const struct nccl_util_dtype *t, int redop, int rank, void *buf,
                          uint64_t first, uint64_t n)
{
    for (uint64_t j = 0; j < n; j++)
        store(t, buf, j, nccl_util_check_value(redop, rank, first + j));
}

static double reduce_over_ranks(int redop, int nranks, uint64_t j)
{
    double acc = nccl_util_check_value(redop, 0, j);
    for (int r = 1; r < nranks; r++) {
        double v = nccl_util_check_value(redop, r, j);
        switch (redop) {
        case 1:
            acc *= v;
            break;
        case 2:
            acc = v > acc ? v : acc;
            break;
        case 3:
            acc = v < acc ? v : acc;
            break;
        default: /* sum, avg */
            acc += v;
            break;
        }
    }
    return redop == 4 ? acc / nranks : acc;
}

bool nccl_util_check_expected(enum nccl_util_coll c, int redop, int nranks, int rank, int root,
                              uint64_t count, uint64_t i, double *out)
{
    uint64_t n = (uint64_t)nranks;
    switch (c) {
    case NCCL_COLL_ALL_REDUCE:
        *out = reduce_over_ranks(redop, nranks, i);
        return true;
    case NCCL_COLL_REDUCE:
        if (rank != root)
            return false;
        *out = reduce_over_ranks(redop, nranks, i);
        return true;
    case NCCL_COLL_BROADCAST:
        *out = nccl_util_check_value(redop, root, i);
        return true;
    case NCCL_COLL_ALL_GATHER: /* chunk q of the result is rank q's send buffer */
        *out = nccl_util_check_value(redop, (int)(i / count), i % count);
        return true;
    case NCCL_COLL_REDUCE_SCATTER: /* rank r gets the reduction of chunk r */
        *out = reduce_over_ranks(redop, nranks, (uint64_t)rank * count + i);
        return true;
    case NCCL_COLL_ALLTOALL: /* chunk q of the result is chunk r of rank q's send buffer */
        *out = nccl_util_check_value(redop, (int)(i / count), (uint64_t)rank * count + i % count);
        return true;
    case NCCL_COLL_SENDRECV: /* from the previous rank of the ring */
        *out = nccl_util_check_value(redop, (int)(((uint64_t)rank + n - 1) % n), i);
        return true;
    default:
        return false;
    }
}

uint64_t nccl_util_check_verify(enum nccl_util_coll c, const struct nccl_util_dtype *t, int redop,
                                int nranks, int rank, int root, const struct nccl_util_layout *lay,
                                const void *recv, uint64_t first, uint64_t n)
{
    uint64_t wrong = 0;
    /* Integers are exact; half and bfloat16 carry 11 and 8 significant bits; avg divides. */
    double rel = t->nccl == 7 ? 1e-6 : t->nccl == 8 ? 1e-12 : t->is_float ? 1e-2 : 0;
    double abs_tol = !t->is_float && redop == 4 ? 1.0 : 0;
    for (uint64_t i = 0; i < n; i++) {
        double want;
        if (!nccl_util_check_expected(c, redop, nranks, rank, root, lay->count, first + i, &want))
            continue;
        double got = load(t, recv, i);
        double d = fabs(got - want);
        if (!(d <= abs_tol + rel * fabs(want)))
            wrong++;
    }
    return wrong;
}
