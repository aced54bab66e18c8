/* jinja2's built-in filters and tests, with its argument names and its
 * quirks (select/reject/map on a falsy value give nothing, unique and sort
 * ignore case by default, default() only replaces Undefined, indent's
 * blank-line rule), plus Hugging Face's tojson (json.dumps, ensure_ascii
 * off). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja_impl.h"


static bool str_is(jv v, const char *s)
{
    return v.kind == JV_STR && v.u.s.n == strlen(s) && memcmp(v.u.s.p, s, v.u.s.n) == 0;
}

static jv or_default(jv v, jv d)
{
    return v.kind == JV_ABSENT ? d : v;
}

static bool given(jv v)
{
    return v.kind != JV_ABSENT;
}

static int want_int(jr *r, const jnode *at, const char *what, jv v, int64_t *out)
{
    if (v.kind == JV_INT || v.kind == JV_BOOL) {
        *out = v.kind == JV_INT ? v.u.i : v.u.b;
        return 0;
    }
    if (v.kind == JV_FLOAT && v.u.f == floor(v.u.f) && fabs(v.u.f) < 9e15) {
        *out = (int64_t)v.u.f;
        return 0;
    }
    return jerr(r, at, "%s must be an integer, not %s", what, jv_type_name(v));
}

/* jinja2's make_attrgetter: "a.b.0" looks up item by item. */
static int attr_get(jr *r, const jnode *at, jv item, jv attribute, jv deflt, jv *out)
{
    if (attribute.kind != JV_STR) {
        if (jv_getitem(r, at, item, attribute, out) < 0)
            return -1;
    } else {
        const char *p = attribute.u.s.p, *end = p + attribute.u.s.n;
        while (true) {
            const char *dot = memchr(p, '.', (size_t)(end - p));
            size_t len = (size_t)((dot ? dot : end) - p);
            bool digits = len > 0, huge = false;
            int64_t idx = 0;
            for (size_t i = 0; i < len && digits; i++) {
                const int d = p[i] - '0';
                digits = d >= 0 && d <= 9;
                if (digits && !huge) {
                    /* past int64: jinja2's int(part) finds nothing, nor does INT64_MAX */
                    huge = idx > (INT64_MAX - d) / 10;
                    idx = huge ? INT64_MAX : idx * 10 + d;
                }
            }
            if (jv_getitem(r, at, item, digits ? jv_int(idx) : jv_str(p, len), &item) < 0)
                return -1;
            if (!dot)
                break;
            p = dot + 1;
        }
        *out = item;
    }
    if (given(deflt) && out->kind == JV_UNDEF)
        *out = deflt;
    return 0;
}

/* The iterable's items, or an empty list for a falsy value when
 * `falsy_empty` (select, reject and map check `if seq:` first). */
static int items_of(jr *r, const jnode *at, jv v, bool falsy_empty, jlist *out)
{
    if (falsy_empty && !jv_truthy(v)) {
        out->n = 0;
        out->items = NULL;
        return 0;
    }
    return jv_iterate(r, at, v, out);
}

/* ---- sorting ------------------------------------------------------------ */

typedef struct sorter {
    jr *r;
    const jnode *at;
    const jv *keys;
    bool reverse, failed;
} sorter;

/* jinja2 sorts by [key] lists: equal keys (Undefined ones too) compare
 * equal before any < is tried. */
static bool before(sorter *s, size_t x, size_t y)
{
    int c;
    bool same;
    if (s->failed || jv_eq(s->r, s->at, s->keys[x], s->keys[y], &same) < 0) {
        s->failed = true;
        return false;
    }
    if (same)
        return false;
    if (jv_cmp(s->r, s->at, s->keys[x], s->keys[y], &c) < 0) {
        s->failed = true;
        return false;
    }
    if (c == -2) {
        s->failed = true;
        jerr_set(s->r, s->at, "'<' not supported between instances of '%s' and '%s'",
             jv_type_name(s->keys[x]), jv_type_name(s->keys[y]));
    }
    return s->reverse ? c == 1 : c == -1;
}

/* A stable merge sort of the index array idx (Python's sort is stable). */
static void merge_sort(sorter *s, size_t *idx, size_t *tmp, size_t n)
{
    if (n < 2 || s->failed)
        return;
    size_t h = n / 2;
    merge_sort(s, idx, tmp, h);
    merge_sort(s, idx + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = before(s, idx[j], idx[i]) ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

/* The key a sort or comparison uses: the attribute, lower-cased strings
 * unless case_sensitive. */
static int sort_key(jr *r, const jnode *at, jv item, jv attribute, bool case_sensitive, jv *key)
{
    if (given(attribute) && attribute.kind != JV_NONE) {
        if (attr_get(r, at, item, attribute, jv_absent(), &item) < 0)
            return -1;
    }
    if (!case_sensitive && item.kind == JV_STR)
        return jstr_case(r, at, item, 'l', key);
    *key = item;
    return 0;
}

static int sorted_order(jr *r, const jnode *at, const jv *keys, size_t n, bool reverse, size_t **order)
{
    size_t *idx = jalloc(r, at, (n + 1) * sizeof *idx), *tmp = jalloc(r, at, (n + 1) * sizeof *tmp);
    if (!idx || !tmp)
        return -1;
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    sorter s = {r, at, keys, reverse, false};
    merge_sort(&s, idx, tmp, n);
    *order = idx;
    return s.failed ? -1 : 0;
}

/* ---- filters ------------------------------------------------------------ */

static int f_abs(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "abs", a) < 0)
        return -1;
    if (v.kind == JV_INT) {
        if (v.u.i == INT64_MIN)
            return jerr(r, at, "integer overflow (past 64 bits)");
        *out = jv_int(v.u.i < 0 ? -v.u.i : v.u.i);
    } else if (v.kind == JV_FLOAT) {
        *out = jv_float(fabs(v.u.f));
    } else if (v.kind == JV_BOOL) {
        *out = jv_int(v.u.b);
    } else {
        return jerr(r, at, "bad operand type for abs(): '%s'", jv_type_name(v));
    }
    return 0;
}

static int f_attr(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("attr", "name");
    if (p[0].kind != JV_STR)
        return jerr(r, at, "attr(): the name must be a string");
    /* Python's getattr only: a dict's keys are not its attributes */
    if (v.kind == JV_DICT && !jfind_method(v, p[0].u.s.p, p[0].u.s.n) &&
        !(p[0].u.s.n >= 2 && p[0].u.s.p[0] == '_' && p[0].u.s.p[1] == '_')) {
        *out = jv_undef_member(v, p[0].u.s.p, p[0].u.s.n);
        return 0;
    }
    return jv_getattr(r, at, v, p[0].u.s.p, p[0].u.s.n, out);
}

static int f_batch(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("batch", "linecount", "fill_with");
    int64_t size;
    jlist items;
    if (want_int(r, at, "batch size", or_default(p[0], jv_int(1)), &size) < 0 ||
        jv_iterate(r, at, v, &items) < 0)
        return -1;
    if (size <= 0)
        return jerr(r, at, "batch(): the line count must be positive");
    jvec rows = {0};
    for (size_t i = 0; i < items.n; i += (size_t)size) {
        size_t take = items.n - i < (size_t)size ? items.n - i : (size_t)size;
        bool fill = take < (size_t)size && given(p[1]) && p[1].kind != JV_NONE;
        jlist *row = jlist_new(r, at, fill ? (size_t)size : take);
        if (!row)
            return -1;
        memcpy(row->items, items.items + i, take * sizeof(jv));
        for (size_t k = take; k < row->n; k++)
            row->items[k] = p[1];
        if (jvec_push(r, at, &rows, jv_seq(row, JV_LIST)) < 0)
            return -1;
    }
    *out = jv_gen(r, at, rows.items, rows.n);
    return out->kind == JV_GEN ? 0 : -1;
}

static int f_center(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("center", "width");
    int64_t width;
    jv s;
    if (want_int(r, at, "width", or_default(p[0], jv_int(80)), &width) < 0 || jv_to_str(r, at, v, &s) < 0)
        return -1;
    if (jcharge(r, at, s.u.s.n >> 5) < 0)
        return -1;
    int64_t len = (int64_t)jutf8_len(s.u.s.p, s.u.s.n);
    if (width <= len || width > (int64_t)r->lim.max_output) {
        *out = s;
        return 0;
    }
    int64_t padn = width - len, left = padn / 2 + (padn & width & 1);
    jout o = {0};
    for (int64_t i = 0; i < padn; i++) {
        if (i == left && jout_put(r, at, &o, s.u.s.p, s.u.s.n) < 0)
            return -1;
        if (jout_put(r, at, &o, " ", 1) < 0)
            return -1;
    }
    if (left == padn && jout_put(r, at, &o, s.u.s.p, s.u.s.n) < 0)
        return -1;
    *out = jv_str(o.p, o.n);
    return 0;
}

static int f_default(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("default", "default_value", "boolean");
    bool boolean = given(p[1]) && jv_truthy(p[1]);
    *out = v.kind == JV_UNDEF || (boolean && !jv_truthy(v)) ? or_default(p[0], jv_str("", 0)) : v;
    return 0;
}

static int f_dictsort(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("dictsort", "case_sensitive", "by", "reverse");
    if (v.kind != JV_DICT)
        return jerr(r, at, "dictsort(): a mapping is required, not %s", jv_type_name(v));
    bool by_value = str_is(p[1], "value");
    if (given(p[1]) && !by_value && !str_is(p[1], "key"))
        return jerr(r, at, "You can only sort by either \"key\" or \"value\"");
    size_t n = v.u.d->n;
    jv *keys = jalloc(r, at, (n + 1) * sizeof *keys);
    size_t *order;
    if (!keys)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (sort_key(r, at, by_value ? v.u.d->vals[i] : v.u.d->keys[i], jv_absent(),
                     given(p[0]) && jv_truthy(p[0]), &keys[i]) < 0)
            return -1;
    if (sorted_order(r, at, keys, n, given(p[2]) && jv_truthy(p[2]), &order) < 0)
        return -1;
    jlist *l = jdict_pairs(r, at, v.u.d, order);
    if (!l)
        return -1;
    *out = jv_seq(l, JV_LIST);
    return 0;
}

static int f_escape(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "escape", a) < 0)
        return -1;
    jv s;
    if (jv_to_str(r, at, v, &s) < 0)
        return -1;
    jout o = {0};
    size_t run = 0;
    for (size_t i = 0; i < s.u.s.n; i++) {
        const char *e = NULL;
        switch (s.u.s.p[i]) {
        case '&': e = "&amp;"; break;
        case '<': e = "&lt;"; break;
        case '>': e = "&gt;"; break;
        case '"': e = "&#34;"; break;
        case '\'': e = "&#39;"; break;
        default: run++; continue;
        }
        if (jout_put(r, at, &o, s.u.s.p + i - run, run) < 0 || jout_puts(r, at, &o, e) < 0)
            return -1;
        run = 0;
    }
    if (jout_put(r, at, &o, s.u.s.p + s.u.s.n - run, run) < 0)
        return -1;
    *out = jv_str(o.p ? o.p : "", o.n);
    return 0;
}

static int f_first(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "first", a) < 0)
        return -1;
    if (v.kind == JV_GEN) { /* next(): takes one item */
        jgen *g = v.u.gen;
        if (jgen_check(r, v) < 0)
            return -1;
        *out = g->pos < g->items.n ? g->items.items[g->pos++] : jv_undef_member(v, NULL, 0);
        return 0;
    }
    jlist items;
    if (jv_iterate(r, at, v, &items) < 0)
        return -1;
    *out = items.n ? items.items[0] : jv_undef_member(v, NULL, 0);
    return 0;
}

static int f_last(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "last", a) < 0)
        return -1;
    if (v.kind == JV_GEN)
        return jerr(r, at, "'generator' object is not reversible");
    jlist items;
    if (jv_iterate(r, at, v, &items) < 0)
        return -1;
    *out = items.n ? items.items[items.n - 1] : jv_undef_member(v, NULL, 0);
    return 0;
}

/* Python's float(str): surrounding whitespace allowed, the whole rest a number. */
static bool parse_float(jr *r, const jnode *at, jv s, double *out)
{
    char buf[128];
    jv t;
    if (jstr_strip(r, at, s, jv_none(), 3, &t) < 0 || t.u.s.n == 0 || t.u.s.n >= sizeof buf)
        return false;
    size_t w = 0;
    for (size_t i = 0; i < t.u.s.n; i++)
        if (t.u.s.p[i] != '_')
            buf[w++] = t.u.s.p[i];
    buf[w] = 0;
    char *end;
    *out = strtod(buf, &end);
    return *end == 0 && w > 0 && !(buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X'));
}

static int f_float(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("float", "default");
    double f;
    if (v.kind == JV_UNDEF)
        return jundef_error(r, at, v);
    if (jv_is_num(v))
        *out = jv_float(v.kind == JV_FLOAT ? v.u.f : v.kind == JV_INT ? (double)v.u.i : v.u.b);
    else if (v.kind == JV_STR && parse_float(r, at, v, &f))
        *out = jv_float(f);
    else
        *out = or_default(p[0], jv_float(0.0));
    return 0;
}

static int f_int(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("int", "default", "base");
    int64_t base = 10;
    if (given(p[1]) && want_int(r, at, "base", p[1], &base) < 0)
        return -1;
    jv fallback = or_default(p[0], jv_int(0));
    if (v.kind == JV_UNDEF)
        return jundef_error(r, at, v);
    if (v.kind == JV_INT || v.kind == JV_BOOL) {
        *out = jv_int(v.kind == JV_INT ? v.u.i : v.u.b);
        return 0;
    }
    if (v.kind == JV_FLOAT) {
        if (!isfinite(v.u.f) || fabs(v.u.f) >= 9.2e18)
            return jerr(r, at, "cannot convert float %s to integer", isnan(v.u.f) ? "NaN" : "that large");
        *out = jv_int((int64_t)v.u.f);
        return 0;
    }
    if (v.kind != JV_STR) {
        *out = fallback;
        return 0;
    }
    jv t;
    if (jstr_strip(r, at, v, jv_none(), 3, &t) < 0)
        return -1;
    char buf[96];
    size_t w = 0;
    for (size_t i = 0; i < t.u.s.n && w + 1 < sizeof buf; i++)
        if (t.u.s.p[i] != '_')
            buf[w++] = t.u.s.p[i];
    buf[w] = 0;
    char *end;
    errno = 0;
    long long i = w && t.u.s.n < sizeof buf && base >= 2 && base <= 36 ? strtoll(buf, &end, (int)base) : 0;
    if (w && t.u.s.n < sizeof buf && base >= 2 && base <= 36 && *end == 0 && errno == 0) {
        *out = jv_int(i);
        return 0;
    }
    double f; /* "42.23"|int is 42 */
    if (parse_float(r, at, v, &f) && isfinite(f) && fabs(f) < 9.2e18)
        *out = jv_int((int64_t)f);
    else
        *out = fallback;
    return 0;
}

/* Python's str.splitlines() line breaks. */
static size_t line_break_at(const char *s, size_t n, size_t i)
{
    uint32_t c;
    size_t len = cf_utf8_decode_esc(s + i, n - i, &c);
    if (c == '\r' && i + 1 < n && s[i + 1] == '\n')
        return 2;
    if (c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
        c == 0x85 || c == 0x2028 || c == 0x2029)
        return len;
    return 0;
}

int jsplitlines(jr *r, const jnode *at, jv s, bool keepends, jvec *lines)
{
    const char *p = s.u.s.p;
    size_t n = s.u.s.n, start = 0;
    for (size_t i = 0; i < n;) {
        size_t br = line_break_at(p, n, i);
        if (!br) {
            uint32_t c;
            i += cf_utf8_decode_esc(p + i, n - i, &c);
            continue;
        }
        if (jvec_push(r, at, lines, jv_str(p + start, (keepends ? i + br : i) - start)) < 0)
            return -1;
        i += br;
        start = i;
    }
    if (start < n && jvec_push(r, at, lines, jv_str(p + start, n - start)) < 0)
        return -1;
    return 0;
}

static int f_indent(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("indent", "width", "first", "blank");
    jv s = v, ind;
    if (v.kind == JV_UNDEF) /* jinja2 appends '\n' to the value itself */
        return jundef_error(r, at, v);
    if (v.kind != JV_STR)
        return jerr(r, at, "unsupported operand type(s) for +=: '%s' and 'str'", jv_type_name(v));
    jv width = or_default(p[0], jv_int(4));
    if (width.kind == JV_STR) {
        ind = width;
    } else {
        int64_t w;
        if (want_int(r, at, "width", width, &w) < 0)
            return -1;
        if (w < 0)
            w = 0;
        if (w > 4096)
            return jerr(r, at, "indent(): a width of %lld is too large", (long long)w);
        char *sp = jalloc(r, at, (size_t)w + 1);
        if (!sp)
            return -1;
        memset(sp, ' ', (size_t)w);
        ind = jv_str(sp, (size_t)w);
    }
    bool first = given(p[1]) && jv_truthy(p[1]), blank = given(p[2]) && jv_truthy(p[2]);
    /* jinja2 appends a newline first so that splitlines keeps a trailing empty line */
    jv with_nl;
    jout t = {0};
    if (jout_put(r, at, &t, s.u.s.p, s.u.s.n) < 0 || jout_put(r, at, &t, "\n", 1) < 0)
        return -1;
    with_nl = jv_str(t.p, t.n);
    jvec lines = {0};
    if (jsplitlines(r, at, with_nl, false, &lines) < 0)
        return -1;
    jout o = {0};
    if (first && jout_put(r, at, &o, ind.u.s.p, ind.u.s.n) < 0)
        return -1;
    for (size_t i = 0; i < lines.n; i++) {
        jv line = lines.items[i];
        if (i) {
            if (jout_put(r, at, &o, "\n", 1) < 0)
                return -1;
            if ((blank || line.u.s.n) && jout_put(r, at, &o, ind.u.s.p, ind.u.s.n) < 0)
                return -1;
        }
        if (jout_put(r, at, &o, line.u.s.p, line.u.s.n) < 0)
            return -1;
    }
    *out = jv_str(o.p ? o.p : "", o.n);
    return 0;
}

static int f_items(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "items", a) < 0)
        return -1;
    if (v.kind == JV_UNDEF) {
        *out = jv_gen(r, at, NULL, 0);
        return out->kind == JV_GEN ? 0 : -1;
    }
    if (v.kind != JV_DICT)
        return jerr(r, at, "Can only get item pairs from a mapping.");
    jlist *l = jdict_pairs(r, at, v.u.d, NULL);
    if (!l)
        return -1;
    *out = jv_gen(r, at, l->items, l->n);
    return out->kind == JV_GEN ? 0 : -1;
}

static int f_join(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("join", "d", "attribute");
    jlist items;
    jv sep = or_default(p[0], jv_str("", 0));
    if (jv_iterate(r, at, v, &items) < 0 || jv_to_str(r, at, sep, &sep) < 0)
        return -1;
    jout o = {0};
    for (size_t i = 0; i < items.n; i++) {
        jv item = items.items[i];
        if (given(p[1]) && p[1].kind != JV_NONE && attr_get(r, at, item, p[1], jv_absent(), &item) < 0)
            return -1;
        if ((i && jout_put(r, at, &o, sep.u.s.p, sep.u.s.n) < 0) || jv_write_str(r, at, &o, item) < 0)
            return -1;
    }
    *out = jv_str(o.p ? o.p : "", o.n);
    return 0;
}

static int f_length(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "length", a) < 0)
        return -1;
    int64_t n;
    if (jv_len(r, at, v, &n) < 0)
        return -1;
    *out = jv_int(n);
    return 0;
}

static int f_list(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "list", a) < 0)
        return -1;
    jlist items;
    if (jv_iterate(r, at, v, &items) < 0)
        return -1;
    jlist *l = jlist_new(r, at, items.n);
    if (!l)
        return -1;
    if (items.n)
        memcpy(l->items, items.items, items.n * sizeof(jv));
    *out = jv_seq(l, JV_LIST);
    return 0;
}

/* lower, upper, capitalize, title: str(v) case-mapped */
static int case_filter(jr *r, const jnode *at, jv v, const jargs *a, const char *name, int how, jv *out)
{
    if (jno_args(r, at, name, a) < 0 || jv_to_str(r, at, v, &v) < 0)
        return -1;
    return jstr_case(r, at, v, how, out);
}

static int f_lower(jr *r, const jnode *at, jv v, const jargs *a, jv *out) { return case_filter(r, at, v, a, "lower", 'l', out); }
static int f_upper(jr *r, const jnode *at, jv v, const jargs *a, jv *out) { return case_filter(r, at, v, a, "upper", 'u', out); }
static int f_capitalize(jr *r, const jnode *at, jv v, const jargs *a, jv *out) { return case_filter(r, at, v, a, "capitalize", 'c', out); }
static int f_title(jr *r, const jnode *at, jv v, const jargs *a, jv *out) { return case_filter(r, at, v, a, "title", 'T', out); }

/* map(attribute='x', default=d) or map('filter', args...) */
static int f_map(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    jlist items;
    if (items_of(r, at, v, true, &items) < 0)
        return -1;
    jv attribute = jv_absent(), deflt = jv_absent();
    for (size_t k = 0; k < a->nkw; k++) {
        if (!strcmp(a->kw[k].name, "attribute"))
            attribute = a->kw[k].v;
        else if (!strcmp(a->kw[k].name, "default"))
            deflt = a->kw[k].v;
        else if (a->npos == 0)
            return jerr(r, at, "map(): unexpected keyword argument '%s'", a->kw[k].name);
    }
    if (!given(attribute) && (a->npos == 0 || a->pos[0].kind != JV_STR))
        return jerr(r, at, "map requires a filter argument");
    char name[64] = "";
    jargs rest = {0};
    if (!given(attribute)) {
        snprintf(name, sizeof name, "%.*s", (int)(a->pos[0].u.s.n < 63 ? a->pos[0].u.s.n : 63), a->pos[0].u.s.p);
        rest = (jargs){a->pos + 1, a->npos - 1, a->kw, a->nkw};
    }
    jlist *l = jlist_new(r, at, items.n);
    if (!l)
        return -1;
    for (size_t i = 0; i < items.n; i++) {
        int rc = given(attribute) ? attr_get(r, at, items.items[i], attribute, deflt, &l->items[i])
                                  : jrun_filter(r, at, name, items.items[i], &rest, &l->items[i]);
        if (rc < 0)
            return -1;
    }
    *out = jv_gen(r, at, l->items, l->n);
    return out->kind == JV_GEN ? 0 : -1;
}

/* select / reject / selectattr / rejectattr */
static int select_common(jr *r, const jnode *at, jv v, const jargs *a, bool by_attr, bool keep_true,
                         jv *out)
{
    jlist items;
    if (items_of(r, at, v, true, &items) < 0)
        return -1;
    size_t first = by_attr ? 1 : 0;
    if (by_attr && (a->npos == 0 || a->pos[0].kind != JV_STR))
        return jerr(r, at, "%s needs an attribute name", keep_true ? "selectattr" : "rejectattr");
    char test[64] = "";
    bool has_test = a->npos > first;
    if (has_test) {
        if (a->pos[first].kind != JV_STR)
            return jerr(r, at, "the test name must be a string");
        snprintf(test, sizeof test, "%.*s", (int)(a->pos[first].u.s.n < 63 ? a->pos[first].u.s.n : 63),
                 a->pos[first].u.s.p);
    }
    jargs targs = {has_test ? a->pos + first + 1 : NULL, has_test ? a->npos - first - 1 : 0, a->kw, a->nkw};
    jvec kept = {0};
    for (size_t i = 0; i < items.n; i++) {
        jv x = items.items[i];
        bool ok;
        if (by_attr && attr_get(r, at, x, a->pos[0], jv_absent(), &x) < 0)
            return -1;
        if (has_test) {
            if (jrun_test(r, at, test, x, &targs, &ok) < 0)
                return -1;
        } else {
            ok = jv_truthy(x);
        }
        if (ok == keep_true && jvec_push(r, at, &kept, items.items[i]) < 0)
            return -1;
    }
    *out = jv_gen(r, at, kept.items, kept.n);
    return out->kind == JV_GEN ? 0 : -1;
}

static int f_select(jr *r, const jnode *at, jv v, const jargs *a, jv *out) { return select_common(r, at, v, a, false, true, out); }
static int f_reject(jr *r, const jnode *at, jv v, const jargs *a, jv *out) { return select_common(r, at, v, a, false, false, out); }
static int f_selectattr(jr *r, const jnode *at, jv v, const jargs *a, jv *out) { return select_common(r, at, v, a, true, true, out); }
static int f_rejectattr(jr *r, const jnode *at, jv v, const jargs *a, jv *out) { return select_common(r, at, v, a, true, false, out); }

static int min_max(jr *r, const jnode *at, jv v, const jargs *a, bool want_max, jv *out)
{
    JBIND(want_max ? "max" : "min", "case_sensitive", "attribute");
    jlist items;
    if (jv_iterate(r, at, v, &items) < 0)
        return -1;
    if (items.n == 0) {
        *out = jv_undef_member(v, NULL, 0);
        return 0;
    }
    bool cs = given(p[0]) && jv_truthy(p[0]);
    jv best = items.items[0], best_key;
    if (sort_key(r, at, best, p[1], cs, &best_key) < 0)
        return -1;
    for (size_t i = 1; i < items.n; i++) {
        jv key;
        if (sort_key(r, at, items.items[i], p[1], cs, &key) < 0)
            return -1;
        int c;
        if (jv_cmp(r, at, key, best_key, &c) < 0)
            return -1;
        if (c == -2)
            return jerr(r, at, "'<' not supported between instances of '%s' and '%s'",
                        jv_type_name(key), jv_type_name(best_key));
        if (want_max ? c == 1 : c == -1) {
            best = items.items[i];
            best_key = key;
        }
    }
    *out = best;
    return 0;
}

static int f_max(jr *r, const jnode *at, jv v, const jargs *a, jv *out) { return min_max(r, at, v, a, true, out); }
static int f_min(jr *r, const jnode *at, jv v, const jargs *a, jv *out) { return min_max(r, at, v, a, false, out); }

static int f_replace(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("replace", "old", "new", "count");
    int64_t count = -1;
    jv s, old, new_;
    if (jv_to_str(r, at, v, &s) < 0 || jv_to_str(r, at, or_default(p[0], jv_str("", 0)), &old) < 0 ||
        jv_to_str(r, at, or_default(p[1], jv_str("", 0)), &new_) < 0)
        return -1;
    if (given(p[2]) && p[2].kind != JV_NONE && want_int(r, at, "count", p[2], &count) < 0)
        return -1;
    return jstr_replace(r, at, s, old, new_, count, out);
}

static int f_reverse(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "reverse", a) < 0)
        return -1;
    if (v.kind == JV_STR)
        return jv_slice(r, at, v, jv_none(), jv_none(), jv_int(-1), out);
    jlist items;
    if (jv_iterate(r, at, v, &items) < 0)
        return -1;
    jlist *l = jlist_new(r, at, items.n);
    if (!l)
        return -1;
    for (size_t i = 0; i < items.n; i++)
        l->items[i] = items.items[items.n - 1 - i];
    /* reversed() gives an iterator; a generator is not reversible, so
     * jinja2 falls back to a reversed list */
    if (v.kind == JV_GEN) {
        *out = jv_seq(l, JV_LIST);
        return 0;
    }
    *out = jv_gen(r, at, l->items, l->n);
    return out->kind == JV_GEN ? 0 : -1;
}

static int f_round(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("round", "precision", "method");
    int64_t prec = 0;
    if (given(p[0]) && want_int(r, at, "precision", p[0], &prec) < 0)
        return -1;
    if (!jv_is_num(v))
        return jerr(r, at, "type %s doesn't define __round__ method", jv_type_name(v));
    jv method = or_default(p[1], jv_cstr("common"));
    bool common = str_is(method, "common");
    if (!common && !str_is(method, "ceil") && !str_is(method, "floor"))
        return jerr(r, at, "method must be common, ceil or floor");
    double f = v.kind == JV_FLOAT ? v.u.f : v.kind == JV_INT ? (double)v.u.i : v.u.b;
    if (common) {
        if (v.kind != JV_FLOAT && prec >= 0) {
            *out = jv_int(v.kind == JV_INT ? v.u.i : v.u.b);
            return 0;
        }
        if (isfinite(f) && prec >= -308 && prec <= 308) {
            /* printf rounds the exact binary value half to even, as Python's round() */
            char buf[400];
            if (prec >= 0) {
                snprintf(buf, sizeof buf, "%.*f", (int)(prec > 60 ? 60 : prec), f);
                f = strtod(buf, NULL);
            } else {
                double scale = pow(10.0, (double)-prec);
                f = nearbyint(f / scale) * scale;
            }
        }
    } else {
        double scale = pow(10.0, (double)prec);
        f = (str_is(method, "ceil") ? ceil(f * scale) : floor(f * scale)) / scale;
    }
    *out = jv_float(f);
    return 0;
}

static int f_safe(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "safe", a) < 0)
        return -1;
    return jv_to_str(r, at, v, out);
}

static int f_slice(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("slice", "slices", "fill_with");
    int64_t slices;
    jlist items;
    if (want_int(r, at, "slices", or_default(p[0], jv_int(1)), &slices) < 0 || jv_iterate(r, at, v, &items) < 0)
        return -1;
    if (slices <= 0 || slices > 100000)
        return jerr(r, at, "slice(): the number of slices must be 1..100000");
    size_t per = items.n / (size_t)slices, extra = items.n % (size_t)slices, offset = 0;
    bool fill = given(p[1]) && p[1].kind != JV_NONE;
    jlist *l = jlist_new(r, at, (size_t)slices);
    if (!l)
        return -1;
    for (size_t k = 0; k < (size_t)slices; k++) {
        size_t start = offset + k * per;
        if (k < extra)
            offset++;
        size_t end = offset + (k + 1) * per;
        bool f = fill && k >= extra;
        jlist *part = jlist_new(r, at, end - start + f);
        if (!part)
            return -1;
        if (end > start) /* an empty list's items may be NULL */
            memcpy(part->items, items.items + start, (end - start) * sizeof(jv));
        if (f)
            part->items[end - start] = p[1];
        l->items[k] = jv_seq(part, JV_LIST);
    }
    *out = jv_gen(r, at, l->items, l->n);
    return out->kind == JV_GEN ? 0 : -1;
}

static int f_sort(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("sort", "reverse", "case_sensitive", "attribute");
    jlist items;
    if (jv_iterate(r, at, v, &items) < 0)
        return -1;
    jv *keys = jalloc(r, at, (items.n + 1) * sizeof *keys);
    size_t *order;
    if (!keys)
        return -1;
    for (size_t i = 0; i < items.n; i++)
        if (sort_key(r, at, items.items[i], p[2], given(p[1]) && jv_truthy(p[1]), &keys[i]) < 0)
            return -1;
    if (sorted_order(r, at, keys, items.n, given(p[0]) && jv_truthy(p[0]), &order) < 0)
        return -1;
    jlist *l = jlist_new(r, at, items.n);
    if (!l)
        return -1;
    for (size_t i = 0; i < items.n; i++)
        l->items[i] = items.items[order[i]];
    *out = jv_seq(l, JV_LIST);
    return 0;
}

static int f_string(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "string", a) < 0)
        return -1;
    return jv_to_str(r, at, v, out);
}

static int f_pprint(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "pprint", a) < 0)
        return -1;
    jout o = {0};
    if (jv_write_repr(r, at, &o, v) < 0)
        return -1;
    *out = jv_str(o.p ? o.p : "", o.n);
    return 0;
}

static int f_sum(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("sum", "attribute", "start");
    jlist items;
    if (jv_iterate(r, at, v, &items) < 0)
        return -1;
    jv total = or_default(p[1], jv_int(0));
    for (size_t i = 0; i < items.n; i++) {
        jv x = items.items[i];
        if (given(p[0]) && p[0].kind != JV_NONE && attr_get(r, at, x, p[0], jv_absent(), &x) < 0)
            return -1;
        if (jv_binop(r, at, OP_ADD, total, x, &total) < 0)
            return -1;
    }
    *out = total;
    return 0;
}

static int f_tojson(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("tojson", "ensure_ascii", "indent", "separators", "sort_keys");
    cf_json_dump_opts o = {-1, NULL, NULL, given(p[0]) && jv_truthy(p[0]), given(p[3]) && jv_truthy(p[3])};
    jv indent = or_default(p[1], jv_none());
    if (indent.kind == JV_INT || indent.kind == JV_BOOL) {
        int64_t i = indent.kind == JV_INT ? indent.u.i : indent.u.b;
        o.indent = i < 0 ? 0 : i > 64 ? 64 : (int)i;
    } else if (indent.kind == JV_STR) {
        /* a string indent: json.dumps repeats it per level; only spaces are supported */
        for (size_t i = 0; i < indent.u.s.n; i++)
            if (indent.u.s.p[i] != ' ')
                return jerr(r, at, "tojson(): only an integer or spaces can be the indent");
        o.indent = indent.u.s.n > 64 ? 64 : (int)indent.u.s.n;
    } else if (indent.kind != JV_NONE) {
        return jerr(r, at, "tojson(): the indent must be an integer");
    }
    char seps[2][16];
    jv sep = or_default(p[2], jv_none());
    if (sep.kind != JV_NONE) {
        if (!jv_is_seq(sep) || sep.u.l->n != 2 || sep.u.l->items[0].kind != JV_STR ||
            sep.u.l->items[1].kind != JV_STR || sep.u.l->items[0].u.s.n >= 16 ||
            sep.u.l->items[1].u.s.n >= 16)
            return jerr(r, at, "tojson(): separators must be a pair of short strings");
        for (int k = 0; k < 2; k++) {
            memcpy(seps[k], sep.u.l->items[k].u.s.p, sep.u.l->items[k].u.s.n);
            seps[k][sep.u.l->items[k].u.s.n] = 0;
        }
        o.item_sep = seps[0];
        o.key_sep = seps[1];
    }
    return jv_tojson(r, at, v, &o, out);
}

static int f_trim(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("trim", "chars");
    if (jv_to_str(r, at, v, &v) < 0)
        return -1;
    return jstr_strip(r, at, v, or_default(p[0], jv_none()), 3, out);
}

static int f_truncate(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("truncate", "length", "killwords", "end", "leeway");
    int64_t length, leeway;
    jv s, end = or_default(p[2], jv_str("...", 3));
    if (want_int(r, at, "length", or_default(p[0], jv_int(255)), &length) < 0 ||
        want_int(r, at, "leeway", given(p[3]) && p[3].kind != JV_NONE ? p[3] : jv_int(5), &leeway) < 0 ||
        jv_to_str(r, at, v, &s) < 0 || jv_to_str(r, at, end, &end) < 0)
        return -1;
    int64_t end_len = (int64_t)jutf8_len(end.u.s.p, end.u.s.n);
    if (length < end_len)
        return jerr(r, at, "expected length >= %lld, got %lld", (long long)end_len, (long long)length);
    if (leeway < 0)
        return jerr(r, at, "expected leeway >= 0, got %lld", (long long)leeway);
    int64_t len; /* jinja2 measures the value as given, before any str() */
    if (jv_len(r, at, v, &len) < 0)
        return -1;
    if (len <= length + leeway) {
        *out = v;
        return 0;
    }
    if (v.kind != JV_STR)
        return jerr(r, at, "'%s' object has no attribute 'rsplit'", jv_type_name(v));
    jv head;
    if (jv_slice(r, at, s, jv_none(), jv_int(length - end_len), jv_none(), &head) < 0)
        return -1;
    if (!(given(p[1]) && jv_truthy(p[1]))) { /* keep whole words: cut at the last space */
        const char *sp = NULL;
        for (size_t i = head.u.s.n; i > 0; i--)
            if (head.u.s.p[i - 1] == ' ') {
                sp = head.u.s.p + i - 1;
                break;
            }
        if (sp)
            head.u.s.n = (size_t)(sp - head.u.s.p);
    }
    jout o = {0};
    if (jout_put(r, at, &o, head.u.s.p, head.u.s.n) < 0 || jout_put(r, at, &o, end.u.s.p, end.u.s.n) < 0)
        return -1;
    *out = jv_str(o.p, o.n);
    return 0;
}

static int f_unique(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    JBIND("unique", "case_sensitive", "attribute");
    jlist items;
    if (jv_iterate(r, at, v, &items) < 0)
        return -1;
    bool cs = given(p[0]) && jv_truthy(p[0]);
    jvec kept = {0}, seen = {0};
    for (size_t i = 0; i < items.n; i++) {
        jv key;
        if (sort_key(r, at, items.items[i], p[1], cs, &key) < 0)
            return -1;
        if (key.kind == JV_LIST || key.kind == JV_DICT)
            return jerr(r, at, "unhashable type: '%s'", jv_type_name(key));
        bool dup = false;
        for (size_t k = 0; k < seen.n && !dup; k++)
            if (jv_eq(r, at, seen.items[k], key, &dup) < 0)
                return -1;
        if (!dup && (jvec_push(r, at, &seen, key) < 0 || jvec_push(r, at, &kept, items.items[i]) < 0))
            return -1;
    }
    *out = jv_gen(r, at, kept.items, kept.n);
    return out->kind == JV_GEN ? 0 : -1;
}

static bool word_char(uint32_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (c >= 0x80 && !jpy_isspace(c) && !(c >= 0x2000 && c <= 0x206F) && !(c >= 0x3000 && c <= 0x303F));
}

static int f_wordcount(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "wordcount", a) < 0)
        return -1;
    jv s;
    if (jv_to_str(r, at, v, &s) < 0)
        return -1;
    int64_t count = 0;
    bool in_word = false;
    for (size_t i = 0; i < s.u.s.n;) {
        uint32_t c;
        i += cf_utf8_decode_esc(s.u.s.p + i, s.u.s.n - i, &c);
        bool w = word_char(c);
        count += w && !in_word;
        in_word = w;
    }
    *out = jv_int(count);
    return 0;
}

static int f_format(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    jv s;
    if (jv_to_str(r, at, v, &s) < 0)
        return -1;
    if (a->nkw && a->npos)
        return jerr(r, at, "can't handle positional and keyword arguments at the same time");
    if (a->nkw) {
        jdict *d = jdict_new(r, at, a->nkw);
        if (!d)
            return -1;
        for (size_t i = 0; i < a->nkw; i++)
            if (jdict_set(r, at, d, jv_cstr(a->kw[i].name), a->kw[i].v) < 0)
                return -1;
        jv m = jv_undef();
        m.kind = JV_DICT;
        m.u.d = d;
        return jstr_format(r, at, s, m, out);
    }
    jlist *l = jlist_new(r, at, a->npos);
    if (!l)
        return -1;
    if (a->npos)
        memcpy(l->items, a->pos, a->npos * sizeof(jv));
    return jstr_format(r, at, s, jv_seq(l, JV_TUPLE), out);
}

static const jbuiltin filters[] = {
    {"abs", f_abs, false, false},
    {"attr", f_attr, false, false},
    {"batch", f_batch, false, true},
    {"capitalize", f_capitalize, false, false},
    {"center", f_center, false, false},
    {"count", f_length, false, false},
    {"d", f_default, false, false},
    {"default", f_default, false, false},
    {"dictsort", f_dictsort, false, false},
    {"e", f_escape, false, false},
    {"escape", f_escape, false, false},
    {"first", f_first, false, false},
    {"float", f_float, false, false},
    {"forceescape", f_escape, false, false},
    {"format", f_format, false, false},
    {"indent", f_indent, false, false},
    {"int", f_int, false, false},
    {"items", f_items, false, true},
    {"join", f_join, false, false},
    {"last", f_last, false, false},
    {"length", f_length, false, false},
    {"list", f_list, false, false},
    {"lower", f_lower, false, false},
    {"map", f_map, false, true},
    {"max", f_max, false, false},
    {"min", f_min, false, false},
    {"pprint", f_pprint, false, false},
    {"reject", f_reject, false, true},
    {"rejectattr", f_rejectattr, false, true},
    {"replace", f_replace, false, false},
    {"reverse", f_reverse, false, false},
    {"round", f_round, false, false},
    {"safe", f_safe, false, false},
    {"select", f_select, false, true},
    {"selectattr", f_selectattr, false, true},
    {"slice", f_slice, false, true},
    {"sort", f_sort, false, false},
    {"string", f_string, false, false},
    {"sum", f_sum, false, false},
    {"title", f_title, false, false},
    {"tojson", f_tojson, false, false},
    {"trim", f_trim, false, false},
    {"truncate", f_truncate, false, false},
    {"unique", f_unique, false, true},
    {"upper", f_upper, false, false},
    {"wordcount", f_wordcount, false, false},
};

static const jbuiltin *find(const jbuiltin *table, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

const jbuiltin *jfind_filter(const char *name)
{
    return find(filters, sizeof filters / sizeof filters[0], name);
}

int jrun_filter(jr *r, const jnode *at, const char *name, jv v, const jargs *a, jv *out)
{
    const jbuiltin *f = jfind_filter(name);
    if (!f)
        return jerr(r, at, "No filter named '%s'", name);
    int rc = f->fn(r, at, v, a, out);
    if (rc == 0 || !f->lazy || r->fatal)
        return rc;
    /* jinja2 would not have run the generator yet: keep the error for
     * whoever iterates it (maybe nobody) */
    size_t len = strlen(r->err->msg);
    char *msg = jalloc(r, at, len + 1);
    if (!msg)
        return -1;
    memcpy(msg, r->err->msg, len + 1);
    r->failed = false;
    *out = jv_gen(r, at, NULL, 0);
    if (out->kind != JV_GEN)
        return -1;
    out->u.gen->error = msg;
    return 0;
}

/* ---- tests -------------------------------------------------------------- */

static int one_arg(jr *r, const jnode *at, const char *name, const jargs *a, jv *arg)
{
    const char *params[] = {"value"};
    if (jbind(r, at, name, a, params, 1, arg) < 0)
        return -1;
    if (arg->kind == JV_ABSENT)
        return jerr(r, at, "the test '%s' needs an argument", name);
    return 0;
}

static int is_str_case(jr *r, const jnode *at, jv v, bool upper, bool *out)
{
    jv s, low, up;
    if (jv_to_str(r, at, v, &s) < 0 || jstr_case(r, at, s, 'l', &low) < 0 ||
        jstr_case(r, at, s, 'u', &up) < 0)
        return -1;
    /* Python: at least one cased character and none of the other case */
    bool any_cased = !jv_equal(low, up);
    *out = any_cased && jv_equal(s, upper ? up : low);
    return 0;
}

static int run_compare_test(jr *r, const jnode *at, const char *name, int op, jv v, const jargs *a,
                            bool *out)
{
    jv other;
    if (one_arg(r, at, name, a, &other) < 0)
        return -1;
    return jv_order(r, at, op, v, other, out);
}

static int int_test(jr *r, const jnode *at, const char *name, jv v, int64_t mod, bool zero, bool *out)
{
    jv rem;
    if (jv_binop(r, at, OP_MOD, v, jv_int(mod), &rem) < 0)
        return -1;
    *out = jv_truthy(rem) != zero;
    (void)name;
    return 0;
}

/* The tests that take no argument besides the value. */
static bool takes_jno_args(const char *name)
{
    static const char *const none[] = {"defined", "undefined", "none", "boolean", "false", "true",
                                       "integer", "float", "number", "string", "mapping", "iterable",
                                       "sequence", "callable", "escaped", "odd", "even", "lower",
                                       "upper", "filter", "test"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (strcmp(none[i], name) == 0)
            return true;
    return false;
}

int jrun_test(jr *r, const jnode *at, const char *name, jv v, const jargs *a, bool *out)
{
    jv arg;
    if (takes_jno_args(name) && (a->npos || a->nkw))
        return jerr(r, at, "test_%s() takes 1 positional argument but %zu were given", name, 1 + a->npos + a->nkw);
#define IS(s) (strcmp(name, s) == 0)
    if (IS("defined") || IS("undefined")) {
        *out = (v.kind != JV_UNDEF) == IS("defined");
    } else if (IS("none")) {
        *out = v.kind == JV_NONE;
    } else if (IS("boolean")) {
        *out = v.kind == JV_BOOL;
    } else if (IS("false") || IS("true")) {
        *out = v.kind == JV_BOOL && v.u.b == IS("true");
    } else if (IS("integer")) {
        *out = v.kind == JV_INT;
    } else if (IS("float")) {
        *out = v.kind == JV_FLOAT;
    } else if (IS("number")) {
        *out = jv_is_num(v);
    } else if (IS("string")) {
        *out = v.kind == JV_STR;
    } else if (IS("mapping")) {
        *out = v.kind == JV_DICT;
    } else if (IS("iterable")) {
        *out = v.kind == JV_STR || jv_is_seq(v) || v.kind == JV_DICT || v.kind == JV_UNDEF || v.kind == JV_GEN;
    } else if (IS("sequence")) {
        *out = v.kind == JV_STR || jv_is_seq(v) || v.kind == JV_DICT || v.kind == JV_UNDEF;
    } else if (IS("callable")) { /* Undefined has __call__ (it raises) */
        *out = v.kind == JV_UNDEF || v.kind == JV_MACRO || v.kind == JV_FUNC || v.kind == JV_METHOD ||
               v.kind == JV_LOOP;
    } else if (IS("escaped")) {
        *out = false;
    } else if (IS("sameas")) {
        if (one_arg(r, at, name, a, &arg) < 0)
            return -1;
        *out = v.kind == arg.kind && (v.kind == JV_NONE || v.kind == JV_UNDEF ||
                                      (v.kind == JV_BOOL && v.u.b == arg.u.b) ||
                                      (v.kind == JV_INT && v.u.i == arg.u.i) ||
                                      ((v.kind == JV_DICT || v.kind == JV_NS) && v.u.d == arg.u.d) ||
                                      (jv_is_seq(v) && v.u.l == arg.u.l) ||
                                      (v.kind == JV_STR && jv_equal(v, arg)));
    } else if (IS("eq") || IS("equalto") || IS("==") || IS("ne") || IS("!=")) {
        if (one_arg(r, at, name, a, &arg) < 0 || jv_eq(r, at, v, arg, out) < 0)
            return -1;
        *out = *out == !(IS("ne") || IS("!="));
    } else if (IS("lt") || IS("lessthan") || IS("<")) {
        return run_compare_test(r, at, name, OP_LT, v, a, out);
    } else if (IS("le") || IS("<=")) {
        return run_compare_test(r, at, name, OP_LE, v, a, out);
    } else if (IS("gt") || IS("greaterthan") || IS(">")) {
        return run_compare_test(r, at, name, OP_GT, v, a, out);
    } else if (IS("ge") || IS(">=")) {
        return run_compare_test(r, at, name, OP_GE, v, a, out);
    } else if (IS("in")) {
        if (one_arg(r, at, name, a, &arg) < 0)
            return -1;
        return jv_contains(r, at, arg, v, out);
    } else if (IS("odd") || IS("even")) {
        return int_test(r, at, name, v, 2, IS("even"), out);
    } else if (IS("divisibleby")) {
        int64_t d;
        if (one_arg(r, at, name, a, &arg) < 0 || want_int(r, at, "divisibleby's argument", arg, &d) < 0)
            return -1;
        return int_test(r, at, name, v, d, true, out);
    } else if (IS("lower") || IS("upper")) {
        return is_str_case(r, at, v, IS("upper"), out);
    } else if (IS("filter") || IS("test")) {
        if (v.kind != JV_STR) {
            *out = false;
            return 0;
        }
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)(v.u.s.n < 63 ? v.u.s.n : 63), v.u.s.p);
        *out = IS("filter") ? jfind_filter(buf) != NULL : jfind_test(buf) != NULL;
    } else {
        return jerr(r, at, "No test named '%s'", name);
    }
#undef IS
    return 0;
}

static const char *const test_names[] = {
    "defined", "undefined", "none", "boolean", "false", "true", "integer", "float", "number",
    "string", "mapping", "iterable", "sequence", "callable", "escaped", "sameas", "eq", "equalto",
    "==", "ne", "!=", "lt", "lessthan", "<", "le", "<=", "gt", "greaterthan", ">", "ge", ">=",
    "in", "odd", "even", "divisibleby", "lower", "upper", "filter", "test",
};

const jbuiltin *jfind_test(const char *name)
{
    /* tests run through jrun_test; the entry only says the name exists */
    static const jbuiltin known = {"test", NULL, false, false};
    for (size_t i = 0; i < sizeof test_names / sizeof test_names[0]; i++)
        if (strcmp(test_names[i], name) == 0)
            return &known;
    return NULL;
}
