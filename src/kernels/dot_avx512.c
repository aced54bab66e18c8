/* AVX-512 dot products (vpdpbusd when the CPU has VNNI). */
#include "blocks.h"
#include "internal.h"

void cf_fill_avx512(cf_kernel_table *t, int vnni) { (void)t; (void)vnni; }
