/* The grid search of the i-quant quantizers (iq_search.h), generic over the
 * grid: its size, values per entry, levels and bits per level. */
#include <math.h>
#include <stdlib.h>

#include "iq_search.h"

static int code_of(const uint8_t *L, int n, int bits)
{
    int u = 0;
    for (int j = 0; j < n; j++)
        u |= L[j] << bits * j;
    return u;
}

/* the levels of code u; false when one is not below n_levels */
static bool levels_of(int u, int n, int bits, int n_levels, uint8_t *L)
{
    for (int j = 0; j < n; j++) {
        L[j] = (uint8_t)(u >> bits * j & ((1 << bits) - 1));
        if (L[j] >= n_levels)
            return false;
    }
    return true;
}

/* The neighbour list of lattice point L appended at s->near[*len]
 * (growing s->near); dist: scratch of n_grid ints. */
static int add_neighbours(cf_iq_search *s, const uint8_t *L, int n_grid, int nwant, int *dist, size_t *len,
                          size_t *cap)
{
    /* the nwant smallest distinct distances, in increasing order */
    int best[8], nb = 0;
    for (int e = 0; e < n_grid; e++) {
        int d = 0;
        for (int j = 0; j < s->n; j++) {
            const int diff = s->levels[s->n * e + j] - L[j];
            d += diff * diff;
        }
        dist[e] = d;
        int i = 0;
        while (i < nb && best[i] < d)
            i++;
        if ((i < nb && best[i] == d) || i == nwant)
            continue;
        if (nb < nwant)
            nb++;
        for (int k = nb - 1; k > i; k--)
            best[k] = best[k - 1];
        best[i] = d;
    }
    size_t count = 0;
    for (int e = 0; e < n_grid; e++)
        count += dist[e] <= best[nb - 1];
    if (*len + count + 1 > *cap) {
        size_t ncap = 2 * (*len + count + 1);
        uint16_t *p = realloc(s->near, ncap * sizeof *p);
        if (!p)
            return -1;
        s->near = p;
        *cap = ncap;
    }
    s->near[(*len)++] = (uint16_t)count;
    for (int c = 0; c < nb; c++)
        for (int e = 0; e < n_grid; e++)
            if (dist[e] == best[c])
                s->near[(*len)++] = (uint16_t)e;
    return 0;
}

int cf_iq_search_init(cf_iq_search *s, const uint8_t *levels, int n_grid, int n, int bits, int n_levels,
                      int nwant)
{
    const int size = 1 << bits * n;
    *s = (cf_iq_search){levels, n, bits, malloc((size_t)size * sizeof *s->map), NULL};
    int *dist = malloc((size_t)n_grid * sizeof *dist);
    size_t len = 0, cap = 0;
    int rc = s->map && dist && nwant >= 1 && nwant <= 8 ? 0 : -1;
    for (int u = 0; rc == 0 && u < size; u++)
        s->map[u] = -1;
    for (int e = 0; rc == 0 && e < n_grid; e++)
        s->map[code_of(levels + n * e, n, bits)] = e;
    uint8_t L[16];
    for (int u = 0; rc == 0 && u < size; u++) {
        if (s->map[u] >= 0 || !levels_of(u, n, bits, n_levels, L))
            continue;
        s->map[u] = -(int32_t)(len + 1);
        rc = add_neighbours(s, L, n_grid, nwant, dist, &len, &cap);
    }
    free(dist);
    if (rc != 0) {
        free(s->map);
        free(s->near);
        s->map = NULL;
        s->near = NULL;
    }
    return rc;
}

int cf_iq_search_entry(const cf_iq_search *s, const uint8_t *L)
{
    const int e = s->map[code_of(L, s->n, s->bits)];
    return e >= 0 ? e : -1;
}

int cf_iq_search_nearest(const cf_iq_search *s, uint8_t *L, const float *x, const float *w, float scale,
                         bool *on_grid)
{
    const int32_t m = s->map[code_of(L, s->n, s->bits)];
    *on_grid = m >= 0;
    if (m >= 0)
        return m;
    const uint16_t *near = s->near - m - 1;
    int best = near[1];
    float best_d2 = INFINITY;
    for (int i = 1; i <= near[0]; i++) {
        const uint8_t *lv = s->levels + s->n * near[i];
        float d2 = 0;
        for (int j = 0; j < s->n; j++) {
            const float diff = scale * (2 * lv[j] + 1) - x[j];
            d2 += w[j] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            best = near[i];
        }
    }
    for (int j = 0; j < s->n; j++)
        L[j] = s->levels[s->n * best + j];
    return best;
}
