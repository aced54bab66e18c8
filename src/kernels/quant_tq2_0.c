/* The reference TQ2_0 quantizer, llama.cpp's quantize_row_tq2_0_ref: the
 * super-block's largest magnitude is the scale and every value rounds
 * (halves away from zero) to -1, 0 or 1 times it. */
#include <math.h>

#include "blocks.h"
#include "quant.h"

void cf_quantize_tq2_0(const float *x, void *dst, int64_t k)
{
    block_tq2_0 *y = dst;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        const float amax = cf_absmax(x, QK_K);
        const float id = amax != 0.0f ? 1.0f / amax : 0.0f;
        y[i].d = cf_f32_to_f16(amax);
        memset(y[i].qs, 0, sizeof y[i].qs);
        for (int e = 0; e < QK_K; e++) {
            int q = (int)lroundf(x[e] * id) + 1;
            y[i].qs[32 * (e / 128) + e % 32] |= (uint8_t)((q & 3) << 2 * ((e / 32) % 4));
        }
    }
}
