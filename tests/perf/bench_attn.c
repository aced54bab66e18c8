/* Decode attention benchmark (not a test): the attention of one token at
 * depth 4096 in smollm2-135m's shape (30 layers x 3 KV heads x 16 chunks of
 * 256 positions, head_dim 64, 3 query rows a KV head, F16 keys and values),
 * without the rest of the pass.  The chunks lie as the KV cache lays them
 * out (a slab of 256 positions holds every layer's heads, keys then
 * values, in huge pages) and go to the threads as attention_one hands them
 * out (one counter a layer, the next unit claimed before this one is done
 * so that its keys are fetched ahead), with a barrier after each layer.
 * Twice: every thread re-reading one unit of its own (from cache: the
 * kernel's arithmetic), then the whole 94 MB (from DRAM, as a token at
 * that depth reads it).  Against a decode pass's attention time (rdtsc in
 * situ) it shows what the kernel costs alone.
 *   bench_attn [THREADS]   (default 2)
 * Prints the best and mean milliseconds a token over 20 runs. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "confab/common.h"
#include "confab/kernels.h"
#include "vec.h"

enum { LAYERS = 30, KV_HEADS = 3, CHUNKS = 16, HEAD_DIM = 64, G = 3, RUNS = 20 };
#define UNITS (KV_HEADS * CHUNKS)
#define HALF (sizeof(uint16_t) * CF_ATTN_CHUNK * HEAD_DIM) /* a unit's keys, or its values */
#define SLAB ((size_t)LAYERS * KV_HEADS * 2 * HALF)

/* The keys of unit u (KV head u / CHUNKS, chunk u % CHUNKS) of layer l; its
 * values follow them.  cached: thread t's own unit, whatever u and l. */
static const char *unit_keys(const char *kv, int l, int u, bool cached, int t)
{
    if (cached)
        return kv + (size_t)t * 2 * HALF;
    return kv + (size_t)(u % CHUNKS) * SLAB + ((size_t)l * KV_HEADS + (size_t)(u / CHUNKS)) * 2 * HALF;
}

/* One token's attention; its milliseconds. */
static double token(const cf_vec_ops *ops, const char *kv, int nth, bool cached, float *const *q)
{
    int next[LAYERS] = {0};
    const double t0 = cf_now_ms();
#pragma omp parallel num_threads(nth)
    {
        const int t = omp_get_thread_num();
        const size_t pb = cf_attn_part_bytes(HEAD_DIM);
        float *scores = aligned_alloc(64, sizeof(float) * CF_ATTN_ROWS * CF_ATTN_CHUNK);
        char *parts = aligned_alloc(64, pb * G);
        cf_attn_part *part[G];
        for (int j = 0; j < G; j++)
            part[j] = (cf_attn_part *)(parts + (size_t)j * pb);
        for (int l = 0; l < LAYERS; l++) {
            for (int u = __atomic_fetch_add(&next[l], 1, __ATOMIC_RELAXED), v; u < UNITS; u = v) {
                v = __atomic_fetch_add(&next[l], 1, __ATOMIC_RELAXED);
                const char *k = unit_keys(kv, l, u, cached, t);
                ops->attn_chunk(G, HEAD_DIM, (const float *const *)q, k, 0, k + HALF, true, CF_ATTN_CHUNK,
                                0.125f, scores, part, v < UNITS ? unit_keys(kv, l, v, cached, t) : NULL);
            }
#pragma omp barrier
        }
        free(scores);
        free(parts);
    }
    return cf_now_ms() - t0;
}

int main(int argc, char **argv)
{
    const int nth = argc > 1 ? atoi(argv[1]) : 2;
    if (nth < 1) {
        fprintf(stderr, "usage: bench_attn [THREADS]\n");
        return 2;
    }
    const size_t bytes = SLAB * CHUNKS;
    uint16_t *kv = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (kv == MAP_FAILED) {
        perror("bench_attn");
        return 1;
    }
    madvise(kv, bytes, MADV_HUGEPAGE);
    for (size_t i = 0; i < bytes / sizeof *kv; i++)
        kv[i] = cf_f32_to_f16(0.01f * (float)(i % 97) - 0.5f);
    float *q[G];
    for (int j = 0; j < G; j++) {
        q[j] = aligned_alloc(64, sizeof(float) * HEAD_DIM);
        for (int d = 0; d < HEAD_DIM; d++)
            q[j][d] = 0.02f * (float)((d * 7 + j) % 23) - 0.2f;
    }
    const cf_vec_ops *ops = cf_vec();
    printf("attention of one token at depth %d (%d layers x %d KV heads x %d chunks of %d, head_dim %d, "
           "F16, %d query rows a KV head), %d threads\n",
           CHUNKS * CF_ATTN_CHUNK, LAYERS, KV_HEADS, CHUNKS, CF_ATTN_CHUNK, HEAD_DIM, G, nth);
    for (int cached = 1; cached >= 0; cached--) {
        double best = 1e30, sum = 0;
        for (int r = 0; r < RUNS; r++) {
            const double ms = token(ops, (const char *)kv, nth, cached, q);
            best = ms < best ? ms : best;
            sum += ms;
        }
        const double mb = (double)(2 * HALF) * LAYERS * UNITS / 1e6;
        printf("%-11s best %.3f ms, mean %.3f ms a token (%.0f MB of keys and values, %.1f GB/s "
               "at the mean)\n",
               cached ? "from cache:" : "from DRAM:", best, sum / RUNS, mb, mb / (sum / RUNS));
    }
    for (int j = 0; j < G; j++)
        free(q[j]);
    munmap(kv, bytes);
    return 0;
}
