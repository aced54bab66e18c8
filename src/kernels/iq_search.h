/* The grid search of the i-quant quantizers: a grid is a list of points of
 * a lattice (n values, each one of a few levels); quantizing rounds a group
 * of weights to a lattice point, which is either on the grid or is sent to
 * the grid entries nearest to it.  Private to src/kernels. */
#ifndef CONFAB_KERNELS_IQ_SEARCH_H
#define CONFAB_KERNELS_IQ_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cf_iq_search {
    const uint8_t *levels; /* levels[n * e + j]: level of value j of entry e */
    int n, bits;
    int32_t *map;   /* lattice code -> entry, or -(1 + start of its neighbour list) */
    uint16_t *near; /* neighbour lists: a count, then the entries */
} cf_iq_search;

/* Builds s for a grid of n_grid entries of n values (levels: see above,
 * kept by reference), each below n_levels.  A lattice point's code puts
 * level l_j at bit bits * j.  Every point off the grid gets the entries at
 * its nwant smallest squared level distances, nearest first, then by entry
 * (ggml's iq2xs_init_impl and iq3xs_init_impl).  0, or -1 when out of
 * memory. */
int cf_iq_search_init(cf_iq_search *s, const uint8_t *levels, int n_grid, int n, int bits, int n_levels,
                      int nwant);

/* The entry of the lattice point L (n levels), or -1 when it is off the grid. */
int cf_iq_search_entry(const cf_iq_search *s, const uint8_t *L);

/* The entry for the lattice point L: its own, or (*on_grid false) the
 * neighbour with the least sum w (scale (2 l + 1) - x)^2, the first on
 * ties, whose levels then replace L. */
int cf_iq_search_nearest(const cf_iq_search *s, uint8_t *L, const float *x, const float *w, float scale,
                         bool *on_grid);

#endif
