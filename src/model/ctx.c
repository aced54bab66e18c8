/* Contexts: the KV cache, the activation buffers of a batch and every
 * thread's scratch, all allocated here so that decoding allocates nothing. */
#include <stdlib.h>
#include <string.h>

#include "gpu_offload.h"
#include "model_internal.h"
#include "vec.h"

static void *alloc_bytes(size_t n)
{
    return aligned_alloc(64, (n + 63) & ~(size_t)63);
}

static float *alloc_floats(size_t n)
{
    return alloc_bytes(n * sizeof(float));
}

static size_t act_bytes(cf_weight w)
{
    return w ? cf_row_bytes(cf_vec_dot_type(w->type), w->ne[0]) : 0;
}

/* Which xq buffer holds the input of ws[i]: the first of the group with the
 * same dot type. */
int cf_xq_index(cf_weight const ws[3], int i)
{
    for (int j = 0; j < i; j++)
        if (ws[j] && cf_vec_dot_type(ws[j]->type) == cf_vec_dot_type(ws[i]->type))
            return cf_xq_index(ws, j);
    return i;
}

void cf_moe_group(const cf_layer *L, cf_weight moe[3])
{
    /* experts without a gate read their input through up alone */
    moe[0] = L->moe_router;
    moe[1] = L->moe_gate ? L->moe_gate : L->moe_up;
    moe[2] = L->moe_gate ? L->moe_up : NULL;
}

int cf_moe_xq(const cf_layer *L, cf_weight const moe[3])
{
    return L->dense_norm ? 1 : cf_xq_index(moe, 1);
}

void cf_layer_groups(const cf_layer *L, cf_weight qkv[3], cf_weight ff[3])
{
    qkv[0] = L->conv_in ? L->conv_in
             : L->dn_qkv ? L->dn_qkv
             : L->m2_in  ? L->m2_in
             : L->wqkv   ? L->wqkv
             : L->wq_a   ? L->wq_a
                         : L->wq;
    qkv[1] = L->dn_qkv ? L->dn_z : L->wqkv ? NULL : L->wk;
    /* no attn_v: V is the K projection (gemma4 MoE's global layers) */
    qkv[2] = L->dn_qkv ? L->dn_beta : L->wqkv ? NULL : L->wv ? L->wv : L->wk;
    if (L->moe_router && !L->dense_norm) {
        cf_moe_group(L, ff);
        return;
    }
    /* phi3's gate rows live in w_up; gpt2 and nemotron_h have no gate */
    ff[0] = L->w_gate ? L->w_gate : L->w_up;
    ff[1] = L->w_gate ? L->w_up : NULL;
    ff[2] = NULL;
}

/* The largest rounded row and how many xq buffers the model's groups need. */
static void act_needs(const cf_model *m, size_t *stride, int *n_xq)
{
    size_t mx = act_bytes(m->output) > act_bytes(m->ple_model_proj) ? act_bytes(m->output)
                                                                      : act_bytes(m->ple_model_proj);
    int nb = 1;
    for (int l = 0; l < m->hp.n_layer; l++) {
        const cf_layer *L = &m->layers[l];
        cf_weight g[3][3], single[] = {L->wo,     L->w_down,  L->moe_down, L->conv_out, L->dn_out,
                                       L->m2_out, L->sh_down, L->ple_gate, L->ple_proj, L->wq};
        cf_layer_groups(L, g[0], g[1]);
        cf_moe_group(L, g[2]); /* a dense FFN beside the experts rounds for both */
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 3; i++) {
                if (!g[k][i])
                    continue;
                mx = act_bytes(g[k][i]) > mx ? act_bytes(g[k][i]) : mx;
                nb = cf_xq_index(g[k], i) + 1 > nb ? cf_xq_index(g[k], i) + 1 : nb;
            }
        if (L->moe_router)
            nb = cf_moe_xq(L, g[2]) + 1 > nb ? cf_moe_xq(L, g[2]) + 1 : nb;
        for (size_t i = 0; i < sizeof single / sizeof single[0]; i++)
            mx = act_bytes(single[i]) > mx ? act_bytes(single[i]) : mx;
    }
    *stride = (mx + 63) & ~(size_t)63;
    *n_xq = nb;
}

static void free_tbufs(cf_tbuf *tb, int n)
{
    for (int i = 0; tb && i < n; i++) {
        free(tb[i].x);
        free(tb[i].row);
        for (int j = 0; j < 3; j++)
            free(tb[i].xq[j]);
        free(tb[i].tile);
        free(tb[i].scores);
        free(tb[i].part);
        free(tb[i].kw);
        free(tb[i].vw);
    }
    free(tb);
}

static cf_tbuf *alloc_tbufs(const cf_ctx *c, int n)
{
    const cf_hparams *hp = &c->m->hp;
    const size_t E = (size_t)hp->n_embd;
    /* the query rows of one KV head in a run of a batch's tokens: every head
     * of one token, or up to CF_ATTN_ROWS of several (cpu_attention.c) */
    const size_t R = (size_t)hp->n_head > CF_ATTN_ROWS ? (size_t)hp->n_head : CF_ATTN_ROWS;
    size_t hd = 0;
    for (int l = 0; l < c->kv.n_layer; l++)
        hd = (size_t)c->kv.head_dim[l] > hd ? (size_t)c->kv.head_dim[l] : hd;
    cf_tbuf *tb = calloc((size_t)n, sizeof *tb);
    bool ok = tb != NULL;
    for (int i = 0; ok && i < n; i++) {
        tb[i].x = alloc_floats(E);
        tb[i].row = alloc_floats(CF_ATTN_ROWS * c->row_cap);
        tb[i].tile = alloc_floats(c->tile_cap);
        tb[i].scores = alloc_floats((size_t)CF_ATTN_ROWS * CF_ATTN_CHUNK);
        tb[i].part = alloc_bytes(R * (size_t)c->max_chunks * c->part_bytes);
        ok = tb[i].x && tb[i].row && tb[i].tile && tb[i].scores && tb[i].part;
        /* a chunk of keys and values widened from a quantized cache, the
         * keys from the start of their first block */
        if (ok && cf_kv_widened(&c->kv))
            ok = (tb[i].kw = alloc_floats((size_t)(CF_ATTN_CHUNK + CF_KV_BLOCK) * hd)) != NULL &&
                 (tb[i].vw = alloc_floats((size_t)CF_ATTN_CHUNK * hd)) != NULL;
        for (int j = 0; ok && j < c->n_xq; j++)
            ok = (tb[i].xq[j] = alloc_bytes(c->xq_stride)) != NULL;
    }
    if (!ok) {
        free_tbufs(tb, n);
        return NULL;
    }
    return tb;
}

static uint64_t *alloc_shares(int n_work, int n_threads)
{
    return alloc_bytes((size_t)n_work * (size_t)n_threads * CF_SHARE_STRIDE * sizeof(uint64_t));
}

static bool alloc_moe(cf_ctx *c, size_t B)
{
    const cf_hparams *hp = &c->m->hp;
    if (!hp->n_expert)
        return true;
    const size_t X = (size_t)hp->n_expert, pairs = B * (size_t)hp->n_expert_used;
    c->moe_logits = alloc_floats(B * X);
    c->moe_sel = alloc_bytes(pairs * sizeof(int32_t));
    c->moe_w = alloc_floats(pairs);
    c->moe_off = alloc_bytes((X + 1) * sizeof(int32_t));
    c->moe_used = alloc_bytes(X * sizeof(int32_t));
    c->moe_slot = alloc_bytes(pairs * sizeof(int32_t));
    c->moe_x = alloc_bytes(pairs * c->xq_stride);
    /* the shared expert's gate and up rows of a batch reuse it after the
     * routed experts are done */
    const size_t ff = pairs * (size_t)hp->n_ff_exp, sh = 2 * B * (size_t)hp->n_ff_shexp;
    c->moe_ff = alloc_floats(ff > sh ? ff : sh);
    c->moe_xd = alloc_bytes(pairs * c->xq_stride);
    c->moe_out = alloc_floats(pairs * (size_t)hp->n_embd);
    return c->moe_logits && c->moe_sel && c->moe_w && c->moe_off && c->moe_used && c->moe_slot &&
           c->moe_x && c->moe_ff && c->moe_xd && c->moe_out;
}

static int rope_tables(cf_ctx *c)
{
    const cf_hparams *hp = &c->m->hp;
    if (hp->rope_style == CF_ROPE_NONE)
        return 0;
    for (int t = 0; t < (hp->rope_base_swa > 0 ? 2 : 1); t++) {
        const size_t half = (size_t)(t ? hp->n_rot_swa : hp->n_rot) / 2, n = (size_t)c->kv.n_ctx * half;
        c->rope_cos[t] = alloc_floats(n);
        c->rope_sin[t] = alloc_floats(n);
        if (!c->rope_cos[t] || !c->rope_sin[t])
            return -1;
        for (int p = 0; p < c->kv.n_ctx; p++)
            cf_rope_angles(hp, t, (float)p, true, c->rope_cos[t] + (size_t)p * half,
                           c->rope_sin[t] + (size_t)p * half);
    }
    return 0;
}

/* The widest dense FFN of the layers that have one.  Not hp->n_ff: a MoE
 * file (gpt-oss) may state a feed_forward_length that no tensor has, and
 * nothing checks it against one; a hostile one sized gigabytes of buffers. */
static size_t dense_ff(const cf_model *m)
{
    size_t f = 0;
    for (int l = 0; l < m->hp.n_layer; l++)
        if (m->layers[l].w_down && (size_t)m->layers[l].n_ff > f)
            f = (size_t)m->layers[l].n_ff;
    return f;
}

int cf_ctx_new(const cf_model *m, const cf_ctx_params *p, cf_ctx **out, cf_err *err)
{
    *out = NULL;
    const cf_hparams *hp = &m->hp;
    int n_ctx = p && p->n_ctx > 0 ? p->n_ctx : (hp->n_ctx_train < 4096 ? hp->n_ctx_train : 4096);
    int n_batch = p && p->n_batch > 0 ? p->n_batch : 512;
    if (n_ctx > (1 << 20))
        return cf_fail(err, "context size %d is too large", n_ctx);
    if (hp->rope_style == CF_ROPE_NONE && n_ctx > hp->n_ctx_train)
        return cf_fail(err, "%s has learned positions for %d tokens; -c %d is larger",
                       cf_arch_name(hp->arch), hp->n_ctx_train, n_ctx);
    if (n_batch > n_ctx)
        n_batch = n_ctx;
    if (hp->ffn != CF_FFN_SWIGLU)
        cf_gelu_init();
    /* its barrier is aligned to cache lines, and so the whole (the
     * compiler stores to it by aligned vectors): not calloc's 16 bytes */
    cf_ctx *c = aligned_alloc(_Alignof(cf_ctx), sizeof *c);
    if (!c)
        return cf_fail(err, "out of memory");
    memset(c, 0, sizeof *c);
    c->m = m;
    c->n_batch = n_batch;
    c->n_threads = p && p->n_threads > 0 ? p->n_threads : 1;
    const char *delay = getenv("CONFAB_TEST_PREFILL_DELAY_MS");
    c->test_delay_ms = delay && atol(delay) > 0 && atol(delay) < 10000 ? atol(delay) : 0;
    if (cf_kv_init(&c->kv, m, n_ctx, p, err) != 0) {
        free(c);
        return -1;
    }
    const size_t B = (size_t)n_batch, E = (size_t)hp->n_embd, F = dense_ff(m);
    const size_t Q = (size_t)hp->n_head * hp->head_dim, KV = (size_t)hp->n_head_kv * hp->head_dim;
    /* a delta net's values, or a Mamba2 mixer's channels (ssm_inner) */
    const size_t dn_inner = hp->ssm_inner ? 0 : (size_t)hp->ssm_v_heads * (size_t)hp->ssm_d;
    const size_t dn_conv = dn_inner ? 2 * (size_t)hp->ssm_k_heads * (size_t)hp->ssm_d + dn_inner : 0;
    const size_t m2_inner = (size_t)hp->ssm_inner;
    const size_t m2_proj =
        2 * m2_inner + 2 * (size_t)hp->ssm_k_heads * (size_t)hp->ssm_d + (size_t)hp->ssm_v_heads;
    c->qkv_stride = (hp->q_gate ? 2 * Q : Q) + 2 * KV;
    if (hp->conv_kernel && 3 * E > c->qkv_stride) /* lfm2's B, C and X */
        c->qkv_stride = 3 * E;
    if (dn_conv > c->qkv_stride) /* a delta net's q|k|v */
        c->qkv_stride = dn_conv;
    if (m2_inner && m2_proj > c->qkv_stride) /* Mamba2's z, x|B|C and dt */
        c->qkv_stride = m2_proj;
    if (hp->kv_lora) /* latent attention's raw queries, latent and q LoRA too (cpu_attention.c) */
        c->qkv_stride = Q + (size_t)hp->n_head * (size_t)(hp->mla_nope + hp->n_rot) + (size_t)hp->head_dim +
                        (size_t)hp->q_lora;
    act_needs(m, &c->xq_stride, &c->n_xq);
    c->tile_cap = B * 64 > F ? B * 64 : F;
    const size_t ple_row = (size_t)hp->n_layer * (size_t)hp->ple_dim; /* a token's per-layer embeddings */
    c->tile_cap = ple_row > c->tile_cap ? ple_row : c->tile_cap;
    c->max_chunks = (n_ctx + CF_ATTN_CHUNK - 1) / CF_ATTN_CHUNK;
    c->part_bytes = cf_attn_part_bytes(hp->head_dim);
    c->row_cap = E > Q ? E : Q;
    c->row_cap = m2_inner > c->row_cap ? m2_inner : c->row_cap; /* Mamba2's normalised y */
    /* shared phases per layer: at most 3 to mix tokens (Q K V, attention,
     * wo) and 5 for the FFN (a MoE's router, up, down, and a shared
     * expert's up and down); 1 for the logits */
    c->n_work = 10 * hp->n_layer + 2; /* + 2 per layer and 1 for gemma4's per-layer embeddings */
    c->x = alloc_floats(B * E);
    c->tmp = alloc_floats(B * E);
    c->qkv = alloc_floats(B * c->qkv_stride);
    /* the FFN's rows, or a short convolution's, a delta net's or Mamba2's outputs */
    size_t ff_w = F > E ? F : E;
    ff_w = dn_inner > ff_w ? dn_inner : ff_w;
    c->ff = alloc_floats(B * (m2_inner > ff_w ? m2_inner : ff_w));
    if (hp->ple_dim)
        c->ple = alloc_floats(B * (size_t)hp->n_layer * (size_t)hp->ple_dim);
    const bool dual = hp->n_expert && m->layers[0].dense_norm;
    if (dual)
        c->dense_out = alloc_floats(B * E);
    if (dn_inner) {
        c->dn_z = alloc_floats(B * dn_inner);
        /* fused, they are ssm_ba's rows */
        c->dn_beta = alloc_floats(B * (size_t)hp->ssm_v_heads * (hp->ssm_v_grouped ? 2 : 1));
        c->dn_alpha = alloc_floats(B * (size_t)hp->ssm_v_heads);
    }
    c->part = alloc_bytes((size_t)hp->n_head * (size_t)c->max_chunks * c->part_bytes);
    c->work = calloc((size_t)c->n_work, sizeof *c->work);
    c->shares = alloc_shares(c->n_work, c->n_threads);
    bool ok = c->x && c->tmp && c->qkv && c->ff && c->part && c->work && c->shares &&
              (!dn_inner || (c->dn_z && c->dn_beta && c->dn_alpha)) && (!hp->ple_dim || c->ple) && (!dual || c->dense_out) &&
              rope_tables(c) == 0;
    for (int i = 0; ok && i < c->n_xq; i++)
        ok = (c->xq[i] = alloc_bytes(B * c->xq_stride)) != NULL;
    ok = ok && alloc_moe(c, B) && cf_rs_init(c) == 0;
    ok = ok && (c->tb = alloc_tbufs(c, c->n_threads)) != NULL;
    if (!ok) {
        cf_ctx_free(c);
        return cf_fail(err, "out of memory for the activations of a %d-token batch", n_batch);
    }
    c->gpu_asked[0] = p ? p->n_gpu_layers : 0;
    c->gpu_asked[1] = p ? p->gpu_device : 0;
    c->gpu = cf_offload_new(c, c->gpu_asked[0], c->gpu_asked[1], c->gpu_note, sizeof c->gpu_note);
    *out = c;
    return 0;
}

void cf_ctx_free(cf_ctx *c)
{
    if (!c)
        return;
    cf_offload_free(c->gpu);
    cf_kv_free(&c->kv);
    cf_rs_free(c);
    free(c->ple);
    free(c->dense_out);
    free(c->dn_z);
    free(c->dn_beta);
    free(c->dn_alpha);
    free(c->x);
    free(c->tmp);
    free(c->qkv);
    free(c->ff);
    free(c->moe_logits);
    free(c->moe_sel);
    free(c->moe_w);
    free(c->moe_off);
    free(c->moe_used);
    free(c->moe_slot);
    free(c->moe_x);
    free(c->moe_ff);
    free(c->moe_xd);
    free(c->moe_out);
    free(c->part);
    free(c->work);
    free(c->shares);
    for (int t = 0; t < 2; t++) {
        free(c->rope_cos[t]);
        free(c->rope_sin[t]);
    }
    for (int i = 0; i < 3; i++)
        free(c->xq[i]);
    free_tbufs(c->tb, c->n_threads);
    free(c);
}

const cf_model *cf_ctx_model(const cf_ctx *c) { return c->m; }
int cf_ctx_n_ctx(const cf_ctx *c) { return c->kv.n_ctx; }
int cf_ctx_n_past(const cf_ctx *c) { return c->kv.n_past; }
int cf_ctx_n_threads(const cf_ctx *c) { return c->n_threads; }
const char *cf_ctx_gpu_note(const cf_ctx *c) { return c->gpu_note; }
void cf_ctx_gpu_asked(const cf_ctx *c, int *n_gpu_layers, int *gpu_device)
{
    *n_gpu_layers = c->gpu_asked[0];
    *gpu_device = c->gpu_asked[1];
}
int cf_ctx_gpu_layers(const cf_ctx *c, bool *output)
{
    if (output)
        *output = c->gpu && c->gpu->output;
    return c->gpu ? c->gpu->n_layers : 0;
}
int cf_ctx_decode_threads(const cf_ctx *c) { return cf_busy_settled(&c->busy, c->n_threads); }
cf_kv_type cf_ctx_kv_type_k(const cf_ctx *c) { return c->kv.type_k; }
cf_kv_type cf_ctx_kv_type_v(const cf_ctx *c) { return c->kv.type_v; }
bool cf_ctx_kv_rotated(const cf_ctx *c)
{
    for (int l = 0; l < c->kv.n_layer; l++)
        if (cf_kv_rot(&c->kv, c->kv.head_dim[l], true) || cf_kv_rot(&c->kv, c->kv.head_dim[l], false))
            return true;
    return false;
}

void cf_ctx_set_cancel(cf_ctx *c, bool (*cancel)(void *ud), void *ud)
{
    c->cancel = cancel;
    c->cancel_ud = ud;
}

void cf_ctx_set_pause(cf_ctx *c, void (*pause)(void *ud), void *ud)
{
    c->pause = pause;
    c->pause_ud = ud;
}

bool cf_ctx_cancelled(cf_ctx *c)
{
    if (c->test_delay_ms)
        nanosleep(&(struct timespec){c->test_delay_ms / 1000, c->test_delay_ms % 1000 * 1000000},
                  NULL);
    return c->cancel(c->cancel_ud);
}

void cf_ctx_set_threads(cf_ctx *c, int n_threads)
{
    if (n_threads < 1)
        n_threads = 1;
    if (n_threads == c->n_threads)
        return;
    cf_tbuf *tb = alloc_tbufs(c, n_threads);
    uint64_t *shares = alloc_shares(c->n_work, n_threads);
    if (!tb || !shares) {
        free_tbufs(tb, n_threads);
        free(shares);
        return; /* keep the old count */
    }
    free_tbufs(c->tb, c->n_threads);
    free(c->shares);
    c->tb = tb;
    c->shares = shares;
    c->n_threads = n_threads;
    c->busy = (cf_busy){0};
}
