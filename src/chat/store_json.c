/* The store entries as JSON, for scripts (confab models --json). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "store_internal.h"

static void put_str(cf_jbuf *b, const char *key, const char *v, bool more)
{
    cf_json_put_string(b, key, strlen(key), false);
    cf_jbuf_puts(b, ": ");
    if (v && *v)
        cf_json_put_string(b, v, strlen(v), false);
    else
        cf_jbuf_puts(b, "null");
    cf_jbuf_puts(b, more ? ", " : "");
}

/* v, or null when 0 and that means unknown */
static void put_num(cf_jbuf *b, const char *key, uint64_t v, bool zero_unknown)
{
    char num[32];
    snprintf(num, sizeof num, "%" PRIu64, v);
    cf_json_put_string(b, key, strlen(key), false);
    cf_jbuf_puts(b, ": ");
    cf_jbuf_puts(b, v || !zero_unknown ? num : "null");
    cf_jbuf_puts(b, ", ");
}

char *cf_store_json(const cf_store *st)
{
    cf_jbuf b = {0};
    cf_jbuf_puts(&b, "[");
    for (int i = 0; i < st->n; i++) {
        const cf_store_entry *e = &st->e[i];
        cf_jbuf_puts(&b, i ? ",\n  {" : "\n  {");
        put_str(&b, "name", e->name, true);
        put_str(&b, "file_name", e->file_name, true);
        put_str(&b, "store", cf_store_kind_name(e->store), true);
        put_str(&b, "path", e->path, true);
        put_num(&b, "size", e->size, false);
        put_str(&b, "arch", e->arch, true);
        put_str(&b, "quant", e->quant, true);
        put_num(&b, "context", e->n_ctx, true);
        put_str(&b, "problem", e->problem, false);
        cf_jbuf_puts(&b, "}");
    }
    cf_jbuf_puts(&b, st->n ? "\n]\n" : "]\n");
    return cf_jbuf_take(&b, NULL);
}
