/* The GGUF reader: header, metadata and tensor table (every entry read
 * back through each accessor), then, when the file opens, its tokenizer and
 * a model of its shape in a context of a few positions, which reaches the
 * tensor data through the forward pass.  Seeds: tiny models of each
 * architecture mkmodel writes (seeds.sh). */
#include <string.h>

#include "fuzz_util.h"

static void touch_kv(const cf_gguf *g, const cf_gguf_kv *kv)
{
    volatile uint64_t sum = 0;
    uint64_t u;
    int64_t i;
    double f;
    bool b;
    cf_str s;
    sum += cf_gguf_get_u64(g, kv->key, &u) + cf_gguf_get_i64(g, kv->key, &i) +
           cf_gguf_get_f64(g, kv->key, &f) + cf_gguf_get_bool(g, kv->key, &b) +
           cf_gguf_get_str(g, kv->key, &s) + (cf_gguf_get_arr(g, kv->key, CF_GGUF_VTYPE_COUNT) != NULL);
    fuzz_require(cf_gguf_find_kv(g, kv->key) != NULL, "key '%s' is listed but not found", kv->key);
    cf_gguf_vtype t = kv->type == CF_GGUF_ARRAY ? kv->elem : kv->type;
    for (uint64_t k = 0; k < kv->n; k++) {
        if (t == CF_GGUF_STRING) {
            cf_str e = cf_gguf_kv_str(kv, k);
            if (e.len)
                sum += (uint8_t)e.ptr[0] + (uint8_t)e.ptr[e.len - 1];
        } else if (t == CF_GGUF_FLOAT32 || t == CF_GGUF_FLOAT64) {
            sum += (uint64_t)(cf_gguf_kv_float(kv, k) != 0);
        } else if (t != CF_GGUF_ARRAY) {
            sum += (uint64_t)cf_gguf_kv_int(kv, k);
        }
    }
    (void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_gguf *g;
    cf_err err = {0};
    if (cf_gguf_open_buffer(data, size, &g, &err) != 0) {
        fuzz_require_message(&err);
        return 0;
    }
    for (int64_t i = 0; i < cf_gguf_n_kv(g); i++)
        touch_kv(g, cf_gguf_kv_at(g, i));
    volatile uint64_t sum = cf_gguf_fingerprint(g);
    for (int64_t i = 0; i < cf_gguf_n_tensors(g); i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
        fuzz_require(cf_gguf_find_tensor(g, t->name) != NULL, "tensor '%s' not found", t->name);
        if (t->nbytes)
            sum += ((const uint8_t *)t->data)[0] + ((const uint8_t *)t->data)[t->nbytes - 1];
    }
    (void)sum;
    fuzz_use_model(g);
    return 0;
}
