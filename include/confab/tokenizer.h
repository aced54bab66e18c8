/* Tokenizers: text <-> token ids exactly as llama.cpp (build b4748) does it.
 *
 * Built from a GGUF file's tokenizer.* metadata.  Two families:
 *  - SPM (tokenizer.ggml.model "llama": Llama 2, Mistral, Phi-3, Gemma,
 *    llama2.c's vocabularies): score-driven bigram merges over UTF-8
 *    characters, spaces as U+2581, a leading space, <0xNN> byte fallback;
 *  - byte-level BPE ("gpt2": GPT-2, Llama 3, Qwen2, DeepSeek, Falcon,
 *    StarCoder, ...): a pre-tokenizer per tokenizer.ggml.pre value, bytes
 *    as GPT-2's printable characters, rank-ordered merges.
 * Special tokens (control and user-defined ones such as <|im_start|>) are
 * recognised inside text only when the caller asks (parse_special);
 * user-defined tokens always are, as in llama.cpp.
 *
 * A tokenizer is immutable after creation: any number of threads may use
 * one at once.  It copies what it needs; the GGUF may be closed after. */
#ifndef CONFAB_TOKENIZER_H
#define CONFAB_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"
#include "confab/gguf.h"

typedef int32_t cf_token;
#define CF_TOKEN_NULL (-1)

typedef struct cf_tokenizer cf_tokenizer;

typedef enum cf_tok_type {
    CF_TOK_SPM = 1,
    CF_TOK_BPE = 2,
} cf_tok_type;

/* Token attributes (llama.cpp's llama_token_attr values). */
enum {
    CF_TOKEN_ATTR_UNDEFINED = 0,
    CF_TOKEN_ATTR_UNKNOWN = 1 << 0,
    CF_TOKEN_ATTR_UNUSED = 1 << 1,
    CF_TOKEN_ATTR_NORMAL = 1 << 2,
    CF_TOKEN_ATTR_CONTROL = 1 << 3,
    CF_TOKEN_ATTR_USER_DEFINED = 1 << 4,
    CF_TOKEN_ATTR_BYTE = 1 << 5,
    CF_TOKEN_ATTR_LSTRIP = 1 << 7, /* swallows whitespace before it */
    CF_TOKEN_ATTR_RSTRIP = 1 << 8, /* swallows whitespace after it */
};

/* The vocabulary's special ids; CF_TOKEN_NULL where it has none. */
typedef struct cf_tok_special {
    cf_token bos, eos, eot, eom, unk, sep, pad;
    cf_token fim_pre, fim_suf, fim_mid, fim_pad, fim_rep, fim_sep;
} cf_tok_special;

/* A growable list of token ids (zero-initialise it; cf_tokens_free frees). */
typedef struct cf_tokens {
    cf_token *ids;
    size_t n, cap;
} cf_tokens;

/* Append one id; -1 when out of memory. */
int cf_tokens_push(cf_tokens *v, cf_token id);
void cf_tokens_free(cf_tokens *v);

/* Load the tokenizer of a GGUF file.  An unknown tokenizer.ggml.model or
 * .pre fails with a message naming it and listing what is supported. */
int cf_tokenizer_create(const cf_gguf *g, cf_tokenizer **out, cf_err *err);
void cf_tokenizer_free(cf_tokenizer *t);

cf_tok_type cf_tok_type_of(const cf_tokenizer *t);
const char *cf_tok_model_name(const cf_tokenizer *t); /* "llama", "gpt2" */
const char *cf_tok_pre_name(const cf_tokenizer *t);   /* "llama-bpe", ... ("" for SPM) */
int32_t cf_tok_n_vocab(const cf_tokenizer *t);
const cf_tok_special *cf_tok_special_ids(const cf_tokenizer *t);
bool cf_tok_add_bos(const cf_tokenizer *t);
bool cf_tok_add_eos(const cf_tokenizer *t);

/* Every id llama.cpp treats as end of generation (EOS, EOT, EOM, the FIM
 * pad/repo/separator tokens and tokens such as <|im_end|>, <|end|>). */
bool cf_tok_is_eog(const cf_tokenizer *t, cf_token id);
/* The ids is_eog accepts, ascending; returns their count (at most cap
 * written). */
size_t cf_tok_eog_ids(const cf_tokenizer *t, cf_token *ids, size_t cap);
bool cf_tok_is_control(const cf_tokenizer *t, cf_token id);
uint32_t cf_tok_attr(const cf_tokenizer *t, cf_token id); /* 0 for a bad id */

/* The token's text as stored in the vocabulary (empty for a bad id). */
cf_str cf_tok_text(const cf_tokenizer *t, cf_token id);
/* The id whose text is exactly s[0..len) ("<|im_end|>"), or CF_TOKEN_NULL. */
cf_token cf_tok_find(const cf_tokenizer *t, const char *s, size_t len);

/* Append the tokens of text[0..len) to out.  add_special: BOS first iff
 * the vocabulary adds one (cf_tok_add_bos), EOS last iff it adds one.
 * parse_special: control tokens written in the text become those tokens;
 * without it they are plain text, and no control, unknown or byte token
 * ever comes from text (user-defined tokens always match).  Any bytes are
 * accepted; fails only when memory runs out or len > CF_TOK_MAX_TEXT. */
#define CF_TOK_MAX_TEXT ((size_t)1 << 28)
int cf_tokenize(const cf_tokenizer *t, const char *text, size_t len, bool add_special,
                bool parse_special, cf_tokens *out, cf_err *err);

/* A chat prompt in parts, for cf_tokenize_parts. */
typedef enum cf_tok_part_kind {
    CF_PART_TEXT,    /* template text: special tokens written in it are parsed */
    CF_PART_LITERAL, /* a person's text: control tokens written in it stay text */
    CF_PART_TOKENS,  /* ids taken as they are (a reply as it was sampled) */
} cf_tok_part_kind;

typedef struct cf_tok_part {
    cf_tok_part_kind kind;
    const char *text; /* TEXT, LITERAL */
    size_t len;
    const cf_token *ids; /* TOKENS */
    size_t n_ids;
} cf_tok_part;

/* Tokenize parts as cf_tokenize(their concatenated text, add_special,
 * parse_special = true) would, except that control tokens are not
 * recognised inside LITERAL parts (a user typing "<|im_end|>" gets plain
 * text) and that a TOKENS part is copied into the output as it is, plain
 * text after it continuing the text before it (no SPM space prefix).  Text
 * runs across TEXT and LITERAL parts as one string, so a prompt whose
 * literals hold no control-token text tokenizes exactly as whole text. */
int cf_tokenize_parts(const cf_tokenizer *t, const cf_tok_part *parts, size_t n, bool add_special,
                      cf_tokens *out, cf_err *err);

/* The bytes a token stands for (llama_token_to_piece with lstrip 0): with
 * special false, control and unknown tokens are empty.  The bytes live as
 * long as the tokenizer; a bad id gives an empty piece. */
cf_str cf_tok_piece(const cf_tokenizer *t, cf_token id, bool special);

/* The text of a token sequence (llama_detokenize without its
 * clean-up-spaces option): remove_special drops a leading BOS and trailing
 * EOS the vocabulary adds; unparse_special renders control tokens; a
 * vocabulary that adds a space prefix loses one leading space (not after a
 * dropped BOS, as in llama.cpp).  Writes at most cap bytes (no terminator)
 * and returns the full length.
 *
 * Detokenizing what cf_tokenize made gives the text back, except: SPM turns
 * U+2581 into a space, and a space right after a cut-off UTF-8 sequence
 * into U+2581's bytes; byte-level BPE turns bytes that are not UTF-8 into
 * U+FFFD; bytes no token covers (a vocabulary without byte tokens) are
 * lost. */
size_t cf_detokenize(const cf_tokenizer *t, const cf_token *ids, size_t n, bool remove_special,
                     bool unparse_special, char *buf, size_t cap);

/* UTF-8 of code point cp (U+FFFD for values past U+10FFFF); returns the
 * byte count (1..4). */
size_t cf_utf8_encode(uint32_t cp, char out[4]);

/* ---- streaming UTF-8 --------------------------------------------------------
 * Token pieces can end inside a character (byte tokens, split emoji).  Feed
 * them through a cf_utf8_stream to print only whole characters: an
 * incomplete sequence is held back until it completes; a byte that cannot
 * be part of a valid sequence comes out as U+FFFD.  Zero-initialise. */
typedef struct cf_utf8_stream {
    unsigned char pend[4];
    unsigned n_pend, need;
} cf_utf8_stream;

/* out must hold CF_UTF8_STREAM_OUT(len) bytes; returns the bytes written. */
#define CF_UTF8_STREAM_OUT(len) (3 * ((size_t)(len) + 4))
size_t cf_utf8_stream_feed(cf_utf8_stream *s, const char *in, size_t len, char *out);
/* Emit what is held back (one U+FFFD: it never completed); out holds 3
 * bytes. */
size_t cf_utf8_stream_flush(cf_utf8_stream *s, char *out);

#endif
