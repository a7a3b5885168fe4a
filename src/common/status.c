/* Status codes (include/dlasim/dlasim.h) as names. */
#include <stdarg.h>
#include <stdio.h>

#include "common/status.h"
#include "dlasim/dlasim.h"

const char *dlasim_status_name(int status)
{
    switch (status) {
    case DLASIM_OK: return "DLASIM_OK";
    case DLASIM_ERR_INVAL: return "DLASIM_ERR_INVAL";
    case DLASIM_ERR_NOMEM: return "DLASIM_ERR_NOMEM";
    case DLASIM_ERR_MEM: return "DLASIM_ERR_MEM";
    case DLASIM_ERR_TIMEOUT: return "DLASIM_ERR_TIMEOUT";
    case DLASIM_ERR_PROG: return "DLASIM_ERR_PROG";
    case DLASIM_ERR_IO: return "DLASIM_ERR_IO";
    case DLASIM_ERR_PARSE: return "DLASIM_ERR_PARSE";
    case DLASIM_ERR_UNSUPPORTED: return "DLASIM_ERR_UNSUPPORTED";
    case DLASIM_ERR_CHECK: return "DLASIM_ERR_CHECK";
    default: return "DLASIM_ERR_UNKNOWN";
    }
}

int dla_errf(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}
