/* Damage real model files: truncate at every offset of the header and
 * tensor-info area and flip every byte there.  Each variant must give an
 * error message or a valid file — never a crash or a read outside the
 * buffer (run under -Db_sanitize=address,undefined, the buffers are sized
 * exactly so ASan sees any overread). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confab/gguf.h"
#include "harness.h"

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return p;
}

/* Walk every tensor and kv so a "valid" answer is really usable. */
static void touch(const cf_gguf *g)
{
    volatile uint64_t sum = 0;
    for (int64_t i = 0; i < cf_gguf_n_kv(g); i++) {
        const cf_gguf_kv *kv = cf_gguf_kv_at(g, i);
        for (uint64_t k = 0; k < kv->n && k < 4; k++)
            sum += kv->elem == CF_GGUF_STRING ? cf_gguf_kv_str(kv, k).len : (uint64_t)cf_gguf_kv_int(kv, k);
    }
    for (int64_t i = 0; i < cf_gguf_n_tensors(g); i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
        if (t->nbytes)
            sum += ((const uint8_t *)t->data)[t->nbytes - 1];
    }
    (void)sum;
}

static int parse(const uint8_t *p, size_t n, cf_err *err)
{
    cf_gguf *g;
    if (cf_gguf_open_buffer(p, n, &g, err) != 0) {
        CHECKF(err->msg[0] != 0, "an error without a message");
        return -1;
    }
    touch(g);
    cf_gguf_close(g);
    return 0;
}

static void fuzz_gguf(const char *rel)
{
    size_t len;
    uint8_t *img = slurp(shared_path(rel), &len);
    if (!img) {
        CHECKF(0, "cannot read %s", rel);
        return;
    }
    cf_gguf *g;
    cf_err err;
    if (cf_gguf_open_buffer(img, len, &g, &err) != 0) {
        CHECKF(0, "%s: %s", rel, err.msg);
        free(img);
        return;
    }
    size_t header = (size_t)cf_gguf_data_offset(g);
    cf_gguf_close(g);

    int truncated_ok = 0, flipped_ok = 0, flips = 0;
    for (size_t t = 0; t < header; t++) {
        uint8_t *cut = malloc(t ? t : 1);
        memcpy(cut, img, t);
        truncated_ok += parse(cut, t, &err) == 0;
        free(cut);
    }
    static const uint8_t masks[] = {0xff, 0x01, 0x80};
    for (size_t i = 0; i < header; i++)
        for (size_t m = 0; m < sizeof masks; m++) {
            img[i] ^= masks[m];
            flipped_ok += parse(img, len, &err) == 0;
            flips++;
            img[i] ^= masks[m];
        }
    /* every truncation inside the header loses a tensor's data */
    CHECKF(truncated_ok == 0, "%s: %d truncated headers parsed", rel, truncated_ok);
    fprintf(stderr, "%s: %zu header bytes: %zu truncations all rejected; %d of %d flips still valid\n",
            rel, header, header, flipped_ok, flips);
    free(img);
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fwrite(p, 1, n, f);
    fclose(f);
}

/* The llama2.c pair: damage the checkpoint header and the tokenizer. */
static void fuzz_llama2c(void)
{
    size_t blen, tlen;
    uint8_t *bin = slurp(shared_path("models/stories260K.bin"), &blen);
    uint8_t *tok = slurp(shared_path("models/tok512.bin"), &tlen);
    if (!bin || !tok) {
        CHECKF(0, "cannot read the llama2.c fixtures");
        free(bin);
        free(tok);
        return;
    }
    char dir[] = "/tmp/confab-l2c-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    char bpath[64], tpath[64];
    snprintf(bpath, sizeof bpath, "%s/model.bin", dir);
    snprintf(tpath, sizeof tpath, "%s/tokenizer.bin", dir);
    cf_gguf *g;
    cf_err err;
    int ok = 0;

    write_file(tpath, tok, tlen);
    for (size_t t = 0; t < 64; t++) { /* the 28-byte header and a little more */
        write_file(bpath, bin, t);
        if (cf_gguf_open(bpath, &g, &err) == 0) {
            ok++;
            cf_gguf_close(g);
        }
    }
    CHECKF(ok == 0, "%d truncated checkpoints loaded", ok);
    for (size_t i = 0; i < 28; i++) {
        bin[i] ^= 0xff;
        write_file(bpath, bin, blen);
        if (cf_gguf_open(bpath, &g, &err) == 0) {
            touch(g);
            cf_gguf_close(g);
        }
        bin[i] ^= 0xff;
    }
    write_file(bpath, bin, blen);
    ok = 0;
    for (size_t t = 0; t < tlen; t += 7) {
        write_file(tpath, tok, t);
        if (cf_gguf_open(bpath, &g, &err) == 0) {
            ok++;
            cf_gguf_close(g);
        }
    }
    CHECKF(ok == 0, "%d truncated tokenizers loaded", ok);
    for (size_t i = 0; i < tlen; i += 3) {
        tok[i] ^= 0xff;
        write_file(tpath, tok, tlen);
        if (cf_gguf_open(bpath, &g, &err) == 0) {
            touch(g);
            cf_gguf_close(g);
        }
        tok[i] ^= 0xff;
    }
    unlink(bpath);
    unlink(tpath);
    rmdir(dir);
    free(bin);
    free(tok);
}

int main(void)
{
    if (!shared_dir()) {
        fprintf(stderr, "no ../shared: skipped\n");
        return TEST_SKIP;
    }
    fuzz_gguf("models/stories260K.gguf");
    fuzz_gguf("models/quant-Q4_K_M.gguf");
    fuzz_gguf("models/qwen2-shape.Q8_0.gguf");
    fuzz_llama2c();
    return test_summary("test_gguf_fuzz");
}
