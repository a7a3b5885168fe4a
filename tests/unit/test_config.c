/*
 * Unit tests of src/plan/config.c: the named configurations against the
 * values of spec 004's first table (written out here independently), the
 * override syntax by spec name, error messages and consistency checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "plan/config.h"

/* Every parameter of spec 004's first table, in table order. */
static const char *const spec_names[] = {
    "NVDLA_FEATURE_DATA_TYPE",
    "NVDLA_WEIGHT_DATA_TYPE",
    "NVDLA_WEIGHT_COMPRESSION_ENABLE",
    "NVDLA_WINOGRAD_ENABLE",
    "NVDLA_MAC_ATOMIC_C_SIZE",
    "NVDLA_MAC_ATOMIC_K_SIZE",
    "NVDLA_MEMORY_ATOMIC_SIZE",
    "NVDLA_BATCH_ENABLE",
    "NVDLA_MAX_BATCH_SIZE",
    "NVDLA_CBUF_BANK_NUMBER",
    "NVDLA_CBUF_BANK_WIDTH",
    "NVDLA_CBUF_BANK_DEPTH",
    "NVDLA_SECONDARY_MEMIF_ENABLE",
    "NVDLA_SDP_LUT_ENABLE",
    "NVDLA_SDP_BS_ENABLE",
    "NVDLA_SDP_BN_ENABLE",
    "NVDLA_SDP_EW_ENABLE",
    "NVDLA_SDP_BS_THROUGHPUT",
    "NVDLA_SDP_BN_THROUGHPUT",
    "NVDLA_SDP_EW_THROUGHPUT",
    "NVDLA_BDMA_ENABLE",
    "NVDLA_RUBIK_ENABLE",
    "NVDLA_PDP_ENABLE",
    "NVDLA_PDP_THROUGHPUT",
    "NVDLA_CDP_ENABLE",
    "NVDLA_CDP_THROUGHPUT",
    "NVDLA_PRIMARY_MEMIF_MAX_BURST_LENGTH",
    "NVDLA_PRIMARY_MEMIF_WIDTH",
    "NVDLA_PRIMARY_MEMIF_LATENCY",
    "NVDLA_SECONDARY_MEMIF_MAX_BURST_LENGTH",
    "NVDLA_SECONDARY_MEMIF_WIDTH",
    "NVDLA_SECONDARY_MEMIF_LATENCY",
    "NVDLA_MEMIF_ADDRESS_WIDTH",
};
#define N_SPEC (sizeof(spec_names) / sizeof(spec_names[0]))

/* spec 004 first table: nv_large and nv_small columns ("-" = 0, YES = 1,
 * INT8 = 0x10, sizes in bytes).  Exception: nv_large's
 * PRIMARY_MEMIF_MAX_BURST_LENGTH is 1 as in the table (the ConfigROM
 * section shows 4). */
static const uint64_t expect_large[N_SPEC] = {
    0x10, 0x10, 1, 1, 64, 32, 32, 1, 32, 16, 64, 512, 1, 1, 1, 1, 1,
    16, 16, 4, 1, 1, 1, 8, 1, 8, 1, 64, 1200, 4, 64, 128, 64,
};
static const uint64_t expect_small[N_SPEC] = {
    0x10, 0x10, 0, 0, 8, 8, 8, 0, 0, 32, 8, 512, 0, 0, 1, 1, 0,
    1, 1, 0, 0, 0, 1, 1, 1, 1, 4, 8, 50, 0, 0, 0, 32,
};

static size_t spec_index(const char *name)
{
    for (size_t i = 0; i < N_SPEC; i++) {
        if (strcmp(spec_names[i], name) == 0) {
            return i;
        }
    }
    return N_SPEC;
}

static void expect_config(const char *cfgname, const uint64_t *expect)
{
    struct dla_config c;
    char err[256];
    assert_int_equal(dla_config_init(&c, cfgname, err, sizeof(err)), DLASIM_OK);
    assert_string_equal(c.name, cfgname);
    for (size_t i = 0; i < N_SPEC; i++) {
        uint64_t v = 12345;
        assert_int_equal(dla_config_get(&c, spec_names[i], &v), DLASIM_OK);
        if (v != expect[i]) {
            fail_msg("%s: %s = %llu, spec 004 says %llu", cfgname, spec_names[i],
                     (unsigned long long)v, (unsigned long long)expect[i]);
        }
    }
    assert_int_equal(dla_config_validate(&c, err, sizeof(err)), DLASIM_OK);
}

static void test_nv_small(void **state)
{
    (void)state;
    expect_config("nv_small", expect_small);
}

static void test_nv_large(void **state)
{
    (void)state;
    expect_config("nv_large", expect_large);
}

/* nv_small_256 = nv_small with Atomic-C 32, bank width 32 B, depth 128. */
static void test_nv_small_256(void **state)
{
    uint64_t expect[N_SPEC];
    (void)state;
    memcpy(expect, expect_small, sizeof(expect));
    expect[spec_index("NVDLA_MAC_ATOMIC_C_SIZE")] = 32;
    expect[spec_index("NVDLA_CBUF_BANK_WIDTH")] = 32;
    expect[spec_index("NVDLA_CBUF_BANK_DEPTH")] = 128;
    expect_config("nv_small_256", expect);
}

/* Struct members as named in config.h hold the same values. */
static void test_struct_members(void **state)
{
    struct dla_config c;
    (void)state;
    assert_int_equal(dla_config_init(&c, NULL, NULL, 0), DLASIM_OK);
    assert_string_equal(c.name, "nv_small");
    assert_int_equal(c.mac_atomic_c_size, 8);
    assert_int_equal(c.cbuf_bank_number * c.cbuf_bank_width * c.cbuf_bank_depth, 128 * 1024);
    assert_int_equal(c.feature_data_type, DLA_TYPE_INT8);
    assert_int_equal(c.sdp_ew_enable, 0);
    assert_int_equal(c.memif_address_width, 32);
    assert_int_equal(dla_config_init(&c, "nv_small_256", NULL, 0), DLASIM_OK);
    assert_int_equal(c.cbuf_bank_number * c.cbuf_bank_width * c.cbuf_bank_depth, 128 * 1024);
    assert_int_equal(c.mac_atomic_c_size * c.mac_atomic_k_size, 256);
    assert_int_equal(dla_config_init(&c, "nv_large", NULL, 0), DLASIM_OK);
    assert_int_equal(c.cbuf_bank_number * c.cbuf_bank_width * c.cbuf_bank_depth, 512 * 1024);
    assert_int_equal(c.secondary_memif_width, 64);
    assert_int_equal(c.max_batch_size, 32);
}

/* The enumeration lists exactly spec 004's names, each once. */
static void test_param_names(void **state)
{
    size_t n = dla_config_param_count();
    int seen[N_SPEC] = { 0 };
    (void)state;
    assert_int_equal(n, N_SPEC);
    assert_null(dla_config_param_name(n));
    for (size_t i = 0; i < n; i++) {
        const char *name = dla_config_param_name(i);
        size_t k;
        assert_non_null(name);
        k = spec_index(name);
        if (k == N_SPEC) {
            fail_msg("parameter %s is not a spec 004 name", name);
        }
        assert_int_equal(seen[k], 0);
        seen[k] = 1;
    }
}

/* Every name is settable: writing each parameter's value back (as decimal)
 * succeeds and a different legal value is read back. */
static void test_every_param_settable(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_SPEC; i++) {
        struct dla_config c;
        char assign[128];
        char err[256];
        uint64_t v = 0;
        assert_int_equal(dla_config_init(&c, "nv_small", NULL, 0), DLASIM_OK);
        snprintf(assign, sizeof(assign), "%s=%llu", spec_names[i],
                 (unsigned long long)expect_small[i]);
        if (dla_config_set(&c, assign, err, sizeof(err)) != DLASIM_OK) {
            fail_msg("%s: %s", assign, err);
        }
        snprintf(assign, sizeof(assign), "%s=%llu", spec_names[i],
                 (unsigned long long)expect_large[i]);
        if (dla_config_set(&c, assign, err, sizeof(err)) != DLASIM_OK) {
            fail_msg("%s: %s", assign, err);
        }
        assert_int_equal(dla_config_get(&c, spec_names[i], &v), DLASIM_OK);
        assert_int_equal(v, expect_large[i]);
    }
}

/* Setting all of nv_large's values on nv_small yields nv_large. */
static void test_small_to_large(void **state)
{
    struct dla_config c, large;
    char err[256];
    (void)state;
    assert_int_equal(dla_config_init(&c, "nv_small", NULL, 0), DLASIM_OK);
    assert_int_equal(dla_config_init(&large, "nv_large", NULL, 0), DLASIM_OK);
    for (size_t i = 0; i < N_SPEC; i++) {
        char assign[128];
        snprintf(assign, sizeof(assign), "%s=0x%llx", spec_names[i],
                 (unsigned long long)expect_large[i]);
        assert_int_equal(dla_config_set(&c, assign, err, sizeof(err)), DLASIM_OK);
    }
    for (size_t i = 0; i < N_SPEC; i++) {
        uint64_t a = 0, b = 1;
        assert_int_equal(dla_config_get(&c, spec_names[i], &a), DLASIM_OK);
        assert_int_equal(dla_config_get(&large, spec_names[i], &b), DLASIM_OK);
        assert_int_equal(a, b);
    }
    assert_int_equal(dla_config_validate(&c, err, sizeof(err)), DLASIM_OK);
}

struct set_case {
    const char *assign;
    const char *param;
    uint64_t value;
};

/* Value syntaxes: numbers, hex, YES/NO spellings, byte sizes, type names,
 * optional NVDLA_ prefix, any case, blanks around. */
static void test_value_syntax(void **state)
{
    static const struct set_case cases[] = {
        { "NVDLA_SDP_EW_ENABLE=1", "NVDLA_SDP_EW_ENABLE", 1 },
        { "NVDLA_SDP_EW_ENABLE=No", "NVDLA_SDP_EW_ENABLE", 0 },
        { "NVDLA_SDP_EW_ENABLE=YES", "NVDLA_SDP_EW_ENABLE", 1 },
        { "NVDLA_SDP_EW_ENABLE=NO", "NVDLA_SDP_EW_ENABLE", 0 },
        { "NVDLA_SDP_EW_ENABLE=Yes", "NVDLA_SDP_EW_ENABLE", 1 },
        { "NVDLA_SDP_EW_ENABLE=0", "NVDLA_SDP_EW_ENABLE", 0 },
        { "nvdla_bdma_enable=yes", "NVDLA_BDMA_ENABLE", 1 },
        { "RUBIK_ENABLE = YES", "NVDLA_RUBIK_ENABLE", 1 },
        { "NVDLA_CBUF_BANK_WIDTH=64B", "NVDLA_CBUF_BANK_WIDTH", 64 },
        { "NVDLA_CBUF_BANK_WIDTH=0x20", "NVDLA_CBUF_BANK_WIDTH", 32 },
        { "NVDLA_PRIMARY_MEMIF_WIDTH=64B", "NVDLA_PRIMARY_MEMIF_WIDTH", 64 },
        { "NVDLA_PRIMARY_MEMIF_LATENCY=0x4b0", "NVDLA_PRIMARY_MEMIF_LATENCY", 1200 },
        { "NVDLA_SECONDARY_MEMIF_LATENCY=-", "NVDLA_SECONDARY_MEMIF_LATENCY", 0 },
        { "NVDLA_MAX_BATCH_SIZE=32", "NVDLA_MAX_BATCH_SIZE", 32 },
        { "NVDLA_FEATURE_DATA_TYPE=INT16", "NVDLA_FEATURE_DATA_TYPE", 0x20 },
        { "NVDLA_FEATURE_DATA_TYPE=INT8|FP16", "NVDLA_FEATURE_DATA_TYPE", 0x110 },
        { "NVDLA_WEIGHT_DATA_TYPE=int8,int16", "NVDLA_WEIGHT_DATA_TYPE", 0x30 },
        { "NVDLA_WEIGHT_DATA_TYPE=0x10", "NVDLA_WEIGHT_DATA_TYPE", 0x10 },
        { "NVDLA_MEMIF_ADDRESS_WIDTH=64", "NVDLA_MEMIF_ADDRESS_WIDTH", 64 },
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct dla_config c;
        char err[256];
        uint64_t v = 999;
        assert_int_equal(dla_config_init(&c, "nv_small", NULL, 0), DLASIM_OK);
        if (dla_config_set(&c, cases[i].assign, err, sizeof(err)) != DLASIM_OK) {
            fail_msg("%s: %s", cases[i].assign, err);
        }
        assert_int_equal(dla_config_get(&c, cases[i].param, &v), DLASIM_OK);
        if (v != cases[i].value) {
            fail_msg("%s: got %llu", cases[i].assign, (unsigned long long)v);
        }
    }
}

/* NVDLA_FEATURE_DATA_TYPE_<T>=YES/NO (spec 004 writes the parameter as
 * NVDLA_FEATURE_DATA_TYPE_BINARY/INT4/INT8/...). */
static void test_type_aliases(void **state)
{
    struct dla_config c;
    char err[256];
    uint64_t v = 0;
    (void)state;
    assert_int_equal(dla_config_init(&c, "nv_small", NULL, 0), DLASIM_OK);
    assert_int_equal(dla_config_set(&c, "NVDLA_FEATURE_DATA_TYPE_FP16=YES", err, sizeof(err)),
                     DLASIM_OK);
    assert_int_equal(c.feature_data_type, DLA_TYPE_INT8 | DLA_TYPE_FP16);
    assert_int_equal(dla_config_get(&c, "NVDLA_FEATURE_DATA_TYPE_FP16", &v), DLASIM_OK);
    assert_int_equal(v, 1);
    assert_int_equal(dla_config_set(&c, "NVDLA_FEATURE_DATA_TYPE_INT8=NO", err, sizeof(err)),
                     DLASIM_OK);
    assert_int_equal(c.feature_data_type, DLA_TYPE_FP16);
    assert_int_equal(dla_config_get(&c, "NVDLA_FEATURE_DATA_TYPE_INT8", &v), DLASIM_OK);
    assert_int_equal(v, 0);
    /* removing the last type is refused */
    assert_int_equal(dla_config_set(&c, "NVDLA_FEATURE_DATA_TYPE_FP16=NO", err, sizeof(err)),
                     DLASIM_ERR_INVAL);
    assert_int_equal(c.feature_data_type, DLA_TYPE_FP16);
}

struct err_case {
    const char *assign;
    const char *needle; /* must appear in the message */
};

static void test_set_errors(void **state)
{
    static const struct err_case cases[] = {
        { "NVDLA_NO_SUCH_THING=1", "unknown parameter 'NVDLA_NO_SUCH_THING'" },
        { "NVDLA_CBUF_BANK_WIDTH=7", "NVDLA_CBUF_BANK_WIDTH=7: not a power of two" },
        { "NVDLA_CBUF_BANK_WIDTH=7B", "not a power of two" },
        { "NVDLA_CBUF_BANK_WIDTH=big", "not a byte size" },
        { "NVDLA_MAC_ATOMIC_C_SIZE=128", "out of range" },
        { "NVDLA_MAC_ATOMIC_C_SIZE=0", "must be at least" },
        { "NVDLA_MAC_ATOMIC_C_SIZE=12", "not a power of two" },
        { "NVDLA_MAC_ATOMIC_K_SIZE=-3", "not a number" },
        { "NVDLA_SDP_EW_ENABLE=maybe", "not a yes/no value" },
        { "NVDLA_SDP_EW_ENABLE=2", "not a yes/no value" },
        { "NVDLA_MEMIF_ADDRESS_WIDTH=48", "must be 32 or 64" },
        { "NVDLA_PRIMARY_MEMIF_LATENCY=70000", "out of range" },
        { "NVDLA_PRIMARY_MEMIF_LATENCY=99999999999", "not a number" },
        { "NVDLA_FEATURE_DATA_TYPE=FP32", "'FP32' has no encoding" },
        { "NVDLA_FEATURE_DATA_TYPE=INT9", "unknown data type 'INT9'" },
        { "NVDLA_FEATURE_DATA_TYPE=0x8", "name no data type" },
        { "NVDLA_SDP_EW_THROUGHPUT=3", "not a power of two" },
        { "NVDLA_SDP_EW_ENABLE", "expected PARAMETER=VALUE" },
        { "NVDLA_SDP_EW_ENABLE=", "missing value" },
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct dla_config c, before;
        char err[2048] = "";
        assert_int_equal(dla_config_init(&c, "nv_small", NULL, 0), DLASIM_OK);
        memcpy(&before, &c, sizeof(c));
        assert_int_equal(dla_config_set(&c, cases[i].assign, err, sizeof(err)),
                         DLASIM_ERR_INVAL);
        if (strstr(err, cases[i].needle) == NULL) {
            fail_msg("%s: message '%s' lacks '%s'", cases[i].assign, err, cases[i].needle);
        }
        /* a failed set changes nothing */
        assert_memory_equal(&c, &before, sizeof(c));
    }
}

/* The unknown-parameter message lists every known name. */
static void test_unknown_lists_known(void **state)
{
    struct dla_config c;
    char err[2048];
    (void)state;
    assert_int_equal(dla_config_init(&c, "nv_small", NULL, 0), DLASIM_OK);
    assert_int_equal(dla_config_set(&c, "FOO=1", err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "(known: "));
    for (size_t i = 0; i < N_SPEC; i++) {
        assert_non_null(strstr(err, spec_names[i]));
    }
    /* tiny or absent buffers are fine */
    assert_int_equal(dla_config_set(&c, "FOO=1", err, 8), DLASIM_ERR_INVAL);
    assert_int_equal(strlen(err), 7);
    assert_int_equal(dla_config_set(&c, "FOO=1", NULL, 0), DLASIM_ERR_INVAL);
}

static void test_init_errors(void **state)
{
    struct dla_config c;
    char err[256];
    uint64_t v;
    (void)state;
    assert_int_equal(dla_config_init(&c, "nv_full", err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "unknown configuration 'nv_full'"));
    assert_non_null(strstr(err, "nv_small_256"));
    assert_int_equal(dla_config_init(&c, "nv_small", NULL, 0), DLASIM_OK);
    assert_int_equal(dla_config_get(&c, "NVDLA_NOPE", &v), DLASIM_ERR_INVAL);
}

struct inconsistent_case {
    const char *sets[3];
    const char *needle;
};

/* Each set is legal alone; validate finds the inconsistency. */
static void test_validate_inconsistent(void **state)
{
    static const struct inconsistent_case cases[] = {
        { { "NVDLA_MAC_ATOMIC_C_SIZE=16" }, "NVDLA_CBUF_BANK_WIDTH=8 must equal" },
        { { "NVDLA_CBUF_BANK_WIDTH=16" }, "NVDLA_CBUF_BANK_WIDTH=16 must equal" },
        { { "NVDLA_FEATURE_DATA_TYPE=INT16" }, "x 2 byte(s)" },
        { { "NVDLA_MAC_ATOMIC_K_SIZE=16" }, "NVDLA_MAC_ATOMIC_K_SIZE=16 exceeds" },
        { { "NVDLA_MEMORY_ATOMIC_SIZE=16" }, "NVDLA_MEMORY_ATOMIC_SIZE=16 exceeds" },
        { { "NVDLA_BATCH_ENABLE=YES" }, "NVDLA_MAX_BATCH_SIZE" },
        { { "NVDLA_SDP_LUT_ENABLE=YES" }, "needs NVDLA_SDP_EW_ENABLE=YES" },
        { { "NVDLA_SECONDARY_MEMIF_ENABLE=YES" }, "NVDLA_SECONDARY_MEMIF_WIDTH" },
        { { "NVDLA_CBUF_BANK_DEPTH=1024" }, "exceeds 16384" },
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct dla_config c;
        char err[512] = "";
        assert_int_equal(dla_config_init(&c, "nv_small", NULL, 0), DLASIM_OK);
        for (size_t k = 0; k < 3 && cases[i].sets[k] != NULL; k++) {
            if (dla_config_set(&c, cases[i].sets[k], err, sizeof(err)) != DLASIM_OK) {
                fail_msg("%s: %s", cases[i].sets[k], err);
            }
        }
        assert_int_equal(dla_config_validate(&c, err, sizeof(err)), DLASIM_ERR_INVAL);
        if (strstr(err, cases[i].needle) == NULL) {
            fail_msg("%s: message '%s' lacks '%s'", cases[i].sets[0], err, cases[i].needle);
        }
    }
}

/* Consistent multi-parameter changes validate. */
static void test_validate_consistent(void **state)
{
    static const char *const sets[] = {
        "NVDLA_MAC_ATOMIC_C_SIZE=16", "NVDLA_CBUF_BANK_WIDTH=16B",
        "NVDLA_SDP_EW_ENABLE=1",      "NVDLA_SDP_LUT_ENABLE=1",
        "NVDLA_BATCH_ENABLE=1",       "NVDLA_MAX_BATCH_SIZE=8",
        "NVDLA_SECONDARY_MEMIF_ENABLE=YES", "NVDLA_SECONDARY_MEMIF_WIDTH=32B",
        "NVDLA_SECONDARY_MEMIF_LATENCY=128", "NVDLA_SECONDARY_MEMIF_MAX_BURST_LENGTH=4",
    };
    struct dla_config c;
    char err[512];
    (void)state;
    assert_int_equal(dla_config_init(&c, "nv_small", NULL, 0), DLASIM_OK);
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        assert_int_equal(dla_config_set(&c, sets[i], err, sizeof(err)), DLASIM_OK);
    }
    if (dla_config_validate(&c, err, sizeof(err)) != DLASIM_OK) {
        fail_msg("%s", err);
    }
    /* a struct edited directly is checked too */
    c.cbuf_bank_depth = 100;
    assert_int_equal(dla_config_validate(&c, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "NVDLA_CBUF_BANK_DEPTH=100: not a power of two"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nv_small),
        cmocka_unit_test(test_nv_small_256),
        cmocka_unit_test(test_nv_large),
        cmocka_unit_test(test_struct_members),
        cmocka_unit_test(test_param_names),
        cmocka_unit_test(test_every_param_settable),
        cmocka_unit_test(test_small_to_large),
        cmocka_unit_test(test_value_syntax),
        cmocka_unit_test(test_type_aliases),
        cmocka_unit_test(test_set_errors),
        cmocka_unit_test(test_unknown_lists_known),
        cmocka_unit_test(test_init_errors),
        cmocka_unit_test(test_validate_inconsistent),
        cmocka_unit_test(test_validate_consistent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
