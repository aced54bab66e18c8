/* A small JSON tree for the chat layer: parse (strict, bounded, errors with
 * line and column), build, and write the way Python's json.dumps does
 * (separators ", " and ": ", optional indent, ensure_ascii optional), which
 * is what chat templates' |tojson must reproduce byte for byte.
 *
 * Numbers keep Python's distinction: integers that fit in int64 stay
 * integers, anything with a fraction or exponent is a double.  Objects keep
 * their members in first-seen order; a repeated key keeps its first position
 * and its last value (as Python's dict does). */
#ifndef CONFAB_CHAT_JSON_H
#define CONFAB_CHAT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"

typedef enum cf_json_type {
    CF_JSON_NULL,
    CF_JSON_BOOL,
    CF_JSON_INT,
    CF_JSON_FLOAT,
    CF_JSON_STRING,
    CF_JSON_ARRAY,
    CF_JSON_OBJECT,
} cf_json_type;

typedef struct cf_json cf_json;
struct cf_json {
    cf_json_type type;
    bool b;
    int64_t i;
    double f;
    uint64_t u; /* FLOAT read from an integer past int64 but within uint64: its exact value */
    char *str;  /* STRING: NUL-terminated; len bytes (may contain NULs) */
    size_t len;
    size_t n;   /* ARRAY / OBJECT: number of elements */
    size_t cap;
    cf_json **items; /* ARRAY / OBJECT: the values */
    cf_str *keys;    /* OBJECT: the keys (each NUL-terminated, owned) */
};

typedef struct cf_json_limits {
    size_t max_bytes; /* input size (default 256 MiB) */
    int max_depth;    /* nesting of arrays and objects (default 256) */
} cf_json_limits;

/* Parse len bytes.  On error *out is NULL and err names the problem with its
 * line, column and byte offset. lim NULL: the defaults. */
int cf_json_parse(const char *text, size_t len, const cf_json_limits *lim, cf_json **out,
                  cf_err *err);
void cf_json_free(cf_json *v);

/* Builders.  They return NULL when memory runs out; push/set take
 * ownership of v (freeing it on failure) and accept v == NULL as a failure,
 * so a tree can be built with one check at the end. */
cf_json *cf_json_null(void);
cf_json *cf_json_bool(bool b);
cf_json *cf_json_int(int64_t i);
cf_json *cf_json_float(double f);
cf_json *cf_json_string(const char *s, size_t len);
cf_json *cf_json_array(void);
cf_json *cf_json_object(void);
int cf_json_push(cf_json *arr, cf_json *v);
/* Add or replace a member (a replaced member keeps its position). */
int cf_json_set(cf_json *obj, const char *key, size_t klen, cf_json *v);
cf_json *cf_json_copy(const cf_json *v);

/* Object member by key (NUL-terminated), or NULL. */
const cf_json *cf_json_get(const cf_json *obj, const char *key);

/* ---- writing ------------------------------------------------------------ */

/* A growable byte buffer that stops (failed = true) at limit bytes or when
 * memory runs out; later writes are ignored.  Zero-initialise it. */
typedef struct cf_jbuf {
    char *p;
    size_t n, cap;
    size_t limit; /* 0: no limit beyond memory */
    bool failed;
} cf_jbuf;

void cf_jbuf_put(cf_jbuf *b, const char *s, size_t n);
void cf_jbuf_puts(cf_jbuf *b, const char *s);
void cf_jbuf_putc(cf_jbuf *b, char c);
/* The NUL-terminated contents (ownership passes to the caller), or NULL if
 * the buffer failed (it is freed then). */
char *cf_jbuf_take(cf_jbuf *b, size_t *len);
void cf_jbuf_free(cf_jbuf *b);
/* Empty it for reuse (its memory kept, a failure forgotten). */
void cf_jbuf_reset(cf_jbuf *b);

/* A JSON string literal for s, escaped as json.dumps does: \" \\ \n \r \t
 * \b \f, other controls as \u00XX; with ensure_ascii also every non-ASCII
 * code point as \uXXXX (surrogate pairs above U+FFFF). */
void cf_json_put_string(cf_jbuf *b, const char *s, size_t n, bool ensure_ascii);

/* Python's repr() of a double ("1.0", "0.1", "1e+16", "inf", "nan"); out
 * needs 32 bytes.  json.dumps spells the non-finite ones Infinity,
 * -Infinity and NaN: pass json = true for those. */
void cf_json_format_double(char out[32], double v, bool json);

typedef struct cf_json_dump_opts {
    int indent;           /* < 0: one line; >= 0: newline and this many spaces per level */
    const char *item_sep; /* NULL: ", " on one line, "," when indenting */
    const char *key_sep;  /* NULL: ": " */
    bool ensure_ascii;
    bool sort_keys;
} cf_json_dump_opts;

/* The text of v (malloc'ed, NUL-terminated), or NULL when memory runs out. */
char *cf_json_dump(const cf_json *v, const cf_json_dump_opts *o, size_t *len);

/* UTF-8 helpers of the chat layer, in the manner of Python's
 * surrogateescape (hence _esc; the tokenizer's cf_utf8_decode follows
 * llama.cpp instead): overlong forms and surrogates are malformed, and a
 * malformed byte is kept, not replaced.  Decode one code point at s (n > 0
 * bytes available) and return its length; a malformed byte decodes as
 * itself (length 1) with *cp = 0xDC00 + byte, and encoding that gives the
 * byte back, so any byte string survives a round trip. */
size_t cf_utf8_decode_esc(const char *s, size_t n, uint32_t *cp);
size_t cf_utf8_encode_esc(uint32_t cp, char out[4]);

#endif
