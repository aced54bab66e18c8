/* Grouped decoding (cf_ctx_decode_group) against lone decodes, bit for
 * bit: four contexts with prompts of different lengths (so each token
 * sits at its own position, some past a sliding window and across the
 * cache's chunks) decode steps together, on 1, 2 and 3 threads, some steps
 * with only some of them, and each context's logits must be the bytes
 * the same context gives decoding the same tokens alone on 1 thread.
 * Dense, MoE, sliding-window, learned-position, latent-attention and
 * hybrid models (recurrent state per context), and contexts with their
 * layers on a GPU (lavapipe; they decode alone, in turn).  A group that
 * cannot run changes no context.
 * usage: test_group MODEL_FILE... (relative to ../shared/models) */
#include <stdlib.h>
#include <string.h>

#include "confab/gpu.h"
#include "confab/model.h"
#include "harness.h"

enum { N = 4, STEPS = 6 };
static const int prompt_len[N] = {3, 41, 150, 300};

static void make_ids(int32_t *ids, int n, int V, unsigned seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        ids[i] = 3 + (int32_t)((seed >> 8) % (unsigned)(V - 3));
    }
}

static cf_ctx *open_ctx(const cf_model *m, int n_ctx, int threads, cf_kv_type kv, int ngl)
{
    cf_ctx_params p = {.n_ctx = n_ctx, .n_threads = threads, .type_k = kv, .type_v = kv,
                       .n_gpu_layers = ngl};
    cf_ctx *c = NULL;
    cf_err err;
    CHECKF(cf_ctx_new(m, &p, &c, &err) == 0, "%s", err.msg);
    return c;
}

/* ngl: layers on the GPU (-1: every one). */
static void check_model(const char *file, cf_kv_type kv, int threads, int ngl)
{
    cf_model *m;
    cf_err err;
    if (cf_model_load(shared_path(file), NULL, &m, &err)) {
        CHECKF(0, "%s: %s", file, err.msg);
        return;
    }
    const int V = cf_model_hparams(m)->n_vocab, train = cf_model_hparams(m)->n_ctx_train;
    const int n_ctx = train < 512 ? train : 512;
    if (ngl < 0)
        ngl = cf_model_hparams(m)->n_layer;
    cf_ctx *group[N], *alone[N];
    float *lg = malloc((size_t)N * (size_t)V * sizeof *lg), *want = malloc((size_t)V * sizeof *want);
    int32_t ids[512];
    for (int i = 0; i < N; i++) {
        group[i] = open_ctx(m, n_ctx, threads, kv, ngl);
        alone[i] = open_ctx(m, n_ctx, 1, kv, ngl);
        const int len = prompt_len[i] < n_ctx - STEPS ? prompt_len[i] : n_ctx - STEPS;
        make_ids(ids, len, V, 7u + (unsigned)i);
        CHECK(cf_ctx_decode(group[i], ids, len, NULL, false, &err) == 0);
        CHECK(cf_ctx_decode(alone[i], ids, len, NULL, false, &err) == 0);
    }
    int diffs = 0;
    for (int s = 0; s < STEPS; s++) {
        /* every other step only contexts 1 and 3, the latest first */
        cf_ctx *in[N];
        int who[N], n = 0;
        for (int i = N - 1; i >= 0; i--)
            if (s % 2 == 0 || i % 2 == 1) {
                who[n] = i;
                in[n++] = group[i];
            }
        int32_t tok[N];
        make_ids(tok, n, V, 100u + (unsigned)s);
        CHECKF(cf_ctx_decode_group(in, tok, n, lg, &err) == 0, "%s: %s", file, err.msg);
        for (int k = 0; k < n; k++) {
            CHECK(cf_ctx_decode(alone[who[k]], &tok[k], 1, want, false, &err) == 0);
            CHECK(cf_ctx_n_past(group[who[k]]) == cf_ctx_n_past(alone[who[k]]));
            diffs += memcmp(lg + (size_t)k * V, want, (size_t)V * sizeof *want) != 0;
        }
    }
    CHECKF(diffs == 0, "%s (kv %s, %d threads, %d layers on a GPU): %d logits rows of the group "
           "differ from lone decodes", file, cf_kv_type_name(kv), threads, ngl, diffs);
    /* a full context stops the whole group, and nothing changes */
    cf_ctx *tiny = open_ctx(m, 16, 1, kv, 0);
    make_ids(ids, 16, V, 3u);
    CHECK(cf_ctx_decode(tiny, ids, 16, NULL, false, &err) == 0);
    cf_ctx *two[2] = {group[0], tiny};
    const int before = cf_ctx_n_past(group[0]);
    CHECK(cf_ctx_decode_group(two, ids, 2, lg, &err) != 0 && err.code == CF_E_CONTEXT);
    CHECK(cf_ctx_n_past(group[0]) == before && cf_ctx_n_past(tiny) == 16);
    cf_ctx *twice[2] = {group[0], group[0]};
    CHECK(cf_ctx_decode_group(twice, ids, 2, lg, &err) != 0 && cf_ctx_n_past(group[0]) == before);
    cf_ctx_free(tiny);
    for (int i = 0; i < N; i++) {
        cf_ctx_free(group[i]);
        cf_ctx_free(alone[i]);
    }
    free(lg);
    free(want);
    cf_model_free(m);
}

int main(int argc, char **argv)
{
    if (!shared_dir()) {
        fprintf(stderr, "skipped: no ../shared\n");
        return TEST_SKIP;
    }
    for (int i = 1; i < argc; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "models/%s", argv[i]);
        for (int threads = 1; threads <= 3; threads++)
            check_model(rel, CF_KV_F32, threads, 0);
    }
    check_model("models/stories260K.gguf", CF_KV_F16, 2, 0);
    check_model("models/qwen3.Q8_0.gguf", CF_KV_Q8_0, 2, 0);
    cf_err err;
    if (cf_gpu_count(&err) > 0)
        check_model("models/stories260K.gguf", CF_KV_F16, 2, -1);
    else
        fprintf(stderr, "no GPU, none offloaded: %s\n", err.msg);
    return test_summary("test_group");
}
