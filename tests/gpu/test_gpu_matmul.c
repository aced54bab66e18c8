/* The GPU's weight ops against the CPU's dequantizers, for every type the
 * shaders take: matrix times activations on the decode shader (n <= 8)
 * and the tiled one, with row and token counts that leave partial
 * tiles; the experts' pairs; embedding rows.  Tolerance: the sums in
 * F32 of the dequantized weights are within 2e-5 of sum |w x| of the
 * exact (double) product; a second run gives the same bits, and so does a
 * token alone, in a batch of any size, or as a pair of the experts. */
#include "gpu_test.h"

#include "confab/kernels.h"

static const cf_type types[] = {
    CF_TYPE_F32,  CF_TYPE_F16,  CF_TYPE_BF16, CF_TYPE_Q4_0, CF_TYPE_Q4_1, CF_TYPE_Q5_0,   CF_TYPE_Q5_1,   CF_TYPE_Q8_0,
    CF_TYPE_Q2_K, CF_TYPE_Q3_K, CF_TYPE_Q4_K, CF_TYPE_Q5_K, CF_TYPE_Q6_K, CF_TYPE_IQ4_NL, CF_TYPE_IQ4_XS, CF_TYPE_MXFP4,
};

#define ROWS 67
#define TOKENS 70

typedef struct {
    cf_type t;
    int64_t k;
    size_t rb;
    uint8_t *w; /* ROWS rows of GGUF blocks */
    float *wf;  /* the same dequantized */
} weights;

static weights make_weights(cf_type t, int rows, unsigned seed)
{
    weights W = {.t = t};
    /* an odd k where a block is one value, else three 256-value blocks */
    W.k = cf_type_get((uint32_t)t)->blck_size == 1 ? 131 : 768;
    W.rb = cf_row_bytes(t, W.k);
    W.w = malloc(W.rb * (size_t)rows);
    W.wf = malloc(sizeof(float) * (size_t)(W.k * rows));
    float *row = malloc(sizeof(float) * (size_t)W.k);
    for (int r = 0; r < rows; r++) {
        test_fill(row, (size_t)W.k, seed + (unsigned)r * 7919u, 1.0f);
        CHECK(cf_quantize_row(t, row, W.w + (size_t)r * W.rb, W.k) == 0);
        CHECK(cf_dequantize_row(t, W.w + (size_t)r * W.rb, W.wf + (size_t)r * W.k, W.k) == 0);
    }
    free(row);
    return W;
}

static void free_weights(weights *W)
{
    free(W->w);
    free(W->wf);
}

/* Whether y (n x rows) is the product within the tolerance. */
static int check_product(const weights *W, const float *x, const int *xrow, const int *expert, int n, int rows,
                         const float *y)
{
    int bad = 0;
    for (int t = 0; t < n; t++)
        for (int r = 0; r < rows; r++) {
            const float *wr = W->wf + ((size_t)(expert ? expert[t] * rows : 0) + (size_t)r) * (size_t)W->k;
            const float *xt = x + (size_t)(xrow ? xrow[t] : t) * (size_t)W->k;
            double exact = 0, mag = 0;
            for (int64_t i = 0; i < W->k; i++) {
                exact += (double)wr[i] * xt[i];
                mag += fabs((double)wr[i] * xt[i]);
            }
            const double got = y[(size_t)t * rows + r];
            if (!(fabs(got - exact) <= 2e-5 * mag + 1e-30)) {
                if (bad++ < 3)
                    fprintf(stderr, "  %s token %d row %d: %.9g, exact %.9g (sum |w x| %.3g)\n",
                            cf_type_name((uint32_t)W->t), t, r, got, exact, mag);
            }
        }
    return bad;
}

static void test_matmul(cf_gpu *g, cf_type t)
{
    weights W = make_weights(t, ROWS, 11u + (unsigned)t);
    float *x = malloc(sizeof(float) * (size_t)(W.k * TOKENS)), *y = malloc(sizeof(float) * ROWS * TOKENS),
          *y2 = malloc(sizeof(float) * ROWS * TOKENS), *first = malloc(sizeof(float) * ROWS * TOKENS);
    test_fill(x, (size_t)(W.k * TOKENS), 5u, 2.0f);
    cf_gpu_buf *wb = test_upload(g, W.w, W.rb * ROWS), *xb = test_upload(g, x, sizeof(float) * (size_t)(W.k * TOKENS));
    cf_gpu_buf *yb = test_upload(g, NULL, sizeof(float) * ROWS * TOKENS);
    static const int ns[] = {1, 3, 8, 9, TOKENS};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        const int n = ns[i];
        for (int run = 0; run < 2; run++) {
            cf_gpu_begin(g);
            cf_gpu_matmul(g, t, view(wb), ROWS, W.k, view(xb), n, view(yb));
            CHECK(test_submit(g) == 0);
            test_download(g, yb, run ? y2 : y, sizeof(float) * ROWS * (size_t)n);
        }
        CHECKF(check_product(&W, x, NULL, NULL, n, ROWS, y) == 0, "%s matmul of %d tokens",
               cf_type_name((uint32_t)t), n);
        CHECKF(!memcmp(y, y2, sizeof(float) * ROWS * (size_t)n), "%s matmul of %d tokens: two runs differ",
               cf_type_name((uint32_t)t), n);
        /* the tokens' rows are the bits they had alone (n = 1) or in a smaller batch */
        if (i)
            CHECKF(!memcmp(y, first, sizeof(float) * ROWS * (size_t)ns[i - 1]), "%s matmul: %d tokens and %d differ",
                   cf_type_name((uint32_t)t), n, ns[i - 1]);
        memcpy(first, y, sizeof(float) * ROWS * (size_t)n);
    }
    /* rows of x and y inside wider rows: the same bits */
    const int64_t ldx = W.k + 5, ldy = ROWS + 3;
    float *xs = calloc((size_t)(ldx * TOKENS), sizeof(float)), *ys = malloc(sizeof(float) * (size_t)(ldy * TOKENS));
    for (int r = 0; r < TOKENS; r++)
        memcpy(xs + r * ldx, x + r * W.k, sizeof(float) * (size_t)W.k);
    cf_gpu_buf *xsb = test_upload(g, xs, sizeof(float) * (size_t)(ldx * TOKENS));
    cf_gpu_buf *ysb = test_upload(g, NULL, sizeof(float) * (size_t)(ldy * TOKENS));
    for (int n = 3; n <= TOKENS; n += TOKENS - 3) {
        cf_gpu_begin(g);
        cf_gpu_matmul_ld(g, t, view(wb), ROWS, W.k, view(xsb), ldx, n, view(ysb), ldy);
        CHECK(test_submit(g) == 0);
        test_download(g, ysb, ys, sizeof(float) * (size_t)(ldy * n));
        int differ = 0;
        for (int r = 0; r < n; r++)
            differ += memcmp(ys + r * ldy, first + r * ROWS, sizeof(float) * ROWS) != 0;
        CHECKF(differ == 0, "%s matmul_ld of %d tokens: %d rows differ", cf_type_name((uint32_t)t), n, differ);
    }
    cf_gpu_free(g, xsb);
    cf_gpu_free(g, ysb);
    free(xs);
    free(ys);
    cf_gpu_free(g, wb);
    cf_gpu_free(g, xb);
    cf_gpu_free(g, yb);
    free(x);
    free(y);
    free(y2);
    free(first);
    free_weights(&W);
}

/* Three experts of ROWS rows each, seven pairs reading input rows in
 * another order. */
static void test_matmul_id(cf_gpu *g, cf_type t)
{
    enum { EXPERTS = 3, PAIRS = 7, XROWS = 4 };
    weights W = make_weights(t, EXPERTS * ROWS, 23u + (unsigned)t);
    const int expert[PAIRS] = {2, 0, 1, 2, 2, 0, 1}, xrow[PAIRS] = {0, 0, 1, 3, 2, 1, 3};
    float *x = malloc(sizeof(float) * (size_t)(W.k * XROWS)), y[PAIRS * ROWS];
    test_fill(x, (size_t)(W.k * XROWS), 9u, 1.0f);
    cf_gpu_buf *wb = test_upload(g, W.w, W.rb * EXPERTS * ROWS), *xb = test_upload(g, x, sizeof(float) * (size_t)(W.k * XROWS));
    cf_gpu_buf *ib = test_upload(g, expert, sizeof expert), *rb = test_upload(g, xrow, sizeof xrow);
    cf_gpu_buf *yb = test_upload(g, NULL, sizeof y);
    cf_gpu_begin(g);
    cf_gpu_matmul_id(g, t, view(wb), W.rb * ROWS, ROWS, W.k, view(ib), view(rb), view(xb), PAIRS, view(yb));
    CHECK(test_submit(g) == 0);
    test_download(g, yb, y, sizeof y);
    CHECKF(check_product(&W, x, xrow, expert, PAIRS, ROWS, y) == 0, "%s matmul_id", cf_type_name((uint32_t)t));
    /* each pair's row is the bits of its expert's matmul of its input */
    float alone[ROWS];
    cf_gpu_buf *ab = test_upload(g, NULL, sizeof alone);
    int differ = 0;
    for (int p = 0; p < PAIRS; p++) {
        cf_gpu_begin(g);
        cf_gpu_matmul(g, t, (cf_gpu_view){wb, W.rb * ROWS * (size_t)expert[p]}, ROWS, W.k,
                      (cf_gpu_view){xb, sizeof(float) * (size_t)(W.k * xrow[p])}, 1, view(ab));
        CHECK(test_submit(g) == 0);
        test_download(g, ab, alone, sizeof alone);
        differ += memcmp(alone, y + p * ROWS, sizeof alone) != 0;
    }
    CHECKF(differ == 0, "%s matmul_id: %d pairs differ from their expert's matmul", cf_type_name((uint32_t)t), differ);
    cf_gpu_free(g, ab);
    cf_gpu_free(g, wb);
    cf_gpu_free(g, xb);
    cf_gpu_free(g, ib);
    cf_gpu_free(g, rb);
    cf_gpu_free(g, yb);
    free(x);
    free_weights(&W);
}

/* Rows of the weights as F32: the dequantizer's values (up to a fused
 * multiply-add's rounding in the types with a minimum). */
static void test_get_rows(cf_gpu *g, cf_type t)
{
    weights W = make_weights(t, ROWS, 31u + (unsigned)t);
    const int ids[5] = {66, 0, 13, 13, 40};
    float *y = malloc(sizeof(float) * (size_t)(5 * W.k));
    cf_gpu_buf *wb = test_upload(g, W.w, W.rb * ROWS), *ib = test_upload(g, ids, sizeof ids);
    cf_gpu_buf *yb = test_upload(g, NULL, sizeof(float) * (size_t)(5 * W.k));
    cf_gpu_begin(g);
    cf_gpu_get_rows(g, t, view(wb), W.k, view(ib), 5, view(yb));
    CHECK(test_submit(g) == 0);
    test_download(g, yb, y, sizeof(float) * (size_t)(5 * W.k));
    int bad = 0;
    for (int j = 0; j < 5; j++)
        for (int64_t i = 0; i < W.k; i++) {
            const float want = W.wf[(size_t)ids[j] * (size_t)W.k + (size_t)i], got = y[(size_t)j * (size_t)W.k + (size_t)i];
            bad += !(fabsf(got - want) <= 1e-6f * fabsf(want) + 1e-30f);
        }
    CHECKF(bad == 0, "%s get_rows: %d values differ", cf_type_name((uint32_t)t), bad);
    cf_gpu_free(g, wb);
    cf_gpu_free(g, ib);
    cf_gpu_free(g, yb);
    free(y);
    free_weights(&W);
}

/* Errors come back from cf_gpu_submit, once, and the device stays usable. */
static void test_errors(cf_gpu *g)
{
    cf_err err = {0};
    cf_gpu_buf *b = test_upload(g, NULL, 64);
    cf_gpu_begin(g);
    cf_gpu_matmul(g, CF_TYPE_Q4_0, view(b), 4, 33, view(b), 1, view(b)); /* k not a multiple of 32 */
    CHECK(cf_gpu_submit(g, &err) != 0);
    CHECKF(strstr(err.msg, "multiple of 32") != NULL, "%s", err.msg);
    cf_gpu_begin(g);
    cf_gpu_matmul(g, CF_TYPE_F32, view(b), 4, 8, view(b), 1, view(b)); /* 128 bytes of weights in 64 */
    CHECK(cf_gpu_submit(g, &err) != 0);
    CHECKF(strstr(err.msg, "weights") != NULL, "%s", err.msg);
    cf_gpu_begin(g);
    cf_gpu_matmul(g, CF_TYPE_IQ2_XXS, view(b), 1, 256, view(b), 1, view(b));
    CHECK(cf_gpu_submit(g, &err) != 0);
    CHECKF(strstr(err.msg, "no shader for IQ2_XXS") != NULL, "%s", err.msg);
    CHECK(!cf_gpu_supports(g, CF_TYPE_IQ2_XXS) && cf_gpu_supports(g, CF_TYPE_Q4_K));
    CHECK(cf_gpu_alloc(g, 0, &err) == NULL);
    /* more than the device has: an error, not a crash */
    CHECK(cf_gpu_alloc(g, (size_t)cf_gpu_max_buffer(g) + 1, &err) == NULL);
    cf_gpu_begin(g);
    CHECK(cf_gpu_submit(g, &err) == 0);
    /* an op outside a pass, a pass submitted twice */
    cf_gpu_scale(g, view(b), view(b), 2.0f, 16);
    CHECK(cf_gpu_submit(g, &err) != 0);
    CHECKF(strstr(err.msg, "outside cf_gpu_begin") != NULL, "%s", err.msg);
    const int n = cf_gpu_count(&err);
    CHECK(cf_gpu_open(n, &err) == NULL);
    CHECKF(strstr(err.msg, "no GPU device") != NULL, "%s", err.msg);
    cf_gpu_free(g, b);
}

int main(void)
{
    cf_gpu *g = test_gpu();
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        CHECK(cf_gpu_supports(g, types[i]));
        test_matmul(g, types[i]);
        test_matmul_id(g, types[i]);
        test_get_rows(g, types[i]);
    }
    test_errors(g);
    cf_gpu_close(g);
    return test_summary("gpu_matmul");
}
