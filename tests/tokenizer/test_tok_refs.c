/* llama.cpp's reference tokenizations of every shared model
 * (shared/refs/<model>.json): the prompt ids in both modes (auto:
 * add_special + parse_special; bos: [BOS] + parse_special only), the pieces
 * of prompt and generated tokens, BOS/EOS/EOG ids; the phi3 chat
 * renderings; and the llama2.c checkpoint, whose tokenizer.bin must give the
 * same ids as stories260K.gguf. */
#include <dirent.h>
#include <string.h>

#include "harness.h"
#include "json_file.h"
#include "tok_util.h"

static int n_prompts, n_prompts_ok;

static bool ids_equal(const cf_tokens *got, const cf_json *want)
{
    if (!want || want->type != CF_JSON_ARRAY || got->n != want->n)
        return false;
    for (size_t i = 0; i < got->n; i++)
        if (got->ids[i] != (cf_token)json_num(json_at(want, i)))
            return false;
    return true;
}

static bool piece_is(cf_str p, const cf_json *hex)
{
    if (!hex || hex->type != CF_JSON_STRING || hex->len != 2 * p.len)
        return false;
    for (size_t i = 0; i < p.len; i++) {
        char h[3];
        snprintf(h, sizeof h, "%02x", (unsigned char)p.ptr[i]);
        if (memcmp(h, hex->str + 2 * i, 2) != 0)
            return false;
    }
    return true;
}

/* Every id in ids must have the piece in hexes (special = true). */
static void check_pieces(const cf_tokenizer *t, const cf_json *ids, const cf_json *hexes, const char *what)
{
    if (!ids || !hexes)
        return;
    for (size_t i = 0; i < ids->n; i++) {
        cf_token id = (cf_token)json_num(json_at(ids, i));
        CHECKF(piece_is(cf_tok_piece(t, id, true), json_at(hexes, i)), "%s: piece of token %d", what,
               id);
    }
}

static void check_model(const char *model_path, const cf_json *ref, const char *name)
{
    cf_tokenizer *t = tok_open(model_path);
    CHECKF(t != NULL, "%s", model_path);
    if (!t)
        return;
    const cf_json *m = cf_json_get(ref, "model");
    const cf_tok_special *sp = cf_tok_special_ids(t);
    CHECKF(cf_tok_n_vocab(t) == (int32_t)json_num(cf_json_get(m, "n_vocab")), "%s: n_vocab", name);
    CHECKF(sp->bos == (cf_token)json_num(cf_json_get(m, "bos_id")), "%s: bos %d", name, sp->bos);
    CHECKF(sp->eos == (cf_token)json_num(cf_json_get(m, "eos_id")), "%s: eos %d", name, sp->eos);
    CHECKF(cf_tok_add_bos(t) == cf_json_get(m, "vocab_add_bos")->b, "%s: add_bos", name);
    const cf_json *eog = cf_json_get(m, "eog_ids");
    cf_token ids[64];
    size_t n_eog = cf_tok_eog_ids(t, ids, 64);
    /* llama.cpp b4748 did not yet count a "</s>" that is not the EOS as an
     * end of generation (later builds do, and confab follows them), so its
     * refs leave that id out */
    const char *commit = cf_json_get(cf_json_get(ref, "settings"), "llama_cpp_commit")->str;
    if (!strncmp(commit, "c392e5094", 9)) {
        size_t kept = 0;
        for (size_t i = 0; i < n_eog; i++) {
            cf_str text = cf_tok_text(t, ids[i]);
            if (ids[i] == sp->eos || text.len != 4 || memcmp(text.ptr, "</s>", 4))
                ids[kept++] = ids[i];
        }
        n_eog = kept;
    }
    bool eog_ok = eog && n_eog == eog->n;
    for (size_t i = 0; eog_ok && i < n_eog; i++)
        eog_ok = ids[i] == (cf_token)json_num(json_at(eog, i)) && cf_tok_is_eog(t, ids[i]);
    CHECKF(eog_ok, "%s: %zu EOG ids", name, n_eog);

    const cf_json *prompts = cf_json_get(ref, "prompts");
    for (size_t i = 0; prompts && i < prompts->n; i++) {
        const cf_json *p = json_at(prompts, i), *text = cf_json_get(p, "text");
        const char *mode = cf_json_get(cf_json_get(p, "tokenize"), "mode")->str;
        cf_tokens got = {0};
        cf_err err;
        bool bos_mode = strcmp(mode, "bos") == 0;
        if (bos_mode)
            cf_tokens_push(&got, sp->bos);
        CHECK(cf_tokenize(t, text->str, text->len, !bos_mode, true, &got, &err) == 0);
        bool ok = ids_equal(&got, cf_json_get(p, "tokens"));
        n_prompts++;
        n_prompts_ok += ok;
        CHECKF(ok, "%s: prompt '%s' (%zu tokens)", name, cf_json_get(p, "id")->str, got.n);
        check_pieces(t, cf_json_get(p, "tokens"), cf_json_get(p, "token_pieces_hex"), name);
        const cf_json *gr = cf_json_get(p, "greedy");
        check_pieces(t, cf_json_get(gr, "tokens"), cf_json_get(gr, "pieces_hex"), name);
        cf_tokens_free(&got);
    }
    cf_tokenizer_free(t);
}

static void check_phi3_chat(void)
{
    cf_json *ref = json_load_file(shared_path("refs/phi3.Q8_0.chat.json"));
    cf_tokenizer *t = tok_open(shared_path("models/phi3.Q8_0.gguf"));
    CHECK(t != NULL);
    const cf_json *convs = cf_json_get(ref, "conversations");
    for (size_t i = 0; t && convs && i < convs->n; i++) {
        const cf_json *c = json_at(convs, i), *f = cf_json_get(c, "formatted");
        cf_tokens got = {0};
        cf_err err;
        CHECK(cf_tokenize(t, f->str, f->len, true, true, &got, &err) == 0);
        CHECKF(ids_equal(&got, cf_json_get(c, "tokens")), "phi3 chat '%s'", cf_json_get(c, "id")->str);
        n_prompts++;
        n_prompts_ok += ids_equal(&got, cf_json_get(c, "tokens"));
        cf_tokens_free(&got);
    }
    cf_tokenizer_free(t);
    cf_json_free(ref);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    struct dirent **ents;
    int n = scandir(shared_path("refs"), &ents, NULL, by_name);
    CHECK(n > 0);
    int n_models = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        size_t l = strlen(nm);
        char path[4096];
        snprintf(path, sizeof path, "refs/%s", nm);
        if (l > 5 && strcmp(nm + l - 5, ".json") == 0 && !strstr(nm, ".chat.") &&
            strcmp(nm, "prompts.json") != 0) {
            cf_json *ref = json_load_file(shared_path(path));
            const cf_json *file = cf_json_get(cf_json_get(ref, "model"), "file");
            if (file) {
                snprintf(path, sizeof path, "models/%s", file->str);
                check_model(shared_path(path), ref, file->str);
                n_models++;
                if (strcmp(file->str, "stories260K.gguf") == 0) {
                    check_model(shared_path("models/stories260K.bin"), ref, "stories260K.bin");
                    n_models++;
                }
            }
            cf_json_free(ref);
        }
        free(ents[i]);
    }
    free(ents);
    check_phi3_chat();
    printf("%d model files, %d/%d prompt tokenizations match llama.cpp\n", n_models, n_prompts_ok,
           n_prompts);
    return test_summary("tok-refs");
}
