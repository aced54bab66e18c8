/* bench: the measurements behind `confab bench`, reusable by other
 * benchmarks (chat turns, session restore). */
#ifndef CONFAB_BENCH_H
#define CONFAB_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"
#include "confab/model.h"

/* A memory read bandwidth probe: n_threads threads (plain pthreads, so it
 * may run in a forked child) each stream through their share of a buffer
 * of `bytes` bytes, much larger than the last-level cache.  The buffer is
 * taken and first touched once, by cf_bw_probe_new, and kept until
 * cf_bw_probe_free: on a VM that hands freed memory back to its host, a
 * probe that freed a GiB each time stalled the runs between probes while
 * the host took it back.  NULL when out of memory. */
typedef struct cf_bw_probe cf_bw_probe;
cf_bw_probe *cf_bw_probe_new(size_t bytes, int n_threads);

/* GB/s (1e9 bytes/s): the best of reps passes over the buffer; negative
 * when the threads could not run. */
double cf_bw_probe_run(cf_bw_probe *p, int reps);
void cf_bw_probe_free(cf_bw_probe *p);

/* Seconds to decode n deterministic pseudo-random tokens as one batch
 * (logits for the last), starting at cache position `depth` (the cache is
 * truncated or filled up to it first, untimed).  Negative on error. */
double cf_bench_prompt(cf_ctx *c, int depth, int n, cf_err *err);

/* Seconds to decode n tokens one at a time (logits each time) after a
 * cache of `depth` positions, as generation does.  Negative on error. */
double cf_bench_generate(cf_ctx *c, int depth, int n, cf_err *err);

#endif
