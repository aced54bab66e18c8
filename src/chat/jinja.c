/* Compiling and rendering Jinja templates: newline normalisation, the
 * lexer and parser, a check that every filter and test exists (jinja2 does
 * it at compile time too), and the render's setup and limits. */
#include <stdlib.h>
#include <string.h>

#include "jinja.h"
#include "jinja_impl.h"

#define MAX_SOURCE ((size_t)4 << 20)
#define COMPILE_MEMORY ((size_t)256 << 20)

struct cf_jinja {
    jarena arena;
    jnode *root;
};

/* Unknown filters and tests are compile errors, except where jinja2's
 * compiler is in a "soft" frame - an if statement's condition and direct
 * body, an inline if - there they fail only if they run. */
static int check_names(const jnode *n, bool soft, cf_err *err)
{
    if (!n)
        return 0;
    if (!soft && n->kind == N_FILTER && !jfind_filter(n->name))
        return cf_fail(err, "template line %d, column %d: No filter named '%s'", n->line, n->col, n->name);
    if (!soft && n->kind == N_TEST && !jfind_test(n->name))
        return cf_fail(err, "template line %d, column %d: No test named '%s'", n->line, n->col, n->name);
    if (n->kind == N_IF || n->kind == N_COND)
        soft = true;
    /* statements with a scope of their own start a hard frame for their bodies */
    bool inner = n->kind == N_FOR || n->kind == N_MACRO || n->kind == N_CALLBLOCK ||
                 n->kind == N_FILTBLOCK || n->kind == N_SETBLOCK || n->kind == N_WITH ||
                 n->kind == N_SCOPE;
    const jnode *sub[] = {n->a, n->b, n->c, n->d, n->e};
    for (size_t i = 0; i < 5; i++) {
        bool header = n->kind == N_FOR ? i == 1 : i < 3;
        if (check_names(sub[i], soft && (!inner || header), err) < 0)
            return -1;
    }
    for (size_t i = 0; i < n->nkids; i++)
        if ((n->kids && check_names(n->kids[i], soft && n->kind != N_MACRO, err) < 0) ||
            (n->kids2 && check_names(n->kids2[i], soft && n->kind != N_MACRO, err) < 0))
            return -1;
    if (n->args) {
        for (size_t i = 0; i < n->args->npos; i++)
            if (check_names(n->args->pos[i], soft, err) < 0)
                return -1;
        for (size_t i = 0; i < n->args->nkw; i++)
            if (check_names(n->args->kwvals[i], soft, err) < 0)
                return -1;
        if (check_names(n->args->star, soft, err) < 0 || check_names(n->args->dstar, soft, err) < 0)
            return -1;
    }
    return 0;
}

int cf_jinja_compile(const char *src, size_t len, cf_jinja **out, cf_err *err)
{
    *out = NULL;
    if (len > MAX_SOURCE)
        return cf_fail(err, "template line 1, column 1: the template is %zu bytes, over the limit of %zu",
                       len, MAX_SOURCE);
    cf_jinja *t = calloc(1, sizeof *t);
    if (!t)
        return cf_fail(err, "out of memory compiling the template");
    t->arena.limit = COMPILE_MEMORY;
    /* jinja2 reads \r\n and \r as \n, and (keep_trailing_newline off)
     * drops one newline at the very end */
    char *s = jarena_alloc(&t->arena, len + 1);
    if (!s) {
        cf_jinja_free(t);
        return cf_fail(err, "out of memory compiling the template");
    }
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (src[i] == '\r') {
            s[n++] = '\n';
            if (i + 1 < len && src[i + 1] == '\n')
                i++;
        } else {
            s[n++] = src[i];
        }
    }
    if (n && s[n - 1] == '\n')
        n--;
    s[n] = 0;
    jtok *toks;
    size_t ntoks;
    if (jlex(&t->arena, s, n, &toks, &ntoks, err) < 0) {
        cf_jinja_free(t);
        return -1;
    }
    int rc = jparse(&t->arena, toks, ntoks, &t->root, err);
    free(toks);
    if (rc < 0 || check_names(t->root, false, err) < 0) {
        cf_jinja_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

void cf_jinja_free(cf_jinja *t)
{
    if (!t)
        return;
    jarena_free(&t->arena);
    free(t);
}

int cf_jinja_render(const cf_jinja *t, const cf_jinja_var *vars, size_t n,
                    const cf_jinja_limits *lim, int64_t now, char **out, size_t *len, cf_err *err)
{
    static const cf_jinja_limits defaults = {10000000, 400, (size_t)16 << 20, (size_t)256 << 20};
    jr r;
    memset(&r, 0, sizeof r);
    r.lim = defaults;
    if (lim) {
        if (lim->max_steps)
            r.lim.max_steps = lim->max_steps;
        if (lim->max_depth)
            r.lim.max_depth = lim->max_depth;
        if (lim->max_output)
            r.lim.max_output = lim->max_output;
        if (lim->max_memory)
            r.lim.max_memory = lim->max_memory;
    }
    r.arena.limit = r.lim.max_memory;
    r.err = err;
    r.now = now;
    r.blockval = jv_undef();
    *out = NULL;
    jout o = {0};
    r.out = &o;
    int rc = -1;
    jscope *root = jscope_new(&r, NULL, NULL);
    if (!root)
        goto done;
    r.scope = root;
    for (size_t i = 0; i < n; i++) {
        jv v;
        if (jv_from_json(&r, vars[i].value, &v) < 0 || jscope_set(&r, NULL, root, vars[i].name, v) < 0)
            goto done;
    }
    if (jexec_body(&r, t->root) < 0)
        goto done;
    *out = malloc(o.n + 1);
    if (!*out) {
        cf_fail(err, "out of memory for the rendered text");
        goto done;
    }
    if (o.n)
        memcpy(*out, o.p, o.n);
    (*out)[o.n] = 0;
    if (len)
        *len = o.n;
    rc = 0;
done:
    jarena_free(&r.arena);
    return rc;
}
