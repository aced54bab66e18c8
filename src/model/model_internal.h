/* Internals of the model module: weights, the context, and the small ops
 * the forward pass is made of. */
#ifndef CONFAB_MODEL_INTERNAL_H
#define CONFAB_MODEL_INTERNAL_H

#include "confab/kernels.h"
#include "confab/model.h"

typedef const cf_gguf_tensor *cf_weight;

/* Checkpoints of a recurrent state a context keeps (the newest). */
#define CF_MAX_CKPT 8

/* The most experts a MoE layer may have (Qwen3-235B has 128, DeepSeek 256). */
#define CF_MAX_EXPERTS 512

/* A layer's tensors (absent ones NULL) and its part of the recipe. */
typedef struct cf_layer {
    cf_weight attn_norm, attn_norm_b; /* pre-norms; NULL: the block reads x itself (olmo2) */
    cf_weight wq, wk, wv, wqkv; /* wqkv: fused Q|K|V rows (phi3, gpt2) */
    cf_weight bq, bk, bv, bqkv;
    cf_weight q_norm, k_norm; /* hp->qk_norm says over what */
    cf_weight wo, bo;
    cf_weight post_attn_norm; /* norms of a block's output before the residual add */
    cf_weight ffn_norm, ffn_norm_b;
    cf_weight w_gate, w_up, w_down; /* phi3: w_up holds gate|up rows, w_gate NULL */
    cf_weight b_up, b_down;
    cf_weight post_ffn_norm;
    /* mixture of experts: the router and the experts' stacked matrices
     * (expert e is the e-th slab of rows) */
    cf_weight moe_router, moe_router_b;
    cf_weight moe_choice_b; /* added to the scores to choose, not to weigh */
    cf_weight moe_gate, moe_up, moe_down;
    cf_weight moe_gate_b, moe_up_b, moe_down_b; /* one row of biases per expert */
    cf_weight attn_sinks; /* one score per query head (gpt-oss) */
    /* multi-head latent attention (hp->kv_lora): wq gives the query heads,
     * through wq_a and q_a_norm first when q_lora; wk the latent (normed
     * by kv_a_norm) and the RoPE part; wk_b and wv_b, per head, take a
     * query's nope part into the latent's space and the output out of it */
    cf_weight wq_a, q_a_norm, kv_a_norm, wk_b, wv_b;
    /* a gated short convolution in place of attention (lfm2): in_proj
     * gives B, C and X; out_proj reads C * conv(B * X) */
    cf_weight conv_in, conv_w, conv_out;
    /* a gated delta net in place of attention (qwen35): attn_qkv feeds the
     * convolution ssm_conv then the recurrence; beta, alpha (with dt_bias
     * and a) give the step's write strength and decay; ssm_norm and the
     * gate z shape its output for ssm_out */
    cf_weight dn_qkv, dn_z, dn_beta, dn_alpha, dn_conv, dn_dt_bias, dn_a, dn_norm, dn_out;
    /* a Mamba2 mixer in place of attention (granitehybrid, nemotron_h):
     * m2_in gives z, x|B|C and each head's dt; x|B|C is convolved (m2_conv,
     * m2_conv_b, SiLU) before the scan, which decays each head's state by
     * exp(softplus(dt + m2_dt_b) m2_a) and adds m2_skip x; y silu(z) is
     * RMS-normalised per group (m2_norm) for m2_out */
    cf_weight m2_in, m2_conv, m2_conv_b, m2_dt_b, m2_a, m2_skip, m2_norm, m2_out;
    /* the shared expert beside the routed ones (qwen35moe: gated per token
     * by sh_inp; granitehybrid, nemotron_h_moe: always on; without sh_gate
     * when the experts have none) */
    cf_weight sh_gate, sh_up, sh_down, sh_inp;
    /* gemma4: after the FFN, x += post_norm(proj (gelu(ple_gate x) * the
     * token's embedding for this layer)); then x *= out_scale (1 value) */
    cf_weight ple_gate, ple_proj, ple_norm, out_scale;
    bool v_norm; /* V is RMS-normalised per head, without a weight (gemma4) */
    /* gemma4 MoE: a dense FFN and the experts side by side, each with its
     * norms (dense_norm after the dense FFN; exp_pre_norm / exp_norm around
     * the experts), the router reading rms(x) / sqrt(n_embd) * router_scale,
     * each expert's output times exp_scale[e]; post_ffn_norm of their sum */
    cf_weight dense_norm, exp_pre_norm, exp_norm, router_scale, exp_scale;
    /* the layer's attention geometry (hp's values unless the family says
     * otherwise); kv_src: the layer whose cache it reads (its own unless it
     * shares an earlier layer's, gemma4) */
    int head_dim, n_head_kv, n_rot, n_ff, kv_src;
    bool swa;  /* attends to the last hp->n_swa positions only */
    bool rope; /* false: no positions at all (smollm3's NoPE layers) */
} cf_layer;

struct cf_model {
    cf_gguf *g;
    cf_hparams hp;
    char *name;
    cf_weight tok_embd, pos_embd, out_norm, out_norm_b, output;
    /* gemma4's per-layer embeddings: token rows and the projection of the
     * input embedding, ple_dim per layer, and its norm */
    cf_weight ple_embd, ple_model_proj, ple_model_norm;
    cf_layer *layers;
    float *rope_freqs; /* owned copy of rope_freqs.weight, or NULL */
};

/* The KV cache, in slabs of CF_ATTN_CHUNK positions (vec.h), every layer's
 * and KV head's keys then values for those positions in each.  Values:
 * [position][head_dim].  F16 or F32 keys: blocks of CF_KV_BLOCK positions,
 * each [head_dim][CF_KV_BLOCK], so that attention scores a block of
 * positions with one vector per dimension; keys of the other types are
 * rows like the values (Q8_0 / Q4_0 blocks of 32 along the head), widened
 * into such blocks when attention reads them.  One mapping in huge pages:
 * an attention chunk reads one contiguous run without TLB misses, and
 * memory is touched slab by slab as the context fills. */
#define CF_KV_BLOCK 16

typedef struct cf_kv {
    cf_kv_type type_k, type_v;
    bool rotate;               /* rotated where a head's size allows (cf_kv_rot) */
    int n_ctx, n_past;
    int n_layer;
    int *n_head_kv, *head_dim; /* per layer; 0 heads: the layer keeps no cache */
    bool k_only;               /* latent attention: no value rows, the values are the keys */
    size_t *layer_off;         /* per layer: its place in a slab */
    size_t slab_bytes;         /* one slab: every layer's keys and values */
    uint8_t *map;
    size_t map_bytes;
} cf_kv;


/* The threads decoding uses while other programs take the cores (busy.c):
 * nth (all when 0), the mean time of its passes, and a trial of another
 * count (0: none) from retry_at. */
typedef struct cf_busy_run {
    int passes;
    uint64_t ns, stall_ns;
} cf_busy_run;
typedef struct cf_busy {
    int nth, trial, stalls; /* stalls: stalled passes in a row */
    bool early;             /* the window closed early once already */
    cf_busy_run win, run;   /* the window at nth, the trial so far */
    unsigned wait_ms;
    uint64_t mean_ns, full_ns; /* passes at nth: to compare with; the last whole window */
    uint64_t retry_at, stalled_at;
} cf_busy;
/* The count decoding settled on (outside trials). */
int cf_busy_settled(const cf_busy *b, int n_threads);
/* Threads for the next single-token pass. */
int cf_busy_threads(cf_busy *b, int n_threads, uint64_t now);
/* Threads for a batch: decoding's count while it is fresh. */
int cf_busy_batch_threads(const cf_busy *b, int n_threads, uint64_t now);
/* A single-token pass took pass_ns on used threads; its barriers waited
 * stall_ns past their spin (per waiting thread). */
void cf_busy_report(cf_busy *b, int n_threads, int used, uint64_t pass_ns, uint64_t stall_ns, uint64_t now);

/* A barrier for the threads of a pass (barrier.c). */
typedef struct cf_barrier {
    _Alignas(64) unsigned arrived;
    _Alignas(64) unsigned gen;
    uint64_t stall_ns; /* waited past the spin, by all threads (busy.c) */
} cf_barrier;
void cf_barrier_wait(cf_barrier *b, int nth);
/* Bytes a thread reads after the barrier, fetched while it waits. */
typedef struct cf_fetch {
    const uint8_t *p;
    size_t bytes;
} cf_fetch;
void cf_barrier_wait_fetching(cf_barrier *b, int nth, const cf_fetch *f, int nf);

#define CF_SHARE_STRIDE 8

/* Scratch of one thread of the forward pass. */
typedef struct cf_tbuf {
    float *x;       /* single-token passes: this thread's copy of the residual */
    float *row;     /* a normalised or attention row, or a run's attention rows:
                     * CF_ATTN_ROWS x row_cap floats */
    uint8_t *xq[3]; /* single-token passes: the rounded activations */
    float *tile;    /* a row chunk of ffn_up outputs: tile_cap floats */
    float *scores;  /* attention scores: CF_ATTN_ROWS x CF_ATTN_CHUNK */
    void *part;     /* attention partials of a run of tokens and one KV head, or
                     * of a single token's unit (cpu_attention.c) */
    float *kw, *vw; /* a quantized cache's chunk of keys, of values, widened */
} cf_tbuf;

struct cf_ctx {
    const cf_model *m;
    int n_threads, n_batch;
    cf_kv kv;
    /* activations of a batch of up to n_batch tokens, row-major */
    float *x, *qkv, *ff, *tmp;
    size_t qkv_stride;
    /* activations rounded to the dot type of the next weights; xq[1] and
     * xq[2] exist only when a group of weights sharing an input mixes types */
    uint8_t *xq[3];
    int n_xq;
    size_t xq_stride;
    cf_tbuf *tb; /* n_threads of them */
    size_t tile_cap;
    size_t row_cap; /* floats of a row: max(n_embd, n_head x head_dim) */
    /* single-token passes: every head's attention partials, max_chunks each */
    void *part;
    int max_chunks;
    size_t part_bytes;
    /* RoPE's cos and sin of every position: n_ctx x n_rot/2, for the main
     * base and (when the sliding layers have their own) theirs */
    float *rope_cos[2], *rope_sin[2];
    /* mixture of experts: a batch's n * k (token, expert) pairs grouped by
     * expert, pairs [moe_off[e], moe_off[e + 1]) going to expert e */
    float *moe_logits; /* n x n_expert router outputs */
    int32_t *moe_sel;  /* n x k chosen experts, best first */
    float *moe_w;      /* n x k their weights */
    int32_t *moe_off;  /* n_expert + 1 */
    int32_t *moe_used; /* the experts with pairs, in increasing order */
    int moe_n_used, moe_max_pairs;
    int32_t *moe_slot; /* n x k: the pair of each choice */
    uint8_t *moe_x;    /* pair rows: the experts' input, gathered (batches) */
    float *moe_ff;     /* pair rows: act(gate) * up, n_ff_exp wide */
    uint8_t *moe_xd;   /* pair rows: moe_ff rounded for the down matrices */
    float *moe_out;    /* pair rows: the experts' outputs */
    /* gemma4 MoE: the dense branch's output while the experts run */
    float *dense_out;
    /* gemma4: each token's per-layer inputs, n_layer x ple_dim */
    float *ple;
    /* gated delta nets: a batch's z gates, and beta and alpha per value head
     * (both in dn_beta, in ssm_ba's order, when they come fused) */
    float *dn_z, *dn_beta, *dn_alpha;
    /* recurrent layers: their state after the last cached position (rs,
     * rs_floats in all, layer l's at rs_off[l]), the tokens of the cached
     * positions (to re-evaluate from a checkpoint), and checkpoints of the
     * state at earlier positions, oldest first */
    float *rs;
    size_t rs_floats;
    size_t *rs_off;
    int32_t *tokens;
    struct cf_ckpt {
        int pos;
        float *state;
    } ckpt[CF_MAX_CKPT];
    int n_ckpt;
    /* work counters of one pass, one per dynamically shared phase, and
     * each thread's share of a phase's rows (n_work x n_threads words,
     * CF_SHARE_STRIDE apart so that shares never share a cache line) */
    int *work;
    int n_work;
    uint64_t *shares;
    cf_barrier bar;
    cf_busy busy;
    /* the layers offloaded to a GPU (gpu_offload.h), NULL: none */
    struct cf_offload *gpu;
    int gpu_asked[2]; /* cf_ctx_params' n_gpu_layers and gpu_device */
    char gpu_note[CF_ERR_MSG_MAX + 128];
    /* cf_ctx_set_cancel's check, and its answer for the pass running */
    bool (*cancel)(void *ud);
    void *cancel_ud;
    void (*pause)(void *ud); /* cf_ctx_set_pause's */
    void *pause_ud;
    long test_delay_ms;
    bool stopping;
};

/* ---- context (ctx.c) ------------------------------------------------------ */
/* Whether the pass running should stop (cf_ctx_set_cancel's check, after
 * the test delay). */
bool cf_ctx_cancelled(cf_ctx *c);
/* Evaluate tokens the cache held before (going back to a checkpoint,
 * moving a recurrent state): as cf_ctx_decode without logits, never
 * cancelled (forward.c). */
int cf_ctx_replay(cf_ctx *c, const int32_t *tokens, int n, cf_err *err);
/* cf_ctx_decode_group's pass, its arguments checked (forward.c). */
int cf_forward_group(cf_ctx *const *ctxs, const int32_t *tokens, int n, float *logits,
                     cf_err *err);
/* The weights reading one normalised input: Q K V (or the fused QKV), and
 * gate and up (phi3's fused gate|up, gpt2's up alone); unused slots NULL. */
void cf_layer_groups(const cf_layer *L, cf_weight qkv[3], cf_weight ff[3]);
/* Which xq buffer holds the input of ws[i]: the first of the group whose
 * weight has the same dot type. */
int cf_xq_index(cf_weight const ws[3], int i);
/* The weights reading the experts' inputs: the router, gate and up. */
void cf_moe_group(const cf_layer *L, cf_weight moe[3]);
/* Which xq buffer holds the experts' input (moe: the group that rounds
 * for them).  Gemma 4's router reads another row than its experts, so
 * there it is never the router's buffer, even when their types agree. */
int cf_moe_xq(const cf_layer *L, cf_weight const moe[3]);

/* ---- ops (ops.c) ---------------------------------------------------------- */
void cf_layernorm(float *y, const float *x, const float *w, const float *b, int n, float eps);
/* GELU (tanh form) as llama.cpp computes it: through F16 in and out, from a
 * table that cf_gelu_init fills once (any thread may call it, any time). */
void cf_gelu_init(void);
float cf_gelu(float x);
/* gpt-oss's clamped SwiGLU, as ggml's swiglu_oai: with x = min(g, 7) and
 * y = clamp(u, -7, 7), g = x * sigmoid(1.702 x) * (y + 1). */
void cf_swiglu_oai(float *g, const float *u, int n);
/* x / rms(x), as ggml_rms_norm (the sum in double), in place */
void cf_rms_unweighted(float *x, int n, float eps);
/* relu(x)^2, in place */
void cf_relu_squared(float *x, int64_t n);

/* ---- mixture-of-experts routing (moe.c) ------------------------------------ */
/* The experts a token uses and their weights, from the router's logits
 * (n_expert of them), as llama.cpp's build_moe_ffn computes them: sel[0..k)
 * in decreasing order of preference, w[0..k).  bias (n_expert, or NULL) is
 * added to the scores for the choice only (DeepSeek-V3's exp_probs_b). */
void cf_moe_route(const cf_hparams *hp, const float *logits, const float *bias, int32_t *sel, float *w);

/* ---- recurrent state (recurrent.c) ----------------------------------------- */
/* Size and allocate the state of the model's recurrent layers (none: no-op). */
int cf_rs_init(cf_ctx *c);
void cf_rs_free(cf_ctx *c);
/* Whether the model has recurrent layers. */
bool cf_rs_active(const cf_ctx *c);
/* Keep the state at the current position as a checkpoint. */
void cf_rs_checkpoint(cf_ctx *c);
/* Go back to n_keep positions: the newest checkpoint at or before it (or
 * the empty state), then the recorded tokens from there again. */
int cf_rs_rewind(cf_ctx *c, int n_keep, cf_err *err);

/* ---- non-finite values (finite.c) ------------------------------------------ */
bool cf_all_finite(const float *x, int64_t n);
/* The model error naming the first tensor with a NaN or Inf (or saying the
 * weights are finite); always returns -1. */
int cf_model_blame_nonfinite(const cf_model *m, cf_err *err);

/* ---- rope (rope.c) --------------------------------------------------------- */
/* Which angles a layer rotates by: 0 the model's, 1 the sliding layers' own
 * base (gemma3). */
int cf_rope_table(const cf_hparams *hp, const cf_layer *L);
/* cos/sin of each rotated pair of a table at position pos (n_rot/2 values
 * each); magnitude: times YaRN's magnitude correction (false: a pure
 * rotation, for moving cached keys). */
void cf_rope_angles(const cf_hparams *hp, int table, float pos, bool magnitude, float *cos_out,
                    float *sin_out);
/* Rotate the first n_rot dims of one head vector. */
void cf_rope_apply(cf_rope_style style, int n_rot, float *v, const float *cos_t, const float *sin_t);

/* ---- kv cache element types (kv_type.c) ----------------------------------- */
/* Whether keys of type t are stored in blocks of positions (else rows). */
bool cf_kv_blocked(cf_kv_type t);
/* Bytes of one position's row of n values of type t. */
size_t cf_kv_row_bytes(cf_kv_type t, int n);
/* A row of n values stored as type t, and widened back to floats. */
void cf_kv_store(cf_kv_type t, const float *row, void *dst, int n);
void cf_kv_widen(cf_kv_type t, const void *src, float *dst, int n);
/* The Hadamard block of a head of hd values in a cache of type t (the
 * largest power of two >= 64 dividing hd, for keys; 64 for values), 0
 * when it is not rotated: a float cache, or a head size it does not fit. */
int cf_kv_rot_block(cf_kv_type t, int hd, bool keys);
/* The Hadamard block of the keys or values of a head of hd values in
 * this cache, 0: they are not rotated. */
int cf_kv_rot(const cf_kv *kv, int hd, bool keys);
/* x times the orthonormal Walsh-Hadamard matrix of order block, block by
 * block: its own inverse. */
void cf_kv_rotate(float *x, int n, int block);
/* The kernels' type of a cache type's rows. */
cf_type cf_kv_elem_type(cf_kv_type t);

/* ---- kv cache (kv_cache.c) ------------------------------------------------- */
int cf_kv_init(cf_kv *kv, const cf_model *m, int n_ctx, const cf_ctx_params *p, cf_err *err);
void cf_kv_free(cf_kv *kv);
/* The key block holding positions [block * CF_KV_BLOCK, ...) of a head. */
void *cf_kv_kblock(const cf_kv *kv, int l, int h, int block);
/* The key row of position pos of a head, for key types kept in rows. */
void *cf_kv_k(const cf_kv *kv, int l, int h, int pos);
/* The value row of position pos of a head (NULL: a cache of keys only). */
void *cf_kv_v(const cf_kv *kv, int l, int h, int pos);
/* Store or read one position's key or value row (head_dim floats). */
void cf_kv_put_k(const cf_kv *kv, int l, int h, int pos, const float *row);
void cf_kv_get_k(const cf_kv *kv, int l, int h, int pos, float *row);
void cf_kv_put_v(const cf_kv *kv, int l, int h, int pos, const float *row);
/* Whether attention reads the cache widened to F32 (the kernels read keys
 * and values of one type, F16 or F32, as they lie): positions [lo, hi) of
 * a head's keys as F32 key blocks (the first at lane lo % CF_KV_BLOCK),
 * and its values as F32 rows. */
bool cf_kv_widened(const cf_kv *kv);
void cf_kv_widen_keys(const cf_kv *kv, int l, int h, int lo, int hi, float *blocks);
void cf_kv_widen_values(const cf_kv *kv, int l, int h, int lo, int hi, float *rows);

#endif
