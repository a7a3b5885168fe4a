/*
 * `dlasim info`: a ConfigROM reader, as a driver would be.  It reads the
 * ROM only through dlasim_csb_read(), from CSB address 0: the hardware
 * version word, then the descriptor list (DESC = payload length << 16 |
 * unit id) up to the END_OF_LIST word 0, and prints each sub-unit decoded.
 *
 * ref: spec 004 "Sub-unit identifier table", "Descriptors and payloads of
 *      sub-units in ConfigROM", "Supported data types", "Supported packed /
 *      semi-planar image formats"; hw_small spec/manual/NVDLA_CFGROM.rdl.
 *
 * Stepping over a unit: the RDL's images declare fewer payload bytes than
 * some units occupy (*_RDMA declare 0xe and occupy 0x10, SDP declares 0x20
 * and occupies 0x24), so the reader knows each known unit's layout and
 * advances by the larger of that layout and the declared length (rounded
 * up to whole words); unknown units are skipped by their declared length
 * and dumped raw.  CIF BASE_BURST_LENGTH_MAX / BASE_MEM_ADDR_WIDTH are
 * fields [31:5] (RDL; the RTL ROM returns 0x80 for a burst of 4).
 */
#include "info.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#define ROM_BYTES 0x1000u
#define MAX_FIELDS 16

enum field_kind {
    FK_INCOMPAT, /* incompatible capabilities: any bit = cannot be used */
    FK_CAPS,     /* compatible capabilities, names per unit */
    FK_TYPES,    /* data type mask */
    FK_COUNT,    /* plain number */
    FK_BYTES,    /* byte count */
    FK_ENTRIES,  /* CBUF entries per bank */
    FK_CYCLES,   /* latency */
    FK_BURST,    /* field [31:5] */
    FK_ADDRW,    /* field [31:5], bits */
    FK_SLOT,     /* slot id of a related unit */
    FK_BATCH,    /* maximum batch, 0 = none */
    FK_PACKED,   /* packed image formats */
    FK_SEMI,     /* semi-planar image formats */
    FK_TPUT      /* elements per cycle, 0 = stage absent */
};

struct field {
    const char *label;
    enum field_kind kind;
};

struct unit_layout {
    uint16_t id;
    const char *name;
    const char *const *caps; /* 32 names (NULL = unnamed bit) or NULL */
    unsigned nfields;
    struct field fields[MAX_FIELDS];
};

static const char *const conv_caps[32] = {
    "WINOGRAD", "MULTI_BATCH", "FEATURE_COMPRESSION", "WEIGHT_COMPRESSION", "IMAGE_IN",
};
static const char *const cacc_caps[32] = { "WINOGRAD", "MULTI_BATCH" };
static const char *const sdp_caps[32] = { "WINOGRAD", "MULTI_BATCH", "LUT", "BS", "BN", "EW" };
static const char *const cif_caps[32] = { "CIF_IS_SRAM" };

#define INCOMPAT { "incompatible caps", FK_INCOMPAT }
#define COMPAT { "capabilities", FK_CAPS }

/* Payload layouts, one 32-bit word per field (RDL order). */
static const struct unit_layout layouts[] = {
    { 0x1, "GLB", NULL, 0, { { NULL, FK_COUNT } } },
    { 0x2, "CIF", cif_caps, 6,
      { INCOMPAT, COMPAT, { "data width", FK_BYTES }, { "read latency", FK_CYCLES },
        { "max burst length", FK_BURST }, { "address width", FK_ADDRW } } },
    { 0x3, "CDMA", conv_caps, 13,
      { INCOMPAT, COMPAT, { "feature types", FK_TYPES }, { "weight types", FK_TYPES },
        { "Atomic-C", FK_COUNT }, { "Atomic-K", FK_COUNT }, { "Atomic-M", FK_COUNT },
        { "CBUF banks", FK_COUNT }, { "CBUF bank width", FK_BYTES },
        { "CBUF bank depth", FK_ENTRIES }, { "max batch", FK_BATCH },
        { "image formats packed", FK_PACKED }, { "image formats semi", FK_SEMI } } },
    { 0x4, "CBUF", NULL, 6,
      { INCOMPAT, COMPAT, { "banks", FK_COUNT }, { "bank width", FK_BYTES },
        { "bank depth", FK_ENTRIES }, { "CDMA slot", FK_SLOT } } },
    { 0x5, "CSC", conv_caps, 12,
      { INCOMPAT, COMPAT, { "feature types", FK_TYPES }, { "weight types", FK_TYPES },
        { "Atomic-C", FK_COUNT }, { "Atomic-K", FK_COUNT }, { "Atomic-M", FK_COUNT },
        { "CBUF banks", FK_COUNT }, { "CBUF bank width", FK_BYTES },
        { "CBUF bank depth", FK_ENTRIES }, { "CDMA slot", FK_SLOT },
        { "max batch", FK_BATCH } } },
    { 0x6, "CMAC", conv_caps, 7,
      { INCOMPAT, COMPAT, { "feature types", FK_TYPES }, { "weight types", FK_TYPES },
        { "Atomic-C", FK_COUNT }, { "Atomic-K", FK_COUNT }, { "CDMA slot", FK_SLOT } } },
    /* spec 004: CACC BASE_ATOMIC_C holds atomic_k, BASE_ATOMIC_K atomic_m */
    { 0x7, "CACC", cacc_caps, 8,
      { INCOMPAT, COMPAT, { "feature types", FK_TYPES }, { "weight types", FK_TYPES },
        { "Atomic-K", FK_COUNT }, { "Atomic-M", FK_COUNT }, { "CDMA slot", FK_SLOT },
        { "max batch", FK_BATCH } } },
    { 0x8, "SDP_RDMA", NULL, 4,
      { INCOMPAT, COMPAT, { "Atomic-M", FK_COUNT }, { "SDP slot", FK_SLOT } } },
    { 0x9, "SDP", sdp_caps, 9,
      { INCOMPAT, COMPAT, { "feature types", FK_TYPES }, { "weight types", FK_TYPES },
        { "CDMA slot", FK_SLOT }, { "max batch", FK_BATCH }, { "BS throughput", FK_TPUT },
        { "BN throughput", FK_TPUT }, { "EW throughput", FK_TPUT } } },
    { 0xa, "PDP_RDMA", NULL, 4,
      { INCOMPAT, COMPAT, { "Atomic-M", FK_COUNT }, { "PDP slot", FK_SLOT } } },
    { 0xb, "PDP", NULL, 4,
      { INCOMPAT, COMPAT, { "feature types", FK_TYPES }, { "throughput", FK_TPUT } } },
    { 0xc, "CDP_RDMA", NULL, 4,
      { INCOMPAT, COMPAT, { "Atomic-M", FK_COUNT }, { "CDP slot", FK_SLOT } } },
    { 0xd, "CDP", NULL, 4,
      { INCOMPAT, COMPAT, { "feature types", FK_TYPES }, { "throughput", FK_TPUT } } },
    { 0xe, "BDMA", NULL, 1, { INCOMPAT } },
    { 0xf, "RUBIK", NULL, 1, { INCOMPAT } },
};

#define N_LAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

/* Data type bits as src/plan/config.h encodes them (INT8 = 0x10 as in the
 * ROM of every INT8 configuration). */
static const char *const type_bit_names[32] = {
    [0] = "BINARY", [1] = "INT4", [4] = "INT8", [5] = "INT16", [8] = "FP16",
};

/* spec 004 "Supported packed image formats" (CDMA PIXEL_FORMAT order). */
static const char *const packed_names[32] = {
    "R8", "R10", "R12", "R16", "R16_I", "R16_F", "A16B16G16R16", "X16B16G16R16",
    "A16B16G16R16_F", "A16Y16U16V16", "V16U16Y16A16", "A16Y16U16V16_F", "A8B8G8R8",
    "A8R8G8B8", "B8G8R8A8", "R8G8B8A8", "X8B8G8R8", "X8R8G8B8", "B8G8R8X8", "R8G8B8X8",
    "A2B10G10R10", "A2R10G10B10", "B10G10R10A2", "R10G10B10A2", "A2Y10U10V10",
    "V10U10Y10A2", "A8Y8U8V8", "V8U8Y8A8",
};

/* spec 004 "Supported semi-planar image formats". */
static const char *const semi_names[32] = {
    "Y8___U8V8_N444", "Y8___V8U8_N444", "Y10___U10V10_N444", "Y10___V10U10_N444",
    "Y12___U12V12_N444", "Y12___V12U12_N444", "Y16___U16V16_N444", "Y16___V16U16_N444",
};

/* What the walk learned, for the summary. */
struct summary {
    uint32_t atomic_c, atomic_k, atomic_m;
    uint32_t banks, bank_width, bank_depth;
    uint32_t sdp_caps;
    int have_sdp;
    unsigned n_units, n_cmac, n_cif;
    unsigned next_slot; /* CSB slot of the next unit with registers */
    char units[256];
};

static int rd(struct dlasim_dev *dev, uint32_t addr, uint32_t *v)
{
    return dlasim_csb_read(dev, addr, v);
}

static const struct unit_layout *find_layout(uint32_t id)
{
    for (size_t i = 0; i < N_LAYOUTS; i++) {
        if (layouts[i].id == id) {
            return &layouts[i];
        }
    }
    return NULL;
}

/* Names of the set bits of v ("INT8 FP16"), "none" for 0. */
static void print_bits(FILE *out, uint32_t v, const char *const names[32])
{
    int first = 1;
    if (v == 0) {
        fputs("none", out);
        return;
    }
    for (unsigned b = 0; b < 32; b++) {
        if (!(v & (1u << b))) {
            continue;
        }
        if (!first) {
            fputc(' ', out);
        }
        first = 0;
        if (names != NULL && names[b] != NULL) {
            fputs(names[b], out);
        } else {
            fprintf(out, "bit%u", b);
        }
    }
}

static void print_field(FILE *out, const struct unit_layout *u, const struct field *f,
                        uint32_t v)
{
    fprintf(out, "        %-21s ", f->label);
    switch (f->kind) {
    case FK_INCOMPAT:
        if (v == 0) {
            fputs("none", out);
        } else {
            fprintf(out, "0x%08" PRIx32 " (unknown: this unit cannot be used)", v);
        }
        break;
    case FK_CAPS:
        print_bits(out, v, u->caps);
        break;
    case FK_TYPES:
        print_bits(out, v, type_bit_names);
        fprintf(out, " (0x%" PRIx32 ")", v);
        break;
    case FK_BYTES:
        fprintf(out, "%" PRIu32 " B", v);
        break;
    case FK_ENTRIES:
        fprintf(out, "%" PRIu32 " entries", v);
        break;
    case FK_CYCLES:
        fprintf(out, "%" PRIu32 " cycles", v);
        break;
    case FK_BURST:
        fprintf(out, "%" PRIu32 " (word 0x%" PRIx32 ")", v >> 5, v);
        break;
    case FK_ADDRW:
        fprintf(out, "%" PRIu32 " bits (word 0x%" PRIx32 ")", v >> 5, v);
        break;
    case FK_SLOT:
        fprintf(out, "%" PRIu32, v);
        break;
    case FK_BATCH:
        if (v == 0) {
            fputs("none (single batch)", out);
        } else {
            fprintf(out, "%" PRIu32, v);
        }
        break;
    case FK_PACKED:
        fprintf(out, "0x%08" PRIx32 ": ", v);
        print_bits(out, v, packed_names);
        break;
    case FK_SEMI:
        fprintf(out, "0x%08" PRIx32 ": ", v);
        print_bits(out, v, semi_names);
        break;
    case FK_TPUT:
        if (v == 0) {
            fputs("0 (stage absent)", out);
        } else {
            fprintf(out, "%" PRIu32 " per cycle", v);
        }
        break;
    case FK_COUNT:
    default:
        fprintf(out, "%" PRIu32, v);
        break;
    }
    fputc('\n', out);
}

static void note_unit(struct summary *s, const char *name)
{
    size_t used = strlen(s->units);
    if (used + strlen(name) + 2 < sizeof(s->units)) {
        snprintf(s->units + used, sizeof(s->units) - used, "%s%s", used ? " " : "", name);
    }
    s->n_units++;
}

/* Remember the values the summary needs. */
static void learn(struct summary *s, const struct unit_layout *u, unsigned idx, uint32_t v)
{
    if (u->id == 0x3) { /* CDMA */
        switch (idx) {
        case 4: s->atomic_c = v; break;
        case 5: s->atomic_k = v; break;
        case 6: s->atomic_m = v; break;
        default: break;
        }
    } else if (u->id == 0x4) { /* CBUF */
        switch (idx) {
        case 2: s->banks = v; break;
        case 3: s->bank_width = v; break;
        case 4: s->bank_depth = v; break;
        default: break;
        }
    } else if (u->id == 0x9 && idx == 1) { /* SDP capabilities */
        s->sdp_caps = v;
        s->have_sdp = 1;
    }
}

/* Display name: CMAC_A/CMAC_B by order, MCIF/SRAMIF from CIF_IS_SRAM. */
static void unit_display_name(char *buf, size_t len, const struct unit_layout *u,
                              const struct summary *s, uint32_t first_payload_word2)
{
    if (u == NULL) {
        snprintf(buf, len, "unknown");
    } else if (u->id == 0x6) {
        snprintf(buf, len, "CMAC_%c", s->n_cmac == 0 ? 'A' : 'B');
    } else if (u->id == 0x2) {
        snprintf(buf, len, "CIF/%s", (first_payload_word2 & 1u) ? "SRAMIF" : "MCIF");
    } else {
        snprintf(buf, len, "%s", u->name);
    }
}

static void print_summary(FILE *out, const struct summary *s)
{
    uint64_t cbuf = (uint64_t)s->banks * s->bank_width * s->bank_depth;
    fprintf(out, "summary\n");
    fprintf(out, "    units (%u): %s\n", s->n_units, s->units);
    fprintf(out, "    MAC array: Atomic-C %" PRIu32 " x Atomic-K %" PRIu32 " = %" PRIu64
                 " multipliers; memory atom %" PRIu32 " elements\n",
            s->atomic_c, s->atomic_k, (uint64_t)s->atomic_c * s->atomic_k, s->atomic_m);
    fprintf(out, "    CBUF: %" PRIu32 " banks x %" PRIu32 " entries x %" PRIu32 " B = %" PRIu64
                 " KiB\n",
            s->banks, s->bank_depth, s->bank_width, cbuf / 1024u);
    if (s->have_sdp) {
        fputs("    SDP stages: ", out);
        print_bits(out, s->sdp_caps & 0x3cu, sdp_caps);
        fputc('\n', out);
    }
    fprintf(out, "    memory interfaces: %u\n", s->n_cif);
}

int dlasim_cmd_info(struct dlasim_dev *dev, FILE *out)
{
    struct summary s;
    uint32_t addr = 0;
    uint32_t v = 0;
    int rc;

    memset(&s, 0, sizeof(s));
    s.next_slot = 1;
    rc = rd(dev, 0, &v);
    if (rc < 0) {
        return rc;
    }
    fprintf(out, "ConfigROM (CSB 0x0000-0x0fff)\n");
    fprintf(out, "0x0000  HW_VERSION  0x%08" PRIx32 "\n", v);

    for (addr = 4; addr < ROM_BYTES;) {
        const struct unit_layout *u;
        uint32_t desc;
        uint32_t id, declared, occupied, layout_bytes, words[64];
        unsigned nwords;
        char name[32];

        rc = rd(dev, addr, &desc);
        if (rc < 0) {
            return rc;
        }
        id = desc & 0xffffu;
        declared = desc >> 16;
        if (id == 0) {
            fprintf(out, "0x%04" PRIx32 "  END_OF_LIST\n", addr);
            print_summary(out, &s);
            return DLASIM_OK;
        }
        u = find_layout(id);
        layout_bytes = u != NULL ? 4u * u->nfields : 0u;
        occupied = (declared + 3u) & ~3u;
        if (occupied < layout_bytes) {
            occupied = layout_bytes;
        }
        nwords = occupied / 4u;
        if (nwords > sizeof(words) / sizeof(words[0]) || addr + 4u + occupied > ROM_BYTES) {
            fprintf(out, "0x%04" PRIx32 "  descriptor 0x%08" PRIx32
                         ": payload runs past the ROM window\n",
                    addr, desc);
            return DLASIM_ERR_PARSE;
        }
        for (unsigned i = 0; i < nwords; i++) {
            rc = rd(dev, addr + 4u + 4u * i, &words[i]);
            if (rc < 0) {
                return rc;
            }
        }
        unit_display_name(name, sizeof(name), u, &s, nwords > 1 ? words[1] : 0);
        fprintf(out, "0x%04" PRIx32 "  %-12s unit id 0x%04" PRIx32, addr, name, id);
        /* Slots count the units with registers from GLB = 1; CBUF has none. */
        if (id != 0x4) {
            fprintf(out, ", slot %u", s.next_slot++);
        }
        fprintf(out, ", payload %" PRIu32 " B", occupied);
        if (occupied != declared) {
            fprintf(out, " (descriptor declares %" PRIu32 ")", declared);
        }
        fputc('\n', out);
        for (unsigned i = 0; i < nwords; i++) {
            if (u != NULL && i < u->nfields) {
                print_field(out, u, &u->fields[i], words[i]);
                learn(&s, u, i, words[i]);
            } else {
                fprintf(out, "        +0x%02x                 0x%08" PRIx32 "\n", 4u + 4u * i,
                        words[i]);
            }
        }
        note_unit(&s, name);
        if (u != NULL && u->id == 0x6) {
            s.n_cmac++;
        }
        if (u != NULL && u->id == 0x2) {
            s.n_cif++;
        }
        addr += 4u + occupied;
    }
    fprintf(out, "no END_OF_LIST before the end of the ROM window\n");
    return DLASIM_ERR_PARSE;
}
