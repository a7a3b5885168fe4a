/*
 * Deterministic pseudo-random numbers for tests (splitmix64): every test
 * seeds its own state, so a failure replays exactly.
 */
#ifndef DLASIM_TESTS_RNG_H
#define DLASIM_TESTS_RNG_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t splitmix64_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static inline uint32_t splitmix64_below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(splitmix64_next(s) % n);
}

/* Uniform in [lo, hi]. */
static inline uint32_t splitmix64_range(uint64_t *s, uint32_t lo, uint32_t hi)
{
    return lo + (uint32_t)(splitmix64_next(s) % ((uint64_t)hi - lo + 1));
}

/* n bytes, one draw each (the low byte). */
static inline void splitmix64_fill(uint64_t *s, void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        b[i] = (uint8_t)splitmix64_next(s);
    }
}

#endif
