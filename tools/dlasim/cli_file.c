/* Whole-file input for every subcommand (models, loadables, datasets, regcmd
 * lists): one reader, so each gets the same limits and error messages. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cli.h"

/* Larger inputs are refused rather than grown into: no input the CLI reads
 * (a model, a loadable, a dataset) comes near this. */
#define CLI_FILE_MAX ((size_t)1 << 32)

int cli_read_file(const char *path, uint8_t **buf, size_t *len)
{
    gzFile f = gzopen(path, "rb");
    if (!f) {
        fprintf(stderr, "dlasim: %s: %s\n", path, errno ? strerror(errno) : "cannot open");
        return -1;
    }
    size_t cap = (size_t)1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    const char *why = "out of memory";
    while (b) {
        int k = gzread(f, b + n, (unsigned)(cap - n));
        if (k < 0) {
            int zerr;
            why = gzerror(f, &zerr);
            why = zerr == Z_ERRNO ? strerror(errno) : why; /* gzerror repeats the path */
            free(b);
            b = NULL;
            break;
        }
        n += (size_t)k;
        if (n < cap) {
            break;
        }
        uint8_t *nb = cap < CLI_FILE_MAX ? realloc(b, cap * 2) : NULL;
        if (!nb) {
            why = cap < CLI_FILE_MAX ? "out of memory" : "larger than 4 GiB";
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap *= 2;
    }
    if (!b) {
        fprintf(stderr, "dlasim: %s: cannot read: %s\n", path, why);
        gzclose(f);
        return -1;
    }
    gzclose(f);
    *buf = b;
    *len = n;
    return 0;
}

int cli_close_output(FILE *f, const char *path)
{
    int err = ferror(f);
    int saved = errno;
    if (fclose(f) || err) {
        fprintf(stderr, "dlasim: %s: cannot write: %s\n", path,
                strerror(err ? (saved ? saved : EIO) : errno));
        return -1;
    }
    return 0;
}

int cli_write_file(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "dlasim: %s: cannot write: %s\n", path, strerror(errno));
        return -1;
    }
    fwrite(buf, 1, len, f);
    return cli_close_output(f, path);
}
