/* Layers offloaded to a GPU (docs/gpu.md): which ones, their weights and
 * caches in device memory, the activations of a pass there, and the GPU's
 * ops of backend.h (gpu_ops.c), which only record into confab/gpu.h. */
#ifndef CONFAB_MODEL_GPU_OFFLOAD_H
#define CONFAB_MODEL_GPU_OFFLOAD_H

#include "backend.h"
#include "confab/gpu.h"

/* A weight in device memory, by the tensor it copies. */
typedef struct cf_gpu_weight {
    cf_weight t;
    cf_gpu_buf *buf;
} cf_gpu_weight;

typedef struct cf_offload {
    cf_gpu *g;
    bool *layer;  /* per layer: it runs on the GPU */
    bool output;  /* the final norm and the output matrix run there too */
    int n_layer;  /* the model's */
    int n_layers; /* layers on the GPU */
    cf_gpu_weight *w; /* sorted by tensor address */
    int n_w;
    cf_gpu_buf **kv_buf; /* per layer on the GPU: its keys then values */
    cf_gpu_kv *kv;
    cf_gpu_buf *rope_cos[2], *rope_sin[2];
    /* a batch's activations: x, out, h (normalised: n_embd wide, or the
     * heads' outputs), q|k|v, the FFN's gate|up then its output, a post-norm's
     * scratch, the logits */
    cf_gpu_buf *x, *out, *h, *qkv, *ff, *scratch, *logits;
    /* the experts' (gpu_offload.c's moe_activations) */
    cf_gpu_buf *router, *sel, *pair_w, *xrow, *pairs, *pair_ff, *pair_out, *shared;
    /* the recurrent layers' state (as the CPU's c->rs) and a delta net's rows */
    cf_gpu_buf *rs, *dn_z, *dn_beta, *dn_alpha;
    /* gemma4's per-layer inputs of the batch's tokens (the CPU's c->ple) */
    cf_gpu_buf *ple;
    /* gemma4 MoE's dense FFN output, normalised, beside the experts' */
    cf_gpu_buf *dense_out;
    cf_err err; /* the first failure of a pass (failed) */
    bool failed;
} cf_offload;

/* Offload the last n_gpu_layers layers (more than n_layer: the output
 * too) to device `device`, as fits in its memory.  Never fails: the
 * layers that cannot go stay on the CPU, and note says why in one line
 * (empty when all went, or none were asked). */
cf_offload *cf_offload_new(const cf_ctx *c, int n_gpu_layers, int device, char *note, size_t note_size);
void cf_offload_free(cf_offload *o);

/* The caches of the offloaded layers, positions [0, n), from the device
 * into the CPU's cache (to save, move or read them there) and back. */
int cf_offload_kv_pull(cf_offload *o, const cf_kv *kv, int n, cf_err *err);
int cf_offload_kv_push(cf_offload *o, const cf_kv *kv, int n, cf_err *err);

/* The offloaded layers' recurrent state into the CPU's c->rs, and back. */
int cf_offload_rs_pull(cf_offload *o, const cf_ctx *c, cf_err *err);
int cf_offload_rs_push(cf_offload *o, const cf_ctx *c, cf_err *err);

/* The device copy of tensor t (NULL view when it has none). */
cf_gpu_view cf_offload_weight(const cf_offload *o, cf_weight t);

/* The GPU's ops: what a pass's GPU exec (gpu_ops.c) records. */
typedef struct gpu_exec {
    cf_exec ex; /* first, as a thread's */
    cf_offload *o;
    cf_gpu_view in; /* what the next matmul reads: rows of its k floats */
    cf_gpu_view moe_in; /* what the experts read when not in (gemma4 MoE's) */
    cf_gpu_rows q;  /* the queries qkv left for attention */
    cf_gpu_rows gate; /* and their heads' output gates (q_gate; else none) */
} gpu_exec;
extern const cf_ops cf_gpu_ops;

#endif
