/* CF_LAYOUT_R16 (layout.h) at aarch64's dotprod level for Q8_0, Q4_0,
 * IQ4_NL and Q4_K: the layout the level multiplies those matrices in, and its
 * decoding kernel (N <= 2; gemm_neon.inc's panels read the layout for
 * N >= 3).
 *
 * A 16-byte load of a chunk holds 4 bytes of 4 rows, which one SDOT by
 * lane multiplies by 4 bytes of the activations: each row's integer sum
 * stays in its lane, the group's 16 rows in 4 vectors, and one block's
 * activations, loaded once, serve all 16 (the per-row dots reduce each
 * block's sum across lanes instead).  llama.cpp's ARM repacking
 * interleaves 4 rows by 4 bytes for SDOT likewise; a group of R16 is four
 * such side by side, so that the layout is x86's and every level reads
 * it.  The 16 rows' canonical accumulators (internal.h) are 64 vectors,
 * more than the registers: they stay on the stack, a load and a store a
 * block. */
#include "confab/target.h"
#include "internal.h"

#if defined(__aarch64__)
CF_TARGET_BEGIN("arch=armv8.2-a+dotprod")
#include "blocks.h"
#include "iq4.h"
#include "layout.h"
#include "neon_util.h"

enum r16t { R_Q8_0, R_Q4_0, R_IQ4_NL };

/* The canonical tree over a group's 16 accumulators (acc[j][v]: lanes
 * rows 4v .. 4v + 3), its 16 rows into y. */
static inline void canon_tree16(float32x4_t acc[16][4], float *y)
{
    for (int s = 8; s >= 1; s /= 2)
        for (int j = 0; j < s; j++)
            for (int v = 0; v < 4; v++)
                acc[j][v] = vaddq_f32(acc[j][v], acc[j + s][v]);
    for (int v = 0; v < 4; v++)
        vst1q_f32(y + 4 * v, acc[0][v]);
}

/* One group of 16 rows (nb blocks each) times the Q8_0 row x into
 * y[0..15]: block u into accumulator u % 16, lane j of vector v row 4v + j,
 * then the canonical tree. */
static inline __attribute__((always_inline)) void r16_group(int64_t nb, const uint8_t *w, const uint8_t *x, float *y,
                                                            enum r16t t)
{
    float32x4_t acc[16][4];
    for (int j = 0; j < 16; j++)
        for (int v = 0; v < 4; v++)
            acc[j][v] = vdupq_n_f32(0.0f);
    const size_t bsz = R16_ROWS * (t == R_Q8_0 ? sizeof(block_q8_0) : sizeof(block_q4_0));
    const int8x16_t book = vld1q_s8(cf_kvalues_iq4nl);
    for (int64_t u = 0; u < nb; u++) {
        const uint8_t *b = w + u * bsz, *xb = x + u * sizeof(block_q8_0);
        const int8x16_t x0 = vld1q_s8((const int8_t *)xb + 2), x1 = vld1q_s8((const int8_t *)xb + 18);
        int32x4_t is[4];
        for (int v = 0; v < 4; v++)
            is[v] = vdupq_n_s32(0);
        if (t == R_Q8_0) {
            /* chunk c: elements 4c .. 4c + 3 */
#define CHUNK(c, xv, lane)                                                                         \
    for (int v = 0; v < 4; v++)                                                                    \
        is[v] = vdotq_laneq_s32(is[v], vld1q_s8((const int8_t *)b + R16_QS + 64 * (c) + 16 * v), xv, lane);
            CHUNK(0, x0, 0) CHUNK(1, x0, 1) CHUNK(2, x0, 2) CHUNK(3, x0, 3)
            CHUNK(4, x1, 0) CHUNK(5, x1, 1) CHUNK(6, x1, 2) CHUNK(7, x1, 3)
#undef CHUNK
        } else {
            /* chunk c: elements 4c .. 4c + 3 in the low nibbles, 16 + 4c ..
             * in the high ones; Q4_0's - 8 taken off the sum as 8 sum x */
#define CHUNK(c)                                                                                   \
    for (int v = 0; v < 4; v++) {                                                                  \
        const uint8x16_t q = vld1q_u8(b + R16_QS + 64 * (c) + 16 * v);                             \
        int8x16_t lo = lo_nibbles(q), hi = hi_nibbles(q);                                          \
        if (t == R_IQ4_NL) {                                                                       \
            lo = vqtbl1q_s8(book, vreinterpretq_u8_s8(lo));                                        \
            hi = vqtbl1q_s8(book, vreinterpretq_u8_s8(hi));                                        \
        }                                                                                          \
        is[v] = vdotq_laneq_s32(vdotq_laneq_s32(is[v], lo, x0, c), hi, x1, c);                     \
    }
            CHUNK(0) CHUNK(1) CHUNK(2) CHUNK(3)
#undef CHUNK
            if (t == R_Q4_0) {
                const int32x4_t bias = vdupq_n_s32(8 * (vaddlvq_s8(x0) + vaddlvq_s8(x1)));
                for (int v = 0; v < 4; v++)
                    is[v] = vsubq_s32(is[v], bias);
            }
        }
        const float dx = f16_at(xb);
        const float16x8_t d0 = vreinterpretq_f16_u8(vld1q_u8(b)), d1 = vreinterpretq_f16_u8(vld1q_u8(b + 16));
        const float32x4_t d[4] = {vcvt_f32_f16(vget_low_f16(d0)), vcvt_high_f32_f16(d0), vcvt_f32_f16(vget_low_f16(d1)),
                                  vcvt_high_f32_f16(d1)};
        float32x4_t *a = acc[u % 16];
        for (int v = 0; v < 4; v++)
            a[v] = vfmaq_f32(a[v], vcvtq_f32_s32(is[v]), vmulq_n_f32(d[v], dx));
    }
    canon_tree16(acc, y);
}

static inline __attribute__((always_inline)) void dot_r16(int64_t k, const void *w, int64_t groups, const void *x,
                                                          float *y, enum r16t t)
{
    const int64_t nb = k / QK32;
    const size_t gb = (size_t)nb * R16_ROWS * (t == R_Q8_0 ? sizeof(block_q8_0) : sizeof(block_q4_0));
    for (int64_t g = 0; g < groups; g++)
        r16_group(nb, (const uint8_t *)w + g * gb, x, y + R16_ROWS * g, t);
}

static void dot_r16_q8_0(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    (void)p;
    dot_r16(k, w, groups, x, y, R_Q8_0);
}

static void dot_r16_q4_0(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    (void)p;
    dot_r16(k, w, groups, x, y, R_Q4_0);
}

static void dot_r16_iq4_nl(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    (void)p;
    dot_r16(k, w, groups, x, y, R_IQ4_NL);
}

/* One group of 16 rows of Q4_K (nsb super-blocks each) times the Q8_K
 * row x into y[0..15], lane by lane dotK's canonical steps: each group of
 * 32 summed by SDOT by lane (chunk 8h + i: elements 64h + 4i .. in its low
 * nibbles, 64h + 32 + 4i .. in its high ones: groups 2h and 2h + 1), then
 * times its scale; msum the mins times the groups' bsums. */
static void r16_k4_group(int64_t nsb, const uint8_t *w, const uint8_t *x, float *y)
{
    float32x4_t acc[16][4];
    for (int j = 0; j < 16; j++)
        for (int v = 0; v < 4; v++)
            acc[j][v] = vdupq_n_f32(0.0f);
    for (int64_t u = 0; u < nsb; u++) {
        const uint8_t *b = w + u * R16_K4_BLOCK;
        const block_q8_K *xb = (const block_q8_K *)(const void *)x + u;
        const int16_t *bs = q8k_bsums(xb);
        int16_t pairs[8];
        vst1q_s16(pairs, vpaddq_s16(vld1q_s16(bs), vld1q_s16(bs + 8)));
        uint32x4_t sc[4][2], mn[4][2];
        int32x4_t isum[4], msum[4];
        for (int v = 0; v < 4; v++) {
            r16_k4_scales_mins(b, v, sc[v], mn[v]);
            isum[v] = msum[v] = vdupq_n_s32(0);
        }
        for (int h = 0; h < 4; h++) {
            const int8x16_t x0 = vld1q_s8(xb->qs + 64 * h), x1 = vld1q_s8(xb->qs + 64 * h + 16);
            const int8x16_t x2 = vld1q_s8(xb->qs + 64 * h + 32), x3 = vld1q_s8(xb->qs + 64 * h + 48);
            int32x4_t lo[4], hi[4];
            for (int v = 0; v < 4; v++)
                lo[v] = hi[v] = vdupq_n_s32(0);
#define CHUNK(i, xl, xh, lane)                                                                     \
    for (int v = 0; v < 4; v++) {                                                                  \
        const uint8x16_t q = vld1q_u8(b + R16_K4_QS + 64 * (8 * h + (i)) + 16 * v);                \
        lo[v] = vdotq_laneq_s32(lo[v], lo_nibbles(q), xl, lane);                                   \
        hi[v] = vdotq_laneq_s32(hi[v], hi_nibbles(q), xh, lane);                                   \
    }
            CHUNK(0, x0, x2, 0) CHUNK(1, x0, x2, 1) CHUNK(2, x0, x2, 2) CHUNK(3, x0, x2, 3)
            CHUNK(4, x1, x3, 0) CHUNK(5, x1, x3, 1) CHUNK(6, x1, x3, 2) CHUNK(7, x1, x3, 3)
#undef CHUNK
            for (int v = 0; v < 4; v++) {
                isum[v] = vmlaq_s32(isum[v], lo[v], lane_byte(sc[v][h / 2], 2 * h % 4));
                isum[v] = vmlaq_s32(isum[v], hi[v], lane_byte(sc[v][h / 2], (2 * h + 1) % 4));
            }
        }
        for (int g = 0; g < 8; g++)
            for (int v = 0; v < 4; v++)
                msum[v] = vmlaq_n_s32(msum[v], lane_byte(mn[v][g / 4], g % 4), pairs[g]);
        float dx;
        memcpy(&dx, xb, 4);
        float32x4_t *a = acc[u % 16];
        for (int v = 0; v < 4; v++) {
            float32x4_t d, dmin;
            r16_k4_d_dmin(b, v, &d, &dmin);
            a[v] = vfmaq_f32(a[v], vcvtq_f32_s32(isum[v]), vmulq_n_f32(d, dx));
            a[v] = vfmaq_f32(a[v], vcvtq_f32_s32(msum[v]), vnegq_f32(vmulq_n_f32(dmin, dx)));
        }
    }
    canon_tree16(acc, y);
}

static void dot_r16_q4_K(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    (void)p;
    const int64_t nsb = k / QK_K;
    for (int64_t g = 0; g < groups; g++)
        r16_k4_group(nsb, (const uint8_t *)w + g * nsb * R16_K4_BLOCK, x, y + R16_ROWS * g);
}

void cf_fill_r16_dotprod(cf_kernel_table *t)
{
    t->dot_r16[CF_TYPE_Q8_0] = dot_r16_q8_0;
    t->dot_r16[CF_TYPE_Q4_0] = dot_r16_q4_0;
    t->dot_r16[CF_TYPE_IQ4_NL] = dot_r16_iq4_nl;
    t->dot_r16[CF_TYPE_Q4_K] = dot_r16_q4_K;
    t->layout[CF_TYPE_Q8_0] = t->layout[CF_TYPE_Q4_0] = t->layout[CF_TYPE_IQ4_NL] = CF_LAYOUT_R16;
    t->layout[CF_TYPE_Q4_K] = CF_LAYOUT_R16;
}
CF_TARGET_END
#else
void cf_fill_r16_dotprod(cf_kernel_table *t) { (void)t; }
#endif
