/* Python's string operations that filters and methods share: strip with a
 * character set, case mapping (ASCII, Latin, Greek, Cyrillic, Armenian,
 * fullwidth), replace, and printf-style formatting (fmt % args). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja_impl.h"

/* ---- case mapping ------------------------------------------------------- */

/* Ranges where upper and lower case alternate (even = upper). */
static bool alternating(uint32_t c)
{
    return (c >= 0x100 && c <= 0x12F) || (c >= 0x132 && c <= 0x137) || (c >= 0x14A && c <= 0x177) ||
           (c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF) || (c >= 0x4D0 && c <= 0x52F) ||
           (c >= 0x1E00 && c <= 0x1E95) || (c >= 0x1EA0 && c <= 0x1EFF);
}

/* Ranges where they alternate the other way (odd = upper). */
static bool alternating_odd(uint32_t c)
{
    return (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E) || (c >= 0x4C1 && c <= 0x4CE);
}

/* The Latin digraphs (DŽ Dž dž, LJ Lj lj, NJ Nj nj, DZ Dz dz): the first of
 * their group of three, or 0. */
static uint32_t digraph(uint32_t c)
{
    if (c >= 0x1C4 && c <= 0x1CC)
        return 0x1C4 + (c - 0x1C4) / 3 * 3;
    if (c >= 0x1F1 && c <= 0x1F3)
        return 0x1F1;
    return 0;
}

static uint32_t to_lower(uint32_t c)
{
    if (digraph(c))
        return digraph(c) + 2;
    if (c < 0x80)
        return c >= 'A' && c <= 'Z' ? c + 32 : c;
    if ((c >= 0xC0 && c <= 0xDE && c != 0xD7) || (c >= 0x391 && c <= 0x3AB && c != 0x3A2) ||
        (c >= 0x410 && c <= 0x42F) || (c >= 0xFF21 && c <= 0xFF3A))
        return c + 0x20;
    if (c >= 0x400 && c <= 0x40F)
        return c + 0x50;
    if (c >= 0x531 && c <= 0x556)
        return c + 0x30;
    if (c == 0x386)
        return 0x3AC;
    if (c >= 0x388 && c <= 0x38A)
        return c + 0x25;
    if (c == 0x38C)
        return 0x3CC;
    if (c == 0x38E || c == 0x38F)
        return c + 0x3F;
    if (c == 0x178)
        return 0xFF;
    if (c == 0x130)
        return 'i';
    if (alternating(c))
        return c | 1;
    if (alternating_odd(c) && (c & 1))
        return c + 1;
    return c;
}

static uint32_t to_upper(uint32_t c)
{
    if (digraph(c))
        return digraph(c);
    if (c < 0x80)
        return c >= 'a' && c <= 'z' ? c - 32 : c;
    if ((c >= 0xE0 && c <= 0xFE && c != 0xF7) || (c >= 0x3B1 && c <= 0x3CB && c != 0x3C2) ||
        (c >= 0x430 && c <= 0x44F) || (c >= 0xFF41 && c <= 0xFF5A))
        return c - 0x20;
    if (c == 0x3C2)
        return 0x3A3;
    if (c >= 0x450 && c <= 0x45F)
        return c - 0x50;
    if (c >= 0x561 && c <= 0x586)
        return c - 0x30;
    if (c == 0x3AC)
        return 0x386;
    if (c >= 0x3AD && c <= 0x3AF)
        return c - 0x25;
    if (c == 0x3CC)
        return 0x38C;
    if (c == 0x3CD || c == 0x3CE)
        return c - 0x3F;
    if (c == 0xFF)
        return 0x178;
    if (c == 0xB5)
        return 0x39C;
    if (c == 0x131)
        return 'I';
    if (alternating(c))
        return c & ~(uint32_t)1;
    if (alternating_odd(c) && !(c & 1))
        return c - 1;
    return c;
}

static uint32_t to_title(uint32_t c)
{
    return digraph(c) ? digraph(c) + 1 : to_upper(c);
}

/* Mappings to more than one character (Python's full case mapping):
 * ß and the Latin ligatures upper-case to letter pairs, İ lower-cases to
 * i + combining dot.  Returns the bytes written to out, or 0. */
static size_t expand(uint32_t c, int how, char out[8])
{
    static const struct {
        uint32_t c;
        const char *upper, *title;
    } ups[] = {
        {0xDF, "SS", "Ss"}, {0xFB00, "FF", "Ff"}, {0xFB01, "FI", "Fi"}, {0xFB02, "FL", "Fl"},
        {0xFB03, "FFI", "Ffi"}, {0xFB04, "FFL", "Ffl"}, {0xFB05, "ST", "St"}, {0xFB06, "ST", "St"},
    };
    if (how == 'l') {
        if (c != 0x130)
            return 0;
        memcpy(out, "i\xCC\x87", 3);
        return 3;
    }
    for (size_t i = 0; i < sizeof ups / sizeof ups[0]; i++)
        if (ups[i].c == c) {
            const char *s = how == 'u' ? ups[i].upper : ups[i].title;
            size_t n = strlen(s);
            memcpy(out, s, n);
            return n;
        }
    return 0;
}

static bool cased(uint32_t c)
{
    return to_lower(c) != c || to_upper(c) != c || c == 0xDF;
}

/* The jinja2 title filter's word starts: after - whitespace ( { [ < */
static bool title_break(uint32_t c)
{
    return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || jpy_isspace(c);
}

int jstr_case(jr *r, const jnode *at, jv s, int how, jv *out)
{
    jout o = {0};
    bool prev_cased = false, first = true, after_break = true;
    for (size_t i = 0; i < s.u.s.n;) {
        uint32_t c;
        size_t len = cf_utf8_decode_esc(s.u.s.p + i, s.u.s.n - i, &c);
        uint32_t m;
        int to = 'l'; /* what this character becomes: 'l', 'u' or 't'itle */
        switch (how) {
        case 'l': to = 'l'; break;
        case 'u': to = 'u'; break;
        case 'c': to = first ? 't' : 'l'; break;
        case 't': /* str.title(): title case after an uncased char, lower after a cased one */
            to = prev_cased ? 'l' : 't';
            prev_cased = cased(c);
            break;
        case 'T': /* the title filter: words split at - whitespace ( { [ < */
            to = after_break ? 'u' : 'l';
            after_break = title_break(c);
            break;
        }
        first = false;
        char buf[8];
        const char *piece = buf;
        size_t bl = expand(c, to, buf);
        if (!bl) {
            m = to == 'l' ? to_lower(c) : to == 'u' ? to_upper(c) : to_title(c);
            if (m == c) {
                piece = s.u.s.p + i;
                bl = len;
            } else {
                bl = cf_utf8_encode_esc(m, buf);
            }
        }
        if (jout_put(r, at, &o, piece, bl) < 0)
            return -1;
        i += len;
    }
    *out = jv_str(o.p ? o.p : "", o.n);
    return 0;
}

/* ---- strip, replace ----------------------------------------------------- */

static int cmp_cp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* strip's character set, decoded and sorted once. */
typedef struct cpset {
    uint32_t *cp;
    size_t n;
    bool whitespace; /* no set given: Python's whitespace */
} cpset;

static bool in_set(uint32_t c, const cpset *set)
{
    if (set->whitespace)
        return jpy_isspace(c);
    return bsearch(&c, set->cp, set->n, sizeof c, cmp_cp) != NULL;
}

int jstr_strip(jr *r, const jnode *at, jv s, jv chars, int which, jv *out)
{
    if (chars.kind != JV_STR && chars.kind != JV_NONE && chars.kind != JV_ABSENT)
        return jerr(r, at, "strip arg must be None or str");
    cpset set = {NULL, 0, chars.kind != JV_STR};
    if (!set.whitespace) {
        if (!(set.cp = jalloc(r, at, (chars.u.s.n + 1) * sizeof *set.cp)))
            return -1;
        for (size_t i = 0; i < chars.u.s.n;)
            i += cf_utf8_decode_esc(chars.u.s.p + i, chars.u.s.n - i, &set.cp[set.n++]);
        qsort(set.cp, set.n, sizeof *set.cp, cmp_cp);
    }
    const char *p = s.u.s.p;
    size_t a = 0, b = s.u.s.n;
    if (which & 1)
        while (a < b) {
            uint32_t c;
            size_t len = cf_utf8_decode_esc(p + a, b - a, &c);
            if (!in_set(c, &set))
                break;
            a += len;
        }
    if (which & 2)
        while (b > a) {
            size_t k = b - 1;
            while (k > a && ((unsigned char)p[k] & 0xC0) == 0x80 && b - k < 4)
                k--;
            uint32_t c;
            if (cf_utf8_decode_esc(p + k, b - k, &c) != b - k) { /* a malformed tail byte */
                k = b - 1;
                cf_utf8_decode_esc(p + k, 1, &c);
            }
            if (!in_set(c, &set))
                break;
            b = k;
        }
    *out = jv_str(p + a, b - a);
    return jcharge(r, at, (s.u.s.n - (b - a)) >> 5);
}

int jstr_replace(jr *r, const jnode *at, jv s, jv old, jv new_, int64_t count, jv *out)
{
    jout o = {0};
    const char *p = s.u.s.p;
    size_t n = s.u.s.n, i = 0;
    int64_t done = 0;
    if (jcharge(r, at, n >> 5) < 0)
        return -1;
    if (old.u.s.n == 0) { /* Python inserts between every character */
        while (count < 0 || done < count) {
            if (jout_put(r, at, &o, new_.u.s.p, new_.u.s.n) < 0)
                return -1;
            done++;
            if (i >= n)
                break;
            uint32_t c;
            size_t len = cf_utf8_decode_esc(p + i, n - i, &c);
            if (jout_put(r, at, &o, p + i, len) < 0)
                return -1;
            i += len;
        }
    } else {
        while (count < 0 || done < count) {
            const char *hit = memmem(p + i, n - i, old.u.s.p, old.u.s.n);
            if (!hit)
                break;
            size_t k = (size_t)(hit - p);
            if (jout_put(r, at, &o, p + i, k - i) < 0 || jout_put(r, at, &o, new_.u.s.p, new_.u.s.n) < 0)
                return -1;
            i = k + old.u.s.n;
            done++;
        }
    }
    if (done == 0) {
        *out = s;
        return 0;
    }
    if (jout_put(r, at, &o, p + i, n - i) < 0)
        return -1;
    *out = jv_str(o.p ? o.p : "", o.n);
    return 0;
}

/* ---- printf-style formatting -------------------------------------------- */

static int pad(jr *r, const jnode *at, jout *o, const char *s, size_t n, int width, bool left,
               char fill)
{
    size_t chars = jutf8_len(s, n);
    size_t padn = width > 0 && (size_t)width > chars ? (size_t)width - chars : 0;
    if (!left)
        for (size_t i = 0; i < padn; i++)
            if (jout_put(r, at, o, &fill, 1) < 0)
                return -1;
    if (jout_put(r, at, o, s, n) < 0)
        return -1;
    if (left)
        for (size_t i = 0; i < padn; i++)
            if (jout_put(r, at, o, " ", 1) < 0)
                return -1;
    return 0;
}

static int format_one(jr *r, const jnode *at, jout *o, char conv, const char *flags, int width,
                      int prec, jv v)
{
    bool left = strchr(flags, '-') != NULL, zero = strchr(flags, '0') != NULL && !left;
    char num[128], spec[32];
    if (conv == 's' || conv == 'r') {
        jout t = {0};
        if ((conv == 's' ? jv_write_str(r, at, &t, v) : jv_write_repr(r, at, &t, v)) < 0)
            return -1;
        size_t n = t.n;
        if (prec >= 0) { /* precision cuts to that many characters */
            size_t *offs, count;
            if (jutf8_offsets(r, at, t.p ? t.p : "", t.n, &offs, &count) < 0)
                return -1;
            if ((size_t)prec < count)
                n = offs ? offs[prec] : (size_t)prec;
        }
        return pad(r, at, o, t.p ? t.p : "", n, width, left, ' ');
    }
    if (conv == 'c') {
        char buf[4];
        if (v.kind == JV_STR)
            return pad(r, at, o, v.u.s.p, v.u.s.n, width, left, ' ');
        if (v.kind != JV_INT)
            return jerr(r, at, "%%c requires int or char");
        return pad(r, at, o, buf, cf_utf8_encode_esc((uint32_t)v.u.i, buf), width, left, ' ');
    }
    if (!jv_is_num(v))
        return jerr(r, at, "%%%c format: a real number is required, not %s", conv, jv_type_name(v));
    snprintf(spec, sizeof spec, "%%%s%s*.*", strchr(flags, '+') ? "+" : "", strchr(flags, ' ') ? " " : "");
    size_t sl = strlen(spec);
    if (strchr("diuxXo", conv)) {
        double f = v.kind == JV_FLOAT ? v.u.f : 0;
        if (v.kind == JV_FLOAT && !isfinite(f))
            return jerr(r, at, "cannot convert float %s to integer", isnan(f) ? "NaN" : "infinity");
        long long i = v.kind == JV_FLOAT ? (long long)f : v.kind == JV_INT ? (long long)v.u.i : v.u.b;
        strcpy(spec + sl, conv == 'x' ? "llx" : conv == 'X' ? "llX" : conv == 'o' ? "llo" : "lld");
        snprintf(num, sizeof num, spec, 0, prec < 0 ? 1 : prec, i);
    } else {
        double f = v.kind == JV_FLOAT ? v.u.f : v.kind == JV_INT ? (double)v.u.i : v.u.b;
        spec[sl] = conv;
        spec[sl + 1] = 0;
        snprintf(num, sizeof num, spec, 0, prec < 0 ? 6 : prec > 50 ? 50 : prec, f);
    }
    if (zero && width > 0 && (size_t)width > strlen(num)) {
        /* zero padding goes after the sign */
        size_t sign = num[0] == '-' || num[0] == '+' || num[0] == ' ';
        if (sign && jout_put(r, at, o, num, 1) < 0)
            return -1;
        return pad(r, at, o, num + sign, strlen(num) - sign, width - (int)sign, false, '0');
    }
    return pad(r, at, o, num, strlen(num), width, left, ' ');
}

int jstr_format(jr *r, const jnode *at, jv fmt, jv args, jv *out)
{
    jout o = {0};
    const char *p = fmt.u.s.p;
    size_t n = fmt.u.s.n, next = 0;
    bool tuple = args.kind == JV_TUPLE;
    size_t nargs = tuple ? args.u.l->n : 1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '%') {
            size_t k = i;
            while (k < n && p[k] != '%')
                k++;
            if (jout_put(r, at, &o, p + i, k - i) < 0)
                return -1;
            i = k - 1;
            continue;
        }
        if (++i >= n)
            return jerr(r, at, "incomplete format");
        jv v = jv_absent();
        if (p[i] == '(') { /* %(name)s from a mapping */
            size_t k = i + 1;
            while (k < n && p[k] != ')')
                k++;
            if (k >= n || args.kind != JV_DICT)
                return jerr(r, at, "format requires a mapping");
            if (!jdict_get_str(args.u.d, p + i + 1, k - i - 1, &v))
                return jerr(r, at, "format: no key '%.*s' in the mapping", (int)(k - i - 1), p + i + 1);
            i = k + 1;
        }
        char flags[8] = "";
        size_t nf = 0;
        while (i < n && strchr("-+ #0", p[i]) && p[i] && nf < 7)
            flags[nf++] = p[i++];
        flags[nf] = 0;
        int width = 0, prec = -1;
        while (i < n && p[i] >= '0' && p[i] <= '9' && width < 10000)
            width = width * 10 + (p[i++] - '0');
        if (i < n && p[i] == '.') {
            prec = 0;
            i++;
            while (i < n && p[i] >= '0' && p[i] <= '9' && prec < 10000)
                prec = prec * 10 + (p[i++] - '0');
        }
        if (i >= n)
            return jerr(r, at, "incomplete format");
        char conv = p[i];
        if (conv == '%') {
            if (jout_put(r, at, &o, "%", 1) < 0)
                return -1;
            continue;
        }
        if (!strchr("sridiuxXoeEfFgGc", conv) || !conv)
            return jerr(r, at, "unsupported format character '%c' (0x%x)", conv, (unsigned char)conv);
        if (v.kind == JV_ABSENT) {
            if (next >= nargs)
                return jerr(r, at, "not enough arguments for format string");
            v = tuple ? args.u.l->items[next] : args;
            next++;
        }
        if (format_one(r, at, &o, conv, flags, width, prec, v) < 0)
            return -1;
    }
    /* Python lets a value with __getitem__ (a list, a dict, Undefined) go unused */
    if (args.kind != JV_DICT && args.kind != JV_UNDEF && args.kind != JV_LIST && next < nargs)
        return jerr(r, at, "not all arguments converted during string formatting");
    *out = jv_str(o.p ? o.p : "", o.n);
    return 0;
}
