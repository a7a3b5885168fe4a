/* MD5 (RFC 1321), for `dlasim loadable --expect-md5`. */
#ifndef DLASIM_TOOLS_MD5_H
#define DLASIM_TOOLS_MD5_H

#include <stddef.h>
#include <stdint.h>

/* hex: 33 bytes (32 lowercase hex digits and NUL). */
void cli_md5_hex(const void *data, size_t len, char hex[33]);

#endif
