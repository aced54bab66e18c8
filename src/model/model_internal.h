/* Internals of the model module: weights, the context, and the small ops
 * the forward pass is made of. */
#ifndef CONFAB_MODEL_INTERNAL_H
#define CONFAB_MODEL_INTERNAL_H

#include "confab/kernels.h"
#include "confab/model.h"

typedef const cf_gguf_tensor *cf_weight;

typedef struct cf_layer {
    cf_weight attn_norm, attn_norm_b;
    cf_weight wq, wk, wv, wqkv; /* wqkv: fused Q|K|V rows (phi3, gpt2) */
    cf_weight bq, bk, bv, bqkv;
    cf_weight wo, bo;
    cf_weight ffn_norm, ffn_norm_b;
    cf_weight w_gate, w_up, w_down; /* phi3: w_up holds gate|up rows, w_gate NULL */
    cf_weight b_up, b_down;
} cf_layer;

struct cf_model {
    cf_gguf *g;
    cf_hparams hp;
    char *name;
    cf_weight tok_embd, pos_embd, out_norm, out_norm_b, output;
    cf_layer *layers;
    float *rope_freqs; /* owned copy of rope_freqs.weight, or NULL */
};

/* The KV cache: per layer, K and V as [n_head_kv][n_ctx][head_dim] so each
 * head's keys over positions are contiguous for attention. */
typedef struct cf_kv {
    cf_kv_type type;
    int n_ctx, n_past;
    int n_layer, n_head_kv, head_dim;
    size_t elem; /* bytes per element */
    void **k, **v;
} cf_kv;

struct cf_ctx {
    const cf_model *m;
    int n_threads, n_batch;
    cf_kv kv;
    /* activations for a batch of up to n_batch tokens, row-major */
    float *x, *xn, *qkv, *att, *ff, *tmp;
    size_t qkv_stride, ff_stride;
    /* activations rounded to each weight's dot type; one buffer per matmul
     * sharing an input so mixed-type groups work */
    uint8_t *xq[3];
    size_t xq_stride;
    float *scores;       /* n_threads x n_ctx attention scores */
    float *rope_cos, *rope_sin; /* n_batch x n_rot/2 for the batch's positions */
};

/* ---- ops (ops.c) ---------------------------------------------------------- */
void cf_rmsnorm(float *y, const float *x, const float *w, int n, float eps);
void cf_layernorm(float *y, const float *x, const float *w, const float *b, int n, float eps);
void cf_softmax(float *x, int n);
float cf_silu(float x);
/* GELU (tanh form) as llama.cpp computes it: through F16 in and out. */
float cf_gelu(float x);
float cf_dot_f32(const float *a, const float *b, int n);
void cf_axpy_f32(float *y, float a, const float *x, int n);

/* ---- rope (rope.c) --------------------------------------------------------- */
/* cos/sin of each rotated pair at position pos (n_rot/2 values each). */
void cf_rope_angles(const cf_hparams *hp, float pos, float *cos_out, float *sin_out);
/* Rotate the first n_rot dims of one head vector. */
void cf_rope_apply(cf_rope_style style, int n_rot, float *v, const float *cos_t, const float *sin_t);

/* ---- kv cache (kv_cache.c) ------------------------------------------------- */
int cf_kv_init(cf_kv *kv, const cf_hparams *hp, int n_ctx, cf_kv_type type, cf_err *err);
void cf_kv_free(cf_kv *kv);
/* Pointers to position pos of a head in layer l. */
void *cf_kv_k(const cf_kv *kv, int l, int h, int pos);
void *cf_kv_v(const cf_kv *kv, int l, int h, int pos);
void cf_kv_store(const cf_kv *kv, void *dst, const float *src, int n);
void cf_kv_fetch(const cf_kv *kv, float *dst, const void *src, int n);

#endif
