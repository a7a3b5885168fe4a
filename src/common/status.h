/* Error reporting shared by the library's parsers and front ends. */
#ifndef DLASIM_COMMON_STATUS_H
#define DLASIM_COMMON_STATUS_H

#include <stddef.h>

/* Format the message into err (when err and errlen allow) and return status:
 * the one way every input error becomes a return code plus a message. */
int dla_errf(char *err, size_t errlen, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
