/*
 * Bounds-checked FlatBuffers reader (see flatbuf.h for the format facts).
 * Every position is checked with 64-bit arithmetic before it is read, so a
 * hostile buffer can only produce an error, never an out-of-range read.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "loadable/flatbuf.h"

static int fb_fail(struct fb_reader *r, const char *fmt, ...)
{
    if (r->err && r->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, r->errlen, fmt, ap);
        va_end(ap);
    }
    return DLASIM_ERR_PARSE;
}

uint16_t fb_rd16(const struct fb_reader *r, uint32_t pos)
{
    return (uint16_t)(r->buf[pos] | r->buf[pos + 1] << 8);
}

uint32_t fb_rd32(const struct fb_reader *r, uint32_t pos)
{
    return (uint32_t)r->buf[pos] | (uint32_t)r->buf[pos + 1] << 8 |
           (uint32_t)r->buf[pos + 2] << 16 | (uint32_t)r->buf[pos + 3] << 24;
}

uint64_t fb_rd64(const struct fb_reader *r, uint32_t pos)
{
    return (uint64_t)fb_rd32(r, pos) | (uint64_t)fb_rd32(r, pos + 4) << 32;
}

static int in_buf(const struct fb_reader *r, uint64_t pos, uint64_t size)
{
    return pos <= r->len && size <= r->len - pos;
}

/* Follow the uoffset32 stored at pos. */
static int follow(struct fb_reader *r, uint32_t pos, const char *what, uint32_t *target)
{
    if (!in_buf(r, pos, 4)) {
        return fb_fail(r, "%s: offset field at byte 0x%x is outside the file (%zu bytes)", what,
                       pos, r->len);
    }
    uint64_t t = (uint64_t)pos + fb_rd32(r, pos);
    if (!in_buf(r, t, 4)) {
        return fb_fail(r, "%s: offset at byte 0x%x points to 0x%llx, outside the file (%zu bytes)",
                       what, pos, (unsigned long long)t, r->len);
    }
    *target = (uint32_t)t;
    return 0;
}

static int open_table(struct fb_reader *r, uint32_t pos, const char *name, struct fb_table *t)
{
    if (!in_buf(r, pos, 4) || pos % 4) {
        return fb_fail(r, "table %s at byte 0x%x: outside the file or misaligned", name, pos);
    }
    int64_t vt = (int64_t)pos - (int32_t)fb_rd32(r, pos);
    if (vt < 0 || !in_buf(r, (uint64_t)vt, 4) || vt % 2) {
        return fb_fail(r, "table %s at byte 0x%x: vtable at %lld is outside the file", name, pos,
                       (long long)vt);
    }
    uint16_t vsz = fb_rd16(r, (uint32_t)vt);
    uint16_t tsz = fb_rd16(r, (uint32_t)vt + 2);
    if (vsz < 4 || vsz % 2 || !in_buf(r, (uint64_t)vt, vsz) || tsz < 4 || !in_buf(r, pos, tsz)) {
        return fb_fail(r,
                       "table %s at byte 0x%x: vtable at 0x%llx has sizes %u/%u that do not fit "
                       "the file",
                       name, pos, (unsigned long long)vt, vsz, tsz);
    }
    t->pos = pos;
    t->vt = (uint32_t)vt;
    t->vt_size = vsz;
    t->name = name;
    return 0;
}

int fb_root(struct fb_reader *r, const char *name, struct fb_table *t)
{
    uint32_t pos = 0;
    int rc = follow(r, 0, "root offset", &pos);
    return rc ? rc : open_table(r, pos, name, t);
}

int fb_field(struct fb_reader *r, const struct fb_table *t, unsigned idx, const char *field,
             uint32_t size, uint32_t *pos)
{
    uint32_t slot = 4 + 2 * idx;
    *pos = 0;
    if (slot + 2 > t->vt_size) {
        return 0;
    }
    uint16_t off = fb_rd16(r, t->vt + slot);
    if (!off) {
        return 0;
    }
    uint16_t tsz = fb_rd16(r, t->vt + 2);
    if ((uint32_t)off + size > tsz) {
        return fb_fail(r, "table %s at byte 0x%x: field %s at +%u (%u bytes) lies outside the "
                          "table's %u bytes",
                       t->name, t->pos, field, off, size, tsz);
    }
    *pos = t->pos + off;
    return 0;
}

#define FB_SCALAR(NAME, TYPE, SIZE, READ)                                                       \
    int NAME(struct fb_reader *r, const struct fb_table *t, unsigned idx, const char *field,   \
             TYPE def, TYPE *out)                                                              \
    {                                                                                          \
        uint32_t pos;                                                                          \
        int rc = fb_field(r, t, idx, field, SIZE, &pos);                                       \
        *out = pos ? (TYPE)READ : def;                                                         \
        return rc;                                                                             \
    }
FB_SCALAR(fb_u8, uint8_t, 1, r->buf[pos])
FB_SCALAR(fb_u16, uint16_t, 2, fb_rd16(r, pos))
FB_SCALAR(fb_u32, uint32_t, 4, fb_rd32(r, pos))
FB_SCALAR(fb_u64, uint64_t, 8, fb_rd64(r, pos))

static int open_vector(struct fb_reader *r, uint32_t at, const char *what, uint32_t elem_size,
                       struct fb_vec *v)
{
    uint32_t pos = 0;
    int rc = follow(r, at, what, &pos);
    if (rc) {
        return rc;
    }
    uint32_t n = fb_rd32(r, pos);
    if (!in_buf(r, (uint64_t)pos + 4, (uint64_t)n * elem_size)) {
        return fb_fail(r, "%s: vector at byte 0x%x claims %u elements of %u bytes, beyond the "
                          "end of the file (%zu bytes)",
                       what, pos, n, elem_size, r->len);
    }
    v->pos = pos + 4;
    v->count = n;
    return 0;
}

int fb_vector(struct fb_reader *r, const struct fb_table *t, unsigned idx, const char *field,
              uint32_t elem_size, struct fb_vec *v)
{
    uint32_t pos = 0;
    v->pos = 0;
    v->count = 0;
    int rc = fb_field(r, t, idx, field, 4, &pos);
    if (rc || !pos) {
        return rc;
    }
    char what[128];
    snprintf(what, sizeof what, "table %s field %s", t->name, field);
    return open_vector(r, pos, what, elem_size, v);
}

int fb_vec_table(struct fb_reader *r, const struct fb_vec *v, uint32_t i, const char *name,
                 struct fb_table *t)
{
    uint32_t pos = 0;
    char what[96];
    snprintf(what, sizeof what, "%s[%u]", name, i);
    int rc = follow(r, v->pos + 4 * i, what, &pos);
    return rc ? rc : open_table(r, pos, name, t);
}

static int string_at(struct fb_reader *r, uint32_t at, const char *what, const char **s,
                     uint32_t *len)
{
    struct fb_vec v;
    int rc = open_vector(r, at, what, 1, &v);
    if (rc) {
        return rc;
    }
    /* strings are NUL-terminated in the format; require it so callers may print them */
    if (!in_buf(r, (uint64_t)v.pos + v.count, 1) || r->buf[v.pos + v.count] != 0) {
        return fb_fail(r, "%s: string at byte 0x%x is not NUL-terminated inside the file", what,
                       v.pos - 4);
    }
    *s = (const char *)r->buf + v.pos;
    *len = v.count;
    return 0;
}

int fb_string(struct fb_reader *r, const struct fb_table *t, unsigned idx, const char *field,
              const char **s, uint32_t *len)
{
    uint32_t pos = 0;
    *s = "";
    *len = 0;
    int rc = fb_field(r, t, idx, field, 4, &pos);
    if (rc || !pos) {
        return rc;
    }
    char what[128];
    snprintf(what, sizeof what, "table %s field %s", t->name, field);
    return string_at(r, pos, what, s, len);
}

int fb_vec_string(struct fb_reader *r, const struct fb_vec *v, uint32_t i, const char *field,
                  const char **s, uint32_t *len)
{
    char what[128];
    snprintf(what, sizeof what, "%s[%u]", field, i);
    return string_at(r, v->pos + 4 * i, what, s, len);
}
