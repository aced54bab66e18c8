/* The CPU's ops (backend.h): every thread of the pass's OpenMP region
 * calls each op and does its share of it.  A layer's phases of shared
 * work each end at one barrier:
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
#ifndef CONFAB_MODEL_CPU_PASS_H
#define CONFAB_MODEL_CPU_PASS_H

#include "backend.h"

/* One thread inside the region. */
typedef struct thr {
    cf_exec ex; /* first: an op's cf_exec is its thread */
    cf_tbuf *b;
    int ith, nth;
    int phase; /* next work counter: every thread walks them in step */
} thr;

static inline thr *cpu_thr(cf_exec *e)
{
    return (thr *)e;
}

static inline void sync_all(const thr *T)
{
    cf_barrier_wait(&T->ex.P->c->bar, T->nth);
}

static inline void split(int n, int ith, int nth, int *i0, int *i1)
{
    *i0 = (int)((int64_t)n * ith / nth);
    *i1 = (int)((int64_t)n * (ith + 1) / nth);
}

/* The next unit of a shared phase's work; all units are taken once the
 * result reaches the phase's unit count. */
static inline int grab(const thr *T, int phase)
{
    return __atomic_fetch_add(&T->ex.P->c->work[phase], 1, __ATOMIC_RELAXED);
}

/* ---- rows (cpu_rows.c) ------------------------------------------------------ */

static inline float *resid(const thr *T, int r)
{
    return T->ex.P->one ? T->b->x : T->ex.P->c->x + (size_t)r * (size_t)T->ex.P->hp->n_embd;
}

static inline uint8_t *act(const thr *T, int i, int r)
{
    const cf_ctx *c = T->ex.P->c;
    return (T->ex.P->one ? T->b->xq[i] : c->xq[i]) + (size_t)r * c->xq_stride;
}

/* Rows [first, first + n) of this thread in a row-wise phase. */
static inline void my_rows(const thr *T, int first, int n, int *r0, int *r1)
{
    if (T->ex.P->one) {
        *r0 = first;
        *r1 = first + n;
        return;
    }
    split(n, T->ith, T->nth, r0, r1);
    *r0 += first;
    *r1 += first;
}

static inline void rows_done(const thr *T)
{
    if (!T->ex.P->one)
        sync_all(T);
}

/* Round a row for each weight of a group that has its own buffer. */
void cpu_round_row(const thr *T, cf_weight const ws[3], const float *src, int r);
/* Round rows of src (stride floats apart) for w. */
void cpu_round(thr *T, cf_weight w, const float *src, size_t stride);
void cpu_residual_norm(cf_exec *e, int first, int n, const cf_block_out *out, cf_weight nw, cf_weight nb,
                       cf_weight const ws[3]);
void cpu_embed(cf_exec *e);

/* ---- weight rows (cpu_share.c) ---------------------------------------------- */

/* A name for the activations a phase multiplies (cf_matmul_args.x_serial):
 * they stay as they are through the phase, and no two phases of any pass
 * of any context share it. */
static inline uint64_t phase_serial(const thr *T, int phase)
{
    return T->ex.P->serial * (uint64_t)T->ex.P->c->n_work + (uint64_t)phase + 1;
}

/* y = x W[row0 : row0 + rows]^T for n activation rows; x_serial: see
 * phase_serial (0: none) */
void cpu_mm(cf_weight w, int64_t row0, int64_t rows, const uint8_t *x, size_t x_stride, int n, float *y,
            size_t y_stride, uint64_t x_serial);
/* The next piece of rows [*r0, *r0 + returned) of an m-row phase for this
 * thread, pieces of `piece` rows (a multiple of 16); 0 when all are taken. */
int64_t cpu_grab_rows(const thr *T, int phase, int64_t m, int64_t piece, int64_t *r0);
/* Rows per piece: whole panels of about PIECE_BYTES, at most cap rows
 * when cap > 0. */
int64_t cpu_piece_rows(size_t row_bytes, int64_t cap);
/* The first bytes of rows [row0, row0 + rows) of w, of this thread's share
 * of rows [row0, row0 + m): what it fetches while it waits at a barrier
 * (cf_barrier_wait_fetching), so that its next stream starts warm. */
cf_fetch cpu_rows_start(cf_weight w, int64_t row0, int64_t rows);
cf_fetch cpu_share_start(const thr *T, cf_weight w, int64_t row0, int64_t m);
/* sync_all, fetching f[0..nf) meanwhile when decoding one token (a batch's
 * phases are arithmetic-bound) */
void cpu_sync_fetching(const thr *T, const cf_fetch *f, int nf);
/* Y = X W^T over every row of w. */
void cpu_matmul_rows(thr *T, cf_weight w, const uint8_t *x, int n, float *y, size_t y_stride);
/* Several matrices reading the same rounded input as one shared phase (one
 * barrier): their rows are stacked, each piece cut at the matrices' edges.
 * Matrix i reads xq buffer xi[i] and writes y[i], rows y_stride[i] apart. */
void cpu_stacked(thr *T, const cf_weight *w, const int *xi, float *const *y, const size_t *y_stride, int nw);

/* ---- the ops (cpu_attention.c, cpu_ffn.c, cpu_mixers.c) ---------------------- */

/* The first rows this thread multiplies in layer l's Q K V phase, nothing
 * for a layer without one; after the last layer, its share of the
 * output's. */
cf_fetch cpu_qkv_start(const thr *T, int l);
void cpu_qkv(cf_exec *e, const cf_layer *L, int l);
void cpu_latent_qkv(cf_exec *e, const cf_layer *L, int l);
void cpu_attention(cf_exec *e, const cf_layer *L, int l);
void cpu_glu(cf_exec *e, const cf_layer *L);
void cpu_moe_route(cf_exec *e, const cf_layer *L, cf_weight const ff[3]);
void cpu_experts_up(cf_exec *e, const cf_layer *L, cf_weight const ff[3]);
void cpu_experts_down(cf_exec *e, const cf_layer *L);
void cpu_shared_expert(cf_exec *e, const cf_layer *L, cf_weight const ff[3]);
void cpu_dual_ffn_inputs(cf_exec *e, const cf_layer *L, cf_weight const moe[3]);
void cpu_dual_ffn_sum(cf_exec *e, const cf_layer *L);
void cpu_ple_inputs(cf_exec *e);
void cpu_ple(cf_exec *e, const cf_layer *L, int l);
void cpu_conv(cf_exec *e, const cf_layer *L, int l);
void cpu_delta_net(cf_exec *e, const cf_layer *L, int l);
void cpu_mamba2(cf_exec *e, const cf_layer *L, int l);

#endif
