/* GBNF text -> cf_grammar.  A recursive-descent reader over the text:
 * rules, alternatives, sequences; literals become one character set per
 * code point, groups and repetitions become generated rules (x* is
 * R ::= x R | empty, x{m,n} is m copies of x then n - m nested options).
 * After reading, every referenced rule must be defined and none may be
 * left-recursive (the matcher would expand it forever). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "grammar_internal.h"
#include "unicode.h"

#define MAX_REPEAT 10000
#define MAX_ELEMS (1u << 24)

typedef struct gseq {
    cf_gelem *e;
    size_t n, cap;
} gseq;

typedef struct grule {
    char *name;
    gseq *alts;
    size_t n_alts, cap;
    bool defined;
    int ref_line, ref_col; /* where it was first used, for "undefined" */
} grule;

typedef struct parser {
    const char *text, *p;
    grule *rules;
    size_t n_rules, cap_rules;
    cf_grange *range;
    size_t n_range, cap_range;
    size_t n_elems;
    cf_err *err;
    bool oom;
} parser;

static void where(const parser *ps, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *q = ps->text; q < at; q++) {
        if (*q == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)*q & 0xc0) != 0x80) {
            (*col)++;
        }
    }
}

static int fail_at(parser *ps, const char *at, const char *what)
{
    int line, col;
    where(ps, at, &line, &col);
    return cf_fail_as(ps->err, CF_E_USAGE, "grammar: line %d, column %d: %s", line, col, what);
}

static int oom(parser *ps)
{
    ps->oom = true;
    return cf_fail_as(ps->err, CF_E_FAIL, "grammar: out of memory");
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 8;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static int seq_push(parser *ps, gseq *s, cf_gelem e)
{
    if (++ps->n_elems > MAX_ELEMS)
        return cf_fail_as(ps->err, CF_E_USAGE, "grammar: too large (over %u elements)",
                          MAX_ELEMS);
    if (!grow((void **)&s->e, &s->cap, s->n + 1, sizeof *s->e))
        return oom(ps);
    s->e[s->n++] = e;
    return 0;
}

static int rule_add_alt(parser *ps, uint32_t r, gseq *s)
{
    grule *ru = &ps->rules[r];
    if (!grow((void **)&ru->alts, &ru->cap, ru->n_alts + 1, sizeof *ru->alts))
        return oom(ps);
    ru->alts[ru->n_alts++] = *s;
    *s = (gseq){0};
    return 0;
}

/* The rule of that name, made (undefined) on first mention. */
static int rule_id(parser *ps, const char *name, size_t len, const char *at, uint32_t *id)
{
    for (size_t i = 0; i < ps->n_rules; i++)
        if (strlen(ps->rules[i].name) == len && !memcmp(ps->rules[i].name, name, len)) {
            *id = (uint32_t)i;
            return 0;
        }
    if (!grow((void **)&ps->rules, &ps->cap_rules, ps->n_rules + 1, sizeof *ps->rules))
        return oom(ps);
    grule *r = &ps->rules[ps->n_rules];
    *r = (grule){0};
    if (!(r->name = strndup(name, len)))
        return oom(ps);
    where(ps, at, &r->ref_line, &r->ref_col);
    *id = (uint32_t)ps->n_rules++;
    return 0;
}

/* A generated rule: its parent's name and a number. */
static int rule_new(parser *ps, uint32_t parent, uint32_t *id)
{
    char name[160];
    snprintf(name, sizeof name, "%.120s_%zu", ps->rules[parent].name, ps->n_rules);
    if (rule_id(ps, name, strlen(name), ps->p, id))
        return -1;
    ps->rules[*id].defined = true;
    return 0;
}

static int add_range(parser *ps, uint32_t lo, uint32_t hi)
{
    if (!grow((void **)&ps->range, &ps->cap_range, ps->n_range + 1, sizeof *ps->range))
        return oom(ps);
    ps->range[ps->n_range++] = (cf_grange){lo, hi};
    return 0;
}

/* ---- lexing -------------------------------------------------------------- */

static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_';
}

/* Spaces and comments; newlines only where the rule goes on (in groups,
 * after ::= and |). */
static void skip_space(parser *ps, bool newlines)
{
    for (;;) {
        char c = *ps->p;
        if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
            ps->p++;
        } else if (c == '#') {
            while (*ps->p && *ps->p != '\n')
                ps->p++;
        } else {
            return;
        }
    }
}

static int hex_digits(parser *ps, int n, uint32_t *cp)
{
    *cp = 0;
    for (int i = 0; i < n; i++, ps->p++) {
        char c = *ps->p;
        int v = isdigit((unsigned char)c) ? c - '0'
              : (c >= 'a' && c <= 'f')    ? c - 'a' + 10
              : (c >= 'A' && c <= 'F')    ? c - 'A' + 10
                                          : -1;
        if (v < 0)
            return fail_at(ps, ps->p, "expected a hex digit in the escape");
        *cp = *cp * 16 + (uint32_t)v;
    }
    return 0;
}

/* One code point of a literal or class, escapes decoded. */
static int read_char(parser *ps, uint32_t *cp)
{
    const char *at = ps->p;
    if (*ps->p == '\\') {
        ps->p++;
        char c = *ps->p++;
        switch (c) {
        case 'n': *cp = '\n'; return 0;
        case 'r': *cp = '\r'; return 0;
        case 't': *cp = '\t'; return 0;
        case '0': *cp = 0; return 0;
        case '\\': case '"': case '[': case ']': case '-': case '^': case '\'':
            *cp = (uint32_t)c;
            return 0;
        case 'x': return hex_digits(ps, 2, cp);
        case 'u': return hex_digits(ps, 4, cp);
        case 'U': return hex_digits(ps, 8, cp);
        default: return fail_at(ps, at, "unknown escape");
        }
    }
    size_t len = 0;
    *cp = cf_utf8_decode((const unsigned char *)ps->p, strlen(ps->p), &len);
    ps->p += len;
    return 0;
}

/* ---- the syntax ---------------------------------------------------------- */

static int parse_alternatives(parser *ps, uint32_t rule, bool nested);

static int parse_literal(parser *ps, gseq *s)
{
    const char *open = ps->p++;
    while (*ps->p != '"') {
        if (!*ps->p || *ps->p == '\n')
            return fail_at(ps, open, "unterminated string literal");
        uint32_t cp = 0; /* set by read_char when it succeeds (aarch64 gcc cannot tell) */
        if (read_char(ps, &cp) || add_range(ps, cp, cp))
            return -1;
        if (seq_push(ps, s, (cf_gelem){G_CHAR, 0, (uint32_t)ps->n_range - 1, 1}))
            return -1;
    }
    ps->p++;
    return 0;
}

static int parse_class(parser *ps, gseq *s)
{
    const char *open = ps->p++;
    bool neg = *ps->p == '^';
    if (neg)
        ps->p++;
    size_t first = ps->n_range;
    while (*ps->p != ']') {
        if (!*ps->p || *ps->p == '\n')
            return fail_at(ps, open, "unterminated character class");
        uint32_t lo = 0, hi; /* lo: as cp in parse_literal */
        if (read_char(ps, &lo))
            return -1;
        hi = lo;
        if (ps->p[0] == '-' && ps->p[1] && ps->p[1] != ']' && ps->p[1] != '\n') {
            const char *at = ++ps->p;
            if (read_char(ps, &hi))
                return -1;
            if (hi < lo)
                return fail_at(ps, at, "range ends below its start");
        }
        if (add_range(ps, lo, hi))
            return -1;
    }
    ps->p++;
    if (ps->n_range == first)
        return fail_at(ps, open, "empty character class");
    return seq_push(ps, s, (cf_gelem){G_CHAR, neg, (uint32_t)first,
                                      (uint32_t)(ps->n_range - first)});
}

static int read_count(parser *ps, unsigned long *v)
{
    const char *at = ps->p;
    if (!isdigit((unsigned char)*ps->p))
        return fail_at(ps, at, "expected a number in the repetition");
    *v = strtoul(ps->p, (char **)&ps->p, 10);
    if (*v > MAX_REPEAT)
        return fail_at(ps, at, "repetition count over 10000");
    return 0;
}

/* Items s->e[from ..] repeated min to max times (max < 0: unbounded). */
static int repeat(parser *ps, uint32_t rule, gseq *s, size_t from, long min, long max)
{
    size_t n = s->n - from;
    cf_gelem item[n ? n : 1];
    memcpy(item, s->e + from, n * sizeof *item);
    s->n = from;
    for (long i = 0; i < min; i++)
        for (size_t j = 0; j < n; j++)
            if (seq_push(ps, s, item[j]))
                return -1;
    if (max >= 0 && max == min)
        return 0;
    /* R ::= item R | empty (unbounded), or nested options */
    long opts = max < 0 ? 1 : max - min;
    uint32_t inner = UINT32_MAX;
    for (long k = 0; k < opts; k++) {
        uint32_t r;
        if (rule_new(ps, rule, &r))
            return -1;
        gseq alt = {0};
        for (size_t j = 0; j < n; j++)
            if (seq_push(ps, &alt, item[j]))
                return -1;
        uint32_t tail = max < 0 ? r : inner;
        if (tail != UINT32_MAX && seq_push(ps, &alt, (cf_gelem){G_REF, 0, tail, 0}))
            return -1;
        gseq empty = {0};
        if (rule_add_alt(ps, r, &alt) || rule_add_alt(ps, r, &empty))
            return -1;
        inner = r;
    }
    return seq_push(ps, s, (cf_gelem){G_REF, 0, inner, 0});
}

static int parse_repeat(parser *ps, uint32_t rule, gseq *s, size_t from)
{
    const char *at = ps->p;
    char c = *ps->p++;
    if (c == '*')
        return repeat(ps, rule, s, from, 0, -1);
    if (c == '+')
        return repeat(ps, rule, s, from, 1, -1);
    if (c == '?')
        return repeat(ps, rule, s, from, 0, 1);
    unsigned long min = 0, max = 0;
    skip_space(ps, false);
    if (read_count(ps, &min))
        return -1;
    skip_space(ps, false);
    long lmax = (long)min;
    if (*ps->p == ',') {
        ps->p++;
        skip_space(ps, false);
        lmax = -1;
        if (*ps->p != '}') {
            if (read_count(ps, &max))
                return -1;
            if (max < min)
                return fail_at(ps, at, "repetition maximum below its minimum");
            lmax = (long)max;
        }
        skip_space(ps, false);
    }
    if (*ps->p != '}')
        return fail_at(ps, ps->p, "expected '}' closing the repetition");
    ps->p++;
    return repeat(ps, rule, s, from, (long)min, lmax);
}

static int parse_sequence(parser *ps, uint32_t rule, gseq *s, bool nested)
{
    for (;;) {
        skip_space(ps, nested);
        const char *at = ps->p;
        size_t from = s->n;
        char c = *ps->p;
        if (c == '"') {
            if (parse_literal(ps, s))
                return -1;
        } else if (c == '[') {
            if (parse_class(ps, s))
                return -1;
        } else if (c == '.') {
            ps->p++;
            if (add_range(ps, 0, 0x10FFFF) ||
                seq_push(ps, s, (cf_gelem){G_CHAR, 0, (uint32_t)ps->n_range - 1, 1}))
                return -1;
        } else if (c == '(') {
            ps->p++;
            uint32_t r;
            if (rule_new(ps, rule, &r) || parse_alternatives(ps, r, true))
                return -1;
            skip_space(ps, true);
            if (*ps->p != ')')
                return fail_at(ps, at, "unclosed '('");
            ps->p++;
            if (seq_push(ps, s, (cf_gelem){G_REF, 0, r, 0}))
                return -1;
        } else if (name_char(c)) {
            const char *name = ps->p;
            while (name_char(*ps->p))
                ps->p++;
            const char *after = ps->p;
            skip_space(ps, false);
            if (ps->p[0] == ':' && ps->p[1] == ':' && ps->p[2] == '=')
                return fail_at(ps, name, "a new rule starts before this one's line ends "
                                         "(missing newline?)");
            ps->p = after;
            uint32_t r;
            if (rule_id(ps, name, (size_t)(after - name), name, &r) ||
                seq_push(ps, s, (cf_gelem){G_REF, 0, r, 0}))
                return -1;
        } else {
            return 0; /* the sequence ends: | ) newline or the end */
        }
        skip_space(ps, nested);
        c = *ps->p;
        if (c == '*' || c == '+' || c == '?' || c == '{')
            if (parse_repeat(ps, rule, s, from))
                return -1;
    }
}

static int parse_alternatives(parser *ps, uint32_t rule, bool nested)
{
    for (;;) {
        gseq s = {0};
        if (parse_sequence(ps, rule, &s, nested) || rule_add_alt(ps, rule, &s)) {
            free(s.e);
            return -1;
        }
        if (!nested) { /* a rule may go on with | on a later line */
            const char *eol = ps->p;
            skip_space(ps, true);
            if (*ps->p != '|')
                ps->p = eol;
        }
        if (*ps->p != '|')
            return 0;
        ps->p++;
        skip_space(ps, true);
    }
}

static int parse_rule(parser *ps)
{
    const char *name = ps->p;
    if (!name_char(*ps->p))
        return fail_at(ps, name, "expected a rule name");
    while (name_char(*ps->p))
        ps->p++;
    size_t len = (size_t)(ps->p - name);
    skip_space(ps, false);
    if (strncmp(ps->p, "::=", 3))
        return fail_at(ps, ps->p, "expected '::=' after the rule name");
    ps->p += 3;
    uint32_t r;
    if (rule_id(ps, name, len, name, &r))
        return -1;
    if (ps->rules[r].defined) {
        char msg[200];
        snprintf(msg, sizeof msg, "rule '%.*s' defined twice", (int)(len > 100 ? 100 : len), name);
        return fail_at(ps, name, msg);
    }
    ps->rules[r].defined = true;
    skip_space(ps, true);
    if (parse_alternatives(ps, r, false))
        return -1;
    if (*ps->p == ')')
        return fail_at(ps, ps->p, "')' without '('");
    if (*ps->p && *ps->p != '\n' && *ps->p != '\r')
        return fail_at(ps, ps->p, "unexpected character");
    return 0;
}

/* ---- checks and the final form -------------------------------------------- */

/* Left recursion: a rule reachable from itself through the leading,
 * possibly empty, references of its alternatives. */
static int check_left_recursion(parser *ps)
{
    size_t n = ps->n_rules;
    bool *nullable = calloc(n, 1);
    uint8_t *mark = calloc(n, 1);
    uint32_t *todo = malloc(2 * n * sizeof *todo);
    if (!nullable || !mark || !todo) {
        free(nullable), free(mark), free(todo);
        return oom(ps);
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t r = 0; r < n; r++)
            for (size_t a = 0; a < ps->rules[r].n_alts && !nullable[r]; a++) {
                gseq *s = &ps->rules[r].alts[a];
                size_t i = 0;
                while (i < s->n && s->e[i].kind == G_REF && nullable[s->e[i].a])
                    i++;
                if (i == s->n)
                    nullable[r] = changed = true;
            }
    }
    /* depth-first with an explicit stack of (rule, next edge) */
    int rc = 0;
    for (size_t start = 0; start < n && !rc; start++) {
        if (mark[start])
            continue;
        size_t depth = 0;
        todo[0] = (uint32_t)start, todo[1] = 0, depth = 1, mark[start] = 1;
        while (depth && !rc) {
            uint32_t r = todo[2 * (depth - 1)], edge = todo[2 * (depth - 1) + 1]++;
            /* edge counts (alternative, element) pairs in order */
            uint32_t next = UINT32_MAX, k = 0;
            for (size_t a = 0; a < ps->rules[r].n_alts && next == UINT32_MAX; a++) {
                gseq *s = &ps->rules[r].alts[a];
                for (size_t i = 0; i < s->n && s->e[i].kind == G_REF; i++) {
                    if (k++ == edge) {
                        next = s->e[i].a;
                        break;
                    }
                    if (!nullable[s->e[i].a])
                        break;
                }
            }
            if (next == UINT32_MAX) {
                mark[r] = 2;
                depth--;
            } else if (mark[next] == 1) {
                char msg[200];
                snprintf(msg, sizeof msg, "rule '%.100s' is left-recursive", ps->rules[next].name);
                rc = cf_fail_as(ps->err, CF_E_USAGE, "grammar: %s", msg);
            } else if (!mark[next]) {
                mark[next] = 1;
                todo[2 * depth] = next, todo[2 * depth + 1] = 0, depth++;
            }
        }
    }
    free(nullable), free(mark), free(todo);
    return rc;
}

static int finish(parser *ps, cf_grammar *g)
{
    for (size_t r = 0; r < ps->n_rules; r++)
        if (!ps->rules[r].defined)
            return cf_fail_as(ps->err, CF_E_USAGE,
                              "grammar: line %d, column %d: undefined rule '%.100s'",
                              ps->rules[r].ref_line, ps->rules[r].ref_col, ps->rules[r].name);
    uint32_t root;
    bool has_root = false;
    for (size_t r = 0; r < ps->n_rules; r++)
        if (!strcmp(ps->rules[r].name, "root"))
            root = (uint32_t)r, has_root = true;
    if (!has_root)
        return cf_fail_as(ps->err, CF_E_USAGE, "grammar: no 'root' rule");
    if (check_left_recursion(ps))
        return -1;
    size_t n_alt = 0, n_elem = 0;
    for (size_t r = 0; r < ps->n_rules; r++)
        for (size_t a = 0; a < ps->rules[r].n_alts; a++, n_alt++)
            n_elem += ps->rules[r].alts[a].n + 1;
    g->elem = malloc(n_elem * sizeof *g->elem);
    g->alt = malloc(n_alt * sizeof *g->alt);
    g->rule_alt = malloc((ps->n_rules + 1) * sizeof *g->rule_alt);
    if (!g->elem || !g->alt || !g->rule_alt)
        return oom(ps);
    size_t e = 0, k = 0;
    for (size_t r = 0; r < ps->n_rules; r++) {
        g->rule_alt[r] = (uint32_t)k;
        for (size_t a = 0; a < ps->rules[r].n_alts; a++) {
            gseq *s = &ps->rules[r].alts[a];
            g->alt[k++] = (uint32_t)e;
            if (s->n) /* an empty alternative has no array */
                memcpy(g->elem + e, s->e, s->n * sizeof *s->e);
            e += s->n;
            g->elem[e++] = (cf_gelem){G_END, 0, 0, 0};
        }
    }
    g->rule_alt[ps->n_rules] = (uint32_t)k;
    g->n_elem = n_elem;
    g->n_rule = ps->n_rules;
    g->root = root;
    g->range = ps->range;
    g->n_range = ps->n_range;
    ps->range = NULL;
    return 0;
}

int cf_grammar_parse(const char *text, cf_grammar **out, cf_err *err)
{
    *out = NULL;
    parser ps = {.text = text, .p = text, .err = err};
    cf_grammar *g = calloc(1, sizeof *g);
    int rc = g ? 0 : oom(&ps);
    while (!rc) {
        skip_space(&ps, true);
        if (!*ps.p)
            break;
        rc = parse_rule(&ps);
    }
    if (!rc)
        rc = finish(&ps, g);
    for (size_t r = 0; r < ps.n_rules; r++) {
        for (size_t a = 0; a < ps.rules[r].n_alts; a++)
            free(ps.rules[r].alts[a].e);
        free(ps.rules[r].alts);
        free(ps.rules[r].name);
    }
    free(ps.rules);
    free(ps.range);
    if (rc) {
        cf_grammar_free(g);
        return -1;
    }
    *out = g;
    return 0;
}

void cf_grammar_free(cf_grammar *g)
{
    if (!g)
        return;
    free(g->elem);
    free(g->range);
    free(g->alt);
    free(g->rule_alt);
    free(g);
}
