/* The Jinja engine's render entry for the chat layer: run a compiled
 * template (include/confab/template.h) with variables given as JSON. */
#ifndef CONFAB_CHAT_JINJA_H
#define CONFAB_CHAT_JINJA_H

#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"
#include "confab/template.h"
#include "json.h"

typedef struct cf_jinja_var {
    const char *name;
    const cf_json *value; /* must outlive the render */
} cf_jinja_var;

/* Render into a malloc'ed NUL-terminated string.  A later variable of the
 * same name replaces an earlier one.  now: strftime_now's clock (0: the
 * current local time, else seconds since the epoch shown as UTC). */
int cf_jinja_render(const cf_jinja *t, const cf_jinja_var *vars, size_t n,
                    const cf_jinja_limits *lim, int64_t now, char **out, size_t *len, cf_err *err);

#endif
