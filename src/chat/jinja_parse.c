/* The Jinja parser: jinja2's grammar and precedence, so templates mean what
 * they mean to jinja2 (filters and `is` bind tighter than arithmetic, `~`
 * tighter than `+`, `for x in xs if c`, `set ns.x`, macros, call blocks).
 * The tree's depth is bounded: hostile nesting is a syntax error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jinja_impl.h"

#define MAX_NEST 200

typedef struct ps {
    const jtok *t;
    size_t n, i;
    jarena *a;
    cf_err *err;
    int depth;
    int loops; /* enclosing for loops, for break/continue */
} ps;

/* A growing array of nodes in the arena. */
typedef struct nvec {
    jnode **v;
    size_t n, cap;
} nvec;

static const jtok *cur(ps *P) { return &P->t[P->i]; }
static const jtok *peek(ps *P, size_t k) { return &P->t[P->i + k < P->n ? P->i + k : P->n - 1]; }
static void next(ps *P)
{
    if (P->i + 1 < P->n)
        P->i++;
}

static bool tok_is(const jtok *t, jtoktype type, const char *text)
{
    if (t->type != type)
        return false;
    if (!text)
        return true;
    if (type == T_OP)
        return strcmp(t->op, text) == 0;
    return t->n == strlen(text) && memcmp(t->p, text, t->n) == 0;
}
static bool is_name(ps *P, const char *s) { return tok_is(cur(P), T_NAME, s); }
static bool is_op(ps *P, const char *s) { return tok_is(cur(P), T_OP, s); }

static const char *describe(const jtok *t, char *buf, size_t len)
{
    switch (t->type) {
    case T_EOF: return "end of template";
    case T_DATA: return "template text";
    case T_VAR_BEGIN: return "'{{'";
    case T_VAR_END: return "end of print statement";
    case T_BLOCK_BEGIN: return "'{%'";
    case T_BLOCK_END: return "end of statement block";
    case T_STRING: return "a string";
    case T_INT:
    case T_FLOAT: return "a number";
    case T_OP: snprintf(buf, len, "'%s'", t->op); return buf;
    default: snprintf(buf, len, "'%.*s'", t->n > 40 ? 40 : (int)t->n, t->p); return buf;
    }
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void *perr(ps *P, const jtok *t, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cf_fail(P->err, "template line %d, column %d: %s", t->line, t->col, msg);
    return NULL;
}

static void *unexpected(ps *P, const char *wanted)
{
    char buf[64];
    return perr(P, cur(P), "expected %s, got %s", wanted, describe(cur(P), buf, sizeof buf));
}

static void *oom(ps *P)
{
    return perr(P, cur(P), "out of memory parsing the template");
}

static jnode *mk(ps *P, jnkind kind, const jtok *at)
{
    jnode *n = jarena_alloc(P->a, sizeof *n);
    if (!n)
        return oom(P);
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)kind;
    n->line = at->line;
    n->col = at->col;
    return n;
}

/* A filter or test name, dotted as jinja2 allows ("a.b"); consumes it. */
static const char *dotted_name(ps *P)
{
    size_t start = P->i, len = cur(P)->n;
    next(P);
    while (is_op(P, ".") && peek(P, 1)->type == T_NAME) {
        len += 1 + peek(P, 1)->n;
        next(P);
        next(P);
    }
    char *s = jarena_alloc(P->a, len + 1), *o = s;
    if (!s)
        return oom(P);
    for (size_t k = start; k < P->i; k++) {
        memcpy(o, P->t[k].type == T_OP ? "." : P->t[k].p, P->t[k].type == T_OP ? 1 : P->t[k].n);
        o += P->t[k].type == T_OP ? 1 : P->t[k].n;
    }
    *o = 0;
    return s;
}

static const char *tok_name(ps *P, const jtok *t)
{
    char *s = jarena_alloc(P->a, t->n + 1);
    if (!s)
        return oom(P);
    memcpy(s, t->p, t->n);
    s[t->n] = 0;
    return s;
}

static bool push(ps *P, nvec *v, jnode *x)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        jnode **nv = jarena_alloc(P->a, cap * sizeof *nv);
        if (!nv) {
            oom(P);
            return false;
        }
        if (v->n)
            memcpy(nv, v->v, v->n * sizeof *nv);
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = x;
    return true;
}

static bool expect_op(ps *P, const char *op)
{
    if (!is_op(P, op)) {
        char w[16];
        snprintf(w, sizeof w, "'%s'", op);
        unexpected(P, w);
        return false;
    }
    next(P);
    return true;
}

static bool expect_type(ps *P, jtoktype type, const char *what)
{
    if (cur(P)->type != type) {
        unexpected(P, what);
        return false;
    }
    next(P);
    return true;
}

static bool enter(ps *P)
{
    if (++P->depth > MAX_NEST) {
        perr(P, cur(P), "the template is nested too deeply (over %d levels)", MAX_NEST);
        return false;
    }
    return true;
}

/* ---- expressions -------------------------------------------------------- */

static jnode *parse_expression(ps *P, bool with_condexpr);
static jnode *parse_tuple(ps *P, bool simplified, bool with_condexpr, const char *extra_end,
                          bool explicit_parens);
static jnode *parse_unary(ps *P, bool with_filter);
static jnode *parse_primary(ps *P);
static jnode *parse_postfix(ps *P, jnode *node);
static jnode *parse_filter_expr(ps *P, jnode *node);
static jnode *parse_filter(ps *P, jnode *node, bool start_inline);

static jnode *binary(ps *P, const jtok *at, int op, jnode *a, jnode *b)
{
    if (!a || !b)
        return NULL;
    jnode *n = mk(P, N_BINARY, at);
    if (n) {
        n->op = (uint8_t)op;
        n->a = a;
        n->b = b;
    }
    return n;
}

/* Left-assoc chains build trees as deep as they are long: count them. */
static bool chain(ps *P, int *links)
{
    (*links)++;
    if (P->depth + *links > MAX_NEST) {
        perr(P, cur(P), "the expression is nested too deeply (over %d levels)", MAX_NEST);
        return false;
    }
    return true;
}

typedef jnode *(*parse_fn)(ps *P);

/* One left-associative level: operand (op operand)*, op_at naming the
 * operator at the current token (0: none). */
static jnode *left_assoc(ps *P, parse_fn operand, int (*op_at)(ps *P))
{
    jnode *left = operand(P);
    int links = 0, op;
    while (left && (op = op_at(P)) != 0) {
        const jtok *at = cur(P);
        if (!chain(P, &links))
            return NULL;
        next(P);
        left = binary(P, at, op, left, operand(P));
    }
    return left;
}

static int pow_op(ps *P) { return is_op(P, "**") ? OP_POW : 0; }
static int mul_op(ps *P)
{
    return is_op(P, "*") ? OP_MUL : is_op(P, "/") ? OP_DIV : is_op(P, "//") ? OP_FLOORDIV
           : is_op(P, "%") ? OP_MOD : 0;
}
static int add_op(ps *P) { return is_op(P, "+") ? OP_ADD : is_op(P, "-") ? OP_SUB : 0; }
static int and_op(ps *P) { return is_name(P, "and") ? OP_AND : 0; }
static int or_op(ps *P) { return is_name(P, "or") ? OP_OR : 0; }

static jnode *parse_filtered_unary(ps *P) { return parse_unary(P, true); }
static jnode *parse_pow(ps *P) { return left_assoc(P, parse_filtered_unary, pow_op); }
static jnode *parse_math2(ps *P) { return left_assoc(P, parse_pow, mul_op); }

static jnode *parse_concat(ps *P)
{
    const jtok *at = cur(P);
    jnode *first = parse_math2(P);
    if (!first || !is_op(P, "~"))
        return first;
    nvec v = {0};
    if (!push(P, &v, first))
        return NULL;
    int links = 0;
    while (is_op(P, "~")) {
        if (!chain(P, &links))
            return NULL;
        next(P);
        jnode *x = parse_math2(P);
        if (!x || !push(P, &v, x))
            return NULL;
    }
    jnode *n = mk(P, N_CONCAT, at);
    if (n) {
        n->kids = v.v;
        n->nkids = v.n;
    }
    return n;
}

static jnode *parse_math1(ps *P) { return left_assoc(P, parse_concat, add_op); }

static jnode *parse_compare(ps *P)
{
    const jtok *at = cur(P);
    jnode *expr = parse_math1(P);
    if (!expr)
        return NULL;
    nvec operands = {0};
    uint8_t ops[MAX_NEST];
    size_t nops = 0;
    for (;;) {
        int op = is_op(P, "==") ? OP_EQ : is_op(P, "!=") ? OP_NE : is_op(P, "<") ? OP_LT
                 : is_op(P, "<=") ? OP_LE : is_op(P, ">") ? OP_GT : is_op(P, ">=") ? OP_GE
                 : is_name(P, "in") ? OP_IN : 0;
        if (!op && is_name(P, "not") && tok_is(peek(P, 1), T_NAME, "in")) {
            op = OP_NOTIN;
            next(P);
        }
        if (!op)
            break;
        if (nops + 1 >= MAX_NEST || P->depth + (int)nops >= MAX_NEST)
            return perr(P, cur(P), "the comparison is chained too long");
        next(P);
        if (!nops && !push(P, &operands, expr))
            return NULL;
        jnode *rhs = parse_math1(P);
        if (!rhs || !push(P, &operands, rhs))
            return NULL;
        ops[nops++] = (uint8_t)op;
    }
    if (!nops)
        return expr;
    jnode *n = mk(P, N_COMPARE, at);
    if (!n || !(n->ops = jarena_alloc(P->a, nops)))
        return n ? oom(P) : NULL;
    memcpy(n->ops, ops, nops);
    n->kids = operands.v;
    n->nkids = operands.n;
    return n;
}

static jnode *parse_not(ps *P)
{
    if (!is_name(P, "not"))
        return parse_compare(P);
    const jtok *at = cur(P);
    if (!enter(P))
        return NULL;
    next(P);
    jnode *n = mk(P, N_UNARY, at);
    if (n) {
        n->op = OP_NOT;
        if (!(n->a = parse_not(P)))
            n = NULL;
    }
    P->depth--;
    return n;
}

static jnode *parse_and(ps *P) { return left_assoc(P, parse_not, and_op); }
static jnode *parse_or(ps *P) { return left_assoc(P, parse_and, or_op); }

static jnode *parse_condexpr(ps *P)
{
    const jtok *at = cur(P);
    jnode *expr1 = parse_or(P);
    int links = 0;
    while (expr1 && is_name(P, "if")) {
        if (!chain(P, &links))
            return NULL;
        next(P);
        jnode *n = mk(P, N_COND, at);
        if (!n)
            return NULL;
        n->b = expr1;
        if (!(n->a = parse_or(P)))
            return NULL;
        if (is_name(P, "else")) {
            next(P);
            if (!enter(P))
                return NULL;
            n->c = parse_condexpr(P);
            P->depth--;
            if (!n->c)
                return NULL;
        }
        expr1 = n;
        at = cur(P);
    }
    return expr1;
}

static jnode *parse_expression(ps *P, bool with_condexpr)
{
    return with_condexpr ? parse_condexpr(P) : parse_or(P);
}

static bool tuple_end(ps *P, const char *extra_end)
{
    const jtok *t = cur(P);
    if (t->type == T_VAR_END || t->type == T_BLOCK_END || t->type == T_EOF || tok_is(t, T_OP, ")"))
        return true;
    return extra_end && tok_is(t, T_NAME, extra_end);
}

static jnode *parse_tuple(ps *P, bool simplified, bool with_condexpr, const char *extra_end,
                          bool explicit_parens)
{
    const jtok *at = cur(P);
    nvec args = {0};
    bool is_tuple = false;
    for (;;) {
        if (args.n && !expect_op(P, ","))
            return NULL;
        if (tuple_end(P, extra_end))
            break;
        jnode *x = simplified ? parse_primary(P) : parse_expression(P, with_condexpr);
        if (!x || !push(P, &args, x))
            return NULL;
        if (is_op(P, ","))
            is_tuple = true;
        else
            break;
    }
    if (!is_tuple) {
        if (args.n)
            return args.v[0];
        if (!explicit_parens)
            return unexpected(P, "an expression");
    }
    jnode *n = mk(P, N_TUPLE, at);
    if (n) {
        n->kids = args.v;
        n->nkids = args.n;
    }
    return n;
}

static jnode *parse_list(ps *P)
{
    jnode *n = mk(P, N_LIST, cur(P));
    nvec items = {0};
    if (!n || !expect_op(P, "["))
        return NULL;
    while (!is_op(P, "]")) {
        if (items.n && !expect_op(P, ","))
            return NULL;
        if (is_op(P, "]"))
            break;
        jnode *x = parse_expression(P, true);
        if (!x || !push(P, &items, x))
            return NULL;
    }
    next(P);
    n->kids = items.v;
    n->nkids = items.n;
    return n;
}

static jnode *parse_dict(ps *P)
{
    jnode *n = mk(P, N_DICT, cur(P));
    nvec keys = {0}, vals = {0};
    if (!n || !expect_op(P, "{"))
        return NULL;
    while (!is_op(P, "}")) {
        if (keys.n && !expect_op(P, ","))
            return NULL;
        if (is_op(P, "}"))
            break;
        jnode *k = parse_expression(P, true);
        if (!k || !expect_op(P, ":"))
            return NULL;
        jnode *v = parse_expression(P, true);
        if (!v || !push(P, &keys, k) || !push(P, &vals, v))
            return NULL;
    }
    next(P);
    n->kids = keys.v;
    n->kids2 = vals.v;
    n->nkids = keys.n;
    return n;
}

static jnode *constant(ps *P, const jtok *at, jv v)
{
    jnode *n = mk(P, N_CONST, at);
    if (n)
        n->value = v;
    return n;
}

static jnode *parse_primary(ps *P)
{
    const jtok *t = cur(P);
    if (!enter(P))
        return NULL;
    jnode *n = NULL;
    if (t->type == T_NAME) {
        static const struct {
            const char *word;
            int kind; /* 0 none, 1 true, 2 false */
        } consts[] = {{"true", 1}, {"True", 1}, {"false", 2}, {"False", 2}, {"none", 0}, {"None", 0}};
        size_t k;
        for (k = 0; k < sizeof consts / sizeof consts[0]; k++)
            if (tok_is(t, T_NAME, consts[k].word))
                break;
        if (k < sizeof consts / sizeof consts[0]) {
            n = constant(P, t, consts[k].kind ? jv_bool(consts[k].kind == 1) : jv_none());
        } else if ((n = mk(P, N_NAME, t)) && !(n->name = tok_name(P, t))) {
            n = NULL;
        }
        next(P);
    } else if (t->type == T_STRING) {
        /* adjacent literals join, as in Python */
        size_t total = 0, k;
        for (k = P->i; P->t[k].type == T_STRING; k++)
            total += P->t[k].n;
        char *s = jarena_alloc(P->a, total + 1);
        if (!s)
            return oom(P);
        total = 0;
        for (; P->i < k; P->i++) {
            memcpy(s + total, P->t[P->i].p, P->t[P->i].n);
            total += P->t[P->i].n;
        }
        s[total] = 0;
        n = constant(P, t, jv_str(s, total));
    } else if (t->type == T_INT || t->type == T_FLOAT) {
        n = constant(P, t, t->type == T_INT ? jv_int(t->i) : jv_float(t->f));
        next(P);
    } else if (is_op(P, "(")) {
        next(P);
        n = parse_tuple(P, false, true, NULL, true);
        if (n && !expect_op(P, ")"))
            n = NULL;
    } else if (is_op(P, "[")) {
        n = parse_list(P);
    } else if (is_op(P, "{")) {
        n = parse_dict(P);
    } else {
        char buf[64];
        n = perr(P, t, "unexpected %s", describe(t, buf, sizeof buf));
    }
    P->depth--;
    return n;
}

static jnode *parse_unary(ps *P, bool with_filter)
{
    const jtok *at = cur(P);
    jnode *node;
    if (!enter(P))
        return NULL;
    if (is_op(P, "-") || is_op(P, "+")) {
        int op = is_op(P, "-") ? OP_NEG : OP_POS;
        next(P);
        node = mk(P, N_UNARY, at);
        if (node) {
            node->op = (uint8_t)op;
            if (!(node->a = parse_unary(P, false)))
                node = NULL;
        }
    } else {
        node = parse_primary(P);
    }
    node = node ? parse_postfix(P, node) : NULL;
    if (node && with_filter)
        node = parse_filter_expr(P, node);
    P->depth--;
    return node;
}

/* (args): positional, name=value, *args, **kwargs */
static jcallargs *parse_call_args(ps *P)
{
    jcallargs *c = jarena_alloc(P->a, sizeof *c);
    nvec pos = {0}, kwv = {0};
    const char **names = NULL;
    size_t names_cap = 0;
    if (!c)
        return oom(P);
    memset(c, 0, sizeof *c);
    if (!expect_op(P, "("))
        return NULL;
    bool first = true;
    while (!is_op(P, ")")) {
        if (!first && !expect_op(P, ","))
            return NULL;
        first = false;
        if (is_op(P, ")"))
            break;
        if (is_op(P, "*") || is_op(P, "**")) {
            bool dbl = is_op(P, "**");
            next(P);
            jnode *x = parse_expression(P, true);
            if (!x)
                return NULL;
            if (dbl)
                c->dstar = x;
            else
                c->star = x;
            continue;
        }
        if (cur(P)->type == T_NAME && tok_is(peek(P, 1), T_OP, "=")) {
            const char *name = tok_name(P, cur(P));
            next(P);
            next(P);
            jnode *x = parse_expression(P, true);
            if (!name || !x || !push(P, &kwv, x))
                return NULL;
            if (kwv.n > names_cap) {
                const char **nn = jarena_alloc(P->a, kwv.cap * sizeof *nn);
                if (!nn)
                    return oom(P);
                if (kwv.n > 1)
                    memcpy(nn, names, (kwv.n - 1) * sizeof *nn);
                names = nn;
                names_cap = kwv.cap;
            }
            names[kwv.n - 1] = name;
            continue;
        }
        if (kwv.n || c->star || c->dstar)
            return perr(P, cur(P), "invalid syntax for function call expression (a positional argument after keyword arguments)");
        jnode *x = parse_expression(P, true);
        if (!x || !push(P, &pos, x))
            return NULL;
    }
    next(P);
    c->pos = pos.v;
    c->npos = pos.n;
    c->kwvals = kwv.v;
    c->kwnames = names;
    c->nkw = kwv.n;
    return c;
}

static jnode *parse_subscribed(ps *P)
{
    const jtok *at = cur(P);
    jnode *parts[3] = {NULL, NULL, NULL};
    if (is_op(P, ":")) {
        next(P);
    } else {
        jnode *x = parse_expression(P, true);
        if (!x || !is_op(P, ":"))
            return x;
        parts[0] = x;
        next(P);
    }
    if (!is_op(P, "]") && !is_op(P, ",") && !is_op(P, ":"))
        if (!(parts[1] = parse_expression(P, true)))
            return NULL;
    if (is_op(P, ":")) {
        next(P);
        if (!is_op(P, "]") && !is_op(P, ","))
            if (!(parts[2] = parse_expression(P, true)))
                return NULL;
    }
    jnode *n = mk(P, N_SLICE, at);
    if (n) {
        n->b = parts[0];
        n->c = parts[1];
        n->d = parts[2];
    }
    return n;
}

static jnode *parse_postfix(ps *P, jnode *node)
{
    int links = 0;
    while (node) {
        const jtok *at = cur(P);
        if (is_op(P, ".")) {
            if (!chain(P, &links))
                return NULL;
            next(P);
            const jtok *t = cur(P);
            if (t->type == T_NAME) {
                jnode *n = mk(P, N_ATTR, at);
                if (!n || !(n->name = tok_name(P, t)))
                    return NULL;
                n->a = node;
                node = n;
            } else if (t->type == T_INT) {
                jnode *n = mk(P, N_ITEM, at);
                if (!n || !(n->b = constant(P, t, jv_int(t->i))))
                    return NULL;
                n->a = node;
                node = n;
            } else {
                return unexpected(P, "a name or number after '.'");
            }
            next(P);
        } else if (is_op(P, "[")) {
            if (!chain(P, &links))
                return NULL;
            next(P);
            nvec args = {0};
            while (!is_op(P, "]")) {
                if (args.n && !expect_op(P, ","))
                    return NULL;
                if (is_op(P, "]"))
                    break;
                jnode *x = parse_subscribed(P);
                if (!x || !push(P, &args, x))
                    return NULL;
            }
            next(P);
            if (args.n == 0)
                return perr(P, at, "an empty subscript");
            jnode *idx = args.v[0];
            if (args.n > 1) {
                if (!(idx = mk(P, N_TUPLE, at)))
                    return NULL;
                idx->kids = args.v;
                idx->nkids = args.n;
            }
            if (idx->kind == N_SLICE) {
                idx->a = node;
                node = idx;
            } else {
                jnode *n = mk(P, N_ITEM, at);
                if (!n)
                    return NULL;
                n->a = node;
                n->b = idx;
                node = n;
            }
        } else if (is_op(P, "(")) {
            if (!chain(P, &links))
                return NULL;
            jnode *n = mk(P, N_CALL, at);
            if (!n || !(n->args = parse_call_args(P)))
                return NULL;
            n->a = node;
            node = n;
        } else {
            break;
        }
    }
    return node;
}

static jnode *parse_test(ps *P, jnode *node)
{
    const jtok *at = cur(P);
    next(P); /* is */
    bool negated = false;
    if (is_name(P, "not")) {
        negated = true;
        next(P);
    }
    if (cur(P)->type != T_NAME)
        return unexpected(P, "a test name after 'is'");
    jnode *n = mk(P, N_TEST, at);
    if (!n || !(n->name = dotted_name(P)))
        return NULL;
    n->a = node;
    n->op = negated;
    const jtok *t = cur(P);
    if (is_op(P, "(")) {
        if (!(n->args = parse_call_args(P)))
            return NULL;
    } else if ((t->type == T_NAME || t->type == T_STRING || t->type == T_INT || t->type == T_FLOAT ||
                is_op(P, "[") || is_op(P, "{")) &&
               !is_name(P, "else") && !is_name(P, "or") && !is_name(P, "and")) {
        if (is_name(P, "is"))
            return perr(P, t, "You cannot chain multiple tests with is");
        jnode *arg = parse_primary(P);
        if (!arg || !(arg = parse_postfix(P, arg)))
            return NULL;
        jcallargs *c = jarena_alloc(P->a, sizeof *c);
        jnode **one = jarena_alloc(P->a, sizeof *one);
        if (!c || !one)
            return oom(P);
        memset(c, 0, sizeof *c);
        one[0] = arg;
        c->pos = one;
        c->npos = 1;
        n->args = c;
    }
    return n;
}

static jnode *parse_filter(ps *P, jnode *node, bool start_inline)
{
    int links = 0;
    while (is_op(P, "|") || start_inline) {
        if (!start_inline)
            next(P);
        start_inline = false;
        if (!chain(P, &links))
            return NULL;
        const jtok *t = cur(P);
        if (t->type != T_NAME)
            return unexpected(P, "a filter name");
        jnode *n = mk(P, N_FILTER, t);
        if (!n || !(n->name = dotted_name(P)))
            return NULL;
        if (is_op(P, "(") && !(n->args = parse_call_args(P)))
            return NULL;
        n->a = node;
        node = n;
    }
    return node;
}

static jnode *parse_filter_expr(ps *P, jnode *node)
{
    int links = 0;
    while (node) {
        if (is_op(P, "|")) {
            node = parse_filter(P, node, false);
        } else if (is_name(P, "is")) {
            node = parse_test(P, node);
        } else if (is_op(P, "(")) {
            jnode *n = mk(P, N_CALL, cur(P));
            if (!n || !(n->args = parse_call_args(P)))
                return NULL;
            n->a = node;
            node = n;
        } else {
            break;
        }
        if (!chain(P, &links))
            return NULL;
    }
    return node;
}

/* ---- statements --------------------------------------------------------- */

static jnode *parse_body(ps *P, const char *const *ends);

static bool end_of_block(ps *P)
{
    return expect_type(P, T_BLOCK_END, "end of statement block");
}

/* After parse_body stopped at `{% name`: consume `name %}` (and an
 * optional trailing name, as in `endmacro m`). */
static bool close_tag(ps *P, bool allow_name)
{
    next(P);
    if (allow_name && cur(P)->type == T_NAME)
        next(P);
    return end_of_block(P);
}

static bool can_assign(const jnode *t)
{
    if (t->kind == N_NAME)
        return true;
    if (t->kind != N_TUPLE)
        return false;
    for (size_t i = 0; i < t->nkids; i++)
        if (!can_assign(t->kids[i]))
            return false;
    return true;
}

static jnode *parse_assign_target(ps *P, const char *extra_end, bool with_namespace)
{
    const jtok *at = cur(P);
    if (with_namespace && at->type == T_NAME && tok_is(peek(P, 1), T_OP, ".")) {
        jnode *ns = mk(P, N_NAME, at);
        if (!ns || !(ns->name = tok_name(P, at)))
            return NULL;
        next(P);
        next(P);
        if (cur(P)->type != T_NAME)
            return unexpected(P, "an attribute name");
        jnode *n = mk(P, N_ATTR, at);
        if (!n || !(n->name = tok_name(P, cur(P))))
            return NULL;
        n->a = ns;
        next(P);
        return n;
    }
    jnode *t = parse_tuple(P, true, true, extra_end, false);
    if (t && !can_assign(t))
        return perr(P, at, "can't assign to %s", t->kind == N_CONST ? "a constant" : "this expression");
    return t;
}

static jnode *parse_for(ps *P, const jtok *at)
{
    jnode *n = mk(P, N_FOR, at);
    if (!n || !(n->a = parse_assign_target(P, "in", false)))
        return NULL;
    if (!is_name(P, "in"))
        return unexpected(P, "'in'");
    next(P);
    if (!(n->b = parse_tuple(P, false, false, "recursive", false)))
        return NULL;
    if (is_name(P, "if")) {
        next(P);
        if (!(n->c = parse_expression(P, true)))
            return NULL;
    }
    if (is_name(P, "recursive")) {
        n->op = 1;
        next(P);
    }
    if (!end_of_block(P))
        return NULL;
    static const char *const ends[] = {"endfor", "else", NULL};
    P->loops++;
    n->d = parse_body(P, ends);
    P->loops--;
    if (!n->d)
        return NULL;
    if (is_name(P, "else")) {
        static const char *const end2[] = {"endfor", NULL};
        if (!close_tag(P, false) || !(n->e = parse_body(P, end2)))
            return NULL;
    }
    return close_tag(P, false) ? n : NULL;
}

static jnode *parse_if(ps *P, const jtok *at)
{
    jnode *n = mk(P, N_IF, at);
    if (!n || !(n->a = parse_tuple(P, false, false, NULL, false)) || !end_of_block(P))
        return NULL;
    static const char *const ends[] = {"elif", "else", "endif", NULL};
    if (!(n->b = parse_body(P, ends)))
        return NULL;
    if (is_name(P, "elif")) {
        const jtok *e = cur(P);
        next(P);
        if (!enter(P))
            return NULL;
        n->c = parse_if(P, e); /* consumes the shared endif */
        P->depth--;
        return n->c ? n : NULL;
    }
    if (is_name(P, "else")) {
        static const char *const end2[] = {"endif", NULL};
        if (!close_tag(P, false) || !(n->c = parse_body(P, end2)))
            return NULL;
    }
    return close_tag(P, false) ? n : NULL;
}

/* A block's filters: `name(args) | name ...`, applied to N_BLOCKVAL. */
static jnode *parse_block_filters(ps *P)
{
    jnode *v = mk(P, N_BLOCKVAL, cur(P));
    return v ? parse_filter(P, v, true) : NULL;
}

static jnode *parse_set(ps *P, const jtok *at)
{
    jnode *target = parse_assign_target(P, NULL, true);
    if (!target)
        return NULL;
    if (is_op(P, "=")) {
        next(P);
        jnode *n = mk(P, N_SET, at);
        if (!n || !(n->b = parse_tuple(P, false, true, NULL, false)) || !end_of_block(P))
            return NULL;
        n->a = target;
        return n;
    }
    jnode *n = mk(P, N_SETBLOCK, at);
    if (!n)
        return NULL;
    n->a = target;
    if (is_op(P, "|")) {
        next(P);
        if (!(n->b = parse_block_filters(P)))
            return NULL;
    }
    static const char *const ends[] = {"endset", NULL};
    if (!end_of_block(P) || !(n->d = parse_body(P, ends)))
        return NULL;
    return close_tag(P, false) ? n : NULL;
}

/* (a, b=default, ...) into kids / kids2 */
static bool parse_signature(ps *P, jnode *n)
{
    nvec names = {0}, defs = {0};
    if (!expect_op(P, "("))
        return false;
    while (!is_op(P, ")")) {
        if (names.n && !expect_op(P, ","))
            return false;
        if (is_op(P, ")"))
            break;
        const jtok *t = cur(P);
        if (t->type != T_NAME) {
            unexpected(P, "a parameter name");
            return false;
        }
        jnode *name = mk(P, N_NAME, t);
        if (!name || !(name->name = tok_name(P, t)))
            return false;
        next(P);
        jnode *def = NULL;
        if (is_op(P, "=")) {
            next(P);
            if (!(def = parse_expression(P, true)))
                return false;
        } else if (defs.n && defs.v[defs.n - 1]) {
            perr(P, t, "a parameter without a default follows one with a default");
            return false;
        }
        if (!push(P, &names, name) || !push(P, &defs, def))
            return false;
    }
    next(P);
    n->kids = names.v;
    n->kids2 = defs.v;
    n->nkids = names.n;
    return true;
}

/* Does the tree read `name` (varargs, kwargs, caller)? */
static bool reads_name(const jnode *n, const char *name)
{
    if (!n)
        return false;
    if (n->kind == N_NAME && strcmp(n->name, name) == 0)
        return true;
    if (n->kind == N_MACRO) /* a nested macro has its own */
        return false;
    const jnode *sub[] = {n->a, n->b, n->c, n->d, n->e};
    for (size_t i = 0; i < 5; i++)
        if (reads_name(sub[i], name))
            return true;
    for (size_t i = 0; i < n->nkids; i++)
        if ((n->kids && reads_name(n->kids[i], name)) || (n->kids2 && reads_name(n->kids2[i], name)))
            return true;
    if (n->args) {
        for (size_t i = 0; i < n->args->npos; i++)
            if (reads_name(n->args->pos[i], name))
                return true;
        for (size_t i = 0; i < n->args->nkw; i++)
            if (reads_name(n->args->kwvals[i], name))
                return true;
        if (reads_name(n->args->star, name) || reads_name(n->args->dstar, name))
            return true;
    }
    return false;
}

static void implicit_names(jnode *n)
{
    n->op = (uint8_t)((reads_name(n->d, "varargs") ? MACRO_VARARGS : 0) |
                      (reads_name(n->d, "kwargs") ? MACRO_KWARGS : 0) |
                      (reads_name(n->d, "caller") ? MACRO_CALLER : 0));
}

/* A macro's or call block's body: loops outside do not reach into it. */
static jnode *parse_own_body(ps *P, const char *end)
{
    const char *const ends[] = {end, NULL};
    int loops = P->loops;
    P->loops = 0;
    jnode *body = parse_body(P, ends);
    P->loops = loops;
    return body;
}

static jnode *parse_macro(ps *P, const jtok *at)
{
    jnode *n = mk(P, N_MACRO, at);
    if (!n)
        return NULL;
    if (cur(P)->type != T_NAME)
        return unexpected(P, "a macro name");
    if (!(n->name = tok_name(P, cur(P))))
        return NULL;
    next(P);
    if (!parse_signature(P, n) || !end_of_block(P) || !(n->d = parse_own_body(P, "endmacro")) ||
        !close_tag(P, true))
        return NULL;
    implicit_names(n);
    return n;
}

static jnode *parse_call_block(ps *P, const jtok *at)
{
    jnode *n = mk(P, N_CALLBLOCK, at);
    if (!n)
        return NULL;
    if (is_op(P, "(") && !parse_signature(P, n))
        return NULL;
    if (!(n->a = parse_expression(P, true)))
        return NULL;
    if (n->a->kind != N_CALL)
        return perr(P, at, "expected a call after 'call'");
    if (!end_of_block(P) || !(n->d = parse_own_body(P, "endcall")) || !close_tag(P, false))
        return NULL;
    implicit_names(n);
    return n;
}

static jnode *parse_filter_block(ps *P, const jtok *at)
{
    jnode *n = mk(P, N_FILTBLOCK, at);
    static const char *const ends[] = {"endfilter", NULL};
    if (!n || !(n->b = parse_block_filters(P)) || !end_of_block(P) || !(n->d = parse_body(P, ends)))
        return NULL;
    return close_tag(P, false) ? n : NULL;
}

static jnode *parse_with(ps *P, const jtok *at)
{
    jnode *n = mk(P, N_WITH, at);
    nvec targets = {0}, values = {0};
    if (!n)
        return NULL;
    while (cur(P)->type != T_BLOCK_END) {
        if (targets.n && !expect_op(P, ","))
            return NULL;
        jnode *t = parse_assign_target(P, NULL, false);
        if (!t || !expect_op(P, "="))
            return NULL;
        jnode *v = parse_expression(P, true);
        if (!v || !push(P, &targets, t) || !push(P, &values, v))
            return NULL;
    }
    static const char *const ends[] = {"endwith", NULL};
    if (!end_of_block(P) || !(n->d = parse_body(P, ends)))
        return NULL;
    n->kids = targets.v;
    n->kids2 = values.v;
    n->nkids = targets.n;
    return close_tag(P, false) ? n : NULL;
}

/* {% block name %} / {% generation %}: the body in its own scope. */
static jnode *parse_scoped(ps *P, const jtok *at, const char *end, bool named)
{
    jnode *n = mk(P, N_SCOPE, at);
    if (!n)
        return NULL;
    if (named) {
        if (cur(P)->type != T_NAME)
            return unexpected(P, "a block name");
        next(P);
        if (is_name(P, "scoped") || is_name(P, "required"))
            next(P);
    }
    const char *const ends[] = {end, NULL};
    if (!end_of_block(P) || !(n->d = parse_body(P, ends)))
        return NULL;
    return close_tag(P, named) ? n : NULL;
}

static jnode *parse_statement(ps *P)
{
    const jtok *at = cur(P);
    if (at->type != T_NAME)
        return unexpected(P, "a tag name");
    next(P);
    if (!enter(P))
        return NULL;
    jnode *n = NULL;
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(at->n < 31 ? at->n : 31), at->p);
    if (tok_is(at, T_NAME, "for")) {
        n = parse_for(P, at);
    } else if (tok_is(at, T_NAME, "if")) {
        n = parse_if(P, at);
    } else if (tok_is(at, T_NAME, "set")) {
        n = parse_set(P, at);
    } else if (tok_is(at, T_NAME, "macro")) {
        n = parse_macro(P, at);
    } else if (tok_is(at, T_NAME, "call")) {
        n = parse_call_block(P, at);
    } else if (tok_is(at, T_NAME, "filter")) {
        n = parse_filter_block(P, at);
    } else if (tok_is(at, T_NAME, "with")) {
        n = parse_with(P, at);
    } else if (tok_is(at, T_NAME, "block")) {
        n = parse_scoped(P, at, "endblock", true);
    } else if (tok_is(at, T_NAME, "generation")) {
        n = parse_scoped(P, at, "endgeneration", false);
    } else if (tok_is(at, T_NAME, "break") || tok_is(at, T_NAME, "continue")) {
        if (!P->loops)
            n = perr(P, at, "'%s' outside loop", name);
        else if ((n = mk(P, name[0] == 'b' ? N_BREAK : N_CONTINUE, at)) && !end_of_block(P))
            n = NULL;
    } else if (tok_is(at, T_NAME, "include") || tok_is(at, T_NAME, "import") ||
               tok_is(at, T_NAME, "from") || tok_is(at, T_NAME, "extends")) {
        n = perr(P, at, "'%s' is not allowed: a chat template cannot load other templates", name);
    } else {
        n = perr(P, at, "Encountered unknown tag '%s'", name);
    }
    P->depth--;
    return n;
}

/* Statements up to `{% end... %}` (one of ends) or the end of the template
 * when ends is NULL; on return the current token is the end tag's name. */
static jnode *parse_body(ps *P, const char *const *ends)
{
    jnode *body = mk(P, N_BODY, cur(P));
    nvec kids = {0};
    if (!body)
        return NULL;
    for (;;) {
        const jtok *t = cur(P);
        if (t->type == T_EOF) {
            if (ends) {
                char want[80];
                snprintf(want, sizeof want, "unexpected end of template: '{%% %s %%}' is missing", ends[0]);
                return perr(P, t, "%s", want);
            }
            break;
        }
        jnode *x = NULL;
        if (t->type == T_DATA) {
            x = constant(P, t, jv_str(t->p, t->n));
            if (x)
                x->kind = N_TEXT;
            next(P);
        } else if (t->type == T_VAR_BEGIN) {
            next(P);
            if ((x = mk(P, N_OUTPUT, t)) &&
                (!(x->a = parse_tuple(P, false, true, NULL, false)) ||
                 !expect_type(P, T_VAR_END, "end of print statement")))
                x = NULL;
            if (!x)
                return NULL;
        } else if (t->type == T_BLOCK_BEGIN) {
            next(P);
            for (size_t k = 0; ends && ends[k]; k++)
                if (is_name(P, ends[k]))
                    goto done;
            if (!(x = parse_statement(P)))
                return NULL;
        } else {
            char buf[64];
            return perr(P, t, "unexpected %s", describe(t, buf, sizeof buf));
        }
        if (!x || !push(P, &kids, x))
            return NULL;
    }
done:
    body->kids = kids.v;
    body->nkids = kids.n;
    return body;
}

int jparse(jarena *a, const jtok *toks, size_t ntoks, jnode **root, cf_err *err)
{
    ps P = {toks, ntoks, 0, a, err, 0, 0};
    *root = parse_body(&P, NULL);
    return *root ? 0 : -1;
}
