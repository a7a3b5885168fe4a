/* ONNX model files for the tests (see testmodel.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <zlib.h>

#include "testmodel.h"

uint8_t *tmodel_read(const char *path, size_t *len)
{
    gzFile f = gzopen(path, "rb"); /* reads plain files as they are */
    if (!f) {
        return NULL;
    }
    size_t cap = 1 << 20, n = 0;
    uint8_t *b = malloc(cap);
    int k;
    while (b && (k = gzread(f, b + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)k;
        if (n == cap) {
            uint8_t *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
            }
            b = nb;
        }
    }
    gzclose(f);
    *len = n;
    return b;
}

struct dlasim_model *tmodel_load(const char *path)
{
    size_t len;
    uint8_t *b = tmodel_read(path, &len);
    if (!b) {
        fail_msg("cannot read %s (run from the repository root)", path);
    }
    struct dlasim_model *m = NULL;
    char err[512];
    int rc = dlasim_model_load_onnx(b, len, &m, err, sizeof err);
    free(b);
    if (rc) {
        fail_msg("%s: %s", path, err);
    }
    return m;
}
