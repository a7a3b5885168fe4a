/*
 * Trace output shared by the rtlgrade case writers (convcase, imgcase): the
 * device's CSB log (DLASIM_LOG_REG) and layer log (DLASIM_LOG_EXEC) become a
 * trace in the language of ../shared/conformance/README.md, and surface files
 * are written in NVDLA's .dat format.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dlasim/dlasim.h"
#include "trace_out.h"

/* The trace text under construction and the state of the log filter. */


void trace_put(struct tracebuf *t, const char *s)
{
    size_t n = strlen(s);
    if (t->oom) {
        return;
    }
    if (t->len + n + 2 > t->cap) {
        size_t ncap = (t->cap + n + 2) * 2;
        char *p = realloc(t->text, ncap);
        if (!p) {
            t->oom = 1;
            return;
        }
        t->text = p;
        t->cap = ncap;
    }
    memcpy(t->text + t->len, s, n);
    t->len += n;
    t->text[t->len++] = '\n';
    t->text[t->len] = 0;
}

void trace_on_log(void *opaque, unsigned cat, const char *msg)
{
    struct tracebuf *t = opaque;
    char line[128];
    if (cat == DLASIM_LOG_EXEC) {
        if (strstr(msg, ": done")) {
            snprintf(line, sizeof line, "intr_notify(SDP_%u, sync_id_%u);", t->sdp_group,
                     t->layers_done++);
            trace_put(t, line);
            t->after_layer = 1;
        }
        return;
    }
    if (cat != DLASIM_LOG_REG) {
        return;
    }
    if (strncmp(msg, "reg_write(NVDLA_GLB.S_INTR_STATUS_0,", 36) == 0 && t->after_layer) {
        t->after_layer = 0;
        return;
    }
    unsigned v;
    if (sscanf(msg, "reg_write(NVDLA_SDP.S_POINTER_0, 0x%x)", &v) == 1) {
        t->sdp_group = v & 1u;
    }
    trace_put(t, msg);
    if (strncmp(msg, "reg_write(NVDLA_SDP.D_OP_ENABLE_0,", 34) == 0) {
        /* the planner reads S_CBUF_FLUSH_STATUS next (enable_layer) */
        trace_put(t, "poll_reg_equal(NVDLA_CDMA.S_CBUF_FLUSH_STATUS_0,0x1);");
    }
}

/* NVDLA surface file: {offset:0x.., size:N, payload:0x.. ...}, 32 bytes a line. */
int trace_write_dat(const char *path, const uint8_t *b, size_t n, uint32_t *crc)
{
    FILE *f = fopen(path, "w");
    char line[256];
    if (!f) {
        return -1;
    }
    *crc = (uint32_t)crc32(0, (const Bytef *)"{\n", 2);
    fputs("{\n", f);
    for (size_t o = 0; o < n; o += 32) {
        size_t k = n - o < 32 ? n - o : 32;
        int len = snprintf(line, sizeof line, "{offset:0x%zx, size:%zu, payload:", o, k);
        for (size_t i = 0; i < k; i++) {
            len += snprintf(line + len, sizeof line - (size_t)len, "%s0x%02x", i ? " " : "",
                            b[o + i]);
        }
        len += snprintf(line + len, sizeof line - (size_t)len, "} ,\n");
        *crc = (uint32_t)crc32(*crc, (const Bytef *)line, (uInt)len);
        fputs(line, f);
    }
    *crc = (uint32_t)crc32(*crc, (const Bytef *)"}\n", 2);
    fputs("}\n", f);
    return fclose(f);
}

