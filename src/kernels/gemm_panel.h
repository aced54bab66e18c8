/* The panels of the tiled GEMMs (N >= 3), which every x86 level's tiles
 * read: gemm_panel.c unpacks weight rows into them and lays out the
 * activations' side information; gemm_avx512.c and gemm_avx2.c hold the
 * micro-kernels.
 *
 * A panel of 16 weight rows (the whole K) holds unsigned 8-bit quants
 * interleaved so that 64 bytes hold 4 consecutive k of all 16 rows (row r
 * at bytes 4r..4r+3: one 512-bit lane, or lane r % 8 of the 256-bit half
 * r / 8), plus per-row scales, the units in residue order (u % 16, then
 * u / 16) as the canonical order of internal.h visits them.  The
 * unsigned quants' offsets (the -8 of Q4_0, the -32 of Q6_K, the
 * K-quants' mins) are applied through the activation block sums:
 * precomputed for Q8_0 (side.corr), Q8_1's stored s, Q8_K's bsums.  The
 * Q8_0 and Q8_1 activations' quants are regrouped once per batch, NC
 * columns a group, so that a tile reads them in the order it uses them.
 * Private to src/kernels. */
#ifndef CONFAB_KERNELS_GEMM_PANEL_H
#define CONFAB_KERNELS_GEMM_PANEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define GR 16              /* rows per panel */
#define KMAX CF_GEMM_MAX_K /* longest K a panel holds (a multiple of 256) */
#define NC 8               /* columns of a group of activations */

enum act { ACT_Q8_0, ACT_Q8_1, ACT_Q8_K };

typedef struct {
    _Alignas(64) uint8_t q[KMAX / 4][64]; /* k-step t, lane r: row r's quants 4t..4t+3 */
    float s[KMAX / 32][GR];               /* 32-element types: d of each block */
    float m[KMAX / 32][GR];               /* Q4_1/Q5_1: the block min */
    int32_t sc[KMAX / 16][GR];            /* K-quants: integer scale of each group */
    float d[KMAX / 256][GR];              /* K-quants: super-block d and dmin */
    float dmin[KMAX / 256][GR];
    int16_t mp[KMAX / 256][8][GR][2]; /* K-quants: int16 pairs against bsums pairs */
} panel;

typedef struct {
    float dx;
    int32_t corr; /* Q8_0: -offset * sum q;  Q8_1: bits of the float s */
} side;

struct rowbuf;

typedef struct {
    void (*unpack)(const void *row, int64_t k0, int kc, struct rowbuf *o); /* a row's chunk [k0, k0 + kc) */
    enum act act;
    int group;  /* K-quants: elements per group scale, 32 or 16 */
    int offset; /* Q8_0 activations: the quants' bias; Q3_K/Q6_K: 4/32, IQ4_XS 128, TQ2_0 1 */
    int mins;   /* K-quants with dmin * mins */
    int qmax;   /* the largest unsigned quant in a panel */
    float post; /* the dot's last factor (IQ3_XXS's 1/4), 0 for none */
    float unit; /* Q8_K activations: a factor of each d * dx (IQ2's 1/8), 0 for none */
} gemm_type;

/* Where the kernels visit units in residue order (u % 16, then u / 16),
 * the panel stores them in that order too: unit u sits in slot
 * (u % 16) * per_res + u / 16, per_res = ceil(units / 16); row j of 32-bit
 * values (counting from base, per_unit rows a unit) in row slot_row(j). */
typedef struct {
    int64_t base;
    int per_unit;
    int per_res;
} slot_map;

static inline int64_t slot_row(const slot_map *sm, int64_t j)
{
    int64_t g = sm->base + j, u = g / sm->per_unit;
    return ((u % 16) * sm->per_res + u / 16) * sm->per_unit + g % sm->per_unit;
}

/* dst[slot_row(j0 + j)][lane] = src[lane][j0 + j] for 16 lanes and j < 16
 * (src rows sstride apart, dst rows 16 apart). */
typedef void (*gemm_transpose16_fn)(const uint32_t *src, size_t sstride, uint32_t *dst, int j0, const slot_map *sm);

/* Columns [c, c + nc) (nc <= NC, one group: xg its quants, sd its side
 * information, as prep_side lays them out) of rows r.. (nr valid lanes)
 * into Y. */
typedef void (*gemm_tile_fn)(const cf_matmul_args *a, const gemm_type *gt, const panel *p, int64_t r, int nr,
                             int64_t c, int nc, const uint8_t *xg, const side *sd);

/* Rows w[0..nr) times columns x[0..nc) (f32, k long) in the canonical
 * order; y[j * ys + i] the sums (nr <= FR, nc <= FC). */
#define FR 4
#define FC 4
typedef void (*gemm_ftile_fn)(const float *const *w, const float *const *x, int64_t k, int nr, int nc, float *y,
                              size_t ys);

/* A group of 16 rows of a CF_LAYOUT_R16 matrix into a panel, whole K;
 * false for a type the level has no packer for. */
typedef bool (*gemm_pack_r16_fn)(const uint8_t *g, int64_t k, cf_type t, panel *p);

/* What a level brings to the shared driver. */
typedef struct {
    gemm_transpose16_fn transpose16;
    gemm_tile_fn tile;
    gemm_ftile_fn ftile;
    gemm_pack_r16_fn pack_r16; /* NULL or false: the groups' rows are unpacked one by one */
} gemm_isa;

/* Rows [r0, r1) of Y = X W^T (internal.h's cf_gemm_fn) with a level's
 * pieces: every output the canonical dot's bits. */
void cf_gemm_run(const cf_matmul_args *a, int64_t r0, int64_t r1, const gemm_isa *isa);

/* The types the tiles take (cf_gemm_run's), for the fill functions. */
extern const cf_type cf_gemm_types[];
extern const size_t cf_gemm_n_types;

#endif
