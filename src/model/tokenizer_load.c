/* Building a tokenizer from GGUF metadata, as llama.cpp's llama_vocab::load
 * (b4748) does: token texts, scores and types, special ids and their
 * defaults, the text-based detection of end-of-turn and FIM tokens, the
 * end-of-generation set, the special-token list and the pieces. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer_internal.h"
#include "unicode.h"

#define MAX_VOCAB (1 << 24)

static const char *const supported_models = "llama (SPM), gpt2 (byte-level BPE)";

static uint32_t attr_of_type(int64_t type)
{
    switch (type) {
    case TT_NORMAL:
        return CF_TOKEN_ATTR_NORMAL;
    case TT_UNKNOWN:
        return CF_TOKEN_ATTR_UNKNOWN;
    case TT_CONTROL:
        return CF_TOKEN_ATTR_CONTROL;
    case TT_USER_DEFINED:
        return CF_TOKEN_ATTR_USER_DEFINED;
    case TT_UNUSED:
        return CF_TOKEN_ATTR_UNUSED;
    case TT_BYTE:
        return CF_TOKEN_ATTR_BYTE;
    default:
        return CF_TOKEN_ATTR_UNDEFINED;
    }
}

static int pick_type(cf_tokenizer *t, const cf_gguf *g, cf_err *err)
{
    cf_str model, pre = {"", 0};
    if (!cf_gguf_get_str(g, "tokenizer.ggml.model", &model))
        return cf_fail(err, "no tokenizer in this file (tokenizer.ggml.model is missing); "
                            "supported tokenizers: %s", supported_models);
    bool has_pre = cf_gguf_get_str(g, "tokenizer.ggml.pre", &pre);
    snprintf(t->model, sizeof t->model, "%.*s", (int)(model.len < 23 ? model.len : 23), model.ptr);
    if (model.len == 5 && memcmp(model.ptr, "llama", 5) == 0) {
        t->type = CF_TOK_SPM;
        return 0;
    }
    if (!(model.len == 4 && memcmp(model.ptr, "gpt2", 4) == 0))
        return cf_fail(err, "unsupported tokenizer.ggml.model '%.*s'; supported: %s",
                       (int)(model.len > 64 ? 64 : model.len), model.ptr, supported_models);
    t->type = CF_TOK_BPE;
    if (!has_pre || pre.len == 0) /* llama.cpp warns and uses 'default' */
        pre = (cf_str){"default", 7};
    if (cf_pretok_find(pre.ptr, pre.len, &t->pretok) != 0) {
        char names[1024];
        cf_pretok_list(names, sizeof names);
        return cf_fail(err, "unsupported tokenizer.ggml.pre '%.*s'; supported: %s",
                       (int)(pre.len > 64 ? 64 : pre.len), pre.ptr, names);
    }
    snprintf(t->pre, sizeof t->pre, "%.*s", (int)(pre.len < 47 ? pre.len : 47), pre.ptr);
    return 0;
}

/* Texts, scores and attributes of every token. */
static int load_tokens(cf_tokenizer *t, const cf_gguf *g, cf_err *err)
{
    const cf_gguf_kv *tokens = cf_gguf_get_arr(g, "tokenizer.ggml.tokens", CF_GGUF_STRING);
    if (!tokens)
        return cf_fail(err, "tokenizer.ggml.tokens is missing or not a string array");
    if (tokens->n == 0 || tokens->n > MAX_VOCAB)
        return cf_fail(err, "tokenizer.ggml.tokens has %llu entries (1 to %d supported)",
                       (unsigned long long)tokens->n, MAX_VOCAB);
    int32_t n = (int32_t)tokens->n;
    const cf_gguf_kv *scores = cf_gguf_get_arr(g, "tokenizer.ggml.scores", CF_GGUF_VTYPE_COUNT);
    if (scores && ((scores->elem != CF_GGUF_FLOAT32 && scores->elem != CF_GGUF_INT32) ||
                   scores->n < tokens->n))
        return cf_fail(err, "tokenizer.ggml.scores: %llu %s values for %d tokens",
                       (unsigned long long)scores->n, cf_gguf_vtype_name(scores->elem), n);
    const cf_gguf_kv *types = cf_gguf_get_arr(g, "tokenizer.ggml.token_type", CF_GGUF_VTYPE_COUNT);
    if (types && (types->elem == CF_GGUF_STRING || types->elem == CF_GGUF_ARRAY ||
                  types->n < tokens->n))
        return cf_fail(err, "tokenizer.ggml.token_type: %llu %s values for %d tokens",
                       (unsigned long long)types->n, cf_gguf_vtype_name(types->elem), n);

    size_t bytes = 0;
    for (int32_t i = 0; i < n; i++)
        bytes += tokens->strs[i].len ? tokens->strs[i].len : 24; /* "[EMPTY_i]" */
    t->n_vocab = n;
    t->text = calloc((size_t)n, sizeof *t->text);
    t->score = calloc((size_t)n, sizeof *t->score);
    t->attr = calloc((size_t)n, sizeof *t->attr);
    t->arena = malloc(bytes + 1);
    if (!t->text || !t->score || !t->attr || !t->arena || cf_strmap_init(&t->map, t->text, (uint32_t)n))
        return cf_fail(err, "out of memory loading a %d-token vocabulary", n);
    char *p = t->arena;
    for (int32_t i = 0; i < n; i++) {
        cf_str s = tokens->strs[i];
        size_t len = s.len;
        if (len)
            memcpy(p, s.ptr, len);
        else /* llama.cpp renames empty tokens */
            len = (size_t)snprintf(p, 24, "[EMPTY_%d]", i);
        t->text[i] = (cf_str){p, len};
        p += len;
        t->score[i] = scores ? (float)cf_gguf_kv_float(scores, (uint64_t)i) : 0.0f;
        t->attr[i] = types ? attr_of_type(cf_gguf_kv_int(types, (uint64_t)i)) : CF_TOKEN_ATTR_NORMAL;
        cf_strmap_put(&t->map, (uint32_t)i);
    }
    return 0;
}

/* Special ids: the model type's defaults (out-of-range ones dropped), then
 * the keys that name one inside the vocabulary. */
static void load_special_ids(cf_tokenizer *t, const cf_gguf *g)
{
    cf_tok_special *s = &t->ids;
    cf_token *all[] = {&s->bos,     &s->eos,     &s->eot,     &s->eom,     &s->unk,
                       &s->sep,     &s->pad,     &s->fim_pre, &s->fim_suf, &s->fim_mid,
                       &s->fim_pad, &s->fim_rep, &s->fim_sep};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        *all[i] = CF_TOKEN_NULL;
    if (t->type == CF_TOK_SPM) {
        s->bos = 1;
        s->eos = 2;
        s->unk = 0;
    } else {
        s->bos = 11;
        s->eos = 11;
        if (strcmp(t->pre, "chatglm-bpe") == 0)
            s->bos = CF_TOKEN_NULL;
    }
    static const struct {
        const char *key;
        size_t field;
    } keys[] = {
        {"tokenizer.ggml.bos_token_id", offsetof(cf_tok_special, bos)},
        {"tokenizer.ggml.eos_token_id", offsetof(cf_tok_special, eos)},
        {"tokenizer.ggml.eot_token_id", offsetof(cf_tok_special, eot)},
        {"tokenizer.ggml.eom_token_id", offsetof(cf_tok_special, eom)},
        {"tokenizer.ggml.unknown_token_id", offsetof(cf_tok_special, unk)},
        {"tokenizer.ggml.seperator_token_id", offsetof(cf_tok_special, sep)},
        {"tokenizer.ggml.padding_token_id", offsetof(cf_tok_special, pad)},
        {"tokenizer.ggml.fim_pre_token_id", offsetof(cf_tok_special, fim_pre)},
        {"tokenizer.ggml.fim_suf_token_id", offsetof(cf_tok_special, fim_suf)},
        {"tokenizer.ggml.fim_mid_token_id", offsetof(cf_tok_special, fim_mid)},
        {"tokenizer.ggml.fim_pad_token_id", offsetof(cf_tok_special, fim_pad)},
        {"tokenizer.ggml.fim_rep_token_id", offsetof(cf_tok_special, fim_rep)},
        {"tokenizer.ggml.fim_sep_token_id", offsetof(cf_tok_special, fim_sep)},
        /* deprecated names */
        {"tokenizer.ggml.prefix_token_id", offsetof(cf_tok_special, fim_pre)},
        {"tokenizer.ggml.suffix_token_id", offsetof(cf_tok_special, fim_suf)},
        {"tokenizer.ggml.middle_token_id", offsetof(cf_tok_special, fim_mid)},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        cf_token *id = (cf_token *)((char *)s + keys[i].field);
        if (*id >= t->n_vocab)
            *id = CF_TOKEN_NULL;
        int64_t v;
        if (cf_gguf_get_i64(g, keys[i].key, &v) && v >= 0 && v < t->n_vocab)
            *id = (cf_token)v;
    }
}

static bool text_is(const cf_tokenizer *t, cf_token id, const char *const *list)
{
    for (; *list; list++)
        if (t->text[id].len == strlen(*list) && memcmp(t->text[id].ptr, *list, t->text[id].len) == 0)
            return true;
    return false;
}

/* A token found by its text must be a control token (llama.cpp overrides
 * the type of one that is not). */
static void detect(cf_tokenizer *t, cf_token *id, const char *const *texts)
{
    if (*id != CF_TOKEN_NULL)
        return;
    for (cf_token i = 0; i < t->n_vocab; i++)
        if (text_is(t, i, texts)) {
            *id = i;
            t->attr[i] |= CF_TOKEN_ATTR_CONTROL;
            return;
        }
}

/* llama.cpp finds these by text (b4748's lists).  It walks a hash map, so
 * when several texts match its pick is arbitrary; here the lowest id wins. */
static void detect_special(cf_tokenizer *t)
{
    static const char *const eot[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
                                      "<|endoftext|>", "<EOT>", "_<EOT>",
                                      "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
                                      NULL};
    static const char *const eom[] = {"<|eom_id|>", NULL};
    static const char *const pre[] = {"<|fim_prefix|>", "<fim-prefix>",
                                      "<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>", "<PRE>",
                                      NULL};
    static const char *const suf[] = {"<|fim_suffix|>", "<fim-suffix>",
                                      "<\xef\xbd\x9c" "fim\xe2\x96\x81hole\xef\xbd\x9c>", "<SUF>", NULL};
    static const char *const mid[] = {"<|fim_middle|>", "<fim-middle>",
                                      "<\xef\xbd\x9c" "fim\xe2\x96\x81" "end\xef\xbd\x9c>", "<MID>", NULL};
    static const char *const pad[] = {"<|fim_pad|>", "<fim-pad>", "<PAD>", NULL};
    static const char *const rep[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", NULL};
    static const char *const sep[] = {"<|file_sep|>", NULL};
    detect(t, &t->ids.eot, eot);
    detect(t, &t->ids.eom, eom);
    detect(t, &t->ids.fim_pre, pre);
    detect(t, &t->ids.fim_suf, suf);
    detect(t, &t->ids.fim_mid, mid);
    detect(t, &t->ids.fim_pad, pad);
    detect(t, &t->ids.fim_rep, rep);
    detect(t, &t->ids.fim_sep, sep);

    static const char *const eog[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
                                      "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "</s>", NULL};
    for (cf_token i = 0; i < t->n_vocab; i++)
        if (text_is(t, i, eog))
            t->attr[i] |= TOK_ATTR_EOG | CF_TOKEN_ATTR_CONTROL;
    const cf_token always[] = {t->ids.fim_pad, t->ids.fim_rep, t->ids.fim_sep,
                               t->ids.eos,     t->ids.eot,     t->ids.eom};
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
        if (always[i] != CF_TOKEN_NULL)
            t->attr[always[i]] |= TOK_ATTR_EOG;
}

static int by_length_desc(const void *a, const void *b, void *ctx)
{
    const cf_tokenizer *t = ctx;
    cf_token x = *(const cf_token *)a, y = *(const cf_token *)b;
    if (t->text[x].len != t->text[y].len)
        return t->text[x].len > t->text[y].len ? -1 : 1;
    return (x > y) - (x < y);
}

static int list_special(cf_tokenizer *t)
{
    const uint32_t kinds = CF_TOKEN_ATTR_CONTROL | CF_TOKEN_ATTR_USER_DEFINED | CF_TOKEN_ATTR_UNKNOWN;
    int32_t n = 0;
    for (cf_token i = 0; i < t->n_vocab; i++)
        n += (t->attr[i] & kinds) != 0;
    t->special = malloc(((size_t)n + 1) * sizeof *t->special);
    if (!t->special)
        return -1;
    t->n_special = 0;
    for (cf_token i = 0; i < t->n_vocab; i++)
        if (t->attr[i] & kinds)
            t->special[t->n_special++] = i;
    qsort_r(t->special, (size_t)t->n_special, sizeof *t->special, by_length_desc, t);
    return 0;
}

/* ---- pieces ---------------------------------------------------------------- */

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* "<0xNN>" -> the byte (llama.cpp: strtol of the two characters at 3) */
static char byte_of(cf_str s)
{
    int v = 0;
    for (size_t i = 3; i < 5 && i < s.len && hex_digit(s.ptr[i]) >= 0; i++)
        v = v * 16 + hex_digit(s.ptr[i]);
    return (char)v;
}

/* Write the piece of token id to out (NULL: only measure); its length. */
static size_t make_piece(const cf_tokenizer *t, cf_token id, char *out)
{
    cf_str s = t->text[id];
    uint32_t a = t->attr[id];
    if (a & (CF_TOKEN_ATTR_UNKNOWN | CF_TOKEN_ATTR_CONTROL | CF_TOKEN_ATTR_USER_DEFINED)) {
        if (out)
            memcpy(out, s.ptr, s.len);
        return s.len;
    }
    if (a & CF_TOKEN_ATTR_BYTE) {
        if (out)
            out[0] = byte_of(s);
        return 1;
    }
    if (!(a & CF_TOKEN_ATTR_NORMAL))
        return 0;
    size_t n = 0;
    if (t->type == CF_TOK_SPM) { /* U+2581 -> ' ' */
        for (size_t i = 0; i < s.len; i++) {
            if (i + 2 < s.len && memcmp(s.ptr + i, "\xe2\x96\x81", 3) == 0) {
                if (out)
                    out[n] = ' ';
                n++;
                i += 2;
                continue;
            }
            if (out)
                out[n] = s.ptr[i];
            n++;
        }
        return n;
    }
    /* GPT-2 characters -> bytes; llama.cpp spells out one that is none */
    for (size_t i = 0; i < s.len;) {
        size_t at = i;
        int b = cf_gpt2_cp_byte(cf_utf8_decode((const unsigned char *)s.ptr, s.len, &i));
        if (b >= 0) {
            if (out)
                out[n] = (char)b;
            n++;
            continue;
        }
        char enc[4], buf[64];
        size_t k = cf_utf8_encode(cf_utf8_decode((const unsigned char *)s.ptr, s.len, &at), enc);
        size_t m = (size_t)snprintf(buf, sizeof buf, "[UNK_BYTE_0x");
        for (size_t j = 0; j < k; j++)
            m += (size_t)snprintf(buf + m, sizeof buf - m, "%02x", (unsigned char)enc[j]);
        if (out) {
            memcpy(out + n, buf, m);
            memcpy(out + n + m, s.ptr, s.len);
            out[n + m + s.len] = ']';
        }
        n += m + s.len + 1;
    }
    return n;
}

static int build_pieces(cf_tokenizer *t)
{
    size_t total = 0;
    for (cf_token i = 0; i < t->n_vocab; i++)
        total += make_piece(t, i, NULL);
    t->piece = calloc((size_t)t->n_vocab, sizeof *t->piece);
    char *p = malloc(total + 1);
    if (!t->piece || !p) {
        free(p);
        return -1;
    }
    t->piece_arena = p;
    for (cf_token i = 0; i < t->n_vocab; i++) {
        size_t n = make_piece(t, i, p);
        t->piece[i] = (cf_str){p, n};
        p += n;
    }
    return 0;
}

/* llama.cpp's per-model attribute fixes (by tokenizer or model name). */
static void fix_attrs(cf_tokenizer *t, const cf_gguf *g)
{
    if (strstr(t->pre, "jina-v2-de") || strstr(t->pre, "jina-v2-es") ||
        strstr(t->pre, "jina-v2-code")) {
        cf_token m = cf_strmap_get(&t->map, "<mask>", 6);
        if (m >= 0)
            t->attr[m] |= CF_TOKEN_ATTR_LSTRIP;
        return;
    }
    cf_str name;
    char lower[256] = "";
    if (cf_gguf_get_str(g, "general.name", &name)) {
        size_t n = name.len < sizeof lower - 1 ? name.len : sizeof lower - 1;
        for (size_t i = 0; i < n; i++)
            lower[i] = (char)tolower((unsigned char)name.ptr[i]);
        lower[n] = 0;
    }
    if (!strstr(lower, "phi-3") && !strstr(lower, "phi3"))
        return;
    /* Phi-3: special tokens swallow the whitespace after them */
    for (int32_t i = 0; i < t->n_special; i++)
        t->attr[t->special[i]] |= CF_TOKEN_ATTR_RSTRIP;
    static const struct {
        const char *text;
        bool on;
    } fix[] = {{"</s>", true}, {"<unk>", false}, {"<s>", false}, {"<|endoftext|>", false}};
    for (size_t i = 0; i < sizeof fix / sizeof fix[0]; i++) {
        cf_token id = cf_strmap_get(&t->map, fix[i].text, strlen(fix[i].text));
        if (id < 0)
            continue;
        if (fix[i].on)
            t->attr[id] |= CF_TOKEN_ATTR_RSTRIP;
        else
            t->attr[id] &= ~(uint32_t)CF_TOKEN_ATTR_RSTRIP;
    }
}

int cf_tokenizer_create(const cf_gguf *g, cf_tokenizer **out, cf_err *err)
{
    *out = NULL;
    cf_tokenizer *t = calloc(1, sizeof *t);
    if (!t)
        return cf_fail(err, "out of memory");
    if (pick_type(t, g, err) || load_tokens(t, g, err))
        goto fail;
    load_special_ids(t, g);

    bool b;
    t->add_space_prefix = t->type == CF_TOK_SPM;
    t->add_bos = t->type == CF_TOK_SPM || t->pretok.add_bos;
    t->add_eos = false;
    if (cf_gguf_get_bool(g, "tokenizer.ggml.add_space_prefix", &b))
        t->add_space_prefix = b;
    if (cf_gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &b))
        t->add_bos = b;
    if (cf_gguf_get_bool(g, "tokenizer.ggml.add_eos_token", &b))
        t->add_eos = b;
    if (t->add_bos && t->ids.bos == CF_TOKEN_NULL) {
        cf_fail(err, "tokenizer.ggml.add_bos_token is true, but there is no BOS token");
        goto fail;
    }
    if (t->add_eos && t->ids.eos == CF_TOKEN_NULL) {
        cf_fail(err, "tokenizer.ggml.add_eos_token is true, but there is no EOS token");
        goto fail;
    }

    detect_special(t);
    if (list_special(t) || build_pieces(t)) {
        cf_fail(err, "out of memory building the tokenizer");
        goto fail;
    }
    fix_attrs(t, g);

    int rc;
    if (t->type == CF_TOK_SPM) {
        rc = cf_spm_prepare(t, err);
    } else {
        const cf_gguf_kv *merges = cf_gguf_get_arr(g, "tokenizer.ggml.merges", CF_GGUF_STRING);
        rc = merges ? cf_bpe_prepare(t, merges, err)
                    : cf_fail(err, "tokenizer.ggml.merges is missing or not a string array "
                                   "(a gpt2 tokenizer needs it)");
    }
    if (rc)
        goto fail;
    *out = t;
    return 0;
fail:
    cf_tokenizer_free(t);
    return -1;
}

void cf_tokenizer_free(cf_tokenizer *t)
{
    if (!t)
        return;
    free(t->text);
    free(t->piece);
    free(t->piece_arena);
    free(t->score);
    free(t->attr);
    free(t->arena);
    cf_strmap_free(&t->map);
    free(t->special);
    free(t->join);
    free(t->pairs);
    free(t);
}
