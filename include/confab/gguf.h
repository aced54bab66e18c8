/* GGUF reader and writer.
 *
 * The reader maps a file read-only, validates every length, count, offset
 * and type before use (a bad file yields one message naming the problem and
 * its byte offset) and exposes metadata and tensor infos; tensor data are
 * used straight from the mapping.  The writer builds GGUF files (mkmodel,
 * test fixtures) and headers in memory (the llama2.c reader presents a
 * checkpoint as a GGUF by writing such a header for it). */
#ifndef CONFAB_GGUF_H
#define CONFAB_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"
#include "confab/kernels.h"

typedef enum cf_gguf_vtype {
    CF_GGUF_UINT8 = 0,
    CF_GGUF_INT8 = 1,
    CF_GGUF_UINT16 = 2,
    CF_GGUF_INT16 = 3,
    CF_GGUF_UINT32 = 4,
    CF_GGUF_INT32 = 5,
    CF_GGUF_FLOAT32 = 6,
    CF_GGUF_BOOL = 7,
    CF_GGUF_STRING = 8,
    CF_GGUF_ARRAY = 9,
    CF_GGUF_UINT64 = 10,
    CF_GGUF_INT64 = 11,
    CF_GGUF_FLOAT64 = 12,
    CF_GGUF_VTYPE_COUNT = 13
} cf_gguf_vtype;

const char *cf_gguf_vtype_name(cf_gguf_vtype t);

/* One metadata entry.  Scalars: n == 1 and data points at the value's bytes
 * (little-endian, possibly unaligned: read it with the accessors below).
 * Arrays: type == ARRAY, elem is the element type, n the count; numeric
 * elements are packed at data; string elements are indexed by strs. */
typedef struct cf_gguf_kv {
    const char *key; /* NUL-terminated */
    cf_gguf_vtype type;
    cf_gguf_vtype elem;
    uint64_t n;
    const uint8_t *data;
    const cf_str *strs; /* string value (n == 1) or string array elements */
} cf_gguf_kv;

typedef struct cf_gguf_tensor {
    const char *name; /* NUL-terminated */
    cf_type type;
    uint32_t n_dims;
    int64_t ne[4];   /* unused dimensions are 1 */
    uint64_t offset; /* from the start of the data section */
    uint64_t nbytes;
    const void *data; /* inside the mapping */
    cf_layout layout; /* PLAIN: the file's bytes; else cf_gguf_repack's */
} cf_gguf_tensor;

typedef struct cf_gguf cf_gguf;

/* How a file's bytes get into memory.  MMAP maps it (pages shared with
 * the page cache, read on first use).  COPY reads it into anonymous memory
 * in transparent huge pages where the kernel offers them: decoding reads
 * every weight once per token, and 2 MB pages spare the TLB a miss every
 * 4 KB (5-9 % faster decoding measured on a 1B model).  AUTO copies when
 * huge pages are on and the file takes less than half the available
 * memory, else maps. */
typedef enum cf_load_mode { CF_LOAD_AUTO, CF_LOAD_MMAP, CF_LOAD_COPY } cf_load_mode;

/* Open and validate a GGUF file, or a llama2.c checkpoint (.bin; the
 * tokenizer is looked for with cf_gguf_open_llama2c's rules); mapped. */
int cf_gguf_open(const char *path, cf_gguf **out, cf_err *err);
/* The same, loaded as mode says (a llama2.c checkpoint is mapped). */
int cf_gguf_open_as(const char *path, cf_load_mode mode, cf_gguf **out, cf_err *err);
/* Parse a GGUF image held in memory (the buffer must outlive the handle). */
int cf_gguf_open_buffer(const void *buf, size_t len, cf_gguf **out, cf_err *err);
/* A llama2.c checkpoint plus its tokenizer.bin.  tokenizer_path NULL: use
 * "tokenizer.bin" beside the checkpoint, else the only "tok*.bin" there. */
int cf_gguf_open_llama2c(const char *ckpt_path, const char *tokenizer_path, cf_gguf **out,
                         cf_err *err);
void cf_gguf_close(cf_gguf *g);

uint32_t cf_gguf_version(const cf_gguf *g);
uint64_t cf_gguf_alignment(const cf_gguf *g);
uint64_t cf_gguf_data_offset(const cf_gguf *g); /* where tensor data begin */
uint64_t cf_gguf_file_size(const cf_gguf *g);
/* CF_LOAD_COPY when the file was read into memory, else CF_LOAD_MMAP. */
cf_load_mode cf_gguf_loaded_as(const cf_gguf *g);
/* 64-bit hash over the metadata, the tensor table and the file size: tells
 * whether two files hold the same model. */
uint64_t cf_gguf_fingerprint(const cf_gguf *g);
/* "gguf" or "llama2c" */
const char *cf_gguf_source_format(const cf_gguf *g);
/* The name of a general.file_type value ("Q4_K_M"; llama.cpp's "guessed"
 * flag ignored), or NULL for a number llama.cpp does not define. */
const char *cf_gguf_file_type_name(uint32_t ftype);
/* The number of such a name (any case), or -1. */
int64_t cf_gguf_file_type_id(const char *name);

int64_t cf_gguf_n_kv(const cf_gguf *g);
const cf_gguf_kv *cf_gguf_kv_at(const cf_gguf *g, int64_t i);
const cf_gguf_kv *cf_gguf_find_kv(const cf_gguf *g, const char *key);

/* Typed getters: true when key exists with a compatible type.
 * get_u64/get_i64 accept any integer type (and bool), range-checked;
 * get_f64 accepts floats and integers. */
bool cf_gguf_get_u64(const cf_gguf *g, const char *key, uint64_t *out);
bool cf_gguf_get_i64(const cf_gguf *g, const char *key, int64_t *out);
bool cf_gguf_get_f64(const cf_gguf *g, const char *key, double *out);
bool cf_gguf_get_bool(const cf_gguf *g, const char *key, bool *out);
bool cf_gguf_get_str(const cf_gguf *g, const char *key, cf_str *out);
/* An array entry whose elements have type elem (any element type when elem
 * is CF_GGUF_VTYPE_COUNT); NULL otherwise. */
const cf_gguf_kv *cf_gguf_get_arr(const cf_gguf *g, const char *key, cf_gguf_vtype elem);

/* Element readers for a kv (scalar: i == 0). Integers convert to double. */
int64_t cf_gguf_kv_int(const cf_gguf_kv *kv, uint64_t i);
double cf_gguf_kv_float(const cf_gguf_kv *kv, uint64_t i);
cf_str cf_gguf_kv_str(const cf_gguf_kv *kv, uint64_t i);
/* The fixed size of a scalar of type t (0 for STRING/ARRAY). */
size_t cf_gguf_vtype_size(cf_gguf_vtype t);

/* Rearrange the n tensors ts (matrices of a model: ne[0] columns, the
 * other dimensions rows) in place into the layout the kernels read fastest
 * (cf_layout_best, cf_repack), setting their layout, when the file was
 * copied into memory (CF_LOAD_COPY): that costs no memory, where mapped
 * pages would become private copies.  Returns how many were rearranged,
 * or -1 (err). */
int cf_gguf_repack(cf_gguf *g, const cf_gguf_tensor *const *ts, int64_t n, cf_err *err);

int64_t cf_gguf_n_tensors(const cf_gguf *g);
const cf_gguf_tensor *cf_gguf_tensor_at(const cf_gguf *g, int64_t i);
const cf_gguf_tensor *cf_gguf_find_tensor(const cf_gguf *g, const char *name);

/* ---- writer -------------------------------------------------------------- */
typedef struct cf_gguf_writer cf_gguf_writer;

cf_gguf_writer *cf_gguf_writer_new(void);
void cf_gguf_writer_free(cf_gguf_writer *w);
/* Values are copied.  Adding a key twice replaces the earlier value. */
int cf_gguf_w_u32(cf_gguf_writer *w, const char *key, uint32_t v);
int cf_gguf_w_i32(cf_gguf_writer *w, const char *key, int32_t v);
int cf_gguf_w_u64(cf_gguf_writer *w, const char *key, uint64_t v);
int cf_gguf_w_f32(cf_gguf_writer *w, const char *key, float v);
int cf_gguf_w_bool(cf_gguf_writer *w, const char *key, bool v);
int cf_gguf_w_str(cf_gguf_writer *w, const char *key, const char *v, size_t len);
int cf_gguf_w_arr(cf_gguf_writer *w, const char *key, cf_gguf_vtype elem, const void *data,
                  uint64_t n);
int cf_gguf_w_arr_str(cf_gguf_writer *w, const char *key, const cf_str *v, uint64_t n);
/* Copy one entry (any type) from an open file. */
int cf_gguf_w_copy_kv(cf_gguf_writer *w, const cf_gguf_kv *kv);
/* Tensor data: if data is NULL the fill callback given to write_file makes
 * it.  offset is assigned in order of addition, aligned to the alignment. */
int cf_gguf_w_tensor(cf_gguf_writer *w, const char *name, cf_type type, uint32_t n_dims,
                     const int64_t *ne, const void *data);
/* Write the whole file; fill(user, i, dst, nbytes) supplies the data of
 * tensor i when it was added with data == NULL. */
typedef int (*cf_gguf_fill_fn)(void *user, int64_t i, void *dst, size_t nbytes, cf_err *err);
int cf_gguf_writer_write_file(cf_gguf_writer *w, const char *path, cf_gguf_fill_fn fill,
                              void *user, cf_err *err);
/* The header alone (magic .. tensor infos, padded to the alignment). *out is
 * malloc'ed; the caller frees it. */
int cf_gguf_writer_header(cf_gguf_writer *w, uint8_t **out, size_t *len, cf_err *err);
void cf_gguf_writer_set_alignment(cf_gguf_writer *w, uint32_t alignment);

#endif
