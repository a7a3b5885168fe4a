/*
 * A small bounds-checked FlatBuffers reader (no FlatBuffers C library is
 * packaged in Debian).  Only what the NVDLA loadable schema needs: tables,
 * scalars, inline structs, strings and vectors of scalars or tables.
 *
 * Format facts (flatbuffers.dev "FlatBuffers internals"): little-endian; the
 * buffer starts with a uoffset32 to the root table; a table starts with a
 * soffset32 to its vtable (vtable = table - soffset); a vtable is u16 vtable
 * size, u16 table size, then one u16 offset per field (0 = absent); a field
 * that refers to a string, vector or table holds a uoffset32 relative to its
 * own position; vectors and strings start with a u32 element count.
 *
 * Every access is checked against the buffer; on failure the reader returns
 * DLASIM_ERR_PARSE and fb->err says which table/field and which byte offset.
 */
#ifndef NVRT_FLATBUF_H
#define NVRT_FLATBUF_H

#include <stddef.h>
#include <stdint.h>

struct fb_reader {
    const uint8_t *buf;
    size_t len;
    char *err;     /* message buffer (may be NULL) */
    size_t errlen;
};

/* A table: its byte position and its vtable's position and size. */
struct fb_table {
    uint32_t pos;
    uint32_t vt;
    uint16_t vt_size;
    const char *name; /* schema name, for messages */
};

/* A vector: position of element 0 and element count. */
struct fb_vec {
    uint32_t pos;
    uint32_t count;
};

int fb_root(struct fb_reader *r, const char *name, struct fb_table *t);
/* Position of a field's data, 0 if the field is absent. */
int fb_field(struct fb_reader *r, const struct fb_table *t, unsigned idx, const char *field,
             uint32_t size, uint32_t *pos);
int fb_u8(struct fb_reader *r, const struct fb_table *t, unsigned idx, const char *field,
          uint8_t def, uint8_t *out);
int fb_u16(struct fb_reader *r, const struct fb_table *t, unsigned idx, const char *field,
           uint16_t def, uint16_t *out);
int fb_u32(struct fb_reader *r, const struct fb_table *t, unsigned idx, const char *field,
           uint32_t def, uint32_t *out);
int fb_u64(struct fb_reader *r, const struct fb_table *t, unsigned idx, const char *field,
           uint64_t def, uint64_t *out);
/* Vector with elements of elem_size bytes (4 for tables/strings); absent = empty. */
int fb_vector(struct fb_reader *r, const struct fb_table *t, unsigned idx, const char *field,
              uint32_t elem_size, struct fb_vec *v);
/* Element i of a vector of tables. */
int fb_vec_table(struct fb_reader *r, const struct fb_vec *v, uint32_t i, const char *name,
                 struct fb_table *t);
/* String field (or element i of a vector of strings when t is NULL and v given). */
int fb_string(struct fb_reader *r, const struct fb_table *t, unsigned idx, const char *field,
              const char **s, uint32_t *len);
int fb_vec_string(struct fb_reader *r, const struct fb_vec *v, uint32_t i, const char *field,
                  const char **s, uint32_t *len);
uint16_t fb_rd16(const struct fb_reader *r, uint32_t pos);
uint32_t fb_rd32(const struct fb_reader *r, uint32_t pos);
uint64_t fb_rd64(const struct fb_reader *r, uint32_t pos);

#endif
