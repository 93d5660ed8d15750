/* peers.c - see peers.h. A chained hash table of addresses with at least
 * one open connection: entries go as soon as their count is back to 0, so
 * its size is bounded by the open connections. */
#include "peers.h"
#include "fnv1a.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 1024

typedef struct entry {
    struct entry *next;
    tg_peer_key key;
    long count;
} entry;

struct tg_peers {
    pthread_mutex_t lock;
    long cap;
    long addresses;
    entry *buckets[BUCKETS];
};

tg_peers *tg_peers_new(long cap)
{
    tg_peers *p = calloc(1, sizeof(*p));

    if (!p)
        return NULL;
    pthread_mutex_init(&p->lock, NULL);
    p->cap = cap;
    return p;
}

void tg_peers_free(tg_peers *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < BUCKETS; i++) {
        entry *e = p->buckets[i];
        while (e) {
            entry *next = e->next;
            free(e);
            e = next;
        }
    }
    pthread_mutex_destroy(&p->lock);
    free(p);
}

void tg_peer_key_of(const struct sockaddr *sa, tg_peer_key *key)
{
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    memset(key, 0, sizeof(*key));
    if (sa->sa_family == AF_INET) {
        key->bytes[0] = 4;
        memcpy(key->bytes + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        key->len = 5;
    } else if (sa->sa_family == AF_INET6) {
        const uint8_t *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        if (memcmp(a, v4mapped, sizeof(v4mapped)) == 0) {
            /* a dual-stack listener sees IPv4 clients this way */
            key->bytes[0] = 4;
            memcpy(key->bytes + 1, a + 12, 4);
            key->len = 5;
        } else {
            key->bytes[0] = 6;
            memcpy(key->bytes + 1, a, 16);
            key->len = 17;
        }
    }
}

void tg_peer_net_key_of(const struct sockaddr *sa, tg_peer_key *key)
{
    tg_peer_key_of(sa, key);
    if (key->len == 17 && key->bytes[0] == 6)
        memset(key->bytes + 9, 0, 8);
}

static size_t bucket_of(const tg_peer_key *key)
{
    return tg_fnv1a_bytes(key->bytes, key->len) % BUCKETS;
}

static entry **find(tg_peers *p, const tg_peer_key *key)
{
    entry **at = &p->buckets[bucket_of(key)];
    while (*at && !((*at)->key.len == key->len && memcmp((*at)->key.bytes, key->bytes, key->len) == 0))
        at = &(*at)->next;
    return at;
}

int tg_peers_add(tg_peers *p, const tg_peer_key *key)
{
    entry **at;
    int rc = 0;

    if (!p || key->len == 0)
        return 0;                  /* nothing to count by */
    pthread_mutex_lock(&p->lock);
    at = find(p, key);
    if (*at && p->cap > 0 && (*at)->count >= p->cap) {
        rc = -1;
    } else if (*at) {
        (*at)->count++;
    } else if ((*at = calloc(1, sizeof(entry))) != NULL) {
        (*at)->key = *key;
        (*at)->count = 1;
        p->addresses++;
    } else {
        rc = -1;
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

void tg_peers_remove(tg_peers *p, const tg_peer_key *key)
{
    entry **at;

    if (!p || key->len == 0)
        return;
    pthread_mutex_lock(&p->lock);
    at = find(p, key);
    if (*at && --(*at)->count <= 0) {
        entry *gone = *at;
        *at = gone->next;
        free(gone);
        p->addresses--;
    }
    pthread_mutex_unlock(&p->lock);
}

long tg_peers_count(tg_peers *p, const tg_peer_key *key)
{
    entry **at;
    long n;

    pthread_mutex_lock(&p->lock);
    at = find(p, key);
    n = *at ? (*at)->count : 0;
    pthread_mutex_unlock(&p->lock);
    return n;
}

long tg_peers_addresses(tg_peers *p)
{
    long n;

    pthread_mutex_lock(&p->lock);
    n = p->addresses;
    pthread_mutex_unlock(&p->lock);
    return n;
}
