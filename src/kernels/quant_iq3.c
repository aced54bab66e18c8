/* Reference quantizers of IQ3_XXS and IQ3_S, in the manner of llama.cpp's
 * quantize_row_iq3_xxs_impl / quantize_row_iq3_s_impl: without an
 * importance matrix each weight counts as x^2; with one (as llama-imatrix
 * writes it; the tests give llama-quantize's to get its bytes) as
 * imatrix * sqrt(sigma^2 + x^2), sigma^2 twice the super-block's mean
 * square.  Per group of 32: the signs are split off, a search over scales
 * rounds the magnitudes to the grid (iq_search.h) and keeps the scale of
 * least weighted error, off-grid rounding is redone with that scale, and
 * the group scales are quantized against one super-block scale at the
 * end.  The one departure: a group of zeros in an IQ3_S block keeps its
 * own place (ggml then writes the next group's quants and signs over it). */
#include <pthread.h>

#include "iq3.h"
#include "iq_search.h"
#include "quant.h"

static int level_xxs(uint8_t v) { return v / 8; } /* 4, 12, .. 52, 62 */

static int level_s(uint8_t v) { return v / 2; } /* 1, 3, .. 15 */

static cf_iq_search search_xxs, search_s;
static bool ready_xxs, ready_s;
static pthread_once_t once_xxs = PTHREAD_ONCE_INIT, once_s = PTHREAD_ONCE_INIT;

static void init_xxs(void) { ready_xxs = cf_iq_search_init(&search_xxs, cf_iq3xxs_grid, 256, 4, 3, level_xxs, 2) == 0; }

static void init_s(void) { ready_s = cf_iq_search_init(&search_s, cf_iq3s_grid, 512, 4, 3, level_s, 3) == 0; }

typedef struct {
    const cf_iq_search *s;
    int steps; /* scales tried: (15 + 0.2 is) / max for |is| <= steps */
    /* IQ3_S re-rounds every group of 4 with the chosen scale (once one is
     * off the grid, or none of the tried scales fitted); IQ3_XXS only the
     * off-grid ones */
    bool refit_all;
} kind;

/* rounds v / scale to a level (v ~ scale * (2l + 1)) */
static inline int8_t level_of(float id, float v) { return (int8_t)clampi(nearest(0.5f * (id * v - 1)), 0, 7); }

/* The scale and grid entries (idx[8]) of one group of 32 magnitudes xval,
 * weights w and their square roots sw, largest magnitude max > 0. */
static float fit_group(const kind *k, const float *xval, const float *w, const float *sw, float max, int idx[8])
{
    int8_t L[32] = {0}, Laux[32];
    int idx_aux[8];
    bool on[8], on_aux[8];
    float best = 0, scale = max / 15;
    for (int j = 0; j < 8; j++) {
        idx[j] = 0; /* the point of levels 0 */
        on[j] = !k->refit_all;
    }
    for (int is = -k->steps; is <= k->steps; is++) {
        float id = (15 + (float)is * 0.2f) / max, this_scale = 1 / id;
        for (int j = 0; j < 8; j++) {
            for (int i = 4 * j; i < 4 * j + 4; i++)
                Laux[i] = level_of(id, xval[i]);
            idx_aux[j] = cf_iq_search_find(k->s, Laux + 4 * j, xval + 4 * j, sw + 4 * j, this_scale, &on_aux[j]);
        }
        float sumqx = 0, sumq2 = 0;
        for (int i = 0; i < 32; i++) {
            float q = (float)(2 * Laux[i] + 1);
            sumqx += w[i] * xval[i] * q;
            sumq2 += w[i] * q * q;
        }
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            memcpy(L, Laux, sizeof L);
            memcpy(idx, idx_aux, sizeof idx_aux);
            memcpy(on, on_aux, sizeof on);
        }
    }
    bool off = false;
    for (int j = 0; j < 8; j++)
        off |= !on[j];
    if (off && scale > 0) {
        float id = 1 / scale;
        for (int j = 0; j < 8; j++) {
            if (on[j] && !k->refit_all)
                continue;
            for (int i = 4 * j; i < 4 * j + 4; i++)
                L[i] = level_of(id, xval[i]);
            bool unused;
            idx[j] = cf_iq_search_find(k->s, L + 4 * j, xval + 4 * j, sw + 4 * j, scale, &unused);
        }
        float sumqx = 0, sumq2 = 0;
        for (int i = 0; i < 32; i++) {
            float q = (float)(2 * L[i] + 1);
            sumqx += w[i] * xval[i] * q;
            sumq2 += w[i] * q * q;
        }
        if (sumq2 > 0)
            scale = sumqx / sumq2;
    }
    return scale;
}

static float group_max(const float *xval)
{
    float max = xval[0];
    for (int i = 1; i < 32; i++)
        max = xval[i] > max ? xval[i] : max;
    return max;
}

/* The weights w of a group of 32 and their square roots sw; qw: the
 * group's importance (NULL: none), sigma2: the block's 2 * mean x^2. */
static void weights(const float *x, const float *qw, float sigma2, float *w, float *sw)
{
    for (int i = 0; i < 32; i++) {
        w[i] = qw ? qw[i] * sqrtf(sigma2 + x[i] * x[i]) : x[i] * x[i];
        sw[i] = sqrtf(w[i]);
    }
}

static float block_sigma2(const float *x)
{
    float sumx2 = 0;
    for (int i = 0; i < QK_K; i++)
        sumx2 += x[i] * x[i];
    return 2 * sumx2 / QK_K;
}

/* The 4-bit code l of each group scale against the block's d = max / 31
 * (scale ~ d * (2l + 1)); returns the stored d, F16, with ggml's fudge. */
static uint16_t scale_codes(const float scales[8], float max_scale, float fudge, int l[8])
{
    float d = max_scale / 31, id = 1 / d;
    for (int g = 0; g < 8; g++)
        l[g] = clampi(nearest(0.5f * (id * scales[g] - 1)), 0, 15);
    return cf_f32_to_f16(d * fudge);
}

/* IQ3_XXS stores 7 signs of 8: an odd number of minus signs is made even
 * by flipping the weight that matters least, whose magnitude then counts
 * as negative in the fit. */
static void block_xxs(const float *x, const float *qw, block_iq3_xxs *y)
{
    static const kind k = {&search_xxs, 15, false};
    float scales[8], max_scale = 0, sigma2 = block_sigma2(x);
    uint32_t words[8];
    memset(y, 0, sizeof *y);
    for (int g = 0; g < 8; g++) {
        const float *xb = x + 32 * g;
        float w[32], sw[32], xval[32];
        weights(xb, qw ? qw + 32 * g : NULL, sigma2, w, sw);
        uint32_t codes = 0;
        for (int j = 0; j < 4; j++) {
            unsigned s = 0;
            for (int i = 0; i < 8; i++) {
                xval[8 * j + i] = fabsf(xb[8 * j + i]);
                if (xb[8 * j + i] < 0)
                    s |= 1u << i;
            }
            if (__builtin_popcount(s) & 1) {
                const float *w8 = w + 8 * j, *x8 = xb + 8 * j;
                int imin = 0;
                for (int i = 1; i < 8; i++)
                    if (w8[i] * x8[i] * x8[i] < w8[imin] * x8[imin] * x8[imin])
                        imin = i;
                xval[8 * j + imin] = -xval[8 * j + imin];
                s ^= 1u << imin;
            }
            codes |= (s & 127) << (7 * j);
        }
        float max = group_max(xval);
        words[g] = 0;
        scales[g] = 0;
        if (max < 1e-8f)
            continue;
        int idx[8];
        float sc = fit_group(&k, xval, w, sw, max, idx);
        if (sc < 0) { /* flipped with all signs (ggml's guard; not seen) */
            sc = -sc;
            codes ^= 0x0FFFFFFF;
        }
        for (int j = 0; j < 8; j++)
            y->qs[8 * g + j] = (uint8_t)idx[j];
        words[g] = codes;
        scales[g] = sc;
        max_scale = sc > max_scale ? sc : max_scale;
    }
    if (max_scale == 0) {
        memset(y, 0, sizeof *y);
        return;
    }
    int l[8];
    y->d = scale_codes(scales, max_scale, 1.0125f, l);
    for (int g = 0; g < 8; g++) {
        words[g] |= (uint32_t)l[g] << 28;
        memcpy(y->qs + QK_K / 4 + 4 * g, &words[g], 4);
    }
}

static void block_s(const float *x, const float *qw, block_iq3_s *y)
{
    static const kind k = {&search_s, 9, true};
    float scales[8], max_scale = 0, sigma2 = block_sigma2(x);
    memset(y, 0, sizeof *y);
    for (int g = 0; g < 8; g++) {
        const float *xb = x + 32 * g;
        float w[32], sw[32], xval[32];
        weights(xb, qw ? qw + 32 * g : NULL, sigma2, w, sw);
        uint8_t signs[4] = {0};
        for (int i = 0; i < 32; i++) {
            xval[i] = fabsf(xb[i]);
            if (xb[i] < 0)
                signs[i / 8] |= (uint8_t)(1u << (i % 8));
        }
        float max = group_max(xval);
        scales[g] = 0;
        if (max == 0)
            continue;
        int idx[8];
        float sc = fit_group(&k, xval, w, sw, max, idx);
        if (sc < 0) { /* ggml's guard, as above */
            sc = -sc;
            for (int j = 0; j < 4; j++)
                signs[j] = (uint8_t)~signs[j];
        }
        for (int j = 0; j < 8; j++) {
            y->qs[8 * g + j] = (uint8_t)idx[j];
            y->qh[g] |= (uint8_t)((idx[j] >> 8) << j);
        }
        memcpy(y->signs + 4 * g, signs, 4);
        scales[g] = sc;
        max_scale = sc > max_scale ? sc : max_scale;
    }
    if (max_scale == 0) {
        memset(y, 0, sizeof *y);
        return;
    }
    int l[8];
    y->d = scale_codes(scales, max_scale, 1.033f, l);
    for (int g = 0; g < 8; g += 2)
        y->scales[g / 2] = (uint8_t)(l[g] | l[g + 1] << 4);
}

int cf_quantize_iq3_xxs(const float *x, void *dst, int64_t k, const float *imatrix)
{
    pthread_once(&once_xxs, init_xxs);
    if (!ready_xxs)
        return -1;
    for (int64_t i = 0; i < k / QK_K; i++)
        block_xxs(x + QK_K * i, imatrix ? imatrix + QK_K * i : NULL, (block_iq3_xxs *)dst + i);
    return 0;
}

int cf_quantize_iq3_s(const float *x, void *dst, int64_t k, const float *imatrix)
{
    pthread_once(&once_s, init_s);
    if (!ready_s)
        return -1;
    for (int64_t i = 0; i < k / QK_K; i++)
        block_s(x + QK_K * i, imatrix ? imatrix + QK_K * i : NULL, (block_iq3_s *)dst + i);
    return 0;
}
