/*
 * A team of worker threads kept for as long as its owner lives (a simulated
 * device, a benchmark), so that work can be split over the cores without
 * creating and joining threads per call: a network of ~1,000 small hardware
 * layers (MobileNetV2's depthwise channel blocks) or ~90 convolutions per
 * ResNet-50 image would pay tens of microseconds to milliseconds per layer
 * for that on a virtual machine.  One team serves every engine of a device
 * and the convolution kernel alike.
 *
 * A job is open from its publication until the calling thread has finished
 * its own part; workers that wake while it is open join it (up to the
 * job's seats), the others stay asleep.  The caller then waits only for the
 * workers inside the job, never for a sleeping one.  One job at a time (a
 * team has one driving thread).
 *
 * Publishing, joining and closing a job are atomic operations on one word,
 * no lock and no system call (team.c).  A worker that saw no new job for
 * 50 us yields its core every few us while it spins (a busy host's other
 * threads get it); after 1 ms it sleeps on a condition variable: while a network
 * runs, jobs come every few microseconds, with gaps of 0.2-1 ms where a
 * stretch of small layers runs on the caller alone (MobileNetV2: ~14 an
 * image), and a spinning worker joins within ~0.1 us where a futex wake
 * costs 5-40 us on a virtual machine, more than most jobs last.  An idle
 * device's workers are asleep 1 ms after its last job.
 */
#ifndef DLASIM_COMMON_TEAM_H
#define DLASIM_COMMON_TEAM_H

#include <stddef.h>
#include <stdatomic.h>

struct dla_team;

/* A team of `threads` - 1 workers (the caller is the other one); NULL when
 * threads <= 1 or the host refuses every thread (then the caller does all). */
struct dla_team *dla_team_create(unsigned threads);
void dla_team_destroy(struct dla_team *t);

/* Threads a job can have: the workers plus the caller (1 for NULL). */
unsigned dla_team_threads(const struct dla_team *t);

/* A 64-byte aligned buffer of at least `bytes` the team keeps for its
 * driving thread's jobs (grown when asked for more, freed with the team),
 * so that a job's per-thread data is not allocated at every call: fresh
 * memory costs its page faults and cache misses again each time (the
 * convolution's own input copies, conv_s8.c own_copies_pay).  Valid until
 * the next call; NULL for a NULL team or when out of memory. */
void *dla_team_scratch(struct dla_team *t, size_t bytes);

/* body(ctx) on the caller and on up to `helpers` workers that join while
 * the job is open; body shares the work out itself (counters in ctx).
 * Returns when the caller's body and every joined worker's have returned;
 * with t NULL or helpers 0 only the caller runs it. */
void dla_team_join(struct dla_team *t, size_t helpers, void (*body)(void *ctx), void *ctx);
/* fn(ctx) once on the owner's thread, right after it next publishes a job
 * the workers may join and before its own share of that job: set-up for
 * what follows the job, made while the workers take its items (the
 * device's SDP set-up during a convolution's job).  NULL clears it, and
 * whoever armed it clears it after the jobs it meant (it may not have
 * run: no job shared, or none at all); a call from a worker does nothing. */
void dla_team_prologue(struct dla_team *t, void (*fn)(void *ctx), void *ctx);
/* dla_team_join for a job of about work_s seconds on one thread: the same,
 * except that a job of DLA_TEAM_SOLID_JOB_S or more is still shared while
 * the link between the cores is slow (dla_team_coupled 0 under
 * DLA_LINK_MEASURE, a round trip measured under 10 us: cores slow to
 * reach, not cores taken by another program).  The jobs that a slow link
 * makes dearer than one thread are the many small ones (a layer handed
 * over, a band, a depthwise block); a large layer's tiles pay for a wake
 * and for the lines that cross. */
#define DLA_TEAM_SOLID_JOB_S 150e-6
void dla_team_join_work(struct dla_team *t, size_t helpers, double work_s,
                        void (*body)(void *ctx), void *ctx);
/* dla_team_join for a job whose every thread's share runs end to end on
 * data of its own (a band of a layer: its sums, then their conversion):
 * the same, and shared also when a spawned task's worker publishes it
 * (dla_team_spawn), where the other jobs stay on that worker because
 * their shares pass data between the cores. */
void dla_team_join_local(struct dla_team *t, size_t helpers, void (*body)(void *ctx),
                         void *ctx);

/* The calling thread's seat in t: i + 1 on worker i, 0 on any other
 * thread (the owner's).  A job's body takes its home share by it
 * (dla_team_run), so the same core works on the same part of every layer. */
unsigned dla_team_seat(const struct dla_team *t);

/* fn(ctx, i) once for every i < n; fn writes only what item i owns.  Each
 * thread of the team has a home share, a contiguous run of the items
 * (dla_team_seat's), takes its items from the front of it and then from
 * the front of the others' (a thread that joins late only finds less to
 * do): consecutive layers split alike leave each core the lines it wrote.
 * On the caller alone when t is NULL. */
void dla_team_run(struct dla_team *t, size_t n, void (*fn)(void *ctx, size_t i), void *ctx);

/* dla_team_run for items that each work on data of their own, which the
 * thread that takes an item goes on with (a depthwise block's fetched
 * rows, then its bands): shared also when a spawned task's worker runs it,
 * as dla_team_join_local's jobs.  Each thread first takes the items of its
 * own share (seat 0's the first ones, whichever thread calls). */
void dla_team_run_local(struct dla_team *t, size_t n, void (*fn)(void *ctx, size_t i),
                        void *ctx);

/* Items of at least `bytes_each` bytes of work: how many of a job's n
 * units of `unit_bytes` bytes one item takes so that an item holds about
 * `bytes_each` bytes while the job keeps at least four items a thread
 * (1 when the units are that large already).  An item is a take of a
 * home share's counter (a cache line between the cores once the threads
 * steal) and its set-up: a 7x7x960 layer's 120 surfaces of 392 bytes, an
 * item each, cost more in takes than in work. */
size_t dla_team_units_per_item(const struct dla_team *t, size_t n, size_t unit_bytes,
                               size_t bytes_each);

/* dla_team_run over n units in items of `per` consecutive units (fn(ctx, i)
 * for every unit i < n, in order within an item). */
void dla_team_run_grouped(struct dla_team *t, size_t n, size_t per,
                          void (*fn)(void *ctx, size_t i), void *ctx);

/*
 * A task for one worker, the caller going on meanwhile (the device's
 * overlap: a layer runs on a worker while the host services the interrupt
 * of the one before, src/sim/nvdla/device.c).  dla_team_spawn hands
 * fn(ctx) to the first worker that looks for work and returns at once; 0,
 * or -1 with no worker (t NULL) or a task still open (nothing handed then).
 * While the task runs, its worker drives the team's jobs (dla_team_run
 * from fn) and the spawning thread is a helper of the solid ones
 * (dla_team_join_work of DLA_TEAM_SOLID_JOB_S or more) and of the local
 * ones (dla_team_join_local) while it waits in dla_team_help_until; the
 * others run on the task's worker alone.  One
 * task at a time; the spawning thread drives no job of its own until the
 * task ends.
 */
int dla_team_spawn(struct dla_team *t, void (*fn)(void *ctx), void *ctx);
/* Whether the spawned task has ended (its fn returned; acquire: what fn
 * wrote is seen).  1 with no task. */
int dla_team_spawned_done(struct dla_team *t);
/* Join the jobs the task's worker publishes until the task has ended. */
void dla_team_help_until_done(struct dla_team *t);
/* The same until the task has ended or *count >= want (acquire: what the
 * task wrote before raising the count is seen), for a task that signals
 * its steps (a device's chained layers). */
void dla_team_help_until_count(struct dla_team *t, const atomic_uint *count, unsigned want);

/*
 * Whether the team shares work now.  Under DLA_LINK_MEASURE (team.c, "the
 * link between the cores") the owner reads the clock every
 * LINK_CHECK_EVERY calls, and every few milliseconds measures how long a
 * cache line takes to a worker and back; above 250 ns (this host's vCPUs
 * in a slow spell: 380-490 ns against 70-130) jobs run on the calling
 * thread alone (but the solid ones of dla_team_join_work) and
 * dla_team_spawn refuses, until a measurement is below 200 ns again.
 * dla_team_join/run and dla_team_spawn ask it themselves; a caller asks
 * before it commits to work that only pays on a second core
 * (the device's overlap).  0 for NULL.  Called by the owning thread only
 * (no task open).
 */
int dla_team_coupled(struct dla_team *t);
enum dla_link_policy {
    DLA_LINK_SHARE = 0, /* share whatever the link costs (a new team's policy) */
    DLA_LINK_MEASURE,   /* share while the link is fast (a device's team) */
    DLA_LINK_ALONE,     /* never share (tests) */
    DLA_LINK_SLOW       /* as a measured slow link, held (tests): only solid jobs
                           (dla_team_join_work) shared, no task handed out */
};
/* (a new measurement after ~8 ms; dla_team_link_ns 0 until then) */
void dla_team_set_link_policy(struct dla_team *t, enum dla_link_policy p);
/* The last measurement: a round trip in ns, 1,000,000 when no worker
 * answered (within 2 ms awake, 50 ms from asleep), 0 when none yet or t
 * is NULL. */
unsigned dla_team_link_ns(const struct dla_team *t);

/* One step of a thread's wait for others (the team's close, a kernel's
 * phases): a pause, and after DLA_SPIN_YIELD_AFTER steps a sched_yield,
 * for a host with more threads than cores, where the awaited thread may
 * need this core.  *spins starts at 0. */
#define DLA_SPIN_YIELD_AFTER 1024u
void dla_spin_wait(unsigned *spins);

#endif
