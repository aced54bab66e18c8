/* The row-wise and element-wise ops: norms, RoPE, the activations, adds,
 * products and scales. */
#include "vk_internal.h"

/* Bytes from the first row's start to the end of the last: what a rows
 * view must reach. */
static uint64_t rows_bytes(cf_gpu_rows r, int dim)
{
    if (r.n <= 0 || r.heads <= 0)
        return 0;
    return ((uint64_t)(r.n - 1) * (uint64_t)r.ld + (uint64_t)(r.heads - 1) * (uint64_t)r.hs + (uint64_t)dim) * 4;
}

static bool rows_ok(cf_gpu *g, cf_gpu_rows r, int dim, const char *what)
{
    if (r.n < 0 || r.heads <= 0 || r.ld < 0 || r.hs < 0 || dim <= 0)
        return cf_vk_fail(g, "%s: %d tokens of %d heads of %d floats (%lld, %lld apart)", what, r.n, r.heads, dim,
                          (long long)r.ld, (long long)r.hs);
    return cf_vk_view_ok(g, r.v, rows_bytes(r, dim), what);
}

typedef struct {
    uint32_t x_off, x_ld, x_hs, y_off, y_ld, y_hs;
    uint32_t heads, nrows, dim, w_off, b_off, has_w, has_b;
    float eps;
} norm_push;

static void norm(cf_gpu *g, const char *name, cf_gpu_rows x, int dim, cf_gpu_view w, cf_gpu_view b, float eps,
                 cf_gpu_rows y)
{
    if (!cf_vk_can_record(g, name) || !rows_ok(g, x, dim, name) || !rows_ok(g, y, dim, name) ||
        (w.buf && !cf_vk_view_ok(g, w, (uint64_t)dim * 4, "a norm's weights")) ||
        (b.buf && !cf_vk_view_ok(g, b, (uint64_t)dim * 4, "a norm's bias")))
        return;
    if (x.n != y.n || x.heads != y.heads)
        return (void)cf_vk_fail(g, "%s: %d x %d rows in, %d x %d out", name, x.n, x.heads, y.n, y.heads);
    const norm_push p = {(uint32_t)(x.v.off / 4), (uint32_t)x.ld, (uint32_t)x.hs, (uint32_t)(y.v.off / 4),
                         (uint32_t)y.ld, (uint32_t)y.hs, (uint32_t)x.heads, (uint32_t)(x.n * x.heads),
                         (uint32_t)dim, (uint32_t)(w.off / 4), (uint32_t)(b.off / 4), w.buf != NULL,
                         b.buf != NULL, eps};
    cf_gpu_buf *bufs[CF_VK_BINDINGS] = {x.v.buf, y.v.buf, w.buf, b.buf, NULL};
    cf_vk_dispatch(g, name, bufs, &p, sizeof p, (uint64_t)x.n * (uint64_t)x.heads);
}

void cf_gpu_rms_norm(cf_gpu *g, cf_gpu_rows x, int dim, cf_gpu_view w, float eps, cf_gpu_rows y)
{
    norm(g, "rms_norm", x, dim, w, (cf_gpu_view){0}, eps, y);
}

void cf_gpu_layer_norm(cf_gpu *g, cf_gpu_rows x, int dim, cf_gpu_view w, cf_gpu_view b, float eps,
                       cf_gpu_rows y)
{
    norm(g, "layer_norm", x, dim, w, b, eps, y);
}

void cf_gpu_rope(cf_gpu *g, cf_gpu_rows x, int n_rot, cf_rope_style style, cf_gpu_view cos,
                 cf_gpu_view sin, int pos0)
{
    if (!cf_vk_can_record(g, "rope") || !rows_ok(g, x, n_rot, "rope's rows"))
        return;
    if (n_rot % 2 || pos0 < 0 || (style != CF_ROPE_NORMAL && style != CF_ROPE_NEOX))
        return (void)cf_vk_fail(g, "rope: n_rot %d (must be even), position %d, style %d", n_rot, pos0, (int)style);
    const uint64_t table = (uint64_t)(pos0 + x.n) * (uint64_t)(n_rot / 2) * 4;
    if (!cf_vk_view_ok(g, cos, table, "rope's cos table") || !cf_vk_view_ok(g, sin, table, "rope's sin table"))
        return;
    const struct {
        uint32_t x_off, x_ld, x_hs, heads, nrows, n_rot, cos_off, sin_off, pos0, neox;
    } p = {(uint32_t)(x.v.off / 4), (uint32_t)x.ld, (uint32_t)x.hs, (uint32_t)x.heads,
           (uint32_t)(x.n * x.heads), (uint32_t)n_rot, (uint32_t)(cos.off / 4), (uint32_t)(sin.off / 4),
           (uint32_t)pos0, style == CF_ROPE_NEOX};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {x.v.buf, cos.buf, sin.buf, NULL, NULL};
    cf_vk_dispatch(g, "rope", b, &p, sizeof p, ((uint64_t)x.n * (uint64_t)x.heads * (uint64_t)(n_rot / 2) + 255) / 256);
}

/* A matrix view of n rows of width floats, ld apart. */
static bool mat_ok(cf_gpu *g, cf_gpu_view v, int n, int width, int64_t ld, const char *what)
{
    const cf_gpu_rows r = {v, n, 1, ld, 0};
    return rows_ok(g, r, width, what);
}

void cf_gpu_glu(cf_gpu *g, cf_gpu_act act, cf_gpu_view gate, cf_gpu_view up, int64_t ld_in, int n, int width,
                cf_gpu_view out, int64_t ld_out)
{
    const bool gated = act == CF_GPU_SILU || act == CF_GPU_GELU || act == CF_GPU_SWIGLU_OAI;
    if (!cf_vk_can_record(g, "glu") || !mat_ok(g, gate, n, width, ld_in, "an activation's input") ||
        (gated && !mat_ok(g, up, n, width, ld_in, "an activation's up rows")) ||
        !mat_ok(g, out, n, width, ld_out, "an activation's output"))
        return;
    if ((unsigned)act > CF_GPU_RELU2)
        return (void)cf_vk_fail(g, "no activation %d", (int)act);
    const struct {
        uint32_t g_off, u_off, ld_in, o_off, ld_out, n, width, act;
    } p = {(uint32_t)(gate.off / 4), (uint32_t)(up.off / 4), (uint32_t)ld_in, (uint32_t)(out.off / 4),
           (uint32_t)ld_out, (uint32_t)n, (uint32_t)width, (uint32_t)act};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {gate.buf, gated ? up.buf : NULL, out.buf, NULL, NULL};
    cf_vk_dispatch(g, "glu", b, &p, sizeof p, ((uint64_t)n * (uint64_t)width + 255) / 256);
}

enum { OP_ADD, OP_MUL, OP_SCALE, OP_ADD_BY, OP_ADD_GATED, OP_MUL_BY };

/* The rows of b an op reads: its b_rows (a bias, a residual) or, through
 * idx, which of b's b_rows each row takes; gate: the per-row gates. */
typedef struct binary_b {
    cf_gpu_view b, idx, gate;
    int b_rows;
} binary_b;

static void binary(cf_gpu *g, int op, cf_gpu_view y, cf_gpu_view a, binary_b b, int n, int width, int64_t ld,
                   float s)
{
    static const char *const names[] = {"add", "mul", "scale", "add_by", "add_gated", "mul_by"};
    if (!cf_vk_can_record(g, names[op]) || !mat_ok(g, y, n, width, ld, names[op]) ||
        !mat_ok(g, a, n, width, ld, names[op]) ||
        (op != OP_SCALE && !mat_ok(g, b.b, b.b_rows, width, width, names[op])) ||
        ((op == OP_ADD_BY || op == OP_MUL_BY) && !cf_vk_view_ok(g, b.idx, (uint64_t)n * 4, "the rows by index")) ||
        (op == OP_ADD_GATED && !cf_vk_view_ok(g, b.gate, (uint64_t)n * 4, "add_gated's gates")))
        return;
    if (op != OP_SCALE && b.b_rows <= 0)
        return (void)cf_vk_fail(g, "%s: %d rows to broadcast", names[op], b.b_rows);
    const struct {
        uint32_t a_off, b_off, y_off, ld, b_rows, n, width, op;
        float s;
        uint32_t i_off, g_off;
    } p = {(uint32_t)(a.off / 4), (uint32_t)(b.b.off / 4), (uint32_t)(y.off / 4), (uint32_t)ld,
           (uint32_t)(b.b_rows > 0 ? b.b_rows : 1), (uint32_t)n, (uint32_t)width, (uint32_t)op, s,
           (uint32_t)(b.idx.off / 4), (uint32_t)(b.gate.off / 4)};
    cf_gpu_buf *bufs[CF_VK_BINDINGS] = {a.buf, op == OP_SCALE ? NULL : b.b.buf, y.buf, b.idx.buf, b.gate.buf};
    cf_vk_dispatch(g, "binary", bufs, &p, sizeof p, ((uint64_t)n * (uint64_t)width + 255) / 256);
}

void cf_gpu_add(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, int b_rows, int n, int width, int64_t ld)
{
    binary(g, OP_ADD, y, a, (binary_b){.b = b, .b_rows = b_rows}, n, width, ld, 0);
}

void cf_gpu_mul(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, int b_rows, int n, int width, int64_t ld)
{
    binary(g, OP_MUL, y, a, (binary_b){.b = b, .b_rows = b_rows}, n, width, ld, 0);
}

void cf_gpu_add_by(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, int b_rows, cf_gpu_view idx, int n,
                   int width, int64_t ld)
{
    binary(g, OP_ADD_BY, y, a, (binary_b){.b = b, .idx = idx, .b_rows = b_rows}, n, width, ld, 0);
}

void cf_gpu_mul_by(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, int b_rows, cf_gpu_view idx, int n,
                   int width, int64_t ld)
{
    binary(g, OP_MUL_BY, y, a, (binary_b){.b = b, .idx = idx, .b_rows = b_rows}, n, width, ld, 0);
}

void cf_gpu_add_gated(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, cf_gpu_view gate, int n, int width,
                      int64_t ld)
{
    binary(g, OP_ADD_GATED, y, a, (binary_b){.b = b, .gate = gate, .b_rows = n}, n, width, ld, 0);
}

void cf_gpu_copy_rows(cf_gpu *g, cf_gpu_view y, cf_gpu_view x, int n, int width, int64_t ld)
{
    binary(g, OP_SCALE, y, x, (binary_b){.b_rows = 1}, n, width, ld, 1.0f);
}

void cf_gpu_scale(cf_gpu *g, cf_gpu_view y, cf_gpu_view x, float s, int64_t count)
{
    if (count > INT32_MAX)
        return (void)cf_vk_fail(g, "scale: %lld floats", (long long)count);
    binary(g, OP_SCALE, y, x, (binary_b){.b_rows = 1}, 1, (int)count, 0, s);
}
