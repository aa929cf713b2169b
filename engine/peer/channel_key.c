/* channel_key: the control channel's pre-shared keys: loading a key file (hex or raw,
 * refusing loose permissions), random keys, fingerprints, writing a new key file. */
#include "engine/peer/channel_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "common/jsonutil.h"

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
    int rc = channel_crypto_ready(err);
    if (rc < 0)
        return rc;
    if (path)
        return key_load_file(path, key, err);
    const char *env = getenv("FABTOP_KEY");
    if (env && *env)
        return key_parse("FABTOP_KEY", (const unsigned char *)env, strlen(env), false, key, err);
    char p[4096];
    /* A service's credential (systemd.exec(5), LoadCredential=key:/etc/fabtop/key): systemd's
     * private copy, readable by the service's user alone, checked like any key file. */
    const char *creds = getenv("CREDENTIALS_DIRECTORY");
    if (creds && *creds && snprintf(p, sizeof(p), "%s/key", creds) < (int)sizeof(p) &&
        access(p, F_OK) == 0)
        return key_load_file(p, key, err);
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
    channel_crypto_ready(NULL);
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
    channel_crypto_ready(NULL);
    crypto_generichash_init(&st, NULL, 0, sizeof(h));
    crypto_generichash_update(&st, (const unsigned char *)label, sizeof(label));
    crypto_generichash_update(&st, key->k, sizeof(key->k));
    crypto_generichash_final(&st, h, sizeof(h));
    sodium_bin2hex(out, 17, h, 8);
}

int channel_key_generate_file(const char *path, struct ft_err *err)
{
    int rc = channel_crypto_ready(err);
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
