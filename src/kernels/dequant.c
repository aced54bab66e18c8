/* Reference dequantization: each block's values exactly as ggml defines
 * them (x = d*q [+/- min]), in float. */
#include "blocks.h"
#include "iq12.h"
#include "iq3.h"
#include "iq4.h"

static void deq_q4_0(const block_q4_0 *b, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, b++, y += QK32) {
        float d = ldh(b->d);
        for (int j = 0; j < 16; j++) {
            y[j] = ((b->qs[j] & 0xF) - 8) * d;
            y[j + 16] = ((b->qs[j] >> 4) - 8) * d;
        }
    }
}

static void deq_q4_1(const block_q4_1 *b, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, b++, y += QK32) {
        float d = ldh(b->d), m = ldh(b->m);
        for (int j = 0; j < 16; j++) {
            y[j] = (b->qs[j] & 0xF) * d + m;
            y[j + 16] = (b->qs[j] >> 4) * d + m;
        }
    }
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void deq_q5_0(const block_q5_0 *b, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, b++, y += QK32) {
        float d = ldh(b->d);
        uint32_t qh = rd32(b->qh);
        for (int j = 0; j < 16; j++) {
            int lo = (b->qs[j] & 0xF) | (((qh >> j) & 1) << 4);
            int hi = (b->qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
            y[j] = (lo - 16) * d;
            y[j + 16] = (hi - 16) * d;
        }
    }
}

static void deq_q5_1(const block_q5_1 *b, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, b++, y += QK32) {
        float d = ldh(b->d), m = ldh(b->m);
        uint32_t qh = rd32(b->qh);
        for (int j = 0; j < 16; j++) {
            int lo = (b->qs[j] & 0xF) | (((qh >> j) & 1) << 4);
            int hi = (b->qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
            y[j] = lo * d + m;
            y[j + 16] = hi * d + m;
        }
    }
}

static void deq_q8_0(const block_q8_0 *b, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, b++, y += QK32) {
        float d = ldh(b->d);
        for (int j = 0; j < QK32; j++)
            y[j] = b->qs[j] * d;
    }
}

static void deq_q8_1(const block_q8_1 *b, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, b++, y += QK32) {
        float d = ldh(b->d);
        for (int j = 0; j < QK32; j++)
            y[j] = b->qs[j] * d;
    }
}

static void deq_q2_K(const block_q2_K *b, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, b++) {
        float d = ldh(b->d), dmin = ldh(b->dmin);
        for (int e = 0; e < QK_K; e++) {
            int h = e / 128, s = (e / 32) % 4, l = e % 32;
            int q = (b->qs[32 * h + l] >> (2 * s)) & 3;
            uint8_t sc = b->scales[e / 16];
            *y++ = d * (sc & 0xF) * q - dmin * (sc >> 4);
        }
    }
}

static void deq_q3_K(const block_q3_K *b, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, b++) {
        float d = ldh(b->d);
        for (int e = 0; e < QK_K; e++) {
            int h = e / 128, s = (e / 32) % 4, l = e % 32;
            int q = (b->qs[32 * h + l] >> (2 * s)) & 3;
            if (!(b->hmask[l] & (1 << (e / 32))))
                q -= 4;
            *y++ = d * k3_scale(e / 16, b->scales) * q;
        }
    }
}

/* Q4_K, and Q5_K with its fifth bit (five): blocks of wsz bytes. */
static void deq_k4(const uint8_t *b, size_t wsz, int five, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, b += wsz) {
        uint16_t d16, m16;
        memcpy(&d16, b, 2);
        memcpy(&m16, b + 2, 2);
        float d = ldh(d16), dmin = ldh(m16);
        const uint8_t *qh = b + 16, *qs = b + (five ? 48 : 16);
        for (int g = 0; g < 8; g++) {
            int sc, m;
            k4_scale_min(g, b + 4, &sc, &m);
            float dl = d * sc, ml = dmin * m;
            const uint8_t *q = qs + 32 * (g / 2);
            for (int l = 0; l < 32; l++) {
                int v = g & 1 ? q[l] >> 4 : q[l] & 0xF;
                if (five)
                    v += ((qh[l] >> g) & 1) << 4;
                *y++ = dl * v - ml;
            }
        }
    }
}

/* The 6-bit quant of element e (0..255) of a Q6_K block, bias removed. */
static inline int q6_at(const block_q6_K *b, int e)
{
    int h = e / 128, s = (e / 32) % 4, l = e % 32;
    uint8_t lo = b->ql[64 * h + 32 * (s & 1) + l];
    int q = (s & 2 ? lo >> 4 : lo & 0xF) | (((b->qh[32 * h + l] >> (2 * s)) & 3) << 4);
    return q - 32;
}

static void deq_q6_K(const block_q6_K *b, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, b++) {
        float d = ldh(b->d);
        for (int e = 0; e < QK_K; e++)
            *y++ = d * b->scales[e / 16] * q6_at(b, e);
    }
}

static void deq_q8_K(const block_q8_K *b, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, b++)
        for (int j = 0; j < QK_K; j++)
            *y++ = b->d * b->qs[j];
}

int cf_dequantize_row(cf_type t, const void *src, float *dst, int64_t k)
{
    const cf_type_traits *tt = cf_type_get((uint32_t)t);
    if (!tt || k < 0 || k % tt->blck_size)
        return -1;
    int64_t nb = k / tt->blck_size;
    switch (t) {
    case CF_TYPE_F32: memcpy(dst, src, (size_t)k * sizeof(float)); return 0;
    case CF_TYPE_F16: cf_f16_to_f32_row(src, dst, k); return 0;
    case CF_TYPE_BF16: cf_bf16_to_f32_row(src, dst, k); return 0;
    case CF_TYPE_Q4_0: deq_q4_0(src, dst, nb); return 0;
    case CF_TYPE_Q4_1: deq_q4_1(src, dst, nb); return 0;
    case CF_TYPE_Q5_0: deq_q5_0(src, dst, nb); return 0;
    case CF_TYPE_Q5_1: deq_q5_1(src, dst, nb); return 0;
    case CF_TYPE_Q8_0: deq_q8_0(src, dst, nb); return 0;
    case CF_TYPE_Q8_1: deq_q8_1(src, dst, nb); return 0;
    case CF_TYPE_Q2_K: deq_q2_K(src, dst, nb); return 0;
    case CF_TYPE_Q3_K: deq_q3_K(src, dst, nb); return 0;
    case CF_TYPE_Q4_K: deq_k4(src, sizeof(block_q4_K), 0, dst, nb); return 0;
    case CF_TYPE_Q5_K: deq_k4(src, sizeof(block_q5_K), 1, dst, nb); return 0;
    case CF_TYPE_Q6_K: deq_q6_K(src, dst, nb); return 0;
    case CF_TYPE_Q8_K: deq_q8_K(src, dst, nb); return 0;
    case CF_TYPE_IQ2_XXS: cf_deq_iq2_xxs(src, dst, nb); return 0;
    case CF_TYPE_IQ2_XS: cf_deq_iq2_xs(src, dst, nb); return 0;
    case CF_TYPE_IQ3_XXS: cf_dequantize_iq3_xxs(src, dst, nb); return 0;
    case CF_TYPE_IQ3_S: cf_dequantize_iq3_s(src, dst, nb); return 0;
    case CF_TYPE_IQ2_S: cf_deq_iq2_s(src, dst, nb); return 0;
    case CF_TYPE_IQ1_S: cf_deq_iq1_s(src, dst, nb); return 0;
    case CF_TYPE_IQ1_M: cf_deq_iq1_m(src, dst, nb); return 0;
    case CF_TYPE_IQ4_NL: cf_dequantize_iq4_nl(src, dst, nb); return 0;
    case CF_TYPE_IQ4_XS: cf_dequantize_iq4_xs(src, dst, nb); return 0;
    case CF_TYPE_MXFP4: cf_dequantize_mxfp4(src, dst, nb); return 0;
    case CF_TYPE_TQ2_0: cf_dequantize_tq2_0(src, dst, nb); return 0;
    default: return -1;
    }
}
