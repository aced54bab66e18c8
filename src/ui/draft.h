/* Speculative decoding on the command line (complete, bench; the chat and
 * serve take the same options): llama.cpp's -md / --model-draft,
 * --draft-max, --draft-min, --draft-p-min, and --lookup for guesses from
 * the context instead of a draft model. */
#ifndef CONFAB_UI_DRAFT_H
#define CONFAB_UI_DRAFT_H

#include <stdbool.h>
#include <stdio.h>

#include "confab/spec.h"

typedef struct ui_draft {
    const char *model; /* -md FILE|NAME */
    bool lookup;
    cf_spec_params p;
    cf_draft draft;
    cf_spec *spec; /* after ui_draft_open: NULL when none was asked for */
} ui_draft;

void ui_draft_init(ui_draft *d);
/* Option `name` (without dashes) with its value: 1 when it was a draft
 * option, 0 when it is not one, -1 after an error line on a bad value. */
int ui_draft_option(ui_draft *d, const char *name, const char *value);
/* Whether name is a draft option that takes a value. */
bool ui_draft_takes_value(const char *name);
/* -md written as llama.cpp writes it: argv's "-md" becomes "--model-draft"
 * so that getopt does not read it as -m d. */
void ui_draft_argv(int argc, char **argv);
/* The help lines of the options. */
void ui_draft_usage(FILE *f);

/* Load the draft model (for -md; its threads are the target's) and start
 * speculation on target; 0, or the exit code after one error line. */
int ui_draft_open(ui_draft *d, cf_ctx *target, const cf_tokenizer *target_tok);
void ui_draft_close(ui_draft *d);
/* "drafted D, accepted A (P %), T tokens in S passes (R a pass)" */
void ui_draft_summary(const ui_draft *d, char *buf, size_t n);

#endif
