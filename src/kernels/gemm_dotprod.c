/* The dotprod level's GEMM tiles (ARMv8.2 SDOT by lane): gemm_neon.inc. */
#include "confab/target.h"
#include "internal.h"

#if defined(__aarch64__)
CF_TARGET_BEGIN("arch=armv8.2-a+dotprod")
#define FILL dotprod_gemm_fill
#include "gemm_neon.inc"

void cf_fill_gemm_dotprod(cf_kernel_table *t) { dotprod_gemm_fill(t); }
CF_TARGET_END
#else
void cf_fill_gemm_dotprod(cf_kernel_table *t) { (void)t; }
#endif
