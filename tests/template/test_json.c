/* The chat layer's JSON: strict parsing with positions in errors, bounded
 * depth and size, Python's number and duplicate-key rules, and output
 * byte-identical to Python's json.dumps (ensure_ascii both ways, indent,
 * separators, sort_keys). */
#include <math.h>

#include "harness.h"
#include "tt_util.h"

static cf_json *parse(const char *s, cf_err *err)
{
    cf_json *j = NULL;
    if (cf_json_parse(s, strlen(s), NULL, &j, err) < 0)
        return NULL;
    return j;
}

static void roundtrip(const char *in, const cf_json_dump_opts *o, const char *expected)
{
    cf_err err;
    cf_json *j = parse(in, &err);
    CHECKF(j != NULL, "%s: %s", in, err.msg);
    if (!j)
        return;
    char *out = cf_json_dump(j, o, NULL);
    CHECKF(out && strcmp(out, expected) == 0, "%s:\n  expected %s\n  got      %s", in, expected, out);
    free(out);
    cf_json_free(j);
}

static void bad(const char *in, const char *where)
{
    cf_err err = {.msg = ""};
    cf_json *j = parse(in, &err);
    CHECKF(j == NULL, "%s: parsed", in);
    CHECKF(strstr(err.msg, where) != NULL, "%s: expected '%s' in '%s'", in, where, err.msg);
    cf_json_free(j);
}

static void test_dumps(void)
{
    /* json.dumps(x, ensure_ascii=False) */
    roundtrip("{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}", NULL,
              "{\"a\": 1, \"b\": [true, false, null], \"c\": {\"d\": \"e\"}}");
    roundtrip("[1.0, 0.5, 1e16, 1e-5, 0.0001, 123456789.125, -0.0, 3.14159, 1E+2, 2.5e-10]", NULL,
              "[1.0, 0.5, 1e+16, 1e-05, 0.0001, 123456789.125, -0.0, 3.14159, 100.0, 2.5e-10]");
    roundtrip("[9223372036854775807, -9223372036854775808, 9223372036854775808]", NULL,
              "[9223372036854775807, -9223372036854775808, 9.223372036854776e+18]");
    roundtrip("[NaN, Infinity, -Infinity]", NULL, "[NaN, Infinity, -Infinity]");
    roundtrip("\"\\u00e9\\u4f60\\ud83e\\udd99 \\\" \\\\ \\/ \\b\\f\\n\\r\\t \\u0001 \\u007f\"", NULL,
              "\"\xC3\xA9\xE4\xBD\xA0\xF0\x9F\xA6\x99 \\\" \\\\ / \\b\\f\\n\\r\\t \\u0001 \x7f\"");
    cf_json_dump_opts ascii = {-1, NULL, NULL, true, false};
    roundtrip("\"\xC3\xA9\xE4\xBD\xA0\xF0\x9F\xA6\x99\"", &ascii, "\"\\u00e9\\u4f60\\ud83e\\udd99\"");
    cf_json_dump_opts indent = {2, NULL, NULL, false, false};
    roundtrip("{\"a\": [1, {\"b\": []}, {}], \"c\": 2}", &indent,
              "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    },\n    {}\n  ],\n  \"c\": 2\n}");
    cf_json_dump_opts zero = {0, NULL, NULL, false, false};
    roundtrip("[1, [2]]", &zero, "[\n1,\n[\n2\n]\n]");
    cf_json_dump_opts compact = {-1, ",", ":", false, true};
    roundtrip("{\"b\": 1, \"a\": [1, 2], \"B\": 0}", &compact, "{\"B\":0,\"a\":[1,2],\"b\":1}");
    /* a repeated key keeps its first place and its last value, as a Python dict */
    roundtrip("{\"a\": 1, \"b\": 2, \"a\": 3, \"c\": 4, \"b\": 5}", NULL, "{\"a\": 3, \"b\": 5, \"c\": 4}");
    roundtrip("  [ ]  ", NULL, "[]");
    roundtrip("\xEF\xBB\xBF{}", NULL, "{}"); /* a byte-order mark is skipped */
    roundtrip("\"\\ud800x\"", NULL, "\"\xEF\xBF\xBDx\""); /* a lone surrogate */
}

static void test_errors(void)
{
    bad("", "line 1, column 1 (byte 0): unexpected end");
    bad("[1, 2", "byte 5");
    bad("[1 2]", "line 1, column 4 (byte 3): expected ',' or ']'");
    bad("{\"a\" 1}", "expected ':'");
    bad("{a: 1}", "expected a string key");
    bad("{\"a\": 1,}", "expected a string key");
    bad("[1,]", "expected a value");
    bad("\"abc", "unterminated string");
    bad("\"a\nb\"", "control character");
    bad("\"\\x41\"", "invalid escape");
    bad("\"\\u12g4\"", "invalid \\u escape");
    bad("01", "leading zeros");
    bad("1.", "invalid number");
    bad("-", "invalid number");
    bad("1e", "invalid number");
    bad("tru", "expected a value");
    bad("[1] 2", "extra data");
    bad("\"\xff\"", "invalid UTF-8");
    bad("\"\xc3\"", "invalid UTF-8");
    bad("[\n  1,\n  oops\n]", "line 3, column 3");
    bad("\"\xC3\xA9\" x", "line 1, column 5"); /* columns count characters */
}

static void test_limits(void)
{
    cf_err err;
    char deep[2000];
    for (int i = 0; i < 1000; i++) {
        deep[i] = '[';
        deep[1999 - i] = ']';
    }
    cf_json *j = NULL;
    CHECK(cf_json_parse(deep, sizeof deep, NULL, &j, &err) < 0 && strstr(err.msg, "nested too deeply"));
    cf_json_limits lim = {0, 2000};
    CHECK(cf_json_parse(deep, sizeof deep, &lim, &j, &err) == 0);
    cf_json_free(j);
    lim = (cf_json_limits){10, 0};
    CHECK(cf_json_parse("[1, 2, 3, 4, 5]", 15, &lim, &j, &err) < 0 && strstr(err.msg, "over the limit"));
    /* many members: duplicates found in n log n */
    size_t n = 200000;
    const size_t cap = n * 24 + 16;
    char *big = malloc(cap), *p = big;
    CHECK(big != NULL);
    if (!big)
        return;
    *p++ = '{';
    for (size_t i = 0; i < n; i++)
        p += snprintf(p, cap - (size_t)(p - big), "%s\"k%zu\": %zu", i ? ", " : "", i % (n / 2), i);
    *p++ = '}';
    CHECK(cf_json_parse(big, (size_t)(p - big), NULL, &j, &err) == 0 && j && j->n == n / 2);
    CHECK(j && cf_json_get(j, "k7")->i == (int64_t)(n / 2 + 7));
    cf_json_free(j);
    free(big);
}

static void test_builders(void)
{
    cf_json *o = cf_json_object();
    CHECK(cf_json_set(o, "role", 4, cf_json_string("user", 4)) == 0);
    CHECK(cf_json_set(o, "n", 1, cf_json_int(3)) == 0);
    CHECK(cf_json_set(o, "role", 4, cf_json_string("x\0y", 3)) == 0);
    cf_json *arr = cf_json_array();
    CHECK(cf_json_push(arr, cf_json_float(0.1)) == 0 && cf_json_push(arr, cf_json_bool(true)) == 0);
    CHECK(cf_json_push(arr, cf_json_null()) == 0);
    CHECK(cf_json_set(o, "a", 1, arr) == 0);
    CHECK(cf_json_push(o, cf_json_null()) < 0); /* not an array: the value is freed */
    cf_json *copy = cf_json_copy(o);
    char *out = cf_json_dump(copy, NULL, NULL);
    CHECKF(out && strcmp(out, "{\"role\": \"x\\u0000y\", \"n\": 3, \"a\": [0.1, true, null]}") == 0, "%s", out);
    free(out);
    cf_json_free(copy);
    cf_json_free(o);
    char buf[32];
    cf_json_format_double(buf, 1.0 / 3, false);
    CHECK(strcmp(buf, "0.3333333333333333") == 0);
    cf_json_format_double(buf, 1e22, false);
    CHECK(strcmp(buf, "1e+22") == 0);
    cf_json_format_double(buf, 5e-324, false);
    CHECK(strcmp(buf, "5e-324") == 0);
    cf_json_format_double(buf, -INFINITY, false);
    CHECK(strcmp(buf, "-inf") == 0);
    cf_json_format_double(buf, 1234567890123456.0, false);
    CHECK(strcmp(buf, "1234567890123456.0") == 0);
}

int main(void)
{
    test_dumps();
    test_errors();
    test_limits();
    test_builders();
    return test_summary("template-json");
}
