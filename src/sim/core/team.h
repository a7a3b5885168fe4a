/*
 * A team of worker threads kept for a device's lifetime, so that an engine
 * can split a layer's element work over the cores without creating threads
 * per layer (a network of ~1,000 small hardware layers, MobileNetV2's
 * depthwise channel blocks, would pay tens of microseconds per layer for
 * that on a virtual machine).
 *
 * dla_team_run(t, n, fn, ctx) calls fn(ctx, i) once for every i < n, on the
 * caller and the team's threads, and returns when all calls returned.  The
 * items are taken from a shared counter, so a thread that wakes late only
 * finds less to do; the caller never waits for a sleeping thread.  fn must
 * write only what item i owns.  One job at a time (the device is driven by
 * one thread).
 */
#ifndef DLASIM_SIM_CORE_TEAM_H
#define DLASIM_SIM_CORE_TEAM_H

#include <stddef.h>

struct dla_team;

/* A team of `threads` - 1 workers (the caller is the other one); NULL when
 * threads <= 1 or the host refuses a thread (then the caller does all). */
struct dla_team *dla_team_create(unsigned threads);
void dla_team_destroy(struct dla_team *t);

/* fn(ctx, i) for i < n; on the caller alone when t is NULL. */
void dla_team_run(struct dla_team *t, size_t n, void (*fn)(void *ctx, size_t i), void *ctx);

#endif
