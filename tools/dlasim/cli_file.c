/* Whole-file input for every subcommand (models, loadables, datasets, regcmd
 * lists): one reader, so each gets the same limits and error messages. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cli.h"

/* Larger inputs are refused rather than grown into: no input the CLI reads
 * (a model, a loadable, a dataset) comes near this. */
#define CLI_FILE_MAX ((uint64_t)1 << 32)
/* gzread takes and returns int-sized counts: read in pieces below that */
#define GZ_CHUNK ((size_t)1 << 30)

static int file_fail(const char *path, const char *why)
{
    fprintf(stderr, "dlasim: %s: %s\n", path, why);
    return -1;
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
           : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* The size a gzip file states for its data: ISIZE, its last 4 bytes (RFC
 * 1952 section 2.3.1, modulo 2^32); 0 when the file is not gzip. */
static uint64_t gzip_stated_size(int fd, off_t size, int *is_gzip)
{
    uint8_t head[2], tail[4];
    *is_gzip = 0;
    if (size < 18 || pread(fd, head, 2, 0) != 2 || head[0] != 0x1f || head[1] != 0x8b ||
        pread(fd, tail, 4, size - 4) != 4) {
        return 0;
    }
    *is_gzip = 1;
    return (uint64_t)tail[0] | (uint64_t)tail[1] << 8 | (uint64_t)tail[2] << 16 |
           (uint64_t)tail[3] << 24;
}

int cli_read_file_max(const char *path, uint64_t max, uint8_t **buf, size_t *len)
{
    char why[256];
    max = max && max < CLI_FILE_MAX ? max : CLI_FILE_MAX;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
        }
        return file_fail(path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(why, sizeof why, "%s: dlasim reads inputs as whole regular files", kind_of(st.st_mode));
        return file_fail(path, why);
    }
    int gz;
    uint64_t stated = gzip_stated_size(fd, st.st_size, &gz);
    uint64_t expect = gz ? stated : (uint64_t)st.st_size;
    if (expect > max || (!gz && (uint64_t)st.st_size > max)) {
        close(fd);
        snprintf(why, sizeof why, "%s %" PRIu64 " bytes, more than the %" PRIu64 "-byte limit "
                 "(--max-mem; inputs are checked before they are read or inflated)",
                 gz ? "gzip data states" : "file of", expect, max);
        return file_fail(path, why);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
        close(fd);
        return file_fail(path, strerror(errno));
    }
    gzFile f = gzdopen(fd, "rb");
    if (!f) {
        close(fd);
        return file_fail(path, "cannot open");
    }
    /* room for the stated size (+1 to see the end); grown only up to max */
    size_t cap = (size_t)(expect + 1 < max + 1 ? expect + 1 : max + 1), n = 0;
    uint8_t *b = malloc(cap);
    const char *fail = b ? NULL : "out of memory";
    while (b) {
        size_t want = cap - n < GZ_CHUNK ? cap - n : GZ_CHUNK;
        int k = gzread(f, b + n, (unsigned)want);
        if (k < 0) {
            int zerr;
            fail = gzerror(f, &zerr);
            fail = zerr == Z_ERRNO ? strerror(errno) : fail; /* gzerror repeats the path */
            break;
        }
        n += (size_t)k;
        if ((size_t)k < want) {
            break; /* end of data */
        }
        if (n < cap) {
            continue;
        }
        if (n > max) { /* the data is longer than it said (or than allowed) */
            snprintf(why, sizeof why, "inflates to more than the %" PRIu64 "-byte limit "
                     "(--max-mem)", max);
            fail = why;
            break;
        }
        size_t ncap = cap * 2 < max + 1 ? cap * 2 : (size_t)max + 1;
        uint8_t *nb = realloc(b, ncap);
        if (!nb) {
            fail = "out of memory";
            break;
        }
        b = nb;
        cap = ncap;
    }
    gzclose(f);
    if (fail) {
        free(b); /* fail points at why or a static string, never into b */
        fprintf(stderr, "dlasim: %s: cannot read: %s\n", path, fail);
        return -1;
    }
    *buf = b;
    *len = n;
    return 0;
}

int cli_read_file(const char *path, uint8_t **buf, size_t *len)
{
    return cli_read_file_max(path, CLI_FILE_MAX, buf, len);
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

int cli_check_output_dir(const char *opt, const char *path)
{
    struct stat st;
    if (!stat(path, &st) && !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "dlasim: %s %s: exists and is not a folder\n", opt, path);
        return -1;
    }
    return 0;
}
