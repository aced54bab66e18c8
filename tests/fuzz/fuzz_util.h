/* What the libFuzzer harnesses share.  Each harness is one file defining
 * LLVMFuzzerTestOneInput; built with clang and -Dfuzz=true it links
 * libFuzzer, in the ordinary build it links replay.c, which feeds it the
 * regression inputs of regress/NAME.  A harness checks the product's
 * promises (a failure comes with a one-line message, a saved session loads
 * again, ...) and aborts when one is broken, so the fuzzer reports it like
 * a crash. */
#ifndef CONFAB_TESTS_FUZZ_UTIL_H
#define CONFAB_TESTS_FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confab/gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
/* Abort with the message when ok is false. */
void fuzz_require(bool ok, const char *fmt, ...);

/* A failure's message: there, and one line. */
void fuzz_require_message(const cf_err *err);

/* The size of the next piece when an input of `left` more bytes is cut
 * into calls: 1 to 9 bytes as *seed runs (0: all of it, in one). */
size_t fuzz_piece(unsigned *seed, size_t left);

/* A path whose file holds exactly p[0..n) (an in-memory file; slot 0..3
 * picks one of four, for harnesses that need several at once). */
const char *fuzz_file(int slot, const uint8_t *p, size_t n);

/* A file of the shared fixtures; exits with 77 (meson's "skipped") when
 * the fixtures are not there. */
const char *fuzz_shared(const char *rel);

/* A private folder for files a harness writes (on tmpfs where there is
 * one), made on the first call and removed at exit. */
const char *fuzz_dir(void);

/* Use an opened file as confab would: its tokenizer on a few strings, then
 * the model (cf_model_from_gguf takes g) in a context of 8 positions:
 * decode, go back, shift.  Errors must come with a message. */
void fuzz_use_model(cf_gguf *g);

#endif
