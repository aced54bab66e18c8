/* Constrained decoding on the shared random-weight models: sampled at
 * temperature 1 over several seeds, every output is a prefix of a sentence
 * of the grammar, and a whole one when it ends (the JSON grammar; a schema
 * whose documents are short, so that every output ends); every token drawn
 * is one the mask allowed; greedy output is the same tokens at 1 and 2
 * threads. */
#include <string.h>

#include "confab/grammar.h"
#include "confab/model.h"
#include "confab/sampler.h"
#include "harness.h"

static const char schema[] =
    "{\"type\": \"object\", \"properties\": {\"ok\": {\"type\": \"boolean\"}, \"kind\": "
    "{\"enum\": [\"cat\", \"dog\", 7]}, \"n\": {\"type\": \"integer\"}, \"tags\": {\"type\": "
    "\"array\", \"items\": {\"type\": \"null\"}, \"maxItems\": 3}}, \"required\": [\"ok\", "
    "\"kind\", \"n\"]}";

typedef struct out {
    char text[8192];
    size_t len;
    int32_t ids[400];
    int n;
    bool ended;
} out;

/* Up to n tokens after the prompt under the grammar; -1 on an error. */
static int generate(cf_model *m, const cf_tokenizer *tok, const cf_grammar *g, int threads,
                    float temp, uint64_t seed, int n, out *o)
{
    cf_err err;
    cf_ctx *ctx = NULL;
    cf_sampler *smp = NULL;
    cf_constraint *c = NULL;
    cf_tokens prompt = {0};
    int32_t V = cf_model_hparams(m)->n_vocab;
    float *logits = malloc((size_t)V * sizeof *logits);
    cf_sampler_params sp;
    cf_sampler_params_default(&sp);
    sp.temp = temp;
    cf_ctx_params cp = {.n_ctx = 512, .n_threads = threads};
    *o = (out){0};
    int rc = -1;
    if (!logits || cf_ctx_new(m, &cp, &ctx, &err) || cf_sampler_create(V, &sp, seed, &smp, &err) ||
        cf_constraint_create(g, tok, &c, &err) ||
        cf_tokenize(tok, "The answer as JSON:", 19, true, false, &prompt, &err) ||
        cf_ctx_decode(ctx, prompt.ids, (int)prompt.n, logits, false, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const uint64_t *mask = cf_constraint_mask(c);
        cf_sampler_set_mask(smp, mask);
        int32_t id = cf_sampler_sample(smp, logits);
        CHECKF(mask[id / 64] >> (id % 64) & 1, "token %d drawn outside the mask", id);
        o->ids[o->n++] = id;
        if (cf_tok_is_eog(tok, id)) {
            CHECK(cf_constraint_can_end(c));
            o->ended = true;
            break;
        }
        if (cf_constraint_accept(c, id, &err)) {
            CHECKF(0, "%s", err.msg);
            goto done;
        }
        cf_str p = cf_tok_piece(tok, id, false);
        if (o->len + p.len < sizeof o->text) {
            memcpy(o->text + o->len, p.ptr, p.len);
            o->len += p.len;
        }
        cf_sampler_accept(smp, id);
        if (cf_ctx_decode(ctx, &id, 1, logits, false, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            goto done;
        }
    }
    rc = 0;
done:
    cf_tokens_free(&prompt);
    cf_constraint_free(c);
    cf_sampler_free(smp);
    cf_ctx_free(ctx);
    free(logits);
    return rc;
}

static void check_model(const char *file)
{
    cf_err err;
    cf_model *m;
    cf_tokenizer *tok;
    if (cf_model_load(shared_path(file), NULL, &m, &err) ||
        cf_tokenizer_create(cf_model_gguf(m), &tok, &err)) {
        CHECKF(0, "%s: %s", file, err.msg);
        return;
    }
    cf_grammar *json, *sch;
    CHECKF(!cf_grammar_json(&json, &err), "%s", err.msg);
    CHECKF(!cf_grammar_from_json_schema(schema, &sch, &err), "%s", err.msg);
    static out o, o2;
    int ended = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        CHECK(!generate(m, tok, json, 2, 1.0f, seed, 120, &o));
        CHECKF(cf_grammar_matches(json, o.text, o.len, o.ended), "%s seed %llu: '%.*s'", file,
               (unsigned long long)seed, (int)o.len, o.text);
        CHECK(!generate(m, tok, sch, 2, 1.0f, seed, 400, &o));
        CHECKF(o.ended && cf_grammar_matches(sch, o.text, o.len, true),
               "%s seed %llu (schema, ended %d): '%.*s'", file, (unsigned long long)seed, o.ended,
               (int)o.len, o.text);
        ended += o.ended;
        if (seed == 1)
            printf("%s, the schema, seed 1: %.*s\n", file, (int)o.len, o.text);
    }
    /* greedy: the same tokens at 1 and 2 threads */
    CHECK(!generate(m, tok, sch, 1, 0, 1, 400, &o));
    CHECK(!generate(m, tok, sch, 2, 0, 1, 400, &o2));
    CHECKF(o.n == o2.n && !memcmp(o.ids, o2.ids, (size_t)o.n * sizeof *o.ids),
           "%s: greedy differs between 1 and 2 threads", file);
    cf_grammar_free(json);
    cf_grammar_free(sch);
    cf_tokenizer_free(tok);
    cf_model_free(m);
}

int main(void)
{
    if (!shared_dir()) {
        fprintf(stderr, "no ../shared: skipped\n");
        return TEST_SKIP;
    }
    check_model("models/quant-Q8_0.gguf");
    check_model("models/qwen3-bpe.Q8_0.gguf");
    return test_summary("grammar-decode");
}
