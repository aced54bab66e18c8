/* The reference MXFP4 quantizer, llama.cpp's quantize_row_mxfp4_ref: the
 * shared exponent is the OCP MX rule's floor(log2(amax)) - 2 (E2M1's
 * largest exponent), so a block's largest values may clip at 6 * 2^e; each
 * value then takes the nearest of the 16 codes (the lower index on a tie). */
#include <math.h>

#include "iq4.h"
#include "quant.h"

static uint8_t nearest_code(float v, float d)
{
    int best = 0;
    float err = fabsf(cf_kvalues_mxfp4[0] * d - v);
    for (int i = 1; i < 16; i++) {
        float e = fabsf(cf_kvalues_mxfp4[i] * d - v);
        if (e < err) {
            err = e;
            best = i;
        }
    }
    return (uint8_t)best;
}

void cf_quantize_mxfp4(const float *x, void *dst, int64_t k)
{
    block_mxfp4 *y = dst;
    for (int64_t i = 0; i < k / QK32; i++, x += QK32) {
        const float amax = cf_absmax(x, QK32);
        /* floor(log2(amax)) exactly, from the binary exponent (llama.cpp's
         * log2f can round up just below a power of two) */
        int ex = 0;
        frexpf(amax, &ex);
        int e = amax > 0.0f ? ex - 1 - 2 + 127 : 0;
        y[i].e = (uint8_t)(e < 0 ? 0 : e);
        const float d = cf_e8m0_half(y[i].e);
        uint8_t q[QK32];
        for (int j = 0; j < QK32; j++)
            q[j] = nearest_code(x[j], d);
        cf_pack_nibbles(q, y[i].qs);
    }
}
