/* llama.cpp's tokenizer test vectors (shared/vocab/ggml-vocab-*.gguf.inp and
 * .out, read as tests/test-tokenizer-0.cpp reads them): every string must
 * give exactly the expected ids with add_special = false and
 * parse_special = false, and decode back to itself. */
#include <dirent.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "tok_util.h"

#define SEP "\n__ggml_vocab_test__\n"

static int n_total, n_passed, n_round, n_round_ok;

/* Expected ids of one .out line: space-separated integers. */
static size_t parse_ids(const char *line, size_t len, cf_token *ids, size_t cap)
{
    size_t n = 0;
    const char *p = line, *end = line + len;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\r'))
            p++;
        if (p >= end)
            break;
        char *q;
        long v = strtol(p, &q, 10);
        if (q == p)
            break;
        if (n < cap)
            ids[n] = (cf_token)v;
        n++;
        p = q;
    }
    return n;
}

static void print_ids(const char *what, const cf_token *ids, size_t n)
{
    fprintf(stderr, "  %s:", what);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %d", ids[i]);
    fputc('\n', stderr);
}

static void run_vocab(const char *dir, const char *name)
{
    char path[4096], inp_path[4200], out_path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    path[strlen(path) - 4] = 0; /* drop ".inp" */
    if (access(path, R_OK) != 0)
        return;
    snprintf(inp_path, sizeof inp_path, "%s.inp", path);
    snprintf(out_path, sizeof out_path, "%s.out", path);
    cf_tokenizer *t = tok_open(path);
    CHECKF(t != NULL, "%s", path);
    if (!t)
        return;
    size_t inp_len, out_len;
    char *inp = tok_slurp(inp_path, &inp_len), *outs = tok_slurp(out_path, &out_len);
    CHECK(inp && outs);
    int passed = 0, total = 0, round = 0, round_ok = 0;
    const char *ip = inp, *op = outs;
    while (inp && outs && ip < inp + inp_len && op < outs + out_len) {
        const char *sep = strstr(ip, SEP);
        size_t slen = sep ? (size_t)(sep - ip) : strlen(ip);
        const char *nl = memchr(op, '\n', (size_t)(outs + out_len - op));
        size_t olen = nl ? (size_t)(nl - op) : (size_t)(outs + out_len - op);
        cf_token want[4096];
        size_t n_want = parse_ids(op, olen, want, 4096);
        cf_tokens got = {0};
        cf_err err;
        CHECK(cf_tokenize(t, ip, slen, false, false, &got, &err) == 0);
        bool ok = got.n == n_want &&
                  (n_want == 0 || memcmp(got.ids, want, n_want * sizeof *want) == 0);
        total++;
        passed += ok;
        if (!ok) {
            fprintf(stderr, "%s: string %d '%.*s'\n", name, total, (int)slen, ip);
            print_ids("want", want, n_want);
            print_ids("got ", got.ids, got.n);
        }
        char back[8192];
        size_t blen = cf_detokenize(t, got.ids, got.n, false, false, back, sizeof back);
        round++;
        if (blen == slen && memcmp(back, ip, slen) == 0)
            round_ok++;
        else
            fprintf(stderr, "%s: string %d does not decode back: '%.*s' -> '%.*s'\n", name, total,
                    (int)slen, ip, (int)(blen < sizeof back ? blen : sizeof back), back);
        cf_tokens_free(&got);
        ip = sep ? sep + strlen(SEP) : ip + slen;
        op = nl ? nl + 1 : outs + out_len;
    }
    printf("%-36s %2d/%2d strings match, %2d/%2d decode back\n", name, passed, total, round_ok,
           round);
    CHECKF(passed == total && total > 0, "%s: %d of %d", name, passed, total);
    n_total += total;
    n_passed += passed;
    n_round += round;
    n_round_ok += round_ok;
    free(inp);
    free(outs);
    cf_tokenizer_free(t);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    if (!shared_dir())
        return TEST_SKIP;
    const char *dir = shared_path("vocab");
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, by_name);
    CHECK(n > 0);
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        size_t l = strlen(nm);
        if (l > 9 && strcmp(nm + l - 9, ".gguf.inp") == 0 && (argc < 2 || strstr(nm, argv[1])))
            run_vocab(dir, nm);
        free(ents[i]);
    }
    free(ents);
    printf("all vocabularies: %d/%d strings match, %d/%d decode back\n", n_passed, n_total,
           n_round_ok, n_round);
    return test_summary("tok-vectors");
}
