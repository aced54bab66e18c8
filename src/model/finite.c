/* Where a model's numbers stop being finite: a file can be well-formed and
 * still hold NaN or Inf weights, and then every logit is NaN.  The forward
 * pass checks the logits it returns (V floats, nothing next to the matmuls
 * that made them) and only then looks for the first tensor to blame. */
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

/* Inf and NaN are the floats whose exponent bits are all ones.  Tested on
 * the bits, the loop vectorises: a float sum of x * 0 was one chain of
 * dependent adds, 26 us a token for 32k logits, 208 for 256k, with the
 * pass's other threads idle. */
bool cf_all_finite(const float *x, int64_t n)
{
    uint32_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &x[i], sizeof b);
        bad |= (b & 0x7f800000u) == 0x7f800000u;
    }
    return !bad;
}

int cf_model_blame_nonfinite(const cf_model *m, cf_err *err)
{
    const cf_gguf *g = m->g;
    float *row = NULL;
    void *plain = NULL; /* a row of a repacked matrix, as the file has it */
    int64_t cap = 0;
    for (int64_t i = 0; i < cf_gguf_n_tensors(g); i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
        const cf_type_traits *tt = cf_type_get(t->type);
        const int64_t k = t->ne[0], rows = t->ne[1] * t->ne[2] * t->ne[3];
        if (!tt || !tt->computable || k % tt->blck_size)
            continue;
        if (k > cap) {
            float *r = realloc(row, (size_t)k * sizeof *row);
            void *p = realloc(plain, (size_t)k * sizeof *row); /* no type takes more per element */
            row = r ? r : row;
            plain = p ? p : plain;
            if (!r || !p)
                break;
            cap = k;
        }
        const size_t rb = cf_row_bytes(t->type, k);
        for (int64_t r = 0; r < rows; r++) {
            const void *src = (const uint8_t *)t->data + (size_t)r * rb;
            if (t->layout != CF_LAYOUT_PLAIN) {
                if (cf_unpack_row(t->type, t->layout, t->data, k, rows, r, plain) != 0)
                    continue;
                src = plain;
            }
            if (cf_dequantize_row(t->type, src, row, k) == 0 && !cf_all_finite(row, k)) {
                free(row);
                free(plain);
                return cf_fail_as(err, CF_E_MODEL,
                                  "the model computes non-finite values: tensor '%s' holds NaN or Inf "
                                  "(row %lld)", t->name, (long long)r);
            }
        }
    }
    free(row);
    free(plain);
    return cf_fail_as(err, CF_E_MODEL,
                      "the model computes non-finite values (its weights are finite: the activations "
                      "overflowed)");
}
