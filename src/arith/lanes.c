/*
 * Instruction set selection of the element-wise loops (see lanes.h).
 * Nothing is cached: __builtin_cpu_supports is cheap and is asked once per
 * layer.
 */
#include "arith/lanes.h"

int dla_lanes_supported(enum dla_lanes_isa isa)
{
    switch (isa) {
    case DLA_LANES_GENERIC:
        return 1;
#if defined(DLA_LANES_X86)
    case DLA_LANES_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") ? 1 : 0;
    case DLA_LANES_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") &&
                       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                       __builtin_cpu_supports("avx512dq")
                   ? 1
                   : 0;
#endif
    default:
        return 0;
    }
}

enum dla_lanes_isa dla_lanes_best(void)
{
    return dla_lanes_supported(DLA_LANES_AVX512) ? DLA_LANES_AVX512
           : dla_lanes_supported(DLA_LANES_AVX2) ? DLA_LANES_AVX2
                                                 : DLA_LANES_GENERIC;
}

const char *dla_lanes_isa_name(enum dla_lanes_isa isa)
{
    switch (isa) {
    case DLA_LANES_GENERIC:
        return "generic";
    case DLA_LANES_AVX2:
        return "avx2";
    case DLA_LANES_AVX512:
        return "avx512";
    default:
        return "unknown";
    }
}
