/* The GPU API in a build without Vulkan: no devices, every open fails
 * with one line saying so, and nothing else is ever reached (no buffer or
 * device exists to pass to the rest). */
#include "confab/gpu.h"

static const char no_gpu[] = "no GPU: this confab was built without Vulkan (meson setup -Dvulkan=enabled)";

bool cf_gpu_built(void)
{
    return false;
}

int cf_gpu_count(cf_err *err)
{
    cf_fail(err, "%s", no_gpu);
    return 0;
}

int cf_gpu_info_get(int i, cf_gpu_info *out, cf_err *err)
{
    (void)i;
    (void)out;
    return cf_fail(err, "%s", no_gpu);
}

cf_gpu *cf_gpu_open(int device, cf_err *err)
{
    (void)device;
    cf_fail(err, "%s", no_gpu);
    return NULL;
}

void cf_gpu_close(cf_gpu *g)
{
    (void)g;
}

const cf_gpu_info *cf_gpu_device(const cf_gpu *g)
{
    (void)g;
    return NULL;
}

bool cf_gpu_supports(const cf_gpu *g, cf_type t)
{
    (void)g;
    (void)t;
    return false;
}

uint64_t cf_gpu_max_buffer(const cf_gpu *g)
{
    (void)g;
    return 0;
}

cf_gpu_buf *cf_gpu_alloc(cf_gpu *g, size_t bytes, cf_err *err)
{
    (void)g;
    (void)bytes;
    cf_fail(err, "%s", no_gpu);
    return NULL;
}

void cf_gpu_free(cf_gpu *g, cf_gpu_buf *b)
{
    (void)g;
    (void)b;
}

size_t cf_gpu_buf_bytes(const cf_gpu_buf *b)
{
    (void)b;
    return 0;
}

int cf_gpu_write(cf_gpu *g, cf_gpu_view dst, const void *src, size_t n, cf_err *err)
{
    (void)g, (void)dst, (void)src, (void)n;
    return cf_fail(err, "%s", no_gpu);
}

int cf_gpu_read(cf_gpu *g, cf_gpu_view src, void *dst, size_t n, cf_err *err)
{
    (void)g, (void)src, (void)dst, (void)n;
    return cf_fail(err, "%s", no_gpu);
}

void cf_gpu_begin(cf_gpu *g)
{
    (void)g;
}

int cf_gpu_submit(cf_gpu *g, cf_err *err)
{
    (void)g;
    return cf_fail(err, "%s", no_gpu);
}

/* The ops: there is no device to record them on. */
void cf_gpu_upload(cf_gpu *g, cf_gpu_view dst, const void *src, size_t n)
{
    (void)g, (void)dst, (void)src, (void)n;
}

void cf_gpu_download(cf_gpu *g, cf_gpu_view src, void *dst, size_t n)
{
    (void)g, (void)src, (void)dst, (void)n;
}

void cf_gpu_matmul(cf_gpu *g, cf_type wt, cf_gpu_view w, int64_t rows, int64_t k, cf_gpu_view x, int n,
                   cf_gpu_view y)
{
    (void)g, (void)wt, (void)w, (void)rows, (void)k, (void)x, (void)n, (void)y;
}

void cf_gpu_matmul_ld(cf_gpu *g, cf_type wt, cf_gpu_view w, int64_t rows, int64_t k, cf_gpu_view x, int64_t ldx,
                      int n, cf_gpu_view y, int64_t ldy)
{
    (void)g, (void)wt, (void)w, (void)rows, (void)k, (void)x, (void)ldx, (void)n, (void)y, (void)ldy;
}

void cf_gpu_matmul_id(cf_gpu *g, cf_type wt, cf_gpu_view w, size_t expert_bytes, int64_t rows, int64_t k,
                      cf_gpu_view ids, cf_gpu_view xrow, cf_gpu_view x, int n, cf_gpu_view y)
{
    (void)g, (void)wt, (void)w, (void)expert_bytes, (void)rows, (void)k, (void)ids, (void)xrow, (void)x;
    (void)n, (void)y;
}

void cf_gpu_moe_route(cf_gpu *g, const cf_hparams *hp, cf_gpu_view logits, cf_gpu_view bias, int n,
                      cf_gpu_view sel, cf_gpu_view w, cf_gpu_view xrow)
{
    (void)g, (void)hp, (void)logits, (void)bias, (void)n, (void)sel, (void)w, (void)xrow;
}

void cf_gpu_moe_sum(cf_gpu *g, cf_gpu_view y, cf_gpu_view w, int n, int k, int width, cf_gpu_view out, int64_t ld)
{
    (void)g, (void)y, (void)w, (void)n, (void)k, (void)width, (void)out, (void)ld;
}

void cf_gpu_get_rows(cf_gpu *g, cf_type wt, cf_gpu_view w, int64_t k, cf_gpu_view ids, int n, cf_gpu_view y)
{
    (void)g, (void)wt, (void)w, (void)k, (void)ids, (void)n, (void)y;
}

void cf_gpu_rms_norm(cf_gpu *g, cf_gpu_rows x, int dim, cf_gpu_view w, float eps, cf_gpu_rows y)
{
    (void)g, (void)x, (void)dim, (void)w, (void)eps, (void)y;
}

void cf_gpu_layer_norm(cf_gpu *g, cf_gpu_rows x, int dim, cf_gpu_view w, cf_gpu_view b, float eps,
                       cf_gpu_rows y)
{
    (void)g, (void)x, (void)dim, (void)w, (void)b, (void)eps, (void)y;
}

void cf_gpu_rope(cf_gpu *g, cf_gpu_rows x, int n_rot, cf_rope_style style, cf_gpu_view cos,
                 cf_gpu_view sin, int pos0)
{
    (void)g, (void)x, (void)n_rot, (void)style, (void)cos, (void)sin, (void)pos0;
}

bool cf_gpu_kv_supports(cf_kv_type t)
{
    (void)t;
    return false;
}

void cf_gpu_kv_store(cf_gpu *g, const cf_gpu_kv *kv, cf_gpu_rows k, cf_gpu_rows v, int pos0)
{
    (void)g, (void)kv, (void)k, (void)v, (void)pos0;
}

void cf_gpu_attention(cf_gpu *g, const cf_gpu_attn *a)
{
    (void)g, (void)a;
}

void cf_gpu_glu(cf_gpu *g, cf_gpu_act act, cf_gpu_view gate, cf_gpu_view up, int64_t ld_in, int n, int width,
                cf_gpu_view out, int64_t ld_out)
{
    (void)g, (void)act, (void)gate, (void)up, (void)ld_in, (void)n, (void)width, (void)out, (void)ld_out;
}

void cf_gpu_add(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, int b_rows, int n, int width, int64_t ld)
{
    (void)g, (void)y, (void)a, (void)b, (void)b_rows, (void)n, (void)width, (void)ld;
}

void cf_gpu_mul(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, int b_rows, int n, int width, int64_t ld)
{
    (void)g, (void)y, (void)a, (void)b, (void)b_rows, (void)n, (void)width, (void)ld;
}

void cf_gpu_add_by(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, int b_rows, cf_gpu_view idx, int n,
                   int width, int64_t ld)
{
    (void)g, (void)y, (void)a, (void)b, (void)b_rows, (void)idx, (void)n, (void)width, (void)ld;
}

void cf_gpu_mul_by(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, int b_rows, cf_gpu_view idx, int n,
                   int width, int64_t ld)
{
    (void)g, (void)y, (void)a, (void)b, (void)b_rows, (void)idx, (void)n, (void)width, (void)ld;
}

void cf_gpu_add_gated(cf_gpu *g, cf_gpu_view y, cf_gpu_view a, cf_gpu_view b, cf_gpu_view gate, int n, int width,
                      int64_t ld)
{
    (void)g, (void)y, (void)a, (void)b, (void)gate, (void)n, (void)width, (void)ld;
}

void cf_gpu_copy_rows(cf_gpu *g, cf_gpu_view y, cf_gpu_view x, int n, int width, int64_t ld)
{
    (void)g, (void)y, (void)x, (void)n, (void)width, (void)ld;
}

void cf_gpu_conv(cf_gpu *g, cf_gpu_conv_kind kind, cf_gpu_view seq, int64_t ld, int n, int channels, cf_gpu_view w,
                 cf_gpu_view bias, int K, cf_gpu_view window, cf_gpu_view out, int64_t ld_out)
{
    (void)g, (void)kind, (void)seq, (void)ld, (void)n, (void)channels, (void)w, (void)bias, (void)K, (void)window;
    (void)out, (void)ld_out;
}

void cf_gpu_mamba2_scan(cf_gpu *g, const cf_gpu_mamba2 *m)
{
    (void)g, (void)m;
}

void cf_gpu_delta_net(cf_gpu *g, const cf_gpu_delta *d)
{
    (void)g, (void)d;
}

void cf_gpu_scale(cf_gpu *g, cf_gpu_view y, cf_gpu_view x, float s, int64_t count)
{
    (void)g, (void)y, (void)x, (void)s, (void)count;
}

void cf_gpu_copy(cf_gpu *g, cf_gpu_view dst, cf_gpu_view src, size_t bytes)
{
    (void)g, (void)dst, (void)src, (void)bytes;
}
