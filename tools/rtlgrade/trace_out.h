/* Trace output of the rtlgrade case writers (trace_out.c). */
#ifndef DLASIM_RTLGRADE_TRACE_OUT_H
#define DLASIM_RTLGRADE_TRACE_OUT_H

#include <stddef.h>
#include <stdint.h>

struct tracebuf {
    char *text;
    size_t len, cap;
    int oom;
    unsigned sdp_group;   /* group the SDP producer was last set to */
    unsigned layers_done; /* intr_notify lines written */
    int after_layer;      /* drop the driver's S_INTR_STATUS acknowledgement */
};

/* Append one line. */
void trace_put(struct tracebuf *t, const char *s);
/* dlasim_options.log_cb: CSB writes become reg_write lines (the driver's
 * S_INTR_STATUS acknowledgement after a layer is left out), a poll of CDMA's
 * CBUF flush status follows SDP's OP_ENABLE, a completed layer becomes
 * intr_notify(SDP_<group>, sync_id_<n>). */
void trace_on_log(void *opaque, unsigned cat, const char *msg);
/* Write n bytes as an NVDLA surface file; *crc gets the CRC-32 of the text. */
int trace_write_dat(const char *path, const uint8_t *b, size_t n, uint32_t *crc);

#endif
