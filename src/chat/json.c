/* JSON: a strict bounded parser, builders, and a json.dumps-compatible writer. */
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/tokenizer.h"

/* ---- UTF-8 ------------------------------------------------------------- */

size_t cf_utf8_decode_esc(const char *str, size_t n, uint32_t *cp)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (len == 0 || c > 0xF4 || len > n)
        goto bad;
    uint32_t v = c & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            goto bad;
        v = v << 6 | (s[i] & 0x3F);
    }
    /* overlong forms, surrogates and values past U+10FFFF are malformed */
    static const uint32_t min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min_for_len[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        goto bad;
    *cp = v;
    return len;
bad:
    *cp = 0xDC00 + c;
    return 1;
}

size_t cf_utf8_encode_esc(uint32_t cp, char out[4])
{
    if (cp >= 0xDC80 && cp <= 0xDCFF) { /* an escaped malformed byte: give it back */
        out[0] = (char)(cp - 0xDC00);
        return 1;
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) /* other lone surrogates cannot be UTF-8 */
        cp = 0xFFFD;
    return cf_utf8_encode(cp, out);
}

/* ---- buffer ------------------------------------------------------------ */

void cf_jbuf_put(cf_jbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    size_t limit = b->limit ? b->limit : SIZE_MAX / 4;
    if (n > limit - b->n) {
        b->failed = true;
        return;
    }
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void cf_jbuf_puts(cf_jbuf *b, const char *s)
{
    cf_jbuf_put(b, s, strlen(s));
}

void cf_jbuf_putc(cf_jbuf *b, char c)
{
    cf_jbuf_put(b, &c, 1);
}

char *cf_jbuf_take(cf_jbuf *b, size_t *len)
{
    if (!b->failed && !b->p)
        cf_jbuf_put(b, "", 0);
    if (b->failed || !b->p) {
        cf_jbuf_free(b);
        return NULL;
    }
    char *p = b->p;
    if (len)
        *len = b->n;
    b->p = NULL;
    b->n = b->cap = 0;
    return p;
}

void cf_jbuf_free(cf_jbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

void cf_jbuf_reset(cf_jbuf *b)
{
    b->n = 0;
    b->failed = false;
    if (b->p)
        b->p[0] = 0;
}

/* ---- numbers and strings in Python's spelling --------------------------- */

void cf_json_format_double(char out[32], double v, bool json)
{
    if (isnan(v)) {
        strcpy(out, json ? "NaN" : "nan");
        return;
    }
    if (isinf(v)) {
        strcpy(out, v > 0 ? (json ? "Infinity" : "inf") : (json ? "-Infinity" : "-inf"));
        return;
    }
    /* The shortest digit string that reads back as v, then Python's layout:
     * positional for decimal exponents -4..15, scientific otherwise. */
    char sci[40];
    int prec;
    for (prec = 1; prec <= 17; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
        if (strtod(sci, NULL) == v)
            break;
    }
    char digits[24];
    size_t nd = 0;
    const char *p = sci;
    bool neg = *p == '-';
    if (neg)
        p++;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[nd++] = *p;
    int exp = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    char *o = out;
    if (neg)
        *o++ = '-';
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            *o++ = '0';
            *o++ = '.';
            for (int i = 0; i < -exp - 1; i++)
                *o++ = '0';
            memcpy(o, digits, nd);
            o += nd;
        } else {
            for (int i = 0; i <= exp; i++)
                *o++ = (size_t)i < nd ? digits[i] : '0';
            *o++ = '.';
            if ((size_t)exp + 1 < nd) {
                memcpy(o, digits + exp + 1, nd - (size_t)exp - 1);
                o += nd - (size_t)exp - 1;
            } else {
                *o++ = '0';
            }
        }
        *o = 0;
    } else {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, nd - 1);
            o += nd - 1;
        }
        snprintf(o, (size_t)(out + 32 - o), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
}

void cf_json_put_string(cf_jbuf *b, const char *s, size_t n, bool ensure_ascii)
{
    cf_jbuf_putc(b, '"');
    size_t run = 0; /* bytes copied verbatim in one go */
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char tmp[16];
        size_t len = 1;
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c < 0x20) {
                snprintf(tmp, sizeof tmp, "\\u%04x", c);
                esc = tmp;
            } else if (c >= 0x80 && ensure_ascii) {
                uint32_t cp;
                len = cf_utf8_decode_esc(s + i, n - i, &cp);
                if (cp >= 0x10000) {
                    uint32_t v = cp - 0x10000;
                    snprintf(tmp, sizeof tmp, "\\u%04x\\u%04x", 0xD800 + (v >> 10),
                             0xDC00 + (v & 0x3FF));
                } else {
                    snprintf(tmp, sizeof tmp, "\\u%04x", cp);
                }
                esc = tmp;
            }
        }
        if (esc) {
            cf_jbuf_put(b, s + i - run, run);
            run = 0;
            cf_jbuf_puts(b, esc);
        } else {
            run += len;
        }
        i += len;
    }
    cf_jbuf_put(b, s + n - run, run);
    cf_jbuf_putc(b, '"');
}

/* ---- builders ----------------------------------------------------------- */

static cf_json *node(cf_json_type t)
{
    cf_json *v = calloc(1, sizeof *v);
    if (v)
        v->type = t;
    return v;
}

cf_json *cf_json_null(void)
{
    return node(CF_JSON_NULL);
}

cf_json *cf_json_bool(bool b)
{
    cf_json *v = node(CF_JSON_BOOL);
    if (v)
        v->b = b;
    return v;
}

cf_json *cf_json_int(int64_t i)
{
    cf_json *v = node(CF_JSON_INT);
    if (v)
        v->i = i;
    return v;
}

cf_json *cf_json_float(double f)
{
    cf_json *v = node(CF_JSON_FLOAT);
    if (v)
        v->f = f;
    return v;
}

cf_json *cf_json_string(const char *s, size_t len)
{
    cf_json *v = node(CF_JSON_STRING);
    if (!v)
        return NULL;
    v->str = malloc(len + 1);
    if (!v->str) {
        free(v);
        return NULL;
    }
    memcpy(v->str, s, len);
    v->str[len] = 0;
    v->len = len;
    return v;
}

cf_json *cf_json_array(void)
{
    return node(CF_JSON_ARRAY);
}

cf_json *cf_json_object(void)
{
    return node(CF_JSON_OBJECT);
}

void cf_json_free(cf_json *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        cf_json_free(v->items[i]);
        if (v->keys)
            free((char *)v->keys[i].ptr);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

static int grow(cf_json *c)
{
    if (c->n < c->cap)
        return 0;
    size_t cap = c->cap ? c->cap * 2 : 4;
    cf_json **items = realloc(c->items, cap * sizeof *items);
    if (!items)
        return -1;
    c->items = items;
    if (c->type == CF_JSON_OBJECT) {
        cf_str *keys = realloc(c->keys, cap * sizeof *keys);
        if (!keys)
            return -1;
        c->keys = keys;
    }
    c->cap = cap;
    return 0;
}

int cf_json_push(cf_json *arr, cf_json *v)
{
    if (!arr || !v || arr->type != CF_JSON_ARRAY || grow(arr) < 0) {
        cf_json_free(v);
        return -1;
    }
    arr->items[arr->n++] = v;
    return 0;
}

/* Append a member without looking for an earlier one with the same key. */
static int obj_append(cf_json *obj, const char *key, size_t klen, cf_json *v)
{
    char *k = malloc(klen + 1);
    if (!k || grow(obj) < 0) {
        free(k);
        cf_json_free(v);
        return -1;
    }
    memcpy(k, key, klen);
    k[klen] = 0;
    obj->keys[obj->n] = (cf_str){k, klen};
    obj->items[obj->n++] = v;
    return 0;
}

int cf_json_set(cf_json *obj, const char *key, size_t klen, cf_json *v)
{
    if (!obj || !v || obj->type != CF_JSON_OBJECT) {
        cf_json_free(v);
        return -1;
    }
    for (size_t i = 0; i < obj->n; i++)
        if (obj->keys[i].len == klen && memcmp(obj->keys[i].ptr, key, klen) == 0) {
            cf_json_free(obj->items[i]);
            obj->items[i] = v;
            return 0;
        }
    return obj_append(obj, key, klen, v);
}

cf_json *cf_json_copy(const cf_json *v)
{
    cf_json *c;
    switch (v->type) {
    case CF_JSON_NULL: return cf_json_null();
    case CF_JSON_BOOL: return cf_json_bool(v->b);
    case CF_JSON_INT: return cf_json_int(v->i);
    case CF_JSON_FLOAT: return cf_json_float(v->f);
    case CF_JSON_STRING: return cf_json_string(v->str, v->len);
    case CF_JSON_ARRAY:
        c = cf_json_array();
        for (size_t i = 0; c && i < v->n; i++)
            if (cf_json_push(c, cf_json_copy(v->items[i])) < 0) {
                cf_json_free(c);
                return NULL;
            }
        return c;
    case CF_JSON_OBJECT:
        c = cf_json_object();
        for (size_t i = 0; c && i < v->n; i++)
            if (obj_append(c, v->keys[i].ptr, v->keys[i].len, cf_json_copy(v->items[i])) < 0) {
                cf_json_free(c);
                return NULL;
            }
        return c;
    }
    return NULL;
}

const cf_json *cf_json_get(const cf_json *obj, const char *key)
{
    if (!obj || obj->type != CF_JSON_OBJECT)
        return NULL;
    size_t klen = strlen(key);
    for (size_t i = 0; i < obj->n; i++)
        if (obj->keys[i].len == klen && memcmp(obj->keys[i].ptr, key, klen) == 0)
            return obj->items[i];
    return NULL;
}

/* ---- parser ------------------------------------------------------------- */

typedef struct parser {
    const char *s;
    size_t n, pos;
    int depth, max_depth;
    cf_err *err;
} parser;

static int perr(parser *p, size_t at, const char *what)
{
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < p->n; i++) {
        if (p->s[i] == '\n') {
            line++;
            col = 1;
        } else if (((unsigned char)p->s[i] & 0xC0) != 0x80) {
            col++;
        }
    }
    return cf_fail(p->err, "JSON line %zu, column %zu (byte %zu): %s", line, col, at, what);
}

static void skip_ws(parser *p)
{
    while (p->pos < p->n && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                             p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static bool lit(parser *p, const char *word)
{
    size_t len = strlen(word);
    if (p->n - p->pos >= len && memcmp(p->s + p->pos, word, len) == 0) {
        p->pos += len;
        return true;
    }
    return false;
}

static int hex4(parser *p, uint32_t *out)
{
    uint32_t v = 0;
    if (p->n - p->pos < 4)
        return perr(p, p->pos, "truncated \\u escape");
    for (int i = 0; i < 4; i++) {
        char c = p->s[p->pos + i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return perr(p, p->pos + i, "invalid \\u escape");
        v = v * 16 + (uint32_t)d;
    }
    p->pos += 4;
    *out = v;
    return 0;
}

/* A string body after its opening quote, into buf. */
static int parse_string(parser *p, cf_jbuf *buf)
{
    size_t start = p->pos - 1;
    for (;;) {
        if (p->pos >= p->n)
            return perr(p, start, "unterminated string");
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20)
            return perr(p, p->pos, "control character in string");
        if (c == '\\') {
            if (++p->pos >= p->n)
                return perr(p, start, "unterminated string");
            char e = p->s[p->pos++];
            const char *map = "\"\"\\\\//b\bf\fn\nr\rt\t";
            const char *m = strchr(map, e);
            if (e && m && (m - map) % 2 == 0) {
                cf_jbuf_putc(buf, m[1]);
                continue;
            }
            if (e != 'u')
                return perr(p, p->pos - 1, "invalid escape in string");
            uint32_t cp;
            if (hex4(p, &cp) < 0)
                return -1;
            if (cp >= 0xD800 && cp <= 0xDBFF && p->n - p->pos >= 6 && p->s[p->pos] == '\\' &&
                p->s[p->pos + 1] == 'u') {
                size_t save = p->pos;
                uint32_t lo;
                p->pos += 2;
                if (hex4(p, &lo) < 0)
                    return -1;
                if (lo >= 0xDC00 && lo <= 0xDFFF)
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                else
                    p->pos = save;
            }
            if (cp >= 0xD800 && cp <= 0xDFFF)
                cp = 0xFFFD; /* a lone surrogate has no UTF-8 form */
            char u[4];
            cf_jbuf_put(buf, u, cf_utf8_encode_esc(cp, u));
            continue;
        }
        if (c >= 0x80) {
            uint32_t cp;
            size_t len = cf_utf8_decode_esc(p->s + p->pos, p->n - p->pos, &cp);
            if (cp >= 0xDC80 && cp <= 0xDCFF)
                return perr(p, p->pos, "invalid UTF-8 in string");
            cf_jbuf_put(buf, p->s + p->pos, len);
            p->pos += len;
            continue;
        }
        size_t run = p->pos;
        while (run < p->n && p->s[run] != '"' && p->s[run] != '\\' &&
               (unsigned char)p->s[run] >= 0x20 && (unsigned char)p->s[run] < 0x80)
            run++;
        cf_jbuf_put(buf, p->s + p->pos, run - p->pos);
        p->pos = run;
    }
    if (buf->failed)
        return perr(p, start, "out of memory");
    return 0;
}

static cf_json *parse_number(parser *p)
{
    size_t start = p->pos;
    bool is_float = false;
    if (p->pos < p->n && p->s[p->pos] == '-')
        p->pos++;
    if (lit(p, "Infinity")) {
        cf_json *v = cf_json_float(p->s[start] == '-' ? -INFINITY : INFINITY);
        if (!v)
            perr(p, start, "out of memory");
        return v;
    }
    size_t digits = p->pos;
    while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
        p->pos++;
    if (p->pos == digits) {
        perr(p, start, "invalid number");
        return NULL;
    }
    if (p->s[digits] == '0' && p->pos - digits > 1) {
        perr(p, start, "leading zeros in a number");
        return NULL;
    }
    if (p->pos < p->n && p->s[p->pos] == '.') {
        is_float = true;
        size_t f = ++p->pos;
        while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
        if (p->pos == f) {
            perr(p, start, "invalid number");
            return NULL;
        }
    }
    if (p->pos < p->n && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        is_float = true;
        p->pos++;
        if (p->pos < p->n && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        size_t e = p->pos;
        while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
        if (p->pos == e) {
            perr(p, start, "invalid number");
            return NULL;
        }
    }
    char tmp[64];
    size_t len = p->pos - start;
    cf_json *v;
    if (len >= sizeof tmp) {
        /* longer than any int64 or double needs: read it through a copy */
        char *big = malloc(len + 1);
        if (!big) {
            perr(p, start, "out of memory");
            return NULL;
        }
        memcpy(big, p->s + start, len);
        big[len] = 0;
        v = cf_json_float(strtod(big, NULL));
        free(big);
    } else {
        memcpy(tmp, p->s + start, len);
        tmp[len] = 0;
        errno = 0;
        long long i = is_float ? 0 : strtoll(tmp, NULL, 10);
        if (!is_float && errno == 0) {
            v = cf_json_int(i);
        } else {
            v = cf_json_float(strtod(tmp, NULL)); /* past int64: as Python's float() would */
            errno = 0;
            unsigned long long u = is_float || tmp[0] == '-' ? 0 : strtoull(tmp, NULL, 10);
            if (v && errno == 0)
                v->u = u;
        }
    }
    if (!v)
        perr(p, start, "out of memory");
    return v;
}

static int key_cmp(const void *a, const void *b, void *keys_)
{
    const cf_str *keys = keys_;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    size_t n = keys[i].len < keys[j].len ? keys[i].len : keys[j].len;
    int c = memcmp(keys[i].ptr, keys[j].ptr, n);
    if (c)
        return c;
    if (keys[i].len != keys[j].len)
        return keys[i].len < keys[j].len ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Python's dict semantics for repeated keys: the first position, the last
 * value.  Sorting an index finds the repeats in n log n. */
static int dedupe_keys(cf_json *obj)
{
    size_t n = obj->n;
    size_t *idx = malloc(n * sizeof *idx);
    bool *drop = calloc(n, sizeof *drop);
    if (!idx || !drop) {
        free(idx);
        free(drop);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof *idx, key_cmp, obj->keys);
    bool any = false;
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && obj->keys[idx[b]].len == obj->keys[idx[a]].len &&
               memcmp(obj->keys[idx[b]].ptr, obj->keys[idx[a]].ptr, obj->keys[idx[a]].len) == 0)
            b++;
        if (b - a > 1) {
            any = true;
            size_t first = idx[a], last = idx[b - 1];
            cf_json *tmp = obj->items[first];
            obj->items[first] = obj->items[last];
            obj->items[last] = tmp;
            for (size_t k = a + 1; k < b; k++)
                drop[idx[k]] = true;
        }
        a = b;
    }
    if (any) {
        size_t w = 0;
        for (size_t i = 0; i < n; i++) {
            if (drop[i]) {
                cf_json_free(obj->items[i]);
                free((char *)obj->keys[i].ptr);
                continue;
            }
            obj->items[w] = obj->items[i];
            obj->keys[w++] = obj->keys[i];
        }
        obj->n = w;
    }
    free(idx);
    free(drop);
    return 0;
}

static cf_json *parse_value(parser *p);

static cf_json *parse_container(parser *p, bool is_obj)
{
    size_t start = p->pos++;
    if (++p->depth > p->max_depth) {
        perr(p, start, "nested too deeply");
        return NULL;
    }
    cf_json *c = is_obj ? cf_json_object() : cf_json_array();
    cf_jbuf key = {0};
    if (!c) {
        perr(p, start, "out of memory");
        return NULL;
    }
    char close = is_obj ? '}' : ']';
    skip_ws(p);
    if (p->pos < p->n && p->s[p->pos] == close) {
        p->pos++;
        p->depth--;
        return c;
    }
    for (;;) {
        skip_ws(p);
        if (is_obj) {
            if (p->pos >= p->n || p->s[p->pos] != '"') {
                perr(p, p->pos, "expected a string key");
                goto fail;
            }
            p->pos++;
            key.n = 0;
            if (parse_string(p, &key) < 0)
                goto fail;
            skip_ws(p);
            if (p->pos >= p->n || p->s[p->pos] != ':') {
                perr(p, p->pos, "expected ':'");
                goto fail;
            }
            p->pos++;
        }
        cf_json *v = parse_value(p);
        if (!v)
            goto fail;
        int rc = is_obj ? obj_append(c, key.p ? key.p : "", key.n, v) : cf_json_push(c, v);
        if (rc < 0) {
            perr(p, p->pos, "out of memory");
            goto fail;
        }
        skip_ws(p);
        if (p->pos < p->n && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->n && p->s[p->pos] == close) {
            p->pos++;
            break;
        }
        perr(p, p->pos, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
        goto fail;
    }
    cf_jbuf_free(&key);
    if (is_obj && c->n > 1 && dedupe_keys(c) < 0) {
        perr(p, start, "out of memory");
        cf_json_free(c);
        return NULL;
    }
    p->depth--;
    return c;
fail:
    cf_jbuf_free(&key);
    cf_json_free(c);
    return NULL;
}

static cf_json *parse_value(parser *p)
{
    skip_ws(p);
    if (p->pos >= p->n) {
        perr(p, p->pos, "unexpected end of input");
        return NULL;
    }
    size_t start = p->pos;
    char c = p->s[p->pos];
    cf_json *v = NULL;
    if (c == '{' || c == '[')
        return parse_container(p, c == '{');
    if (c == '"') {
        cf_jbuf b = {0};
        p->pos++;
        if (parse_string(p, &b) < 0) {
            cf_jbuf_free(&b);
            return NULL;
        }
        v = cf_json_string(b.p ? b.p : "", b.n);
        cf_jbuf_free(&b);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        return parse_number(p);
    } else if (lit(p, "true")) {
        v = cf_json_bool(true);
    } else if (lit(p, "false")) {
        v = cf_json_bool(false);
    } else if (lit(p, "null")) {
        v = cf_json_null();
    } else if (lit(p, "NaN")) {
        v = cf_json_float(NAN);
    } else if (lit(p, "Infinity")) {
        v = cf_json_float(INFINITY);
    } else {
        perr(p, start, "expected a value");
        return NULL;
    }
    if (!v)
        perr(p, start, "out of memory");
    return v;
}

int cf_json_parse(const char *text, size_t len, const cf_json_limits *lim, cf_json **out,
                  cf_err *err)
{
    size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : (size_t)256 << 20;
    parser p = {text, len, 0, 0, lim && lim->max_depth > 0 ? lim->max_depth : 256, err};
    *out = NULL;
    if (len > max_bytes)
        return cf_fail(err, "JSON text of %zu bytes is over the limit of %zu", len, max_bytes);
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        p.pos = 3; /* a byte-order mark from a Windows editor */
    cf_json *v = parse_value(&p);
    if (!v)
        return -1;
    skip_ws(&p);
    if (p.pos < p.n) {
        cf_json_free(v);
        return perr(&p, p.pos, "extra data after the value");
    }
    *out = v;
    return 0;
}

/* ---- writer ------------------------------------------------------------- */

static void indent_line(cf_jbuf *b, int indent, int level)
{
    cf_jbuf_putc(b, '\n');
    for (int i = 0; i < indent * level && !b->failed; i++)
        cf_jbuf_putc(b, ' ');
}

static void dump(cf_jbuf *b, const cf_json *v, const cf_json_dump_opts *o, const char *isep,
                 int level)
{
    char num[32];
    switch (v->type) {
    case CF_JSON_NULL: cf_jbuf_puts(b, "null"); return;
    case CF_JSON_BOOL: cf_jbuf_puts(b, v->b ? "true" : "false"); return;
    case CF_JSON_INT:
        snprintf(num, sizeof num, "%lld", (long long)v->i);
        cf_jbuf_puts(b, num);
        return;
    case CF_JSON_FLOAT:
        cf_json_format_double(num, v->f, true);
        cf_jbuf_puts(b, num);
        return;
    case CF_JSON_STRING: cf_json_put_string(b, v->str, v->len, o->ensure_ascii); return;
    case CF_JSON_ARRAY:
    case CF_JSON_OBJECT: break;
    }
    bool obj = v->type == CF_JSON_OBJECT;
    if (v->n == 0) {
        cf_jbuf_puts(b, obj ? "{}" : "[]");
        return;
    }
    size_t *order = NULL;
    if (obj && o->sort_keys && (order = malloc(v->n * sizeof *order)) != NULL) {
        for (size_t i = 0; i < v->n; i++)
            order[i] = i;
        qsort_r(order, v->n, sizeof *order, key_cmp, v->keys);
    }
    cf_jbuf_putc(b, obj ? '{' : '[');
    for (size_t k = 0; k < v->n && !b->failed; k++) {
        size_t i = order ? order[k] : k;
        if (k)
            cf_jbuf_puts(b, isep);
        if (o->indent >= 0)
            indent_line(b, o->indent, level + 1);
        if (obj) {
            cf_json_put_string(b, v->keys[i].ptr, v->keys[i].len, o->ensure_ascii);
            cf_jbuf_puts(b, o->key_sep ? o->key_sep : ": ");
        }
        dump(b, v->items[i], o, isep, level + 1);
    }
    free(order);
    if (o->indent >= 0)
        indent_line(b, o->indent, level);
    cf_jbuf_putc(b, obj ? '}' : ']');
}

char *cf_json_dump(const cf_json *v, const cf_json_dump_opts *o, size_t *len)
{
    static const cf_json_dump_opts defaults = {-1, NULL, NULL, false, false};
    if (!o)
        o = &defaults;
    const char *isep = o->item_sep ? o->item_sep : o->indent >= 0 ? "," : ", ";
    cf_jbuf b = {0};
    dump(&b, v, o, isep, 0);
    return cf_jbuf_take(&b, len);
}
