/* IQ2_S's quantizer, which (unlike the other 2- and 1-bit grid types) needs
 * no importance matrix: ggml's quantize_row_iq2_s_impl without one.  Per 16
 * weights: the signs apart, a scan of 19 scales rounds the magnitudes to
 * the lattice of levels (1, 3, 5) * scale, each group of 8 to its grid
 * entry or the best of those nearest to it, and keeps the scale of least
 * weighted error; the block's d then quantizes the 16 scales to 4 bits. */
#include <math.h>
#include <pthread.h>

#include "iq12.h"
#include "iq_search.h"
#include "quant.h"

static cf_iq_search search;
static bool ready;
static pthread_once_t search_once = PTHREAD_ONCE_INIT;

/* the grid's magnitudes 8, 25, 43 are the levels 0, 1, 2 */
static int grid_level(uint8_t v) { return v == 8 ? 0 : v == 25 ? 1 : 2; }

static void search_init(void) { ready = cf_iq_search_init(&search, cf_iq2s_grid, 1024, 8, 2, grid_level, 1) == 0; }

static inline int8_t level(float id, float x) { return (int8_t)clampi(nearest(0.5f * (id * x - 1)), 0, 2); }

/* the weighted fit of x by the levels L: sum w x q and sum w q^2, q = 2 L + 1 */
static void fit(const float *x, const float *w, const int8_t *L, float *sumqx, float *sumq2)
{
    *sumqx = *sumq2 = 0;
    for (int i = 0; i < 16; i++) {
        const float q = 2 * L[i] + 1;
        *sumqx += w[i] * x[i] * q;
        *sumq2 += w[i] * q * q;
    }
}

/* 16 weights x (sigma2: twice the block's mean square) -> the grid entries
 * of its two groups of 8, signs and the scale (0 for a group of zeros) */
static float quantize16(const float *x, float sigma2, int idx[2], uint8_t signs[2])
{
    float w[16], wr[16], xv[16], max = 0;
    signs[0] = signs[1] = 0;
    for (int i = 0; i < 16; i++) {
        w[i] = 0.25f * sigma2 + x[i] * x[i];
        wr[i] = sqrtf(w[i]);
        xv[i] = fabsf(x[i]);
        if (x[i] < 0)
            signs[i / 8] |= (uint8_t)(1 << i % 8);
        max = xv[i] > max ? xv[i] : max;
    }
    if (max < 1e-8f) {
        signs[0] = signs[1] = 0;
        return 0;
    }
    /* until a scale fits: the point of levels 0, entry 0 */
    int8_t L[16] = {0};
    float best = 0, scale = max / 5, sumqx, sumq2;
    bool on[2] = {true, true};
    idx[0] = idx[1] = 0;
    for (int is = -9; is <= 9; is++) {
        const float id = (5 + is * 0.1f) / max;
        int8_t La[16];
        int idx_a[2];
        bool on_a[2];
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < 8; i++)
                La[8 * k + i] = level(id, xv[8 * k + i]);
            idx_a[k] = cf_iq_search_find(&search, La + 8 * k, xv + 8 * k, wr + 8 * k, 1 / id, &on_a[k]);
        }
        fit(xv, w, La, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            memcpy(L, La, 16);
            for (int k = 0; k < 2; k++) {
                idx[k] = idx_a[k];
                on[k] = on_a[k];
            }
        }
    }
    /* the groups that were off the grid again, at the scale found */
    if ((!on[0] || !on[1]) && scale > 0) {
        for (int k = 0; k < 2; k++) {
            if (on[k])
                continue;
            for (int i = 0; i < 8; i++)
                L[8 * k + i] = level(1 / scale, xv[8 * k + i]);
            idx[k] = cf_iq_search_find(&search, L + 8 * k, xv + 8 * k, wr + 8 * k, scale, &on[k]);
        }
        fit(xv, w, L, &sumqx, &sumq2);
        if (sumq2 > 0)
            scale = sumqx / sumq2;
    }
    return scale; /* >= 0: the magnitudes and levels are */
}

static void quantize_block(const float *x, block_iq2_s *y)
{
    memset(y, 0, sizeof *y);
    float sumx2 = 0, scales[16], max_scale = 0;
    for (int i = 0; i < QK_K; i++)
        sumx2 += x[i] * x[i];
    for (int ib = 0; ib < 16; ib++) {
        int idx[2];
        uint8_t signs[2];
        scales[ib] = quantize16(x + 16 * ib, 2 * sumx2 / QK_K, idx, signs);
        if (scales[ib] == 0)
            continue;
        for (int k = 0; k < 2; k++) {
            const int g = 2 * ib + k, e = idx[k];
            y->qs[g] = (uint8_t)e;
            y->qh[g / 4] |= (uint8_t)((e >> 8) << 2 * (g % 4));
            y->qs[QK_K / 8 + g] = signs[k];
        }
        max_scale = scales[ib] > max_scale ? scales[ib] : max_scale;
    }
    if (max_scale == 0)
        return;
    /* ggml stores d a little smaller than the largest scale over 31 */
    const float d = max_scale / 31, id = 1 / d;
    y->d = cf_f32_to_f16(d * 0.9875f);
    for (int ib = 0; ib < 16; ib++) {
        const int l = clampi(nearest(0.5f * (id * scales[ib] - 1)), 0, 15);
        y->scales[ib / 2] |= (uint8_t)(l << 4 * (ib % 2));
    }
}

int cf_quantize_iq2_s(const float *x, void *dst, int64_t k)
{
    pthread_once(&search_once, search_init);
    if (!ready)
        return -1;
    for (int64_t i = 0; i < k / QK_K; i++)
        quantize_block(x + QK_K * i, (block_iq2_s *)dst + i);
    return 0;
}
