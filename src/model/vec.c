/* The vec.h table of the kernels' active ISA. */
#include <string.h>

#include "confab/kernels.h"
#include "vec.h"

size_t cf_attn_part_bytes(int head_dim)
{
    return (sizeof(cf_attn_part) + (size_t)head_dim * sizeof(float) + 63) & ~(size_t)63;
}

static cf_vec_ops tables[CF_ISA_COUNT];
static int ready;

const cf_vec_ops *cf_vec(void)
{
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
        /* racing first callers fill identical tables: harmless */
        cf_vec_ops t;
        memset(&t, 0, sizeof t);
        cf_vec_fill_scalar(&t);
        tables[CF_ISA_SCALAR] = t;
        cf_vec_fill_avx2(&t);
        tables[CF_ISA_AVX2] = tables[CF_ISA_AVXVNNI] = t;
        cf_vec_fill_avx512(&t);
        tables[CF_ISA_AVX512] = t;
        t = tables[CF_ISA_SCALAR];
        cf_vec_fill_neon(&t);
        tables[CF_ISA_NEON] = tables[CF_ISA_DOTPROD] = tables[CF_ISA_I8MM] = t;
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    return &tables[cf_isa_active()];
}
