/* llama2.c checkpoints (karpathy/llama2.c run.c, legacy v0 format) with
 * their tokenizer.bin, presented as a GGUF: this file writes the GGUF header
 * a converted file would have (llama architecture, SPM vocabulary) and
 * points its tensors at the weights inside the mapped checkpoint, so the
 * rest of confab sees one kind of model. */
#include <dirent.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gguf_internal.h"

/* run.c's Config: seven int32 */
typedef struct l2c_config {
    int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
} l2c_config;

enum { TOKEN_NORMAL = 1, TOKEN_UNKNOWN = 2, TOKEN_CONTROL = 3, TOKEN_BYTE = 6 };

static int check_config(const l2c_config *c, uint64_t file_size, bool *shared, cf_err *err)
{
    if (c->dim <= 0 || c->hidden_dim <= 0 || c->n_layers <= 0 || c->n_heads <= 0 ||
        c->n_kv_heads <= 0 || c->vocab_size == 0 || c->seq_len <= 0 || c->dim > 65536 ||
        c->hidden_dim > 262144 || c->n_layers > 1024 || c->n_heads > 1024 || c->seq_len > 1 << 20 ||
        c->vocab_size < -(1 << 22) || c->vocab_size > 1 << 22)
        return cf_fail(err, "implausible llama2.c header (dim %d, hidden %d, layers %d, heads %d/%d, "
                            "vocab %d, seq_len %d): not a llama2.c checkpoint",
                       c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size,
                       c->seq_len);
    if (c->dim % c->n_heads || c->n_heads % c->n_kv_heads)
        return cf_fail(err, "llama2.c header: dim %d and heads %d/%d do not divide", c->dim,
                       c->n_heads, c->n_kv_heads);
    *shared = c->vocab_size > 0;
    (void)file_size;
    return 0;
}

/* Read tokenizer.bin into cf_str pieces (in a buffer we own) + scores. */
typedef struct l2c_vocab {
    cf_str *pieces;
    float *scores;
    int32_t *types;
    char *text; /* backing store of pieces */
} l2c_vocab;

static void vocab_free(l2c_vocab *v)
{
    free(v->pieces);
    free(v->scores);
    free(v->types);
    free(v->text);
}

static bool is_byte_piece(const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    return n == 6 && memcmp(s, "<0x", 3) == 0 && strchr(hex, s[3]) && strchr(hex, s[4]) &&
           s[5] == '>';
}

static int read_vocab(const char *path, int32_t n, l2c_vocab *v, cf_err *err)
{
    const uint8_t *map;
    uint64_t size;
    if (cf_gguf_map_file(path, &(cf_load_mode){CF_LOAD_MMAP}, &map, &size, err) != 0)
        return -1;
    int rc = -1;
    uint64_t pos = 4;
    /* each piece is at least 8 bytes of score and length; its text grows by
     * the extra bytes "▁" takes over " " */
    if (size < 4 || (uint64_t)n > (size - 4) / 8) {
        cf_fail(err, "tokenizer '%s' is too short for %d tokens", path, n);
        goto out;
    }
    v->pieces = calloc((size_t)n, sizeof *v->pieces);
    v->scores = calloc((size_t)n, sizeof *v->scores);
    v->types = calloc((size_t)n, sizeof *v->types);
    v->text = malloc((size_t)size * 3 + 16);
    if (!v->pieces || !v->scores || !v->types || !v->text) {
        cf_fail(err, "out of memory reading '%s'", path);
        goto out;
    }
    char *out = v->text;
    for (int32_t i = 0; i < n; i++) {
        int32_t len;
        if (size - pos < 8) {
            cf_fail(err, "tokenizer '%s' is truncated at token %d (offset %llu)", path, i,
                    (unsigned long long)pos);
            goto out;
        }
        memcpy(&v->scores[i], map + pos, 4);
        memcpy(&len, map + pos + 4, 4);
        pos += 8;
        if (len < 0 || (uint64_t)len > size - pos) {
            cf_fail(err, "tokenizer '%s': token %d has length %d past the end (offset %llu)", path,
                    i, len, (unsigned long long)pos);
            goto out;
        }
        const char *s = (const char *)map + pos;
        pos += (uint64_t)len;
        v->pieces[i].ptr = out;
        if (i == 1 || i == 2) { /* exported as "\n<s>\n" / "\n</s>\n" */
            const char *name = i == 1 ? "<s>" : "</s>";
            memcpy(out, name, strlen(name));
            out += strlen(name);
            v->types[i] = TOKEN_CONTROL;
        } else {
            for (int32_t k = 0; k < len; k++) {
                if (s[k] == ' ') { /* the exporter turned SentencePiece's U+2581 into ' ' */
                    memcpy(out, "\xe2\x96\x81", 3);
                    out += 3;
                } else
                    *out++ = s[k];
            }
            v->types[i] = i == 0 ? TOKEN_UNKNOWN
                          : is_byte_piece(s, (size_t)len) ? TOKEN_BYTE
                                                          : TOKEN_NORMAL;
        }
        v->pieces[i].len = (size_t)(out - v->pieces[i].ptr);
    }
    rc = 0;
out:
    munmap((void *)map, (size_t)size);
    return rc;
}

/* tokenizer.bin beside the checkpoint, else the only tok*.bin there. */
static char *find_tokenizer(const char *ckpt, cf_err *err)
{
    char *copy = strdup(ckpt);
    if (!copy)
        return NULL;
    const char *dir = dirname(copy);
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer.bin", dir);
    FILE *f = fopen(path, "rb");
    if (f) {
        fclose(f);
        free(copy);
        return strdup(path);
    }
    DIR *d = opendir(dir);
    char *found = NULL;
    int count = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 7 && strncmp(e->d_name, "tok", 3) == 0 && strcmp(e->d_name + n - 4, ".bin") == 0) {
            count++;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            free(found);
            found = strdup(path);
        }
    }
    if (d)
        closedir(d);
    if (count != 1) {
        free(found);
        found = NULL;
        cf_fail(err, "no tokenizer for llama2.c checkpoint '%s': put tokenizer.bin beside it (or "
                     "give it with --tokenizer)",
                ckpt);
    }
    free(copy);
    return found;
}

static int describe(cf_gguf_writer *w, const l2c_config *c, bool shared, const l2c_vocab *v,
                    const char *name, uint64_t *total_floats)
{
    int64_t dim = c->dim, hid = c->hidden_dim, nl = c->n_layers, vocab = abs(c->vocab_size);
    int64_t head = dim / c->n_heads, kv_dim = head * c->n_kv_heads;
    int rc = 0;
    rc |= cf_gguf_w_str(w, "general.architecture", "llama", 5);
    rc |= cf_gguf_w_str(w, "general.name", name, strlen(name));
    rc |= cf_gguf_w_u32(w, "general.file_type", 0);
    rc |= cf_gguf_w_u32(w, "llama.context_length", (uint32_t)c->seq_len);
    rc |= cf_gguf_w_u32(w, "llama.embedding_length", (uint32_t)dim);
    rc |= cf_gguf_w_u32(w, "llama.feed_forward_length", (uint32_t)hid);
    rc |= cf_gguf_w_u32(w, "llama.block_count", (uint32_t)nl);
    rc |= cf_gguf_w_u32(w, "llama.attention.head_count", (uint32_t)c->n_heads);
    rc |= cf_gguf_w_u32(w, "llama.attention.head_count_kv", (uint32_t)c->n_kv_heads);
    rc |= cf_gguf_w_u32(w, "llama.rope.dimension_count", (uint32_t)head);
    rc |= cf_gguf_w_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    rc |= cf_gguf_w_f32(w, "llama.rope.freq_base", 10000.0f);
    rc |= cf_gguf_w_str(w, "tokenizer.ggml.model", "llama", 5);
    rc |= cf_gguf_w_arr_str(w, "tokenizer.ggml.tokens", v->pieces, (uint64_t)vocab);
    rc |= cf_gguf_w_arr(w, "tokenizer.ggml.scores", CF_GGUF_FLOAT32, v->scores, (uint64_t)vocab);
    rc |= cf_gguf_w_arr(w, "tokenizer.ggml.token_type", CF_GGUF_INT32, v->types, (uint64_t)vocab);
    rc |= cf_gguf_w_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    rc |= cf_gguf_w_u32(w, "tokenizer.ggml.bos_token_id", 1);
    rc |= cf_gguf_w_u32(w, "tokenizer.ggml.eos_token_id", 2);
    rc |= cf_gguf_w_bool(w, "tokenizer.ggml.add_bos_token", true);
    rc |= cf_gguf_w_bool(w, "tokenizer.ggml.add_eos_token", false);
    cf_gguf_writer_set_alignment(w, 4);

    /* run.c's memory_map_weights order; offsets in bytes from the weights */
    uint64_t off = 0;
    char tn[64];
#define PLACE(tname, ne0, ne1)                                                  \
    do {                                                                        \
        int64_t ne_[2] = {(ne0), (ne1)};                                        \
        rc |= cf_gguf_w_tensor_at(w, tname, CF_TYPE_F32, ne_[1] > 1 ? 2 : 1, ne_, off); \
        off += (uint64_t)(ne0) * (uint64_t)(ne1) * 4;                           \
    } while (0)
#define PER_LAYER(fmt, ne0, ne1)                                                \
    for (int64_t l = 0; l < nl; l++) {                                          \
        snprintf(tn, sizeof tn, fmt, (int)l);                                   \
        PLACE(tn, ne0, ne1);                                                    \
    }
    PLACE("token_embd.weight", dim, vocab);
    PER_LAYER("blk.%d.attn_norm.weight", dim, 1);
    PER_LAYER("blk.%d.attn_q.weight", dim, dim);
    PER_LAYER("blk.%d.attn_k.weight", dim, kv_dim);
    PER_LAYER("blk.%d.attn_v.weight", dim, kv_dim);
    PER_LAYER("blk.%d.attn_output.weight", dim, dim);
    PER_LAYER("blk.%d.ffn_norm.weight", dim, 1);
    PER_LAYER("blk.%d.ffn_gate.weight", dim, hid);
    PER_LAYER("blk.%d.ffn_down.weight", hid, dim);
    PER_LAYER("blk.%d.ffn_up.weight", dim, hid);
    PLACE("output_norm.weight", dim, 1);
    off += (uint64_t)c->seq_len * (uint64_t)head * 4; /* unused RoPE tables */
    if (!shared)
        PLACE("output.weight", dim, vocab);
#undef PER_LAYER
#undef PLACE
    *total_floats = off / 4;
    return rc ? -1 : 0;
}

int cf_gguf_open_llama2c(const char *ckpt_path, const char *tokenizer_path, cf_gguf **out,
                         cf_err *err)
{
    *out = NULL;
    const uint8_t *map;
    uint64_t size;
    cf_err inner;
    if (cf_gguf_map_file(ckpt_path, &(cf_load_mode){CF_LOAD_MMAP}, &map, &size, err) != 0)
        return -1;
    l2c_config c;
    bool shared = false;
    if (size < sizeof c) {
        munmap((void *)map, (size_t)size);
        return cf_fail(err, "%s: too short for a llama2.c header (%llu bytes)", ckpt_path,
                       (unsigned long long)size);
    }
    memcpy(&c, map, sizeof c);
    if (check_config(&c, size, &shared, &inner) != 0) {
        munmap((void *)map, (size_t)size);
        return cf_fail(err, "%s: %s", ckpt_path, inner.msg);
    }

    char *tok = tokenizer_path ? strdup(tokenizer_path) : find_tokenizer(ckpt_path, &inner);
    l2c_vocab v = {0};
    cf_gguf_writer *w = NULL;
    cf_gguf *g = NULL;
    uint8_t *hdr = NULL;
    size_t hdr_len;
    uint64_t floats;
    int rc = -1;
    if (!tok) {
        cf_fail(err, "%s", inner.msg);
        goto out;
    }
    if (read_vocab(tok, abs(c.vocab_size), &v, err) != 0)
        goto out;
    char name[256];
    const char *base = strrchr(ckpt_path, '/');
    snprintf(name, sizeof name, "llama2.c %s", base ? base + 1 : ckpt_path);
    w = cf_gguf_writer_new();
    if (!w || describe(w, &c, shared, &v, name, &floats) != 0 ||
        cf_gguf_writer_header(w, &hdr, &hdr_len, err) != 0) {
        cf_fail(err, "%s: out of memory describing the checkpoint", ckpt_path);
        goto out;
    }
    if (floats > (size - sizeof c) / 4) {
        cf_fail(err, "%s: truncated llama2.c checkpoint: the header promises %llu bytes of weights "
                     "but the file holds %llu",
                ckpt_path, (unsigned long long)floats * 4, (unsigned long long)(size - sizeof c));
        goto out;
    }
    g = cf_gguf_alloc();
    if (!g)
        goto out;
    g->format = "llama2c";
    g->file_size = size;
    if (cf_gguf_parse(g, hdr, hdr_len, map + sizeof c, size - sizeof c, &inner) != 0) {
        cf_fail(err, "%s: %s", ckpt_path, inner.msg);
        goto out;
    }
    g->map = map;
    g->map_size = size;
    g->owned = hdr;
    /* the vocabulary strings were copied into the header */
    hdr = NULL;
    map = NULL;
    *out = g;
    g = NULL;
    rc = 0;
out:
    if (g) {
        g->map = NULL;
        cf_gguf_close(g);
    }
    free(hdr);
    if (map)
        munmap((void *)map, (size_t)size);
    cf_gguf_writer_free(w);
    vocab_free(&v);
    free(tok);
    return rc;
}
