/* ozgemm/config.h — the library's version and its compile-time limits, in plain C so that the
 * C API, the C++ layer and CPU-only code (which cannot include the CUDA headers) read one copy.
 * include/ozgemm/types.hpp turns these into C++ constants. */
#ifndef OZGEMM_CONFIG_H
#define OZGEMM_CONFIG_H

#define OZGEMM_VERSION_MAJOR 0
#define OZGEMM_VERSION_MINOR 2
#define OZGEMM_VERSION_PATCH 0

/* Slice counts of the Ozaki-I scheme: 1 .. OZGEMM_MAX_SLICES; ozgemmSetSlices(h, 0) selects
 * OZGEMM_DEFAULT_SLICES. docs/numerics.md has the errors measured per slice count. */
#define OZGEMM_DEFAULT_SLICES 8
#define OZGEMM_MAX_SLICES 20

/* Moduli counts of the Ozaki-II scheme: OZGEMM_MIN_MODULI .. OZGEMM_MAX_MODULI (the 20 moduli of
 * numerics/ozaki2.hpp's table; past 16 the scaled operands pass int64 and are cut from the
 * significand); ozgemmSetModuli(h, 0) selects OZGEMM_DEFAULT_MODULI. */
#define OZGEMM_MIN_MODULI 2
#define OZGEMM_MAX_MODULI 20
#define OZGEMM_DEFAULT_MODULI 14
/* ozgemmZgemm's count in FIXED mode when ozgemmSetModuli(h, 0): the complex moduli set's (numerics/
 * ozaki2_complex.hpp) smallest count whose error reached plain complex FP64's on the host measurements
 * (docs/numerics.md, "Complex products (ZGEMM)"). */
#define OZGEMM_DEFAULT_COMPLEX_MODULI 16

#endif /* OZGEMM_CONFIG_H */
