/* confab bench --draft: what speculative decoding costs and gains on this
 * machine.  Prints its own report and returns an exit code. */
#ifndef CONFAB_UI_BENCH_SPEC_H
#define CONFAB_UI_BENCH_SPEC_H

#include "draft.h"

int bench_spec(const char *model, int threads, int n_gen, int reps, ui_draft *d);

#endif
