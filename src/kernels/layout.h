/* CF_LAYOUT_R16's bytes, for the 32-element blocks that are an F16 d and
 * 16 bytes of nibbles (Q4_0, IQ4_NL).  A group of 16 rows holds, for each block u
 * in turn, 288 bytes: the 16 rows' d (row j's at 2j), then 4 chunks of 64
 * bytes, chunk c holding nibble bytes 4c..4c+3 of every row (row j's at
 * 4j).  So a 512-bit load of a chunk has, in 32-bit lane j, row j's
 * elements 4c..4c+3 (low nibbles) and 16+4c..16+4c+3 (high nibbles): one
 * broadcast of 4 activation bytes serves all 16 rows, and each row's
 * integer sum stays in its own lane.  Private to src/kernels. */
#ifndef CONFAB_KERNELS_LAYOUT_H
#define CONFAB_KERNELS_LAYOUT_H

#include <stdint.h>
#include <string.h>

#define R16_ROWS 16
#define R16_BLOCK 288 /* bytes of one block of the 16 rows */
#define R16_QS 32     /* where the chunks start in it */

/* Block u of row j of group g, in its plain 18 bytes, to b. */
static inline void r16_get(const uint8_t *g, int64_t u, int j, uint8_t b[18])
{
    const uint8_t *s = g + u * R16_BLOCK;
    memcpy(b, s + 2 * j, 2);
    for (int c = 0; c < 4; c++)
        memcpy(b + 2 + 4 * c, s + R16_QS + 64 * c + 4 * j, 4);
}

/* The plain block b as block u of row j of group g. */
static inline void r16_put(uint8_t *g, int64_t u, int j, const uint8_t b[18])
{
    uint8_t *s = g + u * R16_BLOCK;
    memcpy(s + 2 * j, b, 2);
    for (int c = 0; c < 4; c++)
        memcpy(s + R16_QS + 64 * c + 4 * j, b + 2 + 4 * c, 4);
}

#endif
