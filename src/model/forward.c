/* The forward pass.  One OpenMP parallel region runs the whole batch; a
 * layer is five phases of shared work, each ended by one barrier:
 *
 *   Q K V rows (+ bias, RoPE, cache store)   | attention | wo rows |
 *   gate/up rows (+ SiLU, or GELU)           | down rows
 *
 * Each thread reads an even share of a matrix's rows as one sequential
 * stream, in pieces; one done early takes pieces from the back of a slower
 * thread's share, so a thread slowed by anything else on the machine ends
 * up with less of the work; one waiting at a barrier fetches the start of
 * its next share meanwhile.  Between two phases, row-wise work (residual
 * add, norm, activation rounding) runs on whole rows: for a single token
 * every thread does it on its own copy, which costs no barrier; for a batch
 * the tokens are split and one barrier follows.  Every value is computed
 * by the same arithmetic whichever thread does it, so results do not
 * depend on the thread count, and attention works on fixed chunks of cache
 * positions, so a token gives the same result batched or alone. */
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "model_internal.h"
#include "vec.h"

/* State of one pass, shared by the threads of the parallel region. */
typedef struct pass {
    cf_ctx *c;
    const cf_model *m;
    const cf_hparams *hp;
    const cf_vec_ops *vec;
    const int32_t *tokens;
    int n, pos0;
    float *logits;
    bool all_logits;
    bool one; /* a single token: row-wise work on private copies */
    bool may_stop; /* ask the context's cancel check before each layer */
    uint64_t serial; /* this pass's number among all passes of the process */
} pass;

/* One thread inside the region. */
typedef struct thr {
    const pass *P;
    cf_tbuf *b;
    int ith, nth;
    int phase; /* next work counter: every thread walks them in step */
} thr;

static void sync_all(const thr *T)
{
    cf_barrier_wait(&T->P->c->bar, T->nth);
}

static void split(int n, int ith, int nth, int *i0, int *i1)
{
    *i0 = (int)((int64_t)n * ith / nth);
    *i1 = (int)((int64_t)n * (ith + 1) / nth);
}

/* The next unit of a shared phase's work; all units are taken once the
 * result reaches the phase's unit count. */
static int grab(const thr *T, int phase)
{
    return __atomic_fetch_add(&T->P->c->work[phase], 1, __ATOMIC_RELAXED);
}

/* ---- rows ------------------------------------------------------------------ */

static float *resid(const thr *T, int r)
{
    return T->P->one ? T->b->x : T->P->c->x + (size_t)r * (size_t)T->P->hp->n_embd;
}

static uint8_t *act(const thr *T, int i, int r)
{
    const cf_ctx *c = T->P->c;
    return (T->P->one ? T->b->xq[i] : c->xq[i]) + (size_t)r * c->xq_stride;
}

/* Rows [first, first + n) of this thread in a row-wise phase. */
static void my_rows(const thr *T, int first, int n, int *r0, int *r1)
{
    if (T->P->one) {
        *r0 = first;
        *r1 = first + n;
        return;
    }
    split(n, T->ith, T->nth, r0, r1);
    *r0 += first;
    *r1 += first;
}

static void rows_done(const thr *T)
{
    if (!T->P->one)
        sync_all(T);
}

/* Round a row for each weight of a group that has its own buffer. */
static void round_row(const thr *T, cf_weight const ws[3], const float *src, int r)
{
    for (int i = 0; i < 3; i++)
        if (ws[i] && cf_xq_index(ws, i) == i)
            cf_quantize_row(cf_vec_dot_type(ws[i]->type), src, act(T, i, r), ws[i]->ne[0]);
}

/* The output of the block before (c->tmp, when `out` is given) joins the
 * residual: plus its bias, normalised by its post-norm and scaled, as the
 * recipe says.  Then the residual, normalised by the next block's pre-norm
 * when it has one, is rounded for that block's group of weights. */
typedef struct block_out {
    cf_weight bias, post_norm;
    cf_weight scale; /* of the whole residual after the add (gemma4) */
} block_out;

static void norm_phase(thr *T, int first, int n, const block_out *out, cf_weight nw, cf_weight nb,
                       cf_weight const ws[3])
{
    const pass *P = T->P;
    const cf_hparams *hp = P->hp;
    const int E = hp->n_embd;
    float *row = T->b->row;
    int r0, r1;
    my_rows(T, first, n, &r0, &r1);
    for (int r = r0; r < r1; r++) {
        float *x = resid(T, r);
        if (out) {
            const float *a = P->c->tmp + (size_t)r * E;
            if (out->post_norm) {
                P->vec->rmsnorm(row, a, out->post_norm->data, E, hp->norm_eps);
                a = row;
            }
            if (hp->residual_scale != 1.0f) {
                for (int i = 0; i < E; i++)
                    row[i] = a[i] * hp->residual_scale;
                a = row;
            }
            P->vec->add(x, x, a, out->bias ? out->bias->data : NULL, E);
            if (out->scale) {
                const float s = *(const float *)out->scale->data;
                for (int i = 0; i < E; i++)
                    x[i] *= s;
            }
        }
        const float *h = x;
        if (nw && hp->norm == CF_NORM_LAYER)
            cf_layernorm(row, x, nw->data, nb->data, E, hp->norm_eps);
        else if (nw)
            P->vec->rmsnorm(row, x, nw->data, E, hp->norm_eps);
        if (nw)
            h = row;
        round_row(T, ws, h, r);
    }
    rows_done(T);
}

/* Round rows of src (stride floats apart) for w. */
static void round_phase(thr *T, cf_weight w, const float *src, size_t stride)
{
    cf_weight ws[3] = {w, NULL, NULL};
    int r0, r1;
    my_rows(T, 0, T->P->n, &r0, &r1);
    for (int r = r0; r < r1; r++)
        round_row(T, ws, src + (size_t)r * stride, r);
    rows_done(T);
}

static void embed(thr *T)
{
    const pass *P = T->P;
    const cf_model *m = P->m;
    const size_t E = (size_t)P->hp->n_embd;
    const size_t row = cf_row_bytes(m->tok_embd->type, (int64_t)E);
    int r0, r1;
    my_rows(T, 0, P->n, &r0, &r1);
    for (int r = r0; r < r1; r++) {
        float *x = resid(T, r);
        const uint8_t *src = (const uint8_t *)m->tok_embd->data + (size_t)P->tokens[r] * row;
        if (m->tok_embd->layout != CF_LAYOUT_PLAIN) { /* repacked as the tied output */
            cf_unpack_row(m->tok_embd->type, m->tok_embd->layout, m->tok_embd->data, (int64_t)E,
                          m->tok_embd->ne[1], P->tokens[r], T->b->row);
            src = (const uint8_t *)T->b->row;
        }
        cf_dequantize_row(m->tok_embd->type, src, x, (int64_t)E);
        if (m->pos_embd)
            P->vec->add(x, x, (const float *)m->pos_embd->data + (size_t)(P->pos0 + r) * E, NULL,
                        (int)E);
        if (P->hp->embd_scale != 1.0f)
            for (size_t i = 0; i < E; i++)
                x[i] *= P->hp->embd_scale;
    }
    /* no barrier: the first norm_phase takes the same rows */
}

/* ---- weight rows ----------------------------------------------------------- */

/* A name for the activations a phase multiplies (cf_matmul_args.x_serial):
 * they stay as they are through the phase, and no two phases of any pass
 * of any context share it. */
static uint64_t phase_serial(const thr *T, int phase)
{
    return T->P->serial * (uint64_t)T->P->c->n_work + (uint64_t)phase + 1;
}

/* y = x W[row0 : row0 + rows]^T for n activation rows; x_serial: see
 * phase_serial (0: none) */
static void mm(cf_weight w, int64_t row0, int64_t rows, const uint8_t *x, size_t x_stride, int n,
               float *y, size_t y_stride, uint64_t x_serial)
{
    const size_t rb = cf_row_bytes(w->type, w->ne[0]);
    cf_matmul_args a = {
        .wtype = w->type,
        .w = (const uint8_t *)w->data + (size_t)row0 * rb,
        .w_stride = rb,
        .m = rows,
        .k = w->ne[0],
        .n = n,
        .x = x,
        .x_stride = x_stride,
        .y = y,
        .y_stride = y_stride,
        .w_layout = w->layout,
        .w_row = row0,
        .w_rows = w->ne[1] * w->ne[2] * w->ne[3],
        .x_serial = x_serial,
    };
    cf_matmul(&a, 0, 1);
}

/* A matrix's rows are split evenly over the threads; each thread reads its
 * share front to back in pieces, and one done with its own share takes
 * pieces from the back of another's.  A thread's reads stay one long
 * sequential stream (what the hardware prefetchers follow best), and the
 * threads still finish together when one runs slower (another process, a
 * busy sibling core).  A share is (front, back) in one 64-bit word, so that
 * its owner and a thief agree with one compare-and-swap; a zero word is a
 * share not yet set up (words are cleared at the start of every pass). */
#define PIECE_BYTES (1 << 18)
#define SHARE_LIVE (1ull << 63)

static uint64_t share(int64_t front, int64_t back)
{
    return SHARE_LIVE | (uint64_t)front | (uint64_t)back << 32;
}

static uint64_t *share_word(const thr *T, int phase, int t)
{
    const cf_ctx *c = T->P->c;
    return &c->shares[((size_t)phase * (size_t)c->n_threads + (size_t)t) * CF_SHARE_STRIDE];
}

/* Rows [lo, hi) of m that thread t of nth starts with: whole panels. */
static void share_bounds(int64_t m, int t, int nth, int64_t *lo, int64_t *hi)
{
    *lo = (m * t / nth) & ~(int64_t)15;
    *hi = t == nth - 1 ? m : (m * (t + 1) / nth) & ~(int64_t)15;
}

/* Thread t's share of m rows, set up by whoever looks first. */
static uint64_t load_share(const thr *T, uint64_t *w, int t, int64_t m)
{
    uint64_t s = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    if (s & SHARE_LIVE)
        return s;
    int64_t lo, hi;
    share_bounds(m, t, T->nth, &lo, &hi);
    const uint64_t init = share(lo, hi);
    if (__atomic_compare_exchange_n(w, &s, init, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return init;
    return s;
}

/* The next piece of rows [*r0, *r0 + returned) of an m-row phase for this
 * thread, pieces of `piece` rows (a multiple of 16); 0 when all are taken. */
static int64_t grab_rows(const thr *T, int phase, int64_t m, int64_t piece, int64_t *r0)
{
    for (int k = 0; k < T->nth; k++) {
        const int t = (T->ith + k) % T->nth;
        uint64_t *w = share_word(T, phase, t);
        for (uint64_t s = load_share(T, w, t, m);;) {
            const int64_t f = (int64_t)(s & 0xffffffffu), b = (int64_t)(s >> 32 & 0x7fffffffu);
            if (f >= b)
                break;
            /* the owner eats from the front, a thief from the back; pieces
             * start on 16-row panels and never exceed `piece` rows (callers
             * size buffers by it: the thief rounds its start up) */
            int64_t nf = f, nb = b;
            const int64_t back = (b - piece + 15) & ~(int64_t)15;
            if (k == 0)
                nf = f + piece < b ? f + piece : b;
            else
                nb = back > f ? back : f;
            if (__atomic_compare_exchange_n(w, &s, share(nf, nb), false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                *r0 = k == 0 ? f : nb;
                return k == 0 ? nf - f : b - nb;
            }
        }
    }
    return 0;
}

/* Rows per piece: whole panels of about PIECE_BYTES, at most cap rows
 * when cap > 0. */
static int64_t piece_rows(size_t row_bytes, int64_t cap)
{
    int64_t r = (int64_t)((PIECE_BYTES + row_bytes - 1) / row_bytes);
    r = (r + 15) & ~(int64_t)15;
    if (cap > 0 && r > cap)
        r = cap;
    return r;
}

/* The first bytes of this thread's share of rows [row0, row0 + m) of w:
 * while it waits at a barrier it fetches them (cf_barrier_wait_fetching),
 * so that its next stream starts warm. */
#define FETCH_MAX (32 << 10)

/* Rows [row0, row0 + rows) of w, at most FETCH_MAX bytes of them. */
static cf_fetch rows_start(cf_weight w, int64_t row0, int64_t rows)
{
    const size_t rb = cf_row_bytes(w->type, w->ne[0]), bytes = (size_t)rows * rb;
    return (cf_fetch){(const uint8_t *)w->data + (size_t)row0 * rb, bytes < FETCH_MAX ? bytes : FETCH_MAX};
}

static cf_fetch share_start(const thr *T, cf_weight w, int64_t row0, int64_t m)
{
    int64_t lo, hi;
    share_bounds(m, T->ith, T->nth, &lo, &hi);
    return rows_start(w, row0 + lo, hi - lo);
}

/* sync_all, fetching f[0..nf) meanwhile when decoding one token (a batch's
 * phases are arithmetic-bound) */
static void sync_fetching(const thr *T, const cf_fetch *f, int nf)
{
    cf_barrier_wait_fetching(&T->P->c->bar, T->nth, f, T->P->one ? nf : 0);
}

/* Y = X W^T over every row of w. */
static void matmul_phase(thr *T, cf_weight w, const uint8_t *x, int n, float *y, size_t y_stride)
{
    const int phase = T->phase++;
    const int64_t piece = piece_rows(cf_row_bytes(w->type, w->ne[0]), 0);
    int64_t r0, nr;
    while ((nr = grab_rows(T, phase, w->ne[1], piece, &r0)) > 0)
        mm(w, r0, nr, x, T->P->c->xq_stride, n, y + r0, y_stride, phase_serial(T, phase));
}

/* Several matrices reading the same rounded input as one shared phase (one
 * barrier): their rows are stacked, each piece cut at the matrices' edges.
 * Matrix i reads xq buffer xi[i] and writes y[i], rows y_stride[i] apart. */
static void stacked_phase(thr *T, const cf_weight *w, const int *xi, float *const *y,
                          const size_t *y_stride, int nw)
{
    const int phase = T->phase++;
    int64_t total = 0;
    for (int i = 0; i < nw; i++)
        total += w[i]->ne[1];
    const int64_t piece = piece_rows(cf_row_bytes(w[0]->type, w[0]->ne[0]), 0);
    int64_t v0, nv;
    while ((nv = grab_rows(T, phase, total, piece, &v0)) > 0)
        for (int64_t v = v0, first = 0, i = 0; v < v0 + nv && i < nw; first += w[i++]->ne[1]) {
            const int64_t end = first + w[i]->ne[1];
            if (v >= end)
                continue;
            const int64_t cnt = (end < v0 + nv ? end : v0 + nv) - v;
            mm(w[i], v - first, cnt, act(T, xi[i], 0), T->P->c->xq_stride, T->P->n, y[i] + (v - first),
               y_stride[i], phase_serial(T, phase));
            v += cnt;
        }
}

/* ---- attention block ------------------------------------------------------- */

/* x / rms(x), as ggml_rms_norm (the sum in double) */
static void rms_unweighted(float *x, int n, float eps)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += (double)(x[i] * x[i]);
    const float scale = 1.0f / sqrtf((float)(sum / n) + eps);
    for (int i = 0; i < n; i++)
        x[i] *= scale;
}

/* Floats of a query head in a qkv row: its query, then (q_gate) its
 * output gate. */
static int q_width(const cf_hparams *hp, const cf_layer *L)
{
    return hp->q_gate ? 2 * L->head_dim : L->head_dim;
}

/* Rotate the first n_rot dims of v by position pos's angles. */
static void rope_at(const thr *T, const cf_layer *L, float *v, int pos)
{
    const cf_ctx *c = T->P->c;
    const size_t half = (size_t)L->n_rot / 2;
    const int tab = cf_rope_table(T->P->hp, L);
    cf_rope_apply(T->P->hp->rope_style, L->n_rot, v, c->rope_cos[tab] + (size_t)pos * half,
                  c->rope_sin[tab] + (size_t)pos * half);
}

/* Bias, per-head norm, RoPE, q's scale and the cache store of head h of
 * part `which` (0 Q, 1 K, 2 V) for token t, whose values sit in the qkv
 * row. */
static void finish_head(const thr *T, const cf_layer *L, int l, int which, int h, int t)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int hd = L->head_dim;
    const size_t Q = (size_t)hp->n_head * q_width(hp, L), KV = (size_t)L->n_head_kv * hd;
    const size_t off = which == 0 ? (size_t)h * q_width(hp, L) : (which == 1 ? Q : Q + KV) + (size_t)h * hd;
    float *v = c->qkv + (size_t)t * c->qkv_stride + off;
    const float *bias = L->bqkv ? (const float *)L->bqkv->data + off : NULL;
    cf_weight b = which == 0 ? L->bq : which == 1 ? L->bk : L->bv;
    if (b)
        bias = (const float *)b->data + (size_t)h * hd;
    if (bias)
        P->vec->add(v, v, bias, NULL, hd);
    const int pos = P->pos0 + t;
    if (which == 2 && L->v_norm)
        rms_unweighted(v, hd, hp->norm_eps);
    if (which < 2 && hp->qk_norm == CF_QK_NORM_HEAD)
        P->vec->rmsnorm(v, v, (which == 0 ? L->q_norm : L->k_norm)->data, hd, hp->norm_eps);
    if (which < 2 && L->rope)
        rope_at(T, L, v, pos);
    if (which == 0 && hp->q_scale != 1.0f)
        for (int i = 0; i < hd; i++)
            v[i] *= hp->q_scale;
    if (which == 0 && hp->attn_temp_scale > 0) {
        const double steps = floor((double)pos / hp->attn_temp_floor);
        const float temp = (float)(log(steps + 1.0) * hp->attn_temp_scale + 1.0);
        for (int i = 0; i < hd; i++)
            v[i] *= temp;
    }
    /* into the Hadamard basis of a quantized cache: q with the keys, as
     * their product is what it keeps (D8), and q then rounded as the
     * scores read it */
    const cf_kv *kv = &c->kv;
    const int rot = cf_kv_rot(kv, hd, which != 2);
    if (rot)
        cf_kv_rotate(v, hd, rot);
    if (which == 0)
        cf_kv_round_query(kv->type_k, v, hd);
    else if (which == 1)
        cf_kv_put_k(kv, l, h, pos, v);
    else
        cf_kv_put_v(kv, l, h, pos, v);
}

/* Q, K and V rows in units of whole heads (whole 16-row panels too), each
 * finished by the thread that computed it; a norm over the whole q or k
 * projection makes each of them one unit. */
typedef struct qkv_units {
    int per;                    /* heads a unit */
    int count[3], units[3];     /* heads and units of Q, K, V */
    int64_t width[3], base[3];  /* floats (and rows) of a head; where each part starts */
} qkv_units;

static void qkv_plan(const thr *T, const cf_layer *L, int l, qkv_units *q)
{
    const cf_hparams *hp = T->P->hp;
    const int hd = L->head_dim, all = hp->n_head + 2 * L->n_head_kv;
    q->per = (all + 2 * T->nth - 1) / (2 * T->nth); /* two units per thread */
    while ((q->per * hd) % 16)
        q->per++;
    if (hp->qk_norm == CF_QK_NORM_FULL)
        q->per = hp->n_head;
    /* a layer reading another's cache computes only its queries */
    const int n_kv = L->kv_src == l ? L->n_head_kv : 0;
    const int count[3] = {hp->n_head, n_kv, n_kv};
    for (int i = 0; i < 3; i++) {
        q->count[i] = count[i];
        q->units[i] = (count[i] + q->per - 1) / q->per;
        q->width[i] = i ? hd : q_width(hp, L);
    }
    q->base[0] = 0;
    q->base[1] = count[0] * q->width[0];
    q->base[2] = q->base[1] + count[1] * hd;
}

/* Unit u of the plan: part *which, heads [*h0, *h1), rows from *row0 of
 * *w (the fused matrix or the part's own, ws). */
static void qkv_unit(const cf_layer *L, const qkv_units *q, cf_weight const ws[3], int u, int *which, int *h0,
                     int *h1, cf_weight *w, int64_t *row0)
{
    *which = u < q->units[0] ? 0 : u < q->units[0] + q->units[1] ? 1 : 2;
    *h0 = (u - (*which > 0 ? q->units[0] : 0) - (*which > 1 ? q->units[1] : 0)) * q->per;
    *h1 = *h0 + q->per < q->count[*which] ? *h0 + q->per : q->count[*which];
    *w = L->wqkv ? L->wqkv : ws[*which];
    *row0 = (L->wqkv ? q->base[*which] : 0) + *h0 * q->width[*which];
}

/* The first rows this thread multiplies in layer l's Q K V phase (units
 * mostly go out in turn), nothing for a layer without one; after the last
 * layer, its share of the output's. */
static cf_fetch qkv_start(const thr *T, int l)
{
    if (l >= T->P->hp->n_layer)
        return T->P->logits ? share_start(T, T->P->m->output, 0, T->P->m->output->ne[1]) : (cf_fetch){0};
    const cf_layer *L = &T->P->m->layers[l];
    if ((!L->wq && !L->wqkv) || L->wk_b)
        return (cf_fetch){0};
    qkv_units q;
    qkv_plan(T, L, l, &q);
    if (T->ith >= q.units[0] + q.units[1] + q.units[2])
        return (cf_fetch){0};
    cf_weight ws[3], ff[3], w;
    cf_layer_groups(L, ws, ff);
    int which, h0, h1;
    int64_t row0;
    qkv_unit(L, &q, ws, T->ith, &which, &h0, &h1, &w, &row0);
    return rows_start(w, row0, (h1 - h0) * q.width[which]);
}

static void qkv_phase(thr *T, const cf_layer *L, int l)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int hd = L->head_dim, phase = T->phase++;
    const bool full_norm = hp->qk_norm == CF_QK_NORM_FULL;
    qkv_units q;
    qkv_plan(T, L, l, &q);
    cf_weight ws[3], ff[3];
    cf_layer_groups(L, ws, ff);
    for (int u; (u = grab(T, phase)) < q.units[0] + q.units[1] + q.units[2];) {
        int which, h0, h1;
        int64_t row0;
        cf_weight w;
        qkv_unit(L, &q, ws, u, &which, &h0, &h1, &w, &row0);
        mm(w, row0, (h1 - h0) * q.width[which], act(T, L->wqkv ? 0 : cf_xq_index(ws, which), 0), c->xq_stride,
           P->n, c->qkv + q.base[which] + h0 * q.width[which], c->qkv_stride, phase_serial(T, phase));
        if (full_norm && which < 2)
            for (int t = 0; t < P->n; t++) {
                float *v = c->qkv + (size_t)t * c->qkv_stride + q.base[which];
                P->vec->rmsnorm(v, v, (which == 0 ? L->q_norm : L->k_norm)->data, q.count[which] * hd,
                                hp->norm_eps);
            }
        for (int t = 0; t < P->n; t++)
            for (int h = h0; h < h1; h++)
                finish_head(T, L, l, which, h, t);
    }
}

/* Latent attention's layout of a token's qkv row (deepseek2): the query
 * heads as attention reads them, [absorbed nope | rope] of head_dim each;
 * the raw query heads, [nope | rope]; the latent and its rope part as
 * attn_kv_a_mqa gives them; the q LoRA's rank. */
typedef struct mla_row {
    size_t raw, kv_a, q_a;
    int q_head; /* floats of a raw query head */
} mla_row;

static mla_row mla_layout(const cf_hparams *hp, const cf_layer *L)
{
    mla_row r;
    r.q_head = hp->mla_nope + L->n_rot;
    r.raw = (size_t)hp->n_head * (size_t)L->head_dim;
    r.kv_a = r.raw + (size_t)hp->n_head * (size_t)r.q_head;
    r.q_a = r.kv_a + (size_t)L->head_dim;
    return r;
}

/* Token t's cache row: the latent normed, its rope part rotated; every
 * head reads it as its key, and its latent as its value (out of the key
 * blocks: the cache holds keys only). */
static void latent_row(const thr *T, const cf_layer *L, int l, int t, const mla_row *r)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const int R = P->hp->kv_lora, pos = P->pos0 + t;
    float *a = c->qkv + (size_t)t * c->qkv_stride + r->kv_a;
    P->vec->rmsnorm(a, a, L->kv_a_norm->data, R, P->hp->norm_eps);
    rope_at(T, L, a + R, pos);
    cf_kv_put_k(&c->kv, l, 0, pos, a);
}

/* Latent attention's queries and cache rows: q (through its LoRA when it
 * has one) and the latent from the normalised input; each query head's
 * rope part rotated into place and its nope part absorbed by W_k_b[h], a
 * unit being a head over a block of tokens whose rounded rows fit the
 * thread's tile. */
static void mla_qkv_phase(thr *T, const cf_layer *L, int l)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int n = P->n, H = hp->n_head, hd = L->head_dim, R = hp->kv_lora, nope = hp->mla_nope;
    const size_t st = c->qkv_stride;
    const mla_row lay = mla_layout(hp, L);
    cf_weight ws[3], ff[3];
    cf_layer_groups(L, ws, ff);
    const cf_weight w[2] = {ws[0], L->wk};
    const int xi[2] = {cf_xq_index(ws, 0), cf_xq_index(ws, 1)};
    float *const y[2] = {c->qkv + (L->wq_a ? lay.q_a : lay.raw), c->qkv + lay.kv_a};
    const size_t ys[2] = {st, st};
    stacked_phase(T, w, xi, y, ys, 2);
    sync_all(T);
    int r0, r1;
    split(n, T->ith, T->nth, &r0, &r1);
    for (int t = r0; t < r1; t++)
        latent_row(T, L, l, t, &lay);
    if (L->wq_a) {
        cf_weight wq[3] = {L->wq, NULL, NULL};
        my_rows(T, 0, n, &r0, &r1);
        for (int t = r0; t < r1; t++) {
            P->vec->rmsnorm(T->b->row, c->qkv + (size_t)t * st + lay.q_a, L->q_a_norm->data, hp->q_lora,
                            hp->norm_eps);
            round_row(T, wq, T->b->row, t);
        }
        sync_all(T);
        matmul_phase(T, L->wq, act(T, 0, 0), n, c->qkv + lay.raw, st);
    }
    sync_all(T);

    const cf_type dt = cf_vec_dot_type(L->wk_b->type);
    const size_t xs = (cf_row_bytes(dt, nope) + 63) & ~(size_t)63;
    const size_t fit = c->tile_cap * sizeof(float) / xs;
    const int tb = (size_t)n < fit ? n : (int)fit, blocks = (n + tb - 1) / tb, phase = T->phase++;
    uint8_t *x = (uint8_t *)T->b->tile;
    for (int u; (u = grab(T, phase)) < blocks * H;) {
        const int h = u % H, t0 = u / H * tb, t1 = t0 + tb < n ? t0 + tb : n;
        for (int t = t0; t < t1; t++) {
            float *row = c->qkv + (size_t)t * st;
            const float *q = row + lay.raw + (size_t)h * lay.q_head;
            float *qh = row + (size_t)h * hd;
            memcpy(qh + R, q + nope, (size_t)L->n_rot * sizeof *q);
            rope_at(T, L, qh + R, P->pos0 + t);
            cf_quantize_row(dt, q, x + (size_t)(t - t0) * xs, nope);
        }
        mm(L->wk_b, (int64_t)h * R, R, x, xs, t1 - t0, c->qkv + (size_t)t0 * st + (size_t)h * hd, st, 0);
    }
}

/* Latent attention's head outputs (row: every head's, head_dim apart),
 * each taken out of the latent by W_v_b[h] into mla_v values, in place:
 * head h's lands before head h + 1's input starts. */
static void latent_values(const thr *T, const cf_layer *L, float *row)
{
    const cf_hparams *hp = T->P->hp;
    const int V = hp->mla_v, hd = L->head_dim;
    const cf_type dt = cf_vec_dot_type(L->wv_b->type);
    uint8_t *x = (uint8_t *)T->b->tile;
    for (int h = 0; h < hp->n_head; h++) {
        cf_quantize_row(dt, row + (size_t)h * hd, x, hp->kv_lora);
        mm(L->wv_b, (int64_t)h * V, V, x, cf_row_bytes(dt, hp->kv_lora), 1, row + (size_t)h * V, (size_t)V, 0);
    }
}

/* Cache positions [first, last] a query at pos attends to, in chunks: a
 * sliding layer masks keys n_swa or more positions back, as llama.cpp. */
static void attn_span(const cf_hparams *hp, const cf_layer *L, int pos, int *first, int *c0, int *c1)
{
    *first = L->swa && pos - hp->n_swa + 1 > 0 ? pos - hp->n_swa + 1 : 0;
    *c0 = *first / CF_ATTN_CHUNK;
    *c1 = pos / CF_ATTN_CHUNK;
}

/* The keys of chunk c of KV head g in layer l's cache. */
static const void *chunk_keys(const thr *T, int l, int g, int c)
{
    const int src = T->P->m->layers[l].kv_src;
    return cf_kv_kblock(&T->P->c->kv, src, g, c * (CF_ATTN_CHUNK / CF_KV_BLOCK));
}

/* Positions [lo, hi) of chunk c that a query at pos attends to. */
static void chunk_span(const cf_hparams *hp, const cf_layer *L, int pos, int c, int *lo, int *hi)
{
    int first, c0, c1;
    attn_span(hp, L, pos, &first, &c0, &c1);
    *lo = c * CF_ATTN_CHUNK > first ? c * CF_ATTN_CHUNK : first;
    *hi = (c + 1) * CF_ATTN_CHUNK < pos + 1 ? (c + 1) * CF_ATTN_CHUNK : pos + 1;
}

/* Query head h of token t. */
static const float *query(const thr *T, const cf_layer *L, int t, int h)
{
    const cf_ctx *c = T->P->c;
    return c->qkv + (size_t)t * c->qkv_stride + (size_t)h * (size_t)q_width(T->P->hp, L);
}

/* The partials of n_q query rows (of KV head g) over cache positions
 * [lo, hi) of layer l; next: the keys of the unit this thread does next
 * (chunk_keys, NULL if none), for the kernel to fetch ahead. */
static void attn_rows(const thr *T, int l, int g, int lo, int hi, int n_q, const float *const *q,
                      cf_attn_part *const *part, const void *next)
{
    const pass *P = T->P;
    const cf_kv *kv = &P->c->kv;
    const int src = P->m->layers[l].kv_src;
    /* a quantized chunk is widened to F32 once for all the rows */
    const void *keys = cf_kv_kblock(kv, src, g, lo / CF_KV_BLOCK), *values = cf_kv_v(kv, src, g, lo);
    if (T->b->kw) {
        cf_kv_widen_keys(kv, src, g, lo, hi, T->b->kw);
        cf_kv_widen_values(kv, src, g, lo, hi, T->b->vw);
        keys = T->b->kw;
        values = T->b->vw;
    }
    P->vec->attn_chunk(n_q, P->m->layers[l].head_dim, q, keys, lo % CF_KV_BLOCK, values,
                       !T->b->kw && kv->type_k == CF_KV_F16, hi - lo, P->hp->kq_scale, T->b->scores, part,
                       next);
}

/* A head's attention output out of the values' Hadamard basis. */
static void unrotate(const thr *T, int hd, float *out)
{
    const int rot = cf_kv_rot(&T->P->c->kv, hd, false);
    if (rot)
        cf_kv_rotate(out, hd, rot);
}

/* The attention output of token t (row: every head's) times each head's
 * sigmoid gate, when the model has them. */
static void gate_heads(const thr *T, const cf_layer *L, int t, float *row)
{
    const cf_hparams *hp = T->P->hp;
    if (!hp->q_gate)
        return;
    const int hd = L->head_dim;
    const float *q = T->P->c->qkv + (size_t)t * T->P->c->qkv_stride;
    for (int h = 0; h < hp->n_head; h++)
        for (int d = 0; d < hd; d++)
            row[h * hd + d] *= 1.0f / (1.0f + expf(-q[(size_t)h * 2 * hd + hd + d]));
}

/* Token t's attention output (row: every head's) made the output
 * projection's input: gated per head, or taken out of the latent per
 * head, as the layer has it, then rounded for wo. */
static void head_outputs(const thr *T, const cf_layer *L, int t, float *row)
{
    cf_weight wo[3] = {L->wo, NULL, NULL};
    if (L->wv_b)
        latent_values(T, L, row);
    else
        gate_heads(T, L, t, row);
    round_row(T, wo, row, t);
}

/* Query head h's sink score in layer l, -INFINITY without sinks. */
static float sink(const thr *T, int l, int h)
{
    cf_weight s = T->P->m->layers[l].attn_sinks;
    return s ? ((const float *)s->data)[h] : -INFINITY;
}

/* One token: units are (KV head, chunk) so that long contexts split over
 * threads; then every thread merges all heads into its own row.  A unit's
 * partials are made in the thread's own scratch and copied out whole when
 * done: written in place, the kernel's stores of m and l waited mid-unit
 * on lines the other core had read in the last layer's merge (0.08 ms a
 * token at depth 4096 on Zen 4 when its cores were far apart). */
static void attention_one(thr *T, int l)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const cf_layer *L = &P->m->layers[l];
    const int hd = L->head_dim, G = hp->n_head / L->n_head_kv, phase = T->phase++;
    const size_t pb = c->part_bytes, head_stride = (size_t)c->max_chunks * pb;
    int first, c0, c1;
    attn_span(hp, L, P->pos0, &first, &c0, &c1);
    const int nc = c1 - c0 + 1;
    const int units = L->n_head_kv * nc;
    /* a thread claims its next unit before doing this one, so that the
     * kernel fetches the keys it will really read next */
    for (int u = grab(T, phase), v; u < units; u = v) {
        v = grab(T, phase);
        const int g = u / nc, ci = u % nc;
        const float *q[G];
        cf_attn_part *part[G];
        for (int j = 0; j < G; j++) {
            q[j] = query(T, L, 0, g * G + j);
            part[j] = (cf_attn_part *)((char *)T->b->part + (size_t)j * pb);
        }
        int lo, hi;
        chunk_span(hp, L, P->pos0, c0 + ci, &lo, &hi);
        attn_rows(T, l, g, lo, hi, G, q, part, v < units ? chunk_keys(T, l, v / nc, c0 + v % nc) : NULL);
        for (int j = 0; j < G; j++)
            memcpy((char *)c->part + (size_t)(g * G + j) * head_stride + (size_t)ci * pb, part[j], pb);
    }
    const cf_fetch wo = share_start(T, L->wo, 0, L->wo->ne[1]);
    sync_fetching(T, &wo, 1);
    for (int h = 0; h < hp->n_head; h++) {
        P->vec->attn_merge(hd, (char *)c->part + (size_t)h * head_stride, pb, nc, sink(T, l, h),
                           T->b->row + (size_t)h * hd);
        unrotate(T, hd, T->b->row + (size_t)h * hd);
    }
}

/* A batch: units are runs of tokens (latest first: they have the most to
 * do), each run done whole by one thread with the same chunks and merge
 * as above.  A run has as many tokens as fill the kernel's rows with
 * their heads of one KV head, so that a chunk's keys and values are read
 * (and widened from F16) once for all the rows whose spans of it agree:
 * every chunk but the last, as a rule. */
static void attention_batch(thr *T, int l)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const cf_layer *L = &P->m->layers[l];
    const int hd = L->head_dim, G = hp->n_head / L->n_head_kv, phase = T->phase++;
    const int run = G < P->vec->attn_rows ? P->vec->attn_rows / G : 1;
    const size_t pb = c->part_bytes, head_stride = (size_t)c->max_chunks * pb;
    const int units = (P->n + run - 1) / run;
    for (int u; (u = grab(T, phase)) < units;) {
        const int t1 = P->n - u * run, t0 = t1 > run ? t1 - run : 0, nt = t1 - t0;
        int c0[nt], c1[nt], cmin = INT_MAX, cmax = 0;
        for (int k = 0; k < nt; k++) {
            int first;
            attn_span(hp, L, P->pos0 + t0 + k, &first, &c0[k], &c1[k]);
            cmin = c0[k] < cmin ? c0[k] : cmin;
            cmax = c1[k] > cmax ? c1[k] : cmax;
        }
        /* token k's partial of head j of the KV head, for chunk ch */
#define PART(k, j, ch)                                                                             \
    ((char *)T->b->part + (size_t)((k) * G + (j)) * head_stride + (size_t)((ch) - c0[k]) * pb)
        for (int g = 0; g < L->n_head_kv; g++) {
            for (int ch = cmin; ch <= cmax; ch++) {
                const void *next = ch < cmax ? chunk_keys(T, l, g, ch + 1)
                                 : g + 1 < L->n_head_kv ? chunk_keys(T, l, g + 1, cmin)
                                                        : NULL;
                unsigned todo = 0; /* the tokens that attend to chunk ch and wait for it */
                for (int k = 0; k < nt; k++)
                    todo |= (unsigned)(c0[k] <= ch && ch <= c1[k]) << k;
                while (todo) {
                    const float *q[nt * G];
                    cf_attn_part *part[nt * G];
                    int lo, hi, n_q = 0;
                    chunk_span(hp, L, P->pos0 + t0 + __builtin_ctz(todo), ch, &lo, &hi);
                    for (int k = 0; k < nt; k++) {
                        int lk, hk;
                        if (!(todo >> k & 1))
                            continue;
                        chunk_span(hp, L, P->pos0 + t0 + k, ch, &lk, &hk);
                        if (lk != lo || hk != hi)
                            continue;
                        todo &= ~(1u << k);
                        for (int j = 0; j < G; j++, n_q++) {
                            q[n_q] = query(T, L, t0 + k, g * G + j);
                            part[n_q] = (cf_attn_part *)PART(k, j, ch);
                        }
                    }
                    attn_rows(T, l, g, lo, hi, n_q, q, part, next);
                }
            }
            for (int k = 0; k < nt; k++)
                for (int j = 0; j < G; j++) {
                    float *out = T->b->row + (size_t)k * c->row_cap + (size_t)(g * G + j) * hd;
                    P->vec->attn_merge(hd, PART(k, j, c0[k]), pb, c1[k] - c0[k] + 1, sink(T, l, g * G + j),
                                       out);
                    unrotate(T, hd, out);
                }
        }
#undef PART
        for (int k = 0; k < nt; k++)
            head_outputs(T, L, t0 + k, T->b->row + (size_t)k * c->row_cap);
    }
    sync_all(T);
}

/* ---- feed-forward block ---------------------------------------------------- */

/* relu(x)^2, in place */
static void relu_squared(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = x[i] > 0.0f ? x[i] * x[i] : 0.0f;
}

/* gate and up rows in chunks; each thread turns its chunk into
 * act(gate) * up (gpt2: gelu(up + b); nemotron_h: relu(up)^2) in c->ff. */
static void ffn_phase(thr *T, const cf_layer *L)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const int64_t F = L->n_ff;
    const int n = P->n, phase = T->phase++;
    const bool gpt2 = P->hp->ffn == CF_FFN_GELU, relu2 = P->hp->ffn == CF_FFN_RELU2;
    const bool fused = !gpt2 && !relu2 && !L->w_gate;
    cf_weight qkv[3], ws[3];
    cf_layer_groups(L, qkv, ws);
    const size_t rb = cf_row_bytes(ws[0]->type, ws[0]->ne[0]) * (gpt2 || relu2 ? 1 : 2);
    const int64_t piece = piece_rows(rb, (int64_t)(c->tile_cap / (size_t)n) & ~(int64_t)15);
    float *up = T->b->tile;
    int64_t a, nr;
    while ((nr = grab_rows(T, phase, F, piece, &a)) > 0) {
        float *g = c->ff + a;
        if (gpt2) {
            mm(L->w_up, a, nr, act(T, 0, 0), c->xq_stride, n, g, (size_t)F, phase_serial(T, phase));
            for (int t = 0; t < n; t++)
                for (int64_t i = 0; i < nr; i++) {
                    float *y = &g[(size_t)t * F + i];
                    *y = cf_gelu(*y + ((const float *)L->b_up->data)[a + i]);
                }
            continue;
        }
        mm(ws[0], a, nr, act(T, 0, 0), c->xq_stride, n, g, (size_t)F, phase_serial(T, phase));
        if (relu2) {
            for (int t = 0; t < n; t++)
                relu_squared(g + (size_t)t * F, nr);
            continue;
        }
        mm(fused ? L->w_up : ws[1], fused ? F + a : a, nr, act(T, fused ? 0 : cf_xq_index(ws, 1), 0),
           c->xq_stride, n, up, (size_t)nr, phase_serial(T, phase));
        for (int t = 0; t < n; t++) {
            float *gt = g + (size_t)t * F, *ut = up + (size_t)t * nr;
            if (P->hp->ffn == CF_FFN_GEGLU)
                for (int64_t i = 0; i < nr; i++)
                    gt[i] = cf_gelu(gt[i]) * ut[i];
            else
                P->vec->silu_mul(gt, ut, (int)nr);
        }
    }
}

/* ---- short convolution ----------------------------------------------------- */

/* A causal convolution over time, in place: seq[t][ch] becomes
 * sum_k w[ch][k] seq[t - K + 1 + k][ch] for channels [ch0, ch1), the
 * layer's window holding the K - 1 inputs before this batch (oldest first)
 * and left holding the batch's last K - 1.  Time runs in order within a
 * channel, so threads take channels. */
static void causal_conv(float *seq, size_t stride, int n, int ch0, int ch1, int channels,
                        const float *w, int K, float *window)
{
    for (int ch = ch0; ch < ch1; ch++) {
        float win[16]; /* the last K inputs of this channel */
        for (int k = 0; k < K - 1; k++)
            win[k] = window[(size_t)k * channels + ch];
        for (int t = 0; t < n; t++) {
            float *u = seq + (size_t)t * stride + ch;
            win[K - 1] = *u;
            float sum = 0.0f;
            for (int k = 0; k < K; k++)
                sum += win[k] * w[(size_t)ch * K + k];
            *u = sum;
            for (int k = 0; k < K - 1; k++)
                win[k] = win[k + 1];
        }
        for (int k = 0; k < K - 1; k++)
            window[(size_t)k * channels + ch] = win[k];
    }
}

/* lfm2's mixer: [B | C | X] = in_proj h; u = B * X, convolved over the
 * last conv_kernel tokens; out_proj (C * conv(u)). */
static void conv_phase(thr *T, const cf_layer *L, int l)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const int E = P->hp->n_embd, n = P->n;
    matmul_phase(T, L->conv_in, act(T, 0, 0), n, c->qkv, c->qkv_stride);
    sync_all(T);
    int i0, i1;
    split(E, T->ith, T->nth, &i0, &i1);
    for (int t = 0; t < n; t++) { /* u = B * X, in X's place */
        float *row = c->qkv + (size_t)t * c->qkv_stride;
        for (int ch = i0; ch < i1; ch++)
            row[2 * E + ch] *= row[ch];
    }
    causal_conv(c->qkv + 2 * E, c->qkv_stride, n, i0, i1, E, L->conv_w->data, P->hp->conv_kernel,
                c->rs + c->rs_off[l]);
    for (int t = 0; t < n; t++) {
        const float *row = c->qkv + (size_t)t * c->qkv_stride;
        for (int ch = i0; ch < i1; ch++)
            c->ff[(size_t)t * E + ch] = row[E + ch] * row[2 * E + ch];
    }
    sync_all(T);
    round_phase(T, L->conv_out, c->ff, (size_t)E);
    matmul_phase(T, L->conv_out, act(T, 0, 0), n, c->tmp, (size_t)E);
    sync_all(T);
}

/* ---- gated delta net -------------------------------------------------------- */

/* x / max(|x|, eps), as ggml_l2_norm (the sum in double) */
static void l2_normalize(float *y, const float *x, int n, float eps)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += (double)(x[i] * x[i]);
    const float scale = 1.0f / fmaxf(sqrtf((float)sum), eps);
    for (int i = 0; i < n; i++)
        y[i] = x[i] * scale;
}

static float silu(float x)
{
    return x / (1.0f + expf(-x));
}

/* ln(1 + e^x), x itself past 20, as ggml */
static float softplus(float x)
{
    return x > 20.0f ? x : log1pf(expf(x));
}

/* The raw beta and alpha of value head h for token t: their own rows, or
 * fused as ssm_ba's, r = Hv / Hk betas then r alphas per key head. */
static void beta_alpha(const cf_ctx *c, const cf_hparams *hp, int t, int h, float *beta, float *alpha)
{
    const int Hv = hp->ssm_v_heads;
    if (!hp->ssm_v_grouped) {
        *beta = c->dn_beta[(size_t)t * Hv + h];
        *alpha = c->dn_alpha[(size_t)t * Hv + h];
        return;
    }
    const int r = Hv / hp->ssm_k_heads;
    const float *ba = c->dn_beta + (size_t)t * 2 * Hv + (size_t)(h / r) * 2 * r;
    *beta = ba[h % r];
    *alpha = ba[r + h % r];
}

/* One value head of the recurrence over the batch's tokens, in order:
 * S <- exp(g) S; d = beta (v - S^T k); S <- S + k d^T; o = S^T q / sqrt(D),
 * with q and k L2-normalised; then o is RMS-normalised by ssm_norm and
 * gated by silu(z).  S[i][j]: key dim i, value dim j.  The key head is
 * h % Hk when the value heads are tiled over the key heads (qwen35's
 * converter reorders them so), h / (Hv / Hk) when grouped. */
static void delta_head(const thr *T, const cf_layer *L, float *S, int h)
{
    const pass *P = T->P;
    const cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int D = hp->ssm_d, Hk = hp->ssm_k_heads, Hv = hp->ssm_v_heads;
    const int kh = hp->ssm_v_grouped ? h / (Hv / Hk) : h % Hk;
    const float eps = hp->norm_eps, q_scale = 1.0f / sqrtf((float)D);
    const float dt_bias = ((const float *)L->dn_dt_bias->data)[h], a = ((const float *)L->dn_a->data)[h];
    float q[256], k[256], d[256];
    for (int t = 0; t < P->n; t++) {
        const float *row = c->qkv + (size_t)t * c->qkv_stride;
        const float *v = row + (size_t)(2 * Hk + h) * D;
        l2_normalize(q, row + (size_t)kh * D, D, eps);
        l2_normalize(k, row + (size_t)(Hk + kh) * D, D, eps);
        for (int i = 0; i < D; i++)
            q[i] *= q_scale;
        float b_raw, a_raw;
        beta_alpha(c, hp, t, h, &b_raw, &a_raw);
        const float beta = 1.0f / (1.0f + expf(-b_raw));
        const float x = a_raw + dt_bias;
        const float decay = expf(softplus(x) * a);
        for (int i = 0; i < D * D; i++)
            S[i] *= decay;
        /* S^T k and S^T q run over rows of S (contiguous, so they
         * vectorise), each sum still in increasing i */
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
        float *o = c->ff + (size_t)t * Hv * D + (size_t)h * D;
        for (int j = 0; j < D; j++)
            o[j] = 0.0f;
        for (int i = 0; i < D; i++)
            for (int j = 0; j < D; j++)
                o[j] += S[i * D + j] * q[i];
        P->vec->rmsnorm(o, o, L->dn_norm->data, D, eps);
        const float *z = c->dn_z + (size_t)t * Hv * D + (size_t)h * D;
        for (int j = 0; j < D; j++)
            o[j] *= silu(z[j]);
    }
}

/* qwen35's recurrent mixer: the projections, the causal convolution (with
 * SiLU) of q|k|v over the last conv_kernel tokens, the recurrence per value
 * head, then ssm_out.  The layer's state: the convolution's window, then
 * each value head's S. */
static void delta_phase(thr *T, const cf_layer *L, int l)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int n = P->n, K = hp->conv_kernel, D = hp->ssm_d, Hv = hp->ssm_v_heads;
    const int conv_dim = (int)L->dn_qkv->ne[1];
    cf_weight ws[3], ff[3];
    cf_layer_groups(L, ws, ff);
    const cf_weight w[4] = {L->dn_qkv, L->dn_z, L->dn_beta, L->dn_alpha};
    const int xi[4] = {cf_xq_index(ws, 0), cf_xq_index(ws, 1), cf_xq_index(ws, 2), cf_xq_index(ws, 2)};
    float *const y[4] = {c->qkv, c->dn_z, c->dn_beta, c->dn_alpha};
    const size_t ys[4] = {c->qkv_stride, (size_t)Hv * D, (size_t)L->dn_beta->ne[1], (size_t)Hv};
    stacked_phase(T, w, xi, y, ys, L->dn_alpha ? 4 : 3);
    sync_all(T);

    /* the convolution of q|k|v with SiLU, in place */
    float *window = c->rs + c->rs_off[l]; /* K - 1 rows of conv_dim, then each head's S */
    int i0, i1;
    split(conv_dim, T->ith, T->nth, &i0, &i1);
    causal_conv(c->qkv, c->qkv_stride, n, i0, i1, conv_dim, L->dn_conv->data, K, window);
    for (int t = 0; t < n; t++)
        for (int ch = i0; ch < i1; ch++) {
            float *u = c->qkv + (size_t)t * c->qkv_stride + ch;
            *u = silu(*u);
        }
    sync_all(T);

    float *S = window + (size_t)(K - 1) * conv_dim;
    split(Hv, T->ith, T->nth, &i0, &i1);
    for (int h = i0; h < i1; h++)
        delta_head(T, L, S + (size_t)h * D * D, h);
    sync_all(T);
    round_phase(T, L->dn_out, c->ff, (size_t)Hv * D);
    matmul_phase(T, L->dn_out, act(T, 0, 0), n, c->tmp, (size_t)hp->n_embd);
    sync_all(T);
}

/* ---- Mamba2 ----------------------------------------------------------------- */

/* One head of the scan over the batch's tokens, in order (scalar-A Mamba2,
 * as ggml_ssm_scan): with dt = softplus(dt + dt_b) and B, C of the head's
 * group (consecutive heads share one), S <- exp(dt a) S + (dt x) B^T, then
 * y = (S C + skip x) silu(z).  S[p][i]: head channel p, state i.  S C is
 * summed in M2_LANES partial sums (state i in lane i % M2_LANES, added in
 * a fixed order), which the compiler makes one vector: the same bits for
 * every batch and thread count, and 6-7x faster than one running sum on
 * a head of 64 x 128 (Zen 4). */
#define M2_LANES 8
static void mamba2_head(const thr *T, const cf_layer *L, float *S, int h)
{
    const pass *P = T->P;
    const cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int N = hp->ssm_d, H = hp->ssm_v_heads, G = hp->ssm_k_heads, D = hp->ssm_inner, hd = D / H;
    const int g = h / (H / G);
    const float dt_b = ((const float *)L->m2_dt_b->data)[h], a = ((const float *)L->m2_a->data)[h];
    const float skip = ((const float *)L->m2_skip->data)[h];
    for (int t = 0; t < P->n; t++) {
        /* the row: z, x, B, C, dt */
        const float *row = c->qkv + (size_t)t * c->qkv_stride;
        const float *z = row + (size_t)h * hd, *x = row + D + (size_t)h * hd;
        const float *B = row + 2 * D + (size_t)g * N, *C = B + (size_t)G * N;
        const float dt = softplus(row[2 * D + 2 * G * N + h] + dt_b), decay = expf(dt * a);
        float *y = c->ff + (size_t)t * D + (size_t)h * hd;
        for (int p = 0; p < hd; p++) {
            float *st = S + (size_t)p * N, part[M2_LANES] = {0};
            const float xdt = x[p] * dt;
            for (int i = 0; i < N; i += M2_LANES)
                for (int j = 0; j < M2_LANES; j++) {
                    st[i + j] = st[i + j] * decay + B[i + j] * xdt;
                    part[j] += st[i + j] * C[i + j];
                }
            float sum = 0.0f;
            for (int j = 0; j < M2_LANES; j++)
                sum += part[j];
            y[p] = (sum + skip * x[p]) * silu(z[p]);
        }
    }
}

/* The Mamba2 mixer: the projection, the causal convolution of x|B|C (plus
 * its bias, with SiLU) over the last conv_kernel tokens, the scan per
 * head, the norm of each group of channels, then m2_out.  The layer's
 * state: the convolution's window (raw inputs), then each head's S. */
static void mamba2_phase(thr *T, const cf_layer *L, int l)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int n = P->n, K = hp->conv_kernel, D = hp->ssm_inner, H = hp->ssm_v_heads, N = hp->ssm_d;
    const int conv_dim = D + 2 * hp->ssm_k_heads * N, gs = D / hp->ssm_k_heads;
    matmul_phase(T, L->m2_in, act(T, 0, 0), n, c->qkv, c->qkv_stride);
    sync_all(T);

    float *window = c->rs + c->rs_off[l];
    int i0, i1;
    split(conv_dim, T->ith, T->nth, &i0, &i1);
    causal_conv(c->qkv + D, c->qkv_stride, n, i0, i1, conv_dim, L->m2_conv->data, K, window);
    const float *bias = L->m2_conv_b->data;
    for (int t = 0; t < n; t++)
        for (int ch = i0; ch < i1; ch++) {
            float *u = c->qkv + (size_t)t * c->qkv_stride + D + ch;
            *u = silu(*u + bias[ch]);
        }
    sync_all(T);

    float *S = window + (size_t)(K - 1) * conv_dim;
    split(H, T->ith, T->nth, &i0, &i1);
    for (int h = i0; h < i1; h++)
        mamba2_head(T, L, S + (size_t)h * (D / H) * N, h);
    sync_all(T);

    cf_weight out[3] = {L->m2_out, NULL, NULL};
    int r0, r1;
    my_rows(T, 0, n, &r0, &r1);
    for (int r = r0; r < r1; r++) {
        const float *y = c->ff + (size_t)r * D, *w = L->m2_norm->data;
        for (int g = 0; g < hp->ssm_k_heads; g++)
            P->vec->rmsnorm(T->b->row + g * gs, y + g * gs, w + g * gs, gs, hp->norm_eps);
        round_row(T, out, T->b->row, r);
    }
    rows_done(T);
    matmul_phase(T, L->m2_out, act(T, 0, 0), n, c->tmp, (size_t)hp->n_embd);
    sync_all(T);
}

/* ---- mixture of experts ---------------------------------------------------- */

/* Route every token (the router's logits are in c->moe_logits) and group
 * the (token, expert) pairs by expert, tokens in increasing order within
 * an expert; a batch's inputs are gathered into pair rows so that each
 * expert runs one matmul over its tokens.  One thread plans: it is a few
 * hundred comparisons per token. */
static void moe_plan(thr *T, const cf_layer *L, cf_weight const ff[3])
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int n = P->n, X = hp->n_expert, k = hp->n_expert_used;
    if (T->ith == 0) {
        memset(c->moe_off, 0, (size_t)(X + 1) * sizeof *c->moe_off);
        for (int t = 0; t < n; t++) {
            cf_moe_route(hp, c->moe_logits + (size_t)t * X, L->moe_choice_b ? L->moe_choice_b->data : NULL,
                         c->moe_sel + (size_t)t * k, c->moe_w + (size_t)t * k);
            for (int j = 0; j < k; j++)
                c->moe_off[c->moe_sel[t * k + j] + 1]++;
        }
        c->moe_n_used = c->moe_max_pairs = 0;
        for (int e = 0; e < X; e++) {
            const int cnt = c->moe_off[e + 1];
            if (cnt)
                c->moe_used[c->moe_n_used++] = e;
            c->moe_max_pairs = cnt > c->moe_max_pairs ? cnt : c->moe_max_pairs;
            c->moe_off[e + 1] += c->moe_off[e];
        }
        int32_t next[CF_MAX_EXPERTS];
        memcpy(next, c->moe_off, (size_t)X * sizeof *next);
        const uint8_t *xin = c->xq[cf_moe_xq(L, ff)];
        for (int t = 0; t < n; t++)
            for (int j = 0; j < k; j++) {
                const int p = next[c->moe_sel[t * k + j]]++;
                c->moe_slot[t * k + j] = p;
                if (!P->one)
                    memcpy(c->moe_x + (size_t)p * c->xq_stride, xin + (size_t)t * c->xq_stride,
                           c->xq_stride);
            }
    }
    sync_all(T);
}

/* The experts' input rows: a batch's gathered pairs, or a single token's
 * own rounded row. */
static const uint8_t *moe_input(const thr *T, const cf_layer *L, cf_weight const ff[3], int e)
{
    const cf_ctx *c = T->P->c;
    return T->P->one ? act(T, cf_moe_xq(L, ff), 0) : c->moe_x + (size_t)c->moe_off[e] * c->xq_stride;
}

/* The used experts' rows (`width` each) are shared out as one stack; the
 * part of stacked rows [v, end) inside one expert: *e, its first row *r,
 * and the count. */
static int64_t expert_span(const cf_ctx *c, int64_t width, int64_t v, int64_t end, int *e, int64_t *r)
{
    *e = c->moe_used[v / width];
    *r = v % width;
    return width - *r < end - v ? width - *r : end - v;
}

/* act(gate) * up of every pair (experts without a gate: relu(up)^2), in
 * row pieces of the used experts. */
static void moe_up_phase(thr *T, const cf_layer *L, cf_weight const ff[3])
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const int64_t F = P->hp->n_ff_exp;
    const int phase = T->phase++;
    const cf_weight first = L->moe_gate ? L->moe_gate : L->moe_up;
    const size_t rb = (L->moe_gate ? 2 : 1) * cf_row_bytes(first->type, first->ne[0]);
    const int64_t cap = (int64_t)(c->tile_cap / (size_t)c->moe_max_pairs) & ~(int64_t)15;
    const int64_t piece = piece_rows(rb, cap); /* tile_cap >= 64 rows of a batch */
    int64_t v0, nv;
    while ((nv = grab_rows(T, phase, (int64_t)c->moe_n_used * F, piece, &v0)) > 0)
        for (int64_t v = v0, r, cnt; v < v0 + nv; v += cnt) {
            int e;
            cnt = expert_span(c, F, v, v0 + nv, &e, &r);
            const int p0 = c->moe_off[e], np = c->moe_off[e + 1] - p0;
            const uint8_t *x = moe_input(T, L, ff, e);
            float *g = c->moe_ff + (size_t)p0 * F + r, *up = T->b->tile;
            if (!L->moe_gate) {
                mm(L->moe_up, e * F + r, cnt, x, c->xq_stride, np, g, (size_t)F, 0);
                for (int i = 0; i < np; i++)
                    relu_squared(g + (size_t)i * F, cnt);
                continue;
            }
            mm(L->moe_gate, e * F + r, cnt, x, c->xq_stride, np, g, (size_t)F, 0);
            mm(L->moe_up, e * F + r, cnt, x, c->xq_stride, np, up, (size_t)cnt, 0);
            for (int i = 0; i < np; i++) {
                float *gi = g + (size_t)i * F, *ui = up + (size_t)i * cnt;
                if (L->moe_gate_b) {
                    P->vec->add(gi, gi, (const float *)L->moe_gate_b->data + e * F + r, NULL, (int)cnt);
                    P->vec->add(ui, ui, (const float *)L->moe_up_b->data + e * F + r, NULL, (int)cnt);
                }
                if (P->hp->ffn == CF_FFN_SWIGLU_OAI)
                    cf_swiglu_oai(gi, ui, (int)cnt);
                else if (P->hp->ffn == CF_FFN_GEGLU)
                    for (int64_t j = 0; j < cnt; j++)
                        gi[j] = cf_gelu(gi[j]) * ui[j];
                else
                    P->vec->silu_mul(gi, ui, (int)cnt);
            }
        }
}

/* The pairs' down projections, then each token's weighted sum of its
 * experts' outputs (best first, as llama.cpp adds them) into c->tmp. */
static void moe_down_phase(thr *T, const cf_layer *L)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int64_t F = hp->n_ff_exp, E = hp->n_embd;
    const int k = hp->n_expert_used, pairs = P->n * k;
    int p0, p1;
    split(pairs, T->ith, T->nth, &p0, &p1);
    for (int p = p0; p < p1; p++)
        cf_quantize_row(cf_vec_dot_type(L->moe_down->type), c->moe_ff + (size_t)p * F,
                        c->moe_xd + (size_t)p * c->xq_stride, F);
    sync_all(T);

    const int phase = T->phase++;
    const int64_t piece = piece_rows(cf_row_bytes(L->moe_down->type, F), 0);
    int64_t v0, nv;
    while ((nv = grab_rows(T, phase, (int64_t)c->moe_n_used * E, piece, &v0)) > 0)
        for (int64_t v = v0, r, cnt; v < v0 + nv; v += cnt) {
            int e;
            cnt = expert_span(c, E, v, v0 + nv, &e, &r);
            const int q0 = c->moe_off[e], nq = c->moe_off[e + 1] - q0;
            float *o = c->moe_out + (size_t)q0 * E + r;
            mm(L->moe_down, e * E + r, cnt, c->moe_xd + (size_t)q0 * c->xq_stride, c->xq_stride, nq, o,
               (size_t)E, 0);
            for (int q = 0; L->moe_down_b && q < nq; q++)
                P->vec->add(o + (size_t)q * E, o + (size_t)q * E,
                            (const float *)L->moe_down_b->data + e * E + r, NULL, (int)cnt);
        }
    sync_all(T);

    int i0, i1;
    split((int)E, T->ith, T->nth, &i0, &i1);
    for (int t = 0; t < P->n; t++) {
        float *y = c->tmp + (size_t)t * E;
        for (int j = 0; j < k; j++) {
            const float *s = L->exp_scale ? L->exp_scale->data : NULL; /* per expert (gemma4) */
            const float w = c->moe_w[t * k + j] * (s ? s[c->moe_sel[t * k + j]] : 1.0f);
            const float *o = c->moe_out + (size_t)c->moe_slot[t * k + j] * E;
            for (int i = i0; i < i1; i++) {
                const float wo = o[i] * w;
                y[i] = j ? y[i] + wo : wo;
            }
        }
    }
    sync_all(T);
}

/* ---- the pass -------------------------------------------------------------- */

/* A layer is a token mixer then an FFN, or one of them alone (nemotron_h:
 * each layer is Mamba2, attention or an MLP, under its one norm). */
static bool has_mixer(const cf_layer *L)
{
    return L->wq || L->wqkv || L->conv_in || L->dn_qkv || L->m2_in;
}

static bool has_ffn(const cf_layer *L)
{
    return L->w_down || L->moe_router;
}

/* The attention block, from the rounded normalised input to the output
 * projection's result in c->tmp. */
static void attention_block(thr *T, const cf_layer *L, int l)
{
    const pass *P = T->P;
    if (L->wk_b)
        mla_qkv_phase(T, L, l);
    else
        qkv_phase(T, L, l);
    sync_all(T);
    if (P->one) {
        attention_one(T, l);
        head_outputs(T, L, 0, T->b->row);
    } else {
        attention_batch(T, l);
    }
    matmul_phase(T, L->wo, act(T, 0, 0), P->n, P->c->tmp, (size_t)P->hp->n_embd);
    if ((L->moe_router && !L->dense_norm) || !has_ffn(L)) {
        sync_all(T);
        return;
    }
    /* the FFN's gate and up rows next */
    const bool gpt2 = P->hp->ffn == CF_FFN_GELU, fused = !gpt2 && !L->w_gate;
    cf_weight qkv[3], ff[3];
    cf_layer_groups(L, qkv, ff);
    const int64_t F = L->n_ff;
    const cf_fetch next[2] = {share_start(T, ff[0], 0, F),
                              gpt2 ? (cf_fetch){0} : share_start(T, fused ? L->w_up : ff[1], fused ? F : 0, F)};
    sync_fetching(T, next, gpt2 ? 1 : 2);
}

/* The shared expert, after the routed ones: an FFN on the same input
 * (SwiGLU, or relu(up)^2 without a gate), scaled by sigmoid(sh_inp . h)
 * per token when it has sh_inp (qwen35moe), added to c->tmp.  It reuses
 * the routed experts' buffers: gate rows then up rows in moe_ff, its
 * rounded rows in moe_xd, its outputs in moe_out. */
static void shared_expert(thr *T, const cf_layer *L, cf_weight const ff[3])
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const int n = P->n, E = P->hp->n_embd, F = P->hp->n_ff_shexp;
    const bool gated = L->sh_gate != NULL;
    const cf_weight w[2] = {gated ? L->sh_gate : L->sh_up, L->sh_up};
    const int xi[2] = {cf_xq_index(ff, 1), cf_xq_index(ff, 1)};
    float *const y[2] = {c->moe_ff, c->moe_ff + (size_t)n * F};
    const size_t ys[2] = {(size_t)F, (size_t)F};
    stacked_phase(T, w, xi, y, ys, gated ? 2 : 1);
    sync_all(T);
    int r0, r1;
    split(n, T->ith, T->nth, &r0, &r1);
    for (int t = r0; t < r1; t++) {
        float *g = c->moe_ff + (size_t)t * F;
        if (gated)
            P->vec->silu_mul(g, g + (size_t)n * F, F);
        else
            relu_squared(g, F);
        cf_quantize_row(cf_vec_dot_type(L->sh_down->type), g, c->moe_xd + (size_t)t * c->xq_stride, F);
    }
    sync_all(T);
    matmul_phase(T, L->sh_down, c->moe_xd, n, c->moe_out, (size_t)E);
    sync_all(T);
    int i0, i1;
    split(E, T->ith, T->nth, &i0, &i1);
    for (int t = 0; t < n; t++) {
        /* the router's input is F32: its rounded row is h itself */
        const float *h = (const float *)act(T, 0, t);
        const float gate = L->sh_inp ? 1.0f / (1.0f + expf(-cf_vec_dot(CF_TYPE_F32, E, L->sh_inp->data, h)))
                                     : 1.0f;
        const float *o = c->moe_out + (size_t)t * E;
        float *y_t = c->tmp + (size_t)t * E;
        for (int i = i0; i < i1; i++)
            y_t[i] += o[i] * gate;
    }
    sync_all(T);
}

/* The mixture of experts, from the rounded normalised input to c->tmp. */
static void moe_block(thr *T, const cf_layer *L, cf_weight const ff[3])
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const int X = P->hp->n_expert;
    matmul_phase(T, L->moe_router, act(T, 0, 0), P->n, c->moe_logits, (size_t)X);
    sync_all(T);
    if (L->moe_router_b && T->ith == 0) /* moe_plan runs on thread 0 too */
        for (int t = 0; t < P->n; t++)
            P->vec->add(c->moe_logits + (size_t)t * X, c->moe_logits + (size_t)t * X,
                        L->moe_router_b->data, NULL, X);
    moe_plan(T, L, ff);
    moe_up_phase(T, L, ff);
    sync_all(T);
    moe_down_phase(T, L);
    if (L->sh_down)
        shared_expert(T, L, ff);
}

/* Gemma 4 MoE, after its dense FFN (in c->tmp): that output normalised
 * aside, and the residual rounded for the router, rms(x) / sqrt(n_embd) *
 * router_scale, and for the experts, rms(x, exp_pre_norm). */
static void dual_ffn_inputs(thr *T, const cf_layer *L, cf_weight const moe[3])
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int E = hp->n_embd;
    int r0, r1;
    split(P->n, T->ith, T->nth, &r0, &r1);
    for (int r = r0; r < r1; r++)
        P->vec->rmsnorm(c->dense_out + (size_t)r * E, c->tmp + (size_t)r * E, L->dense_norm->data, E,
                        hp->norm_eps);
    const float *scale = L->router_scale->data, inv_sqrt_e = 1.0f / sqrtf((float)E);
    float *row = T->b->row;
    my_rows(T, 0, P->n, &r0, &r1);
    for (int r = r0; r < r1; r++) {
        const float *x = resid(T, r);
        for (int i = 0; i < E; i++)
            row[i] = x[i];
        rms_unweighted(row, E, hp->norm_eps);
        for (int i = 0; i < E; i++)
            row[i] = row[i] * inv_sqrt_e * scale[i];
        cf_quantize_row(cf_vec_dot_type(moe[0]->type), row, act(T, cf_xq_index(moe, 0), r), E);
        P->vec->rmsnorm(row, x, L->exp_pre_norm->data, E, hp->norm_eps);
        cf_quantize_row(cf_vec_dot_type(moe[1]->type), row, act(T, cf_moe_xq(L, moe), r), E);
    }
    sync_all(T);
}

/* Gemma 4 MoE's FFN output: the dense part plus rms(experts, exp_norm). */
static void dual_ffn_sum(thr *T, const cf_layer *L)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const int E = P->hp->n_embd;
    int r0, r1;
    split(P->n, T->ith, T->nth, &r0, &r1);
    for (int r = r0; r < r1; r++) {
        float *y = c->tmp + (size_t)r * E;
        P->vec->rmsnorm(y, y, L->exp_norm->data, E, P->hp->norm_eps);
        P->vec->add(y, c->dense_out + (size_t)r * E, y, NULL, E);
    }
    sync_all(T);
}

/* The dense FFN, from the rounded normalised input to c->tmp. */
static void ffn_block(thr *T, const cf_layer *L, const cf_fetch *next)
{
    const pass *P = T->P;
    ffn_phase(T, L);
    const cf_fetch down = share_start(T, L->w_down, 0, L->w_down->ne[1]);
    sync_fetching(T, &down, 1);
    round_phase(T, L->w_down, P->c->ff, (size_t)L->n_ff);
    matmul_phase(T, L->w_down, act(T, 0, 0), P->n, P->c->tmp, (size_t)P->hp->n_embd);
    sync_fetching(T, next, 1);
}

/* What a layer leaves in c->tmp for the residual: its FFN's output (or
 * its mixer's when it has no FFN), or after per-layer embeddings their
 * output. */
static block_out layer_out(const cf_layer *L)
{
    if (!has_ffn(L))
        return (block_out){L->bo, L->post_attn_norm, NULL};
    if (L->ple_gate)
        return (block_out){NULL, L->ple_norm, L->out_scale};
    return (block_out){L->b_down, L->post_ffn_norm, L->out_scale};
}

/* gemma4's per-layer inputs of every token (c->ple, n_layer x ple each):
 * (ple_embd[token] sqrt(ple) + rms(ple_model_proj x / sqrt(n_embd))) /
 * sqrt(2), x the scaled input embedding. */
static void ple_inputs(thr *T)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const cf_model *m = P->m;
    const int n = P->n, E = P->hp->n_embd, D = P->hp->ple_dim, NL = P->hp->n_layer;
    cf_weight w[3] = {m->ple_model_proj, NULL, NULL};
    int r0, r1;
    my_rows(T, 0, n, &r0, &r1);
    for (int r = r0; r < r1; r++)
        round_row(T, w, resid(T, r), r);
    rows_done(T);
    matmul_phase(T, m->ple_model_proj, act(T, 0, 0), n, c->ple, (size_t)NL * D);
    sync_all(T);
    const size_t row = cf_row_bytes(m->ple_embd->type, (int64_t)NL * D);
    const float in_scale = 1.0f / sqrtf((float)E), emb_scale = sqrtf((float)D), mix = 1.0f / sqrtf(2.0f);
    float *a = T->b->tile; /* one token's embedding rows, n_layer x ple */
    int u0, u1;
    split(n, T->ith, T->nth, &u0, &u1);
    for (int t = u0; t < u1; t++) {
        cf_dequantize_row(m->ple_embd->type, (const uint8_t *)m->ple_embd->data + (size_t)P->tokens[t] * row,
                          a, (int64_t)NL * D);
        for (int il = 0; il < NL; il++) {
            float *b = c->ple + ((size_t)t * NL + il) * D;
            for (int i = 0; i < D; i++)
                b[i] *= in_scale;
            P->vec->rmsnorm(b, b, m->ple_model_norm->data, D, P->hp->norm_eps);
            for (int i = 0; i < D; i++)
                b[i] = (a[il * D + i] * emb_scale + b[i]) * mix;
        }
    }
    sync_all(T);
}

/* gemma4's per-layer embedding step after the FFN: the residual (the FFN
 * output added) goes through ple_gate, GELU, times the token's input of
 * this layer, and ple_proj, into c->tmp. */
static void ple_block(thr *T, const cf_layer *L, int l)
{
    const pass *P = T->P;
    cf_ctx *c = P->c;
    const int n = P->n, D = P->hp->ple_dim;
    const block_out ffn_out = {L->b_down, L->post_ffn_norm, NULL};
    cf_weight gate[3] = {L->ple_gate, NULL, NULL}, proj[3] = {L->ple_proj, NULL, NULL};
    norm_phase(T, 0, n, &ffn_out, NULL, NULL, gate);
    matmul_phase(T, L->ple_gate, act(T, 0, 0), n, c->ff, (size_t)D);
    sync_all(T);
    int r0, r1;
    my_rows(T, 0, n, &r0, &r1);
    for (int t = r0; t < r1; t++) {
        const float *g = c->ff + (size_t)t * D, *pl = c->ple + ((size_t)t * P->hp->n_layer + l) * D;
        for (int i = 0; i < D; i++)
            T->b->row[i] = cf_gelu(g[i]) * pl[i];
        round_row(T, proj, T->b->row, t);
    }
    rows_done(T);
    matmul_phase(T, L->ple_proj, act(T, 0, 0), n, c->tmp, (size_t)P->hp->n_embd);
    sync_all(T);
}

static void layer(thr *T, int l)
{
    const pass *P = T->P;
    const cf_layer *L = &P->m->layers[l];
    const int n = P->n;
    cf_weight qkv[3], ff[3];
    cf_layer_groups(L, qkv, ff);

    const block_out prev_out = l > 0 ? layer_out(&P->m->layers[l - 1]) : (block_out){0};
    const block_out attn_out = {L->bo, L->post_attn_norm, NULL};
    if (has_mixer(L)) {
        norm_phase(T, 0, n, l > 0 ? &prev_out : NULL, L->attn_norm, L->attn_norm_b, qkv);
        if (L->conv_in)
            conv_phase(T, L, l);
        else if (L->dn_qkv)
            delta_phase(T, L, l);
        else if (L->m2_in)
            mamba2_phase(T, L, l);
        else
            attention_block(T, L, l);
        if (!has_ffn(L))
            return;
    }
    norm_phase(T, 0, n, has_mixer(L) ? &attn_out : l > 0 ? &prev_out : NULL, L->ffn_norm, L->ffn_norm_b, ff);
    if (L->moe_router && !L->dense_norm) {
        moe_block(T, L, ff);
    } else {
        /* the next layer's Q K V rows follow, unless more comes first */
        const cf_fetch next = L->dense_norm || L->ple_gate ? (cf_fetch){0} : qkv_start(T, l + 1);
        ffn_block(T, L, &next);
    }
    if (L->dense_norm) {
        cf_weight moe[3];
        cf_moe_group(L, moe);
        dual_ffn_inputs(T, L, moe);
        moe_block(T, L, moe);
        dual_ffn_sum(T, L);
    }
    if (L->ple_gate)
        ple_block(T, L, l);
}

/* Final residual, norm and output projection for the rows that want
 * logits. */
static void output(thr *T)
{
    const pass *P = T->P;
    const cf_model *m = P->m;
    const int first = P->all_logits ? 0 : P->n - 1, rows = P->n - first;
    const block_out last_out = layer_out(&m->layers[P->hp->n_layer - 1]);
    cf_weight ws[3] = {m->output, NULL, NULL};
    norm_phase(T, first, rows, &last_out, m->out_norm, m->out_norm_b, ws);
    matmul_phase(T, m->output, act(T, 0, first), rows, P->logits, (size_t)P->hp->n_vocab);
    const float scale = P->hp->logit_scale, cap = P->hp->logit_softcap;
    if (scale != 1.0f || cap > 0) {
        const int V = P->hp->n_vocab;
        int v0, v1;
        sync_all(T);
        split(V, T->ith, T->nth, &v0, &v1);
        for (int r = 0; r < rows; r++)
            for (int v = v0; v < v1; v++) {
                float *y = &P->logits[(size_t)r * V + v];
                *y *= scale;
                if (cap > 0)
                    *y = tanhf(*y * (1.0f / cap)) * cap;
            }
    }
}

/* Whether to stop before the next layer: thread 0 asks, the barrier
 * passes its answer on, so that every thread leaves at the same layer
 * (the layer's own barriers keep the next question from overtaking). */
static bool stop_asked(const thr *T)
{
    cf_ctx *c = T->P->c;
    if (T->ith == 0)
        __atomic_store_n(&c->stopping, cf_ctx_cancelled(c), __ATOMIC_RELAXED);
    sync_all(T);
    return __atomic_load_n(&c->stopping, __ATOMIC_RELAXED);
}

/* Passes run so far, by every context (pass.serial). */
static uint64_t passes;

static void run_batch(const pass *P, int nth)
{
    memset(P->c->work, 0, (size_t)P->c->n_work * sizeof *P->c->work);
    memset(P->c->shares, 0,
           (size_t)P->c->n_work * (size_t)P->c->n_threads * CF_SHARE_STRIDE * sizeof *P->c->shares);
#pragma omp parallel num_threads(nth)
    {
        thr T = {P, NULL, omp_get_thread_num(), omp_get_num_threads(), 0};
        T.b = &P->c->tb[T.ith];
        embed(&T);
        if (P->hp->ple_dim)
            ple_inputs(&T);
        bool stopped = false;
        for (int l = 0; l < P->hp->n_layer && !(stopped = P->may_stop && stop_asked(&T)); l++)
            layer(&T, l);
        if (P->logits && !stopped)
            output(&T);
    }
}

/* Back to the n_past of `start`, as before a decode that did not finish. */
static void undo_decode(cf_ctx *c, int start)
{
    if (cf_rs_active(c))
        cf_rs_rewind(c, start, NULL);
    else
        c->kv.n_past = start;
}

static int decode(cf_ctx *c, const int32_t *tokens, int n, float *logits, bool all_logits,
                  bool may_stop, cf_err *err)
{
    const cf_hparams *hp = &c->m->hp;
    if (n <= 0)
        return cf_fail(err, "nothing to decode");
    if (n > c->kv.n_ctx - c->kv.n_past)
        return cf_fail_as(err, CF_E_CONTEXT, "context full: %d tokens do not fit (%d of %d positions used)",
                          n, c->kv.n_past, c->kv.n_ctx);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= hp->n_vocab)
            return cf_fail(err, "token id %d is outside the vocabulary (0..%d)", tokens[i],
                           hp->n_vocab - 1);
    const int start = c->kv.n_past;
    if (cf_rs_active(c)) {
        /* a multi-token decode is a chat's turn boundary: the state before
         * it and after it are where undo and the next turn go back to */
        memmove(c->tokens + start, tokens, (size_t)n * sizeof *tokens);
        if (n > 1)
            cf_rs_checkpoint(c);
    }
    for (int done = 0; done < n;) {
        const int nb = n - done < c->n_batch ? n - done : c->n_batch;
        const bool last_chunk = done + nb == n;
        pass P = {
            .c = c,
            .m = c->m,
            .hp = hp,
            .vec = cf_vec(),
            .tokens = tokens + done,
            .n = nb,
            .pos0 = c->kv.n_past,
            .logits = logits && (all_logits || last_chunk)
                          ? logits + (all_logits ? (size_t)done * (size_t)hp->n_vocab : 0)
                          : NULL,
            .all_logits = all_logits,
            .one = nb == 1,
            .may_stop = may_stop && n > 1 && c->cancel,
            .serial = __atomic_add_fetch(&passes, 1, __ATOMIC_RELAXED),
        };
        c->stopping = false;
        if (P.one) {
            /* other programs on the cores: busy.c */
            const uint64_t t0 = cf_now_ns();
            const int nth = cf_busy_threads(&c->busy, c->n_threads, t0);
            c->bar.stall_ns = 0;
            run_batch(&P, nth);
            const uint64_t t1 = cf_now_ns();
            /* the waits of the threads that waited: one preempted thread
             * keeps nth - 1 waiting at once, delaying the pass once */
            cf_busy_report(&c->busy, c->n_threads, nth, t1 - t0, nth > 1 ? c->bar.stall_ns / (uint64_t)(nth - 1) : 0,
                           t1);
        } else {
            run_batch(&P, cf_busy_batch_threads(&c->busy, c->n_threads, cf_now_ns()));
        }
        if (c->stopping) {
            undo_decode(c, start);
            return cf_fail_as(err, CF_E_CANCELLED, "stopped while the prompt was evaluated");
        }
        c->kv.n_past += nb;
        done += nb;
        if (c->pause && done < n)
            c->pause(c->pause_ud);
        /* the last row tells: NaN anywhere upstream reaches every logit */
        if (P.logits && !cf_all_finite(P.logits + (size_t)(P.all_logits ? nb - 1 : 0) * (size_t)hp->n_vocab,
                                       hp->n_vocab)) {
            undo_decode(c, start);
            return cf_model_blame_nonfinite(c->m, err);
        }
    }
    if (cf_rs_active(c) && n > 1)
        cf_rs_checkpoint(c);
    return 0;
}

int cf_ctx_decode(cf_ctx *c, const int32_t *tokens, int n, float *logits, bool all_logits,
                  cf_err *err)
{
    return decode(c, tokens, n, logits, all_logits, true, err);
}

int cf_ctx_replay(cf_ctx *c, const int32_t *tokens, int n, cf_err *err)
{
    return decode(c, tokens, n, NULL, false, false, err);
}

int cf_forward_group(cf_ctx *const *ctxs, const int32_t *tokens, int n, float *logits,
                     cf_err *err)
{
    const size_t V = (size_t)ctxs[0]->m->hp.n_vocab;
    for (int i = 0; i < n; i++)
        if (decode(ctxs[i], &tokens[i], 1, logits ? logits + (size_t)i * V : NULL, false, false,
                   err))
            return -1;
    return 0;
}
