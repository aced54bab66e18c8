/* JSON schema -> GBNF, the subset response_format json_schema uses in
 * practice.  Every schema node becomes one rule (s0, s1, ...) written after
 * root, a $defs entry one rule however often it is referred to (so
 * recursive schemas work), all on the JSON grammar's own rules for
 * strings, numbers and whitespace.  Objects write their properties in the
 * schema's order, the required ones always, the others optionally. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/grammar.h"
#include "json.h"

typedef struct conv {
    cf_jbuf out;         /* the rules after root */
    const cf_json *root; /* for $ref */
    const char **def_names;
    size_t n_defs, cap_defs;
    int n_rules;
    cf_err *err;
    int depth;
} conv;

static const char *const ignored[] = {"title", "description", "$schema", "$id", "$comment",
                                      "default", "examples", "additionalProperties", "strict",
                                      "$defs", "definitions", NULL};
static const char *const known[] = {"type", "properties", "required", "items", "minItems",
                                    "maxItems", "minLength", "maxLength", "enum", "const",
                                    "anyOf", "oneOf", "$ref", NULL};

static bool in_list(const char *const *l, const char *k)
{
    for (; *l; l++)
        if (!strcmp(*l, k))
            return true;
    return false;
}

static int refuse(conv *c, const char *what, const char *name)
{
    return cf_fail_as(c->err, CF_E_USAGE, "json schema: %s '%.100s' is not supported", what, name);
}

/* A GBNF literal for the bytes s. */
static void put_literal(cf_jbuf *b, const char *s, size_t n)
{
    cf_jbuf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char esc[8];
        if (ch == '"' || ch == '\\') {
            cf_jbuf_putc(b, '\\');
            cf_jbuf_putc(b, (char)ch);
        } else if (ch < 0x20) {
            snprintf(esc, sizeof esc, "\\x%02x", ch);
            cf_jbuf_puts(b, esc);
        } else {
            cf_jbuf_putc(b, (char)ch);
        }
    }
    cf_jbuf_putc(b, '"');
}

/* A JSON value written compactly, as a literal. */
static int put_value_literal(conv *c, cf_jbuf *b, const cf_json *v)
{
    cf_json_dump_opts o = {.indent = -1, .item_sep = ",", .key_sep = ":"};
    size_t n;
    char *s = cf_json_dump(v, &o, &n);
    if (!s)
        return cf_fail_as(c->err, CF_E_FAIL, "json schema: out of memory");
    put_literal(b, s, n);
    free(s);
    return 0;
}

static int node(conv *c, const cf_json *s, char name[16]);

static int bound(conv *c, const cf_json *s, const char *key, long long *v)
{
    const cf_json *x = cf_json_get(s, key);
    if (!x)
        return 0;
    if (x->type != CF_JSON_INT || x->i < 0 || x->i > 10000)
        return cf_fail_as(c->err, CF_E_USAGE, "json schema: '%s' must be an integer 0..10000",
                          key);
    *v = x->i;
    return 0;
}

static void put_repeat(cf_jbuf *b, long long min, long long max)
{
    char r[48];
    if (max < 0)
        snprintf(r, sizeof r, "{%lld,}", min);
    else
        snprintf(r, sizeof r, "{%lld,%lld}", min, max);
    cf_jbuf_puts(b, r);
}

static int type_body(conv *c, const cf_json *s, const char *type, cf_jbuf *b)
{
    if (!strcmp(type, "string")) {
        long long min = 0, max = -1;
        if (bound(c, s, "minLength", &min) || bound(c, s, "maxLength", &max))
            return -1;
        if (min == 0 && max < 0)
            cf_jbuf_puts(b, "string");
        else {
            cf_jbuf_puts(b, "\"\\\"\" char");
            put_repeat(b, min, max);
            cf_jbuf_puts(b, " \"\\\"\"");
        }
    } else if (!strcmp(type, "number")) {
        cf_jbuf_puts(b, "number");
    } else if (!strcmp(type, "integer")) {
        cf_jbuf_puts(b, "\"-\"? ( \"0\" | [1-9] [0-9]{0,15} )");
    } else if (!strcmp(type, "boolean")) {
        cf_jbuf_puts(b, "( \"true\" | \"false\" )");
    } else if (!strcmp(type, "null")) {
        cf_jbuf_puts(b, "\"null\"");
    } else if (!strcmp(type, "array")) {
        const cf_json *items = cf_json_get(s, "items");
        char item[16] = "value";
        long long min = 0, max = -1;
        if ((items && node(c, items, item)) || bound(c, s, "minItems", &min) ||
            bound(c, s, "maxItems", &max))
            return -1;
        if (max >= 0 && max < min)
            return cf_fail_as(c->err, CF_E_USAGE, "json schema: maxItems below minItems");
        cf_jbuf_puts(b, "\"[\" ws ");
        if (max != 0) {
            cf_jbuf_puts(b, min ? "( " : "( ");
            cf_jbuf_puts(b, item);
            cf_jbuf_puts(b, " ws ( \",\" ws ");
            cf_jbuf_puts(b, item);
            cf_jbuf_puts(b, " ws )");
            put_repeat(b, min ? min - 1 : 0, max < 0 ? -1 : max - 1);
            cf_jbuf_puts(b, min ? " )" : " )?");
        }
        cf_jbuf_puts(b, " \"]\"");
    } else if (!strcmp(type, "object")) {
        const cf_json *props = cf_json_get(s, "properties"), *req = cf_json_get(s, "required");
        if (!props) {
            cf_jbuf_puts(b, "object");
            return 0;
        }
        if (props->type != CF_JSON_OBJECT || (req && req->type != CF_JSON_ARRAY))
            return cf_fail_as(c->err, CF_E_USAGE,
                              "json schema: properties must be an object and required a list");
        /* the key-value pairs, required ones first, each flagged */
        size_t n = props->n, n_req = 0;
        char (*kv)[16] = malloc((n ? n : 1) * sizeof *kv);
        bool *is_req = calloc(n ? n : 1, 1);
        if (!kv || !is_req) {
            free(kv), free(is_req);
            return cf_fail_as(c->err, CF_E_FAIL, "json schema: out of memory");
        }
        int rc = 0;
        for (size_t i = 0; i < n && !rc; i++) {
            for (size_t j = 0; req && j < req->n; j++)
                if (req->items[j]->type == CF_JSON_STRING &&
                    !strcmp(req->items[j]->str, props->keys[i].ptr))
                    is_req[i] = true;
            n_req += is_req[i];
            char v[16];
            if ((rc = node(c, props->items[i], v)))
                break;
            cf_jbuf pair = {0};
            cf_json key = {.type = CF_JSON_STRING, .str = (char *)props->keys[i].ptr,
                           .len = props->keys[i].len};
            rc = put_value_literal(c, &pair, &key);
            cf_jbuf_puts(&pair, " ws \":\" ws ");
            cf_jbuf_puts(&pair, v);
            snprintf(kv[i], sizeof kv[i], "s%d", c->n_rules++);
            cf_jbuf_puts(&c->out, kv[i]);
            cf_jbuf_puts(&c->out, " ::= ");
            cf_jbuf_put(&c->out, pair.p, pair.n);
            cf_jbuf_putc(&c->out, '\n');
            cf_jbuf_free(&pair);
        }
        for (size_t j = 0; req && j < req->n && !rc; j++) {
            const cf_json *r = req->items[j];
            if (r->type != CF_JSON_STRING || !cf_json_get(props, r->str))
                rc = cf_fail_as(c->err, CF_E_USAGE,
                                "json schema: required property '%.100s' is not in properties",
                                r->type == CF_JSON_STRING ? r->str : "?");
        }
        cf_jbuf_puts(b, "\"{\" ws ");
        if (!rc && n_req) {
            bool first = true;
            for (size_t i = 0; i < n; i++)
                if (is_req[i]) {
                    cf_jbuf_puts(b, first ? "" : " \",\" ws ");
                    cf_jbuf_puts(b, kv[i]);
                    cf_jbuf_puts(b, " ws");
                    first = false;
                }
            for (size_t i = 0; i < n; i++)
                if (!is_req[i]) {
                    cf_jbuf_puts(b, " ( \",\" ws ");
                    cf_jbuf_puts(b, kv[i]);
                    cf_jbuf_puts(b, " ws )?");
                }
        } else if (!rc && n) {
            /* no pair is required: any of them first, each later one optional */
            cf_jbuf_puts(b, "(");
            for (size_t i = 0; i < n; i++) {
                cf_jbuf_puts(b, i ? " | " : " ");
                cf_jbuf_puts(b, kv[i]);
                cf_jbuf_puts(b, " ws");
                for (size_t j = i + 1; j < n; j++) {
                    cf_jbuf_puts(b, " ( \",\" ws ");
                    cf_jbuf_puts(b, kv[j]);
                    cf_jbuf_puts(b, " ws )?");
                }
            }
            cf_jbuf_puts(b, " )?");
        }
        cf_jbuf_puts(b, " \"}\"");
        free(kv), free(is_req);
        return rc;
    } else {
        return refuse(c, "type", type);
    }
    return 0;
}

/* The rule of a $ref, made on its first use. */
static int ref(conv *c, const char *r, char name[16])
{
    const char *key = NULL, *defs = NULL;
    if (!strncmp(r, "#/$defs/", 8))
        defs = "$defs", key = r + 8;
    else if (!strncmp(r, "#/definitions/", 14))
        defs = "definitions", key = r + 14;
    const cf_json *d = defs ? cf_json_get(c->root, defs) : NULL;
    const cf_json *s = d && d->type == CF_JSON_OBJECT ? cf_json_get(d, key) : NULL;
    if (!strcmp(r, "#"))
        s = c->root;
    if (!s)
        return cf_fail_as(c->err, CF_E_USAGE, "json schema: $ref '%.100s' is not a $defs entry", r);
    for (size_t i = 0; i < c->n_defs; i++)
        if (!strcmp(c->def_names[i], r)) {
            snprintf(name, 16, "d%u", (unsigned)i);
            return 0;
        }
    if (c->n_defs == c->cap_defs) {
        size_t cap = c->cap_defs ? 2 * c->cap_defs : 8;
        const char **n = realloc(c->def_names, cap * sizeof *n);
        if (!n)
            return cf_fail_as(c->err, CF_E_FAIL, "json schema: out of memory");
        c->def_names = n;
        c->cap_defs = cap;
    }
    size_t id = c->n_defs++;
    c->def_names[id] = r;
    char body[16];
    if (node(c, s, body))
        return -1;
    snprintf(name, 16, "d%u", (unsigned)id);
    cf_jbuf_puts(&c->out, name);
    cf_jbuf_puts(&c->out, " ::= ");
    cf_jbuf_puts(&c->out, body);
    cf_jbuf_putc(&c->out, '\n');
    return 0;
}

/* Write schema s's rule; its name into name. */
static int node(conv *c, const cf_json *s, char name[16])
{
    if (++c->depth > 64) {
        c->depth--;
        return cf_fail_as(c->err, CF_E_USAGE, "json schema: nested deeper than 64");
    }
    int rc = 0;
    cf_jbuf b = {0};
    if (s->type == CF_JSON_BOOL && s->b) {
        cf_jbuf_puts(&b, "value");
    } else if (s->type != CF_JSON_OBJECT) {
        rc = cf_fail_as(c->err, CF_E_USAGE, "json schema: a schema must be an object");
    } else {
        for (size_t i = 0; i < s->n && !rc; i++)
            if (!in_list(ignored, s->keys[i].ptr) && !in_list(known, s->keys[i].ptr))
                rc = refuse(c, "keyword", s->keys[i].ptr);
        const cf_json *type = cf_json_get(s, "type"), *en = cf_json_get(s, "enum"),
                      *cst = cf_json_get(s, "const"), *any = cf_json_get(s, "anyOf"),
                      *r = cf_json_get(s, "$ref");
        if (!any)
            any = cf_json_get(s, "oneOf");
        if (rc) {
        } else if (r) {
            char to[16];
            if (r->type != CF_JSON_STRING)
                rc = cf_fail_as(c->err, CF_E_USAGE, "json schema: $ref must be a string");
            else if (!(rc = ref(c, r->str, to)))
                cf_jbuf_puts(&b, to);
        } else if (cst) {
            rc = put_value_literal(c, &b, cst);
        } else if (en) {
            if (en->type != CF_JSON_ARRAY || !en->n)
                rc = cf_fail_as(c->err, CF_E_USAGE, "json schema: enum must be a non-empty list");
            for (size_t i = 0; !rc && i < en->n; i++) {
                cf_jbuf_puts(&b, i ? " | " : "");
                rc = put_value_literal(c, &b, en->items[i]);
            }
        } else if (any) {
            if (any->type != CF_JSON_ARRAY || !any->n)
                rc = cf_fail_as(c->err, CF_E_USAGE,
                                "json schema: anyOf/oneOf must be a non-empty list");
            for (size_t i = 0; !rc && i < any->n; i++) {
                char alt[16];
                if (!(rc = node(c, any->items[i], alt))) {
                    cf_jbuf_puts(&b, i ? " | " : "");
                    cf_jbuf_puts(&b, alt);
                }
            }
        } else if (type && type->type == CF_JSON_STRING) {
            rc = type_body(c, s, type->str, &b);
        } else if (type && type->type == CF_JSON_ARRAY && type->n) {
            for (size_t i = 0; !rc && i < type->n; i++) {
                if (type->items[i]->type != CF_JSON_STRING) {
                    rc = cf_fail_as(c->err, CF_E_USAGE, "json schema: type must name types");
                    break;
                }
                cf_jbuf_puts(&b, i ? " | " : "");
                rc = type_body(c, s, type->items[i]->str, &b);
            }
        } else if (type) {
            rc = cf_fail_as(c->err, CF_E_USAGE, "json schema: type must name types");
        } else {
            cf_jbuf_puts(&b, "value"); /* no constraint: any JSON value */
        }
    }
    if (!rc && b.failed)
        rc = cf_fail_as(c->err, CF_E_FAIL, "json schema: out of memory");
    if (!rc) {
        snprintf(name, 16, "s%d", c->n_rules++);
        cf_jbuf_puts(&c->out, name);
        cf_jbuf_puts(&c->out, " ::= ");
        cf_jbuf_put(&c->out, b.p, b.n);
        cf_jbuf_putc(&c->out, '\n');
    }
    cf_jbuf_free(&b);
    c->depth--;
    return rc;
}

/* The GBNF text of the schema's grammar between before and after
 * (malloc'ed). */
static char *schema_gbnf(const char *json, const char *before, const char *after, cf_err *err)
{
    cf_json *schema;
    if (cf_json_parse(json, strlen(json), NULL, &schema, err)) {
        char msg[CF_ERR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        cf_fail_as(err, CF_E_USAGE, "json schema: %s", msg);
        return NULL;
    }
    conv c = {.root = schema, .err = err};
    char top[16];
    char *text = NULL;
    if (!node(&c, schema, top)) {
        cf_jbuf g = {0};
        cf_jbuf_puts(&g, "root ::= ");
        put_literal(&g, before ? before : "", before ? strlen(before) : 0);
        cf_jbuf_putc(&g, ' ');
        cf_jbuf_puts(&g, top);
        cf_jbuf_putc(&g, ' ');
        put_literal(&g, after ? after : "", after ? strlen(after) : 0);
        cf_jbuf_putc(&g, '\n');
        cf_jbuf_put(&g, c.out.p, c.out.n);
        cf_jbuf_puts(&g, cf_grammar_json_rules());
        if (c.out.failed || !(text = cf_jbuf_take(&g, NULL)))
            cf_fail_as(err, CF_E_FAIL, "json schema: out of memory");
    }
    cf_jbuf_free(&c.out);
    free(c.def_names);
    cf_json_free(schema);
    return text;
}

int cf_grammar_from_json_schema(const char *json, cf_grammar **out, cf_err *err)
{
    return cf_grammar_from_json_schema_framed(json, NULL, NULL, out, err);
}

int cf_grammar_from_json_schema_framed(const char *json, const char *before, const char *after,
                                       cf_grammar **out, cf_err *err)
{
    *out = NULL;
    char *text = schema_gbnf(json, before, after, err);
    if (!text)
        return -1;
    int rc = cf_grammar_parse(text, out, err);
    free(text);
    return rc;
}
