/* Tokenizer behaviour beyond the reference vectors: typed text never
 * becomes control tokens, user-defined tokens and Phi-3's rstrip, small
 * hand-made vocabularies whose merges can be worked out by hand, errors
 * for unsupported tokenizers, streaming UTF-8, and random input. */
#include <string.h>

#include "harness.h"
#include "tok_util.h"

static cf_tokens tok(const cf_tokenizer *t, const char *s, bool add_special, bool parse_special)
{
    cf_tokens v = {0};
    cf_err err;
    CHECK(cf_tokenize(t, s, strlen(s), add_special, parse_special, &v, &err) == 0);
    return v;
}

static bool ids_are(const cf_tokens *v, const cf_token *want, size_t n)
{
    return v->n == n && memcmp(v->ids, want, n * sizeof *want) == 0;
}

static bool has_id(const cf_tokens *v, cf_token id)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->ids[i] == id)
            return true;
    return false;
}

/* Every control or unknown token's text, typed inside other text, stays
 * text without parse_special (and decodes back), and becomes the token
 * with it. */
static void check_no_control_from_text(const char *file)
{
    cf_tokenizer *t = tok_open(shared_path(file));
    CHECKF(t != NULL, "%s", file);
    if (!t)
        return;
    int n_checked = 0, n_leak = 0, n_roundtrip_bad = 0, n_missing = 0;
    for (cf_token id = 0; id < cf_tok_n_vocab(t); id++) {
        if (!(cf_tok_attr(t, id) & (CF_TOKEN_ATTR_CONTROL | CF_TOKEN_ATTR_UNKNOWN)))
            continue;
        cf_str s = cf_tok_text(t, id);
        char text[512];
        int len = snprintf(text, sizeof text, "x%.*s y", (int)(s.len < 400 ? s.len : 400), s.ptr);
        cf_tokens v = {0};
        cf_err err;
        CHECK(cf_tokenize(t, text, (size_t)len, false, false, &v, &err) == 0);
        for (size_t i = 0; i < v.n; i++)
            n_leak += (cf_tok_attr(t, v.ids[i]) & (CF_TOKEN_ATTR_CONTROL | CF_TOKEN_ATTR_UNKNOWN)) != 0;
        char back[1024];
        size_t blen = cf_detokenize(t, v.ids, v.n, false, false, back, sizeof back);
        n_roundtrip_bad += blen != (size_t)len || memcmp(back, text, (size_t)len) != 0;
        cf_tokens_free(&v);
        v = (cf_tokens){0};
        CHECK(cf_tokenize(t, text, (size_t)len, false, true, &v, &err) == 0);
        n_missing += !has_id(&v, id);
        cf_tokens_free(&v);
        n_checked++;
    }
    printf("%s: %d control/unknown texts: %d leaked, %d not decoded back, %d not parsed\n", file,
           n_checked, n_leak, n_roundtrip_bad, n_missing);
    CHECKF(n_checked > 0 && n_leak == 0 && n_roundtrip_bad == 0 && n_missing == 0, "%s", file);
    cf_tokenizer_free(t);
}

static void check_special_handling(void)
{
    cf_tokenizer *t = tok_open(shared_path("models/phi3.Q8_0.gguf"));
    CHECK(t != NULL);
    if (!t)
        return;
    /* Phi-3: special tokens swallow the whitespace after them */
    cf_tokens v = tok(t, "<|user|>\nTell", false, true);
    const cf_token user_tell[] = {32010, 24948};
    CHECK(ids_are(&v, user_tell, 2));
    cf_tokens_free(&v);
    /* </s> is user-defined in this vocabulary, but an end of generation by
     * its text, which makes it a control token (llama.cpp since 2025): plain
     * text no longer yields it, parsed specials do */
    CHECK(cf_tok_is_eog(t, 2) && (cf_tok_attr(t, 2) & CF_TOKEN_ATTR_CONTROL));
    v = tok(t, "a</s>b", false, false);
    CHECK(!has_id(&v, 2));
    cf_tokens_free(&v);
    v = tok(t, "a</s>b", false, true);
    CHECK(has_id(&v, 2));
    cf_tokens_free(&v);
    /* <|user|> without parse_special is just text */
    v = tok(t, "<|user|>", false, false);
    CHECK(!has_id(&v, 32010) && v.n > 1);
    cf_tokens_free(&v);
    CHECK(cf_tok_is_eog(t, 32007) && cf_tok_is_eog(t, 32000) && !cf_tok_is_eog(t, 32010));
    CHECK(cf_tok_find(t, "<|end|>", 7) == 32007);
    cf_tokenizer_free(t);

    t = tok_open(shared_path("models/qwen2.Q8_0.gguf"));
    CHECK(t != NULL);
    if (!t)
        return;
    cf_token im_end = cf_tok_find(t, "<|im_end|>", 10);
    CHECK(im_end == 151645 && cf_tok_is_control(t, im_end) && cf_tok_is_eog(t, im_end));
    CHECK(cf_tok_find(t, "no such token", 13) == CF_TOKEN_NULL);
    v = tok(t, "<|im_start|>user\nhi<|im_end|>", true, true);
    const cf_token chat[] = {151644, 872, 198, 6023, 151645}; /* no BOS: add_bos is false */
    CHECK(ids_are(&v, chat, 5));
    CHECK(cf_tok_piece(t, 151645, true).len == 10 && cf_tok_piece(t, 151645, false).len == 0);
    cf_tokens_free(&v);
    v = tok(t, "", true, true);
    CHECK(v.n == 0);
    cf_tokens_free(&v);
    CHECK(!cf_tok_is_eog(t, -1) && !cf_tok_is_eog(t, 1 << 30) && cf_tok_text(t, -5).len == 0);
    cf_tokenizer_free(t);

    t = tok_open(shared_path("models/llama-spm.Q8_0.gguf"));
    CHECK(t != NULL);
    if (!t)
        return;
    v = tok(t, "", true, false);
    const cf_token bos[] = {1};
    CHECK(ids_are(&v, bos, 1));
    cf_tokens_free(&v);
    /* the space prefix is dropped again on the way back */
    v = tok(t, "Hello world", true, false);
    char back[64];
    size_t n = cf_detokenize(t, v.ids, v.n, true, false, back, sizeof back);
    CHECK(n == 12 && memcmp(back, " Hello world", 12) == 0); /* llama.cpp keeps it after BOS */
    n = cf_detokenize(t, v.ids + 1, v.n - 1, false, false, back, sizeof back);
    CHECK(n == 11 && memcmp(back, "Hello world", 11) == 0);
    n = cf_detokenize(t, v.ids, v.n, false, true, back, sizeof back);
    CHECK(n == 15 && memcmp(back, "<s> Hello world", 15) == 0);
    CHECK(cf_detokenize(t, v.ids, v.n, false, true, back, 3) == 15 && memcmp(back, "<s>", 3) == 0);
    cf_tokens_free(&v);
    cf_tokenizer_free(t);
}

/* ---- hand-made vocabularies ------------------------------------------------ */

typedef struct vocab_spec {
    const char *model, *pre, *name;
    const char *const *tokens;
    const float *scores;
    const int32_t *types;
    int n;
    const char *const *merges;
    int n_merges;
} vocab_spec;

static cf_tokenizer *make_vocab(const vocab_spec *s, cf_err *err, uint8_t **image)
{
    cf_gguf_writer *w = cf_gguf_writer_new();
    cf_str strs[400];
    if (s->model)
        cf_gguf_w_str(w, "tokenizer.ggml.model", s->model, strlen(s->model));
    if (s->pre)
        cf_gguf_w_str(w, "tokenizer.ggml.pre", s->pre, strlen(s->pre));
    if (s->name)
        cf_gguf_w_str(w, "general.name", s->name, strlen(s->name));
    for (int i = 0; i < s->n; i++)
        strs[i] = (cf_str){s->tokens[i], strlen(s->tokens[i])};
    if (s->n)
        cf_gguf_w_arr_str(w, "tokenizer.ggml.tokens", strs, (uint64_t)s->n);
    if (s->scores)
        cf_gguf_w_arr(w, "tokenizer.ggml.scores", CF_GGUF_FLOAT32, s->scores, (uint64_t)s->n);
    if (s->types)
        cf_gguf_w_arr(w, "tokenizer.ggml.token_type", CF_GGUF_INT32, s->types, (uint64_t)s->n);
    for (int i = 0; i < s->n_merges; i++)
        strs[i] = (cf_str){s->merges[i], strlen(s->merges[i])};
    if (s->merges)
        cf_gguf_w_arr_str(w, "tokenizer.ggml.merges", strs, (uint64_t)s->n_merges);
    size_t len;
    cf_gguf *g = NULL;
    cf_tokenizer *t = NULL;
    *image = NULL;
    if (cf_gguf_writer_header(w, image, &len, err) == 0 &&
        cf_gguf_open_buffer(*image, len, &g, err) == 0 && cf_tokenizer_create(g, &t, err) != 0)
        t = NULL;
    cf_gguf_close(g);
    cf_gguf_writer_free(w);
    return t;
}

static void check_small_spm(void)
{
    /* <unk> <s> </s>, 256 byte tokens, then a few pieces */
    static const char *pieces[] = {"\xe2\x96\x81", "a", "b", "ab", "\xe2\x96\x81" "a",
                                   "\xe2\x96\x81" "ab", "aa", "<s>x"};
    static const float piece_scores[] = {-1, -2, -3, -1.5f, -1, -0.5f, -1, 5};
    const char *tokens[3 + 256 + 8];
    float scores[3 + 256 + 8] = {0};
    int32_t types[3 + 256 + 8];
    char bytes[256][7];
    tokens[0] = "<unk>", tokens[1] = "<s>", tokens[2] = "</s>";
    types[0] = 2, types[1] = 3, types[2] = 3;
    for (int b = 0; b < 256; b++) {
        snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b);
        tokens[3 + b] = bytes[b];
        types[3 + b] = 6;
    }
    for (int i = 0; i < 8; i++) {
        tokens[259 + i] = pieces[i];
        scores[259 + i] = piece_scores[i];
        types[259 + i] = 1;
    }
    vocab_spec s = {"llama", NULL, NULL, tokens, scores, types, 267, NULL, 0};
    cf_err err;
    uint8_t *image;
    cf_tokenizer *t = make_vocab(&s, &err, &image);
    CHECKF(t != NULL, "%s", t ? "" : err.msg);
    if (!t)
        return;
    enum { SP = 259, A, B, AB, SP_A, SP_AB, AA, S_X };
    cf_tokens v = tok(t, "ab", false, false); /* ▁a first (-1 beats -1.5), then ▁ab */
    const cf_token w1[] = {SP_AB};
    CHECK(ids_are(&v, w1, 1));
    cf_tokens_free(&v);
    v = tok(t, "ba", false, false); /* no pair is a token */
    const cf_token w2[] = {SP, B, A};
    CHECK(ids_are(&v, w2, 3));
    cf_tokens_free(&v);
    v = tok(t, "aaa", false, false); /* ties go to the leftmost pair */
    const cf_token w3[] = {SP_A, AA};
    CHECK(ids_are(&v, w3, 2));
    cf_tokens_free(&v);
    v = tok(t, "\xc3\xa7", true, false); /* not in the vocabulary: bytes */
    const cf_token w4[] = {1, SP, 3 + 0xC3, 3 + 0xA7};
    CHECK(ids_are(&v, w4, 4));
    cf_tokens_free(&v);
    /* typed "<s>" stays text */
    v = tok(t, "<s>x", false, false);
    for (size_t i = 0; i < v.n; i++)
        CHECK(!cf_tok_is_control(t, v.ids[i]));
    cf_tokens_free(&v);
    v = tok(t, "<s>x", false, true); /* parsed: <s>, then "x" with a space prefix */
    const cf_token w5[] = {1, SP, 3 + 'x'};
    CHECK(ids_are(&v, w5, 3));
    cf_tokens_free(&v);
    cf_tokenizer_free(t);
    free(image);
}

static void check_small_bpe(void)
{
    /* GPT-2 characters: 'Ġ' is the space byte */
    static const char *tokens[] = {"a", "b", "c", "\xc4\xa0", "ab", "abc", "\xc4\xa0" "a", "bc",
                                   "<|end|>"};
    static const int32_t types[] = {1, 1, 1, 1, 1, 1, 1, 1, 3};
    static const char *merges[] = {"b c", "a b", "ab c", "\xc4\xa0 a", "a bc"};
    vocab_spec s = {"gpt2", "gpt-2", NULL, tokens, NULL, types, 9, merges, 5};
    cf_err err;
    uint8_t *image;
    cf_tokenizer *t = make_vocab(&s, &err, &image);
    CHECKF(t != NULL, "%s", t ? "" : err.msg);
    if (!t)
        return;
    /* "b c" ranks first, so "abc" is a + bc -> "a bc" (rank 4) */
    cf_tokens v = tok(t, "abc", false, false);
    const cf_token w1[] = {5};
    CHECK(ids_are(&v, w1, 1));
    cf_tokens_free(&v);
    v = tok(t, "ab ab", false, false); /* words "ab", " ab": a+b (rank 1) beats Ġ+a (3) */
    const cf_token w2[] = {4, 3, 4};
    CHECK(ids_are(&v, w2, 3));
    cf_tokens_free(&v);
    v = tok(t, "ad", false, false); /* 'd' is no token: dropped, as llama.cpp does */
    const cf_token w3[] = {0};
    CHECK(ids_are(&v, w3, 1));
    cf_tokens_free(&v);
    CHECK(cf_tok_special_ids(t)->bos == CF_TOKEN_NULL); /* the default, 11, is out of range */
    CHECK(cf_tok_is_eog(t, 8));                         /* "<|end|>" ends generation */
    cf_tokenizer_free(t);
    free(image);
}

static void check_errors(void)
{
    static const char *tokens[] = {"a", "b"};
    cf_err err;
    uint8_t *image;
    vocab_spec s = {"bert", NULL, NULL, tokens, NULL, NULL, 2, NULL, 0};
    CHECK(make_vocab(&s, &err, &image) == NULL);
    CHECKF(strstr(err.msg, "'bert'") && strstr(err.msg, "gpt2"), "%s", err.msg);
    free(image);
    static const char *merges[] = {"a b"};
    s = (vocab_spec){"gpt2", "no-such-pre", NULL, tokens, NULL, NULL, 2, merges, 1};
    CHECK(make_vocab(&s, &err, &image) == NULL);
    CHECKF(strstr(err.msg, "'no-such-pre'") && strstr(err.msg, "llama-bpe") &&
               strstr(err.msg, "qwen2"),
           "%s", err.msg);
    free(image);
    s = (vocab_spec){"gpt2", "gpt-2", NULL, tokens, NULL, NULL, 2, NULL, 0};
    CHECK(make_vocab(&s, &err, &image) == NULL);
    CHECKF(strstr(err.msg, "merges"), "%s", err.msg);
    free(image);
    s = (vocab_spec){NULL, NULL, NULL, tokens, NULL, NULL, 2, NULL, 0};
    CHECK(make_vocab(&s, &err, &image) == NULL);
    CHECKF(strstr(err.msg, "tokenizer.ggml.model"), "%s", err.msg);
    free(image);
    s = (vocab_spec){"llama", NULL, NULL, tokens, NULL, NULL, 0, NULL, 0};
    CHECK(make_vocab(&s, &err, &image) == NULL);
    CHECKF(strstr(err.msg, "tokenizer.ggml.tokens"), "%s", err.msg);
    free(image);
    /* SPM's default EOS id 2 is out of this vocabulary: dropped */
    s = (vocab_spec){"llama", NULL, NULL, tokens, NULL, NULL, 2, NULL, 0};
    cf_tokenizer *t = make_vocab(&s, &err, &image);
    CHECKF(t && cf_tok_special_ids(t)->eos == CF_TOKEN_NULL, "%s", t ? "" : err.msg);
    cf_tokenizer_free(t);
    free(image);
}

/* ---- streaming UTF-8 ----------------------------------------------------- */

static size_t feed(cf_utf8_stream *s, const char *in, size_t n, char *out)
{
    return cf_utf8_stream_feed(s, in, n, out);
}

static void check_utf8_stream(void)
{
    cf_utf8_stream s = {0};
    char out[64];
    const char llama[] = "\xf0\x9f\xa6\x99"; /* U+1F999, split over three pieces */
    CHECK(feed(&s, llama, 1, out) == 0);
    CHECK(feed(&s, llama + 1, 2, out) == 0);
    CHECK(feed(&s, llama + 3, 1, out) == 4 && memcmp(out, llama, 4) == 0);
    CHECK(feed(&s, "ab\xc3", 3, out) == 2 && memcmp(out, "ab", 2) == 0);
    CHECK(feed(&s, "\xa9!", 2, out) == 3 && memcmp(out, "\xc3\xa9!", 3) == 0);
    /* a broken sequence: U+FFFD, then the byte that broke it */
    CHECK(feed(&s, "\xe2\x82(", 3, out) == 4 && memcmp(out, "\xef\xbf\xbd(", 4) == 0);
    /* invalid bytes and forms: stray continuation, overlong, surrogate */
    CHECK(feed(&s, "\x80", 1, out) == 3);
    CHECK(feed(&s, "\xc0\xaf", 2, out) == 6);
    CHECK(feed(&s, "\xed\xa0\x80", 3, out) == 9);
    CHECK(feed(&s, "\xf4\x90", 2, out) == 6);
    /* flush: what never completed */
    CHECK(feed(&s, "x\xe4\xb8", 3, out) == 1);
    CHECK(cf_utf8_stream_flush(&s, out) == 3 && memcmp(out, "\xef\xbf\xbd", 3) == 0);
    CHECK(cf_utf8_stream_flush(&s, out) == 0);

    /* the byte tokens of an emoji, piece by piece: printed once, whole
     * (a shared vocabulary: without ../shared, the rest stands alone) */
    if (!shared_dir())
        return;
    cf_tokenizer *t = tok_open(shared_path("models/llama-spm.Q8_0.gguf"));
    CHECK(t != NULL);
    if (!t)
        return;
    cf_tokens v = tok(t, "a \xf0\x9f\xa6\x99 b", false, false);
    CHECK(v.n >= 6);
    char text[64];
    size_t n = 0, prints = 0;
    cf_utf8_stream st = {0};
    for (size_t i = 0; i < v.n; i++) {
        cf_str p = cf_tok_piece(t, v.ids[i], false);
        char o[CF_UTF8_STREAM_OUT(16)];
        size_t k = cf_utf8_stream_feed(&st, p.ptr, p.len, o);
        prints += k > 0;
        memcpy(text + n, o, k);
        n += k;
    }
    n += cf_utf8_stream_flush(&st, text + n);
    CHECK(n == 9 && memcmp(text, " a \xf0\x9f\xa6\x99 b", 9) == 0);
    CHECK(prints < v.n); /* the emoji's partial pieces printed nothing */
    cf_tokens_free(&v);
    cf_tokenizer_free(t);
}

/* ---- random input -------------------------------------------------------- */

static uint64_t rng_state = 88172645463325252ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)rng_state;
}

/* A random text: ASCII, whole UTF-8 characters, and stray bytes that are
 * no lead byte (with any_bytes, any byte at all). */
static size_t random_text(char *text, size_t cap, bool any_bytes)
{
    static const char *const chars[] = {" ", "a", "Z", "0", "'", "\n", "\t", "<|", ">", "\xc3\xa9",
                                        "\xe4\xb8\xad", "\xf0\x9f\xa6\x99", "\x80", "\xbf"};
    size_t len = 0, want = rnd() % cap;
    while (len + 4 <= want) {
        uint32_t r = rnd();
        if (any_bytes && r % 4 == 0) {
            text[len++] = (char)(r >> 8);
            continue;
        }
        const char *c = chars[(r >> 8) % (sizeof chars / sizeof chars[0])];
        memcpy(text + len, c, strlen(c));
        len += strlen(c);
    }
    return len;
}

/* Random input never crashes and gives ids in range; an SPM vocabulary with
 * byte fallback gives back any text that is UTF-8 but for stray
 * non-lead bytes.  (Not any bytes: a lead byte always takes the next bytes
 * into its character, so a space after a cut-off sequence comes back as
 * U+2581's bytes, as in llama.cpp.) */
static void check_random(const char *file, bool bytes_back)
{
    cf_tokenizer *t = tok_open(shared_path(file));
    CHECK(t != NULL);
    if (!t)
        return;
    int bad = 0;
    for (int it = 0; it < 600; it++) {
        char text[200];
        bool any = it % 2;
        size_t len = random_text(text, sizeof text, any);
        for (int special = 0; special < 2; special++) {
            cf_tokens v = {0};
            cf_err err;
            CHECK(cf_tokenize(t, text, len, special, special, &v, &err) == 0);
            for (size_t i = 0; i < v.n; i++)
                CHECK(v.ids[i] >= 0 && v.ids[i] < cf_tok_n_vocab(t));
            char back[1024];
            size_t n = cf_detokenize(t, v.ids, v.n, true, true, back, sizeof back);
            if (bytes_back && !any && !special && (n != len || memcmp(back, text, len) != 0))
                bad++;
            cf_tokens_free(&v);
        }
    }
    CHECKF(bad == 0, "%s: %d random texts did not come back", file, bad);
    cf_tokenizer_free(t);
}

int main(void)
{
    check_small_spm();
    check_small_bpe();
    check_errors();
    check_utf8_stream();
    if (!shared_dir())
        return test_summary("tok-unit");
    check_special_handling();
    static const char *const files[] = {
        "models/llama-spm.Q8_0.gguf", "models/phi3.Q8_0.gguf",     "models/gpt2.F16.gguf",
        "models/llama-bpe.Q8_0.gguf", "models/qwen2.Q8_0.gguf",    "models/stories260K.gguf",
        "vocab/ggml-vocab-gemma3.gguf", "vocab/ggml-vocab-deepseek-v3.gguf",
        "vocab/ggml-vocab-falcon.gguf", "vocab/ggml-vocab-starcoder.gguf"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        check_no_control_from_text(files[i]);
    check_random("models/llama-spm.Q8_0.gguf", true);
    check_random("models/stories260K.gguf", true);
    check_random("models/qwen2.Q8_0.gguf", false);
    check_random("vocab/ggml-vocab-deepseek-llm.gguf", false);
    return test_summary("tok-unit");
}
