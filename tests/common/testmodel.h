/* ONNX model files for the tests: read (plain or gzip) and loaded, the
 * test failing with the file and the loader's message otherwise. */
#ifndef DLASIM_TESTS_TESTMODEL_H
#define DLASIM_TESTS_TESTMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/compiler.h"

/* The file's bytes (gunzipped if it is gzip), malloc'ed; NULL if unreadable. */
uint8_t *tmodel_read(const char *path, size_t *len);

/* dlasim_model_load_onnx of the file; fails the test when it cannot. */
struct dlasim_model *tmodel_load(const char *path);

#endif
