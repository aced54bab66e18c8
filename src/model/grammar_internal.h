/* A parsed grammar as the matcher walks it, shared by the grammar's files.
 *
 * Every rule is a list of alternatives and every alternative a sequence of
 * elements ending in G_END, all in one array; repetitions and groups are
 * rewritten into generated rules by the parser, so an element is only a
 * character set or a rule reference.  A position is an element's index. */
#ifndef CONFAB_MODEL_GRAMMAR_INTERNAL_H
#define CONFAB_MODEL_GRAMMAR_INTERNAL_H

#include "confab/grammar.h"

enum { G_END, G_REF, G_CHAR };

typedef struct cf_gelem {
    uint8_t kind;
    uint8_t neg;    /* G_CHAR: the code points outside the ranges */
    uint32_t a, n;  /* G_REF: a is the rule; G_CHAR: ranges a .. a + n */
} cf_gelem;

typedef struct cf_grange {
    uint32_t lo, hi; /* inclusive */
} cf_grange;

struct cf_grammar {
    cf_gelem *elem;
    size_t n_elem;
    cf_grange *range;
    size_t n_range;
    uint32_t *alt;       /* first position of each alternative */
    uint32_t *rule_alt;  /* rule r's alternatives: alt[rule_alt[r] .. rule_alt[r + 1]) */
    size_t n_rule;
    uint32_t root;
};

/* Whether set element e takes some code point in [lo, hi]. */
bool cf_gchar_takes(const cf_grammar *g, const cf_gelem *e, uint32_t lo, uint32_t hi);

/* ---- sets of stacks ---------------------------------------------------------
 * The grammar's state: every way the input so far can be read, each a stack
 * of positions (the innermost last), whose top is a character set, or empty
 * where the grammar has ended.  A set is kept in one canonical form, so two
 * equal states are equal words: for each stack its depth then its
 * positions, the stacks sorted and without repeats. */
typedef struct cf_gwords {
    uint32_t *w;
    size_t n, cap;
} cf_gwords;

/* The start state: root's alternatives expanded.  0 or -1 on memory. */
int cf_gstate_start(const cf_grammar *g, cf_gwords *out);
/* The state after code point cp from state in (out may be empty: no
 * reading takes it).  0 or -1 on memory. */
int cf_gstate_advance(const cf_grammar *g, const uint32_t *in, size_t n, uint32_t cp,
                      cf_gwords *out);
/* Whether some stack of the state takes a code point in [lo, hi]; whether
 * one is empty (the grammar can end). */
bool cf_gstate_takes(const cf_grammar *g, const uint32_t *st, size_t n, uint32_t lo,
                     uint32_t hi);
bool cf_gstate_can_end(const uint32_t *st, size_t n);

int cf_gwords_push(cf_gwords *v, uint32_t x);
void cf_gwords_free(cf_gwords *v);

#endif
