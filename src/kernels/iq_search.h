/* The grid searches of the i-quant quantizers (IQ2_*, IQ3_*), as ggml's
 * iq2xs_init_impl / iq3xs_init_impl build them.  Private to src/kernels.
 *
 * A grid is n entries of dim byte values (the format's table, entry e's
 * value i at byte dim * e + i); each value stands for a level l < 2^bits,
 * and the quantizer sees it as the odd number 2l + 1.  The quantizer
 * rounds a group of dim weights to a lattice point (one level each); a
 * point that is an entry is used as it is, any other goes to whichever of
 * its neighbours (the entries at its nwant smallest distinct squared
 * distances) fits the weights best. */
#ifndef CONFAB_KERNELS_IQ_SEARCH_H
#define CONFAB_KERNELS_IQ_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cf_iq_search {
    int dim, bits;
    const int8_t *pos;          /* n x dim: 2l + 1 */
    const int32_t *map;         /* lattice point -> entry, or -1 - the offset of its list */
    const uint16_t *neighbours; /* a list: its length, then the entries, nearest first */
} cf_iq_search;

/* Builds s for grid (n entries, dim values each, level(v) the level of
 * value v).  Points with a level above the grid's largest share the
 * clamped point's list.  0, or -1 when out of memory.  The tables live as
 * long as the process; callers build each once (pthread_once). */
int cf_iq_search_init(cf_iq_search *s, const void *grid, int n, int dim, int bits, int (*level)(uint8_t),
                      int nwant);

/* Frees what cf_iq_search_init built (tests; the quantizers keep theirs). */
void cf_iq_search_free(cf_iq_search *s);

/* The grid entry for the lattice point of levels L (dim of them): the
 * point itself when it is an entry (*on_grid set), else the neighbour of
 * least sum w[i] (scale * (2l + 1) - xval[i])^2, whose levels replace L. */
int cf_iq_search_find(const cf_iq_search *s, int8_t *L, const float *xval, const float *w, float scale,
                      bool *on_grid);

#endif
