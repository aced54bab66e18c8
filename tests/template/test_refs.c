/* The shared reference renderings (jinja2 3.1.6 under Hugging Face's
 * apply_chat_template): every case of templates/expected.json,
 * expected-tools-empty.json and templates/2026/expected.json (reasoning
 * models: replies with reasoning_content or thinking, enable_thinking and
 * reasoning_effort given) must render byte for byte, or fail where jinja2
 * fails (with raise_exception's own message).  So must
 * tests/template/reasoning_refs.json (gen_reasoning_refs.py): the earlier
 * set's templates with a reasoning convention, and every reasoning
 * template with a last reply that has reasoning. */
#include "harness.h"
#include "tt_util.h"

#include "confab/template.h"

static int passed, total;

/* A case's extra variables ("vars": {"enable_thinking": false}) as names
 * and JSON texts (free the texts). */
static size_t case_vars(const cf_json *c, const char **names, char **json, size_t cap)
{
    const cf_json *vars = cf_json_get(c, "vars");
    size_t n = 0;
    for (size_t i = 0; vars && vars->type == CF_JSON_OBJECT && i < vars->n && n < cap; i++) {
        names[n] = vars->keys[i].ptr;
        json[n++] = cf_json_dump(vars->items[i], NULL, NULL);
    }
    return n;
}

/* dir: where the case's template lies under the shared folder; a case
 * with "messages" carries its conversation, else it names one of convs. */
static void run_case(const cf_json *c, const cf_json *convs, const char *dir)
{
    const char *name = tt_str(c, "template"), *conv = tt_str(c, "conversation");
    const cf_json *agp = cf_json_get(c, "add_generation_prompt");
    const cf_json *tools = cf_json_get(c, "tools");
    const char *expected = tt_str(c, "output"), *error = tt_str(c, "error");
    const char *error_type = tt_str(c, "error_type");
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t src_len;
    char *src = tt_read(shared_path(path), &src_len);
    const cf_json *msgs = cf_json_get(c, "messages");
    if (!msgs)
        msgs = cf_json_get(cf_json_get(convs, conv), "messages");
    total++;
    CHECKF(src && msgs, "%s: fixture missing", name);
    if (!src || !msgs) {
        free(src);
        return;
    }
    cf_chat_template *t = NULL;
    cf_err err = {.msg = ""};
    char *out = NULL, *msgs_text = cf_json_dump(msgs, NULL, NULL), *tools_text = NULL;
    size_t out_len = 0;
    cf_chat_opts o = {0};
    o.bos_token = tt_str(c, "bos_token");
    o.eos_token = tt_str(c, "eos_token");
    o.add_generation_prompt = agp && agp->b;
    o.now = TT_NOW;
    if (tools) {
        tools_text = cf_json_dump(tools, NULL, NULL);
        o.tools_json = tools_text;
    }
    const char *var_names[4];
    char *var_json[4];
    o.n_vars = case_vars(c, var_names, var_json, 4);
    o.var_names = var_names;
    o.var_json = (const char *const *)var_json;
    int rc = cf_chat_template_from_jinja(src, src_len, name, &t, &err);
    if (rc == 0)
        rc = cf_chat_render_json(t, msgs_text, strlen(msgs_text), &o, &out, &out_len, &err);
    bool ok;
    if (expected) {
        ok = rc == 0 && out_len == strlen(expected) && memcmp(out, expected, out_len) == 0;
        CHECKF(ok, "%s %s agp=%d vars=%zu: %s\n--- expected ---\n%s\n--- got ---\n%s", name, conv,
               o.add_generation_prompt, o.n_vars, rc ? err.msg : "differs", expected,
               out ? out : "");
    } else {
        /* TemplateError is raise_exception's: its message must come through */
        bool msg_ok = strcmp(error_type, "TemplateError") != 0 || strstr(err.msg, error) != NULL;
        ok = rc < 0 && msg_ok;
        CHECKF(ok, "%s %s: expected %s: %s; got %s", name, conv, error_type, error,
               rc ? err.msg : "a rendering");
        if (rc < 0)
            CHECKF(strncmp(err.msg, "template line ", 14) == 0, "%s: no position in '%s'", name, err.msg);
    }
    passed += ok;
    for (size_t i = 0; i < o.n_vars; i++)
        free(var_json[i]);
    free(out);
    free(msgs_text);
    free(tools_text);
    free(src);
    cf_chat_template_free(t);
}

static void run_file(const char *where, const cf_json *convs, const char *dir)
{
    char path[4096]; /* shared_path's buffers are reused by the cases */
    snprintf(path, sizeof path, "%s", where);
    cf_json *cases = json_load_file(path);
    const char *rel = strstr(path, dir) ? strstr(path, dir) : path;
    CHECKF(cases && cases->type == CF_JSON_ARRAY, "%s unreadable", path);
    int before = passed, before_total = total;
    for (size_t i = 0; cases && i < cases->n; i++)
        run_case(cases->items[i], convs, dir);
    fprintf(stderr, "%s: %d/%d as jinja2 renders them\n", rel, passed - before, total - before_total);
    cf_json_free(cases);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    cf_json *convs = json_load_file(shared_path("templates/conversations.json"));
    cf_json *convs26 = json_load_file(shared_path("templates/2026/conversations.json"));
    CHECK(convs != NULL && convs26 != NULL);
    run_file(shared_path("templates/expected.json"), convs, "templates");
    run_file(shared_path("templates/expected-tools-empty.json"), convs, "templates");
    run_file(shared_path("templates/2026/expected.json"), convs26, "templates/2026");
    char path[4096];
    const char *src = getenv("CONFAB_SRC");
    snprintf(path, sizeof path, "%s/tests/template/reasoning_refs.json", src ? src : ".");
    run_file(path, NULL, "templates");
    cf_json_free(convs);
    cf_json_free(convs26);
    return test_summary("template-refs");
}
