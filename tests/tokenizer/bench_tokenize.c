/* Tokenizer throughput on one core: about 1 MB of generated mixed text
 * (English prose, code, CJK, emoji, numbers) through the llama-bpe, qwen2
 * and llama-spm vocabularies (and any other vocabulary files named on the
 * command line).  A benchmark, not a test:
 *   build/tests/tokenizer/bench_tokenize [FILE.gguf ...] */
#include <string.h>
#include <time.h>

#include "harness.h"
#include "tok_util.h"

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)((rs >> 32) % n);
}

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const char *s)
{
    size_t l = strlen(s);
    if (b->n + l + 1 > b->cap) {
        b->cap = 2 * (b->n + l + 1);
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, l + 1);
    b->n += l;
}

static void put_cp(buf *b, uint32_t c)
{
    char s[5] = {0};
    if (c < 0x800) {
        s[0] = (char)(0xC0 | c >> 6), s[1] = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        s[0] = (char)(0xE0 | c >> 12), s[1] = (char)(0x80 | (c >> 6 & 0x3F));
        s[2] = (char)(0x80 | (c & 0x3F));
    } else {
        s[0] = (char)(0xF0 | c >> 18), s[1] = (char)(0x80 | (c >> 12 & 0x3F));
        s[2] = (char)(0x80 | (c >> 6 & 0x3F)), s[3] = (char)(0x80 | (c & 0x3F));
    }
    put(b, s);
}

static const char *const words[] = {
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have",
    "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has",
    "there", "been", "if", "more", "when", "will", "would", "who", "so", "no", "morning",
    "village", "fisherman", "storm", "harbor", "children", "quickly", "beautiful",
    "government", "understanding", "responsibility", "tokenizer", "don't", "it's", "we'll",
    "Internationalization", "naïve", "café", "résumé", "Zürich", "coöperate"};
static const char *const code[] = {
    "for (int i = 0; i < n; i++) {\n", "    sum += a[i] * b[i];\n", "}\n",
    "def tokenize(text: str) -> list[int]:\n", "    return [ord(c) for c in text]\n",
    "if (x != NULL && x->len > 0) return -1;\n", "\tprintf(\"%d\\n\", value);\n",
    "const auto it = map.find(key); // lookup\n", "    # TODO: handle the edge case\n",
    "#include <stdio.h>\n", "x = {'a': 1, \"b\": [2, 3]}\n", "    }\n\n"};
static const char *const emoji[] = {"\xf0\x9f\x98\x80", "\xf0\x9f\xa6\x99", "\xf0\x9f\x9a\x80",
                                    "\xe2\x9c\x85", "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd",
                                    "\xf0\x9f\x98\xb6\xe2\x80\x8d\xf0\x9f\x8c\xab\xef\xb8\x8f"};

static char *mixed_text(size_t target, size_t *len)
{
    buf b = {0};
    put(&b, "");
    while (b.n < target) {
        uint32_t kind = rnd(100);
        if (kind < 50) { /* prose */
            for (int s = 0; s < 4; s++) {
                for (int w = 0, nw = 6 + (int)rnd(12); w < nw; w++) {
                    const char *word = words[rnd(sizeof words / sizeof words[0])];
                    if (w == 0) {
                        char cap[64];
                        snprintf(cap, sizeof cap, "%s", word);
                        cap[0] = (char)(cap[0] >= 'a' && cap[0] <= 'z' ? cap[0] - 32 : cap[0]);
                        put(&b, cap);
                    } else {
                        put(&b, " ");
                        put(&b, word);
                    }
                    if (rnd(10) == 0)
                        put(&b, ",");
                }
                put(&b, rnd(5) ? ". " : "? ");
                if (rnd(8) == 0)
                    put(&b, emoji[rnd(sizeof emoji / sizeof emoji[0])]);
            }
            put(&b, "\n\n");
        } else if (kind < 70) { /* code */
            for (int l = 0; l < 8; l++)
                put(&b, code[rnd(sizeof code / sizeof code[0])]);
        } else if (kind < 85) { /* CJK with punctuation */
            for (int c = 0, nc = 20 + (int)rnd(60); c < nc; c++) {
                put_cp(&b, rnd(4) ? 0x4E00 + rnd(0x51A6) : 0x3041 + rnd(0x56));
                if (rnd(15) == 0)
                    put_cp(&b, rnd(2) ? 0x3002 : 0xFF0C);
            }
            put(&b, "\n");
        } else { /* numbers */
            char num[64];
            for (int k = 0; k < 10; k++) {
                snprintf(num, sizeof num, "%u.%02u %u-%02u-%02u %u ", rnd(100000), rnd(100),
                         1900 + rnd(200), 1 + rnd(12), 1 + rnd(28), rnd(1u << 31));
                put(&b, num);
            }
            put(&b, "\n");
        }
    }
    *len = b.n;
    return b.p;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void bench(const char *path, const char *text, size_t len)
{
    cf_tokenizer *t = tok_open(path);
    if (!t)
        return;
    double best = 1e9;
    size_t n_tok = 0;
    for (int rep = 0; rep < 3; rep++) {
        cf_tokens v = {0};
        cf_err err;
        double t0 = cpu_now();
        if (cf_tokenize(t, text, len, false, false, &v, &err))
            fprintf(stderr, "%s\n", err.msg);
        double dt = cpu_now() - t0;
        best = dt < best ? dt : best;
        n_tok = v.n;
        cf_tokens_free(&v);
    }
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    printf("  %-30s %8zu tokens  %7.1f ms  %6.2f MB/s\n", name, n_tok, best * 1e3,
           (double)len / 1e6 / best);
    cf_tokenizer_free(t);
}

int main(int argc, char **argv)
{
    size_t len;
    char *text = mixed_text(1000000, &len);
    printf("%zu bytes of mixed text, one core (CPU time, best of 3):\n", len);
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            bench(argv[i], text, len);
    } else if (shared_dir()) {
        bench(shared_path("vocab/ggml-vocab-llama-bpe.gguf"), text, len);
        bench(shared_path("vocab/ggml-vocab-qwen2.gguf"), text, len);
        bench(shared_path("vocab/ggml-vocab-llama-spm.gguf"), text, len);
    } else {
        printf("no vocabularies: name GGUF files, or put ../shared beside the checkout\n");
    }
    free(text);
    return 0;
}
