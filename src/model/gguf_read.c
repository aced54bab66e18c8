/* GGUF v2/v3 reader.
 *
 * Every length, count and offset is checked against the bytes that remain
 * before it is used or allocated for, so a hostile file can only produce an
 * error message (naming the problem and its byte offset), never a read
 * outside the mapping or a huge allocation. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confab/platform.h"
#include "gguf_internal.h"

#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_DIMS 4

/* ---- cursor over the image ---------------------------------------------- */

typedef struct cursor {
    const uint8_t *p;
    uint64_t size;
    uint64_t pos;
    cf_err *err;
} cursor;

static uint64_t remaining(const cursor *c)
{
    return c->size - c->pos;
}

static bool need(cursor *c, uint64_t n, const char *what)
{
    if (n > remaining(c)) {
        cf_fail(c->err, "truncated file: %s needs %llu bytes at offset %llu, but only %llu remain",
                what, (unsigned long long)n, (unsigned long long)c->pos,
                (unsigned long long)remaining(c));
        return false;
    }
    return true;
}

static bool read_bytes(cursor *c, void *dst, uint64_t n, const char *what)
{
    if (!need(c, n, what))
        return false;
    memcpy(dst, c->p + c->pos, n);
    c->pos += n;
    return true;
}

static bool read_u32(cursor *c, uint32_t *v, const char *what)
{
    return read_bytes(c, v, 4, what);
}

static bool read_u64(cursor *c, uint64_t *v, const char *what)
{
    return read_bytes(c, v, 8, what);
}

/* A GGUF string: u64 length then bytes (not NUL-terminated). */
static bool read_str(cursor *c, cf_str *s, const char *what)
{
    uint64_t start = c->pos, len;
    if (!read_u64(c, &len, what))
        return false;
    if (len > remaining(c)) {
        cf_fail(c->err,
                "%s at offset %llu has length %llu, past the end of the file (%llu bytes remain)",
                what, (unsigned long long)start, (unsigned long long)len,
                (unsigned long long)remaining(c));
        return false;
    }
    s->ptr = (const char *)c->p + c->pos;
    s->len = (size_t)len;
    c->pos += len;
    return true;
}

static char *dup_name(cursor *c, cf_str s, uint64_t at, const char *what)
{
    if (s.len == 0) {
        cf_fail(c->err, "empty %s at offset %llu", what, (unsigned long long)at);
        return NULL;
    }
    if (memchr(s.ptr, 0, s.len)) {
        cf_fail(c->err, "%s at offset %llu contains a NUL byte", what, (unsigned long long)at);
        return NULL;
    }
    char *d = malloc(s.len + 1);
    if (!d) {
        cf_fail(c->err, "out of memory reading %s", what);
        return NULL;
    }
    memcpy(d, s.ptr, s.len);
    d[s.len] = 0;
    return d;
}

/* ---- name index (open addressing) --------------------------------------- */

static uint64_t fnv1a(const void *data, size_t n, uint64_t h)
{
    const uint8_t *b = data;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}
#define FNV_OFFSET 0xcbf29ce484222325ULL

static bool index_init(name_index *ix, uint64_t n, cf_err *err)
{
    uint64_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    ix->slots = malloc(cap * sizeof *ix->slots);
    if (!ix->slots)
        return cf_fail(err, "out of memory indexing %llu names", (unsigned long long)n), false;
    for (uint64_t i = 0; i < cap; i++)
        ix->slots[i] = -1;
    ix->mask = cap - 1;
    return true;
}

/* Find name; names[i] gives the name of entry i.  Returns the slot. */
static uint64_t index_slot(const name_index *ix, const char *name, const char *(*name_of)(const cf_gguf *, int64_t),
                           const cf_gguf *g)
{
    uint64_t h = fnv1a(name, strlen(name), FNV_OFFSET) & ix->mask;
    while (ix->slots[h] >= 0 && strcmp(name_of(g, ix->slots[h]), name) != 0)
        h = (h + 1) & ix->mask;
    return h;
}

static const char *kv_name(const cf_gguf *g, int64_t i)
{
    return g->kvs[i].key;
}

static const char *tensor_name(const cf_gguf *g, int64_t i)
{
    return g->tensors[i].name;
}

/* ---- metadata ----------------------------------------------------------- */

size_t cf_gguf_vtype_size(cf_gguf_vtype t)
{
    switch (t) {
    case CF_GGUF_UINT8:
    case CF_GGUF_INT8:
    case CF_GGUF_BOOL:
        return 1;
    case CF_GGUF_UINT16:
    case CF_GGUF_INT16:
        return 2;
    case CF_GGUF_UINT32:
    case CF_GGUF_INT32:
    case CF_GGUF_FLOAT32:
        return 4;
    case CF_GGUF_UINT64:
    case CF_GGUF_INT64:
    case CF_GGUF_FLOAT64:
        return 8;
    default:
        return 0;
    }
}

const char *cf_gguf_vtype_name(cf_gguf_vtype t)
{
    static const char *names[] = {"u8",  "i8",   "u16", "i16", "u32", "i32", "f32",
                                  "bool", "str", "arr", "u64", "i64", "f64"};
    return (unsigned)t < CF_GGUF_VTYPE_COUNT ? names[t] : "?";
}

/* Read the value of kv (type already read) from the cursor. */
static bool read_value(cursor *c, cf_gguf_kv *kv, uint64_t at)
{
    if (kv->type == CF_GGUF_STRING) {
        cf_str *s = malloc(sizeof *s);
        if (!s)
            return cf_fail(c->err, "out of memory"), false;
        kv->strs = s;
        kv->n = 1;
        if (!read_str(c, s, "string value"))
            return false;
        kv->data = (const uint8_t *)s->ptr;
        return true;
    }
    if (kv->type != CF_GGUF_ARRAY) {
        size_t sz = cf_gguf_vtype_size(kv->type);
        kv->n = 1;
        kv->data = c->p + c->pos;
        if (!need(c, sz, "metadata value"))
            return false;
        if (kv->type == CF_GGUF_BOOL && c->p[c->pos] > 1)
            return cf_fail(c->err, "key '%s': bool value %u at offset %llu is not 0 or 1", kv->key,
                           c->p[c->pos], (unsigned long long)c->pos),
                   false;
        c->pos += sz;
        return true;
    }
    uint32_t elem;
    uint64_t n, elem_at = c->pos;
    if (!read_u32(c, &elem, "array element type"))
        return false;
    if (elem >= CF_GGUF_VTYPE_COUNT)
        return cf_fail(c->err, "key '%s': unknown array element type %u at offset %llu", kv->key,
                       elem, (unsigned long long)elem_at),
               false;
    if (elem == CF_GGUF_ARRAY)
        return cf_fail(c->err, "key '%s': nested arrays are not supported (offset %llu)", kv->key,
                       (unsigned long long)elem_at),
               false;
    kv->elem = (cf_gguf_vtype)elem;
    uint64_t n_at = c->pos;
    if (!read_u64(c, &n, "array length"))
        return false;
    kv->n = n;
    if (elem == CF_GGUF_STRING) {
        /* each element takes at least its 8-byte length */
        if (n > remaining(c) / 8)
            return cf_fail(c->err,
                           "key '%s': array of %llu strings at offset %llu cannot fit in the %llu "
                           "bytes that remain",
                           kv->key, (unsigned long long)n, (unsigned long long)n_at,
                           (unsigned long long)remaining(c)),
                   false;
        cf_str *s = malloc((n ? n : 1) * sizeof *s);
        if (!s)
            return cf_fail(c->err, "out of memory for %llu strings", (unsigned long long)n), false;
        kv->strs = s;
        kv->data = c->p + c->pos;
        for (uint64_t i = 0; i < n; i++)
            if (!read_str(c, &s[i], "array string"))
                return false;
        return true;
    }
    size_t sz = cf_gguf_vtype_size(kv->type == CF_GGUF_ARRAY ? kv->elem : kv->type);
    if (n > remaining(c) / sz)
        return cf_fail(c->err,
                       "key '%s': array of %llu %s at offset %llu runs past the end of the file",
                       kv->key, (unsigned long long)n, cf_gguf_vtype_name(kv->elem),
                       (unsigned long long)n_at),
               false;
    if (kv->elem == CF_GGUF_BOOL)
        for (uint64_t i = 0; i < n; i++)
            if (c->p[c->pos + i] > 1)
                return cf_fail(c->err, "key '%s': bool element %llu is %u, not 0 or 1", kv->key,
                               (unsigned long long)i, c->p[c->pos + i]),
                       false;
    kv->data = c->p + c->pos;
    c->pos += n * sz;
    (void)at;
    return true;
}

static bool read_kvs(cursor *c, cf_gguf *g, uint64_t n_kv)
{
    /* key length (8) + at least one key byte + type (4) + smallest value (1) */
    if (n_kv > remaining(c) / 14)
        return cf_fail(c->err,
                       "metadata count %llu is larger than the %llu remaining bytes could hold",
                       (unsigned long long)n_kv, (unsigned long long)remaining(c)),
               false;
    g->kvs = calloc(n_kv ? n_kv : 1, sizeof *g->kvs);
    if (!g->kvs || !index_init(&g->kv_index, n_kv, c->err))
        return cf_fail(c->err, "out of memory"), false;
    for (uint64_t i = 0; i < n_kv; i++) {
        cf_gguf_kv *kv = &g->kvs[i];
        uint64_t at = c->pos;
        cf_str key;
        if (!read_str(c, &key, "metadata key"))
            return false;
        if (!(kv->key = dup_name(c, key, at, "metadata key")))
            return false;
        g->n_kv = (int64_t)i + 1;
        uint64_t slot = index_slot(&g->kv_index, kv->key, kv_name, g);
        if (g->kv_index.slots[slot] >= 0)
            return cf_fail(c->err, "duplicate metadata key '%s' at offset %llu", kv->key,
                           (unsigned long long)at),
                   false;
        uint32_t type;
        uint64_t type_at = c->pos;
        if (!read_u32(c, &type, "metadata value type"))
            return false;
        if (type >= CF_GGUF_VTYPE_COUNT)
            return cf_fail(c->err, "key '%s': unknown value type %u at offset %llu", kv->key, type,
                           (unsigned long long)type_at),
                   false;
        kv->type = (cf_gguf_vtype)type;
        kv->elem = kv->type;
        if (!read_value(c, kv, at))
            return false;
        g->kv_index.slots[slot] = (int64_t)i;
    }
    return true;
}

/* ---- tensor infos ------------------------------------------------------- */

static bool read_tensor_info(cursor *c, cf_gguf *g, cf_gguf_tensor *t)
{
    uint64_t at = c->pos;
    cf_str name;
    if (!read_str(c, &name, "tensor name"))
        return false;
    if (!(t->name = dup_name(c, name, at, "tensor name")))
        return false;
    uint64_t slot = index_slot(&g->tensor_index, t->name, tensor_name, g);
    if (g->tensor_index.slots[slot] >= 0)
        return cf_fail(c->err, "duplicate tensor name '%s' at offset %llu", t->name,
                       (unsigned long long)at),
               false;
    g->tensor_index.slots[slot] = t - g->tensors;

    uint64_t dims_at = c->pos;
    if (!read_u32(c, &t->n_dims, "tensor dimension count"))
        return false;
    if (t->n_dims > GGUF_MAX_DIMS)
        return cf_fail(c->err, "tensor '%s' has %u dimensions (at most %d) at offset %llu",
                       t->name, t->n_dims, GGUF_MAX_DIMS, (unsigned long long)dims_at),
               false;
    int64_t nelem = 1;
    for (int d = 0; d < GGUF_MAX_DIMS; d++)
        t->ne[d] = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        uint64_t ne, ne_at = c->pos;
        if (!read_u64(c, &ne, "tensor dimension"))
            return false;
        if (ne == 0 || ne > (uint64_t)INT64_MAX / (uint64_t)nelem)
            return cf_fail(c->err, "tensor '%s': dimension %u is %s (%llu) at offset %llu",
                           t->name, d, ne == 0 ? "zero" : "too large", (unsigned long long)ne,
                           (unsigned long long)ne_at),
                   false;
        t->ne[d] = (int64_t)ne;
        nelem *= (int64_t)ne;
    }
    uint32_t type;
    uint64_t type_at = c->pos;
    if (!read_u32(c, &type, "tensor type"))
        return false;
    const cf_type_traits *tt = cf_type_get(type);
    if (!tt)
        return cf_fail(c->err, "tensor '%s' has unknown type %u at offset %llu", t->name, type,
                       (unsigned long long)type_at),
               false;
    t->type = (cf_type)type;
    if (t->ne[0] % tt->blck_size != 0)
        return cf_fail(c->err,
                       "tensor '%s': row length %lld is not a multiple of the %s block size %u",
                       t->name, (long long)t->ne[0], tt->name, tt->blck_size),
               false;
    /* bytes = nelem / blck * type_size; nelem < 2^63 so the division keeps
     * it in range unless type_size pushes it over */
    uint64_t blocks = (uint64_t)nelem / tt->blck_size;
    if (blocks > UINT64_MAX / tt->type_size)
        return cf_fail(c->err, "tensor '%s' is too large", t->name), false;
    t->nbytes = blocks * tt->type_size;
    return read_u64(c, &t->offset, "tensor data offset");
}

static int cmp_by_offset(const void *a, const void *b)
{
    const cf_gguf_tensor *x = *(cf_gguf_tensor *const *)a, *y = *(cf_gguf_tensor *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Data lie inside the file, aligned, and no two tensors overlap. */
static bool check_tensor_data(cf_gguf *g, cf_err *err)
{
    uint64_t data_size = g->data_size;
    for (int64_t i = 0; i < g->n_tensors; i++) {
        cf_gguf_tensor *t = &g->tensors[i];
        if (t->offset % g->alignment)
            return cf_fail(err, "tensor '%s': data offset %llu is not a multiple of the alignment %llu",
                           t->name, (unsigned long long)t->offset, (unsigned long long)g->alignment),
                   false;
        if (t->offset > data_size || t->nbytes > data_size - t->offset)
            return cf_fail(err,
                           "tensor '%s': data [%llu, %llu) lie outside the file's %llu data bytes "
                           "(file offset %llu)",
                           t->name, (unsigned long long)t->offset,
                           (unsigned long long)(t->offset + t->nbytes), (unsigned long long)data_size,
                           (unsigned long long)(g->data_offset + t->offset)),
                   false;
        t->data = g->data_base + t->offset;
    }
    if (g->n_tensors < 2)
        return true;
    cf_gguf_tensor **order = malloc((size_t)g->n_tensors * sizeof *order);
    if (!order)
        return cf_fail(err, "out of memory"), false;
    for (int64_t i = 0; i < g->n_tensors; i++)
        order[i] = &g->tensors[i];
    qsort(order, (size_t)g->n_tensors, sizeof *order, cmp_by_offset);
    bool ok = true;
    for (int64_t i = 1; i < g->n_tensors && ok; i++)
        if (order[i - 1]->offset + order[i - 1]->nbytes > order[i]->offset) {
            cf_fail(err, "tensors '%s' and '%s' overlap (data offsets %llu and %llu)",
                    order[i - 1]->name, order[i]->name, (unsigned long long)order[i - 1]->offset,
                    (unsigned long long)order[i]->offset);
            ok = false;
        }
    free(order);
    return ok;
}

/* ---- open --------------------------------------------------------------- */

int cf_gguf_parse(cf_gguf *g, const uint8_t *img, uint64_t img_size, const uint8_t *data_base,
                  uint64_t data_size, cf_err *err)
{
    cursor c = {img, img_size, 0, err};
    char magic[4];
    if (!read_bytes(&c, magic, 4, "magic"))
        return -1;
    if (memcmp(magic, "GGUF", 4) != 0) {
        char shown[20];
        int k = 0;
        for (int i = 0; i < 4; i++)
            k += snprintf(shown + k, sizeof shown - (size_t)k,
                          (unsigned char)magic[i] >= 32 && (unsigned char)magic[i] < 127 ? "%c"
                                                                                          : "\\x%02x",
                          (unsigned char)magic[i]);
        return cf_fail(err, "bad magic '%s' at offset 0: not a GGUF file", shown);
    }
    if (!read_u32(&c, &g->version, "version"))
        return -1;
    if (g->version < 2 || g->version > 3)
        return cf_fail(err, "unsupported GGUF version %u at offset 4 (confab reads 2 and 3)",
                       g->version);
    uint64_t n_tensors, n_kv;
    if (!read_u64(&c, &n_tensors, "tensor count") || !read_u64(&c, &n_kv, "metadata count"))
        return -1;
    if (!read_kvs(&c, g, n_kv))
        return -1;

    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    const cf_gguf_kv *al = cf_gguf_find_kv(g, "general.alignment");
    if (al) {
        if (al->type != CF_GGUF_UINT32)
            return cf_fail(err, "general.alignment has type %s, expected u32",
                           cf_gguf_vtype_name(al->type));
        g->alignment = (uint64_t)cf_gguf_kv_int(al, 0);
        if (g->alignment == 0 || (g->alignment & (g->alignment - 1)))
            return cf_fail(err, "general.alignment %llu is not a power of two",
                           (unsigned long long)g->alignment);
    }

    /* name (8 + 1) + n_dims (4) + type (4) + offset (8) */
    if (n_tensors > remaining(&c) / 25)
        return cf_fail(err, "tensor count %llu is larger than the %llu remaining bytes could hold",
                       (unsigned long long)n_tensors, (unsigned long long)remaining(&c));
    g->tensors = calloc(n_tensors ? n_tensors : 1, sizeof *g->tensors);
    if (!g->tensors || !index_init(&g->tensor_index, n_tensors, err))
        return cf_fail(err, "out of memory");
    for (uint64_t i = 0; i < n_tensors; i++) {
        g->n_tensors = (int64_t)i + 1;
        if (!read_tensor_info(&c, g, &g->tensors[i]))
            return -1;
    }

    uint64_t pad = (g->alignment - c.pos % g->alignment) % g->alignment;
    g->data_offset = c.pos + pad;
    if (data_base) {
        g->data_base = data_base;
        g->data_size = data_size;
    } else {
        if (g->data_offset > img_size && n_tensors > 0)
            return cf_fail(err, "truncated file: tensor data should start at offset %llu but the "
                                "file has %llu bytes",
                           (unsigned long long)g->data_offset, (unsigned long long)img_size);
        g->data_base = img + (g->data_offset < img_size ? g->data_offset : img_size);
        g->data_size = g->data_offset < img_size ? img_size - g->data_offset : 0;
    }
    if (!check_tensor_data(g, err))
        return -1;
    g->fingerprint = fnv1a(img, c.pos, FNV_OFFSET);
    g->fingerprint = fnv1a(&g->file_size, sizeof g->file_size, g->fingerprint);
    return 0;
}

cf_gguf *cf_gguf_alloc(void)
{
    cf_gguf *g = calloc(1, sizeof *g);
    if (g) {
        g->format = "gguf";
        g->loaded_as = CF_LOAD_MMAP;
    }
    return g;
}

int cf_gguf_open_buffer(const void *buf, size_t len, cf_gguf **out, cf_err *err)
{
    *out = NULL;
    cf_gguf *g = cf_gguf_alloc();
    if (!g)
        return cf_fail(err, "out of memory");
    g->file_size = len;
    if (cf_gguf_parse(g, buf, len, NULL, 0, err) != 0) {
        cf_gguf_close(g);
        return -1;
    }
    *out = g;
    return 0;
}

/* Whether AUTO copies a file of size bytes: huge pages on (always or on
 * request) and the file under half of MemAvailable. */
static bool copy_pays(uint64_t size)
{
    return cf_huge_pages_on() && size < cf_mem_available() / 2;
}

/* fd's size bytes into anonymous memory (huge pages asked for), read-only
 * afterwards like a mapping. */
static void *copy_file(int fd, uint64_t size, const char *path, cf_err *err)
{
    void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        cf_fail(err, "no memory for '%s' (%llu bytes): %s", path, (unsigned long long)size, strerror(errno));
        return NULL;
    }
    cf_advise_huge(p, (size_t)size);
    for (uint64_t got = 0; got < size;) {
        ssize_t r = pread(fd, (char *)p + got, (size_t)(size - got), (off_t)got);
        if (r <= 0) {
            cf_fail(err, "cannot read '%s': %s", path, r < 0 ? strerror(errno) : "it shrank while being read");
            munmap(p, (size_t)size);
            return NULL;
        }
        got += (uint64_t)r;
    }
    mprotect(p, (size_t)size, PROT_READ);
    return p;
}

int cf_gguf_map_file(const char *path, cf_load_mode *mode, const uint8_t **map, uint64_t *size, cf_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cf_fail(err, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cf_fail(err, "'%s' is not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return cf_fail(err, "'%s' is empty", path);
    }
    void *p;
    if (*mode == CF_LOAD_AUTO)
        *mode = copy_pays((uint64_t)st.st_size) ? CF_LOAD_COPY : CF_LOAD_MMAP;
    if (*mode == CF_LOAD_COPY) {
        p = copy_file(fd, (uint64_t)st.st_size, path, err);
        close(fd);
        if (!p)
            return -1;
    } else {
        p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        close(fd);
        if (p == MAP_FAILED)
            return cf_fail(err, "cannot map '%s': %s", path, strerror(errno));
    }
    *map = p;
    *size = (uint64_t)st.st_size;
    return 0;
}

int cf_gguf_repack(cf_gguf *g, const cf_gguf_tensor *const *ts, int64_t n, cf_err *err)
{
    if (g->loaded_as != CF_LOAD_COPY || !g->map)
        return 0;
    /* the whole copy writable for a while: changing a part of it would
     * split its huge pages */
    if (mprotect((void *)g->map, (size_t)g->map_size, PROT_READ | PROT_WRITE) != 0)
        return cf_fail(err, "cannot rearrange the weights: %s", strerror(errno));
    int done = 0;
    for (int64_t i = 0; i < n && done >= 0; i++) {
        cf_gguf_tensor *t = g->tensors + (ts[i] - g->tensors);
        const cf_layout l = cf_layout_best(t->type);
        if (t->layout != CF_LAYOUT_PLAIN || l == CF_LAYOUT_PLAIN)
            continue;
        if (cf_repack(t->type, l, (void *)t->data, t->ne[0], t->ne[1] * t->ne[2] * t->ne[3]) != 0) {
            done = cf_fail(err, "out of memory rearranging '%s'", t->name);
            break;
        }
        t->layout = l;
        done++;
    }
    mprotect((void *)g->map, (size_t)g->map_size, PROT_READ);
    return done;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int cf_gguf_open(const char *path, cf_gguf **out, cf_err *err)
{
    return cf_gguf_open_as(path, CF_LOAD_MMAP, out, err);
}

int cf_gguf_open_as(const char *path, cf_load_mode mode, cf_gguf **out, cf_err *err)
{
    *out = NULL;
    const uint8_t *map;
    uint64_t size;
    if (cf_gguf_map_file(path, &mode, &map, &size, err) != 0)
        return -1;
    if (size >= 4 && memcmp(map, "GGUF", 4) != 0 && has_suffix(path, ".bin")) {
        munmap((void *)map, (size_t)size);
        return cf_gguf_open_llama2c(path, NULL, out, err);
    }
    cf_gguf *g = cf_gguf_alloc();
    if (!g) {
        munmap((void *)map, (size_t)size);
        return cf_fail(err, "out of memory");
    }
    g->map = map;
    g->map_size = size;
    g->loaded_as = mode;
    g->file_size = size;
    cf_err inner;
    if (cf_gguf_parse(g, map, size, NULL, 0, &inner) != 0) {
        cf_fail(err, "%s: %s", path, inner.msg);
        cf_gguf_close(g);
        return -1;
    }
    *out = g;
    return 0;
}

void cf_gguf_close(cf_gguf *g)
{
    if (!g)
        return;
    for (int64_t i = 0; i < g->n_kv; i++) {
        free((char *)g->kvs[i].key);
        free((cf_str *)g->kvs[i].strs);
    }
    for (int64_t i = 0; i < g->n_tensors; i++)
        free((char *)g->tensors[i].name);
    free(g->kvs);
    free(g->tensors);
    free(g->kv_index.slots);
    free(g->tensor_index.slots);
    if (g->map)
        munmap((void *)g->map, (size_t)g->map_size);
    if (g->map2)
        munmap((void *)g->map2, (size_t)g->map2_size);
    free(g->owned);
    free(g);
}

/* ---- accessors ---------------------------------------------------------- */

uint32_t cf_gguf_version(const cf_gguf *g) { return g->version; }
uint64_t cf_gguf_alignment(const cf_gguf *g) { return g->alignment; }
uint64_t cf_gguf_data_offset(const cf_gguf *g) { return g->data_offset; }
uint64_t cf_gguf_file_size(const cf_gguf *g) { return g->file_size; }
cf_load_mode cf_gguf_loaded_as(const cf_gguf *g) { return g->loaded_as; }
uint64_t cf_gguf_fingerprint(const cf_gguf *g) { return g->fingerprint; }
const char *cf_gguf_source_format(const cf_gguf *g) { return g->format; }
int64_t cf_gguf_n_kv(const cf_gguf *g) { return g->n_kv; }
int64_t cf_gguf_n_tensors(const cf_gguf *g) { return g->n_tensors; }

const cf_gguf_kv *cf_gguf_kv_at(const cf_gguf *g, int64_t i)
{
    return i >= 0 && i < g->n_kv ? &g->kvs[i] : NULL;
}

const cf_gguf_tensor *cf_gguf_tensor_at(const cf_gguf *g, int64_t i)
{
    return i >= 0 && i < g->n_tensors ? &g->tensors[i] : NULL;
}

const cf_gguf_kv *cf_gguf_find_kv(const cf_gguf *g, const char *key)
{
    if (!g->kv_index.slots)
        return NULL;
    int64_t i = g->kv_index.slots[index_slot(&g->kv_index, key, kv_name, g)];
    return i >= 0 ? &g->kvs[i] : NULL;
}

const cf_gguf_tensor *cf_gguf_find_tensor(const cf_gguf *g, const char *name)
{
    if (!g->tensor_index.slots)
        return NULL;
    int64_t i = g->tensor_index.slots[index_slot(&g->tensor_index, name, tensor_name, g)];
    return i >= 0 ? &g->tensors[i] : NULL;
}

static bool is_int_type(cf_gguf_vtype t)
{
    return t <= CF_GGUF_INT32 || t == CF_GGUF_BOOL || t == CF_GGUF_UINT64 || t == CF_GGUF_INT64;
}

int64_t cf_gguf_kv_int(const cf_gguf_kv *kv, uint64_t i)
{
    if (i >= kv->n)
        return 0;
    const uint8_t *p = kv->data + i * cf_gguf_vtype_size(kv->elem);
    switch (kv->elem) {
    case CF_GGUF_UINT8:
    case CF_GGUF_BOOL:
        return p[0];
    case CF_GGUF_INT8:
        return (int8_t)p[0];
    case CF_GGUF_UINT16: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case CF_GGUF_INT16: {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case CF_GGUF_UINT32: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case CF_GGUF_INT32: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case CF_GGUF_UINT64:
    case CF_GGUF_INT64: {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    case CF_GGUF_FLOAT32:
    case CF_GGUF_FLOAT64:
        return (int64_t)cf_gguf_kv_float(kv, i);
    default:
        return 0;
    }
}

double cf_gguf_kv_float(const cf_gguf_kv *kv, uint64_t i)
{
    if (i >= kv->n)
        return 0;
    const uint8_t *p = kv->data + i * cf_gguf_vtype_size(kv->elem);
    if (kv->elem == CF_GGUF_FLOAT32) {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    if (kv->elem == CF_GGUF_FLOAT64) {
        double v;
        memcpy(&v, p, 8);
        return v;
    }
    if (kv->elem == CF_GGUF_UINT64) {
        uint64_t v;
        memcpy(&v, p, 8);
        return (double)v;
    }
    return (double)cf_gguf_kv_int(kv, i);
}

cf_str cf_gguf_kv_str(const cf_gguf_kv *kv, uint64_t i)
{
    cf_str none = {"", 0};
    if (kv->elem != CF_GGUF_STRING || i >= kv->n)
        return none;
    return kv->strs[i];
}

static const cf_gguf_kv *scalar(const cf_gguf *g, const char *key)
{
    const cf_gguf_kv *kv = cf_gguf_find_kv(g, key);
    return kv && kv->type != CF_GGUF_ARRAY ? kv : NULL;
}

bool cf_gguf_get_i64(const cf_gguf *g, const char *key, int64_t *out)
{
    const cf_gguf_kv *kv = scalar(g, key);
    if (!kv || !is_int_type(kv->type))
        return false;
    int64_t v = cf_gguf_kv_int(kv, 0);
    if (kv->type == CF_GGUF_UINT64 && v < 0)
        return false;
    *out = v;
    return true;
}

bool cf_gguf_get_u64(const cf_gguf *g, const char *key, uint64_t *out)
{
    const cf_gguf_kv *kv = scalar(g, key);
    if (!kv || !is_int_type(kv->type))
        return false;
    if (kv->type == CF_GGUF_UINT64) {
        memcpy(out, kv->data, 8);
        return true;
    }
    int64_t v = cf_gguf_kv_int(kv, 0);
    if (v < 0)
        return false;
    *out = (uint64_t)v;
    return true;
}

bool cf_gguf_get_f64(const cf_gguf *g, const char *key, double *out)
{
    const cf_gguf_kv *kv = scalar(g, key);
    if (!kv || kv->type == CF_GGUF_STRING || kv->type == CF_GGUF_BOOL)
        return false;
    *out = cf_gguf_kv_float(kv, 0);
    return true;
}

bool cf_gguf_get_bool(const cf_gguf *g, const char *key, bool *out)
{
    const cf_gguf_kv *kv = scalar(g, key);
    if (!kv || kv->type != CF_GGUF_BOOL)
        return false;
    *out = kv->data[0] != 0;
    return true;
}

bool cf_gguf_get_str(const cf_gguf *g, const char *key, cf_str *out)
{
    const cf_gguf_kv *kv = scalar(g, key);
    if (!kv || kv->type != CF_GGUF_STRING)
        return false;
    *out = kv->strs[0];
    return true;
}

const cf_gguf_kv *cf_gguf_get_arr(const cf_gguf *g, const char *key, cf_gguf_vtype elem)
{
    const cf_gguf_kv *kv = cf_gguf_find_kv(g, key);
    if (!kv || kv->type != CF_GGUF_ARRAY)
        return NULL;
    return elem == CF_GGUF_VTYPE_COUNT || kv->elem == elem ? kv : NULL;
}
