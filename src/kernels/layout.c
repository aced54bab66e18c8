/* Rearranging matrices into the layouts some kernels read faster
 * (layout.h), and reading rows back out of them. */
#include <stdlib.h>

#include "blocks.h"
#include "internal.h"
#include "layout.h"

cf_layout cf_layout_best(cf_type t)
{
    return (unsigned)t < CF_TYPE_COUNT ? cf_kernels()->layout[t] : CF_LAYOUT_PLAIN;
}

static bool has_layout(cf_type t, cf_layout layout, int64_t k)
{
    size_t head;
    int last;
    return layout == CF_LAYOUT_R16 && r16_block_size(t, &head, &last) && k > 0 && k % cf_type_get(t)->blck_size == 0;
}

int cf_repack(cf_type t, cf_layout layout, void *w, int64_t k, int64_t rows)
{
    if (layout == CF_LAYOUT_PLAIN)
        return 0;
    if (!has_layout(t, layout, k))
        return -1;
    size_t head;
    int last;
    const size_t rb = cf_row_bytes(t, k), bsz = r16_block_size(t, &head, &last);
    uint8_t *plain = malloc(R16_ROWS * rb);
    if (!plain)
        return -1;
    for (int64_t r = 0; r + R16_ROWS <= rows; r += R16_ROWS) {
        uint8_t *g = (uint8_t *)w + r * rb;
        memcpy(plain, g, R16_ROWS * rb);
        for (int j = 0; j < R16_ROWS; j++)
            for (size_t u = 0; u < rb / bsz; u++)
                r16_put(g, (int64_t)u, j, plain + j * rb + u * bsz, bsz, head, last);
    }
    free(plain);
    return 0;
}

int cf_unpack_row(cf_type t, cf_layout layout, const void *w, int64_t k, int64_t rows, int64_t r, void *dst)
{
    const size_t rb = cf_row_bytes(t, k);
    if (layout != CF_LAYOUT_PLAIN && !has_layout(t, layout, k))
        return -1;
    if (layout == CF_LAYOUT_PLAIN || r >= rows / R16_ROWS * R16_ROWS) {
        memcpy(dst, (const uint8_t *)w + r * rb, rb);
        return 0;
    }
    size_t head;
    int last;
    const size_t bsz = r16_block_size(t, &head, &last);
    const uint8_t *g = (const uint8_t *)w + r / R16_ROWS * R16_ROWS * rb;
    for (size_t u = 0; u < rb / bsz; u++)
        r16_get(g, (int64_t)u, (int)(r % R16_ROWS), (uint8_t *)dst + u * bsz, bsz, head, last);
    return 0;
}
