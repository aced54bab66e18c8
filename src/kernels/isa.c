/* CPU feature detection and the choice of kernels.  The best level the CPU
 * and OS support is used unless $CONFAB_ISA lowers it (or a test calls
 * cf_isa_set), so every path stays reachable on one machine. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif
#if defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>
#endif

#include "internal.h"

#if defined(__aarch64__)
#if defined(__APPLE__)
static int sysctl_flag(const char *name)
{
    int v = 0;
    size_t len = sizeof v;
    return sysctlbyname(name, &v, &len, NULL, 0) == 0 && v;
}
#endif

/* Advanced SIMD is part of every aarch64 CPU; dotprod and i8mm are asked
 * of the OS, which says what it saves and lets programs use. */
static cf_isa arm_best(void)
{
#if defined(__linux__)
    const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    const int dotprod = !!(hw & (1ul << 20)), i8mm = !!(hw2 & (1ul << 13)); /* HWCAP_ASIMDDP, HWCAP2_I8MM */
#elif defined(__APPLE__)
    const int dotprod = sysctl_flag("hw.optional.arm.FEAT_DotProd"), i8mm = sysctl_flag("hw.optional.arm.FEAT_I8MM");
#else
    const int dotprod = 0, i8mm = 0;
#endif
    return i8mm && dotprod ? CF_ISA_I8MM : dotprod ? CF_ISA_DOTPROD : CF_ISA_NEON;
}
#endif

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
    return cf_cpu_has_avxvnni() ? CF_ISA_AVXVNNI : CF_ISA_AVX2;
#elif defined(__aarch64__)
    return arm_best();
#else
    return CF_ISA_SCALAR;
#endif
}

static bool is_arm(cf_isa isa) { return isa >= CF_ISA_NEON && isa <= CF_ISA_I8MM; }

/* The best level at most isa of its family the CPU has (best its best;
 * an AVX-512 CPU may lack AVX-VNNI). */
static cf_isa within(cf_isa isa, cf_isa best)
{
    if (isa <= CF_ISA_SCALAR || isa >= CF_ISA_COUNT || is_arm(isa) != is_arm(best))
        return CF_ISA_SCALAR;
    const cf_isa l = isa < best ? isa : best;
    return l == CF_ISA_AVXVNNI && !cf_cpu_has_avxvnni() ? CF_ISA_AVX2 : l;
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

/* AVX-VNNI: CPUID leaf 7, sub-leaf 1, EAX bit 4 (the YMM state the AVX2
 * check has seen the OS save). */
int cf_cpu_has_avxvnni(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4));
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
    for (int i = 0; i < CF_ISA_COUNT; i++)
        if (!strcmp(e, cf_isa_name((cf_isa)i)))
            return i == CF_ISA_SCALAR || is_arm((cf_isa)i) == is_arm(best) ? within((cf_isa)i, best) : best;
    return best; /* unknown names, and the other family's, change nothing */
}

static cf_kernel_table tables[CF_ISA_COUNT];
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
    tables[CF_ISA_AVXVNNI] = t;
    if (cf_cpu_has_avxvnni())
        cf_fill_avxvnni(&tables[CF_ISA_AVXVNNI]);
    cf_fill_avx512(&t, cf_cpu_has_vnni(), cf_cpu_fetch_ahead());
    tables[CF_ISA_AVX512] = t;
    t = tables[CF_ISA_SCALAR];
    cf_fill_neon(&t);
    tables[CF_ISA_NEON] = t;
    cf_fill_dotprod(&t);
    cf_fill_gemm_dotprod(&t);
    cf_fill_r16_dotprod(&t);
    tables[CF_ISA_DOTPROD] = t;
    cf_fill_gemm_i8mm(&t); /* its dots are dotprod's */
    tables[CF_ISA_I8MM] = t;
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
    const cf_isa a = within(isa, cpu_best());
    __atomic_store_n(&active, (int)a, __ATOMIC_RELEASE);
    return a;
}

cf_isa cf_isa_best(void) { return cpu_best(); }

const char *cf_isa_name(cf_isa isa)
{
    switch (isa) {
    case CF_ISA_SCALAR: return "scalar";
    case CF_ISA_AVX2: return "avx2";
    case CF_ISA_AVXVNNI: return "avxvnni";
    case CF_ISA_AVX512: return "avx512";
    case CF_ISA_NEON: return "neon";
    case CF_ISA_DOTPROD: return "dotprod";
    case CF_ISA_I8MM: return "i8mm";
    case CF_ISA_COUNT: break;
    }
    return "?";
}

const cf_kernel_table *cf_kernels(void) { return &tables[cf_isa_active()]; }
