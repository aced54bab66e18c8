/* The llama2.c reader: a checkpoint and its tokenizer.bin, from one input:
 * a little-endian u32 n, n bytes of checkpoint, the rest tokenizer (seeds:
 * seeds.sh writes tiny checkpoints for tok512.bin and for a tokenizer of a
 * few pieces).  A checkpoint that opens is used as a model. */
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t n = 0;
    if (size >= 4)
        memcpy(&n, data, 4);
    data += size >= 4 ? 4 : size;
    size -= size >= 4 ? 4 : size;
    if (n > size)
        n = (uint32_t)size;
    const char *ckpt = fuzz_file(0, data, n), *tok = fuzz_file(1, data + n, size - n);
    cf_gguf *g;
    cf_err err = {0};
    if (cf_gguf_open_llama2c(ckpt, tok, &g, &err) != 0) {
        fuzz_require_message(&err);
        return 0;
    }
    fuzz_use_model(g);
    return 0;
}
