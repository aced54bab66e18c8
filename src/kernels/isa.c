/* CPU feature detection and the choice of kernels.  The best level the CPU
 * and OS support is used unless $CONFAB_ISA lowers it (or a test calls
 * cf_isa_set), so every path stays reachable on one machine. */
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "internal.h"

static cf_isa cpu_best(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    /* libgcc's checks include the OS saving the YMM/ZMM state (XCR0). */
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !cf_cpu_has_f16c())
        return CF_ISA_SCALAR;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        return CF_ISA_AVX512;
    return CF_ISA_AVX2;
#else
    return CF_ISA_SCALAR;
#endif
}

/* CPUID, not __builtin_cpu_supports: clang before 15 does not know "f16c". */
int cf_cpu_has_f16c(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
#else
    return 0;
#endif
}

int cf_cpu_has_vnni(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vnni");
#else
    return 0;
#endif
}

/* Whether the GEMVs fetch their weights ahead themselves (the distances
 * in dot_avx512.c).  Zen 5 (AMD family 1Ah) needed it to keep a core's
 * stream at the read loop's rate; on Zen 4 (19h) the same fetches held a
 * core to 85-90 % of that rate, which its hardware prefetchers reach
 * alone.  Other CPUs keep the fetches, measured on neither.
 * $CONFAB_FETCH_AHEAD=0 or 1 overrides, to measure either on any CPU. */
int cf_cpu_fetch_ahead(void)
{
    const char *e = getenv("CONFAB_FETCH_AHEAD");
    if (e && (!strcmp(e, "0") || !strcmp(e, "1")))
        return *e == '1';
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return !__builtin_cpu_is("amdfam19h");
#else
    return 1;
#endif
}

static int isa_from_env(cf_isa best)
{
    const char *e = getenv("CONFAB_ISA");
    if (!e || !*e)
        return best;
    for (int i = 0; i <= CF_ISA_AVX512; i++)
        if (!strcmp(e, cf_isa_name((cf_isa)i)))
            return i < (int)best ? i : (int)best;
    return best; /* unknown names change nothing */
}

static cf_kernel_table tables[CF_ISA_AVX512 + 1];
static int tables_ready;
static int active = -1;

static void build_tables(void)
{
    if (__atomic_load_n(&tables_ready, __ATOMIC_ACQUIRE))
        return;
    /* Racing first callers build identical tables; harmless. */
    cf_kernel_table t;
    memset(&t, 0, sizeof t);
    cf_fill_scalar(&t);
    tables[CF_ISA_SCALAR] = t;
    cf_fill_avx2(&t);
    tables[CF_ISA_AVX2] = t;
    cf_fill_avx512(&t, cf_cpu_has_vnni(), cf_cpu_fetch_ahead());
    tables[CF_ISA_AVX512] = t;
    __atomic_store_n(&tables_ready, 1, __ATOMIC_RELEASE);
}

cf_isa cf_isa_active(void)
{
    int a = __atomic_load_n(&active, __ATOMIC_ACQUIRE);
    if (a < 0) {
        build_tables();
        a = isa_from_env(cpu_best());
        __atomic_store_n(&active, a, __ATOMIC_RELEASE);
    }
    return (cf_isa)a;
}

cf_isa cf_isa_set(cf_isa isa)
{
    build_tables();
    cf_isa best = cpu_best();
    int a = (int)isa < 0 ? 0 : isa > best ? (int)best : (int)isa;
    __atomic_store_n(&active, a, __ATOMIC_RELEASE);
    return (cf_isa)a;
}

const char *cf_isa_name(cf_isa isa)
{
    switch (isa) {
    case CF_ISA_SCALAR: return "scalar";
    case CF_ISA_AVX2: return "avx2";
    case CF_ISA_AVX512: return "avx512";
    }
    return "?";
}

const cf_kernel_table *cf_kernels(void) { return &tables[cf_isa_active()]; }
