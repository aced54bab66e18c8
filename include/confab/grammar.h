/* Constrained decoding: a grammar in llama.cpp's GBNF, and the vocabulary's
 * tokens it allows next.
 *
 * A grammar is a set of rules (`name ::= alternatives`, the start rule is
 * `root`): sequences of string literals, character classes ([a-z], [^"\\],
 * `.`), rule names and groups, with `*` `+` `?` `{m}` `{m,}` `{m,n}` after
 * any of them; `#` starts a comment.  Matching runs over UTF-8 bytes.
 *
 * A constraint binds a grammar to a vocabulary: it keeps the grammar's
 * state after the tokens accepted so far and gives the set of tokens whose
 * whole piece can come next (the vocabulary's end-of-generation tokens only
 * where the grammar can end).  Sampling with that set as the sampler's mask
 * (cf_sampler_set_mask) makes every output a prefix of a sentence of the
 * grammar, and a whole one when it ends with an end-of-generation token.
 *
 * A grammar is immutable (shareable between threads); a constraint is for
 * one thread at a time. */
#ifndef CONFAB_GRAMMAR_H
#define CONFAB_GRAMMAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"
#include "confab/tokenizer.h"

typedef struct cf_grammar cf_grammar;

/* Parse GBNF text (NUL-terminated).  A bad grammar gives one message with
 * the line and column of the problem. */
int cf_grammar_parse(const char *text, cf_grammar **out, cf_err *err);
/* Any JSON object (what response_format json_object asks for), its parts
 * apart by nothing, a space, or a newline and up to 20 tabs or spaces. */
int cf_grammar_json(cf_grammar **out, cf_err *err);
/* The GBNF text of cf_grammar_json's grammar; its rules without root
 * (value, object, array, string, char, number, ws), for grammars built on
 * them. */
const char *cf_grammar_json_text(void);
const char *cf_grammar_json_rules(void);
/* The grammar of the JSON documents a JSON schema (NUL-terminated text)
 * describes, for response_format json_schema: type (object with
 * properties and required, array with items, minItems and maxItems,
 * string with minLength and maxLength, number, integer, boolean, null, or
 * a list of them), enum, const, anyOf, oneOf, $ref to #/$defs/NAME or
 * #/definitions/NAME; titles, descriptions, defaults and examples are
 * ignored, and so is additionalProperties (no other property is written).
 * Any other keyword is refused with a message naming it.  (In the chat
 * layer, which reads JSON.) */
int cf_grammar_from_json_schema(const char *json, cf_grammar **out, cf_err *err);
/* The same document between two fixed texts (NULL: none), as a tool
 * call's syntax puts its JSON: "<tool_call>\n" and "\n</tool_call>". */
int cf_grammar_from_json_schema_framed(const char *json, const char *before, const char *after,
                                       cf_grammar **out, cf_err *err);
void cf_grammar_free(cf_grammar *g);

/* Whether the grammar derives exactly these bytes (whole: the full
 * sentence; otherwise a prefix of one). */
bool cf_grammar_matches(const cf_grammar *g, const char *s, size_t n, bool whole);

typedef struct cf_constraint cf_constraint;

/* The tokenizer must outlive the constraint. */
int cf_constraint_create(const cf_grammar *g, const cf_tokenizer *t, cf_constraint **out,
                         cf_err *err);
void cf_constraint_free(cf_constraint *c);
/* Back to the grammar's start (the caches are kept). */
void cf_constraint_reset(cf_constraint *c);

/* The tokens allowed next, one bit per id (bit id % 64 of word id / 64),
 * valid until the next accept or reset. */
const uint64_t *cf_constraint_mask(cf_constraint *c);
/* Advance by a token the mask allows; a token it does not allow fails and
 * leaves the state as it was. */
int cf_constraint_accept(cf_constraint *c, cf_token tok, cf_err *err);
/* Whether the grammar could end here (the output so far is a sentence). */
bool cf_constraint_can_end(const cf_constraint *c);

#endif
