/* fnv1a.h - the 32-bit FNV-1a hash, for the project's own chained hash
 * tables (peers.c, the signer's work queue and settled table): short keys,
 * no adversary who gains by collisions (the keys are object names the API
 * server accepted, or peer addresses under a per-address cap). The caller
 * reduces it to a bucket. */
#ifndef TG_COMMON_FNV1A_H
#define TG_COMMON_FNV1A_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t tg_fnv1a_bytes(const unsigned char *p, size_t n)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static inline uint32_t tg_fnv1a_str(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

#endif
