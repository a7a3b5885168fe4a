/*
 * Trace-recording port: not yet written (issue 8, point 5).  Opening it
 * reports so, naming the option.
 */
#include <stdio.h>

#include "dlasim/dlasim.h"
#include "runtime/port.h"

int nvrt_record_port_open(const struct nvrt_port *inner, const char *dir, const char *name,
                          struct nvrt_record_port **out, char *err, size_t errlen)
{
    (void)inner, (void)name;
    *out = NULL;
    if (err && errlen) {
        snprintf(err, errlen, "--record-trace %s: trace recording is not implemented yet", dir);
    }
    return DLASIM_ERR_UNSUPPORTED;
}

struct nvrt_port *nvrt_record_port_of(struct nvrt_record_port *rp)
{
    (void)rp;
    return NULL;
}

int nvrt_record_port_close(struct nvrt_record_port *rp, char *err, size_t errlen)
{
    (void)rp, (void)err, (void)errlen;
    return DLASIM_ERR_UNSUPPORTED;
}

void nvrt_record_port_free(struct nvrt_record_port *rp)
{
    (void)rp;
}
