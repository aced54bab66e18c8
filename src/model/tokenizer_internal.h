/* Shared by the tokenizer's source files: the vocabulary as loaded, the
 * string map, and the two encoders. */
#ifndef CONFAB_MODEL_TOKENIZER_INTERNAL_H
#define CONFAB_MODEL_TOKENIZER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "confab/tokenizer.h"

/* ---- pre-tokenizers (tokenizer_pretok.c) ---------------------------------- */
typedef struct cf_pretok {
    int def; /* index of its definition */
    bool ignore_merges, add_bos;
} cf_pretok;

/* Look up a tokenizer.ggml.pre value; -1 when unknown. */
int cf_pretok_find(const char *name, size_t len, cf_pretok *out);
/* The known names, space-separated, snprintf-style. */
size_t cf_pretok_list(char *buf, size_t cap);
/* Split n codepoints (with their class flags) into words: writes the word
 * lengths (in codepoints) to words and returns their count.  words and tmp
 * each hold n entries. */
size_t cf_pretok_split(const cf_pretok *pt, const uint32_t *cp, const uint8_t *fl, size_t n,
                       uint32_t *words, uint32_t *tmp);

/* ---- string -> id map (tokenizer_vocab.c) -------------------------------- */
typedef struct cf_strmap {
    uint32_t *slot; /* id + 1, 0 = empty */
    uint32_t mask;
    const cf_str *keys; /* keys[id] */
} cf_strmap;

uint64_t cf_str_hash(const char *s, size_t n);
int cf_strmap_init(cf_strmap *m, const cf_str *keys, uint32_t n_keys_max);
/* Insert keys[id]; an existing equal key is replaced (the last id wins). */
void cf_strmap_put(cf_strmap *m, uint32_t id);
int32_t cf_strmap_get(const cf_strmap *m, const char *s, size_t n);
void cf_strmap_free(cf_strmap *m);

/* ---- the merge queue (tokenizer_vocab.c) ---------------------------------
 * A possible merge of two adjacent symbols; the queue serves the highest
 * prio first, the leftmost on ties (SPM: the token's score; BPE: minus the
 * merge rank, exact below 2^24).  a and b are the encoder's own. */
typedef struct tok_bigram {
    float prio;
    int32_t left, right, a, b;
} tok_bigram;

typedef struct tok_queue {
    tok_bigram *e;
    size_t n, cap;
} tok_queue;

int tok_queue_push(tok_queue *q, tok_bigram e);
tok_bigram tok_queue_pop(tok_queue *q);

/* ---- the vocabulary -------------------------------------------------------- */
/* Token types stored in GGUF (tokenizer.ggml.token_type). */
enum { TT_UNDEFINED = 0, TT_NORMAL, TT_UNKNOWN, TT_CONTROL, TT_USER_DEFINED, TT_UNUSED, TT_BYTE };

/* Internal attribute bit beside the public CF_TOKEN_ATTR_* ones. */
#define TOK_ATTR_EOG (1u << 16)
/* Tokens never produced from plain text: the encoders skip them. */
#define TOK_ATTR_NOT_TEXT (CF_TOKEN_ATTR_CONTROL | CF_TOKEN_ATTR_UNKNOWN | CF_TOKEN_ATTR_BYTE)

typedef struct bpe_pair {
    uint64_t key; /* left << 32 | right (symbol ids); 0 = empty */
    int32_t rank;
    int32_t result; /* symbol id of the merged string */
} bpe_pair;

struct cf_tokenizer {
    cf_tok_type type;
    char model[24], pre[48];
    cf_pretok pretok;

    int32_t n_vocab;
    cf_str *text;  /* token texts (in arena) */
    cf_str *piece; /* llama_token_to_piece(special = true) */
    float *score;
    uint32_t *attr;
    char *arena, *piece_arena;
    cf_strmap map;

    cf_tok_special ids;
    bool add_bos, add_eos, add_space_prefix;

    cf_token *special; /* control/user-defined/unknown, longest first */
    int32_t n_special;

    /* SPM */
    cf_token byte_tok[256];
    uint8_t *join; /* bit (a << 8 | b): some token holds bytes a, b in a row */

    /* BPE: merges act on symbols: token ids, then (n_vocab + i) strings
     * that merges name but that are no token */
    bpe_pair *pairs;
    uint64_t pair_mask;
    int32_t byte_sym[256];    /* symbol of each byte's GPT-2 character, -1 = none */
    cf_token byte_fb[256][2]; /* what a byte becomes outside any token, -1 = nothing */
};

/* A token the encoders may produce for a string (-1: none). */
static inline int32_t tok_lookup_text(const cf_tokenizer *t, const char *s, size_t n)
{
    int32_t id = cf_strmap_get(&t->map, s, n);
    return id >= 0 && !(t->attr[id] & TOK_ATTR_NOT_TEXT) ? id : -1;
}

/* Encode one stretch of plain text (no special tokens in it). */
int cf_spm_encode(const cf_tokenizer *t, const char *text, size_t len, bool space_prefix,
                  cf_tokens *out);
int cf_bpe_encode(const cf_tokenizer *t, const char *text, size_t len, cf_tokens *out);

/* Build the encoder tables at load time. */
int cf_spm_prepare(cf_tokenizer *t, cf_err *err);
int cf_bpe_prepare(cf_tokenizer *t, const cf_gguf_kv *merges, cf_err *err);

#endif
