/* AVX2 + FMA + F16C dot products (vpmaddubsw for the int8 sums). */
#include "confab/target.h"
#include "internal.h"

#if defined(__x86_64__)
CF_TARGET_BEGIN("avx2,fma,f16c")
#include "dot_simd.inc"

void cf_fill_avx2(cf_kernel_table *t)
{
    simd_fill(t);
    cf_fill_gemv_avx2(t);
    cf_fill_gemm_avx2(t);
}
CF_TARGET_END
#else
void cf_fill_avx2(cf_kernel_table *t) { (void)t; }
#endif
