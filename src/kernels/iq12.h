/* The i-quants whose groups of 8 weights are entries of a 2- or 1-bit grid:
 * IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M.  Their grids, the bit fields
 * every kernel reads the same way, the reference dequantization and IQ2_S's
 * quantizer.  Private to src/kernels. */
#ifndef CONFAB_KERNELS_IQ12_H
#define CONFAB_KERNELS_IQ12_H

#include <stdint.h>

#include "blocks.h"
#include "iq_common.h"

extern const uint64_t cf_iq2xxs_grid[256];
extern const uint64_t cf_iq2xs_grid[512];
extern const uint64_t cf_iq2s_grid[1024];
extern const uint64_t cf_iq1s_grid[2048];

/* Byte j of a grid entry (element j of its group). */
static inline int iq_grid_u8(uint64_t g, int j) { return (uint8_t)(g >> 8 * j); }
static inline int iq_grid_s8(uint64_t g, int j) { return (int8_t)(g >> 8 * j); }

static inline uint32_t iq_rd32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The four 7-bit sign codes of an IQ2_XXS sign word, one per byte. */
static inline uint32_t iq2xxs_codes(uint32_t s)
{
    return (s & 0x7f) | (s << 1 & 0x7f00) | (s << 2 & 0x7f0000) | (s << 3 & 0x7f000000);
}

/* The grid index of group l (0..3) of 32 ib of an IQ2_S block. */
static inline int iq2s_index(const block_iq2_s *b, int ib, int l)
{
    return b->qs[4 * ib + l] | ((b->qh[ib] << (8 - 2 * l)) & 0x300);
}

/* IQ1_S's 16-bit field of 32 ib (packed member, read by copy). */
static inline unsigned iq1s_qh(const block_iq1_s *b, int ib)
{
    uint16_t v;
    memcpy(&v, (const uint8_t *)b + offsetof(block_iq1_s, qh) + 2 * ib, 2);
    return v;
}

static inline int iq1s_index(const block_iq1_s *b, int ib, int l)
{
    return b->qs[4 * ib + l] | ((iq1s_qh(b, ib) >> 3 * l) & 7) << 8;
}

/* IQ1_M: group l (0..3) of 32 ib: its grid index, and whether its shift
 * is negative. */
static inline int iq1m_index(const block_iq1_m *b, int ib, int l)
{
    return b->qs[4 * ib + l] | ((b->qh[2 * ib + l / 2] >> 4 * (l & 1)) & 7) << 8;
}

static inline int iq1m_neg(const block_iq1_m *b, int ib, int l)
{
    return (b->qh[2 * ib + l / 2] >> (4 * (l & 1) + 3)) & 1;
}

/* The 16-bit scale word w (0..3) of an IQ1_M block. */
static inline unsigned iq1m_word(const block_iq1_m *b, int w)
{
    return (unsigned)b->scales[2 * w] | (unsigned)b->scales[2 * w + 1] << 8;
}

/* IQ1_M's F16 d, the top nibbles of the four scale words. */
static inline uint16_t iq1m_d(const block_iq1_m *b)
{
    return (uint16_t)(iq1m_word(b, 0) >> 12 | (iq1m_word(b, 1) >> 8 & 0xf0) | (iq1m_word(b, 2) >> 4 & 0xf00) |
                      (iq1m_word(b, 3) & 0xf000));
}

/* IQ1_M's odd scale 2s + 1 of 16 elements h (0, 1) of 32 ib. */
static inline int iq1m_scale(const block_iq1_m *b, int ib, int h)
{
    return 2 * ((iq1m_word(b, ib / 2) >> (6 * (ib & 1) + 3 * h)) & 7) + 1;
}

/* Reference dequantization of nb super-blocks. */
void cf_deq_iq2_xxs(const void *src, float *y, int64_t nb);
void cf_deq_iq2_xs(const void *src, float *y, int64_t nb);
void cf_deq_iq2_s(const void *src, float *y, int64_t nb);
void cf_deq_iq1_s(const void *src, float *y, int64_t nb);
void cf_deq_iq1_m(const void *src, float *y, int64_t nb);

#endif
