/*
 * Register database lookups over the generated tables
 * (src/regs/gen/nvdla_regs_table.c, from regdb/nvdla.xml).
 *
 * Names are matched exactly (case-sensitive), as they appear in NVDLA's
 * trace files: "NVDLA_PDP.D_OP_ENABLE_0", "PDP.D_OP_ENABLE_0" or the C macro
 * spelling "NVDLA_PDP_D_OP_ENABLE_0".  A unit is known by its name or its
 * alias (RUBIK / RBK).  No allocation, no mutable state.
 */
#include <string.h>

#include "regs/regdb.h"

static const char nvdla_prefix[] = "NVDLA_";
#define NVDLA_PREFIX_LEN (sizeof(nvdla_prefix) - 1)

/* Does [s, s+len) spell exactly the C string word? */
static int span_equals(const char *s, size_t len, const char *word)
{
    return word != NULL && strlen(word) == len && memcmp(s, word, len) == 0;
}

int nvdla_unit_by_name(const char *name, size_t len)
{
    if (name == NULL) {
        return -1;
    }
    for (int u = 0; u < (int)NVDLA_UNIT_COUNT; u++) {
        if (span_equals(name, len, nvdla_units[u].name) ||
            span_equals(name, len, nvdla_units[u].alias)) {
            return u;
        }
    }
    return -1;
}

const struct nvdla_reg_desc *nvdla_reg_by_addr(uint32_t addr)
{
    uint32_t unit = addr >> 12;
    if (unit >= (uint32_t)NVDLA_UNIT_COUNT) {
        return NULL;
    }
    /* Registers of a unit are sorted by address: binary search. */
    size_t lo = nvdla_units[unit].first_reg;
    size_t hi = lo + nvdla_units[unit].n_regs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (nvdla_regs[mid].addr == addr) {
            return &nvdla_regs[mid];
        }
        if (nvdla_regs[mid].addr < addr) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

/* Register of unit u whose name is exactly reg (NUL-terminated). */
static const struct nvdla_reg_desc *reg_in_unit(int u, const char *reg)
{
    const struct nvdla_unit_desc *ud = &nvdla_units[u];
    for (unsigned i = 0; i < ud->n_regs; i++) {
        const struct nvdla_reg_desc *r = &nvdla_regs[ud->first_reg + i];
        if (strcmp(r->name, reg) == 0) {
            return r;
        }
    }
    return NULL;
}

/* "UNIT_REG" with no separator other than '_': try every unit spelling that
 * prefixes the name (SDP and SDP_RDMA both prefix "SDP_RDMA_D_..."). */
static const struct nvdla_reg_desc *reg_by_c_name(const char *s)
{
    for (int u = 0; u < (int)NVDLA_UNIT_COUNT; u++) {
        const char *spell[2] = { nvdla_units[u].name, nvdla_units[u].alias };
        for (int k = 0; k < 2; k++) {
            if (spell[k] == NULL) {
                continue;
            }
            size_t n = strlen(spell[k]);
            if (strncmp(s, spell[k], n) == 0 && s[n] == '_') {
                const struct nvdla_reg_desc *r = reg_in_unit(u, s + n + 1);
                if (r != NULL) {
                    return r;
                }
            }
        }
    }
    return NULL;
}

const struct nvdla_reg_desc *nvdla_reg_by_name(const char *name)
{
    if (name == NULL) {
        return NULL;
    }
    const char *s = name;
    if (strncmp(s, nvdla_prefix, NVDLA_PREFIX_LEN) == 0) {
        s += NVDLA_PREFIX_LEN;
    }
    const char *dot = strchr(s, '.');
    if (dot == NULL) {
        return reg_by_c_name(s);
    }
    int u = nvdla_unit_by_name(s, (size_t)(dot - s));
    if (u < 0) {
        return NULL;
    }
    return reg_in_unit(u, dot + 1);
}

const struct nvdla_field_desc *nvdla_field_by_name(const struct nvdla_reg_desc *r,
                                                   const char *name)
{
    if (r == NULL || name == NULL) {
        return NULL;
    }
    for (unsigned i = 0; i < r->n_fields; i++) {
        const struct nvdla_field_desc *f = &nvdla_fields[r->first_field + i];
        if (strcmp(f->name, name) == 0) {
            return f;
        }
    }
    return NULL;
}
