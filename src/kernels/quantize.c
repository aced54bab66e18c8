/* cf_quantize_row and cf_vec_dot_type: which rounding a type's activations
 * get, and the f32 -> type entry point. */
#include "blocks.h"
#include "quant.h"

cf_type cf_vec_dot_type(cf_type t)
{
    switch (t) {
    case CF_TYPE_Q4_0:
    case CF_TYPE_Q5_0:
    case CF_TYPE_Q8_0:
    case CF_TYPE_IQ4_NL:
    case CF_TYPE_MXFP4: return CF_TYPE_Q8_0;
    case CF_TYPE_Q4_1:
    case CF_TYPE_Q5_1: return CF_TYPE_Q8_1;
    case CF_TYPE_Q2_K:
    case CF_TYPE_Q3_K:
    case CF_TYPE_Q4_K:
    case CF_TYPE_Q5_K:
    case CF_TYPE_Q6_K:
    case CF_TYPE_IQ2_XXS:
    case CF_TYPE_IQ2_XS:
    case CF_TYPE_IQ3_XXS:
    case CF_TYPE_IQ1_S:
    case CF_TYPE_IQ3_S:
    case CF_TYPE_IQ2_S:
    case CF_TYPE_IQ4_XS:
    case CF_TYPE_IQ1_M:
    case CF_TYPE_TQ2_0: return CF_TYPE_Q8_K;
    case CF_TYPE_F16: return CF_TYPE_F16;
    case CF_TYPE_BF16: return CF_TYPE_BF16;
    default: return CF_TYPE_F32;
    }
}

bool cf_type_needs_imatrix(cf_type t)
{
    return t == CF_TYPE_IQ2_XXS || t == CF_TYPE_IQ2_XS || t == CF_TYPE_IQ1_S || t == CF_TYPE_IQ1_M;
}

int cf_quantize_row(cf_type t, const float *src, void *dst, int64_t k)
{
    const cf_type_traits *tt = cf_type_get((uint32_t)t);
    if (!tt || k < 0 || k % tt->blck_size)
        return -1;
    switch (t) {
    case CF_TYPE_F32: memcpy(dst, src, (size_t)k * sizeof(float)); return 0;
    case CF_TYPE_F16: cf_f32_to_f16_row(src, dst, k); return 0;
    case CF_TYPE_BF16: cf_f32_to_bf16_row(src, dst, k); return 0;
    case CF_TYPE_Q8_0: cf_quantize_q8_0(src, dst, k); return 0;
    case CF_TYPE_Q8_1: cf_quantize_q8_1(src, dst, k); return 0;
    case CF_TYPE_Q8_K: cf_quantize_q8_K(src, dst, k); return 0;
    case CF_TYPE_Q4_0: cf_quantize_q4_0(src, dst, k); return 0;
    case CF_TYPE_Q4_1: cf_quantize_q4_1(src, dst, k); return 0;
    case CF_TYPE_Q5_0: cf_quantize_q5_0(src, dst, k); return 0;
    case CF_TYPE_Q5_1: cf_quantize_q5_1(src, dst, k); return 0;
    case CF_TYPE_Q2_K: cf_quantize_q2_K(src, dst, k); return 0;
    case CF_TYPE_Q3_K: cf_quantize_q3_K(src, dst, k); return 0;
    case CF_TYPE_Q4_K: cf_quantize_q4_K(src, dst, k); return 0;
    case CF_TYPE_Q5_K: cf_quantize_q5_K(src, dst, k); return 0;
    case CF_TYPE_Q6_K: cf_quantize_q6_K(src, dst, k); return 0;
    case CF_TYPE_IQ3_XXS: return cf_quantize_iq3_xxs(src, dst, k, NULL);
    case CF_TYPE_IQ3_S: return cf_quantize_iq3_s(src, dst, k, NULL);
    case CF_TYPE_IQ2_S: return cf_quantize_iq2_s(src, dst, k);
    case CF_TYPE_IQ4_NL: cf_quantize_iq4_nl(src, dst, k); return 0;
    case CF_TYPE_IQ4_XS: cf_quantize_iq4_xs(src, dst, k); return 0;
    case CF_TYPE_MXFP4: cf_quantize_mxfp4(src, dst, k); return 0;
    case CF_TYPE_TQ2_0: cf_quantize_tq2_0(src, dst, k); return 0;
    default: return -1;
    }
}
