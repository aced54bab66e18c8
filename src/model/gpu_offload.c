/* Offloading layers to a GPU (gpu_offload.h): llama.cpp's -ngl, the last
 * n layers (more than the model has: the output too), each with its
 * weights and cache uploaded once.  A layer the GPU's ops cannot run stays
 * on the CPU, and so do the layers below the last one that did not fit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_offload.h"

/* Why layer l cannot run on the GPU's ops, NULL when it can. */
static const char *layer_unsupported(const cf_ctx *c, const cf_layer *L, int l)
{
    const cf_hparams *hp = &c->m->hp;
    if (L->dn_qkv && hp->ssm_d > 256)
        return "this delta net";
    if (L->m2_in && (hp->ssm_inner / hp->ssm_v_heads > 256 || hp->ssm_d > 256 || hp->ssm_d % 8))
        return "this Mamba2";
    if ((L->conv_in || L->dn_qkv || L->m2_in) && hp->conv_kernel > 16)
        return "this convolution";
    if (L->moe_router && hp->n_expert_used > 64)
        return "this many experts";
    if (hp->q_gate && hp->qk_norm == CF_QK_NORM_FULL)
        return "gated queries under one norm";
    if (L->kv_src != l && L->wqkv)
        return "shared cache";
    /* the device cache has one type for keys and values */
    if (c->kv.type_k != c->kv.type_v || !cf_gpu_kv_supports(c->kv.type_k))
        return "this cache type";
    if (L->rope && hp->rope_style != CF_ROPE_NORMAL && hp->rope_style != CF_ROPE_NEOX)
        return "this RoPE";
    /* the batch's buffers are sized by the model's head geometry */
    const size_t Q = (size_t)hp->n_head * (size_t)L->head_dim, KV = (size_t)L->n_head_kv * (size_t)L->head_dim;
    if ((hp->q_gate ? 2 : 1) * Q + 2 * KV > c->qkv_stride || Q > c->row_cap)
        return "this head size";
    return NULL;
}

/* The tensors layer l reads on the GPU (unused slots NULL). */
enum { LAYER_TENSORS = 71 };
static void layer_tensors(const cf_layer *L, cf_weight t[LAYER_TENSORS])
{
    const cf_weight all[LAYER_TENSORS] = {
        L->attn_norm, L->attn_norm_b,    L->wq,       L->wk,         L->wv,        L->wqkv,   L->bq,
        L->bk,        L->bv,             L->bqkv,     L->q_norm,     L->k_norm,    L->wo,     L->bo,
        L->attn_sinks, L->post_attn_norm, L->ffn_norm, L->ffn_norm_b, L->w_gate,    L->w_up,   L->w_down,
        L->b_up,      L->b_down,         L->post_ffn_norm, L->out_scale, L->moe_router, L->moe_router_b,
        L->moe_choice_b, L->moe_gate,   L->moe_up,   L->moe_down,   L->moe_gate_b, L->moe_up_b, L->moe_down_b,
        L->sh_gate,   L->sh_up,          L->sh_down,  L->sh_inp,     L->wq_a,      L->q_a_norm, L->kv_a_norm,
        L->wk_b,      L->wv_b,           L->ple_gate, L->ple_proj,   L->ple_norm,   L->dense_norm, L->exp_pre_norm,
        L->exp_norm,  L->router_scale,   L->exp_scale,
        L->conv_in,   L->conv_w,         L->conv_out, L->dn_qkv,     L->dn_z,      L->dn_beta, L->dn_alpha,
        L->dn_conv,   L->dn_dt_bias,     L->dn_a,     L->dn_norm,    L->dn_out,    L->m2_in,  L->m2_conv,
        L->m2_conv_b, L->m2_dt_b,        L->m2_a,     L->m2_skip,    L->m2_norm,   L->m2_out,
    };
    memcpy(t, all, sizeof all);
}

static bool is_matrix(cf_weight t)
{
    return t->ne[1] > 1;
}

static size_t tensor_bytes(cf_weight t)
{
    return cf_row_bytes(t->type, t->ne[0]) * (size_t)(t->ne[1] * t->ne[2] * t->ne[3]);
}

/* A type the GPU lacks among ts, or -1. */
static int missing_type(const cf_gpu *g, const cf_weight *ts, int n)
{
    for (int i = 0; i < n; i++) {
        if (!ts[i])
            continue;
        if (is_matrix(ts[i]) ? !cf_gpu_supports(g, ts[i]->type) : ts[i]->type != CF_TYPE_F32)
            return (int)ts[i]->type;
    }
    return -1;
}

static cf_gpu_weight *find(const cf_offload *o, cf_weight t)
{
    for (int i = 0; i < o->n_w; i++)
        if (o->w[i].t == t)
            return &o->w[i];
    return NULL;
}

/* Tensor t into device memory (once: a tied output is the embedding). */
static int upload(cf_offload *o, cf_weight t, cf_err *err)
{
    if (!t || find(o, t))
        return 0;
    cf_gpu_weight *w = realloc(o->w, (size_t)(o->n_w + 1) * sizeof *w);
    if (!w)
        return cf_fail(err, "out of memory");
    o->w = w;
    const size_t bytes = tensor_bytes(t);
    cf_gpu_buf *buf = cf_gpu_alloc(o->g, bytes, err);
    if (!buf)
        return -1;
    int rc;
    if (t->layout == CF_LAYOUT_PLAIN) {
        rc = cf_gpu_write(o->g, (cf_gpu_view){buf, 0}, t->data, bytes, err);
    } else { /* repacked for the CPU's kernels: the GPU reads GGUF rows */
        const int64_t rows = t->ne[1] * t->ne[2] * t->ne[3];
        const size_t rb = cf_row_bytes(t->type, t->ne[0]);
        uint8_t *plain = malloc(bytes);
        rc = plain ? 0 : cf_fail(err, "out of memory");
        for (int64_t r = 0; rc == 0 && r < rows; r++)
            cf_unpack_row(t->type, t->layout, t->data, t->ne[0], rows, r, plain + (size_t)r * rb);
        rc = rc ? rc : cf_gpu_write(o->g, (cf_gpu_view){buf, 0}, plain, bytes, err);
        free(plain);
    }
    if (rc) {
        cf_gpu_free(o->g, buf);
        return -1;
    }
    o->w[o->n_w++] = (cf_gpu_weight){t, buf};
    return 0;
}

static int upload_all(cf_offload *o, const cf_weight *ts, int n, cf_err *err)
{
    for (int i = 0; i < n; i++)
        if (upload(o, ts[i], err))
            return -1;
    return 0;
}

static int by_tensor(const void *a, const void *b)
{
    const uintptr_t x = (uintptr_t)((const cf_gpu_weight *)a)->t, y = (uintptr_t)((const cf_gpu_weight *)b)->t;
    return x < y ? -1 : x > y;
}

cf_gpu_view cf_offload_weight(const cf_offload *o, cf_weight t)
{
    const cf_gpu_weight key = {t, NULL};
    const cf_gpu_weight *w = t ? bsearch(&key, o->w, (size_t)o->n_w, sizeof key, by_tensor) : NULL;
    return (cf_gpu_view){w ? w->buf : NULL, 0};
}

/* A layer's device cache: keys then values, [n_head_kv][n_ctx] rows each
 * of the CPU cache's type. */
static size_t kv_bytes(const cf_kv *kv, int l)
{
    return (kv->k_only ? 1 : 2) * (size_t)kv->n_ctx * (size_t)kv->n_head_kv[l] * cf_kv_row_bytes(kv->type_k, kv->head_dim[l]);
}

static int layer_to_gpu(cf_offload *o, const cf_ctx *c, int l, cf_err *err)
{
    const cf_layer *L = &c->m->layers[l];
    cf_weight t[LAYER_TENSORS];
    layer_tensors(L, t);
    /* the residual the layer starts with adds the previous layer's output
     * by that layer's bias and post-norm, wherever that layer runs */
    const cf_block_out prev = l > 0 ? cf_layer_out(&c->m->layers[l - 1]) : (cf_block_out){0};
    const cf_weight joins[2] = {prev.bias, prev.post_norm};
    if (upload_all(o, t, LAYER_TENSORS, err) || upload_all(o, joins, 2, err))
        return -1;
    const cf_kv *kv = &c->kv;
    if (!kv->n_head_kv[l]) /* a recurrent mixer, or an MLP alone: no cache */
        return 0;
    if (!(o->kv_buf[l] = cf_gpu_alloc(o->g, kv_bytes(kv, l), err)))
        return -1;
    o->kv[l] = (cf_gpu_kv){
        .k = {o->kv_buf[l], 0},
        .v = {kv->k_only ? NULL : o->kv_buf[l], kv->k_only ? 0 : kv_bytes(kv, l) / 2},
        .n_ctx = kv->n_ctx,
        .n_head_kv = kv->n_head_kv[l],
        .head_dim = kv->head_dim[l],
        .type = kv->type_k,
        .v_dim = kv->k_only ? c->m->hp.kv_lora : 0, /* latent attention: the values are the keys' latent */
    };
    return 0;
}

static bool has_experts(const cf_layer *L)
{
    return L->moe_router != NULL;
}

static bool has_dense_beside_experts(const cf_layer *L)
{
    return L->dense_norm != NULL;
}

/* Whether a layer going to the GPU has what `has` asks. */
static bool offloaded_with(const cf_offload *o, const cf_model *m, bool (*has)(const cf_layer *))
{
    for (int l = 0; l < m->hp.n_layer; l++)
        if (o->layer[l] && has(&m->layers[l]))
            return true;
    return false;
}

/* The logits of a batch's rows, for the output on the device. */
static int output_logits(cf_offload *o, const cf_ctx *c, cf_err *err)
{
    o->logits = cf_gpu_alloc(o->g, (size_t)c->n_batch * (size_t)c->m->hp.n_vocab * sizeof(float), err);
    return o->logits ? 0 : -1;
}

/* The experts' buffers: the router's logits, each pair's expert, weight
 * and input row, pair rows 0, 1, ... (the down matrices' inputs), the
 * pairs' gate, up and act rows, their outputs, and the shared expert's
 * (its gate, up, act and down rows, and per-token gates). */
static int moe_activations(cf_offload *o, const cf_ctx *c, cf_err *err)
{
    const cf_hparams *hp = &c->m->hp;
    const size_t B = (size_t)c->n_batch, K = (size_t)hp->n_expert_used, f = sizeof(float);
    const size_t F = (size_t)hp->n_ff_exp, S = (size_t)hp->n_ff_shexp, E = (size_t)hp->n_embd;
    cf_gpu_buf **bufs[] = {&o->router, &o->sel, &o->pair_w, &o->xrow, &o->pairs, &o->pair_ff, &o->pair_out,
                           &o->shared};
    const size_t bytes[] = {B * (size_t)hp->n_expert * f, B * K * 4, B * K * f, B * K * 4, B * K * 4,
                            3 * B * K * F * f, B * K * E * f, (3 * B * S + B * E + B) * f + f};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (!(*bufs[i] = cf_gpu_alloc(o->g, bytes[i], err)))
            return -1;
    int32_t *iota = malloc(B * K * sizeof *iota);
    if (!iota)
        return cf_fail(err, "out of memory");
    for (size_t p = 0; p < B * K; p++)
        iota[p] = (int32_t)p;
    const int rc = cf_gpu_write(o->g, (cf_gpu_view){o->pairs, 0}, iota, B * K * sizeof *iota, err);
    free(iota);
    return rc;
}

/* The recurrent layers' state, as the CPU's c->rs (each layer's at
 * rs_off[l]: only the offloaded layers' parts are used), empty; a delta
 * net's z, beta and alpha rows. */
static int recurrent_activations(cf_offload *o, const cf_ctx *c, cf_err *err)
{
    const cf_hparams *hp = &c->m->hp;
    const size_t B = (size_t)c->n_batch, Hv = (size_t)hp->ssm_v_heads, f = sizeof(float);
    float *zero = calloc(c->rs_floats, f);
    if (!zero)
        return cf_fail(err, "out of memory");
    const int rc = !(o->rs = cf_gpu_alloc(o->g, c->rs_floats * f, err)) ||
                   cf_gpu_write(o->g, (cf_gpu_view){o->rs, 0}, zero, c->rs_floats * f, err);
    free(zero);
    if (rc || !Hv)
        return rc ? -1 : 0;
    cf_gpu_buf **bufs[] = {&o->dn_z, &o->dn_beta, &o->dn_alpha};
    const size_t bytes[] = {B * Hv * (size_t)hp->ssm_d * f, B * 2 * Hv * f, B * Hv * f};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (!(*bufs[i] = cf_gpu_alloc(o->g, bytes[i], err)))
            return -1;
    return 0;
}

/* The floats of layer l's recurrent state. */
static size_t rs_floats(const cf_ctx *c, int l)
{
    const size_t end = l + 1 < c->m->hp.n_layer ? c->rs_off[l + 1] : c->rs_floats;
    return end - c->rs_off[l];
}

/* The offloaded layers' recurrent state into the CPU's c->rs (to save or
 * checkpoint it there), or from it (after a rewind or a load). */
static int rs_copy(cf_offload *o, const cf_ctx *c, bool pull, cf_err *err)
{
    for (int l = 0; o && o->rs && l < o->n_layer; l++) {
        const size_t n = rs_floats(c, l) * sizeof(float);
        const cf_gpu_view at = {o->rs, c->rs_off[l] * sizeof(float)};
        if (!o->layer[l] || !n)
            continue;
        if (pull ? cf_gpu_read(o->g, at, c->rs + c->rs_off[l], n, err)
                 : cf_gpu_write(o->g, at, c->rs + c->rs_off[l], n, err))
            return -1;
    }
    return 0;
}

int cf_offload_rs_pull(cf_offload *o, const cf_ctx *c, cf_err *err)
{
    return rs_copy(o, c, true, err);
}

int cf_offload_rs_push(cf_offload *o, const cf_ctx *c, cf_err *err)
{
    return rs_copy(o, c, false, err);
}

/* The activations of a batch, and RoPE's tables. */
static int activations(cf_offload *o, const cf_ctx *c, cf_err *err)
{
    const cf_hparams *hp = &c->m->hp;
    const size_t B = (size_t)c->n_batch, E = (size_t)hp->n_embd, f = sizeof(float);
    size_t F = 0;
    for (int l = 0; l < hp->n_layer; l++)
        if (o->layer[l] && (size_t)c->m->layers[l].n_ff > F)
            F = (size_t)c->m->layers[l].n_ff;
    size_t h = c->row_cap > F ? c->row_cap : F;
    /* ff: the FFN's gate, up and act rows, or a recurrent mixer's outputs */
    const size_t dn = (size_t)hp->ssm_v_heads * (size_t)hp->ssm_d, inner = (size_t)hp->ssm_inner;
    size_t ff = 3 * F > E ? 3 * F : E;
    ff = dn > ff ? dn : ff;
    ff = inner > ff ? inner : ff;
    const size_t mla_v = (size_t)hp->n_head * (size_t)hp->mla_v; /* latent attention's head values */
    ff = mla_v > ff ? mla_v : ff;
    const size_t D = (size_t)hp->ple_dim, NL = (size_t)hp->n_layer;
    ff = (NL + 1) * D > ff ? (NL + 1) * D : ff; /* gemma4's per-layer gates (rows NL D apart), then their products */
    cf_gpu_buf **bufs[] = {&o->x, &o->out, &o->scratch, &o->h, &o->qkv, &o->ff};
    const size_t bytes[] = {B * E * f, B * E * f, B * E * f, B * h * f, B * c->qkv_stride * f, B * ff * f};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (!(*bufs[i] = cf_gpu_alloc(o->g, bytes[i], err)))
            return -1;
    if (D && !(o->ple = cf_gpu_alloc(o->g, B * NL * D * f, err)))
        return -1;
    if (offloaded_with(o, c->m, has_dense_beside_experts) && !(o->dense_out = cf_gpu_alloc(o->g, B * E * f, err)))
        return -1;
    if (offloaded_with(o, c->m, has_experts) && moe_activations(o, c, err))
        return -1;
    if (c->rs_floats && recurrent_activations(o, c, err))
        return -1;
    for (int t = 0; t < 2; t++) {
        if (!c->rope_cos[t])
            continue;
        const size_t n = (size_t)c->kv.n_ctx * (size_t)(t ? hp->n_rot_swa : hp->n_rot) / 2 * f;
        if (!(o->rope_cos[t] = cf_gpu_alloc(o->g, n, err)) || !(o->rope_sin[t] = cf_gpu_alloc(o->g, n, err)) ||
            cf_gpu_write(o->g, (cf_gpu_view){o->rope_cos[t], 0}, c->rope_cos[t], n, err) ||
            cf_gpu_write(o->g, (cf_gpu_view){o->rope_sin[t], 0}, c->rope_sin[t], n, err))
            return -1;
    }
    return 0;
}

/* Layers [0, l] back to the CPU (what did not fit below the last that did). */
static void layers_back(cf_offload *o, int l)
{
    for (int i = 0; i <= l; i++) {
        o->layer[i] = false;
        if (o->kv_buf[i])
            cf_gpu_free(o->g, o->kv_buf[i]);
        o->kv_buf[i] = NULL;
    }
}

/* The output's tensors on the GPU: the final norm and the output matrix,
 * and the last layer's bias and post-norm that the final residual adds
 * its output by. */
#define OUT_TENSORS 5
static void output_tensors(const cf_model *m, cf_weight t[OUT_TENSORS])
{
    const cf_block_out last = cf_layer_out(&m->layers[m->hp.n_layer - 1]);
    t[0] = m->out_norm;
    t[1] = m->out_norm_b;
    t[2] = m->output;
    t[3] = last.bias;
    t[4] = last.post_norm;
}

static size_t layer_bytes(const cf_ctx *c, int l)
{
    cf_weight t[LAYER_TENSORS];
    layer_tensors(&c->m->layers[l], t);
    size_t bytes = kv_bytes(&c->kv, l);
    for (int i = 0; i < LAYER_TENSORS; i++)
        bytes += t[i] ? tensor_bytes(t[i]) : 0;
    return bytes;
}

/* Which of the asked layers (from `first`) the GPU's ops run: the others
 * counted, the first reason kept. */
static void choose(cf_offload *o, const cf_ctx *c, int first, const char **why, int *n_cpu)
{
    char *type = o->err.msg; /* scratch for a type's name */
    for (int l = first; l < c->m->hp.n_layer; l++) {
        const cf_layer *L = &c->m->layers[l];
        cf_weight t[LAYER_TENSORS];
        layer_tensors(L, t);
        const char *r = layer_unsupported(c, L, l);
        const int missing = r ? -1 : missing_type(o->g, t, LAYER_TENSORS);
        if (missing >= 0) {
            snprintf(type, sizeof o->err.msg, "%s weights", cf_type_name((uint32_t)missing));
            r = type;
        }
        if (!r) {
            o->layer[l] = true;
            continue;
        }
        if (!(*n_cpu)++)
            *why = r;
    }
}

cf_offload *cf_offload_new(const cf_ctx *c, int n_gpu_layers, int device, char *note, size_t note_size)
{
    note[0] = '\0';
    if (n_gpu_layers <= 0)
        return NULL;
    const cf_model *m = c->m;
    const int NL = m->hp.n_layer;
    cf_err err = {0};
    cf_gpu *g = cf_gpu_count(&err) > 0 ? cf_gpu_open(device, &err) : NULL;
    if (!g) {
        snprintf(note, note_size, "%s; running on the CPU", err.msg);
        return NULL;
    }
    cf_offload *o = calloc(1, sizeof *o);
    if (o) {
        o->g = g;
        o->n_layer = NL;
        o->layer = calloc((size_t)NL, sizeof *o->layer);
        o->kv = calloc((size_t)NL, sizeof *o->kv);
        o->kv_buf = calloc((size_t)NL, sizeof *o->kv_buf);
    }
    if (!o || !o->layer || !o->kv || !o->kv_buf) {
        if (o)
            cf_offload_free(o);
        else
            cf_gpu_close(g);
        snprintf(note, note_size, "out of memory to offload to the GPU: running on the CPU");
        return NULL;
    }
    const char *name = cf_gpu_device(g)->name;
    const char *why = NULL;
    int n_cpu = 0, first = n_gpu_layers >= NL ? 0 : NL - n_gpu_layers;
    char type[CF_ERR_MSG_MAX];
    choose(o, c, first, &why, &n_cpu);
    if (why) /* choose's scratch is err's */
        why = strcpy(type, why);
    cf_weight out_t[OUT_TENSORS];
    output_tensors(m, out_t);
    o->output = n_gpu_layers > NL && missing_type(g, out_t, OUT_TENSORS) < 0;

    /* what fits, from the top: the output, then layer by layer down (a
     * test may say the device has less memory: CONFAB_TEST_GPU_MEM bytes) */
    const char *test_mem = getenv("CONFAB_TEST_GPU_MEM");
    const uint64_t mem = test_mem ? strtoull(test_mem, NULL, 10) : cf_gpu_device(g)->mem_bytes;
    const uint64_t budget = mem - mem / 10;
    uint64_t used = 0;
    int top_cpu = -1; /* the layers [0, top_cpu] did not fit */
    bool ok = activations(o, c, &o->err) == 0;
    /* an output matrix, or a batch's logits, past the device's buffer size
     * stays on the CPU (lavapipe takes 128 MiB a buffer: 512 rows of a
     * 152k vocabulary are 311 MB) */
    const bool out_fits = !ok || !o->output || (output_logits(o, c, &o->err) == 0 && upload_all(o, out_t, OUT_TENSORS, &o->err) == 0);
    o->output = o->output && out_fits;
    if (!out_fits && o->logits) {
        cf_gpu_free(o->g, o->logits);
        o->logits = NULL;
    }
    char out_why[CF_ERR_MSG_MAX] = "";
    if (!out_fits)
        strcpy(out_why, o->err.msg);
    for (int l = NL - 1; ok && l >= first; l--) {
        if (!o->layer[l])
            continue;
        used += layer_bytes(c, l);
        if (used > budget || layer_to_gpu(o, c, l, &o->err)) {
            top_cpu = l;
            break;
        }
    }
    if (!ok)
        top_cpu = NL - 1;
    int fit_out = 0;
    for (int l = 0; l <= top_cpu; l++)
        fit_out += o->layer[l];
    layers_back(o, top_cpu);
    /* a layer reading another's cache goes where that cache is */
    int n_shared = 0;
    for (int l = 0; l < NL; l++)
        if (o->layer[l] && !o->layer[m->layers[l].kv_src]) {
            o->layer[l] = false;
            n_shared++;
        }
    for (int l = 0; l < NL; l++)
        o->n_layers += o->layer[l];
    qsort(o->w, (size_t)o->n_w, sizeof *o->w, by_tensor);

    int at = snprintf(note, note_size, "offloaded %d/%d layers%s to %s", o->n_layers, NL,
                      o->output ? " and the output" : "", name);
    if (n_cpu && at < (int)note_size)
        at += snprintf(note + at, note_size - (size_t)at, "; %d stay on the CPU (%s: no GPU op yet)", n_cpu, why);
    if (fit_out && at < (int)note_size)
        at += snprintf(note + at, note_size - (size_t)at, "; %d did not fit in its %.1f GiB", fit_out,
                       (double)mem / (1u << 30));
    if (n_shared && at < (int)note_size)
        at += snprintf(note + at, note_size - (size_t)at, "; %d stay with the CPU's layers whose caches they read",
                       n_shared);
    if (!out_fits && at < (int)note_size)
        at += snprintf(note + at, note_size - (size_t)at, "; the output stays on the CPU (%s)", out_why);
    if (!ok && at < (int)note_size)
        snprintf(note + at, note_size - (size_t)at, " (%s)", o->err.msg);
    if (!o->n_layers && !o->output) {
        cf_offload_free(o);
        return NULL;
    }
    return o;
}

void cf_offload_free(cf_offload *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->n_w; i++)
        cf_gpu_free(o->g, o->w[i].buf);
    cf_gpu_buf *act[] = {o->x,           o->out,         o->scratch,     o->h,           o->qkv,     o->ff,
                         o->logits,      o->rope_cos[0], o->rope_cos[1], o->rope_sin[0], o->router,  o->sel,
                         o->rope_sin[1], o->pair_w,      o->xrow,        o->pairs,       o->pair_ff, o->pair_out,
                         o->shared,      o->rs,          o->dn_z,        o->dn_beta,     o->dn_alpha,
                         o->ple,         o->dense_out};
    for (size_t i = 0; i < sizeof act / sizeof *act; i++)
        if (act[i])
            cf_gpu_free(o->g, act[i]);
    if (o->kv_buf)
        layers_back(o, o->n_layer - 1);
    free(o->w);
    free(o->kv);
    free(o->kv_buf);
    free(o->layer);
    cf_gpu_close(o->g);
    free(o);
}

/* The rows of positions [0, n) of each KV head of layer l on the device
 * to the CPU's cache or from it, as the CPU stores and widens a row. */
static int kv_copy(cf_offload *o, const cf_kv *kv, int l, int n, bool pull, cf_err *err)
{
    const int hd = kv->head_dim[l];
    const size_t rb = cf_kv_row_bytes(kv->type_k, hd);
    uint8_t *raw = malloc((size_t)n * rb);
    float *row = malloc((size_t)hd * sizeof *row);
    int rc = raw && row ? 0 : cf_fail(err, "out of memory");
    for (int part = 0; rc == 0 && part < (kv->k_only ? 1 : 2); part++)
        for (int h = 0; rc == 0 && h < kv->n_head_kv[l]; h++) {
            const cf_gpu_view at = {o->kv_buf[l], (part ? kv_bytes(kv, l) / 2 : 0) + (size_t)h * (size_t)kv->n_ctx * rb};
            if (pull) {
                rc = cf_gpu_read(o->g, at, raw, (size_t)n * rb, err);
                for (int p = 0; rc == 0 && p < n; p++) {
                    cf_kv_widen(kv->type_k, raw + (size_t)p * rb, row, hd);
                    (part ? cf_kv_put_v : cf_kv_put_k)(kv, l, h, p, row);
                }
                continue;
            }
            for (int p = 0; p < n; p++) {
                if (part) /* (the CPU's values lie in slabs of positions) */
                    cf_kv_widen(kv->type_v, cf_kv_v(kv, l, h, p), row, hd);
                else
                    cf_kv_get_k(kv, l, h, p, row);
                cf_kv_store(kv->type_k, row, raw + (size_t)p * rb, hd);
            }
            rc = cf_gpu_write(o->g, at, raw, (size_t)n * rb, err);
        }
    free(raw);
    free(row);
    return rc;
}

int cf_offload_kv_pull(cf_offload *o, const cf_kv *kv, int n, cf_err *err)
{
    for (int l = 0; o && n > 0 && l < o->n_layer; l++)
        if (o->layer[l] && kv->n_head_kv[l] && kv_copy(o, kv, l, n, true, err))
            return -1;
    return 0;
}

int cf_offload_kv_push(cf_offload *o, const cf_kv *kv, int n, cf_err *err)
{
    for (int l = 0; o && n > 0 && l < o->n_layer; l++)
        if (o->layer[l] && kv->n_head_kv[l] && kv_copy(o, kv, l, n, false, err))
            return -1;
    return 0;
}
