/* Portable dot products in the canonical order (internal.h): exact integer
 * sums per block, then 16 float accumulators.  What CONFAB_ISA=scalar runs,
 * and bit for bit what the SIMD kernels compute. */
#include <math.h>

#include "blocks.h"
#include "internal.h"
#include "layout.h"

typedef struct {
    float a[CF_CANON_LANES];
} canon;

static inline void canon_fma(canon *c, int64_t u, float x, float y)
{
    c->a[u & 15] = fmaf(x, y, c->a[u & 15]);
}

static float canon_sum(const canon *c)
{
    float r[8];
    for (int j = 0; j < 8; j++)
        r[j] = c->a[j] + c->a[j + 8];
    for (int j = 0; j < 4; j++)
        r[j] = r[j] + r[j + 4];
    for (int j = 0; j < 2; j++)
        r[j] = r[j] + r[j + 2];
    return r[0] + r[1];
}

static float dot_f32(int64_t k, const void *w, const void *x)
{
    const float *a = w, *b = x;
    canon c = {{0}};
    for (int64_t i = 0; i < k; i++)
        canon_fma(&c, i, a[i], b[i]);
    return canon_sum(&c);
}

/* F16 / BF16: both operands widened by cvt */
static inline float dot_half(int64_t k, const uint16_t *a, const uint16_t *b, float (*cvt)(uint16_t))
{
    canon c = {{0}};
    for (int64_t i = 0; i < k; i++)
        canon_fma(&c, i, cvt(a[i]), cvt(b[i]));
    return canon_sum(&c);
}

static float dot_f16(int64_t k, const void *w, const void *x) { return dot_half(k, w, x, cf_f16_to_f32); }

static float dot_bf16(int64_t k, const void *w, const void *x) { return dot_half(k, w, x, cf_bf16_to_f32); }

/* The exact integer sum of block i of each 32-element type. */
static int blk_q4_0(const void *w, const void *x, int64_t i)
{
    const block_q4_0 *a = (const block_q4_0 *)w + i;
    const block_q8_0 *b = (const block_q8_0 *)x + i;
    int sum = 0;
    for (int j = 0; j < 16; j++)
        sum += ((a->qs[j] & 0xF) - 8) * b->qs[j] + ((a->qs[j] >> 4) - 8) * b->qs[j + 16];
    return sum;
}

static int blk_q4_1(const void *w, const void *x, int64_t i)
{
    const block_q4_1 *a = (const block_q4_1 *)w + i;
    const block_q8_1 *b = (const block_q8_1 *)x + i;
    int sum = 0;
    for (int j = 0; j < 16; j++)
        sum += (a->qs[j] & 0xF) * b->qs[j] + (a->qs[j] >> 4) * b->qs[j + 16];
    return sum;
}

/* Element j (0..31) of a Q5 block: 4 bits from qs, the fifth from qh. */
static inline int q5_at(const uint8_t *qs, const uint8_t *qh, int j)
{
    int lo = j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4;
    return lo | (((qh[j / 8] >> (j % 8)) & 1) << 4);
}

static int blk_q5_0(const void *w, const void *x, int64_t i)
{
    const block_q5_0 *a = (const block_q5_0 *)w + i;
    const block_q8_0 *b = (const block_q8_0 *)x + i;
    int sum = 0;
    for (int j = 0; j < QK32; j++)
        sum += (q5_at(a->qs, a->qh, j) - 16) * b->qs[j];
    return sum;
}

static int blk_q5_1(const void *w, const void *x, int64_t i)
{
    const block_q5_1 *a = (const block_q5_1 *)w + i;
    const block_q8_1 *b = (const block_q8_1 *)x + i;
    int sum = 0;
    for (int j = 0; j < QK32; j++)
        sum += q5_at(a->qs, a->qh, j) * b->qs[j];
    return sum;
}

static int blk_q8_0(const void *w, const void *x, int64_t i)
{
    const block_q8_0 *a = (const block_q8_0 *)w + i;
    const block_q8_0 *b = (const block_q8_0 *)x + i;
    int sum = 0;
    for (int j = 0; j < QK32; j++)
        sum += a->qs[j] * b->qs[j];
    return sum;
}

/* The canonical float part: every block type starts with its F16 d, and
 * the min types (Q8_1) carry m (s) right after it. */
static float dot32(int64_t k, const void *w, const void *x, int (*blk)(const void *, const void *, int64_t),
                   size_t wsz, size_t xsz, int with_min)
{
    canon c = {{0}};
    for (int64_t i = 0; i < k / QK32; i++) {
        const uint8_t *wb = (const uint8_t *)w + i * wsz, *xb = (const uint8_t *)x + i * xsz;
        uint16_t dw, dx;
        memcpy(&dw, wb, 2);
        memcpy(&dx, xb, 2);
        canon_fma(&c, i, (float)blk(w, x, i), ldh(dw) * ldh(dx));
        if (with_min) {
            uint16_t m, s;
            memcpy(&m, wb + 2, 2);
            memcpy(&s, xb + 2, 2);
            canon_fma(&c, i, ldh(m), ldh(s));
        }
    }
    return canon_sum(&c);
}

static float dot_q4_0(int64_t k, const void *w, const void *x)
{
    return dot32(k, w, x, blk_q4_0, sizeof(block_q4_0), sizeof(block_q8_0), 0);
}

/* A matrix in CF_LAYOUT_R16, row by row: each block (bsz bytes) gathered
 * back into its plain bytes, then as dot32 (the types whose blocks are an
 * F16 d and 4-byte words, blk their integer sums). */
static inline void dot_r16(int64_t k, const void *w, int64_t groups, const void *x, float *y,
                           int (*blk)(const void *, const void *, int64_t), size_t bsz)
{
    const int64_t nb = k / QK32;
    for (int64_t i = 0; i < groups * R16_ROWS; i++) {
        const uint8_t *g = (const uint8_t *)w + i / R16_ROWS * nb * R16_ROWS * bsz;
        canon c = {{0}};
        for (int64_t u = 0; u < nb; u++) {
            union { block_q4_0 q4; block_q5_0 q5; block_q8_0 q8; } b; /* room for the largest */
            r16_get(g, u, (int)(i % R16_ROWS), (uint8_t *)&b, bsz, 2, 0);
            const block_q8_0 *xb = (const block_q8_0 *)x + u;
            canon_fma(&c, u, (float)blk(&b, xb, 0), ldh(b.q4.d) * ldh(xb->d));
        }
        y[i] = canon_sum(&c);
    }
}

static void dot_r16_q4_0(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    (void)p;
    dot_r16(k, w, groups, x, y, blk_q4_0, sizeof(block_q4_0));
}

static float dot_q4_1(int64_t k, const void *w, const void *x)
{
    return dot32(k, w, x, blk_q4_1, sizeof(block_q4_1), sizeof(block_q8_1), 1);
}

static float dot_q5_0(int64_t k, const void *w, const void *x)
{
    return dot32(k, w, x, blk_q5_0, sizeof(block_q5_0), sizeof(block_q8_0), 0);
}

static void dot_r16_q5_0(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    (void)p;
    dot_r16(k, w, groups, x, y, blk_q5_0, sizeof(block_q5_0));
}

static float dot_q5_1(int64_t k, const void *w, const void *x)
{
    return dot32(k, w, x, blk_q5_1, sizeof(block_q5_1), sizeof(block_q8_1), 1);
}

static float dot_q8_0(int64_t k, const void *w, const void *x)
{
    return dot32(k, w, x, blk_q8_0, sizeof(block_q8_0), sizeof(block_q8_0), 0);
}

static void dot_r16_q8_0(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    (void)p;
    dot_r16(k, w, groups, x, y, blk_q8_0, sizeof(block_q8_0));
}

/* The K-quants' super-block step: isum at d*dx, then msum at -(dmin*dx). */
static inline void canon_k(canon *c, int64_t i, int isum, int msum, float d, float dmin, float dx)
{
    canon_fma(c, i, (float)isum, d * dx);
    canon_fma(c, i, (float)msum, -(dmin * dx));
}

static float dot_q2_K(int64_t k, const void *w, const void *x)
{
    const block_q2_K *a = w;
    const block_q8_K *b = x;
    canon c = {{0}};
    for (int64_t i = 0; i < k / QK_K; i++) {
        int sum = 0, msum = 0;
        for (int e = 0; e < QK_K; e++) {
            int h = e / 128, sh = (e / 32) % 4, l = e % 32;
            int q = (a[i].qs[32 * h + l] >> (2 * sh)) & 3;
            sum += (a[i].scales[e / 16] & 0xF) * q * b[i].qs[e];
        }
        for (int g = 0; g < 16; g++)
            msum += (a[i].scales[g] >> 4) * b[i].bsums[g];
        canon_k(&c, i, sum, msum, ldh(a[i].d), ldh(a[i].dmin), b[i].d);
    }
    return canon_sum(&c);
}

static float dot_q3_K(int64_t k, const void *w, const void *x)
{
    const block_q3_K *a = w;
    const block_q8_K *b = x;
    canon c = {{0}};
    for (int64_t i = 0; i < k / QK_K; i++) {
        int sum = 0;
        for (int g = 0; g < 16; g++) {
            int gs = 0;
            for (int e = 16 * g; e < 16 * g + 16; e++) {
                int h = e / 128, sh = (e / 32) % 4, l = e % 32;
                int q = (a[i].qs[32 * h + l] >> (2 * sh)) & 3;
                if (!(a[i].hmask[l] & (1 << (e / 32))))
                    q -= 4;
                gs += q * b[i].qs[e];
            }
            sum += k3_scale(g, a[i].scales) * gs;
        }
        canon_fma(&c, i, (float)sum, ldh(a[i].d) * b[i].d);
    }
    return canon_sum(&c);
}

/* Q4_K, and Q5_K with its fifth bit (qh != NULL): the quant of element l
 * of group g. */
static inline int k4_quant(const uint8_t *qs, const uint8_t *qh, int g, int l)
{
    const uint8_t *q = qs + 32 * (g / 2);
    int v = g & 1 ? q[l] >> 4 : q[l] & 0xF;
    return qh ? v + (((qh[l] >> g) & 1) << 4) : v;
}

/* Super-block i of a Q4_K/Q5_K row (w: its bytes) into c. */
static inline void k4_step(canon *c, int64_t i, const uint8_t *w, size_t qs_off, int five, const block_q8_K *b)
{
    int sum = 0, msum = 0;
    for (int g = 0; g < 8; g++) {
        int sc, m, gs = 0;
        k4_scale_min(g, w + 4, &sc, &m);
        for (int l = 0; l < 32; l++)
            gs += k4_quant(w + qs_off, five ? w + 16 : NULL, g, l) * b->qs[32 * g + l];
        sum += sc * gs;
        msum += m * (b->bsums[2 * g] + b->bsums[2 * g + 1]);
    }
    uint16_t d, dmin;
    memcpy(&d, w, 2);
    memcpy(&dmin, w + 2, 2);
    canon_k(c, i, sum, msum, ldh(d), ldh(dmin), b->d);
}

static inline float dot_k4(int64_t k, const uint8_t *w, size_t wsz, size_t qs_off, int five, const block_q8_K *b)
{
    canon c = {{0}};
    for (int64_t i = 0; i < k / QK_K; i++, w += wsz)
        k4_step(&c, i, w, qs_off, five, b + i);
    return canon_sum(&c);
}

static float dot_q4_K(int64_t k, const void *w, const void *x)
{
    return dot_k4(k, w, sizeof(block_q4_K), offsetof(block_q4_K, qs), 0, x);
}

/* A K-quant matrix in CF_LAYOUT_R16 (super-blocks of wsz bytes, head
 * bytes, q6: Q6_K's arrangement), row by row as dot_r16: step adds a
 * super-block gathered back into its plain bytes. */
static inline void dot_r16_k(int64_t k, const void *w, int64_t groups, const void *x, float *y, size_t wsz,
                             size_t head, int q6,
                             void (*step)(canon *c, int64_t u, const uint8_t *blk, const block_q8_K *b))
{
    const int64_t nsb = k / QK_K;
    for (int64_t i = 0; i < groups * R16_ROWS; i++) {
        const uint8_t *g = (const uint8_t *)w + i / R16_ROWS * nsb * R16_ROWS * wsz;
        canon c = {{0}};
        for (int64_t u = 0; u < nsb; u++) {
            union { block_q4_K q4; block_q6_K q6; } b; /* room for the largest */
            r16_get(g, u, (int)(i % R16_ROWS), (uint8_t *)&b, wsz, head, q6);
            step(&c, u, (const uint8_t *)&b, (const block_q8_K *)x + u);
        }
        y[i] = canon_sum(&c);
    }
}

static void q4_K_step(canon *c, int64_t u, const uint8_t *blk, const block_q8_K *b)
{
    k4_step(c, u, blk, offsetof(block_q4_K, qs), 0, b);
}

static void dot_r16_q4_K(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    (void)p;
    dot_r16_k(k, w, groups, x, y, sizeof(block_q4_K), 0, 0, q4_K_step);
}

static float dot_q5_K(int64_t k, const void *w, const void *x)
{
    return dot_k4(k, w, sizeof(block_q5_K), offsetof(block_q5_K, qs), 1, x);
}

/* Super-block u of a Q6_K row (blk) into c. */
static void q6_K_step(canon *c, int64_t u, const uint8_t *blk, const block_q8_K *b)
{
    const block_q6_K *a = (const block_q6_K *)(const void *)blk;
    int sum = 0;
    for (int g = 0; g < 16; g++) {
        int gs = 0;
        for (int e = 16 * g; e < 16 * g + 16; e++) {
            int h = e / 128, sh = (e / 32) % 4, l = e % 32;
            uint8_t lo = a->ql[64 * h + 32 * (sh & 1) + l];
            int q = (sh & 2 ? lo >> 4 : lo & 0xF) | (((a->qh[32 * h + l] >> (2 * sh)) & 3) << 4);
            gs += (q - 32) * b->qs[e];
        }
        sum += a->scales[g] * gs;
    }
    canon_fma(c, u, (float)sum, ldh(a->d) * b->d);
}

static float dot_q6_K(int64_t k, const void *w, const void *x)
{
    canon c = {{0}};
    for (int64_t i = 0; i < k / QK_K; i++)
        q6_K_step(&c, i, (const uint8_t *)((const block_q6_K *)w + i), (const block_q8_K *)x + i);
    return canon_sum(&c);
}

static void dot_r16_q6_K(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    (void)p;
    dot_r16_k(k, w, groups, x, y, sizeof(block_q6_K), 2, 1, q6_K_step);
}

#include "dot_iq12_scalar.inc"
#include "dot_iq3_scalar.inc"
#include "dot_iq4_scalar.inc"

void cf_fill_scalar(cf_kernel_table *t)
{
    t->dot[CF_TYPE_F32] = dot_f32;
    t->dot[CF_TYPE_F16] = dot_f16;
    t->dot[CF_TYPE_BF16] = dot_bf16;
    t->dot[CF_TYPE_Q4_0] = dot_q4_0;
    t->dot_r16[CF_TYPE_Q4_0] = dot_r16_q4_0;
    t->dot[CF_TYPE_Q4_1] = dot_q4_1;
    t->dot[CF_TYPE_Q5_0] = dot_q5_0;
    t->dot_r16[CF_TYPE_Q5_0] = dot_r16_q5_0;
    t->dot[CF_TYPE_Q5_1] = dot_q5_1;
    t->dot[CF_TYPE_Q8_0] = dot_q8_0;
    t->dot_r16[CF_TYPE_Q8_0] = dot_r16_q8_0;
    t->dot[CF_TYPE_Q2_K] = dot_q2_K;
    t->dot[CF_TYPE_Q3_K] = dot_q3_K;
    t->dot[CF_TYPE_Q4_K] = dot_q4_K;
    t->dot_r16[CF_TYPE_Q4_K] = dot_r16_q4_K;
    t->dot[CF_TYPE_Q5_K] = dot_q5_K;
    t->dot[CF_TYPE_Q6_K] = dot_q6_K;
    t->dot_r16[CF_TYPE_Q6_K] = dot_r16_q6_K;
    fill_iq12_scalar(t);
    t->dot[CF_TYPE_IQ3_XXS] = dot_iq3_xxs;
    t->dot[CF_TYPE_IQ3_S] = dot_iq3_s;
    fill_scalar_iq4(t);
}
