/* The table of ggml tensor types: block sizes and bytes per block, as GGUF
 * files define them.  Ids that ggml retired (4, 5, 31-33, 36-38) stay NULL so
 * that a file using them is rejected as an unknown type. */
#include <ctype.h>
#include <string.h>

#include "confab/kernels.h"

static const cf_type_traits type_table[CF_TYPE_COUNT] = {
    [CF_TYPE_F32] = {"F32", 1, 4, true},
    [CF_TYPE_F16] = {"F16", 1, 2, true},
    [CF_TYPE_Q4_0] = {"Q4_0", 32, 18, true},
    [CF_TYPE_Q4_1] = {"Q4_1", 32, 20, true},
    [CF_TYPE_Q5_0] = {"Q5_0", 32, 22, true},
    [CF_TYPE_Q5_1] = {"Q5_1", 32, 24, true},
    [CF_TYPE_Q8_0] = {"Q8_0", 32, 34, true},
    [CF_TYPE_Q8_1] = {"Q8_1", 32, 36, false},
    [CF_TYPE_Q2_K] = {"Q2_K", 256, 84, true},
    [CF_TYPE_Q3_K] = {"Q3_K", 256, 110, true},
    [CF_TYPE_Q4_K] = {"Q4_K", 256, 144, true},
    [CF_TYPE_Q5_K] = {"Q5_K", 256, 176, true},
    [CF_TYPE_Q6_K] = {"Q6_K", 256, 210, true},
    [CF_TYPE_Q8_K] = {"Q8_K", 256, 292, false},
    [CF_TYPE_IQ2_XXS] = {"IQ2_XXS", 256, 66, true},
    [CF_TYPE_IQ2_XS] = {"IQ2_XS", 256, 74, true},
    [CF_TYPE_IQ3_XXS] = {"IQ3_XXS", 256, 98, true},
    [CF_TYPE_IQ1_S] = {"IQ1_S", 256, 50, true},
    [CF_TYPE_IQ4_NL] = {"IQ4_NL", 32, 18, true},
    [CF_TYPE_IQ3_S] = {"IQ3_S", 256, 110, true},
    [CF_TYPE_IQ2_S] = {"IQ2_S", 256, 82, true},
    [CF_TYPE_IQ4_XS] = {"IQ4_XS", 256, 136, true},
    [CF_TYPE_I8] = {"I8", 1, 1, false},
    [CF_TYPE_I16] = {"I16", 1, 2, false},
    [CF_TYPE_I32] = {"I32", 1, 4, false},
    [CF_TYPE_I64] = {"I64", 1, 8, false},
    [CF_TYPE_F64] = {"F64", 1, 8, false},
    [CF_TYPE_IQ1_M] = {"IQ1_M", 256, 56, true},
    [CF_TYPE_BF16] = {"BF16", 1, 2, true},
    [CF_TYPE_TQ1_0] = {"TQ1_0", 256, 54, false},
    [CF_TYPE_TQ2_0] = {"TQ2_0", 256, 66, true},
    [CF_TYPE_MXFP4] = {"MXFP4", 32, 17, true},
};

const cf_type_traits *cf_type_get(uint32_t t)
{
    if (t >= CF_TYPE_COUNT || !type_table[t].name)
        return NULL;
    return &type_table[t];
}

const char *cf_type_name(uint32_t t)
{
    const cf_type_traits *tt = cf_type_get(t);
    return tt ? tt->name : "?";
}

size_t cf_row_bytes(cf_type t, int64_t k)
{
    const cf_type_traits *tt = cf_type_get((uint32_t)t);
    return tt ? (size_t)(k / tt->blck_size) * tt->type_size : 0;
}

int cf_type_from_name(const char *name)
{
    for (int t = 0; t < CF_TYPE_COUNT; t++) {
        const char *n = type_table[t].name;
        if (!n)
            continue;
        size_t i = 0;
        while (n[i] && name[i] && toupper((unsigned char)name[i]) == n[i])
            i++;
        if (!n[i] && !name[i])
            return t;
    }
    return -1;
}
