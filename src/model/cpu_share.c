/* The CPU's work sharing: a matrix's rows split over the threads of a
 * pass, fetched ahead at barriers (cpu_pass.h). */
#include "cpu_pass.h"

void cpu_mm(cf_weight w, int64_t row0, int64_t rows, const uint8_t *x, size_t x_stride, int n,
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
    const cf_ctx *c = T->ex.P->c;
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

int64_t cpu_grab_rows(const thr *T, int phase, int64_t m, int64_t piece, int64_t *r0)
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

int64_t cpu_piece_rows(size_t row_bytes, int64_t cap)
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
cf_fetch cpu_rows_start(cf_weight w, int64_t row0, int64_t rows)
{
    const size_t rb = cf_row_bytes(w->type, w->ne[0]), bytes = (size_t)rows * rb;
    return (cf_fetch){(const uint8_t *)w->data + (size_t)row0 * rb, bytes < FETCH_MAX ? bytes : FETCH_MAX};
}

cf_fetch cpu_share_start(const thr *T, cf_weight w, int64_t row0, int64_t m)
{
    int64_t lo, hi;
    share_bounds(m, T->ith, T->nth, &lo, &hi);
    return cpu_rows_start(w, row0 + lo, hi - lo);
}

void cpu_sync_fetching(const thr *T, const cf_fetch *f, int nf)
{
    cf_barrier_wait_fetching(&T->ex.P->c->bar, T->nth, f, T->ex.P->one ? nf : 0);
}

void cpu_matmul_rows(thr *T, cf_weight w, const uint8_t *x, int n, float *y, size_t y_stride)
{
    const int phase = T->phase++;
    const int64_t piece = cpu_piece_rows(cf_row_bytes(w->type, w->ne[0]), 0);
    int64_t r0, nr;
    while ((nr = cpu_grab_rows(T, phase, w->ne[1], piece, &r0)) > 0)
        cpu_mm(w, r0, nr, x, T->ex.P->c->xq_stride, n, y + r0, y_stride, phase_serial(T, phase));
}

void cpu_stacked(thr *T, const cf_weight *w, const int *xi, float *const *y, const size_t *y_stride, int nw)
{
    const int phase = T->phase++;
    int64_t total = 0;
    for (int i = 0; i < nw; i++)
        total += w[i]->ne[1];
    const int64_t piece = cpu_piece_rows(cf_row_bytes(w[0]->type, w[0]->ne[0]), 0);
    int64_t v0, nv;
    while ((nv = cpu_grab_rows(T, phase, total, piece, &v0)) > 0)
        for (int64_t v = v0, first = 0, i = 0; v < v0 + nv && i < nw; first += w[i++]->ne[1]) {
            const int64_t end = first + w[i]->ne[1];
            if (v >= end)
                continue;
            const int64_t cnt = (end < v0 + nv ? end : v0 + nv) - v;
            cpu_mm(w[i], v - first, cnt, act(T, xi[i], 0), T->ex.P->c->xq_stride, T->ex.P->n,
                   y[i] + (v - first), y_stride[i], phase_serial(T, phase));
            v += cnt;
        }
}
