/* The forward pass's float vector loops (attention, activations), written
 * once in vec_simd.inc and compiled for AVX-512, AVX2, NEON and plain C;
 * the kernels' active ISA picks one.  Every result depends only on its
 * inputs, never on how the work was split nor on the ISA. */
#ifndef CONFAB_MODEL_VEC_H
#define CONFAB_MODEL_VEC_H

#include <stdbool.h>
#include <stddef.h>

/* Attention is computed over fixed chunks of absolute cache positions, so
 * a query's result is the same whether its chunks ran in one thread or
 * several, batched or token by token. */
#define CF_ATTN_CHUNK 256

/* One chunk's softmax-weighted values for one head, before normalising:
 * m = the largest score, l = sum of exp(s - m), o = sum of exp(s - m) v. */
typedef struct cf_attn_part {
    float m, l;
    float o[]; /* head_dim values */
} cf_attn_part;

/* Bytes of one cf_attn_part for a head size (padded to 64). */
size_t cf_attn_part_bytes(int head_dim);

/* The most query rows an attention kernel takes in one pass (attn_rows). */
#define CF_ATTN_ROWS 8

typedef struct cf_vec_ops {
    /* n_q query rows q[i] (head_dim long: heads of one token that share
     * this KV head, or of several tokens) against n consecutive positions
     * of one KV head, the first at lane j0 of key block kb (the cache's
     * layout) and at value row v (F16 when f16, else F32; NULL: the values
     * are the keys, read from their blocks); scores = q.k *
     * scale.  scores: min(n_q, CF_ATTN_ROWS) * CF_ATTN_CHUNK floats of
     * scratch.  part[i]: row i's partial.  next_kb: the key block the
     * caller reads next (NULL: none), fetched into L2 while the values
     * are summed, as the values are while the scores are: a chunk's keys
     * and values come from DRAM in a long context, and these short runs
     * are not ones the hardware prefetchers run ahead of (one core, a
     * chunk from DRAM: 4.9 -> 2.6 us, 2.4 from cache).  Each row's result
     * is the same whatever rows go with it. */
    void (*attn_chunk)(int n_q, int head_dim, const float *const *q, const void *kb, int j0,
                       const void *v, bool f16, int n, float scale, float *scores,
                       cf_attn_part *const *part, const void *next_kb);
    /* attn_chunk's second half, for scores computed elsewhere (keys in
     * rows of a quantized type: src/model/forward.c attn_rows): n_q rows
     * of n scores, n apart, exponentiated in place; v, f16, part and
     * next_kb as attn_chunk's (v not NULL). */
    void (*attn_scored)(int n_q, int head_dim, float *scores, const void *v, bool f16, int n,
                        cf_attn_part *const *part, const void *next_kb);
    /* rows attn_chunk takes in one pass, reading the keys and values once */
    int attn_rows;
    /* out = the attention output from n_parts partials (part_bytes apart);
     * sink: a score that takes its share of the softmax but has no value
     * (gpt-oss), -INFINITY for none. */
    void (*attn_merge)(int head_dim, const void *parts, size_t part_bytes, int n_parts, float sink,
                       float *out);
    /* g[i] = silu(g[i]) * u[i] */
    void (*silu_mul)(float *g, const float *u, int n);
    /* y[i] = x[i] + a[i] (+ b[i] when b is not NULL) */
    void (*add)(float *y, const float *x, const float *a, const float *b, int n);
    /* y = x / sqrt(mean(x^2) + eps) * w */
    void (*rmsnorm)(float *y, const float *x, const float *w, int n, float eps);
} cf_vec_ops;

/* The table for cf_isa_active(). */
const cf_vec_ops *cf_vec(void);

void cf_vec_fill_scalar(cf_vec_ops *t);
void cf_vec_fill_avx2(cf_vec_ops *t);
void cf_vec_fill_avx512(cf_vec_ops *t);
void cf_vec_fill_neon(cf_vec_ops *t);

#endif
