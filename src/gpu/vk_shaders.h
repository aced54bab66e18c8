/* The embedded SPIR-V of src/gpu/shaders (vk_shaders.c is generated). */
#ifndef CONFAB_VK_SHADERS_H
#define CONFAB_VK_SHADERS_H

#include <stddef.h>
#include <stdint.h>

typedef struct cf_vk_shader {
    const char *name; /* "matvec_q4_k": the source, then its variant */
    const uint32_t *code;
    size_t bytes;
} cf_vk_shader;

/* sorted by name */
extern const cf_vk_shader cf_vk_shaders[];
extern const int cf_vk_n_shaders;

#endif
