/* What the IQ3_XXS and IQ3_S kernels share: the grids (grid_iq3xxs.c,
 * grid_iq3s.c) and how a block's fields pick from them.  Private to
 * src/kernels. */
#ifndef CONFAB_KERNELS_IQ3_H
#define CONFAB_KERNELS_IQ3_H

#include "blocks.h"

extern const uint32_t cf_iq3xxs_grid[256];
extern const uint32_t cf_iq3s_grid[512];

/* Group g's word of an IQ3_XXS block: its 4 sign codes (bits 7j..7j+6
 * for weights 8j..8j+7) and its scale s (bits 28..31). */
static inline uint32_t iq3xxs_word(const block_iq3_xxs *b, int g)
{
    uint32_t v;
    memcpy(&v, b->qs + QK_K / 4 + 4 * g, 4);
    return v;
}

/* The grid index of entry j (weights 4j..4j+3) of group g of an IQ3_S block */
static inline int iq3s_index(const block_iq3_s *b, int g, int j)
{
    return b->qs[8 * g + j] | ((b->qh[g] >> j) & 1) << 8;
}

/* 2s + 1 for group g of an IQ3_S block */
static inline int iq3s_scale(const block_iq3_s *b, int g)
{
    return 2 * ((b->scales[g / 2] >> (4 * (g & 1))) & 0xF) + 1;
}

/* Reference dequantization of nb blocks (dequant_iq3.c). */
void cf_dequantize_iq3_xxs(const void *src, float *y, int64_t nb);
void cf_dequantize_iq3_s(const void *src, float *y, int64_t nb);

#endif
