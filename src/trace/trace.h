/* Internal representation of a parsed trace (include/dlasim/trace.h). */
#ifndef DLASIM_TRACE_INTERNAL_H
#define DLASIM_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/trace.h"

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
    uint32_t intr_bits;   /* intr_notify: GLB status bits awaited */
    uint32_t rk_intr_bits; /* intr_notify on RK3588: PC INTERRUPT_STATUS bits */
    int port;             /* memory port */
    uint64_t mem_addr, mem_size;
    char *sync;           /* sync id (intr_notify, checks) */
    char *text;           /* engine or file name, for messages */
    struct trace_segment *segs; /* mem_load */
    size_t nsegs;
    uint8_t *bytes;
};

/* Which device's register names a trace uses (one device per trace). */
enum trace_dialect {
    TRACE_DIALECT_NONE = 0,   /* no register named yet */
    TRACE_DIALECT_NVDLA = 1,  /* NVDLA_<UNIT>.<REG>_0, CSB addresses */
    TRACE_DIALECT_RK3588 = 2  /* RKNN_<block>_<reg>, offsets in core 0 */
};

struct dlasim_trace {
    char *file;           /* for messages */
    int dialect;          /* enum trace_dialect */
    struct trace_cmd *cmds;
    size_t n, cap;
    size_t nchecks;
};

#endif
