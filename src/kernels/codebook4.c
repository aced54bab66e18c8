/* The 16-value codebooks of the 4-bit non-linear types, as ggml defines
 * them in ggml/src/ggml-common.h (kvalues_iq4nl, kvalues_mxfp4).  They are
 * part of the file formats: tests/kernels/test_iq4.c checks their
 * structure and sums. */
#include "iq4.h"

/* IQ4_NL and IQ4_XS: non-uniform levels, denser near zero */
const int8_t cf_kvalues_iq4nl[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};

/* MXFP4: the E2M1 values 0, 0.5, 1, 1.5, 2, 3, 4, 6 doubled, then the same
 * negated (index 8 is -0) */
const int8_t cf_kvalues_mxfp4[16] = {
    0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12,
};
