/* The 2- and 1-bit grid i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M),
 * which confab reads but (except IQ2_S) cannot write: their grids are
 * ggml's; on random blocks and on the rows of llama.cpp's fixtures every
 * ISA's dot gives the scalar bits and matches the dequantized weights times
 * the dequantized activations, and cf_matmul the dots' bits; the fixtures
 * dequantize close to their F32 master. */
#include <string.h>

#include "../harness.h"
#include "confab/gguf.h"
#include "iq12.h"
#include "kt_util.h"

static const cf_type types[] = {CF_TYPE_IQ2_XXS, CF_TYPE_IQ2_XS, CF_TYPE_IQ2_S, CF_TYPE_IQ1_S, CF_TYPE_IQ1_M};
#define N_TYPES (int)(sizeof types / sizeof types[0])

/* ---- the grids ---------------------------------------------------------- */

static uint64_t fnv1a(const uint64_t *g, int n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 8; j++)
            h = (h ^ (uint8_t)(g[i] >> 8 * j)) * 0x100000001b3ull;
    return h;
}

/* Each grid is ggml's kgrid list (ggml-quants.c) in increasing order: byte
 * j of an entry is level l_j of the type's levels, and sum l_j 4^j grows. */
static void check_grid(const char *name, const uint64_t *g, int n, const int levels[3], uint64_t hash)
{
    int bad_byte = 0, unordered = 0;
    long prev = -1;
    for (int i = 0; i < n; i++) {
        long code = 0;
        for (int j = 7; j >= 0; j--) {
            int v = (int8_t)(g[i] >> 8 * j), l = 0;
            while (l < 3 && levels[l] != v)
                l++;
            bad_byte += l == 3;
            code = 4 * code + l;
        }
        unordered += code <= prev;
        prev = code;
    }
    CHECKF(!bad_byte, "%s: %d bytes off its levels", name, bad_byte);
    CHECKF(!unordered, "%s: %d entries out of order", name, unordered);
    CHECKF(fnv1a(g, n) == hash, "%s: FNV-1a %#llx", name, (unsigned long long)fnv1a(g, n));
}

static void test_grids(void)
{
    static const int iq2[3] = {8, 25, 43}, iq1[3] = {-1, 0, 1};
    check_grid("iq2xxs_grid", cf_iq2xxs_grid, 256, iq2, 0xbb4ee025b5ac6e8eull);
    check_grid("iq2xs_grid", cf_iq2xs_grid, 512, iq2, 0xc9b1ee61e79909bdull);
    check_grid("iq2s_grid", cf_iq2s_grid, 1024, iq2, 0x123edd38a3b62b90ull);
    check_grid("iq1s_grid", cf_iq1s_grid, 2048, iq1, 0x6703ed863501ae2eull);
    /* a few entries as ggml-common.h spells them */
    CHECK(cf_iq2xxs_grid[1] == 0x080808080808082bull);
    CHECK(cf_iq2xxs_grid[130] == 0x082b2b082b191908ull);
    CHECK(cf_iq2xxs_grid[255] == 0x2b2b2b1908081908ull);
    CHECK(cf_iq2xs_grid[252] == 0x082b2b2b2b082b08ull);
    CHECK(cf_iq2xs_grid[511] == 0x2b2b2b2b2b2b2b2bull);
    CHECK(cf_iq2s_grid[33] == 0x080808082b2b2b2bull);
    CHECK(cf_iq1s_grid[1] == 0xffffffffffffff01ull);
    CHECK(cf_iq1s_grid[1029] == 0);
    CHECK(cf_iq1s_grid[2047] == 0x0101010101010101ull);
    /* the four-at-once sign code is cf_iq_signs per byte */
    int bad = 0;
    for (unsigned c = 0; c < 128; c++) {
        const unsigned c1 = (c * 37 + 5) & 127, c2 = (c * 91 + 17) & 127, c3 = 127 - c;
        const uint32_t m = cf_iq_signs4(c | c1 << 8 | c2 << 16 | c3 << 24);
        bad += m != (cf_iq_signs(c) | (uint32_t)cf_iq_signs(c1) << 8 | (uint32_t)cf_iq_signs(c2) << 16 |
                     (uint32_t)cf_iq_signs(c3) << 24);
    }
    CHECKF(!bad, "cf_iq_signs4: %d codes differ", bad);
}

/* ---- dots ----------------------------------------------------------------- */

/* Random super-blocks: every bit random except the scale d, set to a
 * plausible F16 (IQ1_M keeps its d in the top nibbles of its scale words). */
static void *random_blocks(cf_type t, int64_t k)
{
    const size_t bs = cf_type_get(t)->type_size, nb = (size_t)(k / QK_K);
    uint8_t *p = malloc(nb * bs);
    for (size_t i = 0; i < nb * bs; i++)
        p[i] = (uint8_t)kt_next();
    for (size_t i = 0; i < nb; i++) {
        uint16_t d = cf_f32_to_f16((float)(0.002 + 0.01 * kt_unif()));
        uint8_t *b = p + i * bs;
        if (t != CF_TYPE_IQ1_M) {
            memcpy(b, &d, 2);
            continue;
        }
        uint8_t *sc = b + offsetof(block_iq1_m, scales);
        for (int w = 0; w < 4; w++)
            sc[2 * w + 1] = (uint8_t)((sc[2 * w + 1] & 0x0f) | ((d >> 4 * w) & 0xf) << 4);
    }
    return p;
}

/* Q8_K activations of k Gaussians with a few large values */
static void *random_acts(int64_t k)
{
    float *xf = malloc(k * sizeof *xf);
    kt_fill_gauss(xf, k, 1.0f);
    for (int64_t i = 0; i < k; i += 97)
        xf[i] *= 20.0f;
    void *x = kt_quantize(CF_TYPE_Q8_K, xf, k);
    free(xf);
    return x;
}

/* w . x on every ISA: the scalar bits, and within 1e-4 of sum |w x| of the
 * dequantized product in double */
static void check_dot(cf_type t, int64_t k, const void *w, const void *x, const char *what)
{
    float *dw = malloc(k * sizeof *dw), *dx = malloc(k * sizeof *dx);
    CHECK(cf_dequantize_row(t, w, dw, k) == 0);
    CHECK(cf_dequantize_row(CF_TYPE_Q8_K, x, dx, k) == 0);
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < k; i++) {
        ref += (double)dw[i] * dx[i];
        mag += fabs((double)dw[i] * dx[i]);
    }
    cf_isa_set(CF_ISA_SCALAR);
    const float scalar = cf_vec_dot(t, k, w, x);
    for (int isa = CF_ISA_SCALAR; isa < CF_ISA_COUNT; isa++) {
        if ((int)cf_isa_set((cf_isa)isa) != isa)
            continue;
        const float got = cf_vec_dot(t, k, w, x);
        CHECKF(fabs(got - ref) <= 1e-4 * mag + 1e-30, "%s %s %s k=%lld: %.9g vs %.9g", cf_isa_name(isa),
               cf_type_name(t), what, (long long)k, got, ref);
        CHECKF(!memcmp(&got, &scalar, sizeof got), "%s %s %s k=%lld: %.9g vs scalar %.9g", cf_isa_name(isa),
               cf_type_name(t), what, (long long)k, got, scalar);
    }
    free(dw);
    free(dx);
}

static void test_random_dots(void)
{
    static const int64_t ks[] = {256, 512, 768, 4096, 4352, 8448};
    for (int i = 0; i < N_TYPES; i++)
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++)
            for (int rep = 0; rep < 3; rep++) {
                void *w = random_blocks(types[i], ks[j]), *x = random_acts(ks[j]);
                check_dot(types[i], ks[j], w, x, "random");
                free(w);
                free(x);
            }
}

/* cf_matmul gives the per-row dots' bits for any thread count and N */
static void test_matmul(cf_type t)
{
    const int64_t m = 37, k = 768;
    const size_t wrow = cf_row_bytes(t, k), xrow = cf_row_bytes(CF_TYPE_Q8_K, k);
    char *w = random_blocks(t, m * k), *x = malloc(9 * xrow);
    for (int c = 0; c < 9; c++) {
        void *xc = random_acts(k);
        memcpy(x + c * xrow, xc, xrow);
        free(xc);
    }
    float y[9 * 37], y2[9 * 37];
    for (int isa = CF_ISA_SCALAR; isa < CF_ISA_COUNT; isa++) {
        if ((int)cf_isa_set((cf_isa)isa) != isa)
            continue;
        for (int64_t n = 1; n <= 9; n += n < 5 ? 1 : 4) { /* the tiles from 3, past one group of 8 at 9 */
            cf_matmul_args a = {.wtype = t, .m = m, .k = k, .n = n, .w = w, .w_stride = wrow, .x = x,
                                .x_stride = xrow, .y = y, .y_stride = (size_t)m};
            for (int nth = 1; nth <= 3; nth++) {
                a.y = nth == 1 ? y : y2;
                for (int ith = 0; ith < nth; ith++)
                    cf_matmul(&a, ith, nth);
                if (nth > 1)
                    CHECKF(!memcmp(y, y2, (size_t)(n * m) * sizeof *y), "%s %s n=%lld nth=%d",
                           cf_isa_name(isa), cf_type_name(t), (long long)n, nth);
            }
            int bad = 0;
            for (int64_t c = 0; c < n; c++)
                for (int64_t r = 0; r < m; r++) {
                    const float d = cf_vec_dot(t, k, w + r * wrow, x + c * xrow);
                    bad += memcmp(&d, &y[c * m + r], sizeof d) != 0;
                }
            CHECKF(!bad, "%s %s n=%lld: %d outputs differ from vec_dot", cf_isa_name(isa), cf_type_name(t),
                   (long long)n, bad);
        }
    }
    free(w);
    free(x);
}

/* ---- the fixtures ---------------------------------------------------------- */

/* llama.cpp's RMS error on the quant master, relative to its RMS (with an
 * importance matrix; about 1.2x what it reaches on these files) */
static double fixture_bound(cf_type t)
{
    switch (t) {
    case CF_TYPE_IQ2_XXS: return 0.40;
    case CF_TYPE_IQ2_XS: return 0.35;
    case CF_TYPE_IQ2_S: return 0.32;
    case CF_TYPE_IQ1_S: return 0.60;
    case CF_TYPE_IQ1_M: return 0.55;
    default: return 0;
    }
}

static void test_fixture(cf_type t, const cf_gguf *master)
{
    char rel[64];
    snprintf(rel, sizeof rel, "models/quant-%s.gguf", cf_type_name(t));
    cf_err err;
    cf_gguf *g;
    if (cf_gguf_open(shared_path(rel), &g, &err) < 0) {
        CHECKF(0, "%s: %s", rel, err.msg);
        return;
    }
    int n = 0;
    double worst = 0;
    for (int64_t i = 0; i < cf_gguf_n_tensors(g); i++) {
        const cf_gguf_tensor *te = cf_gguf_tensor_at(g, i);
        if (te->type != t)
            continue;
        const cf_gguf_tensor *m = cf_gguf_find_tensor(master, te->name);
        CHECKF(m && m->type == CF_TYPE_F32 && m->ne[0] == te->ne[0] && m->ne[1] == te->ne[1], "%s: %s", rel,
               te->name);
        const int64_t k = te->ne[0], nrow = te->ne[1];
        const size_t rb = cf_row_bytes(t, k);
        float *row = malloc(k * sizeof *row);
        double e = 0, s = 0;
        for (int64_t r = 0; r < nrow; r++) {
            cf_dequantize_row(t, (const char *)te->data + r * rb, row, k);
            for (int64_t j = 0; m && j < k; j++) {
                const double v = ((const float *)m->data)[r * k + j];
                e += (row[j] - v) * (row[j] - v);
                s += v * v;
            }
        }
        free(row);
        if (sqrt(e / s) > worst)
            worst = sqrt(e / s);
        for (int64_t r = 0; r < nrow; r += nrow / 3) {
            void *x = random_acts(k);
            check_dot(t, k, (const char *)te->data + r * rb, x, te->name);
            free(x);
        }
        n++;
    }
    fprintf(stderr, "  %-7s %2d tensors, worst rms rel err against the F32 master %.4f (bound %.2f)\n",
            cf_type_name(t), n, worst, fixture_bound(t));
    CHECKF(worst <= fixture_bound(t), "%s: %g", rel, worst);
    CHECKF(n == 16, "%s: %d tensors of type %s", rel, n, cf_type_name(t));
    cf_gguf_close(g);
}

/* ---- IQ2_S's quantizer ------------------------------------------------------ */

/* RMS of deq(q) - ref over RMS of ref, nrow rows of k */
static double rel_err(const void *q, const float *ref, int64_t k, int64_t nrow)
{
    const size_t rb = cf_row_bytes(CF_TYPE_IQ2_S, k);
    float *row = malloc(k * sizeof *row);
    double e = 0, s = 0;
    for (int64_t r = 0; r < nrow; r++) {
        cf_dequantize_row(CF_TYPE_IQ2_S, (const char *)q + r * rb, row, k);
        for (int64_t j = 0; j < k; j++) {
            e += (row[j] - (double)ref[r * k + j]) * (row[j] - (double)ref[r * k + j]);
            s += (double)ref[r * k + j] * ref[r * k + j];
        }
    }
    free(row);
    return s > 0 ? sqrt(e / s) : sqrt(e);
}

/* On the master's weights confab's IQ2_S is about as accurate as llama.cpp's
 * (which had an importance matrix); quantizing llama.cpp's dequantized rows
 * again gives nearly the same values. */
static void test_iq2_s_quantizer(const cf_gguf *master)
{
    cf_err err;
    cf_gguf *g;
    if (cf_gguf_open(shared_path("models/quant-IQ2_S.gguf"), &g, &err) < 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    double worst_ratio = 0, worst_again = 0;
    for (int64_t i = 0; i < cf_gguf_n_tensors(g); i++) {
        const cf_gguf_tensor *te = cf_gguf_tensor_at(g, i);
        const cf_gguf_tensor *m = cf_gguf_find_tensor(master, te->name);
        if (te->type != CF_TYPE_IQ2_S || !m)
            continue;
        const int64_t k = te->ne[0], nrow = te->ne[1];
        const size_t rb = cf_row_bytes(CF_TYPE_IQ2_S, k);
        char *mine = malloc(rb * nrow);
        float *deq = malloc(k * nrow * sizeof *deq);
        for (int64_t r = 0; r < nrow; r++)
            CHECK(cf_quantize_row(CF_TYPE_IQ2_S, (const float *)m->data + r * k, mine + r * rb, k) == 0);
        const double e_llama = rel_err(te->data, m->data, k, nrow), e_mine = rel_err(mine, m->data, k, nrow);
        for (int64_t r = 0; r < nrow; r++)
            cf_dequantize_row(CF_TYPE_IQ2_S, (const char *)te->data + r * rb, deq + r * k, k);
        for (int64_t r = 0; r < nrow; r++)
            cf_quantize_row(CF_TYPE_IQ2_S, deq + r * k, mine + r * rb, k);
        const double again = rel_err(mine, deq, k, nrow);
        if (e_mine / e_llama > worst_ratio)
            worst_ratio = e_mine / e_llama;
        if (again > worst_again)
            worst_again = again;
        free(mine);
        free(deq);
    }
    fprintf(stderr, "  IQ2_S quantizer: error <= %.3f x llama.cpp's; its dequantized rows again: rms rel err <= %.4f\n",
            worst_ratio, worst_again);
    CHECKF(worst_ratio <= 1.10, "IQ2_S: confab's error %.3f x llama.cpp's", worst_ratio);
    CHECKF(worst_again <= 0.08, "IQ2_S: requantized error %.4f", worst_again);
    cf_gguf_close(g);
}

int main(void)
{
    kt_seed(12);
    test_grids();
    test_random_dots();
    for (int i = 0; i < N_TYPES; i++) {
        CHECK(cf_type_get(types[i])->computable);
        CHECK(cf_vec_dot_type(types[i]) == CF_TYPE_Q8_K);
        test_matmul(types[i]);
    }
    if (shared_dir()) {
        cf_err err;
        cf_gguf *master;
        if (cf_gguf_open(shared_path("models/quant-F32.gguf"), &master, &err) < 0) {
            CHECKF(0, "%s", err.msg);
        } else {
            for (int i = 0; i < N_TYPES; i++)
                test_fixture(types[i], master);
            test_iq2_s_quantizer(master);
            cf_gguf_close(master);
        }
    }
    return test_summary("kernels_iq12");
}
