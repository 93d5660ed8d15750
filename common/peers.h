/* peers.h - open connections counted by the client's source address, so
 * that one address cannot take every slot of --max-connections. Shared by
 * the workers (a mutex: only accept and close touch it). Keys are the raw
 * address bytes; an IPv4-mapped IPv6 address counts as its IPv4 address.
 * Pure bookkeeping, no I/O. */
#ifndef TG_COMMON_PEERS_H
#define TG_COMMON_PEERS_H

#include <stdint.h>
#include <sys/socket.h>

/* An address as a key: family byte, then 4 or 16 address bytes. */
typedef struct tg_peer_key {
    uint8_t len;                   /* 0: unknown address (never capped) */
    uint8_t bytes[17];
} tg_peer_key;

typedef struct tg_peers tg_peers;

/* cap: connections one address may hold; 0 means no cap. NULL on OOM. */
tg_peers *tg_peers_new(long cap);
void tg_peers_free(tg_peers *p);

/* The key of a socket address (AF_INET, AF_INET6; others get len 0). */
void tg_peer_key_of(const struct sockaddr *sa, tg_peer_key *key);

/* The key of the network a client holds: IPv4 as tg_peer_key_of, IPv6 by
 * its /64 (the interface half zeroed): one host usually holds a whole /64
 * and could rotate through it. tenantgate-auth counts both its per-peer
 * connection cap and its request limiter (auth/ratelimit.h) by this key, so
 * that the two agree on who a peer is. */
void tg_peer_net_key_of(const struct sockaddr *sa, tg_peer_key *key);

/* p may be NULL (no cap) in add and remove.
 * Count one more connection of key: 0, or -1 when key is at the cap (or
 * out of memory); then nothing was counted. */
int tg_peers_add(tg_peers *p, const tg_peer_key *key);

/* One connection of key closed (after a successful tg_peers_add). */
void tg_peers_remove(tg_peers *p, const tg_peer_key *key);

/* Connections counted for key; distinct addresses holding any. */
long tg_peers_count(tg_peers *p, const tg_peer_key *key);
long tg_peers_addresses(tg_peers *p);

#endif
