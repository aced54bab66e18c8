/* Reference quantizers of the K-quants, in the manner of llama.cpp's
 * (no importance matrix): each group's scale (and min) is fitted by a small
 * search that minimizes a weighted error, the group scales are themselves
 * quantized against one super-block scale, and the values are then
 * re-rounded with the scales actually stored. */
#include <math.h>
#include <stdbool.h>

#include "blocks.h"
#include "quant.h"

#define ALL_ZERO 1e-15f

/* Fits x ~ scale * L + min with L in [0, nmax] and min <= 0, weights w,
 * trying nstep+1 scales around the range's and solving the weighted least
 * squares for (scale, min) at each; keeps the one of least error (absolute
 * when mad, else squared).  Returns the scale; *neg_min = -min. */
static float fit_scale_min(int n, int nmax, const float *x, const float *w, uint8_t *L,
                           float *neg_min, float rmin, float rdelta, int nstep, bool mad)
{
    float lo = x[0], hi = x[0], sw = 0, sx = 0;
    for (int i = 0; i < n; i++) {
        lo = fminf(lo, x[i]);
        hi = fmaxf(hi, x[i]);
        sw += w[i];
        sx += w[i] * x[i];
    }
    if (lo > 0)
        lo = 0;
    if (hi == lo) {
        memset(L, 0, (size_t)n);
        *neg_min = -lo;
        return 0.0f;
    }
    float iscale = nmax / (hi - lo), scale = 1 / iscale, best = 0;
    for (int i = 0; i < n; i++) {
        L[i] = (uint8_t)clampi(nearest(iscale * (x[i] - lo)), 0, nmax);
        float e = scale * L[i] + lo - x[i];
        best += w[i] * (mad ? fabsf(e) : e * e);
    }
    uint8_t aux[32];
    for (int is = 0; is <= nstep; is++) {
        iscale = (rmin + rdelta * is + nmax) / (hi - lo);
        float sl = 0, sl2 = 0, sxl = 0;
        for (int i = 0; i < n; i++) {
            int l = clampi(nearest(iscale * (x[i] - lo)), 0, nmax);
            aux[i] = (uint8_t)l;
            sl += w[i] * l;
            sl2 += w[i] * l * l;
            sxl += w[i] * l * x[i];
        }
        float det = sw * sl2 - sl * sl;
        if (det <= 0)
            continue;
        float s = (sw * sxl - sx * sl) / det;
        float m = (sl2 * sx - sl * sxl) / det;
        if (m > 0) {
            m = 0;
            s = sxl / sl2;
        }
        float err = 0;
        for (int i = 0; i < n; i++) {
            float e = s * aux[i] + m - x[i];
            err += w[i] * (mad ? fabsf(e) : e * e);
        }
        if (err < best) {
            memcpy(L, aux, (size_t)n);
            best = err;
            scale = s;
            lo = m;
        }
    }
    *neg_min = -lo;
    return scale;
}

/* Symmetric fit x ~ scale * L, L in [-nmax, nmax-1], weights x^2: start
 * from the extreme value, then move single quants while that raises the
 * explained energy (sum w x l)^2 / sum w l^2.  L is returned biased by
 * +nmax.  Used for Q3_K's groups. */
static float fit_sym_refine(int n, int nmax, const float *x, int8_t *L)
{
    float vmax = cf_signed_absmax(x, n);
    if (fabsf(vmax) < ALL_ZERO) {
        memset(L, 0, (size_t)n);
        return 0;
    }
    float iscale = -nmax / vmax, slx = 0, sl2 = 0;
    for (int i = 0; i < n; i++) {
        int l = clampi(nearest(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t)l;
        float w = x[i] * x[i];
        slx += w * x[i] * l;
        sl2 += w * l * l;
    }
    for (int pass = 0; pass < 5; pass++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            float w = x[i] * x[i];
            float a = slx - w * x[i] * L[i];
            if (a <= 0)
                continue;
            float b = sl2 - w * L[i] * L[i];
            int l = clampi(nearest(x[i] * b / a), -nmax, nmax - 1);
            if (l == L[i])
                continue;
            a += w * x[i] * l;
            b += w * l * l;
            if (b > 0 && a * a * sl2 > slx * slx * b) {
                L[i] = (int8_t)l;
                slx = a;
                sl2 = b;
                changed++;
            }
        }
        if (!changed)
            break;
    }
    for (int i = 0; i < n; i++)
        L[i] = (int8_t)(L[i] + nmax);
    return sl2 > 0 ? slx / sl2 : 0;
}

/* Symmetric fit with weights x^2 trying 19 scales around the extreme
 * value's; the least-squares scale of the best.  Used for Q6_K's groups. */
static float fit_sym_search(int n, int nmax, const float *x)
{
    float vmax = cf_signed_absmax(x, n);
    if (fabsf(vmax) < ALL_ZERO)
        return 0;
    float best_scale = 0, best = -1;
    for (int is = -9; is <= 9; is++) {
        float iscale = -(nmax + 0.1f * is) / vmax;
        float slx = 0, sl2 = 0;
        for (int i = 0; i < n; i++) {
            int l = clampi(nearest(iscale * x[i]), -nmax, nmax - 1);
            float w = x[i] * x[i];
            slx += w * x[i] * l;
            sl2 += w * l * l;
        }
        /* maximizing slx^2/sl2 minimizes the weighted squared error */
        if (sl2 > 0 && (best < 0 || slx * slx > best * sl2)) {
            best_scale = slx / sl2;
            best = best_scale * slx;
        }
    }
    return best_scale;
}

/* Pack 256 2-bit values as Q2_K/Q3_K store them. */
static void pack_2bit(const uint8_t *L, uint8_t *qs)
{
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 32; l++) {
            const uint8_t *p = L + 128 * h + l;
            qs[32 * h + l] = (uint8_t)(p[0] | (p[32] << 2) | (p[64] << 4) | (p[96] << 6));
        }
}

void cf_quantize_q2_K(const float *x, void *dst, int64_t k)
{
    block_q2_K *y = dst;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        uint8_t L[QK_K];
        float w[16], scales[16], mins[16], max_scale = 0, max_min = 0;
        for (int g = 0; g < 16; g++) {
            for (int l = 0; l < 16; l++)
                w[l] = fabsf(x[16 * g + l]);
            scales[g] = fit_scale_min(16, 3, x + 16 * g, w, L + 16 * g, &mins[g], -0.5f, 0.1f,
                                      15, true);
            max_scale = fmaxf(max_scale, scales[g]);
            max_min = fmaxf(max_min, mins[g]);
        }
        float is = max_scale > 0 ? 15 / max_scale : 0, im = max_min > 0 ? 15 / max_min : 0;
        for (int g = 0; g < 16; g++)
            y[i].scales[g] = (uint8_t)(clampi(nearest(is * scales[g]), 0, 15) |
                                       (clampi(nearest(im * mins[g]), 0, 15) << 4));
        y[i].d = cf_f32_to_f16(max_scale / 15);
        y[i].dmin = cf_f32_to_f16(max_min / 15);
        for (int g = 0; g < 16; g++) {
            float d = ldh(y[i].d) * (y[i].scales[g] & 0xF);
            if (d == 0)
                continue;
            float dm = ldh(y[i].dmin) * (y[i].scales[g] >> 4);
            for (int l = 0; l < 16; l++)
                L[16 * g + l] = (uint8_t)clampi(nearest((x[16 * g + l] + dm) / d), 0, 3);
        }
        pack_2bit(L, y[i].qs);
    }
}

void cf_quantize_q3_K(const float *x, void *dst, int64_t k)
{
    block_q3_K *y = dst;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        int8_t L[QK_K];
        float scales[16];
        for (int g = 0; g < 16; g++)
            scales[g] = fit_sym_refine(16, 4, x + 16 * g, L + 16 * g);
        float smax = cf_signed_absmax(scales, 16);
        memset(y[i].scales, 0, sizeof y[i].scales);
        if (smax != 0) {
            float iscale = -32 / smax;
            for (int g = 0; g < 16; g++) {
                int l = clampi(nearest(iscale * scales[g]), -32, 31) + 32;
                if (g < 8)
                    y[i].scales[g] = (uint8_t)(l & 0xF);
                else
                    y[i].scales[g - 8] |= (uint8_t)((l & 0xF) << 4);
                y[i].scales[8 + g % 4] |= (uint8_t)((l >> 4) << (2 * (g / 4)));
            }
            y[i].d = cf_f32_to_f16(1 / iscale);
        } else {
            y[i].d = 0;
        }
        for (int g = 0; g < 16; g++) {
            float d = ldh(y[i].d) * k3_scale(g, y[i].scales);
            if (d == 0)
                continue;
            for (int l = 0; l < 16; l++)
                L[16 * g + l] = (int8_t)(clampi(nearest(x[16 * g + l] / d), -4, 3) + 4);
        }
        memset(y[i].hmask, 0, sizeof y[i].hmask);
        uint8_t low[QK_K];
        for (int e = 0; e < QK_K; e++) {
            int v = L[e];
            if (v > 3) {
                y[i].hmask[e % 32] |= (uint8_t)(1 << (e / 32));
                v -= 4;
            }
            low[e] = (uint8_t)v;
        }
        pack_2bit(low, y[i].qs);
    }
}

/* Q4_K and Q5_K: 8 groups of 32, 6-bit scales and mins; dd = F16 d, dmin. */
static void quantize_k4(const float *x, int nmax, float rmin, int nstep, uint16_t dd[2],
                        uint8_t sc[12], uint8_t *L)
{
    float w[32], scales[8], mins[8], max_scale = 0, max_min = 0;
    for (int g = 0; g < 8; g++) {
        const float *xg = x + 32 * g;
        float s2 = 0;
        for (int l = 0; l < 32; l++)
            s2 += xg[l] * xg[l];
        float av = sqrtf(s2 / 32);
        for (int l = 0; l < 32; l++)
            w[l] = av + fabsf(xg[l]);
        scales[g] = fit_scale_min(32, nmax, xg, w, L + 32 * g, &mins[g], rmin, 0.1f, nstep, false);
        max_scale = fmaxf(max_scale, scales[g]);
        max_min = fmaxf(max_min, mins[g]);
    }
    float is = max_scale > 0 ? 63 / max_scale : 0, im = max_min > 0 ? 63 / max_min : 0;
    memset(sc, 0, 12);
    for (int g = 0; g < 8; g++) {
        int ls = clampi(nearest(is * scales[g]), 0, 63), lm = clampi(nearest(im * mins[g]), 0, 63);
        if (g < 4) {
            sc[g] = (uint8_t)ls;
            sc[g + 4] = (uint8_t)lm;
        } else {
            sc[g + 4] = (uint8_t)((ls & 0xF) | ((lm & 0xF) << 4));
            sc[g - 4] |= (uint8_t)((ls >> 4) << 6);
            sc[g] |= (uint8_t)((lm >> 4) << 6);
        }
    }
    dd[0] = cf_f32_to_f16(max_scale / 63);
    dd[1] = cf_f32_to_f16(max_min / 63);
    for (int g = 0; g < 8; g++) {
        int s, m;
        k4_scale_min(g, sc, &s, &m);
        float d = ldh(dd[0]) * s;
        if (d == 0)
            continue;
        float dm = ldh(dd[1]) * m;
        for (int l = 0; l < 32; l++)
            L[32 * g + l] = (uint8_t)clampi(nearest((x[32 * g + l] + dm) / d), 0, nmax);
    }
}

void cf_quantize_q4_K(const float *x, void *dst, int64_t k)
{
    block_q4_K *y = dst;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        uint8_t L[QK_K];
        uint16_t dd[2];
        quantize_k4(x, 15, -1.0f, 20, dd, y[i].scales, L);
        y[i].d = dd[0];
        y[i].dmin = dd[1];
        for (int h = 0; h < 4; h++)
            for (int l = 0; l < 32; l++)
                y[i].qs[32 * h + l] = (uint8_t)(L[64 * h + l] | (L[64 * h + 32 + l] << 4));
    }
}

void cf_quantize_q5_K(const float *x, void *dst, int64_t k)
{
    block_q5_K *y = dst;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        uint8_t L[QK_K];
        uint16_t dd[2];
        quantize_k4(x, 31, -0.5f, 15, dd, y[i].scales, L);
        y[i].d = dd[0];
        y[i].dmin = dd[1];
        memset(y[i].qh, 0, sizeof y[i].qh);
        for (int h = 0; h < 4; h++)
            for (int l = 0; l < 32; l++) {
                int a = L[64 * h + l], b = L[64 * h + 32 + l];
                y[i].qh[l] |= (uint8_t)(((a >> 4) << (2 * h)) | ((b >> 4) << (2 * h + 1)));
                y[i].qs[32 * h + l] = (uint8_t)((a & 0xF) | ((b & 0xF) << 4));
            }
    }
}

void cf_quantize_q6_K(const float *x, void *dst, int64_t k)
{
    block_q6_K *y = dst;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        float scales[16];
        for (int g = 0; g < 16; g++)
            scales[g] = fit_sym_search(16, 32, x + 16 * g);
        float smax = cf_signed_absmax(scales, 16);
        memset(&y[i], 0, sizeof y[i]);
        if (fabsf(smax) < ALL_ZERO)
            continue;
        float iscale = -128 / smax;
        y[i].d = cf_f32_to_f16(1 / iscale);
        for (int g = 0; g < 16; g++)
            y[i].scales[g] = (int8_t)clampi(nearest(iscale * scales[g]), -128, 127);
        uint8_t L[QK_K];
        for (int g = 0; g < 16; g++) {
            float d = ldh(y[i].d) * y[i].scales[g];
            for (int l = 0; l < 16; l++)
                L[16 * g + l] =
                    (uint8_t)(d != 0 ? clampi(nearest(x[16 * g + l] / d), -32, 31) + 32 : 32);
        }
        for (int h = 0; h < 2; h++)
            for (int l = 0; l < 32; l++) {
                const uint8_t *p = L + 128 * h + l;
                y[i].ql[64 * h + l] = (uint8_t)((p[0] & 0xF) | ((p[64] & 0xF) << 4));
                y[i].ql[64 * h + 32 + l] = (uint8_t)((p[32] & 0xF) | ((p[96] & 0xF) << 4));
                y[i].qh[32 * h + l] =
                    (uint8_t)((p[0] >> 4) | ((p[32] >> 4) << 2) | ((p[64] >> 4) << 4) | ((p[96] >> 4) << 6));
            }
    }
}
