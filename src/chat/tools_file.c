/* A chat's tools file: functions with the shell command that carries each
 * out, read into the OpenAI tools list the template renders. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/tools.h"
#include "json.h"

void cf_tools_file_free(cf_tools_file *f)
{
    for (int i = 0; i < f->n; i++) {
        free(f->names[i]);
        free(f->commands[i]);
    }
    free(f->names);
    free(f->commands);
    free(f->tools_json);
    memset(f, 0, sizeof *f);
}

const char *cf_tools_file_command(const cf_tools_file *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->names[i], name))
            return f->commands[i];
    return NULL;
}

static char *read_text(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 > cap) {
            char *b = realloc(buf, cap = 2 * cap + 4096);
            if (!b) {
                free(buf);
                fclose(fp);
                return NULL;
            }
            buf = b;
        }
        got = fread(buf + n, 1, cap - n, fp);
        n += got;
    } while (got > 0 && n < (16u << 20));
    fclose(fp);
    *len = n;
    return buf;
}

/* One entry into the list: {"type": "function", "function": {name,
 * description, parameters}}. */
static int add_entry(cf_json *list, cf_tools_file *f, const cf_json *e, size_t i, cf_err *err)
{
    const cf_json *fn = e->type == CF_JSON_OBJECT ? cf_json_get(e, "function") : NULL;
    const cf_json *body = fn && fn->type == CF_JSON_OBJECT ? fn : e;
    const cf_json *name = body->type == CF_JSON_OBJECT ? cf_json_get(body, "name") : NULL;
    const cf_json *cmd = e->type == CF_JSON_OBJECT ? cf_json_get(e, "command") : NULL;
    const cf_json *params = body->type == CF_JSON_OBJECT ? cf_json_get(body, "parameters") : NULL;
    const cf_json *desc = body->type == CF_JSON_OBJECT ? cf_json_get(body, "description") : NULL;
    if (!name || name->type != CF_JSON_STRING || !name->len)
        return cf_fail_as(err, CF_E_USAGE, "tool %zu has no name", i + 1);
    if (!cmd || cmd->type != CF_JSON_STRING || !cmd->len)
        return cf_fail_as(err, CF_E_USAGE, "tool '%.60s' has no command", name->str);
    if (params && params->type != CF_JSON_OBJECT)
        return cf_fail_as(err, CF_E_USAGE, "tool '%.60s': parameters must be a JSON schema object",
                          name->str);
    if (cf_tools_file_command(f, name->str))
        return cf_fail_as(err, CF_E_USAGE, "tool '%.60s' is given twice", name->str);
    cf_json *t = cf_json_object(), *out = cf_json_object();
    int bad = !t || !out;
    bad |= cf_json_set(out, "name", 4, cf_json_copy(name));
    if (desc)
        bad |= cf_json_set(out, "description", 11, cf_json_copy(desc));
    bad |= cf_json_set(out, "parameters", 10,
                       params ? cf_json_copy(params) : cf_json_object());
    bad |= cf_json_set(t, "type", 4, cf_json_string("function", 8)) |
           cf_json_set(t, "function", 8, out) | cf_json_push(list, t);
    f->names[f->n] = strdup(name->str);
    f->commands[f->n] = strdup(cmd->str);
    bad |= !f->names[f->n] || !f->commands[f->n];
    f->n++;
    return bad ? cf_fail(err, "out of memory") : 0;
}

int cf_tools_file_read(const char *path, cf_tools_file *out, cf_err *err)
{
    memset(out, 0, sizeof *out);
    size_t len;
    char *text = read_text(path, &len);
    if (!text)
        return cf_fail_as(err, CF_E_USAGE, "cannot read '%s'", path);
    cf_json *v;
    cf_err why;
    int rc = cf_json_parse(text, len, NULL, &v, &why);
    free(text);
    if (rc)
        return cf_fail_as(err, CF_E_USAGE, "'%s': %s", path, why.msg);
    cf_json *list = cf_json_array();
    if (v->type != CF_JSON_ARRAY || !v->n) {
        rc = cf_fail_as(err, CF_E_USAGE, "'%s': a JSON list of tools is expected", path);
    } else if (!list || !(out->names = calloc(v->n, sizeof *out->names)) ||
               !(out->commands = calloc(v->n, sizeof *out->commands))) {
        rc = cf_fail(err, "out of memory");
    }
    for (size_t i = 0; !rc && i < v->n; i++)
        rc = add_entry(list, out, v->items[i], i, err);
    if (!rc && !(out->tools_json = cf_json_dump(list, &(cf_json_dump_opts){.indent = -1}, NULL)))
        rc = cf_fail(err, "out of memory");
    cf_json_free(list);
    cf_json_free(v);
    if (rc)
        cf_tools_file_free(out);
    return rc;
}
