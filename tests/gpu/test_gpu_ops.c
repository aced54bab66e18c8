/* The GPU's row-wise, element-wise and attention ops against the CPU's
 * (the forward pass's vector ops, cf_layernorm, cf_rope_apply, cf_gelu,
 * cf_swiglu_oai) on odd sizes, heads strided inside wider rows; attention
 * against the exact softmax (double) over the cache as the CPU rounds it
 * (F16, BF16, F32), with GQA, a sliding window, sinks, soft-capping,
 * output gates and the attention temperature.  Tolerances: 2e-6 of a
 * row's largest value for the norms and RoPE, 1e-5 relative for the
 * activations (GELU: one F16 step, as its table), 2e-5 of the largest
 * value for attention; every op gives the same bits on a second run. */
#include "gpu_test.h"

#include "model_internal.h"
#include "vec.h"

/* Norms over 3 tokens of 5 heads of 67 floats, heads 70 apart in rows of
 * 353: each head normed (the per-head q/k norms), then whole rows of 301
 * (the layer norms) */
static void test_norms(cf_gpu *g)
{
    enum { N = 3, H = 5, D = 67, HS = 70, LD = 353, ROW = 301 };
    float x[N * LD], w[ROW], b[ROW], want[N * LD], got[N * LD], again[N * LD];
    test_fill(x, N * LD, 1u, 3.0f);
    test_fill(w, ROW, 2u, 1.0f);
    test_fill(b, ROW, 3u, 1.0f);
    cf_gpu_buf *xb = test_upload(g, x, sizeof x), *wb = test_upload(g, w, sizeof w), *bb = test_upload(g, b, sizeof b);
    cf_gpu_buf *yb = test_upload(g, x, sizeof x);
    for (int kind = 0; kind < 3; kind++) { /* RMS per head, RMS unweighted rows, layer norm rows */
        memcpy(want, x, sizeof x);
        cf_err err = {0};
        CHECK(cf_gpu_write(g, view(yb), x, sizeof x, &err) == 0);
        for (int run = 0; run < 2; run++) {
            cf_gpu_begin(g);
            if (kind == 0) {
                const cf_gpu_rows r = {view(xb), N, H, LD, HS}, o = {view(yb), N, H, LD, HS};
                cf_gpu_rms_norm(g, r, D, view(wb), 1e-5f, o);
            } else {
                const cf_gpu_rows r = {view(xb), N, 1, LD, 0}, o = {view(yb), N, 1, LD, 0};
                if (kind == 1)
                    cf_gpu_rms_norm(g, r, ROW, (cf_gpu_view){0}, 1e-6f, o);
                else
                    cf_gpu_layer_norm(g, r, ROW, view(wb), view(bb), 1e-5f, o);
            }
            CHECK(test_submit(g) == 0);
            test_download(g, yb, run ? again : got, sizeof got);
        }
        float ones[ROW];
        for (int i = 0; i < ROW; i++)
            ones[i] = 1.0f;
        for (int t = 0; t < N; t++) {
            if (kind == 0)
                for (int h = 0; h < H; h++)
                    cf_vec()->rmsnorm(want + t * LD + h * HS, x + t * LD + h * HS, w, D, 1e-5f);
            else if (kind == 1)
                cf_vec()->rmsnorm(want + t * LD, x + t * LD, ones, ROW, 1e-6f);
            else
                cf_layernorm(want + t * LD, x + t * LD, w, b, ROW, 1e-5f);
        }
        CHECKF(close_all(got, want, N * LD, 2e-6f, "norm") == 0, "norm kind %d", kind);
        CHECKF(!memcmp(got, again, sizeof got), "norm kind %d: two runs differ", kind);
    }
    cf_gpu_free(g, xb);
    cf_gpu_free(g, wb);
    cf_gpu_free(g, bb);
    cf_gpu_free(g, yb);
}

/* RoPE of 4 tokens at positions 9.. over 3 heads of 48 (q_gate-like:
 * heads 96 apart), all 48 dims or the first 32 (partial), both styles;
 * the tables are any numbers: the shader only rotates by them. */
static void test_rope(cf_gpu *g)
{
    enum { N = 4, H = 3, D = 48, HS = 96, LD = 300, POS0 = 9, NPOS = 13 };
    float x[N * LD], cosv[NPOS * D / 2], sinv[NPOS * D / 2], want[N * LD], got[N * LD], again[N * LD];
    test_fill(x, N * LD, 4u, 2.0f);
    cf_gpu_buf *cb = test_upload(g, NULL, sizeof cosv), *sb = test_upload(g, NULL, sizeof sinv);
    cf_gpu_buf *xb = test_upload(g, x, sizeof x);
    for (int n_rot = 32; n_rot <= D; n_rot += D - 32)
        for (int style = CF_ROPE_NORMAL; style <= CF_ROPE_NEOX; style++) {
            const int half = n_rot / 2;
            for (int p = 0; p < NPOS; p++)
                for (int i = 0; i < half; i++) {
                    cosv[p * half + i] = cosf(0.3f * (float)p / (float)(i + 1));
                    sinv[p * half + i] = sinf(0.3f * (float)p / (float)(i + 1));
                }
            cf_err err = {0};
            CHECK(cf_gpu_write(g, view(cb), cosv, sizeof cosv, &err) == 0);
            CHECK(cf_gpu_write(g, view(sb), sinv, sizeof sinv, &err) == 0);
            for (int run = 0; run < 2; run++) {
                CHECK(cf_gpu_write(g, view(xb), x, sizeof x, &err) == 0);
                cf_gpu_begin(g);
                cf_gpu_rope(g, (cf_gpu_rows){view(xb), N, H, LD, HS}, n_rot, (cf_rope_style)style, view(cb), view(sb),
                            POS0);
                CHECK(test_submit(g) == 0);
                test_download(g, xb, run ? again : got, sizeof got);
            }
            memcpy(want, x, sizeof x);
            for (int t = 0; t < N; t++)
                for (int h = 0; h < H; h++)
                    cf_rope_apply((cf_rope_style)style, n_rot, want + t * LD + h * HS, cosv + (POS0 + t) * half,
                                  sinv + (POS0 + t) * half);
            CHECKF(close_all(got, want, N * LD, 2e-6f, "rope") == 0, "rope n_rot %d style %d", n_rot, style);
            CHECKF(!memcmp(got, again, sizeof got), "rope: two runs differ");
        }
    cf_gpu_free(g, cb);
    cf_gpu_free(g, sb);
    cf_gpu_free(g, xb);
}

/* The activations over 3 rows of 77 in rows of 160 (phi3's fused gate|up:
 * up 80 floats after gate), and the adds (of a row, of rows by index, gated
 * per row), products (by rows, by rows by index) and scales. */
static void test_elementwise(cf_gpu *g)
{
    enum { N = 3, W = 77, LD = 160 };
    float x[N * LD], out[N * LD], again[N * LD], want[N * LD];
    test_fill(x, N * LD, 6u, 8.0f);
    x[5] = 12.0f; /* past the clamps and GELU's range */
    x[6] = -11.0f;
    cf_gelu_init();
    cf_gpu_buf *xb = test_upload(g, x, sizeof x), *ob = test_upload(g, NULL, sizeof out);
    for (int act = CF_GPU_SILU; act <= CF_GPU_RELU2; act++) {
        for (int run = 0; run < 2; run++) {
            cf_gpu_begin(g);
            cf_gpu_glu(g, (cf_gpu_act)act, view(xb), (cf_gpu_view){xb, 80 * 4}, LD, N, W, view(ob), W);
            CHECK(test_submit(g) == 0);
            test_download(g, ob, run ? again : out, sizeof(float) * N * W);
        }
        for (int t = 0; t < N; t++) {
            float *wr = want + t * W;
            const float *gt = x + t * LD, *up = gt + 80;
            memcpy(wr, gt, sizeof(float) * W);
            if (act == CF_GPU_SILU)
                cf_vec()->silu_mul(wr, up, W);
            else if (act == CF_GPU_SWIGLU_OAI)
                cf_swiglu_oai(wr, up, W);
            else
                for (int i = 0; i < W; i++)
                    wr[i] = act == CF_GPU_GELU ? cf_gelu(gt[i]) * up[i]
                            : act == CF_GPU_GELU_ONLY ? cf_gelu(gt[i])
                                                      : fmaxf(gt[i], 0) * fmaxf(gt[i], 0);
        }
        int bad = 0;
        for (int i = 0; i < N * W; i++) {
            /* GELU goes through F16: one F16 step either way where tanh rounds otherwise */
            const float tol = act == CF_GPU_GELU || act == CF_GPU_GELU_ONLY ? 1e-3f : 1e-5f;
            if (!(fabsf(out[i] - want[i]) <= tol * fabsf(want[i]) + 1e-6f) && bad++ < 3)
                fprintf(stderr, "  act %d [%d]: %.9g, want %.9g\n", act, i, out[i], want[i]);
        }
        CHECKF(bad == 0, "activation %d", act);
        CHECKF(!memcmp(out, again, sizeof(float) * N * W), "activation %d: two runs differ", act);
    }
    /* y = x + bias (one row), y = y * x (every row), y *= 0.5 */
    cf_gpu_buf *yb = test_upload(g, NULL, sizeof out);
    cf_gpu_begin(g);
    cf_gpu_add(g, view(yb), view(xb), (cf_gpu_view){xb, 7 * 4}, 1, N, W, LD);
    cf_gpu_mul(g, view(yb), view(yb), view(xb), N, N, W, LD);
    cf_gpu_scale(g, view(yb), view(yb), 0.5f, N * LD);
    cf_gpu_copy(g, view(ob), view(yb), sizeof out);
    CHECK(test_submit(g) == 0);
    test_download(g, ob, out, sizeof out);
    int bad = 0;
    for (int t = 0; t < N; t++)
        for (int i = 0; i < W; i++)
            bad += out[t * LD + i] != (x[t * LD + i] + x[7 + i]) * x[t * W + i] * 0.5f;
    CHECKF(bad == 0, "add, mul, scale: %d values differ", bad);

    /* y = x + b[idx[t]] (an expert's bias for each pair), then y + b[t]
     * sigmoid(gate[t]) (a gated shared expert), then y * b[idx[t]] (an
     * expert's scale) */
    enum { NB = 5 };
    float b[NB * W], gate[N];
    const int32_t idx[N] = {4, 0, 4};
    test_fill(b, NB * W, 9u, 2.0f);
    test_fill(gate, N, 10u, 3.0f);
    cf_gpu_buf *bb = test_upload(g, b, sizeof b), *ib = test_upload(g, idx, sizeof idx);
    cf_gpu_buf *gb = test_upload(g, gate, sizeof gate);
    cf_gpu_begin(g);
    cf_gpu_add_by(g, view(yb), view(xb), view(bb), NB, view(ib), N, W, LD);
    cf_gpu_add_gated(g, view(yb), view(yb), view(bb), view(gb), N, W, LD);
    cf_gpu_mul_by(g, view(yb), view(yb), view(bb), NB, view(ib), N, W, LD);
    CHECK(test_submit(g) == 0);
    test_download(g, yb, out, sizeof out);
    bad = 0;
    for (int t = 0; t < N; t++)
        for (int i = 0; i < W; i++) {
            const float by = x[t * LD + i] + b[idx[t] * W + i];
            const float want_ti = (by + b[t * W + i] * (1.0f / (1.0f + expf(-gate[t])))) * b[idx[t] * W + i];
            bad += !(fabsf(out[t * LD + i] - want_ti) <= 1e-6f * fabsf(want_ti) + 1e-6f);
        }
    CHECKF(bad == 0, "add_by, add_gated, mul_by: %d values differ", bad);
    cf_gpu_free(g, bb);
    cf_gpu_free(g, ib);
    cf_gpu_free(g, gb);
    cf_gpu_free(g, xb);
    cf_gpu_free(g, ob);
    cf_gpu_free(g, yb);
}

enum { NH = 6, NKV = 2, CTX = 320 };

typedef struct {
    int hd, window, sinks;
    float softcap;
    int gate;         /* q_gate's sigmoid gates on the output */
    float temp_scale; /* mistral3's temperature, floor 16 */
    cf_kv_type type;  /* the cache's */
    int n;            /* the prompt's tokens (then one more) */
} attn_case;

/* v as a cache of type t keeps it */
static float kv_round(cf_kv_type t, float v)
{
    return t == CF_KV_F16 ? cf_f16_to_f32(cf_f32_to_f16(v)) : t == CF_KV_BF16 ? cf_bf16_to_f32(cf_f32_to_bf16(v)) : v;
}

/* element i of a cache of type t read back from the device */
static float kv_elem(cf_kv_type t, const void *cache, size_t i)
{
    if (t == CF_KV_F32)
        return ((const float *)cache)[i];
    const uint16_t h = ((const uint16_t *)cache)[i];
    return t == CF_KV_F16 ? cf_f16_to_f32(h) : cf_bf16_to_f32(h);
}

/* The exact attention of query q (head h) at pos over keys k and values v
 * ([NKV][CTX][hd], already rounded as the cache keeps them). */
static void attn_ref(const attn_case *c, const float *q, int h, int pos, const float *k, const float *v,
                     const float *sinks, float scale, float *out)
{
    const int hd = c->hd, gk = h / (NH / NKV);
    const int first = c->window && pos + 1 > c->window ? pos + 1 - c->window : 0;
    const double temp = c->temp_scale > 0 ? log(floor(pos / 16.0) + 1.0) * c->temp_scale + 1.0 : 1.0;
    double m = c->sinks ? sinks[h] : -INFINITY, s[CTX];
    for (int p = first; p <= pos; p++) {
        double d = 0;
        for (int i = 0; i < hd; i++)
            d += (double)q[i] * k[((size_t)gk * CTX + (size_t)p) * (size_t)hd + (size_t)i];
        d *= scale * temp;
        if (c->softcap > 0)
            d = c->softcap * tanh(d / c->softcap);
        s[p] = d;
        m = fmax(m, d);
    }
    double l = c->sinks ? exp(sinks[h] - m) : 0, o[512] = {0};
    for (int p = first; p <= pos; p++) {
        const double e = exp(s[p] - m);
        l += e;
        for (int i = 0; i < hd; i++)
            o[i] += e * v[((size_t)gk * CTX + (size_t)p) * (size_t)hd + (size_t)i];
    }
    for (int i = 0; i < hd; i++)
        out[i] = (float)(o[i] / l);
}

/* A prompt of c->n tokens stored and attended as a batch, then one more
 * token; again as three passes cut elsewhere, which must give the same
 * bits (the positions' chunks of 256 and tiles of 64 do not move with
 * the batch). */
static void test_attention(cf_gpu *g, const attn_case *c)
{
    const int N = c->n, hd = c->hd, qld = NH * hd + 5, kld = NKV * hd;
    const size_t cache = (size_t)NKV * CTX * (size_t)hd;
    float *q = malloc(sizeof(float) * (size_t)(N + 1) * (size_t)qld), *k = malloc(sizeof(float) * (size_t)(N + 1) * (size_t)kld);
    float *v = malloc(sizeof(float) * (size_t)(N + 1) * (size_t)kld), *kc = calloc(cache, sizeof(float)),
          *vc = calloc(cache, sizeof(float));
    float *out = malloc(sizeof(float) * (size_t)(N + 1) * NH * (size_t)hd), *again = malloc(sizeof(float) * (size_t)(N + 1) * NH * (size_t)hd);
    float *want = malloc(sizeof(float) * (size_t)(N + 1) * NH * (size_t)hd), sinks[NH];
    float *gates = malloc(sizeof(float) * (size_t)(N + 1) * NH * (size_t)hd);
    test_fill(gates, (size_t)(N + 1) * NH * (size_t)hd, 15u, 3.0f);
    test_fill(q, (size_t)(N + 1) * (size_t)qld, 11u, 1.0f);
    test_fill(k, (size_t)(N + 1) * (size_t)kld, 12u, 1.0f);
    test_fill(v, (size_t)(N + 1) * (size_t)kld, 13u, 1.0f);
    test_fill(sinks, NH, 14u, 2.0f);
    for (int t = 0; t <= N; t++)
        for (int gk = 0; gk < NKV; gk++)
            for (int i = 0; i < hd; i++) {
                const size_t at = ((size_t)gk * CTX + (size_t)t) * (size_t)hd + (size_t)i;
                kc[at] = kv_round(c->type, k[(size_t)t * (size_t)kld + (size_t)gk * (size_t)hd + (size_t)i]);
                vc[at] = kv_round(c->type, v[(size_t)t * (size_t)kld + (size_t)gk * (size_t)hd + (size_t)i]);
            }
    const float scale = 1.0f / sqrtf((float)hd);
    for (int t = 0; t <= N; t++)
        for (int h = 0; h < NH; h++) {
            float *w = want + ((size_t)t * NH + (size_t)h) * (size_t)hd;
            attn_ref(c, q + (size_t)t * (size_t)qld + (size_t)h * (size_t)hd, h, t, kc, vc, sinks, scale, w);
            for (int i = 0; c->gate && i < hd; i++)
                w[i] *= 1.0f / (1.0f + expf(-gates[((size_t)t * NH + (size_t)h) * (size_t)hd + (size_t)i]));
        }
    cf_gpu_buf *qb = test_upload(g, q, sizeof(float) * (size_t)(N + 1) * (size_t)qld);
    cf_gpu_buf *kb = test_upload(g, k, sizeof(float) * (size_t)(N + 1) * (size_t)kld);
    cf_gpu_buf *vb = test_upload(g, v, sizeof(float) * (size_t)(N + 1) * (size_t)kld);
    cf_gpu_buf *sb = test_upload(g, sinks, sizeof sinks), *ob = test_upload(g, NULL, sizeof(float) * (size_t)(N + 1) * NH * (size_t)hd);
    const size_t elem = c->type == CF_KV_F32 ? 4 : 2;
    cf_gpu_buf *kcb = test_upload(g, NULL, cache * elem), *vcb = test_upload(g, NULL, cache * elem);
    cf_gpu_buf *gb = test_upload(g, gates, sizeof(float) * (size_t)(N + 1) * NH * (size_t)hd);
    const cf_gpu_kv kv = {view(kcb), view(vcb), CTX, NKV, hd, c->type, 0};
    for (int run = 0; run < 2; run++) {
        /* the prompt, then the next token, as a pass each; then a third of
         * the prompt, the rest, the next token */
        const int cuts[2][4] = {{0, N, N + 1, N + 1}, {0, N / 3, N, N + 1}};
        for (int step = 0; step < 3; step++) {
            const int pos0 = cuts[run][step], n = cuts[run][step + 1] - pos0;
            if (!n)
                continue;
            const size_t qo = (size_t)pos0 * (size_t)qld * 4, ko = (size_t)pos0 * (size_t)kld * 4;
            cf_gpu_attn a = {
                .q = {{qb, qo}, n, NH, qld, hd},
                .kv = kv,
                .pos0 = pos0,
                .window = c->window,
                .scale = scale,
                .softcap = c->softcap,
                .sinks = c->sinks ? view(sb) : (cf_gpu_view){0},
                .out = {{ob, (size_t)pos0 * NH * (size_t)hd * 4}, n, NH, NH * hd, hd},
                .gate = {{c->gate ? gb : NULL, (size_t)pos0 * NH * (size_t)hd * 4}, n, NH, NH * hd, hd},
                .temp_scale = c->temp_scale,
                .temp_floor = 16.0f,
            };
            cf_gpu_begin(g);
            cf_gpu_kv_store(g, &kv, (cf_gpu_rows){{kb, ko}, n, NKV, kld, hd}, (cf_gpu_rows){{vb, ko}, n, NKV, kld, hd},
                            pos0);
            cf_gpu_attention(g, &a);
            CHECK(test_submit(g) == 0);
        }
        test_download(g, ob, run ? again : out, sizeof(float) * (size_t)(N + 1) * NH * (size_t)hd);
    }
    void *kgot = malloc(cache * elem), *vgot = malloc(cache * elem);
    test_download(g, kcb, kgot, cache * elem);
    test_download(g, vcb, vgot, cache * elem);
    int bad_kv = 0;
    for (size_t i = 0; i < cache; i++)
        bad_kv += kv_elem(c->type, kgot, i) != kc[i] || kv_elem(c->type, vgot, i) != vc[i];
    CHECKF(bad_kv == 0, "the %s cache: %d values differ from the CPU's rounding", cf_kv_type_name(c->type), bad_kv);
    CHECKF(close_all(out, want, (size_t)(N + 1) * NH * (size_t)hd, 2e-5f, "attention") == 0,
           "attention head_dim %d window %d sinks %d softcap %g gate %d temperature %g %s cache", hd, c->window,
           c->sinks, (double)c->softcap, c->gate, (double)c->temp_scale, cf_kv_type_name(c->type));
    CHECKF(!memcmp(out, again, sizeof(float) * (size_t)(N + 1) * NH * (size_t)hd),
           "attention: the passes cut elsewhere differ");
    cf_gpu_buf *bufs[] = {qb, kb, vb, sb, ob, kcb, vcb, gb};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cf_gpu_free(g, bufs[i]);
    free(kgot);
    free(vgot);
    free(q), free(k), free(v), free(kc), free(vc), free(out), free(again), free(want), free(gates);
}

/* A pass that uploads its input, computes and downloads the result: one
 * submission; more bytes than one staging chunk (4 MiB); twice, so that
 * the second pass reuses the first's staging. */
static void test_pass_copies(cf_gpu *g)
{
    enum { BIG = (5 << 20) / 4, SMALL = 1000 };
    float *big = malloc(BIG * 4), *back = malloc(BIG * 4), small[SMALL], out[SMALL];
    test_fill(big, BIG, 90u, 1.0f);
    test_fill(small, SMALL, 91u, 1.0f);
    cf_gpu_buf *bb = test_upload(g, NULL, BIG * 4), *sb = test_upload(g, NULL, SMALL * 4);
    for (int pass = 0; pass < 2; pass++) {
        cf_gpu_begin(g);
        cf_gpu_upload(g, view(sb), small, sizeof small);
        cf_gpu_upload(g, view(bb), big, BIG * 4);
        cf_gpu_scale(g, view(sb), view(sb), 2.0f, SMALL);
        cf_gpu_download(g, view(sb), out, sizeof out);
        cf_gpu_download(g, (cf_gpu_view){bb, 4}, back, BIG * 4 - 4);
        memset(out, 0, sizeof out);
        CHECK(test_submit(g) == 0);
        int bad = 0;
        for (int i = 0; i < SMALL; i++)
            bad += out[i] != 2.0f * small[i];
        CHECKF(bad == 0 && !memcmp(back, big + 1, BIG * 4 - 4), "pass %d: recorded copies differ (%d)", pass, bad);
    }
    cf_gpu_begin(g);
    cf_gpu_download(g, (cf_gpu_view){sb, 8}, out, sizeof out);
    cf_err err = {0};
    CHECK(cf_gpu_submit(g, &err) != 0);
    CHECKF(strstr(err.msg, "runs past its buffer") != NULL, "%s", err.msg);
    cf_gpu_free(g, bb);
    cf_gpu_free(g, sb);
    free(big);
    free(back);
}

/* Latent attention (deepseek2): 4 query heads over one cache of keys
 * only, 80 wide (a latent of 64, a rotated part of 16), each value the
 * latent: 70 tokens as a batch, then one more; F16 and F32 caches. */
static void test_latent_attention(cf_gpu *g, cf_kv_type type)
{
    enum { H = 4, HD = 80, VD = 64, N = 70, LCTX = 90 };
    const size_t elem = type == CF_KV_F32 ? 4 : 2;
    float *q = malloc(sizeof(float) * (N + 1) * H * HD), *k = malloc(sizeof(float) * (N + 1) * HD);
    float *kc = malloc(sizeof(float) * (N + 1) * HD), *want = malloc(sizeof(float) * (N + 1) * H * VD);
    float *got = malloc(sizeof(float) * (N + 1) * H * VD);
    test_fill(q, (N + 1) * H * HD, 21u, 1.0f);
    test_fill(k, (N + 1) * HD, 22u, 1.0f);
    for (int i = 0; i < (N + 1) * HD; i++)
        kc[i] = kv_round(type, k[i]);
    const float scale = 1.0f / sqrtf((float)HD);
    for (int t = 0; t <= N; t++)
        for (int h = 0; h < H; h++) {
            double s[N + 1], m = -INFINITY, l = 0, o[VD] = {0};
            for (int p = 0; p <= t; p++) {
                double d = 0;
                for (int i = 0; i < HD; i++)
                    d += (double)q[(t * H + h) * HD + i] * kc[p * HD + i];
                s[p] = d * scale;
                m = fmax(m, s[p]);
            }
            for (int p = 0; p <= t; p++) {
                const double e = exp(s[p] - m);
                l += e;
                for (int i = 0; i < VD; i++)
                    o[i] += e * kc[p * HD + i];
            }
            for (int i = 0; i < VD; i++)
                want[(t * H + h) * VD + i] = (float)(o[i] / l);
        }
    cf_gpu_buf *qb = test_upload(g, q, sizeof(float) * (N + 1) * H * HD), *kb = test_upload(g, k, sizeof(float) * (N + 1) * HD);
    cf_gpu_buf *cb = test_upload(g, NULL, LCTX * HD * elem), *ob = test_upload(g, NULL, sizeof(float) * (N + 1) * H * VD);
    const cf_gpu_kv kv = {view(cb), {0}, LCTX, 1, HD, type, VD};
    for (int step = 0; step < 2; step++) {
        const int pos0 = step ? N : 0, n = step ? 1 : N;
        const cf_gpu_attn a = {
            .q = {{qb, (size_t)pos0 * H * HD * 4}, n, H, H * HD, HD},
            .kv = kv,
            .pos0 = pos0,
            .scale = scale,
            .out = {{ob, (size_t)pos0 * H * VD * 4}, n, H, H * VD, VD},
        };
        cf_gpu_begin(g);
        cf_gpu_kv_store(g, &kv, (cf_gpu_rows){{kb, (size_t)pos0 * HD * 4}, n, 1, HD, HD}, (cf_gpu_rows){{0}, 0, 1, 0, 0},
                        pos0);
        cf_gpu_attention(g, &a);
        CHECK(test_submit(g) == 0);
    }
    test_download(g, ob, got, sizeof(float) * (N + 1) * H * VD);
    CHECKF(close_all(got, want, (N + 1) * H * VD, 2e-5f, "latent attention") == 0, "latent attention, %s cache",
           cf_kv_type_name(type));
    cf_gpu_free(g, qb);
    cf_gpu_free(g, kb);
    cf_gpu_free(g, cb);
    cf_gpu_free(g, ob);
    free(q), free(k), free(kc), free(want), free(got);
}

int main(void)
{
    cf_gpu *g = test_gpu();
    test_pass_copies(g);
    test_norms(g);
    test_rope(g);
    test_elementwise(g);
    static const attn_case cases[] = {
        {66, 0, 0, 0, 0, 0, CF_KV_F16, 70},      /* plain: GQA over the whole prompt */
        {128, 20, 1, 0, 0, 0, CF_KV_F16, 70},    /* sliding window, gpt-oss sinks */
        {256, 0, 0, 30.0f, 0, 0, CF_KV_F16, 70}, /* soft-capped scores, a large head */
        {64, 0, 0, 0, 1, 0.5f, CF_KV_F16, 70},   /* q_gate's output gates, mistral3's temperature */
        {66, 20, 0, 0, 0, 0, CF_KV_F32, 70},     /* an F32 cache */
        {64, 0, 1, 0, 0, 0, CF_KV_BF16, 70},     /* a BF16 cache */
        {32, 0, 1, 0, 0, 0, CF_KV_F16, 300},     /* two chunks of positions, sinks */
        {32, 40, 0, 0, 0, 0, CF_KV_F16, 300},    /* windows across a chunk's end */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        test_attention(g, &cases[i]);
    test_latent_attention(g, CF_KV_F16);
    test_latent_attention(g, CF_KV_F32);
    /* a quantized cache is the CPU's: one clear error */
    CHECK(!cf_gpu_kv_supports(CF_KV_Q8_0) && cf_gpu_kv_supports(CF_KV_BF16));
    cf_gpu_buf *b = test_upload(g, NULL, 4096);
    const cf_gpu_kv q8 = {view(b), view(b), 16, 1, 64, CF_KV_Q8_0, 0};
    const cf_gpu_rows r = {view(b), 1, 1, 64, 64};
    cf_err err = {0};
    cf_gpu_begin(g);
    cf_gpu_kv_store(g, &q8, r, r, 0);
    CHECK(cf_gpu_submit(g, &err) != 0);
    CHECKF(strstr(err.msg, "cache on the GPU") != NULL, "%s", err.msg);
    cf_gpu_free(g, b);
    cf_gpu_close(g);
    return test_summary("gpu_ops");
}
