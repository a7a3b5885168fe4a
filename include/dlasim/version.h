/*
 * dlasim's version (the Makefile reads DLASIM_VERSION_STRING: the shared
 * library's soname is libdlasim.so.MAJOR, dlasim.pc carries the string).
 */
#ifndef DLASIM_VERSION_H
#define DLASIM_VERSION_H

#define DLASIM_VERSION_MAJOR 0
#define DLASIM_VERSION_MINOR 1
#define DLASIM_VERSION_PATCH 0
#define DLASIM_VERSION_STRING "0.1.0"

#endif
