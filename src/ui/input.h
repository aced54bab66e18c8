/* Assembling typed lines into one message: a block between lines holding
 * triple quotes, and lines continued with a trailing backslash. */
#ifndef CONFAB_UI_INPUT_H
#define CONFAB_UI_INPUT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct input_asm {
    char *buf;
    size_t len, cap;
    bool in_block;     /* inside """ ... """ */
    bool block_text;   /* the block has a line already */
    bool continued;    /* the last line ended with a backslash */
} input_asm;

/* Feed one line as typed (it may hold newlines, from a paste).  Returns 1
 * when a message is complete (take it with input_take), 0 when more lines
 * are wanted, -1 when out of memory (the partial message is dropped). */
int input_feed(input_asm *a, const char *line);
/* The completed message (malloc'ed); the assembler is empty again. */
char *input_take(input_asm *a);
/* Whether a message is partly typed (the prompt shows a continuation). */
bool input_pending(const input_asm *a);
/* Drop a partly typed message (Ctrl-C). */
void input_reset(input_asm *a);
void input_free(input_asm *a);

/* The next line readline reads starts with text on it, to edit (prefill.c). */
void line_prefill(const char *text);

#endif
