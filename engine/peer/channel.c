/* ctl: framing with hard size limits, the mutual PSK handshake, per-frame MACs, keys and
 * addresses for the control channel (the protocol is described in ctl.h). Every read and
 * write has a deadline, so a silent or slow peer cannot hold a thread forever. */
#include "engine/peer/channel.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <math.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/jsonutil.h"

#define KEY_FILE_MAX   4096 /* bytes; a key file is 32+ random bytes, as hex or raw */
#define SEND_TIMEOUT   10000
#define BYE_TIMEOUT_MS 1000

struct channel_conn {
    int fd;
    bool is_client;
    int cancel_fd;
    bool send_mac, recv_mac;               /* after each side's AUTH frame */
    unsigned char skey[CHANNEL_KEY_BYTES]; /* session key */
    uint64_t send_seq, recv_seq;
    bool broken;          /* a frame failed or the agent ended the session */
    char broken_why[256]; /* for later calls */
    pthread_mutex_t mu;   /* serialises channel_request */
    int64_t next_id;
    int key_index; /* agent side: the key the client proved */
    int retry_ms;  /* client side: the agent's last refusal was transient; retry after it */
    struct sockaddr_storage peer;
    char host[INET6_ADDRSTRLEN]; /* numeric */
    char desc[300];              /* "host:port" for messages */
    char name[256];              /* agent's host name */
    cJSON *info;                 /* agent's hello reply */
};

/* ---- small helpers ---- */

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static int sodium_status;

static void do_sodium_init(void)
{
    sodium_status = sodium_init() < 0 ? -1 : 0;
}

static int crypto_ready(struct ft_err *err)
{
    pthread_once(&sodium_once, do_sodium_init);
    if (sodium_status < 0)
        return ft_err_set(err, -ENOSYS, "libsodium failed to initialise");
    return 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t deadline_after(int ms)
{
    return ms < 0 ? -1 : now_ms() + ms;
}

static void put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static void put_u64(unsigned char *p, uint64_t v)
{
    put_u32(p, (uint32_t)(v >> 32));
    put_u32(p + 4, (uint32_t)v);
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- I/O with deadlines (deadline < 0: none) ---- */

/* Wait until fd has events (or an error/hangup). -ETIMEDOUT, -ECANCELED or -errno. */
static int io_wait(int fd, short events, int64_t deadline, int cancel_fd)
{
    for (;;) {
        struct pollfd p[2] = {{.fd = fd, .events = events}, {.fd = cancel_fd, .events = POLLIN}};
        int timeout = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            if (left <= 0)
                return -ETIMEDOUT;
            timeout = left > 60000 ? 60000 : (int)left;
        }
        int n = poll(p, cancel_fd >= 0 ? 2 : 1, timeout);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (cancel_fd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
            return -ECANCELED;
        if (p[0].revents)
            return 0;
    }
}

/* Read exactly n bytes. -ECONNRESET when the peer closed. */
static int io_read(int fd, void *buf, size_t n, int64_t deadline, int cancel_fd)
{
    unsigned char *p = buf;
    while (n) {
        ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
        if (r > 0) {
            p += r;
            n -= (size_t)r;
            continue;
        }
        if (r == 0)
            return -ECONNRESET;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return errno == EPIPE ? -ECONNRESET : -errno;
        int rc = io_wait(fd, POLLIN, deadline, cancel_fd);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int io_write(int fd, const void *buf, size_t n, int64_t deadline)
{
    const unsigned char *p = buf;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w >= 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return errno == EPIPE ? -ECONNRESET : -errno;
        int rc = io_wait(fd, POLLOUT, deadline, -1);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- frames ---- */

static void frame_mac(const unsigned char key[CHANNEL_KEY_BYTES], char dir, uint64_t seq, int type,
                      const unsigned char *payload, size_t plen,
                      unsigned char out[CHANNEL_MAC_BYTES])
{
    unsigned char hdr[14];
    hdr[0] = (unsigned char)dir;
    put_u64(hdr + 1, seq);
    hdr[9] = (unsigned char)type;
    put_u32(hdr + 10, (uint32_t)plen);
    crypto_auth_hmacsha512256_state st;
    crypto_auth_hmacsha512256_init(&st, key, CHANNEL_KEY_BYTES);
    crypto_auth_hmacsha512256_update(&st, hdr, sizeof(hdr));
    crypto_auth_hmacsha512256_update(&st, payload, plen);
    crypto_auth_hmacsha512256_final(&st, out);
    sodium_memzero(&st, sizeof(st));
}

static char send_dir(const struct channel_conn *c)
{
    return c->is_client ? 'C' : 'A';
}

static const char *peer_role(const struct channel_conn *c)
{
    return c->is_client ? "agent" : "client";
}

static int write_frame(struct channel_conn *c, int type, const void *payload, size_t plen,
                       int64_t deadline, struct ft_err *err)
{
    size_t limit = c->send_mac ? CHANNEL_MAX_PAYLOAD : CHANNEL_MAX_HANDSHAKE_FRAME - 1;
    if (plen > limit)
        return ft_err_set(err, -EMSGSIZE, "frame payload of %zu bytes exceeds the %zu-byte limit",
                          plen, limit);
    size_t mac = c->send_mac ? CHANNEL_MAC_BYTES : 0;
    size_t total = 4 + 1 + plen + mac;
    unsigned char *buf = malloc(total);
    if (!buf)
        return ft_err_set(err, -ENOMEM, "out of memory");
    put_u32(buf, (uint32_t)(1 + plen + mac));
    buf[4] = (unsigned char)type;
    if (plen)
        memcpy(buf + 5, payload, plen);
    if (mac)
        frame_mac(c->skey, send_dir(c), c->send_seq, type, buf + 5, plen, buf + 5 + plen);
    int rc = io_write(c->fd, buf, total, deadline);
    free(buf);
    if (rc < 0)
        return ft_err_set(err, rc, "cannot send to the %s: %s", peer_role(c), strerror(-rc));
    if (mac)
        c->send_seq++;
    return 0;
}

/* Read one frame: wait until wait_deadline for it to start, then until frame_deadline
 * (computed from frame_ms once it started, or given absolutely when frame_ms < -1) for the
 * rest. Errors: -ETIMEDOUT nothing arrived, -ETIME cut short, -ECONNRESET, -ECANCELED,
 * -EMSGSIZE, -EBADMSG. */
static int read_frame(struct channel_conn *c, size_t limit, int64_t wait_deadline, int frame_ms,
                      int *type, char **payload, size_t *plen, struct ft_err *err)
{
    *payload = NULL;
    int rc = io_wait(c->fd, POLLIN, wait_deadline, c->cancel_fd);
    if (rc == -ETIMEDOUT)
        return ft_err_set(err, rc, "no frame from the %s in time", peer_role(c));
    if (rc == -ECANCELED)
        return ft_err_set(err, rc, "cancelled");
    if (rc < 0)
        return ft_err_set(err, rc, "connection to the %s failed: %s", peer_role(c), strerror(-rc));
    int64_t fdl = frame_ms < 0 ? wait_deadline : now_ms() + frame_ms;
    unsigned char hdr[4];
    rc = io_read(c->fd, hdr, sizeof(hdr), fdl, c->cancel_fd);
    if (rc == -ETIMEDOUT)
        rc = -ETIME;
    if (rc == -ECONNRESET)
        return ft_err_set(err, rc, "the %s closed the connection", peer_role(c));
    if (rc == -ETIME)
        return ft_err_set(err, rc, "frame from the %s not completed in time", peer_role(c));
    if (rc < 0)
        return ft_err_set(err, rc, "cannot read from the %s: %s", peer_role(c), strerror(-rc));
    uint32_t len = get_u32(hdr);
    size_t mac = c->recv_mac ? CHANNEL_MAC_BYTES : 0;
    if (len > limit)
        return ft_err_set(err, -EMSGSIZE, "frame of %u bytes exceeds the %zu-byte%s limit", len,
                          limit, c->recv_mac ? "" : " handshake");
    if (len < 1 + mac)
        return ft_err_set(err, -EBADMSG, "frame of %u bytes is too short", len);
    unsigned char *buf = malloc((size_t)len + 1);
    if (!buf)
        return ft_err_set(err, -ENOMEM, "out of memory");
    rc = io_read(c->fd, buf, len, fdl, c->cancel_fd);
    if (rc < 0) {
        free(buf);
        if (rc == -ETIMEDOUT || rc == -ETIME)
            return ft_err_set(err, -ETIME, "frame from the %s not completed in time", peer_role(c));
        if (rc == -ECONNRESET)
            return ft_err_set(err, rc, "the %s closed the connection", peer_role(c));
        if (rc == -ECANCELED)
            return ft_err_set(err, rc, "cancelled");
        return ft_err_set(err, rc, "cannot read from the %s: %s", peer_role(c), strerror(-rc));
    }
    size_t n = len - 1 - mac;
    if (mac) {
        unsigned char want[CHANNEL_MAC_BYTES];
        frame_mac(c->skey, c->is_client ? 'A' : 'C', c->recv_seq, buf[0], buf + 1, n, want);
        int bad = sodium_memcmp(want, buf + 1 + n, CHANNEL_MAC_BYTES);
        sodium_memzero(want, sizeof(want));
        if (bad) {
            free(buf);
            return ft_err_set(err, -EBADMSG,
                              "frame %llu from the %s failed authentication (bad MAC: tampered, "
                              "replayed or reordered)",
                              (unsigned long long)c->recv_seq, peer_role(c));
        }
        c->recv_seq++;
    }
    *type = buf[0];
    memmove(buf, buf + 1, n);
    buf[n] = '\0';
    *payload = (char *)buf;
    *plen = n;
    return 0;
}

/* ---- connections ---- */

static struct channel_conn *conn_new(int fd, bool is_client)
{
    struct channel_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->fd = fd;
    c->is_client = is_client;
    c->cancel_fd = -1;
    pthread_mutex_init(&c->mu, NULL);
    socklen_t sl = sizeof(c->peer);
    if (getpeername(fd, (struct sockaddr *)&c->peer, &sl) == 0) {
        channel_format_addr(&c->peer, false, c->host, sizeof(c->host));
        channel_format_addr(&c->peer, true, c->desc, sizeof(c->desc));
    }
    return c;
}

/* Free c but leave its fd open. */
static void conn_release(struct channel_conn *c)
{
    if (!c)
        return;
    sodium_memzero(c->skey, sizeof(c->skey));
    cJSON_Delete(c->info);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void channel_set_cancel_fd(struct channel_conn *c, int cancel_fd)
{
    c->cancel_fd = cancel_fd;
}

int channel_conn_fd(const struct channel_conn *c)
{
    return c->fd;
}

const char *channel_peer_host(const struct channel_conn *c)
{
    return c->host;
}

const char *channel_peer_name(const struct channel_conn *c)
{
    return c->name[0] ? c->name : c->host;
}

const char *channel_peer_desc(const struct channel_conn *c)
{
    return c->desc;
}

const cJSON *channel_peer_info(const struct channel_conn *c)
{
    return c->info;
}

const struct sockaddr_storage *channel_peer_addr(const struct channel_conn *c)
{
    return &c->peer;
}

int channel_send(struct channel_conn *c, int type, const void *payload, size_t len,
                 struct ft_err *err)
{
    return write_frame(c, type, payload, len, deadline_after(SEND_TIMEOUT), err);
}

int channel_send_json(struct channel_conn *c, int type, const cJSON *j, struct ft_err *err)
{
    char *text = cJSON_PrintUnformatted(j);
    if (!text)
        return ft_err_set(err, -ENOMEM, "out of memory");
    int rc = channel_send(c, type, text, strlen(text), err);
    cJSON_free(text);
    return rc;
}

int channel_recv(struct channel_conn *c, int *type, char **payload, size_t *len, int wait_ms,
                 int frame_ms, struct ft_err *err)
{
    return read_frame(c, CHANNEL_MAX_FRAME, deadline_after(wait_ms),
                      frame_ms > 0 ? frame_ms : SEND_TIMEOUT, type, payload, len, err);
}

static char *error_payload(const char *code, const char *msg, int retry_ms, size_t *len)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "code", code);
    cJSON_AddStringToObject(j, "message", msg);
    cJSON_AddNumberToObject(j, "version", CHANNEL_VERSION);
    if (retry_ms > 0)
        cJSON_AddNumberToObject(j, "retry_ms", retry_ms);
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    *len = text ? strlen(text) : 0;
    return text;
}

int channel_refuse(struct channel_conn *c, const char *code, const char *msg, int retry_ms)
{
    size_t n;
    char *text = error_payload(code, msg, retry_ms, &n);
    if (!text)
        return -ENOMEM;
    int rc = write_frame(c, CHANNEL_T_ERROR, text, n, deadline_after(2000), NULL);
    cJSON_free(text);
    return rc;
}

int channel_refuse_fd(int fd, const char *code, const char *msg, int retry_ms)
{
    struct channel_conn c = {.fd = fd, .cancel_fd = -1};
    size_t n;
    char *text = error_payload(code, msg, retry_ms, &n);
    if (!text)
        return -ENOMEM;
    int rc = write_frame(&c, CHANNEL_T_ERROR, text, n, now_ms(), NULL); /* never blocks */
    cJSON_free(text);
    return rc;
}

void channel_drain(int fd, int ms, int cancel_fd)
{
    shutdown(fd, SHUT_WR);
    int64_t deadline = now_ms() + ms;
    char scratch[4096];
    for (;;) {
        if (io_wait(fd, POLLIN, deadline, cancel_fd) < 0)
            return;
        ssize_t r = recv(fd, scratch, sizeof(scratch), MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
            return;
    }
}

/* ---- keys ---- */

static void key_from_material(const unsigned char *m, size_t n, struct channel_key *key)
{
    static const char label[] = "fabtop-ctl key"; /* includes the NUL */
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, CHANNEL_KEY_BYTES);
    crypto_generichash_update(&st, (const unsigned char *)label, sizeof(label));
    crypto_generichash_update(&st, m, n);
    crypto_generichash_final(&st, key->k, CHANNEL_KEY_BYTES);
    sodium_memzero(&st, sizeof(st));
}

static bool is_space(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static int hexval(unsigned char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Parse key text: hex (whitespace ignored) or, when allow_raw, raw bytes. what names the
 * source in messages; the key itself is never quoted. */
static int key_parse(const char *what, const unsigned char *buf, size_t n, bool allow_raw,
                     struct channel_key *key, struct ft_err *err)
{
    static const char hint[] =
        "need at least 32 random bytes (hex or raw); create a key with 'fabtop serve "
        "--gen-key FILE' and copy it to every peer";
    size_t hex = 0, other = 0;
    for (size_t i = 0; i < n; i++) {
        if (hexval(buf[i]) >= 0)
            hex++;
        else if (!is_space(buf[i]))
            other++;
    }
    if (hex == 0 && other == 0)
        return ft_err_set(err, -EINVAL, "%s: the key is empty; %s", what, hint);
    if (other == 0) {
        if (hex % 2)
            return ft_err_set(err, -EINVAL, "%s: the key has an odd number of hex digits (%zu)",
                              what, hex);
        if (hex / 2 < CHANNEL_KEY_MIN_BYTES)
            return ft_err_set(err, -EINVAL, "%s: key too short: %zu bytes; %s", what, hex / 2,
                              hint);
        unsigned char *bin = malloc(hex / 2);
        if (!bin)
            return ft_err_set(err, -ENOMEM, "out of memory");
        size_t k = 0;
        int hi = -1;
        for (size_t i = 0; i < n; i++) {
            int v = hexval(buf[i]);
            if (v < 0)
                continue;
            if (hi < 0) {
                hi = v;
            } else {
                bin[k++] = (unsigned char)(hi << 4 | v);
                hi = -1;
            }
        }
        key_from_material(bin, k, key);
        sodium_memzero(bin, hex / 2);
        free(bin);
        return 0;
    }
    if (!allow_raw)
        return ft_err_set(err, -EINVAL, "%s: not a hex key; %s", what, hint);
    if (n < CHANNEL_KEY_MIN_BYTES)
        return ft_err_set(err, -EINVAL, "%s: key too short: %zu bytes; %s", what, n, hint);
    key_from_material(buf, n, key);
    return 0;
}

static int key_load_file(const char *path, struct channel_key *key, struct ft_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = -errno;
        if (e == -ENOENT)
            return ft_err_set(err, e,
                              "%s: no such key file; create one with 'fabtop serve --gen-key %s' "
                              "and copy it to every peer",
                              path, path);
        return ft_err_set(err, e, "%s: cannot open the key file: %s", path, strerror(-e));
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = -errno;
        close(fd);
        return ft_err_set(err, e, "%s: %s", path, strerror(-e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return ft_err_set(err, -EINVAL, "%s: the key file is not a regular file", path);
    }
    if (st.st_mode & 077) {
        close(fd);
        return ft_err_set(err, -EACCES,
                          "%s: the key file is accessible by group or others (mode %04o); run "
                          "'chmod 600 %s'",
                          path, (unsigned)(st.st_mode & 07777), path);
    }
    if (st.st_size > KEY_FILE_MAX) {
        close(fd);
        return ft_err_set(err, -EINVAL,
                          "%s: the key file has %lld bytes; a key is 32 to %d random bytes", path,
                          (long long)st.st_size, KEY_FILE_MAX);
    }
    unsigned char buf[KEY_FILE_MAX + 1];
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fd, buf + n, sizeof(buf) - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = -errno;
            close(fd);
            sodium_memzero(buf, sizeof(buf));
            return ft_err_set(err, e, "%s: cannot read the key file: %s", path, strerror(-e));
        }
        if (r == 0 || (n += (size_t)r) == sizeof(buf))
            break;
    }
    close(fd);
    int rc = n > KEY_FILE_MAX ? ft_err_set(err, -EINVAL, "%s: the key file is too large", path)
                              : key_parse(path, buf, n, true, key, err);
    sodium_memzero(buf, sizeof(buf));
    return rc;
}

int channel_key_load(const char *path, struct channel_key *key, struct ft_err *err)
{
    int rc = crypto_ready(err);
    if (rc < 0)
        return rc;
    if (path)
        return key_load_file(path, key, err);
    const char *env = getenv("FABTOP_KEY");
    if (env && *env)
        return key_parse("FABTOP_KEY", (const unsigned char *)env, strlen(env), false, key, err);
    char p[4096];
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(p, sizeof(p), "%s/fabtop/key", xdg);
    else if (home && *home)
        snprintf(p, sizeof(p), "%s/.config/fabtop/key", home);
    else
        return ft_err_set(err, -ENOENT,
                          "no key: set FABTOP_KEY or pass --key-file FILE (HOME is not set)");
    if (access(p, F_OK) < 0 && errno == ENOENT)
        return ft_err_set(err, -ENOENT,
                          "no key: set FABTOP_KEY, pass --key-file FILE, or create %s with "
                          "'fabtop serve --gen-key %s' (the same key on every peer)",
                          p, p);
    return key_load_file(p, key, err);
}

void channel_key_random(struct channel_key *key)
{
    crypto_ready(NULL);
    randombytes_buf(key->k, sizeof(key->k));
}

void channel_key_wipe(struct channel_key *key)
{
    sodium_memzero(key->k, sizeof(key->k));
}

void channel_key_fingerprint(const struct channel_key *key, char out[17])
{
    static const char label[] = "fabtop-ctl fingerprint";
    unsigned char h[16];
    crypto_generichash_state st;
    crypto_ready(NULL);
    crypto_generichash_init(&st, NULL, 0, sizeof(h));
    crypto_generichash_update(&st, (const unsigned char *)label, sizeof(label));
    crypto_generichash_update(&st, key->k, sizeof(key->k));
    crypto_generichash_final(&st, h, sizeof(h));
    sodium_bin2hex(out, 17, h, 8);
}

int channel_key_generate_file(const char *path, struct ft_err *err)
{
    int rc = crypto_ready(err);
    if (rc < 0)
        return rc;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        int e = -errno;
        if (e == -EEXIST)
            return ft_err_set(err, e,
                              "%s already exists; remove it first to replace the key (every "
                              "peer then needs the new one)",
                              path);
        return ft_err_set(err, e, "%s: cannot create the key file: %s", path, strerror(-e));
    }
    fchmod(fd, 0600);
    unsigned char bin[CHANNEL_KEY_BYTES];
    char hex[2 * CHANNEL_KEY_BYTES + 2];
    randombytes_buf(bin, sizeof(bin));
    sodium_bin2hex(hex, sizeof(hex), bin, sizeof(bin));
    sodium_memzero(bin, sizeof(bin));
    size_t n = strlen(hex);
    hex[n++] = '\n';
    ssize_t w;
    do
        w = write(fd, hex, n);
    while (w < 0 && errno == EINTR);
    sodium_memzero(hex, sizeof(hex));
    int e = w < 0 ? -errno : (size_t)w != n ? -EIO : 0;
    if (!e && fsync(fd) < 0 && errno != EINVAL)
        e = -errno;
    if (close(fd) < 0 && !e)
        e = -errno;
    if (e) {
        unlink(path);
        return ft_err_set(err, e, "%s: cannot write the key file: %s", path, strerror(-e));
    }
    return 0;
}

/* ---- addresses ---- */

int channel_split_host_port(const char *s, uint16_t default_port, char *host, size_t hostlen,
                            uint16_t *port, struct ft_err *err)
{
    const char *h = s, *p = NULL;
    size_t hl;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || (close[1] && close[1] != ':'))
            return ft_err_set(err, -EINVAL, "bad address '%s': expected [IPv6]:PORT", s);
        h = s + 1;
        hl = (size_t)(close - h);
        if (close[1] == ':')
            p = close + 2;
    } else {
        const char *colon = strchr(s, ':');
        if (colon && !strchr(colon + 1, ':')) {
            hl = (size_t)(colon - s);
            p = colon + 1;
        } else {
            hl = strlen(s); /* no port, or a bare IPv6 literal */
        }
    }
    if (hl >= hostlen)
        return ft_err_set(err, -EINVAL, "bad address '%s': host name too long", s);
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = default_port;
    if (p) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (!*p || *end || errno || v > 65535 || *p == '-' || *p == '+')
            return ft_err_set(err, -EINVAL, "bad port '%s' in '%s': expected 0 to 65535", p, s);
        *port = (uint16_t)v;
    }
    return 0;
}

void channel_format_addr(const struct sockaddr_storage *ss, bool with_port, char *buf, size_t len)
{
    char a[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    bool v6 = false;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
        port = ntohs(s4->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
        if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
            inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], a, sizeof(a));
        } else {
            inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
            v6 = true;
        }
        port = ntohs(s6->sin6_port);
    }
    if (!with_port)
        snprintf(buf, len, "%s", a);
    else
        snprintf(buf, len, v6 ? "[%s]:%u" : "%s:%u", a, port);
}

/* ---- handshake ---- */

static void transcript(const char *hc, size_t nhc, const char *ha, size_t nha, unsigned char t[32])
{
    unsigned char l[4];
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 32);
    put_u32(l, (uint32_t)nhc);
    crypto_generichash_update(&st, l, 4);
    crypto_generichash_update(&st, (const unsigned char *)hc, nhc);
    put_u32(l, (uint32_t)nha);
    crypto_generichash_update(&st, l, 4);
    crypto_generichash_update(&st, (const unsigned char *)ha, nha);
    crypto_generichash_final(&st, t, 32);
}

static void proof(const struct channel_key *k, const char *role, const unsigned char *nc,
                  const unsigned char *na, const unsigned char *t, unsigned char out[32])
{
    unsigned char v[2];
    put_u16(v, CHANNEL_VERSION);
    crypto_auth_hmacsha512256_state st;
    crypto_auth_hmacsha512256_init(&st, k->k, sizeof(k->k));
    crypto_auth_hmacsha512256_update(&st, (const unsigned char *)CHANNEL_PROTO,
                                     sizeof(CHANNEL_PROTO));
    crypto_auth_hmacsha512256_update(&st, v, 2);
    crypto_auth_hmacsha512256_update(&st, (const unsigned char *)role, strlen(role) + 1);
    crypto_auth_hmacsha512256_update(&st, nc, CHANNEL_NONCE_BYTES);
    crypto_auth_hmacsha512256_update(&st, na, CHANNEL_NONCE_BYTES);
    crypto_auth_hmacsha512256_update(&st, t, 32);
    crypto_auth_hmacsha512256_final(&st, out);
    sodium_memzero(&st, sizeof(st));
}

static void session_key(const struct channel_key *k, const unsigned char *nc,
                        const unsigned char *na, const unsigned char *t,
                        unsigned char out[CHANNEL_KEY_BYTES])
{
    static const char label[] = "fabtop-ctl session";
    unsigned char v[2];
    put_u16(v, CHANNEL_VERSION);
    crypto_generichash_state st;
    crypto_generichash_init(&st, k->k, sizeof(k->k), CHANNEL_KEY_BYTES);
    crypto_generichash_update(&st, (const unsigned char *)label, sizeof(label));
    crypto_generichash_update(&st, v, 2);
    crypto_generichash_update(&st, nc, CHANNEL_NONCE_BYTES);
    crypto_generichash_update(&st, na, CHANNEL_NONCE_BYTES);
    crypto_generichash_update(&st, t, 32);
    crypto_generichash_final(&st, out, CHANNEL_KEY_BYTES);
    sodium_memzero(&st, sizeof(st));
}

/* early = HMAC-SHA-512-256(PSK, "fabtop-ctl early" 0 | u16 version | Nc | u64 time): the
 * client proves it holds the key in its first frame, so an agent under load can tell it
 * from connections without the key before spending anything on it (ctl.h). */
static void early_proof(const struct channel_key *k, const unsigned char *nc, uint64_t t,
                        unsigned char out[32])
{
    static const char label[] = "fabtop-ctl early";
    unsigned char v[2], tb[8];
    put_u16(v, CHANNEL_VERSION);
    put_u64(tb, t);
    crypto_auth_hmacsha512256_state st;
    crypto_auth_hmacsha512256_init(&st, k->k, sizeof(k->k));
    crypto_auth_hmacsha512256_update(&st, (const unsigned char *)label, sizeof(label));
    crypto_auth_hmacsha512256_update(&st, v, 2);
    crypto_auth_hmacsha512256_update(&st, nc, CHANNEL_NONCE_BYTES);
    crypto_auth_hmacsha512256_update(&st, tb, 8);
    crypto_auth_hmacsha512256_final(&st, out);
    sodium_memzero(&st, sizeof(st));
}

/* A hello; with key (the client's), also its time and early proof. */
static char *hello_text(const char *role, const unsigned char *nonce, const struct channel_key *key)
{
    char hex[2 * CHANNEL_NONCE_BYTES + 1];
    sodium_bin2hex(hex, sizeof(hex), nonce, CHANNEL_NONCE_BYTES);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "proto", CHANNEL_PROTO);
    cJSON_AddNumberToObject(j, "version", CHANNEL_VERSION);
    cJSON_AddStringToObject(j, "role", role);
    cJSON_AddStringToObject(j, "nonce", hex);
    if (key) {
        uint64_t t = (uint64_t)time(NULL);
        unsigned char e[32];
        char ehex[65];
        early_proof(key, nonce, t, e);
        sodium_bin2hex(ehex, sizeof(ehex), e, sizeof(e));
        cJSON_AddNumberToObject(j, "time", (double)t);
        cJSON_AddStringToObject(j, "early", ehex);
    }
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return text;
}

/* Which key made the client hello's early proof, if its time is within CHANNEL_EARLY_SKEW_S of
 * ours: the key's index, or -1. Every key is tried. */
static int early_check(const char *text, size_t len, const struct channel_key *keys, int nkeys,
                       const unsigned char *nc)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    const cJSON *tj = cJSON_GetObjectItemCaseSensitive(j, "time");
    const cJSON *ej = cJSON_GetObjectItemCaseSensitive(j, "early");
    unsigned char e[32];
    size_t got = 0;
    int found = -1;
    double now = (double)time(NULL);
    if (cJSON_IsNumber(tj) && tj->valuedouble >= 0 && tj->valuedouble < 1e15 &&
        fabs(tj->valuedouble - now) <= CHANNEL_EARLY_SKEW_S && cJSON_IsString(ej) &&
        strlen(ej->valuestring) == 64 &&
        sodium_hex2bin(e, sizeof(e), ej->valuestring, 64, NULL, &got, NULL) == 0 && got == 32) {
        for (int i = 0; i < nkeys; i++) {
            unsigned char want[32];
            early_proof(&keys[i], nc, (uint64_t)tj->valuedouble, want);
            int bad = sodium_memcmp(want, e, 32);
            found = !bad && found < 0 ? i : found;
        }
    }
    cJSON_Delete(j);
    return found;
}

/* Check a peer's hello. Returns 0, or -EPROTO (with why) / -EPROTONOSUPPORT (*version set). */
static int hello_check(const char *text, size_t len, const char *want_role,
                       unsigned char nonce[CHANNEL_NONCE_BYTES], int *version, char *why,
                       size_t whylen)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    int rc = -EPROTO;
    const cJSON *proto = cJSON_GetObjectItemCaseSensitive(j, "proto");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "version");
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(j, "role");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "nonce");
    size_t binlen = 0;
    if (!cJSON_IsObject(j))
        snprintf(why, whylen, "not a JSON object");
    else if (!cJSON_IsString(proto) || strcmp(proto->valuestring, CHANNEL_PROTO))
        snprintf(why, whylen, "not a %s %s", CHANNEL_PROTO, want_role);
    else if (!cJSON_IsNumber(ver) || ver->valuedouble != (double)ver->valueint || ver->valueint < 0)
        snprintf(why, whylen, "no protocol version");
    else if (ver->valueint != CHANNEL_VERSION) {
        *version = ver->valueint;
        rc = -EPROTONOSUPPORT;
    } else if (!cJSON_IsString(role) || strcmp(role->valuestring, want_role))
        snprintf(why, whylen, "role must be '%s'", want_role);
    else if (!cJSON_IsString(n) || strlen(n->valuestring) != 2 * CHANNEL_NONCE_BYTES ||
             sodium_hex2bin(nonce, CHANNEL_NONCE_BYTES, n->valuestring, 2 * CHANNEL_NONCE_BYTES,
                            NULL, &binlen, NULL) != 0 ||
             binlen != CHANNEL_NONCE_BYTES)
        snprintf(why, whylen, "bad nonce");
    else
        rc = 0;
    cJSON_Delete(j);
    return rc;
}

/* An ERROR frame's fields. */
struct refusal {
    char code[32];
    char msg[320];
    int version;
    int retry_ms; /* 0: not transient */
};

static void refusal_parse(const char *text, size_t len, struct refusal *r)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    snprintf(r->code, sizeof(r->code), "unknown");
    snprintf(r->msg, sizeof(r->msg), "(no reason given)");
    r->version = -1;
    r->retry_ms = 0;
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(j, "code");
    const cJSON *retry = cJSON_GetObjectItemCaseSensitive(j, "retry_ms");
    if (cJSON_IsNumber(retry) && retry->valuedouble >= 1 && retry->valuedouble <= 10000)
        r->retry_ms = (int)retry->valuedouble;
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(j, "message");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "version");
    if (cJSON_IsString(code))
        snprintf(r->code, sizeof(r->code), "%s", code->valuestring);
    if (cJSON_IsString(msg))
        snprintf(r->msg, sizeof(r->msg), "%s", msg->valuestring);
    if (cJSON_IsNumber(ver))
        r->version = ver->valueint;
    cJSON_Delete(j);
}

static int refusal_errno(const char *code)
{
    static const struct {
        const char *code;
        int e;
    } map[] = {
        {"version", EPROTONOSUPPORT}, {"auth", EACCES},      {"busy", EBUSY},
        {"denied", EACCES},           {"malformed", EPROTO}, {"toolarge", EMSGSIZE},
        {"timeout", ETIMEDOUT},       {"mac", EBADMSG},      {"idle", ETIMEDOUT},
        {"shutdown", ESHUTDOWN},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcmp(code, map[i].code))
            return map[i].e;
    return EPROTO;
}

static int version_mismatch(const struct channel_conn *c, int theirs, struct ft_err *err)
{
    return ft_err_set(err, -EPROTONOSUPPORT,
                      "peer %s: protocol version mismatch: this fabtop speaks %s version %d, the "
                      "agent version %d",
                      c->desc, CHANNEL_PROTO, CHANNEL_VERSION, theirs);
}

/* The client read an ERROR frame: say what the agent said, in the client's words. */
static int client_refused(struct channel_conn *c, const char *text, size_t len, bool in_session,
                          struct ft_err *err)
{
    struct refusal r;
    refusal_parse(text, len, &r);
    c->broken = true;
    c->retry_ms = !strcmp(r.code, "busy") ? r.retry_ms : 0;
    snprintf(c->broken_why, sizeof(c->broken_why), "%s", r.msg);
    if (!strcmp(r.code, "version") && r.version >= 0 && r.version != CHANNEL_VERSION)
        return version_mismatch(c, r.version, err);
    if (!strcmp(r.code, "auth"))
        return ft_err_set(err, -EACCES, "peer %s: %s", c->desc, r.msg);
    return ft_err_set(err, -refusal_errno(r.code), "peer %s: the agent %s: %s", c->desc,
                      in_session ? "closed the session" : "refused the session", r.msg);
}

/* Client side of the handshake, within deadline. */
static int client_handshake(struct channel_conn *c, const struct channel_key *key, int64_t deadline,
                            int timeout_ms, struct ft_err *err)
{
    unsigned char nc[CHANNEL_NONCE_BYTES], na[CHANNEL_NONCE_BYTES], t[32], mine[32], want[32];
    randombytes_buf(nc, sizeof(nc));
    char *hc = hello_text("client", nc, key);
    if (!hc)
        return ft_err_set(err, -ENOMEM, "out of memory");
    struct ft_err e = {0};
    int send_rc = write_frame(c, CHANNEL_T_HELLO, hc, strlen(hc), deadline, &e);
    /* Even if sending failed, a refusal (allowlist, busy) may be waiting to be read. */
    int type;
    char *ha = NULL;
    size_t nha;
    int rc = read_frame(c, CHANNEL_MAX_HANDSHAKE_FRAME, deadline, -2, &type, &ha, &nha, &e);
    if (rc < 0)
        goto io_fail;
    if (type == CHANNEL_T_ERROR) {
        rc = client_refused(c, ha, nha, false, err);
        goto out;
    }
    if (send_rc < 0) {
        rc = send_rc;
        goto io_fail;
    }
    if (type != CHANNEL_T_HELLO) {
        rc = ft_err_set(err, -EPROTO, "peer %s: not a fabtop agent (frame type %d)", c->desc, type);
        goto out;
    }
    int version = -1;
    char why[128];
    rc = hello_check(ha, nha, "agent", na, &version, why, sizeof(why));
    if (rc == -EPROTONOSUPPORT) {
        version_mismatch(c, version, err);
        goto out;
    }
    if (rc < 0) {
        ft_err_set(err, rc, "peer %s: not a fabtop agent (%s)", c->desc, why);
        goto out;
    }
    if (sodium_memcmp(na, nc, sizeof(nc)) == 0) {
        rc = ft_err_set(err, -EPROTO, "peer %s: the agent sent our own nonce back", c->desc);
        goto out;
    }
    transcript(hc, strlen(hc), ha, nha, t);
    proof(key, "client", nc, na, t, mine);
    rc = write_frame(c, CHANNEL_T_AUTH, mine, sizeof(mine), deadline, &e);
    sodium_memzero(mine, sizeof(mine));
    session_key(key, nc, na, t, c->skey);
    c->send_mac = true;
    free(ha);
    ha = NULL;
    int rrc = read_frame(c, CHANNEL_MAX_HANDSHAKE_FRAME, deadline, -2, &type, &ha, &nha, &e);
    if (rrc == 0 && type == CHANNEL_T_ERROR) {
        rc = client_refused(c, ha, nha, false, err);
        goto out;
    }
    if (rc < 0 || rrc < 0) {
        rc = rc < 0 ? rc : rrc;
        goto io_fail;
    }
    if (type != CHANNEL_T_AUTH || nha != 32) {
        rc = ft_err_set(err, -EPROTO, "peer %s: expected the agent's proof, got frame type %d",
                        c->desc, type);
        goto out;
    }
    proof(key, "agent", nc, na, t, want);
    int bad = sodium_memcmp(want, ha, 32);
    sodium_memzero(want, sizeof(want));
    if (bad) {
        rc = ft_err_set(err, -EACCES,
                        "peer %s: authentication failed: the keys differ (the agent's proof did "
                        "not verify)",
                        c->desc);
        goto out;
    }
    c->recv_mac = true;
    rc = 0;
    goto out;
io_fail:
    if (rc == -ETIMEDOUT || rc == -ETIME)
        rc = ft_err_set(err, -ETIMEDOUT, "peer %s: no answer to the handshake within %d ms",
                        c->desc, timeout_ms);
    else if (rc == -ECONNRESET)
        rc = ft_err_set(err, rc, "peer %s: the agent closed the connection during the handshake",
                        c->desc);
    else
        rc = ft_err_set(err, rc, "peer %s: %s", c->desc, e.msg);
out:
    free(hc);
    free(ha);
    sodium_memzero(t, sizeof(t));
    return rc;
}

static int connect_addr(const struct addrinfo *ai, int64_t deadline, int *fd_out)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS) {
            rc = -errno;
        } else {
            rc = io_wait(fd, POLLOUT, deadline, -1);
            if (rc == 0) {
                int soerr = 0;
                socklen_t sl = sizeof(soerr);
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
                rc = -soerr;
            }
        }
    }
    if (rc < 0) {
        close(fd);
        return rc;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    *fd_out = fd;
    return 0;
}

static int client_start(int fd, const char *desc, const struct channel_key *key, int64_t deadline,
                        int timeout_ms, int *retry_ms, struct channel_conn **out,
                        struct ft_err *err);

int channel_connect(const char *host_port, uint16_t default_port, const struct channel_key *key,
                    int timeout_ms, struct channel_conn **out, struct ft_err *err)
{
    *out = NULL;
    int rc = crypto_ready(err);
    if (rc < 0)
        return rc;
    if (timeout_ms <= 0)
        timeout_ms = CHANNEL_DEFAULT_TIMEOUT_MS;
    int64_t deadline = now_ms() + timeout_ms;
    char host[256], desc[300], ps[8];
    uint16_t port;
    rc = channel_split_host_port(host_port, default_port, host, sizeof(host), &port, err);
    if (rc < 0)
        return rc;
    snprintf(desc, sizeof(desc), strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
    if (!host[0])
        return ft_err_set(err, -EINVAL, "peer '%s': no host name", host_port);
    if (port == 0)
        return ft_err_set(err, -EINVAL, "peer %s: port 0 is not a port to connect to", desc);
    snprintf(ps, sizeof(ps), "%u", port);
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res;
    int g = getaddrinfo(host, ps, &hints, &res);
    if (g != 0)
        return ft_err_set(err, -EHOSTUNREACH, "peer %s: cannot resolve '%s': %s", desc, host,
                          g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
    /* A transient "busy" refusal (handshake slots taken, ctl.h) is retried after the
     * agent's hint, with jitter, while the timeout allows. */
    for (;;) {
        int fd = -1, last = -EHOSTUNREACH;
        for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
            last = connect_addr(ai, deadline, &fd);
        if (fd < 0) {
            freeaddrinfo(res);
            if (last == -ECONNREFUSED)
                return ft_err_set(err, last,
                                  "peer %s: connection refused (is 'fabtop serve' running there?)",
                                  desc);
            if (last == -ETIMEDOUT)
                return ft_err_set(err, last, "peer %s: no answer within %d ms", desc, timeout_ms);
            return ft_err_set(err, last, "peer %s: cannot connect: %s", desc, strerror(-last));
        }
        struct ft_err e = {0};
        int retry = 0;
        rc = client_start(fd, desc, key, deadline, timeout_ms, &retry, out, &e);
        if (rc == 0)
            break;
        close(fd);
        int64_t wait = -1;
        if (retry > 0)
            wait = retry + (int64_t)randombytes_uniform((uint32_t)retry);
        if (rc != -EBUSY || wait < 0 || now_ms() + wait >= deadline) {
            freeaddrinfo(res);
            return ft_err_set(err, rc, "%s", e.msg);
        }
        struct timespec ts = {(time_t)(wait / 1000), (long)(wait % 1000) * 1000000};
        nanosleep(&ts, NULL);
    }
    freeaddrinfo(res);
    return 0;
}

int channel_client_fd(int fd, const char *desc, const struct channel_key *key, int timeout_ms,
                      int *retry_ms, struct channel_conn **out, struct ft_err *err)
{
    *out = NULL;
    *retry_ms = 0;
    int rc = crypto_ready(err);
    if (rc < 0)
        return rc;
    if (timeout_ms <= 0)
        timeout_ms = CHANNEL_DEFAULT_TIMEOUT_MS;
    return client_start(fd, desc, key, now_ms() + timeout_ms, timeout_ms, retry_ms, out, err);
}

/* channel_client_fd's work by deadline; timeout_ms is the caller's, for messages. */
static int client_start(int fd, const char *desc, const struct channel_key *key, int64_t deadline,
                        int timeout_ms, int *retry_ms, struct channel_conn **out,
                        struct ft_err *err)
{
    *out = NULL;
    *retry_ms = 0;
    int rc;
    struct channel_conn *c = conn_new(fd, true);
    if (!c)
        return ft_err_set(err, -ENOMEM, "out of memory");
    snprintf(c->desc, sizeof(c->desc), "%s", desc);
    rc = client_handshake(c, key, deadline, timeout_ms, err);
    if (rc < 0) {
        *retry_ms = c->retry_ms;
        conn_release(c);
        return rc;
    }
    char me[256] = "";
    gethostname(me, sizeof(me) - 1);
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "hello");
    cJSON_AddStringToObject(req, "host", me);
    cJSON_AddStringToObject(req, "fabtop", FABTOP_VERSION);
    int left = (int)(deadline - now_ms());
    struct ft_err e = {0};
    rc = channel_request(c, req, &c->info, left > 0 ? left : 1, &e);
    if (rc < 0) {
        /* A refusal after authentication (e.g. the agent stopping) reads as a refusal. */
        const char *m = e.msg;
        char pre[320];
        snprintf(pre, sizeof(pre), "peer %s: the agent closed the session: ", c->desc);
        if (!strncmp(m, pre, strlen(pre)))
            ft_err_set(err, rc, "peer %s: the agent refused the session: %s", c->desc,
                       m + strlen(pre));
        else
            ft_err_set(err, rc, "%s", m);
        conn_release(c);
        return rc;
    }
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c->info, "host"));
    snprintf(c->name, sizeof(c->name), "%s", name ? name : "");
    *out = c;
    return 0;
}

int channel_request(struct channel_conn *c, cJSON *req, cJSON **resp, int timeout_ms,
                    struct ft_err *err)
{
    *resp = NULL;
    if (timeout_ms <= 0)
        timeout_ms = CHANNEL_DEFAULT_TIMEOUT_MS;
    char type_name[64];
    const char *tn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "type"));
    snprintf(type_name, sizeof(type_name), "%s", tn ? tn : "?");
    if (!tn) {
        cJSON_Delete(req);
        return ft_err_set(err, -EINVAL, "peer %s: a request needs a \"type\"", c->desc);
    }
    pthread_mutex_lock(&c->mu);
    int rc;
    char *text = NULL, *payload = NULL;
    if (c->broken || !c->recv_mac) {
        rc = ft_err_set(err, -EPIPE, "peer %s: the session is closed (%s)", c->desc,
                        c->broken_why[0] ? c->broken_why : "not authenticated");
        goto out;
    }
    int64_t id = ++c->next_id;
    cJSON_DeleteItemFromObjectCaseSensitive(req, "id");
    cJSON_AddNumberToObject(req, "id", (double)id);
    text = cJSON_PrintUnformatted(req);
    if (!text) {
        rc = ft_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    size_t n = strlen(text);
    if (n > CHANNEL_MAX_PAYLOAD) {
        rc = ft_err_set(err, -EMSGSIZE, "peer %s: request of %zu bytes exceeds the %d-byte limit",
                        c->desc, n, CHANNEL_MAX_PAYLOAD);
        goto out;
    }
    int64_t deadline = now_ms() + timeout_ms;
    struct ft_err e = {0};
    rc = write_frame(c, CHANNEL_T_REQUEST, text, n, deadline, &e);
    if (rc < 0) {
        c->broken = true;
        snprintf(c->broken_why, sizeof(c->broken_why), "%s", e.msg);
        /* The agent may have said why it dropped us. */
        int type;
        size_t plen;
        if (read_frame(c, CHANNEL_MAX_FRAME, now_ms() + 200, -2, &type, &payload, &plen, NULL) ==
                0 &&
            type == CHANNEL_T_ERROR)
            rc = client_refused(c, payload, plen, true, err);
        else
            rc = ft_err_set(err, rc, "peer %s: %s", c->desc, e.msg);
        goto out;
    }
    for (;;) {
        int type;
        size_t plen;
        free(payload);
        payload = NULL;
        ft_err_clear(&e);
        rc = read_frame(c, CHANNEL_MAX_FRAME, deadline, -2, &type, &payload, &plen, &e);
        if (rc == -ETIMEDOUT) {
            rc = ft_err_set(err, rc, "peer %s: no reply to '%s' within %d ms", c->desc, type_name,
                            timeout_ms);
            goto out; /* the session stays usable; a late reply is skipped */
        }
        if (rc < 0) {
            c->broken = true;
            snprintf(c->broken_why, sizeof(c->broken_why), "%s", e.msg);
            if (rc == -ETIME)
                rc = -ETIMEDOUT;
            rc = ft_err_set(err, rc, "peer %s: %s%s", c->desc, e.msg,
                            rc == -EBADMSG ? "; session closed" : "");
            goto out;
        }
        if (type == CHANNEL_T_ERROR) {
            rc = client_refused(c, payload, plen, true, err);
            goto out;
        }
        cJSON *j = type == CHANNEL_T_RESPONSE ? cJSON_ParseWithLength(payload, plen) : NULL;
        const cJSON *jid = cJSON_GetObjectItemCaseSensitive(j, "id");
        int64_t rid = -1; /* the agent's number: whole and non-negative, or malformed */
        if (!cJSON_IsObject(j) || !cJSON_IsNumber(jid) ||
            !jsonutil_whole(jid->valuedouble, 0, INT64_MAX, &rid)) {
            cJSON_Delete(j);
            c->broken = true;
            snprintf(c->broken_why, sizeof(c->broken_why), "malformed response");
            rc = ft_err_set(err, -EPROTO, "peer %s: malformed response (frame type %d)", c->desc,
                            type);
            goto out;
        }
        if (rid < id) {
            cJSON_Delete(j); /* the late answer to a request that timed out */
            continue;
        }
        if (rid != id) {
            cJSON_Delete(j);
            c->broken = true;
            snprintf(c->broken_why, sizeof(c->broken_why), "response out of order");
            rc = ft_err_set(err, -EPROTO, "peer %s: response to an unknown request", c->desc);
            goto out;
        }
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(j, "ok");
        if (cJSON_IsFalse(ok)) {
            const cJSON *en = cJSON_GetObjectItemCaseSensitive(j, "errno");
            const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "error"));
            int eno =
                cJSON_IsNumber(en) && en->valueint > 0 && en->valueint < 4096 ? en->valueint : EIO;
            rc = ft_err_set(err, -eno, "peer %s: %s", c->desc, msg ? msg : strerror(eno));
            cJSON_Delete(j);
            goto out;
        }
        *resp = j;
        rc = 0;
        goto out;
    }
out:
    pthread_mutex_unlock(&c->mu);
    cJSON_Delete(req);
    cJSON_free(text);
    free(payload);
    return rc;
}

void channel_close(struct channel_conn *c)
{
    if (!c)
        return;
    if (c->is_client && !c->broken && c->recv_mac) {
        cJSON *req = cJSON_CreateObject();
        cJSON_AddStringToObject(req, "type", "bye");
        cJSON *resp = NULL;
        channel_request(c, req, &resp, BYE_TIMEOUT_MS, NULL);
        cJSON_Delete(resp);
    }
    close(c->fd);
    conn_release(c);
}

/* ---- agent side of the handshake ---- */

/* Turn a read error into a refusal (when the client can still read one); ms: the deadline
 * that applied, hello: it was the hello's own. */
static int accept_read_failed(struct channel_conn *c, int rc, int ms, bool hello,
                              const struct ft_err *e, struct ft_err *err)
{
    char msg[320];
    switch (rc) {
    case -ETIMEDOUT:
    case -ETIME:
        snprintf(msg, sizeof(msg),
                 hello ? "no hello within %d ms" : "handshake timed out after %d ms", ms);
        channel_refuse(c, "timeout", msg, 0);
        return ft_err_set(err, -ETIMEDOUT, "%s", msg);
    case -ECANCELED:
        channel_refuse(c, "shutdown", "the agent is shutting down", 0);
        return ft_err_set(err, rc, "the agent is shutting down");
    case -EMSGSIZE:
        channel_refuse(c, "toolarge", e->msg, 0);
        return ft_err_set(err, rc, "%s", e->msg);
    case -EBADMSG:
        channel_refuse(c, "malformed", e->msg, 0);
        return ft_err_set(err, rc, "%s", e->msg);
    case -ECONNRESET:
        return ft_err_set(err, rc, "the client closed the connection during the handshake");
    default:
        return ft_err_set(err, rc, "%s", e->msg);
    }
}

static int accept_refuse(struct channel_conn *c, int rc, const char *code, int retry_ms,
                         struct ft_err *err, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static int accept_refuse(struct channel_conn *c, int rc, const char *code, int retry_ms,
                         struct ft_err *err, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    channel_refuse(c, code, msg, retry_ms);
    return ft_err_set(err, rc, "%s", msg);
}

int channel_conn_key(const struct channel_conn *c)
{
    return c->key_index;
}

/* Which of the keys made the client's proof: its index, or -1. Every key is tried and
 * compared, so the time taken does not depend on which one (or none) matched. */
static int match_key(const struct channel_key *keys, int nkeys, const unsigned char *nc,
                     const unsigned char *na, const unsigned char *t, const unsigned char *auth)
{
    int found = -1;
    for (int i = 0; i < nkeys; i++) {
        unsigned char buf[32];
        proof(&keys[i], "client", nc, na, t, buf);
        int bad = sodium_memcmp(buf, auth, 32);
        sodium_memzero(buf, sizeof(buf));
        found = !bad && found < 0 ? i : found;
    }
    return found;
}

int channel_accept(int fd, const struct channel_accept_opts *o, const struct channel_key *keys,
                   int nkeys, struct channel_conn **out, struct ft_err *err)
{
    *out = NULL;
    int rc = crypto_ready(err);
    if (rc < 0)
        return rc;
    if (nkeys < 1 || nkeys > 64)
        return ft_err_set(err, -EINVAL, "channel_accept: %d keys (1 to 64)", nkeys);
    struct channel_conn *c = conn_new(fd, false);
    if (!c)
        return ft_err_set(err, -ENOMEM, "out of memory");
    c->cancel_fd = o->cancel_fd;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int64_t t0 = now_ms(), deadline = t0 + o->timeout_ms;
    int timeout_ms = o->timeout_ms;
    int hello_ms = o->hello_timeout_ms > 0 && o->hello_timeout_ms < timeout_ms ? o->hello_timeout_ms
                                                                               : timeout_ms;
    unsigned char nc[CHANNEL_NONCE_BYTES], na[CHANNEL_NONCE_BYTES], t[32], buf[32];
    char *hc = NULL, *ha = NULL, *auth = NULL;
    size_t nhc, nauth;
    int type;
    struct ft_err e = {0};

    rc = read_frame(c, CHANNEL_MAX_HANDSHAKE_FRAME, t0 + hello_ms, -2, &type, &hc, &nhc, &e);
    if (rc < 0) {
        rc = accept_read_failed(c, rc, hello_ms, hello_ms < timeout_ms, &e, err);
        goto fail;
    }
    if (type != CHANNEL_T_HELLO) {
        rc = accept_refuse(c, -EPROTO, "malformed", 0, err,
                           "expected a hello frame, got frame type %d", type);
        goto fail;
    }
    int version = -1;
    char why[128];
    rc = hello_check(hc, nhc, "client", nc, &version, why, sizeof(why));
    if (rc == -EPROTONOSUPPORT) {
        rc = accept_refuse(c, rc, "version", 0, err,
                           "version mismatch: this agent speaks %s version %d, the client "
                           "version %d",
                           CHANNEL_PROTO, CHANNEL_VERSION, version);
        goto fail;
    }
    if (rc < 0) {
        rc = accept_refuse(c, rc, "malformed", 0, err, "malformed hello: %s", why);
        goto fail;
    }
    if (o->hello) {
        struct ft_err why_hello = {0};
        rc = o->hello(o->admit_arg, early_check(hc, nhc, keys, nkeys, nc), nc, &timeout_ms,
                      &why_hello);
        if (rc < 0) {
            rc = accept_refuse(c, rc, "busy", rc == -EAGAIN ? o->busy_retry_ms : 0, err, "%s",
                               why_hello.msg);
            goto fail;
        }
        if (timeout_ms < o->timeout_ms)
            deadline = t0 + timeout_ms;
    }
    randombytes_buf(na, sizeof(na));
    ha = hello_text("agent", na, NULL);
    if (!ha) {
        rc = ft_err_set(err, -ENOMEM, "out of memory");
        goto fail;
    }
    rc = write_frame(c, CHANNEL_T_HELLO, ha, strlen(ha), deadline, &e);
    if (rc < 0) {
        rc = ft_err_set(err, rc, "%s", e.msg);
        goto fail;
    }
    rc = read_frame(c, CHANNEL_MAX_HANDSHAKE_FRAME, deadline, -2, &type, &auth, &nauth, &e);
    if (rc < 0) {
        rc = accept_read_failed(c, rc, timeout_ms, false, &e, err);
        goto fail;
    }
    if (type != CHANNEL_T_AUTH || nauth != 32) {
        rc = accept_refuse(c, -EPROTO, "malformed", 0, err,
                           "expected the client's proof (32 bytes), got frame type %d with %zu "
                           "bytes",
                           type, nauth);
        goto fail;
    }
    transcript(hc, nhc, ha, strlen(ha), t);
    int ki = match_key(keys, nkeys, nc, na, t, (const unsigned char *)auth);
    if (ki < 0) {
        rc = accept_refuse(c, -EACCES, "auth", 0, err, "authentication failed: the keys differ");
        goto fail;
    }
    if (o->admit) {
        struct ft_err why_admit = {0};
        rc = o->admit(o->admit_arg, ki, &why_admit);
        if (rc < 0) {
            rc = accept_refuse(c, rc, "busy", rc == -EAGAIN ? o->busy_retry_ms : 0, err, "%s",
                               why_admit.msg);
            goto fail;
        }
    }
    c->key_index = ki;
    proof(&keys[ki], "agent", nc, na, t, buf);
    session_key(&keys[ki], nc, na, t, c->skey);
    rc = write_frame(c, CHANNEL_T_AUTH, buf, sizeof(buf), deadline, &e);
    sodium_memzero(buf, sizeof(buf));
    if (rc < 0) {
        rc = ft_err_set(err, rc, "%s", e.msg);
        goto fail; /* admitted: the caller releases the slot */
    }
    c->send_mac = c->recv_mac = true;
    free(hc);
    free(ha);
    free(auth);
    sodium_memzero(t, sizeof(t));
    *out = c;
    return 0;
fail:
    free(hc);
    free(ha);
    free(auth);
    sodium_memzero(t, sizeof(t));
    conn_release(c);
    return rc;
}
