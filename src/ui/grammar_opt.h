/* Constrained output on the command line: --grammar / --grammar-file
 * (GBNF), --json-schema / --json-schema-file, --json (any JSON object), as
 * llama.cpp's options (a value that is not a file's name but the text
 * itself is taken as the text, as llama.cpp's --grammar and -j take it). */
#ifndef CONFAB_UI_GRAMMAR_OPT_H
#define CONFAB_UI_GRAMMAR_OPT_H

#include <stdbool.h>

#include "confab/grammar.h"

typedef struct ui_grammar {
    const char *gbnf, *schema; /* a file's name or the text */
    bool json;
} ui_grammar;

/* Whether any was asked for. */
bool ui_grammar_asked(const ui_grammar *o);
/* The grammar asked for (NULL: none); -1 after one error line. */
int ui_grammar_make(const ui_grammar *o, cf_grammar **out);

#endif
