/*
 * Hardware configurations: the scalability parameters of spec 004
 * ("Scalability parameters and ConfigROM", first table) as const data, one
 * table per named configuration, and a table mapping each spec name to its
 * member of struct dla_config so every parameter can be read and overridden
 * by name ("NVDLA_SDP_EW_ENABLE=1").
 *
 * Sources (facts):
 *   spec 004 first table          nv_small and nv_large columns
 *   spec 004 "Config nv_small_256" nv_small with Atomic-C 32, CBUF bank
 *                                 width 32 B and bank depth 128
 *   hw_small spec/defs/nv_small.spec, nv_small_256.spec, nv_large.spec
 *   hw_small/hw_master spec/defs/projects.spec  derived constraints
 *
 * Conventions:
 *   - A "-" in spec 004 (parameter absent from the configuration) is stored
 *     as 0 and may be written as "-", "x" or 0.
 *   - A throughput of 0 on an enabled stage means "not specified" and counts
 *     as 1, as projects.spec does for SDP_EW_THROUGHPUT_x (applied where
 *     the value is used, e.g. the ConfigROM).
 *   - Widths are in bytes ("64B" or 64), latencies in cycles, the address
 *     width in bits.
 *   - Where sources disagree (see the notes on nv_large below) the spec 004
 *     first table wins.
 *
 * No mutable global state: every table here is const.
 */
#include "plan/config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dlasim/dlasim.h"
#include "common/status.h"

/* ---- named configurations ------------------------------------------------ */

/* ref: spec 004 first table, nv_small column; spec/defs/nv_small.spec.
 * PRIMARY_MEMIF_MAX_BURST_LENGTH: spec 004 and the ConfigROM (RDL reset
 * value of CIF_BASE_BURST_LENGTH_MAX) say 4; nv_small.spec selects 1 with 4
 * commented out.  4 is used so the ConfigROM equals the RDL. */
static const struct dla_config cfg_nv_small = {
    .name = "nv_small",
    .feature_data_type = DLA_TYPE_INT8,
    .weight_data_type = DLA_TYPE_INT8,
    .weight_compression_enable = 0,
    .winograd_enable = 0,
    .batch_enable = 0,
    .max_batch_size = 0,
    .mac_atomic_c_size = 8,
    .mac_atomic_k_size = 8,
    .memory_atomic_size = 8,
    .cbuf_bank_number = 32,
    .cbuf_bank_width = 8,
    .cbuf_bank_depth = 512,
    .secondary_memif_enable = 0,
    .sdp_lut_enable = 0,
    .sdp_bs_enable = 1,
    .sdp_bn_enable = 1,
    .sdp_ew_enable = 0,
    .sdp_bs_throughput = 1,
    .sdp_bn_throughput = 1,
    .sdp_ew_throughput = 0,
    .bdma_enable = 0,
    .rubik_enable = 0,
    .pdp_enable = 1,
    .pdp_throughput = 1,
    .cdp_enable = 1,
    .cdp_throughput = 1,
    .primary_memif_max_burst_length = 4,
    .primary_memif_width = 8,
    .primary_memif_latency = 50,
    .secondary_memif_max_burst_length = 0,
    .secondary_memif_width = 0,
    .secondary_memif_latency = 0,
    .memif_address_width = 32,
};

/* ref: spec 004 "Config nv_small_256"; spec/defs/nv_small_256.spec (differs
 * from nv_small.spec only in MAC_ATOMIC_C_SIZE, CBUF_BANK_WIDTH/DEPTH). */
static const struct dla_config cfg_nv_small_256 = {
    .name = "nv_small_256",
    .feature_data_type = DLA_TYPE_INT8,
    .weight_data_type = DLA_TYPE_INT8,
    .weight_compression_enable = 0,
    .winograd_enable = 0,
    .batch_enable = 0,
    .max_batch_size = 0,
    .mac_atomic_c_size = 32,
    .mac_atomic_k_size = 8,
    .memory_atomic_size = 8,
    .cbuf_bank_number = 32,
    .cbuf_bank_width = 32,
    .cbuf_bank_depth = 128,
    .secondary_memif_enable = 0,
    .sdp_lut_enable = 0,
    .sdp_bs_enable = 1,
    .sdp_bn_enable = 1,
    .sdp_ew_enable = 0,
    .sdp_bs_throughput = 1,
    .sdp_bn_throughput = 1,
    .sdp_ew_throughput = 0,
    .bdma_enable = 0,
    .rubik_enable = 0,
    .pdp_enable = 1,
    .pdp_throughput = 1,
    .cdp_enable = 1,
    .cdp_throughput = 1,
    .primary_memif_max_burst_length = 4,
    .primary_memif_width = 8,
    .primary_memif_latency = 50,
    .secondary_memif_max_burst_length = 0,
    .secondary_memif_width = 0,
    .secondary_memif_latency = 0,
    .memif_address_width = 32,
};

/* ref: spec 004 first table, nv_large column; spec/defs/nv_large.spec.
 * PRIMARY_MEMIF_MAX_BURST_LENGTH: spec 004's table and nv_large.spec say 1;
 * spec 004's ConfigROM section shows 0x4 for the nv_large MCIF.  1 is used
 * (two sources against one). */
static const struct dla_config cfg_nv_large = {
    .name = "nv_large",
    .feature_data_type = DLA_TYPE_INT8,
    .weight_data_type = DLA_TYPE_INT8,
    .weight_compression_enable = 1,
    .winograd_enable = 1,
    .batch_enable = 1,
    .max_batch_size = 32,
    .mac_atomic_c_size = 64,
    .mac_atomic_k_size = 32,
    .memory_atomic_size = 32,
    .cbuf_bank_number = 16,
    .cbuf_bank_width = 64,
    .cbuf_bank_depth = 512,
    .secondary_memif_enable = 1,
    .sdp_lut_enable = 1,
    .sdp_bs_enable = 1,
    .sdp_bn_enable = 1,
    .sdp_ew_enable = 1,
    .sdp_bs_throughput = 16,
    .sdp_bn_throughput = 16,
    .sdp_ew_throughput = 4,
    .bdma_enable = 1,
    .rubik_enable = 1,
    .pdp_enable = 1,
    .pdp_throughput = 8,
    .cdp_enable = 1,
    .cdp_throughput = 8,
    .primary_memif_max_burst_length = 1,
    .primary_memif_width = 64,
    .primary_memif_latency = 1200,
    .secondary_memif_max_burst_length = 4,
    .secondary_memif_width = 64,
    .secondary_memif_latency = 128,
    .memif_address_width = 64,
};

static const struct dla_config *const named_configs[] = {
    &cfg_nv_small,
    &cfg_nv_small_256,
    &cfg_nv_large,
};

#define N_NAMED (sizeof(named_configs) / sizeof(named_configs[0]))

/* ---- parameter table ----------------------------------------------------- */

enum param_kind {
    PK_BOOL,  /* YES/NO/1/0 */
    PK_NUM,   /* plain count */
    PK_BYTES, /* byte size: 64, 64B, 0x40 */
    PK_TYPES  /* data type mask: INT8, INT8|FP16, 0x10 */
};

/* Per-parameter value rules (checked by dla_config_set and validate). */
#define PF_POW2 1u    /* nonzero values must be powers of two */
#define PF_ZERO_OK 2u /* 0 ("-") allowed: parameter absent */
#define PF_MIN_OR_MAX 4u /* only the two values min and max (32 or 64) */

struct param_desc {
    const char *name;   /* spec 004 name */
    size_t name_len;    /* strlen(name): look-ups compare lengths first */
    size_t offset;      /* member of struct dla_config */
    enum param_kind kind;
    unsigned flags;
    uint32_t min, max;  /* range of nonzero values */
    const char *why;    /* where the range comes from */
};

#define P(n, m, k, f, lo, hi, w) \
    { n, sizeof(n) - 1, offsetof(struct dla_config, m), k, f, lo, hi, w }

/* Ranges: projects.spec lists the values the RTL generator accepts and
 * takes log2() of every parameter marked PF_POW2; the ConfigROM field
 * widths bound the rest (spec 004: width 8 bits, latency 16 bits); the
 * CDMA/CSC D_BATCH_NUMBER.BATCHES field (5 bits, batches - 1) bounds the
 * batch size and D_BANK.DATA_BANK (5 bits, banks - 1) the bank count. */
static const struct param_desc params[] = {
    P("NVDLA_FEATURE_DATA_TYPE", feature_data_type, PK_TYPES, 0, 1, 0xffffffffu,
      "data types of input feature data"),
    P("NVDLA_WEIGHT_DATA_TYPE", weight_data_type, PK_TYPES, 0, 1, 0xffffffffu,
      "data types of weights"),
    P("NVDLA_WEIGHT_COMPRESSION_ENABLE", weight_compression_enable, PK_BOOL, PF_ZERO_OK, 1, 1,
      "weight compression"),
    P("NVDLA_WINOGRAD_ENABLE", winograd_enable, PK_BOOL, PF_ZERO_OK, 1, 1, "Winograd convolution"),
    P("NVDLA_MAC_ATOMIC_C_SIZE", mac_atomic_c_size, PK_NUM, PF_POW2, 8, 64,
      "Atomic-C: input channels per MAC operation"),
    P("NVDLA_MAC_ATOMIC_K_SIZE", mac_atomic_k_size, PK_NUM, PF_POW2, 8, 32,
      "Atomic-K: kernels per MAC operation"),
    P("NVDLA_MEMORY_ATOMIC_SIZE", memory_atomic_size, PK_NUM, PF_POW2, 8, 32,
      "Atomic-M: elements per memory atom"),
    P("NVDLA_BATCH_ENABLE", batch_enable, PK_BOOL, PF_ZERO_OK, 1, 1, "multi-batch"),
    P("NVDLA_MAX_BATCH_SIZE", max_batch_size, PK_NUM, PF_ZERO_OK, 1, 32,
      "maximum batch size (D_BATCH_NUMBER.BATCHES is 5 bits)"),
    P("NVDLA_CBUF_BANK_NUMBER", cbuf_bank_number, PK_NUM, PF_POW2, 2, 32,
      "CBUF banks (D_BANK.DATA_BANK is 5 bits)"),
    P("NVDLA_CBUF_BANK_WIDTH", cbuf_bank_width, PK_BYTES, PF_POW2, 8, 128,
      "bytes per CBUF entry"),
    P("NVDLA_CBUF_BANK_DEPTH", cbuf_bank_depth, PK_NUM, PF_POW2, 16, 8192,
      "entries per CBUF bank"),
    P("NVDLA_SECONDARY_MEMIF_ENABLE", secondary_memif_enable, PK_BOOL, PF_ZERO_OK, 1, 1,
      "secondary memory interface (SRAMIF/CVIF)"),
    P("NVDLA_SDP_LUT_ENABLE", sdp_lut_enable, PK_BOOL, PF_ZERO_OK, 1, 1, "SDP look-up table"),
    P("NVDLA_SDP_BS_ENABLE", sdp_bs_enable, PK_BOOL, PF_ZERO_OK, 1, 1, "SDP bias/scaling stage"),
    P("NVDLA_SDP_BN_ENABLE", sdp_bn_enable, PK_BOOL, PF_ZERO_OK, 1, 1,
      "SDP batch-normalization stage"),
    P("NVDLA_SDP_EW_ENABLE", sdp_ew_enable, PK_BOOL, PF_ZERO_OK, 1, 1, "SDP element-wise stage"),
    P("NVDLA_SDP_BS_THROUGHPUT", sdp_bs_throughput, PK_NUM, PF_POW2 | PF_ZERO_OK, 1, 16,
      "SDP BS elements per cycle"),
    P("NVDLA_SDP_BN_THROUGHPUT", sdp_bn_throughput, PK_NUM, PF_POW2 | PF_ZERO_OK, 1, 16,
      "SDP BN elements per cycle"),
    P("NVDLA_SDP_EW_THROUGHPUT", sdp_ew_throughput, PK_NUM, PF_POW2 | PF_ZERO_OK, 1, 16,
      "SDP EW elements per cycle"),
    P("NVDLA_BDMA_ENABLE", bdma_enable, PK_BOOL, PF_ZERO_OK, 1, 1, "bridge DMA engine"),
    P("NVDLA_RUBIK_ENABLE", rubik_enable, PK_BOOL, PF_ZERO_OK, 1, 1, "Rubik engine"),
    P("NVDLA_PDP_ENABLE", pdp_enable, PK_BOOL, PF_ZERO_OK, 1, 1, "PDP engine"),
    P("NVDLA_PDP_THROUGHPUT", pdp_throughput, PK_NUM, PF_POW2 | PF_ZERO_OK, 1, 8,
      "PDP elements per cycle"),
    P("NVDLA_CDP_ENABLE", cdp_enable, PK_BOOL, PF_ZERO_OK, 1, 1, "CDP engine"),
    P("NVDLA_CDP_THROUGHPUT", cdp_throughput, PK_NUM, PF_POW2 | PF_ZERO_OK, 1, 8,
      "CDP elements per cycle"),
    P("NVDLA_PRIMARY_MEMIF_MAX_BURST_LENGTH", primary_memif_max_burst_length, PK_NUM, PF_POW2,
      1, 128, "primary memory interface maximum burst length"),
    P("NVDLA_PRIMARY_MEMIF_WIDTH", primary_memif_width, PK_BYTES, PF_POW2, 8, 128,
      "primary memory interface data width (ConfigROM field is 8 bits)"),
    P("NVDLA_PRIMARY_MEMIF_LATENCY", primary_memif_latency, PK_NUM, 0, 1, 65535,
      "primary memory read latency in cycles (ConfigROM field is 16 bits)"),
    P("NVDLA_SECONDARY_MEMIF_MAX_BURST_LENGTH", secondary_memif_max_burst_length, PK_NUM,
      PF_POW2 | PF_ZERO_OK, 1, 128, "secondary memory interface maximum burst length"),
    P("NVDLA_SECONDARY_MEMIF_WIDTH", secondary_memif_width, PK_BYTES, PF_POW2 | PF_ZERO_OK, 8,
      128, "secondary memory interface data width (ConfigROM field is 8 bits)"),
    P("NVDLA_SECONDARY_MEMIF_LATENCY", secondary_memif_latency, PK_NUM, PF_ZERO_OK, 1, 65535,
      "secondary memory read latency in cycles (ConfigROM field is 16 bits)"),
    P("NVDLA_MEMIF_ADDRESS_WIDTH", memif_address_width, PK_NUM, PF_MIN_OR_MAX, 32, 64,
      "external memory address width in bits (32 or 64)"),
};

#undef P

#define N_PARAMS (sizeof(params) / sizeof(params[0]))

/* Data type names of enum dla_data_type_bit (spec 004 "Supported data
 * types"; the bit positions are those of config.h, which match the ROM's
 * 0x10 for INT8). */
struct type_name {
    const char *name;
    uint32_t bit;
};

static const struct type_name type_names[] = {
    { "BINARY", DLA_TYPE_BINARY },
    { "INT4", DLA_TYPE_INT4 },
    { "INT8", DLA_TYPE_INT8 },
    { "INT16", DLA_TYPE_INT16 },
    { "FP16", DLA_TYPE_FP16 },
};

#define N_TYPES (sizeof(type_names) / sizeof(type_names[0]))
#define KNOWN_TYPE_BITS \
    (DLA_TYPE_BINARY | DLA_TYPE_INT4 | DLA_TYPE_INT8 | DLA_TYPE_INT16 | DLA_TYPE_FP16)

/* Spec 004 names data types the model has no encoding for. */
static const char *const unsupported_type_names[] = {
    "UINT4", "UINT8", "UINT16", "INT32", "UINT32", "FP32", "FP64",
};

/* ---- small helpers ------------------------------------------------------- */

static void clear_err(char *err, size_t errlen)
{
    if (err != NULL && errlen > 0) {
        err[0] = '\0';
    }
}

static int is_pow2(uint32_t v)
{
    return v != 0 && (v & (v - 1u)) == 0;
}

static uint32_t *member(struct dla_config *c, const struct param_desc *p)
{
    return (uint32_t *)(void *)((char *)c + p->offset);
}

static uint32_t member_value(const struct dla_config *c, const struct param_desc *p)
{
    return *(const uint32_t *)(const void *)((const char *)c + p->offset);
}

/* spec[0, len) equals s[0, len) ignoring ASCII case (strncasecmp in the C
 * locale, inline: the runtime looks up a few parameters per inference). */
static int same_chars(const char *spec, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char a = (unsigned char)spec[i], b = (unsigned char)s[i];
        a = (unsigned char)(a >= 'A' && a <= 'Z' ? a + ('a' - 'A') : a);
        b = (unsigned char)(b >= 'A' && b <= 'Z' ? b + ('a' - 'A') : b);
        if (a != b) {
            return 0;
        }
    }
    return 1;
}

/* Case-insensitive match of a name of spec_len characters with s (len
 * characters), the "NVDLA_" prefix being optional on `s`. */
static int name_matches_len(const char *spec_name, size_t spec_len, const char *s, size_t len)
{
    if (spec_len == len && same_chars(spec_name, s, len)) {
        return 1;
    }
    return spec_len >= 6 && spec_len - 6 == len && same_chars(spec_name + 6, s, len);
}

static int name_matches(const char *spec_name, const char *s, size_t len)
{
    return name_matches_len(spec_name, strlen(spec_name), s, len);
}

static const struct param_desc *find_param(const char *s, size_t len)
{
    for (size_t i = 0; i < N_PARAMS; i++) {
        if (name_matches_len(params[i].name, params[i].name_len, s, len)) {
            return &params[i];
        }
    }
    return NULL;
}

/* "NVDLA_FEATURE_DATA_TYPE_INT8" style per-type names (spec 004 writes the
 * data type parameters as NVDLA_FEATURE_DATA_TYPE_BINARY/INT4/INT8/...):
 * returns the type-mask parameter and the bit, or NULL. */
static const struct param_desc *find_type_alias(const char *s, size_t len, uint32_t *bit)
{
    for (size_t i = 0; i < N_PARAMS; i++) {
        const struct param_desc *p = &params[i];
        if (p->kind != PK_TYPES) {
            continue;
        }
        for (size_t t = 0; t < N_TYPES; t++) {
            char full[64];
            snprintf(full, sizeof(full), "%s_%s", p->name, type_names[t].name);
            if (name_matches(full, s, len)) {
                *bit = type_names[t].bit;
                return p;
            }
        }
    }
    return NULL;
}

/* Comma-separated list of every parameter name (for error messages). */
static void list_params(char *buf, size_t buflen)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_PARAMS && used < buflen; i++) {
        int n = snprintf(buf + used, buflen - used, "%s%s", i ? ", " : "", params[i].name);
        if (n < 0) {
            break;
        }
        used += (size_t)n;
    }
}

/* Copy [s, s+len) trimmed of surrounding blanks into buf. */
static void trim_copy(char *buf, size_t buflen, const char *s, size_t len)
{
    while (len > 0 && isspace((unsigned char)s[0])) {
        s++;
        len--;
    }
    while (len > 0 && isspace((unsigned char)s[len - 1])) {
        len--;
    }
    if (len >= buflen) {
        len = buflen - 1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
}

/* ---- value parsing ------------------------------------------------------- */

static int parse_u32(const char *s, uint32_t *out)
{
    char *end = NULL;
    unsigned long long v;
    if (s[0] == '\0' || s[0] == '-' || s[0] == '+') {
        return -1;
    }
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0' || v > 0xffffffffull) {
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static int parse_bool(const char *s, uint32_t *out)
{
    static const char *const yes[] = { "YES", "1", "TRUE", "ON", "ENABLE", "ENABLED" };
    static const char *const no[] = { "NO", "0", "FALSE", "OFF", "DISABLE", "DISABLED", "-" };
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
    }
    uint32_t v = 0;
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    /* numeric spellings of 0 and 1 ("0x1") */
    if (parse_u32(s, &v) == 0 && v <= 1) {
        *out = v;
        return 0;
    }
    return -1;
}

/* "-" and "x" mean "absent" (spec 004 tables, spec/defs *_x). */
static int is_absent(const char *s)
{
    return strcmp(s, "-") == 0 || strcasecmp(s, "x") == 0;
}

static int parse_bytes(const char *s, uint32_t *out)
{
    char num[32];
    size_t len = strlen(s);
    if (len > 0 && (s[len - 1] == 'B' || s[len - 1] == 'b')) {
        len--;
    }
    if (len == 0 || len >= sizeof(num)) {
        return -1;
    }
    memcpy(num, s, len);
    num[len] = '\0';
    return parse_u32(num, out);
}

static int parse_one_type(const char *tok, uint32_t *bit, char *err, size_t errlen,
                          const char *pname)
{
    for (size_t t = 0; t < N_TYPES; t++) {
        if (strcasecmp(tok, type_names[t].name) == 0) {
            *bit = type_names[t].bit;
            return 0;
        }
    }
    for (size_t t = 0; t < sizeof(unsupported_type_names) / sizeof(unsupported_type_names[0]);
         t++) {
        if (strcasecmp(tok, unsupported_type_names[t]) == 0) {
            return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                        "%s: data type '%s' has no encoding in this model "
                        "(supported: BINARY, INT4, INT8, INT16, FP16)",
                        pname, tok);
        }
    }
    return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                "%s: unknown data type '%s' (known: BINARY, INT4, INT8, INT16, FP16)", pname,
                tok);
}

/* "INT8", "INT8|FP16", "INT8,INT16", "INT8+FP16", or a bit mask "0x10". */
static int parse_types(const char *s, uint32_t *out, char *err, size_t errlen, const char *pname)
{
    uint32_t mask = 0;
    const char *p = s;
    if (isdigit((unsigned char)s[0])) {
        if (parse_u32(s, &mask) != 0) {
            return dla_errf(err, errlen, DLASIM_ERR_INVAL, "%s=%s: not a number or data type list",
                        pname, s);
        }
        if ((mask & ~(uint32_t)KNOWN_TYPE_BITS) != 0) {
            return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                        "%s=%s: bits 0x%" PRIx32 " name no data type of this model "
                        "(BINARY=0x1, INT4=0x2, INT8=0x10, INT16=0x20, FP16=0x100)",
                        pname, s, mask & ~(uint32_t)KNOWN_TYPE_BITS);
        }
        *out = mask;
        return 0;
    }
    while (*p != '\0') {
        char tok[32];
        size_t n = strcspn(p, "|,+/ ");
        uint32_t bit = 0;
        int rc;
        trim_copy(tok, sizeof(tok), p, n);
        if (tok[0] != '\0') {
            rc = parse_one_type(tok, &bit, err, errlen, pname);
            if (rc != 0) {
                return rc;
            }
            mask |= bit;
        }
        p += n;
        if (*p != '\0') {
            p++;
        }
    }
    *out = mask;
    return 0;
}

/* ---- per-parameter rule -------------------------------------------------- */

static int check_param_value(const struct param_desc *p, uint32_t v, char *err, size_t errlen)
{
    if (p->kind == PK_TYPES) {
        if (v == 0) {
            return dla_errf(err, errlen, DLASIM_ERR_INVAL, "%s: at least one data type is needed",
                        p->name);
        }
        if ((v & ~(uint32_t)KNOWN_TYPE_BITS) != 0) {
            return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                        "%s=0x%" PRIx32 ": bits 0x%" PRIx32 " name no data type of this model",
                        p->name, v, v & ~(uint32_t)KNOWN_TYPE_BITS);
        }
        return 0;
    }
    if (v == 0) {
        if (p->flags & PF_ZERO_OK) {
            return 0;
        }
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "%s=0: must be at least %" PRIu32 " (%s)",
                    p->name, p->min, p->why);
    }
    if ((p->flags & PF_MIN_OR_MAX) && v != p->min && v != p->max) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                    "%s=%" PRIu32 ": must be %" PRIu32 " or %" PRIu32 " (%s)", p->name, v, p->min,
                    p->max, p->why);
    }
    if ((p->flags & PF_POW2) && !is_pow2(v)) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "%s=%" PRIu32 ": not a power of two (%s)",
                    p->name, v, p->why);
    }
    if (v < p->min || v > p->max) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                    "%s=%" PRIu32 ": out of range %" PRIu32 "..%" PRIu32 " (%s)", p->name, v,
                    p->min, p->max, p->why);
    }
    return 0;
}

static int parse_value(const struct param_desc *p, const char *val, uint32_t *out, char *err,
                       size_t errlen)
{
    int ok;
    switch (p->kind) {
    case PK_BOOL:
        ok = parse_bool(val, out) == 0;
        if (!ok) {
            return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                        "%s=%s: not a yes/no value (use YES, NO, 1 or 0)", p->name, val);
        }
        return 0;
    case PK_TYPES:
        return parse_types(val, out, err, errlen, p->name);
    case PK_BYTES:
        if (is_absent(val)) {
            *out = 0;
            return 0;
        }
        if (parse_bytes(val, out) != 0) {
            return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                        "%s=%s: not a byte size (e.g. 64, 64B or 0x40)", p->name, val);
        }
        return 0;
    case PK_NUM:
    default:
        if (is_absent(val)) {
            *out = 0;
            return 0;
        }
        if (parse_u32(val, out) != 0) {
            return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                        "%s=%s: not a number (decimal or 0x hexadecimal)", p->name, val);
        }
        return 0;
    }
}

/* ---- public functions ---------------------------------------------------- */

int dla_config_init(struct dla_config *c, const char *name, char *err, size_t errlen)
{
    if (c == NULL) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "no configuration to fill");
    }
    if (name == NULL) {
        name = "nv_small";
    }
    for (size_t i = 0; i < N_NAMED; i++) {
        if (strcmp(named_configs[i]->name, name) == 0) {
            *c = *named_configs[i];
            clear_err(err, errlen);
            return DLASIM_OK;
        }
    }
    return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                "unknown configuration '%s' (known: nv_small, nv_small_256, nv_large)", name);
}

int dla_config_set(struct dla_config *c, const char *assignment, char *err, size_t errlen)
{
    char name[96];
    char val[96];
    const char *eq;
    const struct param_desc *p;
    uint32_t v = 0;
    uint32_t alias_bit = 0;
    int rc;

    if (c == NULL || assignment == NULL) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "no configuration or assignment");
    }
    eq = strchr(assignment, '=');
    if (eq == NULL) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                    "'%s': expected PARAMETER=VALUE (e.g. NVDLA_SDP_EW_ENABLE=1)", assignment);
    }
    trim_copy(name, sizeof(name), assignment, (size_t)(eq - assignment));
    trim_copy(val, sizeof(val), eq + 1, strlen(eq + 1));
    if (val[0] == '\0') {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "%s: missing value after '='", name);
    }

    p = find_param(name, strlen(name));
    if (p == NULL) {
        p = find_type_alias(name, strlen(name), &alias_bit);
        if (p != NULL) {
            /* NVDLA_FEATURE_DATA_TYPE_INT8=YES: one bit of the type mask. */
            uint32_t on = 0;
            if (parse_bool(val, &on) != 0) {
                return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                            "%s=%s: not a yes/no value (use YES, NO, 1 or 0)", name, val);
            }
            v = on ? (member_value(c, p) | alias_bit) : (member_value(c, p) & ~alias_bit);
            rc = check_param_value(p, v, err, errlen);
            if (rc != 0) {
                return rc;
            }
            *member(c, p) = v;
            clear_err(err, errlen);
            return DLASIM_OK;
        }
    }
    if (p == NULL) {
        char known[1400];
        list_params(known, sizeof(known));
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "unknown parameter '%s' (known: %s)", name,
                    known);
    }
    rc = parse_value(p, val, &v, err, errlen);
    if (rc != 0) {
        return rc;
    }
    rc = check_param_value(p, v, err, errlen);
    if (rc != 0) {
        return rc;
    }
    *member(c, p) = v;
    clear_err(err, errlen);
    return DLASIM_OK;
}

int dla_config_get(const struct dla_config *c, const char *name, uint64_t *value)
{
    const struct param_desc *p;
    uint32_t bit = 0;
    if (c == NULL || name == NULL || value == NULL) {
        return DLASIM_ERR_INVAL;
    }
    p = find_param(name, strlen(name));
    if (p != NULL) {
        *value = member_value(c, p);
        return DLASIM_OK;
    }
    p = find_type_alias(name, strlen(name), &bit);
    if (p != NULL) {
        *value = (member_value(c, p) & bit) ? 1u : 0u;
        return DLASIM_OK;
    }
    return DLASIM_ERR_INVAL;
}

size_t dla_config_param_count(void)
{
    return N_PARAMS;
}

const char *dla_config_param_name(size_t i)
{
    return i < N_PARAMS ? params[i].name : NULL;
}

/* Bytes per feature element: 2 when a 16-bit type is present
 * (projects.spec: NVDLA_BPE 16 for FEATURE_DATA_TYPE_INT16_FP16, else 8). */
static uint32_t feature_bytes(const struct dla_config *c)
{
    return (c->feature_data_type & (DLA_TYPE_INT16 | DLA_TYPE_FP16)) ? 2u : 1u;
}

/* Cross-parameter rules, each citing where it comes from. */
static int check_consistency(const struct dla_config *c, char *err, size_t errlen)
{
    uint32_t bpe = feature_bytes(c);
    uint64_t entries = (uint64_t)c->cbuf_bank_number * c->cbuf_bank_depth;

    /* projects.spec: NVDLA_CBUF_ENTRY_WIDTH = NVDLA_MAC_ATOMIC_C_SIZE * NVDLA_BPE. */
    if ((uint64_t)c->cbuf_bank_width != (uint64_t)c->mac_atomic_c_size * bpe) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                    "NVDLA_CBUF_BANK_WIDTH=%" PRIu32 " must equal NVDLA_MAC_ATOMIC_C_SIZE=%" PRIu32
                    " x %" PRIu32 " byte(s) per feature element = %" PRIu32
                    " (one CBUF entry holds one Atomic-C)",
                    c->cbuf_bank_width, c->mac_atomic_c_size, bpe, c->mac_atomic_c_size * bpe);
    }
    /* projects.spec: NVDLA_CC_ATOMC_DIV_ATOMK = Atomic-C / Atomic-K. */
    if (c->mac_atomic_k_size > c->mac_atomic_c_size) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                    "NVDLA_MAC_ATOMIC_K_SIZE=%" PRIu32 " exceeds NVDLA_MAC_ATOMIC_C_SIZE=%" PRIu32
                    " (the MAC array divides Atomic-C by Atomic-K)",
                    c->mac_atomic_k_size, c->mac_atomic_c_size);
    }
    /* A CBUF entry (Atomic-C elements) is filled with whole memory atoms. */
    if (c->memory_atomic_size > c->mac_atomic_c_size) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                    "NVDLA_MEMORY_ATOMIC_SIZE=%" PRIu32 " exceeds NVDLA_MAC_ATOMIC_C_SIZE=%" PRIu32
                    " (a CBUF entry holds whole memory atoms)",
                    c->memory_atomic_size, c->mac_atomic_c_size);
    }
    /* CDMA/CSC D_ENTRY_PER_SLICE.ENTRIES is 14 bits (entries - 1). */
    if (entries > 16384u) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                    "CBUF of NVDLA_CBUF_BANK_NUMBER=%" PRIu32 " x NVDLA_CBUF_BANK_DEPTH=%" PRIu32
                    " = %" PRIu64 " entries exceeds 16384 (D_ENTRY_PER_SLICE.ENTRIES is 14 bits)",
                    c->cbuf_bank_number, c->cbuf_bank_depth, entries);
    }
    /* projects.spec: MAX_BATCH_SIZE_32 with BATCH_ENABLE, _x without. */
    if (c->batch_enable && c->max_batch_size == 0) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                    "NVDLA_BATCH_ENABLE=YES needs NVDLA_MAX_BATCH_SIZE in 1..32 (it is 0)");
    }
    /* The SDP LUT sits in the element-wise (Y) stage: NV_NVDLA_SDP_CORE_y is
     * instantiated only under NVDLA_SDP_EW_ENABLE (vmod NV_NVDLA_SDP_core.v). */
    if (c->sdp_lut_enable && !c->sdp_ew_enable) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                    "NVDLA_SDP_LUT_ENABLE=YES needs NVDLA_SDP_EW_ENABLE=YES "
                    "(the LUT is part of the SDP element-wise stage)");
    }
    if (c->secondary_memif_enable) {
        if (c->secondary_memif_width == 0 || c->secondary_memif_latency == 0 ||
            c->secondary_memif_max_burst_length == 0) {
            return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                        "NVDLA_SECONDARY_MEMIF_ENABLE=YES needs NVDLA_SECONDARY_MEMIF_WIDTH, "
                        "_LATENCY and _MAX_BURST_LENGTH (now %" PRIu32 "B, %" PRIu32
                        ", %" PRIu32 ")",
                        c->secondary_memif_width, c->secondary_memif_latency,
                        c->secondary_memif_max_burst_length);
        }
    }
    return 0;
}

int dla_config_validate(const struct dla_config *c, char *err, size_t errlen)
{
    int rc;
    if (c == NULL) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "no configuration");
    }
    for (size_t i = 0; i < N_PARAMS; i++) {
        rc = check_param_value(&params[i], member_value(c, &params[i]), err, errlen);
        if (rc != 0) {
            return rc;
        }
    }
    rc = check_consistency(c, err, errlen);
    if (rc != 0) {
        return rc;
    }
    clear_err(err, errlen);
    return DLASIM_OK;
}
