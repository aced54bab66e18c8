/* Reference dequantization of IQ4_NL, IQ4_XS, MXFP4 and TQ2_0, as ggml's
 * dequantize_row_* define them. */
#include "iq4.h"

/* 32 codebook weights from 16 bytes of nibbles (element j low nibble of
 * qs[j], element j + 16 the high one) times d */
static void nl4_block(const int8_t *kv, const uint8_t *qs, float d, float *y)
{
    for (int j = 0; j < 16; j++) {
        y[j] = d * kv[qs[j] & 0xF];
        y[j + 16] = d * kv[qs[j] >> 4];
    }
}

void cf_dequantize_iq4_nl(const void *src, float *y, int64_t nb)
{
    const block_iq4_nl *b = src;
    for (int64_t i = 0; i < nb; i++, y += QK32)
        nl4_block(cf_kvalues_iq4nl, b[i].qs, ldh(b[i].d), y);
}

void cf_dequantize_iq4_xs(const void *src, float *y, int64_t nb)
{
    const block_iq4_xs *b = src;
    for (int64_t i = 0; i < nb; i++) {
        float d = ldh(b[i].d);
        for (int g = 0; g < 8; g++, y += 32)
            nl4_block(cf_kvalues_iq4nl, b[i].qs + 16 * g, d * iq4xs_scale(&b[i], g), y);
    }
}

void cf_dequantize_mxfp4(const void *src, float *y, int64_t nb)
{
    const block_mxfp4 *b = src;
    for (int64_t i = 0; i < nb; i++, y += QK32)
        nl4_block(cf_kvalues_mxfp4, b[i].qs, cf_e8m0_half(b[i].e), y);
}

void cf_dequantize_tq2_0(const void *src, float *y, int64_t nb)
{
    const block_tq2_0 *b = src;
    for (int64_t i = 0; i < nb; i++) {
        float d = ldh(b[i].d);
        for (int e = 0; e < QK_K; e++) {
            int h = e / 128, s = (e / 32) % 4, l = e % 32;
            *y++ = d * (((b[i].qs[32 * h + l] >> (2 * s)) & 3) - 1);
        }
    }
}
