/* channel_int: what the files of the control channel share (engine/peer/channel*.c): the
 * connection, its limits, frames and I/O with deadlines, the handshake's proofs. Private to
 * engine/peer/; the channel's contract is engine/peer/channel.h. */
#ifndef CHANNEL_INT_H
#define CHANNEL_INT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "engine/peer/channel.h"

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

/* An ERROR frame's fields. */
struct channel_refusal {
    char code[32];
    char msg[320];
    int version;
    int retry_ms; /* 0: not transient */
};

/* channel.c */
/* libsodium initialised (once); -errno with the reason otherwise. */
int channel_crypto_ready(struct ft_err *err);
/* The monotonic clock in ms, and big-endian stores for frames and transcripts. */
int64_t channel_now_ms(void);
void channel_put_u16(unsigned char *p, uint16_t v);
void channel_put_u32(unsigned char *p, uint32_t v);
void channel_put_u64(unsigned char *p, uint64_t v);
/* Wait for events on fd until the deadline (< 0: none) or cancel_fd becomes readable. */
int channel_io_wait(int fd, short events, int64_t deadline, int cancel_fd);
/* One frame out (MAC'd once the session key is set) and one in, at most limit bytes. */
int channel_write_frame(struct channel_conn *c, int type, const void *payload, size_t plen,
                        int64_t deadline, struct ft_err *err);
int channel_read_frame(struct channel_conn *c, size_t limit, int64_t wait_deadline, int frame_ms,
                       int *type, char **payload, size_t *plen, struct ft_err *err);
/* A connection on fd (owned from now on), and its release without a goodbye. */
struct channel_conn *channel_conn_new(int fd, bool is_client);
void channel_conn_release(struct channel_conn *c);

/* channel_handshake.c */
/* The hash of both hellos, the proofs over it and the session key (both sides). */
void channel_handshake_transcript(const char *hc, size_t nhc, const char *ha, size_t nha,
                                  unsigned char t[32]);
void channel_handshake_proof(const struct channel_key *k, const char *role, const unsigned char *nc,
                             const unsigned char *na, const unsigned char *t,
                             unsigned char out[32]);
void channel_handshake_session_key(const struct channel_key *k, const unsigned char *nc,
                                   const unsigned char *na, const unsigned char *t,
                                   unsigned char out[CHANNEL_KEY_BYTES]);
/* A hello of role with nonce (and an early proof when key is given), and its checks. */
char *channel_handshake_hello_text(const char *role, const unsigned char *nonce,
                                   const struct channel_key *key);
int channel_handshake_early_check(const char *text, size_t len, const struct channel_key *keys,
                                  int nkeys, const unsigned char *nc);
int channel_handshake_hello_check(const char *text, size_t len, const char *want_role,
                                  unsigned char nonce[CHANNEL_NONCE_BYTES], int *version, char *why,
                                  size_t whylen);
/* An agent's refusal: its fields, and the -errno its code stands for. */
void channel_handshake_refusal_parse(const char *text, size_t len, struct channel_refusal *r);
int channel_handshake_refusal_errno(const char *code);

#endif
