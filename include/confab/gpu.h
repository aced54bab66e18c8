/* GPU compute (src/gpu): devices, device memory, and the forward pass's
 * ops as compute shaders, recorded into one command buffer and submitted
 * with one wait.  Only src/gpu knows the API underneath (Vulkan); a build
 * without it answers "no GPU" (cf_gpu_count 0, cf_gpu_open fails).
 *
 * Use: cf_gpu_open, cf_gpu_alloc buffers and cf_gpu_write weights once;
 * then per pass cf_gpu_begin, the ops, cf_gpu_submit (which waits), and
 * cf_gpu_read the results.  The ops record and return nothing: a bad
 * argument or a failure while recording is kept, the rest of the pass is
 * skipped, and cf_gpu_submit reports it.  Dependent ops see each other's
 * writes (the recorder puts a barrier between dispatches).
 *
 * Every float is F32 unless said otherwise; every count of floats between
 * rows (ld) is in floats.  A view's offset is in bytes and must be a
 * multiple of 4, except for weights (any byte).  Results depend only on
 * the inputs, never on the batch size or on what else is recorded: two
 * runs on one device give the same bits, and a token's result is the
 * same alone or in a batch of any size. */
#ifndef CONFAB_GPU_H
#define CONFAB_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"
#include "confab/kernels.h"
#include "confab/model.h"

typedef struct cf_gpu cf_gpu;         /* an opened device */
typedef struct cf_gpu_buf cf_gpu_buf; /* device-local memory */
typedef struct cf_gpu_view {
    cf_gpu_buf *buf; /* NULL: none (where an op says it is optional) */
    size_t off;      /* bytes */
} cf_gpu_view;

typedef struct cf_gpu_info {
    char name[256];
    char type[16];      /* "discrete", "integrated", "virtual", "cpu", "other" */
    uint64_t mem_bytes; /* device-local heap */
    uint32_t subgroup;  /* subgroup (warp, wave) size */
    bool coopmat;       /* VK_KHR_cooperative_matrix */
} cf_gpu_info;

/* Whether this build has a GPU backend at all. */
bool cf_gpu_built(void);
/* Devices, in the order --device numbers them: discrete GPUs first, CPU
 * implementations (lavapipe) last.  0 when there is no loader or device
 * (err then says why, for a caller that wants to tell the user). */
int cf_gpu_count(cf_err *err);
int cf_gpu_info_get(int i, cf_gpu_info *out, cf_err *err);
/* Device i of cf_gpu_count's order; -1: the first. */
cf_gpu *cf_gpu_open(int device, cf_err *err);
void cf_gpu_close(cf_gpu *g);
const cf_gpu_info *cf_gpu_device(const cf_gpu *g);

/* Whether cf_gpu_matmul (and cf_gpu_matmul_id, cf_gpu_get_rows) take
 * weights of type t. */
bool cf_gpu_supports(const cf_gpu *g, cf_type t);
/* The most bytes one buffer can have (a view reaches no further). */
uint64_t cf_gpu_max_buffer(const cf_gpu *g);

/* Device-local memory.  Out of device memory is an error, not a crash:
 * NULL with err saying so, and the device stays usable. */
cf_gpu_buf *cf_gpu_alloc(cf_gpu *g, size_t bytes, cf_err *err);
void cf_gpu_free(cf_gpu *g, cf_gpu_buf *b);
size_t cf_gpu_buf_bytes(const cf_gpu_buf *b);
/* Copies between host and device memory, each one submitted and waited
 * for (outside a begin/submit pair). */
int cf_gpu_write(cf_gpu *g, cf_gpu_view dst, const void *src, size_t n, cf_err *err);
int cf_gpu_read(cf_gpu *g, cf_gpu_view src, void *dst, size_t n, cf_err *err);

/* ---- recording a pass ------------------------------------------------------ */
void cf_gpu_begin(cf_gpu *g);
/* Submit what was recorded since cf_gpu_begin and wait for it. */
int cf_gpu_submit(cf_gpu *g, cf_err *err);
/* Copies recorded into the pass, so that a token is one submission and
 * one wait: n bytes of src (read now, at record time) land in dst before
 * the ops recorded after; n bytes of src as the ops recorded before left
 * them land in dst (host memory, valid until then) when cf_gpu_submit
 * returns 0. */
void cf_gpu_upload(cf_gpu *g, cf_gpu_view dst, const void *src, size_t n);
void cf_gpu_download(cf_gpu *g, cf_gpu_view src, void *dst, size_t n);

/* y[t][r] = dot(weight row r, x[t]) for t < n, r < rows: w is `rows` rows
 * of k values of type wt (GGUF block bytes, cf_row_bytes(wt, k) a row),
 * x F32 [n][k], y F32 [n][rows].  The activations are not rounded to the
 * CPU's dot type: the sums are in F32 of the dequantized weights. */
void cf_gpu_matmul(cf_gpu *g, cf_type wt, cf_gpu_view w, int64_t rows, int64_t k, cf_gpu_view x, int n,
                   cf_gpu_view y);
/* The same with rows of x ldx floats apart and rows of y ldy apart (a
 * head's slice of wider rows: latent attention's absorbed queries and
 * values; an output split over buffers by rows); the same bits. */
void cf_gpu_matmul_ld(cf_gpu *g, cf_type wt, cf_gpu_view w, int64_t rows, int64_t k, cf_gpu_view x, int64_t ldx,
                      int n, cf_gpu_view y, int64_t ldy);
/* Mixture of experts: for pair p < n, y[p] = W[ids[p]] x[xrow[p]], where W[e]
 * is the expert e matrix (rows x k of wt) at w + e * expert_bytes.  ids and
 * xrow: int32 [n] on the device; x F32 [.][k], y F32 [n][rows]. */
void cf_gpu_matmul_id(cf_gpu *g, cf_type wt, cf_gpu_view w, size_t expert_bytes, int64_t rows, int64_t k,
                      cf_gpu_view ids, cf_gpu_view xrow, cf_gpu_view x, int n, cf_gpu_view y);
/* Mixture-of-experts routing of n tokens as cf_moe_route does it (the
 * gating, choice bias, groups, weight normalising and scale of hp): from
 * the router's logits F32 [n][n_expert] and bias (F32 [n_expert],
 * optional), sel int32 [n][k] (best first), w F32 [n][k], and xrow int32
 * [n][k] = t, the input row of each (token, expert) pair, for
 * cf_gpu_matmul_id.  k = hp->n_expert_used <= 64, n_expert <= 512.  The
 * softmax sums in F32, not the CPU's double: a near-tie may go the other
 * way than on the CPU (never differently between two runs). */
void cf_gpu_moe_route(cf_gpu *g, const cf_hparams *hp, cf_gpu_view logits, cf_gpu_view bias, int n,
                      cf_gpu_view sel, cf_gpu_view w, cf_gpu_view xrow);
/* out[t][i] = sum over j < k of w[t][j] y[t * k + j][i] for i < width:
 * the experts' outputs (pair rows of width floats) summed by their
 * weights; out rows ld apart. */
void cf_gpu_moe_sum(cf_gpu *g, cf_gpu_view y, cf_gpu_view w, int n, int k, int width, cf_gpu_view out, int64_t ld);
/* y[t] = row ids[t] of w (rows of k values of type wt) as F32: the token
 * embeddings.  ids: int32 [n] on the device. */
void cf_gpu_get_rows(cf_gpu *g, cf_type wt, cf_gpu_view w, int64_t k, cf_gpu_view ids, int n, cf_gpu_view y);

/* Rows for the row-wise ops: n tokens of `heads` rows of dim floats each
 * (heads 1: plain rows), token t's head h at v + (t * ld + h * hs) floats. */
typedef struct cf_gpu_rows {
    cf_gpu_view v;
    int n, heads;
    int64_t ld, hs;
} cf_gpu_rows;

/* y = x / sqrt(mean(x^2) + eps) * w  (w: dim floats, buf NULL for none);
 * y may be x. */
void cf_gpu_rms_norm(cf_gpu *g, cf_gpu_rows x, int dim, cf_gpu_view w, float eps, cf_gpu_rows y);
/* y = (x - mean) / sqrt(var + eps) * w + b  (w, b optional). */
void cf_gpu_layer_norm(cf_gpu *g, cf_gpu_rows x, int dim, cf_gpu_view w, cf_gpu_view b, float eps,
                       cf_gpu_rows y);
/* Rotate the first n_rot floats of each row in place by the angles of its
 * position pos0 + t: cos and sin are tables [position][n_rot / 2] (the
 * CPU's rope_cos / rope_sin, which carry the base, scaling and YaRN), the
 * pairs (2i, 2i + 1) for CF_ROPE_NORMAL, (i, i + n_rot / 2) for NEOX. */
void cf_gpu_rope(cf_gpu *g, cf_gpu_rows x, int n_rot, cf_rope_style style, cf_gpu_view cos,
                 cf_gpu_view sin, int pos0);

/* ---- attention over a cache ---------------------------------------------- */
/* A layer's cache on the device: keys and values of type `type` (F32,
 * F16 or BF16; the quantized caches stay on the CPU), [n_head_kv][n_ctx]
 * [head_dim] and [n_head_kv][n_ctx][v_dim] (kv_store writes them).
 * Latent attention (deepseek2) keeps keys only (v.buf NULL): a value is
 * the first v_dim floats of its key row. */
typedef struct cf_gpu_kv {
    cf_gpu_view k, v;
    int n_ctx, n_head_kv, head_dim;
    cf_kv_type type;
    int v_dim; /* 0: head_dim */
} cf_gpu_kv;
/* Whether the device keeps a cache of type t. */
bool cf_gpu_kv_supports(cf_kv_type t);
/* Store n tokens' keys and values (rows of n_head_kv heads) at positions
 * pos0.., rounded to the cache's type as the CPU rounds them (keys only:
 * v unused). */
void cf_gpu_kv_store(cf_gpu *g, const cf_gpu_kv *kv, cf_gpu_rows k, cf_gpu_rows v, int pos0);

typedef struct cf_gpu_attn {
    cf_gpu_rows q;     /* n tokens of n_head query heads, head_dim each (<= 640) */
    cf_gpu_kv kv;      /* positions 0 .. pos0 + n - 1 stored */
    int pos0;          /* token t is at position pos0 + t and sees positions <= its own */
    int window;        /* 0, or a key n_swa or more positions back is masked */
    float scale;       /* scores = q.k * scale */
    float softcap;     /* 0, or scores become cap * tanh(scores / cap) */
    cf_gpu_view sinks; /* optional: F32 [n_head] scores that take a share of the softmax, no value */
    cf_gpu_rows out;   /* n tokens of n_head heads, v_dim each */
    /* optional (buf NULL: none): each head's output times sigmoid(gate)
     * (q_gate: the gates beside the queries, n tokens of n_head heads of
     * v_dim) */
    cf_gpu_rows gate;
    /* 0, or the queries times log(floor(pos / temp_floor) + 1) temp_scale
     * + 1 (mistral3's attention temperature) */
    float temp_scale, temp_floor;
} cf_gpu_attn;
/* Softmax attention of every query head over its KV head's positions
 * (grouped: query head h reads KV head h / (n_head / n_head_kv)). */
void cf_gpu_attention(cf_gpu *g, const cf_gpu_attn *a);

/* ---- element-wise ---------------------------------------------------------- */
typedef enum cf_gpu_act {
    CF_GPU_SILU,       /* silu(g) * u */
    CF_GPU_GELU,       /* gelu(g) * u, GELU's tanh form through F16 as the CPU */
    CF_GPU_SWIGLU_OAI, /* gpt-oss: min(g,7) sigmoid(1.702 min(g,7)) (clamp(u,-7,7) + 1) */
    CF_GPU_GELU_ONLY,  /* gelu(g), u unused */
    CF_GPU_RELU2,      /* relu(g)^2, u unused */
} cf_gpu_act;
/* out[t][i] = act(gate[t][i], up[t][i]) for t < n, i < width; gate and
 * up rows ld_in floats apart (phi3's fused gate|up: up = gate + width
 * floats), out rows ld_out apart.  out may be gate. */
void cf_gpu_glu(cf_gpu *g, cf_gpu_act act, cf_gpu_view gate, cf_gpu_view up, int64_t ld_in, int n, int width,
                cf_gpu_view out, int64_t ld_out);
/* y[t][i] = a[t][i] + b[t % b_rows][i] for t < n, i < width (b_rows 1: a
 * bias; n: a residual); rows ld apart in y and a, width apart in b. */
void cf_gpu_add(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, int b_rows, int n, int width, int64_t ld);
/* y[t][i] = a[t][i] + b[idx[t]][i], idx[t] < b_rows (each MoE pair's
 * expert's bias). */
void cf_gpu_add_by(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, int b_rows, cf_gpu_view idx, int n,
                   int width, int64_t ld);
/* y[t][i] = a[t][i] * b[idx[t]][i] (each MoE pair's weight times its
 * expert's scale). */
void cf_gpu_mul_by(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, int b_rows, cf_gpu_view idx, int n,
                   int width, int64_t ld);
/* y[t][i] = a[t][i] + b[t][i] sigmoid(gate[t]) (a shared expert gated per
 * token); b's rows width apart. */
void cf_gpu_add_gated(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, cf_gpu_view gate, int n, int width,
                      int64_t ld);
/* y[t][i] = a[t][i] * b[t % b_rows][i] (the same shapes as cf_gpu_add). */
void cf_gpu_mul(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, int b_rows, int n, int width, int64_t ld);
/* y[t][i] = x[t][i] for t < n, i < width, rows ld apart in both (a head's
 * slice of wider rows moved within them). */
void cf_gpu_copy_rows(cf_gpu *g, cf_gpu_view y, cf_gpu_view x, int n, int width, int64_t ld);
/* y[i] = x[i] * s for i < count; y may be x. */
void cf_gpu_scale(cf_gpu *g, cf_gpu_view y, cf_gpu_view x, float s, int64_t count);
/* ---- recurrent mixers -------------------------------------------------------- */
/* A causal convolution over time of n tokens' rows (ld apart), channels
 * wide: u[t][ch] becomes c[t][ch] = sum over j < K of w[ch][j]
 * u[t - K + 1 + j][ch] (w F32 [channels][K], K <= 16), where the window
 * (F32 [K - 1][channels], the layer's state) holds the K - 1 inputs before
 * this batch, oldest first, and is left holding the batch's last K - 1.
 *   CF_GPU_CONV_SILU (qwen35; Mamba2 with its bias): u is the row,
 *   out[t] = silu(c[t] + bias) (bias F32 [channels], optional).
 *   CF_GPU_CONV_GATED (lfm2): the row is [B | C | X], u = B * X, out[t] =
 *   C * c[t] (bias unused).
 * out (rows ld_out apart) may be the row itself. */
typedef enum cf_gpu_conv_kind { CF_GPU_CONV_SILU, CF_GPU_CONV_GATED } cf_gpu_conv_kind;
void cf_gpu_conv(cf_gpu *g, cf_gpu_conv_kind kind, cf_gpu_view seq, int64_t ld, int n, int channels, cf_gpu_view w,
                 cf_gpu_view bias, int K, cf_gpu_view window, cf_gpu_view out, int64_t ld_out);

/* qwen35's gated delta net over a batch, as the CPU's delta_head: per
 * value head h and token in order, with q and k of its key head
 * L2-normalised and q scaled by 1/sqrt(D): S <- exp(softplus(alpha +
 * dt_bias) a) S; d = sigmoid(beta) (v - S^T k); S <- S + k d^T;
 * o = S^T q, RMS-normed by norm, times silu(z). */
typedef struct cf_gpu_delta {
    cf_gpu_view qkv;       /* token rows qkv_ld apart: Hk query heads, Hk key heads, Hv value heads, D each */
    int64_t qkv_ld;
    cf_gpu_view z;         /* [n][Hv * D] */
    cf_gpu_view beta;      /* raw betas [n][Hv]; grouped: ssm_ba's rows [n][2 Hv], r betas then r alphas a key head */
    cf_gpu_view alpha;     /* raw alphas [n][Hv] (grouped: unused) */
    cf_gpu_view dt_bias, a; /* [Hv] each */
    cf_gpu_view norm;      /* [D] */
    cf_gpu_view state;     /* [Hv][D][D]: S[i][j], key dim i, value dim j */
    cf_gpu_view out;       /* [n][Hv * D] */
    int n, D, Hk, Hv;      /* D <= 256 */
    bool grouped;          /* value head h reads key head h / (Hv / Hk), else h % Hk */
    float eps;
} cf_gpu_delta;
void cf_gpu_delta_net(cf_gpu *g, const cf_gpu_delta *d);

/* Mamba2's scan (scalar A) over a batch, as the CPU's mamba2_head: per
 * head h (of H, in G groups sharing B and C) and token in order, with
 * dt = softplus(dt_raw + dt_b[h]): S <- exp(dt a[h]) S + (dt x) B^T, then
 * y = (S C + skip[h] x) silu(z).  Token rows hold z [D], x [D] (after the
 * conv), B [G][N], C [G][N], dt_raw [H]; the group norm after is
 * cf_gpu_rms_norm's (one call a group: its weights differ). */
typedef struct cf_gpu_mamba2 {
    cf_gpu_view rows;          /* token rows rows_ld apart */
    int64_t rows_ld;
    cf_gpu_view dt_b, a, skip; /* [H] each */
    cf_gpu_view state;         /* [H][D / H][N]: S[p][i], head channel p, state i */
    cf_gpu_view out;           /* y [n][D] */
    int n, D, H, G, N;         /* D / H <= 256, N <= 256 and a multiple of 8 */
} cf_gpu_mamba2;
void cf_gpu_mamba2_scan(cf_gpu *g, const cf_gpu_mamba2 *m);

/* Copy bytes (a multiple of 4) within or between buffers. */
void cf_gpu_copy(cf_gpu *g, cf_gpu_view dst, cf_gpu_view src, size_t bytes);

#endif
