/* The grammar of a required tool call: one call to one of the tools (or
 * the one named), its arguments kept to the tool's parameters by the
 * JSON-schema converter, in the format's own syntax where a grammar can
 * write it. */
#include <stdlib.h>
#include <string.h>

#include "confab/grammar.h"
#include "tool_internal.h"

/* The JSON schema of one call: {"name": const, ARGS_KEY: its parameters}. */
static int put_call_schema(cf_jbuf *b, const cf_json *fn, const char *args_key)
{
    const char *name = tool_str_of(fn, "name");
    if (!name)
        return -1;
    const cf_json *params = cf_json_get(fn, "parameters");
    cf_jbuf_puts(b, "{\"type\":\"object\",\"properties\":{\"name\":{\"const\":");
    cf_json_put_string(b, name, strlen(name), false);
    cf_jbuf_puts(b, "},\"");
    cf_jbuf_puts(b, args_key);
    cf_jbuf_puts(b, "\":");
    char *text = params && params->type == CF_JSON_OBJECT ? tool_compact(params) : NULL;
    cf_jbuf_puts(b, text ? text : "{\"type\":\"object\"}");
    free(text);
    cf_jbuf_puts(b, "},\"required\":[\"name\",\"");
    cf_jbuf_puts(b, args_key);
    cf_jbuf_puts(b, "\"]}");
    return 0;
}

int cf_tools_grammar(cf_tool_format f, const char *tools_json, const char *name, bool framed,
                     struct cf_grammar **out, cf_tool_format *as, cf_err *err)
{
    *out = NULL;
    *as = framed && (f == CF_TOOLS_HERMES || f == CF_TOOLS_MISTRAL || f == CF_TOOLS_LLAMA3)
          ? f : CF_TOOLS_JSON;
    const char *before = *as == CF_TOOLS_HERMES ? "<tool_call>\n"
                         : *as == CF_TOOLS_MISTRAL ? "[TOOL_CALLS][" : NULL;
    const char *after = *as == CF_TOOLS_HERMES ? "\n</tool_call>"
                        : *as == CF_TOOLS_MISTRAL ? "]" : NULL;
    const char *args_key = *as == CF_TOOLS_LLAMA3 ? "parameters" : "arguments";
    cf_json *tools;
    cf_err why;
    if (cf_json_parse(tools_json, strlen(tools_json), NULL, &tools, &why))
        return cf_fail_as(err, CF_E_USAGE, "tools: %s", why.msg);
    cf_jbuf b = {0};
    int n = 0, rc = 0;
    cf_jbuf_puts(&b, "{\"anyOf\":[");
    for (size_t i = 0; tools->type == CF_JSON_ARRAY && i < tools->n && !rc; i++) {
        const cf_json *fn = cf_json_get(tools->items[i], "function");
        const char *fname = tool_str_of(fn, "name");
        if (!fname || (name && strcmp(fname, name)))
            continue;
        if (n++)
            cf_jbuf_putc(&b, ',');
        rc = put_call_schema(&b, fn, args_key);
    }
    cf_jbuf_puts(&b, "]}");
    cf_json_free(tools);
    if (!rc && !n)
        rc = name ? cf_fail_as(err, CF_E_USAGE, "tool_choice: no tool is named '%.100s'", name)
                  : cf_fail_as(err, CF_E_USAGE, "tools: no function to call");
    else if (!rc && b.failed)
        rc = cf_fail(err, "out of memory");
    else if (!rc)
        rc = cf_grammar_from_json_schema_framed(b.p, before, after, out, err);
    cf_jbuf_free(&b);
    return rc;
}
