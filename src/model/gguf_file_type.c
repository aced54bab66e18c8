/* general.file_type: llama.cpp's llama_ftype numbers, named as
 * llama-quantize and model file names spell them. */
#include <string.h>
#include <strings.h>

#include "confab/gguf.h"

/* Numbers llama.cpp retired (4-6, 33-35) have no name. */
static const char *const names[] = {
    [0] = "F32",      [1] = "F16",      [2] = "Q4_0",     [3] = "Q4_1",     [7] = "Q8_0",
    [8] = "Q5_0",     [9] = "Q5_1",     [10] = "Q2_K",    [11] = "Q3_K_S",  [12] = "Q3_K_M",
    [13] = "Q3_K_L",  [14] = "Q4_K_S",  [15] = "Q4_K_M",  [16] = "Q5_K_S",  [17] = "Q5_K_M",
    [18] = "Q6_K",    [19] = "IQ2_XXS", [20] = "IQ2_XS",  [21] = "Q2_K_S",  [22] = "IQ3_XS",
    [23] = "IQ3_XXS", [24] = "IQ1_S",   [25] = "IQ4_NL",  [26] = "IQ3_S",   [27] = "IQ3_M",
    [28] = "IQ2_S",   [29] = "IQ2_M",   [30] = "IQ4_XS",  [31] = "IQ1_M",   [32] = "BF16",
    [36] = "TQ1_0",   [37] = "TQ2_0",   [38] = "MXFP4_MOE",
};
#define N_NAMES (sizeof names / sizeof names[0])
/* llama.cpp adds this when it worked the type out from the tensors */
#define GUESSED 1024u

const char *cf_gguf_file_type_name(uint32_t ftype)
{
    ftype &= ~GUESSED;
    return ftype < N_NAMES ? names[ftype] : NULL;
}

int64_t cf_gguf_file_type_id(const char *name)
{
    for (size_t i = 0; i < N_NAMES; i++)
        if (names[i] && !strcasecmp(names[i], name))
            return (int64_t)i;
    return -1;
}
