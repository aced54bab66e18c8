/* seedgen DIR [TOK512]: the seeds seeds.sh cannot make with confab itself.
 *   DIR/tiny-spm.gguf, DIR/tiny-bpe.gguf   vocabularies of a few dozen tokens
 *                                          (mkmodel --vocab: models of a few KB)
 *   DIR/llama2c/NAME                       inputs of fuzz_llama2c: tiny
 *                                          checkpoints with tok512.bin (TOK512)
 *                                          or with a tokenizer of a few pieces
 *                                          (only when TOK512 is given)
 * seedgen regress DIR Q8_0 TQ2_0 MOE SWA: fuzz_gguf's findings, written into
 * DIR from four tiny models mkmodel made (embd 32: a llama Q8_0 one, a --pure
 * TQ2_0 one, a gpt-oss one, whose FFN is only experts, and a gemma4 one, with
 * sliding-window layers of their own rotation), so that no binary GGUF is
 * kept in the repository. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/gguf.h"
#include "confab/kernels.h"

static void die(const char *what)
{
    fprintf(stderr, "seedgen: %s\n", what);
    exit(1);
}

static cf_str S(const char *s)
{
    return (cf_str){s, strlen(s)};
}

static void write_vocab(const char *path, const char *model, const char *pre, const cf_str *tokens,
                        int n, const int32_t *types, const cf_str *merges, int n_merges)
{
    static const char tmpl[] = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
                               "{% if add_generation_prompt %}<|assistant|>{% endif %}";
    float scores[128];
    for (int i = 0; i < n; i++)
        scores[i] = -(float)i;
    cf_gguf_writer *w = cf_gguf_writer_new();
    int rc = !w || cf_gguf_w_str(w, "tokenizer.ggml.model", model, strlen(model)) ||
             cf_gguf_w_arr_str(w, "tokenizer.ggml.tokens", tokens, (uint64_t)n) ||
             cf_gguf_w_arr(w, "tokenizer.ggml.scores", CF_GGUF_FLOAT32, scores, (uint64_t)n) ||
             cf_gguf_w_arr(w, "tokenizer.ggml.token_type", CF_GGUF_INT32, types, (uint64_t)n) ||
             cf_gguf_w_u32(w, "tokenizer.ggml.bos_token_id", 1) ||
             cf_gguf_w_u32(w, "tokenizer.ggml.eos_token_id", 2) ||
             (pre && cf_gguf_w_str(w, "tokenizer.ggml.pre", pre, strlen(pre))) ||
             (merges && cf_gguf_w_arr_str(w, "tokenizer.ggml.merges", merges, (uint64_t)n_merges)) ||
             cf_gguf_w_str(w, "tokenizer.chat_template", tmpl, strlen(tmpl));
    cf_err err;
    if (rc || cf_gguf_writer_write_file(w, path, NULL, NULL, &err))
        die(path);
    cf_gguf_writer_free(w);
}

static void tiny_spm(const char *dir)
{
    static const char *const words[] = {
        "<unk>", "<s>", "</s>", "<0x0A>", "<0xE2>", "<0x96>", "<0x81>", "\xe2\x96\x81",
        "\xe2\x96\x81t", "\xe2\x96\x81the", "\xe2\x96\x81\x61", "\xe2\x96\x81H", "He", "ll", "llo",
        "\xe2\x96\x81Hello", "\xe2\x96\x81world", "<|user|>", "<|assistant|>", "a", "b", "c", "d",
        "e", "h", "l", "o", "r", "t", "w", "!", ".", ",", "1", "2"};
    enum { N = sizeof words / sizeof words[0] };
    cf_str tokens[N];
    int32_t types[N];
    for (int i = 0; i < N; i++) {
        tokens[i] = S(words[i]);
        types[i] = i == 0 ? 2 : (i < 3 || i == 17 || i == 18) ? 3 : i < 7 ? 6 : 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/tiny-spm.gguf", dir);
    write_vocab(path, "llama", NULL, tokens, N, types, NULL, 0);
}

static void tiny_bpe(const char *dir)
{
    /* GPT-2's byte-level alphabet for a few bytes: printable ASCII stands
     * for itself, space is U+0120, newline U+010A */
    static const char *const words[] = {
        "<unk>", "<|begin|>", "<|end|>", "\xc4\xa0", "\xc4\x8a", "H", "e", "l", "o", "w", "r", "d",
        "t", "h", "a", "!", ".", "1", "2", "\xc4\xa0t", "he", "ll", "\xc4\xa0the", "llo", "He",
        "Hello", "\xc4\xa0w", "or", "\xc4\xa0wor", "ld", "\xc4\xa0world"};
    static const char *const merge_text[] = {
        "\xc4\xa0 t", "h e", "l l", "\xc4\xa0t he", "ll o", "H e", "He llo", "\xc4\xa0 w", "o r",
        "\xc4\xa0w or", "l d", "\xc4\xa0wor ld"};
    enum { N = sizeof words / sizeof words[0], M = sizeof merge_text / sizeof merge_text[0] };
    cf_str tokens[N], merges[M];
    int32_t types[N];
    for (int i = 0; i < N; i++) {
        tokens[i] = S(words[i]);
        types[i] = i == 0 ? 2 : i < 3 ? 3 : 1;
    }
    for (int i = 0; i < M; i++)
        merges[i] = S(merge_text[i]);
    char path[4096];
    snprintf(path, sizeof path, "%s/tiny-bpe.gguf", dir);
    write_vocab(path, "gpt2", "llama-bpe", tokens, N, types, merges, M);
}

/* ---- llama2.c ---------------------------------------------------------------- */

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        if (!(b->p = realloc(b->p, b->cap)))
            die("out of memory");
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void put_i32(buf *b, int32_t v)
{
    put(b, &v, 4);
}

/* One fuzz_llama2c input: u32 checkpoint size, the checkpoint, the tokenizer. */
static void write_l2c(const char *dir, const char *name, const int32_t cfg[7], const buf *tok)
{
    int64_t dim = cfg[0], hid = cfg[1], nl = cfg[2], head = dim / cfg[3],
            kv = head * cfg[4], vocab = abs(cfg[5]), seq = cfg[6];
    int64_t floats = vocab * dim + nl * (2 * dim + 2 * dim * dim + 2 * dim * kv + 3 * dim * hid) +
                     dim + seq * head + (cfg[5] < 0 ? vocab * dim : 0);
    buf ck = {0};
    put(&ck, cfg, 28);
    uint32_t x = 12345;
    for (int64_t i = 0; i < floats; i++) {
        x = x * 1664525u + 1013904223u;
        float f = ((float)(x >> 8) / (float)(1 << 24) - 0.5f) * 0.2f;
        put(&ck, &f, 4);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/llama2c/%s", dir, name);
    FILE *f = fopen(path, "wb");
    uint32_t n = (uint32_t)ck.n;
    if (!f || fwrite(&n, 4, 1, f) != 1 || fwrite(ck.p, 1, ck.n, f) != ck.n ||
        fwrite(tok->p, 1, tok->n, f) != tok->n || fclose(f))
        die(path);
    free(ck.p);
}

/* A whole file (not empty). */
static buf slurp(const char *path)
{
    buf b = {0};
    FILE *f = fopen(path, "rb");
    uint8_t chunk[4096];
    size_t got;
    while (f && (got = fread(chunk, 1, sizeof chunk, f)) > 0)
        put(&b, chunk, got);
    if (!f || !b.n)
        die(path);
    fclose(f);
    return b;
}

static void llama2c(const char *dir, const char *tok512)
{
    buf tok = slurp(tok512);
    write_l2c(dir, "shared-tok512", (const int32_t[7]){8, 16, 1, 2, 2, 512, 8}, &tok);
    write_l2c(dir, "gqa-tok512", (const int32_t[7]){8, 16, 2, 2, 1, 512, 4}, &tok);
    /* a tokenizer of a few pieces (max length, then score, length, bytes) */
    static const char *const pieces[] = {"<unk>", "\n<s>\n", "\n</s>\n", "<0x0A>", " ", " the",
                                         "a", "b", " Hello", "world", "<0xE2>", "."};
    buf small = {0};
    put_i32(&small, 8);
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        float score = -(float)i;
        put(&small, &score, 4);
        put_i32(&small, (int32_t)strlen(pieces[i]));
        put(&small, pieces[i], strlen(pieces[i]));
    }
    write_l2c(dir, "unshared-small", (const int32_t[7]){8, 8, 1, 2, 2, -12, 4}, &small);
    free(tok.p);
    free(small.p);
}

/* ---- fuzz_gguf's findings ----------------------------------------------- */

static void spit(const char *dir, const char *name, const buf *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->p, 1, b->n, f) != b->n || fclose(f))
        die(path);
}

/* Tensor NAME's bytes inside a model file's bytes; n: their count. */
static uint8_t *tensor_bytes(const buf *b, const char *name, uint64_t *n)
{
    cf_gguf *g;
    cf_err err;
    if (cf_gguf_open_buffer(b->p, b->n, &g, &err) != 0)
        die(err.msg);
    const cf_gguf_tensor *t = cf_gguf_find_tensor(g, name);
    if (!t || t->type != CF_TYPE_F32)
        die(name);
    uint8_t *p = b->p + cf_gguf_data_offset(g) + t->offset;
    *n = t->nbytes;
    cf_gguf_close(g);
    return p;
}

/* The first float, or every float, of tensor NAME set to v. */
static void set_floats(const buf *b, const char *name, float v, bool first_only)
{
    uint64_t n;
    uint8_t *p = tensor_bytes(b, name, &n);
    for (uint64_t i = 0; i < (first_only ? 4 : n); i += 4)
        memcpy(p + i, &v, 4);
}

/* DIR/NAME: model file MODEL with the u32 value of metadata key KEY set to v. */
static void spit_u32(const char *dir, const char *name, const char *model, const char *key, uint32_t v)
{
    buf b = slurp(model);
    uint8_t *k = memmem(b.p, b.n, key, strlen(key));
    if (!k)
        die(key);
    memcpy(k + strlen(key) + 4, &v, 4); /* past the value type */
    spit(dir, name, &b);
    free(b.p);
}

static void regress(const char *dir, const char *q8_0, const char *tq2_0, const char *moe, const char *swa)
{
    /* a key of control characters and a value type that does not exist:
     * the error quoting the key must stay one line without escapes */
    static const char key[] = "llama.atte\x1b[2J\n\x07\r\x1b]0;x\x07";
    buf b = {0};
    const uint32_t version = 3, bad_type = 199616723;
    const uint64_t n_tensors = 0, n_kv = 1, key_len = sizeof key - 1;
    put(&b, "GGUF", 4);
    put(&b, &version, 4);
    put(&b, &n_tensors, 8);
    put(&b, &n_kv, 8);
    put(&b, &key_len, 8);
    put(&b, key, key_len);
    put(&b, &bad_type, 4);
    spit(dir, "control-chars-in-key", &b);
    free(b.p);

    /* 234 million layers: refused at once, not after per-layer loops */
    spit_u32(dir, "huge-layer-count", q8_0, "llama.block_count", 234881023);
    /* a dense FFN width that no tensor has (the layers' FFN is experts):
     * it once sized 24 GiB of buffers */
    spit_u32(dir, "unused-huge-ff", moe, "gpt-oss.feed_forward_length", 805306400);
    /* a sliding-window rotation wider than any head: it once sized 1 GiB
     * of RoPE tables */
    spit_u32(dir, "huge-swa-rope", swa, "gemma4.rope.dimension_count_swa", 67108880);

    /* a NaN in a norm's weight: the forward pass names the tensor */
    b = slurp(q8_0);
    set_floats(&b, "blk.0.attn_norm.weight", NAN, true);
    spit(dir, "nan-norm-weight", &b);
    free(b.p);

    /* a norm weight so small that the normalised rows are subnormal: the
     * activations' rounding must not divide by their largest value */
    b = slurp(tq2_0);
    set_floats(&b, "blk.0.attn_norm.weight", 1e-39f, false);
    spit(dir, "subnormal-activation", &b);
    free(b.p);
}

int main(int argc, char **argv)
{
    if (argc == 7 && strcmp(argv[1], "regress") == 0) {
        regress(argv[2], argv[3], argv[4], argv[5], argv[6]);
        return 0;
    }
    if (argc != 2 && argc != 3)
        die("usage: seedgen DIR [TOK512] | seedgen regress DIR Q8_0 TQ2_0 MOE SWA");
    tiny_spm(argv[1]);
    tiny_bpe(argv[1]);
    if (argc == 3)
        llama2c(argv[1], argv[2]);
    return 0;
}
