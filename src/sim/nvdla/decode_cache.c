/*
 * Engines' decoded-configuration cache (decode_cache.h).
 */
#include "sim/nvdla/decode_cache.h"

#include <stdlib.h>
#include <string.h>

#include "regs/regdb.h"

/* Software-written registers only: status, counters and the LUT/pointer/
 * OP_ENABLE ports are not configuration (hardware updates the counters
 * after every layer, which would make every key differ). */
static void add_unit(struct dla_dcache *c, enum nvdla_unit u, uint8_t of_linked)
{
    const struct nvdla_unit_desc *ud = &nvdla_db.units[u];
    for (unsigned i = 0; i < ud->n_regs; i++) {
        const struct nvdla_reg_desc *r = &nvdla_db.regs[ud->first_reg + i];
        if (r->kind == NVDLA_KIND_PLAIN && r->write_mask != 0) {
            if (c->n_regs == DLA_DCACHE_MAX_REGS) {
                c->ready = 0;
                return;
            }
            c->addr[c->n_regs] = r->addr;
            c->of_linked[c->n_regs] = of_linked;
            c->n_regs++;
        }
    }
}

void dla_dcache_init(struct dla_dcache *c, enum nvdla_unit unit, enum nvdla_unit linked)
{
    memset(c, 0, sizeof(*c));
    c->unit = unit;
    c->linked = linked;
    c->ready = 1;
    add_unit(c, unit, 0);
    if (linked != NVDLA_UNIT_COUNT) {
        add_unit(c, linked, 1);
    }
}

void dla_dcache_free(struct dla_dcache *c)
{
    for (unsigned i = 0; i < DLA_DCACHE_WAYS; i++) {
        free(c->cfg[i]);
        c->cfg[i] = NULL;
    }
    c->used = c->next = 0;
}

const void *dla_dcache_find(struct dla_dcache *c, const struct dla_dev *d, unsigned group)
{
    uint32_t *k = c->key[DLA_DCACHE_WAYS];
    if (!c->ready) {
        c->misses++;
        return NULL;
    }
    const unsigned lg = c->linked != NVDLA_UNIT_COUNT ? dla_consumer(d, c->linked) : 0;
    k[0] = group | (lg << 8);
    for (unsigned i = 0; i < c->n_regs; i++) {
        k[1 + i] = dla_reg(d, c->addr[i], c->of_linked[i] ? lg : group);
    }
    const size_t bytes = (1 + (size_t)c->n_regs) * sizeof(uint32_t);
    for (unsigned w = 0; w < c->used; w++) {
        if (memcmp(c->key[w], k, bytes) == 0) {
            c->hits++;
            return c->cfg[w];
        }
    }
    c->misses++;
    return NULL;
}

int dla_dcache_keep(struct dla_dcache *c, void *cfg)
{
    unsigned w = c->next;
    if (!c->ready) {
        return 0;
    }
    free(c->cfg[w]);
    c->cfg[w] = cfg;
    memcpy(c->key[w], c->key[DLA_DCACHE_WAYS], (1 + (size_t)c->n_regs) * sizeof(uint32_t));
    c->next = (w + 1) % DLA_DCACHE_WAYS;
    if (c->used < DLA_DCACHE_WAYS) {
        c->used++;
    }
    return 1;
}
