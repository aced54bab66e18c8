/* The JSON reader, and the writer on what it read: a text that parses
 * dumps to a text that parses again and dumps the same (in each style the
 * templates' |tojson uses), and a copy dumps as the original. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "json.h"

static void same_again(const cf_json *v, const cf_json_dump_opts *o)
{
    size_t n1, n2;
    char *a = cf_json_dump(v, o, &n1);
    fuzz_require(a != NULL, "dump failed");
    cf_json *w;
    cf_err err = {0};
    fuzz_require(cf_json_parse(a, n1, NULL, &w, &err) == 0, "its own dump does not parse: %s (%.200s)",
                 err.msg, a);
    char *b = cf_json_dump(w, o, &n2);
    fuzz_require(b && n1 == n2 && !memcmp(a, b, n1), "dump, parse, dump differs:\n%.300s\n%.300s", a,
                 b ? b : "");
    free(a);
    free(b);
    cf_json_free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_json *v;
    cf_err err = {0};
    cf_json_limits lim = {.max_depth = 64};
    if (cf_json_parse((const char *)data, size, &lim, &v, &err) != 0) {
        fuzz_require_message(&err);
        fuzz_require(v == NULL, "a failed parse gave a tree");
        return 0;
    }
    static const cf_json_dump_opts styles[] = {
        {-1, NULL, NULL, false, false}, {2, NULL, NULL, true, true}, {0, ",", ":", true, false}};
    for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++)
        same_again(v, &styles[i]);
    cf_json *c = cf_json_copy(v);
    size_t n1, n2;
    char *a = cf_json_dump(v, &styles[0], &n1), *b = cf_json_dump(c, &styles[0], &n2);
    fuzz_require(a && b && n1 == n2 && !memcmp(a, b, n1), "a copy dumps differently");
    free(a);
    free(b);
    cf_json_free(c);
    cf_json_free(v);
    return 0;
}
