/* Advanced SIMD (ARMv8.0) dot products: dot_neon.inc with widening
 * multiplies. */
#include "internal.h"

#if defined(__aarch64__)
#define FILL neon_fill
#include "dot_neon.inc"

void cf_fill_neon(cf_kernel_table *t) { neon_fill(t); }
#else
void cf_fill_neon(cf_kernel_table *t) { (void)t; }
#endif
