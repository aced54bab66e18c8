/* Reading the grammar options: a file when one of that name exists, else
 * the text given. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grammar_opt.h"

bool ui_grammar_asked(const ui_grammar *o)
{
    return o->gbnf || o->schema || o->json;
}

/* The file's text, or a copy of arg when no file has that name and arg
 * looks like what the option takes (a rule, a JSON object). */
static char *file_or_text(const char *opt, const char *arg, const char *looks)
{
    size_t len;
    char *text = cli_read_file(arg, &len);
    if (!text && strstr(arg, looks))
        text = strdup(arg);
    if (!text)
        cli_error("%s: cannot read '%s'", opt, arg);
    return text;
}

int ui_grammar_make(const ui_grammar *o, cf_grammar **out)
{
    *out = NULL;
    if ((o->gbnf != NULL) + (o->schema != NULL) + o->json > 1) {
        cli_error("--grammar, --json-schema and --json: give one of them");
        return -1;
    }
    cf_err err;
    int rc = 0;
    if (o->json) {
        rc = cf_grammar_json(out, &err);
    } else if (o->gbnf || o->schema) {
        char *text = o->gbnf ? file_or_text("--grammar", o->gbnf, "::=")
                             : file_or_text("--json-schema", o->schema, "{");
        if (!text)
            return -1;
        rc = o->gbnf ? cf_grammar_parse(text, out, &err)
                     : cf_grammar_from_json_schema(text, out, &err);
        free(text);
    }
    if (rc)
        cli_error("%s", err.msg);
    return rc;
}
