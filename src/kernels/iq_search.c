/* The i-quant grid searches (iq_search.h): the lattice map and the
 * neighbour lists, which depend on the grid only and so are built once. */
#include <float.h>
#include <limits.h>
#include <stdlib.h>

#include "iq_search.h"

#define MAX_DIM 8

static int point_of(const int8_t *L, int dim, int bits)
{
    int p = 0;
    for (int i = 0; i < dim; i++)
        p |= L[i] << (bits * i);
    return p;
}

typedef struct {
    uint16_t *v;
    size_t n, cap;
} list;

static bool push(list *l, int x)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4096;
        uint16_t *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return false;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (uint16_t)x;
    return true;
}

/* The list of point L (levels <= the grid's): the entries at the nwant
 * smallest distinct distances, by distance, then by entry (ggml sorts the
 * (distance, entry) pairs). */
static bool add_list(list *nb, const int8_t *pos, int n, int dim, const int8_t *L, int nwant, int *d2)
{
    for (int e = 0; e < n; e++) {
        int s = 0;
        for (int i = 0; i < dim; i++) {
            int d = pos[dim * e + i] - (2 * L[i] + 1);
            s += d * d;
        }
        d2[e] = s;
    }
    size_t head = nb->n;
    bool ok = push(nb, 0);
    for (int k = 0, lo = -1; ok && k < nwant; k++) {
        int m = INT_MAX;
        for (int e = 0; e < n; e++)
            if (d2[e] > lo && d2[e] < m)
                m = d2[e];
        if (m == INT_MAX)
            break;
        for (int e = 0; ok && e < n; e++)
            if (d2[e] == m)
                ok = push(nb, e);
        lo = m;
    }
    if (ok)
        nb->v[head] = (uint16_t)(nb->n - head - 1);
    return ok;
}

int cf_iq_search_init(cf_iq_search *s, const void *grid, int n, int dim, int bits, int (*level)(uint8_t),
                      int nwant)
{
    if (dim > MAX_DIM || bits * dim > 24 || n > 65536)
        return -1;
    const uint8_t *g = grid;
    const int npoints = 1 << (bits * dim), lmask = (1 << bits) - 1;
    int8_t *pos = malloc((size_t)n * dim);
    int32_t *map = malloc((size_t)npoints * sizeof *map);
    int *d2 = malloc((size_t)n * sizeof *d2);
    list nb = {0};
    bool ok = pos && map && d2;
    int top = 0;
    int8_t L[MAX_DIM];
    for (int p = 0; ok && p < npoints; p++)
        map[p] = INT32_MIN;
    for (int e = 0; ok && e < n; e++) {
        for (int i = 0; i < dim; i++) {
            L[i] = (int8_t)level(g[dim * e + i]);
            pos[dim * e + i] = (int8_t)(2 * L[i] + 1);
            top = L[i] > top ? L[i] : top;
        }
        map[point_of(L, dim, bits)] = e;
    }
    for (int p = 0; ok && p < npoints; p++) {
        if (map[p] >= 0)
            continue;
        bool above = false;
        for (int i = 0; i < dim; i++) {
            L[i] = (int8_t)((p >> (bits * i)) & lmask);
            if (L[i] > top) {
                L[i] = (int8_t)top;
                above = true;
            }
        }
        if (above) { /* the clamped point is smaller: already done */
            map[p] = map[point_of(L, dim, bits)];
            continue;
        }
        map[p] = -1 - (int32_t)nb.n;
        ok = nb.n < INT32_MAX / 2 && add_list(&nb, pos, n, dim, L, nwant, d2);
    }
    free(d2);
    if (!ok) {
        free(pos);
        free(map);
        free(nb.v);
        return -1;
    }
    *s = (cf_iq_search){dim, bits, pos, map, nb.v};
    return 0;
}

void cf_iq_search_free(cf_iq_search *s)
{
    free((void *)s->pos);
    free((void *)s->map);
    free((void *)s->neighbours);
    *s = (cf_iq_search){0};
}

int cf_iq_search_find(const cf_iq_search *s, int8_t *L, const float *xval, const float *w, float scale,
                      bool *on_grid)
{
    const int32_t m = s->map[point_of(L, s->dim, s->bits)];
    *on_grid = m >= 0;
    if (m >= 0)
        return m;
    const uint16_t *nb = s->neighbours + (-1 - (int64_t)m);
    float best = FLT_MAX;
    int e = nb[1];
    for (int j = 1; j <= nb[0]; j++) {
        const int8_t *pg = s->pos + (size_t)nb[j] * s->dim;
        float d2 = 0;
        for (int i = 0; i < s->dim; i++) {
            float diff = scale * pg[i] - xval[i];
            d2 += w[i] * diff * diff;
        }
        if (d2 < best) {
            best = d2;
            e = nb[j];
        }
    }
    for (int i = 0; i < s->dim; i++)
        L[i] = (int8_t)((s->pos[(size_t)e * s->dim + i] - 1) / 2);
    return e;
}
