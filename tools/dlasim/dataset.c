/*
 * Model inputs for `dlasim compile` / `dlasim run`: images (PGM P5/P2,
 * PNG through libpng), IDX files as MNIST-style datasets ship them
 * (`*-idx3-ubyte[.gz]`, each record one input; `*-idx1-ubyte[.gz]` labels),
 * raw float32 tensors (a multiple of the input size in float32) and raw
 * bytes (a multiple of the input size in bytes, pixels), and folders of
 * images.  Pixel bytes become byte * scale - mean (default scale 1/255,
 * mean 0: [0, 1]).  A gray image feeds a 3-channel input on every channel;
 * images are HWC (PNG RGB) converted to CHW.  No resizing: sizes must match.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "dataset.h"

static int dfail(const char *path, const char *why)
{
    fprintf(stderr, "dlasim: %s: %s\n", path, why);
    return -1;
}

/* Room for `more` inputs; -1 with *why when the float inputs would pass
 * d->max_bytes or the host has no memory. */
static int grow(struct dataset *d, size_t more, const char **why)
{
    size_t need = (d->count + more) * d->in_n;
    *why = "out of memory";
    if (d->max_bytes && (uint64_t)need * sizeof(float) > d->max_bytes) {
        *why = "the inputs as float32 would pass the --max-mem limit (use --count/--calib-count "
               "or a larger --max-mem)";
        return -1;
    }
    if (need > d->cap) {
        size_t cap = d->cap ? d->cap : 1024;
        while (cap < need) {
            cap *= 2;
        }
        if (d->max_bytes && (uint64_t)cap * sizeof(float) > d->max_bytes) {
            cap = need; /* exactly what is needed, within the limit */
        }
        float *nd = realloc(d->data, cap * sizeof(float));
        if (!nd) {
            return -1;
        }
        d->data = nd;
        d->cap = cap;
    }
    return 0;
}

/* One image of h x w pixels of ch channels (HWC bytes) as one input. */
static int add_pixels(struct dataset *d, const char *path, const uint8_t *px, uint32_t w,
                      uint32_t h, uint32_t ch)
{
    if (w != d->w || h != d->h || (ch != d->c && ch != 1 && !(ch == 3 && d->c == 1))) {
        char why[160];
        snprintf(why, sizeof why, "image is %ux%u with %u channel(s); the model takes %ux%u with %u",
                 w, h, ch, d->w, d->h, d->c);
        return dfail(path, why);
    }
    const char *why_grow;
    if (grow(d, 1, &why_grow)) {
        return dfail(path, why_grow);
    }
    float *x = d->data + d->count * d->in_n;
    for (uint32_t c = 0; c < d->c; c++) {
        for (uint32_t i = 0; i < w * h; i++) {
            float v;
            if (ch == d->c) {
                v = px[i * ch + c];
            } else if (ch == 1) {
                v = px[i];
            } else { /* RGB into one channel: luma */
                v = 0.299f * px[i * 3] + 0.587f * px[i * 3 + 1] + 0.114f * px[i * 3 + 2];
            }
            x[c * w * h + i] = v * d->scale - d->mean;
        }
    }
    d->count++;
    return 0;
}

static int pgm_int(const uint8_t *b, size_t len, size_t *p, long *v)
{
    while (*p < len && (b[*p] == ' ' || b[*p] == '\n' || b[*p] == '\r' || b[*p] == '\t' || b[*p] == '#')) {
        if (b[*p] == '#') {
            while (*p < len && b[*p] != '\n') {
                (*p)++;
            }
        } else {
            (*p)++;
        }
    }
    long x = 0;
    int digits = 0;
    while (*p < len && b[*p] >= '0' && b[*p] <= '9' && x < 1000000) {
        x = x * 10 + (b[*p] - '0');
        (*p)++;
        digits++;
    }
    *v = x;
    return digits ? 0 : -1;
}

/* netpbm: every gray value lies in [0, maxval]; one above it is refused
 * rather than rescaled past 255 and wrapped. */
static int pgm_above_maxval(const char *path, size_t i, long v, long mx)
{
    char why[160];
    snprintf(why, sizeof why, "PGM pixel %zu is %ld, above the maxval %ld", i, v, mx);
    return dfail(path, why);
}

static int load_pgm(struct dataset *d, const char *path, const uint8_t *b, size_t len)
{
    size_t p = 2;
    long w, h, mx;
    int ascii = b[1] == '2';
    if (pgm_int(b, len, &p, &w) || pgm_int(b, len, &p, &h) || pgm_int(b, len, &p, &mx) ||
        w < 1 || h < 1 || w > 65536 || h > 65536 || mx < 1 || mx > 255) {
        return dfail(path, "not an 8-bit PGM (P5/P2) image");
    }
    size_t n = (size_t)w * (size_t)h;
    uint8_t *px = malloc(n);
    if (!px) {
        return dfail(path, "out of memory");
    }
    if (ascii) {
        for (size_t i = 0; i < n; i++) {
            long v;
            if (pgm_int(b, len, &p, &v)) {
                free(px);
                return dfail(path, "truncated PGM");
            }
            if (v > mx) {
                free(px);
                return pgm_above_maxval(path, i, v, mx);
            }
            px[i] = (uint8_t)v;
        }
    } else {
        p++; /* one whitespace after the maximum */
        if (p > len || len - p < n) {
            free(px);
            return dfail(path, "truncated PGM");
        }
        memcpy(px, b + p, n);
        for (size_t i = 0; i < n; i++) {
            if (px[i] > mx) {
                long v = px[i];
                free(px);
                return pgm_above_maxval(path, i, v, mx);
            }
        }
    }
    if (mx != 255) {
        for (size_t i = 0; i < n; i++) {
            px[i] = (uint8_t)(px[i] * 255 / mx);
        }
    }
    int rc = add_pixels(d, path, px, (uint32_t)w, (uint32_t)h, 1);
    free(px);
    return rc;
}

static int load_png(struct dataset *d, const char *path, const uint8_t *b, size_t len)
{
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&im, b, len)) {
        return dfail(path, "not a readable PNG");
    }
    int gray = d->c == 1;
    im.format = gray ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    size_t n = PNG_IMAGE_SIZE(im);
    if (im.width > 65536 || im.height > 65536 || (d->max_bytes && n > d->max_bytes)) {
        png_image_free(&im);
        return dfail(path, "PNG too large (65536 pixels a side, and its pixels within --max-mem)");
    }
    uint8_t *px = malloc(n ? n : 1);
    if (!px || !png_image_finish_read(&im, NULL, px, 0, NULL)) {
        free(px);
        png_image_free(&im);
        return dfail(path, "PNG decoding failed");
    }
    int rc = add_pixels(d, path, px, im.width, im.height, gray ? 1 : 3);
    free(px);
    return rc;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int load_idx3(struct dataset *d, const char *path, const uint8_t *b, size_t len,
                     size_t limit)
{
    if (len < 16 || b[2] != 8 || b[3] != 3) {
        return dfail(path, "not an IDX3 file of unsigned bytes");
    }
    uint32_t n = be32(b + 4), h = be32(b + 8), w = be32(b + 12);
    if (h == 0 || w == 0 || h > 65536 || w > 65536 || (uint64_t)n * h * w > len - 16) {
        return dfail(path, "IDX3 header does not match the file size");
    }
    size_t take = limit && limit < n ? limit : n;
    for (size_t i = 0; i < take; i++) {
        if (add_pixels(d, path, b + 16 + i * h * w, w, h, 1)) {
            return -1;
        }
    }
    return 0;
}

static int load_raw(struct dataset *d, const char *path, const uint8_t *b, size_t len,
                    size_t limit)
{
    size_t fl = d->in_n * sizeof(float);
    if (len && len % fl == 0) { /* float32 tensors */
        size_t n = len / fl;
        n = limit && limit < n ? limit : n;
        const char *why_grow;
        if (grow(d, n, &why_grow)) {
            return dfail(path, why_grow);
        }
        memcpy(d->data + d->count * d->in_n, b, n * fl);
        for (size_t i = 0; i < n * d->in_n; i++) {
            if (!isfinite(d->data[d->count * d->in_n + i])) {
                char why[160];
                snprintf(why, sizeof why, "float32 value %zu (record %zu) is NaN or infinite", i,
                         i / d->in_n);
                return dfail(path, why);
            }
        }
        d->count += n;
        return 0;
    }
    if (len && len % d->in_n == 0) { /* pixel bytes, CHW */
        size_t n = len / d->in_n;
        n = limit && limit < n ? limit : n;
        const char *why_grow;
        if (grow(d, n, &why_grow)) {
            return dfail(path, why_grow);
        }
        for (size_t i = 0; i < n * d->in_n; i++) {
            d->data[d->count * d->in_n + i] = b[i] * d->scale - d->mean;
        }
        d->count += n;
        return 0;
    }
    char why[160];
    snprintf(why, sizeof why,
             "raw file of %zu bytes is neither a multiple of the input's %zu float32 values nor "
             "of its %zu bytes",
             len, d->in_n, d->in_n);
    return dfail(path, why);
}

static int load_dir(struct dataset *d, const char *path, size_t limit)
{
    DIR *dir = opendir(path);
    if (!dir) {
        return dfail(path, strerror(errno));
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.') {
            continue;
        }
        char **nn = realloc(names, (n + 1) * sizeof *nn);
        if (!nn) {
            break;
        }
        names = nn;
        names[n] = malloc(strlen(path) + strlen(e->d_name) + 2);
        if (names[n]) {
            sprintf(names[n], "%s/%s", path, e->d_name);
            n++;
        }
    }
    closedir(dir);
    /* sorted: a deterministic order */
    for (size_t i = 1; i < n; i++) {
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rc && (!limit || d->count < limit)) {
            rc = dataset_add(d, names[i], limit ? limit - d->count : 0);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int dataset_add(struct dataset *d, const char *path, size_t limit)
{
    struct stat st;
    if (stat(path, &st)) {
        return dfail(path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        return load_dir(d, path, limit);
    }
    uint8_t *b;
    size_t len;
    if (cli_read_file_max(path, d->max_bytes, &b, &len)) {
        return -1;
    }
    int rc;
    if (len >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '2')) {
        rc = load_pgm(d, path, b, len);
    } else if (len >= 8 && !memcmp(b, "\x89PNG", 4)) {
        rc = load_png(d, path, b, len);
    } else if (len >= 4 && b[0] == 0 && b[1] == 0 && b[2] == 8 && b[3] == 3) {
        rc = load_idx3(d, path, b, len, limit);
    } else {
        rc = load_raw(d, path, b, len, limit);
    }
    free(b);
    return rc;
}

void dataset_init(struct dataset *d, const int64_t *dims, int rank, size_t in_n)
{
    memset(d, 0, sizeof *d);
    d->in_n = in_n;
    d->scale = 1.0f / 255.0f;
    d->c = rank >= 4 ? (uint32_t)dims[1] : 1;
    d->h = rank >= 4 ? (uint32_t)dims[2] : 1;
    d->w = rank >= 4 ? (uint32_t)dims[3] : (uint32_t)in_n;
    if (rank == 3) {
        d->c = 1, d->h = (uint32_t)dims[1], d->w = (uint32_t)dims[2];
    }
}

void dataset_free(struct dataset *d)
{
    free(d->data);
    memset(d, 0, sizeof *d);
}

int labels_load(const char *path, uint8_t **labels, size_t *n)
{
    uint8_t *b;
    size_t len;
    if (cli_read_file(path, &b, &len)) {
        return -1;
    }
    if (len < 8 || b[0] || b[1] || b[2] != 8 || b[3] != 1 || be32(b + 4) > len - 8) {
        free(b);
        return dfail(path, "not an IDX1 label file (*-idx1-ubyte[.gz])");
    }
    *n = be32(b + 4);
    *labels = malloc(*n ? *n : 1);
    if (!*labels) {
        free(b);
        return dfail(path, "out of memory");
    }
    memcpy(*labels, b + 8, *n);
    free(b);
    return 0;
}

/* Image geometry of a file (IDX3 records, PGM, PNG) into dims[2] (height)
 * and dims[3] (width) when they are still 0; -1 (printed) when unknown. */
/* The first entry of a folder in name order (what load_dir reads first). */
static int first_entry(const char *dir, char *out, size_t len)
{
    DIR *dd = opendir(dir);
    struct dirent *e;
    char best[256] = "";
    if (!dd) {
        return dfail(dir, strerror(errno));
    }
    while ((e = readdir(dd))) {
        if (e->d_name[0] != '.' && (!best[0] || strcmp(e->d_name, best) < 0)) {
            snprintf(best, sizeof best, "%s", e->d_name);
        }
    }
    closedir(dd);
    if (!best[0]) {
        return dfail(dir, "empty folder");
    }
    snprintf(out, len, "%s/%s", dir, best);
    return 0;
}

int dataset_probe(struct dataset *d, const char *path, int64_t dims[4])
{
    if (dims[2] && dims[3]) {
        return 0;
    }
    struct stat st;
    if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
        char first[4096];
        return first_entry(path, first, sizeof first) ? -1 : dataset_probe(d, first, dims);
    }
    uint8_t *b;
    size_t len;
    if (cli_read_file_max(path, d->max_bytes, &b, &len)) {
        return -1;
    }
    int rc = 0;
    if (len >= 16 && b[0] == 0 && b[1] == 0 && b[2] == 8 && b[3] == 3) {
        dims[2] = be32(b + 8), dims[3] = be32(b + 12);
    } else if (len >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '2')) {
        size_t p = 2;
        long w, h;
        if (pgm_int(b, len, &p, &w) || pgm_int(b, len, &p, &h)) {
            rc = dfail(path, "malformed PGM header");
        } else {
            dims[2] = h, dims[3] = w;
        }
    } else if (len >= 8 && !memcmp(b, "\x89PNG", 4)) {
        png_image im;
        memset(&im, 0, sizeof im);
        im.version = PNG_IMAGE_VERSION;
        if (!png_image_begin_read_from_memory(&im, b, len)) {
            rc = dfail(path, "not a readable PNG");
        } else {
            dims[2] = im.height, dims[3] = im.width;
            png_image_free(&im);
        }
    } else {
        rc = dfail(path, "a loadable takes images (IDX3, PGM, PNG): a raw file has no geometry");
    }
    free(b);
    if (!rc && (dims[2] < 1 || dims[3] < 1 || dims[2] > 65536 || dims[3] > 65536)) {
        rc = dfail(path, "image size out of range");
    }
    return rc;
}
