/*
 * Register database lookups over the generated tables (src/regs/gen/<name>_regs_table.c,
 * from regdb/<name>.xml).  Every lookup takes the database; the nvdla_*
 * functions are the NVDLA database's spellings of the same.
 *
 * NVDLA names are matched exactly (case-sensitive), as they appear in NVDLA's
 * trace files: "NVDLA_PDP.D_OP_ENABLE_0", "PDP.D_OP_ENABLE_0" or the C macro
 * spelling "NVDLA_PDP_D_OP_ENABLE_0".  A unit is known by its name or its
 * alias (RUBIK / RBK).  The RK3588 database is spelled as the TRM and the
 * spec files do, in any case: "RKNN_ppu_s_pointer", "RKNN_dpu_rdma_weight"
 * (also "RKNN_PPU.S_POINTER").  No allocation, no mutable state.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "regs/regdb.h"

/* Does [s, s+len) spell the C string word (in any case if `fold`)? */
static int span_equals(const char *s, size_t len, const char *word, int fold)
{
    if (word == NULL || strlen(word) != len) {
        return 0;
    }
    return fold ? strncasecmp(s, word, len) == 0 : memcmp(s, word, len) == 0;
}

static int name_equals(const struct regdb *db, const char *a, const char *b)
{
    return db->names_any_case ? strcasecmp(a, b) == 0 : strcmp(a, b) == 0;
}

static int prefix_equals(const struct regdb *db, const char *s, const char *prefix, size_t n)
{
    return db->names_any_case ? strncasecmp(s, prefix, n) == 0 : strncmp(s, prefix, n) == 0;
}

int regdb_unit_by_name(const struct regdb *db, const char *name, size_t len)
{
    if (name == NULL) {
        return -1;
    }
    for (int u = 0; u < (int)db->n_units; u++) {
        if (span_equals(name, len, db->units[u].name, db->names_any_case) ||
            span_equals(name, len, db->units[u].alias, db->names_any_case)) {
            return u;
        }
    }
    return -1;
}

const struct nvdla_reg_desc *regdb_reg_by_addr(const struct regdb *db, uint32_t addr)
{
    uint32_t window = addr >> 12;
    if (window >= db->n_windows || db->window_unit[window] < 0) {
        return NULL;
    }
    const struct nvdla_unit_desc *ud = &db->units[db->window_unit[window]];
    /* a table of the words each unit's registers span: one load, no search
     * (the firmware's prepared programming classifies every step it replays) */
    uint32_t word = (addr - ud->base) >> 2;
    if ((addr & 3u) || word >= ud->n_slots || db->word_reg[ud->first_slot + word] == 0xFFFFu) {
        return NULL;
    }
    return &db->regs[db->word_reg[ud->first_slot + word]];
}

/* Register of unit u whose name is exactly reg (NUL-terminated). */
static const struct nvdla_reg_desc *reg_in_unit(const struct regdb *db, int u, const char *reg)
{
    const struct nvdla_unit_desc *ud = &db->units[u];
    for (unsigned i = 0; i < ud->n_regs; i++) {
        const struct nvdla_reg_desc *r = &db->regs[ud->first_reg + i];
        if (name_equals(db, r->name, reg)) {
            return r;
        }
    }
    return NULL;
}

/* "UNIT_REG" with no separator other than '_': try every unit spelling that
 * prefixes the name (SDP and SDP_RDMA both prefix "SDP_RDMA_D_..."). */
static const struct nvdla_reg_desc *reg_by_c_name(const struct regdb *db, const char *s)
{
    for (int u = 0; u < (int)db->n_units; u++) {
        const char *spell[2] = { db->units[u].name, db->units[u].alias };
        for (int k = 0; k < 2; k++) {
            if (spell[k] == NULL) {
                continue;
            }
            size_t n = strlen(spell[k]);
            if (prefix_equals(db, s, spell[k], n) && s[n] == '_') {
                const struct nvdla_reg_desc *r = reg_in_unit(db, u, s + n + 1);
                if (r != NULL) {
                    return r;
                }
            }
        }
    }
    return NULL;
}

const struct nvdla_reg_desc *regdb_reg_by_name(const struct regdb *db, const char *name)
{
    if (name == NULL) {
        return NULL;
    }
    const char *s = name;
    size_t plen = strlen(db->trace_prefix);
    if (prefix_equals(db, s, db->trace_prefix, plen)) {
        s += plen;
    }
    const char *dot = strchr(s, '.');
    if (dot == NULL) {
        return reg_by_c_name(db, s);
    }
    int u = regdb_unit_by_name(db, s, (size_t)(dot - s));
    if (u < 0) {
        return NULL;
    }
    return reg_in_unit(db, u, dot + 1);
}

const struct nvdla_field_desc *regdb_field_by_name(const struct regdb *db,
                                                   const struct nvdla_reg_desc *r,
                                                   const char *name)
{
    if (r == NULL || name == NULL) {
        return NULL;
    }
    for (unsigned i = 0; i < r->n_fields; i++) {
        const struct nvdla_field_desc *f = &db->fields[r->first_field + i];
        if (name_equals(db, f->name, name)) {
            return f;
        }
    }
    return NULL;
}

const char *regdb_reg_name(const struct regdb *db, uint32_t addr, char *buf, size_t buflen)
{
    const struct nvdla_reg_desc *r = regdb_reg_by_addr(db, addr);
    if (r == NULL) {
        snprintf(buf, buflen, "0x%x", addr);
    } else if (db->names_any_case) {
        /* RKNN_dpu_rdma_s_pointer: the TRM's spelling */
        size_t n = (size_t)snprintf(buf, buflen, "%s%s_%s", db->trace_prefix,
                                    db->units[r->unit].name, r->name);
        size_t skip = strlen(db->trace_prefix);
        for (size_t i = skip; i < n && i < buflen; i++) {
            buf[i] = (char)(buf[i] >= 'A' && buf[i] <= 'Z' ? buf[i] - 'A' + 'a' : buf[i]);
        }
    } else {
        snprintf(buf, buflen, "%s%s.%s", db->trace_prefix, db->units[r->unit].name, r->name);
    }
    return buf;
}

/* ---- the NVDLA database ------------------------------------------------------ */

int nvdla_unit_by_name(const char *name, size_t len)
{
    return regdb_unit_by_name(&nvdla_db, name, len);
}

const struct nvdla_reg_desc *nvdla_reg_by_addr(uint32_t addr)
{
    return regdb_reg_by_addr(&nvdla_db, addr);
}

const struct nvdla_reg_desc *nvdla_reg_by_name(const char *name)
{
    return regdb_reg_by_name(&nvdla_db, name);
}

const struct nvdla_field_desc *nvdla_field_by_name(const struct nvdla_reg_desc *r,
                                                   const char *name)
{
    return regdb_field_by_name(&nvdla_db, r, name);
}
