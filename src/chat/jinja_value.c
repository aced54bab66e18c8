/* Jinja values as Python has them: the arena they live in, lists and
 * ordered dicts, truth, equality and ordering, str() and repr(), and
 * json.dumps for |tojson. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja_impl.h"

/* Nesting past this in a value (a list in a list in ...) is refused by
 * repr, tojson and comparisons, as Python's recursion limit would. */
#define VALUE_DEPTH 500

/* ---- arena -------------------------------------------------------------- */

struct jarena_block {
    jarena_block *next;
    size_t used, cap, pad; /* 32 bytes: keeps the data 16-byte aligned */
};

#define BLOCK_SIZE ((size_t)64 << 10)

void *jarena_alloc(jarena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n == 0)
        n = 16;
    jarena_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > BLOCK_SIZE / 4 ? n : BLOCK_SIZE;
        size_t limit = a->limit ? a->limit : SIZE_MAX / 2;
        if (n > limit || cap > limit - a->total)
            return NULL;
        jarena_block *nb = malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->used = 0;
        nb->cap = cap;
        a->total += cap;
        if (b && cap != BLOCK_SIZE) {
            /* a big one-off: keep filling the current block */
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            a->head = nb;
        }
        b = nb;
    }
    void *p = (char *)(b + 1) + b->used;
    b->used += n;
    return p;
}

void jarena_free(jarena *a)
{
    for (jarena_block *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    a->head = NULL;
    a->total = 0;
}

void jerr_set(jr *r, const jnode *at, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = true;
    char msg[CF_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at)
        cf_fail(r->err, "template line %d, column %d: %s", at->line, at->col, msg);
    else
        cf_fail(r->err, "template: %s", msg);
}

int jerr_again(jr *r, const char *msg)
{
    if (!r->failed) {
        r->failed = true;
        cf_fail(r->err, "%s", msg);
    }
    return -1;
}

int jgen_check(jr *r, jv v)
{
    return v.kind == JV_GEN && v.u.gen->error ? jerr_again(r, v.u.gen->error) : 0;
}

void *jalloc(jr *r, const jnode *at, size_t n)
{
    if (n >= 256 && jcharge(r, at, n >> 5) < 0) /* copying costs time too */
        return NULL;
    void *p = jarena_alloc(&r->arena, n);
    if (!p && !r->failed)
        (void)jerr_limit(r, at, "the render needs more than %zu MiB of memory (the limit)",
             r->lim.max_memory >> 20);
    return p;
}

/* ---- UTF-8 -------------------------------------------------------------- */

bool jpy_isspace(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

size_t jutf8_len(const char *p, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n;) {
        if ((unsigned char)p[i] < 0x80) {
            i++;
        } else {
            uint32_t cp;
            i += cf_utf8_decode_esc(p + i, n - i, &cp);
        }
        count++;
    }
    return count;
}

int jutf8_offsets(jr *r, const jnode *at, const char *p, size_t n, size_t **offs, size_t *count)
{
    size_t i = 0;
    while (i < n && (unsigned char)p[i] < 0x80)
        i++;
    *offs = NULL;
    if (i == n) {
        *count = n;
        return 0;
    }
    if (jcharge(r, at, n >> 5) < 0)
        return -1;
    size_t c = jutf8_len(p, n);
    size_t *o = jalloc(r, at, (c + 1) * sizeof *o);
    if (!o)
        return -1;
    size_t k = 0;
    for (i = 0; i < n;) {
        uint32_t cp;
        o[k++] = i;
        i += cf_utf8_decode_esc(p + i, n - i, &cp);
    }
    o[k] = n;
    *offs = o;
    *count = c;
    return 0;
}

/* ---- containers --------------------------------------------------------- */

jlist *jlist_new(jr *r, const jnode *at, size_t n)
{
    jlist *l = jalloc(r, at, sizeof *l);
    if (!l)
        return NULL;
    l->n = n;
    l->items = NULL;
    if (n && !(l->items = jalloc(r, at, n * sizeof *l->items)))
        return NULL;
    return l;
}

int jvec_push(jr *r, const jnode *at, jvec *v, jv x)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        jv *items = jalloc(r, at, cap * sizeof *items);
        if (!items)
            return -1;
        if (v->n)
            memcpy(items, v->items, v->n * sizeof *items);
        v->items = items;
        v->cap = cap;
    }
    v->items[v->n++] = x;
    return 0;
}

jv jvec_list(jr *r, const jnode *at, jvec *v, jkind kind)
{
    jlist *l = jalloc(r, at, sizeof *l);
    jv out = jv_undef();
    if (!l)
        return out;
    l->n = v->n;
    l->items = v->items;
    out.kind = (uint8_t)kind;
    out.u.l = l;
    return out;
}

jv jv_gen(jr *r, const jnode *at, const jv *items, size_t n)
{
    jv out = jv_undef();
    jgen *g = jalloc(r, at, sizeof *g);
    if (!g)
        return out;
    g->items.items = (jv *)items;
    g->items.n = n;
    g->pos = 0;
    g->error = NULL;
    out.kind = JV_GEN;
    out.u.gen = g;
    return out;
}

jdict *jdict_new(jr *r, const jnode *at, size_t cap)
{
    jdict *d = jalloc(r, at, sizeof *d);
    if (!d)
        return NULL;
    memset(d, 0, sizeof *d);
    if (cap) {
        d->keys = jalloc(r, at, cap * sizeof *d->keys);
        d->vals = jalloc(r, at, cap * sizeof *d->vals);
        if (!d->keys || !d->vals)
            return NULL;
        d->cap = cap;
    }
    return d;
}

static uint32_t str_hash(const char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

static void index_insert(jdict *d, size_t entry)
{
    size_t mask = d->index_cap - 1;
    size_t h = str_hash(d->keys[entry].u.s.p, d->keys[entry].u.s.n) & mask;
    while (d->index[h])
        h = (h + 1) & mask;
    d->index[h] = (uint32_t)entry + 1;
}

/* Keep a hash index of the string keys once there are more than 8. */
static int index_update(jr *r, const jnode *at, jdict *d, size_t entry)
{
    if (d->n <= 8 || d->n >= UINT32_MAX)
        return 0;
    if (d->index && d->n * 2 <= d->index_cap) {
        if (d->keys[entry].kind == JV_STR)
            index_insert(d, entry);
        return 0;
    }
    size_t cap = 32;
    while (cap < d->n * 4)
        cap *= 2;
    uint32_t *idx = jalloc(r, at, cap * sizeof *idx);
    if (!idx)
        return -1;
    memset(idx, 0, cap * sizeof *idx);
    d->index = idx;
    d->index_cap = cap;
    for (size_t i = 0; i < d->n; i++)
        if (d->keys[i].kind == JV_STR)
            index_insert(d, i);
    return 0;
}

static bool find_str(const jdict *d, const char *p, size_t n, size_t *at)
{
    if (d->index) {
        size_t mask = d->index_cap - 1;
        for (size_t h = str_hash(p, n) & mask; d->index[h]; h = (h + 1) & mask) {
            size_t e = d->index[h] - 1;
            if (d->keys[e].u.s.n == n && memcmp(d->keys[e].u.s.p, p, n) == 0) {
                *at = e;
                return true;
            }
        }
        return false;
    }
    for (size_t i = 0; i < d->n; i++)
        if (d->keys[i].kind == JV_STR && d->keys[i].u.s.n == n &&
            memcmp(d->keys[i].u.s.p, p, n) == 0) {
            *at = i;
            return true;
        }
    return false;
}

static bool find_key(const jdict *d, jv key, size_t *at)
{
    if (key.kind == JV_STR)
        return find_str(d, key.u.s.p, key.u.s.n, at);
    for (size_t i = 0; i < d->n; i++)
        if (d->keys[i].kind != JV_STR && jv_equal(d->keys[i], key)) {
            *at = i;
            return true;
        }
    return false;
}

bool jdict_get(const jdict *d, jv key, jv *val)
{
    size_t i;
    if (!find_key(d, key, &i))
        return false;
    *val = d->vals[i];
    return true;
}

bool jdict_get_str(const jdict *d, const char *key, size_t n, jv *val)
{
    size_t i;
    if (!find_str(d, key, n, &i))
        return false;
    *val = d->vals[i];
    return true;
}

jlist *jdict_pairs(jr *r, const jnode *at, const jdict *d, const size_t *order)
{
    jlist *l = jlist_new(r, at, d->n);
    for (size_t i = 0; l && i < d->n; i++) {
        jlist *pair = jlist_new(r, at, 2);
        if (!pair)
            return NULL;
        size_t k = order ? order[i] : i;
        pair->items[0] = d->keys[k];
        pair->items[1] = d->vals[k];
        l->items[i] = jv_seq(pair, JV_TUPLE);
    }
    return l;
}

int jdict_set(jr *r, const jnode *at, jdict *d, jv key, jv val)
{
    size_t i;
    if (find_key(d, key, &i)) {
        d->vals[i] = val;
        return 0;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        jv *keys = jalloc(r, at, cap * sizeof *keys), *vals = jalloc(r, at, cap * sizeof *vals);
        if (!keys || !vals)
            return -1;
        if (d->n) {
            memcpy(keys, d->keys, d->n * sizeof *keys);
            memcpy(vals, d->vals, d->n * sizeof *vals);
        }
        d->keys = keys;
        d->vals = vals;
        d->cap = cap;
    }
    d->keys[d->n] = key;
    d->vals[d->n] = val;
    d->n++;
    return index_update(r, at, d, d->n - 1);
}

/* ---- truth, types, equality, order -------------------------------------- */

bool jv_truthy(jv v)
{
    switch (v.kind) {
    case JV_UNDEF:
    case JV_NONE:
    case JV_ABSENT: return false;
    case JV_BOOL: return v.u.b;
    case JV_INT: return v.u.i != 0;
    case JV_FLOAT: return v.u.f != 0.0;
    case JV_STR: return v.u.s.n != 0;
    case JV_LIST:
    case JV_TUPLE: return v.u.l->n != 0;
    case JV_DICT: return v.u.d->n != 0;
    default: return true;
    }
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case JV_UNDEF: return "Undefined";
    case JV_NONE: return "NoneType";
    case JV_BOOL: return "bool";
    case JV_INT: return "int";
    case JV_FLOAT: return "float";
    case JV_STR: return "str";
    case JV_LIST: return "list";
    case JV_TUPLE: return "tuple";
    case JV_DICT: return "dict";
    case JV_NS: return "Namespace";
    case JV_MACRO: return "Macro";
    case JV_FUNC: return "function";
    case JV_METHOD: return "builtin_function_or_method";
    case JV_LOOP: return "LoopContext";
    case JV_GEN: return "generator";
    default: return "object";
    }
}

const char *jv_type_name(jv v)
{
    return kind_name(v.kind);
}

jv jv_undef_name(const char *name)
{
    jv v = jv_undef();
    v.u.s.p = name;
    v.u.s.n = strlen(name);
    return v;
}

jv jv_undef_member(jv owner, const char *name, size_t n)
{
    jv v = jv_undef();
    v.owner = owner.kind == JV_UNDEF ? JV_ABSENT : owner.kind;
    v.u.s.p = name;
    v.u.s.n = n;
    return v;
}

int jundef_error(jr *r, const jnode *at, jv v)
{
    if (v.owner == JV_UNDEF && !v.u.s.p)
        return jerr(r, at, "the value is undefined");
    if (v.owner == JV_UNDEF)
        return jerr(r, at, "'%.*s' is undefined", (int)v.u.s.n, v.u.s.p);
    if (!v.u.s.p)
        return jerr(r, at, "'%s object' has no such element", kind_name(v.owner));
    return jerr(r, at, "'%s object' has no attribute '%.*s'", kind_name(v.owner), (int)v.u.s.n,
                v.u.s.p);
}

static double num(jv v)
{
    return v.kind == JV_FLOAT ? v.u.f : v.kind == JV_INT ? (double)v.u.i : (double)v.u.b;
}

/* work counts the nodes visited (strings by 256 bytes); past *budget the
 * answer is abandoned (the caller reports the overrun). */
typedef struct work {
    uint64_t done, budget;
} work;

static bool spend(work *w, uint64_t units)
{
    w->done += units;
    return w->done <= w->budget;
}

static int eq_rec(jv a, jv b, int depth, work *w)
{
    if (depth > VALUE_DEPTH || !spend(w, 1))
        return 0;
    if (jv_is_num(a) && jv_is_num(b)) {
        if (a.kind != JV_FLOAT && b.kind != JV_FLOAT)
            return (a.kind == JV_INT ? a.u.i : a.u.b) == (b.kind == JV_INT ? b.u.i : b.u.b);
        return num(a) == num(b);
    }
    if (a.kind != b.kind)
        return 0;
    switch (a.kind) {
    case JV_UNDEF:
    case JV_NONE: return 1;
    case JV_STR:
        return a.u.s.n == b.u.s.n && spend(w, a.u.s.n >> 5) && memcmp(a.u.s.p, b.u.s.p, a.u.s.n) == 0;
    case JV_LIST:
    case JV_TUPLE:
        if (a.u.l->n != b.u.l->n)
            return 0;
        for (size_t i = 0; i < a.u.l->n; i++)
            if (!eq_rec(a.u.l->items[i], b.u.l->items[i], depth + 1, w))
                return 0;
        return 1;
    case JV_DICT:
        if (a.u.d->n != b.u.d->n)
            return 0;
        for (size_t i = 0; i < a.u.d->n; i++) {
            jv other;
            if (!jdict_get(b.u.d, a.u.d->keys[i], &other) ||
                !eq_rec(a.u.d->vals[i], other, depth + 1, w))
                return 0;
        }
        return 1;
    case JV_METHOD:
        return a.u.meth->def == b.u.meth->def && eq_rec(a.u.meth->self, b.u.meth->self, depth + 1, w);
    case JV_FUNC: return a.u.fn == b.u.fn;
    case JV_NS: return a.u.d == b.u.d;
    case JV_MACRO: return a.u.m == b.u.m;
    case JV_LOOP: return a.u.loop == b.u.loop;
    case JV_GEN: return a.u.gen == b.u.gen;
    default: return 0;
    }
}

bool jv_equal(jv a, jv b)
{
    work w = {0, UINT64_MAX};
    return eq_rec(a, b, 0, &w) == 1;
}

static int cmp_rec(jv a, jv b, int depth, work *w)
{
    if (depth > VALUE_DEPTH || !spend(w, 1))
        return -2;
    if (jv_is_num(a) && jv_is_num(b)) {
        if (a.kind != JV_FLOAT && b.kind != JV_FLOAT) {
            int64_t x = a.kind == JV_INT ? a.u.i : a.u.b, y = b.kind == JV_INT ? b.u.i : b.u.b;
            return (x > y) - (x < y);
        }
        double x = num(a), y = num(b);
        return isnan(x) || isnan(y) ? -3 : (x > y) - (x < y);
    }
    if (a.kind == JV_STR && b.kind == JV_STR) {
        size_t n = a.u.s.n < b.u.s.n ? a.u.s.n : b.u.s.n;
        spend(w, n >> 5);
        int c = memcmp(a.u.s.p, b.u.s.p, n);
        if (c)
            return c < 0 ? -1 : 1;
        return (a.u.s.n > b.u.s.n) - (a.u.s.n < b.u.s.n);
    }
    if (jv_is_seq(a) && a.kind == b.kind) {
        size_t n = a.u.l->n < b.u.l->n ? a.u.l->n : b.u.l->n;
        for (size_t i = 0; i < n; i++) {
            if (eq_rec(a.u.l->items[i], b.u.l->items[i], depth + 1, w))
                continue;
            return cmp_rec(a.u.l->items[i], b.u.l->items[i], depth + 1, w);
        }
        return (a.u.l->n > b.u.l->n) - (a.u.l->n < b.u.l->n);
    }
    return -2;
}

/* -1, 0, 1; -2 when Python would raise TypeError; -3 for NaN (every order false). */
int jv_compare(jv a, jv b)
{
    work w = {0, UINT64_MAX};
    return cmp_rec(a, b, 0, &w);
}

int jcharge(jr *r, const jnode *at, uint64_t units)
{
    r->steps += units;
    if (r->steps > r->lim.max_steps)
        return jerr_limit(r, at, "the template ran more than %llu steps (the limit)",
                    (unsigned long long)r->lim.max_steps);
    return 0;
}

static int charge_work(jr *r, const jnode *at, const work *w)
{
    return jcharge(r, at, w->done);
}

int jv_eq(jr *r, const jnode *at, jv a, jv b, bool *out)
{
    work w = {0, r->lim.max_steps - (r->steps < r->lim.max_steps ? r->steps : r->lim.max_steps)};
    *out = eq_rec(a, b, 0, &w) == 1;
    return charge_work(r, at, &w);
}

int jv_cmp(jr *r, const jnode *at, jv a, jv b, int *out)
{
    work w = {0, r->lim.max_steps - (r->steps < r->lim.max_steps ? r->steps : r->lim.max_steps)};
    *out = cmp_rec(a, b, 0, &w);
    return charge_work(r, at, &w);
}

/* ---- text --------------------------------------------------------------- */

int jout_put(jr *r, const jnode *at, jout *o, const char *s, size_t n)
{
    if (n > r->lim.max_output - o->n)
        return jerr_limit(r, at, "the output grows past the limit of %zu bytes", r->lim.max_output);
    if (o->n + n > o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 256;
        while (cap < o->n + n)
            cap *= 2;
        char *p = jalloc(r, at, cap);
        if (!p)
            return -1;
        if (o->n)
            memcpy(p, o->p, o->n);
        o->p = p;
        o->cap = cap;
    }
    if (n)
        memcpy(o->p + o->n, s, n);
    o->n += n;
    return 0;
}

int jout_puts(jr *r, const jnode *at, jout *o, const char *s)
{
    return jout_put(r, at, o, s, strlen(s));
}

int jv_new_str(jr *r, const jnode *at, const char *p, size_t n, jv *out)
{
    if (n > r->lim.max_output)
        return jerr_limit(r, at, "a string of %zu bytes is past the limit of %zu", n, r->lim.max_output);
    char *s = jalloc(r, at, n + 1);
    if (!s)
        return -1;
    if (n)
        memcpy(s, p, n);
    s[n] = 0;
    *out = jv_str(s, n);
    return 0;
}

/* Python's str.isprintable(), near enough: controls, the separators
 * other than ' ', format characters and private use are not. */
static bool py_printable(uint32_t c)
{
    if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD)
        return false;
    if ((c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) ||
        (c >= 0x205F && c <= 0x206F) || c == 0x3000 || c == 0xFEFF || c == 0x1680)
        return false;
    if ((c >= 0xD800 && c <= 0xF8FF) || (c >= 0xFFF9 && c <= 0xFFFB) || c >= 0xF0000 ||
        (c & 0xFFFE) == 0xFFFE)
        return false;
    return true;
}

static int repr_str(jr *r, const jnode *at, jout *o, const char *s, size_t n)
{
    bool has_sq = memchr(s, '\'', n) != NULL, has_dq = memchr(s, '"', n) != NULL;
    char q = has_sq && !has_dq ? '"' : '\'';
    if (jout_put(r, at, o, &q, 1) < 0)
        return -1;
    size_t run = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = cf_utf8_decode_esc(s + i, n - i, &cp);
        char esc[16];
        const char *e = NULL;
        if (cp == (uint32_t)q || cp == '\\') {
            esc[0] = '\\';
            esc[1] = (char)cp;
            esc[2] = 0;
            e = esc;
        } else if (cp == '\n') {
            e = "\\n";
        } else if (cp == '\r') {
            e = "\\r";
        } else if (cp == '\t') {
            e = "\\t";
        } else if (!py_printable(cp)) {
            if (cp >= 0xDC80 && cp <= 0xDCFF)
                cp -= 0xDC00; /* a malformed byte: show it as Python shows surrogateescape */
            snprintf(esc, sizeof esc, cp < 0x100 ? "\\x%02x" : cp < 0x10000 ? "\\u%04x" : "\\U%08x", cp);
            e = esc;
        }
        if (e) {
            if (jout_put(r, at, o, s + i - run, run) < 0 || jout_puts(r, at, o, e) < 0)
                return -1;
            run = 0;
        } else {
            run += len;
        }
        i += len;
    }
    if (jout_put(r, at, o, s + n - run, run) < 0)
        return -1;
    return jout_put(r, at, o, &q, 1);
}

static int write_value(jr *r, const jnode *at, jout *o, jv v, bool repr, int depth);

static int write_items(jr *r, const jnode *at, jout *o, jv v, int depth)
{
    bool dict = v.kind == JV_DICT || v.kind == JV_NS;
    size_t n = dict ? v.u.d->n : v.u.l->n;
    const char *open = v.kind == JV_TUPLE ? "(" : dict ? "{" : "[";
    const char *close = v.kind == JV_TUPLE ? (n == 1 ? ",)" : ")") : dict ? "}" : "]";
    if (jout_puts(r, at, o, open) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (i && jout_put(r, at, o, ", ", 2) < 0)
            return -1;
        if (dict) {
            if (write_value(r, at, o, v.u.d->keys[i], true, depth + 1) < 0 ||
                jout_put(r, at, o, ": ", 2) < 0 ||
                write_value(r, at, o, v.u.d->vals[i], true, depth + 1) < 0)
                return -1;
        } else if (write_value(r, at, o, v.u.l->items[i], true, depth + 1) < 0) {
            return -1;
        }
    }
    return jout_puts(r, at, o, close);
}

static int write_value(jr *r, const jnode *at, jout *o, jv v, bool repr, int depth)
{
    char buf[128];
    if (depth > VALUE_DEPTH)
        return jerr(r, at, "a value nested too deeply to print");
    switch (v.kind) {
    case JV_UNDEF: return repr ? jout_puts(r, at, o, "Undefined") : 0;
    case JV_NONE: return jout_puts(r, at, o, "None");
    case JV_BOOL: return jout_puts(r, at, o, v.u.b ? "True" : "False");
    case JV_INT:
        snprintf(buf, sizeof buf, "%" PRId64, v.u.i);
        return jout_puts(r, at, o, buf);
    case JV_FLOAT:
        cf_json_format_double(buf, v.u.f, false);
        return jout_puts(r, at, o, buf);
    case JV_STR:
        return repr ? repr_str(r, at, o, v.u.s.p, v.u.s.n) : jout_put(r, at, o, v.u.s.p, v.u.s.n);
    case JV_LIST:
    case JV_TUPLE:
    case JV_DICT: return write_items(r, at, o, v, depth);
    case JV_NS: {
        jv d = v;
        d.kind = JV_DICT;
        return jout_puts(r, at, o, "<Namespace ") < 0 || write_items(r, at, o, d, depth) < 0
                   ? -1 : jout_puts(r, at, o, ">");
    }
    case JV_MACRO:
        snprintf(buf, sizeof buf, "<Macro '%.40s'>",
                 v.u.m->def->kind == N_MACRO ? v.u.m->def->name : "caller");
        return jout_puts(r, at, o, buf);
    case JV_FUNC:
        snprintf(buf, sizeof buf, "<function %.40s>", v.u.fn->name);
        return jout_puts(r, at, o, buf);
    case JV_METHOD:
        snprintf(buf, sizeof buf, "<built-in method %.30s of %.20s object>", v.u.meth->def->name,
                 jv_type_name(v.u.meth->self));
        return jout_puts(r, at, o, buf);
    case JV_LOOP:
        snprintf(buf, sizeof buf, "<LoopContext %zu/%zu>", v.u.loop->i + 1, v.u.loop->n);
        return jout_puts(r, at, o, buf);
    case JV_GEN: return jout_puts(r, at, o, "<generator object>");
    default: return 0;
    }
}

int jv_write_str(jr *r, const jnode *at, jout *o, jv v)
{
    return write_value(r, at, o, v, false, 0);
}

int jv_write_repr(jr *r, const jnode *at, jout *o, jv v)
{
    return write_value(r, at, o, v, true, 0);
}

int jv_to_str(jr *r, const jnode *at, jv v, jv *out)
{
    if (v.kind == JV_STR) {
        *out = v;
        return 0;
    }
    if (v.kind == JV_UNDEF) {
        *out = jv_str("", 0);
        return 0;
    }
    jout o = {0};
    if (jv_write_str(r, at, &o, v) < 0)
        return -1;
    *out = jv_str(o.p ? o.p : "", o.n);
    return 0;
}

/* ---- JSON --------------------------------------------------------------- */

static int json_key(jr *r, const jnode *at, jv k, cf_jbuf *b, const cf_json_dump_opts *o)
{
    char buf[48];
    switch (k.kind) {
    case JV_STR: cf_json_put_string(b, k.u.s.p, k.u.s.n, o->ensure_ascii); return 0;
    case JV_INT: snprintf(buf, sizeof buf, "\"%" PRId64 "\"", k.u.i); break;
    case JV_BOOL: snprintf(buf, sizeof buf, "\"%s\"", k.u.b ? "true" : "false"); break;
    case JV_NONE: snprintf(buf, sizeof buf, "\"null\""); break;
    case JV_FLOAT: {
        char d[32];
        cf_json_format_double(d, k.u.f, true);
        snprintf(buf, sizeof buf, "\"%s\"", d);
        break;
    }
    default:
        return jerr(r, at, "keys must be str, int, float, bool or None, not %s", jv_type_name(k));
    }
    cf_jbuf_puts(b, buf);
    return 0;
}

static int json_sort_cmp(const void *x, const void *y, void *keys_)
{
    const jv *keys = keys_;
    jv a = keys[*(const size_t *)x], b = keys[*(const size_t *)y];
    int c = jv_compare(a, b);
    return c == -2 || c == -3 ? (a.kind > b.kind) - (a.kind < b.kind) : c;
}

static void json_newline(cf_jbuf *b, const cf_json_dump_opts *o, int level)
{
    cf_jbuf_putc(b, '\n');
    for (int i = 0; i < o->indent * level && !b->failed; i++)
        cf_jbuf_putc(b, ' ');
}

static int json_write(jr *r, const jnode *at, cf_jbuf *b, jv v, const cf_json_dump_opts *o,
                      int level)
{
    char buf[32];
    if (level > VALUE_DEPTH)
        return jerr(r, at, "a value nested too deeply for tojson");
    if (b->failed)
        return 0;
    switch (v.kind) {
    case JV_NONE: cf_jbuf_puts(b, "null"); return 0;
    case JV_BOOL: cf_jbuf_puts(b, v.u.b ? "true" : "false"); return 0;
    case JV_INT:
        snprintf(buf, sizeof buf, "%" PRId64, v.u.i);
        cf_jbuf_puts(b, buf);
        return 0;
    case JV_FLOAT:
        cf_json_format_double(buf, v.u.f, true);
        cf_jbuf_puts(b, buf);
        return 0;
    case JV_STR: cf_json_put_string(b, v.u.s.p, v.u.s.n, o->ensure_ascii); return 0;
    case JV_LIST:
    case JV_TUPLE:
    case JV_DICT: break;
    default:
        return jerr(r, at, "Object of type %s is not JSON serializable", jv_type_name(v));
    }
    bool dict = v.kind == JV_DICT;
    size_t n = dict ? v.u.d->n : v.u.l->n;
    if (n == 0) {
        cf_jbuf_puts(b, dict ? "{}" : "[]");
        return 0;
    }
    size_t *order = NULL;
    if (dict && o->sort_keys) {
        if (!(order = jalloc(r, at, n * sizeof *order)))
            return -1;
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        qsort_r(order, n, sizeof *order, json_sort_cmp, v.u.d->keys);
    }
    cf_jbuf_putc(b, dict ? '{' : '[');
    for (size_t k = 0; k < n; k++) {
        size_t i = order ? order[k] : k;
        if (k)
            cf_jbuf_puts(b, o->item_sep);
        if (o->indent >= 0)
            json_newline(b, o, level + 1);
        if (dict) {
            if (json_key(r, at, v.u.d->keys[i], b, o) < 0)
                return -1;
            cf_jbuf_puts(b, o->key_sep);
        }
        if (json_write(r, at, b, dict ? v.u.d->vals[i] : v.u.l->items[i], o, level + 1) < 0)
            return -1;
    }
    if (o->indent >= 0)
        json_newline(b, o, level);
    cf_jbuf_putc(b, dict ? '}' : ']');
    return 0;
}

int jv_tojson(jr *r, const jnode *at, jv v, const cf_json_dump_opts *o, jv *out)
{
    cf_json_dump_opts opts = *o;
    if (!opts.item_sep)
        opts.item_sep = opts.indent >= 0 ? "," : ", ";
    if (!opts.key_sep)
        opts.key_sep = ": ";
    cf_jbuf b = {0};
    b.limit = r->lim.max_output;
    int rc = json_write(r, at, &b, v, &opts, 0);
    if (rc == 0 && b.failed)
        rc = jerr(r, at, "tojson's text grows past the limit of %zu bytes", r->lim.max_output);
    if (rc == 0)
        rc = jv_new_str(r, at, b.p ? b.p : "", b.n, out);
    cf_jbuf_free(&b);
    return rc;
}

int jv_from_json(jr *r, const cf_json *j, jv *out)
{
    switch (j->type) {
    case CF_JSON_NULL: *out = jv_none(); return 0;
    case CF_JSON_BOOL: *out = jv_bool(j->b); return 0;
    case CF_JSON_INT: *out = jv_int(j->i); return 0;
    case CF_JSON_FLOAT: *out = jv_float(j->f); return 0;
    case CF_JSON_STRING: *out = jv_str(j->str, j->len); return 0;
    case CF_JSON_ARRAY: {
        jlist *l = jlist_new(r, NULL, j->n);
        if (!l)
            return -1;
        for (size_t i = 0; i < j->n; i++)
            if (jv_from_json(r, j->items[i], &l->items[i]) < 0)
                return -1;
        out->kind = JV_LIST;
        out->u.l = l;
        return 0;
    }
    case CF_JSON_OBJECT: {
        jdict *d = jdict_new(r, NULL, j->n);
        if (!d)
            return -1;
        for (size_t i = 0; i < j->n; i++) {
            jv v;
            if (jv_from_json(r, j->items[i], &v) < 0 ||
                jdict_set(r, NULL, d, jv_str(j->keys[i].ptr, j->keys[i].len), v) < 0)
                return -1;
        }
        out->kind = JV_DICT;
        out->u.d = d;
        return 0;
    }
    }
    return -1;
}
