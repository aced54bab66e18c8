/* The Jinja interpreter against jinja2 itself: tests/template/jinja_cases.json
 * holds small templates covering the language (whitespace control, scoping,
 * loops, macros, filters, tests, methods, Undefined and errors) with the
 * outputs jinja2 gives under Hugging Face's environment
 * (gen_jinja_cases.py made them; it needs Python's jinja2, the test does not). */
#include "harness.h"
#include "tt_util.h"

#include "confab/template.h"
#include "jinja.h"

static const char *src_dir(void)
{
    const char *d = getenv("CONFAB_SRC");
    return d && *d ? d : ".";
}

int main(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/template/jinja_cases.json", src_dir());
    cf_json *doc = json_load_file(path);
    CHECKF(doc != NULL, "cannot read %s", path);
    if (!doc)
        return test_summary("template-jinja");
    const cf_json *base = cf_json_get(doc, "base"), *cases = cf_json_get(doc, "cases");
    int passed = 0;
    for (size_t i = 0; i < cases->n; i++) {
        const cf_json *c = cases->items[i], *vars = cf_json_get(c, "vars");
        const char *src = tt_str(c, "src"), *expected = tt_str(c, "out");
        cf_jinja_var v[32];
        size_t nv = 0;
        for (size_t k = 0; k < base->n; k++) {
            char unset[64];
            snprintf(unset, sizeof unset, "__unset_%s", base->keys[k].ptr);
            if (!cf_json_get(vars, unset) && !cf_json_get(vars, base->keys[k].ptr))
                v[nv++] = (cf_jinja_var){base->keys[k].ptr, base->items[k]};
        }
        for (size_t k = 0; k < vars->n && nv < 32; k++)
            if (strncmp(vars->keys[k].ptr, "__unset_", 8) != 0)
                v[nv++] = (cf_jinja_var){vars->keys[k].ptr, vars->items[k]};
        cf_jinja *t = NULL;
        cf_err err = {.msg = ""};
        char *out = NULL;
        size_t len = 0;
        int rc = cf_jinja_compile(src, strlen(src), &t, &err);
        if (rc == 0)
            rc = cf_jinja_render(t, v, nv, NULL, TT_NOW, &out, &len, &err);
        bool ok;
        if (expected) {
            ok = rc == 0 && len == strlen(expected) && memcmp(out, expected, len) == 0;
            CHECKF(ok, "case %zu: %s\n  expected: [%s]\n  got:      [%s]", i, src, expected,
                   rc ? err.msg : out);
        } else {
            ok = rc < 0 && strncmp(err.msg, "template line ", 14) == 0;
            CHECKF(ok, "case %zu: %s\n  expected an error with a position, got: [%s]", i, src,
                   rc ? err.msg : out);
        }
        passed += ok;
        free(out);
        cf_jinja_free(t);
    }
    fprintf(stderr, "jinja_cases.json: %d/%zu as jinja2\n", passed, cases->n);
    cf_json_free(doc);
    return test_summary("template-jinja");
}
