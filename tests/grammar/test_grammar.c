/* The GBNF reader and the matcher, with no vocabulary: grammars that read,
 * bad ones (one message naming the problem and its line and column),
 * sentences accepted and rejected, whole and as prefixes, and the fixed
 * JSON grammar, and grammars from JSON schemas (and the keywords refused). */
#include <string.h>

#include "confab/grammar.h"
#include "harness.h"

static cf_grammar *parse(const char *text)
{
    cf_grammar *g = NULL;
    cf_err err;
    CHECKF(cf_grammar_parse(text, &g, &err) == 0, "%s: %s", text, err.msg);
    return g;
}

static void yes(const cf_grammar *g, const char *s)
{
    CHECKF(g && cf_grammar_matches(g, s, strlen(s), true), "should match: '%s'", s);
}

static void no(const cf_grammar *g, const char *s)
{
    CHECKF(g && !cf_grammar_matches(g, s, strlen(s), true), "should not match: '%s'", s);
}

static void prefix(const cf_grammar *g, const char *s, bool want)
{
    CHECKF(g && cf_grammar_matches(g, s, strlen(s), false) == want, "prefix '%s': want %d", s,
           want);
}

static void check_basics(void)
{
    cf_grammar *g = parse("root ::= \"ab\" | \"c\" d\nd ::= [0-9]+ # digits\n");
    yes(g, "ab");
    yes(g, "c7");
    yes(g, "c1234");
    no(g, "c");
    no(g, "abc");
    no(g, "");
    prefix(g, "c", true);
    prefix(g, "a", true);
    prefix(g, "x", false);
    cf_grammar_free(g);

    g = parse("root ::= (\"x\" | \"y\")* \"!\"? [^a-c\\n]{2,3}\n");
    yes(g, "xyxdd");
    yes(g, "!zz");
    yes(g, "xx!d\xc3\xa9z");
    no(g, "xxa");
    no(g, "d");
    no(g, "xdddd");
    no(g, "dd\n");
    cf_grammar_free(g);

    /* newlines inside groups and after ::= and |, escapes, . */
    g = parse("root ::=\n  ( \"\\x41\" \"\\u00e9\"\n    | \"\\\"\" . \"\\\\\" )\n  | \"t\"{3}\n"
              "\n# comment line\n");
    yes(g, "A\xc3\xa9");
    yes(g, "\"\xe2\x82\xac\\");
    yes(g, "ttt");
    no(g, "tt");
    no(g, "tttt");
    cf_grammar_free(g);

    /* {m,} and {,n}-free forms, empty alternative */
    g = parse("root ::= \"a\"{2,} b\nb ::= \"b\" |\n");
    yes(g, "aa");
    yes(g, "aaab");
    no(g, "ab");
    cf_grammar_free(g);
}

static void check_errors(void)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"root ::= \"abc\n", "line 1, column 10: unterminated string literal"},
        {"root ::= [a-\n", "line 1, column 10: unterminated character class"},
        {"root ::= x\n", "line 1, column 10: undefined rule 'x'"},
        {"start ::= \"a\"\n", "no 'root' rule"},
        {"root ::= \"a\"\nroot ::= \"b\"\n", "line 2, column 1: rule 'root' defined twice"},
        {"root ::= (\"a\"\n", "line 1, column 10: unclosed '('"},
        {"root ::= \"a\" )\n", "line 1, column 14: ')' without '('"},
        {"root ::= a\na ::= a \"x\" | \"y\"\n", "rule 'a' is left-recursive"},
        {"root ::= \"\\q\"\n", "line 1, column 11: unknown escape"},
        {"root ::= [z-a]\n", "line 1, column 13: range ends below its start"},
        {"root ::= \"a\"{3,2}\n", "line 1, column 13: repetition maximum below its minimum"},
        {"root ::= \"a\"{x}\n", "line 1, column 14: expected a number in the repetition"},
        {"root \"a\"\n", "line 1, column 6: expected '::=' after the rule name"},
        {"root ::= \"a\" b ::= \"c\"\n", "line 1, column 14: a new rule starts"},
        {"root ::= \"a\" ; \n", "line 1, column 14: unexpected character"},
        {"root ::= []\n", "line 1, column 10: empty character class"},
        {"root ::= \"a\"{20000}\n", "repetition count over 10000"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cf_grammar *g = NULL;
        cf_err err = {0};
        int rc = cf_grammar_parse(bad[i].text, &g, &err);
        CHECKF(rc == -1 && !g, "accepted: %s", bad[i].text);
        CHECKF(strstr(err.msg, bad[i].want) && !strchr(err.msg, '\n'), "'%s' gave '%s'",
               bad[i].text, err.msg);
        CHECK(err.code == CF_E_USAGE);
    }
}

static void check_json(void)
{
    cf_grammar *g = NULL;
    cf_err err;
    CHECKF(cf_grammar_json(&g, &err) == 0, "%s", err.msg);
    yes(g, "{}");
    yes(g, "{\"a\": 1, \"b\": [true, false, null, -0.5e+10, \"x\\n\\u00e9\"], \"c\": {}}");
    yes(g, "{ \"\xc3\xa9\" :\n[ [ ] , { } ] }");
    no(g, "[]");
    no(g, "{\"a\": 01}");
    no(g, "{\"a\": 1,}");
    no(g, "{\"a\" 1}");
    no(g, "{\"a\": \"\x01\"}");
    no(g, "{\"a\": tru}");
    no(g, "{} ");
    prefix(g, "{\"a\": [1, {\"b", true);
    prefix(g, "{\"a\": [1, }", false);
    cf_grammar_free(g);
}

static cf_grammar *schema(const char *json)
{
    cf_grammar *g = NULL;
    cf_err err;
    CHECKF(cf_grammar_from_json_schema(json, &g, &err) == 0, "%s: %s", json, err.msg);
    return g;
}

static void check_schema(void)
{
    cf_grammar *g = schema("{\"type\": \"object\", \"properties\": {\"name\": {\"type\": "
                           "\"string\", \"maxLength\": 4}, \"age\": {\"type\": \"integer\"}, "
                           "\"tags\": {\"type\": \"array\", \"items\": {\"enum\": [\"a\", 2, "
                           "null]}, \"maxItems\": 2}}, \"required\": [\"age\", \"name\"]}");
    yes(g, "{\"name\": \"Bob\", \"age\": 42}");
    yes(g, "{\"name\":\"\",\"age\":-7,\"tags\":[\"a\", null]}");
    no(g, "{\"age\": 42, \"name\": \"Bob\"}"); /* the schema's order */
    no(g, "{\"name\": \"Bobby\", \"age\": 42}");
    no(g, "{\"name\": \"Bob\", \"age\": 4.5}");
    no(g, "{\"name\": \"Bob\"}");
    no(g, "{\"name\": \"B\", \"age\": 1, \"tags\": [2, 2, 2]}");
    no(g, "{\"name\": \"B\", \"age\": 1, \"tags\": [\"b\"]}");
    cf_grammar_free(g);

    /* nothing required, anyOf, const, type lists, $ref (recursive) */
    g = schema("{\"$defs\": {\"node\": {\"type\": \"object\", \"properties\": {\"v\": "
               "{\"anyOf\": [{\"type\": \"boolean\"}, {\"const\": \"x\"}]}, \"kids\": "
               "{\"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/node\"}}}}}, "
               "\"$ref\": \"#/$defs/node\"}");
    yes(g, "{}");
    yes(g, "{\"kids\": []}");
    yes(g, "{\"v\": true, \"kids\": [{\"v\": \"x\"}, {\"kids\": [{}]}]}");
    no(g, "{\"v\": \"y\"}");
    no(g, "{\"kids\": [], \"v\": true}");
    cf_grammar_free(g);

    g = schema("{\"type\": [\"number\", \"null\"]}");
    yes(g, "null");
    yes(g, "-1.5e3");
    no(g, "\"1\"");
    cf_grammar_free(g);

    static const struct {
        const char *json, *want;
    } bad[] = {
        {"{\"type\": \"string\", \"pattern\": \"^a$\"}", "keyword 'pattern' is not supported"},
        {"{\"type\": \"date\"}", "type 'date' is not supported"},
        {"{\"allOf\": []}", "keyword 'allOf' is not supported"},
        {"{\"$ref\": \"#/$defs/nope\"}", "$ref '#/$defs/nope' is not a $defs entry"},
        {"{\"type\": \"object\", \"properties\": {}, \"required\": [\"a\"]}",
         "required property 'a' is not in properties"},
        {"{\"type\": ", "json schema: "},
        {"[1]", "a schema must be an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cf_grammar *b = NULL;
        cf_err err = {0};
        CHECKF(cf_grammar_from_json_schema(bad[i].json, &b, &err) == -1 && !b, "accepted %s",
               bad[i].json);
        CHECKF(strstr(err.msg, bad[i].want) && !strchr(err.msg, '\n'), "'%s' gave '%s'",
               bad[i].json, err.msg);
    }
}

int main(void)
{
    check_basics();
    check_errors();
    check_json();
    check_schema();
    return test_summary("grammar");
}
