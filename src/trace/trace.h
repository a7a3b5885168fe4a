/* Internal representation of a parsed trace (include/dlasim/trace.h). */
#ifndef DLASIM_TRACE_INTERNAL_H
#define DLASIM_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/trace.h"

struct regdb;

enum trace_op {
    TRACE_REG_WRITE,      /* reg_write(NAME, VALUE) */
    TRACE_REG_READ,       /* reg_read(NAME, VALUE): read must equal VALUE */
    TRACE_POLL_REG_EQUAL, /* poll_reg_equal(NAME, VALUE) */
    TRACE_MEM_INIT,       /* mem_init(MEM, ADDR, SIZE, PATTERN) */
    TRACE_MEM_LOAD,       /* mem_load(MEM, ADDR, "file") */
    TRACE_INTR_NOTIFY,    /* intr_notify(ENGINE_G, SYNC) */
    TRACE_CHECK_CRC,      /* check_crc(SYNC, MEM, ADDR, SIZE, CRC) */
    TRACE_CHECK_NOTHING,  /* check_nothing(SYNC) */
    TRACE_NOP             /* sync_notify / sync_wait: ordering only */
};

/* A contiguous run of bytes from a surface file. */
struct trace_segment {
    uint64_t offset;
    size_t len;
    size_t data;          /* offset into trace_cmd.bytes */
};

struct trace_cmd {
    enum trace_op op;
    unsigned line;
    uint32_t addr;        /* register address */
    uint32_t value;       /* register value / expected CRC */
    uint32_t intr_bits;   /* intr_notify: the database's interrupt status bits awaited */
    int port;             /* memory port */
    uint64_t mem_addr, mem_size;
    char *sync;           /* sync id (intr_notify, checks) */
    char *text;           /* engine or file name, for messages */
    struct trace_segment *segs; /* mem_load */
    size_t nsegs;
    uint8_t *bytes;
};

struct dlasim_trace {
    char *file;           /* for messages */
    /* The register database the trace's names come from, chosen by the
     * trace prefix of its first register name (regdb_by_trace_name: NVDLA_,
     * RKNN_); one device per trace.  NULL until a register is named. */
    const struct regdb *db;
    struct trace_cmd *cmds;
    size_t n, cap;
    size_t nchecks;
    /* Line of a "// expect: never completes" directive, 0 if none: the case
     * passes only if a wait can never complete (the hardware hangs on the
     * programming, as graded on NVIDIA's RTL; docs/trace-format.md). */
    unsigned expect_never_line;
};

#endif
