/* The op seam of the forward pass.  forward.c writes each architecture's
 * recipe once (layer, attention_block, ffn_block, moe_block, output) as
 * calls to the ops below; a backend implements them, and each layer of a
 * pass runs on one backend.  The CPU's (cpu_*.c) runs every op on all the
 * threads of the pass's parallel region, each doing its share.
 *
 * An op reads and writes the pass's activations, named rather than
 * addressed so that each backend keeps them where it computes:
 *
 *   x    the residual stream, n_embd per token
 *   h    the normalised input of the next weights, rounded for them
 *   out  a block's output, n_embd per token, before it joins x
 *   ff   the FFN's hidden activations, n_ff per token
 *
 * and the layer's KV cache or recurrent state.  The ops are as coarse as
 * the CPU's phases: a finer seam would split a phase's fused work (a head
 * finished by the thread that computed it, an FFN tile activated while
 * it is in cache) and cost the CPU its speed.  An op's results are there
 * for the next op after a sync; one that needs its own syncs (attention
 * over a batch, the experts, the recurrent mixers) has them inside. */
#ifndef CONFAB_MODEL_BACKEND_H
#define CONFAB_MODEL_BACKEND_H

#include "model_internal.h"
#include "vec.h"

/* One forward pass over a batch of tokens, whatever runs it. */
typedef struct cf_pass {
    cf_ctx *c;
    const cf_model *m;
    const cf_hparams *hp;
    const cf_vec_ops *vec;
    const int32_t *tokens;
    int n, pos0;
    float *logits;
    bool all_logits;
    bool one;      /* a single token (the CPU does row-wise work on private copies) */
    bool may_stop; /* ask the context's cancel check before each layer */
    uint64_t serial; /* this pass's number among all passes of the process */
    /* A group (cf_ctx_decode_group): token t is ctxs[t]'s, at its position
     * pos[t], in its cache and state, c's buffers and threads doing the
     * work; NULL: every token is c's, at pos0 + t. */
    cf_ctx *const *ctxs;
    const int *pos;
} cf_pass;

/* The context whose cache and state token t reads and writes, and its
 * position there. */
static inline cf_ctx *cf_pass_ctx(const cf_pass *P, int t)
{
    return P->ctxs ? P->ctxs[t] : P->c;
}

static inline int cf_pass_pos(const cf_pass *P, int t)
{
    return P->pos ? P->pos[t] : P->pos0 + t;
}

/* The end of the run of tokens from t that continue one sequence (one
 * context's, in order): the whole batch, or a group's token alone. */
static inline int cf_pass_run_end(const cf_pass *P, int t)
{
    return P->ctxs ? t + 1 : P->n;
}

typedef struct cf_ops cf_ops;

/* Where a backend runs a pass: its ops and the pass (a backend's own
 * state follows this, its first member). */
typedef struct cf_exec {
    const cf_ops *ops;
    const cf_pass *P;
} cf_exec;

/* What a matmul writes (rows of the named activations). */
typedef enum cf_dst {
    CF_DST_OUT,    /* out, n_embd wide */
    CF_DST_ROUTER, /* the experts' router logits, n_expert wide */
    CF_DST_LOGITS, /* the pass's logits, n_vocab wide */
} cf_dst;

/* What the ops after a sync read first, for a backend that fetches ahead
 * (the CPU's threads, waiting at a barrier while decoding). */
typedef enum cf_next {
    CF_NEXT_NONE,
    CF_NEXT_FFN_UP,   /* the gate and up rows of the sync's layer */
    CF_NEXT_FFN_DOWN, /* its down rows */
    CF_NEXT_QKV,      /* the Q K V rows of the sync's layer (after the last: the output's) */
} cf_next;

/* How a block's output (out) joins the residual: plus its bias, normalised
 * by its post-norm and scaled by hp->residual_scale; then the whole
 * residual times scale (gemma4). */
typedef struct cf_block_out {
    cf_weight bias, post_norm;
    cf_weight scale;
} cf_block_out;

/* What layer L leaves in out for the residual, which the next layer (or
 * the output) adds: its FFN's output (or its mixer's when it has no FFN),
 * or after per-layer embeddings their output. */
cf_block_out cf_layer_out(const cf_layer *L);

struct cf_ops {
    const char *name;
    /* x = the tokens' embedding rows (plus positions, times embd_scale) */
    void (*embed)(cf_exec *e);
    /* gemma4's per-layer inputs of every token, from x */
    void (*ple_inputs)(cf_exec *e);
    /* Rows [first, first + n): x += out as `out` says (NULL: no add); then
     * h = norm(x) (nw NULL: x itself), rounded for the group ws. */
    void (*residual_norm)(cf_exec *e, int first, int n, const cf_block_out *out, cf_weight nw,
                          cf_weight nb, cf_weight const ws[3]);
    /* Q, K, V = h Wq, Wk, Wv (+ bias); per-head or whole q/k norms, RoPE,
     * q's scales; K and V into layer l's cache. */
    void (*qkv)(cf_exec *e, const cf_layer *L, int l);
    /* The same for latent attention (deepseek2): the queries absorbed into
     * the latent's space, the latent into the cache. */
    void (*latent_qkv)(cf_exec *e, const cf_layer *L, int l);
    /* Attention of every query head over layer l's cache (GQA, sliding
     * window, sinks), the heads gated or taken out of the latent; h = the
     * result rounded for wo. */
    void (*attention)(cf_exec *e, const cf_layer *L, int l);
    /* dst rows [0, n) = h rows [first, first + n) times w^T. */
    void (*matmul)(cf_exec *e, cf_weight w, int first, int n, cf_dst dst);
    /* ff = act(h W_gate) * h W_up, the FFN's kind of gate (gpt2: gelu(h
     * W_up + b); relu2: relu(h W_up)^2). */
    void (*glu)(cf_exec *e, const cf_layer *L);
    /* h = ff rounded for w. */
    void (*round_ff)(cf_exec *e, cf_weight w);
    /* Token mixers that keep a recurrent state, from h to out: lfm2's
     * short convolution, qwen35's gated delta net, Mamba2. */
    void (*conv)(cf_exec *e, const cf_layer *L, int l);
    void (*delta_net)(cf_exec *e, const cf_layer *L, int l);
    void (*mamba2)(cf_exec *e, const cf_layer *L, int l);
    /* Mixture of experts: each token's experts and weights from the
     * router's logits (plus its bias); act(gate) * up of the routed
     * experts, from h (ff: the group rounding for them); their down
     * projections summed by weight into out; the shared expert added. */
    void (*moe_route)(cf_exec *e, const cf_layer *L, cf_weight const ff[3]);
    void (*experts_up)(cf_exec *e, const cf_layer *L, cf_weight const ff[3]);
    void (*experts_down)(cf_exec *e, const cf_layer *L);
    void (*shared_expert)(cf_exec *e, const cf_layer *L, cf_weight const ff[3]);
    /* gemma4 MoE beside the dense FFN: the dense output (in out) normed
     * aside and h rounded for the router and the experts; then out = that
     * plus the experts' output normed. */
    void (*dual_ffn_inputs)(cf_exec *e, const cf_layer *L, cf_weight const moe[3]);
    void (*dual_ffn_sum)(cf_exec *e, const cf_layer *L);
    /* gemma4's per-layer embedding step after the FFN, into out. */
    void (*ple)(cf_exec *e, const cf_layer *L, int l);
    /* The first `rows` logits rows times logit_scale, soft-capped. */
    void (*logit_scale)(cf_exec *e, int rows);
    /* The ops before are done; `next` says what follows, of layer l. */
    void (*sync)(cf_exec *e, cf_next next, int l);
};

/* The CPU's ops (cpu_*.c). */
extern const cf_ops cf_cpu_ops;

#endif
