/* Forward-pass conformance against llama.cpp's reference outputs
 * (../shared/refs, tolerances as its README recommends for an engine that
 * rounds activations like llama.cpp):
 *   - logits after one batched prefill, full vocabulary, and the top-20 ids;
 *   - the 32 greedy steps teacher-forced (reference tokens fed in): the
 *     recorded top-5 logits within tolerance and the same argmax wherever
 *     the recorded margin exceeds twice the tolerance; for F32 files the
 *     free-running greedy continuation is identical;
 *   - token-by-token prefill, and a prefill split in two, give exactly the
 *     bits of the batched one, and so do 2 and 3 threads.
 * usage: test_refs MODEL_STEM   (e.g. quant-Q4_K)   prints the max diff. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "confab/gpu.h"
#include "confab/model.h"
#include "harness.h"
#include "json_file.h"

/* flips: greedy steps or prefills (of all prompts) allowed up to
 * flip_max, where a near-tie in a router picks another expert
 * (README-2026 part B, 7) */
typedef struct tol {
    double max_abs, rms;
    int flips;
    double flip_max;
    double flip_share; /* or flips at up to this share of the positions */
} tol;

/* With layers on a GPU (test_refs STEM gpu): the README's column for an
 * engine that does not round activations (its matmuls read F32); when no
 * layer could go there, the CPU's. */
static bool on_gpu;

/* The quantized files' column "engine without activation rounding" of
 * README-2026: the MoE files' expert choices flip at near-ties that the
 * rounding decides, so part A asks 0.75 at 90 % of the positions, parts
 * B-D an RMS alone (the max where experts flip, as seen there). */
static tol gpu_tolerance_for(const char *stem)
{
    static const struct {
        const char *stem;
        tol t;
    } table[] = {
        {"mixtral.Q8_0", {0.75, 0.2, 0, 6.0, 0.1}},
        {"qwen3moe.Q8_0", {0.75, 0.2, 0, 6.0, 0.1}},
        {"gpt-oss.MXFP4_MOE", {0.75, 0.2, 0, 6.0, 0.1}},
        {"glm4moe.Q8_0", {6.8, 1.0, 0, 0, 0}},
        {"qwen35moe.Q8_0", {5.0, 1.5, 0, 0, 0}},
        {"qwen3next.Q8_0", {6.0, 1.5, 0, 0, 0}},
        {"nemotron_h_moe.Q8_0", {6.0, 1.5, 0, 0, 0}},
        {"lfm2moe.Q8_0", {2.0, 0.4, 0, 0, 0}},
        {"granitehybridmoe.Q8_0", {2.0, 0.4, 0, 0, 0}},
        {"deepseek2-lite.Q8_0", {2.0, 0.6, 0, 0, 0}},
        /* "none useful (max 9, RMS 2.4)": the same order, as a bound */
        {"deepseek2-v3.Q8_0", {10.0, 3.0, 0, 0, 0}},
        {"gemma4moe.Q8_0", {8.0, 2.5, 0, 0, 0}}, /* B: "none useful (RMS 2.5)" */
        {"mistral3.Q8_0", {2.0, 0.5, 0, 0, 0}},
        {"qwen35.Q8_0", {3.0, 0.6, 0, 0, 0}},
        {"gemma4.Q8_0", {2.0, 0.6, 0, 0, 0}},
        {"lfm2.Q8_0", {1.0, 0.3, 0, 0, 0}},
        {"granitehybrid.Q8_0", {0.5, 0.15, 0, 0, 0}},
        {"nemotron_h.Q8_0", {0.5, 0.15, 0, 0, 0}},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (!strcmp(stem, table[i].stem))
            return table[i].t;
    if (!strcmp(stem, "gemma4.F32"))
        return (tol){0.03, 0.03, 0, 0, 0};
    if (strstr(stem, "F32") || strncmp(stem, "stories260K", 11) == 0)
        return (tol){2e-4, 2e-4, 0, 0, 0};
    if (strstr(stem, "BF16"))
        return (tol){0.15, 0.15, 0, 0, 0};
    if (strstr(stem, "F16"))
        return (tol){0.02, 0.02, 0, 0, 0};
    return (tol){0.75, 0.2, 0, 0, 0};
}

static tol tolerance_for(const char *stem)
{
    if (on_gpu)
        return gpu_tolerance_for(stem);
    /* README-2026 D8, for an engine that rotates and rounds as llama.cpp */
    if (strstr(stem, ".kv-q8_0"))
        return (tol){0.5, 0.15, 0, 0, 0};
    if (strstr(stem, ".kv-q4_0"))
        return (tol){1.5, 0.3, 0, 0, 0};
    if (strstr(stem, ".kv-f16"))
        return (tol){0.6, 0.2, 0, 0, 0};
    /* the hybrid models' quantized files, as README-2026 part B recommends
     * for an engine that rounds activations like llama.cpp */
    if (!strcmp(stem, "qwen35.Q8_0"))
        return (tol){0.6, 0.2, 0, 0, 0};
    if (!strcmp(stem, "qwen35moe.Q8_0"))
        return (tol){0.3, 0.1, 4, 2.5, 0};
    /* README-2026 C7: max 0.15 except where an expert choice flips
     * (max 2 there for an engine that does not round as llama.cpp) */
    if (!strcmp(stem, "lfm2moe.Q8_0"))
        return (tol){0.15, 0.05, 2, 2.0, 0};
    /* README-2026 D7: 0.3, RMS 0.1, and flips (6.8 seen); here one step
     * whose router had two experts 2.9e-4 apart */
    if (!strcmp(stem, "glm4moe.Q8_0"))
        return (tol){0.3, 0.1, 2, 2.5, 0};
    /* the Mamba2 families' (README-2026 part C, 7) */
    if (!strcmp(stem, "granitehybrid.Q8_0") || !strcmp(stem, "granitehybridmoe.Q8_0") ||
        !strcmp(stem, "nemotron_h.Q8_0"))
        return (tol){0.15, 0.05, 0, 0, 0};
    if (!strcmp(stem, "nemotron_h_moe.Q8_0"))
        return (tol){0.2, 0.08, 0, 0, 0};
    /* README-2026 C7: RMS 0.08, max 0.2 but at expert flips (up to 1.3 seen
     * in its float64 reading; here one, 1.93, at the last step of one
     * prompt, every other step within 0.3) */
    if (!strcmp(stem, "qwen3next.Q8_0"))
        return (tol){0.3, 0.08, 1, 2.5, 0};
    /* README-2026 D7 for an engine that rounds like llama.cpp.  lite: the
     * long prompt's last token has a near-tie in its last layer's router
     * (0.023 between the 2nd and 3rd expert) where llama.cpp chose the 3rd:
     * forced to it, the prompt passes at 0.3 */
    if (!strcmp(stem, "deepseek2-lite.Q8_0"))
        return (tol){0.6, 0.15, 2, 1.0, 0};
    if (!strcmp(stem, "deepseek2-v3.Q8_0"))
        return (tol){0.5, 0.15, 8, 4.0, 0};
    /* gemma4's GELU goes through ggml's F16 table: tiny input differences
     * move its output by an F16 step */
    if (!strcmp(stem, "gemma4.F32"))
        return (tol){0.01, 0.01, 0, 0, 0};
    if (!strcmp(stem, "gemma4.Q8_0"))
        return (tol){0.75, 0.2, 0, 0, 0};
    /* README-2026: with 6 MoE layers choosing 2 of 8, llama.cpp does not
     * agree with itself at the Q8_0 level; RMS 0.8 is the useful bound (an
     * independent float64 reading rounding as llama.cpp: max 4.8 in the
     * steps, 1.0 / RMS 0.24 at the prompt's end) */
    if (!strcmp(stem, "gemma4moe.Q8_0"))
        return (tol){5.0, 0.8, 0, 0, 0};
    if (strstr(stem, "F32") || strncmp(stem, "stories260K", 11) == 0)
        return (tol){2e-4, 2e-4, 0, 0, 0};
    if (strstr(stem, "BF16"))
        return (tol){0.05, 0.05, 0, 0, 0};
    if (strstr(stem, "F16"))
        return (tol){0.01, 0.01, 0, 0, 0};
    return (tol){0.3, 0.1, 0, 0, 0};
}

static bool exact_greedy(const char *stem)
{
    return strstr(stem, "F32") || strncmp(stem, "stories260K", 11) == 0;
}

static int32_t *json_ids(const cf_json *arr, int *n)
{
    *n = arr ? (int)arr->n : 0;
    int32_t *ids = malloc(((size_t)*n + 1) * sizeof *ids);
    for (int i = 0; i < *n; i++)
        ids[i] = (int32_t)arr->items[i]->i;
    return ids;
}

static int argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

static double max_abs_diff(const float *a, const float *b, int n, double *rms)
{
    double mx = 0, sq = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        mx = d > mx ? d : mx;
        sq += d * d;
    }
    if (rms)
        *rms = sqrt(sq / n);
    return mx;
}

typedef struct stats {
    double prefill_max, prefill_rms, steps_max, tbt_max;
    int argmax_checked, top20_checked, flips, flips_allowed;
} stats;

/* Evaluate the prompt batched from an empty cache, logits of the last. */
static int prefill(cf_ctx *c, const int32_t *ids, int n, float *logits)
{
    cf_err err;
    cf_ctx_kv_truncate(c, 0, &err);
    if (cf_ctx_decode(c, ids, n, logits, false, &err) != 0) {
        CHECKF(0, "decode: %s", err.msg);
        return -1;
    }
    return 0;
}

static void check_prompt(const char *stem, const cf_model *m, cf_ctx *c1, cf_ctx *c2, cf_ctx *c3,
                         const cf_json *prompt, stats *st)
{
    const int V = cf_model_hparams(m)->n_vocab;
    const tol t = tolerance_for(stem);
    const char *id = cf_json_get(prompt, "id")->str;
    int n;
    int32_t *ids = json_ids(cf_json_get(prompt, "tokens"), &n);
    float *lg = malloc((size_t)V * sizeof *lg), *lg2 = malloc((size_t)V * sizeof *lg2);
    float *ref = malloc((size_t)V * sizeof *ref);
    cf_err err;

    /* the stored full-vocabulary logits */
    char rel[256];
    snprintf(rel, sizeof rel, "%s/%s", strstr(stem, ".kv-") ? "refs-kvq" : "refs",
             cf_json_get(prompt, "logits_bin")->str);
    FILE *f = fopen(shared_path(rel), "rb");
    bool have_ref = f && fread(ref, sizeof(float), (size_t)V, f) == (size_t)V;
    if (f)
        fclose(f);
    CHECKF(have_ref, "%s: cannot read %s", stem, rel);
    if (!have_ref || prefill(c1, ids, n, lg) != 0)
        goto out;

    double rms, d = max_abs_diff(lg, ref, V, &rms);
    /* an expert flip at the prompt's last token moves its whole row: one of
     * the flips allowed, and its top 20 not compared */
    const bool flipped = (d > t.max_abs || rms > t.rms) && d <= t.flip_max && st->flips < st->flips_allowed;
    if (flipped)
        st->flips++;
    else
        CHECKF(d <= t.max_abs && rms <= t.rms,
               "%s/%s: prefill logits max |diff| %.3g rms %.3g (tol %.3g / %.3g)", stem, id, d, rms, t.max_abs,
               t.rms);
    st->prefill_max = d > st->prefill_max ? d : st->prefill_max;
    st->prefill_rms = rms > st->prefill_rms ? rms : st->prefill_rms;

    /* top-20 ids agree, except between reference neighbours closer than tol */
    const cf_json *top = cf_json_get(prompt, "top20");
    for (size_t i = 0; !flipped && i < top->n; i++) {
        int tid = (int)top->items[i]->items[0]->i;
        double tl = json_num(top->items[i]->items[1]);
        int above = 0, near = 0;
        for (int v = 0; v < V; v++) {
            above += lg[v] > lg[tid];
            near += fabs(ref[v] - tl) <= 2 * t.max_abs && v != tid;
        }
        CHECKF(fabs(lg[tid] - tl) <= t.max_abs, "%s/%s: top20 id %d logit %.6g vs %.6g", stem, id,
               tid, lg[tid], tl);
        CHECKF(above <= (int)i + near, "%s/%s: top20 id %d ranks %d, reference %zu", stem, id, tid,
               above, i);
        st->top20_checked++;
    }

    /* 2 and 3 threads: bit-identical */
    if (prefill(c2, ids, n, lg2) == 0)
        CHECKF(memcmp(lg, lg2, (size_t)V * sizeof *lg) == 0, "%s/%s: 2 threads differ from 1 (%.3g)",
               stem, id, max_abs_diff(lg, lg2, V, NULL));
    if (prefill(c3, ids, n, lg2) == 0)
        CHECKF(memcmp(lg, lg2, (size_t)V * sizeof *lg) == 0, "%s/%s: 3 threads differ from 1 (%.3g)",
               stem, id, max_abs_diff(lg, lg2, V, NULL));

    /* the first half, then the rest (a chat's next turn): bit-identical */
    if (n >= 2) {
        cf_ctx_kv_truncate(c3, 0, &err);
        bool ok = cf_ctx_decode(c3, ids, n / 2, NULL, false, &err) == 0 &&
                  cf_ctx_decode(c3, ids + n / 2, n - n / 2, lg2, false, &err) == 0;
        CHECKF(ok && memcmp(lg, lg2, (size_t)V * sizeof *lg) == 0,
               "%s/%s: prefill split at %d differs (%.3g)", stem, id, n / 2,
               ok ? max_abs_diff(lg, lg2, V, NULL) : -1.0);
    }

    /* token-by-token prefill */
    cf_ctx_kv_truncate(c2, 0, &err);
    for (int i = 0; i < n; i++)
        if (cf_ctx_decode(c2, &ids[i], 1, i == n - 1 ? lg2 : NULL, false, &err) != 0) {
            CHECKF(0, "%s: %s", stem, err.msg);
            goto out;
        }
    d = max_abs_diff(lg, lg2, V, NULL);
    CHECKF(memcmp(lg, lg2, (size_t)V * sizeof *lg) == 0, "%s/%s: token-by-token prefill differs by %.3g",
           stem, id, d);
    st->tbt_max = d > st->tbt_max ? d : st->tbt_max;

    /* greedy steps, teacher-forced; c1 holds the prompt and lg its logits */
    const cf_json *greedy = cf_json_get(prompt, "greedy");
    const cf_json *steps = cf_json_get(greedy, "steps");
    int ng;
    int32_t *gen = json_ids(cf_json_get(greedy, "tokens"), &ng);
    bool free_running_same = true;
    for (int k = 0; k < ng; k++) {
        const cf_json *s = steps->items[k];
        const cf_json *top5 = cf_json_get(s, "top5");
        double step_max = 0;
        for (size_t i = 0; i < top5->n; i++) {
            int tid = (int)top5->items[i]->items[0]->i;
            double dd = fabs(lg[tid] - json_num(top5->items[i]->items[1]));
            step_max = dd > step_max ? dd : step_max;
        }
        st->steps_max = step_max > st->steps_max ? step_max : st->steps_max;
        const bool flip = step_max > t.max_abs && step_max <= t.flip_max && st->flips < st->flips_allowed;
        if (flip)
            st->flips++;
        else
            CHECKF(step_max <= t.max_abs, "%s/%s: step %d logits off by %.3g", stem, id, k, step_max);
        int am = argmax(lg, V);
        if (!flip && json_num(cf_json_get(s, "margin")) > 2 * t.max_abs) {
            CHECKF(am == gen[k], "%s/%s: step %d argmax %d, reference %d (margin %.3g)", stem, id, k,
                   am, gen[k], json_num(cf_json_get(s, "margin")));
            st->argmax_checked++;
        }
        free_running_same &= am == gen[k];
        if (k + 1 < ng && cf_ctx_decode(c1, &gen[k], 1, lg, false, &err) != 0) {
            CHECKF(0, "%s: %s", stem, err.msg);
            break;
        }
    }
    if (exact_greedy(stem))
        CHECKF(free_running_same, "%s/%s: greedy continuation differs", stem, id);
    free(gen);
out:
    free(ids);
    free(lg);
    free(lg2);
    free(ref);
}

/* stories260K.bin + tok512.bin (llama2.c) give exactly the GGUF's logits. */
static void check_llama2c(const cf_json *prompts)
{
    cf_model *a, *b;
    cf_err err;
    if (cf_model_load(shared_path("models/stories260K.gguf"), NULL, &a, &err) != 0 ||
        cf_model_load(shared_path("models/stories260K.bin"), NULL, &b, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    cf_ctx_params p = {.n_ctx = 512, .n_threads = 1};
    cf_ctx *ca, *cb;
    CHECK(cf_ctx_new(a, &p, &ca, &err) == 0 && cf_ctx_new(b, &p, &cb, &err) == 0);
    const int V = cf_model_hparams(a)->n_vocab;
    float *la = malloc((size_t)V * sizeof *la), *lb = malloc((size_t)V * sizeof *lb);
    for (size_t i = 0; i < prompts->n; i++) {
        int n;
        int32_t *ids = json_ids(cf_json_get(prompts->items[i], "tokens"), &n);
        if (prefill(ca, ids, n, la) == 0 && prefill(cb, ids, n, lb) == 0)
            CHECKF(memcmp(la, lb, (size_t)V * sizeof *la) == 0, "llama2.c logits differ by %.3g",
                   max_abs_diff(la, lb, V, NULL));
        free(ids);
    }
    free(la);
    free(lb);
    cf_ctx_free(ca);
    cf_ctx_free(cb);
    cf_model_free(a);
    cf_model_free(b);
}

int main(int argc, char **argv)
{
    if (argc != 2 && (argc != 3 || strcmp(argv[2], "gpu"))) {
        fprintf(stderr, "usage: test_refs MODEL_STEM [gpu]\n");
        return 2;
    }
    if (!shared_dir())
        return TEST_SKIP;
    on_gpu = argc == 3;
    cf_err no_gpu;
    if (on_gpu && cf_gpu_count(&no_gpu) == 0) {
        printf("skipped: %s\n", no_gpu.msg);
        return TEST_SKIP;
    }
    const char *stem = argv[1], *path;
    /* MODEL.kv-CACHE: refs-kvq's files, with that cache (D8) */
    cf_json *j = strstr(stem, ".kv-") ? refs_load_dir("refs-kvq", stem, &path) : refs_load(stem, &path);
    CHECKF(j != NULL, "cannot read the refs of %s", stem);
    if (!j)
        return test_summary(stem);
    cf_model *m;
    cf_err err;
    if (cf_model_load(path, NULL, &m, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        cf_json_free(j);
        return test_summary(stem);
    }
    /* -ngl 99: every layer and the output */
    cf_ctx_params p1 = {.n_ctx = 1024, .n_threads = 1, .n_gpu_layers = on_gpu ? 99 : 0};
    const cf_json *settings = cf_json_get(j, "settings");
    if (strstr(stem, ".kv-")) {
        p1.type_k = (cf_kv_type)cf_kv_type_parse(cf_json_get(settings, "type_k")->str);
        p1.type_v = (cf_kv_type)cf_kv_type_parse(cf_json_get(settings, "type_v")->str);
    }
    cf_ctx_params p2 = p1, p3 = p1;
    p2.n_threads = 2;
    p3.n_threads = 3;
    cf_ctx *c1, *c2, *c3;
    CHECK(cf_ctx_new(m, &p1, &c1, &err) == 0 && cf_ctx_new(m, &p2, &c2, &err) == 0 &&
          cf_ctx_new(m, &p3, &c3, &err) == 0);
    const bool gpu_asked = on_gpu;
    if (gpu_asked) {
        bool out;
        on_gpu = cf_ctx_gpu_layers(c1, &out) > 0;
        printf("%s\n", cf_ctx_gpu_note(c1));
    }
    stats st = {0};
    const cf_json *prompts = cf_json_get(j, "prompts");
    const tol t = tolerance_for(stem);
    /* lavapipe runs a pass in a good part of a second: the first prompts,
     * unless the share of flips is judged (the README's, over them all) */
    const size_t n_prompts = gpu_asked && prompts->n > 3 && t.flip_share == 0 ? 3 : prompts->n;
    int positions = 0; /* the prompts' ends and greedy steps */
    for (size_t i = 0; i < n_prompts; i++)
        positions += 1 + (int)cf_json_get(cf_json_get(prompts->items[i], "greedy"), "tokens")->n;
    st.flips_allowed = t.flip_share > 0 ? (int)(t.flip_share * positions) : t.flips;
    for (size_t i = 0; i < n_prompts; i++)
        check_prompt(stem, m, c1, c2, c3, prompts->items[i], &st);
    if (strcmp(stem, "stories260K") == 0)
        check_llama2c(prompts);
    printf("%-18s prefill max %.3g rms %.3g | greedy steps max %.3g (%d expert flips), %d argmax checked | "
           "tbt %.3g\n",
           stem, st.prefill_max, st.prefill_rms, st.steps_max, st.flips, st.argmax_checked, st.tbt_max);
    cf_ctx_free(c1);
    cf_ctx_free(c2);
    cf_ctx_free(c3);
    cf_model_free(m);
    cf_json_free(j);
    return test_summary(stem);
}
