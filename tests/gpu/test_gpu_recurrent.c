/* The recurrent mixers' steps on the device against the CPU's recipe
 * (forward.c's causal_conv, conv_phase, delta_head and mamba2_head,
 * restated here in their order of operations): the short convolution
 * with SiLU (qwen35; Mamba2 with its bias) and gated (lfm2), the gated
 * delta net with tiled and grouped heads and Mamba2's scan, each over a
 * batch and then over the next tokens from the state the batch left.
 * Tolerance: 1e-5 of the largest value for the convolution and the scan,
 * 1e-4 for the delta net (its norms sum in F32 trees, the CPU's in
 * double); the same bits on a second run. */
#include "gpu_test.h"

static float silu(float x)
{
    return x / (1.0f + expf(-x));
}

/* causal_conv's sums (and conv_phase's gates) for n tokens from window */
static void conv_ref(bool gated, const float *seq, int ld, int n, int C, const float *w, const float *bias, int K,
                     float *window, float *out)
{
    for (int ch = 0; ch < C; ch++) {
        float win[16];
        for (int k = 0; k < K - 1; k++)
            win[k] = window[k * C + ch];
        for (int t = 0; t < n; t++) {
            const float *row = seq + t * ld;
            win[K - 1] = gated ? row[2 * C + ch] * row[ch] : row[ch];
            float sum = 0.0f;
            for (int k = 0; k < K; k++)
                sum += win[k] * w[ch * K + k];
            out[t * C + ch] = gated ? row[C + ch] * sum : silu(sum + (bias ? bias[ch] : 0.0f));
            for (int k = 0; k < K - 1; k++)
                win[k] = win[k + 1];
        }
        for (int k = 0; k < K - 1; k++)
            window[k * C + ch] = win[k];
    }
}

static void test_conv(cf_gpu *g, cf_gpu_conv_kind kind, int C, int K, bool bias)
{
    enum { N = 8, FIRST = 5, LD = 3 * 23 + 4 };
    const bool gated = kind == CF_GPU_CONV_GATED;
    float seq[N * LD], w[23 * 16], window[15 * 23], want[N * 23], got[2][N * 23], wref[15 * 23], b[23];
    test_fill(b, 23, 63u, 1.0f);
    test_fill(seq, N * LD, 60u, 1.0f);
    test_fill(w, (size_t)(C * K), 61u, 1.0f);
    test_fill(window, (size_t)((K - 1) * C), 62u, 1.0f);
    memcpy(wref, window, sizeof window);
    conv_ref(gated, seq, LD, FIRST, C, w, bias ? b : NULL, K, wref, want);
    conv_ref(gated, seq + FIRST * LD, LD, N - FIRST, C, w, bias ? b : NULL, K, wref, want + FIRST * C);
    cf_gpu_buf *sb = test_upload(g, seq, sizeof seq), *wb = test_upload(g, w, sizeof w);
    cf_gpu_buf *winb = test_upload(g, window, sizeof window), *ob = test_upload(g, NULL, sizeof want);
    cf_gpu_buf *bb = test_upload(g, b, sizeof b);
    for (int run = 0; run < 2; run++) {
        cf_err err = {0};
        CHECK(cf_gpu_write(g, view(winb), window, sizeof window, &err) == 0);
        /* a batch of 5, then 3 more tokens from the window it left */
        for (int step = 0; step < 2; step++) {
            const int t0 = step ? FIRST : 0, n = step ? N - FIRST : FIRST;
            cf_gpu_begin(g);
            cf_gpu_conv(g, kind, (cf_gpu_view){sb, (size_t)(t0 * LD) * 4}, LD, n, C, view(wb),
                        bias ? view(bb) : (cf_gpu_view){0}, K, view(winb), (cf_gpu_view){ob, (size_t)(t0 * C) * 4}, C);
            CHECK(test_submit(g) == 0);
        }
        test_download(g, ob, got[run], sizeof(float) * (size_t)(N * C));
    }
    float wgot[15 * 23];
    test_download(g, winb, wgot, sizeof wgot);
    CHECKF(close_all(got[0], want, (size_t)(N * C), 1e-5f, "conv") == 0, "conv %s%s, %d channels, kernel %d",
           gated ? "gated" : "silu", bias ? " with a bias" : "", C, K);
    CHECKF(!memcmp(wgot, wref, sizeof(float) * (size_t)((K - 1) * C)), "conv: the window left is not the last inputs");
    CHECKF(!memcmp(got[0], got[1], sizeof(float) * (size_t)(N * C)), "conv: two runs differ");
    cf_gpu_free(g, sb);
    cf_gpu_free(g, wb);
    cf_gpu_free(g, winb);
    cf_gpu_free(g, ob);
    cf_gpu_free(g, bb);
}

enum { HK = 2, HV = 4, DN = 5, DFIRST = 3, MAXD = 160 };

typedef struct {
    int D;
    bool grouped;
    const float *qkv, *z, *beta, *alpha, *dt_bias, *a, *norm;
    int ld;
} delta_in;

static void l2n(float *y, const float *x, int n, float eps)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += (double)(x[i] * x[i]);
    const float scale = 1.0f / fmaxf(sqrtf((float)sum), eps);
    for (int i = 0; i < n; i++)
        y[i] = x[i] * scale;
}

/* delta_head of value head h over tokens [t0, t1) */
static void delta_ref(const delta_in *in, float *S, int h, int t0, int t1, float eps, float *out)
{
    const int D = in->D, kh = in->grouped ? h / (HV / HK) : h % HK;
    const float q_scale = 1.0f / sqrtf((float)D);
    float q[MAXD], k[MAXD], d[MAXD];
    for (int t = t0; t < t1; t++) {
        const float *row = in->qkv + t * in->ld, *v = row + (2 * HK + h) * D;
        l2n(q, row + kh * D, D, eps);
        l2n(k, row + (HK + kh) * D, D, eps);
        for (int i = 0; i < D; i++)
            q[i] *= q_scale;
        float b_raw, a_raw;
        if (in->grouped) {
            const int r = HV / HK;
            const float *ba = in->beta + t * 2 * HV + (h / r) * 2 * r;
            b_raw = ba[h % r];
            a_raw = ba[r + h % r];
        } else {
            b_raw = in->beta[t * HV + h];
            a_raw = in->alpha[t * HV + h];
        }
        const float beta = 1.0f / (1.0f + expf(-b_raw)), x = a_raw + in->dt_bias[h];
        const float decay = expf((x > 20.0f ? x : log1pf(expf(x))) * in->a[h]);
        for (int i = 0; i < D * D; i++)
            S[i] *= decay;
        for (int j = 0; j < D; j++)
            d[j] = 0.0f;
        for (int i = 0; i < D; i++)
            for (int j = 0; j < D; j++)
                d[j] += S[i * D + j] * k[i];
        for (int j = 0; j < D; j++)
            d[j] = beta * (v[j] - d[j]);
        for (int i = 0; i < D; i++)
            for (int j = 0; j < D; j++)
                S[i * D + j] += k[i] * d[j];
        float *o = out + t * HV * D + h * D;
        double ss = 0;
        for (int j = 0; j < D; j++) {
            o[j] = 0.0f;
            for (int i = 0; i < D; i++)
                o[j] += S[i * D + j] * q[i];
            ss += (double)o[j] * o[j];
        }
        const float scale = 1.0f / sqrtf((float)(ss / D) + eps);
        for (int j = 0; j < D; j++)
            o[j] = o[j] * scale * in->norm[j] * silu(in->z[t * HV * D + h * D + j]);
    }
}

static void test_delta(cf_gpu *g, int D, bool grouped)
{
    const int ld = (2 * HK + HV) * D + 3;
    const size_t nq = (size_t)(DN * ld), nz = (size_t)(DN * HV * D), ns = (size_t)(HV * D * D);
    float *qkv = malloc(nq * 4), *z = malloc(nz * 4), *S = malloc(ns * 4), *Sref = malloc(ns * 4);
    float *want = malloc(nz * 4), *got = malloc(nz * 4), *again = malloc(nz * 4);
    float beta[DN * 2 * HV], alpha[DN * HV], dt_bias[HV], a[HV], norm[MAXD];
    test_fill(qkv, nq, 70u, 1.0f);
    test_fill(z, nz, 71u, 2.0f);
    test_fill(S, ns, 72u, 0.1f);
    test_fill(beta, DN * 2 * HV, 73u, 2.0f);
    test_fill(alpha, DN * HV, 74u, 2.0f);
    test_fill(dt_bias, HV, 75u, 1.0f);
    test_fill(a, HV, 76u, 1.0f);
    test_fill(norm, (size_t)D, 77u, 1.0f);
    const float eps = 1e-6f;
    const delta_in in = {D, grouped, qkv, z, beta, alpha, dt_bias, a, norm, ld};
    memcpy(Sref, S, ns * 4);
    for (int h = 0; h < HV; h++) {
        delta_ref(&in, Sref + (size_t)h * D * D, h, 0, DFIRST, eps, want);
        delta_ref(&in, Sref + (size_t)h * D * D, h, DFIRST, DN, eps, want);
    }
    cf_gpu_buf *qb = test_upload(g, qkv, nq * 4), *zb = test_upload(g, z, nz * 4), *sb = test_upload(g, S, ns * 4);
    cf_gpu_buf *bb = test_upload(g, beta, sizeof beta), *ab = test_upload(g, alpha, sizeof alpha);
    cf_gpu_buf *db = test_upload(g, dt_bias, sizeof dt_bias), *aab = test_upload(g, a, sizeof a);
    cf_gpu_buf *nb = test_upload(g, norm, sizeof norm), *ob = test_upload(g, NULL, nz * 4);
    for (int run = 0; run < 2; run++) {
        cf_err err = {0};
        CHECK(cf_gpu_write(g, view(sb), S, ns * 4, &err) == 0);
        for (int step = 0; step < 2; step++) {
            const int t0 = step ? DFIRST : 0, n = step ? DN - DFIRST : DFIRST;
            const cf_gpu_delta d = {
                .qkv = {qb, (size_t)(t0 * ld) * 4},
                .qkv_ld = ld,
                .z = {zb, (size_t)(t0 * HV * D) * 4},
                .beta = {bb, (size_t)(t0 * (grouped ? 2 : 1) * HV) * 4},
                .alpha = {ab, (size_t)(t0 * HV) * 4},
                .dt_bias = view(db),
                .a = view(aab),
                .norm = view(nb),
                .state = view(sb),
                .out = {ob, (size_t)(t0 * HV * D) * 4},
                .n = n, .D = D, .Hk = HK, .Hv = HV, .grouped = grouped, .eps = eps,
            };
            cf_gpu_begin(g);
            cf_gpu_delta_net(g, &d);
            CHECK(test_submit(g) == 0);
        }
        test_download(g, ob, run ? again : got, nz * 4);
    }
    CHECKF(close_all(got, want, nz, 1e-4f, "delta_net") == 0, "delta_net D %d %s", D, grouped ? "grouped" : "tiled");
    CHECKF(!memcmp(got, again, nz * 4), "delta_net: two runs differ");
    test_download(g, sb, S, ns * 4);
    CHECKF(close_all(S, Sref, ns, 1e-4f, "state") == 0, "delta_net D %d: the state left", D);
    cf_gpu_buf *bufs[] = {qb, zb, sb, bb, ab, db, aab, nb, ob};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cf_gpu_free(g, bufs[i]);
    free(qkv), free(z), free(S), free(Sref), free(want), free(got), free(again);
}

/* mamba2_head over tokens [t0, t1) for every head */
static void mamba2_ref(const float *rows, int ld, int D, int H, int G, int N, const float *dt_b, const float *a,
                       const float *skip, float *S, int t0, int t1, float *y)
{
    const int hd = D / H;
    for (int h = 0; h < H; h++) {
        const int g = h / (H / G);
        for (int t = t0; t < t1; t++) {
            const float *row = rows + t * ld, *z = row + h * hd, *x = row + D + h * hd;
            const float *B = row + 2 * D + g * N, *C = B + G * N;
            const float raw = row[2 * D + 2 * G * N + h] + dt_b[h];
            const float dt = raw > 20.0f ? raw : log1pf(expf(raw)), decay = expf(dt * a[h]);
            for (int p = 0; p < hd; p++) {
                float *st = S + (size_t)(h * hd + p) * N, part[8] = {0};
                const float xdt = x[p] * dt;
                for (int i = 0; i < N; i += 8)
                    for (int j = 0; j < 8; j++) {
                        st[i + j] = st[i + j] * decay + B[i + j] * xdt;
                        part[j] += st[i + j] * C[i + j];
                    }
                float sum = 0.0f;
                for (int j = 0; j < 8; j++)
                    sum += part[j];
                y[t * D + h * hd + p] = (sum + skip[h] * x[p]) * silu(z[p]);
            }
        }
    }
}

/* 4 heads of 24 channels (more lanes than channels) in 2 groups, state 16;
 * 3 tokens, then 2 more. */
static void test_mamba2(cf_gpu *g)
{
    enum { D = 96, H = 4, G = 2, NS = 16, T = 5, FIRST = 3, LD = 2 * D + 2 * G * NS + H + 1 };
    float rows[T * LD], dt_b[H], a[H], skip[H], S[D * NS], Sref[D * NS], want[T * D], got[2][T * D];
    test_fill(rows, T * LD, 80u, 1.0f);
    test_fill(dt_b, H, 81u, 1.0f);
    test_fill(a, H, 82u, 1.0f);
    test_fill(skip, H, 83u, 1.0f);
    test_fill(S, D * NS, 84u, 0.5f);
    memcpy(Sref, S, sizeof S);
    mamba2_ref(rows, LD, D, H, G, NS, dt_b, a, skip, Sref, 0, FIRST, want);
    mamba2_ref(rows, LD, D, H, G, NS, dt_b, a, skip, Sref, FIRST, T, want);
    cf_gpu_buf *rb = test_upload(g, rows, sizeof rows), *db = test_upload(g, dt_b, sizeof dt_b);
    cf_gpu_buf *ab = test_upload(g, a, sizeof a), *kb = test_upload(g, skip, sizeof skip);
    cf_gpu_buf *sb = test_upload(g, S, sizeof S), *ob = test_upload(g, NULL, sizeof want);
    for (int run = 0; run < 2; run++) {
        cf_err err = {0};
        CHECK(cf_gpu_write(g, view(sb), S, sizeof S, &err) == 0);
        for (int step = 0; step < 2; step++) {
            const int t0 = step ? FIRST : 0;
            const cf_gpu_mamba2 m = {
                .rows = {rb, (size_t)(t0 * LD) * 4}, .rows_ld = LD,
                .dt_b = view(db), .a = view(ab), .skip = view(kb), .state = view(sb),
                .out = {ob, (size_t)(t0 * D) * 4},
                .n = step ? T - FIRST : FIRST, .D = D, .H = H, .G = G, .N = NS,
            };
            cf_gpu_begin(g);
            cf_gpu_mamba2_scan(g, &m);
            CHECK(test_submit(g) == 0);
        }
        test_download(g, ob, got[run], sizeof want);
    }
    float Sgot[D * NS];
    test_download(g, sb, Sgot, sizeof Sgot);
    CHECKF(close_all(got[0], want, T * D, 1e-5f, "mamba2") == 0, "mamba2 scan");
    CHECKF(close_all(Sgot, Sref, D * NS, 1e-5f, "mamba2 state") == 0, "mamba2: the state left");
    CHECKF(!memcmp(got[0], got[1], sizeof want), "mamba2: two runs differ");
    cf_gpu_buf *bufs[] = {rb, db, ab, kb, sb, ob};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cf_gpu_free(g, bufs[i]);
}

int main(void)
{
    cf_gpu *g = test_gpu();
    test_conv(g, CF_GPU_CONV_SILU, 23, 4, false);
    test_conv(g, CF_GPU_CONV_SILU, 19, 4, true);
    test_conv(g, CF_GPU_CONV_GATED, 21, 3, false);
    test_delta(g, 40, false);
    test_delta(g, 160, true);
    test_mamba2(g);
    cf_gpu_close(g);
    return test_summary("gpu_recurrent");
}
