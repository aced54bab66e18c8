/* dotprod (ARMv8.2 SDOT) dot products: dot_neon.inc with CF_DOTPROD, over
 * the plain level's entries.  The i8mm level (SMMLA: a 2x8 by 8x2 int8
 * product, which pays in GEMM tiles of two weight rows by two activation
 * columns) has no kernels of its own yet and runs these (isa.c). */
#include "confab/target.h"
#include "internal.h"

#if defined(__aarch64__)
CF_TARGET_BEGIN("arch=armv8.2-a+dotprod")
#define CF_DOTPROD
#define FILL dotprod_fill
#include "dot_neon.inc"

void cf_fill_dotprod(cf_kernel_table *t) { dotprod_fill(t); }
CF_TARGET_END
#else
void cf_fill_dotprod(cf_kernel_table *t) { (void)t; }
#endif
