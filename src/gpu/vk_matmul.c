/* The weight ops: matrix times activations (the decode shader for a few
 * tokens, the tiled one for a batch), the experts' pairs, and embedding
 * rows.  Each weight type has its own build of each shader. */
#include "vk_internal.h"

/* Up to this many tokens go through the decode shader (matvec.comp's
 * NV at a time): it reads each weight once for them all.  Both shaders
 * sum in one order (shaders/sum_order.glsl): which one runs does not
 * change a bit. */
#define MATVEC_MAX 8
/* matvec.comp's rows a workgroup */
#define MATVEC_ROWS 4

static const struct {
    cf_type t;
    const char *suffix;
} types[] = {
    {CF_TYPE_F32, "f32"},     {CF_TYPE_F16, "f16"},       {CF_TYPE_BF16, "bf16"},     {CF_TYPE_Q4_0, "q4_0"},
    {CF_TYPE_Q4_1, "q4_1"},   {CF_TYPE_Q5_0, "q5_0"},     {CF_TYPE_Q5_1, "q5_1"},     {CF_TYPE_Q8_0, "q8_0"},
    {CF_TYPE_Q2_K, "q2_k"},   {CF_TYPE_Q3_K, "q3_k"},     {CF_TYPE_Q4_K, "q4_k"},     {CF_TYPE_Q5_K, "q5_k"},
    {CF_TYPE_Q6_K, "q6_k"},   {CF_TYPE_IQ4_NL, "iq4_nl"}, {CF_TYPE_IQ4_XS, "iq4_xs"}, {CF_TYPE_MXFP4, "mxfp4"},
};

static const char *suffix(cf_type t)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].t == t)
            return types[i].suffix;
    return NULL;
}

bool cf_gpu_supports(const cf_gpu *g, cf_type t)
{
    (void)g;
    return suffix(t) != NULL;
}

/* The shader name for weights of type t with k columns, after checking
 * that the shaders take them. */
static bool weight_shader(cf_gpu *g, const char *op, cf_type t, int64_t rows, int64_t k, char *name, size_t cap)
{
    const char *s = suffix(t);
    if (!s)
        return cf_vk_fail(g, "%s: no shader for %s weights", op, cf_type_name((uint32_t)t));
    const int64_t bs = cf_type_get((uint32_t)t)->blck_size;
    if (rows <= 0 || k <= 0 || k % bs || rows > UINT32_MAX || k > UINT32_MAX)
        return cf_vk_fail(g, "%s: %lld x %lld %s weights (k must be a positive multiple of %lld)", op,
                          (long long)rows, (long long)k, cf_type_name((uint32_t)t), (long long)bs);
    snprintf(name, cap, "%s_%s", op, s);
    return true;
}

typedef struct {
    uint32_t w_off, row_bytes, rows, k;
    uint32_t x_off, y_off, n;
    uint32_t ids_off, xrow_off, expert_bytes;
    uint32_t ldx, ldy;
} mm_push;

/* Bytes from a matrix view's start to the end of its last row. */
static uint64_t mat_bytes(int n, int64_t width, int64_t ld)
{
    return n > 0 ? ((uint64_t)(n - 1) * (uint64_t)ld + (uint64_t)width) * 4 : 0;
}

void cf_gpu_matmul(cf_gpu *g, cf_type wt, cf_gpu_view w, int64_t rows, int64_t k, cf_gpu_view x, int n,
                   cf_gpu_view y)
{
    cf_gpu_matmul_ld(g, wt, w, rows, k, x, k, n, y, rows);
}

void cf_gpu_matmul_ld(cf_gpu *g, cf_type wt, cf_gpu_view w, int64_t rows, int64_t k, cf_gpu_view x, int64_t ldx,
                      int n, cf_gpu_view y, int64_t ldy)
{
    char name[32];
    const bool vec = n <= MATVEC_MAX;
    if (!cf_vk_can_record(g, "matmul") || n < 0 ||
        !weight_shader(g, vec ? "matvec" : "matmat", wt, rows, k, name, sizeof name))
        return;
    if (ldx < k || ldy < rows || ldx > UINT32_MAX || ldy > UINT32_MAX)
        return (void)cf_vk_fail(g, "matmul: rows of x %lld apart (k %lld), of y %lld apart (%lld rows)",
                                (long long)ldx, (long long)k, (long long)ldy, (long long)rows);
    const size_t rb = cf_row_bytes(wt, k);
    if (!cf_vk_range_ok(g, w, (uint64_t)rows * rb, "matmul's weights") ||
        !cf_vk_view_ok(g, x, mat_bytes(n, k, ldx), "matmul's input") ||
        !cf_vk_view_ok(g, y, mat_bytes(n, rows, ldy), "matmul's output"))
        return;
    const mm_push p = {(uint32_t)w.off, (uint32_t)rb, (uint32_t)rows, (uint32_t)k,
                       (uint32_t)(x.off / 4), (uint32_t)(y.off / 4), (uint32_t)n, 0, 0, 0,
                       (uint32_t)ldx, (uint32_t)ldy};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {w.buf, x.buf, y.buf, NULL, NULL};
    const uint64_t row_groups = ((uint64_t)rows + MATVEC_ROWS - 1) / MATVEC_ROWS;
    const uint64_t groups = vec ? row_groups * (((uint64_t)n + MATVEC_MAX - 1) / MATVEC_MAX)
                                : ((uint64_t)rows + 63) / 64 * (((uint64_t)n + 63) / 64);
    cf_vk_dispatch(g, name, b, &p, sizeof p, groups);
}

void cf_gpu_matmul_id(cf_gpu *g, cf_type wt, cf_gpu_view w, size_t expert_bytes, int64_t rows, int64_t k,
                      cf_gpu_view ids, cf_gpu_view xrow, cf_gpu_view x, int n, cf_gpu_view y)
{
    char name[32];
    if (!cf_vk_can_record(g, "matmul_id") || n < 0 ||
        !weight_shader(g, "matvec_id", wt, rows, k, name, sizeof name))
        return;
    const size_t rb = cf_row_bytes(wt, k);
    if (expert_bytes < (uint64_t)rows * rb)
        cf_vk_fail(g, "matmul_id: experts %zu bytes apart, each %llu bytes", expert_bytes,
                   (unsigned long long)rows * rb);
    /* the experts' ids are only known on the device: the shader stays
     * within the buffer's bound, which the weights' view starts */
    if (!cf_vk_range_ok(g, w, (uint64_t)rows * rb, "matmul_id's weights") ||
        !cf_vk_view_ok(g, ids, (uint64_t)n * 4, "matmul_id's experts") ||
        !cf_vk_view_ok(g, xrow, (uint64_t)n * 4, "matmul_id's input rows") ||
        !cf_vk_view_ok(g, x, (uint64_t)k * 4, "matmul_id's input") ||
        !cf_vk_view_ok(g, y, (uint64_t)n * (uint64_t)rows * 4, "matmul_id's output"))
        return;
    if (expert_bytes > UINT32_MAX)
        return (void)cf_vk_fail(g, "matmul_id: experts %zu bytes apart, past 4 GiB", expert_bytes);
    const mm_push p = {(uint32_t)w.off,          (uint32_t)rb,           (uint32_t)rows,
                       (uint32_t)k,              (uint32_t)(x.off / 4),  (uint32_t)(y.off / 4),
                       (uint32_t)n,              (uint32_t)(ids.off / 4), (uint32_t)(xrow.off / 4),
                       (uint32_t)expert_bytes,   (uint32_t)k,            (uint32_t)rows};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {w.buf, x.buf, y.buf, ids.buf, xrow.buf};
    cf_vk_dispatch(g, name, b, &p, sizeof p, ((uint64_t)rows + MATVEC_ROWS - 1) / MATVEC_ROWS * (uint64_t)n);
}

void cf_gpu_get_rows(cf_gpu *g, cf_type wt, cf_gpu_view w, int64_t k, cf_gpu_view ids, int n, cf_gpu_view y)
{
    char name[32];
    if (!cf_vk_can_record(g, "get_rows") || n < 0 || !weight_shader(g, "getrows", wt, 1, k, name, sizeof name))
        return;
    const size_t rb = cf_row_bytes(wt, k);
    if (!cf_vk_range_ok(g, w, rb, "get_rows's weights") || !cf_vk_view_ok(g, ids, (uint64_t)n * 4, "get_rows's ids") ||
        !cf_vk_view_ok(g, y, (uint64_t)n * (uint64_t)k * 4, "get_rows's output"))
        return;
    const struct {
        uint32_t w_off, row_bytes, k, ids_off, y_off, n;
    } p = {(uint32_t)w.off, (uint32_t)rb, (uint32_t)k, (uint32_t)(ids.off / 4), (uint32_t)(y.off / 4), (uint32_t)n};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {w.buf, ids.buf, y.buf, NULL, NULL};
    cf_vk_dispatch(g, name, b, &p, sizeof p, ((uint64_t)n * (uint64_t)k + 255) / 256);
}
