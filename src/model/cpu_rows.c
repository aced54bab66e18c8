/* The CPU's row-wise ops: the embedding, the residual's adds and norms,
 * and the rounding of activations for the weights that read them. */
#include "cpu_pass.h"

void cpu_round_row(const thr *T, cf_weight const ws[3], const float *src, int r)
{
    for (int i = 0; i < 3; i++)
        if (ws[i] && cf_xq_index(ws, i) == i)
            cf_quantize_row(cf_vec_dot_type(ws[i]->type), src, act(T, i, r), ws[i]->ne[0]);
}

void cpu_residual_norm(cf_exec *e, int first, int n, const cf_block_out *out, cf_weight nw, cf_weight nb,
                       cf_weight const ws[3])
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
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
        cpu_round_row(T, ws, h, r);
    }
    rows_done(T);
}

void cpu_round(thr *T, cf_weight w, const float *src, size_t stride)
{
    cf_weight ws[3] = {w, NULL, NULL};
    int r0, r1;
    my_rows(T, 0, T->ex.P->n, &r0, &r1);
    for (int r = r0; r < r1; r++)
        cpu_round_row(T, ws, src + (size_t)r * stride, r);
    rows_done(T);
}

void cpu_embed(cf_exec *e)
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
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
            P->vec->add(x, x, (const float *)m->pos_embd->data + (size_t)cf_pass_pos(P, r) * E, NULL,
                        (int)E);
        if (P->hp->embd_scale != 1.0f)
            for (size_t i = 0; i < E; i++)
                x[i] *= P->hp->embd_scale;
    }
    /* no barrier: the first residual_norm takes the same rows */
}

