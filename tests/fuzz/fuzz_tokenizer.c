/* Tokenizer encode and decode on every kind of vocabulary.  Input: a byte
 * choosing the vocabulary, a byte of flags, then the text.  The
 * vocabularies: the shared SPM ones and the BPE ones with their own
 * pre-tokenizers, then the GPT-2 vocabulary under each pre-tokenizer name
 * confab knows (so every pre-tokenizer runs).  Each is loaded on first use
 * and kept. */
#include <stdlib.h>
#include <string.h>

#include "confab/tokenizer.h"
#include "fuzz_util.h"
#include "tokenizer_internal.h"

enum {
    F_ADD_SPECIAL = 1,
    F_PARSE_SPECIAL = 2,
    F_REMOVE_SPECIAL = 4, /* when decoding */
    F_UNPARSE_SPECIAL = 8,
    F_PARTS = 16, /* the text is parts: split at each 0x01, TEXT and LITERAL in turn */
    F_IDS = 32,   /* the text is also decoded as little-endian u16 ids */
};

static const char *const files[] = {
    "models/stories260K.gguf",             "vocab/ggml-vocab-llama-spm.gguf",
    "vocab/ggml-vocab-phi-3.gguf",         "vocab/ggml-vocab-gemma3.gguf",
    "vocab/ggml-vocab-baichuan.gguf",      "vocab/ggml-vocab-gpt-2.gguf",
    "vocab/ggml-vocab-llama-bpe.gguf",     "vocab/ggml-vocab-qwen2.gguf",
    "vocab/ggml-vocab-deepseek-llm.gguf",  "vocab/ggml-vocab-deepseek-coder.gguf",
    "vocab/ggml-vocab-deepseek-v3.gguf",   "vocab/ggml-vocab-falcon.gguf",
    "vocab/ggml-vocab-starcoder.gguf",     "vocab/ggml-vocab-refact.gguf",
    "vocab/ggml-vocab-mpt.gguf",           "vocab/ggml-vocab-gpt-neox.gguf",
};
#define N_FILES (sizeof files / sizeof files[0])
#define PRE_BASE "vocab/ggml-vocab-gpt-2.gguf"
enum { MAX_VOCABS = 96 };

static char pre_names[2048];
static const char *pres[MAX_VOCABS];
static size_t n_vocabs;
static cf_tokenizer *toks[MAX_VOCABS];

static void list_vocabs(void)
{
    cf_pretok_list(pre_names, sizeof pre_names);
    n_vocabs = N_FILES;
    for (char *p = strtok(pre_names, " "); p && n_vocabs < MAX_VOCABS; p = strtok(NULL, " "))
        pres[n_vocabs++] = p;
}

static cf_tokenizer *open_file(const char *path)
{
    cf_gguf *g;
    cf_tokenizer *t = NULL;
    cf_err err;
    fuzz_require(cf_gguf_open(path, &g, &err) == 0 && cf_tokenizer_create(g, &t, &err) == 0,
                 "%s: %s", path, err.msg);
    cf_gguf_close(g);
    return t;
}

/* The base vocabulary with tokenizer.ggml.pre set to pre. */
static cf_tokenizer *open_with_pre(const char *pre)
{
    cf_gguf *g, *h = NULL;
    cf_err err;
    const char *path = fuzz_shared(PRE_BASE);
    fuzz_require(cf_gguf_open(path, &g, &err) == 0, "%s: %s", path, err.msg);
    cf_gguf_writer *w = cf_gguf_writer_new();
    for (int64_t i = 0; i < cf_gguf_n_kv(g); i++)
        if (strcmp(cf_gguf_kv_at(g, i)->key, "tokenizer.ggml.pre"))
            fuzz_require(cf_gguf_w_copy_kv(w, cf_gguf_kv_at(g, i)) == 0, "copying a key");
    uint8_t *img = NULL;
    size_t len;
    cf_tokenizer *t = NULL;
    fuzz_require(cf_gguf_w_str(w, "tokenizer.ggml.pre", pre, strlen(pre)) == 0 &&
                     cf_gguf_writer_header(w, &img, &len, &err) == 0 &&
                     cf_gguf_open_buffer(img, len, &h, &err) == 0 &&
                     cf_tokenizer_create(h, &t, &err) == 0,
                 "pre-tokenizer %s: %s", pre, err.msg);
    cf_gguf_close(h);
    free(img);
    cf_gguf_writer_free(w);
    cf_gguf_close(g);
    return t;
}

static cf_tokenizer *vocab(size_t i)
{
    if (!toks[i])
        toks[i] = i < N_FILES ? open_file(fuzz_shared(files[i])) : open_with_pre(pres[i]);
    return toks[i];
}

static void decode(const cf_tokenizer *t, const cf_token *ids, size_t n, unsigned flags)
{
    bool rm = flags & F_REMOVE_SPECIAL, un = flags & F_UNPARSE_SPECIAL;
    size_t len = cf_detokenize(t, ids, n, rm, un, NULL, 0);
    char *buf = malloc(len + 1);
    fuzz_require(buf != NULL, "out of memory for %zu bytes", len);
    fuzz_require(cf_detokenize(t, ids, n, rm, un, buf, len) == len, "two lengths for one text");
    free(buf);
    /* the pieces through the UTF-8 stream, as a reply is shown */
    cf_utf8_stream st = {0};
    for (size_t i = 0; i < n; i++) {
        cf_str p = cf_tok_piece(t, ids[i], un);
        char *out = malloc(CF_UTF8_STREAM_OUT(p.len));
        fuzz_require(out != NULL, "out of memory");
        size_t k = cf_utf8_stream_feed(&st, p.ptr, p.len, out);
        fuzz_require(k <= CF_UTF8_STREAM_OUT(p.len), "the stream wrote past its bound");
        free(out);
        (void)cf_tok_is_eog(t, ids[i]);
        (void)cf_tok_attr(t, ids[i]);
        (void)cf_tok_text(t, ids[i]);
    }
    char tail[3];
    (void)cf_utf8_stream_flush(&st, tail);
}

/* Printable ASCII, newlines and tabs: text every vocabulary covers. */
static bool plain(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((text[i] < 0x20 || text[i] > 0x7e) && text[i] != '\n' && text[i] != '\t')
            return false;
    return true;
}

/* Such text decodes to itself (cf_detokenize's promise). */
static void round_trip(const cf_tokenizer *t, const cf_tokens *ids, const char *text, size_t len)
{
    size_t n = cf_detokenize(t, ids->ids, ids->n, false, false, NULL, 0);
    char *back = malloc(n + 1);
    fuzz_require(back != NULL, "out of memory");
    cf_detokenize(t, ids->ids, ids->n, false, false, back, n);
    fuzz_require(n == len && !memcmp(back, text, len), "'%.*s' decodes to '%.*s' (%s)", (int)len, text,
                 (int)n, back, cf_tok_pre_name(t));
    free(back);
}

/* TEXT and LITERAL parts in turn, split at 0x01. */
static void encode_parts(const cf_tokenizer *t, const char *text, size_t len, bool add, cf_tokens *out)
{
    cf_tok_part parts[64];
    size_t n = 0;
    for (size_t at = 0; at <= len && n < 64;) {
        const char *end = memchr(text + at, 1, len - at);
        size_t k = end ? (size_t)(end - text) - at : len - at;
        parts[n] = (cf_tok_part){n % 2 ? CF_PART_LITERAL : CF_PART_TEXT, text + at, k, NULL, 0};
        n++;
        at += k + 1;
    }
    cf_err err = {0};
    if (cf_tokenize_parts(t, parts, n, add, out, &err) != 0)
        fuzz_require_message(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!n_vocabs)
        list_vocabs();
    if (size < 2)
        return 0;
    const cf_tokenizer *t = vocab(data[0] % n_vocabs);
    unsigned flags = data[1];
    const char *text = (const char *)data + 2;
    size_t len = size - 2;
    cf_tokens ids = {0};
    cf_err err = {0};
    if (flags & F_PARTS)
        encode_parts(t, text, len, flags & F_ADD_SPECIAL, &ids);
    else if (cf_tokenize(t, text, len, flags & F_ADD_SPECIAL, flags & F_PARSE_SPECIAL, &ids, &err) != 0)
        fuzz_require_message(&err);
    int32_t n_vocab = cf_tok_n_vocab(t);
    for (size_t i = 0; i < ids.n; i++)
        fuzz_require(ids.ids[i] >= 0 && ids.ids[i] < n_vocab, "token %d of %d", ids.ids[i], n_vocab);
    decode(t, ids.ids, ids.n, flags);
    if (!(flags & (F_ADD_SPECIAL | F_PARSE_SPECIAL | F_PARTS)) && plain(text, len))
        round_trip(t, &ids, text, len);
    cf_tokens_free(&ids);
    if (flags & F_IDS) { /* any ids, in range or not */
        cf_token raw[2048];
        size_t n = 0;
        for (size_t i = 0; i + 1 < len && n < 2048; i += 2)
            raw[n++] = (cf_token)((uint8_t)text[i] | (uint8_t)text[i + 1] << 8) - 256;
        decode(t, raw, n, flags);
    }
    return 0;
}
