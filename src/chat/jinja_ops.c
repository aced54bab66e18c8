/* Operations on values with Python's meaning, as jinja2 applies them:
 * attribute and item lookup (a miss is Undefined, not an error), slicing,
 * len(), iteration, `in`, and the arithmetic operators. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jinja_impl.h"

static int type_error(jr *r, const jnode *at, const char *fmt, jv a, jv b)
{
    return jerr(r, at, fmt, jv_type_name(a), jv_type_name(b));
}

/* ---- lookup ------------------------------------------------------------- */

static int bind_method(jr *r, const jnode *at, jv obj, const jbuiltin *m, jv *out)
{
    jmethod *bm = jalloc(r, at, sizeof *bm);
    if (!bm)
        return -1;
    bm->self = obj;
    bm->def = m;
    *out = jv_undef();
    out->kind = JV_METHOD;
    out->u.meth = bm;
    return 0;
}

static int loop_attr(jr *r, const jnode *at, jv obj, const char *name, jv *out)
{
    const jloop *l = obj.u.loop;
    int64_t i = (int64_t)l->i, n = (int64_t)l->n;
    if (!strcmp(name, "index")) *out = jv_int(i + 1);
    else if (!strcmp(name, "index0")) *out = jv_int(i);
    else if (!strcmp(name, "revindex")) *out = jv_int(n - i);
    else if (!strcmp(name, "revindex0")) *out = jv_int(n - i - 1);
    else if (!strcmp(name, "first")) *out = jv_bool(i == 0);
    else if (!strcmp(name, "last")) *out = jv_bool(i == n - 1);
    else if (!strcmp(name, "length")) *out = jv_int(n);
    else if (!strcmp(name, "depth")) *out = jv_int(l->depth);
    else if (!strcmp(name, "depth0")) *out = jv_int(l->depth - 1);
    else if (!strcmp(name, "previtem")) *out = i > 0 ? l->items[i - 1] : jv_undef_member(obj, "previtem", 8);
    else if (!strcmp(name, "nextitem")) *out = i + 1 < n ? l->items[i + 1] : jv_undef_member(obj, "nextitem", 8);
    else {
        const jbuiltin *m = jfind_method(obj, name, strlen(name));
        if (m)
            return bind_method(r, at, obj, m, out);
        *out = jv_undef_member(obj, name, strlen(name));
    }
    return 0;
}

int jv_getattr(jr *r, const jnode *at, jv obj, const char *name, size_t n, jv *out)
{
    if (obj.kind == JV_UNDEF)
        return jundef_error(r, at, obj);
    bool dict = obj.kind == JV_DICT || obj.kind == JV_NS;
    if (n >= 1 && name[0] == '_') {
        /* the sandbox: no walking from data into the interpreter's objects */
        if (n >= 2 && name[1] == '_' && !(dict && jdict_get_str(obj.u.d, name, n, out)))
            return jerr(r, at, "access to attribute '%.*s' of '%s' object is unsafe", (int)n, name,
                        jv_type_name(obj));
        if (dict && jdict_get_str(obj.u.d, name, n, out))
            return 0;
        *out = jv_undef_member(obj, name, n);
        return 0;
    }
    if (obj.kind == JV_LOOP)
        return loop_attr(r, at, obj, name, out);
    if (obj.kind != JV_NS) {
        const jbuiltin *m = jfind_method(obj, name, n);
        if (m)
            return bind_method(r, at, obj, m, out);
    }
    if (dict && jdict_get_str(obj.u.d, name, n, out))
        return 0;
    *out = jv_undef_member(obj, name, n);
    return 0;
}

static bool as_index(jv k, int64_t *i)
{
    if (k.kind == JV_INT) {
        *i = k.u.i;
        return true;
    }
    if (k.kind == JV_BOOL) {
        *i = k.u.b;
        return true;
    }
    return false;
}

int jv_getitem(jr *r, const jnode *at, jv obj, jv key, jv *out)
{
    int64_t i;
    if (obj.kind == JV_UNDEF)
        return jundef_error(r, at, obj);
    if (obj.kind == JV_DICT || obj.kind == JV_NS) {
        if (jdict_get(obj.u.d, key, out))
            return 0;
    } else if (jv_is_seq(obj) && as_index(key, &i)) {
        int64_t n = (int64_t)obj.u.l->n;
        if (i < 0)
            i += n;
        if (i >= 0 && i < n) {
            *out = obj.u.l->items[i];
            return 0;
        }
    } else if (obj.kind == JV_STR && as_index(key, &i)) {
        size_t *offs, count;
        if (jutf8_offsets(r, at, obj.u.s.p, obj.u.s.n, &offs, &count) < 0)
            return -1;
        if (i < 0)
            i += (int64_t)count;
        if (i >= 0 && i < (int64_t)count) {
            size_t a = offs ? offs[i] : (size_t)i, b = offs ? offs[i + 1] : (size_t)i + 1;
            *out = jv_str(obj.u.s.p + a, b - a);
            return 0;
        }
    }
    if (key.kind == JV_STR) /* jinja2 falls back to the attribute */
        return jv_getattr(r, at, obj, key.u.s.p, key.u.s.n, out);
    *out = jv_undef_member(obj, NULL, 0);
    return 0;
}

/* Python's slice.indices(): clamp start/stop for a sequence of n. */
static int slice_bounds(jr *r, const jnode *at, jv start, jv stop, jv step, int64_t n,
                        int64_t *a, int64_t *b, int64_t *s, bool *ok)
{
    int64_t st = 1;
    *ok = true;
    if (step.kind != JV_NONE && !as_index(step, &st)) {
        *ok = false;
        return 0;
    }
    if (st == 0)
        return jerr(r, at, "slice step cannot be zero");
    int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? n : n - 1;
    int64_t v[2];
    jv ends[2] = {start, stop};
    for (int k = 0; k < 2; k++) {
        if (ends[k].kind == JV_NONE) {
            v[k] = (k == 0) == (st > 0) ? lo : hi;
            continue;
        }
        if (!as_index(ends[k], &v[k])) {
            *ok = false;
            return 0;
        }
        if (v[k] < 0) {
            v[k] += n;
            if (v[k] < lo)
                v[k] = lo;
        } else if (v[k] > hi) {
            v[k] = hi;
        }
    }
    *a = v[0];
    *b = v[1];
    *s = st;
    return 0;
}

int jv_slice(jr *r, const jnode *at, jv obj, jv start, jv stop, jv step, jv *out)
{
    if (obj.kind == JV_UNDEF)
        return jundef_error(r, at, obj);
    size_t *offs = NULL, count;
    if (obj.kind == JV_STR) {
        if (jutf8_offsets(r, at, obj.u.s.p, obj.u.s.n, &offs, &count) < 0)
            return -1;
    } else if (jv_is_seq(obj)) {
        count = obj.u.l->n;
    } else if (obj.kind == JV_DICT) { /* jinja2 slices with Python's own [a:b]: no Undefined here */
        return jerr(r, at, "unhashable type: 'slice'");
    } else {
        return jerr(r, at, "'%s' object is not subscriptable", jv_type_name(obj));
    }
    int64_t a, b, s;
    bool ok;
    if (slice_bounds(r, at, start, stop, step, (int64_t)count, &a, &b, &s, &ok) < 0)
        return -1;
    if (!ok)
        return jerr(r, at, "slice indices must be integers or None or have an __index__ method");
    size_t len = 0;
    if (s > 0 && b > a)
        len = (size_t)((b - a + s - 1) / s);
    else if (s < 0 && a > b)
        len = (size_t)((a - b + (-s) - 1) / (-s));
    if (obj.kind == JV_STR) {
        if (s == 1) {
            size_t x = offs ? offs[a] : (size_t)a;
            size_t y = len ? (offs ? offs[b] : (size_t)b) : x;
            *out = jv_str(obj.u.s.p + x, y - x);
            return 0;
        }
        jout o = {0};
        for (size_t k = 0; k < len; k++) {
            int64_t i = a + (int64_t)k * s;
            size_t x = offs ? offs[i] : (size_t)i, y = offs ? offs[i + 1] : (size_t)i + 1;
            if (jout_put(r, at, &o, obj.u.s.p + x, y - x) < 0)
                return -1;
        }
        *out = jv_str(o.p ? o.p : "", o.n);
        return 0;
    }
    jlist *l = jlist_new(r, at, len);
    if (!l)
        return -1;
    for (size_t k = 0; k < len; k++)
        l->items[k] = obj.u.l->items[a + (int64_t)k * s];
    out->kind = obj.kind;
    out->u.l = l;
    return 0;
}

/* ---- len, iteration, membership ----------------------------------------- */

int jv_order(jr *r, const jnode *at, int op, jv a, jv b, bool *out)
{
    static const char *const sym[] = {"<", "<=", ">", ">="};
    int c;
    if (a.kind == JV_UNDEF)
        return jundef_error(r, at, a);
    if (b.kind == JV_UNDEF)
        return jundef_error(r, at, b);
    if (jv_cmp(r, at, a, b, &c) < 0)
        return -1;
    if (c == -2)
        return jerr(r, at, "'%s' not supported between instances of '%s' and '%s'", sym[op - OP_LT],
                    jv_type_name(a), jv_type_name(b));
    *out = c != -3 && (op == OP_LT ? c < 0 : op == OP_LE ? c <= 0 : op == OP_GT ? c > 0 : c >= 0);
    return 0;
}

int jv_len(jr *r, const jnode *at, jv v, int64_t *n)
{
    switch (v.kind) {
    case JV_STR: *n = (int64_t)jutf8_len(v.u.s.p, v.u.s.n); return jcharge(r, at, v.u.s.n >> 5);
    case JV_LIST:
    case JV_TUPLE: *n = (int64_t)v.u.l->n; return 0;
    case JV_DICT: *n = (int64_t)v.u.d->n; return 0;
    case JV_UNDEF: *n = 0; return 0;
    default: return jerr(r, at, "object of type '%s' has no len()", jv_type_name(v));
    }
}

int jv_iterate(jr *r, const jnode *at, jv v, jlist *out)
{
    switch (v.kind) {
    case JV_LIST:
    case JV_TUPLE: *out = *v.u.l; return jcharge(r, at, out->n);
    case JV_DICT:
        out->n = v.u.d->n;
        out->items = v.u.d->keys;
        return jcharge(r, at, out->n);
    case JV_UNDEF:
        out->n = 0;
        out->items = NULL;
        return 0;
    case JV_GEN: /* what is left, and then nothing */
        if (jgen_check(r, v) < 0)
            return -1;
        out->n = v.u.gen->items.n - v.u.gen->pos;
        /* an empty generator may have no array at all: no offset on NULL */
        out->items = out->n ? v.u.gen->items.items + v.u.gen->pos : NULL;
        v.u.gen->pos = v.u.gen->items.n;
        return jcharge(r, at, out->n);
    case JV_STR: {
        size_t *offs, count;
        if (jutf8_offsets(r, at, v.u.s.p, v.u.s.n, &offs, &count) < 0)
            return -1;
        jlist *l = jlist_new(r, at, count);
        if (!l)
            return -1;
        for (size_t i = 0; i < count; i++) {
            size_t a = offs ? offs[i] : i, b = offs ? offs[i + 1] : i + 1;
            l->items[i] = jv_str(v.u.s.p + a, b - a);
        }
        *out = *l;
        return 0;
    }
    default: return jerr(r, at, "'%s' object is not iterable", jv_type_name(v));
    }
}

int jv_contains(jr *r, const jnode *at, jv c, jv item, bool *out)
{
    switch (c.kind) {
    case JV_STR:
        if (item.kind != JV_STR)
            return jerr(r, at, "'in <string>' requires string as left operand, not %s",
                        jv_type_name(item));
        *out = item.u.s.n == 0 || memmem(c.u.s.p, c.u.s.n, item.u.s.p, item.u.s.n) != NULL;
        return jcharge(r, at, c.u.s.n >> 5);
    case JV_LIST:
    case JV_TUPLE:
        *out = false;
        for (size_t i = 0; i < c.u.l->n && !*out; i++)
            if (jv_eq(r, at, c.u.l->items[i], item, out) < 0)
                return -1;
        return 0;
    case JV_DICT:
    case JV_NS: {
        jv ignored;
        if (item.kind == JV_LIST || item.kind == JV_DICT || item.kind == JV_NS)
            return jerr(r, at, "unhashable type: '%s'", jv_type_name(item));
        *out = jdict_get(c.u.d, item, &ignored);
        return 0;
    }
    case JV_UNDEF: *out = false; return 0;
    case JV_GEN: /* consumed up to and including the match */
        if (jgen_check(r, c) < 0)
            return -1;
        *out = false;
        while (c.u.gen->pos < c.u.gen->items.n && !*out)
            if (jv_eq(r, at, c.u.gen->items.items[c.u.gen->pos++], item, out) < 0)
                return -1;
        return 0;
    default: return jerr(r, at, "argument of type '%s' is not iterable", jv_type_name(c));
    }
}

/* ---- arithmetic --------------------------------------------------------- */

static int64_t as_int(jv v)
{
    return v.kind == JV_INT ? v.u.i : (int64_t)v.u.b;
}

static double as_float(jv v)
{
    return v.kind == JV_FLOAT ? v.u.f : (double)as_int(v);
}

/* s repeated count times (Python's str * int, list * int). */
static int repeat(jr *r, const jnode *at, jv seq, int64_t count, jv *out)
{
    if (count < 0)
        count = 0;
    if (seq.kind == JV_STR) {
        if (seq.u.s.n && (uint64_t)count > r->lim.max_output / seq.u.s.n)
            return jerr(r, at, "a string of %zu x %lld bytes is past the limit of %zu", seq.u.s.n,
                        (long long)count, r->lim.max_output);
        size_t total = seq.u.s.n * (size_t)count;
        char *p = jalloc(r, at, total + 1);
        if (!p)
            return -1;
        for (int64_t i = 0; seq.u.s.n && i < count; i++)
            memcpy(p + (size_t)i * seq.u.s.n, seq.u.s.p, seq.u.s.n);
        p[total] = 0;
        *out = jv_str(p, total);
        return 0;
    }
    size_t n = seq.u.l->n;
    if (n && (uint64_t)count > (r->lim.max_output / sizeof(jv)) / n)
        return jerr(r, at, "a list of %zu x %lld items is too long", n, (long long)count);
    jlist *l = jlist_new(r, at, n * (size_t)count);
    if (!l)
        return -1;
    for (int64_t i = 0; n && i < count; i++) /* an empty list's items may be NULL */
        memcpy(l->items + (size_t)i * n, seq.u.l->items, n * sizeof(jv));
    out->kind = seq.kind;
    out->u.l = l;
    return 0;
}

static int concat(jr *r, const jnode *at, jv a, jv b, jv *out)
{
    if (a.kind == JV_STR) {
        if (a.u.s.n + b.u.s.n > r->lim.max_output)
            return jerr(r, at, "a string of %zu bytes is past the limit of %zu", a.u.s.n + b.u.s.n,
                        r->lim.max_output);
        char *p = jalloc(r, at, a.u.s.n + b.u.s.n + 1);
        if (!p)
            return -1;
        memcpy(p, a.u.s.p, a.u.s.n);
        memcpy(p + a.u.s.n, b.u.s.p, b.u.s.n);
        p[a.u.s.n + b.u.s.n] = 0;
        *out = jv_str(p, a.u.s.n + b.u.s.n);
        return 0;
    }
    jlist *l = jlist_new(r, at, a.u.l->n + b.u.l->n);
    if (!l)
        return -1;
    if (a.u.l->n)
        memcpy(l->items, a.u.l->items, a.u.l->n * sizeof(jv));
    if (b.u.l->n)
        memcpy(l->items + a.u.l->n, b.u.l->items, b.u.l->n * sizeof(jv));
    out->kind = a.kind;
    out->u.l = l;
    return 0;
}

static int int_op(jr *r, const jnode *at, int op, int64_t x, int64_t y, jv *out)
{
    int64_t v;
    switch (op) {
    case OP_ADD:
        if (__builtin_add_overflow(x, y, &v))
            goto overflow;
        break;
    case OP_SUB:
        if (__builtin_sub_overflow(x, y, &v))
            goto overflow;
        break;
    case OP_MUL:
        if (__builtin_mul_overflow(x, y, &v))
            goto overflow;
        break;
    case OP_FLOORDIV:
    case OP_MOD:
        if (y == 0)
            return jerr(r, at, "integer division or modulo by zero");
        if (x == INT64_MIN && y == -1)
            goto overflow;
        v = op == OP_FLOORDIV ? x / y : x % y;
        if (op == OP_FLOORDIV && (x % y != 0) && ((x < 0) != (y < 0)))
            v--;
        if (op == OP_MOD && v != 0 && ((v < 0) != (y < 0)))
            v += y;
        break;
    case OP_POW:
        if (y < 0) {
            if (x == 0)
                return jerr(r, at, "0.0 cannot be raised to a negative power");
            *out = jv_float(pow((double)x, (double)y));
            return 0;
        }
        v = 1;
        for (int64_t base = x, e = y; e; e >>= 1) {
            if ((e & 1) && __builtin_mul_overflow(v, base, &v))
                goto overflow;
            if (e > 1 && __builtin_mul_overflow(base, base, &base))
                goto overflow;
        }
        break;
    default: return -1;
    }
    *out = jv_int(v);
    return 0;
overflow:
    return jerr(r, at, "integer overflow (past 64 bits)");
}

static int float_op(jr *r, const jnode *at, int op, double x, double y, jv *out)
{
    double v;
    switch (op) {
    case OP_ADD: v = x + y; break;
    case OP_SUB: v = x - y; break;
    case OP_MUL: v = x * y; break;
    case OP_DIV:
        if (y == 0)
            return jerr(r, at, "division by zero");
        v = x / y;
        break;
    case OP_FLOORDIV:
    case OP_MOD: {
        if (y == 0)
            return jerr(r, at, "float %s", op == OP_MOD ? "modulo" : "floor division by zero");
        /* Python's float_divmod: the remainder takes the divisor's sign */
        double m = fmod(x, y), div = (x - m) / y;
        if (m != 0 && ((y < 0) != (m < 0))) {
            m += y;
            div -= 1.0;
        }
        if (op == OP_MOD) {
            v = m != 0 ? m : copysign(0.0, y);
        } else if (div != 0) {
            v = floor(div);
            if (div - v > 0.5)
                v += 1.0;
        } else {
            v = copysign(0.0, x / y);
        }
        break;
    }
    case OP_POW:
        if (x == 0 && y < 0)
            return jerr(r, at, "0.0 cannot be raised to a negative power");
        v = pow(x, y);
        break;
    default: return -1;
    }
    *out = jv_float(v);
    return 0;
}

static const char *op_text(int op)
{
    switch (op) {
    case OP_ADD: return "+";
    case OP_SUB: return "-";
    case OP_MUL: return "*";
    case OP_DIV: return "/";
    case OP_FLOORDIV: return "//";
    case OP_MOD: return "%";
    case OP_POW: return "** or pow()";
    default: return "?";
    }
}

int jv_binop(jr *r, const jnode *at, int op, jv a, jv b, jv *out)
{
    if (op == OP_MOD && a.kind == JV_STR) /* Python takes an Undefined for a mapping here */
        return jstr_format(r, at, a, b, out);
    if (a.kind == JV_UNDEF)
        return jundef_error(r, at, a);
    if (b.kind == JV_UNDEF)
        return jundef_error(r, at, b);
    if (jv_is_num(a) && jv_is_num(b)) {
        if (a.kind != JV_FLOAT && b.kind != JV_FLOAT && op != OP_DIV)
            return int_op(r, at, op, as_int(a), as_int(b), out);
        return float_op(r, at, op, as_float(a), as_float(b), out);
    }
    if (op == OP_ADD) {
        if ((a.kind == JV_STR && b.kind == JV_STR) || (jv_is_seq(a) && a.kind == b.kind))
            return concat(r, at, a, b, out);
        if (a.kind == JV_STR || a.kind == JV_LIST || a.kind == JV_TUPLE)
            return jerr(r, at, "can only concatenate %s (not \"%s\") to %s", jv_type_name(a),
                        jv_type_name(b), jv_type_name(a));
    }
    if (op == OP_MUL) {
        if ((a.kind == JV_STR || jv_is_seq(a)) && (b.kind == JV_INT || b.kind == JV_BOOL))
            return repeat(r, at, a, as_int(b), out);
        if ((b.kind == JV_STR || jv_is_seq(b)) && (a.kind == JV_INT || a.kind == JV_BOOL))
            return repeat(r, at, b, as_int(a), out);
    }
    if (op == OP_MOD && a.kind == JV_STR)
        return jstr_format(r, at, a, b, out);
    char fmt[96];
    snprintf(fmt, sizeof fmt, "unsupported operand type(s) for %s: '%%s' and '%%s'", op_text(op));
    return type_error(r, at, fmt, a, b);
}
