/* The model stores: names read from file names, the fake stores of
 * fake_stores.sh (every layout, a damaged file, a split model, a missing
 * blob, an older snapshot, one name in two stores) listed with their
 * headers, what names mean, and the environment variables that move the
 * stores. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/store.h"
#include "harness.h"
#include "store_internal.h"

static void quant_names(void)
{
    static const char *const cases[][2] = {
        {"Qwen3-0.6B-Q8_0.gguf", "Q8_0"},
        {"qwen2.5-0.5b-instruct-q4_k_m.gguf", "Q4_K_M"},
        {"llama-2-7b.Q5_K_S.gguf", "Q5_K_S"},
        {"Llama-3.2-1B-Instruct-IQ4_XS.gguf", "IQ4_XS"},
        {"Qwen3-30B-A3B-UD-Q4_K_XL.gguf", "UD-Q4_K_XL"},
        {"gpt-oss-20b-mxfp4.gguf", "MXFP4"},
        {"gpt-oss-20b-MXFP4_MOE.gguf", "MXFP4_MOE"},
        {"gemma-3-1b-it-BF16.gguf", "BF16"},
        {"model-f16.gguf", "F16"},
        {"bitnet-TQ2_0.gguf", "TQ2_0"},
        {"big-Q4_K_M-00001-of-00003.gguf", "Q4_K_M"},
        {"qwen3-0.6b.gguf", NULL},
        {"stories260K.gguf", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char q[32];
        bool got = store_quant_of(cases[i][0], q, sizeof q);
        if (cases[i][1])
            CHECKF(got && !strcmp(q, cases[i][1]), "%s: %s", cases[i][0], got ? q : "(none)");
        else
            CHECKF(!got, "%s: %s", cases[i][0], q);
    }
}

static const cf_store_entry *by_name(const cf_store *st, const char *name, cf_store_kind k)
{
    for (int i = 0; i < cf_store_count(st); i++)
        if (!strcmp(cf_store_at(st, i)->name, name) && cf_store_at(st, i)->store == k)
            return cf_store_at(st, i);
    return NULL;
}

static cf_store *scan(const char *dir, bool headers)
{
    char own[4200];
    cf_store *st = NULL;
    cf_err err;
    snprintf(own, sizeof own, "%s/data/confab/models", dir);
    CHECKF(cf_store_scan(own, headers, &st, &err) == 0, "%s", err.msg);
    return st;
}

static void listing(const char *dir)
{
    /* store order, then names in any case */
    static const struct {
        cf_store_kind k;
        const char *name;
    } want[] = {
        {CF_STORE_CONFAB, "big"},
        {CF_STORE_CONFAB, "broken"},
        {CF_STORE_CONFAB, "stories260K"},
        {CF_STORE_OLLAMA, "gone:latest"},
        {CF_STORE_OLLAMA, "hf.co/bartowski/SmolLM2-135M-Instruct-GGUF:Q8_0"},
        {CF_STORE_OLLAMA, "qwen3:0.6b"},
        {CF_STORE_OLLAMA, "qwen3:1.7b"},
        {CF_STORE_OLLAMA, "someone/tiny:latest"},
        {CF_STORE_HF, "bartowski/SmolLM2-135M-Instruct-GGUF:Q8_0"},
        {CF_STORE_HF, "Qwen/Qwen3-0.6B-GGUF:BF16"},
        {CF_STORE_HF, "Qwen/Qwen3-0.6B-GGUF:F16"},
        {CF_STORE_HF, "Qwen/Qwen3-0.6B-GGUF:Q2_K"},
        {CF_STORE_HF, "Qwen/Qwen3-0.6B-GGUF:Q4_K_M"},
        {CF_STORE_HF, "Qwen/Qwen3-0.6B-GGUF:Q8_0"},
        {CF_STORE_HF, "someone/two-GGUF/two-instruct-Q8_0.gguf"},
        {CF_STORE_HF, "someone/two-GGUF/two-Q8_0.gguf"},
        {CF_STORE_LLAMACPP, "bartowski/SmolLM2-135M-Instruct-GGUF:Q8_0"},
        {CF_STORE_LLAMACPP, "my-model"},
        {CF_STORE_LLAMACPP, "unsloth/gemma-3-1b-it-GGUF:Q8_0"},
        {CF_STORE_LMSTUDIO, "lmstudio-community/Phi-3-mini-GGUF:Q8_0"},
        {CF_STORE_LMSTUDIO, "TheBloke/Llama-2-7B-GGUF:Q8_0"},
    };
    const int n = (int)(sizeof want / sizeof want[0]);
    cf_store *st = scan(dir, true);
    if (!st)
        return;
    CHECKF(cf_store_count(st) == n, "%d entries", cf_store_count(st));
    for (int i = 0; i < n && i < cf_store_count(st); i++) {
        const cf_store_entry *e = cf_store_at(st, i);
        CHECKF(e->store == want[i].k && !strcmp(e->name, want[i].name), "entry %d: %s %s", i,
               cf_store_kind_name(e->store), e->name);
    }

    const cf_store_entry *e = by_name(st, "qwen3:0.6b", CF_STORE_OLLAMA);
    CHECK(e && !e->problem && !strcmp(e->arch, "qwen3") && !strcmp(e->quant, "Q8_0") &&
          e->n_ctx == 40960 && e->size == 11133472 && strstr(e->path, "/.ollama/models/blobs/sha256-"));
    e = by_name(st, "stories260K", CF_STORE_CONFAB);
    /* no general.file_type: the tensors' type */
    CHECK(e && !strcmp(e->quant, "F32") && e->n_ctx == 2048 && !strcmp(e->file_name, "stories260K.gguf"));
    /* refs/main's snapshot wins over an older one; a file only the older has is listed */
    e = by_name(st, "Qwen/Qwen3-0.6B-GGUF:Q8_0", CF_STORE_HF);
    CHECK(e && !strcmp(e->arch, "qwen3") && strstr(e->path, "/snapshots/5a6fd4ba") &&
          !strcmp(e->file_name, "Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf"));
    e = by_name(st, "Qwen/Qwen3-0.6B-GGUF:F16", CF_STORE_HF);
    CHECK(e && strstr(e->path, "/snapshots/0d3e5c76"));
    e = by_name(st, "Qwen/Qwen3-0.6B-GGUF:BF16", CF_STORE_HF);
    CHECK(e && !strcmp(e->file_name, "Qwen/Qwen3-0.6B-GGUF/BF16/Qwen3-0.6B-BF16.gguf") && !e->problem);
    e = by_name(st, "unsloth/gemma-3-1b-it-GGUF:Q8_0", CF_STORE_LLAMACPP);
    CHECK(e && !strcmp(e->arch, "gemma3"));
    e = by_name(st, "my-model", CF_STORE_LLAMACPP);
    CHECK(e && !strcmp(e->arch, "olmo2") && !strcmp(e->file_name, "my-model.gguf"));

    /* what cannot be used says why */
    e = by_name(st, "big", CF_STORE_CONFAB);
    CHECKF(e && e->problem && strstr(e->problem, "split into 2 files"), "%s", e ? e->problem : "");
    e = by_name(st, "broken", CF_STORE_CONFAB);
    CHECKF(e && e->problem && strstr(e->problem, "truncated") && !strstr(e->problem, dir), "%s",
           e ? e->problem : "");
    e = by_name(st, "gone:latest", CF_STORE_OLLAMA);
    CHECKF(e && e->problem && strstr(e->problem, "blob"), "%s", e ? e->problem : "");
    e = by_name(st, "Qwen/Qwen3-0.6B-GGUF:Q2_K", CF_STORE_HF);
    CHECKF(e && e->problem && strstr(e->problem, "missing"), "%s", e ? e->problem : "");

    char *json = cf_store_json(st);
    cf_json *j = NULL;
    cf_err err;
    CHECKF(json && cf_json_parse(json, strlen(json), NULL, &j, &err) == 0, "%s", json ? err.msg : "");
    CHECK(j && j->type == CF_JSON_ARRAY && (int)j->n == n);
    if (j && j->n > 2) {
        const cf_json *o = j->items[2];
        CHECK(!strcmp(store_json_str(o, "name"), "stories260K") &&
              !strcmp(store_json_str(o, "store"), "confab") &&
              cf_json_get(o, "context")->i == 2048 && cf_json_get(o, "problem")->type == CF_JSON_NULL);
        CHECK(store_json_str(j->items[0], "problem") != NULL);
    }
    cf_json_free(j);
    free(json);
    cf_store_free(st);
}

/* name -> the entry's name and store, or NULL: not found */
static void expect(const cf_store *st, const char *name, const char *want, cf_store_kind k)
{
    cf_store_match m;
    cf_store_find(st, name, &m);
    if (want)
        CHECKF(m.found && !strcmp(m.found->name, want) && m.found->store == k, "%s -> %s", name,
               m.found ? m.found->name : "nothing");
    else
        CHECKF(!m.found, "%s -> %s", name, m.found->name);
}

static void names(const char *dir)
{
    cf_store *st = scan(dir, false);
    if (!st)
        return;
    expect(st, "qwen3:0.6b", "qwen3:0.6b", CF_STORE_OLLAMA);
    expect(st, "QWEN3:0.6B", "qwen3:0.6b", CF_STORE_OLLAMA);
    expect(st, "someone/tiny", "someone/tiny:latest", CF_STORE_OLLAMA);
    expect(st, "stories260K.gguf", "stories260K", CF_STORE_CONFAB);
    expect(st, "stor", "stories260K", CF_STORE_CONFAB);
    /* llama.cpp's default quant */
    expect(st, "Qwen/Qwen3-0.6B-GGUF", "Qwen/Qwen3-0.6B-GGUF:Q4_K_M", CF_STORE_HF);
    expect(st, "qwen/qwen3-0.6b-gguf:q8_0", "Qwen/Qwen3-0.6B-GGUF:Q8_0", CF_STORE_HF);
    expect(st, "Qwen/Qwen3-0.6B-GGUF/BF16/Qwen3-0.6B-BF16.gguf", "Qwen/Qwen3-0.6B-GGUF:BF16",
           CF_STORE_HF);
    /* in two stores: the first store's, and as a prefix one name */
    expect(st, "bartowski/SmolLM2-135M-Instruct-GGUF:Q8_0",
           "bartowski/SmolLM2-135M-Instruct-GGUF:Q8_0", CF_STORE_HF);
    expect(st, "bartowski/smollm2", "bartowski/SmolLM2-135M-Instruct-GGUF:Q8_0", CF_STORE_HF);
    expect(st, "TheBloke/Llama-2", "TheBloke/Llama-2-7B-GGUF:Q8_0", CF_STORE_LMSTUDIO);
    expect(st, "unsloth_gemma-3-1b-it-GGUF_gemma-3-1b-it-Q8_0.gguf", NULL, 0);
    expect(st, "my-model.gguf", "my-model", CF_STORE_LLAMACPP);
    /* a name that cannot be used is still what it means */
    expect(st, "gone", "gone:latest", CF_STORE_OLLAMA);
    expect(st, "big", "big", CF_STORE_CONFAB);

    cf_store_match m;
    cf_store_find(st, "qwen3", &m);
    CHECK(!m.found && m.ambiguous && m.n_matching == 2 && m.n_near == 2 &&
          !strcmp(m.near[0]->name, "qwen3:0.6b") && !strcmp(m.near[1]->name, "qwen3:1.7b"));
    cf_store_find(st, "Qwen/Qwen3-0.6B-GGUF:", &m);
    CHECK(!m.found && m.ambiguous && m.n_matching == 5 && m.n_near == 5);
    cf_store_find(st, "q", &m);
    CHECK(!m.found && m.ambiguous && m.n_matching == 7 && m.n_near == CF_STORE_NEAR_MAX);
    cf_store_find(st, "someone/two", &m);
    CHECK(!m.found && m.ambiguous && m.n_matching == 2);
    cf_store_find(st, "qwen4", &m);
    CHECKF(!m.found && !m.ambiguous && m.n_near == 2 && !strcmp(m.near[0]->name, "qwen3:0.6b"),
           "%d near", m.n_near);
    cf_store_find(st, "tiny", &m);
    CHECK(!m.found && m.n_near == 1 && !strcmp(m.near[0]->name, "someone/tiny:latest"));
    cf_store_find(st, "nothing-like-this", &m);
    CHECK(!m.found && !m.ambiguous && m.n_near == 0);
    cf_store_free(st);
}

static int count_in(const cf_store *st, cf_store_kind k)
{
    int n = 0;
    for (int i = 0; i < cf_store_count(st); i++)
        n += cf_store_at(st, i)->store == k;
    return n;
}

static void environment(const char *dir)
{
    char path[4200];
    cf_store *st;
    /* each store's own variable moves it */
    setenv("OLLAMA_MODELS", "/nonexistent", 1);
    setenv("HF_HUB_CACHE", "/nonexistent", 1);
    setenv("LLAMA_CACHE", "/nonexistent", 1);
    if ((st = scan(dir, false))) {
        CHECK(count_in(st, CF_STORE_OLLAMA) == 0 && count_in(st, CF_STORE_HF) == 0 &&
              count_in(st, CF_STORE_LLAMACPP) == 0 && count_in(st, CF_STORE_LMSTUDIO) == 2);
        CHECK(!strcmp(cf_store_dir(st, CF_STORE_OLLAMA), "/nonexistent"));
        cf_store_free(st);
    }
    snprintf(path, sizeof path, "%s/home/.ollama/models", dir);
    setenv("OLLAMA_MODELS", path, 1);
    unsetenv("HF_HUB_CACHE");
    snprintf(path, sizeof path, "%s/home/.cache/huggingface", dir);
    setenv("HF_HOME", path, 1);
    snprintf(path, sizeof path, "%s/home/.cache/llama.cpp", dir);
    setenv("LLAMA_CACHE", path, 1);
    if ((st = scan(dir, false))) {
        CHECK(count_in(st, CF_STORE_OLLAMA) == 5 && count_in(st, CF_STORE_HF) == 8 &&
              count_in(st, CF_STORE_LLAMACPP) == 3);
        cf_store_free(st);
    }
    /* XDG_CACHE_HOME moves the hub and llama.cpp's cache, not LM Studio's */
    unsetenv("HF_HOME");
    unsetenv("LLAMA_CACHE");
    setenv("XDG_CACHE_HOME", "/nonexistent", 1);
    if ((st = scan(dir, false))) {
        CHECK(count_in(st, CF_STORE_HF) == 0 && count_in(st, CF_STORE_LLAMACPP) == 0 &&
              count_in(st, CF_STORE_LMSTUDIO) == 2);
        cf_store_free(st);
    }
    /* no folders at all: an empty list */
    unsetenv("HOME");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("OLLAMA_MODELS");
    if ((st = scan(dir, false))) {
        CHECK(count_in(st, CF_STORE_CONFAB) == 3 && cf_store_count(st) == 3 &&
              !cf_store_dir(st, CF_STORE_HF));
        cf_store_free(st);
    }
}

int main(void)
{
    quant_names();
    const char *src = getenv("CONFAB_SRC");
    if (!shared_dir() || !src) {
        fprintf(stderr, "no shared models or CONFAB_SRC: store tests skipped\n");
        return test_summary("store") ? 1 : TEST_SKIP;
    }
    char dir[] = "/tmp/confab-store.XXXXXX", cmd[8192];
    if (!mkdtemp(dir))
        return 1;
    snprintf(cmd, sizeof cmd, "sh '%s/tests/store/fake_stores.sh' '%s' '%s'", src, dir,
             shared_path("models"));
    CHECK(system(cmd) == 0);
    char home[4200], data[4200];
    snprintf(home, sizeof home, "%s/home", dir);
    snprintf(data, sizeof data, "%s/data", dir);
    setenv("HOME", home, 1);
    setenv("XDG_DATA_HOME", data, 1);
    unsetenv("XDG_CACHE_HOME");
    unsetenv("OLLAMA_MODELS");
    unsetenv("HF_HOME");
    unsetenv("HF_HUB_CACHE");
    unsetenv("LLAMA_CACHE");
    listing(dir);
    names(dir);
    environment(dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return test_summary("store");
}
