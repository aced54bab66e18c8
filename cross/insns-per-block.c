/* cf_vec_dot(TYPE, 4096, w, x) REPS times at ISA LEVEL, or with TYPE
 * act-Q8_0, act-Q8_1, act-Q8_K the activation quantizer
 * cf_quantize_row(Q8_*, 4096): the program cross/insns-per-block.sh
 * counts the guest instructions of under qemu.  w: random bytes (scales
 * kept finite), x: random activations quantized to the type's vec_dot
 * type. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/kernels.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: insns-per-block TYPE LEVEL REPS\n");
        return 2;
    }
    const int act = !strncmp(argv[1], "act-", 4);
    const int t = cf_type_from_name(argv[1] + (act ? 4 : 0)), reps = atoi(argv[3]);
    int isa = -1;
    for (int i = 0; i < CF_ISA_COUNT; i++)
        if (!strcmp(argv[2], cf_isa_name((cf_isa)i)))
            isa = i;
    if (t < 0 || isa < 0 || (int)cf_isa_set((cf_isa)isa) != isa) {
        fprintf(stderr, "insns-per-block: no type %s or level %s here\n", argv[1], argv[2]);
        return 2;
    }
    enum { K = 4096 };
    const cf_type wt = (cf_type)t, xt = cf_vec_dot_type(wt);
    const size_t wb = cf_row_bytes(wt, K);
    unsigned char *w = malloc(wb), *x = malloc(cf_row_bytes(xt, K));
    float *xf = malloc(K * sizeof *xf);
    srand(1);
    for (size_t i = 0; i < wb; i++)
        w[i] = (unsigned char)(rand() & 0x3f); /* an F16 or E8M0 scale of these bytes is finite */
    for (int i = 0; i < K; i++)
        xf[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    cf_quantize_row(xt, xf, x, K);
    if (act) {
        for (int r = 0; r < reps; r++)
            cf_quantize_row(wt, xf, w, K);
        printf("%d\n", w[wb / 2]);
        return 0;
    }
    volatile float s = 0;
    for (int r = 0; r < reps; r++)
        s += cf_vec_dot(wt, K, w, x);
    printf("%g\n", (double)s);
    return 0;
}
