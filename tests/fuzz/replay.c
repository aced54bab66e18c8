/* The ordinary build's stand-in for libFuzzer's main: run a harness once on
 * each file named, or on each file of each folder named (in name order; a
 * folder that is not there holds no inputs: git keeps no empty folders).
 * Each input sits in a buffer of exactly its size, so a sanitizer build
 * sees a read past its end. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0) {
        fprintf(stderr, "%s: cannot read\n", path);
        if (f)
            fclose(f);
        return -1;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *p = malloc(n ? n : 1);
    size_t got = p ? fread(p, 1, n, f) : 0;
    fclose(f);
    if (got != n) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(p);
        return -1;
    }
    LLVMFuzzerTestOneInput(p, n);
    free(p);
    return 0;
}

static int skip_dot(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

int main(int argc, char **argv)
{
    int count = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "%s: no inputs\n", argv[i]);
        } else if (S_ISDIR(st.st_mode)) {
            struct dirent **names;
            int n = scandir(argv[i], &names, skip_dot, alphasort);
            if (n < 0) {
                fprintf(stderr, "%s: cannot list\n", argv[i]);
                failed++;
                continue;
            }
            for (int k = 0; k < n; k++) {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[i], names[k]->d_name);
                if (replay_file(path) == 0)
                    count++;
                else
                    failed++;
                free(names[k]);
            }
            free(names);
        } else if (replay_file(argv[i]) == 0) {
            count++;
        } else {
            failed++;
        }
    }
    fprintf(stderr, "%d inputs replayed, %d unreadable\n", count, failed);
    return failed ? 1 : 0;
}
