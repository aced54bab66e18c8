/* CF_LAYOUT_R16's bytes.  A group of 16 rows holds, for each block u in
 * turn, block u of the 16 rows: first the head of each block (row j's at
 * head * j), then the rest of each in 4-byte words, word w of row j at
 * 16 head + 64 w + 4 j.  So a 512-bit load of a word has row j's in 32-bit
 * lane j: one broadcast of 4 activation bytes serves all 16 rows, and each
 * row's integer sum stays in its own lane.
 *   Q4_0, IQ4_NL: the head is the F16 d, then 4 chunks of nibbles (288
 *     bytes a block): chunk c holds row j's nibble bytes 4c..4c+3, so
 *     elements 4c..4c+3 (low nibbles) and 16+4c..16+4c+3 (high nibbles).
 *   Q5_0: the same with the 16 rows' qh words (bit e: the fifth bit of
 *     element e) between the d and the chunks (352 bytes a block).
 *   Q8_0: the F16 d, then 8 chunks of quants (544 bytes a block): chunk c
 *     holds row j's elements 4c..4c+3.
 *   Q4_K: no head (2304 bytes a super-block): word 0 holds d and dmin,
 *     words 1..3 the 12 bytes of packed scales and mins, then 32 chunks of
 *     nibbles, chunk c holding qs bytes 4c..4c+3: elements 64h + 4i..64h +
 *     4i + 3 (low nibbles) and 32 more (high), h = c / 8, i = c % 8.
 *   Q6_K: the head is the F16 d, which ends the plain block, and the
 *     words go in the order a kernel reads them (3360 bytes a
 *     super-block): the 4 chunks of the int8 scales, then for step
 *     i = 8h + c (h = 0, 1; c = 0..7) ql chunks 16h + c and 16h + 8 + c
 *     and qh chunk 8h + c.  Chunk c of ql or qh holds its bytes 4c..4c+3:
 *     a step gives, for l = 4c..4c+3, elements 128h + l (+ 32, + 64, + 96)
 *     as the low nibbles of the first ql chunk, of the second, the high
 *     nibbles of the first, of the second, each with qh's bits 0-1, 2-3,
 *     4-5, 6-7.
 * Private to src/kernels. */
#ifndef CONFAB_KERNELS_LAYOUT_H
#define CONFAB_KERNELS_LAYOUT_H

#include <stdint.h>
#include <string.h>

#include "blocks.h"
#include "confab/kernels.h"

/* A block of 16 rows takes the bytes of their 16 plain blocks. */
#define R16_ROWS 16
#define R16_QS 32         /* where the chunks start in a block of 16 rows (Q4_0, IQ4_NL, Q8_0) */
#define R16_Q5_QH 32      /* where Q5_0's qh words start in it */
#define R16_Q5_QS 96      /* and its chunks */
#define R16_K4_BLOCK 2304 /* bytes of a Q4_K super-block of 16 rows */
#define R16_K4_SCALES 64  /* where the scale words start in it */
#define R16_K4_QS 256
#define R16_Q6_BLOCK 3360 /* bytes of a Q6_K super-block of 16 rows */
#define R16_Q6_SC 32      /* where its scale chunks start */
#define R16_Q6_STEPS 288  /* and its 16 steps of 3 chunks */
#define R16_Q6_STEP 192

/* Plain word p of a Q6_K block (ql, qh, scales) in a group: its word
 * (layout.h's order). */
static inline size_t r16_q6_pos(size_t p)
{
    if (p >= 48)
        return p - 48;
    const size_t h = p < 32 ? p / 16 : (p - 32) / 8, c = p < 32 ? p % 8 : (p - 32) % 8;
    return 4 + 3 * (8 * h + c) + (p < 32 ? p % 16 / 8 : 2);
}

/* Block u of rows j0..j0 + nj - 1 of group g (blocks of bsz bytes, head
 * bytes first, or (q6) Q6_K's arrangement), in their plain bytes, row
 * j0 + i's to b + i * stride: a word's line once for all the rows. */
static inline void r16_get_rows(const uint8_t *g, int64_t u, int j0, int nj, uint8_t *b, size_t stride, size_t bsz,
                                size_t head, int q6)
{
    const uint8_t *s = g + u * R16_ROWS * bsz;
    const size_t at = q6 ? bsz - head : 0, words = q6 ? 0 : head;
    for (int i = 0; i < nj; i++)
        memcpy(b + i * stride + at, s + head * (j0 + i), head);
    for (size_t w = 0; w < (bsz - head) / 4; w++) {
        const uint8_t *line = s + R16_ROWS * head + 64 * (q6 ? r16_q6_pos(w) : w) + 4 * j0;
        for (int i = 0; i < nj; i++)
            memcpy(b + i * stride + words + 4 * w, line + 4 * i, 4);
    }
}

/* Block u of row j of group g, in its plain bytes, to b. */
static inline void r16_get(const uint8_t *g, int64_t u, int j, uint8_t *b, size_t bsz, size_t head, int q6)
{
    r16_get_rows(g, u, j, 1, b, 0, bsz, head, q6);
}

/* The plain block b as block u of row j of group g. */
static inline void r16_put(uint8_t *g, int64_t u, int j, const uint8_t *b, size_t bsz, size_t head, int q6)
{
    uint8_t *s = g + u * R16_ROWS * bsz;
    const size_t at = q6 ? bsz - head : 0, words = q6 ? 0 : head;
    memcpy(s + head * j, b + at, head);
    for (size_t w = 0; w < (bsz - head) / 4; w++)
        memcpy(s + R16_ROWS * head + 64 * (q6 ? r16_q6_pos(w) : w) + 4 * j, b + words + 4 * w, 4);
}

/* The block bytes of a type that has R16 (0 if none), its head's, and
 * whether it is arranged as Q6_K. */
static inline size_t r16_block_size(cf_type t, size_t *head, int *q6)
{
    *head = t == CF_TYPE_Q4_K ? 0 : 2;
    *q6 = t == CF_TYPE_Q6_K;
    return t == CF_TYPE_Q4_0 ? sizeof(block_q4_0) : t == CF_TYPE_IQ4_NL ? sizeof(block_iq4_nl)
         : t == CF_TYPE_Q5_0 ? sizeof(block_q5_0) : t == CF_TYPE_Q8_0 ? sizeof(block_q8_0)
         : t == CF_TYPE_Q4_K ? sizeof(block_q4_K) : t == CF_TYPE_Q6_K ? sizeof(block_q6_K) : 0;
}

#endif
