/* GGUF reader/writer: round trip, the llama2.c view, and one error message
 * per kind of damage (crafted files built byte by byte). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confab/gguf.h"
#include "harness.h"

/* ---- a byte builder for hand-made (and broken) files -------------------- */
typedef struct bb {
    uint8_t p[4096];
    size_t n;
} bb;

static void b_raw(bb *b, const void *v, size_t n)
{
    memcpy(b->p + b->n, v, n);
    b->n += n;
}
static void b_u32(bb *b, uint32_t v) { b_raw(b, &v, 4); }
static void b_u64(bb *b, uint64_t v) { b_raw(b, &v, 8); }
static void b_str(bb *b, const char *s)
{
    b_u64(b, strlen(s));
    b_raw(b, s, strlen(s));
}
static void b_head(bb *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
    b->n = 0;
    b_raw(b, "GGUF", 4);
    b_u32(b, version);
    b_u64(b, n_tensors);
    b_u64(b, n_kv);
}
static void b_kv_u32(bb *b, const char *key, uint32_t v)
{
    b_str(b, key);
    b_u32(b, CF_GGUF_UINT32);
    b_u32(b, v);
}
static void b_tensor(bb *b, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type,
                     uint64_t offset)
{
    b_str(b, name);
    b_u32(b, n_dims);
    for (uint32_t d = 0; d < n_dims; d++)
        b_u64(b, ne[d]);
    b_u32(b, type);
    b_u64(b, offset);
}
static void b_pad_data(bb *b, size_t data_bytes)
{
    while (b->n % 32)
        b->p[b->n++] = 0;
    memset(b->p + b->n, 0, data_bytes);
    b->n += data_bytes;
}

/* Parse b and expect an error containing want. */
static void expect_error(const bb *b, const char *want, const char *what)
{
    uint8_t *copy = malloc(b->n); /* exact size: ASan sees any overread */
    memcpy(copy, b->p, b->n);
    cf_gguf *g = NULL;
    cf_err err = {0};
    int rc = cf_gguf_open_buffer(copy, b->n, &g, &err);
    CHECKF(rc != 0 && strstr(err.msg, want), "%s: rc %d, message '%s', wanted '%s'", what, rc,
           err.msg, want);
    cf_gguf_close(g);
    free(copy);
}

static void test_crafted_errors(void)
{
    bb b;
    uint64_t ne2[2] = {32, 2};

    b_head(&b, 3, 0, 0);
    b.p[0] = 'X';
    expect_error(&b, "bad magic", "magic");
    b_head(&b, 1, 0, 0);
    expect_error(&b, "unsupported GGUF version 1", "version 1");
    b_head(&b, 4, 0, 0);
    expect_error(&b, "unsupported GGUF version 4", "version 4");
    b_head(&b, 3, 0, 0);
    b.n = 10;
    expect_error(&b, "truncated", "short header");

    b_head(&b, 3, 0, 1000000);
    expect_error(&b, "metadata count 1000000 is larger", "kv count");
    b_head(&b, 3, 1000000, 0);
    expect_error(&b, "tensor count 1000000 is larger", "tensor count");

    b_head(&b, 3, 0, 1);
    b_u64(&b, 1u << 30); /* key length past the end */
    b_raw(&b, "padding-padding-padding", 24);
    expect_error(&b, "past the end of the file", "key length");

    b_head(&b, 3, 0, 1);
    b_str(&b, "a.b");
    b_u32(&b, CF_GGUF_ARRAY);
    b_u32(&b, CF_GGUF_UINT32);
    b_u64(&b, 1u << 28);
    expect_error(&b, "runs past the end", "array length");

    b_head(&b, 3, 0, 1);
    b_str(&b, "a.b");
    b_u32(&b, CF_GGUF_ARRAY);
    b_u32(&b, CF_GGUF_STRING);
    b_u64(&b, 1u << 28);
    expect_error(&b, "cannot fit", "string array count");

    b_head(&b, 3, 0, 1);
    b_str(&b, "a.b");
    b_u32(&b, 99);
    expect_error(&b, "unknown value type 99", "value type");

    b_head(&b, 3, 0, 2);
    b_kv_u32(&b, "same", 1);
    b_kv_u32(&b, "same", 2);
    expect_error(&b, "duplicate metadata key 'same'", "duplicate key");

    uint64_t ne5[5] = {32, 1, 1, 1, 1};
    b_head(&b, 3, 1, 0);
    b_tensor(&b, "t", 5, ne5, CF_TYPE_F32, 0);
    expect_error(&b, "5 dimensions", "n_dims");

    uint64_t ne0[2] = {32, 0};
    b_head(&b, 3, 1, 0);
    b_tensor(&b, "t", 2, ne0, CF_TYPE_F32, 0);
    expect_error(&b, "is zero", "zero dim");

    uint64_t nebig[2] = {1ull << 40, 1ull << 40};
    b_head(&b, 3, 1, 0);
    b_tensor(&b, "t", 2, nebig, CF_TYPE_F32, 0);
    expect_error(&b, "too large", "overflowing dims");

    b_head(&b, 3, 1, 0);
    b_tensor(&b, "t", 2, ne2, 4, 0); /* retired Q4_2 */
    expect_error(&b, "unknown type 4", "tensor type");

    uint64_t ne_odd[1] = {33};
    b_head(&b, 3, 1, 0);
    b_tensor(&b, "t", 1, ne_odd, CF_TYPE_Q8_0, 0);
    expect_error(&b, "not a multiple of the Q8_0 block size", "block size");

    b_head(&b, 3, 1, 0);
    b_tensor(&b, "t", 2, ne2, CF_TYPE_F32, 0);
    b_pad_data(&b, 100); /* needs 256 */
    expect_error(&b, "outside the file", "data past the end");

    b_head(&b, 3, 1, 0);
    b_tensor(&b, "t", 2, ne2, CF_TYPE_F32, 8);
    b_pad_data(&b, 512);
    expect_error(&b, "not a multiple of the alignment", "misaligned");

    b_head(&b, 3, 2, 0);
    b_tensor(&b, "a", 2, ne2, CF_TYPE_F32, 0);
    b_tensor(&b, "b", 2, ne2, CF_TYPE_F32, 128);
    b_pad_data(&b, 512);
    expect_error(&b, "overlap", "overlapping");

    b_head(&b, 3, 2, 0);
    b_tensor(&b, "a", 2, ne2, CF_TYPE_F32, 0);
    b_tensor(&b, "a", 2, ne2, CF_TYPE_F32, 256);
    b_pad_data(&b, 512);
    expect_error(&b, "duplicate tensor name 'a'", "duplicate tensor");

    b_head(&b, 3, 0, 1);
    b_kv_u32(&b, "general.alignment", 24);
    expect_error(&b, "not a power of two", "alignment");

    /* and a valid one of the same shape loads */
    b_head(&b, 3, 2, 1);
    b_kv_u32(&b, "general.alignment", 32);
    b_tensor(&b, "a", 2, ne2, CF_TYPE_F32, 0);
    b_tensor(&b, "b", 2, ne2, CF_TYPE_F32, 256);
    b_pad_data(&b, 512);
    cf_gguf *g;
    cf_err err;
    CHECKF(cf_gguf_open_buffer(b.p, b.n, &g, &err) == 0, "valid file: %s", err.msg);
    cf_gguf_close(g);
}

static void test_round_trip(void)
{
    cf_gguf_writer *w = cf_gguf_writer_new();
    CHECK(w != NULL);
    float f[3] = {1.5f, -2.0f, 3.25f};
    int32_t iv[2] = {-7, 9};
    cf_str strs[3] = {{"a", 1}, {"", 0}, {"\xe2\x96\x81hi", 5}};
    CHECK(cf_gguf_w_u32(w, "k.u32", 42) == 0);
    CHECK(cf_gguf_w_i32(w, "k.i32", -5) == 0);
    CHECK(cf_gguf_w_u64(w, "k.u64", 1ull << 40) == 0);
    CHECK(cf_gguf_w_f32(w, "k.f32", 0.5f) == 0);
    CHECK(cf_gguf_w_bool(w, "k.bool", true) == 0);
    CHECK(cf_gguf_w_str(w, "k.str", "hello", 5) == 0);
    CHECK(cf_gguf_w_str(w, "k.str", "world!", 6) == 0); /* replaces */
    CHECK(cf_gguf_w_arr(w, "k.f32s", CF_GGUF_FLOAT32, f, 3) == 0);
    CHECK(cf_gguf_w_arr(w, "k.i32s", CF_GGUF_INT32, iv, 2) == 0);
    CHECK(cf_gguf_w_arr_str(w, "k.strs", strs, 3) == 0);
    float data[64];
    for (int i = 0; i < 64; i++)
        data[i] = (float)i;
    int64_t ne[2] = {32, 2};
    CHECK(cf_gguf_w_tensor(w, "t.a", CF_TYPE_F32, 2, ne, data) == 0);
    CHECK(cf_gguf_w_tensor(w, "t.b", CF_TYPE_F32, 1, ne, data) == 0);

    char path[] = "/tmp/confab-gguf-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    cf_err err;
    CHECKF(cf_gguf_writer_write_file(w, path, NULL, NULL, &err) == 0, "%s", err.msg);
    cf_gguf_writer_free(w);

    cf_gguf *g;
    CHECKF(cf_gguf_open(path, &g, &err) == 0, "%s", err.msg);
    if (g) {
        uint64_t u;
        int64_t i;
        double d;
        bool b;
        cf_str s;
        CHECK(cf_gguf_get_u64(g, "k.u32", &u) && u == 42);
        CHECK(cf_gguf_get_i64(g, "k.i32", &i) && i == -5);
        CHECK(!cf_gguf_get_u64(g, "k.i32", &u)); /* negative */
        CHECK(cf_gguf_get_u64(g, "k.u64", &u) && u == 1ull << 40);
        CHECK(cf_gguf_get_f64(g, "k.f32", &d) && d == 0.5);
        CHECK(cf_gguf_get_bool(g, "k.bool", &b) && b);
        CHECK(cf_gguf_get_str(g, "k.str", &s) && s.len == 6 && !memcmp(s.ptr, "world!", 6));
        CHECK(!cf_gguf_get_str(g, "k.missing", &s));
        const cf_gguf_kv *a = cf_gguf_get_arr(g, "k.f32s", CF_GGUF_FLOAT32);
        CHECK(a && a->n == 3 && cf_gguf_kv_float(a, 2) == 3.25);
        a = cf_gguf_get_arr(g, "k.i32s", CF_GGUF_INT32);
        CHECK(a && cf_gguf_kv_int(a, 0) == -7 && cf_gguf_kv_int(a, 1) == 9);
        a = cf_gguf_get_arr(g, "k.strs", CF_GGUF_STRING);
        CHECK(a && a->n == 3 && cf_gguf_kv_str(a, 1).len == 0 && cf_gguf_kv_str(a, 2).len == 5);
        CHECK(cf_gguf_n_tensors(g) == 2);
        const cf_gguf_tensor *t = cf_gguf_find_tensor(g, "t.a");
        CHECK(t && t->ne[0] == 32 && t->ne[1] == 2 && t->nbytes == 256);
        CHECK(t && memcmp(t->data, data, 256) == 0);
        t = cf_gguf_find_tensor(g, "t.b");
        CHECK(t && t->n_dims == 1 && t->nbytes == 128 && t->offset % 32 == 0);
        CHECK(cf_gguf_find_tensor(g, "t.c") == NULL);
        cf_gguf_close(g);
    }
    /* every load mode reads the same file; AUTO settles on one of the two */
    static const cf_load_mode modes[] = {CF_LOAD_MMAP, CF_LOAD_COPY, CF_LOAD_AUTO};
    for (int m = 0; m < 3; m++) {
        CHECKF(cf_gguf_open_as(path, modes[m], &g, &err) == 0, "%s", err.msg);
        if (!g)
            continue;
        const cf_gguf_tensor *t = cf_gguf_find_tensor(g, "t.a");
        CHECK(t && memcmp(t->data, data, 256) == 0);
        CHECK(cf_gguf_loaded_as(g) == (modes[m] == CF_LOAD_AUTO ? cf_gguf_loaded_as(g) : modes[m]));
        CHECK(cf_gguf_loaded_as(g) == CF_LOAD_MMAP || cf_gguf_loaded_as(g) == CF_LOAD_COPY);
        cf_gguf_close(g);
    }
    /* a copy is validated like a mapping: cut the file short */
    CHECK(truncate(path, 100) == 0);
    CHECK(cf_gguf_open_as(path, CF_LOAD_COPY, &g, &err) != 0 && strstr(err.msg, path));
    unlink(path);
    CHECK(cf_gguf_open_as(path, CF_LOAD_COPY, &g, &err) != 0 && strstr(err.msg, "cannot open"));
}

/* stories260K.bin + tok512.bin must present exactly stories260K.gguf. */
static void test_llama2c_matches_gguf(void)
{
    cf_gguf *a, *b;
    cf_err err;
    if (cf_gguf_open(shared_path("models/stories260K.gguf"), &a, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    if (cf_gguf_open(shared_path("models/stories260K.bin"), &b, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        cf_gguf_close(a);
        return;
    }
    CHECK(strcmp(cf_gguf_source_format(b), "llama2c") == 0);
    static const char *arrays[] = {"tokenizer.ggml.tokens", "tokenizer.ggml.scores",
                                   "tokenizer.ggml.token_type"};
    for (int k = 0; k < 3; k++) {
        const cf_gguf_kv *x = cf_gguf_get_arr(a, arrays[k], CF_GGUF_VTYPE_COUNT);
        const cf_gguf_kv *y = cf_gguf_get_arr(b, arrays[k], CF_GGUF_VTYPE_COUNT);
        CHECKF(x && y && x->n == y->n && x->elem == y->elem, "%s", arrays[k]);
        if (!x || !y || x->n != y->n)
            continue;
        for (uint64_t i = 0; i < x->n; i++) {
            if (x->elem == CF_GGUF_STRING) {
                cf_str s = cf_gguf_kv_str(x, i), t = cf_gguf_kv_str(y, i);
                CHECKF(s.len == t.len && !memcmp(s.ptr, t.ptr, s.len), "token %llu differs",
                       (unsigned long long)i);
            } else {
                CHECKF(cf_gguf_kv_float(x, i) == cf_gguf_kv_float(y, i), "%s[%llu]", arrays[k],
                       (unsigned long long)i);
            }
        }
    }
    static const char *keys[] = {"llama.embedding_length", "llama.feed_forward_length",
                                 "llama.block_count", "llama.attention.head_count",
                                 "llama.attention.head_count_kv", "llama.rope.dimension_count",
                                 "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"};
    for (int k = 0; k < 8; k++) {
        uint64_t u, v;
        CHECKF(cf_gguf_get_u64(a, keys[k], &u) && cf_gguf_get_u64(b, keys[k], &v) && u == v, "%s",
               keys[k]);
    }
    /* every tensor of the .bin has the GGUF's bytes; the GGUF's separate
     * output.weight is the .bin's shared embedding */
    CHECK(cf_gguf_n_tensors(b) == cf_gguf_n_tensors(a) - 1);
    for (int64_t i = 0; i < cf_gguf_n_tensors(b); i++) {
        const cf_gguf_tensor *tb = cf_gguf_tensor_at(b, i);
        const cf_gguf_tensor *ta = cf_gguf_find_tensor(a, tb->name);
        CHECKF(ta && ta->nbytes == tb->nbytes && ta->ne[0] == tb->ne[0] && ta->ne[1] == tb->ne[1] &&
                   !memcmp(ta->data, tb->data, ta->nbytes),
               "tensor %s", tb->name);
    }
    const cf_gguf_tensor *out = cf_gguf_find_tensor(a, "output.weight");
    const cf_gguf_tensor *emb = cf_gguf_find_tensor(b, "token_embd.weight");
    CHECK(out && emb && !memcmp(out->data, emb->data, emb->nbytes));
    cf_gguf_close(a);
    cf_gguf_close(b);

    /* a wrong or missing tokenizer is a clear error */
    CHECK(cf_gguf_open_llama2c(shared_path("models/stories260K.bin"),
                               shared_path("models/nonexistent.bin"), &b, &err) != 0 &&
          strstr(err.msg, "cannot open"));
}

int main(void)
{
    test_crafted_errors();
    test_round_trip();
    if (shared_dir())
        test_llama2c_matches_gguf();
    else
        fprintf(stderr, "no ../shared: skipping the llama2.c comparison\n");
    return test_summary("test_gguf");
}
