/* The tree-walking evaluator: expressions, statements, scopes, loops,
 * macros and calls, each step counted and each level of nesting bounded. */
#include <stdio.h>
#include <string.h>

#include "jinja_impl.h"

/* ---- scopes ------------------------------------------------------------- */

jscope *jscope_new(jr *r, const jnode *at, jscope *parent)
{
    jscope *s = jalloc(r, at, sizeof *s);
    if (s) {
        memset(s, 0, sizeof *s);
        s->parent = parent;
    }
    return s;
}

int jscope_set(jr *r, const jnode *at, jscope *s, const char *name, jv v)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->vars[i].name, name) == 0) {
            s->vars[i].v = v;
            return 0;
        }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4;
        struct jvar *vars = jalloc(r, at, cap * sizeof *vars);
        if (!vars)
            return -1;
        if (s->n)
            memcpy(vars, s->vars, s->n * sizeof *vars);
        s->vars = vars;
        s->cap = cap;
    }
    s->vars[s->n].name = name;
    s->vars[s->n].v = v;
    s->n++;
    return 0;
}

static bool scope_get(const jscope *s, const char *name, jv *out)
{
    for (; s; s = s->parent)
        for (size_t i = 0; i < s->n; i++)
            if (strcmp(s->vars[i].name, name) == 0) {
                *out = s->vars[i].v;
                return true;
            }
    return false;
}

/* ---- calls -------------------------------------------------------------- */

int jbind(jr *r, const jnode *at, const char *fname, const jargs *a, const char *const *params,
          size_t np, jv *out)
{
    for (size_t i = 0; i < np; i++)
        out[i] = jv_absent();
    if (a->npos > np)
        return jerr(r, at, "%s() takes at most %zu argument%s (%zu given)", fname, np,
                    np == 1 ? "" : "s", a->npos);
    for (size_t i = 0; i < a->npos; i++)
        out[i] = a->pos[i];
    for (size_t k = 0; k < a->nkw; k++) {
        size_t i;
        for (i = 0; i < np; i++)
            if (strcmp(params[i], a->kw[k].name) == 0)
                break;
        if (i == np)
            return jerr(r, at, "%s() got an unexpected keyword argument '%s'", fname, a->kw[k].name);
        if (out[i].kind != JV_ABSENT)
            return jerr(r, at, "%s() got multiple values for argument '%s'", fname, params[i]);
        out[i] = a->kw[k].v;
    }
    return 0;
}

int jno_args(jr *r, const jnode *at, const char *name, const jargs *a)
{
    if (a->npos || a->nkw)
        return jerr(r, at, "%s() takes no arguments", name);
    return 0;
}

/* Evaluate a call's argument expressions (with *args and **kwargs spread),
 * plus `extra` keyword arguments already evaluated. */
static int eval_args(jr *r, const jnode *at, const jcallargs *c, const jkwarg *extra, size_t nextra,
                     jargs *out)
{
    jvec pos = {0};
    size_t nkw = c ? c->nkw : 0;
    jlist star = {0, NULL};
    jv dstar = jv_none();
    if (c && c->star) {
        jv v;
        if (jeval(r, c->star, &v) < 0 || jv_iterate(r, c->star, v, &star) < 0)
            return -1;
    }
    if (c && c->dstar) {
        if (jeval(r, c->dstar, &dstar) < 0)
            return -1;
        if (dstar.kind != JV_DICT)
            return jerr(r, c->dstar, "argument after ** must be a mapping, not %s",
                        jv_type_name(dstar));
        nkw += dstar.u.d->n;
    }
    nkw += nextra;
    jkwarg *kw = nkw ? jalloc(r, at, nkw * sizeof *kw) : NULL;
    if (nkw && !kw)
        return -1;
    for (size_t i = 0; c && i < c->npos; i++) {
        jv v;
        if (jeval(r, c->pos[i], &v) < 0 || jvec_push(r, at, &pos, v) < 0)
            return -1;
    }
    for (size_t i = 0; i < star.n; i++)
        if (jvec_push(r, at, &pos, star.items[i]) < 0)
            return -1;
    size_t k = 0;
    for (size_t i = 0; c && i < c->nkw; i++, k++) {
        kw[k].name = c->kwnames[i];
        if (jeval(r, c->kwvals[i], &kw[k].v) < 0)
            return -1;
    }
    if (dstar.kind == JV_DICT)
        for (size_t i = 0; i < dstar.u.d->n; i++, k++) {
            jv key = dstar.u.d->keys[i];
            if (key.kind != JV_STR)
                return jerr(r, c->dstar, "keywords must be strings");
            char *name = jalloc(r, at, key.u.s.n + 1);
            if (!name)
                return -1;
            memcpy(name, key.u.s.p, key.u.s.n);
            name[key.u.s.n] = 0;
            kw[k].name = name;
            kw[k].v = dstar.u.d->vals[i];
        }
    for (size_t i = 0; i < nextra; i++)
        kw[k++] = extra[i];
    out->pos = pos.items;
    out->npos = pos.n;
    out->kw = kw;
    out->nkw = nkw;
    return 0;
}

/* Render body into a string in the scope s (the scope is restored after). */
static int capture(jr *r, const jnode *body, jscope *s, jv *out)
{
    jout o = {0}, *saved_out = r->out;
    jscope *saved_scope = r->scope;
    r->out = &o;
    r->scope = s;
    int rc = jexec_body(r, body);
    r->out = saved_out;
    r->scope = saved_scope;
    if (rc < 0)
        return -1;
    *out = jv_str(o.p ? o.p : "", o.n);
    return 0;
}

static int call_macro(jr *r, const jnode *at, const jmacro *m, const jargs *a, jv *out)
{
    const jnode *def = m->def;
    const char *name = def->kind == N_MACRO ? def->name : "caller";
    jscope *s = jscope_new(r, at, m->closure);
    if (!s)
        return -1;
    size_t np = def->nkids;
    jvec varargs = {0};
    jdict *kwargs = jdict_new(r, at, 0);
    jv caller = m->caller;
    if (!kwargs)
        return -1;
    for (size_t i = 0; i < np; i++)
        if (jscope_set(r, at, s, def->kids[i]->name, jv_absent()) < 0)
            return -1;
    for (size_t i = 0; i < a->npos; i++) {
        if (i < np) {
            s->vars[i].v = a->pos[i];
        } else if (def->op & MACRO_VARARGS) {
            if (jvec_push(r, at, &varargs, a->pos[i]) < 0)
                return -1;
        } else {
            return jerr(r, at, "macro '%s' takes not more than %zu argument(s)", name, np);
        }
    }
    for (size_t k = 0; k < a->nkw; k++) {
        size_t i;
        for (i = 0; i < np; i++)
            if (strcmp(def->kids[i]->name, a->kw[k].name) == 0)
                break;
        if (i < np) {
            if (s->vars[i].v.kind != JV_ABSENT)
                return jerr(r, at, "macro '%s' got multiple values for argument '%s'", name,
                            a->kw[k].name);
            s->vars[i].v = a->kw[k].v;
        } else if (strcmp(a->kw[k].name, "caller") == 0 && (def->op & MACRO_CALLER)) {
            caller = a->kw[k].v;
        } else if (def->op & MACRO_KWARGS) {
            if (jdict_set(r, at, kwargs, jv_cstr(a->kw[k].name), a->kw[k].v) < 0)
                return -1;
        } else {
            return jerr(r, at, "macro '%s' takes no keyword argument '%s'", name, a->kw[k].name);
        }
    }
    /* defaults are evaluated at call time, in the macro's scope */
    jscope *saved = r->scope;
    r->scope = s;
    for (size_t i = 0; i < np; i++) {
        if (s->vars[i].v.kind != JV_ABSENT)
            continue;
        if (def->kids2[i]) {
            jv v;
            if (jeval(r, def->kids2[i], &v) < 0) {
                r->scope = saved;
                return -1;
            }
            s->vars[i].v = v;
        } else {
            s->vars[i].v = jv_undef_name(def->kids[i]->name);
        }
    }
    r->scope = saved;
    jv kw = {JV_DICT, 0, {.d = kwargs}};
    if ((def->op & MACRO_VARARGS) &&
        jscope_set(r, at, s, "varargs", jvec_list(r, at, &varargs, JV_TUPLE)) < 0)
        return -1;
    if ((def->op & MACRO_KWARGS) && jscope_set(r, at, s, "kwargs", kw) < 0)
        return -1;
    if ((def->op & MACRO_CALLER) && jscope_set(r, at, s, "caller", caller) < 0)
        return -1;
    return capture(r, def->d, s, out);
}

static int exec_for(jr *r, const jnode *n, jv iterable, int depth);

int jcall(jr *r, const jnode *at, jv callee, const jargs *a, jv *out)
{
    switch (callee.kind) {
    case JV_MACRO: return call_macro(r, at, callee.u.m, a, out);
    case JV_FUNC: return callee.u.fn->fn(r, at, jv_undef(), a, out);
    case JV_METHOD:
        if (callee.u.meth->def->mutating)
            return jerr(r, at, "access to method '%s' of '%s' object is unsafe (the sandbox is immutable)",
                        callee.u.meth->def->name, jv_type_name(callee.u.meth->self));
        return callee.u.meth->def->fn(r, at, callee.u.meth->self, a, out);
    case JV_LOOP: {
        const jloop *l = callee.u.loop;
        if (!l->node->op)
            return jerr(r, at, "the loop is not recursive: it cannot be called");
        if (a->npos != 1 || a->nkw)
            return jerr(r, at, "loop() takes exactly one argument");
        jout o = {0}, *saved_out = r->out;
        jscope *saved_scope = r->scope;
        r->out = &o;
        r->scope = l->scope;
        int rc = exec_for(r, l->node, a->pos[0], l->depth + 1);
        r->out = saved_out;
        r->scope = saved_scope;
        if (rc < 0)
            return -1;
        *out = jv_str(o.p ? o.p : "", o.n);
        return 0;
    }
    case JV_UNDEF: return jundef_error(r, at, callee);
    default: return jerr(r, at, "'%s' object is not callable", jv_type_name(callee));
    }
}

/* ---- expressions -------------------------------------------------------- */

static int eval_filter(jr *r, const jnode *n, jv *out)
{
    jv v;
    jargs a;
    if (jeval(r, n->a, &v) < 0 || eval_args(r, n, n->args, NULL, 0, &a) < 0)
        return -1;
    return jrun_filter(r, n, n->name, v, &a, out);
}

static int eval_test(jr *r, const jnode *n, jv *out)
{
    jv v;
    jargs a;
    bool b;
    if (jeval(r, n->a, &v) < 0 || eval_args(r, n, n->args, NULL, 0, &a) < 0 ||
        jrun_test(r, n, n->name, v, &a, &b) < 0)
        return -1;
    *out = jv_bool(n->op ? !b : b);
    return 0;
}

static int eval_compare(jr *r, const jnode *n, jv *out)
{
    jv left;
    if (jeval(r, n->kids[0], &left) < 0)
        return -1;
    for (size_t i = 1; i < n->nkids; i++) {
        jv right;
        bool ok;
        int op = n->ops[i - 1];
        if (jeval(r, n->kids[i], &right) < 0)
            return -1;
        if (op == OP_EQ || op == OP_NE) {
            if (jv_eq(r, n, left, right, &ok) < 0)
                return -1;
            ok = ok == (op == OP_EQ);
        } else if (op == OP_IN || op == OP_NOTIN) {
            if (jv_contains(r, n, right, left, &ok) < 0)
                return -1;
            ok = ok == (op == OP_IN);
        } else if (jv_order(r, n, op, left, right, &ok) < 0) {
            return -1;
        }
        if (!ok) {
            *out = jv_bool(false);
            return 0;
        }
        left = right;
    }
    *out = jv_bool(true);
    return 0;
}

static int eval_items(jr *r, const jnode *n, jkind kind, jv *out)
{
    jlist *l = jlist_new(r, n, n->nkids);
    if (!l)
        return -1;
    for (size_t i = 0; i < n->nkids; i++)
        if (jeval(r, n->kids[i], &l->items[i]) < 0)
            return -1;
    out->kind = (uint8_t)kind;
    out->u.l = l;
    return 0;
}

static int eval_dict(jr *r, const jnode *n, jv *out)
{
    jdict *d = jdict_new(r, n, n->nkids);
    if (!d)
        return -1;
    for (size_t i = 0; i < n->nkids; i++) {
        jv k, v;
        if (jeval(r, n->kids[i], &k) < 0 || jeval(r, n->kids2[i], &v) < 0)
            return -1;
        if (k.kind == JV_LIST || k.kind == JV_DICT || k.kind == JV_NS || k.kind == JV_UNDEF)
            return jerr(r, n->kids[i], "unhashable type: '%s'", jv_type_name(k));
        if (jdict_set(r, n, d, k, v) < 0)
            return -1;
    }
    out->kind = JV_DICT;
    out->u.d = d;
    return 0;
}

static int eval_unary(jr *r, const jnode *n, jv *out)
{
    jv v;
    if (jeval(r, n->a, &v) < 0)
        return -1;
    if (n->op == OP_NOT) {
        *out = jv_bool(!jv_truthy(v));
        return 0;
    }
    if (v.kind == JV_UNDEF)
        return jundef_error(r, n, v);
    if (v.kind == JV_INT || v.kind == JV_BOOL) {
        int64_t i = v.kind == JV_INT ? v.u.i : v.u.b;
        if (n->op == OP_NEG && i == INT64_MIN)
            return jerr(r, n, "integer overflow (past 64 bits)");
        *out = jv_int(n->op == OP_NEG ? -i : i);
        return 0;
    }
    if (v.kind == JV_FLOAT) {
        *out = jv_float(n->op == OP_NEG ? -v.u.f : v.u.f);
        return 0;
    }
    return jerr(r, n, "bad operand type for unary %s: '%s'", n->op == OP_NEG ? "-" : "+",
                jv_type_name(v));
}

static int eval_node(jr *r, const jnode *n, jv *out)
{
    jv a, b;
    switch (n->kind) {
    case N_CONST: *out = n->value; return 0;
    case N_NAME: {
        if (scope_get(r->scope, n->name, out))
            return 0;
        const jbuiltin *g = jfind_global(n->name);
        if (g) {
            *out = jv_undef();
            out->kind = JV_FUNC;
            out->u.fn = g;
            return 0;
        }
        *out = jv_undef_name(n->name);
        return 0;
    }
    case N_LIST: return eval_items(r, n, JV_LIST, out);
    case N_TUPLE: return eval_items(r, n, JV_TUPLE, out);
    case N_DICT: return eval_dict(r, n, out);
    case N_ATTR:
        if (jeval(r, n->a, &a) < 0)
            return -1;
        return jv_getattr(r, n, a, n->name, strlen(n->name), out);
    case N_ITEM:
        if (jeval(r, n->a, &a) < 0 || jeval(r, n->b, &b) < 0)
            return -1;
        return jv_getitem(r, n, a, b, out);
    case N_SLICE: {
        jv parts[3] = {jv_none(), jv_none(), jv_none()};
        const jnode *e[3] = {n->b, n->c, n->d};
        /* x[1:2, 3]: jinja2 builds a tuple holding a slice, which no value
         * takes as an index; here such a slice has nothing to slice */
        if (!n->a)
            return jerr(r, n, "a slice must be the whole subscript (x[a:b], not x[a:b, c])");
        if (jeval(r, n->a, &a) < 0)
            return -1;
        for (int i = 0; i < 3; i++)
            if (e[i] && jeval(r, e[i], &parts[i]) < 0)
                return -1;
        return jv_slice(r, n, a, parts[0], parts[1], parts[2], out);
    }
    case N_CALL: {
        jargs args;
        if (jeval(r, n->a, &a) < 0 || eval_args(r, n, n->args, NULL, 0, &args) < 0)
            return -1;
        return jcall(r, n->a, a, &args, out);
    }
    case N_FILTER: return eval_filter(r, n, out);
    case N_TEST: return eval_test(r, n, out);
    case N_UNARY: return eval_unary(r, n, out);
    case N_BINARY:
        if (jeval(r, n->a, &a) < 0)
            return -1;
        if (n->op == OP_AND || n->op == OP_OR) {
            if (jv_truthy(a) == (n->op == OP_OR)) {
                *out = a;
                return 0;
            }
            return jeval(r, n->b, out);
        }
        if (jeval(r, n->b, &b) < 0)
            return -1;
        return jv_binop(r, n, n->op, a, b, out);
    case N_CONCAT: {
        jout o = {0};
        for (size_t i = 0; i < n->nkids; i++)
            if (jeval(r, n->kids[i], &a) < 0 || jv_write_str(r, n, &o, a) < 0)
                return -1;
        *out = jv_str(o.p ? o.p : "", o.n);
        return 0;
    }
    case N_COMPARE: return eval_compare(r, n, out);
    case N_COND:
        if (jeval(r, n->a, &a) < 0)
            return -1;
        if (jv_truthy(a))
            return jeval(r, n->b, out);
        if (n->c)
            return jeval(r, n->c, out);
        *out = jv_undef();
        return 0;
    case N_BLOCKVAL: *out = r->blockval; return 0;
    default: return jerr(r, n, "internal error: not an expression");
    }
}

static int enter(jr *r, const jnode *n)
{
    if (jcharge(r, n, 1) < 0)
        return -1;
    if (++r->depth > r->lim.max_depth) {
        r->depth--;
        return jerr_limit(r, n, "the template nests deeper than %u levels (the limit; recursion?)",
                    r->lim.max_depth);
    }
    return 0;
}

int jeval(jr *r, const jnode *n, jv *out)
{
    if (enter(r, n) < 0)
        return -1;
    int rc = eval_node(r, n, out);
    r->depth--;
    return rc;
}

/* ---- statements --------------------------------------------------------- */

static int assign(jr *r, const jnode *target, jv v)
{
    if (target->kind == N_NAME)
        return jscope_set(r, target, r->scope, target->name, v);
    if (target->kind == N_ATTR) {
        jv ns;
        if (!scope_get(r->scope, target->a->name, &ns) || ns.kind != JV_NS)
            return jerr(r, target, "cannot assign attribute on non-namespace object");
        return jdict_set(r, target, ns.u.d, jv_cstr(target->name), v);
    }
    jlist items;
    if (jv_iterate(r, target, v, &items) < 0)
        return -1;
    if (items.n != target->nkids)
        return items.n > target->nkids
                   ? jerr(r, target, "too many values to unpack (expected %zu)", target->nkids)
                   : jerr(r, target, "not enough values to unpack (expected %zu, got %zu)",
                          target->nkids, items.n);
    for (size_t i = 0; i < target->nkids; i++)
        if (assign(r, target->kids[i], items.items[i]) < 0)
            return -1;
    return 0;
}

static int output(jr *r, const jnode *at, jv v)
{
    if (v.kind == JV_STR)
        return jout_put(r, at, r->out, v.u.s.p, v.u.s.n);
    return jv_write_str(r, at, r->out, v);
}

/* Run body in a new scope under the current one. */
static int exec_scoped(jr *r, const jnode *body, jscope *s)
{
    jscope *saved = r->scope;
    r->scope = s;
    int rc = jexec_body(r, body);
    r->scope = saved;
    return rc;
}

static int exec_for(jr *r, const jnode *n, jv iterable, int depth)
{
    jlist all;
    if (jv_iterate(r, n->b, iterable, &all) < 0)
        return -1;
    jlist items = all;
    if (n->c) { /* for x in xs if cond: the loop sees only the kept items */
        jvec kept = {0};
        jscope *s = jscope_new(r, n, r->scope);
        if (!s)
            return -1;
        for (size_t i = 0; i < all.n; i++) {
            jv keep;
            if (jcharge(r, n, 1) < 0)
                return -1;
            jscope *saved = r->scope;
            s->n = 0;
            r->scope = s;
            int rc = assign(r, n->a, all.items[i]);
            if (rc == 0)
                rc = jeval(r, n->c, &keep);
            r->scope = saved;
            if (rc < 0)
                return -1;
            if (jv_truthy(keep) && jvec_push(r, n, &kept, all.items[i]) < 0)
                return -1;
        }
        items.items = kept.items;
        items.n = kept.n;
    }
    jloop *loop = jalloc(r, n, sizeof *loop);
    if (!loop)
        return -1;
    *loop = (jloop){items.items, items.n, 0, depth, n, r->scope, jv_absent()};
    jv lv = jv_undef();
    lv.kind = JV_LOOP;
    lv.u.loop = loop;
    /* One scope serves every iteration, emptied each time: a set in the body
     * lasts for its iteration only, and a long loop costs no memory per turn. */
    jscope *s = jscope_new(r, n, r->scope);
    if (!s)
        return -1;
    /* jinja2 runs the else block unless some turn reached the end of the
     * body: a loop left by break or continue on every turn runs it too */
    bool completed = false;
    for (size_t i = 0; i < items.n; i++) {
        if (jcharge(r, n, 1) < 0) /* an empty body still costs a step per turn */
            return -1;
        loop->i = i;
        s->n = 0;
        if (jscope_set(r, n, s, "loop", lv) < 0)
            return -1;
        jscope *saved = r->scope;
        r->scope = s;
        int rc = assign(r, n->a, items.items[i]);
        if (rc == 0)
            rc = jexec_body(r, n->d);
        r->scope = saved;
        if (rc < 0)
            return -1;
        if (rc == J_BREAK)
            break;
        completed |= rc == 0;
    }
    if (!completed && n->e) {
        jscope *e = jscope_new(r, n, r->scope);
        return e ? exec_scoped(r, n->e, e) : -1;
    }
    return 0;
}

/* A block's text through its filters (N_SETBLOCK, N_FILTBLOCK). */
static int filtered_block(jr *r, const jnode *n, jv *out)
{
    jscope *s = jscope_new(r, n, r->scope);
    jv text;
    if (!s || capture(r, n->d, s, &text) < 0)
        return -1;
    if (!n->b) {
        *out = text;
        return 0;
    }
    jv saved = r->blockval;
    r->blockval = text;
    int rc = jeval(r, n->b, out);
    r->blockval = saved;
    return rc;
}

static int exec_stmt(jr *r, const jnode *n)
{
    jv v;
    switch (n->kind) {
    case N_TEXT: return jout_put(r, n, r->out, n->value.u.s.p, n->value.u.s.n);
    case N_OUTPUT:
        if (jeval(r, n->a, &v) < 0)
            return -1;
        return output(r, n, v);
    case N_IF:
        if (jeval(r, n->a, &v) < 0)
            return -1;
        if (jv_truthy(v))
            return jexec_body(r, n->b);
        if (!n->c)
            return 0;
        return n->c->kind == N_IF ? exec_stmt(r, n->c) : jexec_body(r, n->c);
    case N_FOR:
        if (jeval(r, n->b, &v) < 0)
            return -1;
        return exec_for(r, n, v, 1);
    case N_SET:
        if (jeval(r, n->b, &v) < 0)
            return -1;
        return assign(r, n->a, v);
    case N_SETBLOCK:
        if (filtered_block(r, n, &v) < 0)
            return -1;
        return assign(r, n->a, v);
    case N_FILTBLOCK:
        if (filtered_block(r, n, &v) < 0)
            return -1;
        return output(r, n, v);
    case N_MACRO: {
        jmacro *m = jalloc(r, n, sizeof *m);
        if (!m)
            return -1;
        *m = (jmacro){n, r->scope, jv_undef()};
        v = jv_undef();
        v.kind = JV_MACRO;
        v.u.m = m;
        return jscope_set(r, n, r->scope, n->name, v);
    }
    case N_CALLBLOCK: {
        jmacro *m = jalloc(r, n, sizeof *m);
        jv callee, res;
        jargs args;
        if (!m)
            return -1;
        *m = (jmacro){n, r->scope, jv_undef()};
        jkwarg caller = {"caller", jv_undef()};
        caller.v.kind = JV_MACRO;
        caller.v.u.m = m;
        if (jeval(r, n->a->a, &callee) < 0 || eval_args(r, n->a, n->a->args, &caller, 1, &args) < 0 ||
            jcall(r, n->a, callee, &args, &res) < 0)
            return -1;
        return output(r, n, res);
    }
    case N_WITH: {
        jscope *s = jscope_new(r, n, r->scope);
        if (!s)
            return -1;
        jv *vals = n->nkids ? jalloc(r, n, n->nkids * sizeof *vals) : NULL;
        if (n->nkids && !vals)
            return -1;
        for (size_t i = 0; i < n->nkids; i++)
            if (jeval(r, n->kids2[i], &vals[i]) < 0)
                return -1;
        jscope *saved = r->scope;
        r->scope = s;
        int rc = 0;
        for (size_t i = 0; i < n->nkids && rc == 0; i++)
            rc = assign(r, n->kids[i], vals[i]);
        if (rc == 0)
            rc = jexec_body(r, n->d);
        r->scope = saved;
        return rc;
    }
    case N_SCOPE: {
        jscope *s = jscope_new(r, n, r->scope);
        return s ? exec_scoped(r, n->d, s) : -1;
    }
    case N_BREAK: return J_BREAK;
    case N_CONTINUE: return J_CONTINUE;
    default: return jerr(r, n, "internal error: not a statement");
    }
}

int jexec_body(jr *r, const jnode *body)
{
    for (size_t i = 0; i < body->nkids; i++) {
        const jnode *n = body->kids[i];
        if (enter(r, n) < 0)
            return -1;
        int rc = exec_stmt(r, n);
        r->depth--;
        if (rc != 0)
            return rc;
    }
    return 0;
}
