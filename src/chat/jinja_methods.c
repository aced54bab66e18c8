/* Methods templates call on values (Python's str, dict and list methods
 * the immutable sandbox allows; the mutating ones exist but refuse), the
 * loop object's cycle()/changed(), and the globals: range, namespace, dict,
 * raise_exception and strftime_now. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jinja_impl.h"

static int want_str(jr *r, const jnode *at, const char *what, jv v)
{
    if (v.kind != JV_STR)
        return jerr(r, at, "%s must be str, not %s", what, jv_type_name(v));
    return 0;
}

static int opt_int(jr *r, const jnode *at, jv v, int64_t dflt, int64_t *out)
{
    if (v.kind == JV_ABSENT || v.kind == JV_NONE) {
        *out = dflt;
        return 0;
    }
    if (v.kind == JV_INT || v.kind == JV_BOOL) {
        *out = v.kind == JV_INT ? v.u.i : v.u.b;
        return 0;
    }
    return jerr(r, at, "'%s' object cannot be interpreted as an integer", jv_type_name(v));
}


/* ---- str ---------------------------------------------------------------- */

static size_t space_len(const char *p, size_t n, size_t i)
{
    uint32_t c;
    size_t len = cf_utf8_decode_esc(p + i, n - i, &c);
    return jpy_isspace(c) ? len : 0;
}

/* str.split / str.rsplit */
static int split(jr *r, const jnode *at, jv s, const jargs *a, bool from_right, jv *out)
{
    JBIND(from_right ? "rsplit" : "split", "sep", "maxsplit");
    int64_t maxsplit;
    if (opt_int(r, at, p[1], -1, &maxsplit) < 0)
        return -1;
    jv sep = p[0].kind == JV_ABSENT ? jv_none() : p[0];
    if (sep.kind != JV_NONE && want_str(r, at, "sep", sep) < 0)
        return -1;
    if (sep.kind == JV_STR && sep.u.s.n == 0)
        return jerr(r, at, "empty separator");
    const char *str = s.u.s.p;
    size_t n = s.u.s.n;
    jvec parts = {0};
    /* searching from the right compares at every position */
    uint64_t cost = (n >> 5) * (from_right && sep.kind == JV_STR ? sep.u.s.n : 1);
    if (jcharge(r, at, cost) < 0)
        return -1;
    if (sep.kind == JV_STR) {
        size_t m = sep.u.s.n;
        if (!from_right) {
            size_t i = 0;
            while (maxsplit < 0 || (int64_t)parts.n < maxsplit) {
                const char *hit = memmem(str + i, n - i, sep.u.s.p, m);
                if (!hit)
                    break;
                if (jvec_push(r, at, &parts, jv_str(str + i, (size_t)(hit - str) - i)) < 0)
                    return -1;
                i = (size_t)(hit - str) + m;
            }
            if (jvec_push(r, at, &parts, jv_str(str + i, n - i)) < 0)
                return -1;
        } else {
            size_t end = n;
            jvec rev = {0};
            while (maxsplit < 0 || (int64_t)rev.n < maxsplit) {
                size_t k = end;
                bool found = false;
                while (k >= m) {
                    if (memcmp(str + k - m, sep.u.s.p, m) == 0) {
                        found = true;
                        break;
                    }
                    k--;
                }
                if (!found)
                    break;
                if (jvec_push(r, at, &rev, jv_str(str + k, end - k)) < 0)
                    return -1;
                end = k - m;
            }
            if (jvec_push(r, at, &parts, jv_str(str, end)) < 0)
                return -1;
            for (size_t i = rev.n; i-- > 0;)
                if (jvec_push(r, at, &parts, rev.items[i]) < 0)
                    return -1;
        }
    } else if (!from_right) { /* runs of whitespace */
        size_t i = 0, k;
        while (i < n) {
            while (i < n && (k = space_len(str, n, i)))
                i += k;
            if (i >= n)
                break;
            if (maxsplit >= 0 && (int64_t)parts.n >= maxsplit) {
                if (jvec_push(r, at, &parts, jv_str(str + i, n - i)) < 0)
                    return -1;
                break;
            }
            size_t start = i;
            uint32_t c;
            while (i < n && !space_len(str, n, i))
                i += cf_utf8_decode_esc(str + i, n - i, &c);
            if (jvec_push(r, at, &parts, jv_str(str + start, i - start)) < 0)
                return -1;
        }
    } else {
        size_t end = n;
        jvec rev = {0};
        for (;;) {
            /* trailing whitespace, then a word, both found from the right */
            while (end > 0) {
                size_t b = end - 1;
                while (b > 0 && ((unsigned char)str[b] & 0xC0) == 0x80 && end - b < 4)
                    b--;
                if (space_len(str, end, b) != end - b)
                    break;
                end = b;
            }
            if (end == 0)
                break;
            if (maxsplit >= 0 && (int64_t)rev.n >= maxsplit) {
                if (jvec_push(r, at, &rev, jv_str(str, end)) < 0)
                    return -1;
                break;
            }
            size_t start = end;
            while (start > 0) {
                size_t b = start - 1;
                while (b > 0 && ((unsigned char)str[b] & 0xC0) == 0x80 && start - b < 4)
                    b--;
                if (space_len(str, start, b) == start - b)
                    break;
                start = b;
            }
            if (jvec_push(r, at, &rev, jv_str(str + start, end - start)) < 0)
                return -1;
            end = start;
        }
        for (size_t i = rev.n; i-- > 0;)
            if (jvec_push(r, at, &parts, rev.items[i]) < 0)
                return -1;
    }
    *out = jvec_list(r, at, &parts, JV_LIST);
    return 0;
}

static int m_split(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return split(r, at, s, a, false, out); }
static int m_rsplit(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return split(r, at, s, a, true, out); }

static int strip_common(jr *r, const jnode *at, jv s, const jargs *a, int which, jv *out)
{
    JBIND(which == 3 ? "strip" : which == 1 ? "lstrip" : "rstrip", "chars");
    return jstr_strip(r, at, s, p[0], which, out);
}

static int m_strip(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return strip_common(r, at, s, a, 3, out); }
static int m_lstrip(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return strip_common(r, at, s, a, 1, out); }
static int m_rstrip(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return strip_common(r, at, s, a, 2, out); }

/* Byte offsets of code-point positions start..end (Python's clamping). */
static int char_range(jr *r, const jnode *at, jv s, jv start, jv end, size_t *lo, size_t *hi)
{
    size_t *offs, count;
    int64_t a, b;
    if (jutf8_offsets(r, at, s.u.s.p, s.u.s.n, &offs, &count) < 0 ||
        opt_int(r, at, start, 0, &a) < 0 || opt_int(r, at, end, (int64_t)count, &b) < 0)
        return -1;
    if (a < 0)
        a = a + (int64_t)count < 0 ? 0 : a + (int64_t)count;
    if (b < 0)
        b = b + (int64_t)count < 0 ? 0 : b + (int64_t)count;
    if (a > (int64_t)count)
        a = (int64_t)count;
    if (b > (int64_t)count)
        b = (int64_t)count;
    if (b < a)
        b = a;
    *lo = offs ? offs[a] : (size_t)a;
    *hi = offs ? offs[b] : (size_t)b;
    return 0;
}

static int affix(jr *r, const jnode *at, jv s, const jargs *a, bool suffix, jv *out)
{
    JBIND(suffix ? "endswith" : "startswith", "prefix", "start", "end");
    size_t lo, hi;
    if (p[0].kind == JV_ABSENT)
        return jerr(r, at, "%s() takes at least 1 argument", suffix ? "endswith" : "startswith");
    if (char_range(r, at, s, p[1], p[2], &lo, &hi) < 0)
        return -1;
    jlist one = {1, &p[0]};
    jlist cands = jv_is_seq(p[0]) ? *p[0].u.l : one;
    for (size_t i = 0; i < cands.n; i++) {
        jv c = cands.items[i];
        if (c.kind != JV_STR)
            return jerr(r, at, "%s first arg must be str or a tuple of str, not %s",
                        suffix ? "endswith" : "startswith", jv_type_name(c));
        if (c.u.s.n <= hi - lo &&
            memcmp(s.u.s.p + (suffix ? hi - c.u.s.n : lo), c.u.s.p, c.u.s.n) == 0) {
            *out = jv_bool(true);
            return 0;
        }
    }
    *out = jv_bool(false);
    return 0;
}

static int m_startswith(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return affix(r, at, s, a, false, out); }
static int m_endswith(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return affix(r, at, s, a, true, out); }

static int case_method(jr *r, const jnode *at, jv s, const jargs *a, const char *name, int how, jv *out)
{
    return jno_args(r, at, name, a) < 0 ? -1 : jstr_case(r, at, s, how, out);
}

static int m_lower(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return case_method(r, at, s, a, "lower", 'l', out); }
static int m_upper(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return case_method(r, at, s, a, "upper", 'u', out); }
static int m_title(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return case_method(r, at, s, a, "title", 't', out); }
static int m_capitalize(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return case_method(r, at, s, a, "capitalize", 'c', out); }

static int m_replace(jr *r, const jnode *at, jv s, const jargs *a, jv *out)
{
    JBIND("replace", "old", "new", "count");
    int64_t count;
    if (want_str(r, at, "replace() argument 1", p[0]) < 0 || want_str(r, at, "replace() argument 2", p[1]) < 0 ||
        opt_int(r, at, p[2], -1, &count) < 0)
        return -1;
    return jstr_replace(r, at, s, p[0], p[1], count, out);
}

/* find / rfind / index / rindex / count */
static int search(jr *r, const jnode *at, jv s, const jargs *a, const char *name, jv *out)
{
    JBIND(name, "sub", "start", "end");
    size_t lo, hi;
    if (want_str(r, at, "the substring", p[0]) < 0 || char_range(r, at, s, p[1], p[2], &lo, &hi) < 0)
        return -1;
    const char *h = s.u.s.p + lo, *sub = p[0].u.s.p;
    size_t hn = hi - lo, m = p[0].u.s.n;
    bool right = name[0] == 'r';
    if (jcharge(r, at, (hn >> 5) * (right && m ? m : 1)) < 0)
        return -1;
    if (!strcmp(name, "count")) {
        int64_t count = 0;
        if (m == 0) {
            count = (int64_t)jutf8_len(h, hn) + 1;
        } else {
            for (size_t i = 0; i + m <= hn;) {
                const char *hit = memmem(h + i, hn - i, sub, m);
                if (!hit)
                    break;
                count++;
                i = (size_t)(hit - h) + m;
            }
        }
        *out = jv_int(count);
        return 0;
    }
    const char *hit = NULL;
    if (!right) {
        hit = memmem(h, hn, sub, m);
    } else {
        for (size_t k = hn + 1; k-- > 0;)
            if (k + m <= hn && memcmp(h + k, sub, m) == 0) {
                hit = h + k;
                break;
            }
    }
    if (!hit) {
        if (strstr(name, "index"))
            return jerr(r, at, "substring not found");
        *out = jv_int(-1);
        return 0;
    }
    *out = jv_int((int64_t)jutf8_len(s.u.s.p, (size_t)(hit - s.u.s.p)));
    return 0;
}

static int m_find(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return search(r, at, s, a, "find", out); }
static int m_rfind(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return search(r, at, s, a, "rfind", out); }
static int m_index_str(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return search(r, at, s, a, "index", out); }
static int m_rindex(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return search(r, at, s, a, "rindex", out); }
static int m_count_str(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return search(r, at, s, a, "count", out); }

static int m_join(jr *r, const jnode *at, jv s, const jargs *a, jv *out)
{
    JBIND("join", "iterable");
    jlist items;
    if (jv_iterate(r, at, p[0], &items) < 0)
        return -1;
    jout o = {0};
    for (size_t i = 0; i < items.n; i++) {
        if (items.items[i].kind != JV_STR)
            return jerr(r, at, "sequence item %zu: expected str instance, %s found", i,
                        jv_type_name(items.items[i]));
        if ((i && jout_put(r, at, &o, s.u.s.p, s.u.s.n) < 0) ||
            jout_put(r, at, &o, items.items[i].u.s.p, items.items[i].u.s.n) < 0)
            return -1;
    }
    *out = jv_str(o.p ? o.p : "", o.n);
    return 0;
}

static int classify(jr *r, const jnode *at, jv s, const jargs *a, const char *name, jv *out)
{
    if (jno_args(r, at, name, a) < 0)
        return -1;
    bool ok = s.u.s.n > 0;
    for (size_t i = 0; i < s.u.s.n && ok;) {
        uint32_t c;
        i += cf_utf8_decode_esc(s.u.s.p + i, s.u.s.n - i, &c);
        bool digit = c >= '0' && c <= '9', alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                                   (c >= 0xC0 && !jpy_isspace(c));
        switch (name[2]) {
        case 'd': /* isdigit, isdecimal */
        case 'n': ok = digit; break; /* isnumeric */
        case 'a': ok = name[4] == 'n' ? alpha || digit : alpha; break; /* isalnum, isalpha */
        case 's': ok = jpy_isspace(c); break;
        }
    }
    *out = jv_bool(ok);
    return 0;
}

static int m_isdigit(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return classify(r, at, s, a, "isdigit", out); }
static int m_isalpha(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return classify(r, at, s, a, "isalpha", out); }
static int m_isalnum(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return classify(r, at, s, a, "isalnum", out); }
static int m_isspace(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return classify(r, at, s, a, "isspace", out); }

static int case_test(jr *r, const jnode *at, jv s, const jargs *a, bool upper, jv *out)
{
    jv low, up;
    if (jno_args(r, at, upper ? "isupper" : "islower", a) < 0 || jstr_case(r, at, s, 'l', &low) < 0 ||
        jstr_case(r, at, s, 'u', &up) < 0)
        return -1;
    *out = jv_bool(!jv_equal(low, up) && jv_equal(s, upper ? up : low));
    return 0;
}

static int m_islower(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return case_test(r, at, s, a, false, out); }
static int m_isupper(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return case_test(r, at, s, a, true, out); }

/* ljust / rjust / center / zfill */
static int justify(jr *r, const jnode *at, jv s, const jargs *a, char how, jv *out)
{
    JBIND(how == 'l' ? "ljust" : how == 'r' ? "rjust" : how == 'c' ? "center" : "zfill", "width", "fillchar");
    int64_t width;
    if (p[0].kind == JV_ABSENT || opt_int(r, at, p[0], 0, &width) < 0)
        return p[0].kind == JV_ABSENT ? jerr(r, at, "a width is required") : -1;
    jv fill = how == 'z' ? jv_str("0", 1) : p[1].kind == JV_ABSENT ? jv_str(" ", 1) : p[1];
    if (want_str(r, at, "the fill character", fill) < 0)
        return -1;
    if (jutf8_len(fill.u.s.p, fill.u.s.n) != 1)
        return jerr(r, at, "The fill character must be exactly one character long");
    if (jcharge(r, at, s.u.s.n >> 5) < 0)
        return -1;
    int64_t len = (int64_t)jutf8_len(s.u.s.p, s.u.s.n);
    if (width <= len || width > (int64_t)r->lim.max_output) {
        *out = s;
        return 0;
    }
    int64_t padn = width - len;
    int64_t left = how == 'l' ? 0 : how == 'c' ? padn / 2 + (padn & width & 1) : padn;
    jout o = {0};
    size_t sign = how == 'z' && s.u.s.n && (s.u.s.p[0] == '-' || s.u.s.p[0] == '+');
    if (sign && jout_put(r, at, &o, s.u.s.p, 1) < 0)
        return -1;
    for (int64_t i = 0; i < left; i++)
        if (jout_put(r, at, &o, fill.u.s.p, fill.u.s.n) < 0)
            return -1;
    if (jout_put(r, at, &o, s.u.s.p + sign, s.u.s.n - sign) < 0)
        return -1;
    for (int64_t i = left; i < padn; i++)
        if (jout_put(r, at, &o, fill.u.s.p, fill.u.s.n) < 0)
            return -1;
    *out = jv_str(o.p, o.n);
    return 0;
}

static int m_ljust(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return justify(r, at, s, a, 'l', out); }
static int m_rjust(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return justify(r, at, s, a, 'r', out); }
static int m_center(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return justify(r, at, s, a, 'c', out); }
static int m_zfill(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return justify(r, at, s, a, 'z', out); }

static int partition(jr *r, const jnode *at, jv s, const jargs *a, bool right, jv *out)
{
    JBIND(right ? "rpartition" : "partition", "sep");
    if (want_str(r, at, "sep", p[0]) < 0)
        return -1;
    if (p[0].u.s.n == 0)
        return jerr(r, at, "empty separator");
    const char *hit = NULL;
    size_t n = s.u.s.n, m = p[0].u.s.n;
    if (jcharge(r, at, (n >> 5) * (right ? m : 1)) < 0)
        return -1;
    if (!right)
        hit = memmem(s.u.s.p, n, p[0].u.s.p, m);
    else
        for (size_t k = n + 1; k-- > 0 && !hit;)
            if (k + m <= n && memcmp(s.u.s.p + k, p[0].u.s.p, m) == 0)
                hit = s.u.s.p + k;
    jlist *l = jlist_new(r, at, 3);
    if (!l)
        return -1;
    if (!hit) {
        l->items[right ? 2 : 0] = s;
        l->items[1] = jv_str("", 0);
        l->items[right ? 0 : 2] = jv_str("", 0);
    } else {
        size_t k = (size_t)(hit - s.u.s.p);
        l->items[0] = jv_str(s.u.s.p, k);
        l->items[1] = p[0];
        l->items[2] = jv_str(s.u.s.p + k + m, n - k - m);
    }
    *out = jv_seq(l, JV_TUPLE);
    return 0;
}

static int m_partition(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return partition(r, at, s, a, false, out); }
static int m_rpartition(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return partition(r, at, s, a, true, out); }

static int remove_affix(jr *r, const jnode *at, jv s, const jargs *a, bool suffix, jv *out)
{
    JBIND(suffix ? "removesuffix" : "removeprefix", "affix");
    if (want_str(r, at, "the argument", p[0]) < 0)
        return -1;
    size_t m = p[0].u.s.n;
    *out = s;
    if (m <= s.u.s.n && memcmp(s.u.s.p + (suffix ? s.u.s.n - m : 0), p[0].u.s.p, m) == 0)
        *out = jv_str(s.u.s.p + (suffix ? 0 : m), s.u.s.n - m);
    return 0;
}

static int m_removeprefix(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return remove_affix(r, at, s, a, false, out); }
static int m_removesuffix(jr *r, const jnode *at, jv s, const jargs *a, jv *out) { return remove_affix(r, at, s, a, true, out); }

static int m_splitlines(jr *r, const jnode *at, jv s, const jargs *a, jv *out)
{
    JBIND("splitlines", "keepends");
    jvec lines = {0};
    if (jsplitlines(r, at, s, p[0].kind != JV_ABSENT && jv_truthy(p[0]), &lines) < 0)
        return -1;
    *out = jvec_list(r, at, &lines, JV_LIST);
    return 0;
}

/* str.format: {} {0} {name} {0[key]}, conversions !s !r, and the format
 * specs templates use ([[fill]align][width][.precision][type]). */
static int apply_spec(jr *r, const jnode *at, jout *o, jv v, const char *spec, size_t n)
{
    char fill = ' ', align = 0;
    size_t i = 0;
    if (n >= 2 && strchr("<>^", spec[1]) && spec[1]) {
        fill = spec[0];
        align = spec[1];
        i = 2;
    } else if (n >= 1 && strchr("<>^", spec[0]) && spec[0]) {
        align = spec[0];
        i = 1;
    }
    int width = 0, prec = -1;
    while (i < n && spec[i] >= '0' && spec[i] <= '9' && width < 10000)
        width = width * 10 + (spec[i++] - '0');
    if (i < n && spec[i] == '.') {
        prec = 0;
        i++;
        while (i < n && spec[i] >= '0' && spec[i] <= '9' && prec < 100)
            prec = prec * 10 + (spec[i++] - '0');
    }
    char type = i < n ? spec[i++] : 0;
    if (i != n)
        return jerr(r, at, "Invalid format specifier '%.*s'", (int)n, spec);
    jv text;
    if (type == 'f' || type == 'e' || type == 'g' || type == 'd' || type == '%') {
        char fmt[16];
        if (type == 'd')
            snprintf(fmt, sizeof fmt, "%%d");
        else
            snprintf(fmt, sizeof fmt, "%%.%d%c", prec < 0 ? 6 : prec, type == '%' ? 'f' : type);
        jv args = v;
        if (type == '%' && jv_is_num(v)) {
            jv hundred;
            if (jv_binop(r, at, OP_MUL, v, jv_float(100.0), &hundred) < 0)
                return -1;
            args = hundred;
        }
        jv f = jv_str(fmt, strlen(fmt));
        if (jstr_format(r, at, f, args, &text) < 0)
            return -1;
        if (type == '%') {
            jout t = {0};
            if (jout_put(r, at, &t, text.u.s.p, text.u.s.n) < 0 || jout_put(r, at, &t, "%", 1) < 0)
                return -1;
            text = jv_str(t.p, t.n);
        }
    } else if (type == 0 || type == 's') {
        if (jv_to_str(r, at, v, &text) < 0)
            return -1;
        if (prec >= 0 && jv_slice(r, at, text, jv_none(), jv_int(prec), jv_none(), &text) < 0)
            return -1;
    } else {
        return jerr(r, at, "Unknown format code '%c'", type);
    }
    size_t len = jutf8_len(text.u.s.p, text.u.s.n);
    size_t padn = width > 0 && (size_t)width > len ? (size_t)width - len : 0;
    if (!align)
        align = jv_is_num(v) && v.kind != JV_BOOL ? '>' : '<';
    size_t left = align == '<' ? 0 : align == '>' ? padn : padn / 2;
    for (size_t k = 0; k < left; k++)
        if (jout_put(r, at, o, &fill, 1) < 0)
            return -1;
    if (jout_put(r, at, o, text.u.s.p, text.u.s.n) < 0)
        return -1;
    for (size_t k = left; k < padn; k++)
        if (jout_put(r, at, o, &fill, 1) < 0)
            return -1;
    return 0;
}

static int m_format(jr *r, const jnode *at, jv s, const jargs *a, jv *out)
{
    jout o = {0};
    const char *p = s.u.s.p;
    size_t n = s.u.s.n, auto_idx = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '}' ) {
            if (i + 1 < n && p[i + 1] == '}')
                i++;
            else
                return jerr(r, at, "Single '}' encountered in format string");
            if (jout_put(r, at, &o, "}", 1) < 0)
                return -1;
            continue;
        }
        if (c != '{') {
            if (jout_put(r, at, &o, &c, 1) < 0)
                return -1;
            continue;
        }
        if (i + 1 < n && p[i + 1] == '{') {
            i++;
            if (jout_put(r, at, &o, "{", 1) < 0)
                return -1;
            continue;
        }
        size_t close = i + 1;
        while (close < n && p[close] != '}')
            close++;
        if (close >= n)
            return jerr(r, at, "Single '{' encountered in format string");
        const char *f = p + i + 1;
        size_t fl = close - i - 1, name_len = 0;
        while (name_len < fl && f[name_len] != '!' && f[name_len] != ':' && f[name_len] != '[' &&
               f[name_len] != '.')
            name_len++;
        jv v;
        if (name_len == 0) {
            if (auto_idx >= a->npos)
                return jerr(r, at, "Replacement index %zu out of range for positional args tuple", auto_idx);
            v = a->pos[auto_idx++];
        } else if (f[0] >= '0' && f[0] <= '9') {
            size_t idx = 0;
            for (size_t k = 0; k < name_len && idx < 1000000; k++)
                idx = idx * 10 + (size_t)(f[k] - '0');
            if (idx >= a->npos)
                return jerr(r, at, "Replacement index %zu out of range for positional args tuple", idx);
            v = a->pos[idx];
        } else {
            size_t k;
            for (k = 0; k < a->nkw; k++)
                if (strlen(a->kw[k].name) == name_len && !memcmp(a->kw[k].name, f, name_len))
                    break;
            if (k == a->nkw)
                return jerr(r, at, "format(): no argument named '%.*s'", (int)name_len, f);
            v = a->kw[k].v;
        }
        size_t k = name_len;
        while (k < fl && f[k] == '[') {
            size_t e = k + 1;
            while (e < fl && f[e] != ']')
                e++;
            if (e >= fl)
                return jerr(r, at, "Missing ']' in format string");
            jv key = jv_str(f + k + 1, e - k - 1);
            bool digits = e > k + 1;
            int64_t idx = 0;
            for (size_t d = k + 1; d < e && digits; d++) {
                digits = f[d] >= '0' && f[d] <= '9' && idx < 100000000;
                idx = idx * 10 + (f[d] - '0');
            }
            if (jv_getitem(r, at, v, digits ? jv_int(idx) : key, &v) < 0)
                return -1;
            k = e + 1;
        }
        if (k < fl && f[k] == '.')
            return jerr(r, at, "format(): attribute lookups in fields are not allowed (sandbox)");
        char conv = 0;
        if (k + 1 < fl && f[k] == '!') {
            conv = f[k + 1];
            k += 2;
        }
        const char *spec = k < fl && f[k] == ':' ? f + k + 1 : f + fl;
        if (conv == 'r') {
            jout t = {0};
            if (jv_write_repr(r, at, &t, v) < 0)
                return -1;
            v = jv_str(t.p, t.n);
        } else if (conv == 's' || conv == 'a') {
            if (jv_to_str(r, at, v, &v) < 0)
                return -1;
        }
        if (apply_spec(r, at, &o, v, spec, (size_t)(f + fl - spec)) < 0)
            return -1;
        i = close;
    }
    *out = jv_str(o.p ? o.p : "", o.n);
    return 0;
}

/* ---- dict, list --------------------------------------------------------- */

static int m_get(jr *r, const jnode *at, jv d, const jargs *a, jv *out)
{
    JBIND("get", "key", "default");
    if (p[0].kind == JV_ABSENT)
        return jerr(r, at, "get expected at least 1 argument, got 0");
    if (!jdict_get(d.u.d, p[0], out))
        *out = p[1].kind == JV_ABSENT ? jv_none() : p[1];
    return 0;
}

static int dict_view(jr *r, const jnode *at, jv d, const jargs *a, int which, jv *out)
{
    if (jno_args(r, at, which == 0 ? "keys" : which == 1 ? "values" : "items", a) < 0)
        return -1;
    jlist *l = which == 2 ? jdict_pairs(r, at, d.u.d, NULL) : jlist_new(r, at, d.u.d->n);
    if (!l)
        return -1;
    for (size_t i = 0; which < 2 && i < d.u.d->n; i++)
        l->items[i] = which == 0 ? d.u.d->keys[i] : d.u.d->vals[i];
    *out = jv_seq(l, JV_LIST);
    return 0;
}

static int m_keys(jr *r, const jnode *at, jv d, const jargs *a, jv *out) { return dict_view(r, at, d, a, 0, out); }
static int m_values(jr *r, const jnode *at, jv d, const jargs *a, jv *out) { return dict_view(r, at, d, a, 1, out); }
static int m_items(jr *r, const jnode *at, jv d, const jargs *a, jv *out) { return dict_view(r, at, d, a, 2, out); }

static int m_copy(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    if (jno_args(r, at, "copy", a) < 0)
        return -1;
    *out = v; /* values are immutable here: sharing is a copy */
    return 0;
}

static int m_count_seq(jr *r, const jnode *at, jv l, const jargs *a, jv *out)
{
    JBIND("count", "value");
    int64_t count = 0;
    for (size_t i = 0; i < l.u.l->n; i++) {
        bool eq;
        if (jv_eq(r, at, l.u.l->items[i], p[0], &eq) < 0)
            return -1;
        count += eq;
    }
    *out = jv_int(count);
    return 0;
}

static int m_index_seq(jr *r, const jnode *at, jv l, const jargs *a, jv *out)
{
    JBIND("index", "value");
    for (size_t i = 0; i < l.u.l->n; i++) {
        bool eq;
        if (jv_eq(r, at, l.u.l->items[i], p[0], &eq) < 0)
            return -1;
        if (eq) {
            *out = jv_int((int64_t)i);
            return 0;
        }
    }
    return jerr(r, at, "the value is not in the list");
}

static int m_refused(jr *r, const jnode *at, jv v, const jargs *a, jv *out)
{
    (void)v;
    (void)a;
    (void)out;
    return jerr(r, at, "the sandbox is immutable");
}

/* ---- loop --------------------------------------------------------------- */

static int m_cycle(jr *r, const jnode *at, jv l, const jargs *a, jv *out)
{
    if (a->npos == 0)
        return jerr(r, at, "no items for cycling given");
    *out = a->pos[l.u.loop->i % a->npos];
    return 0;
}

static int m_changed(jr *r, const jnode *at, jv l, const jargs *a, jv *out)
{
    jlist *now = jlist_new(r, at, a->npos);
    if (!now)
        return -1;
    if (a->npos)
        memcpy(now->items, a->pos, a->npos * sizeof(jv));
    jv v = jv_seq(now, JV_TUPLE);
    jloop *loop = l.u.loop;
    bool same = false;
    if (loop->changed_last.kind != JV_ABSENT && jv_eq(r, at, loop->changed_last, v, &same) < 0)
        return -1;
    *out = jv_bool(!same);
    loop->changed_last = v;
    return 0;
}

/* ---- method tables ------------------------------------------------------ */

static const jbuiltin str_methods[] = {
    {"capitalize", m_capitalize, false, false}, {"center", m_center, false, false},
    {"count", m_count_str, false, false},       {"endswith", m_endswith, false, false},
    {"find", m_find, false, false},             {"format", m_format, false, false},
    {"index", m_index_str, false, false},       {"isalnum", m_isalnum, false, false},
    {"isalpha", m_isalpha, false, false},       {"isdecimal", m_isdigit, false, false},
    {"isdigit", m_isdigit, false, false},       {"islower", m_islower, false, false},
    {"isnumeric", m_isdigit, false, false},     {"isspace", m_isspace, false, false},
    {"isupper", m_isupper, false, false},       {"join", m_join, false, false},
    {"ljust", m_ljust, false, false},           {"lower", m_lower, false, false},
    {"lstrip", m_lstrip, false, false},         {"partition", m_partition, false, false},
    {"removeprefix", m_removeprefix, false, false}, {"removesuffix", m_removesuffix, false, false},
    {"replace", m_replace, false, false},       {"rfind", m_rfind, false, false},
    {"rindex", m_rindex, false, false},         {"rjust", m_rjust, false, false},
    {"rpartition", m_rpartition, false, false}, {"rsplit", m_rsplit, false, false},
    {"rstrip", m_rstrip, false, false},         {"split", m_split, false, false},
    {"splitlines", m_splitlines, false, false}, {"startswith", m_startswith, false, false},
    {"strip", m_strip, false, false},           {"title", m_title, false, false},
    {"upper", m_upper, false, false},           {"zfill", m_zfill, false, false},
};

static const jbuiltin dict_methods[] = {
    {"clear", m_refused, true, false}, {"copy", m_copy, false, false},     {"get", m_get, false, false},
    {"items", m_items, false, false},  {"keys", m_keys, false, false},     {"pop", m_refused, true, false},
    {"popitem", m_refused, true, false}, {"setdefault", m_refused, true, false}, {"update", m_refused, true, false},
    {"values", m_values, false, false},
};

static const jbuiltin list_methods[] = {
    {"append", m_refused, true, false}, {"clear", m_refused, true, false},  {"copy", m_copy, false, false},
    {"count", m_count_seq, false, false}, {"extend", m_refused, true, false}, {"index", m_index_seq, false, false},
    {"insert", m_refused, true, false}, {"pop", m_refused, true, false},    {"remove", m_refused, true, false},
    {"reverse", m_refused, true, false}, {"sort", m_refused, true, false},
};

static const jbuiltin tuple_methods[] = {
    {"count", m_count_seq, false, false},
    {"index", m_index_seq, false, false},
};

static const jbuiltin loop_methods[] = {
    {"changed", m_changed, false, false},
    {"cycle", m_cycle, false, false},
};

static const jbuiltin *in_table(const jbuiltin *t, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(t[i].name) == len && memcmp(t[i].name, name, len) == 0)
            return &t[i];
    return NULL;
}

#define TABLE(t) t, sizeof t / sizeof t[0]

const jbuiltin *jfind_method(jv v, const char *name, size_t n)
{
    switch (v.kind) {
    case JV_STR: return in_table(TABLE(str_methods), name, n);
    case JV_DICT: return in_table(TABLE(dict_methods), name, n);
    case JV_LIST: return in_table(TABLE(list_methods), name, n);
    case JV_TUPLE: return in_table(TABLE(tuple_methods), name, n);
    case JV_LOOP: return in_table(TABLE(loop_methods), name, n);
    default: return NULL;
    }
}

/* ---- globals ------------------------------------------------------------ */

/* jinja2's sandbox caps range() */
#define MAX_RANGE 100000

static int g_range(jr *r, const jnode *at, jv self, const jargs *a, jv *out)
{
    (void)self;
    int64_t v[3] = {0, 0, 1};
    if (a->nkw)
        return jerr(r, at, "range() takes no keyword arguments");
    if (a->npos < 1 || a->npos > 3)
        return jerr(r, at, "range expected 1 to 3 arguments, got %zu", a->npos);
    for (size_t i = 0; i < a->npos; i++)
        if (opt_int(r, at, a->pos[i], 0, &v[a->npos == 1 ? 1 : i]) < 0)
            return -1;
    if (v[2] == 0)
        return jerr(r, at, "range() arg 3 must not be zero");
    int64_t start = v[0], stop = v[1], step = v[2];
    uint64_t count = 0;
    if (step > 0 && stop > start)
        count = ((uint64_t)stop - (uint64_t)start - 1) / (uint64_t)step + 1;
    else if (step < 0 && start > stop)
        count = ((uint64_t)start - (uint64_t)stop - 1) / ((uint64_t)0 - (uint64_t)step) + 1;
    if (count > MAX_RANGE)
        return jerr(r, at, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (%d).", MAX_RANGE);
    jlist *l = jlist_new(r, at, (size_t)count);
    if (!l)
        return -1;
    for (uint64_t i = 0; i < count; i++)
        l->items[i] = jv_int(start + (int64_t)i * step);
    *out = jv_seq(l, JV_LIST);
    return 0;
}

/* namespace(...) and dict(...): mappings or pairs given positionally, then keywords. */
static int build_dict(jr *r, const jnode *at, const char *name, const jargs *a, jdict **out)
{
    jdict *d = jdict_new(r, at, 0);
    if (!d)
        return -1;
    for (size_t i = 0; i < a->npos; i++) {
        jv m = a->pos[i];
        if (m.kind == JV_DICT || m.kind == JV_NS) {
            for (size_t k = 0; k < m.u.d->n; k++)
                if (jdict_set(r, at, d, m.u.d->keys[k], m.u.d->vals[k]) < 0)
                    return -1;
            continue;
        }
        jlist pairs;
        if (jv_iterate(r, at, m, &pairs) < 0)
            return -1;
        for (size_t k = 0; k < pairs.n; k++) {
            jlist kv;
            if (jv_iterate(r, at, pairs.items[k], &kv) < 0)
                return -1;
            if (kv.n != 2)
                return jerr(r, at, "%s(): each sequence element must have 2 items", name);
            if (jdict_set(r, at, d, kv.items[0], kv.items[1]) < 0)
                return -1;
        }
    }
    for (size_t k = 0; k < a->nkw; k++)
        if (jdict_set(r, at, d, jv_cstr(a->kw[k].name), a->kw[k].v) < 0)
            return -1;
    *out = d;
    return 0;
}

static int g_namespace(jr *r, const jnode *at, jv self, const jargs *a, jv *out)
{
    (void)self;
    jdict *d;
    if (build_dict(r, at, "namespace", a, &d) < 0)
        return -1;
    *out = jv_undef();
    out->kind = JV_NS;
    out->u.d = d;
    return 0;
}

static int g_dict(jr *r, const jnode *at, jv self, const jargs *a, jv *out)
{
    (void)self;
    jdict *d;
    if (build_dict(r, at, "dict", a, &d) < 0)
        return -1;
    *out = jv_undef();
    out->kind = JV_DICT;
    out->u.d = d;
    return 0;
}

static int g_raise_exception(jr *r, const jnode *at, jv self, const jargs *a, jv *out)
{
    (void)self;
    (void)out;
    jv msg = a->npos ? a->pos[0] : jv_str("", 0);
    if (jv_to_str(r, at, msg, &msg) < 0)
        return -1;
    return jerr(r, at, "%.*s", (int)(msg.u.s.n > 400 ? 400 : msg.u.s.n), msg.u.s.p);
}

/* strftime with C-locale names (Python's default), independent of setlocale. */
static int g_strftime_now(jr *r, const jnode *at, jv self, const jargs *a, jv *out)
{
    (void)self;
    static const char *const days[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
    static const char *const months[] = {"January", "February", "March", "April", "May", "June", "July",
                                         "August", "September", "October", "November", "December"};
    const char *params[] = {"format"};
    jv p[1];
    if (jbind(r, at, "strftime_now", a, params, 1, p) < 0)
        return -1;
    if (p[0].kind != JV_STR)
        return jerr(r, at, "strftime_now() needs a format string");
    struct tm tm;
    time_t t = r->now ? (time_t)r->now : time(NULL);
    if (!(r->now ? gmtime_r(&t, &tm) : localtime_r(&t, &tm)))
        return jerr(r, at, "strftime_now(): the clock is out of range");
    jout o = {0};
    const char *f = p[0].u.s.p;
    size_t n = p[0].u.s.n;
    for (size_t i = 0; i < n; i++) {
        char buf[64];
        if (f[i] != '%' || i + 1 >= n) {
            if (jout_put(r, at, &o, f + i, 1) < 0)
                return -1;
            continue;
        }
        char c = f[++i];
        buf[0] = 0;
        switch (c) {
        case 'a': snprintf(buf, sizeof buf, "%.3s", days[tm.tm_wday]); break;
        case 'A': snprintf(buf, sizeof buf, "%s", days[tm.tm_wday]); break;
        case 'b':
        case 'h': snprintf(buf, sizeof buf, "%.3s", months[tm.tm_mon]); break;
        case 'B': snprintf(buf, sizeof buf, "%s", months[tm.tm_mon]); break;
        case 'd': snprintf(buf, sizeof buf, "%02d", tm.tm_mday); break;
        case 'e': snprintf(buf, sizeof buf, "%2d", tm.tm_mday); break;
        case 'f': snprintf(buf, sizeof buf, "000000"); break;
        case 'H': snprintf(buf, sizeof buf, "%02d", tm.tm_hour); break;
        case 'I': snprintf(buf, sizeof buf, "%02d", tm.tm_hour % 12 ? tm.tm_hour % 12 : 12); break;
        case 'j': snprintf(buf, sizeof buf, "%03d", tm.tm_yday + 1); break;
        case 'm': snprintf(buf, sizeof buf, "%02d", tm.tm_mon + 1); break;
        case 'M': snprintf(buf, sizeof buf, "%02d", tm.tm_min); break;
        case 'p': snprintf(buf, sizeof buf, "%s", tm.tm_hour < 12 ? "AM" : "PM"); break;
        case 'S': snprintf(buf, sizeof buf, "%02d", tm.tm_sec); break;
        case 'u': snprintf(buf, sizeof buf, "%d", tm.tm_wday ? tm.tm_wday : 7); break;
        case 'w': snprintf(buf, sizeof buf, "%d", tm.tm_wday); break;
        case 'y': snprintf(buf, sizeof buf, "%02d", tm.tm_year % 100); break;
        case 'Y': snprintf(buf, sizeof buf, "%d", tm.tm_year + 1900); break;
        case 'D': snprintf(buf, sizeof buf, "%02d/%02d/%02d", tm.tm_mon + 1, tm.tm_mday, tm.tm_year % 100); break;
        case 'F': snprintf(buf, sizeof buf, "%d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday); break;
        case 'T': snprintf(buf, sizeof buf, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec); break;
        case 'R': snprintf(buf, sizeof buf, "%02d:%02d", tm.tm_hour, tm.tm_min); break;
        case 'c':
            snprintf(buf, sizeof buf, "%.3s %.3s %2d %02d:%02d:%02d %d", days[tm.tm_wday], months[tm.tm_mon],
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, tm.tm_year + 1900);
            break;
        case 'x': snprintf(buf, sizeof buf, "%02d/%02d/%02d", tm.tm_mon + 1, tm.tm_mday, tm.tm_year % 100); break;
        case 'X': snprintf(buf, sizeof buf, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec); break;
        case 'Z':
        case 'z': break; /* a naive datetime has no zone */
        case '%': snprintf(buf, sizeof buf, "%%"); break;
        default: snprintf(buf, sizeof buf, "%%%c", c); break;
        }
        if (jout_puts(r, at, &o, buf) < 0)
            return -1;
    }
    *out = jv_str(o.p ? o.p : "", o.n);
    return 0;
}

static const jbuiltin globals[] = {
    {"dict", g_dict, false, false},
    {"namespace", g_namespace, false, false},
    {"raise_exception", g_raise_exception, false, false},
    {"range", g_range, false, false},
    {"strftime_now", g_strftime_now, false, false},
};

const jbuiltin *jfind_global(const char *name)
{
    return in_table(TABLE(globals), name, strlen(name));
}
