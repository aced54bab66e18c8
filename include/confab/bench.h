/* bench: the measurements behind `confab bench`, reusable by other
 * benchmarks (chat turns, session restore). */
#ifndef CONFAB_BENCH_H
#define CONFAB_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"
#include "confab/model.h"

/* Memory read bandwidth in GB/s (1e9 bytes/s): n_threads threads (plain
 * pthreads, so it may run in a forked child) each stream through their
 * share of a buffer of `bytes` bytes, the best of reps passes.  Use a buffer
 * much larger than the last-level cache.  Negative when out of memory. */
double cf_bench_read_bandwidth(size_t bytes, int n_threads, int reps);

/* Seconds to decode n deterministic pseudo-random tokens as one batch
 * (logits for the last), starting at cache position `depth` (the cache is
 * truncated or filled up to it first, untimed).  Negative on error. */
double cf_bench_prompt(cf_ctx *c, int depth, int n, cf_err *err);

/* Seconds to decode n tokens one at a time (logits each time) after a
 * cache of `depth` positions, as generation does.  Negative on error. */
double cf_bench_generate(cf_ctx *c, int depth, int n, cf_err *err);

#endif
