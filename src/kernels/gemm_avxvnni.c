/* The AVX-VNNI level (CF_ISA_AVXVNNI): AVX2's kernels, with the tiled
 * GEMM's and the prepared GEMVs' integer sums by AVX-VNNI's 256-bit
 * vpdpbusd (gemm_tiles256.inc, gemv_avxvnni.c, CF_VNNI), which CPUs
 * without AVX-512 have (Alder Lake and later). */
#include "confab/target.h"
#include "gemm_panel.h"

#if defined(__x86_64__)
CF_TARGET_BEGIN("avx2,fma,f16c,avxvnni")
#define CF_VNNI 1
#include "gemm_tiles256.inc"

static void gemm(const cf_matmul_args *a, int64_t r0, int64_t r1)
{
    static const gemm_isa isa = {transpose16, tile, ftile, pack_r16};
    cf_gemm_run(a, r0, r1, &isa);
}

void cf_fill_avxvnni(cf_kernel_table *t)
{
    cf_fill_gemv_avxvnni(t);
    for (size_t i = 0; i < cf_gemm_n_types; i++)
        t->gemm[cf_gemm_types[i]] = gemm;
}
CF_TARGET_END
#else
void cf_fill_avxvnni(cf_kernel_table *t) { (void)t; }
#endif
