/* Tiled GEMM for N >= 3 (batched prefill), AVX2: gemm_tiles256.inc's
 * tiles with vpmaddubsw. */
#include "confab/target.h"
#include "gemm_panel.h"

#if defined(__x86_64__)
CF_TARGET_BEGIN("avx2,fma,f16c")
#include "gemm_tiles256.inc"

static void gemm(const cf_matmul_args *a, int64_t r0, int64_t r1)
{
    static const gemm_isa isa = {transpose16, tile, ftile, pack_r16};
    cf_gemm_run(a, r0, r1, &isa);
}

void cf_fill_gemm_avx2(cf_kernel_table *t)
{
    for (size_t i = 0; i < cf_gemm_n_types; i++)
        t->gemm[cf_gemm_types[i]] = gemm;
}
CF_TARGET_END
#else
void cf_fill_gemm_avx2(cf_kernel_table *t) { (void)t; }
#endif
