/* The Jinja engine's insides, shared by its files: the arena every render
 * allocates from, the value model (Python's, as jinja2 sees it), the syntax
 * tree, and the renderer's state.  Nothing here is used outside jinja*.c. */
#ifndef CONFAB_CHAT_JINJA_IMPL_H
#define CONFAB_CHAT_JINJA_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"
#include "confab/template.h"
#include "json.h"

/* ---- arena -------------------------------------------------------------- */

/* Bump allocation in blocks; everything is freed at once.  The total is
 * capped, which is what bounds a render's memory (and its copying work). */
typedef struct jarena_block jarena_block;
typedef struct jarena {
    jarena_block *head;
    size_t total, limit;
} jarena;

void *jarena_alloc(jarena *a, size_t n); /* 16-byte aligned; NULL past the limit */
void jarena_free(jarena *a);

/* ---- values ------------------------------------------------------------- */

typedef enum jkind {
    JV_UNDEF,  /* jinja2's Undefined: prints as '', fails on most use */
    JV_NONE,
    JV_BOOL,
    JV_INT,
    JV_FLOAT,
    JV_STR,
    JV_LIST,
    JV_TUPLE,
    JV_DICT,
    JV_NS,     /* namespace(): a dict whose members `set ns.x` may change */
    JV_MACRO,  /* a macro, or a call block's caller */
    JV_FUNC,   /* a global function: range, namespace, ... */
    JV_METHOD, /* a method bound to its receiver: 'a b'.split */
    JV_LOOP,   /* the loop variable of a for statement */
    JV_GEN,    /* a one-shot iterator, as jinja2's map/select/items... return:
                  always true, no len(), exhausted once iterated */
    JV_ABSENT, /* internal: an argument that was not given */
} jkind;

typedef struct jv jv;
typedef struct jlist jlist;
typedef struct jdict jdict;
typedef struct jmacro jmacro;
typedef struct jmethod jmethod;
typedef struct jloop jloop;
typedef struct jgen jgen;
typedef struct jbuiltin jbuiltin;

struct jv {
    uint8_t kind;
    /* JV_UNDEF: what was missing, for the error when it is used: JV_UNDEF
     * for a name, else the kind of the object that lacked the member */
    uint8_t owner;
    union {
        bool b;
        int64_t i;
        double f;
        struct {
            const char *p; /* JV_STR: the bytes (UTF-8, maybe not NUL-terminated); JV_UNDEF: the name */
            size_t n;
        } s;
        jlist *l;     /* LIST, TUPLE */
        jdict *d;     /* DICT, NS */
        jmacro *m;
        const jbuiltin *fn;
        jmethod *meth;
        jloop *loop;
        jgen *gen;
    } u;
};

struct jlist {
    size_t n;
    jv *items;
};

/* Ordered like Python's dict.  String keys are also indexed by hash once
 * the dict grows past a few entries. */
struct jdict {
    size_t n, cap;
    jv *keys, *vals;
    uint32_t *index; /* open addressing: entry + 1, 0 = empty */
    size_t index_cap;
};

/* ---- syntax tree -------------------------------------------------------- */

typedef enum jnkind {
    /* expressions */
    N_CONST,    /* value */
    N_NAME,     /* name */
    N_LIST,     /* kids */
    N_TUPLE,    /* kids */
    N_DICT,     /* kids = keys, kids2 = values */
    N_ATTR,     /* a.name */
    N_ITEM,     /* a[b] */
    N_SLICE,    /* a[b:c:d], each of b c d may be NULL */
    N_CALL,     /* a(args) */
    N_FILTER,   /* a | name(args); a NULL: the value of the enclosing block */
    N_TEST,     /* a is [not] name(args); op = 1 when negated */
    N_UNARY,    /* op a */
    N_BINARY,   /* a op b */
    N_CONCAT,   /* kids joined with ~ */
    N_COMPARE,  /* kids[0] ops[0] kids[1] ops[1] kids[2] ... */
    N_COND,     /* b if a else c (c may be NULL) */
    N_BLOCKVAL, /* the rendered body a block filter applies to */
    /* statements */
    N_BODY,      /* kids */
    N_TEXT,      /* value */
    N_OUTPUT,    /* {{ a }} */
    N_IF,        /* a: condition, b: body, c: else (a body or an elif N_IF) */
    N_FOR,       /* a: target, b: iterable, c: filter, d: body, e: else; op = recursive */
    N_SET,       /* a: target (name, tuple, or N_ATTR on a namespace), b: value */
    N_SETBLOCK,  /* a: target, b: filter chain or NULL, d: body */
    N_MACRO,     /* name; kids: parameter names, kids2: defaults (NULL entries); d: body */
    N_CALLBLOCK, /* a: the call; kids/kids2: caller's parameters; d: body */
    N_FILTBLOCK, /* b: filter chain; d: body */
    N_WITH,      /* kids: targets, kids2: values; d: body */
    N_SCOPE,     /* d: body rendered in its own scope (block, generation) */
    N_BREAK,
    N_CONTINUE,
} jnkind;

enum {
    OP_NOT = 1, OP_NEG, OP_POS,
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_AND, OP_OR,
    OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_IN, OP_NOTIN,
};

/* N_MACRO flags in op: which implicit names the body reads */
enum { MACRO_VARARGS = 1, MACRO_KWARGS = 2, MACRO_CALLER = 4 };

typedef struct jnode jnode;

/* A call's arguments (N_CALL, N_FILTER, N_TEST). */
typedef struct jcallargs {
    jnode **pos;
    size_t npos;
    const char **kwnames;
    jnode **kwvals;
    size_t nkw;
    jnode *star, *dstar; /* *args, **kwargs */
} jcallargs;

struct jnode {
    uint8_t kind;
    uint8_t op;
    int line, col;
    const char *name; /* NUL-terminated identifier */
    jv value;
    jnode *a, *b, *c, *d, *e;
    jnode **kids, **kids2;
    size_t nkids;
    uint8_t *ops; /* N_COMPARE */
    jcallargs *args;
};

/* ---- lexer -------------------------------------------------------------- */

typedef enum jtoktype {
    T_EOF,
    T_DATA,
    T_VAR_BEGIN,
    T_VAR_END,
    T_BLOCK_BEGIN,
    T_BLOCK_END,
    T_NAME,
    T_STRING,
    T_INT,
    T_FLOAT,
    T_OP,
} jtoktype;

typedef struct jtok {
    uint8_t type;
    char op[3];    /* T_OP: the operator's text */
    int line, col;
    const char *p; /* T_DATA, T_NAME, T_STRING (decoded): text in the template's arena */
    size_t n;
    int64_t i;
    double f;
} jtok;

/* Split src (newlines already normalised) into tokens, allocated in a. */
int jlex(jarena *a, const char *src, size_t len, jtok **toks, size_t *ntoks, cf_err *err);
/* Parse the tokens into a body. */
int jparse(jarena *a, const jtok *toks, size_t ntoks, jnode **root, cf_err *err);

/* ---- renderer ----------------------------------------------------------- */

typedef struct jscope jscope;
struct jscope {
    jscope *parent;
    struct jvar {
        const char *name;
        jv v;
    } *vars;
    size_t n, cap;
};

struct jgen {
    jlist items;
    size_t pos;        /* items before pos have been consumed */
    const char *error; /* raised when iterated: jinja2 computes generators lazily */
};

struct jmacro {
    const jnode *def;  /* N_MACRO, or the N_CALLBLOCK of a caller */
    jscope *closure;
    jv caller;         /* the caller a call block passes, else JV_UNDEF */
};

typedef struct jkwarg {
    const char *name;
    jv v;
} jkwarg;

typedef struct jargs {
    const jv *pos;
    size_t npos;
    const jkwarg *kw;
    size_t nkw;
} jargs;

typedef struct jr jr;
/* Filters, tests, methods and globals share one calling convention: self is
 * the filtered / tested value or the method's receiver. */
typedef int (*jfn)(jr *r, const jnode *at, jv self, const jargs *a, jv *out);

struct jbuiltin {
    const char *name;
    jfn fn;
    bool mutating; /* a method the immutable sandbox refuses */
    bool lazy;     /* a filter jinja2 runs as a generator: its errors wait for the iteration */
};

struct jmethod {
    jv self;
    const jbuiltin *def;
};

struct jloop {
    const jv *items;
    size_t n, i;
    int depth;        /* 1 for the outermost loop */
    const jnode *node; /* the N_FOR, for recursive loops */
    jscope *scope;    /* where the loop runs, for recursive loops */
    jv changed_last;  /* loop.changed() state */
};

/* Text being rendered: the output, or a capture for a macro or a block. */
typedef struct jout {
    char *p;
    size_t n, cap;
} jout;

struct jr {
    jarena arena;
    cf_jinja_limits lim;
    uint64_t steps;
    uint32_t depth;
    jout *out;
    jscope *scope;
    jv blockval; /* N_BLOCKVAL while a block's filters run */
    int64_t now;
    cf_err *err;
    bool failed;
    bool fatal; /* the error is a limit's: no generator may hold it back */
};

/* Statement results besides 0 and -1 (error). */
enum { J_BREAK = 1, J_CONTINUE = 2 };

/* Record an error at node `at` ("template line L, column C: ..."); the
 * macro's value is -1 (visible to the compiler, so the callers' error
 * paths are too). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void jerr_set(jr *r, const jnode *at, const char *fmt, ...);
#define jerr(...) (jerr_set(__VA_ARGS__), -1)
/* A limit's error (steps, depth, memory, output): marks it fatal. */
#define jerr_limit(r, ...) ((r)->fatal = true, jerr_set((r), __VA_ARGS__), -1)
/* Raise a generator's postponed error (the message is complete). */
int jerr_again(jr *r, const char *msg);
/* The postponed error a generator carries, if any. */
int jgen_check(jr *r, jv v);

void *jalloc(jr *r, const jnode *at, size_t n); /* NULL after recording an error */

/* values */
static inline jv jv_undef(void) { jv v = {JV_UNDEF, JV_UNDEF, {.s = {NULL, 0}}}; return v; }
static inline jv jv_none(void) { jv v = {JV_NONE, 0, {.i = 0}}; return v; }
static inline jv jv_absent(void) { jv v = {JV_ABSENT, 0, {.i = 0}}; return v; }
static inline jv jv_bool(bool b) { jv v = {JV_BOOL, 0, {.b = b}}; return v; }
static inline jv jv_int(int64_t i) { jv v = {JV_INT, 0, {.i = i}}; return v; }
static inline jv jv_float(double f) { jv v = {JV_FLOAT, 0, {.f = f}}; return v; }
static inline jv jv_str(const char *p, size_t n) { jv v = {JV_STR, 0, {.s = {p, n}}}; return v; }
static inline jv jv_cstr(const char *p);
/* Undefined for a missing name, or for a missing member of owner
 * (name NULL: a missing element). */
jv jv_undef_name(const char *name);
jv jv_undef_member(jv owner, const char *name, size_t n);

static inline jv jv_seq(jlist *l, jkind kind) /* JV_LIST or JV_TUPLE */
{
    jv v = {(uint8_t)kind, 0, {.l = l}};
    return v;
}
static inline bool jv_is_seq(jv v) { return v.kind == JV_LIST || v.kind == JV_TUPLE; }
static inline bool jv_is_num(jv v) { return v.kind == JV_INT || v.kind == JV_FLOAT || v.kind == JV_BOOL; }

bool jv_truthy(jv v);
const char *jv_type_name(jv v); /* Python's: 'str', 'NoneType', ... */
/* Python's ==, and the ordering of < (-2: not comparable, -3: NaN). */
bool jv_equal(jv a, jv b);
int jv_compare(jv a, jv b);
/* The same, charged to the step budget (deep values cost their size). */
int jv_eq(jr *r, const jnode *at, jv a, jv b, bool *out);
int jv_cmp(jr *r, const jnode *at, jv a, jv b, int *out);
/* Count `units` of work against max_steps (an error past it). */
int jcharge(jr *r, const jnode *at, uint64_t units);

/* Fail with the error an Undefined raises when used (v must be JV_UNDEF). */
int jundef_error(jr *r, const jnode *at, jv v);

jlist *jlist_new(jr *r, const jnode *at, size_t n);
jdict *jdict_new(jr *r, const jnode *at, size_t cap);
int jdict_set(jr *r, const jnode *at, jdict *d, jv key, jv val);
bool jdict_get(const jdict *d, jv key, jv *val);
bool jdict_get_str(const jdict *d, const char *key, size_t n, jv *val);
/* The (key, value) tuples of d, in the order `order` gives (NULL: d's own). */
jlist *jdict_pairs(jr *r, const jnode *at, const jdict *d, const size_t *order);

/* A list being built (items in the arena, grown by doubling). */
typedef struct jvec {
    jv *items;
    size_t n, cap;
} jvec;
int jvec_push(jr *r, const jnode *at, jvec *v, jv x);
jv jvec_list(jr *r, const jnode *at, jvec *v, jkind kind); /* JV_LIST or JV_TUPLE */
/* A generator over items (JV_UNDEF after an allocation failure). */
jv jv_gen(jr *r, const jnode *at, const jv *items, size_t n);

/* text */
int jout_put(jr *r, const jnode *at, jout *o, const char *s, size_t n);
int jout_puts(jr *r, const jnode *at, jout *o, const char *s);
/* Python's str() and repr() appended to o. */
int jv_write_str(jr *r, const jnode *at, jout *o, jv v);
int jv_write_repr(jr *r, const jnode *at, jout *o, jv v);
/* str(v) as a string value (v itself when it is one). */
int jv_to_str(jr *r, const jnode *at, jv v, jv *out);
/* A copy of n bytes in the arena, as a string value. */
int jv_new_str(jr *r, const jnode *at, const char *p, size_t n, jv *out);
/* json.dumps(v, ensure_ascii, indent, separators, sort_keys) as HF's tojson. */
int jv_tojson(jr *r, const jnode *at, jv v, const cf_json_dump_opts *o, jv *out);
/* A JSON tree as a value (strings point into the tree, which must outlive it). */
int jv_from_json(jr *r, const cf_json *j, jv *out);

/* Code points: count, and the byte offset of every code point (n + 1
 * offsets) when the string is not ASCII (*offs NULL when it is). */
size_t jutf8_len(const char *p, size_t n);
int jutf8_offsets(jr *r, const jnode *at, const char *p, size_t n, size_t **offs, size_t *count);
bool jpy_isspace(uint32_t cp);

/* evaluation */
jscope *jscope_new(jr *r, const jnode *at, jscope *parent);
/* Bind name in scope s itself (replacing its own binding, shadowing outer ones). */
int jscope_set(jr *r, const jnode *at, jscope *s, const char *name, jv v);
int jeval(jr *r, const jnode *n, jv *out);
int jexec_body(jr *r, const jnode *body);
int jcall(jr *r, const jnode *at, jv callee, const jargs *a, jv *out);
/* Python's len(), iteration (as a list), attribute and item lookup. */
int jv_len(jr *r, const jnode *at, jv v, int64_t *n);
int jv_iterate(jr *r, const jnode *at, jv v, jlist *out);
int jv_getattr(jr *r, const jnode *at, jv obj, const char *name, size_t n, jv *out);
int jv_getitem(jr *r, const jnode *at, jv obj, jv key, jv *out);
/* obj[start:stop:step]; the bounds are none or integers. */
int jv_slice(jr *r, const jnode *at, jv obj, jv start, jv stop, jv step, jv *out);
int jv_binop(jr *r, const jnode *at, int op, jv a, jv b, jv *out);
int jv_contains(jr *r, const jnode *at, jv container, jv item, bool *out);

/* the built-in tables */
const jbuiltin *jfind_filter(const char *name);
const jbuiltin *jfind_test(const char *name);
const jbuiltin *jfind_global(const char *name);
/* The method `name` of v's type, or NULL. */
const jbuiltin *jfind_method(jv v, const char *name, size_t n);
/* Run test `name` on v (for select/reject and `is`). */
int jrun_test(jr *r, const jnode *at, const char *name, jv v, const jargs *a, bool *out);
int jrun_filter(jr *r, const jnode *at, const char *name, jv v, const jargs *a, jv *out);

/* Bind arguments to parameters by position and keyword: out[i] is
 * JV_ABSENT when not given.  Fails on unknown or repeated arguments. */
int jbind(jr *r, const jnode *at, const char *fname, const jargs *a, const char *const *params,
          size_t np, jv *out);
/* Inside a jfn: bind the arguments to p[] by these parameter names. */
#define JBIND(name, ...)                                                              \
    static const char *const params_[] = {__VA_ARGS__};                             \
    jv p[sizeof params_ / sizeof params_[0]];                                        \
    if (jbind(r, at, name, a, params_, sizeof params_ / sizeof params_[0], p) < 0)  \
        return -1
/* Fail unless the call has no arguments. */
int jno_args(jr *r, const jnode *at, const char *name, const jargs *a);
/* a < b, a <= b, a > b, a >= b (op) as Python orders values. */
int jv_order(jr *r, const jnode *at, int op, jv a, jv b, bool *out);

/* Python's str methods the filters share. */
int jstr_strip(jr *r, const jnode *at, jv s, jv chars, int which, jv *out); /* which: 1 left, 2 right, 3 both */
int jstr_case(jr *r, const jnode *at, jv s, int how, jv *out); /* how: 'l' lower, 'u' upper, 't' title (Python), 'c' capitalize, 'T' title filter */
int jstr_replace(jr *r, const jnode *at, jv s, jv old, jv new_, int64_t count, jv *out);
int jstr_format(jr *r, const jnode *at, jv fmt, jv args, jv *out); /* printf-style fmt % args */
/* str.splitlines(keepends) appended to lines. */
int jsplitlines(jr *r, const jnode *at, jv s, bool keepends, jvec *lines);

static inline jv jv_cstr(const char *p)
{
    size_t n = 0;
    while (p[n])
        n++;
    return jv_str(p, n);
}

#endif
