/* The GBNF reader and the matcher, with no vocabulary: grammars that read,
 * bad ones (one message naming the problem and its line and column),
 * sentences accepted and rejected, whole and as prefixes, and the fixed
 * JSON grammar. */
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

int main(void)
{
    check_basics();
    check_errors();
    check_json();
    return test_summary("grammar");
}
