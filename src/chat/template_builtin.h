/* The built-in chat formats (llama.cpp's llm_chat_apply_template, written
 * anew) and llama.cpp's rules for recognising them in a Jinja source. */
#ifndef CONFAB_CHAT_TEMPLATE_BUILTIN_H
#define CONFAB_CHAT_TEMPLATE_BUILTIN_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"

typedef struct cf_turn {
    const char *role;
    const char *content;
    size_t content_len;
} cf_turn;

/* The id of a built-in by name, or -1. */
int cf_builtin_find(const char *name);
const char *cf_builtin_name(int id);
/* All names, NULL-terminated. */
const char *const *cf_builtin_names(void);
/* NULL-terminated list of end-of-turn strings. */
const char *const *cf_builtin_stops(int id);
/* The built-in llama.cpp would pick for this Jinja source, or -1. */
int cf_builtin_detect(const char *src, size_t len);
/* Append the formatted conversation to out (add_ass: open an assistant turn). */
void cf_builtin_apply(int id, const cf_turn *turns, size_t n, bool add_ass, cf_jbuf *out);

#endif
