/*
 * Symbol visibility of the public API.  The library is compiled with
 * -fvisibility=hidden; everything declared between DLASIM_API_BEGIN and
 * DLASIM_API_END (every public header wraps its declarations in them) and
 * every declaration marked DLASIM_API is exported from libdlasim.so and
 * global in libdlasim.a.  Internal names stay local to the library.
 */
#ifndef DLASIM_EXPORT_H
#define DLASIM_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define DLASIM_API __attribute__((visibility("default")))
#define DLASIM_API_BEGIN _Pragma("GCC visibility push(default)")
#define DLASIM_API_END _Pragma("GCC visibility pop")
#else
#define DLASIM_API
#define DLASIM_API_BEGIN
#define DLASIM_API_END
#endif

#endif
