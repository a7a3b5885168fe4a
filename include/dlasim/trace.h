/*
 * NVDLA register traces (the trace language of NVDLA's verification suite,
 * see docs/trace-format.md): parse a case into commands, then play them on a
 * device.  Parsing loads the surface files it names, so every input error is
 * reported as file:line before anything runs.
 */
#ifndef DLASIM_TRACE_H
#define DLASIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"

#include "dlasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif
DLASIM_API_BEGIN

struct dlasim_trace;

/* Pointer arguments: `out`, `path`, `dev` and `t` are required (NULL is
 * DLASIM_ERR_INVAL with a message in err); `err` may be NULL (else errlen
 * bytes receive the reason on failure); others as noted. */

/* Parse a .cfg file; surface files are resolved relative to its folder. */
int dlasim_trace_parse_file(const char *path, struct dlasim_trace **out, char *err,
                            size_t errlen);
/* The same with a bound on the host memory the parsed trace holds (the
 * mem_load payloads and the surface file being read; 0: 4 GiB): beyond it
 * DLASIM_ERR_NOMEM with file:line, the surface file and the budget in err.
 * The CLI passes --max-mem. */
int dlasim_trace_parse_file_max(const char *path, uint64_t max_host_mem,
                                struct dlasim_trace **out, char *err, size_t errlen);
/* Parse trace text held in memory (text may be NULL only when len is 0);
 * `name` (NULL: "<trace text>") is used in messages, `dir` (may be NULL:
 * the current folder) is where surface files are looked up. */
int dlasim_trace_parse_text(const char *text, size_t len, const char *name, const char *dir,
                            struct dlasim_trace **out, char *err, size_t errlen);
/* NULL: nothing happens. */
void dlasim_trace_free(struct dlasim_trace *t);
/* Number of commands, and how many are checks (check_crc/check_nothing);
 * 0 for NULL. */
size_t dlasim_trace_commands(const struct dlasim_trace *t);
size_t dlasim_trace_checks(const struct dlasim_trace *t);

/* One check's outcome, reported as it is evaluated. */
struct dlasim_trace_check {
    const char *file;       /* trace file */
    unsigned line;          /* line of the check command */
    const char *sync_id;    /* event it belongs to */
    int passed;
    int is_crc;             /* check_crc (else check_nothing) */
    uint64_t addr;          /* check_crc: range */
    uint64_t size;
    uint32_t expected, actual;
};

struct dlasim_trace_play_options {
    /* called for each check as it is evaluated (may be NULL) */
    void (*on_check)(void *opaque, const struct dlasim_trace_check *c);
    void *opaque;
    /* layers a single wait may run before it is declared hung (0 = 10000) */
    unsigned max_layers_per_wait;
};

struct dlasim_trace_result {
    unsigned checks_passed;
    unsigned checks_failed;
    unsigned layers;        /* layers the device ran */
    unsigned polls_passed;  /* reg_read / poll_reg_equal reads that matched: NVIDIA's
                               testbench counts a read mismatch as a failure, so a
                               trace whose only checks are reads is a valid test */
    /* With timing on (dlasim_options.timing): the modelled cycle, counted
     * from the first command, at which the host saw the last completion
     * interrupt, the host modelled as NVIDIA's RTL testbench drives a trace
     * (../shared/reference/README.md): every register write issued back to
     * back in trace order, intr_notify not stopping them, and once all are
     * issued, S_INTR_MASK/S_INTR_STATUS polled until each awaited interrupt
     * was seen and cleared.  0 when timing is off. */
    uint64_t cycles_to_last_intr;
};

/* Play a parsed trace.  Returns 0 when every command ran and every check
 * passed, DLASIM_ERR_CHECK when a check failed, or another negative status
 * (err names file:line and why).  opt and res may be NULL. */
int dlasim_trace_play(struct dlasim_dev *dev, const struct dlasim_trace *t,
                      const struct dlasim_trace_play_options *opt,
                      struct dlasim_trace_result *res, char *err, size_t errlen);

DLASIM_API_END
#ifdef __cplusplus
}
#endif
#endif
