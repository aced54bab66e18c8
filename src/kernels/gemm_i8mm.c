/* The i8mm level's GEMM tiles (ARMv8.6 SMMLA, a 2x8 by 8x2 int8 product):
 * gemm_neon.inc with CF_I8MM. */
#include "confab/target.h"
#include "internal.h"

#if defined(__aarch64__)
CF_TARGET_BEGIN("arch=armv8.2-a+dotprod+i8mm")
#define CF_I8MM
#define FILL i8mm_gemm_fill
#include "gemm_neon.inc"

void cf_fill_gemm_i8mm(cf_kernel_table *t) { i8mm_gemm_fill(t); }
CF_TARGET_END
#else
void cf_fill_gemm_i8mm(cf_kernel_table *t) { (void)t; }
#endif
