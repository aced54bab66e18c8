/* GGUF v3 writer: metadata values are serialized as they are added, tensor
 * data are written (or produced by a callback) at write time. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_internal.h"

typedef struct wkv {
    char *key;
    uint32_t type;
    uint8_t *val; /* serialized value, as it follows the type field */
    size_t len;
} wkv;

typedef struct wtensor {
    char *name;
    cf_type type;
    uint32_t n_dims;
    int64_t ne[4];
    const void *data;
    uint64_t offset, nbytes;
} wtensor;

struct cf_gguf_writer {
    wkv *kvs;
    size_t n_kv, cap_kv;
    wtensor *tensors;
    size_t n_tensors, cap_tensors;
    uint64_t data_size;
    uint32_t alignment;
};

/* ---- a growable byte buffer --------------------------------------------- */

typedef struct buf {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} buf;

static void put(buf *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_u32(buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(buf *b, uint64_t v) { put(b, &v, 8); }

static void put_str(buf *b, const char *s, size_t n)
{
    put_u64(b, n);
    put(b, s, n);
}

/* ---- building ----------------------------------------------------------- */

cf_gguf_writer *cf_gguf_writer_new(void)
{
    cf_gguf_writer *w = calloc(1, sizeof *w);
    if (w)
        w->alignment = 32;
    return w;
}

void cf_gguf_writer_free(cf_gguf_writer *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n_kv; i++) {
        free(w->kvs[i].key);
        free(w->kvs[i].val);
    }
    for (size_t i = 0; i < w->n_tensors; i++)
        free(w->tensors[i].name);
    free(w->kvs);
    free(w->tensors);
    free(w);
}

void cf_gguf_writer_set_alignment(cf_gguf_writer *w, uint32_t alignment)
{
    w->alignment = alignment;
    cf_gguf_w_u32(w, "general.alignment", alignment);
}

/* Takes ownership of the serialized value in b. */
static int add_kv(cf_gguf_writer *w, const char *key, uint32_t type, buf *b)
{
    if (b->oom) {
        free(b->p);
        return -1;
    }
    for (size_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->kvs[i].key, key) == 0) {
            free(w->kvs[i].val);
            w->kvs[i].type = type;
            w->kvs[i].val = b->p;
            w->kvs[i].len = b->len;
            return 0;
        }
    if (w->n_kv == w->cap_kv) {
        size_t cap = w->cap_kv ? 2 * w->cap_kv : 32;
        wkv *k = realloc(w->kvs, cap * sizeof *k);
        if (!k) {
            free(b->p);
            return -1;
        }
        w->kvs = k;
        w->cap_kv = cap;
    }
    char *kc = strdup(key);
    if (!kc) {
        free(b->p);
        return -1;
    }
    w->kvs[w->n_kv++] = (wkv){kc, type, b->p, b->len};
    return 0;
}

static int add_scalar(cf_gguf_writer *w, const char *key, cf_gguf_vtype t, const void *v)
{
    buf b = {0};
    put(&b, v, cf_gguf_vtype_size(t));
    return add_kv(w, key, t, &b);
}

int cf_gguf_w_u32(cf_gguf_writer *w, const char *key, uint32_t v)
{
    return add_scalar(w, key, CF_GGUF_UINT32, &v);
}

int cf_gguf_w_i32(cf_gguf_writer *w, const char *key, int32_t v)
{
    return add_scalar(w, key, CF_GGUF_INT32, &v);
}

int cf_gguf_w_u64(cf_gguf_writer *w, const char *key, uint64_t v)
{
    return add_scalar(w, key, CF_GGUF_UINT64, &v);
}

int cf_gguf_w_f32(cf_gguf_writer *w, const char *key, float v)
{
    return add_scalar(w, key, CF_GGUF_FLOAT32, &v);
}

int cf_gguf_w_bool(cf_gguf_writer *w, const char *key, bool v)
{
    uint8_t b = v;
    return add_scalar(w, key, CF_GGUF_BOOL, &b);
}

int cf_gguf_w_str(cf_gguf_writer *w, const char *key, const char *v, size_t len)
{
    buf b = {0};
    put_str(&b, v, len);
    return add_kv(w, key, CF_GGUF_STRING, &b);
}

int cf_gguf_w_arr(cf_gguf_writer *w, const char *key, cf_gguf_vtype elem, const void *data,
                  uint64_t n)
{
    size_t sz = cf_gguf_vtype_size(elem);
    if (!sz)
        return -1;
    buf b = {0};
    put_u32(&b, elem);
    put_u64(&b, n);
    put(&b, data, (size_t)n * sz);
    return add_kv(w, key, CF_GGUF_ARRAY, &b);
}

int cf_gguf_w_arr_str(cf_gguf_writer *w, const char *key, const cf_str *v, uint64_t n)
{
    buf b = {0};
    put_u32(&b, CF_GGUF_STRING);
    put_u64(&b, n);
    for (uint64_t i = 0; i < n; i++)
        put_str(&b, v[i].ptr, v[i].len);
    return add_kv(w, key, CF_GGUF_ARRAY, &b);
}

int cf_gguf_w_copy_kv(cf_gguf_writer *w, const cf_gguf_kv *kv)
{
    if (kv->type == CF_GGUF_STRING)
        return cf_gguf_w_str(w, kv->key, kv->strs[0].ptr, kv->strs[0].len);
    if (kv->type != CF_GGUF_ARRAY)
        return add_scalar(w, kv->key, kv->type, kv->data);
    if (kv->elem == CF_GGUF_STRING)
        return cf_gguf_w_arr_str(w, kv->key, kv->strs, kv->n);
    return cf_gguf_w_arr(w, kv->key, kv->elem, kv->data, kv->n);
}

int cf_gguf_w_tensor(cf_gguf_writer *w, const char *name, cf_type type, uint32_t n_dims,
                     const int64_t *ne, const void *data)
{
    const cf_type_traits *tt = cf_type_get(type);
    if (!tt || n_dims > 4 || ne[0] % tt->blck_size)
        return -1;
    if (w->n_tensors == w->cap_tensors) {
        size_t cap = w->cap_tensors ? 2 * w->cap_tensors : 64;
        wtensor *t = realloc(w->tensors, cap * sizeof *t);
        if (!t)
            return -1;
        w->tensors = t;
        w->cap_tensors = cap;
    }
    wtensor *t = &w->tensors[w->n_tensors];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name)))
        return -1;
    t->type = type;
    t->n_dims = n_dims;
    uint64_t nelem = 1;
    for (int d = 0; d < 4; d++) {
        t->ne[d] = d < (int)n_dims ? ne[d] : 1;
        nelem *= (uint64_t)t->ne[d];
    }
    t->data = data;
    t->nbytes = nelem / tt->blck_size * tt->type_size;
    t->offset = w->data_size;
    w->data_size += (t->nbytes + w->alignment - 1) / w->alignment * w->alignment;
    w->n_tensors++;
    return 0;
}

int cf_gguf_w_tensor_at(cf_gguf_writer *w, const char *name, cf_type type, uint32_t n_dims,
                        const int64_t *ne, uint64_t offset)
{
    if (cf_gguf_w_tensor(w, name, type, n_dims, ne, NULL) != 0)
        return -1;
    w->tensors[w->n_tensors - 1].offset = offset;
    return 0;
}

/* ---- serializing -------------------------------------------------------- */

static void put_header(const cf_gguf_writer *w, buf *b)
{
    put(b, "GGUF", 4);
    put_u32(b, 3);
    put_u64(b, w->n_tensors);
    put_u64(b, w->n_kv);
    for (size_t i = 0; i < w->n_kv; i++) {
        put_str(b, w->kvs[i].key, strlen(w->kvs[i].key));
        put_u32(b, w->kvs[i].type);
        put(b, w->kvs[i].val, w->kvs[i].len);
    }
    for (size_t i = 0; i < w->n_tensors; i++) {
        const wtensor *t = &w->tensors[i];
        put_str(b, t->name, strlen(t->name));
        put_u32(b, t->n_dims);
        for (uint32_t d = 0; d < t->n_dims; d++)
            put_u64(b, (uint64_t)t->ne[d]);
        put_u32(b, t->type);
        put_u64(b, t->offset);
    }
    static const uint8_t zeros[64];
    while (b->len % w->alignment)
        put(b, zeros, w->alignment - b->len % w->alignment > 64 ? 64 : w->alignment - b->len % w->alignment);
}

int cf_gguf_writer_header(cf_gguf_writer *w, uint8_t **out, size_t *len, cf_err *err)
{
    buf b = {0};
    put_header(w, &b);
    if (b.oom) {
        free(b.p);
        return cf_fail(err, "out of memory writing a GGUF header");
    }
    *out = b.p;
    *len = b.len;
    return 0;
}

int cf_gguf_writer_write_file(cf_gguf_writer *w, const char *path, cf_gguf_fill_fn fill,
                              void *user, cf_err *out_err)
{
    cf_err local = {0}, *err = &local;
    uint8_t *hdr;
    size_t hdr_len;
    if (cf_gguf_writer_header(w, &hdr, &hdr_len, out_err) != 0)
        return -1;
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(hdr);
        return cf_fail(out_err, "cannot create '%s': %s", path, strerror(errno));
    }
    bool ok = fwrite(hdr, 1, hdr_len, f) == hdr_len;
    free(hdr);
    void *tmp = NULL;
    size_t tmp_cap = 0;
    static const uint8_t zeros[64];
    for (size_t i = 0; ok && i < w->n_tensors; i++) {
        const wtensor *t = &w->tensors[i];
        const void *src = t->data;
        if (!src) {
            if (!fill) {
                ok = false;
                cf_fail(err, "tensor '%s' has no data", t->name);
                break;
            }
            if (tmp_cap < t->nbytes) {
                free(tmp);
                tmp_cap = (size_t)t->nbytes;
                if (!(tmp = malloc(tmp_cap))) {
                    ok = false;
                    cf_fail(err, "out of memory for tensor '%s'", t->name);
                    break;
                }
            }
            if (fill(user, (int64_t)i, tmp, (size_t)t->nbytes, err) != 0) {
                ok = false;
                break;
            }
            src = tmp;
        }
        ok = fwrite(src, 1, (size_t)t->nbytes, f) == t->nbytes;
        for (uint64_t pad = (w->alignment - t->nbytes % w->alignment) % w->alignment; ok && pad;) {
            size_t n = pad > sizeof zeros ? sizeof zeros : (size_t)pad;
            ok = fwrite(zeros, 1, n, f) == n;
            pad -= n;
        }
        if (!ok && !err->msg[0])
            cf_fail(err, "writing '%s': %s", path, strerror(errno));
    }
    free(tmp);
    if (fclose(f) != 0 && ok) {
        ok = false;
        cf_fail(err, "writing '%s': %s", path, strerror(errno));
    }
    if (ok)
        return 0;
    if (!err->msg[0])
        cf_fail(err, "writing '%s' failed", path);
    if (out_err)
        *out_err = local;
    return -1;
}
