/*
 * Hardware configurations: the scalability parameters of spec 004
 * ("Scalability parameters and ConfigROM") as data, one table per named
 * configuration, each parameter overridable by its spec name.
 */
#ifndef DLASIM_SIM_CONFIG_H
#define DLASIM_SIM_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/* Data type bits used by *_DATA_TYPE parameters and ConfigROM (spec 004). */
enum dla_data_type_bit {
    DLA_TYPE_BINARY = 1u << 0,
    DLA_TYPE_INT4 = 1u << 1,
    DLA_TYPE_INT8 = 1u << 4,
    DLA_TYPE_INT16 = 1u << 5,
    DLA_TYPE_FP16 = 1u << 8
};

/* One member per spec-004 parameter; names are the spec names lowercased
 * without the NVDLA_ prefix.  Sizes are in bytes or elements as in spec 004
 * (bank width in bytes, memif width in bytes). */
struct dla_config {
    const char *name;                       /* "nv_small", ... */
    uint32_t feature_data_type;             /* enum dla_data_type_bit mask */
    uint32_t weight_data_type;              /* enum dla_data_type_bit mask */
    uint32_t weight_compression_enable;     /* 0/1 */
    uint32_t winograd_enable;               /* 0/1 */
    uint32_t batch_enable;                  /* 0/1 */
    uint32_t max_batch_size;                /* 0 when batch is disabled */
    uint32_t mac_atomic_c_size;             /* Atomic-C: input channels per MAC op */
    uint32_t mac_atomic_k_size;             /* Atomic-K: kernels per MAC op */
    uint32_t memory_atomic_size;            /* Atomic-M: elements per memory atom */
    uint32_t cbuf_bank_number;              /* CBUF banks */
    uint32_t cbuf_bank_width;               /* bytes per CBUF entry */
    uint32_t cbuf_bank_depth;               /* entries per bank */
    uint32_t secondary_memif_enable;        /* CVIF/SRAMIF present */
    uint32_t sdp_lut_enable;
    uint32_t sdp_bs_enable;
    uint32_t sdp_bn_enable;
    uint32_t sdp_ew_enable;
    uint32_t sdp_bs_throughput;
    uint32_t sdp_bn_throughput;
    uint32_t sdp_ew_throughput;
    uint32_t bdma_enable;
    uint32_t rubik_enable;
    uint32_t pdp_enable;
    uint32_t pdp_throughput;
    uint32_t cdp_enable;
    uint32_t cdp_throughput;
    uint32_t primary_memif_max_burst_length;
    uint32_t primary_memif_width;           /* bytes */
    uint32_t primary_memif_latency;         /* cycles */
    uint32_t secondary_memif_max_burst_length;
    uint32_t secondary_memif_width;         /* bytes */
    uint32_t secondary_memif_latency;       /* cycles */
    uint32_t memif_address_width;           /* 32 or 64 bits */
};

/* Fill *c with the named configuration (NULL = "nv_small"). */
int dla_config_init(struct dla_config *c, const char *name, char *err, size_t errlen);
/* Apply "NVDLA_PARAM=VALUE" (spec name; values: numbers, YES/NO, INT8...). */
int dla_config_set(struct dla_config *c, const char *assignment, char *err, size_t errlen);
/* Parameter by spec name ("NVDLA_MAC_ATOMIC_C_SIZE"). */
int dla_config_get(const struct dla_config *c, const char *name, uint64_t *value);
/* Enumerate parameter names (for `dlasim info` and error messages). */
size_t dla_config_param_count(void);
const char *dla_config_param_name(size_t i);
/* Check the parameters are consistent (powers of two, ranges). */
int dla_config_validate(const struct dla_config *c, char *err, size_t errlen);

#endif
