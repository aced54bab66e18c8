/* Minimal test harness shared by the C tests: checks that report file:line
 * and keep going, a summary exit status, and where ../shared is. */
#ifndef CONFAB_TESTS_HARNESS_H
#define CONFAB_TESTS_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_failures;
static int harness_checks;

#define CHECK(cond)                                                                \
    do {                                                                           \
        harness_checks++;                                                          \
        if (!(cond)) {                                                             \
            harness_failures++;                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                          \
    } while (0)

#define CHECKF(cond, ...)                                                          \
    do {                                                                           \
        harness_checks++;                                                          \
        if (!(cond)) {                                                             \
            harness_failures++;                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                          \
            fputc('\n', stderr);                                                   \
        }                                                                          \
    } while (0)

/* Exit status meson understands as "skipped". */
#define TEST_SKIP 77

/* The shared fixtures folder: $CONFAB_SHARED (meson sets it to the checkout's
 * ../shared). NULL when it does not exist. */
static inline const char *shared_dir(void)
{
    const char *d = getenv("CONFAB_SHARED");
    if (!d || !*d)
        d = "../shared";
    FILE *f;
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/README.md", d);
    f = fopen(probe, "r");
    if (!f)
        return NULL;
    fclose(f);
    return d;
}

/* Path of a file under the shared folder (static buffer, rotated). */
static inline const char *shared_path(const char *rel)
{
    static char bufs[8][4096];
    static int next;
    const char *d = shared_dir();
    char *b = bufs[next++ & 7];
    snprintf(b, 4096, "%s/%s", d ? d : "../shared", rel);
    return b;
}

/* Whether the tests run emulated (the aarch64 build under qemu-user, where
 * $CONFAB_TEST_EMULATED is set): the longest shapes, a hundred times slower
 * there, are left to the native runs. */
static inline int test_emulated(void)
{
    const char *e = getenv("CONFAB_TEST_EMULATED");
    return e && *e && strcmp(e, "0");
}

static inline int test_summary(const char *name)
{
    fprintf(stderr, "%s: %d checks, %d failed\n", name, harness_checks, harness_failures);
    return harness_failures ? 1 : 0;
}

#endif
