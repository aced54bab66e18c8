/* Reference dequantization of IQ3_XXS and IQ3_S: grid magnitudes times
 * signs times the group scale, with ggml's float operations. */
#include "iq3.h"
#include "iq_common.h"

void cf_dequantize_iq3_xxs(const void *src, float *y, int64_t nb)
{
    const block_iq3_xxs *b = src;
    for (int64_t i = 0; i < nb; i++, b++) {
        float d = ldh(b->d);
        for (int g = 0; g < 8; g++) {
            uint32_t w = iq3xxs_word(b, g);
            float db = d * (0.5f + (float)(w >> 28)) * 0.5f;
            for (int j = 0; j < 8; j++) {
                uint32_t q = cf_iq3xxs_grid[b->qs[8 * g + j]];
                uint8_t s = cf_iq_signs((w >> (7 * (j / 2))) & 127);
                for (int e = 0; e < 4; e++)
                    *y++ = db * (float)((q >> (8 * e)) & 0xFF) * ((s >> (4 * (j & 1) + e)) & 1 ? -1.f : 1.f);
            }
        }
    }
}

void cf_dequantize_iq3_s(const void *src, float *y, int64_t nb)
{
    const block_iq3_s *b = src;
    for (int64_t i = 0; i < nb; i++, b++) {
        float d = ldh(b->d);
        for (int g = 0; g < 8; g++) {
            float db = d * (float)iq3s_scale(b, g);
            for (int j = 0; j < 8; j++) {
                uint32_t q = cf_iq3s_grid[iq3s_index(b, g, j)];
                uint8_t s = b->signs[4 * g + j / 2];
                for (int e = 0; e < 4; e++)
                    *y++ = db * (float)((q >> (8 * e)) & 0xFF) * ((s >> (4 * (j & 1) + e)) & 1 ? -1.f : 1.f);
            }
        }
    }
}
