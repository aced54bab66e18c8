/* Internals shared by the GGUF reader and the llama2.c loader, which
 * presents a checkpoint by writing a GGUF header for it. */
#ifndef CONFAB_GGUF_INTERNAL_H
#define CONFAB_GGUF_INTERNAL_H

#include "confab/gguf.h"

typedef struct name_index {
    int64_t *slots; /* entry index or -1 */
    uint64_t mask;
} name_index;

struct cf_gguf {
    const char *format;
    uint32_t version;
    uint64_t alignment;
    uint64_t data_offset;
    uint64_t file_size;
    uint64_t fingerprint;
    int64_t n_kv, n_tensors;
    cf_gguf_kv *kvs;
    cf_gguf_tensor *tensors;
    name_index kv_index, tensor_index;
    const uint8_t *data_base; /* tensor offsets are relative to this */
    uint64_t data_size;
    const uint8_t *map, *map2; /* mappings to unmap on close */
    cf_load_mode loaded_as;    /* MMAP or COPY: how map came to be */
    uint64_t map_size, map2_size;
    void *owned; /* a buffer to free on close (a synthesized header) */
};

cf_gguf *cf_gguf_alloc(void);
/* Parse a GGUF image.  When data_base is NULL the tensor data follow the
 * header inside the image; otherwise offsets are relative to data_base. */
int cf_gguf_parse(cf_gguf *g, const uint8_t *img, uint64_t img_size, const uint8_t *data_base,
                  uint64_t data_size, cf_err *err);
/* The whole file in memory as mode says; munmap(map, size) releases it. */
int cf_gguf_map_file(const char *path, cf_load_mode *mode, const uint8_t **map, uint64_t *size, cf_err *err);

/* Add a tensor whose data offset (relative to the data base) is given
 * rather than assigned: the llama2.c loader describes tensors in place. */
int cf_gguf_w_tensor_at(cf_gguf_writer *w, const char *name, cf_type type, uint32_t n_dims,
                        const int64_t *ne, uint64_t offset);

#endif
