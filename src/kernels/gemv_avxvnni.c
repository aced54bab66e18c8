/* The AVX-VNNI level's prepared GEMVs: gemv256.inc with AVX-VNNI's
 * 256-bit vpdpbusd (VEX), which needs no AVX-512. */
#include "confab/target.h"
#include "internal.h"

#if defined(__x86_64__)
CF_TARGET_BEGIN("avx2,fma,f16c,avxvnni")
#define CF_VNNI 1
#define CF_AVXVNNI 1
#include "gemv256.inc"

void cf_fill_gemv_avxvnni(cf_kernel_table *t) { gemv_fill(t); }
CF_TARGET_END
#else
void cf_fill_gemv_avxvnni(cf_kernel_table *t) { (void)t; }
#endif
