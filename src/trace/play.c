/*
 * Trace player: executes parsed commands against a device through the public
 * API only, as the NVDLA testbench does: register writes in order; waits
 * (intr_notify, poll_reg_equal) run the device until the condition holds; the
 * checks that belong to an event are evaluated when the event happens, so
 * later layers cannot disturb them.  A wait that the device can never satisfy
 * is reported with the units still busy.
 */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dlasim/timing.h"
#include "regs/regdb.h"
#include "trace/trace.h"

/* A syncpoint the timed host still has to see (intr_notify). */
struct syncpt {
    uint32_t bits;
    double raised;          /* modelled cycle its bits were raised */
};

struct player {
    struct dlasim_dev *dev;
    int timed;                 /* the device has timing on */
    struct dlasim_timing_profile prof;
    struct syncpt *sync;       /* timed: syncpoints awaited, in trace order */
    size_t nsync;
    const struct dlasim_trace *t;
    const struct dlasim_trace_play_options *opt;
    struct dlasim_trace_result *res;
    unsigned char *evaluated;  /* per command: check already evaluated */
    char *err;
    size_t errlen;
};

static int fail(struct player *p, const struct trace_cmd *c, int status, const char *fmt,
                const char *a, const char *b)
{
    char msg[1024];
    snprintf(msg, sizeof(msg), fmt, a, b);
    if (p->err && p->errlen) {
        snprintf(p->err, p->errlen, "%s:%u: %s", p->t->file, c->line, msg);
    }
    return status;
}

/* Run one layer; a device error is reported against the waiting command. */
static int step(struct player *p, const struct trace_cmd *c)
{
    int rc = dlasim_step(p->dev);
    if (rc > 0) {
        p->res->layers++;
    }
    if (rc < 0) {
        return fail(p, c, rc, "while waiting here the device failed: %s%s",
                    dlasim_last_error(p->dev), "");
    }
    return rc;
}

static int hung(struct player *p, const struct trace_cmd *c, const char *what)
{
    char busy[512];
    if (!dlasim_busy(p->dev, busy, sizeof(busy))) {
        snprintf(busy, sizeof(busy), "no unit is enabled");
    }
    return fail(p, c, DLASIM_ERR_TIMEOUT, "%s can never complete: %s", what, busy);
}

static unsigned max_layers(const struct player *p)
{
    return p->opt && p->opt->max_layers_per_wait ? p->opt->max_layers_per_wait : 10000u;
}

static void report(struct player *p, const struct dlasim_trace_check *chk)
{
    if (chk->passed) {
        p->res->checks_passed++;
    } else {
        p->res->checks_failed++;
    }
    if (p->opt && p->opt->on_check) {
        p->opt->on_check(p->opt->opaque, chk);
    }
}

static int crc_of(struct player *p, const struct trace_cmd *c, uint32_t *crc)
{
    uint8_t buf[65536];
    uLong acc = crc32(0L, Z_NULL, 0);
    for (uint64_t done = 0; done < c->mem_size;) {
        size_t n = c->mem_size - done < sizeof(buf) ? (size_t)(c->mem_size - done) : sizeof(buf);
        int rc = dlasim_mem_read(p->dev, (enum dlasim_port)c->port, c->mem_addr + done, buf, n);
        if (rc) {
            return fail(p, c, rc, "check_crc cannot read memory: %s%s",
                        dlasim_last_error(p->dev), "");
        }
        acc = crc32(acc, buf, (uInt)n);
        done += n;
    }
    *crc = (uint32_t)acc;
    return 0;
}

/* Evaluate every check of event `sync` (they may appear anywhere in the trace). */
static int run_checks(struct player *p, const char *sync)
{
    for (size_t i = 0; i < p->t->n; i++) {
        const struct trace_cmd *c = &p->t->cmds[i];
        if ((c->op != TRACE_CHECK_CRC && c->op != TRACE_CHECK_NOTHING) || p->evaluated[i] ||
            strcmp(c->sync, sync)) {
            continue;
        }
        struct dlasim_trace_check chk = {p->t->file, c->line, c->sync, 1, 0, 0, 0, 0, 0};
        if (c->op == TRACE_CHECK_CRC) {
            int rc = crc_of(p, c, &chk.actual);
            if (rc) {
                return rc;
            }
            chk.is_crc = 1;
            chk.addr = c->mem_addr;
            chk.size = c->mem_size;
            chk.expected = c->value;
            chk.passed = chk.actual == chk.expected;
        }
        p->evaluated[i] = 1;
        report(p, &chk);
    }
    return 0;
}

static int wait_intr_functional(struct player *p, const struct trace_cmd *c);

/* Timed: the testbench does not stop at intr_notify; the layers run (held:
 * outside modelled time) and the syncpoint is polled for at the end. */
static int wait_intr(struct player *p, const struct trace_cmd *c)
{
    if (!p->timed) {
        return wait_intr_functional(p, c);
    }
    dlasim_timing_hold(p->dev, 1);
    int rc = wait_intr_functional(p, c);
    dlasim_timing_hold(p->dev, 0);
    if (!rc) {
        int64_t at = dlasim_timing_irq_cycle(p->dev, c->intr_bits);
        p->sync[p->nsync].bits = c->intr_bits;
        p->sync[p->nsync].raised = at < 0 ? 0.0 : (double)at;
        p->nsync++;
    }
    return rc;
}

/*
 * Timed: once every write is issued, NVIDIA's testbench CSB master reads
 * S_INTR_MASK then S_INTR_STATUS over and over; a status read that shows
 * the bits of a syncpoint still awaited (the first in trace order) counts
 * as seeing it, and the master writes them back to clear them.
 * ref: nvdla/hw verif/verilator/nvdla.cpp, CSBMaster::eval.
 */
static uint64_t poll_syncpoints(struct player *p)
{
    double t = (double)dlasim_timing_now(p->dev), seen = t;
    double round = 2.0 * p->prof.csb_read_cycles;
    if (!(round >= 1.0)) {
        round = 1.0; /* a free CSB still takes a cycle per poll round */
    }
    size_t left = p->nsync;
    unsigned char *done = calloc(p->nsync ? p->nsync : 1, 1);
    if (!done) {
        return (uint64_t)t;
    }
    while (left) {
        t += round; /* S_INTR_MASK, then S_INTR_STATUS answered */
        size_t hit = p->nsync;
        double next = -1;
        for (size_t i = 0; i < p->nsync && hit == p->nsync; i++) {
            if (done[i]) {
                continue;
            }
            if (p->sync[i].raised <= t) {
                hit = i;
            } else if (next < 0 || p->sync[i].raised < next) {
                next = p->sync[i].raised;
            }
        }
        if (hit < p->nsync) {
            done[hit] = 1;
            left--;
            seen = t;
            t += p->prof.csb_write_cycles; /* clear the bits */
        } else if (next > t) {
            t += floor((next - t) / round) * round; /* poll rounds that see nothing */
        }
    }
    free(done);
    return (uint64_t)llround(seen);
}

/* "RK3588" for "rk3588" (messages). */
static const char *upper(const char *s, char *buf, size_t len)
{
    size_t i = 0;
    for (; s[i] && i + 1 < len; i++) {
        buf[i] = (char)toupper((unsigned char)s[i]);
    }
    buf[i] = '\0';
    return buf;
}

/* The awaited interrupt is pending: NVDLA GLB status bits not masked
 * (mask bit 1 = masked), or RK3588 core 0's PC INTERRUPT_STATUS (already
 * masked, mask bit 1 = enabled).  As the testbench, clear it once seen. */
static int intr_pending(struct player *p, const struct trace_cmd *c)
{
    const struct regdb *db = p->t->db ? p->t->db : regdb_all[0];
    uint32_t status, mask = 0;
    dlasim_csb_read(p->dev, db->intr_status, &status);
    if (!db->intr_mask_enables) {
        /* NVDLA: S_INTR_STATUS holds every raised bit, a mask bit 1 masks it
         * (RK3588: INTERRUPT_STATUS is already RAW_STATUS & MASK) */
        dlasim_csb_read(p->dev, db->intr_mask, &mask);
    }
    if ((status & ~mask & c->intr_bits) != c->intr_bits) {
        return 0;
    }
    /* RK3588 INTERRUPT_CLEAR, or NVDLA's write-1-to-clear S_INTR_STATUS */
    dlasim_csb_write(p->dev, db->has_intr_clear ? db->intr_clear : db->intr_status, c->intr_bits);
    return 1;
}

static int wait_intr_functional(struct player *p, const struct trace_cmd *c)
{
    for (unsigned n = 0;; n++) {
        if (intr_pending(p, c)) {
            return run_checks(p, c->sync);
        }
        int rc = n < max_layers(p) ? step(p, c) : 0;
        if (rc < 0) {
            return rc;
        }
        if (rc == 0) {
            char what[128];
            snprintf(what, sizeof(what), "intr_notify(%s, %s)", c->text, c->sync);
            return hung(p, c, what);
        }
    }
}

static int poll_reg_functional(struct player *p, const struct trace_cmd *c);

/* Timed: one read round trip (the layers it may wait for run held). */
static int poll_reg(struct player *p, const struct trace_cmd *c)
{
    if (!p->timed) {
        return poll_reg_functional(p, c);
    }
    dlasim_timing_hold(p->dev, 1);
    int rc = poll_reg_functional(p, c);
    dlasim_timing_hold(p->dev, 0);
    dlasim_timing_advance(p->dev, (uint64_t)llround(p->prof.csb_read_cycles));
    return rc;
}

static int poll_reg_functional(struct player *p, const struct trace_cmd *c)
{
    for (unsigned n = 0;; n++) {
        uint32_t v;
        dlasim_csb_read(p->dev, c->addr, &v);
        if (v == c->value) {
            p->res->polls_passed++;
            return 0;
        }
        int rc = n < max_layers(p) ? step(p, c) : 0;
        if (rc < 0) {
            return rc;
        }
        if (rc == 0) {
            char what[256];
            snprintf(what, sizeof(what), "poll_reg_equal(%s, 0x%" PRIx32 ") (reads 0x%" PRIx32 ")",
                     c->text, c->value, v);
            return hung(p, c, what);
        }
    }
}

static int mem_init(struct player *p, const struct trace_cmd *c)
{
    static const uint8_t zero[65536];
    for (uint64_t done = 0; done < c->mem_size;) {
        size_t n = c->mem_size - done < sizeof(zero) ? (size_t)(c->mem_size - done) : sizeof(zero);
        int rc = dlasim_mem_write(p->dev, (enum dlasim_port)c->port, c->mem_addr + done, zero, n);
        if (rc) {
            return fail(p, c, rc, "mem_init failed: %s%s", dlasim_last_error(p->dev), "");
        }
        done += n;
    }
    return 0;
}

static int mem_load(struct player *p, const struct trace_cmd *c)
{
    for (size_t i = 0; i < c->nsegs; i++) {
        const struct trace_segment *s = &c->segs[i];
        int rc = dlasim_mem_write(p->dev, (enum dlasim_port)c->port, c->mem_addr + s->offset,
                                  c->bytes + s->data, s->len);
        if (rc) {
            return fail(p, c, rc, "mem_load of %s failed: %s", c->text, dlasim_last_error(p->dev));
        }
    }
    return 0;
}

/* Timed: a memory command costs the host (the testbench: one cycle each). */
static void host_cmd(struct player *p)
{
    if (p->timed) {
        dlasim_timing_advance(p->dev, (uint64_t)llround(p->prof.host_cmd_cycles));
    }
}

static int play_one(struct player *p, const struct trace_cmd *c)
{
    uint32_t v;
    switch (c->op) {
    case TRACE_REG_WRITE:
        return dlasim_csb_write(p->dev, c->addr, c->value);
    case TRACE_REG_READ:
        dlasim_csb_read(p->dev, c->addr, &v);
        if (v != c->value) {
            char got[64];
            snprintf(got, sizeof(got), "0x%" PRIx32, v);
            return fail(p, c, DLASIM_ERR_CHECK, "reg_read(%s) returned %s", c->text, got);
        }
        p->res->polls_passed++;
        return 0;
    case TRACE_POLL_REG_EQUAL:
        return poll_reg(p, c);
    case TRACE_MEM_INIT:
        host_cmd(p);
        return mem_init(p, c);
    case TRACE_MEM_LOAD:
        host_cmd(p);
        return mem_load(p, c);
    case TRACE_INTR_NOTIFY:
        return wait_intr(p, c);
    case TRACE_CHECK_CRC:
    case TRACE_CHECK_NOTHING:
    case TRACE_NOP:
        return 0;
    }
    return 0;
}

/* A trace saying "// expect: never completes": a wait that can never
 * complete is its one check (passed); completing is a failed check. */
static int judge_never(const struct dlasim_trace *t, int rc, struct dlasim_trace_result *res,
                       char *err, size_t errlen)
{
    if (rc == DLASIM_ERR_TIMEOUT) {
        res->checks_passed++;
        if (err && errlen) {
            err[0] = '\0';
        }
        return 0;
    }
    if (rc == 0) {
        res->checks_failed++;
        if (err && errlen) {
            snprintf(err, errlen, "%s:%u: expected the device never to complete, but every wait "
                     "completed", t->file, t->expect_never_line);
        }
        return DLASIM_ERR_CHECK;
    }
    return rc;
}

int dlasim_trace_play(struct dlasim_dev *dev, const struct dlasim_trace *t,
                      const struct dlasim_trace_play_options *opt,
                      struct dlasim_trace_result *res, char *err, size_t errlen)
{
    struct dlasim_trace_result local;
    if (!dev || !t) {
        if (err && errlen) {
            snprintf(err, errlen, "dlasim_trace_play: %s is NULL", dev ? "the trace" : "dev");
        }
        return DLASIM_ERR_INVAL;
    }
    if (!res) {
        res = &local;
    }
    memset(res, 0, sizeof(*res));
    struct dlasim_device_info info;
    dlasim_device_info(dev, &info);
    if (t->db && (!info.regdb || strcmp(t->db->name, info.regdb))) {
        if (err && errlen) {
            char a[32], b[32];
            snprintf(err, errlen, "%s: the trace names %s registers but the device is an %s "
                     "(choose it with --config)", t->file, upper(t->db->name, a, sizeof(a)),
                     upper(info.regdb ? info.regdb : "?", b, sizeof(b)));
        }
        return DLASIM_ERR_INVAL;
    }
    struct player p = {dev, 0, {0}, NULL, 0, t, opt, res, calloc(t->n ? t->n : 1, 1), err, errlen};
    p.timed = dlasim_timing_get_profile(dev, &p.prof) == 0;
    if (p.timed) {
        p.sync = calloc(t->n ? t->n : 1, sizeof(*p.sync));
    }
    if (!p.evaluated || (p.timed && !p.sync)) {
        free(p.evaluated);
        free(p.sync);
        return DLASIM_ERR_NOMEM;
    }
    int rc = 0;
    for (size_t i = 0; i < t->n && !rc; i++) {
        rc = play_one(&p, &t->cmds[i]);
    }
    if (!rc && p.timed) {
        res->cycles_to_last_intr = poll_syncpoints(&p);
    }
    free(p.evaluated);
    free(p.sync);
    if (t->expect_never_line) {
        rc = judge_never(t, rc, res, err, errlen);
    }
    if (!rc && res->checks_failed) {
        if (err && errlen) {
            snprintf(err, errlen, "%s: %u of %u checks failed", t->file, res->checks_failed,
                     res->checks_failed + res->checks_passed);
        }
        rc = DLASIM_ERR_CHECK;
    }
    return rc;
}
