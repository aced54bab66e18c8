/* The tool-call parsers (src/chat/tool_parse.c) on any text: the first
 * byte picks the format and the size of the pieces the text streams in,
 * the rest is a reply's content.  What streaming let out as content is a
 * prefix of the final content, which is the whole text when no call was
 * found; every call has a name and arguments that parse as a JSON object. */
#include <stdlib.h>
#include <string.h>

#include "confab/tools.h"
#include "fuzz_util.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    cf_tool_format f = (cf_tool_format)(data[0] % (CF_TOOLS_JSON + 1));
    size_t step = 1 + (data[0] >> 4), n = size - 1;
    const char *text = (const char *)data + 1;
    cf_tool_parser p;
    cf_tool_parser_init(&p, f);
    long safe = 0;
    for (size_t at = 0; at < n; at += step) {
        long s = cf_tool_parser_feed(&p, text + at, at + step < n ? step : n - at);
        fuzz_require(s >= safe, "what was let out shrank: %ld after %ld", s, safe);
        safe = s;
    }
    if (f == CF_TOOLS_HARMONY)
        cf_tools_harmony_recipient(&p, text, n);
    char *content;
    cf_tool_call *calls;
    int nc;
    fuzz_require(cf_tool_parser_finish(&p, &content, &calls, &nc, NULL) == 0, "finish failed");
    size_t len = strlen(content);
    fuzz_require((size_t)safe <= len && !memcmp(content, text, (size_t)safe),
                 "%ld bytes were let out of a content of %zu", safe, len);
    fuzz_require(nc > 0 || len == strnlen(text, n), "no call, yet the content is cut");
    for (int i = 0; i < nc; i++) {
        cf_json *v;
        fuzz_require(calls[i].name && *calls[i].name, "a call without a name");
        fuzz_require(cf_json_parse(calls[i].arguments, strlen(calls[i].arguments), NULL, &v, NULL) == 0 &&
                         v->type == CF_JSON_OBJECT,
                     "arguments that are not an object: %.200s", calls[i].arguments);
        cf_json_free(v);
    }
    free(content);
    cf_tool_calls_free(calls, nc);
    cf_tool_parser_free(&p);
    return 0;
}
