/* Reference dequantization of the 2- and 1-bit grid i-quants, each value
 * computed in float as ggml's dequantize_row_* computes it. */
#include "iq12.h"

/* 8 values of an IQ2 group: magnitudes from the grid, signs from a mask */
static inline void iq2_group(float *y, float db, uint64_t grid, unsigned signs)
{
    for (int j = 0; j < 8; j++)
        y[j] = db * iq_grid_u8(grid, j) * (signs >> j & 1 ? -1.0f : 1.0f);
}

/* 8 values of an IQ1 group: grid value plus the shift, times the scale */
static inline void iq1_group(float *y, float dl, uint64_t grid, float delta)
{
    for (int j = 0; j < 8; j++)
        y[j] = dl * (iq_grid_s8(grid, j) + delta);
}

void cf_deq_iq2_xxs(const void *src, float *y, int64_t nb)
{
    const block_iq2_xxs *b = src;
    for (int64_t i = 0; i < nb; i++, b++) {
        const float d = ldh(b->d);
        const uint8_t *q = (const uint8_t *)b + offsetof(block_iq2_xxs, qs);
        for (int ib = 0; ib < 8; ib++, q += 8) {
            const uint32_t s = iq_rd32(q + 4);
            const float db = d * (0.5f + (s >> 28)) * 0.25f;
            for (int l = 0; l < 4; l++, y += 8)
                iq2_group(y, db, cf_iq2xxs_grid[q[l]], cf_iq_signs(s >> 7 * l & 127));
        }
    }
}

void cf_deq_iq2_xs(const void *src, float *y, int64_t nb)
{
    const block_iq2_xs *b = src;
    for (int64_t i = 0; i < nb; i++, b++) {
        const float d = ldh(b->d);
        const uint8_t *q = (const uint8_t *)b + offsetof(block_iq2_xs, qs);
        for (int ib = 0; ib < 8; ib++) {
            const float db[2] = {d * (0.5f + (b->scales[ib] & 0xf)) * 0.25f, d * (0.5f + (b->scales[ib] >> 4)) * 0.25f};
            for (int l = 0; l < 4; l++, y += 8) {
                const unsigned v = q[8 * ib + 2 * l] | q[8 * ib + 2 * l + 1] << 8;
                iq2_group(y, db[l / 2], cf_iq2xs_grid[v & 511], cf_iq_signs(v >> 9));
            }
        }
    }
}

void cf_deq_iq2_s(const void *src, float *y, int64_t nb)
{
    const block_iq2_s *b = src;
    for (int64_t i = 0; i < nb; i++, b++) {
        const float d = ldh(b->d);
        for (int ib = 0; ib < 8; ib++) {
            const float db[2] = {d * (0.5f + (b->scales[ib] & 0xf)) * 0.25f, d * (0.5f + (b->scales[ib] >> 4)) * 0.25f};
            for (int l = 0; l < 4; l++, y += 8)
                iq2_group(y, db[l / 2], cf_iq2s_grid[iq2s_index(b, ib, l)], b->qs[QK_K / 8 + 4 * ib + l]);
        }
    }
}

void cf_deq_iq1_s(const void *src, float *y, int64_t nb)
{
    const block_iq1_s *b = src;
    for (int64_t i = 0; i < nb; i++, b++) {
        const float d = ldh(b->d);
        for (int ib = 0; ib < 8; ib++) {
            const unsigned qh = iq1s_qh(b, ib);
            const float dl = d * (2 * (qh >> 12 & 7) + 1);
            const float delta = qh & 0x8000 ? -0.125f : 0.125f;
            for (int l = 0; l < 4; l++, y += 8)
                iq1_group(y, dl, cf_iq1s_grid[iq1s_index(b, ib, l)], delta);
        }
    }
}

void cf_deq_iq1_m(const void *src, float *y, int64_t nb)
{
    const block_iq1_m *b = src;
    for (int64_t i = 0; i < nb; i++, b++) {
        const float d = ldh(iq1m_d(b));
        for (int ib = 0; ib < 8; ib++) {
            const float dl[2] = {d * iq1m_scale(b, ib, 0), d * iq1m_scale(b, ib, 1)};
            for (int l = 0; l < 4; l++, y += 8)
                iq1_group(y, dl[l / 2], cf_iq1s_grid[iq1m_index(b, ib, l)], iq1m_neg(b, ib, l) ? -0.125f : 0.125f);
        }
    }
}
