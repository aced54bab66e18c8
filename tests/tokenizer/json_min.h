/* A small JSON reader for the tests: parses a whole document into a tree
 * (strings unescaped to UTF-8), with lookups by key and index. */
#ifndef CONFAB_TESTS_JSON_MIN_H
#define CONFAB_TESTS_JSON_MIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef enum { JS_NULL, JS_BOOL, JS_NUM, JS_STR, JS_ARR, JS_OBJ } js_type;

typedef struct js {
    js_type type;
    double num;
    bool b;
    char *str; /* JS_STR: NUL-terminated, len bytes */
    size_t len;
    struct js *items; /* JS_ARR, JS_OBJ values */
    char **keys;      /* JS_OBJ */
    size_t n;
} js;

typedef struct js_parser {
    const char *p, *end;
    bool bad;
} js_parser;

static inline void js_ws(js_parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
        ps->p++;
}

static inline int js_hex4(js_parser *ps)
{
    int v = 0;
    for (int i = 0; i < 4; i++, ps->p++) {
        if (ps->p >= ps->end)
            return -1;
        char c = *ps->p;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static inline size_t js_put_utf8(char *o, uint32_t c)
{
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xC0 | c >> 6);
        o[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xE0 | c >> 12);
        o[1] = (char)(0x80 | (c >> 6 & 0x3F));
        o[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | c >> 18);
    o[1] = (char)(0x80 | (c >> 12 & 0x3F));
    o[2] = (char)(0x80 | (c >> 6 & 0x3F));
    o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

static inline char *js_string(js_parser *ps, size_t *len)
{
    ps->p++; /* opening quote */
    const char *s = ps->p;
    char *out = malloc((size_t)(ps->end - s) + 1), *o = out;
    while (ps->p < ps->end && *ps->p != '"') {
        char c = *ps->p++;
        if (c != '\\') {
            *o++ = c;
            continue;
        }
        if (ps->p >= ps->end)
            break;
        c = *ps->p++;
        switch (c) {
        case 'n': *o++ = '\n'; break;
        case 't': *o++ = '\t'; break;
        case 'r': *o++ = '\r'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'u': {
            int v = js_hex4(ps);
            if (v < 0) {
                ps->bad = true;
                break;
            }
            uint32_t cp = (uint32_t)v;
            if (cp >= 0xD800 && cp < 0xDC00 && ps->p + 1 < ps->end && ps->p[0] == '\\' &&
                ps->p[1] == 'u') {
                ps->p += 2;
                int lo = js_hex4(ps);
                if (lo >= 0xDC00 && lo < 0xE000)
                    cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
            }
            o += js_put_utf8(o, cp);
            break;
        }
        default: *o++ = c; break;
        }
    }
    if (ps->p >= ps->end)
        ps->bad = true;
    else
        ps->p++;
    *o = 0;
    *len = (size_t)(o - out);
    return out;
}

static inline void js_value(js_parser *ps, js *v, int depth);

static inline void js_push(js *v, js *item, char *key)
{
    if ((v->n & (v->n - 1)) == 0) { /* grow at powers of two */
        size_t cap = v->n ? v->n * 2 : 1;
        v->items = realloc(v->items, cap * sizeof *v->items);
        if (v->type == JS_OBJ)
            v->keys = realloc(v->keys, cap * sizeof *v->keys);
    }
    v->items[v->n] = *item;
    if (v->type == JS_OBJ)
        v->keys[v->n] = key;
    v->n++;
}

static inline void js_value(js_parser *ps, js *v, int depth)
{
    memset(v, 0, sizeof *v);
    js_ws(ps);
    if (ps->p >= ps->end || depth > 64) {
        ps->bad = true;
        return;
    }
    char c = *ps->p;
    if (c == '"') {
        v->type = JS_STR;
        v->str = js_string(ps, &v->len);
    } else if (c == '[' || c == '{') {
        v->type = c == '[' ? JS_ARR : JS_OBJ;
        ps->p++;
        js_ws(ps);
        char close = c == '[' ? ']' : '}';
        while (!ps->bad && ps->p < ps->end && *ps->p != close) {
            char *key = NULL;
            if (v->type == JS_OBJ) {
                size_t kl;
                js_ws(ps);
                if (ps->p >= ps->end || *ps->p != '"') {
                    ps->bad = true;
                    break;
                }
                key = js_string(ps, &kl);
                js_ws(ps);
                if (ps->p < ps->end && *ps->p == ':')
                    ps->p++;
            }
            js item;
            js_value(ps, &item, depth + 1);
            js_push(v, &item, key);
            js_ws(ps);
            if (ps->p < ps->end && *ps->p == ',')
                ps->p++;
            js_ws(ps);
        }
        if (ps->p < ps->end)
            ps->p++;
        else
            ps->bad = true;
    } else if (c == 't' || c == 'f') {
        v->type = JS_BOOL;
        v->b = c == 't';
        ps->p += c == 't' ? 4 : 5;
    } else if (c == 'n') {
        v->type = JS_NULL;
        ps->p += 4;
    } else {
        char *q;
        v->type = JS_NUM;
        v->num = strtod(ps->p, &q);
        if (q == ps->p)
            ps->bad = true;
        ps->p = q;
    }
}

/* Parse text[0..len); NULL when it is not JSON. */
static inline js *js_parse(const char *text, size_t len)
{
    js_parser ps = {text, text + len, false};
    js *v = malloc(sizeof *v);
    js_value(&ps, v, 0);
    if (ps.bad) {
        free(v);
        return NULL;
    }
    return v;
}

static inline const js *js_get(const js *v, const char *key)
{
    if (!v || v->type != JS_OBJ)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

static inline const js *js_at(const js *v, size_t i)
{
    return v && v->type == JS_ARR && i < v->n ? &v->items[i] : NULL;
}

static inline void js_free_inner(js *v)
{
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        js_free_inner(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
}

static inline void js_free(js *v)
{
    if (v) {
        js_free_inner(v);
        free(v);
    }
}

#endif
