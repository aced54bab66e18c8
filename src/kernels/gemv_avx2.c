/* The AVX2 level's prepared GEMVs: gemv256.inc with vpmaddubsw. */
#include "confab/target.h"
#include "internal.h"

#if defined(__x86_64__)
CF_TARGET_BEGIN("avx2,fma,f16c")
#include "gemv256.inc"

void cf_fill_gemv_avx2(cf_kernel_table *t) { gemv_fill(t); }
CF_TARGET_END
#else
void cf_fill_gemv_avx2(cf_kernel_table *t) { (void)t; }
#endif
