/* counters_int: what the files of counter sets share (engine/counters/counters*.c): a set,
 * its entries and how each is read, the helpers discovery uses. Private to engine/counters/;
 * the contract is engine/counters/counters.h. */
#ifndef COUNTERS_INT_H
#define COUNTERS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "engine/counters/counters.h"
#include "engine/counters/counters_kernel.h"

#define SYSFS_MAGIC_NR 0x62656572 /* SYSFS_MAGIC in linux/magic.h */
enum rd_kind { RD_FILE = 0, RD_ETH, RD_QDISC, RD_SNMP, RD_FED };
enum { QF_BYTES = 0, QF_PACKETS, QF_DROPS, QF_OVERLIMITS, QF_REQUEUES, QF_BACKLOG, QF_QLEN, QF_N };

/* Per-counter reading state beside its public counters_value. */
struct counters_ent {
    enum rd_kind rd;
    int fd;         /* RD_FILE: kept open; -1 closed (gone, or too many open files) */
    char *path;     /* RD_FILE: to reopen */
    bool transient; /* RD_FILE: open, read and close each time (no fd to spare) */
    /* RD_ETH: netdev, statistic; RD_QDISC: qdisc, field; RD_SNMP: file, position;
     * RD_FILE: aux is its directory in dirs */
    int aux, aux2;
    bool slow;
    uint8_t width0;    /* width from the table */
    uint8_t ext_width; /* IB: 64 when the same file may hold the extended counter */
    uint8_t scale;
    bool have_prev;
    uint64_t prev, t_prev;
    bool mark_ok;  /* the delta since the mark is known */
    uint64_t acc;  /* growth since the mark, raw counts */
    bool read_ok;  /* this sample's reading (fresh) */
    bool fed;      /* RD_FED: a reading was put since the last sample */
    uint64_t raw;  /* this sample's reading */
    bool negative; /* gauges: the reading was -raw */
};

struct counters_eth {
    struct counters_kernel_eth e;
    uint64_t *vals;
    int rc; /* this sample's read status */
};

struct counters_qd {
    int ifindex;
    uint32_t handle;
    bool seen; /* in this sample's dump */
    struct counters_kernel_qdisc_stats st;
};

struct counters_snmp_file {
    int fd;
    int first, count; /* its entries, contiguous and in file order */
};

struct counters_set {
    struct counters_opts o;
    char sys_root[1024], proc_root[1024];
    int n, cap;
    struct counters_ent *ents;
    struct counters_value *vals;
    /* Not sysfs (a captured tree): files deleted under us keep reading through an open
     * descriptor. A directory whose mtime moved gets its files fstat()ed until every one
     * of them has been read again (slow ones included). */
    bool check_nlink;
    int ndirs;
    struct dir_watch {
        char *path;
        struct timespec mtime;
        bool dirty;
    } * dirs;
    uint64_t period_slow_ns, last_slow_ns;
    /* ethtool */
    int eth_sock;
    int neth;
    struct counters_eth *eths;
    /* qdisc */
    int nl_fd;
    uint32_t nl_seq;
    int nqd;
    struct counters_qd *qds;
    bool qd_ok; /* this sample's dump worked */
    /* snmp */
    struct counters_snmp_file snmp[2];
    char *snmp_buf;
    size_t snmp_cap;
    /* description */
    int nobjects, nnotes;
    char **objects, **notes;
    char *scope; /* fed sets: replaces the port-wide scope */
};

/* The argument of counters_snmp_open_cb: the set and the SNMP file being walked. */
struct counters_snmp_ctx {
    struct counters_set *s;
    int file;
};

/* counters.c */
extern const char *const counters_qf_names[QF_N];
/* Append a copy of text to a list of strings; a note on the set (its notes list). */
void counters_add_str(char ***list, int *n, const char *text);
void counters_note(struct counters_set *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A counter of the set (read as rd), and every counter file of a sysfs directory. */
int counters_add_entry(struct counters_set *s, enum counters_source src, const char *provider,
                       const char *object, const char *name, enum rd_kind rd, bool slow);
int counters_add_dir(struct counters_set *s, enum counters_source src, const char *provider,
                     const char *object, const char *rel, bool slow);
/* Read SNMP file f of the set, and walk its "Pfx: names" / "Pfx: values" line pairs. */
ssize_t counters_read_snmp_file(struct counters_set *s, int f);
void counters_snmp_walk(char *text,
                        void (*cb)(const char *pfx, const char *name, int pos, const char *val,
                                   void *arg),
                        void *arg);
/* The walk's callback that makes an entry per field (arg: struct counters_snmp_ctx). */
void counters_snmp_open_cb(const char *pfx, const char *name, int pos, const char *val, void *arg);

#endif
