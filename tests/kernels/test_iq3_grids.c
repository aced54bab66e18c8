/* The IQ3 grids (data copied from ggml-common.h) and the grid searches the
 * quantizers build from them (src/kernels/iq_search.c):
 *   - each grid is strictly increasing, its bytes the format's magnitudes,
 *     and its FNV-1a hash the one recorded when it was checked, entry by
 *     entry, against ggml's kgrid_256 / kgrid_512 (ggml-quants.c);
 *   - every point of the 8^4 lattice maps to itself when it is an entry,
 *     else to the list ggml builds: the entries at its nwant smallest
 *     distinct squared distances (2l + 1 coordinates), by distance then
 *     entry; and cf_iq_search_find picks a nearest entry for the point. */
#include <stdbool.h>

#include "../../src/kernels/iq3.h"
#include "../../src/kernels/iq_search.h"
#include "../harness.h"

static int level_xxs(uint8_t v) { return v / 8; }

static int level_s(uint8_t v) { return v / 2; }

static uint32_t fnv1a(const uint32_t *g, int n)
{
    uint32_t h = 0x811c9dc5u;
    for (int e = 0; e < n; e++)
        for (int i = 0; i < 4; i++)
            h = (h ^ ((g[e] >> (8 * i)) & 0xFF)) * 0x01000193u;
    return h;
}

static void test_table(const char *name, const uint32_t *g, int n, const uint8_t *allowed, int nallowed,
                       uint32_t hash)
{
    int bad = 0;
    for (int e = 0; e < n; e++) {
        bad += e > 0 && g[e] <= g[e - 1];
        for (int i = 0; i < 4; i++) {
            bool ok = false;
            for (int a = 0; a < nallowed; a++)
                ok |= ((g[e] >> (8 * i)) & 0xFF) == allowed[a];
            bad += !ok;
        }
    }
    CHECKF(bad == 0, "%s: %d entries out of order or with a bad magnitude", name, bad);
    CHECKF(fnv1a(g, n) == hash, "%s: hash %08x, ggml's table has %08x", name, fnv1a(g, n), hash);
}

static int dist2(const int8_t *pos, const int8_t *L)
{
    int s = 0;
    for (int i = 0; i < 4; i++)
        s += (pos[i] - (2 * L[i] + 1)) * (pos[i] - (2 * L[i] + 1));
    return s;
}

static void test_search(const char *name, const uint32_t *g, int n, int (*level)(uint8_t), int nwant)
{
    cf_iq_search s;
    if (cf_iq_search_init(&s, g, n, 4, 3, level, nwant) != 0) {
        CHECKF(0, "%s: out of memory", name);
        return;
    }
    int bad_map = 0, bad_list = 0, bad_find = 0;
    for (int p = 0; p < 4096; p++) {
        int8_t L[4], Lf[4];
        float xval[4], w[4] = {1, 1, 1, 1};
        for (int i = 0; i < 4; i++) {
            L[i] = Lf[i] = (int8_t)((p >> (3 * i)) & 7);
            xval[i] = (float)(2 * L[i] + 1);
        }
        int entry = -1, dmin = 1 << 30;
        for (int e = 0; e < n; e++) {
            int d = dist2(s.pos + 4 * e, L);
            entry = d == 0 ? e : entry;
            dmin = d < dmin ? d : dmin;
        }
        bool on;
        int got = cf_iq_search_find(&s, Lf, xval, w, 1.0f, &on);
        bad_find += got < 0 || got >= n || dist2(s.pos + 4 * got, L) != dmin || on != (entry >= 0);
        if (entry >= 0) {
            bad_map += s.map[p] != entry;
            continue;
        }
        /* the expected list, built the plain way */
        uint16_t want[512];
        int nw = 0;
        for (int k = 0, lo = -1; k < nwant; k++) {
            int m = 1 << 30;
            for (int e = 0; e < n; e++) {
                int d = dist2(s.pos + 4 * e, L);
                m = d > lo && d < m ? d : m;
            }
            for (int e = 0; e < n; e++)
                if (dist2(s.pos + 4 * e, L) == m)
                    want[nw++] = (uint16_t)e;
            lo = m;
        }
        const uint16_t *list = s.neighbours + (-1 - (int64_t)s.map[p]);
        bad_list += s.map[p] >= 0 || list[0] != nw || memcmp(list + 1, want, (size_t)nw * 2) != 0;
    }
    CHECKF(bad_map == 0, "%s: %d grid points not mapped to their entry", name, bad_map);
    CHECKF(bad_list == 0, "%s: %d neighbour lists differ from ggml's rule", name, bad_list);
    CHECKF(bad_find == 0, "%s: %d points not given a nearest entry", name, bad_find);
    cf_iq_search_free(&s);
}

int main(void)
{
    static const uint8_t mag_xxs[] = {4, 12, 20, 28, 36, 44, 52, 62};
    static const uint8_t mag_s[] = {1, 3, 5, 7, 9, 11, 13, 15};
    test_table("iq3xxs_grid", cf_iq3xxs_grid, 256, mag_xxs, 8, 0x49a45035u);
    test_table("iq3s_grid", cf_iq3s_grid, 512, mag_s, 8, 0x71cc6c89u);
    test_search("iq3xxs_grid", cf_iq3xxs_grid, 256, level_xxs, 2);
    test_search("iq3s_grid", cf_iq3s_grid, 512, level_s, 3);
    return test_summary("kernels_iq3_grids");
}
